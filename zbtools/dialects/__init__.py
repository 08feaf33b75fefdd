"""Tool dialects: the documented tool sets of other agents, mapped onto the canonical tools.

The canonical tools are Zaguán Blade's (docs/internals/sources.md#zblade, dialect ``zblade``).
Every other dialect is a thin layer over the same engine: it names its tools and parameters as
its agent's documentation does, translates a call into the canonical tool's arguments
(``to_canonical``) and adapts the canonical result where its semantics differ
(``from_canonical``). Listings (and MCP calls) know only a dialect's own tools, while command-line
and ``batch`` lookups also resolve every canonical name and alias, in any case; a dialect's
``Rule`` (zkit's and Anthropic's create-only writes) holds whatever name reaches the engine;
errors and warnings speak the dialect's names (``vocabulary``); undeclared canonical parameters
pass through; a tool that routes to several canonical tools picks one at run time; and only the
selected dialect's module is ever imported (docs/internals/surfaces.md#dialect-layer). What users
see is in docs/dialects.md. Used by the command line, ``batch``, ``schema``, ``prompt`` and
``mcp``; never imports a surface.

* ``get_dialect``: a dialect by name (None: ``$ZBTOOLS_DIALECT``, else ``DEFAULT_DIALECT``).
* ``Dialect``: ``tools()``, ``lookup(name, own_only=)`` and ``unavailable()``.
* ``DialectTool``: one tool (``name``, ``description``, ``input_schema()``, the annotations,
  ``to_canonical``, ``from_canonical``, ``adapt_error``, ``spec``); ``RouterTool``: one that
  routes by argument.
* ``Rule``, ``create_only``: a promise of a dialect, kept on every canonical call it makes.
* ``invoke``: run a dialect tool's call, its result as the dialect reports it.
* ``definitions`` (submodule): a dialect's tools as API tool definitions; ``vocabulary``
  (submodule, loaded on an error or a warning): the words a dialect tool speaks.
"""

from __future__ import annotations

import sys

from zbtools.contract import ToolError
from zbtools.core.call.args import Struct, did_you_mean
from zbtools.options import DIALECTS
from zbtools.toolspec import Outcome, apply_call_limits

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

    from zbtools.core.call.context import Context
    from zbtools.core.call.wording import Wording
    from zbtools.toolspec import ToolSpec

DEFAULT_DIALECT = "zblade"
DESCRIPTIONS: dict[str, str] = {
    "zblade": "the canonical Zaguán Blade tools",
    "claude": "Claude Code's built-in tools: Bash, Read, Edit, MultiEdit, Grep, TodoWrite...",
    "zkit": "zkit's coding toolset: read, write (create-only), edit, bash, plans...",
    "fiz": "fiz's built-in tools: bash, edit, find, grep, ls, patch, read, task, write",
    "anthropic": "Anthropic's text editor tool str_replace_based_edit_tool",
    "codex": "OpenAI Codex CLI: apply_patch (*** Begin Patch), shell, update_plan, view_image",
    "gemini": "Gemini CLI's built-in tools: read_file, replace, glob, grep_search, "
              "run_shell_command...",
}


class Routed(Struct):
    """The result of a routing tool: the result of the canonical tool it chose."""


class Rule:
    """A promise of a dialect that holds whatever name reaches the engine
    (docs/dialects.md#one-promise-whatever-the-name).

    Every canonical call the dialect makes, by its own tools or by a canonical name, gets
    ``fixed`` for each of those parameters its canonical tool declares, whatever the call says;
    an error with a code in ``codes`` from such a call says why (``note``) and what the dialect
    offers instead (``hint``).
    """

    def __init__(self, name: str, fixed: Mapping[str, Any], codes: tuple[str, ...],
                 note: str, hint: str) -> None:
        self.name = name
        self.fixed = dict(fixed)
        self.codes = codes
        self.note = note
        self.hint = hint

    def enforce(self, params: type[Struct], args: dict[str, Any]) -> bool:
        """Set the fixed arguments ``params`` declares in ``args`` (in place, every alias of
        theirs dropped); True when the rule applied."""
        from zbtools.core.call.args import alias_table

        fields = params.fields()
        mine = {key: value for key, value in self.fixed.items() if key in fields}
        if not mine:
            return False
        table = alias_table(params)
        for key in [k for k in args if table.get(k, k) in mine]:
            del args[key]
        args.update(mine)
        return True

    def explain(self, error: ToolError) -> ToolError:
        if error.code in self.codes and self.note not in error.message:
            error.message = f"{error.message} ({self.note})"
            error.hint = self.hint
        return error

    def __repr__(self) -> str:
        return f"Rule({self.name!r})"


def create_only(dialect: str, hint: str) -> Rule:
    """The rule of a dialect whose writes never replace a file: every canonical ``overwrite``
    is false (write_file and create_file, copy_file, move_file, and any tool declaring it)."""
    return Rule("create_only", {"overwrite": False}, ("already_exists",),
                f"the {dialect} dialect never replaces an existing file", hint)


def call_canonical(spec: ToolSpec, args: dict[str, Any], ctx: Context, rules: tuple[Rule, ...],
                   problems: list[dict[str, Any]] | None = None) -> Struct:
    """Run the canonical tool ``spec`` with ``args`` under the dialect's ``rules``."""
    from zbtools.core.call.args import validate

    applied = [rule for rule in rules if rule.enforce(spec.params, args)]
    params = validate(spec.params, args, problems, ctx.warnings)
    apply_call_limits(params, ctx)
    try:
        return spec.call(params, ctx)
    except ToolError as exc:
        for rule in applied:
            exc = rule.explain(exc)
        raise


class DialectTool:
    """One tool of a dialect: its name, documented parameters and mapping onto a canonical tool.

    ``target`` is the canonical tool's name. ``params`` declares the dialect's parameters (None:
    the canonical tool's own). ``renames`` maps dialect field -> canonical field (a given value is
    copied; unnamed fields keep their name), ``fixed`` sets canonical arguments whatever the call
    says, ``defaults`` sets them unless the call gives them, and
    ``translate(params, out)`` may rewrite ``out`` (the canonical arguments) for anything else.
    ``wire_names`` maps a field to the property name the schema shows when that name is not a
    Python identifier (Claude's ``-A``); the wire name is accepted as an alias. ``error_names``
    maps a canonical tool or parameter name to the word the tool's errors use instead (beyond
    ``renames`` and the dialect's tool names); ``shifts`` adds to a number written after a
    parameter in an error or a warning (fiz's 0-based ``offset``: -1), and ``forms`` writes
    ``name=N`` the dialect's way (``view_range=[N, -1]``).
    """

    def __init__(
        self,
        name: str,
        target: str,
        *,
        description: str | None = None,
        params: type[Struct] | None = None,
        renames: Mapping[str, str] | None = None,
        fixed: Mapping[str, Any] | None = None,
        defaults: Mapping[str, Any] | None = None,
        translate: Callable[[Any, dict[str, Any]], None] | None = None,
        adapt: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
        adapt_error: Callable[[ToolError], ToolError] | None = None,
        error_names: Mapping[str, str] | None = None,
        wire_names: Mapping[str, str] | None = None,
        shifts: Mapping[str, int] | None = None,
        forms: Mapping[str, str] | None = None,
        closed: bool | None = None,
        aliases: tuple[str, ...] = (),
        read_only: bool | None = None,
        destructive: bool | None = None,
        idempotent: bool | None = None,
        parallel_safe: bool | None = None,
    ) -> None:
        self.name = name
        self.target = target
        self._description = description
        self._params = params
        self.renames = dict(renames or {})
        self.fixed = dict(fixed or {})
        self.defaults = dict(defaults or {})
        self._translate = translate
        self._adapt = adapt
        self._adapt_error = adapt_error
        # canonical word -> the dialect's, for error messages and hints (beyond ``renames``)
        self.error_names = {canonical: name for name, canonical in self.renames.items()
                            if "_" in canonical and canonical != name}
        self.error_names.update(error_names or {})
        self.wire_names = dict(wire_names or {})
        self.shifts = dict(shifts or {})
        self.forms = dict(forms or {})
        self.closed = closed
        # set by the Dialect that holds it: its rules, and whether it is one of its own tools
        # (else a canonical tool reached by its canonical name, speaking canonical words)
        self.dialect: Dialect | None = None
        self.own = True
        self._wording: Wording | None = None
        self.aliases = aliases
        self._flags = {"read_only": read_only, "destructive": destructive,
                       "idempotent": idempotent, "parallel_safe": parallel_safe}
        self._spec: ToolSpec | None = None

    # -- identity -------------------------------------------------------------------------------

    @property
    def targets(self) -> tuple[str, ...]:
        """The canonical tools this tool may run."""
        return (self.target,)

    @property
    def available(self) -> bool:
        from zbtools.registry import find

        return all(find(t) is not None for t in self.targets)

    @property
    def spec(self) -> ToolSpec:
        """The ``ToolSpec`` this tool runs (the canonical tool, or a router)."""
        if self._spec is None:
            from zbtools.registry import find

            spec = find(self.target)
            if spec is None:
                raise ToolError("unknown_tool", f"{self.name}: its canonical tool "
                                f"{self.target!r} is not available in this zbtools",
                                hint="`zbtools tools` lists the tools this version has")
            self._spec = spec
        return self._spec

    @property
    def params(self) -> type[Struct]:
        """The dialect's parameter declaration (validation, flags, schema)."""
        return self._params if self._params is not None else self.spec.params

    @property
    def identity(self) -> bool:
        """True when the tool takes the canonical tool's own parameters unchanged."""
        return (self._params is None and not self.fixed and not self.defaults
                and self._translate is None)

    @property
    def declares_params(self) -> bool:
        """True when the dialect declares its own parameters (not the canonical tool's)."""
        return self._params is not None

    @property
    def description(self) -> str:
        return self._description if self._description is not None else self.spec.summary

    def _flag(self, key: str) -> bool:
        value = self._flags[key]
        return bool(getattr(self.spec, key)) if value is None else value

    @property
    def read_only(self) -> bool:
        return self._flag("read_only")

    @property
    def destructive(self) -> bool:
        return self._flag("destructive")

    @property
    def idempotent(self) -> bool:
        return self._flag("idempotent")

    @property
    def parallel_safe(self) -> bool:
        return self._flag("parallel_safe")

    @property
    def category(self) -> str:
        return self.spec.category

    # -- schemas --------------------------------------------------------------------------------

    def input_schema(self) -> dict[str, Any]:
        """JSON Schema (draft 2020-12) of the dialect's parameters."""
        from zbtools.schema import struct_schema

        canonical = self._params is None and not self.fixed and self._translate is None
        closed = self.closed if self.closed is not None else canonical
        schema = struct_schema(self.params, wire_names=self.wire_names, closed=closed)
        if canonical:  # the dialect's own defaults are the ones a model must be told
            for key, value in self.defaults.items():
                prop = schema.get("properties", {}).get(key)
                if isinstance(prop, dict):
                    prop["default"] = value
        return schema

    def output_schema(self) -> dict[str, Any] | None:
        """JSON Schema of the result (None when it depends on the route taken)."""
        if self._adapt is not None:
            return None
        from zbtools.schema import struct_schema

        return struct_schema(self.spec.result, closed=False, output=True)

    # -- calls ----------------------------------------------------------------------------------

    def flag_structs(self) -> list[type[Struct]]:
        """Where ``--flag`` names are looked up, first match wins: the dialect's, the canonical."""
        if self.identity:
            return [self.spec.params]
        if isinstance(self, RouterTool):
            return [self.params]
        return [self.params, self.spec.params]

    def to_canonical(self, args: dict[str, Any],
                     problems: list[dict[str, Any]] | None = None,
                     warnings: list[str] | None = None) -> dict[str, Any]:
        """Translate the dialect's arguments into the canonical tool's (``invalid_arguments``).

        ``problems`` already found (bad command-line flags) are reported with the arguments'
        own when this tool declares its parameters; otherwise the canonical validation reports
        them (``invoke`` passes them on). ``warnings`` gets the notes of the validation of the
        tool's own parameters (a number sent as a string), in the dialect's words already.
        """
        from zbtools.core.call.args import alias_table, json_type_name, validate

        if type(args) is not dict:
            raise ToolError("invalid_arguments",
                            f"arguments must be a JSON object, got {json_type_name(args)}",
                            hint=f"send one JSON object of {self.name}'s parameters")
        if self.identity:
            return dict(args)
        if self._params is None:  # the canonical parameters, with defaults or fixed values
            table = alias_table(self.spec.params)
            passed = {k: v for k, v in args.items() if table.get(k, k) not in self.fixed}
            given = {table.get(k, k) for k in passed}
            passed.update({k: v for k, v in self.defaults.items() if k not in given})
            passed.update(self.fixed)
            return passed
        own_table = dict(alias_table(self.params))  # the cached table is shared: copy it
        for field, wire in self.wire_names.items():
            own_table[wire] = field
        canon_table = alias_table(self.spec.params)
        own: dict[str, Any] = {}
        extra: dict[str, Any] = {}
        problems = list(problems or [])
        for key, value in args.items():
            if key in own_table:
                own[own_table[key] if key in self.wire_names.values() else key] = value
            elif key in canon_table:
                extra[key] = value
            else:
                accepted = sorted({*own_table} - {k.replace("_", "-") for k in own_table
                                                   if "_" in k})
                problems.append({"problem": "unknown_argument", "argument": key,
                                 "message": f"unknown argument {key}"
                                 + did_you_mean(key, accepted),
                                 "accepted": accepted})
        params = validate(self.params, own, problems, warnings)
        out: dict[str, Any] = {}
        for name, value in params.to_json().items():
            if value is not None:
                out[self.renames.get(name, name)] = value
        out.update({k: v for k, v in self.defaults.items() if k not in out})
        out.update(self.fixed)
        if self._translate is not None:
            self._translate(params, out)
        taken = {canon_table.get(k, k) for k in out}
        for key, value in extra.items():
            if canon_table[key] in taken:
                raise ToolError("invalid_arguments", f"{key} conflicts with a parameter of "
                                f"{self.name} that sets the same thing",
                                hint=f"use {self.name}'s own parameter only",
                                details={"problems": [{"problem": "conflicting_aliases",
                                                       "argument": key,
                                                       "message": f"{key} given twice"}]})
            out[key] = value
        return out

    def from_canonical(self, result: dict[str, Any]) -> dict[str, Any]:
        """Adapt the canonical result JSON for the dialect (identity where nothing differs)."""
        return self._adapt(result) if self._adapt is not None else result

    def adapt_error(self, error: ToolError) -> ToolError:
        """Reword a canonical error for the dialect (e.g. name the dialect's recovery tool), in
        the dialect's words: its tools and parameters by its names (a Claude ``Edit`` miss says
        ``old_string``, not the canonical ``old_text``), advice it cannot follow dropped
        (docs/internals/surfaces.md#dialect-layer)."""
        if self._adapt_error is not None:
            error = self._adapt_error(error)
        if not self.own:
            return error
        return self.wording().error(error, f"{self.name}'s schema lists what it takes")

    def adapt_warning(self, warning: str) -> str:
        """A warning of the canonical tool in the dialect's words (its advice as far as the
        dialect can follow it, else what happened)."""
        if not self.own:
            return warning
        wording = self.wording()
        return wording.advice(warning) or wording.text(warning)

    def own_notes(self, text: str, result: Any = None) -> str:
        """The canonical rendering of ``result`` with its notes (``[... continue with
        offset=N]``) in the dialect's words: the tool's own rendering says how to go on the
        dialect's way. Its numbers are the adapted result's (fiz's 0-based ``next_offset``):
        not shifted again."""
        if not text.endswith("]\n"):
            return text
        shown = [v for v in vars(result).values() if isinstance(v, str)] if result else []
        lines = text.split("\n")
        # only the notes block the rendering ends with, and never a line the result carries
        # (a command's output, a file's text): those are shown as they are
        i = len(lines) - 2
        while i >= 0 and lines[i].startswith("[") and lines[i].endswith("]"):
            if not any(lines[i] in value for value in shown):
                note = self.wording().advice(lines[i][1:-1], shift=False).strip()
                if note:
                    lines[i] = f"[{note}]"
                else:  # nothing left the dialect can follow
                    del lines[i]
            i -= 1
        return "\n".join(lines)

    @property
    def rules(self) -> tuple[Rule, ...]:
        """The dialect's rules: they hold for every canonical call this tool makes."""
        return self.dialect.rules if self.dialect is not None else ()

    def wording(self) -> Wording:
        """The words this tool speaks (``vocabulary``, built on first use)."""
        if self._wording is None:
            from zbtools.dialects.vocabulary import wording

            self._wording = wording(self)
        return self._wording

    def __repr__(self) -> str:
        return f"DialectTool({self.name!r} -> {self.target!r})"


class RouterTool(DialectTool):
    """A dialect tool that chooses its canonical tool per call (by ``command``, ``operation``).

    ``route(params, ctx)`` returns ``(canonical tool name, canonical arguments)``; ``spec`` is a
    routing ``ToolSpec`` whose params are the dialect's and whose ``run`` does the dispatch.
    """

    def __init__(self, name: str, targets: tuple[str, ...], *,
                 route: Callable[[Any, Context], tuple[str, dict[str, Any]]],
                 params: type[Struct], description: str, read_only: bool = False,
                 destructive: bool = True, idempotent: bool = False,
                 parallel_safe: bool = False, **kwargs: Any) -> None:
        super().__init__(name, targets[0], description=description, params=params,
                         read_only=read_only, destructive=destructive, idempotent=idempotent,
                         parallel_safe=parallel_safe, **kwargs)
        self._targets = targets
        self._route = route

    @property
    def targets(self) -> tuple[str, ...]:
        return self._targets

    @property
    def identity(self) -> bool:
        return False

    @property
    def category(self) -> str:
        return "edit"

    @property
    def spec(self) -> ToolSpec:
        if self._spec is None:
            from zbtools.toolspec import ToolSpec

            self._spec = ToolSpec(name=self.name, params=self.params, result=Routed,
                                  run=self._run, doc=self.description,
                                  read_only=self.read_only, destructive=self.destructive,
                                  idempotent=self.idempotent, parallel_safe=self.parallel_safe,
                                  render_text=self._render, category="edit")
        return self._spec

    def _flag(self, key: str) -> bool:
        return bool(self._flags[key])

    def output_schema(self) -> dict[str, Any] | None:
        return None

    def to_canonical(self, args: dict[str, Any],
                     problems: list[dict[str, Any]] | None = None,
                     warnings: list[str] | None = None) -> dict[str, Any]:
        """Validate against the dialect's parameters; the route is chosen when the call runs
        (its validation, in ``invoke``, gives the warnings)."""
        from zbtools.core.call.args import json_type_name, validate

        if type(args) is not dict:
            raise ToolError("invalid_arguments",
                            f"arguments must be a JSON object, got {json_type_name(args)}",
                            hint=f"send one JSON object of {self.name}'s parameters")
        renamed = {}
        wire = {v: k for k, v in self.wire_names.items()}
        for key, value in args.items():
            renamed[wire.get(key, key)] = value
        validate(self.params, renamed, problems)
        return renamed

    def _run(self, params: Any, ctx: Context) -> Struct:
        from zbtools.registry import find

        name, canonical = self._route(params, ctx)
        spec = find(name)
        if spec is None:  # pragma: no cover - tools() lists routers only when all targets exist
            raise ToolError("unknown_tool", f"{self.name}: {name} is not available")
        return call_canonical(spec, canonical, ctx, self.rules)

    def _render(self, result: Any) -> str:
        from zbtools.registry import find

        for name in self._targets:
            spec = find(name)
            if spec is not None and isinstance(result, spec.result) and spec.render_text:
                return self.own_notes(spec.render_text(result), result)
        from zbtools.textout import default_render

        return default_render(result.to_json())


class Dialect:
    """A named set of dialect tools, with the rules every call of the dialect keeps.

    ``names`` maps a canonical tool name to the words the dialect's errors use for it, where
    the tool it maps to is not the one to name (Anthropic's ``view`` command).
    """

    def __init__(self, name: str, tools: Callable[[], list[DialectTool]],
                 unavailable: Mapping[str, str] | None = None, description: str = "",
                 rules: tuple[Rule, ...] = (), names: Mapping[str, str] | None = None) -> None:
        self.name = name
        self._make = tools
        self._tools: list[DialectTool] | None = None
        self._unavailable = dict(unavailable or {})
        self.description = description or DESCRIPTIONS.get(name, name)
        self.rules = rules
        self.names = dict(names or {})
        self._canonical: dict[str, DialectTool] = {}

    def _all(self) -> list[DialectTool]:
        if self._tools is None:
            tools = self._make()
            for tool in tools:
                tool.dialect = self
                tool.own = self.name != DEFAULT_DIALECT  # zblade's words are the canonical ones
            self._tools = tools
        return self._tools

    def tools(self) -> list[DialectTool]:
        """The dialect's documented tools that this zbtools can run, in documentation order."""
        return [t for t in self._all() if t.available]

    def unavailable(self) -> dict[str, str]:
        """Documented tools this zbtools cannot run yet: name -> why."""
        out = dict(self._unavailable)
        for tool in self._all():
            if not tool.available:
                out[tool.name] = f"its canonical tool {tool.target} is not in this zbtools"
        return out

    def lookup(self, tool_name: str, *, own_only: bool = False) -> DialectTool | None:
        """The dialect tool called ``tool_name``; else (unless ``own_only``: MCP) the canonical
        tool of that name or alias.

        Names fold case and ``-`` (docs/dialects.md#tool-names): the dialect's own tools come
        first, an exact name, then an exact alias, then a name or alias equal but for case;
        then the canonical tools, whose names are all lower case.
        """
        if self.name == DEFAULT_DIALECT:  # the canonical tools: no need to load them all
            return self._wrap(tool_name)
        tools = self._all()
        for tool in tools:
            if tool.name == tool_name:
                return tool
        for tool in tools:
            if tool_name in tool.aliases:
                return tool
        from zbtools.registry import fold_name

        folded = fold_name(tool_name)
        for tool in tools:
            if any(fold_name(n) == folded for n in (tool.name, *tool.aliases)):
                return tool
        return None if own_only else self._wrap(tool_name)

    def _wrap(self, tool_name: str) -> DialectTool | None:
        """The canonical tool ``tool_name`` (a name or alias) as an identity dialect tool."""
        if tool_name in self._canonical:
            return self._canonical[tool_name]
        from zbtools.registry import find

        spec = find(tool_name)
        if spec is None:
            return None
        wrapped = DialectTool(spec.name, spec.name, aliases=spec.aliases)
        wrapped._spec = spec
        wrapped.dialect = self
        wrapped.own = False  # reached by its canonical name: it speaks canonical words
        self._canonical[tool_name] = wrapped
        return wrapped

    def __repr__(self) -> str:
        return f"Dialect({self.name!r})"


_LOADED: dict[str, Dialect] = {}


def get_dialect(name: str | None, env: Mapping[str, str] | None = None) -> Dialect:
    """The dialect ``name``; None -> ``$ZBTOOLS_DIALECT`` -> ``zblade``. Imports one module."""
    if name is None:
        import os

        name = (env if env is not None else os.environ).get("ZBTOOLS_DIALECT") or DEFAULT_DIALECT
    key = name.strip().lower()
    if key not in DIALECTS:
        raise ToolError("usage_error", f"unknown dialect {name!r}",
                        hint=f"use one of: {', '.join(DIALECTS)} (--dialect NAME or "
                        "ZBTOOLS_DIALECT)", details={"dialects": list(DIALECTS)})
    found = _LOADED.get(key)
    if found is None:
        __import__(f"zbtools.dialects.{key}")  # not importlib: see zbtools.registry._load
        found = sys.modules[f"zbtools.dialects.{key}"].DIALECT
        assert isinstance(found, Dialect)
        _LOADED[key] = found
    return found


def invoke(tool: DialectTool, args: dict[str, Any], ctx: Context,
           problems: list[dict[str, Any]] | None = None) -> Outcome:
    """Run ``tool`` with the dialect's ``args``: translate, validate, run, adapt.

    ``problems`` found earlier (command-line flags) are reported with the arguments' own.
    Raises ``ToolError`` (already adapted to the dialect) for every documented failure; the
    caller owns ``ctx`` (its warnings are the call's warnings, reworded here for the dialect).
    """
    from zbtools.core.call.args import validate

    first_warning = len(ctx.warnings)
    own_words: list[str] = []  # warnings about the dialect's own arguments: not reworded
    try:
        canonical = tool.to_canonical(args, problems, own_words)
        spec = tool.spec
        if not tool.identity and ctx.workspace.check_syntax == "refuse":
            # another agent's tool: a change that breaks the parse is written with a warning,
            # never refused (its seed has no such error; docs/internals/code.md#syntax-guard)
            ctx.check_syntax = "warn"
        if isinstance(tool, RouterTool):  # its route runs the canonical call, under the rules
            params = validate(spec.params, canonical, None, own_words)
            apply_call_limits(params, ctx)
            result = spec.call(params, ctx)
        else:
            result = call_canonical(spec, canonical, ctx, tool.rules,
                                    None if tool.declares_params else problems)
    except ToolError as exc:
        raise tool.adapt_error(exc) from None
    finally:
        if len(ctx.warnings) > first_warning and tool.own:
            ctx.warnings[first_warning:] = [tool.adapt_warning(w)
                                            for w in ctx.warnings[first_warning:]]
        ctx.warnings[first_warning:first_warning] = own_words
    if tool.own and not isinstance(tool, RouterTool) and spec.render_text is not None:
        spec = _speaking(spec, tool)
    raw = result.to_json()
    payload = tool.from_canonical(dict(raw))
    changed = {key: value for key, value in payload.items()
               if key in raw and raw[key] != value and type(value) in (int, str, float, bool)}
    if changed:
        # The dialect changed plain values (fiz's 0-based next_offset): the text rendering
        # must say what the JSON says, so it renders a copy carrying the adapted values.
        clone = object.__new__(type(result))
        clone.__dict__.update(vars(result), **changed)
        result = clone
    return Outcome(spec, result, payload)


def _speaking(spec: ToolSpec, tool: DialectTool) -> ToolSpec:
    """``spec`` whose text rendering writes its notes in ``tool``'s words."""
    render = spec.render_text
    assert render is not None
    speaking = object.__new__(type(spec))
    speaking.__dict__.update(vars(spec))
    speaking.render_text = lambda result: tool.own_notes(render(result), result)
    return speaking

"""Tool dialects: the documented tool sets of other agents, mapped onto the canonical tools.

The canonical tools are Zaguán Blade's (docs/internals/sources.md#zblade, dialect ``zblade``).
Every other dialect is a thin layer over the same engine: it names its tools and parameters as
its agent's documentation does, translates a call into the canonical tool's arguments
(``to_canonical``) and adapts the canonical result where its semantics differ
(``from_canonical``). Listings show only a dialect's own tools, while lookups also resolve every
canonical name and alias; undeclared canonical parameters pass through; a tool that routes to
several canonical tools picks one at run time; and only the selected dialect's module is ever
imported (docs/internals/surfaces.md#dialect-layer). What users see is in docs/dialects.md.
Used by the command line, ``batch``, ``schema``, ``prompt`` and ``mcp``; never imports a surface.

* ``get_dialect``: a dialect by name (None: ``$ZBTOOLS_DIALECT``, else ``DEFAULT_DIALECT``).
* ``Dialect``: ``tools()``, ``lookup(name)`` and ``unavailable()``.
* ``DialectTool``: one tool (``name``, ``description``, ``input_schema()``, the annotations,
  ``to_canonical``, ``from_canonical``, ``spec``); ``RouterTool``: one that routes by argument.
* ``invoke``: run a dialect tool's call, its result as the dialect reports it.
* ``definitions`` (submodule): a dialect's tools as API tool definitions.
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
    from zbtools.toolspec import ToolSpec

DEFAULT_DIALECT = "zblade"
DESCRIPTIONS: dict[str, str] = {
    "zblade": "the canonical Zaguán Blade tools",
    "claude": "Claude Code's file tools: Read, Write, Edit, Glob, Grep",
    "zkit": "zkit's coding toolset: read, write (create-only), edit, bash, plans...",
    "fiz": "fiz's built-in tools: bash, edit, find, grep, ls, patch, read, task, write",
    "anthropic": "Anthropic's text editor tool str_replace_based_edit_tool",
    "codex": "OpenAI Codex CLI: apply_patch (*** Begin Patch), shell, update_plan, view_image",
}


class Routed(Struct):
    """The result of a routing tool: the result of the canonical tool it chose."""


class DialectTool:
    """One tool of a dialect: its name, documented parameters and mapping onto a canonical tool.

    ``target`` is the canonical tool's name. ``params`` declares the dialect's parameters (None:
    the canonical tool's own). ``renames`` maps dialect field -> canonical field (a given value is
    copied; unnamed fields keep their name), ``fixed`` sets canonical arguments whatever the call
    says, ``defaults`` sets them unless the call gives them, and
    ``translate(params, out)`` may rewrite ``out`` (the canonical arguments) for anything else.
    ``wire_names`` maps a field to the property name the schema shows when that name is not a
    Python identifier (Claude's ``-A``); the wire name is accepted as an alias.
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
        self.closed = closed
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
                     problems: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        """Translate the dialect's arguments into the canonical tool's (``invalid_arguments``).

        ``problems`` already found (bad command-line flags) are reported with the arguments'
        own when this tool declares its parameters; otherwise the canonical validation reports
        them (``invoke`` passes them on).
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
        params = validate(self.params, own, problems)
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
        """Reword a canonical error for the dialect (e.g. name the dialect's recovery tool), and
        call its parameters by the dialect's names: a Claude ``Edit`` miss says ``old_string``,
        the name in the model's schema, not the canonical ``old_text``."""
        if self._adapt_error is not None:
            error = self._adapt_error(error)
        own = self.error_names
        if own:
            import re

            words = re.compile(r"(?<![\w-])(" + "|".join(map(re.escape, own)) + r")(?![\w-])")
            error.message = words.sub(lambda m: own[m.group(1)], error.message)
            if error.hint:
                error.hint = words.sub(lambda m: own[m.group(1)], error.hint)
        return error

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
                     problems: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        """Validate against the dialect's parameters; the route is chosen when the call runs."""
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
        from zbtools.core.call.args import validate
        from zbtools.registry import find

        name, canonical = self._route(params, ctx)
        spec = find(name)
        if spec is None:  # pragma: no cover - tools() lists routers only when all targets exist
            raise ToolError("unknown_tool", f"{self.name}: {name} is not available")
        target = validate(spec.params, canonical)
        apply_call_limits(target, ctx)
        return spec.call(target, ctx)

    def _render(self, result: Any) -> str:
        from zbtools.registry import find

        for name in self._targets:
            spec = find(name)
            if spec is not None and isinstance(result, spec.result) and spec.render_text:
                return spec.render_text(result)
        from zbtools.textout import default_render

        return default_render(result.to_json())


class Dialect:
    """A named set of dialect tools."""

    def __init__(self, name: str, tools: Callable[[], list[DialectTool]],
                 unavailable: Mapping[str, str] | None = None, description: str = "") -> None:
        self.name = name
        self._make = tools
        self._tools: list[DialectTool] | None = None
        self._unavailable = dict(unavailable or {})
        self.description = description or DESCRIPTIONS.get(name, name)
        self._canonical: dict[str, DialectTool] = {}

    def _all(self) -> list[DialectTool]:
        if self._tools is None:
            self._tools = self._make()
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

    def lookup(self, tool_name: str) -> DialectTool | None:
        """The dialect tool called ``tool_name``; else the canonical tool of that name or alias.

        Exact dialect names first, then their aliases, then a case-insensitive match of a
        dialect name (``read`` for Claude's ``Read``), then the canonical registry.
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
        folded = tool_name.casefold().replace("-", "_")
        for tool in tools:
            if tool.name.casefold() == folded:
                return tool
        return self._wrap(tool_name)

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
    caller owns ``ctx`` (its warnings are the call's warnings).
    """
    from zbtools.core.call.args import validate

    canonical = tool.to_canonical(args, problems)
    spec = tool.spec
    try:
        params = validate(spec.params, canonical, None if tool.declares_params else problems)
        apply_call_limits(params, ctx)
        if not tool.identity and ctx.workspace.check_syntax == "refuse":
            # another agent's tool: a change that breaks the parse is written with a warning,
            # never refused (its seed has no such error; docs/internals/code.md#syntax-guard)
            ctx.check_syntax = "warn"
        result = spec.call(params, ctx)
    except ToolError as exc:
        raise tool.adapt_error(exc) from None
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

"""Commands that are not tools: ``tools``, ``schema``, ``prompt``, ``batch``, ``mcp``.

``run_command_word`` dispatches the words listed in ``entry.COMMANDS``; each handler takes the
arguments after the word, the global options, the streams, the environment and the output format
and returns the exit status. ``--dialect`` (or ``$ZBTOOLS_DIALECT``) applies to all of them.

* ``zbtools tools``: the tools (of the dialect), one JSON envelope or a text table.
* ``zbtools schema [--format jsonschema|anthropic|openai|openai-strict|mcp] [TOOL...]``: a JSON
  array of tool definitions, ready for an API call (zbtools/schema.py).
* ``zbtools prompt [TOOL...]``: the system-prompt snippet of seeds 000/001 (markdown text; with
  an explicit ``--json``, a JSON envelope holding it).
* ``zbtools batch``: JSON Lines on stdin, ``{"id": ..., "tool": ..., "args": {...}}`` (also
  ``name``/``arguments``, with ``arguments`` an object or a JSON string as OpenAI sends it), one
  result line per request in order: the usual envelope with ``"id"`` first. Blank lines are
  skipped; a malformed line yields an error line (``invalid_json``, ``invalid_arguments``,
  ``unknown_tool``, ``too_large``) and processing continues; EOF ends with status 0 whatever the
  calls returned. One workspace and configuration serve every call; each call gets a fresh
  context (warnings, per-call limits). With ``--format text`` each envelope also carries
  ``"text"``: the rendering a model should see, as ``--format text`` prints it for one call.
"""

from __future__ import annotations

import json

from zbtools.contract import ToolError, error_envelope, success_envelope

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from zbtools.core.call.config import Limits
    from zbtools.core.files.workspace import Workspace
    from zbtools.dialects import Dialect, DialectTool
    from zbtools.entry import Options, Streams


def run_command_word(command: str, rest: list[str], opts: Options, streams: Streams,
                     env: Mapping[str, str], fmt: str) -> int:
    if command == "mcp":
        from zbtools.mcp_server import serve

        return serve(rest, opts, streams, env)
    handler = HANDLERS.get(command)
    if handler is None:  # pragma: no cover - entry only dispatches known words
        raise ToolError("unknown_tool", f"unknown command {command!r}")
    return handler(rest, opts, streams, env, fmt)


def _dialect(opts: Options, env: Mapping[str, str]) -> Dialect:
    from zbtools.dialects import get_dialect

    return get_dialect(opts.dialect, env)


def _out(streams: Streams, text: str) -> None:
    from zbtools.entry import _write

    _write(streams, text)


def tools_command(rest: list[str], opts: Options, streams: Streams, env: Mapping[str, str],
                  fmt: str) -> int:
    if rest:
        raise ToolError("usage_error", f"`zbtools tools` takes no arguments, got {rest[0]!r}")
    from zbtools.entry import uses_dialect

    listing: list[dict[str, Any]]
    if uses_dialect(opts, env):
        dialect = _dialect(opts, env)
        listing = [{"name": t.name, "aliases": list(t.aliases), "summary": t.description,
                    "canonical": list(t.targets), "read_only": t.read_only,
                    "destructive": t.destructive, "idempotent": t.idempotent,
                    "parallel_safe": t.parallel_safe} for t in dialect.tools()]
    else:
        from zbtools.registry import all_tools

        listing = [{"name": s.name, "aliases": list(s.aliases), "summary": s.summary,
                    "read_only": s.read_only, "destructive": s.destructive,
                    "idempotent": s.idempotent, "parallel_safe": s.parallel_safe}
                   for s in all_tools()]
    if fmt == "json":
        envelope = success_envelope("tools", {"tools": listing}, truncated=False, warnings=[])
        _out(streams, json.dumps(envelope, ensure_ascii=True) + "\n")
    else:
        width = max(len(t["name"]) for t in listing)
        lines = []
        for t in listing:
            names = t["name"] + (f" ({', '.join(t['aliases'])})" if t["aliases"] else "")
            lines.append(f"{names:<{width + 16}} {t['summary']}\n")
        _out(streams, "".join(lines))
    return 0


# ---------------------------------------------------------------------------------------------
# schema


def _options(rest: list[str], command: str, value_options: tuple[str, ...]
             ) -> tuple[dict[str, str], list[str]]:
    """``--opt VALUE`` / ``--opt=VALUE`` for the named options; bare words are tool names."""
    values: dict[str, str] = {}
    names: list[str] = []
    i = 0
    while i < len(rest):
        token = rest[i]
        flag, eq, inline = token.partition("=")
        if flag in value_options:
            if eq:
                values[flag] = inline
            elif i + 1 < len(rest):
                i += 1
                values[flag] = rest[i]
            else:
                raise ToolError("usage_error", f"{flag} needs a value",
                                hint=f"zbtools {command} {flag} VALUE")
        elif token.startswith("-"):
            raise ToolError("usage_error", f"unknown option {token} for `zbtools {command}`",
                            hint=f"see the README; zbtools {command} "
                            + " ".join(f"[{o} VALUE]" for o in value_options) + " [TOOL...]")
        else:
            names.append(token)
        i += 1
    return values, names


def schema_command(rest: list[str], opts: Options, streams: Streams, env: Mapping[str, str],
                   fmt: str) -> int:
    from zbtools.schema import FORMATS, definitions

    values, names = _options(rest, "schema", ("--format",))
    schema_format = values.get("--format", "jsonschema")
    if schema_format not in FORMATS:
        raise ToolError("usage_error", f"unknown schema format {schema_format!r}",
                        hint=f"use --format {' | '.join(FORMATS)}",
                        details={"formats": list(FORMATS)})
    tools = definitions(_dialect(opts, env), schema_format, names)
    _out(streams, json.dumps(tools, indent=2, ensure_ascii=True) + "\n")
    return 0


# ---------------------------------------------------------------------------------------------
# prompt

PROMPT_FOOTER = """\
Paths are relative to the workspace root (absolute paths must lie inside it).

To use a tool, respond with:
<tool_call>
{"name": "tool_name", "arguments": {...}}
</tool_call>

The exact format depends on your AI provider's tool calling conventions.
"""


def _type_words(schema: Mapping[str, Any]) -> str:
    if "enum" in schema:
        return "one of " + "|".join(str(c) for c in schema["enum"] if c is not None)
    if "anyOf" in schema:
        return " or ".join(_type_words(s) for s in schema["anyOf"] if s != {"type": "null"})
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "any")
    if kind == "array":
        return "array of " + _type_words(schema.get("items", {}))
    if kind == "object" and "properties" in schema:
        required = set(schema.get("required", []))
        inner = ", ".join(f"{key}: {_type_words(sub)}" + ("" if key in required else "?")
                          for key, sub in schema["properties"].items())
        return "object {" + inner + "}"
    return str(kind) if kind else "any"


def _args_summary(schema: Mapping[str, Any]) -> str:
    """``{"path": "string", "offset": "integer, optional"}``, the seed 001 style."""
    required = set(schema.get("required", []))
    parts = []
    for key, sub in schema.get("properties", {}).items():
        words = _type_words(sub) + ("" if key in required else ", optional")
        parts.append(f"{json.dumps(key)}: {json.dumps(words, ensure_ascii=False)}")
    return "{" + ", ".join(parts) + "}"


def render_prompt(dialect: Dialect, tools: list[DialectTool]) -> str:
    """The "Adding Tools to Your AI System Prompt" snippet (seeds 000/001) for ``tools``."""
    lines = ["# Available Tools", ""]
    for tool in tools:
        lines.append(f"**{tool.name}** - {tool.description}")
        lines.append(f"  Args: {_args_summary(tool.input_schema())}")
        lines.append("")
    return "\n".join(lines) + "\n" + PROMPT_FOOTER


def prompt_command(rest: list[str], opts: Options, streams: Streams, env: Mapping[str, str],
                   fmt: str) -> int:
    from zbtools.schema import select_tools

    _values, names = _options(rest, "prompt", ())
    dialect = _dialect(opts, env)
    text = render_prompt(dialect, select_tools(dialect, names))
    if opts.format == "json":
        envelope = success_envelope("prompt", {"dialect": dialect.name, "prompt": text},
                                    truncated=False, warnings=[])
        _out(streams, json.dumps(envelope, ensure_ascii=True) + "\n")
    else:
        _out(streams, text)
    return 0


# ---------------------------------------------------------------------------------------------
# batch

REQUEST_KEYS = {"id", "tool", "name", "args", "arguments", "input"}


class Batch:
    """One workspace, one configuration, many calls."""

    def __init__(self, workspace: Workspace, limits: Limits, env: Mapping[str, str],
                 dialect: Dialect | None, state_root: str | None, debug: bool = False,
                 text: bool = False) -> None:
        self.workspace = workspace
        self.text = text  # add the --format text rendering to each envelope as "text"
        self.limits = limits
        self.env = env
        self.dialect = dialect
        self.state_root = state_root
        self.debug = debug
        self.tools: dict[str, DialectTool | None] = {}

    def lookup(self, name: str) -> DialectTool | None:
        if name not in self.tools:
            if self.dialect is None:
                from zbtools.dialects import get_dialect

                self.dialect = get_dialect("zblade")
            self.tools[name] = self.dialect.lookup(name)
        return self.tools[name]

    def call(self, line: bytes) -> tuple[Any, dict[str, Any]]:
        """One request line -> (its id, the result envelope)."""
        from zbtools.core.call.context import Context
        from zbtools.dialects import invoke
        from zbtools.entry import parse_request

        request_id: Any = None
        tool_name: str | None = None
        try:
            request = parse_request(line, "the request line")
            if not _finite(request.get("id")):
                raise ToolError("invalid_json", "the request id holds a number too large for "
                                "a double (it would come back as Infinity, which is not JSON)",
                                hint="use a string or a smaller number as the id; results "
                                "come back in request order")
            request_id = request.get("id")
            tool_name, args = self._unpack(request)
            tool = self.lookup(tool_name)
            if tool is None:
                import difflib

                listed = [t.name for t in self.dialect.tools()] if self.dialect else []
                close = difflib.get_close_matches(tool_name, listed, n=3, cutoff=0.6)
                raise ToolError("unknown_tool", f"no tool named {tool_name!r}",
                                hint=(f"did you mean {', '.join(close)}? " if close else "")
                                + "`zbtools schema` (with the same --dialect) lists the tools",
                                details={"tools": listed})
            tool_name = tool.name
            ctx = Context(self.workspace, limits=self.limits, env=self.env,
                          state_root=self.state_root)
            outcome = invoke(tool, args, ctx)
            self.state_root = ctx._state_root
            payload = outcome.payload
            envelope = success_envelope(
                tool_name, payload, truncated=bool(payload.get("truncated", False)),
                warnings=ctx.warnings)
            if self.text:
                from zbtools.textout import render_text

                envelope["text"] = render_text(outcome.spec, tool_name, envelope,
                                               outcome.result, ctx)
            return request_id, envelope
        except ToolError as failure:
            return request_id, self.failed(tool_name, failure)
        except KeyboardInterrupt:
            raise
        except Exception as exc:  # one bad call never ends the batch
            if self.debug:
                import sys
                import traceback

                traceback.print_exc(file=sys.stderr)
            bug = ToolError("internal_error", f"internal error: {type(exc).__name__}: {exc}",
                            hint="a bug in zbtools; rerun with --debug for a traceback on "
                            "stderr and report it")
            return request_id, self.failed(tool_name, bug)

    def failed(self, tool_name: str | None, failure: ToolError) -> dict[str, Any]:
        envelope = error_envelope(tool_name, failure)
        if self.text:
            from zbtools.textout import render_error

            envelope["text"] = render_error(envelope["error"])
        return envelope

    @staticmethod
    def _unpack(request: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        from zbtools.entry import parse_request

        unknown = sorted(set(request) - REQUEST_KEYS)
        problems: list[dict[str, Any]] = [{"problem": "unknown_argument", "argument": k,
                     "message": f"unknown request key {k}", "accepted": sorted(REQUEST_KEYS)}
                    for k in unknown]
        names = [k for k in ("tool", "name") if k in request]
        tool = request.get(names[0]) if names else None
        if len(names) > 1:
            problems.append({"problem": "conflicting_aliases", "argument": "tool",
                             "message": "tool and name are two names for the same key"})
        elif type(tool) is not str or not tool:
            problems.append({"problem": "missing_argument", "argument": "tool",
                             "message": "tool must be a tool name (a non-empty string)"})
        keys = [k for k in ("args", "arguments", "input") if k in request]
        args: Any = request[keys[0]] if keys else {}
        if len(keys) > 1:
            problems.append({"problem": "conflicting_aliases", "argument": "args",
                             "message": f"{' and '.join(keys)} are names for the same key"})
        if isinstance(args, str):  # OpenAI sends function arguments as a JSON string
            args = parse_request(args.encode("utf-8", "surrogateescape"), keys[0])
        elif args is None:
            args = {}
        elif type(args) is not dict:
            problems.append({"problem": "wrong_type", "argument": "args",
                             "message": "args must be a JSON object"})
        if problems:
            raise ToolError("invalid_arguments", "malformed request: " + "; ".join(
                p["message"] for p in problems), hint='each line is {"id": ..., "tool": '
                '"read_file", "args": {...}}', details={"problems": problems})
        assert isinstance(tool, str)
        return tool, args


def _finite(value: Any) -> bool:
    """Whether ``value`` (a decoded JSON value) holds no infinite or NaN number."""
    if type(value) is float:
        return value - value == 0.0
    if isinstance(value, list):
        return all(_finite(v) for v in value)
    if isinstance(value, dict):
        return all(_finite(v) for v in value.values())
    return True


def _emit_line(streams: Streams, request_id: Any, envelope: dict[str, Any]) -> None:
    from zbtools.core.call.fastjson import dumps_ascii

    _out(streams, dumps_ascii({"id": request_id, **envelope}) + "\n")


def _drain_line(stdin: Any) -> None:
    while True:
        chunk = stdin.readline(1 << 16)
        if not chunk or chunk.endswith(b"\n"):
            return


def batch_command(rest: list[str], opts: Options, streams: Streams, env: Mapping[str, str],
                  fmt: str) -> int:
    if rest:
        raise ToolError("usage_error", f"`zbtools batch` takes no arguments, got {rest[0]!r}",
                        hint='send JSON Lines on stdin: {"id": 1, "tool": "read_file", '
                        '"args": {"path": "README.md"}}')
    from zbtools.entry import _make_context, uses_dialect

    base = _make_context(opts, env)
    dialect = _dialect(opts, env) if uses_dialect(opts, env) else None
    batch = Batch(base.workspace, base.limits, base.env, dialect, None,
                  debug=opts.debug or bool(env.get("ZBTOOLS_DEBUG")), text=fmt == "text")
    limit = base.limits.max_request_bytes
    stdin = streams.stdin
    try:
        while stdin is not None:
            line = stdin.readline(limit + 1)
            if not line:
                break
            if len(line) > limit and not line.endswith(b"\n"):
                _drain_line(stdin)
                too_large = ToolError("too_large", f"the request line is larger than {limit} "
                                      "bytes", hint="send less content per call, or raise "
                                      "ZBTOOLS_MAX_REQUEST_BYTES", details={"limit": limit})
                _emit_line(streams, None, batch.failed(None, too_large))
                continue
            if not line.strip():
                continue
            request_id, envelope = batch.call(line)
            _emit_line(streams, request_id, envelope)
    finally:
        base.workspace.close()
    return 0


HANDLERS = {"tools": tools_command, "schema": schema_command, "prompt": prompt_command,
            "batch": batch_command}

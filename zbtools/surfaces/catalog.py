"""The tool catalog in the forms harnesses load: ``tools``, ``schema`` and ``prompt``.

Each handler takes the arguments after its word, the global options, the streams, the environment
and the output format, and returns the exit status. ``--dialect`` (or ``$ZBTOOLS_DIALECT``)
applies to all of them.

* ``zbtools tools``: the tools (of the dialect), one JSON envelope or a text table.
* ``zbtools schema [--format jsonschema|anthropic|openai|openai-strict|mcp] [TOOL...]``: a JSON
  array of tool definitions, ready for an API call (``zbtools.dialects.definitions``).
* ``zbtools prompt [TOOL...]``: the system-prompt snippet listing the tools (markdown text; with
  an explicit ``--json``, a JSON envelope holding it).

Failure modes: ``usage_error`` (a stray argument, an unknown option or schema format),
``unknown_tool`` (a named tool the dialect does not have), ``unknown_dialect``.

A surface: imports the dispatcher, the dialects and the registry, never another surface.
"""

from __future__ import annotations

import json

from zbtools.contract import ToolError, success_envelope
from zbtools.dispatch import selected_dialect, write

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from zbtools.dialects import Dialect, DialectTool
    from zbtools.dispatch import Options, Streams


def tools_command(rest: list[str], opts: Options, streams: Streams, env: Mapping[str, str],
                  fmt: str) -> int:
    listing = tool_listing(rest, opts, env)
    if fmt == "json":
        envelope = success_envelope("tools", {"tools": listing}, truncated=False, warnings=[])
        write(streams, json.dumps(envelope, ensure_ascii=True) + "\n")
    else:
        width = max(len(t["name"]) for t in listing)
        lines = []
        for t in listing:
            names = t["name"] + (f" ({', '.join(t['aliases'])})" if t["aliases"] else "")
            lines.append(f"{names:<{width + 16}} {t['summary']}\n")
        write(streams, "".join(lines))
    return 0


def tool_listing(rest: list[str], opts: Options, env: Mapping[str, str]
                 ) -> list[dict[str, Any]]:
    """What ``zbtools tools`` lists: name, aliases, summary and annotations of each tool (of the
    dialect, which adds ``canonical``); the human surface shows it as a table."""
    if rest:
        raise ToolError("usage_error", f"`zbtools tools` takes no arguments, got {rest[0]!r}")
    from zbtools.dispatch import uses_dialect

    listing: list[dict[str, Any]]
    if uses_dialect(opts, env):
        dialect = selected_dialect(opts, env)
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
    return listing


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
    from zbtools.dialects.definitions import FORMATS, definitions

    values, names = _options(rest, "schema", ("--format",))
    schema_format = values.get("--format", "jsonschema")
    if schema_format not in FORMATS:
        raise ToolError("usage_error", f"unknown schema format {schema_format!r}",
                        hint=f"use --format {' | '.join(FORMATS)}",
                        details={"formats": list(FORMATS)})
    tools = definitions(selected_dialect(opts, env), schema_format, names)
    write(streams, json.dumps(tools, indent=2, ensure_ascii=True) + "\n")
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
    """``{"path": "string", "offset": "integer, optional"}``, as Zaguán Blade's reference writes
    arguments (docs/internals/sources.md#zblade)."""
    required = set(schema.get("required", []))
    parts = []
    for key, sub in schema.get("properties", {}).items():
        words = _type_words(sub) + ("" if key in required else ", optional")
        parts.append(f"{json.dumps(key)}: {json.dumps(words, ensure_ascii=False)}")
    return "{" + ", ".join(parts) + "}"


def render_prompt(dialect: Dialect, tools: list[DialectTool]) -> str:
    """The "Adding Tools to Your AI System Prompt" snippet for ``tools``.

    Its format is Zaguán Blade's (docs/internals/sources.md#zblade)."""
    lines = ["# Available Tools", ""]
    for tool in tools:
        lines.append(f"**{tool.name}** - {tool.description}")
        lines.append(f"  Args: {_args_summary(tool.input_schema())}")
        lines.append("")
    return "\n".join(lines) + "\n" + PROMPT_FOOTER


def prompt_command(rest: list[str], opts: Options, streams: Streams, env: Mapping[str, str],
                   fmt: str) -> int:
    from zbtools.dialects.definitions import select_tools

    _values, names = _options(rest, "prompt", ())
    dialect = selected_dialect(opts, env)
    text = render_prompt(dialect, select_tools(dialect, names))
    if opts.format == "json":
        envelope = success_envelope("prompt", {"dialect": dialect.name, "prompt": text},
                                    truncated=False, warnings=[])
        write(streams, json.dumps(envelope, ensure_ascii=True) + "\n")
    else:
        write(streams, text)
    return 0

"""A dialect's tools as API tool definitions: ``zbtools schema`` and the MCP tool list.

Each format shapes a tool's name, description and input schema the way one API takes them:
``jsonschema`` (a standalone draft 2020-12 document), ``anthropic`` (Messages API ``tools``),
``openai`` (function tools), ``openai-strict`` (the same under structured-outputs strict mode,
``zbtools.schema.strict_schema``) and ``mcp`` (with the read-only, destructive, idempotent and
open-world hints). The formats users see are in docs/dialects.md#schemas-and-system-prompts; the
MCP ``outputSchema`` admits the result and the error envelope, as docs/mcp.md says.

* ``FORMATS``: the format names; ``tool_definition(tool, fmt)``: one tool in one format.
* ``definitions(dialect, fmt, names)``: the selected tools, as deep copies a caller may change.
* ``select_tools``: the named tools (dialect or canonical names), in the order given;
  ``unknown_tool`` for a name the dialect does not have.
* ``output_schema``, ``ERROR_ENVELOPE_SCHEMA``: the MCP ``outputSchema`` of a tool.
* ``tool_annotations``: the MCP hints of a tool.
"""

from __future__ import annotations

import copy

from zbtools.schema import DRAFT, strict_schema

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    from zbtools.dialects import Dialect, DialectTool

FORMATS = ("jsonschema", "anthropic", "openai", "openai-strict", "mcp")
# tools whose effects reach beyond the workspace files: commands, the network
OPEN_WORLD_CATEGORIES = {"commands", "web"}


def tool_annotations(tool: DialectTool) -> dict[str, Any]:
    return {"readOnlyHint": tool.read_only, "destructiveHint": tool.destructive,
            "idempotentHint": tool.idempotent,
            "openWorldHint": tool.category in OPEN_WORLD_CATEGORIES}


# The structured content of a failed call (isError: true): the error envelope.
ERROR_ENVELOPE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "A failed call (isError: true): the error envelope",
    "properties": {
        "zbtools": {"type": "integer", "description": "The contract version"},
        "tool": {"type": ["string", "null"], "description": "The tool called"},
        "ok": {"const": False},
        "error": {
            "type": "object",
            "properties": {
                "code": {"type": "string", "description": "A stable error code"},
                "message": {"type": "string", "description": "What happened"},
                "hint": {"type": "string", "description": "What to do next"},
                "details": {"type": "object", "description": "Machine-readable facts"},
            },
            "required": ["code", "message", "hint"],
        },
    },
    "required": ["ok", "error"],
}


def output_schema(tool: DialectTool) -> dict[str, Any]:
    """The MCP ``outputSchema`` of ``tool``: its result (for a routing tool that does not
    declare its own, the result of any tool it may route to; an object when the dialect
    reshapes the result) or the error envelope."""
    from zbtools.dialects import RouterTool

    results: list[dict[str, Any]] = []
    if isinstance(tool, RouterTool) and tool.output_schema() is None:
        from zbtools.registry import find
        from zbtools.schema import struct_schema

        for name in tool.targets:
            spec = find(name)
            if spec is not None:
                results.append(struct_schema(spec.result, closed=False, output=True))
    else:
        schema = tool.output_schema()
        if schema is not None:
            results.append(schema)
    if not results:
        results.append({"type": "object", "description": "The result, as the dialect shapes it"})
    return {"type": "object", "anyOf": [*results, ERROR_ENVELOPE_SCHEMA]}


def tool_definition(tool: DialectTool, fmt: str) -> dict[str, Any]:
    """One tool in one of ``FORMATS``."""
    schema = tool.input_schema()
    if fmt == "jsonschema":
        return {"$schema": DRAFT, "title": tool.name, "description": tool.description,
                **schema}
    if fmt == "anthropic":
        return {"name": tool.name, "description": tool.description, "input_schema": schema}
    if fmt == "openai":
        return {"type": "function", "function": {"name": tool.name,
                                                 "description": tool.description,
                                                 "parameters": schema}}
    if fmt == "openai-strict":
        return {"type": "function", "function": {"name": tool.name,
                                                 "description": tool.description,
                                                 "parameters": strict_schema(schema),
                                                 "strict": True}}
    if fmt == "mcp":
        return {"name": tool.name, "description": tool.description, "inputSchema": schema,
                "annotations": tool_annotations(tool)}
    raise ValueError(f"unknown schema format {fmt!r}")


def select_tools(dialect: Dialect, names: Iterable[str] = ()) -> list[DialectTool]:
    """The dialect's tools, or the named ones (dialect or canonical names) in the order given."""
    from zbtools.contract import ToolError

    wanted = list(names)
    if not wanted:
        return dialect.tools()
    out = []
    for name in wanted:
        tool = dialect.lookup(name)
        if tool is None:
            listed = [t.name for t in dialect.tools()]
            raise ToolError("unknown_tool", f"no tool named {name!r} in the {dialect.name} "
                            "dialect", hint=f"its tools: {', '.join(listed)}",
                            details={"tools": listed})
        out.append(tool)
    return out


def definitions(dialect: Dialect, fmt: str, names: Iterable[str] = ()) -> list[dict[str, Any]]:
    """Every (or every named) tool of ``dialect`` in format ``fmt``."""
    return [copy.deepcopy(tool_definition(t, fmt)) for t in select_tools(dialect, names)]

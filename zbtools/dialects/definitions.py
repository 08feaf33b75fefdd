"""A dialect's tools as API tool definitions: ``zbtools schema`` and the MCP tool list.

``tool_definition(tool, fmt)`` shapes one dialect tool for an API:

* ``jsonschema``: the input schema as a standalone document (``$schema``, ``title``);
* ``anthropic``: ``{name, description, input_schema}`` (Messages API ``tools``);
* ``openai``: ``{type: "function", function: {name, description, parameters}}``;
* ``openai-strict``: the same with ``strict: true`` and a schema obeying structured-outputs
  strict mode: every object closed with every property required (optional ones made nullable:
  the model sends null for "not given"), only the supported keywords (type, description,
  properties, required, additionalProperties, items, enum, anyOf; defaults and bounds move into
  the description), and free-form maps (``env`` of bash/run_command), which strict mode cannot
  express, left out;
* ``mcp``: ``{name, description, inputSchema, annotations}`` with the read-only, destructive,
  idempotent and open-world hints.

``select_tools`` picks the named tools (dialect or canonical names) in the order given;
``definitions`` returns deep copies, so a caller may change them freely.

Failure modes: ``unknown_tool`` for a name the dialect does not have; ``ValueError`` for a format
not in ``FORMATS`` (the command line checks the format first).
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

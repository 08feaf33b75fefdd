"""An MCP server object for a workspace, driven by the SDK's client in memory (the server the
stdio transport runs, without a subprocess): fast round trips for the tests of any package."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, types


def in_memory(ws: Path, calls: list[tuple[str, dict[str, Any]]],
              dialect: str | None = None) -> list[types.CallToolResult]:
    """The results of ``calls`` (tool name, arguments), in order, from one client session of
    the server of ``ws`` in ``dialect`` (None: the environment's, else the default)."""
    from zbtools.dialects import get_dialect
    from zbtools.dispatch import Options
    from zbtools.surfaces.mcp_server import build_server

    opts = Options()
    opts.workspace = str(ws)
    server = build_server(get_dialect(dialect, os.environ), opts, os.environ, str(ws))
    results: list[types.CallToolResult] = []

    async def main() -> None:
        with anyio.fail_after(20):
            async with Client(server) as client:
                for name, arguments in calls:
                    results.append(await client.call_tool(name, arguments))

    anyio.run(main)
    return results

"""Over MCP a dialect offers, and accepts, only its own tools; their names fold case; its rules
hold (docs/internals/surfaces.md#dialect-layer).

Every dialect through the in-memory SDK client (the server object itself), and one real server
subprocess with zkit's create-only rule.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest.importorskip("mcp", reason="the mcp package (a default dependency) is not installed")

import anyio
from mcp import Client
from mcp.shared.exceptions import MCPError

from tests.surfaces.test_mcp import session, text_of
from zbtools.dialects import get_dialect
from zbtools.options import DIALECTS


@pytest.mark.parametrize("name", DIALECTS)
def test_a_dialect_accepts_only_the_tools_it_lists(ws: Path, name: str) -> None:
    from zbtools.dispatch import Options
    from zbtools.registry import all_tools
    from zbtools.surfaces.mcp_server import build_server

    dialect = get_dialect(name, {})
    own = {n for t in dialect.tools() for n in (t.name, *t.aliases)}
    foreign = sorted({n for spec in all_tools() for n in spec.names}
                     - own - {n.lower() for n in own})
    if name != "zblade":
        assert foreign
    opts = Options()
    opts.workspace = str(ws)
    server = build_server(dialect, opts, os.environ, str(ws))
    (ws / "a.txt").write_text("alpha\n")

    async def main() -> None:
        with anyio.fail_after(20):
            async with Client(server, mode="legacy") as client:
                listing = await client.list_tools()
                listed = [t.name for t in listing.tools]
                assert listed == [t.name for t in dialect.tools()]
                for tool in foreign:
                    if dialect.lookup(tool, own_only=True) is not None:
                        continue  # folds onto one of the dialect's own (Claude's Grep)
                    with pytest.raises(MCPError, match="unknown tool"):
                        await client.call_tool(tool, {"path": "a.txt"})
                for tool in listed:  # each listed name answers in another case too
                    result = await client.call_tool(tool.swapcase(), {"no_such_arg": 1})
                    assert isinstance(result.structured_content, dict)
                    if result.is_error:
                        assert result.structured_content["error"]["code"] != "unknown_tool"

    anyio.run(main)


@pytest.mark.slow
def test_zkit_over_mcp_never_overwrites(ws: Path) -> None:
    (ws / "f.txt").write_bytes(b"old\n")

    async def body(client: Client) -> None:
        listing = await client.list_tools()
        assert "write_file" not in {t.name for t in listing.tools}
        with pytest.raises(MCPError, match="unknown tool"):
            await client.call_tool("write_file", {"path": "f.txt", "content": "NEW"})
        refused = await client.call_tool("write", {"path": "f.txt", "content": "NEW",
                                                   "overwrite": True})
        assert refused.is_error is True
        assert "already_exists" in text_of(refused) and "edit" in text_of(refused)
        read = await client.call_tool("READ", {"path": "f.txt"})
        assert read.is_error is False and "old" in text_of(read)

    session(ws, body, "--dialect", "zkit")
    assert (ws / "f.txt").read_bytes() == b"old\n"

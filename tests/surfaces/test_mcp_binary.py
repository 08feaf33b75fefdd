"""Binary reads over MCP: the bytes come back as content blocks, exactly.

read_file with ``as_base64`` over MCP answers as the reference filesystem server's
``read_media_file`` does: a picture as image content, a sound as audio content, and any other
file as an embedded resource (``file://`` URI, MIME type, the bytes as ``blob``), beside the
text block and the JSON result (structured content). Random bytes in, exactly those bytes out;
the MIME type from the magic bytes or the name. The in-memory server for the property, one real
``zbtools mcp`` subprocess for the round trip.
"""

from __future__ import annotations

import base64
import os
from pathlib import Path

import pytest

pytest.importorskip("mcp", reason="the mcp package (a default dependency) is not installed")

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client, types

from tests.surfaces.mcp_memory import in_memory
from tests.surfaces.test_mcp import session


def the_bytes(result: types.CallToolResult) -> tuple[str, str, bytes]:
    """(block type, MIME type, bytes) of the one media block after the text block."""
    assert result.is_error is False, result.content
    assert [b.type for b in result.content[:1]] == ["text"] and len(result.content) == 2
    block = result.content[1]
    if isinstance(block, types.EmbeddedResource):
        resource = block.resource
        assert isinstance(resource, types.BlobResourceContents)
        return "resource", str(resource.mime_type), base64.b64decode(resource.blob)
    assert isinstance(block, types.ImageContent | types.AudioContent)
    return block.type, block.mime_type, base64.b64decode(block.data)


@settings(max_examples=12, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.one_of(st.binary(max_size=64), st.binary(min_size=1000, max_size=70_000)))
def test_random_bytes_come_back_exactly(ws: Path, data: bytes) -> None:
    (ws / "blob.bin").write_bytes(data)
    [result] = in_memory(ws, [("read_file", {"path": "blob.bin", "as_base64": True})])
    kind, mime, got = the_bytes(result)
    assert got == data
    structured = result.structured_content
    assert isinstance(structured, dict)  # the JSON result is still there for harnesses
    assert base64.b64decode(structured["data"]) == data and structured["mime"] == mime
    expected_kind = ("image" if mime.startswith("image/") else
                     "audio" if mime.startswith("audio/") else "resource")
    assert kind == expected_kind
    if kind == "resource":
        block = result.content[1]
        assert isinstance(block, types.EmbeddedResource)
        assert str(block.resource.uri) == (ws / "blob.bin").resolve().as_uri()


@pytest.mark.parametrize(("name", "head", "kind", "mime"), [
    ("a.zip", b"PK\x03\x04", "resource", "application/zip"),
    ("a.pdf", b"%PDF-1.4\n", "resource", "application/pdf"),
    ("a.wasm", b"\x00asm\x01\x00\x00\x00", "resource", "application/wasm"),
    ("a.mp3", b"ID3\x03\x00", "audio", "audio/mpeg"),
    ("a.flac", b"fLaC\x00", "audio", "audio/flac"),
    ("a.gif", b"GIF89a", "image", "image/gif"),
    ("a.tar", b"\x00\x01\x02", "resource", "application/x-tar"),
    ("a.dat", b"\x00\x01\x02", "resource", "application/octet-stream"),
])
def test_mime_types(ws: Path, name: str, head: bytes, kind: str, mime: str) -> None:
    data = head + bytes(range(256))
    (ws / name).write_bytes(data)
    [result] = in_memory(ws, [("read_file", {"path": name, "as_base64": True})])
    assert the_bytes(result) == (kind, mime, data)


def test_claude_read_passes_as_base64_through(ws: Path) -> None:
    data = b"PK\x03\x04" + os.urandom(300)
    (ws / "x.zip").write_bytes(data)
    [result] = in_memory(ws, [("Read", {"file_path": str(ws / "x.zip"), "as_base64": True})],
                         dialect="claude")
    assert the_bytes(result) == ("resource", "application/zip", data)


def test_without_as_base64_a_binary_is_still_refused(ws: Path) -> None:
    (ws / "x.bin").write_bytes(b"\x00\x01\x02")
    [result] = in_memory(ws, [("read_file", {"path": "x.bin"})])
    assert result.is_error is True
    assert isinstance(result.structured_content, dict)
    assert result.structured_content["error"]["code"] == "binary_file"


@pytest.mark.slow
def test_a_real_server_sends_the_resource(ws: Path) -> None:
    data = os.urandom(5000)
    (ws / "r.bin").write_bytes(b"\x7fELF" + data)

    async def body(client: Client) -> None:
        result = await client.call_tool("read_file", {"path": "r.bin", "as_base64": True})
        assert the_bytes(result) == ("resource", "application/x-executable", b"\x7fELF" + data)

    session(ws, body)

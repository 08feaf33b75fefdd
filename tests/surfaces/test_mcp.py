"""``zbtools mcp``: the MCP stdio server, driven by the official SDK's own client.

Most tests start ``python -m zbtools mcp`` as a real subprocess and talk to it through
``mcp.Client`` over its stdin/stdout (both protocol eras: the legacy initialize handshake that
today's clients use, and the SDK's default negotiation). One test speaks raw JSON-RPC to check
that every byte on stdout is protocol even when a tool prints; one checks what a command started
by ``run_command`` inherits.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the mcp package (a default dependency) is not installed")

import anyio
from mcp import Client, types
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError

from tests.conftest import REPO
from tests.test_import_budget import loaded_modules

pytestmark = pytest.mark.slow  # real MCP server subprocesses, a second or more each

MODES = ["legacy", "auto"]  # the handshake era (clients today) and the SDK's default


def server_params(ws: Path, *extra: str, argv: list[str] | None = None) -> StdioServerParameters:
    pythonpath = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p)
    env = {"PYTHONPATH": pythonpath}
    env.update({k: v for k, v in os.environ.items() if k.startswith("ZBTOOLS_")})
    return StdioServerParameters(
        command=sys.executable,
        args=argv if argv is not None else ["-m", "zbtools", "mcp", "--workspace", str(ws),
                                             *extra],
        env=env, cwd=str(ws.parent))


def session(ws: Path, body: Callable[[Client], Awaitable[None]], *extra: str,
            mode: str = "legacy", argv: list[str] | None = None) -> None:
    async def main() -> None:
        with anyio.fail_after(30):
            async with Client(server_params(ws, *extra, argv=argv), mode=mode,
                              read_timeout_seconds=20) as client:
                await body(client)

    anyio.run(main)


def text_of(result: types.CallToolResult) -> str:
    assert len(result.content) == 1
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


@pytest.mark.parametrize("mode", MODES)
def test_lists_every_tool_with_schema_and_annotations(ws: Path, mode: str) -> None:
    from zbtools.dialects import get_dialect

    dialect = get_dialect(None, {})
    expected = {t.name: t for t in dialect.tools()}

    async def body(client: Client) -> None:
        listing = await client.list_tools()
        assert client.server_info is not None and client.server_info.name == "zbtools"
        tools = {t.name: t for t in listing.tools}
        assert set(tools) == set(expected)
        for name, tool in tools.items():
            want = expected[name]
            assert tool.description == want.description
            assert tool.input_schema == json.loads(json.dumps(want.input_schema()))
            assert tool.annotations is not None
            assert tool.annotations.read_only_hint is want.read_only
            assert tool.annotations.destructive_hint is want.destructive
            assert tool.annotations.idempotent_hint is want.idempotent
        read = tools["read_file"].annotations
        assert read is not None and read.read_only_hint and not read.destructive_hint
        delete = tools["delete_file"].annotations
        assert delete is not None and delete.destructive_hint and not delete.read_only_hint

    session(ws, body, mode=mode)


@pytest.mark.parametrize("mode", MODES)
def test_read_file_gives_text_and_structured_content(ws: Path, mode: str) -> None:
    (ws / "a.txt").write_text("alpha\nbeta\n")

    async def body(client: Client) -> None:
        result = await client.call_tool("read_file", {"path": "a.txt"})
        assert result.is_error is False
        assert text_of(result) == "     1\talpha\n     2\tbeta\n"
        structured = result.structured_content
        assert isinstance(structured, dict)
        assert structured["content"] == "alpha\nbeta\n" and structured["path"] == "a.txt"
        assert structured["total_lines"] == 2 and len(structured["sha256"]) == 64
        # an alias of the parameter, and a write that the next read sees
        wrote = await client.call_tool("write_file", {"file_path": "b.txt", "content": "new\n"})
        assert wrote.is_error is False, text_of(wrote)
        assert (ws / "b.txt").read_text() == "new\n"

    session(ws, body, mode=mode)


def test_an_audio_file_read_as_base64_carries_an_audio_block(ws: Path) -> None:
    import base64

    sound = b"RIFF\x24\x00\x00\x00WAVEfmt \x10\x00\x00\x00" + bytes(range(20))
    (ws / "beep.wav").write_bytes(sound)

    async def body(client: Client) -> None:
        result = await client.call_tool("read_file", {"path": "beep.wav", "as_base64": True})
        assert result.is_error is False
        assert [block.type for block in result.content] == ["text", "audio"]
        audio = result.content[1]
        assert isinstance(audio, types.AudioContent) and audio.mime_type == "audio/wav"
        assert base64.b64decode(audio.data) == sound

    session(ws, body)


def test_an_image_read_carries_an_image_block(ws: Path) -> None:
    pil = pytest.importorskip("PIL.Image")
    pil.new("RGB", (8, 6), (0, 128, 255)).save(ws / "pic.png")
    import base64

    async def body(client: Client) -> None:
        result = await client.call_tool("read_file", {"path": "pic.png"})
        assert result.is_error is False
        kinds = [block.type for block in result.content]
        assert kinds == ["text", "image"]
        image = result.content[1]
        assert isinstance(image, types.ImageContent) and image.mime_type == "image/png"
        assert base64.b64decode(image.data) == (ws / "pic.png").read_bytes()
        assert isinstance(result.structured_content, dict)
        assert result.structured_content["width"] == 8

    session(ws, body)


@pytest.mark.parametrize("mode", MODES)
def test_failures_are_tool_errors_and_the_server_keeps_serving(ws: Path, mode: str) -> None:
    (ws / "a.txt").write_text("alpha\n")

    async def body(client: Client) -> None:
        missing = await client.call_tool("read_file", {"path": "missing.txt"})
        assert missing.is_error is True
        assert text_of(missing).startswith("error[not_found]: ")
        assert "\nhint: " in text_of(missing)
        envelope = missing.structured_content
        assert isinstance(envelope, dict) and envelope["ok"] is False
        assert envelope["error"]["code"] == "not_found"
        assert envelope["error"]["message"] and envelope["error"]["hint"]

        bad = await client.call_tool("read_file", {"path": "a.txt", "bogus": 1, "limit": "x"})
        assert bad.is_error is True and isinstance(bad.structured_content, dict)
        error = bad.structured_content["error"]
        assert error["code"] == "invalid_arguments"
        assert len(error["details"]["problems"]) == 2  # every problem at once

        outside = await client.call_tool("read_file", {"path": "../outside/secret.txt"})
        assert outside.is_error is True and isinstance(outside.structured_content, dict)
        assert outside.structured_content["error"]["code"] == "outside_workspace"

        with pytest.raises(MCPError) as unknown:
            await client.call_tool("no_such_tool", {})
        assert unknown.value.code == types.INVALID_PARAMS
        assert "read_file" in unknown.value.message

        again = await client.call_tool("read_file", {"path": "a.txt"})
        assert again.is_error is False and text_of(again) == "     1\talpha\n"

    session(ws, body, mode=mode)


def _server_pipes() -> set[str]:
    """The pipes held by our ``zbtools mcp`` child (its protocol streams among them)."""
    pipes: set[str] = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == os.getpid() and b"mcp" in cmdline:
            for fd in os.listdir(f"/proc/{entry}/fd"):
                try:
                    target = os.readlink(f"/proc/{entry}/fd/{fd}")
                except OSError:
                    continue
                if target.startswith("pipe:"):
                    pipes.add(target)
    return pipes


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("tool", ["run_command", "bash"])
def test_commands_never_touch_the_protocol_streams(ws: Path, tool: str) -> None:
    command = ("readlink /proc/self/fd/0 /proc/self/fd/1 /proc/self/fd/2; "
               "ls /proc/self/fd | tr '\\n' ' '; echo; echo to-stderr >&2; "
               "cat; echo after-cat")

    async def body(client: Client) -> None:
        wire = _server_pipes()
        assert len(wire) >= 2, "the server's protocol pipes were not found"
        result = await client.call_tool(tool, {"command": command})
        assert result.is_error is False, text_of(result)
        structured = result.structured_content
        assert isinstance(structured, dict)
        out = json.dumps(structured)
        assert "after-cat" in out, "cat read something: stdin was not /dev/null"
        stdout = structured.get("stdout") or structured.get("output") or ""
        lines = stdout.splitlines()
        assert lines[0] == "/dev/null"
        assert lines[1].startswith("pipe:") and lines[2].startswith("pipe:")
        assert not {lines[1], lines[2]} & wire, "the command writes into a protocol pipe"
        fds = lines[3].split()
        assert set(fds) <= {"0", "1", "2", "3"}, f"the command inherited descriptors: {fds}"
        assert "to-stderr" in out
        # the connection is intact after the command: another request/response round-trip
        ping = await client.call_tool("read_file", {"path": "../ws/x.txt"})
        assert ping.is_error is True

    session(ws, body)


NOISY = """
import os, sys
from zbtools.tools import read_file
real = read_file.TOOL.run
def noisy(params, ctx):
    print("print-junk")
    sys.stdout.write("write-junk\\n")
    sys.stdout.flush()
    os.write(1, b"fd-junk\\n")
    return real(params, ctx)
read_file.TOOL.run = noisy
from zbtools.entry import main
sys.argv = ["zbtools", "mcp", *sys.argv[1:]]
main()
"""


def test_stdout_carries_nothing_but_protocol_even_when_a_tool_prints(ws: Path) -> None:
    (ws / "a.txt").write_text("alpha\n")
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "read_file", "arguments": {"path": "a.txt"}}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
         "params": {"name": "run_command", "arguments": {"command": "echo cmd-junk"}}},
    ]
    stdin = "".join(json.dumps(r) + "\n" for r in requests)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p))
    proc = subprocess.Popen([sys.executable, "-c", NOISY, "--workspace", str(ws)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(stdin.encode())
    proc.stdin.flush()
    responses: dict[int, dict[str, Any]] = {}
    raw_lines: list[bytes] = []
    deadline = time.monotonic() + 30
    while len(responses) < 3 and time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        raw_lines.append(line)
        message = json.loads(line)  # every line on stdout is one JSON-RPC message
        assert message["jsonrpc"] == "2.0"
        if "id" in message:
            responses[message["id"]] = message
    proc.stdin.close()
    rest = proc.stdout.read()
    err = proc.stderr.read() if proc.stderr else b""
    assert proc.wait(timeout=15) == 0, err
    for line in rest.splitlines():
        assert json.loads(line)["jsonrpc"] == "2.0"
    assert set(responses) == {1, 2, 3}, (raw_lines, err)
    read = responses[2]["result"]
    assert read["isError"] is False and read["structuredContent"]["content"] == "alpha\n"
    assert read["content"] == [{"type": "text", "text": "     1\talpha\n"}]
    assert "cmd-junk" in json.dumps(responses[3]["result"])
    everything = b"".join(raw_lines) + rest
    for junk in (b"print-junk", b"write-junk", b"fd-junk"):
        assert junk not in everything
        assert junk in err, f"{junk!r} should have gone to stderr"


def test_the_claude_dialect_is_served(ws: Path) -> None:
    from zbtools.dialects import get_dialect

    dialect = get_dialect("claude", {})
    names = {t.name for t in dialect.tools()}
    assert {"Read", "Edit", "Write", "Glob", "Grep"} <= names
    (ws / "a.txt").write_text("alpha\nbeta\n")

    async def body(client: Client) -> None:
        listing = await client.list_tools()
        assert {t.name for t in listing.tools} == names
        result = await client.call_tool("Read", {"file_path": str(ws / "a.txt")})
        assert result.is_error is False, text_of(result)
        assert "alpha" in text_of(result) and "beta" in text_of(result)

    session(ws, body, "--dialect", "claude")


def test_without_the_sdk_it_gives_the_command_that_installs_it(ws: Path) -> None:
    probe = ("import sys; sys.modules['mcp'] = None; sys.argv = ['zbtools', 'mcp']; "
             "from zbtools.entry import main; main()")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p))
    done = subprocess.run([sys.executable, "-c", probe], cwd=ws, env=env, input=b"",
                          capture_output=True, timeout=30, check=False)
    assert done.returncode == 1
    error = json.loads(done.stdout)["error"]
    assert error["code"] == "missing_dependency"
    assert "-m pip install 'mcp>=2.3,<3'" in error["hint"]


def test_arguments_after_mcp_are_refused(ws: Path) -> None:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p))
    done = subprocess.run([sys.executable, "-m", "zbtools", "mcp", "extra"], cwd=ws, env=env,
                          input=b"", capture_output=True, timeout=30, check=False)
    assert done.returncode == 2
    assert json.loads(done.stdout)["error"]["code"] == "usage_error"


def test_a_tool_call_does_not_load_the_mcp_sdk_or_docutils(ws: Path) -> None:
    (ws / "a.txt").write_text("hi\n")
    loaded = loaded_modules(["read_file", "--path", "a.txt"], ws)
    assert not loaded & {"mcp", "mcp_types", "anyio", "docutils", "pydantic", "starlette"}
    assert "zbtools" in loaded


def test_in_memory_client_sees_the_same_server(ws: Path) -> None:
    """The server object itself, without a subprocess (fast feedback for the mapping)."""
    from zbtools.dialects import get_dialect
    from zbtools.dispatch import Options
    from zbtools.surfaces.mcp_server import build_server

    (ws / "a.txt").write_text("alpha\n")
    opts = Options()
    opts.workspace = str(ws)
    server = build_server(get_dialect(None, os.environ), opts, os.environ, str(ws))

    async def main() -> None:
        with anyio.fail_after(20):
            async with Client(server) as client:
                listing = await client.list_tools()
                assert "read_file" in {t.name for t in listing.tools}
                result = await client.call_tool("read_file", {"path": "a.txt"})
                assert result.is_error is False and text_of(result) == "     1\talpha\n"
                failed = await client.call_tool("read_file", {})
                assert failed.is_error is True
                assert isinstance(failed.structured_content, dict)
                assert failed.structured_content["error"]["code"] == "invalid_arguments"

    anyio.run(main)


def _dialect_names() -> list[str]:
    from zbtools.options import DIALECTS

    return list(DIALECTS)


@pytest.mark.parametrize("name", _dialect_names())
def test_every_dialect_lists_its_tools_with_their_annotations(ws: Path, name: str) -> None:
    from zbtools.dialects import get_dialect
    from zbtools.dispatch import Options
    from zbtools.surfaces.mcp_server import build_server

    dialect = get_dialect(name, {})
    opts = Options()
    opts.workspace = str(ws)
    server = build_server(dialect, opts, os.environ, str(ws))

    async def main() -> None:
        with anyio.fail_after(20):
            async with Client(server, mode="legacy") as client:
                listing = await client.list_tools()
        assert [t.name for t in listing.tools] == [t.name for t in dialect.tools()]
        for listed, tool in zip(listing.tools, dialect.tools(), strict=True):
            assert listed.input_schema["type"] == "object"
            assert listed.description == tool.description
            assert listed.annotations is not None
            assert (listed.annotations.read_only_hint, listed.annotations.destructive_hint,
                    listed.annotations.idempotent_hint) == (
                        tool.read_only, tool.destructive, tool.idempotent)

    anyio.run(main)

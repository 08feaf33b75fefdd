"""``zbtools mcp``'s own JSON-RPC session (zbtools/surfaces/mcp_wire.py), beside the SDK's.

The SDK's client over stdio (tests/surfaces/test_mcp*.py, legacy mode) is the oracle for the
protocol; here: what ``initialize`` loads, that the listing is the SDK's model field for field,
the session's own rules (cancelled calls get no answer, calls that run alone keep their order)
over pipes in-process, and a client that leaves mid-call through a real subprocess.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the mcp package (a default dependency) is not installed")

from tests.conftest import REPO
from tests.test_import_budget import loaded_full

INITIALIZE = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "test", "version": "0"}}}


def line(message: dict[str, Any]) -> bytes:
    return (json.dumps(message) + "\n").encode()


def test_initialize_loads_neither_the_sdk_nor_a_tool(ws: Path) -> None:
    loaded = loaded_full(["mcp", "--workspace", str(ws)], ws, line(INITIALIZE))
    tops = {name.split(".")[0] for name in loaded}
    assert not tops & {"mcp", "mcp_types", "pydantic", "pydantic_core", "anyio", "jsonschema",
                       "httpx", "starlette"}
    assert not {m for m in loaded if m.startswith(("zbtools.tools.", "zbtools.registry",
                                                   "zbtools.dialects.definitions"))}
    assert "zbtools.surfaces.mcp_wire" in loaded


def test_the_protocol_versions_are_the_sdks() -> None:
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

    from zbtools.surfaces.mcp_wire import HANDSHAKE_VERSIONS, MODERN_VERSIONS

    assert tuple(HANDSHAKE_PROTOCOL_VERSIONS) == HANDSHAKE_VERSIONS
    assert tuple(MODERN_PROTOCOL_VERSIONS) == MODERN_VERSIONS


def test_which_openings_the_session_serves() -> None:
    from zbtools.surfaces.mcp_wire import handshake_era

    assert handshake_era(line(INITIALIZE))
    assert handshake_era(line({**INITIALIZE, "params": {"protocolVersion": "1999-01-01"}}))
    assert not handshake_era(line({**INITIALIZE, "params": {"protocolVersion": "2026-07-28"}}))
    assert not handshake_era(line({"jsonrpc": "2.0", "id": 1, "method": "server/discover"}))
    assert not handshake_era(b"not json\n")


def test_the_listing_is_the_sdk_model_field_for_field() -> None:
    from zbtools.dialects import get_dialect
    from zbtools.options import DIALECTS
    from zbtools.surfaces.mcp_calls import tool_fields
    from zbtools.surfaces.mcp_server import tool_definition

    for name in DIALECTS:
        for tool in get_dialect(name, {}).tools():
            sdk = tool_definition(tool).model_dump(by_alias=True, exclude_none=True,
                                                   mode="json")
            assert json.loads(json.dumps(tool_fields(tool))) == sdk


class Peer:
    """The client's end of an in-process session: send lines, read answers; ``server``: the
    session served."""

    def __init__(self, to_server: io.BufferedWriter[io.FileIO],
                 from_server: io.BufferedReader[io.FileIO], server: Any) -> None:
        self.out = to_server
        self.inp = from_server
        self.server = server

    def send(self, message: dict[str, Any]) -> None:
        self.out.write(line(message))
        self.out.flush()

    def read(self) -> dict[str, Any]:
        answer: dict[str, Any] = json.loads(self.inp.readline())
        return answer


@contextmanager
def session(ws: Path) -> Iterator[Peer]:
    from zbtools.dialects import get_dialect
    from zbtools.dispatch import Options
    from zbtools.surfaces.mcp_wire import WireSession

    opts = Options()
    opts.workspace = str(ws)
    server = WireSession(get_dialect(None, {}), opts, dict(os.environ), str(ws))
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    reader = io.BufferedReader(io.FileIO(in_r, "r"))
    writer = io.FileIO(out_w, "w")
    thread = threading.Thread(target=server.serve, args=(reader, writer, line(INITIALIZE)),
                              daemon=True)
    thread.start()
    with io.BufferedWriter(io.FileIO(in_w, "w")) as to_server, \
            io.BufferedReader(io.FileIO(out_r, "r")) as from_server:
        peer = Peer(to_server, from_server, server)
        assert peer.read()["result"]["serverInfo"]["name"] == "zbtools"
        try:
            yield peer
        finally:
            to_server.close()
            thread.join(20)
            assert not thread.is_alive()
            reader.close()
            writer.close()


def call(request_id: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
            "params": {"name": name, "arguments": arguments}}


def test_cancelled_calls_get_no_answer_and_the_others_keep_their_order(ws: Path) -> None:
    (ws / "a.txt").write_text("alpha\n")
    with session(ws) as peer:
        peer.send(call(1, "run_command", {"command": "sleep 20"}))
        peer.send(call(2, "write_file", {"path": "b.txt", "content": "one\n"}))
        peer.send(call(3, "write_file", {"path": "b.txt", "content": "two\n"}))
        peer.send({"jsonrpc": "2.0", "id": 4, "method": "ping"})
        assert peer.read() == {"jsonrpc": "2.0", "id": 4, "result": {}}  # while 1 runs
        peer.send(call(5, "read_file", {"path": "a.txt"}))  # runs beside the others
        assert peer.read()["id"] == 5
        started = time.monotonic()
        peer.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                   "params": {"requestId": 1}})
        assert [peer.read()["id"] for _ in range(2)] == [2, 3]  # 1 gets no answer
        assert time.monotonic() - started < 15
        assert (ws / "b.txt").read_text() == "two\n"
        peer.send({"jsonrpc": "2.0", "id": 6, "method": "resources/list"})
        assert peer.read()["error"] == {"code": -32601, "message": "Method not found",
                                        "data": "resources/list"}
        peer.send(call(7, "no_such_tool", {}))
        assert peer.read()["error"]["code"] == -32602
        peer.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                   "params": {"requestId": [1]}})  # not an id: ignored
        peer.send({"jsonrpc": "2.0", "id": {"x": 1}, "method": "ping"})
        assert peer.read() == {"jsonrpc": "2.0", "id": None, "error": {
            "code": -32600, "message": "Invalid request"}}
        peer.send({"jsonrpc": "2.0", "id": 8, "method": "ping"})
        assert peer.read()["id"] == 8


@pytest.mark.slow  # a real server subprocess
def test_a_client_that_leaves_mid_call_ends_the_server_quietly(ws: Path) -> None:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p))
    proc = subprocess.Popen([sys.executable, "-m", "zbtools", "mcp", "--workspace", str(ws)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env)
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    proc.stdin.write(line(INITIALIZE))
    proc.stdin.flush()
    assert json.loads(proc.stdout.readline())["id"] == 0
    proc.stdin.write(line(call(1, "run_command", {"command": f"echo $$ > {ws}/pid; sleep 30"})))
    proc.stdin.flush()
    deadline = time.monotonic() + 20
    while not (ws / "pid").exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    proc.stdout.close()  # the client is gone: both of its ends close
    proc.stdin.close()
    status = proc.wait(timeout=30)
    stderr = proc.stderr.read().decode()
    assert status == 0, stderr
    assert "internal_error" not in stderr and "Traceback" not in stderr, stderr


@pytest.mark.slow  # a real server subprocess that loads the SDK
def test_any_other_opening_goes_to_the_sdk(ws: Path) -> None:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p))
    discover = line({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {}})
    done = subprocess.run([sys.executable, "-m", "zbtools", "mcp", "--workspace", str(ws)],
                          input=discover + line({**INITIALIZE, "id": 2}), capture_output=True,
                          env=env, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    answers = [json.loads(x) for x in done.stdout.splitlines()]
    assert [a["id"] for a in answers] == [1, 2]  # the line read first is the SDK's too
    assert answers[0]["error"]["code"] == -32601 and "result" in answers[1]
    assert b"internal_error" not in done.stderr


def test_a_departed_client_is_told_from_a_bug() -> None:
    from zbtools.surfaces.mcp_server import departed

    assert departed(BrokenPipeError())
    assert departed(BaseExceptionGroup("x", [BrokenPipeError(), ConnectionResetError()]))
    assert not departed(BaseExceptionGroup("x", [BrokenPipeError(), ValueError()]))
    assert not departed(ValueError())


def test_undecodable_names_stay_valid_utf8_on_the_wire(ws: Path) -> None:
    """A file name with bytes that are not UTF-8 (kept as lone surrogates) is written as a
    ``\\udcff`` escape, as ``batch`` writes it: every line the server writes decodes as UTF-8."""
    (ws / os.fsdecode(b"\xffbad.txt")).write_text("x")
    with session(ws) as peer:
        peer.send(call(1, "list_directory", {}))
        raw = peer.inp.readline()
        raw.decode("utf-8")  # strict: raises on the bytes a lone surrogate would become
        entries = json.loads(raw)["result"]["structuredContent"]["entries"]
        assert [e["name"] for e in entries] == [os.fsdecode(b"\xffbad.txt")]

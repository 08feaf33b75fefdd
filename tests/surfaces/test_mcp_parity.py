"""``zbtools mcp`` on par with the reference filesystem server: the client's roots, declared
output schemas, progress notifications and cancellation.

Roots, progress and cancellation are tested with the SDK's own client over a real stdio
subprocess; the output schemas of every tool of every dialect are checked as schemas, against
the error envelope, and against real results (in-process and through the client).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the mcp extra (part of dev) is not installed")

import anyio
from jsonschema import Draft202012Validator  # type: ignore[import-untyped]
from mcp import Client, types
from mcp.client.stdio import StdioServerParameters

from tests.surfaces.test_mcp import server_params, text_of

pytestmark = pytest.mark.slow  # real MCP server subprocesses, a second or more each

META = Draft202012Validator(Draft202012Validator.META_SCHEMA)


def connect(ws: Path, body: Callable[[Client], Awaitable[None]], *extra: str,
            roots: list[Path] | Callable[[], list[str]] | None = None,
            on_message: Callable[[Any], None] | None = None,
            params: StdioServerParameters | None = None) -> None:
    """Run ``body`` against ``zbtools mcp --workspace ws`` over stdio; with ``roots`` the client
    offers the roots capability and lists them (a callable: its current URIs)."""

    async def list_roots(context: Any) -> types.ListRootsResult:
        uris = roots() if callable(roots) else [p.as_uri() for p in roots or []]
        return types.ListRootsResult(roots=[types.Root.model_validate({"uri": u}) for u in uris])

    async def message_handler(message: Any) -> None:
        if on_message is not None:
            on_message(message)
        await anyio.lowlevel.checkpoint()

    async def main() -> None:
        with anyio.fail_after(60):
            async with Client(params or server_params(ws, *extra), mode="legacy",
                              read_timeout_seconds=30,
                              list_roots_callback=list_roots if roots is not None else None,
                              message_handler=message_handler) as client:
                await body(client)

    anyio.run(main)


def structured(result: types.CallToolResult) -> dict[str, Any]:
    assert isinstance(result.structured_content, dict), result
    return result.structured_content


# --------------------------------------------------------------------------------------- roots


@pytest.fixture
def two_roots(tmp_path: Path) -> tuple[Path, Path, Path]:
    """(--workspace, root one, root two), each with its own a.txt."""
    ws, one, two = tmp_path / "ws", tmp_path / "one", tmp_path / "two"
    for d, text in ((ws, "workspace\n"), (one, "one\n"), (two, "two\n")):
        d.mkdir()
        (d / "a.txt").write_text(text)
    (two / "sub").mkdir()
    (two / "sub" / "b.txt").write_text("needle\n")
    return ws, one, two


def test_the_client_roots_are_the_workspace(two_roots: tuple[Path, Path, Path]) -> None:
    ws, one, two = two_roots

    async def body(client: Client) -> None:
        first = await client.call_tool("read_file", {"path": "a.txt"})
        assert structured(first)["content"] == "one\n"  # the first root, not --workspace
        second = await client.call_tool("read_file", {"path": str(two / "a.txt")})
        assert structured(second)["content"] == "two\n"
        grep = await client.call_tool("grep_search", {"pattern": "needle", "path": str(two),
                                                      "output_mode": "files_with_matches"})
        assert structured(grep)["files"] == [f"{two}/sub/b.txt"]
        for outside in (str(ws / "a.txt"), "../ws/a.txt", f"{two}/../ws/a.txt"):
            refused = await client.call_tool("read_file", {"path": outside})
            assert refused.is_error is True
            assert structured(refused)["error"]["code"] == "outside_workspace", outside

    # a root that is not an existing directory is skipped (with a warning on stderr)
    connect(ws, body, roots=[one, ws.parent / "missing", two])


def test_a_roots_change_mid_session_is_followed(two_roots: tuple[Path, Path, Path]) -> None:
    ws, one, two = two_roots
    offered = [one.as_uri()]
    listed = []

    def current() -> list[str]:
        listed.append(list(offered))
        return list(offered)

    async def body(client: Client) -> None:
        before = await client.call_tool("read_file", {"path": "a.txt"})
        assert structured(before)["content"] == "one\n"
        offered[:] = [two.as_uri()]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # roots are deprecated by the 2026-07-28 revision
            await client.send_roots_list_changed()
        after = await client.call_tool("read_file", {"path": "a.txt"})
        assert structured(after)["content"] == "two\n"
        gone = await client.call_tool("read_file", {"path": str(one / "a.txt")})
        assert structured(gone)["error"]["code"] == "outside_workspace"
        offered[:] = []  # no roots at all: back to --workspace
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            await client.send_roots_list_changed()
        fallback = await client.call_tool("read_file", {"path": "a.txt"})
        assert structured(fallback)["content"] == "workspace\n"

    connect(ws, body, roots=current)
    assert listed == [[one.as_uri()], [two.as_uri()], []]


def test_roots_capability_without_roots_keeps_the_workspace(
        two_roots: tuple[Path, Path, Path]) -> None:
    ws, _, _ = two_roots

    async def body(client: Client) -> None:
        result = await client.call_tool("read_file", {"path": "a.txt"})
        assert structured(result)["content"] == "workspace\n"

    connect(ws, body, roots=[])


def test_unusable_roots_are_skipped_with_a_warning(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    from zbtools.surfaces.mcp_calls import root_path
    from zbtools.surfaces.mcp_server import ClientRoots

    (tmp_path / "file").write_text("")
    uris = [tmp_path.as_uri(), (tmp_path / "nope").as_uri(), (tmp_path / "file").as_uri(),
            "https://example.invalid/x", tmp_path.as_uri()]
    assert ClientRoots.usable(uris) == [str(tmp_path)]
    err = capsys.readouterr().err
    assert err.count("skipping the root") == 3 and "not an existing directory" in err
    assert ClientRoots.usable([(tmp_path / "nope").as_uri()]) is None
    assert root_path("file:///a%20b/c") == "/a b/c"
    assert root_path("file://localhost/x") == "/x"
    assert root_path("file://host/x") is None


# -------------------------------------------------------------------------------- out schemas


def _dialect_names() -> list[str]:
    from zbtools.options import DIALECTS

    return list(DIALECTS)


ENVELOPE = {"zbtools": 1, "tool": "x", "ok": False,
            "error": {"code": "not_found", "message": "m", "hint": "h", "details": {"a": 1}}}


@pytest.mark.parametrize("name", _dialect_names())
def test_every_tool_declares_an_output_schema(ws: Path, name: str) -> None:
    """Listed for every tool: a valid draft 2020-12 object schema that admits the error
    envelope (failed calls carry it as structured content)."""
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
        assert len(listing.tools) == len(dialect.tools())
        for tool in listing.tools:
            schema = tool.output_schema
            assert schema is not None and schema["type"] == "object", tool.name
            META.validate(schema)
            Draft202012Validator(schema).validate(ENVELOPE)
            assert not Draft202012Validator(schema).is_valid([]), tool.name

    anyio.run(main)


# (tool, arguments) per dialect: at least one real call of every canonical tool family
CALLS: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "zblade": [
        ("read_file", {"path": "a.txt"}), ("read_file_range", {"path": "a.txt",
                                                               "start_line": 1, "end_line": 2}),
        ("get_file_info", {"path": "a.txt"}), ("list_directory", {"path": "."}),
        ("get_workspace_structure", {}), ("find_files_glob", {"pattern": "*.txt"}),
        ("find_files", {"pattern": "a"}), ("grep_search", {"pattern": "alpha"}),
        ("codebase_search", {"query": "alpha"}),
        ("write_file", {"path": "w.txt", "content": "x\n"}),
        ("write_append", {"path": "w.txt", "content": "y\n"}),
        ("apply_edit", {"path": "w.txt", "old_text": "x", "new_text": "z"}),
        ("edit_file", {"path": "w.txt", "old_content": "z", "new_content": "q"}),
        ("undo", {}), ("copy_file", {"source": "a.txt", "destination": "c.txt"}),
        ("move_file", {"source": "c.txt", "destination": "d.txt"}),
        ("create_directory", {"path": "newdir"}), ("delete_file", {"path": "d.txt"}),
        ("open_file", {"path": "a.txt"}), ("get_editor_state", {}),
        ("goto_line", {"line": 2}), ("select_range", {"start_line": 1, "end_line": 1}),
        ("get_selection", {}), ("replace_selection", {"text": "ALPHA"}),
        ("insert_at_cursor", {"text": "!"}), ("close_file", {}),
        ("insert_text", {"path": "w.txt", "insert_line": 1, "content": "top\n"}),
        ("save_plan", {"name": "p", "content": "# plan\n- step one\n"}), ("get_plan", {}),
        ("save_plan_append", {"name": "p", "content": "- step two\n"}),
        ("update_plan", {"plan": [{"step": "one", "status": "completed"}]}),
        ("task", {"action": "list"}),
        ("run_command", {"command": "echo hi"}), ("bash", {"command": "echo hi"}),
        ("list_processes", {}), ("stop_process", {"all": True}),
        ("edit_notebook_cell", {"path": "n.ipynb", "cell_index": 0, "source": "print(2)"}),
        # failures: their structured content is the error envelope
        ("read_file", {"path": "missing.txt"}), ("bash_output", {"id": "nope"}),
        ("web_fetch", {"url": "http://127.0.0.1:9/"}),  # refused before any connection
    ],
    "claude": [("Read", {"file_path": "a.txt"}), ("Glob", {"pattern": "*.txt"}),
               ("Grep", {"pattern": "alpha"}),
               ("Write", {"file_path": "cw.txt", "content": "x\n"}),
               ("Edit", {"file_path": "cw.txt", "old_string": "x", "new_string": "y"})],
    "zkit": [("read", {"path": "a.txt"}), ("ls", {"path": "."}), ("grep", {"pattern": "alpha"}),
             ("glob", {"pattern": "*.txt"}), ("bash", {"command": "echo hi"})],
    "fiz": [("read", {"path": "a.txt"}), ("ls", {"path": "."}), ("find", {"pattern": "*.txt"}),
            ("grep", {"pattern": "alpha"}), ("bash", {"command": "echo hi"}),
            ("write", {"path": "fw.txt", "content": "x\n"})],
    "anthropic": [("str_replace_based_edit_tool", {"command": "view", "path": "a.txt"}),
                  ("str_replace_based_edit_tool", {"command": "create", "path": "an.txt",
                                                   "file_text": "x\n"}),
                  ("str_replace_based_edit_tool", {"command": "str_replace", "path": "an.txt",
                                                   "old_str": "x", "new_str": "y"})],
    "codex": [("shell", {"command": ["echo", "hi"]}),
              ("update_plan", {"plan": [{"step": "one", "status": "in_progress"}]}),
              ("apply_patch", {"input": "*** Begin Patch\n*** Add File: cx.txt\n+x\n"
                                        "*** End Patch\n"})],
    "gemini": [("read_file", {"file_path": "a.txt", "start_line": 2}),
               ("list_directory", {"dir_path": "."}), ("glob", {"pattern": "*.txt"}),
               ("grep_search", {"pattern": "ALPHA", "exclude_pattern": "zzz"}),
               ("write_file", {"file_path": "gw.txt", "content": "x\n"}),
               ("replace", {"file_path": "gw.txt", "instruction": "y", "old_string": "x",
                            "new_string": "y"}),
               ("run_shell_command", {"command": "echo hi"}),
               ("read_many_files", {"include": ["*.txt"]}),
               ("save_memory", {"fact": "likes tests"}),
               ("write_todos", {"todos": [{"description": "one", "status": "pending"}]})],
}


@pytest.mark.parametrize("name", _dialect_names())
def test_structured_content_validates_against_the_output_schema(ws: Path, name: str) -> None:
    """Real calls through the SDK client (which itself checks successful results against the
    listed schema): every structured content, success or failure, validates."""
    from zbtools.dialects import get_dialect
    from zbtools.dispatch import Options
    from zbtools.surfaces.mcp_server import build_server

    (ws / "a.txt").write_text("alpha\nbeta\n")
    (ws / "n.ipynb").write_text(json.dumps({
        "nbformat": 4, "nbformat_minor": 5, "metadata": {},
        "cells": [{"cell_type": "code", "id": "c1", "metadata": {}, "source": ["print(1)"],
                   "outputs": [], "execution_count": None}]}))
    opts = Options()
    opts.workspace = str(ws)
    server = build_server(get_dialect(name, {}), opts, os.environ, str(ws))
    failures: list[str] = []
    errors_seen: list[str] = []

    async def main() -> None:
        with anyio.fail_after(60):
            async with Client(server, mode="legacy") as client:
                schemas = {t.name: t.output_schema for t in (await client.list_tools()).tools}
                for tool, args in CALLS[name]:
                    result = await client.call_tool(tool, args)
                    schema = schemas[tool]
                    assert schema is not None
                    errors = list(Draft202012Validator(schema).iter_errors(
                        result.structured_content))
                    if errors:
                        failures.append(f"{tool}: {errors[0].message}")
                    if result.is_error:
                        errors_seen.append(f"{tool}: {text_of(result)[:200]}")

    anyio.run(main)
    assert not failures
    expected = {"zblade": 3}.get(name, 0)  # the three failures asked for above
    assert len(errors_seen) == expected, errors_seen


# ------------------------------------------------------------------- progress and cancellation


def _progress_of(messages: list[Any]) -> list[types.ProgressNotificationParams]:
    out = []
    for message in messages:
        inner = getattr(message, "root", message)
        if isinstance(inner, types.ProgressNotification):
            out.append(inner.params)
    return out


def test_progress_notifications_only_with_a_progress_token(ws: Path) -> None:
    for i in range(400):
        (ws / f"f{i:03}.txt").write_text("x\n" * 50 + ("needle\n" if i % 50 == 0 else ""))
    seen: list[Any] = []
    calls: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        calls.append((progress, total, message))

    async def body(client: Client) -> None:
        ran = await client.call_tool("run_command", {"command": "sleep 1.2; echo done"},
                                     progress_callback=on_progress)
        assert "done" in structured(ran)["stdout"]
        command = list(calls)
        assert len(command) >= 3, command
        assert all(t == command[0][1] for _, t, _ in command) and command[0][1]
        assert [p for p, _, _ in command] == sorted({p for p, _, _ in command})  # increasing
        assert command[-1][0] >= 0.8 and "running for" in str(command[-1][2])
        assert len(_progress_of(seen)) == len(command)  # the handler sees them too
        calls.clear()
        grep = await client.call_tool("grep_search", {"pattern": "needle"},
                                      progress_callback=on_progress)
        assert structured(grep)["total_matches"] == 8
        assert calls and all("files searched" in str(m) for _, _, m in calls), calls
        calls.clear()
        seen.clear()
        await client.call_tool("run_command", {"command": "sleep 0.6"})
        await client.call_tool("grep_search", {"pattern": "needle"})
        assert not calls and not _progress_of(seen)  # no token, no notification

    connect(ws, body, on_message=seen.append)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_cancelled_command_stops_with_its_whole_tree(ws: Path) -> None:
    pids = ws / "pids"
    command = f"sleep 60 & echo $! > {pids}.tmp; echo $$ >> {pids}.tmp; mv {pids}.tmp {pids}; " \
              "sleep 60"

    async def body(client: Client) -> None:
        started = time.monotonic()
        with anyio.move_on_after(20) as scope:
            async with anyio.create_task_group() as tg:
                async def call() -> None:
                    await client.call_tool("run_command", {"command": command, "timeout": 120})

                tg.start_soon(call)
                while not pids.exists():
                    await anyio.sleep(0.05)
                tg.cancel_scope.cancel()  # the SDK client sends notifications/cancelled
        assert not scope.cancelled_caught and time.monotonic() - started < 15
        numbers = [int(x) for x in pids.read_text().split()]
        assert len(numbers) == 2
        deadline = time.monotonic() + 10
        while any(_alive(p) for p in numbers) and time.monotonic() < deadline:
            await anyio.sleep(0.05)
        assert not [p for p in numbers if _alive(p)], "a process of the cancelled call survived"
        again = await client.call_tool("run_command", {"command": "echo still-serving"})
        assert "still-serving" in structured(again)["stdout"]

    connect(ws, body)


def test_cancellation_reaches_the_tool_through_its_context(ws: Path) -> None:
    """The core mechanism without MCP: a context whose cancel check turns true."""
    from zbtools.contract import ToolError
    from zbtools.dispatch import Options, call_tool, make_context
    from zbtools.registry import find

    for i in range(300):
        (ws / f"g{i:03}.txt").write_text("x\n")
    opts = Options()
    opts.workspace = str(ws)
    spec = find("run_command")
    grep = find("grep_search")
    assert spec is not None and grep is not None
    stop = threading.Event()
    ctx = make_context(opts, {})
    ctx.cancel_check = stop.is_set
    timer = threading.Timer(0.5, stop.set)
    timer.start()
    started = time.monotonic()
    try:
        with pytest.raises(ToolError) as cancelled:
            call_tool(spec, None, {"command": f"echo $$ > {ws}/pid; exec sleep 60"}, ctx)
        assert cancelled.value.code == "interrupted"
        assert time.monotonic() - started < 10
        pid = int((ws / "pid").read_text())
        deadline = time.monotonic() + 5
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(pid)
        with pytest.raises(ToolError) as searching:
            call_tool(grep, None, {"pattern": "x"}, ctx)  # already cancelled: stops at once
        assert searching.value.code == "interrupted"
    finally:
        timer.cancel()
        ctx.workspace.close()


def test_a_cancelled_process_group_kill_does_not_touch_the_server(ws: Path) -> None:
    """Sanity: the server process is not in the command's process group."""
    async def body(client: Client) -> None:
        result = await client.call_tool("run_command", {"command": "cat /proc/$$/stat"})
        pgid = int(structured(result)["stdout"].rsplit(")", 1)[1].split()[2])
        assert pgid != os.getpgid(0)
        with pytest.raises(ProcessLookupError):
            os.killpg(pgid, signal.SIGTERM)  # the group is gone with its command

    connect(ws, body)


def test_text_of_helper_still_matches(ws: Path) -> None:
    (ws / "a.txt").write_text("alpha\n")

    async def body(client: Client) -> None:
        result = await client.call_tool("read_file", {"path": "a.txt"})
        assert text_of(result) == "     1\talpha\n"
        assert json.loads(json.dumps(result.structured_content))["content"] == "alpha\n"

    connect(ws, body)


# ---------------------------------------------------------------------------------- start-up

DEFERRED = """
import sys
from zbtools.surfaces.mcp_server import DEFERRED_PACKAGES, defer_package_init
for name in DEFERRED_PACKAGES:
    defer_package_init(name)
import mcp.server.lowlevel
from mcp import types
from mcp.server.stdio import stdio_server
loaded = sorted(m for m in sys.modules if m.startswith(("mcp.client", "mcp.server.mcpserver",
                                                        "httpx")))
print(" ".join(loaded) or "-")
import mcp
print(mcp.Client.__name__, mcp.server.Server.__name__, types.Tool.__name__)
from mcp import *  # noqa: F403 - the package's own __all__ after its __init__ ran
print(ClientSession.__name__)  # noqa: F405
"""


def test_the_server_imports_no_client_code() -> None:
    """The SDK's package __init__s (its client, every transport, the high-level server) run
    only when one of their own names is used, and then they do."""
    from tests.conftest import REPO

    env = dict(os.environ, PYTHONPATH=str(REPO))
    done = subprocess.run([sys.executable, "-c", DEFERRED], capture_output=True, text=True,
                          env=env, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    first, second, third = done.stdout.splitlines()
    assert first == "-", f"loaded before any use: {first}"
    assert second == "Client Server Tool" and third == "ClientSession"


def test_cancellation_stops_background_waits_too(ws: Path) -> None:
    """on_timeout: background while the call still waits: the job is stopped; a bash_output
    wait ends and leaves its job running."""
    from zbtools.contract import ToolError
    from zbtools.dispatch import Options, call_tool, make_context
    from zbtools.registry import find

    run, output, stop = find("run_command"), find("bash_output"), find("stop_process")
    assert run is not None and output is not None and stop is not None
    opts = Options()
    opts.workspace = str(ws)

    def cancelled_after(seconds: float) -> tuple[Any, threading.Timer]:
        ctx = make_context(opts, {})
        event = threading.Event()
        ctx.cancel_check = event.is_set
        timer = threading.Timer(seconds, event.set)
        timer.start()
        return ctx, timer

    ctx, timer = cancelled_after(0.5)
    try:
        with pytest.raises(ToolError) as cancelled:
            call_tool(run, None, {"command": f"echo $$ > {ws}/bg; exec sleep 60",
                                  "timeout": 30, "on_timeout": "background"}, ctx)
        assert cancelled.value.code == "interrupted"
        pid = int((ws / "bg").read_text())
        deadline = time.monotonic() + 10
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(pid)
    finally:
        timer.cancel()
        ctx.workspace.close()

    plain = make_context(opts, {})
    try:
        job = call_tool(run, None, {"command": "sleep 60", "background": True}, plain).payload
    finally:
        plain.workspace.close()
    ctx, timer = cancelled_after(0.5)
    started = time.monotonic()
    try:
        with pytest.raises(ToolError) as waiting:
            call_tool(output, None, {"id": job["id"], "wait_ms": 20000}, ctx)
        assert waiting.value.code == "interrupted" and time.monotonic() - started < 10
        ctx.cancel_check = None
        stopped = call_tool(stop, None, {"id": job["id"], "grace": 0}, ctx).payload
        assert stopped["stopped"][0]["was_running"] is True
    finally:
        timer.cancel()
        ctx.workspace.close()

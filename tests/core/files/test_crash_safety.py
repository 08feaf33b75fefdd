"""Crash safety: real zbtools processes killed with SIGKILL at chosen and at random points.

After the next call, every file is wholly old or wholly new, no temp file, backup or journal is
left, and hard-linked files keep their links after a rollback. Deterministic kill points come
from the test-only ``ZBTOOLS_TEST_PAUSE_BEFORE_RENAME=N`` hook: the process stops before its
N-th rename (link, unlink) that publishes a change and says so on stderr.
"""

from __future__ import annotations

import json
import os
import random
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO, run_inprocess
from zbtools.core.files.tempnames import parse_temp_name, sweep_dead_temps, temp_name, writer_alive

pytestmark = pytest.mark.slow  # real processes killed at chosen points

PAUSE = "ZBTOOLS_TEST_PAUSE_BEFORE_RENAME"


def _env(ws: Path, state: Path, pause: int | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ZBTOOLS_")}
    env.update(PYTHONPATH=str(REPO), ZBTOOLS_WORKSPACE=str(ws), ZBTOOLS_STATE_DIR=str(state))
    if pause is not None:
        env[PAUSE] = str(pause)
    return env


def start(ws: Path, state: Path, tool: str, args: dict[str, Any],
          pause: int | None = None) -> subprocess.Popen[bytes]:
    child = subprocess.Popen([sys.executable, "-m", "zbtools", tool], cwd=ws,
                             env=_env(ws, state, pause), stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert child.stdin is not None
    child.stdin.write(json.dumps(args).encode())
    child.stdin.close()
    return child


def wait_paused(child: subprocess.Popen[bytes]) -> None:
    assert child.stderr is not None
    line = child.stderr.readline().decode()
    assert line.startswith("zbtools-test-paused"), (line, child.stderr.read())


def kill(child: subprocess.Popen[bytes]) -> None:
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=10)
    for stream in (child.stdout, child.stderr):
        if stream is not None:
            stream.close()


def call(ws: Path, state: Path, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-m", "zbtools", tool], cwd=ws,
                          env=_env(ws, state), input=json.dumps(args).encode(),
                          capture_output=True, timeout=60, check=False)
    envelope: dict[str, Any] = json.loads(done.stdout)
    return envelope


def debris(root: Path) -> list[str]:
    """Our temp, staging and backup files anywhere below ``root``."""
    found = []
    for folder, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            if parse_temp_name(name) is not None:
                found.append(os.path.join(folder, name))
    return found


# ---------------------------------------------------------------------------------------------
# Names


def test_temp_names_carry_the_writer() -> None:
    name = temp_name("a.txt")
    parsed = parse_temp_name(name)
    assert parsed is not None and parsed[0] == "zbtmp" and parsed[1] == os.getpid()
    assert writer_alive(parsed[1], parsed[2])
    assert parse_temp_name(temp_name("é" * 200, "zbbak")) is not None
    assert parse_temp_name(".a.txt.zbtmp-1-2-0badf00d-abcdef01") == ("zbtmp", 1, "2", "0badf00d")
    assert parse_temp_name(".a.txt.zbtmp-0123456789ab") == ("zbtmp", 0, "0", "legacy")
    for other in (".a.txt.zbtmp-0123456789abc", "a.txt.zbtmp-1-2-0badf00d-abcdef01",
                  ".a.zbtmp-1-2-0badf00d-xyz", ".a.txt.zbtmp-1-2-0badf00d-abcdef012",
                  ".a.txt.other-1-2-0badf00d-abcdef01", ".zbtmp-1-2-0badf00d-abcdef01",
                  ".a.txt.zbtmp-1-2-abcdef01", ".a.txt.zbtmp-x-2-0badf00d-abcdef01"):
        assert parse_temp_name(other) is None, other


def test_a_foreign_writers_temp_file_is_removed_only_when_old(tmp_path: Path) -> None:
    """A writer of another boot, container or machine cannot be asked: an hour unchanged."""
    own = parse_temp_name(temp_name("x"))
    assert own is not None
    host = "0badf00d" if own[3] != "0badf00d" else "f00dfeed"
    young = tmp_path / f".a.zbtmp-1-2-{host}-abcdef01"
    old = tmp_path / f".b.zbtmp-1-2-{host}-abcdef02"
    young.write_text("y")
    old.write_text("o")
    os.utime(old, (time.time() - 3700, time.time() - 3700))
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        assert sweep_dead_temps(fd) == 1
    finally:
        os.close(fd)
    assert young.exists() and not old.exists()


def test_a_dead_writer_is_told_from_a_live_one() -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    assert not writer_alive(child.pid, "12345")
    parsed = parse_temp_name(temp_name("x"))
    assert parsed is not None
    assert not writer_alive(os.getppid(), "1")  # the parent's pid with another start time
    assert writer_alive(os.getpid(), parsed[2])


# ---------------------------------------------------------------------------------------------
# Single-file writes: no debris


def test_dead_writers_temp_files_are_removed_by_the_next_write(tmp_path: Path) -> None:
    ws, state = tmp_path / "ws", tmp_path / "state"
    ws.mkdir()
    target = ws / "big.txt"
    target.write_text("old\n")
    child = start(ws, state, "write_file", {"path": "big.txt", "content": "x" * 2_000_000},
                  pause=1)
    wait_paused(child)
    left = debris(ws)
    assert len(left) == 1 and os.path.getsize(left[0]) == 2_000_000
    kill(child)
    assert target.read_text() == "old\n"
    # a name that only looks like ours is never touched
    (ws / ".big.txt.zbtmp-0123456789abX").write_text("user's")
    (ws / ".big.txt.zbtmp-1-2-0badf00d-nothexxx").write_text("user's")
    shown = call(ws, state, "list_directory", {"path": ".", "include_hidden": True})
    names = [e["name"] if isinstance(e, dict) else e for e in shown["result"]["entries"]]
    assert not any(parse_temp_name(str(n)) for n in names), names
    found = call(ws, state, "grep_search", {"pattern": "xxxx", "include_hidden": True})
    assert found["ok"] and not found["result"].get("matches"), found
    done = call(ws, state, "write_file", {"path": "other.txt", "content": "new\n"})
    assert done["ok"], done
    assert debris(ws) == []
    assert (ws / ".big.txt.zbtmp-0123456789abX").exists()
    assert (ws / ".big.txt.zbtmp-1-2-0badf00d-nothexxx").exists()


SINGLE = [
    ("write_file", {"path": "t.txt", "content": "new\n"}, b"old\n", b"new\n"),
    ("write_file", {"path": "t.txt", "content": "new\n"}, None, b"new\n"),
    ("apply_edit", {"path": "t.txt", "old_text": "old", "new_text": "new"}, b"old\n", b"new\n"),
    ("edit_file", {"path": "t.txt", "old_content": "old", "new_content": "new"}, b"old\n",
     b"new\n"),
    ("insert_text", {"path": "t.txt", "content": "new\n", "position": "end"}, b"old\n",
     b"old\nnew\n"),
    ("write_append", {"path": "t.txt", "content": "new\n"}, None, b"new\n"),
    ("copy_file", {"source": "s.txt", "destination": "t.txt"}, None, b"copied\n"),
]


@pytest.mark.parametrize("tool,args,old,new", SINGLE, ids=[
    f"{t[0]}-{'replace' if t[2] else 'create'}" for t in SINGLE])
def test_single_file_calls_killed_before_their_rename(tmp_path: Path, tool: str,
                                                       args: dict[str, Any], old: bytes | None,
                                                       new: bytes) -> None:
    ws, state = tmp_path / "ws", tmp_path / "state"
    ws.mkdir()
    (ws / "s.txt").write_bytes(b"copied\n")
    target = ws / "t.txt"
    if old is not None:
        target.write_bytes(old)
    child = start(ws, state, tool, args, pause=1)
    wait_paused(child)
    assert len(debris(ws)) == 1  # the staged new version, complete
    kill(child)
    assert (target.read_bytes() if target.exists() else None) == old
    done = call(ws, state, "write_file", {"path": "other.txt", "content": "x"})
    assert done["ok"], done
    assert debris(ws) == []
    done = call(ws, state, tool, args)  # and the same call, uninterrupted, does its work
    assert done["ok"], done
    assert target.read_bytes() == new


def test_killed_directory_deletes_and_copies_are_finished_by_the_next_one(
        tmp_path: Path) -> None:
    ws, state = tmp_path / "ws", tmp_path / "state"
    ws.mkdir()
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()  # a pid that is gone
    own = parse_temp_name(temp_name("x"))
    assert own is not None
    left: list[Path] = []
    for tag in ("zbdel", "zbtmp"):
        half = ws / f".tree.{tag}-{child.pid}-{own[2]}-{own[3]}-abcdef0{len(left)}"
        (half / "deep").mkdir(parents=True)
        (half / "deep" / "f.txt").write_text("half done")
        left.append(half)
    live = ws / f".live.zbdel-{os.getpid()}-{own[2]}-{own[3]}-abcdef09"
    (live / "x").mkdir(parents=True)
    (ws / "gone" / "sub").mkdir(parents=True)
    shown = call(ws, state, "list_directory", {"path": ".", "include_hidden": True,
                                               "max_depth": 3})
    assert "half done" not in json.dumps(shown) and "zbdel" not in json.dumps(shown), shown
    done = call(ws, state, "delete_file", {"path": "gone", "recursive": True})
    assert done["ok"], done
    assert not any(p.exists() for p in left) and live.exists()
    (ws / "src" / "a").mkdir(parents=True)
    half = ws / f".tree.zbtmp-{child.pid}-{own[2]}-{own[3]}-abcdef0f"
    half.mkdir()
    done = call(ws, state, "copy_file", {"source": "src", "destination": "dst",
                                         "recursive": True})
    assert done["ok"], done
    assert not half.exists() and live.exists()


def test_a_cut_short_append_is_cut_back_off(tmp_path: Path) -> None:
    ws, state = tmp_path / "ws", tmp_path / "state"
    ws.mkdir()
    target = ws / "log.txt"
    target.write_bytes(b"kept\n")
    child = start(ws, state, "write_append", {"path": "log.txt", "content": "x" * 10_000},
                  pause=1)
    wait_paused(child)  # the journal is written, the append not yet
    kill(child)
    with open(target, "ab") as fh:  # what a write cut short by the kill would have left
        fh.write(b"x" * 4096)
    after = call(ws, state, "read_file", {"path": "log.txt"})
    assert after["ok"] and after["result"]["content"] == "kept\n", after
    assert "was cut off" in " ".join(after["warnings"])
    assert not any((d / "txn").exists() for d in state.iterdir())
    done = call(ws, state, "write_append", {"path": "log.txt", "content": "x" * 10_000})
    assert done["ok"] and target.read_bytes() == b"kept\n" + b"x" * 10_000


def test_a_live_writers_temp_file_is_never_removed(tmp_path: Path) -> None:
    outer, state = tmp_path / "ws", tmp_path / "state"
    inner = outer / "sub"
    inner.mkdir(parents=True)
    (inner / "a.txt").write_text("old\n")
    writer = start(outer, state, "write_file", {"path": "sub/a.txt", "content": "new\n"},
                   pause=1)
    wait_paused(writer)
    try:
        # another agent, its workspace the subdirectory (so another edit lock), writes there
        done = call(inner, tmp_path / "state2", "write_file", {"path": "b.txt", "content": "b"})
        assert done["ok"], done
        assert len(debris(inner)) == 1, "the paused writer's temp file was removed"
    finally:
        kill(writer)
    done = call(inner, tmp_path / "state2", "write_file", {"path": "c.txt", "content": "c"})
    assert done["ok"] and debris(inner) == []
    assert (inner / "a.txt").read_text() == "old\n"


def _signature(path: Path) -> tuple[int, int, int] | None:
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns


def _time_to_change(ws: Path, state: Path, tool: str, args: dict[str, Any],
                    watched: Path) -> float:
    """How long after its start an uninterrupted call changes ``watched``: random kills are
    spread around that moment, so that they land before, during and after the change."""
    before = _signature(watched)
    began = time.monotonic()
    child = start(ws, state, tool, args)
    changed = 0.0
    while not changed:
        if _signature(watched) != before or child.poll() is not None:
            changed = time.monotonic() - began
        else:
            time.sleep(0.0005)
    child.wait(timeout=60)
    for stream in (child.stdout, child.stderr):
        if stream is not None:
            stream.close()
    assert child.returncode == 0
    return changed


def _random_kills(tmp_path: Path, tool: str, args: dict[str, Any], target: str,
                  old: bytes | None, new: bytes, runs: int, setup: Any = None) -> None:
    rng = random.Random(17)
    span = 0.0
    for run in range(-1, runs):
        ws = tmp_path / f"ws-{tool}-{target}-{run}"
        state = tmp_path / f"state-{tool}-{target}-{run}"
        ws.mkdir()
        if old is not None:
            (ws / target).write_bytes(old)
        if setup is not None:
            setup(ws)
        if run < 0:
            span = _time_to_change(ws, state, tool, args, ws / target)
            continue
        child = start(ws, state, tool, args)
        time.sleep(rng.uniform(0.2, 1.2) * span)
        kill(child)
        done = call(ws, state, "write_file", {"path": "after.txt", "content": "after"})
        assert done["ok"], done
        path = ws / target
        content = path.read_bytes() if path.exists() else None
        assert content in (old, new), (run, None if content is None else len(content))
        assert debris(ws) == [], run


def test_random_kills_of_write_file(tmp_path: Path) -> None:
    big_old, big_new = b"o" * 12_000_000, b"n" * 12_000_000
    _random_kills(tmp_path, "write_file", {"path": "f.bin", "content": big_new.decode()},
                  "f.bin", big_old, big_new, runs=8)


def test_random_kills_of_edit_append_and_move(tmp_path: Path) -> None:
    old = b"".join(b"line %d\n" % n for n in range(300_000))
    new = old.replace(b"line 150000\n", b"LINE\n")
    _random_kills(tmp_path, "apply_edit", {"path": "e.txt", "old_text": "line 150000\n",
                                           "new_text": "LINE\n"}, "e.txt", old, new, runs=4)
    _random_kills(tmp_path, "write_append", {"path": "g.txt", "content": "b\n"}, "g.txt",
                  b"a\n", b"a\nb\n", runs=3)
    tail = "t" * 8_000_000  # journaled: longer than a page
    _random_kills(tmp_path, "write_append", {"path": "h.txt", "content": tail}, "h.txt",
                  b"a\n", b"a\n" + tail.encode(), runs=4)

    def moved_exists(ws: Path) -> None:
        (ws / "m.txt").write_bytes(b"m")

    _random_kills(tmp_path, "move_file", {"source": "m.txt", "destination": "moved.txt"},
                  "moved.txt", None, b"m", runs=3, setup=moved_exists)


def test_move_killed_before_its_rename(tmp_path: Path) -> None:
    ws, state = tmp_path / "ws", tmp_path / "state"
    ws.mkdir()
    (ws / "m.txt").write_text("m")
    child = start(ws, state, "move_file", {"source": "m.txt", "destination": "d/moved.txt"},
                  pause=1)
    wait_paused(child)
    kill(child)
    assert (ws / "m.txt").read_text() == "m"
    assert not (ws / "d" / "moved.txt").exists()
    done = call(ws, state, "move_file", {"source": "m.txt", "destination": "d/moved.txt"})
    assert done["ok"], done
    assert (ws / "d" / "moved.txt").read_text() == "m" and not (ws / "m.txt").exists()


def test_an_unwritable_state_directory_refuses_a_multi_file_patch(tmp_path: Path) -> None:
    ws, _ = _patch_workspace(tmp_path)
    (tmp_path / "blocker").write_text("a file where the state directory's parent should be")
    done = call(ws, tmp_path / "blocker" / "state", "apply_edit", {"patch": PATCH})
    assert not done["ok"] and done["error"]["code"] == "io_error", done
    assert _files(ws) == OLD and debris(ws) == []


# ---------------------------------------------------------------------------------------------
# Multi-file patches: all or nothing


PATCH = """*** Begin Patch
*** Update File: a.txt
@@
 alpha
-beta
+BETA
 gamma
*** Add File: new/dir/c.txt
+brand new
*** Update File: e.txt
*** Move to: moved/e2.txt
@@
-eee
+EEE
*** Delete File: d.txt
*** End Patch
"""

OLD = {"a.txt": b"alpha\nbeta\ngamma\n", "d.txt": b"ddd\n", "e.txt": b"eee\n"}
NEW = {"a.txt": b"alpha\nBETA\ngamma\n", "new/dir/c.txt": b"brand new\n",
       "moved/e2.txt": b"EEE\n"}


def _patch_workspace(root: Path) -> tuple[Path, Path]:
    ws, state = root / "ws", root / "state"
    ws.mkdir(parents=True)
    for name, data in OLD.items():
        (ws / name).write_bytes(data)
    (ws / "keep").mkdir()
    os.link(ws / "a.txt", ws / "keep" / "a-link.txt")  # a hard link the patch must not lose
    os.chmod(ws / "e.txt", 0o640)
    return ws, state


def _files(ws: Path) -> dict[str, bytes]:
    out = {}
    for folder, _, files in os.walk(ws):
        for name in files:
            path = Path(folder) / name
            rel = path.relative_to(ws).as_posix()
            if rel != "keep/a-link.txt":
                out[rel] = path.read_bytes()
    return out


def _assert_old(ws: Path, inode: int) -> None:
    assert _files(ws) == OLD
    assert (ws / "a.txt").stat().st_ino == inode
    assert (ws / "a.txt").stat().st_nlink == 2
    assert (ws / "keep" / "a-link.txt").read_bytes() == OLD["a.txt"]
    assert stat.S_IMODE((ws / "e.txt").stat().st_mode) == 0o640
    assert not (ws / "new").exists() and not (ws / "moved").exists()


@pytest.mark.parametrize("point", range(1, 7))
def test_multi_file_patch_killed_before_each_rename(tmp_path: Path, point: int) -> None:
    """Points 1-5 precede the five renames and unlinks; point 6 follows the commit."""
    ws, state = _patch_workspace(tmp_path)
    inode = (ws / "a.txt").stat().st_ino
    child = start(ws, state, "apply_edit", {"patch": PATCH}, pause=point)
    wait_paused(child)
    kill(child)
    assert (state.iterdir().__next__() / "txn").is_dir()  # the journal is left
    after = call(ws, state, "read_file", {"path": "d.txt" if point < 6 else "a.txt"})
    assert after["ok"], after
    warnings = " ".join(after.get("warnings", []))
    if point < 6:
        assert "rolled back" in warnings, after
        _assert_old(ws, inode)
    else:
        assert "had changed every file" in warnings, after
        assert _files(ws) == NEW
        assert stat.S_IMODE((ws / "moved" / "e2.txt").stat().st_mode) == 0o640
    assert debris(ws) == []
    assert not any((d / "txn").exists() for d in state.iterdir())
    if point == 6:  # the completed change is kept for undo
        undone = call(ws, state, "undo", {"path": "a.txt"})
        assert undone["ok"], undone
        assert (ws / "a.txt").read_bytes() == OLD["a.txt"]


def test_a_rollback_that_cannot_finish_is_retried(tmp_path: Path) -> None:
    ws, state = _patch_workspace(tmp_path)
    inode = (ws / "a.txt").stat().st_ino
    child = start(ws, state, "apply_edit", {"patch": PATCH}, pause=3)
    wait_paused(child)
    kill(child)
    (ws / "a.txt").unlink()
    (ws / "a.txt").mkdir()  # something in the way of putting a.txt back
    after = call(ws, state, "list_directory", {"path": "."})
    assert after["ok"], after
    assert "could not be rolled back completely" in " ".join(after["warnings"]), after
    assert any((d / "txn").exists() for d in state.iterdir())
    (ws / "a.txt").rmdir()
    after = call(ws, state, "list_directory", {"path": "."})
    assert "rolled back" in " ".join(after["warnings"]), after
    _assert_old(ws, inode)
    assert debris(ws) == []


def test_multi_file_patch_without_a_kill(tmp_path: Path) -> None:
    ws, state = _patch_workspace(tmp_path)
    done = call(ws, state, "apply_edit", {"patch": PATCH})
    assert done["ok"], done
    assert _files(ws) == NEW
    assert debris(ws) == []
    assert not any((d / "txn").exists() for d in state.iterdir())


def test_multi_file_patch_random_kills(tmp_path: Path) -> None:
    rng = random.Random(4)
    ws, state = _patch_workspace(tmp_path / "full")
    span = _time_to_change(ws, state, "apply_edit", {"patch": PATCH}, ws / "a.txt")
    for run in range(8):
        ws, state = _patch_workspace(tmp_path / f"r{run}")
        inode = (ws / "a.txt").stat().st_ino
        child = start(ws, state, "apply_edit", {"patch": PATCH})
        time.sleep(rng.uniform(0.2, 1.2) * span)
        kill(child)
        after = call(ws, state, "list_directory", {"path": "."})
        assert after["ok"], after
        files = _files(ws)
        assert files in (OLD, NEW), (run, files)
        if files == OLD:
            _assert_old(ws, inode)
        assert debris(ws) == []


def test_a_failure_part_way_restores_the_inode(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """The last step (deleting d.txt) fails after the other files changed: all roll back,
    and the hard-linked a.txt gets its own inode back, its link intact."""
    ws, state = _patch_workspace(tmp_path)
    monkeypatch.setenv("ZBTOOLS_STATE_DIR", str(state))
    inode = (ws / "a.txt").stat().st_ino
    real_unlink = os.unlink

    def failing_unlink(path: Any, *args: Any, **kwargs: Any) -> None:
        if path == "d.txt":
            raise OSError(5, "Input/output error")
        real_unlink(path, *args, **kwargs)

    monkeypatch.setattr(os, "unlink", failing_unlink)
    done = run_inprocess(["apply_edit"], stdin=json.dumps({"patch": PATCH}), workspace=ws)
    monkeypatch.setattr(os, "unlink", real_unlink)
    assert done.code != 0 and '"io_error"' in done.out, done
    _assert_old(ws, inode)
    assert debris(ws) == []
    assert not any((d / "txn").exists() for d in state.iterdir())


# ---------------------------------------------------------------------------------------------
# Permissions


def test_replacing_a_file_drops_setuid_and_setgid(tmp_path: Path) -> None:
    ws, state = tmp_path / "ws", tmp_path / "state"
    ws.mkdir()
    target = ws / "tool.sh"
    target.write_text("#!/bin/sh\n")
    os.chmod(target, 0o6755)
    if stat.S_IMODE(target.stat().st_mode) != 0o6755:
        pytest.skip("this filesystem does not keep setuid/setgid bits")
    done = call(ws, state, "write_file", {"path": "tool.sh", "content": "#!/bin/sh\necho\n"})
    assert done["ok"], done
    assert stat.S_IMODE(target.stat().st_mode) == 0o755


def test_an_earlier_versions_temp_file_is_hidden_and_removed_only_when_old(
        tmp_path: Path) -> None:
    """``.NAME.zbtmp-<12 hex>`` (the name before writers were named in it): never listed, and
    removed like another machine's once it has not changed for an hour."""
    from zbtools.core.files.tempnames import is_temp_name

    young = tmp_path / ".a.txt.zbtmp-0123456789ab"
    old = tmp_path / ".b.txt.zbtmp-ba9876543210"
    lookalike = tmp_path / ".c.txt.zbtmp-notahexname!"
    for path in (young, old, lookalike):
        path.write_text("x")
    os.utime(old, (time.time() - 3700, time.time() - 3700))
    assert is_temp_name(young.name) and is_temp_name(old.name)
    assert not is_temp_name(lookalike.name)
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        assert sweep_dead_temps(fd) == 1
    finally:
        os.close(fd)
    assert young.exists() and not old.exists() and lookalike.exists()


def test_a_long_lived_process_sweeps_one_directory_at_most_once_a_minute(
        tmp_path: Path) -> None:
    """A batch or MCP session does not list a big directory on every write; the next process
    (a new call) sweeps it anew."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    host = parse_temp_name(temp_name("x"))
    assert host is not None
    first = tmp_path / f".a.zbtmp-{child.pid}-1-{host[3]}-abcdef01"
    first.write_text("dead")
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        assert sweep_dead_temps(fd) == 1
        second = tmp_path / f".b.zbtmp-{child.pid}-1-{host[3]}-abcdef02"
        second.write_text("dead")
        assert sweep_dead_temps(fd) == 0
    finally:
        os.close(fd)
    assert second.exists()
    swept = subprocess.run(
        [sys.executable, "-c", "import os, sys; from zbtools.core.files.tempnames import "
         "sweep_dead_temps; fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY); "
         "print(sweep_dead_temps(fd))", str(tmp_path)],
        capture_output=True, text=True, check=True)
    assert swept.stdout.strip() == "1" and not second.exists()

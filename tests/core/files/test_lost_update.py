"""No lost update: a change another process makes while a tool writes is never overwritten.

The precondition (``expected_sha256``, or the content an edit read) is checked again right
before the rename that publishes the new version; a file changed in between is refused with
``stale_file`` and left exactly as the other process left it. In process, the test hook
``replacing.pause_point`` (called right before that rename) is replaced by the other process's
write; across processes, ``ZBTOOLS_TEST_PAUSE_BEFORE_RENAME`` with ``ZBTOOLS_TEST_RESUME_FILE``
holds a real zbtools process at that point while the test writes.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO, CliRunner
from tests.core.files.test_crash_safety import debris
from zbtools.contract import ToolError
from zbtools.core.files import replacing, staleness


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _meddle(monkeypatch: pytest.MonkeyPatch, action: Callable[[], object]) -> list[int]:
    """Run ``action`` (the other process's write) at the first pause point only."""
    calls = [0]

    def hook() -> None:
        calls[0] += 1
        if calls[0] == 1:
            action()

    monkeypatch.setattr(replacing, "pause_point", hook)
    from zbtools.core.editing import txn

    monkeypatch.setattr(txn, "pause_point", hook)
    return calls


EDITS: list[tuple[str, dict[str, Any]]] = [
    ("write_file", {"content": "mine\n"}),
    ("edit_file", {"old_content": "old", "new_content": "mine"}),
    ("apply_edit", {"old_text": "old", "new_text": "mine"}),
    ("insert_text", {"content": "mine\n", "position": "end"}),
]


@pytest.mark.parametrize("tool,args", EDITS, ids=[e[0] for e in EDITS])
@pytest.mark.parametrize("how", ["in_place", "replaced", "same_size"])
def test_a_change_made_during_the_write_is_never_overwritten(
        cli: CliRunner, ws: Path, monkeypatch: pytest.MonkeyPatch, tool: str,
        args: dict[str, Any], how: str) -> None:
    target = ws / "t.txt"
    target.write_bytes(b"old line\n")
    theirs = b"old line\nTHEIRS\n" if how != "same_size" else b"old LINE\n"

    def other_process() -> None:
        if how == "replaced":
            (ws / "their.tmp").write_bytes(theirs)
            os.rename(ws / "their.tmp", target)
        else:
            with open(target, "r+b") as fh:
                fh.write(theirs)

    calls = _meddle(monkeypatch, other_process)
    done = cli(tool, stdin={"path": "t.txt", "expected_sha256": _sha(b"old line\n"), **args})
    assert calls[0] >= 1
    assert done.error["code"] == "stale_file", done
    assert done.error["details"].get("changed_during_write") is True
    assert target.read_bytes() == theirs
    assert debris(ws) == []


def test_without_the_other_write_the_same_call_succeeds(cli: CliRunner, ws: Path) -> None:
    (ws / "t.txt").write_bytes(b"old line\n")
    done = cli("edit_file", stdin={"path": "t.txt", "old_content": "old",
                                   "new_content": "mine", "expected_sha256": _sha(b"old line\n")})
    assert done.result
    assert (ws / "t.txt").read_bytes() == b"mine line\n"


def test_an_edit_without_expected_sha256_is_protected_too(
        cli: CliRunner, ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An edit always knows what it read: it never overwrites a change made meanwhile."""
    target = ws / "t.txt"
    target.write_bytes(b"old line\n")
    _meddle(monkeypatch, lambda: target.write_bytes(b"old line\nTHEIRS\n"))
    done = cli("apply_edit", stdin={"path": "t.txt", "old_text": "old", "new_text": "mine"})
    assert done.error["code"] == "stale_file"
    assert target.read_bytes() == b"old line\nTHEIRS\n"


def test_the_big_file_fast_path_checks_identity_before_its_rename(
        cli: CliRunner, ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = ws / "big.txt"
    body = b"".join(b"line %d\n" % i for i in range(700_000))  # over the 4 MiB fast path
    target.write_bytes(body + b"the unique needle\n")
    _meddle(monkeypatch, lambda: target.write_bytes(body + b"THEIRS\n"))
    done = cli("apply_edit", stdin={"path": "big.txt", "old_text": "the unique needle",
                                    "new_text": "mine"})
    assert done.error["code"] == "stale_file"
    assert target.read_bytes().endswith(b"THEIRS\n")
    assert debris(ws) == []


def test_a_multi_file_patch_refuses_a_file_changed_before_its_rename(
        cli: CliRunner, ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (ws / "a.txt").write_bytes(b"alpha\n")
    (ws / "b.txt").write_bytes(b"beta\n")
    calls = [0]

    def hook() -> None:  # the second rename: a.txt is already replaced, b.txt not yet
        calls[0] += 1
        if calls[0] == 2:
            with open(ws / "b.txt", "r+b") as fh:
                fh.write(b"BETA\n")

    from zbtools.core.editing import txn

    monkeypatch.setattr(txn, "pause_point", hook)
    patch = ("*** Begin Patch\n*** Update File: a.txt\n-alpha\n+ALPHA mine\n"
             "*** Update File: b.txt\n-beta\n+beta mine\n*** End Patch\n")
    done = cli("apply_edit", stdin={"patch": patch})
    assert done.error["code"] == "stale_file", done
    assert (ws / "a.txt").read_bytes() == b"alpha\n"  # rolled back
    assert (ws / "b.txt").read_bytes() == b"BETA\n"  # the other process's change, kept
    assert debris(ws) == []


def test_same_timestamps_are_not_trusted_for_a_recent_change(tmp_path: Path) -> None:
    """A change within a timestamp tick can leave size and times as they were: a recently
    changed file is hashed again."""
    path = tmp_path / "f"
    path.write_bytes(b"theirs")
    seen = os.stat(path)
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        staleness.check_unchanged(fd, "f", seen, "f", expected=b"theirs")  # unchanged: fine
        with pytest.raises(ToolError) as caught:
            staleness.check_unchanged(fd, "f", seen, "f", expected=b"mine!!")
        assert caught.value.code == "stale_file"
        with pytest.raises(ToolError):
            staleness.check_unchanged(fd, "f", seen, "f", expected_sha256=_sha(b"mine!!"))
    finally:
        os.close(fd)


def test_a_big_recent_file_is_read_again_unless_its_ctime_moves_on_every_change(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """From FINE_CTIME_MIN_BYTES, a file system whose ctime moves on every change after a
    stat (Linux's multigrain timestamps) is trusted by its identity; any other is read
    again, and a change that left size and times as they were is refused."""
    path = tmp_path / "f"
    theirs = b"t" * staleness.FINE_CTIME_MIN_BYTES
    path.write_bytes(theirs)
    seen = os.stat(path)
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    reads: list[int] = []
    compare = staleness.holds_exactly

    def counted(fd: int, expected: bytes) -> bool:
        reads.append(len(expected))
        return compare(fd, expected)

    monkeypatch.setattr(staleness, "holds_exactly", counted)
    try:
        monkeypatch.setattr(staleness, "ctime_moves_on_every_change", lambda dev: False)
        with pytest.raises(ToolError) as caught:
            staleness.check_unchanged(fd, "f", seen, "f", expected=b"m" * len(theirs))
        assert caught.value.code == "stale_file" and reads == [len(theirs)]
        monkeypatch.setattr(staleness, "ctime_moves_on_every_change", lambda dev: True)
        staleness.check_unchanged(fd, "f", seen, "f", expected=b"m" * len(theirs))
        assert reads == [len(theirs)]  # not read again: its identity vouches for it
        small = tmp_path / "s"
        small.write_bytes(b"theirs")
        with pytest.raises(ToolError):  # below the size, read again all the same
            staleness.check_unchanged(fd, "s", os.stat(small), "s", expected=b"mine!!")
    finally:
        os.close(fd)


def test_where_ctime_is_trusted_every_change_after_a_stat_moves_it(tmp_path: Path) -> None:
    """The premise of trusting identity, checked on this machine's temp file system when it
    claims it: a stat, then a change of the same size within microseconds, always gives a
    new ctime (without multigrain timestamps, most of these would share the clock tick)."""
    path = tmp_path / "f"
    path.write_bytes(b"a" * 64)
    if not staleness.ctime_moves_on_every_change(os.stat(path).st_dev):
        assert not staleness._kernel_moves_ctime() or \
            staleness.mount_types().get(os.stat(path).st_dev) not in staleness.FINE_CTIME_FS
        return
    fd = os.open(path, os.O_WRONLY)
    try:
        for i in range(500):
            before = os.fstat(fd).st_ctime_ns
            os.pwrite(fd, bytes([97 + i % 26]), i % 64)
            assert os.fstat(fd).st_ctime_ns != before, i
    finally:
        os.close(fd)


def test_the_kernel_and_file_system_decide_whether_ctime_is_trusted(
        monkeypatch: pytest.MonkeyPatch) -> None:
    class Uname:
        def __init__(self, release: str) -> None:
            self.release = release

    for release, moves in (("6.13.0", True), ("6.18.44-fc-v595", True), ("7.0.1", True),
                           ("6.12.9-arch1", False), ("5.15.0-91-generic", False),
                           ("6.6.0", False), ("garbage", False), ("6", False)):
        monkeypatch.setattr(os, "uname", lambda release=release: Uname(release))
        monkeypatch.setattr(sys, "platform", "linux")
        assert staleness._kernel_moves_ctime() is moves, release
    monkeypatch.setattr(sys, "platform", "darwin")
    assert staleness._kernel_moves_ctime() is False
    monkeypatch.undo()
    proc_dev = os.stat("/proc").st_dev if os.path.isdir("/proc/self") else None
    if proc_dev is not None:
        assert staleness.mount_types()[proc_dev] == "proc"
        monkeypatch.setattr(staleness, "_fine_ctime", {})
        assert staleness.ctime_moves_on_every_change(proc_dev) is False
    assert os.makedev(4095, 1048575) not in staleness.mount_types()  # no such device


def test_a_real_process_held_before_its_rename_refuses(tmp_path: Path) -> None:
    ws, state = tmp_path / "ws", tmp_path / "state"
    ws.mkdir()
    target = ws / "t.txt"
    target.write_bytes(b"old\n")
    resume = tmp_path / "resume"
    env = {k: v for k, v in os.environ.items() if not k.startswith("ZBTOOLS_")}
    env.update(PYTHONPATH=str(REPO), ZBTOOLS_WORKSPACE=str(ws), ZBTOOLS_STATE_DIR=str(state),
               ZBTOOLS_TEST_PAUSE_BEFORE_RENAME="1", ZBTOOLS_TEST_RESUME_FILE=str(resume))
    child = subprocess.Popen([sys.executable, "-m", "zbtools", "write_file"], cwd=ws, env=env,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
    assert child.stdin is not None and child.stderr is not None
    child.stdin.write(json.dumps({"path": "t.txt", "content": "mine\n",
                                  "expected_sha256": _sha(b"old\n")}).encode())
    child.stdin.close()
    try:
        line = child.stderr.readline().decode()
        assert line.startswith("zbtools-test-paused"), line
        target.write_bytes(b"old\nTHEIRS\n")  # the other process
        resume.touch()
        assert child.stdout is not None
        out = child.stdout.read()
        child.wait(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    envelope = json.loads(out)
    assert envelope["ok"] is False and envelope["error"]["code"] == "stale_file", envelope
    assert child.returncode == 1
    assert target.read_bytes() == b"old\nTHEIRS\n"
    assert debris(ws) == []

"""Invariant 4: undo restores bytes, mode and links.

Each example builds a fresh workspace of files with different permission bits (0o600, 0o755,
0o640, 0o644), a file with a second hard link inside the workspace, and symlinks to a file and to
a directory; then runs a generated sequence of changes that ``undo`` knows (``write_file``,
``write_append``, ``apply_edit``, ``edit_file``, ``insert_text``, and patches that update, add,
delete and rename files, one file or several), on paths that include the links. Then it undoes
them one at a time, newest first. After the undo steps of a call (a patch of several files is
one step per file), the tree must equal the one before that call: every entry's type, permission
bits and bytes or link text, and which names share an inode. Where undo documents a limit (a
hard link whose other names no longer hold the old content), it must say so in its warnings
rather than claim a full restore; no other difference is allowed.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import Phase, given
from hypothesis import strategies as st

from tests.conftest import Call, run_inprocess
from tests.invariants.budget import invariant, planted_bug_is_caught

pytestmark = pytest.mark.slow  # searches of generated inputs: the fast loop leaves them out

# The planted-bug checks: no shrinking (the failure itself is the answer), no example database
# (a stored failure would replay in the real search).
QUICK: dict[str, Any] = {"phases": (Phase.generate,), "database": None}

PATHS = ["a.txt", "run.sh", "c.txt", "sub/twin.txt", "link.txt", "sub/d.txt", "dirlink/d.txt",
         "dirlink/twin.txt", "new.txt", "sub/new.txt", "newdir/x.txt"]
OLD = ["alpha", "beta", "one", "two", "delta", "echo hi"]
NEW = ["gamma", "X", "one", "beta", ""]


Tree = tuple[dict[str, tuple[str, int, bytes]], list[list[str]]]


def tree(root: Path) -> Tree:
    """What undo must restore: every entry (type, permission bits, bytes or link text), and
    the groups of names that share an inode."""
    entries: dict[str, tuple[str, int, bytes]] = {}
    inodes: dict[tuple[int, int], list[str]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, root)
            st_ = os.lstat(path)
            mode = stat.S_IMODE(st_.st_mode)
            if stat.S_ISLNK(st_.st_mode):
                entries[rel] = ("link", 0, os.readlink(path).encode())
            elif stat.S_ISDIR(st_.st_mode):
                entries[rel] = ("dir", mode, b"")
            else:
                entries[rel] = ("file", mode, Path(path).read_bytes())
                inodes.setdefault((st_.st_dev, st_.st_ino), []).append(rel)
    return entries, sorted(sorted(names) for names in inodes.values() if len(names) > 1)


def build(ws: Path) -> None:
    (ws / "sub").mkdir(parents=True)
    for name, data, mode in [("a.txt", "alpha\nbeta\n", 0o600),
                             ("run.sh", "#!/bin/sh\necho hi\n", 0o755),
                             ("c.txt", "one\ntwo\n", 0o644),
                             ("sub/d.txt", "delta\n", 0o640)]:
        (ws / name).write_text(data)
        os.chmod(ws / name, mode)
    os.link(ws / "c.txt", ws / "sub" / "twin.txt")
    os.symlink("a.txt", ws / "link.txt")
    os.symlink("sub", ws / "dirlink")


paths = st.sampled_from(PATHS)


def section(draw: st.DrawFn, path: str) -> str:
    kind = draw(st.sampled_from(["update", "add", "delete", "delete", "move", "move"]))
    if kind == "add":
        return f"*** Add File: {path}\n+{draw(st.sampled_from(NEW))}\n"
    if kind == "delete":
        return f"*** Delete File: {path}\n"
    body = f"*** Update File: {path}\n"
    if kind == "move":
        body += f"*** Move to: {draw(paths)}\n"
    return body + f"@@\n-{draw(st.sampled_from(OLD))}\n+{draw(st.sampled_from(NEW))}\n"


@st.composite
def changes(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    # patches (deletes and renames: what takes a name from its inode) weigh the most
    tool = draw(st.sampled_from(["write_file", "write_append", "apply_edit", "edit_file",
                                 "insert_text", "patch", "patch", "patch", "patch"]))
    path = draw(paths)
    new = draw(st.sampled_from(NEW))
    if tool == "write_file":
        return tool, {"path": path, "content": new + "\n"}
    if tool == "write_append":
        return tool, {"path": path, "content": new + "\n"}
    if tool == "apply_edit":
        return tool, {"path": path, "old_text": draw(st.sampled_from(OLD)), "new_text": new}
    if tool == "edit_file":
        return tool, {"path": path, "old_content": draw(st.sampled_from(OLD)),
                      "new_content": new}
    if tool == "insert_text":
        return tool, {"path": path, "content": new + "\n",
                      "position": draw(st.sampled_from(["start", "end"]))}
    files = draw(st.lists(paths, min_size=1, max_size=draw(st.sampled_from([1, 1, 3])),
                          unique=True))
    return "apply_edit", {"patch": "*** Begin Patch\n" + "".join(section(draw, p) for p in files)
                          + "*** End Patch\n"}


def journal_size(state: Path) -> int:
    found = list(state.glob("**/undo/journal.jsonl"))
    if not found:
        return 0
    return sum(1 for line in found[0].read_text().splitlines() if line.strip())


def call(ws: Path, state: Path, tool: str, args: dict[str, Any]) -> Call:
    return run_inprocess([tool], stdin=json.dumps(args), workspace=ws,
                         env={"ZBTOOLS_STATE_DIR": str(state)})


def run_sequence(tmp: Path, plan: list[tuple[str, dict[str, Any]]]) -> None:
    base = Path(tempfile.mkdtemp(dir=tmp))
    try:
        ws, state = base / "ws", base / "state"
        build(ws)
        steps: list[tuple[Tree, int, tuple[str, dict[str, Any]]]] = []
        for tool, args in plan:
            before, entries = tree(ws), journal_size(state)
            done = call(ws, state, tool, args)
            assert done.code in (0, 1, 2, 3), done
            if not done.json["ok"]:
                assert tree(ws) == before, (tool, args, done)  # a failure changes nothing
            steps.append((before, journal_size(state) - entries, (tool, args)))
        for before, count, change in reversed(steps):
            warned: list[str] = []
            for _ in range(count):
                undone = call(ws, state, "undo", {})
                assert undone.code == 0, (change, undone)
                warned += undone.json["warnings"]
            now = tree(ws)
            if any("hard links" in w for w in warned):  # the documented limit, reported
                assert now[0] == before[0], (change, warned)
            else:
                assert now == before, (change, warned)
        assert call(ws, state, "undo", {}).error["code"] == "not_found"
    finally:
        shutil.rmtree(base, ignore_errors=True)


def search(tmp: Path, examples: int, **overrides: Any) -> None:
    @invariant(examples=examples, **overrides)
    @given(plan=st.lists(changes(), min_size=1, max_size=6))
    def undo_restores(plan: list[tuple[str, dict[str, Any]]]) -> None:
        run_sequence(tmp, plan)

    undo_restores()


def test_undo_restores_bytes_mode_and_links(tmp_path: Path) -> None:
    search(tmp_path, examples=80)


@pytest.mark.parametrize("plan", [
    [("apply_edit", {"patch": "*** Begin Patch\n*** Delete File: c.txt\n*** End Patch\n"})],
    [("apply_edit", {"patch": "*** Begin Patch\n*** Update File: c.txt\n@@\n-one\n+X\n"
                              "*** Update File: a.txt\n@@\n-alpha\n+X\n*** End Patch\n"})],
    [("apply_edit", {"patch": "*** Begin Patch\n*** Update File: sub/twin.txt\n*** Move to: "
                              "moved.txt\n@@\n-two\n+X\n*** End Patch\n"})],
    [("apply_edit", {"patch": "*** Begin Patch\n*** Delete File: run.sh\n*** End Patch\n"})],
])
def test_the_cases_that_broke_it_stay_fixed(tmp_path: Path,
                                             plan: list[tuple[str, dict[str, Any]]]) -> None:
    run_sequence(tmp_path, plan)


def test_undo_gives_a_deleted_hard_link_its_inode_back_in_a_real_process(
        tmp_path: Path, proc: Any, ws: Path) -> None:
    build(ws)
    before = tree(ws)
    patch = "*** Begin Patch\n*** Delete File: c.txt\n*** End Patch\n"
    assert proc("apply_edit", "--args", json.dumps({"patch": patch})).code == 0
    assert (ws / "sub" / "twin.txt").stat().st_nlink == 1
    undone = proc("undo")
    assert undone.code == 0, undone
    assert undone.json["warnings"] == []
    assert tree(ws) == before


def test_the_search_catches_a_planted_bug(tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from zbtools.core.files.replacing import create_file

    def modeless(*args: Any, **kwargs: Any) -> Any:
        kwargs["mode"] = None  # the bug: undo recreates a deleted file with default bits
        return create_file(*args, **kwargs)

    monkeypatch.setattr("zbtools.tools.undo.create_file", modeless)
    failure = planted_bug_is_caught(lambda: search(tmp_path, examples=80, **QUICK))
    assert isinstance(failure, AssertionError), failure

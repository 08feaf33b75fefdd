"""Hard links: every tool that replaces a file keeps its inode when all its names are inside
the workspace (writing in place after a durable backup, journaled), and breaks the link with a
``hardlink_broken`` warning otherwise (a name outside must never be written through).
A call killed during an in-place write is finished by the next call: the file is wholly old
or wholly new, in its own inode, and no backup or journal is left."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CliRunner
from tests.core.files.test_crash_safety import call, debris, kill, start, wait_paused

PATCH = "*** Begin Patch\n*** Update File: a.txt\n@@\n-beta\n+BETA\n*** End Patch\n"
EDITS: list[tuple[list[str], dict[str, Any]]] = [
    (["edit_file"], {"path": "a.txt", "old_content": "beta", "new_content": "BETA"}),
    (["apply_edit"], {"path": "a.txt", "old_text": "beta", "new_text": "BETA"}),
    (["apply_edit"], {"patch": PATCH}),
    (["insert_text"], {"path": "a.txt", "content": "BETA\n", "insert_line": 2}),
    (["--dialect", "codex", "apply_patch"], {"input": PATCH}),
    (["--dialect", "claude", "Edit"], {"file_path": "a.txt", "old_string": "beta",
                                       "new_string": "BETA"}),
    (["--dialect", "fiz", "patch"], {"path": "a.txt", "search": "beta", "content": "BETA"}),
    (["write_file"], {"path": "a.txt", "content": "alpha\nBETA\n"}),
]


@pytest.mark.parametrize("argv,args", EDITS, ids=[" ".join(e[0]) for e in EDITS])
def test_edits_keep_a_hard_link_inside_the_workspace(ws: Path, cli: CliRunner, argv: list[str],
                                                    args: dict[str, Any]) -> None:
    (ws / "a.txt").write_bytes(b"alpha\nbeta\n")
    (ws / "sub").mkdir()
    os.link(ws / "a.txt", ws / "sub" / "twin.txt")
    inode = (ws / "a.txt").stat().st_ino
    done = cli(*argv, stdin=args)
    assert done.code == 0, done
    assert b"BETA" in (ws / "a.txt").read_bytes()
    assert (ws / "sub" / "twin.txt").read_bytes() == (ws / "a.txt").read_bytes()
    assert (ws / "a.txt").stat().st_ino == inode
    assert done.json["warnings"] == []
    assert debris(ws) == []


@pytest.mark.parametrize("argv,args", EDITS[:3], ids=[" ".join(e[0]) for e in EDITS[:3]])
def test_edits_break_a_link_to_outside_and_say_so(ws: Path, cli: CliRunner, argv: list[str],
                                                 args: dict[str, Any]) -> None:
    (ws / "a.txt").write_bytes(b"alpha\nbeta\n")
    outside = ws.parent / "outside" / "twin.txt"
    os.link(ws / "a.txt", outside)
    done = cli(*argv, stdin=args)
    assert done.code == 0, done
    assert outside.read_bytes() == b"alpha\nbeta\n"
    assert (ws / "a.txt").read_bytes() == b"alpha\nBETA\n"
    assert any("hardlink_broken" in w for w in done.json["warnings"]), done
    # undone: the bytes come back in a file of its own (never written through the name
    # outside), and a warning says so
    undone = cli("undo", stdin={"path": "a.txt"})
    assert (ws / "a.txt").read_bytes() == b"alpha\nbeta\n"
    assert (ws / "a.txt").stat().st_ino != outside.stat().st_ino
    assert any("outside the workspace" in w for w in undone.json["warnings"]), undone


def test_undo_of_an_in_place_edit_keeps_the_link(ws: Path, cli: CliRunner) -> None:
    (ws / "a.txt").write_bytes(b"alpha\nbeta\n")
    os.link(ws / "a.txt", ws / "b.txt")
    assert cli("edit_file", stdin=EDITS[0][1]).code == 0
    assert cli("undo", stdin={"path": "a.txt"}).code == 0
    assert (ws / "b.txt").read_bytes() == b"alpha\nbeta\n"
    assert (ws / "a.txt").stat().st_nlink == 2


def test_a_change_during_an_in_place_write_is_refused(ws: Path, cli: CliRunner,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from zbtools.core.editing import txn

    (ws / "a.txt").write_bytes(b"alpha\nbeta\n")
    os.link(ws / "a.txt", ws / "b.txt")
    calls = [0]

    def other_process() -> None:
        calls[0] += 1
        if calls[0] == 1:
            with open(ws / "b.txt", "r+b") as fh:
                fh.write(b"ALPHA")

    monkeypatch.setattr(txn, "pause_point", other_process)
    done = cli("edit_file", stdin=EDITS[0][1])
    assert done.error["code"] == "stale_file"
    assert (ws / "a.txt").read_bytes() == b"ALPHA\nbeta\n"
    assert debris(ws) == []


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.mark.parametrize("point,torn", [(1, False), (1, True), (2, False)],
                         ids=["before-the-write", "half-written", "after-the-write"])
def test_an_in_place_write_killed_part_way_is_finished_by_the_next_call(
        tmp_path: Path, point: int, torn: bool) -> None:
    ws, state = tmp_path / "ws", tmp_path / "state"
    ws.mkdir()
    old, new = b"alpha\nbeta\n" * 100, b"alpha\nBETA\n" * 100
    (ws / "a.txt").write_bytes(old)
    os.link(ws / "a.txt", ws / "b.txt")
    inode = (ws / "a.txt").stat().st_ino
    child = start(ws, state, "write_file", {"path": "a.txt", "content": new.decode()},
                  pause=point)
    wait_paused(child)
    assert len(debris(ws)) == 1  # the durable backup of the old content
    kill(child)
    if torn:  # what a kill in the middle of the write leaves: part new, part old
        with open(ws / "a.txt", "r+b") as fh:
            fh.write(new[:500])
    done = call(ws, state, "list_directory", {"path": "."})
    assert done["ok"], done
    assert any("in place" in w for w in done["warnings"]), done
    expected = new if point == 2 else old
    assert (ws / "a.txt").read_bytes() == expected
    assert (ws / "b.txt").read_bytes() == expected
    assert (ws / "a.txt").stat().st_ino == inode
    assert debris(ws) == []
    assert not (state.exists() and any(state.rglob("*.json")) and
                any(p.parent.name == "txn" for p in state.rglob("*.json")))

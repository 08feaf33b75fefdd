"""Adversarial review of staged edits in ``zbtools batch`` (``staging.SyncGroup`` staging).

Every test goes through the real entry point (``cli("batch", ...)`` in process, or a real
``python -m zbtools batch``) and checks the product's promises: a result that says ok
describes a change that is on disk exactly as reported, a failure is a JSON error with a
stable code, nothing acknowledged is silently overwritten, nothing is written where it should
not be, and the undo journal matches what landed.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CliRunner
from tests.core.files.test_crash_safety import debris
from tests.surfaces.test_batch import jsonl, lines


def _one_group(monkeypatch: Any) -> None:
    import zbtools.surfaces.batch as batch_module

    monkeypatch.setattr(batch_module, "GROUP_MAX_SECONDS", 600.0)


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _edit(i: Any, path: str, old: str, new: str, **extra: Any) -> dict[str, Any]:
    return {"id": i, "tool": "apply_edit", "args": {"path": path, "old_text": old,
                                                    "new_text": new, **extra}}


def _meddle_after_stage(monkeypatch: Any, nth: int, action: Any) -> list[int]:
    """Run ``action`` right after the ``nth`` call of ``SyncGroup.stage`` (1-based)."""
    from zbtools.core.files import staging

    real = staging.SyncGroup.stage
    count: list[int] = []

    def stage(self: staging.SyncGroup, *args: Any) -> Any:
        outcome = real(self, *args)
        count.append(1)
        if len(count) == nth:
            action()
        return outcome

    monkeypatch.setattr(staging.SyncGroup, "stage", stage)
    return count


def _undo_entries(ws: Path) -> list[dict[str, Any]]:
    """The undo journal's records, oldest first."""
    state = ws.parent / "state"
    found = list(state.rglob("journal.jsonl"))
    if not found:
        return []
    return [json.loads(line) for line in found[0].read_text().splitlines() if line.strip()]


# ---------------------------------------------------------------------------------------------
# Every later call sees the edits; results in request order


def test_every_tool_after_staged_edits_sees_them(ws: Path, cli: CliRunner,
                                                 monkeypatch: Any) -> None:
    _one_group(monkeypatch)
    (ws / "a.txt").write_text("alpha\nbeta\ngamma\n")
    (ws / "sub").mkdir()
    reqs = [
        _edit(1, "a.txt", "alpha", "ALPHA"),
        {"id": 2, "tool": "read_file", "args": {"path": "a.txt"}},
        _edit(3, "a.txt", "beta", "BETA"),
        {"id": 4, "tool": "grep_search", "args": {"pattern": "BETA"}},
        _edit(5, "a.txt", "gamma", "GAMMA"),
        {"id": 6, "tool": "get_file_info", "args": {"path": "a.txt"}},
        _edit(7, "a.txt", "GAMMA", "G"),
        {"id": 8, "tool": "run_command", "args": {"command": "cat a.txt"}},
        _edit(9, "a.txt", "G\n", "G2\n"),
        {"id": 10, "tool": "copy_file", "args": {"source": "a.txt",
                                                  "destination": "sub/copy.txt"}},
        _edit(11, "a.txt", "ALPHA", "A"),
        {"id": 12, "tool": "write_append", "args": {"path": "a.txt", "content": "tail\n"}},
        _edit(13, "a.txt", "tail", "TAIL"),
        {"id": 14, "tool": "list_directory", "args": {"path": "."}},
        _edit(15, "a.txt", "TAIL", "T"),
        {"id": 16, "tool": "find_files_glob", "args": {"pattern": "*.txt"}},
        _edit(17, "a.txt", "BETA", "B"),
        {"id": 18, "tool": "move_file", "args": {"source": "a.txt", "destination": "b.txt"}},
        _edit(19, "b.txt", "B\n", "BB\n"),
        {"id": 20, "tool": "undo", "args": {}},
        _edit(21, "b.txt", "A\n", "AA\n"),
        {"id": 22, "tool": "undo", "args": {"path": "b.txt"}},
        _edit(23, "b.txt", "A\n", "A3\n"),
        {"id": 24, "tool": "write_file", "args": {"path": "b.txt", "content": "fresh\n",
                                                  "overwrite": True}},
        _edit(25, "b.txt", "fresh", "FRESH"),
        {"id": 26, "tool": "delete_file", "args": {"path": "b.txt"}},
        {"id": 27, "tool": "read_file", "args": {"path": "sub/copy.txt"}},
    ]
    out = lines(cli("batch", stdin=jsonl(*reqs)).out)
    assert [o["id"] for o in out] == list(range(1, 28))
    assert all(o["ok"] for o in out), [o for o in out if not o["ok"]]
    assert out[1]["result"]["content"] == "ALPHA\nbeta\ngamma\n"
    assert out[3]["result"]["total_matches"] == 1 or "a.txt" in json.dumps(out[3]["result"])
    assert out[5]["result"]["size"] == len("ALPHA\nBETA\nGAMMA\n")
    assert out[7]["result"]["stdout"] == "ALPHA\nBETA\nG\n"
    assert out[26]["result"]["content"] == "ALPHA\nBETA\nG2\n"
    # undo (no path) undid edit 19, undo of b.txt undid edit 21
    assert out[19]["result"]["path"] == "b.txt"
    assert not (ws / "b.txt").exists() and not (ws / "a.txt").exists()
    assert debris(ws) == []


def test_every_call_reads_the_staged_version_through_several_tools(
        ws: Path, cli: CliRunner, monkeypatch: Any) -> None:
    """apply_edit, edit_file, insert_text, replace_all, several edits in one call, dry runs,
    expected_sha256 of the staged version: one write, every result as on disk."""
    _one_group(monkeypatch)
    f = ws / "a.txt"
    f.write_text("x = 1\ny = 2\nz = 3\nx = 1\n")
    v1 = b"X = 1\ny = 2\nz = 3\nX = 1\n"
    out = lines(cli("batch", stdin=jsonl(
        _edit(1, "a.txt", "x = 1", "X = 1", replace_all=True),
        {"id": 2, "tool": "edit_file", "args": {"path": "a.txt", "old_content": "y = 2",
                                                "new_content": "Y = 2"}},
        {"id": 3, "tool": "insert_text", "args": {"path": "a.txt", "insert_line": 0,
                                                  "content": "# head\n"}},
        {"id": 4, "tool": "apply_edit", "args": {"path": "a.txt", "patches": [
            {"old_text": "z = 3", "new_text": "Z = 3"},
            {"old_text": "# head", "new_text": "# HEAD"}]}},
        _edit(5, "a.txt", "Z = 3", "zz", dry_run=True),
        _edit(6, "a.txt", "Y = 2", "Y = 22",
              expected_sha256=_sha(b"# HEAD\nX = 1\nY = 2\nZ = 3\nX = 1\n")),
        _edit(7, "a.txt", "Y = 22", "nope", expected_sha256=_sha(v1)),
        _edit(8, "a.txt", "Y = 22", "Y = 22"),
    )).out)
    assert [o["ok"] for o in out] == [True] * 6 + [False, False], out
    assert out[6]["error"]["code"] == "stale_file"
    assert out[7]["error"]["code"] == "no_change"
    final = b"# HEAD\nX = 1\nY = 22\nZ = 3\nX = 1\n"
    assert f.read_bytes() == final
    assert out[5]["result"]["sha256"] == _sha(final)
    assert out[4]["result"]["dry_run"] and "+zz" in out[4]["result"]["diff"]
    assert debris(ws) == []


# ---------------------------------------------------------------------------------------------
# The file changes under the group


def test_a_file_deleted_meanwhile_is_not_brought_back(ws: Path, cli: CliRunner,
                                                      monkeypatch: Any) -> None:
    """Someone deletes the file after its edit was staged: the group must not recreate it
    (the doc: a file is written only if it is still exactly as the group's first edit read
    it) and the edit must not be reported ok."""
    _one_group(monkeypatch)
    f = ws / "a.txt"
    f.write_text("one\n")
    _meddle_after_stage(monkeypatch, 1, f.unlink)
    out = lines(cli("batch", stdin=jsonl(_edit(1, "a.txt", "one", "ONE"),
                                         _edit(2, "a.txt", "ONE", "1"))).out)
    assert [o["ok"] for o in out] == [False, False], out
    assert {o["error"]["code"] for o in out} == {"stale_file"}
    assert not f.exists()
    assert debris(ws) == []
    assert _undo_entries(ws) == []


def test_a_file_renamed_meanwhile_is_not_recreated_under_its_old_name(
        ws: Path, cli: CliRunner, monkeypatch: Any) -> None:
    _one_group(monkeypatch)
    f = ws / "a.sh"
    f.write_text("echo one\n")
    f.chmod(0o755)
    _meddle_after_stage(monkeypatch, 1, lambda: f.rename(ws / "b.sh"))
    out = lines(cli("batch", stdin=jsonl(_edit(1, "a.sh", "one", "ONE"))).out)
    assert out[0]["ok"] is False and out[0]["error"]["code"] == "stale_file", out
    assert not f.exists()
    assert (ws / "b.sh").read_text() == "echo one\n"
    assert debris(ws) == []


@pytest.mark.parametrize("change", ["symlink", "directory", "readonly", "replaced"])
def test_a_file_changed_in_kind_meanwhile_fails_every_call_on_it(
        ws: Path, cli: CliRunner, monkeypatch: Any, change: str) -> None:
    _one_group(monkeypatch)
    f = ws / "a.txt"
    f.write_text("one\ntwo\n")
    (ws / "other.txt").write_text("other\n")
    (ws / "c.txt").write_text("c\n")

    def meddle() -> None:
        if change == "symlink":
            f.unlink()
            f.symlink_to("other.txt")
        elif change == "directory":
            f.unlink()
            f.mkdir()
        elif change == "readonly":
            f.chmod(0o444)
        else:
            tmp = ws / "new.tmp"
            tmp.write_text("one\ntwo\n")  # same content, another inode
            tmp.rename(f)

    _meddle_after_stage(monkeypatch, 2, meddle)
    out = lines(cli("batch", stdin=jsonl(
        _edit(1, "a.txt", "one", "ONE"),
        _edit(2, "a.txt", "two", "TWO"),
        _edit(3, "c.txt", "c", "C"))).out)
    assert [o["id"] for o in out] == [1, 2, 3]
    assert (ws / "c.txt").read_text() == "C\n"
    assert out[2]["ok"]
    if change == "replaced":  # same bytes: writing the group's version loses nothing
        ok = [o["ok"] for o in out]
        if ok[0]:
            assert f.read_text() == "ONE\nTWO\n"
        else:
            assert f.read_text() == "one\ntwo\n"
        return
    assert [o["ok"] for o in out[:2]] == [False, False], out
    codes = {o["error"]["code"] for o in out[:2]}
    assert len(codes) == 1 and codes <= {"stale_file", "path_changed", "is_directory",
                                         "permission_denied"}
    assert (ws / "other.txt").read_text() == "other\n"
    if change == "readonly":
        assert f.read_text() == "one\ntwo\n"
    assert debris(ws) == []
    # undo finds nothing of a.txt to undo, and c.txt's edit is the newest change
    undo = lines(cli("batch", stdin=jsonl({"id": 1, "tool": "undo", "args": {}})).out)[0]
    assert undo["ok"] and undo["result"]["path"] == "c.txt"


def test_a_hard_link_made_meanwhile_is_not_silently_broken(
        ws: Path, cli: CliRunner, monkeypatch: Any) -> None:
    """A lone edit of a file with two links inside the workspace keeps the inode (both names
    see the change); the group must not replace it by a new file without a word."""
    _one_group(monkeypatch)
    f = ws / "a.txt"
    f.write_text("one\ntwo\n")
    _meddle_after_stage(monkeypatch, 1, lambda: os.link(f, ws / "b.txt"))
    out = lines(cli("batch", stdin=jsonl(_edit(1, "a.txt", "one", "ONE"),
                                         _edit(2, "a.txt", "two", "TWO"))).out)
    # (it was replaced by a new inode without a word: b.txt kept the old content while both
    # edits were reported done)
    assert [o["ok"] for o in out] == [False, False], out
    assert {o["error"]["code"] for o in out} == {"stale_file"}
    assert f.read_text() == "one\ntwo\n" == (ws / "b.txt").read_text()
    assert os.stat(f).st_ino == os.stat(ws / "b.txt").st_ino
    assert debris(ws) == []
    # edited again, it is changed in place: both names see it
    again = lines(cli("batch", stdin=jsonl(_edit(1, "a.txt", "one", "ONE"))).out)
    assert again[0]["ok"] and (ws / "b.txt").read_text() == "ONE\ntwo\n"


# ---------------------------------------------------------------------------------------------
# Edits that cancel each other, no-ops


def test_edits_that_cancel_each_other_write_nothing_and_undo_stays_consistent(
        ws: Path, cli: CliRunner, monkeypatch: Any) -> None:
    _one_group(monkeypatch)
    f = ws / "a.txt"
    f.write_text("one\n")
    ino = os.stat(f).st_ino
    out = lines(cli("batch", stdin=jsonl(_edit(1, "a.txt", "one", "two"),
                                         _edit(2, "a.txt", "two", "one"))).out)
    assert [o["ok"] for o in out] == [True, True]
    assert f.read_text() == "one\n" and os.stat(f).st_ino == ino
    assert out[1]["result"]["sha256"] == _sha(b"one\n")
    # undo steps back through both, each as reported
    first = cli("undo", stdin={"path": "a.txt"})
    assert first.result["remaining"] == 1 and f.read_text() == "two\n"
    cli("undo", stdin={"path": "a.txt"}).result
    assert f.read_text() == "one\n"


def test_edits_that_cancel_each_other_stand_only_if_the_file_is_still_theirs(
        ws: Path, cli: CliRunner, monkeypatch: Any) -> None:
    """A->B then B->A writes nothing, but someone who changed the file meanwhile makes both
    results stale: they were made on a version that is gone."""
    _one_group(monkeypatch)
    f = ws / "a.txt"
    f.write_text("one\n")
    _meddle_after_stage(monkeypatch, 2, lambda: f.write_text("theirs\n"))
    out = lines(cli("batch", stdin=jsonl(_edit(1, "a.txt", "one", "two"),
                                         _edit(2, "a.txt", "two", "one"))).out)
    assert [o["ok"] for o in out] == [False, False]
    assert {o["error"]["code"] for o in out} == {"stale_file"}
    assert f.read_text() == "theirs\n"


# ---------------------------------------------------------------------------------------------
# Undo order across staged and unstaged files


def test_undo_without_path_undoes_the_newest_change_first(ws: Path, cli: CliRunner,
                                                          monkeypatch: Any) -> None:
    _one_group(monkeypatch)
    (ws / "a.txt").write_text("a0\n")
    (ws / "b.txt").write_text("b0\n")
    big = "".join(f"line {i:07d}\n" for i in range(110_000))  # 1.4 MB: never staged
    (ws / "c.txt").write_text(big)
    out = lines(cli("batch", stdin=jsonl(
        _edit(1, "a.txt", "a0", "a1"),
        _edit(2, "c.txt", "line 0000005\n", "line five\n"),
        _edit(3, "b.txt", "b0", "b1"),
        _edit(4, "a.txt", "a1", "a2"),
        _edit(5, "c.txt", "line 0000006\n", "line six\n"),
        {"id": 6, "tool": "undo", "args": {}},
        {"id": 7, "tool": "undo", "args": {}},
        {"id": 8, "tool": "undo", "args": {}},
        {"id": 9, "tool": "undo", "args": {}},
        {"id": 10, "tool": "undo", "args": {}},
    )).out)
    assert all(o["ok"] for o in out), out
    assert [o["result"]["path"] for o in out[5:]] == ["c.txt", "a.txt", "b.txt", "c.txt",
                                                      "a.txt"]
    assert (ws / "a.txt").read_text() == "a0\n"
    assert (ws / "b.txt").read_text() == "b0\n"
    assert (ws / "c.txt").read_text() == big


def test_an_edit_that_landed_keeps_its_undo_record_when_a_later_staged_one_fails(
        ws: Path, cli: CliRunner, monkeypatch: Any) -> None:
    """c.txt (over 1 MiB) is written at once by edit 2 (its record waits for the group, as
    g.txt is staged); edit 3 shrinks it under 1 MiB, so it is staged; someone changes c.txt
    before the flush: edit 3 fails, but edit 2 landed and was reported ok: its undo record
    must be kept."""
    _one_group(monkeypatch)
    (ws / "g.txt").write_text("g0\n")
    big = "HEAD\n" + "x" * 800_000 + "\n" + "y" * 300_000 + "\nTAIL\n"
    c = ws / "c.txt"
    c.write_text(big)
    after2 = big.replace("HEAD", "head")

    def meddle() -> None:
        c.write_text(after2 + "theirs\n")

    _meddle_after_stage(monkeypatch, 3, meddle)  # stages: g (1), c-written (2), c (3)
    out = lines(cli("batch", stdin=jsonl(
        _edit(1, "g.txt", "g0", "g1"),
        _edit(2, "c.txt", "HEAD", "head"),
        _edit(3, "c.txt", "y" * 300_000, ""),
    )).out)
    assert [o["ok"] for o in out] == [True, True, False], out
    assert out[2]["error"]["code"] == "stale_file"
    assert c.read_text() == after2 + "theirs\n"
    paths = [e["path"] for e in _undo_entries(ws)]
    assert paths == ["g.txt", "c.txt"], paths


# ---------------------------------------------------------------------------------------------
# Dialects: tool names other than the canonical ones


def test_claude_dialect_edits_are_staged_and_seen_by_read_and_write(
        ws: Path, cli: CliRunner, monkeypatch: Any) -> None:
    _one_group(monkeypatch)
    f = ws / "a.py"
    f.write_text("a = 1\nb = 2\n")
    out = lines(cli("--dialect", "claude", "batch", stdin=jsonl(
        {"id": 1, "tool": "Edit", "args": {"file_path": str(f), "old_string": "a = 1",
                                           "new_string": "a = 10"}},
        {"id": 2, "tool": "Edit", "args": {"file_path": "a.py", "old_string": "b = 2",
                                           "new_string": "b = 20"}},
        {"id": 3, "tool": "Read", "args": {"file_path": "a.py"}},
        {"id": 4, "tool": "Edit", "args": {"file_path": "a.py", "old_string": "0",
                                           "new_string": "5", "replace_all": True}},
        {"id": 5, "tool": "Write", "args": {"file_path": "b.py", "content": "x\n"}},
        {"id": 6, "tool": "Grep", "args": {"pattern": "= [12]5$", "output_mode": "content"}},
        {"id": 7, "tool": "Edit", "args": {"file_path": "a.py", "old_string": "a = 15",
                                           "new_string": "a = 1"}},
        {"id": 8, "tool": "Write", "args": {"file_path": "a.py", "content": "w\n"}},
        {"id": 9, "tool": "undo", "args": {}},
        {"id": 10, "tool": "undo", "args": {}},
    )).out)
    assert all(o["ok"] for o in out), [o for o in out if not o["ok"]]
    assert "a = 10" in json.dumps(out[2]["result"]) and "b = 20" in json.dumps(out[2]["result"])
    assert "b = 25" in json.dumps(out[5]["result"])
    assert [o["result"]["path"] for o in out[8:]] == ["a.py", "a.py"]
    assert f.read_text() == "a = 15\nb = 25\n"


@pytest.mark.parametrize("dialect,req", [
    ("fiz", {"tool": "edit", "args": {"path": "a.txt", "edits": [
        {"oldText": "one", "newText": "1"}]}}),
    ("zkit", {"tool": "edit", "args": {"path": "a.txt", "old_string": "one",
                                       "new_string": "1"}}),
    ("anthropic", {"tool": "str_replace_based_edit_tool", "args": {
        "command": "str_replace", "path": "a.txt", "old_str": "one", "new_str": "1"}}),
    ("fiz", {"tool": "patch", "args": {"path": "a.txt", "search": "one", "content": "1"}}),
    ("codex", {"tool": "apply_patch", "args": {"input": "*** Begin Patch\n*** Update File: "
                                               "a.txt\n@@\n-one\n+1\n two\n*** End Patch\n"}}),
])
def test_dialect_edits_interleaved_with_staged_ones_see_each_other(
        ws: Path, cli: CliRunner, monkeypatch: Any, dialect: str, req: dict[str, Any]) -> None:
    _one_group(monkeypatch)
    f = ws / "a.txt"
    f.write_text("zero\none\ntwo\n")
    out = lines(cli("--dialect", dialect, "batch", stdin=jsonl(
        _edit(1, "a.txt", "zero", "0"),
        {"id": 2, **req},
        _edit(3, "a.txt", "two", "2"),
        {"id": 4, "tool": "undo", "args": {}},
        {"id": 5, "tool": "read_file", "args": {"path": "a.txt"}},
    )).out)
    assert all(o["ok"] for o in out), [o for o in out if not o["ok"]]
    assert out[4]["result"]["content"] == "0\n1\ntwo\n"
    assert f.read_text() == "0\n1\ntwo\n"
    assert debris(ws) == []


def test_anthropic_view_and_undo_edit_after_staged_edits(
        ws: Path, cli: CliRunner, monkeypatch: Any) -> None:
    _one_group(monkeypatch)
    f = ws / "a.txt"
    f.write_text("zero\none\n")
    tool = "str_replace_based_edit_tool"
    out = lines(cli("--dialect", "anthropic", "batch", stdin=jsonl(
        _edit(1, "a.txt", "zero", "0"),
        {"id": 2, "tool": tool, "args": {"command": "view", "path": "a.txt"}},
        _edit(3, "a.txt", "one", "1"),
        {"id": 4, "tool": tool, "args": {"command": "undo_edit", "path": "a.txt"}},
        {"id": 5, "tool": tool, "args": {"command": "view", "path": "a.txt"}},
    )).out)
    assert all(o["ok"] for o in out), out
    assert "0" in json.dumps(out[1]["result"]) and "zero" not in json.dumps(out[1]["result"])
    assert f.read_text() == "0\none\n"


# ---------------------------------------------------------------------------------------------
# Encodings, line endings, sizes


@pytest.mark.parametrize("content", [
    b"\xef\xbb\xbfone\r\ntwo\r\nthree\r\n",
    b"one\r\ntwo\nthree\r\n",
    b"one \xff\xfe\ntwo\nthree\n",
    "one\nzw\u00e9i\nthree\n".encode("utf-16"),
])
def test_staged_edits_keep_bom_line_endings_and_bytes_as_lone_calls_do(
        ws: Path, cli: CliRunner, monkeypatch: Any, content: bytes, tmp_path: Path) -> None:
    reqs = [_edit(1, "a.txt", "one", "ONE"),
            {"id": 2, "tool": "insert_text", "args": {"path": "a.txt", "insert_line": 1,
                                                      "content": "ins\n"}},
            _edit(3, "a.txt", "three", "3\n4"),
            _edit(4, "a.txt", "ONE", "uno")]
    (ws / "a.txt").write_bytes(content)
    lone = [cli("batch", stdin=jsonl(r)).out for r in reqs]  # one group per call
    expected = (ws / "a.txt").read_bytes()
    (ws / "a.txt").write_bytes(content)
    _one_group(monkeypatch)
    staged = lines(cli("batch", stdin=jsonl(*reqs)).out)
    assert (ws / "a.txt").read_bytes() == expected
    assert [o["ok"] for o in staged] == [lines(x)[0]["ok"] for x in lone]
    assert [o.get("result", {}).get("sha256") for o in staged] == [
        lines(x)[0].get("result", {}).get("sha256") for x in lone]


def test_a_staged_file_that_grows_past_the_stage_limit_is_written_at_once(
        ws: Path, cli: CliRunner, monkeypatch: Any) -> None:
    """The doc: only a file whose new version is at most 1 MiB is held; a staged version that
    grows past it (or past what a group holds in all) is not held in memory."""
    _one_group(monkeypatch)
    from zbtools.core.files import staging

    monkeypatch.setattr(staging, "STAGE_MAX_BYTES", 1000)
    monkeypatch.setattr(staging, "STAGE_TOTAL_BYTES", 1500)
    f = ws / "a.txt"
    f.write_text("head\ntail\n")
    (ws / "b.txt").write_text("b\n")
    held: list[int] = []
    real_stage = staging.SyncGroup.stage

    def stage(self: staging.SyncGroup, *args: Any) -> Any:
        outcome = real_stage(self, *args)
        held.append(max((len(e.data) for e in self.staged.values()), default=0))
        assert self.staged_bytes <= staging.STAGE_TOTAL_BYTES
        return outcome

    monkeypatch.setattr(staging.SyncGroup, "stage", stage)
    out = lines(cli("batch", stdin=jsonl(
        _edit(1, "a.txt", "head", "HEAD"),
        _edit(2, "a.txt", "tail", "x" * 1200),
        _edit(3, "a.txt", "HEAD", "H"),
        _edit(4, "b.txt", "b", "y" * 900),
        _edit(5, "a.txt", "H\n", "h\n"),
        _edit(6, "b.txt", "y" * 900, "y" * 990),
    )).out)
    assert all(o["ok"] for o in out), out
    assert max(held) <= 1000, held
    assert f.read_text() == "h\n" + "x" * 1200 + "\n"
    assert (ws / "b.txt").read_text() == "y" * 990 + "\n"
    # the journal in order, one record per edit
    assert [e["path"] for e in _undo_entries(ws)] == ["a.txt"] * 3 + ["b.txt", "a.txt",
                                                                        "b.txt"]
    for _ in range(6):
        assert lines(cli("batch", stdin=jsonl({"id": 1, "tool": "undo", "args": {}})).out)[0][
            "ok"]
    assert f.read_text() == "head\ntail\n" and (ws / "b.txt").read_text() == "b\n"


def test_edits_of_a_staged_file_across_the_byte_path_thresholds(
        ws: Path, cli: CliRunner, monkeypatch: Any) -> None:
    """FAST_PATH_BYTES and STREAM_BYTES made small: a staged file over them is still edited
    from its staged version, never streamed from the old file on disk."""
    from zbtools.core.editing import cycle

    monkeypatch.setattr(cycle, "FAST_PATH_BYTES", 64)
    monkeypatch.setattr(cycle, "STREAM_BYTES", 128)
    monkeypatch.setattr(cycle, "HASH_RESULT_BYTES", 128)
    _one_group(monkeypatch)
    f = ws / "a.txt"
    f.write_text("alpha\nbeta\n")
    out = lines(cli("batch", stdin=jsonl(
        _edit(1, "a.txt", "alpha", "A" * 100),
        _edit(2, "a.txt", "beta", "B" * 100),
        _edit(3, "a.txt", "A" * 100, "a"),
        _edit(4, "a.txt", "B" * 100, "b" * 200),
        _edit(5, "a.txt", "a\n", "z\n"),
    )).out)
    assert all(o["ok"] for o in out), out
    assert f.read_text() == "z\n" + "b" * 200 + "\n"
    assert debris(ws) == []


# ---------------------------------------------------------------------------------------------
# Error envelopes


def test_failed_staged_calls_become_valid_error_lines_in_text_mode_too(
        ws: Path, cli: CliRunner, monkeypatch: Any) -> None:
    _one_group(monkeypatch)
    f = ws / "a.txt"
    f.write_text("one\ntwo\n")
    _meddle_after_stage(monkeypatch, 1, lambda: f.write_text("theirs\none\ntwo\n"))
    call = cli("batch", "--format", "text", stdin=jsonl(
        _edit("x", "a.txt", "one", "ONE"),
        {"id": None, "name": "apply_edit", "arguments": json.dumps(
            {"path": "a.txt", "old_text": "two", "new_text": "TWO"})},
        "garbage",
        _edit({"k": [1]}, "a.txt", "nothing", "x"),
        {"id": 5, "tool": "read_file", "args": {"path": "a.txt"}}))
    raw = call.out.splitlines()
    assert len(raw) == 5
    out = [json.loads(r) for r in raw]
    assert [o["id"] for o in out] == ["x", None, None, {"k": [1]}, 5]
    assert [o["ok"] for o in out] == [False, False, False, False, True]
    assert [o["error"]["code"] for o in out[:4]] == ["stale_file", "stale_file",
                                                     "invalid_json", "stale_file"]
    for o in out[:2]:
        assert o["tool"] == "apply_edit"
        assert o["text"].startswith("error[stale_file]: a.txt")
    assert out[4]["result"]["content"] == "theirs\none\ntwo\n"
    assert f.read_text() == "theirs\none\ntwo\n"


# ---------------------------------------------------------------------------------------------
# kill -9 of a real batch process


def _spawn_batch(ws: Path, env: dict[str, str] | None = None) -> Any:
    import subprocess
    import sys

    from tests.conftest import REPO

    environment = dict(os.environ)
    environment["PYTHONPATH"] = str(REPO)
    environment.update(env or {})
    return subprocess.Popen([sys.executable, "-m", "zbtools", "batch"], cwd=ws,
                            env=environment, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)


def test_kill_during_the_flush_leaves_each_file_old_or_whole_and_nothing_reported(
        ws: Path, tmp_path: Path) -> None:
    """Paused before the second staged file's rename, then killed: a.txt is the group's
    version, b.txt and c.txt the old ones, no result was printed, and a later call sweeps
    the dead writer's temp file."""
    import signal
    import time

    originals = {n: "".join(f"{n}{i}\n" for i in range(5)) for n in "abc"}
    for name, text in originals.items():
        (ws / f"{name}.txt").write_text(text)
    reqs = [_edit(f"{n}{i}", f"{n}.txt", f"{n}{i}\n", f"{n.upper()}{i}\n")
            for i in range(5) for n in "abc"]
    child = _spawn_batch(ws, {"ZBTOOLS_TEST_PAUSE_BEFORE_RENAME": "2"})
    assert child.stdin is not None and child.stderr is not None
    child.stdin.write(jsonl(*reqs).encode())
    child.stdin.close()
    deadline = time.monotonic() + 30
    err = b""
    while b"zbtools-test-paused" not in err and time.monotonic() < deadline:
        err += os.read(child.stderr.fileno(), 4096)
    assert b"zbtools-test-paused 2" in err
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=30)
    assert child.stdout is not None
    assert child.stdout.read() == b""
    assert (ws / "a.txt").read_text() == originals["a"].upper()
    assert (ws / "b.txt").read_text() == originals["b"]
    assert (ws / "c.txt").read_text() == originals["c"]
    assert len(debris(ws)) == 1  # b.txt's temp file, fsync-ed, never renamed
    (ws / "d.txt").write_text("d\n")
    lines(_run_batch(ws, jsonl(_edit(1, "d.txt", "d", "D"))))
    assert debris(ws) == []


def _run_batch(ws: Path, text: str) -> str:
    child = _spawn_batch(ws)
    out, _ = child.communicate(text.encode(), timeout=60)
    return str(out.decode())


def _feed(stdin: Any, reqs: list[dict[str, Any]]) -> None:
    try:
        for r in reqs:
            stdin.write(jsonl(r).encode())
        stdin.close()
    except (BrokenPipeError, OSError, ValueError):
        pass


def test_kill_at_any_moment_never_leaves_a_printed_result_unwritten(ws: Path) -> None:
    """Thousands of edits of a few files piped in; the process is killed after some results
    were read. Every result printed as ok is on disk, and each file is its old version with
    a prefix of its edits applied, never a mix."""
    import signal
    import threading

    n_files, per_file = 4, 300
    for k in range(n_files):
        (ws / f"f{k}.txt").write_text("".join(f"m{i:04d}\n" for i in range(per_file)))
    reqs = [_edit(f"{k}:{i}", f"f{k}.txt", f"m{i:04d}\n", f"M{i:04d}\n")
            for i in range(per_file) for k in range(n_files)]
    for stop_after in (5, 150, 700):
        for k in range(n_files):
            (ws / f"f{k}.txt").write_text("".join(f"m{i:04d}\n" for i in range(per_file)))
        child = _spawn_batch(ws)
        assert child.stdin is not None and child.stdout is not None
        feeder = threading.Thread(target=_feed, args=(child.stdin, reqs))
        feeder.start()
        printed = []
        for raw in child.stdout:
            printed.append(json.loads(raw))
            if len(printed) >= stop_after:
                break
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
        feeder.join(timeout=30)
        for k in range(n_files):
            text = (ws / f"f{k}.txt").read_text().splitlines()
            done = [line.startswith("M") for line in text]
            assert done == sorted(done, reverse=True), f"f{k}: not a prefix of its edits"
        for result in printed:
            assert result["ok"], result
            k, i = (int(x) for x in result["id"].split(":"))
            assert (ws / f"f{k}.txt").read_text().splitlines()[i] == f"M{i:04d}"


# ---------------------------------------------------------------------------------------------
# More paths to the same file; searches


def test_a_symlink_to_a_staged_file_reads_and_edits_the_staged_version(
        ws: Path, cli: CliRunner, monkeypatch: Any) -> None:
    _one_group(monkeypatch)
    (ws / "d").mkdir()
    f = ws / "d" / "a.txt"
    f.write_text("one\ntwo\n")
    (ws / "link.txt").symlink_to("d/a.txt")
    (ws / "dl").symlink_to("d")
    out = lines(cli("batch", stdin=jsonl(
        {"id": 0, "tool": "grep_search", "args": {"pattern": "one"}},
        _edit(1, "d/a.txt", "one", "ONE"),
        _edit(2, "link.txt", "ONE", "1"),
        _edit(3, "dl/a.txt", "two", "2"),
        _edit(4, str(f), "1\n2", "12"),
        {"id": 5, "tool": "grep_search", "args": {"pattern": "one|two|1"}},
    )).out)
    assert all(o["ok"] for o in out), out
    assert f.read_text() == "12\n"
    assert "one" not in json.dumps(out[5]["result"]["matches"])
    assert "12" in json.dumps(out[5]["result"]["matches"])
    assert (ws / "link.txt").is_symlink()


def test_a_staged_edit_whose_undo_record_cannot_be_written_still_says_so(
        ws: Path, cli: CliRunner, monkeypatch: Any) -> None:
    """A lone edit whose undo record fails says so in a warning; a staged edit's record is
    written at the flush, after its result was made."""
    f = ws / "a.txt"
    f.write_text("one\n")
    cli("apply_edit", stdin={"path": "a.txt", "old_text": "one", "new_text": "two"}).result
    journal = next((ws.parent / "state").rglob("journal.jsonl"))

    def break_journal() -> None:
        journal.unlink()
        journal.mkdir()

    break_journal()
    lone = cli("apply_edit", stdin={"path": "a.txt", "old_text": "two", "new_text": "four"})
    assert lone.json["ok"]
    assert "could not be recorded for undo" in json.dumps(lone.json)
    journal.rmdir()
    journal.write_text("")
    _one_group(monkeypatch)
    _meddle_after_stage(monkeypatch, 1, break_journal)
    out = lines(cli("batch", stdin=jsonl(_edit(1, "a.txt", "four", "five"))).out)
    assert out[0]["ok"] and f.read_text() == "five\n"
    assert "could not be recorded for undo" in json.dumps(out[0]), out[0]
    text = lines(cli("batch", "--text", stdin=jsonl(_edit(1, "a.txt", "five", "six"))).out)
    assert "\nwarning: the change was made but could not be recorded for undo" in \
        text[0]["text"], text[0]


def test_long_runs_across_group_boundaries_match_a_sequential_replay(
        ws: Path, cli: CliRunner) -> None:
    """400 calls (edits of three files, reads, an outside-looking write_file) cross several
    groups of 128: every read and every sha256 reported equals a replay of the edits in
    order."""
    texts = {f"f{k}.txt": "".join(f"m{i:03d}\n" for i in range(130)) for k in range(3)}
    for name, text in texts.items():
        (ws / name).write_text(text)
    reqs: list[dict[str, Any]] = []
    expect: list[str] = []
    for i in range(130):
        for k in range(3):
            name = f"f{k}.txt"
            texts[name] = texts[name].replace(f"m{i:03d}\n", f"M{i:03d}\n")
            reqs.append(_edit(len(reqs), name, f"m{i:03d}\n", f"M{i:03d}\n"))
            expect.append(_sha(texts[name].encode()))
        if i % 37 == 0:
            reqs.append({"id": len(reqs), "tool": "read_file", "args": {"path": "f1.txt",
                                                                         "limit": 1000}})
            expect.append("read:" + texts["f1.txt"])
    out = lines(cli("batch", stdin=jsonl(*reqs)).out)
    assert [o["id"] for o in out] == list(range(len(reqs)))
    assert all(o["ok"] for o in out)
    for o, want in zip(out, expect, strict=True):
        if want.startswith("read:"):
            assert o["result"]["content"] == want[5:]
        else:
            assert o["result"]["sha256"] == want
    for name, text in texts.items():
        assert (ws / name).read_text() == text
    assert debris(ws) == []


def test_after_a_kill_between_the_flush_and_the_undo_records_undo_refuses(
        ws: Path) -> None:
    """Killed before the second rename: a.txt is written, its undo records (written after
    every file) are not; undo must not restore anything wrong."""
    import signal
    import time

    (ws / "a.txt").write_text("a0\n")
    (ws / "b.txt").write_text("b0\n")
    _run_batch(ws, jsonl(_edit(0, "a.txt", "a0", "a1")))  # a recorded change to go back to
    child = _spawn_batch(ws, {"ZBTOOLS_TEST_PAUSE_BEFORE_RENAME": "2"})
    assert child.stdin is not None and child.stderr is not None
    child.stdin.write(jsonl(_edit(1, "a.txt", "a1", "a2"), _edit(2, "b.txt", "b0", "b1"))
                      .encode())
    child.stdin.close()
    deadline = time.monotonic() + 30
    err = b""
    while b"zbtools-test-paused" not in err and time.monotonic() < deadline:
        err += os.read(child.stderr.fileno(), 4096)
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=30)
    assert (ws / "a.txt").read_text() == "a2\n" and (ws / "b.txt").read_text() == "b0\n"
    undo = lines(_run_batch(ws, jsonl({"id": 1, "tool": "undo", "args": {}})))[0]
    assert undo["ok"] is False and undo["error"]["code"] == "stale_file"
    assert (ws / "a.txt").read_text() == "a2\n"


def test_a_staged_file_bigger_on_disk_than_the_stream_threshold_is_not_streamed_from_disk(
        ws: Path, cli: CliRunner, monkeypatch: Any) -> None:
    from zbtools.core.editing import cycle

    monkeypatch.setattr(cycle, "STREAM_BYTES", 128)
    monkeypatch.setattr(cycle, "HASH_RESULT_BYTES", 128)
    _one_group(monkeypatch)
    f = ws / "a.txt"
    original = "".join(f"line {i:03d}\n" for i in range(30))  # 270 bytes on disk
    f.write_text(original)
    out = lines(cli("batch", stdin=jsonl(
        _edit(1, "a.txt", "line", "LINE", replace_all=True),  # not a plain edit: staged
        _edit(2, "a.txt", "LINE 005\n", "five\n"),  # plain: would stream the old file
        _edit(3, "a.txt", "LINE 006\n", "six\n"),
    )).out)
    assert all(o["ok"] for o in out), out
    want = original.replace("line", "LINE").replace("LINE 005\n", "five\n") \
        .replace("LINE 006\n", "six\n")
    assert f.read_text() == want

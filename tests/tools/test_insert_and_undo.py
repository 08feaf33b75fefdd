"""insert_text (Anthropic insert, fiz prepend/append) and the undo journal."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import CliRunner, snapshot


def put(ws: Path, name: str, data: bytes | str) -> Path:
    path = ws / name
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def test_insert_after_a_line_at_the_top_and_at_the_end(ws: Path, cli: CliRunner) -> None:
    f = put(ws, "a.txt", "one\ntwo\n")
    cli("insert_text", stdin={"path": "a.txt", "insert_line": 1, "new_str": "1.5"}).result
    cli("insert_text", stdin={"path": "a.txt", "insert_line": 0, "insert_text": "zero\n"}).result
    cli("insert_text", stdin={"path": "a.txt", "position": "end", "text": "three"}).result
    cli("insert_text", stdin={"path": "a.txt", "position": "start", "content": "top"}).result
    assert f.read_text() == "top\nzero\none\n1.5\ntwo\nthree\n"


def test_inserted_lines_take_the_file_s_line_endings(ws: Path, cli: CliRunner) -> None:
    f = put(ws, "a.txt", b"a\r\nb\r\n")
    cli("insert_text", stdin={"path": "a.txt", "insert_line": 1, "content": "x\ny"}).result
    assert f.read_bytes() == b"a\r\nx\r\ny\r\nb\r\n"


def test_appending_to_a_file_without_a_final_newline_keeps_that_state(
        ws: Path, cli: CliRunner) -> None:
    f = put(ws, "a.txt", "a\nb")
    cli("insert_text", stdin={"path": "a.txt", "position": "end", "content": "c"}).result
    assert f.read_text() == "a\nb\nc"


def test_insert_past_the_end_is_out_of_range(ws: Path, cli: CliRunner) -> None:
    put(ws, "a.txt", "a\n")
    before = snapshot(ws)
    call = cli("insert_text", stdin={"path": "a.txt", "insert_line": 5, "content": "x"})
    assert call.error["code"] == "out_of_range"
    assert call.error["details"]["total_lines"] == 1
    assert snapshot(ws) == before
    both = cli("insert_text", stdin={"path": "a.txt", "insert_line": 0, "position": "end",
                                     "content": "x"})
    assert both.error["code"] == "invalid_arguments"


def test_undo_steps_back_through_edits_of_a_file(ws: Path, cli: CliRunner) -> None:
    f = put(ws, "a.txt", "v1\n")
    cli("apply_edit", stdin={"path": "a.txt", "old_text": "v1", "new_text": "v2"}).result
    cli("edit_file", stdin={"path": "a.txt", "old": "v2", "new": "v3"}).result
    first = cli("undo", stdin={"path": "a.txt"}).result
    assert (first["tool"], first["remaining"]) == ("edit_file", 1)
    assert f.read_text() == "v2\n"
    cli("undo", stdin={"path": "a.txt"}).result
    assert f.read_text() == "v1\n"
    assert cli("undo", stdin={"path": "a.txt"}).error["code"] == "not_found"


def test_undo_refuses_when_the_file_changed_after_the_edit(ws: Path, cli: CliRunner) -> None:
    f = put(ws, "a.txt", "v1\n")
    cli("apply_edit", stdin={"path": "a.txt", "old_text": "v1", "new_text": "v2"}).result
    f.write_text("v2 plus the user's work\n")
    before = snapshot(ws)
    call = cli("undo", stdin={"path": "a.txt"})
    assert call.error["code"] == "stale_file"
    assert snapshot(ws) == before


def test_undo_without_a_path_reverts_the_newest_change_anywhere(ws: Path,
                                                                cli: CliRunner) -> None:
    a = put(ws, "a.txt", "a\n")
    cli("apply_edit", stdin={"path": "a.txt", "old_text": "a", "new_text": "A"}).result
    cli("write_file", stdin={"path": "new.txt", "content": "fresh\n"}).result
    result = cli("undo").result
    assert (result["path"], result["action"]) == ("new.txt", "deleted")
    assert not (ws / "new.txt").exists()
    assert cli("undo").result["path"] == "a.txt"
    assert a.read_text() == "a\n"


def test_undo_of_a_patch_restores_deleted_and_removes_created_files(
        ws: Path, cli: CliRunner) -> None:
    put(ws, "gone.txt", "keep me\n")
    text = "*** Begin Patch\n*** Add File: made.txt\n+x\n*** Delete File: gone.txt\n" \
           "*** End Patch"
    cli("apply_edit", stdin={"patch": text}).result
    cli("undo").result
    cli("undo").result
    assert (ws / "gone.txt").read_text() == "keep me\n"
    assert not (ws / "made.txt").exists()


def test_undo_dry_run_changes_nothing_and_state_lives_outside_the_workspace(
        ws: Path, tmp_path: Path, cli: CliRunner) -> None:
    put(ws, "a.txt", "a\n")
    cli("write_file", stdin={"path": "a.txt", "content": "b\n"}).result
    before = snapshot(ws)
    result = cli("undo", stdin={"dry_run": True}).result
    assert result["dry_run"] is True and result["action"] == "restored"
    assert snapshot(ws) == before
    assert list((tmp_path / "state").rglob("journal.jsonl"))
    assert not list(ws.rglob("journal.jsonl"))


def test_a_corrupt_journal_is_reported_not_overwritten(ws: Path, tmp_path: Path,
                                                       cli: CliRunner) -> None:
    put(ws, "a.txt", "a\n")
    cli("write_file", stdin={"path": "a.txt", "content": "b\n"}).result
    journal = next((tmp_path / "state").rglob("journal.jsonl"))
    journal.write_text("{not json\n")
    call = cli("undo")
    assert call.error["code"] == "io_error"
    assert journal.read_text() == "{not json\n"
    # A later edit still succeeds, with a warning that undo could not record it.
    edit = cli("apply_edit", stdin={"path": "a.txt", "old_text": "b", "new_text": "c"})
    assert edit.code == 0
    assert any("undo" in w for w in edit.json["warnings"])
    assert journal.read_text() == "{not json\n"


def test_recording_appends_to_the_journal_and_a_crash_cut_record_is_dropped(
        ws: Path, tmp_path: Path, cli: CliRunner) -> None:
    f = put(ws, "a.txt", "v1\n")
    cli("apply_edit", stdin={"path": "a.txt", "old_text": "v1", "new_text": "v2"}).result
    journal = next((tmp_path / "state").rglob("journal.jsonl"))
    first = journal.read_bytes()
    assert first.count(b"\n") == 1
    # a crash in the middle of the next append left part of a record
    journal.write_bytes(first + b'{"v": 1, "id": "dead", "pa')
    assert cli("undo", stdin={"path": "a.txt", "dry_run": True}).result["remaining"] == 0
    cli("apply_edit", stdin={"path": "a.txt", "old_text": "v2", "new_text": "v3"}).result
    content = journal.read_bytes()
    assert content.startswith(first) and b"dead" not in content  # cut off, then appended
    assert content.count(b"\n") == 2
    assert cli("undo", stdin={"path": "a.txt"}).result["remaining"] == 1
    assert f.read_text() == "v2\n"


def test_a_long_journal_keeps_the_limits_and_is_compacted(
        ws: Path, tmp_path: Path, cli: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    from zbtools.core.editing import undo

    monkeypatch.setattr(undo, "KEEP_PER_FILE", 3)
    monkeypatch.setattr(undo, "COMPACT_BYTES", 2000)
    f = put(ws, "a.txt", "0\n")
    for i in range(12):
        cli("write_file", stdin={"path": "a.txt", "content": f"{i + 1}\n",
                                 "overwrite": True}).result
    journal = next((tmp_path / "state").rglob("journal.jsonl"))
    assert len(journal.read_bytes()) < 2000 + 400  # rewritten when it grew past the bound
    blobs = list(journal.parent.joinpath("blobs").iterdir())
    assert len(blobs) <= 3 + 8  # the pruned versions' copies go at each compaction
    for expected in ("11\n", "10\n", "9\n"):
        cli("undo", stdin={"path": "a.txt"}).result
        assert f.read_text() == expected
    assert cli("undo", stdin={"path": "a.txt"}).error["code"] == "not_found"


def test_a_damaged_saved_version_is_refused_not_restored(
        ws: Path, tmp_path: Path, cli: CliRunner) -> None:
    f = put(ws, "a.txt", "v1 with some content\n")
    cli("apply_edit", stdin={"path": "a.txt", "old_text": "v1", "new_text": "v2"}).result
    blob = next(p for p in (tmp_path / "state").rglob("blobs/*"))
    blob.write_bytes(b"v1 wi")  # cut short by a power cut
    assert cli("undo", stdin={"path": "a.txt"}).error["code"] == "io_error"
    assert f.read_text() == "v2 with some content\n"


def test_an_append_trusts_the_stamp_the_last_process_left_and_nothing_else(
        ws: Path, tmp_path: Path, cli: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    """A fresh process does not read the whole journal before appending when the lock file
    holds the stamp (inode, size, mtime) the last append left; any other change to the
    journal (here: rewritten to the same size) makes the append read and check it again."""
    from zbtools.core.editing import undo

    put(ws, "a.txt", "v1\n")
    cli("apply_edit", stdin={"path": "a.txt", "old_text": "v1", "new_text": "v2"}).result
    journal = next((tmp_path / "state").rglob("journal.jsonl"))
    loads: list[int] = []
    real = undo.Journal._load

    def counted(self: undo.Journal) -> list[dict[str, object]]:
        loads.append(1)
        return real(self)

    monkeypatch.setattr(undo.Journal, "_load", counted)
    cli("apply_edit", stdin={"path": "a.txt", "old_text": "v2", "new_text": "v3"}).result
    assert loads == []
    import os

    journal.write_bytes(journal.read_bytes())  # the same bytes, written by someone else
    st = journal.stat()
    os.utime(journal, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    edit = cli("apply_edit", stdin={"path": "a.txt", "old_text": "v3", "new_text": "v4"})
    assert loads == [1]
    assert edit.code == 0

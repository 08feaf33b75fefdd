"""The headless editor: open_file, goto_line, get_editor_state, select_range, close_file,
get_selection, replace_selection and insert_at_cursor (docs/internals/sources.md#zblade)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CliRunner, run_inprocess, snapshot
from tests.tools._mutate import ok

STATE_FIELDS = ["active_file", "open_files", "active_tab_index", "cursor_line", "cursor_column",
                "selection_start_line", "selection_start_column", "selection_end_line",
                "selection_end_column"]


def put(ws: Path, name: str, data: bytes | str) -> Path:
    path = ws / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def state(cli: CliRunner) -> dict[str, Any]:
    return ok(cli("get_editor_state"))


def editor_file(ws: Path) -> Path:
    folders = list((ws.parent / "state").iterdir())
    assert len(folders) == 1
    return folders[0] / "editor.json"


# ---------------------------------------------------------------------------------------------
# open_file


def test_open_file_makes_the_file_active_with_the_cursor_on_line_one(
        ws: Path, cli: CliRunner) -> None:
    put(ws, "src/main.py", "a\nb\nc\n")
    result = ok(cli("open_file", stdin={"path": "src/main.py"}))
    assert result == {"path": "src/main.py", "already_open": False, "cursor_line": 1,
                      "cursor_column": 1, "requested_line": None, "clamped": False,
                      "line_count": 4, "active_tab_index": 0, "open_files": ["src/main.py"]}


def test_open_file_with_a_line_puts_the_cursor_there_at_column_one(
        ws: Path, cli: CliRunner) -> None:
    put(ws, "a.py", "a\nb\nc\n")
    result = ok(cli("open_file", stdin={"path": "a.py", "line": 3}))
    assert (result["cursor_line"], result["cursor_column"]) == (3, 1)
    assert state(cli)["cursor_line"] == 3


@pytest.mark.parametrize("alias", ["path", "file_path", "filepath", "filename"])
def test_open_file_accepts_every_path_alias(ws: Path, cli: CliRunner, alias: str) -> None:
    put(ws, "a.py", "x\n")
    assert ok(cli("open_file", stdin={alias: "a.py"}))["path"] == "a.py"


def test_files_open_as_tabs_in_order_and_reopening_activates_the_tab(
        ws: Path, cli: CliRunner) -> None:
    for name in ("a.py", "b.py", "c.py"):
        put(ws, name, "1\n2\n3\n")
        ok(cli("open_file", stdin={"path": name}))
    ok(cli("goto_line", stdin={"line": 2, "column": 2}))  # in c.py
    again = ok(cli("open_file", stdin={"path": "a.py"}))
    assert again["already_open"] is True
    assert again["active_tab_index"] == 0
    assert again["open_files"] == ["a.py", "b.py", "c.py"]
    back = ok(cli("open_file", stdin={"path": "c.py"}))
    assert (back["cursor_line"], back["cursor_column"]) == (2, 2), "a tab keeps its cursor"
    moved = ok(cli("open_file", stdin={"path": "c.py", "line": 3}))
    assert (moved["cursor_line"], moved["cursor_column"]) == (3, 1)


def test_an_absolute_path_or_a_symlink_opens_the_file_under_its_real_name(
        ws: Path, cli: CliRunner) -> None:
    put(ws, "real/a.py", "x\n")
    os.symlink("real", ws / "link")
    assert ok(cli("open_file", stdin={"path": str(ws / "real/a.py")}))["path"] == "real/a.py"
    result = ok(cli("open_file", stdin={"path": "link/a.py"}))
    assert result["already_open"] is True
    assert result["open_files"] == ["real/a.py"]


def test_a_line_beyond_the_end_is_clamped_and_reported(ws: Path, cli: CliRunner) -> None:
    put(ws, "a.py", "one\ntwo")
    call = cli("open_file", stdin={"path": "a.py", "line": 50, "column": 9})
    result = ok(call)
    assert (result["cursor_line"], result["cursor_column"]) == (2, 4)
    assert result["clamped"] is True and result["requested_line"] == 50
    assert "line 50" in call.json["warnings"][0]


@pytest.mark.parametrize("setup,code,exit_code", [
    (lambda ws: None, "not_found", 1),
    (lambda ws: (ws / "t.txt").mkdir(), "is_directory", 1),
    (lambda ws: (ws / "t.txt").write_bytes(b"\x00\x01binary"), "binary_file", 1),
])
def test_open_file_refuses_what_is_not_a_text_file(
        ws: Path, cli: CliRunner, setup: Any, code: str, exit_code: int) -> None:
    setup(ws)
    call = cli("open_file", stdin={"path": "t.txt"})
    assert call.code == exit_code
    assert call.error["code"] == code
    assert state(cli)["open_files"] == []


def test_open_file_refuses_paths_outside_the_workspace(ws: Path, cli: CliRunner) -> None:
    call = cli("open_file", stdin={"path": "../outside/secret.txt"})
    assert call.code == 3
    assert call.error["code"] == "outside_workspace"


def test_open_file_refuses_files_over_the_editor_limit(
        ws: Path, cli: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    from zbtools.core.editing import editor

    monkeypatch.setattr(editor, "MAX_EDITOR_BYTES", 10)
    put(ws, "big.txt", "x" * 11)
    assert cli("open_file", stdin={"path": "big.txt"}).error["code"] == "too_large"


def test_opening_more_than_the_tab_limit_closes_the_oldest_inactive_tab(
        ws: Path, cli: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    from zbtools.core.editing import editor

    monkeypatch.setattr(editor, "MAX_TABS", 2)
    for name in ("a", "b", "c"):
        put(ws, name, "x\n")
    ok(cli("open_file", stdin={"path": "a"}))
    ok(cli("open_file", stdin={"path": "b"}))
    call = cli("open_file", stdin={"path": "c"})
    assert ok(call)["open_files"] == ["b", "c"]
    assert "closed a" in call.json["warnings"][0]


# ---------------------------------------------------------------------------------------------
# goto_line


def test_goto_line_moves_the_cursor_and_shows_the_line(ws: Path, cli: CliRunner) -> None:
    put(ws, "a.py", "def f():\n    return 1\n")
    ok(cli("open_file", stdin={"path": "a.py"}))
    result = ok(cli("goto_line", stdin={"line": 2, "column": 5}))
    assert result == {"path": "a.py", "cursor_line": 2, "cursor_column": 5, "requested_line": 2,
                      "requested_column": 5, "clamped": False, "line_count": 3,
                      "line_text": "    return 1"}
    assert cli("goto_line", "--line", "1", "--text").out == (
        "a.py: cursor at line 1, column 1\n     1\tdef f():\n")


def test_goto_line_reports_a_clamped_position_instead_of_applying_it_silently(
        ws: Path, cli: CliRunner) -> None:
    put(ws, "a.py", "ab\ncd\n")
    ok(cli("open_file", stdin={"path": "a.py"}))
    call = cli("goto_line", stdin={"line": 99, "column": 40})
    result = ok(call)
    assert (result["cursor_line"], result["cursor_column"]) == (3, 1)
    assert (result["requested_line"], result["requested_column"]) == (99, 40)
    assert result["clamped"] is True
    assert call.json["warnings"]
    past_line_end = ok(cli("goto_line", stdin={"line": 1, "column": 40}))
    assert (past_line_end["cursor_column"], past_line_end["clamped"]) == (3, True)
    assert "(clamped from 1:40)" in cli("goto_line", "--line", "1", "--column", "40",
                                        "--text").out


def test_goto_line_without_an_open_file_is_no_active_file(cli: CliRunner) -> None:
    call = cli("goto_line", stdin={"line": 3})
    assert call.code == 1
    assert call.error["code"] == "no_active_file"
    assert "open_file" in call.error["hint"]


def test_goto_line_rejects_lines_and_columns_below_one(ws: Path, cli: CliRunner) -> None:
    put(ws, "a.py", "x\n")
    ok(cli("open_file", stdin={"path": "a.py"}))
    call = cli("goto_line", stdin={"line": 0, "column": 0})
    assert call.code == 2
    assert len(call.error["details"]["problems"]) == 2


def test_goto_line_clears_the_selection(ws: Path, cli: CliRunner) -> None:
    put(ws, "a.py", "abc\ndef\n")
    ok(cli("open_file", stdin={"path": "a.py"}))
    ok(cli("select_range", stdin={"start_line": 1}))
    ok(cli("goto_line", stdin={"line": 2}))
    assert state(cli)["selection_start_line"] is None


# ---------------------------------------------------------------------------------------------
# get_editor_state


def test_the_state_has_exactly_the_seed_fields_and_starts_empty(cli: CliRunner) -> None:
    result = state(cli)
    assert list(result) == STATE_FIELDS
    assert result["open_files"] == []
    assert all(result[k] is None for k in STATE_FIELDS if k != "open_files")
    assert cli("get_editor_state", "--text").out == "no file is open (open_file opens one)\n"


def test_the_state_reports_the_active_tab_cursor_and_selection(
        ws: Path, cli: CliRunner) -> None:
    put(ws, "a.py", "x\n")
    put(ws, "b.py", "hello\nworld\n")
    ok(cli("open_file", stdin={"path": "a.py"}))
    ok(cli("open_file", stdin={"path": "b.py"}))
    ok(cli("select_range", stdin={"start_line": 1, "start_column": 2, "end_line": 2,
                                  "end_column": 3}))
    assert state(cli) == {"active_file": "b.py", "open_files": ["a.py", "b.py"],
                          "active_tab_index": 1, "cursor_line": 2, "cursor_column": 3,
                          "selection_start_line": 1, "selection_start_column": 2,
                          "selection_end_line": 2, "selection_end_column": 3}
    assert cli("get_editor_state", "--text").out == (
        "active: b.py (tab 2 of 2)\ncursor: line 2, column 3\nselection: 1:2 to 2:3\n"
        "open files:\n    a.py\n  * b.py\n")


def test_the_state_persists_between_real_processes(ws: Path, proc: CliRunner) -> None:
    put(ws, "a.py", "1\n2\n3\n")
    assert proc("open_file", "--path", "a.py", "--line", "2").code == 0
    assert proc("get_editor_state").result["cursor_line"] == 2


def test_a_file_deleted_behind_the_editor_s_back_is_dropped_with_a_warning(
        ws: Path, cli: CliRunner) -> None:
    put(ws, "a.py", "x\n")
    put(ws, "b.py", "y\n")
    ok(cli("open_file", stdin={"path": "a.py"}))
    ok(cli("open_file", stdin={"path": "b.py"}))
    (ws / "b.py").unlink()
    call = cli("get_editor_state")
    assert ok(call)["open_files"] == ["a.py"]
    assert ok(call)["active_file"] is None, "another file must not become the edit target"
    assert "b.py" in call.json["warnings"][0]
    assert "no file is active" in cli("get_editor_state", "--text").out
    assert cli("insert_at_cursor", stdin={"content": "x"}).error["code"] == "no_active_file"


def test_open_files_follow_move_file_and_disappear_with_delete_file(
        ws: Path, cli: CliRunner) -> None:
    put(ws, "pkg/a.py", "x\n")
    put(ws, "b.py", "y\n")
    ok(cli("open_file", stdin={"path": "pkg/a.py", "line": 2}))
    ok(cli("open_file", stdin={"path": "b.py"}))
    ok(cli("open_file", stdin={"path": "pkg/a.py"}))
    ok(cli("move_file", stdin={"source": "pkg", "destination": "lib"}))
    after_move = state(cli)
    assert after_move["open_files"] == ["lib/a.py", "b.py"]
    assert (after_move["active_file"], after_move["cursor_line"]) == ("lib/a.py", 2)
    ok(cli("delete_file", stdin={"path": "lib", "recursive": True}))
    call = cli("get_editor_state")
    assert ok(call)["open_files"] == ["b.py"]
    assert ok(call)["active_file"] is None
    assert call.json["warnings"] == [], "delete_file already closed it"
    ok(cli("delete_file", stdin={"path": "b.py"}))
    assert state(cli)["open_files"] == []


def test_open_files_follow_renames_and_deletes_made_by_a_patch(ws: Path,
                                                                cli: CliRunner) -> None:
    put(ws, "old.py", "x = 1\n")
    put(ws, "gone.py", "y = 2\n")
    ok(cli("open_file", stdin={"path": "gone.py"}))
    ok(cli("open_file", stdin={"path": "old.py", "line": 1}))
    patch = ("*** Begin Patch\n*** Update File: old.py\n*** Move to: new.py\n@@\n-x = 1\n"
             "+x = 10\n*** Delete File: gone.py\n*** End Patch\n")
    ok(cli("apply_patch", stdin={"patch": patch}))
    call = cli("get_editor_state")
    assert ok(call)["open_files"] == ["new.py"]
    assert ok(call)["active_file"] == "new.py"
    # the patch already updated the tabs: nothing is found missing afterwards (the cursor's
    # line changed, which is said, since the patch edited it)
    assert not [w for w in call.json["warnings"] if "no longer exist" in w or "gone" in w]


def test_the_cursor_follows_lines_inserted_above_it(ws: Path, cli: CliRunner) -> None:
    f = put(ws, "a.py", "alpha\nbeta\ngamma\n")
    ok(cli("open_file", stdin={"path": "a.py", "line": 2, "column": 3}))
    f.write_text("new 1\nnew 2\nalpha\nbeta\ngamma\n")
    call = cli("get_editor_state")
    assert (ok(call)["cursor_line"], ok(call)["cursor_column"]) == (4, 3)
    assert "re-anchored" in call.json["warnings"][0]


def test_editor_state_is_private_to_each_workspace(ws: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    put(ws, "a.py", "x\n")
    put(other, "b.py", "y\n")
    ok(run_inprocess(["open_file", "--path", "a.py"], workspace=ws))
    ok(run_inprocess(["open_file", "--path", "b.py"], workspace=other))
    assert ok(run_inprocess(["get_editor_state"], workspace=ws))["open_files"] == ["a.py"]
    assert ok(run_inprocess(["get_editor_state"], workspace=other))["open_files"] == ["b.py"]


def test_the_editor_state_lives_outside_the_workspace(ws: Path, cli: CliRunner) -> None:
    put(ws, "a.py", "x\n")
    before = snapshot(ws)
    ok(cli("open_file", stdin={"path": "a.py"}))
    assert snapshot(ws) == before
    assert json.loads(editor_file(ws).read_text())["version"] == 1


@pytest.mark.parametrize("content", [b"{broken", b'{"version": 7, "kind": "editor"}',
                                     b'{"version": 1, "kind": "editor", "tabs": [{"x": 1}]}',
                                     b'{"version": 1, "kind": "editor", "tabs": [], '
                                     b'"active": "gone.py"}'])
def test_a_corrupt_or_future_editor_state_is_reported_and_never_overwritten(
        ws: Path, cli: CliRunner, content: bytes) -> None:
    put(ws, "a.py", "x\n")
    ok(cli("get_editor_state"))
    path = editor_file(ws)
    path.write_bytes(content)
    for call in (cli("open_file", stdin={"path": "a.py"}), cli("get_editor_state"),
                 cli("close_file", stdin={"all": True})):
        assert call.code == 1
        assert call.error["code"] == "state_corrupt"
        assert str(path) in call.error["message"]
    assert path.read_bytes() == content


@pytest.mark.parametrize("cursor,selection", [([999, 1], [1, 1, 999, 5]), ([1, 99], None),
                                              ([0, 0], None), ([1, 1], [0, 1, 1, 2])])
def test_a_tampered_editor_state_never_edits_a_wrong_place(
        ws: Path, cli: CliRunner, cursor: list[int], selection: list[int] | None) -> None:
    """Positions the (unchanged) file cannot hold are lost (stale_file), or, when 0 (never
    written by zbtools), state_corrupt: never an internal error, never an edit elsewhere."""
    put(ws, "a.py", "one\ntwo\n")
    ok(cli("open_file", stdin={"path": "a.py"}))
    path = editor_file(ws)
    doc = json.loads(path.read_text())
    doc["tabs"][0]["cursor"], doc["tabs"][0]["selection"] = cursor, selection
    path.write_text(json.dumps(doc))
    before = snapshot(ws)
    zero = 0 in cursor + (selection or [])
    for tool in ("replace_selection", "insert_at_cursor"):
        call = cli(tool, stdin={"content": "x"})
        assert call.code == 1, call
        assert call.error["code"] == ("state_corrupt" if zero else "stale_file")
    assert snapshot(ws) == before
    assert cli("get_selection").error["code"] == ("state_corrupt" if zero else "stale_file")
    if not zero:  # setting the position again recovers
        ok(cli("goto_line", stdin={"line": 1}))
        assert ok(cli("insert_at_cursor", stdin={"content": "x"}))["changed"]
        assert (ws / "a.py").read_text() == "xone\ntwo\n"


# ---------------------------------------------------------------------------------------------
# select_range and get_selection


def test_select_range_defaults_to_the_text_of_the_start_line(ws: Path, cli: CliRunner) -> None:
    put(ws, "a.py", "one\ntwo three\nfour\n")
    ok(cli("open_file", stdin={"path": "a.py"}))
    result = ok(cli("select_range", stdin={"start_line": 2}))
    assert result == {"path": "a.py", "selection_start_line": 2, "selection_start_column": 1,
                      "selection_end_line": 2, "selection_end_column": 10, "cursor_line": 2,
                      "cursor_column": 10, "selected_chars": 9, "clamped": False}
    assert ok(cli("get_selection"))["text"] == "two three"
    assert cli("select_range", "--start-line", "2", "--text").out == (
        "a.py: selected 2:1 to 2:10 (9 characters)\n")


def test_a_selection_across_lines_keeps_the_file_s_line_endings(
        ws: Path, cli: CliRunner) -> None:
    put(ws, "a.txt", b"one\r\ntwo\r\nthree\r\n")
    ok(cli("open_file", stdin={"path": "a.txt"}))
    ok(cli("select_range", stdin={"start_line": 1, "start_column": 2, "end_line": 3,
                                  "end_column": 1}))
    result = ok(cli("get_selection"))
    assert result["text"] == "ne\r\ntwo\r\n"
    assert (result["start_line"], result["end_line"], result["empty"]) == (1, 3, False)
    assert cli("get_selection", "--text").out == "ne\r\ntwo\r\n"


def test_columns_count_characters_not_bytes(ws: Path, cli: CliRunner) -> None:
    put(ws, "a.txt", "héllo wörld\n")
    ok(cli("open_file", stdin={"path": "a.txt"}))
    ok(cli("select_range", stdin={"start_line": 1, "start_column": 7, "end_column": 12}))
    assert ok(cli("get_selection"))["text"] == "wörld"


def test_a_reversed_range_is_selected_start_first_with_the_cursor_at_its_end_argument(
        ws: Path, cli: CliRunner) -> None:
    put(ws, "a.txt", "abcdef\n")
    ok(cli("open_file", stdin={"path": "a.txt"}))
    result = ok(cli("select_range", stdin={"start_line": 1, "start_column": 5, "end_line": 1,
                                           "end_column": 2}))
    assert (result["selection_start_column"], result["selection_end_column"]) == (2, 5)
    assert result["cursor_column"] == 2
    assert ok(cli("get_selection"))["text"] == "bcd"


def test_a_range_beyond_the_file_is_clamped_and_reported(ws: Path, cli: CliRunner) -> None:
    put(ws, "a.txt", "ab\ncd")
    ok(cli("open_file", stdin={"path": "a.txt"}))
    call = cli("select_range", stdin={"start_line": 2, "end_line": 9, "end_column": 9})
    assert ok(call)["clamped"] is True
    assert (ok(call)["selection_end_line"], ok(call)["selection_end_column"]) == (2, 3)
    assert call.json["warnings"]


def test_an_empty_range_only_places_the_cursor(ws: Path, cli: CliRunner) -> None:
    put(ws, "a.txt", "abc\n")
    ok(cli("open_file", stdin={"path": "a.txt"}))
    result = ok(cli("select_range", stdin={"start_line": 1, "start_column": 2,
                                           "end_column": 2}))
    assert result["selected_chars"] == 0
    selection = ok(cli("get_selection"))
    assert (selection["text"], selection["empty"], selection["start_column"]) == ("", True, 2)
    assert "nothing is selected" in cli("get_selection", "--text").out


def test_selection_tools_without_an_open_file_are_no_active_file(cli: CliRunner) -> None:
    for call in (cli("select_range", stdin={"start_line": 1}), cli("get_selection"),
                 cli("replace_selection", stdin={"content": "x"}),
                 cli("insert_at_cursor", stdin={"content": "x"})):
        assert call.code == 1
        assert call.error["code"] == "no_active_file"


def test_the_selection_is_read_from_the_file_as_it_is_now(ws: Path, cli: CliRunner) -> None:
    f = put(ws, "a.py", "head\ntarget line\ntail\n")
    ok(cli("open_file", stdin={"path": "a.py"}))
    ok(cli("select_range", stdin={"start_line": 2}))
    f.write_text("added 1\nadded 2\nhead\ntarget line\ntail\n")
    call = cli("get_selection")
    result = ok(call)
    assert result["text"] == "target line"
    assert (result["start_line"], result["reanchored"]) == (4, True)
    assert "re-anchored" in call.json["warnings"][0]
    assert state(cli)["selection_start_line"] == 4


def test_the_selection_is_found_without_its_context_lines_when_they_changed(
        ws: Path, cli: CliRunner) -> None:
    f = put(ws, "a.py", "head\ntarget line\ntail\n")
    ok(cli("open_file", stdin={"path": "a.py"}))
    ok(cli("select_range", stdin={"start_line": 2}))
    f.write_text("HEAD changed\nx\ntarget line\nTAIL changed\n")
    result = ok(cli("get_selection"))
    assert (result["text"], result["start_line"]) == ("target line", 3)


def test_a_selection_whose_text_changed_is_stale(ws: Path, cli: CliRunner) -> None:
    f = put(ws, "a.py", "head\ntarget line\ntail\n")
    ok(cli("open_file", stdin={"path": "a.py"}))
    ok(cli("select_range", stdin={"start_line": 2}))
    f.write_text("head\nother line\ntail\n")
    call = cli("get_selection")
    assert call.code == 1
    assert call.error["code"] == "stale_file"
    assert "select_range" in call.error["hint"]


def test_a_selection_that_now_matches_twice_nearby_is_stale_not_guessed(
        ws: Path, cli: CliRunner) -> None:
    f = put(ws, "a.py", "x = 1\n")
    ok(cli("open_file", stdin={"path": "a.py"}))
    ok(cli("select_range", stdin={"start_line": 1}))
    f.write_text("x = 1\nx = 1\n")
    assert cli("get_selection").error["code"] == "stale_file"


def test_a_selection_is_not_searched_for_far_from_where_it_was(
        ws: Path, cli: CliRunner) -> None:
    f = put(ws, "a.py", "head\nunique\ntail\n")
    ok(cli("open_file", stdin={"path": "a.py"}))
    ok(cli("select_range", stdin={"start_line": 2}))
    f.write_text("filler\n" * 1000 + "head\nunique\ntail\n")
    assert cli("get_selection").error["code"] == "stale_file"


def test_a_huge_selection_is_anchored_by_hash_and_only_in_place(
        ws: Path, cli: CliRunner) -> None:
    f = put(ws, "a.txt", "x" * 70000 + "\nend\n")
    ok(cli("open_file", stdin={"path": "a.txt"}))
    ok(cli("select_range", stdin={"start_line": 1}))
    f.write_text("x" * 70000 + "\nchanged end\n")
    assert len(ok(cli("get_selection"))["text"]) == 70000
    f.write_text("new first line\n" + "x" * 70000 + "\nchanged end\n")
    assert cli("get_selection").error["code"] == "stale_file"


# ---------------------------------------------------------------------------------------------
# replace_selection and insert_at_cursor


def select(cli: CliRunner, path: str, *rng: int) -> None:
    ok(cli("open_file", stdin={"path": path}))
    keys = ("start_line", "start_column", "end_line", "end_column")
    ok(cli("select_range", stdin=dict(zip(keys, rng, strict=False))))


def test_replace_selection_edits_the_file_and_puts_the_cursor_after_the_new_text(
        ws: Path, cli: CliRunner) -> None:
    f = put(ws, "a.py", "def old_name():\n    pass\n")
    select(cli, "a.py", 1, 5, 1, 13)
    result = ok(cli("replace_selection", stdin={"content": "new_name"}))
    assert f.read_text() == "def new_name():\n    pass\n"
    assert result["changed"] is True
    assert (result["start_line"], result["start_column"]) == (1, 5)
    assert (result["cursor_line"], result["cursor_column"]) == (1, 13)
    assert (result["replaced_chars"], result["inserted_chars"]) == (8, 8)
    assert "-def old_name():" in result["diff"] and "+def new_name():" in result["diff"]
    after = state(cli)
    assert (after["cursor_line"], after["cursor_column"]) == (1, 13)
    assert after["selection_start_line"] is None, "the selection is gone after typing"


@pytest.mark.parametrize("alias", ["content", "contents", "text", "data"])
def test_replace_selection_accepts_every_content_alias(
        ws: Path, cli: CliRunner, alias: str) -> None:
    f = put(ws, "a.txt", "abc\n")
    select(cli, "a.txt", 1, 2, 1, 3)
    ok(cli("replace_selection", stdin={alias: "B"}))
    assert f.read_text() == "aBc\n"


def test_multi_line_content_moves_the_cursor_to_its_end(ws: Path, cli: CliRunner) -> None:
    f = put(ws, "a.txt", "start END\n")
    select(cli, "a.txt", 1, 7, 1, 10)
    result = ok(cli("replace_selection", stdin={"content": "one\ntwo\nthree"}))
    assert f.read_text() == "start one\ntwo\nthree\n"
    assert (result["end_line"], result["end_column"]) == (3, 6)
    assert (result["cursor_line"], result["cursor_column"]) == (3, 6)


def test_edits_keep_crlf_bom_and_the_bytes_around_them(ws: Path, cli: CliRunner) -> None:
    f = put(ws, "a.txt", b"\xef\xbb\xbfone\r\ntwo\r\nthree\r\n")
    select(cli, "a.txt", 2, 1, 2, 4)
    ok(cli("replace_selection", stdin={"content": "2a\n2b"}))
    assert f.read_bytes() == b"\xef\xbb\xbfone\r\n2a\r\n2b\r\nthree\r\n"
    ok(cli("insert_at_cursor", stdin={"content": "!"}))
    assert f.read_bytes() == b"\xef\xbb\xbfone\r\n2a\r\n2b!\r\nthree\r\n"


def test_edits_keep_a_legacy_encoding_and_refuse_characters_it_cannot_hold(
        ws: Path, cli: CliRunner) -> None:
    f = put(ws, "a.txt", "café crème\n".encode("cp1252"))
    select(cli, "a.txt", 1, 1, 1, 5)
    ok(cli("replace_selection", stdin={"content": "thé"}))
    assert f.read_bytes() == "thé crème\n".encode("cp1252")
    before = snapshot(ws)
    call = cli("insert_at_cursor", stdin={"content": "日本"})
    assert call.error["code"] == "encoding_error"
    assert snapshot(ws) == before


def test_edits_keep_the_file_mode(ws: Path, cli: CliRunner) -> None:
    f = put(ws, "run.sh", "#!/bin/sh\necho hi\n")
    f.chmod(0o751)
    select(cli, "run.sh", 2, 6, 2, 8)
    ok(cli("replace_selection", stdin={"content": "bye"}))
    assert f.read_text() == "#!/bin/sh\necho bye\n"
    assert f.stat().st_mode & 0o777 == 0o751


def test_replace_selection_without_a_selection_inserts_at_the_cursor_and_warns(
        ws: Path, cli: CliRunner) -> None:
    f = put(ws, "a.txt", "ac\n")
    ok(cli("open_file", stdin={"path": "a.txt"}))
    ok(cli("goto_line", stdin={"line": 1, "column": 2}))
    call = cli("replace_selection", stdin={"content": "b"})
    assert ok(call)["replaced_chars"] == 0
    assert f.read_text() == "abc\n"
    assert "nothing was selected" in call.json["warnings"][0]


def test_replacing_a_selection_with_the_same_text_changes_nothing(
        ws: Path, cli: CliRunner) -> None:
    f = put(ws, "a.txt", "same\n")
    select(cli, "a.txt", 1)
    mtime = f.stat().st_mtime_ns
    result = ok(cli("replace_selection", stdin={"content": "same"}))
    assert (result["changed"], result["diff"]) == (False, "")
    assert f.stat().st_mtime_ns == mtime
    assert "unchanged" in cli("insert_at_cursor", "--content", "", "--text").out


def test_insert_at_cursor_inserts_exactly_and_leaves_a_selection_in_place(
        ws: Path, cli: CliRunner) -> None:
    f = put(ws, "a.py", "def f():\n    return 1\n")
    select(cli, "a.py", 2, 5, 2, 11)  # "return", cursor after it
    result = ok(cli("insert_at_cursor", stdin={"content": " -"}))
    assert f.read_text() == "def f():\n    return - 1\n"
    assert (result["cursor_line"], result["cursor_column"]) == (2, 13)
    assert result["replaced_chars"] == 0
    text = cli("insert_at_cursor", stdin={"content": "-"}, env={"ZBTOOLS_FORMAT": "text"}).out
    assert "+    return -- 1" in text
    assert text.endswith("cursor at line 2, column 14\n")


@pytest.mark.parametrize("alias", ["content", "contents", "text", "data"])
def test_insert_at_cursor_accepts_every_content_alias(
        ws: Path, cli: CliRunner, alias: str) -> None:
    f = put(ws, "a.txt", "ac\n")
    ok(cli("open_file", stdin={"path": "a.txt", "line": 1, "column": 2}))
    ok(cli("insert_at_cursor", stdin={alias: "b"}))
    assert f.read_text() == "abc\n"


def test_insert_at_cursor_on_the_empty_last_line_appends(ws: Path, cli: CliRunner) -> None:
    f = put(ws, "a.py", "x = 1\n")
    ok(cli("open_file", stdin={"path": "a.py", "line": 2}))
    ok(cli("insert_at_cursor", stdin={"content": "y = 2\n"}))
    ok(cli("insert_at_cursor", stdin={"content": "z = 3\n"}))
    assert f.read_text() == "x = 1\ny = 2\nz = 3\n"


def test_insert_at_cursor_follows_the_cursor_s_line_when_the_file_changed(
        ws: Path, cli: CliRunner) -> None:
    f = put(ws, "a.py", "import os\n\ndef main():\n    pass\n")
    ok(cli("open_file", stdin={"path": "a.py", "line": 4, "column": 5}))
    f.write_text("import os\nimport sys\n\ndef main():\n    pass\n")
    result = ok(cli("insert_at_cursor", stdin={"content": "# todo\n    "}))
    assert result["reanchored"] is True
    assert f.read_text() == "import os\nimport sys\n\ndef main():\n    # todo\n    pass\n"


def test_an_edit_whose_place_was_lost_is_stale_and_writes_nothing(
        ws: Path, cli: CliRunner) -> None:
    f = put(ws, "a.py", "alpha\nbeta\ngamma\n")
    select(cli, "a.py", 2)
    f.write_text("alpha\nBETA\ngamma\n")
    before = snapshot(ws)
    for tool in ("replace_selection", "insert_at_cursor"):
        call = cli(tool, stdin={"content": "x"})
        assert call.code == 1
        assert call.error["code"] == "stale_file"
        assert call.error["details"]["current_sha256"]
    assert snapshot(ws) == before


def test_a_file_that_became_binary_is_not_edited(ws: Path, cli: CliRunner) -> None:
    f = put(ws, "a.txt", "text\n")
    ok(cli("open_file", stdin={"path": "a.txt"}))
    f.write_bytes(b"\x00\x01\x02")
    assert cli("insert_at_cursor", stdin={"content": "x"}).error["code"] == "binary_file"
    assert f.read_bytes() == b"\x00\x01\x02"


def test_editor_edits_can_be_undone(ws: Path, cli: CliRunner) -> None:
    f = put(ws, "a.txt", "one\n")
    select(cli, "a.txt", 1)
    ok(cli("replace_selection", stdin={"content": "two"}))
    ok(cli("insert_at_cursor", stdin={"content": "!"}))
    assert f.read_text() == "two!\n"
    assert ok(cli("undo", stdin={"path": "a.txt"}))["tool"] == "insert_at_cursor"
    assert ok(cli("undo", stdin={"path": "a.txt"}))["tool"] == "replace_selection"
    assert f.read_text() == "one\n"


def test_editing_a_read_only_file_is_permission_denied(ws: Path, cli: CliRunner) -> None:
    f = put(ws, "a.txt", "x\n")
    ok(cli("open_file", stdin={"path": "a.txt"}))
    f.chmod(0o444)
    assert cli("insert_at_cursor", stdin={"content": "y"}).error["code"] == "permission_denied"
    assert f.read_text() == "x\n"


# ---------------------------------------------------------------------------------------------
# close_file


def test_closing_the_active_tab_activates_its_right_neighbour(ws: Path, cli: CliRunner) -> None:
    for name in ("a", "b", "c"):
        put(ws, name, "x\n")
        ok(cli("open_file", stdin={"path": name}))
    ok(cli("open_file", stdin={"path": "b"}))
    result = ok(cli("close_file"))
    assert result == {"closed": ["b"], "was_open": True, "active_file": "c",
                      "open_files": ["a", "c"]}
    assert ok(cli("close_file"))["active_file"] == "a", "the last tab falls back to the left"


@pytest.mark.parametrize("alias", ["path", "file_path", "filepath", "filename"])
def test_close_file_by_path_leaves_the_active_file_alone(
        ws: Path, cli: CliRunner, alias: str) -> None:
    for name in ("a", "b"):
        put(ws, name, "x\n")
        ok(cli("open_file", stdin={"path": name}))
    result = ok(cli("close_file", stdin={alias: "a"}))
    assert (result["closed"], result["active_file"], result["open_files"]) == (["a"], "b", ["b"])
    assert (ws / "a").exists(), "closing never touches the file"


def test_closing_a_file_that_is_not_open_changes_nothing(ws: Path, cli: CliRunner) -> None:
    put(ws, "a", "x\n")
    ok(cli("open_file", stdin={"path": "a"}))
    for path in ("b", "no/such/dir/c"):
        result = ok(cli("close_file", stdin={"path": path}))
        assert (result["was_open"], result["open_files"]) == (False, ["a"])
    assert "nothing to close" in cli("close_file", "--path", "b", "--text").out


def test_close_all_empties_the_editor(ws: Path, cli: CliRunner) -> None:
    for name in ("a", "b"):
        put(ws, name, "x\n")
        ok(cli("open_file", stdin={"path": name}))
    result = ok(cli("close_file", stdin={"all": True}))
    assert result == {"closed": ["a", "b"], "was_open": True, "active_file": None,
                      "open_files": []}
    assert "no file is open" in cli("close_file", "--all", "--text").out


def test_close_file_without_an_active_file_or_with_two_targets_fails(
        cli: CliRunner) -> None:
    assert cli("close_file").error["code"] == "no_active_file"
    call = cli("close_file", stdin={"path": "a", "all": True})
    assert (call.code, call.error["code"]) == (2, "invalid_arguments")


def test_close_file_refuses_paths_outside_the_workspace(cli: CliRunner) -> None:
    assert cli("close_file", stdin={"path": "/etc/passwd"}).error["code"] == "outside_workspace"


def test_open_file_renders_a_one_line_summary_as_text(ws: Path, cli: CliRunner) -> None:
    put(ws, "a.py", "x\n")
    assert cli("open_file", "--path", "a.py", "--text").out == (
        "opened a.py at line 1, column 1 (tab 1 of 1, 2 lines)\n")
    assert cli("open_file", "--path", "a.py", "--text").out.startswith("activated a.py")


@pytest.mark.parametrize("order", [("b.py", "a.py"), ("a.py", "b.py")])
def test_a_file_moved_over_the_active_tab_keeps_that_path_active(
        ws: Path, cli: CliRunner, order: tuple[str, str]) -> None:
    put(ws, "a.py", "a\n")
    put(ws, "b.py", "b\n")
    for name in order:
        ok(cli("open_file", stdin={"path": name}))
    ok(cli("open_file", stdin={"path": "a.py"}))  # a.py is the active tab
    ok(cli("move_file", stdin={"source": "b.py", "destination": "a.py", "overwrite": True}))
    after = state(cli)
    assert after["open_files"] == ["a.py"]
    assert after["active_file"] == "a.py"

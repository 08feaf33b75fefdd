"""save_plan, save_plan_append (plan documents in the workspace), update_plan and get_plan
(the live structured plan in the state directory) -- docs/internals/sources.md#zkit."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CliRunner, run_inprocess, snapshot
from tests.tools._mutate import ok

PLANS = Path(".zbtools/plans")


def steps(result: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(s["id"], s["title"], s["status"]) for s in result["steps"]]


# ---------------------------------------------------------------------------------------------
# save_plan


def test_save_plan_creates_the_markdown_file_and_its_folders(ws: Path, cli: CliRunner) -> None:
    result = ok(cli("save_plan", stdin={"name": "release", "content": "# Release\n\n- tag\n"}))
    assert (ws / PLANS / "release.md").read_text() == "# Release\n\n- tag\n"
    assert result["name"] == "release"
    assert result["path"] == ".zbtools/plans/release.md"
    assert result["size"] == 17
    assert result["parents_created"] == [".zbtools", ".zbtools/plans"]
    assert cli("save_plan", "--name", "b", "--content", "x", "--text").out == (
        "saved plan b as .zbtools/plans/b.md (1 bytes)\n")


@pytest.mark.parametrize("name_key", ["name", "plan_name", "plan"])
@pytest.mark.parametrize("content_key", ["content", "contents", "text", "data"])
def test_save_plan_accepts_every_alias(ws: Path, cli: CliRunner, name_key: str,
                                       content_key: str) -> None:
    ok(cli("save_plan", stdin={name_key: "p", content_key: "x"}))
    assert (ws / PLANS / "p.md").read_text() == "x"


def test_a_trailing_md_in_the_name_is_dropped(ws: Path, cli: CliRunner) -> None:
    assert ok(cli("save_plan", stdin={"name": "v2.1-plan.md", "content": ""}))["name"] == \
        "v2.1-plan"
    assert (ws / PLANS / "v2.1-plan.md").exists()


def test_save_plan_never_overwrites_and_names_the_tools_that_change_a_plan(
        ws: Path, cli: CliRunner) -> None:
    ok(cli("save_plan", stdin={"name": "p", "content": "original\n"}))
    before = snapshot(ws)
    call = cli("save_plan", stdin={"name": "p", "content": "clobber\n"})
    assert call.code == 1
    assert call.error["code"] == "already_exists"
    assert "save_plan_append" in call.error["hint"] and "update_plan" in call.error["hint"]
    assert snapshot(ws) == before


@pytest.mark.parametrize("name", ["", "../evil", "a/b", "a\\b", ".hidden", "-flag", "a..b",
                                  "semi;colon", "spa ce", "x" * 65, "é", "..", ".md"])
def test_bad_plan_names_are_invalid_arguments(ws: Path, cli: CliRunner, name: str) -> None:
    call = cli("save_plan", stdin={"name": name, "content": "x"})
    assert call.code == 2
    assert call.error["code"] == "invalid_arguments"
    assert "letters, digits" in call.error["hint"]
    assert not (ws / ".zbtools").exists()


def test_a_plans_folder_linking_outside_the_workspace_is_refused(
        ws: Path, cli: CliRunner, tmp_path: Path) -> None:
    (ws / ".zbtools").mkdir()
    os.symlink(tmp_path / "outside", ws / ".zbtools" / "plans")
    call = cli("save_plan", stdin={"name": "p", "content": "x"})
    assert call.code == 3
    assert call.error["code"] == "outside_workspace"
    assert not (tmp_path / "outside" / "p.md").exists()


def test_save_plan_can_be_undone(ws: Path, cli: CliRunner) -> None:
    ok(cli("save_plan", stdin={"name": "p", "content": "x"}))
    assert ok(cli("undo"))["action"] == "deleted"
    assert not (ws / PLANS / "p.md").exists()


def test_save_plan_refuses_text_that_is_not_unicode(ws: Path, cli: CliRunner) -> None:
    call = cli("save_plan", stdin='{"name": "p", "content": "\\ud800"}')
    assert call.error["code"] == "encoding_error"
    assert not (ws / PLANS / "p.md").exists()


# ---------------------------------------------------------------------------------------------
# save_plan_append


def test_save_plan_append_adds_chunks_in_order(ws: Path, cli: CliRunner) -> None:
    ok(cli("save_plan", stdin={"name": "p", "content": "# Plan\n"}))
    for i in range(3):
        result = ok(cli("save_plan_append", stdin={"plan": "p", "text": f"- step {i}\n"}))
    assert (ws / PLANS / "p.md").read_text() == "# Plan\n- step 0\n- step 1\n- step 2\n"
    assert result["bytes_appended"] == 9 and result["size"] == 34
    assert result["path"] == ".zbtools/plans/p.md"
    assert cli("save_plan_append", "--name", "p", "--content", "", "--text").out.startswith(
        "appended to plan p (.zbtools/plans/p.md)")


def test_save_plan_append_keeps_a_crlf_plan_crlf(ws: Path, cli: CliRunner) -> None:
    ok(cli("save_plan", stdin={"name": "p", "content": "a\r\n"}))
    ok(cli("save_plan_append", stdin={"name": "p", "content": "b\nc\n"}))
    assert (ws / PLANS / "p.md").read_bytes() == b"a\r\nb\r\nc\r\n"


def test_save_plan_append_warns_when_the_chunk_continues_the_last_line(
        ws: Path, cli: CliRunner) -> None:
    ok(cli("save_plan", stdin={"name": "p", "content": "no newline"}))
    call = cli("save_plan_append", stdin={"name": "p", "content": " more"})
    assert call.json["warnings"]


def test_save_plan_append_to_a_missing_plan_is_not_found(ws: Path, cli: CliRunner) -> None:
    call = cli("save_plan_append", stdin={"name": "typo", "content": "x"})
    assert call.code == 1
    assert call.error["code"] == "not_found"
    assert "save_plan" in call.error["hint"]
    assert not (ws / ".zbtools").exists()
    ok(cli("save_plan", stdin={"name": "other", "content": ""}))
    assert cli("save_plan_append", stdin={"name": "typo", "content": "x"}).error["code"] == \
        "not_found"
    assert cli("save_plan_append", stdin={"name": "../x", "content": "x"}).code == 2


# ---------------------------------------------------------------------------------------------
# update_plan and get_plan


def test_update_plan_sets_the_whole_plan_with_stable_short_ids(cli: CliRunner) -> None:
    result = ok(cli("update_plan", stdin={"steps": [
        {"title": "Read the code", "status": "completed"},
        {"title": "Write tests", "status": "in_progress"},
        {"title": "Ship"}]}))
    assert steps(result) == [("s1", "Read the code", "completed"),
                             ("s2", "Write tests", "in_progress"), ("s3", "Ship", "pending")]
    assert [s["index"] for s in result["steps"]] == [1, 2, 3]
    assert (result["total"], result["completed"], result["pending"]) == (3, 1, 1)
    assert result["in_progress"] == "s2"
    assert ok(cli("get_plan")) == result


@pytest.mark.parametrize("steps_key,title_key", [("steps", "title"), ("plan", "step"),
                                                 ("todos", "content"), ("items", "text")])
def test_update_plan_accepts_the_codex_and_todo_spellings(
        cli: CliRunner, steps_key: str, title_key: str) -> None:
    result = ok(cli("update_plan", stdin={steps_key: [{title_key: "A", "status": "pending"}]}))
    assert steps(result) == [("s1", "A", "pending")]


def test_a_new_list_keeps_the_ids_of_unchanged_titles_and_never_reuses_ids(
        cli: CliRunner) -> None:
    ok(cli("update_plan", stdin={"steps": [{"title": "A"}, {"title": "B"}]}))
    result = ok(cli("update_plan", stdin={"steps": [{"title": "B", "status": "completed"},
                                                    {"title": "C"}]}))
    assert steps(result) == [("s2", "B", "completed"), ("s3", "C", "pending")]
    result = ok(cli("update_plan", stdin={"steps": [{"title": "A"}, {"title": "x", "id": "s9"},
                                                    {"title": "y"}]}))
    assert [s[0] for s in steps(result)] == ["s4", "s9", "s5"]


def test_single_steps_are_updated_by_index_or_id(cli: CliRunner) -> None:
    ok(cli("update_plan", stdin={"steps": [{"title": "A"}, {"title": "B"}, {"title": "C"}]}))
    ok(cli("update_plan", "--index", "1", "--status", "completed"))
    ok(cli("update_plan", stdin={"id": "s2", "status": "in_progress", "title": "B'"}))
    result = ok(cli("update_plan", stdin={"updates": [
        {"id": "s2", "status": "completed"}, {"index": 3, "status": "in_progress"}]}))
    assert steps(result) == [("s1", "A", "completed"), ("s2", "B'", "completed"),
                             ("s3", "C", "in_progress")]


@pytest.mark.parametrize("title_key", ["title", "step", "content", "text"])
def test_a_step_update_accepts_every_title_spelling(cli: CliRunner, title_key: str) -> None:
    ok(cli("update_plan", stdin={"steps": [{"title": "A"}]}))
    result = ok(cli("update_plan", stdin={"updates": [{"id": "s1", title_key: "B"}]}))
    assert steps(result) == [("s1", "B", "pending")]


def test_at_most_one_step_may_be_in_progress_and_the_error_says_so(cli: CliRunner) -> None:
    call = cli("update_plan", stdin={"steps": [{"title": "A", "status": "in_progress"},
                                               {"title": "B", "status": "in_progress"}]})
    assert call.code == 2
    assert "at most one step may be in_progress" in call.error["message"]
    assert call.error["details"]["in_progress"] == ["s1", "s2"]
    ok(cli("update_plan", stdin={"steps": [{"title": "A", "status": "in_progress"},
                                           {"title": "B"}]}))
    call = cli("update_plan", stdin={"index": 2, "status": "in_progress"})
    assert call.error["code"] == "invalid_arguments"
    assert "complete the current step" in call.error["hint"]
    assert ok(cli("get_plan"))["in_progress"] == "s1", "a refused update changes nothing"


def test_an_update_naming_no_step_is_unknown_id_listing_the_valid_ones(
        cli: CliRunner) -> None:
    ok(cli("update_plan", stdin={"steps": [{"title": "A"}]}))
    for request in ({"id": "s7", "status": "completed"}, {"index": 2, "status": "completed"}):
        call = cli("update_plan", stdin=request)
        assert call.code == 1
        assert call.error["code"] == "unknown_id"
        assert call.error["details"]["ids"] == ["s1"]


@pytest.mark.parametrize("request_", [
    {},
    {"steps": [{"title": "A"}], "index": 1, "status": "completed"},
    {"steps": [{"title": "A"}], "updates": []},
    {"index": 1},
    {"updates": [{"status": "completed"}]},
    {"updates": [{"index": 1, "id": "s1", "status": "completed"}]},
    {"steps": [{"title": "  "}]},
    {"steps": [{"title": "A", "id": "x"}, {"title": "B", "id": "x"}]},
    {"steps": [{"title": "A", "id": ""}]},
    {"steps": [{"title": "A", "status": "done"}]},
    {"steps": [{"title": "A"}], "updates": [{"index": 0, "status": "pending"}]},
])
def test_malformed_plan_updates_are_invalid_arguments(cli: CliRunner,
                                                      request_: dict[str, Any]) -> None:
    ok(cli("update_plan", stdin={"steps": [{"title": "keep"}]}))
    call = cli("update_plan", stdin=request_)
    assert call.code == 2
    assert call.error["code"] == "invalid_arguments"
    assert steps(ok(cli("get_plan"))) == [("s1", "keep", "pending")]


def test_an_explanation_is_kept_and_an_empty_one_clears_it(cli: CliRunner) -> None:
    ok(cli("update_plan", stdin={"steps": [{"title": "A"}], "explanation": "first cut"}))
    assert ok(cli("get_plan"))["explanation"] == "first cut"
    ok(cli("update_plan", stdin={"note": "revised"}))
    assert ok(cli("get_plan"))["explanation"] == "revised"
    ok(cli("update_plan", stdin={"explanation": ""}))
    assert ok(cli("get_plan"))["explanation"] is None


def test_an_empty_list_clears_the_plan(cli: CliRunner) -> None:
    ok(cli("update_plan", stdin={"steps": [{"title": "A"}]}))
    assert ok(cli("update_plan", stdin={"steps": []}))["total"] == 0


def test_get_plan_without_a_plan_is_empty(cli: CliRunner) -> None:
    result = ok(cli("get_plan"))
    assert (result["steps"], result["total"], result["in_progress"]) == ([], 0, None)
    assert cli("get_plan", "--text").out == "no plan yet (update_plan sets one)\n"


def test_the_text_rendering_is_a_checklist(cli: CliRunner) -> None:
    ok(cli("update_plan", stdin={"explanation": "ship 1.0", "steps": [
        {"title": "Read", "status": "completed"}, {"title": "Write", "status": "in_progress"},
        {"title": "Ship"}]}))
    expected = "plan: 1/3 completed\nship 1.0\n1. [x] Read\n2. [~] Write\n3. [ ] Ship\n"
    assert cli("get_plan", "--text").out == expected
    assert cli("update_plan", "--index", "3", "--title", "Ship", "--text").out == expected


def test_human_output_renders_the_checklist_with_rich_marks(ws: Path, cli: CliRunner) -> None:
    ok(cli("update_plan", stdin={"explanation": "why", "steps": [
        {"title": "Read", "status": "completed"}, {"title": "Write", "status": "in_progress"},
        {"title": "Ship"}]}))
    call = run_inprocess(["get_plan", "--human"], workspace=ws)
    assert call.code == 0
    lines = call.out.splitlines()
    assert lines[0] == "plan 1/3 completed" and lines[1] == "why"
    assert lines[2:] == ["  1. ✔ Read", "  2. ▶ Write", "  3. ○ Ship"]  # not the [x] text


def test_the_live_plan_lives_outside_the_workspace_and_per_workspace(
        ws: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    before = snapshot(ws)
    ok(run_inprocess(["update_plan", "--args", '{"steps": [{"title": "A"}]}'], workspace=ws))
    assert snapshot(ws) == before
    assert ok(run_inprocess(["get_plan"], workspace=other))["total"] == 0
    assert ok(run_inprocess(["get_plan"], workspace=ws))["total"] == 1


def plan_state(tmp_path: Path) -> Path:
    folders = list((tmp_path / "state").iterdir())
    assert len(folders) == 1
    return folders[0] / "plan.json"


@pytest.mark.parametrize("content", [b"\x00\x01", b'{"version": 2, "kind": "plan"}',
                                     b'{"version": 1, "kind": "plan", "steps": [{"id": 1}]}',
                                     b'{"version": 1, "kind": "plan", "next_id": "x"}',
                                     b'{"version": 1, "kind": "plan", "explanation": 3}'])
def test_a_corrupt_or_future_plan_state_is_reported_and_never_overwritten(
        cli: CliRunner, tmp_path: Path, content: bytes) -> None:
    ok(cli("update_plan", stdin={"steps": [{"title": "A"}]}))
    path = plan_state(tmp_path)
    path.write_bytes(content)
    for call in (cli("get_plan"), cli("update_plan", stdin={"steps": [{"title": "B"}]})):
        assert call.code == 1
        assert call.error["code"] == "state_corrupt"
    assert path.read_bytes() == content


def test_the_plan_state_file_is_versioned_json(cli: CliRunner, tmp_path: Path) -> None:
    ok(cli("update_plan", stdin={"steps": [{"title": "A"}]}))
    doc = json.loads(plan_state(tmp_path).read_text())
    assert (doc["version"], doc["kind"], doc["next_id"]) == (1, "plan", 2)

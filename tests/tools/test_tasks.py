"""task (docs/internals/sources.md#fiz): create, update, get and list subtasks; persisted per
workspace."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CliRunner, run_inprocess, snapshot
from tests.tools._mutate import ok


def create(cli: CliRunner, title: str, **extra: Any) -> dict[str, Any]:
    task = ok(cli("task", stdin={"operation": "create", "title": title, **extra}))["task"]
    assert isinstance(task, dict)
    return task


def test_create_returns_the_new_task_with_a_short_id(cli: CliRunner) -> None:
    result = ok(cli("task", stdin={"operation": "create", "title": "Write the parser",
                                   "description": "with tests"}))
    assert (result["operation"], result["tasks"], result["counts"]) == ("create", None, None)
    task = result["task"]
    assert (task["id"], task["title"], task["description"], task["status"]) == (
        "t1", "Write the parser", "with tests", "pending")
    assert task["created_at"] == task["updated_at"]


def test_ids_are_sequential_unique_and_stable(cli: CliRunner) -> None:
    ids = [create(cli, f"task {i}")["id"] for i in range(4)]
    assert ids == ["t1", "t2", "t3", "t4"]
    ok(cli("task", stdin={"operation": "update", "id": "t2", "status": "completed"}))
    assert ok(cli("task", stdin={"operation": "get", "id": "t2"}))["task"]["title"] == "task 1"
    assert create(cli, "later")["id"] == "t5"


def test_create_may_set_a_status(cli: CliRunner) -> None:
    assert create(cli, "now", status="in_progress")["status"] == "in_progress"


def test_update_changes_status_title_and_description(cli: CliRunner) -> None:
    create(cli, "draft")
    task = ok(cli("task", stdin={"operation": "update", "id": "t1", "status": "in_progress",
                                 "title": "final", "description": "notes"}))["task"]
    assert (task["status"], task["title"], task["description"]) == (
        "in_progress", "final", "notes")
    assert task["updated_at"] >= task["created_at"]


def test_a_bare_number_names_the_task(cli: CliRunner) -> None:
    create(cli, "a")
    assert ok(cli("task", "--operation", "get", "--id", "1"))["task"]["id"] == "t1"
    assert ok(cli("task", "--operation", "get", "--id", "T1"))["task"]["id"] == "t1"


@pytest.mark.parametrize("op_key", ["operation", "op", "action"])
def test_every_alias_is_accepted(cli: CliRunner, op_key: str) -> None:
    task = ok(cli("task", stdin={op_key: "create", "subject": "x"}))["task"]
    assert ok(cli("task", stdin={op_key: "get", "task_id": task["id"]}))["task"]["title"] == "x"


def test_list_returns_every_task_or_those_with_a_status(cli: CliRunner) -> None:
    for title, status in (("a", "pending"), ("b", "completed"), ("c", "in_progress"),
                          ("d", "completed")):
        create(cli, title, status=status)
    everything = ok(cli("task", stdin={"operation": "list"}))
    assert [t["title"] for t in everything["tasks"]] == ["a", "b", "c", "d"]
    assert everything["counts"] == {"pending": 1, "in_progress": 1, "completed": 2}
    done = ok(cli("task", stdin={"operation": "list", "status": "completed"}))
    assert [t["id"] for t in done["tasks"]] == ["t2", "t4"]
    assert done["counts"] == everything["counts"], "counts cover all tasks"
    assert done["task"] is None


def test_list_with_no_tasks_is_empty(cli: CliRunner) -> None:
    result = ok(cli("task", stdin={"operation": "list"}))
    assert result["tasks"] == []
    assert cli("task", "--operation", "list", "--text").out == "no tasks\n"


def test_the_text_rendering_marks_each_status(cli: CliRunner) -> None:
    assert cli("task", "--operation", "create", "--title", "a", "--text").out == (
        "created t1 [ ] a\n")
    create(cli, "b", status="in_progress")
    create(cli, "c", status="completed", description="done\n")
    assert cli("task", "--operation", "list", "--text").out == (
        "3 task(s) shown (1 pending, 1 in_progress, 1 completed)\n"
        "t1 [ ] a\nt2 [~] b\nt3 [x] c\n")
    assert cli("task", "--operation", "get", "--id", "t3", "--text").out == "t3 [x] c\ndone\n"
    assert cli("task", "--operation", "update", "--id", "t1", "--status", "completed",
               "--text").out == "updated t1 [x] a\n"


@pytest.mark.parametrize("request_,needle", [
    ({"operation": "create"}, "needs a title"),
    ({"operation": "create", "title": "  "}, "title is empty"),
    ({"operation": "create", "title": "x" * 2001}, "longer than"),
    ({"operation": "create", "title": "x", "description": "d" * 70000}, "longer than"),
    ({"operation": "update", "status": "completed"}, "needs the task's id"),
    ({"operation": "update", "id": "t1"}, "needs a new status"),
    ({"operation": "get"}, "needs the task's id"),
    ({"operation": "delete", "id": "t1"}, "must be one of"),
    ({"operation": "update", "id": "t1", "status": "done"}, "must be one of"),
    ({"title": "x"}, "missing required argument operation"),
])
def test_incomplete_or_wrong_requests_are_invalid_arguments(
        cli: CliRunner, request_: dict[str, Any], needle: str) -> None:
    create(cli, "existing")
    call = cli("task", stdin=request_)
    assert call.code == 2
    assert call.error["code"] == "invalid_arguments"
    assert needle in call.error["message"]


def test_an_unknown_id_is_unknown_id_listing_the_valid_ones(cli: CliRunner) -> None:
    assert "no tasks yet" in cli("task", "--operation", "get", "--id", "t1").error["hint"]
    create(cli, "a")
    for op in ("get", "update"):
        call = cli("task", stdin={"operation": op, "id": "t9", "status": "completed"})
        assert call.code == 1
        assert call.error["code"] == "unknown_id"
        assert call.error["details"] == {"ids": ["t1"], "count": 1}


def test_an_id_given_to_create_or_list_is_ignored_with_a_warning(cli: CliRunner) -> None:
    call = cli("task", stdin={"operation": "create", "id": "mine", "title": "x"})
    assert ok(call)["task"]["id"] == "t1"
    assert "ignored" in call.json["warnings"][0]


def test_tasks_persist_per_workspace_outside_it(ws: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    before = snapshot(ws)
    ok(run_inprocess(["task", "--operation", "create", "--title", "here"], workspace=ws))
    assert snapshot(ws) == before
    assert ok(run_inprocess(["task", "--operation", "list"], workspace=other))["tasks"] == []
    listed = ok(run_inprocess(["task", "--operation", "list"], workspace=ws))["tasks"]
    assert [t["title"] for t in listed] == ["here"]


def tasks_state(tmp_path: Path) -> Path:
    folders = list((tmp_path / "state").iterdir())
    assert len(folders) == 1
    return folders[0] / "tasks.json"


@pytest.mark.parametrize("content", [b"", b'{"version": 5, "kind": "tasks"}',
                                     b'{"version": 1, "kind": "tasks", "tasks": [{"id": "t1"}]}',
                                     b'{"version": 1, "kind": "tasks", "next_id": 1.5}'])
def test_a_corrupt_or_future_task_file_is_reported_and_never_overwritten(
        cli: CliRunner, tmp_path: Path, content: bytes) -> None:
    create(cli, "a")
    path = tasks_state(tmp_path)
    path.write_bytes(content)
    for request in ({"operation": "list"}, {"operation": "create", "title": "b"}):
        call = cli("task", stdin=request)
        assert call.code == 1
        assert call.error["code"] == "state_corrupt"
        assert "move it away" in call.error["hint"]
    assert path.read_bytes() == content


def test_the_task_file_is_versioned_json(cli: CliRunner, tmp_path: Path) -> None:
    create(cli, "a")
    doc = json.loads(tasks_state(tmp_path).read_text())
    assert (doc["version"], doc["kind"], doc["next_id"], len(doc["tasks"])) == (1, "tasks", 2, 1)

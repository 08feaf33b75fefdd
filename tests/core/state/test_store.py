"""core/state/store.py: locked, versioned, atomically written state documents; the editor hooks."""

from __future__ import annotations

import errno
import json
import os
import stat
import threading
from pathlib import Path

import pytest

from zbtools.contract import ToolError
from zbtools.core.call.context import Context
from zbtools.core.files.workspace import Workspace
from zbtools.core.state.store import STATE_VERSION, StateFile, on_path_deleted, on_path_moved


@pytest.fixture
def ctx(ws: Path, tmp_path: Path) -> Context:
    return Context(Workspace(str(ws)), state_root=str(tmp_path / "state"))


def state_path(ctx: Context, name: str) -> Path:
    return Path(ctx.state_dir) / f"{name}.json"


def test_a_missing_document_starts_fresh_and_is_written_with_version_and_kind(
        ctx: Context) -> None:
    with StateFile(ctx, "tasks") as state:
        assert state.data == {"version": STATE_VERSION, "kind": "tasks"}
        assert state.existed is False
        state.data["tasks"] = []
        assert state.save() is True
    path = state_path(ctx, "tasks")
    assert json.loads(path.read_text()) == {"version": STATE_VERSION, "kind": "tasks",
                                            "tasks": []}
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_saving_unchanged_data_writes_nothing(ctx: Context) -> None:
    with StateFile(ctx, "plan") as state:
        state.data["steps"] = []
        state.save()
    inode = state_path(ctx, "plan").stat().st_ino
    with StateFile(ctx, "plan") as state:
        assert state.existed is True
        assert state.save() is False
    assert state_path(ctx, "plan").stat().st_ino == inode


def test_writes_replace_the_file_atomically_and_leave_no_temp_files(ctx: Context) -> None:
    for i in range(3):
        with StateFile(ctx, "tasks") as state:
            state.data["n"] = i
            state.save()
    names = sorted(os.listdir(ctx.state_dir))
    assert names == ["tasks.json", "tasks.lock"]
    assert json.loads(state_path(ctx, "tasks").read_text())["n"] == 2


@pytest.mark.parametrize("content,why", [
    (b"{not json", "not valid JSON"),
    (b"\xff\xfe", "not valid JSON"),
    (b"[1, 2]", "not a JSON object"),
    (b'{"kind": "tasks"}', "no version"),
    (b'{"version": "1", "kind": "tasks"}', "no version"),
    (b'{"version": 0, "kind": "tasks"}', "unknown version"),
    (b'{"version": 1, "kind": "editor"}', "'editor' state"),
])
def test_a_corrupt_document_is_state_corrupt_and_left_untouched(
        ctx: Context, content: bytes, why: str) -> None:
    path = state_path(ctx, "tasks")
    path.write_bytes(content)
    with pytest.raises(ToolError) as caught, StateFile(ctx, "tasks") as state:
        state.save()  # pragma: no cover - never reached
    assert caught.value.code == "state_corrupt"
    assert why in caught.value.message
    assert str(path) in caught.value.message
    assert "move it away" in caught.value.hint
    assert caught.value.exit_code == 1
    assert path.read_bytes() == content


def test_a_document_from_a_newer_zbtools_is_refused_not_downgraded(ctx: Context) -> None:
    path = state_path(ctx, "plan")
    path.write_text('{"version": 99, "kind": "plan", "steps": []}')
    with pytest.raises(ToolError) as caught:
        StateFile(ctx, "plan").__enter__()
    assert caught.value.code == "state_corrupt"
    assert "newer" in caught.value.message
    assert path.read_text() == '{"version": 99, "kind": "plan", "steps": []}'


def test_a_corrupt_document_does_not_leave_its_lock_held(ctx: Context) -> None:
    state_path(ctx, "tasks").write_text("garbage")
    for _ in range(2):  # a held lock would block the second attempt forever
        with pytest.raises(ToolError):
            StateFile(ctx, "tasks").__enter__()
    state_path(ctx, "tasks").unlink()
    with StateFile(ctx, "tasks") as state:
        assert state.data["kind"] == "tasks"


def test_a_shared_reader_cannot_save(ctx: Context) -> None:
    with StateFile(ctx, "tasks", shared=True) as state, pytest.raises(RuntimeError):
        state.save()


def test_parallel_read_modify_writes_lose_no_update(ctx: Context) -> None:
    def bump() -> None:
        for _ in range(25):
            with StateFile(ctx, "tasks") as state:
                state.data["n"] = state.data.get("n", 0) + 1
                state.save()

    threads = [threading.Thread(target=bump) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert json.loads(state_path(ctx, "tasks").read_text())["n"] == 200


def test_two_workspaces_have_separate_state_directories(ws: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    root = str(tmp_path / "state")
    one = Context(Workspace(str(ws)), state_root=root)
    two = Context(Workspace(str(other)), state_root=root)
    assert one.state_dir != two.state_dir
    with StateFile(one, "tasks") as state:
        state.data["n"] = 1
        state.save()
    with StateFile(two, "tasks") as state:
        assert "n" not in state.data


def editor_doc(ctx: Context, tabs: list[str], active: str | None) -> None:
    doc = {"version": 1, "kind": "editor", "active": active,
           "tabs": [{"path": p, "cursor": [1, 1], "selection": None} for p in tabs]}
    state_path(ctx, "editor").write_text(json.dumps(doc))


def editor_paths(ctx: Context) -> tuple[list[str], str | None]:
    doc = json.loads(state_path(ctx, "editor").read_text())
    return [t["path"] for t in doc["tabs"]], doc["active"]


def test_the_hooks_touch_nothing_without_editor_state(ctx: Context) -> None:
    on_path_moved(ctx, "a", "b")
    on_path_deleted(ctx, "a")
    assert not state_path(ctx, "editor").exists()
    assert ctx.warnings == []


def test_a_moved_file_or_directory_is_followed_by_its_open_files(ctx: Context) -> None:
    editor_doc(ctx, ["a.py", "src/x.py", "src/y.py", "srcfoo.py"], "src/x.py")
    on_path_moved(ctx, "src", "lib")
    assert editor_paths(ctx) == (["a.py", "lib/x.py", "lib/y.py", "srcfoo.py"], "lib/x.py")
    on_path_moved(ctx, "a.py", "b.py")
    assert editor_paths(ctx) == (["b.py", "lib/x.py", "lib/y.py", "srcfoo.py"], "lib/x.py")


def test_a_file_moved_over_an_open_one_replaces_its_tab(ctx: Context) -> None:
    """The path stays open (and active if it was), as in an editor; edits at its old
    positions are still re-anchored against the new content or refused as stale."""
    editor_doc(ctx, ["a.py", "b.py"], "b.py")
    on_path_moved(ctx, "a.py", "b.py")
    assert editor_paths(ctx) == (["b.py"], "b.py")
    editor_doc(ctx, ["a.py", "b.py"], "a.py")
    on_path_moved(ctx, "a.py", "b.py")
    assert editor_paths(ctx) == (["b.py"], "b.py")


def test_a_deleted_file_or_directory_closes_its_tabs_and_leaves_none_active(
        ctx: Context) -> None:
    editor_doc(ctx, ["a.py", "d/x.py", "d/y.py", "dd.py"], "d/y.py")
    on_path_deleted(ctx, "d")
    assert editor_paths(ctx) == (["a.py", "dd.py"], None)
    editor_doc(ctx, ["a.py", "b.py"], "a.py")
    on_path_deleted(ctx, "b.py")
    assert editor_paths(ctx) == (["a.py"], "a.py")


def test_a_corrupt_editor_state_makes_the_hook_warn_not_fail(ctx: Context) -> None:
    state_path(ctx, "editor").write_text("{oops")
    on_path_deleted(ctx, "a.py")
    assert state_path(ctx, "editor").read_text() == "{oops"
    assert len(ctx.warnings) == 1 and "not valid JSON" in ctx.warnings[0]


def test_a_malformed_editor_state_is_left_to_the_editor_tools(ctx: Context) -> None:
    state_path(ctx, "editor").write_text('{"version": 1, "kind": "editor", "tabs": 3}')
    on_path_moved(ctx, "a", "b")
    assert json.loads(state_path(ctx, "editor").read_text())["tabs"] == 3


def test_twenty_parallel_processes_lose_no_update_and_leave_valid_state(
        ws: Path, tmp_path: Path) -> None:
    import subprocess
    import sys

    from tests.conftest import REPO, run_inprocess

    names = [f"f{i}.txt" for i in range(7)]
    for name in names:
        (ws / name).write_text(f"{name}\n")
    plan = {"steps": [{"title": f"step {i}"} for i in range(1, 8)]}
    assert run_inprocess(["update_plan", "--args", json.dumps(plan)], workspace=ws).code == 0
    calls = ([["open_file", "--path", name] for name in names]
             + [["task", "--operation", "create", "--title", f"task {i}"] for i in range(7)]
             + [["update_plan", "--index", str(i), "--status", "completed"]
                for i in range(1, 7)])
    assert len(calls) == 20
    env = dict(os.environ, PYTHONPATH=str(REPO))
    children = [subprocess.Popen([sys.executable, "-m", "zbtools", *argv], cwd=ws, env=env,
                                 stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE) for argv in calls]
    for child in children:
        out, err = child.communicate(timeout=120)
        assert child.returncode == 0, (out, err)
        assert json.loads(out)["ok"] is True

    editor = json.loads(run_inprocess(["get_editor_state"], workspace=ws).out)["result"]
    assert sorted(editor["open_files"]) == names
    assert editor["active_file"] in names
    tasks = json.loads(run_inprocess(["task", "--operation", "list"], workspace=ws).out)
    listed = tasks["result"]["tasks"]
    assert sorted(t["id"] for t in listed) == sorted(f"t{i}" for i in range(1, 8))
    assert sorted(t["title"] for t in listed) == [f"task {i}" for i in range(7)]
    steps = json.loads(run_inprocess(["get_plan"], workspace=ws).out)["result"]["steps"]
    assert [s["status"] for s in steps] == ["completed"] * 6 + ["pending"]
    (folder,) = (tmp_path / "state").iterdir()
    for name in ("editor", "tasks", "plan"):
        doc = json.loads((folder / f"{name}.json").read_text())
        assert (doc["version"], doc["kind"]) == (STATE_VERSION, name)
    assert not [n for n in os.listdir(folder) if ".tmp-" in n]


def test_an_unwritable_state_directory_is_io_error(ws: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_text("a file where the state root should be")
    ctx = Context(Workspace(str(ws)), state_root=str(blocker))
    with pytest.raises(ToolError) as caught:
        StateFile(ctx, "tasks")
    assert caught.value.code == "io_error"
    assert "ZBTOOLS_STATE_DIR" in caught.value.hint


def test_a_lock_that_cannot_be_taken_is_io_error(ctx: Context,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.tools._mutate import fail_with

    fail_with(monkeypatch, "open", errno.EACCES, when=lambda p, *a, **k: str(p).endswith(".lock"))
    with pytest.raises(ToolError) as caught:
        StateFile(ctx, "tasks").__enter__()
    assert caught.value.code == "io_error"


def test_a_failed_write_is_io_error_and_keeps_the_old_document(
        ctx: Context, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.tools._mutate import fail_with

    with StateFile(ctx, "tasks") as state:
        state.data["n"] = 1
        state.save()
    fail_with(monkeypatch, "replace", errno.ENOSPC)
    with StateFile(ctx, "tasks") as state, pytest.raises(ToolError) as caught:
        state.data["n"] = 2
        state.save()
    assert caught.value.code == "io_error"
    assert json.loads(state_path(ctx, "tasks").read_text())["n"] == 1
    assert sorted(os.listdir(ctx.state_dir)) == ["tasks.json", "tasks.lock"]

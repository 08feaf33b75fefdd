"""delete_file: files, symlinks (never their targets) and, with recursive, whole directories."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest

from tests.conftest import CliRunner, snapshot
from tests.tools._mutate import fail_with, leftovers, make_deep_tree, ok, open_files_limit


def test_a_file_is_deleted(ws: Path, cli: CliRunner) -> None:
    (ws / "temp").mkdir()
    (ws / "temp" / "old_file.txt").write_text("12345")
    call = cli("delete_file", stdin={"path": "temp/old_file.txt"})
    assert call.code == 0
    assert call.result == {"path": "temp/old_file.txt", "type": "file", "files_deleted": 1,
                           "directories_deleted": 0, "symlinks_deleted": 0, "bytes_freed": 5}
    assert not (ws / "temp" / "old_file.txt").exists()
    assert (ws / "temp").is_dir()


@pytest.mark.parametrize("alias", ["path", "file_path", "filepath", "filename"])
def test_every_path_alias_names_what_to_delete(ws: Path, cli: CliRunner, alias: str) -> None:
    (ws / "f.txt").write_text("x")
    ok(cli("delete_file", stdin={alias: "f.txt"}))
    assert not (ws / "f.txt").exists()


def test_flags_and_args_work_like_stdin(ws: Path, cli: CliRunner) -> None:
    (ws / "a").write_text("x")
    (ws / "d").mkdir()
    (ws / "d" / "f").write_text("x")
    ok(cli("delete_file", "--path", "a"))
    ok(cli("delete_file", "--args", json.dumps({"path": "d"}), "--recursive"))
    assert snapshot(ws) == {}


def test_the_real_subprocess_deletes(ws: Path, proc: CliRunner) -> None:
    (ws / "f.txt").write_text("x")
    call = proc("delete_file", "--path", "f.txt")
    assert call.code == 0, call
    assert not (ws / "f.txt").exists()


def test_a_missing_path_is_not_found(ws: Path, cli: CliRunner) -> None:
    (ws / "keep.txt").write_text("x")
    before = snapshot(ws)
    for path in ("nope.txt", "no/such/dir.txt"):
        call = cli("delete_file", stdin={"path": path})
        assert call.code == 1
        assert call.error["code"] == "not_found"
    assert snapshot(ws) == before


def test_a_special_file_is_deleted_like_a_file(ws: Path, cli: CliRunner) -> None:
    os.mkfifo(ws / "pipe")
    result = cli("delete_file", stdin={"path": "pipe"}).result
    assert result["type"] == "fifo"
    assert not os.path.lexists(ws / "pipe")


# --- symlinks --------------------------------------------------------------------------------


def test_a_symlink_is_deleted_and_its_target_kept(ws: Path, cli: CliRunner) -> None:
    (ws / "target.txt").write_text("keep\n")
    (ws / "link").symlink_to("target.txt")
    result = cli("delete_file", stdin={"path": "link"}).result
    assert result["type"] == "symlink"
    assert result["symlinks_deleted"] == 1
    assert result["files_deleted"] == 0
    assert not os.path.lexists(ws / "link")
    assert (ws / "target.txt").read_text() == "keep\n"


def test_a_symlink_to_a_directory_deleted_recursively_removes_only_the_link(
        ws: Path, cli: CliRunner) -> None:
    (ws / "data").mkdir()
    (ws / "data" / "precious.txt").write_text("keep\n")
    (ws / "link").symlink_to("data")
    result = cli("delete_file", stdin={"path": "link", "recursive": True}).result
    assert result["type"] == "symlink"
    assert not os.path.lexists(ws / "link")
    assert (ws / "data" / "precious.txt").read_text() == "keep\n"


def test_a_symlink_to_outside_is_deleted_and_the_outside_file_kept(
        ws: Path, cli: CliRunner) -> None:
    (ws / "out").symlink_to(ws.parent / "outside" / "secret.txt")
    (ws / "outdir").symlink_to(ws.parent / "outside")
    ok(cli("delete_file", stdin={"path": "out"}))
    ok(cli("delete_file", stdin={"path": "outdir", "recursive": True}))
    assert snapshot(ws) == {}
    assert (ws.parent / "outside" / "secret.txt").read_text() == "top secret\n"


def test_a_dangling_symlink_is_deleted(ws: Path, cli: CliRunner) -> None:
    (ws / "dangling").symlink_to("nowhere")
    ok(cli("delete_file", stdin={"path": "dangling"}))
    assert not os.path.lexists(ws / "dangling")


def test_a_path_through_a_symlink_to_outside_is_refused(ws: Path, cli: CliRunner) -> None:
    (ws / "outdir").symlink_to(ws.parent / "outside")
    before = snapshot(ws)
    call = cli("delete_file", stdin={"path": "outdir/secret.txt"})
    assert call.code == 3
    assert call.error["code"] == "outside_workspace"
    assert (ws.parent / "outside" / "secret.txt").exists()
    assert snapshot(ws) == before


@pytest.mark.parametrize("path", ["../outside/secret.txt", "../outside", "/etc/passwd"])
def test_paths_outside_the_workspace_are_refused(ws: Path, cli: CliRunner, path: str) -> None:
    call = cli("delete_file", stdin={"path": path, "recursive": True})
    assert call.code == 3
    assert call.error["code"] == "outside_workspace"
    assert (ws.parent / "outside" / "secret.txt").read_text() == "top secret\n"


# --- directories -----------------------------------------------------------------------------


def test_a_directory_without_recursive_is_refused_with_its_entry_count(
        ws: Path, cli: CliRunner) -> None:
    (ws / "d").mkdir()
    for name in ("a", "b", "c"):
        (ws / "d" / name).write_text(name)
    before = snapshot(ws)
    call = cli("delete_file", stdin={"path": "d"})
    assert call.code == 1
    assert call.error["code"] == "is_directory"
    assert call.error["details"]["entries"] == 3
    assert "3 entries" in call.error["message"]
    assert "recursive" in call.error["hint"]
    assert snapshot(ws) == before


def test_even_an_empty_directory_needs_recursive(ws: Path, cli: CliRunner) -> None:
    (ws / "empty").mkdir()
    call = cli("delete_file", stdin={"path": "empty"})
    assert call.error["code"] == "is_directory"
    assert call.error["details"]["entries"] == 0
    assert (ws / "empty").is_dir()
    assert cli("delete_file", stdin={"path": "empty", "recursive": True}).result[
        "directories_deleted"] == 1
    assert not (ws / "empty").exists()


def test_a_tree_is_deleted_recursively_and_counted(ws: Path, cli: CliRunner) -> None:
    (ws / "keep.txt").write_text("keep")
    tree = ws / "tree"
    (tree / "a" / "b").mkdir(parents=True)
    (tree / "a" / "empty").mkdir()
    (tree / "one.txt").write_text("1")
    (tree / "a" / "two.txt").write_text("22")
    (tree / "a" / "b" / "three.txt").write_text("333")
    (tree / "a" / "b" / "ro.txt").write_text("4444")
    (tree / "a" / "b" / "ro.txt").chmod(0o444)
    (tree / "a" / "link").symlink_to("two.txt")
    os.mkfifo(tree / "a" / "pipe")
    result = cli("delete_file", stdin={"path": "tree", "recursive": True}).result
    assert result == {"path": "tree", "type": "directory", "files_deleted": 5,
                      "directories_deleted": 4, "symlinks_deleted": 1, "bytes_freed": 10}
    assert sorted(os.listdir(ws)) == ["keep.txt"]


def test_symlinks_inside_a_deleted_tree_pointing_outside_leave_the_outside_alone(
        ws: Path, cli: CliRunner) -> None:
    outside = ws.parent / "outside"
    (outside / "dir").mkdir()
    (outside / "dir" / "file.txt").write_text("outside file\n")
    before_outside = snapshot(outside)
    tree = ws / "tree"
    (tree / "sub").mkdir(parents=True)
    (tree / "to_file").symlink_to(outside / "secret.txt")
    (tree / "sub" / "to_dir").symlink_to(outside / "dir")
    (tree / "sub" / "relative").symlink_to("../../../outside")
    result = cli("delete_file", stdin={"path": "tree", "recursive": True}).result
    assert result["symlinks_deleted"] == 3
    assert not tree.exists()
    assert snapshot(outside) == before_outside


def test_a_2000_level_deep_tree_is_deleted_within_a_small_open_files_limit(
        ws: Path, cli: CliRunner) -> None:
    make_deep_tree(ws, "deep", 2000)
    with open_files_limit(256):
        call = cli("delete_file", stdin={"path": "deep", "recursive": True})
    assert call.code == 0, call.json
    assert call.result["directories_deleted"] == 2001
    assert call.result["files_deleted"] == 1
    assert snapshot(ws) == {}


def test_a_wide_tree_is_deleted(ws: Path, cli: CliRunner) -> None:
    for i in range(300):
        (ws / "wide" / f"d{i:03}").mkdir(parents=True)
        (ws / "wide" / f"d{i:03}" / "f").write_text("x")
    with open_files_limit(128):
        result = cli("delete_file", stdin={"path": "wide", "recursive": True}).result
    assert result["directories_deleted"] == 301
    assert result["files_deleted"] == 300
    assert snapshot(ws) == {}


def test_a_directory_named_through_a_symlinked_parent_is_deleted(
        ws: Path, cli: CliRunner) -> None:
    (ws / "real" / "victim").mkdir(parents=True)
    (ws / "alias").symlink_to("real")
    result = cli("delete_file", stdin={"path": "alias/victim", "recursive": True}).result
    assert result["path"] == "real/victim"
    assert not (ws / "real" / "victim").exists()
    assert (ws / "alias").is_symlink()


def test_a_failure_half_way_restores_what_remains_under_its_name(
        ws: Path, cli: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    tree = ws / "tree"
    (tree / "sub").mkdir(parents=True)
    (tree / "a.txt").write_text("a")
    (tree / "sub" / "b.txt").write_text("b")
    fail_with(monkeypatch, "rmdir", errno.EIO)
    call = cli("delete_file", stdin={"path": "tree", "recursive": True})
    monkeypatch.undo()
    assert call.code == 1
    assert call.error["code"] == "io_error"
    assert "restored" in call.error["message"]
    assert call.error["details"]["files_deleted"] == 2
    assert sorted(os.listdir(ws)) == ["tree"]  # no hidden .zbdel- leftovers
    assert sorted(os.listdir(tree)) == ["sub"]
    assert leftovers(ws) == []


def test_a_long_multibyte_directory_name_is_deleted(ws: Path, cli: CliRunner) -> None:
    name = "日" * 80
    (ws / name).mkdir()
    (ws / name / "f").write_text("x")
    ok(cli("delete_file", stdin={"path": name, "recursive": True}))
    assert snapshot(ws) == {}


# --- the workspace root ----------------------------------------------------------------------


@pytest.mark.parametrize("spelling", [".", "", "./", "a/..", "a/../.", "ROOT", "ROOT/",
                                      "ROOT//", "ROOT/a/.."])
def test_the_workspace_root_is_never_deleted(ws: Path, cli: CliRunner, spelling: str) -> None:
    (ws / "a").mkdir()
    (ws / "a" / "f.txt").write_text("x")
    before = snapshot(ws)
    path = spelling.replace("ROOT", str(ws))
    call = cli("delete_file", stdin={"path": path, "recursive": True})
    assert call.code == 3, call.json
    assert call.error["code"] == "workspace_root_protected"
    assert snapshot(ws) == before


def test_a_symlink_to_the_root_is_deleted_as_a_link(ws: Path, cli: CliRunner) -> None:
    (ws / "f.txt").write_text("x")
    (ws / "self").symlink_to(".")
    ok(cli("delete_file", stdin={"path": "self", "recursive": True}))
    assert snapshot(ws) == {"f.txt": ("file", 0o644, b"x")}


def test_the_root_is_protected_in_a_real_subprocess(ws: Path, proc: CliRunner) -> None:
    (ws / "f.txt").write_text("x")
    call = proc("delete_file", "--path", ".", "--recursive")
    assert call.code == 3
    assert call.error["code"] == "workspace_root_protected"
    assert (ws / "f.txt").exists()


def test_an_entry_the_system_refuses_to_remove_is_permission_denied(
        ws: Path, cli: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    (ws / "f.txt").write_text("x")
    before = snapshot(ws)
    fail_with(monkeypatch, "unlink", errno.EPERM)
    call = cli("delete_file", stdin={"path": "f.txt"})
    assert call.code == 1
    assert call.error["code"] == "permission_denied"
    assert snapshot(ws) == before

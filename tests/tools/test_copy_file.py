"""copy_file: copy a file or a whole directory tree inside the workspace, never clobbering."""

from __future__ import annotations

import errno
import json
import os
import stat
from pathlib import Path

import pytest

from tests.conftest import CliRunner, snapshot
from tests.tools._mutate import fail_with, leftovers, make_deep_tree, ok, open_files_limit

SOURCE_ALIASES = ["source", "src", "from_path", "old_path"]
DESTINATION_ALIASES = ["destination", "dest", "dst", "target", "to_path", "new_path"]


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


# --- files -----------------------------------------------------------------------------------


def test_a_file_is_copied_with_its_mode(ws: Path, cli: CliRunner) -> None:
    (ws / "templates").mkdir()
    (ws / "templates" / "base.html").write_text("<html></html>\n")
    (ws / "templates" / "base.html").chmod(0o640)
    call = cli("copy_file", stdin={"source": "templates/base.html",
                                   "destination": "src/templates/base.html"})
    assert call.code == 0
    assert call.result == {
        "source": "templates/base.html", "destination": "src/templates/base.html",
        "type": "file", "overwritten": False, "files_copied": 1, "directories_copied": 0,
        "symlinks_copied": 0, "bytes_copied": 14, "skipped": [],
        "parents_created": ["src", "src/templates"]}
    copy = ws / "src" / "templates" / "base.html"
    assert copy.read_text() == "<html></html>\n"
    assert mode_of(copy) == 0o640
    assert (ws / "templates" / "base.html").read_text() == "<html></html>\n"
    assert leftovers(ws) == []


def test_an_executable_stays_executable_whatever_the_umask(ws: Path, cli: CliRunner) -> None:
    (ws / "run.sh").write_text("#!/bin/sh\n")
    (ws / "run.sh").chmod(0o775)
    old = os.umask(0o077)
    try:
        ok(cli("copy_file", stdin={"source": "run.sh", "destination": "run2.sh"}))
    finally:
        os.umask(old)
    assert mode_of(ws / "run2.sh") == 0o775


def test_binary_content_is_copied_byte_for_byte(ws: Path, cli: CliRunner) -> None:
    data = bytes(range(256)) * 50
    (ws / "blob").write_bytes(data)
    result = cli("copy_file", stdin={"source": "blob", "destination": "blob2"}).result
    assert (ws / "blob2").read_bytes() == data
    assert result["bytes_copied"] == len(data)


@pytest.mark.parametrize("alias", SOURCE_ALIASES)
def test_every_source_alias_names_the_source(ws: Path, cli: CliRunner, alias: str) -> None:
    (ws / "a.txt").write_text("x")
    ok(cli("copy_file", stdin={alias: "a.txt", "destination": "b.txt"}))
    assert (ws / "b.txt").read_text() == "x"


@pytest.mark.parametrize("alias", DESTINATION_ALIASES)
def test_every_destination_alias_names_the_copy(ws: Path, cli: CliRunner, alias: str) -> None:
    (ws / "a.txt").write_text("x")
    ok(cli("copy_file", stdin={"source": "a.txt", alias: "b.txt"}))
    assert (ws / "b.txt").read_text() == "x"


def test_flags_and_args_work_like_stdin(ws: Path, cli: CliRunner) -> None:
    (ws / "a").write_text("x")
    ok(cli("copy_file", "--src", "a", "--dest", "b"))
    ok(cli("copy_file", "--args", json.dumps({"from_path": "a", "new_path": "c"})))
    assert sorted(os.listdir(ws)) == ["a", "b", "c"]


def test_the_real_subprocess_copies(ws: Path, proc: CliRunner) -> None:
    (ws / "d").mkdir()
    (ws / "d" / "f").write_text("x")
    call = proc("copy_file", stdin={"source": "d", "destination": "e"})
    assert call.code == 0, call
    assert (ws / "e" / "f").read_text() == "x"


def test_a_trailing_slash_copies_into_the_existing_directory(ws: Path, cli: CliRunner) -> None:
    (ws / "a.txt").write_text("x")
    (ws / "dir").mkdir()
    assert cli("copy_file", stdin={"source": "a.txt", "destination": "dir/"}
               ).result["destination"] == "dir/a.txt"
    (ws / "sub").mkdir()
    (ws / "sub" / "b.txt").write_text("y")
    assert cli("copy_file", stdin={"source": "sub/b.txt", "destination": "."}
               ).result["destination"] == "b.txt"
    assert (ws / "dir" / "a.txt").read_text() == "x"
    assert (ws / "b.txt").read_text() == "y"


def test_an_existing_destination_is_not_replaced_without_overwrite(
        ws: Path, cli: CliRunner) -> None:
    (ws / "a.txt").write_text("a")
    (ws / "b.txt").write_text("b")
    before = snapshot(ws)
    call = cli("copy_file", stdin={"source": "a.txt", "destination": "b.txt"})
    assert call.code == 1
    assert call.error["code"] == "already_exists"
    assert snapshot(ws) == before


def test_overwrite_replaces_a_file_which_keeps_its_own_mode(ws: Path, cli: CliRunner) -> None:
    (ws / "a.txt").write_text("new")
    (ws / "b.txt").write_text("old")
    (ws / "b.txt").chmod(0o600)
    result = cli("copy_file", stdin={"source": "a.txt", "destination": "b.txt",
                                     "overwrite": True}).result
    assert result["overwritten"] is True
    assert (ws / "b.txt").read_text() == "new"
    assert mode_of(ws / "b.txt") == 0o600


def test_overwrite_onto_a_read_only_file_is_refused(ws: Path, cli: CliRunner) -> None:
    (ws / "a.txt").write_text("new")
    (ws / "b.txt").write_text("old")
    (ws / "b.txt").chmod(0o444)
    before = snapshot(ws)
    call = cli("copy_file", stdin={"source": "a.txt", "destination": "b.txt", "overwrite": True})
    assert call.error["code"] == "permission_denied"
    assert snapshot(ws) == before


def test_a_file_is_never_copied_onto_a_directory(ws: Path, cli: CliRunner) -> None:
    (ws / "a.txt").write_text("a")
    (ws / "dir").mkdir()
    before = snapshot(ws)
    call = cli("copy_file", stdin={"source": "a.txt", "destination": "dir", "overwrite": True})
    assert call.error["code"] == "is_directory"
    assert snapshot(ws) == before


def test_a_missing_source_is_not_found(ws: Path, cli: CliRunner) -> None:
    call = cli("copy_file", stdin={"source": "nope", "destination": "x/y"})
    assert call.code == 1
    assert call.error["code"] == "not_found"
    assert snapshot(ws) == {}


def test_copying_a_file_onto_itself_is_an_argument_error(ws: Path, cli: CliRunner) -> None:
    (ws / "a.txt").write_text("x")
    (ws / "alias.txt").symlink_to("a.txt")
    before = snapshot(ws)
    for dest in ("a.txt", "alias.txt", "."):
        call = cli("copy_file", stdin={"source": "a.txt", "destination": dest,
                                       "overwrite": True})
        assert call.code == 2
        assert call.error["code"] == "invalid_arguments"
    assert snapshot(ws) == before


def test_a_special_file_source_is_refused(ws: Path, cli: CliRunner) -> None:
    os.mkfifo(ws / "pipe")
    before = snapshot(ws)
    call = cli("copy_file", stdin={"source": "pipe", "destination": "pipe2"})
    assert call.code == 1
    assert call.error["code"] == "special_file"
    assert snapshot(ws) == before


# --- symlinks as source and destination ------------------------------------------------------


def test_a_symlink_source_is_copied_as_the_file_it_points_to(ws: Path, cli: CliRunner) -> None:
    (ws / "real.txt").write_text("content")
    (ws / "link").symlink_to("real.txt")
    ok(cli("copy_file", stdin={"source": "link", "destination": "copy.txt"}))
    assert not (ws / "copy.txt").is_symlink()
    assert (ws / "copy.txt").read_text() == "content"


def test_a_symlink_source_pointing_outside_is_refused(ws: Path, cli: CliRunner) -> None:
    (ws / "out").symlink_to(ws.parent / "outside" / "secret.txt")
    before = snapshot(ws)
    call = cli("copy_file", stdin={"source": "out", "destination": "loot.txt"})
    assert call.code == 3
    assert call.error["code"] == "outside_workspace"
    assert snapshot(ws) == before


def test_a_symlink_destination_inside_is_written_through(ws: Path, cli: CliRunner) -> None:
    (ws / "a.txt").write_text("new")
    (ws / "real.txt").write_text("old")
    (ws / "link").symlink_to("real.txt")
    call = cli("copy_file", stdin={"source": "a.txt", "destination": "link"})
    assert call.error["code"] == "already_exists"
    result = cli("copy_file", stdin={"source": "a.txt", "destination": "link",
                                     "overwrite": True}).result
    assert result["destination"] == "real.txt"
    assert (ws / "real.txt").read_text() == "new"
    assert (ws / "link").is_symlink()


def test_a_destination_outside_is_refused_and_nothing_is_created_there(
        ws: Path, cli: CliRunner) -> None:
    (ws / "a.txt").write_text("x")
    (ws / "d").mkdir()
    (ws / "out").symlink_to(ws.parent / "outside")
    (ws / "planted").symlink_to(ws.parent / "outside" / "planted.txt")
    before = snapshot(ws)
    for source, dest in (("a.txt", "out/a.txt"), ("a.txt", "planted"), ("d", "out/d"),
                         ("a.txt", "../outside/x"), ("d", "planted")):
        call = cli("copy_file", stdin={"source": source, "destination": dest})
        assert call.code == 3, (source, dest)
        assert call.error["code"] == "outside_workspace"
    assert sorted(os.listdir(ws.parent / "outside")) == ["secret.txt"]
    assert snapshot(ws) == before


# --- directories -----------------------------------------------------------------------------


def make_tree(root: Path) -> None:
    (root / "sub" / "deeper").mkdir(parents=True)
    (root / "empty").mkdir()
    (root / "top.txt").write_text("top\n")
    (root / "sub" / "mid.txt").write_text("mid\n")
    (root / "sub" / "deeper" / "low.bin").write_bytes(b"\x00\x01")
    (root / "sub" / "deeper" / "low.bin").chmod(0o600)
    (root / "sub" / "deeper").chmod(0o750)


def test_a_directory_tree_is_copied_with_nested_files_and_modes(ws: Path, cli: CliRunner) -> None:
    make_tree(ws / "tree")
    result = cli("copy_file", stdin={"source": "tree", "destination": "copy"}).result
    assert result["type"] == "directory"
    assert result["files_copied"] == 3
    assert result["directories_copied"] == 4
    assert result["symlinks_copied"] == 0
    assert result["bytes_copied"] == 10
    assert result["skipped"] == []
    original = snapshot(ws / "tree")
    assert snapshot(ws / "copy") == original
    assert mode_of(ws / "copy" / "sub" / "deeper") == 0o750
    assert leftovers(ws) == []


def test_a_directory_with_a_mode_without_write_or_search_is_copied(
        ws: Path, cli: CliRunner) -> None:
    (ws / "tree" / "locked" / "inner").mkdir(parents=True)
    (ws / "tree" / "locked" / "inner" / "f").write_text("x")
    (ws / "tree" / "locked" / "inner").chmod(0o500)
    (ws / "tree" / "locked").chmod(0o500)
    try:
        ok(cli("copy_file", stdin={"source": "tree", "destination": "copy"}))
        assert mode_of(ws / "copy" / "locked") == 0o500
        assert mode_of(ws / "copy" / "locked" / "inner") == 0o500
        assert (ws / "copy" / "locked" / "inner" / "f").read_text() == "x"
    finally:
        for top in ("tree", "copy"):
            for dirpath, _, _ in os.walk(ws / top):
                os.chmod(dirpath, 0o755)


def test_symlinks_in_a_tree_are_copied_as_links_or_skipped_when_pointing_outside(
        ws: Path, cli: CliRunner) -> None:
    tree = ws / "tree"
    (tree / "sub").mkdir(parents=True)
    (tree / "f.txt").write_text("f")
    (tree / "sub" / "in_tree").symlink_to("../f.txt")
    (tree / "in_dir").symlink_to("sub")
    (ws / "shared.txt").write_text("shared")
    (tree / "to_workspace").symlink_to("../shared.txt")
    (tree / "absolute_out").symlink_to(ws.parent / "outside" / "secret.txt")
    (tree / "sub" / "relative_out").symlink_to("../../../outside/secret.txt")
    (tree / "dangling_in").symlink_to("nothing-yet")
    result = cli("copy_file", stdin={"source": "tree", "destination": "copy"}).result
    assert result["symlinks_copied"] == 4
    assert sorted(item["path"] for item in result["skipped"]) == ["absolute_out",
                                                                 "sub/relative_out"]
    assert all("outside" in item["reason"] for item in result["skipped"])
    copy = ws / "copy"
    assert os.readlink(copy / "sub" / "in_tree") == "../f.txt"
    assert os.readlink(copy / "in_dir") == "sub"
    assert os.readlink(copy / "to_workspace") == "../shared.txt"
    assert os.readlink(copy / "dangling_in") == "nothing-yet"
    assert not os.path.lexists(copy / "absolute_out")
    assert not os.path.lexists(copy / "sub" / "relative_out")
    assert (ws.parent / "outside" / "secret.txt").read_text() == "top secret\n"


def test_a_link_that_would_point_outside_from_its_new_place_is_skipped(
        ws: Path, cli: CliRunner) -> None:
    (ws / "a" / "b" / "tree").mkdir(parents=True)
    (ws / "a" / "x.txt").write_text("x")
    (ws / "a" / "b" / "tree" / "up").symlink_to("../../x.txt")  # fine here, outside from "copy"
    result = cli("copy_file", stdin={"source": "a/b/tree", "destination": "copy"}).result
    assert [item["path"] for item in result["skipped"]] == ["up"]
    assert snapshot(ws / "copy") == {}


def test_links_are_kept_when_copying_into_a_dot_directory(ws: Path, cli: CliRunner) -> None:
    (ws / "src").mkdir()
    (ws / "src" / "f").write_text("x")
    (ws / "src" / "l").symlink_to("f")
    (ws / ".github").mkdir()
    result = cli("copy_file", stdin={"source": "src", "destination": ".github/src"}).result
    assert result["skipped"] == []
    assert os.readlink(ws / ".github" / "src" / "l") == "f"


def test_a_fifo_inside_a_tree_is_skipped_and_listed(ws: Path, cli: CliRunner) -> None:
    (ws / "tree").mkdir()
    (ws / "tree" / "f").write_text("x")
    os.mkfifo(ws / "tree" / "pipe")
    result = cli("copy_file", stdin={"source": "tree", "destination": "copy"}).result
    assert result["skipped"] == [{"path": "pipe", "reason": "fifo (only files, directories and "
                                  "symlinks are copied)"}]
    assert sorted(os.listdir(ws / "copy")) == ["f"]


def test_recursive_false_refuses_a_directory(ws: Path, cli: CliRunner) -> None:
    (ws / "d").mkdir()
    (ws / "d" / "f").write_text("x")
    before = snapshot(ws)
    call = cli("copy_file", stdin={"source": "d", "destination": "e", "recursive": False})
    assert call.code == 1
    assert call.error["code"] == "is_directory"
    assert "recursive" in call.error["hint"]
    assert snapshot(ws) == before


@pytest.mark.parametrize("dest", ["d/copy", "d/sub/copy", "d/", "d/sub/", "d/new/parent/x"])
def test_a_directory_cannot_be_copied_into_itself(ws: Path, cli: CliRunner, dest: str) -> None:
    (ws / "d" / "sub").mkdir(parents=True)
    (ws / "d" / "f").write_text("x")
    before = snapshot(ws)
    call = cli("copy_file", stdin={"source": "d", "destination": dest})
    assert call.code == 2
    assert call.error["code"] == "invalid_arguments"
    assert snapshot(ws) == before


def test_an_existing_directory_is_never_merged_or_replaced(ws: Path, cli: CliRunner) -> None:
    (ws / "d").mkdir()
    (ws / "d" / "new").write_text("n")
    (ws / "e").mkdir()
    (ws / "e" / "old").write_text("o")
    (ws / "f").write_text("file")
    before = snapshot(ws)
    assert cli("copy_file", stdin={"source": "d", "destination": "e"}
               ).error["code"] == "already_exists"
    assert cli("copy_file", stdin={"source": "d", "destination": "e", "overwrite": True}
               ).error["code"] == "is_directory"
    assert cli("copy_file", stdin={"source": "d", "destination": "f", "overwrite": True}
               ).error["code"] == "not_a_directory"
    assert snapshot(ws) == before


def test_a_directory_copy_creates_parents_and_uses_a_trailing_slash(
        ws: Path, cli: CliRunner) -> None:
    (ws / "d").mkdir()
    (ws / "d" / "f").write_text("x")
    result = cli("copy_file", stdin={"source": "d", "destination": "p/q/d2"}).result
    assert result["parents_created"] == ["p", "p/q"]
    assert cli("copy_file", stdin={"source": "d", "destination": "p/"}
               ).result["destination"] == "p/d"
    assert (ws / "p" / "q" / "d2" / "f").read_text() == "x"
    assert (ws / "p" / "d" / "f").read_text() == "x"
    assert leftovers(ws) == []


def test_a_failure_half_way_leaves_no_staging_folder_and_no_parents(
        ws: Path, cli: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    make_tree(ws / "tree")
    before = snapshot(ws)
    real_open = os.open

    def fail_on_low(path: str, flags: int, mode: int = 0o777, *, dir_fd: int | None = None
                    ) -> int:
        if path == "low.bin" and not flags & os.O_CREAT:
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        return real_open(path, flags, mode, dir_fd=dir_fd)

    monkeypatch.setattr(os, "open", fail_on_low)
    call = cli("copy_file", stdin={"source": "tree", "destination": "new/parent/copy"})
    monkeypatch.undo()
    assert call.code == 1
    assert call.error["code"] == "io_error"
    assert snapshot(ws) == before
    assert leftovers(ws) == []


def test_a_full_disk_while_copying_a_file_changes_nothing(
        ws: Path, cli: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    (ws / "a.txt").write_text("x" * 4096)
    before = snapshot(ws)
    fail_with(monkeypatch, "fsync")
    call = cli("copy_file", stdin={"source": "a.txt", "destination": "n/b.txt"})
    assert call.error["code"] == "no_space"
    assert snapshot(ws) == before


def test_a_deep_tree_is_copied_within_a_small_open_files_limit(ws: Path, cli: CliRunner) -> None:
    make_deep_tree(ws, "deep", 300)
    with open_files_limit(128):
        call = cli("copy_file", stdin={"source": "deep", "destination": "copy"})
    assert call.code == 0, call.json
    assert call.result["directories_copied"] == 301
    assert snapshot(ws / "copy") == snapshot(ws / "deep")


def test_a_wide_tree_is_copied_within_a_small_open_files_limit(
        ws: Path, cli: CliRunner) -> None:
    for i in range(200):
        (ws / "wide" / f"d{i:03}").mkdir(parents=True)
    with open_files_limit(128):
        call = cli("copy_file", stdin={"source": "wide", "destination": "copy"})
    assert call.code == 0, call.json
    assert call.result["directories_copied"] == 201
    assert snapshot(ws / "copy") == snapshot(ws / "wide")


def test_a_long_multibyte_name_is_copied(ws: Path, cli: CliRunner) -> None:
    (ws / "d").mkdir()
    name = "日" * 80
    ok(cli("copy_file", stdin={"source": "d", "destination": name}))
    assert (ws / name).is_dir()
    assert leftovers(ws) == []

"""move_file: rename files, directories and symlinks inside the workspace, never clobbering."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest

from tests.conftest import CliRunner, snapshot
from tests.tools._mutate import fail_with, leftovers, ok
from zbtools.core.files import fsops

SOURCE_ALIASES = ["source", "src", "from_path", "old_path"]
DESTINATION_ALIASES = ["destination", "dest", "dst", "target", "to_path", "new_path"]


def test_a_file_is_renamed(ws: Path, cli: CliRunner) -> None:
    (ws / "src").mkdir()
    (ws / "src" / "old_name.rs").write_text("fn main() {}\n")
    call = cli("move_file", stdin={"source": "src/old_name.rs",
                                   "destination": "src/new_name.rs"})
    assert call.code == 0
    assert call.result == {"source": "src/old_name.rs", "destination": "src/new_name.rs",
                           "type": "file", "overwritten": False, "parents_created": []}
    assert not (ws / "src" / "old_name.rs").exists()
    assert (ws / "src" / "new_name.rs").read_text() == "fn main() {}\n"


def test_the_moved_file_keeps_its_inode_and_mode(ws: Path, cli: CliRunner) -> None:
    (ws / "a.sh").write_text("x")
    (ws / "a.sh").chmod(0o700)
    inode = (ws / "a.sh").stat().st_ino
    ok(cli("move_file", stdin={"source": "a.sh", "destination": "b.sh"}))
    assert (ws / "b.sh").stat().st_ino == inode
    assert (ws / "b.sh").stat().st_mode & 0o777 == 0o700


@pytest.mark.parametrize("alias", SOURCE_ALIASES)
def test_every_source_alias_names_the_source(ws: Path, cli: CliRunner, alias: str) -> None:
    (ws / "a.txt").write_text("x")
    ok(cli("move_file", stdin={alias: "a.txt", "destination": "b.txt"}))
    assert (ws / "b.txt").exists() and not (ws / "a.txt").exists()


@pytest.mark.parametrize("alias", DESTINATION_ALIASES)
def test_every_destination_alias_names_the_destination(ws: Path, cli: CliRunner,
                                                       alias: str) -> None:
    (ws / "a.txt").write_text("x")
    ok(cli("move_file", stdin={"source": "a.txt", alias: "b.txt"}))
    assert (ws / "b.txt").exists() and not (ws / "a.txt").exists()


def test_flags_and_args_work_like_stdin(ws: Path, cli: CliRunner) -> None:
    (ws / "a").write_text("x")
    ok(cli("move_file", "--from-path", "a", "--to-path", "b"))
    ok(cli("move_file", "--args", json.dumps({"src": "b", "dst": "c"})))
    ok(cli("move_file", "--old_path", "c", "--new_path", "d"))
    assert snapshot(ws) == {"d": ("file", 0o644, b"x")}


def test_the_real_subprocess_moves(ws: Path, proc: CliRunner) -> None:
    (ws / "a.txt").write_text("x")
    call = proc("move_file", stdin={"src": "a.txt", "dest": "sub/b.txt"})
    assert call.code == 0, call
    assert call.result["parents_created"] == ["sub"]
    assert (ws / "sub" / "b.txt").read_text() == "x"


def test_missing_destination_parents_are_created(ws: Path, cli: CliRunner) -> None:
    (ws / "a.txt").write_text("x")
    result = cli("move_file", stdin={"source": "a.txt", "destination": "x/y/z.txt"}).result
    assert result["parents_created"] == ["x", "x/y"]
    assert (ws / "x" / "y" / "z.txt").read_text() == "x"


def test_a_trailing_slash_moves_into_the_existing_directory(ws: Path, cli: CliRunner) -> None:
    (ws / "a.txt").write_text("x")
    (ws / "dir").mkdir()
    result = cli("move_file", stdin={"source": "a.txt", "destination": "dir/"}).result
    assert result["destination"] == "dir/a.txt"
    assert (ws / "dir" / "a.txt").read_text() == "x"


def test_the_root_as_destination_means_into_the_root(ws: Path, cli: CliRunner) -> None:
    (ws / "d").mkdir()
    (ws / "d" / "a.txt").write_text("x")
    result = cli("move_file", stdin={"source": "d/a.txt", "destination": "."}).result
    assert result["destination"] == "a.txt"
    (ws / "d" / "b.txt").write_text("y")
    assert cli("move_file", stdin={"source": "d/b.txt", "destination": str(ws) + "/"}
               ).result["destination"] == "b.txt"
    assert sorted(os.listdir(ws)) == ["a.txt", "b.txt", "d"]


def test_a_trailing_slash_on_a_missing_or_file_destination_is_not_a_directory(
        ws: Path, cli: CliRunner) -> None:
    (ws / "a.txt").write_text("x")
    (ws / "file").write_text("f")
    before = snapshot(ws)
    for dest in ("missing/", "file/"):
        call = cli("move_file", stdin={"source": "a.txt", "destination": dest})
        assert call.code == 1
        assert call.error["code"] == "not_a_directory"
    assert snapshot(ws) == before


def test_an_existing_destination_is_not_replaced_without_overwrite(
        ws: Path, cli: CliRunner) -> None:
    (ws / "a.txt").write_text("a")
    (ws / "b.txt").write_text("b")
    before = snapshot(ws)
    call = cli("move_file", stdin={"source": "a.txt", "destination": "b.txt"})
    assert call.code == 1
    assert call.error["code"] == "already_exists"
    assert call.error["details"] == {"path": "b.txt", "destination": "b.txt", "type": "file"}
    assert "overwrite" in call.error["hint"]
    assert snapshot(ws) == before


def test_moving_into_a_directory_that_holds_the_name_already_is_refused(
        ws: Path, cli: CliRunner) -> None:
    (ws / "a.txt").write_text("a")
    (ws / "dir").mkdir()
    (ws / "dir" / "a.txt").write_text("other")
    before = snapshot(ws)
    call = cli("move_file", stdin={"source": "a.txt", "destination": "dir/"})
    assert call.error["code"] == "already_exists"
    assert snapshot(ws) == before


def test_overwrite_replaces_an_existing_file(ws: Path, cli: CliRunner) -> None:
    (ws / "a.txt").write_text("a")
    (ws / "b.txt").write_text("b")
    result = cli("move_file", stdin={"source": "a.txt", "destination": "b.txt",
                                     "overwrite": True}).result
    assert result["overwritten"] is True
    assert snapshot(ws) == {"b.txt": ("file", 0o644, b"a")}


def test_overwrite_never_replaces_a_directory(ws: Path, cli: CliRunner) -> None:
    (ws / "a.txt").write_text("a")
    (ws / "dir").mkdir()
    (ws / "dir" / "inside").write_text("keep")
    before = snapshot(ws)
    call = cli("move_file", stdin={"source": "a.txt", "destination": "dir", "overwrite": True})
    assert call.code == 1
    assert call.error["code"] == "is_directory"
    assert snapshot(ws) == before


def test_a_directory_never_replaces_a_file(ws: Path, cli: CliRunner) -> None:
    (ws / "d").mkdir()
    (ws / "f").write_text("f")
    before = snapshot(ws)
    call = cli("move_file", stdin={"source": "d", "destination": "f", "overwrite": True})
    assert call.error["code"] == "not_a_directory"
    assert snapshot(ws) == before


def test_a_directory_is_moved_with_its_contents(ws: Path, cli: CliRunner) -> None:
    (ws / "d" / "sub").mkdir(parents=True)
    (ws / "d" / "sub" / "f").write_text("x")
    (ws / "d" / "link").symlink_to("sub/f")
    result = cli("move_file", stdin={"source": "d", "destination": "e"}).result
    assert result["type"] == "directory"
    assert snapshot(ws) == {"e": ("dir", 0o755, b""), "e/sub": ("dir", 0o755, b""),
                            "e/sub/f": ("file", 0o644, b"x"), "e/link": ("link", 0o777, b"sub/f")}


def test_an_existing_directory_is_not_replaced_by_a_directory(ws: Path, cli: CliRunner) -> None:
    (ws / "d").mkdir()
    (ws / "e").mkdir()
    before = snapshot(ws)
    call = cli("move_file", stdin={"source": "d", "destination": "e"})
    assert call.error["code"] == "already_exists"
    assert snapshot(ws) == before


@pytest.mark.parametrize("dest", ["d/inner", "d/sub/deeper/x", "d/", "d/sub/"])
def test_a_directory_cannot_move_into_itself(ws: Path, cli: CliRunner, dest: str) -> None:
    (ws / "d" / "sub").mkdir(parents=True)
    before = snapshot(ws)
    call = cli("move_file", stdin={"source": "d", "destination": dest})
    assert call.code == 2
    assert call.error["code"] == "invalid_arguments"
    assert snapshot(ws) == before


def test_source_and_destination_being_the_same_is_an_argument_error(
        ws: Path, cli: CliRunner) -> None:
    (ws / "a.txt").write_text("x")
    before = snapshot(ws)
    for dest in ("a.txt", "./a.txt", str(ws / "a.txt"), "."):
        call = cli("move_file", stdin={"source": "a.txt", "destination": dest})
        assert call.code == 2
        assert call.error["code"] == "invalid_arguments"
    assert snapshot(ws) == before


def test_a_missing_source_is_not_found(ws: Path, cli: CliRunner) -> None:
    call = cli("move_file", stdin={"source": "nope", "destination": "x/y"})
    assert call.code == 1
    assert call.error["code"] == "not_found"
    assert snapshot(ws) == {}


@pytest.mark.parametrize("source", [".", "", "sub/..", "ROOT"])
def test_the_workspace_root_cannot_be_moved(ws: Path, cli: CliRunner, source: str) -> None:
    (ws / "sub").mkdir()
    before = snapshot(ws)
    call = cli("move_file", stdin={"source": source.replace("ROOT", str(ws)),
                                   "destination": "elsewhere"})
    if source == "":
        assert call.error["code"] == "invalid_arguments"
    else:
        assert call.code == 3
        assert call.error["code"] == "workspace_root_protected"
    assert snapshot(ws) == before


# --- symlinks and containment ----------------------------------------------------------------


def test_moving_a_symlink_moves_the_link_not_its_target(ws: Path, cli: CliRunner) -> None:
    (ws / "target.txt").write_text("t")
    (ws / "link").symlink_to("target.txt")
    call = cli("move_file", stdin={"source": "link", "destination": "link2"})
    assert call.result["type"] == "symlink"
    assert call.json["warnings"] == []  # same directory: the relative link still works
    assert snapshot(ws) == {"target.txt": ("file", 0o644, b"t"),
                            "link2": ("link", 0o777, b"target.txt")}


def test_a_symlink_to_outside_can_be_moved_as_a_link(ws: Path, cli: CliRunner) -> None:
    secret = ws.parent / "outside" / "secret.txt"
    (ws / "out").symlink_to(secret)
    ok(cli("move_file", stdin={"source": "out", "destination": "renamed"}))
    assert os.readlink(ws / "renamed") == str(secret)
    assert secret.read_text() == "top secret\n"


def test_a_relative_symlink_moved_to_another_directory_is_warned_about(
        ws: Path, cli: CliRunner) -> None:
    (ws / "a").mkdir()
    (ws / "a" / "t.txt").write_text("t")
    (ws / "a" / "l").symlink_to("t.txt")
    call = cli("move_file", stdin={"source": "a/l", "destination": "l"})
    assert call.code == 0
    assert len(call.json["warnings"]) == 1
    assert "relative symlink" in call.json["warnings"][0]


def test_a_destination_through_a_symlink_to_outside_is_refused(ws: Path, cli: CliRunner) -> None:
    (ws / "a.txt").write_text("x")
    (ws / "out").symlink_to(ws.parent / "outside")
    before = snapshot(ws)
    for dest in ("out/a.txt", "out/", "../outside/a.txt", "/tmp/zbtools-escape.txt"):
        call = cli("move_file", stdin={"source": "a.txt", "destination": dest})
        assert call.code == 3
        assert call.error["code"] == "outside_workspace"
    assert snapshot(ws) == before
    assert sorted(os.listdir(ws.parent / "outside")) == ["secret.txt"]


def test_a_source_outside_is_refused(ws: Path, cli: CliRunner) -> None:
    call = cli("move_file", stdin={"source": "../outside/secret.txt", "destination": "s.txt"})
    assert call.code == 3
    assert call.error["code"] == "outside_workspace"
    assert (ws.parent / "outside" / "secret.txt").exists()
    assert snapshot(ws) == {}


def test_a_move_onto_a_symlink_with_overwrite_replaces_the_link_itself(
        ws: Path, cli: CliRunner) -> None:
    (ws / "target.txt").write_text("t")
    (ws / "link").symlink_to("target.txt")
    (ws / "a.txt").write_text("a")
    ok(cli("move_file", stdin={"source": "a.txt", "destination": "link", "overwrite": True}))
    assert snapshot(ws) == {"target.txt": ("file", 0o644, b"t"), "link": ("file", 0o644, b"a")}


# --- failures --------------------------------------------------------------------------------


def test_a_failed_rename_rolls_back_the_created_parents(
        ws: Path, cli: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    (ws / "a.txt").write_text("x")
    before = snapshot(ws)
    monkeypatch.setattr(fsops, "_renameat2", None)  # the portable fallback: link + unlink
    fail_with(monkeypatch, "link")
    call = cli("move_file", stdin={"source": "a.txt", "destination": "new/dir/b.txt"})
    assert call.code == 1
    assert call.error["code"] == "no_space"
    assert snapshot(ws) == before


def test_the_fallback_without_renameat2_still_refuses_to_clobber(
        ws: Path, cli: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fsops, "_renameat2", None)
    (ws / "a.txt").write_text("a")
    (ws / "b.txt").write_text("b")
    (ws / "d").mkdir()
    (ws / "e").mkdir()
    before = snapshot(ws)
    assert cli("move_file", stdin={"source": "a.txt", "destination": "b.txt"}
               ).error["code"] == "already_exists"
    assert cli("move_file", stdin={"source": "d", "destination": "e"}
               ).error["code"] == "already_exists"
    assert snapshot(ws) == before
    ok(cli("move_file", stdin={"source": "a.txt", "destination": "c.txt"}))
    ok(cli("move_file", stdin={"source": "d", "destination": "f"}))
    assert sorted(os.listdir(ws)) == ["b.txt", "c.txt", "e", "f"]


def test_parents_are_rolled_back_when_a_component_name_is_too_long(
        ws: Path, cli: CliRunner) -> None:
    (ws / "a.txt").write_text("x")
    before = snapshot(ws)
    call = cli("move_file", stdin={"source": "a.txt", "destination": "n/" + "x" * 300 + "/b"})
    assert call.error["code"] == "invalid_arguments"
    assert snapshot(ws) == before
    assert leftovers(ws) == []


def test_a_rename_across_filesystems_is_cross_device(
        ws: Path, cli: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    def exdev(*_args: object) -> int:
        return errno.EXDEV

    monkeypatch.setattr(fsops, "_renameat2", exdev)
    (ws / "a.txt").write_text("x")
    before = snapshot(ws)
    call = cli("move_file", stdin={"source": "a.txt", "destination": "mnt/a.txt"})
    assert call.code == 1
    assert call.error["code"] == "cross_device"
    assert "copy_file" in call.error["hint"]
    assert snapshot(ws) == before

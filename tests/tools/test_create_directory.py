"""create_directory: mkdir -p inside the workspace, one checked component at a time."""

from __future__ import annotations

import errno
import json
import os
import stat
from pathlib import Path

import pytest

from tests.conftest import CliRunner, snapshot
from tests.tools._mutate import fail_with, ok


def test_nested_directories_are_created(ws: Path, cli: CliRunner) -> None:
    call = cli("create_directory", stdin={"path": "src/modules/new_feature"})
    assert call.code == 0
    assert call.result == {"path": "src/modules/new_feature", "created": True,
                           "parents_created": ["src", "src/modules"]}
    assert (ws / "src" / "modules" / "new_feature").is_dir()
    assert call.json["warnings"] == []


def test_a_single_directory_gets_the_default_mode(ws: Path, cli: CliRunner) -> None:
    old = os.umask(0o022)
    try:
        result = cli("create_directory", stdin={"path": "one"}).result
    finally:
        os.umask(old)
    assert result["parents_created"] == []
    assert stat.S_IMODE((ws / "one").stat().st_mode) == 0o755


@pytest.mark.parametrize("alias", ["path", "dir", "directory"])
def test_every_path_alias_names_the_directory(ws: Path, cli: CliRunner, alias: str) -> None:
    ok(cli("create_directory", stdin={alias: f"by_{alias}"}))
    assert (ws / f"by_{alias}").is_dir()


def test_flags_and_args_work_like_stdin(ws: Path, cli: CliRunner) -> None:
    ok(cli("create_directory", "--dir", "a"))
    ok(cli("create_directory", "--args", json.dumps({"directory": "b/c"})))
    assert (ws / "a").is_dir()
    assert (ws / "b" / "c").is_dir()


def test_the_real_subprocess_creates_directories(ws: Path, proc: CliRunner) -> None:
    call = proc("create_directory", "--path", "x/y")
    assert call.code == 0, call
    assert (ws / "x" / "y").is_dir()


def test_an_existing_directory_is_success_with_created_false(ws: Path, cli: CliRunner) -> None:
    (ws / "d").mkdir()
    (ws / "d" / "f").write_text("keep")
    before = snapshot(ws)
    call = cli("create_directory", stdin={"path": "d"})
    assert call.code == 0
    assert call.result == {"path": "d", "created": False, "parents_created": []}
    assert call.json["warnings"]  # says it already existed
    assert snapshot(ws) == before


@pytest.mark.parametrize("path", [".", "./", "ROOT"])
def test_the_workspace_root_already_exists(ws: Path, cli: CliRunner, path: str) -> None:
    result = cli("create_directory", stdin={"path": path.replace("ROOT", str(ws))}).result
    assert result["created"] is False
    assert result["path"] == "."


def test_an_existing_file_is_already_exists(ws: Path, cli: CliRunner) -> None:
    (ws / "f").write_text("x")
    before = snapshot(ws)
    call = cli("create_directory", stdin={"path": "f"})
    assert call.code == 1
    assert call.error["code"] == "already_exists"
    assert snapshot(ws) == before


def test_a_file_as_a_parent_is_not_a_directory(ws: Path, cli: CliRunner) -> None:
    (ws / "f").write_text("x")
    before = snapshot(ws)
    call = cli("create_directory", stdin={"path": "f/sub/deeper"})
    assert call.code == 1
    assert call.error["code"] == "not_a_directory"
    assert snapshot(ws) == before


def test_a_symlink_to_a_directory_inside_is_an_existing_directory(
        ws: Path, cli: CliRunner) -> None:
    (ws / "real").mkdir()
    (ws / "link").symlink_to("real")
    assert cli("create_directory", stdin={"path": "link"}).result["created"] is False
    result = cli("create_directory", stdin={"path": "link/inner"}).result
    assert result["path"] == "real/inner"
    assert (ws / "real" / "inner").is_dir()


def test_a_dangling_symlink_inside_is_refused_not_followed_to_create(ws: Path,
                                                                    cli: CliRunner) -> None:
    (ws / "link").symlink_to("made")
    assert cli("create_directory", stdin={"path": "link"}).error["code"] == "dangling_symlink"
    assert not (ws / "made").exists()


def test_a_symlinked_parent_to_outside_is_refused_and_nothing_created_outside(
        ws: Path, cli: CliRunner) -> None:
    (ws / "out").symlink_to(ws.parent / "outside")
    (ws / "planted").symlink_to(ws.parent / "outside" / "planted")
    before = snapshot(ws)
    for path in ("out/new", "out/a/b/c", "planted", "planted/sub", "../outside/x",
                 str(ws.parent / "outside" / "y")):
        call = cli("create_directory", stdin={"path": path})
        assert call.code == 3, path
        assert call.error["code"] == "outside_workspace"
    assert sorted(os.listdir(ws.parent / "outside")) == ["secret.txt"]
    assert snapshot(ws) == before


def test_parents_are_rolled_back_when_a_later_component_fails(ws: Path, cli: CliRunner) -> None:
    before = snapshot(ws)
    call = cli("create_directory", stdin={"path": "a/b/" + "x" * 300 + "/c"})
    assert call.code == 2
    assert call.error["code"] == "invalid_arguments"
    call = cli("create_directory", stdin={"path": "a/b/" + "x" * 300})
    assert call.error["code"] == "invalid_arguments"
    assert snapshot(ws) == before


def test_a_failing_mkdir_rolls_back_the_parents(
        ws: Path, cli: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    (ws / "keep").mkdir()
    before = snapshot(ws)
    fail_with(monkeypatch, "mkdir", errno.ENOSPC, when=lambda name, *a, **k: name == "leaf")
    call = cli("create_directory", stdin={"path": "keep/p/q/leaf"})
    assert call.code == 1
    assert call.error["code"] == "no_space"
    assert snapshot(ws) == before


def test_an_empty_path_is_an_argument_error(ws: Path, cli: CliRunner) -> None:
    call = cli("create_directory", stdin={"path": ""})
    assert call.code == 2
    assert call.error["code"] == "invalid_arguments"
    assert snapshot(ws) == {}


def test_a_refused_mkdir_is_permission_denied(
        ws: Path, cli: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    fail_with(monkeypatch, "mkdir", errno.EACCES)
    call = cli("create_directory", stdin={"path": "a/b"})
    assert call.code == 1
    assert call.error["code"] == "permission_denied"
    assert snapshot(ws) == {}

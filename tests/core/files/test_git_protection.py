"""``.git`` internals are never written by default (docs/internals/security.md#t6): hooks and config
are code git runs later. Every tool that writes, edits, patches, deletes, moves or copies over a
path refuses a location inside ``.git`` (resolved: a symlink or ``..`` does not get around it) with
``protected_path`` (exit 3) and changes nothing; ``[files] allow_git_writes`` (or
``ZBTOOLS_ALLOW_GIT_WRITES=1``) lets them. Reading stays allowed."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CliRunner, snapshot


@pytest.fixture
def repo(ws: Path) -> Path:
    (ws / ".git" / "hooks").mkdir(parents=True)
    (ws / ".git" / "config").write_text("[core]\n\tbare = false\n")
    (ws / ".git" / "hooks" / "pre-commit.sample").write_text("#!/bin/sh\n")
    (ws / "sub" / ".git").mkdir(parents=True)
    (ws / "sub" / ".git" / "config").write_text("[core]\n")
    (ws / "a.txt").write_text("hello\n")
    os.symlink(".git", ws / "innocent")
    return ws


PATCH = "*** Begin Patch\n*** Add File: .git/hooks/pre-commit\n+#!/bin/sh\n*** End Patch\n"
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("write_file", {"path": ".git/hooks/pre-commit", "content": "#!/bin/sh\nevil\n"}),
    ("write_file", {"path": ".git/config", "content": "[core]\n\tfsmonitor = evil\n"}),
    ("write_file", {"path": "innocent/config", "content": "x"}),  # through a symlink
    ("write_file", {"path": "sub/../.git/config", "content": "x"}),
    ("write_file", {"path": "sub/.git/config", "content": "x"}),  # a submodule
    ("write_file", {"path": ".GIT/config", "content": "x"}),  # case-insensitive volumes
    ("write_file", {"path": ".git", "content": "gitdir: /elsewhere\n"}),
    ("write_append", {"path": ".git/config", "content": "[core]\n\thooksPath = /tmp\n"}),
    ("edit_file", {"path": ".git/config", "old_content": "bare = false",
                   "new_content": "bare = true"}),
    ("apply_edit", {"path": ".git/config", "old_text": "bare = false", "new_text": "x"}),
    ("insert_text", {"path": ".git/config", "content": "x\n", "position": "end"}),
    ("apply_edit", {"patch": PATCH}),
    ("delete_file", {"path": ".git/config"}),
    ("delete_file", {"path": ".git", "recursive": True}),
    ("delete_file", {"path": "sub", "recursive": True}),  # a folder holding a repository
    ("move_file", {"source": ".git/config", "destination": "config"}),
    ("move_file", {"source": "a.txt", "destination": ".git/hooks/pre-commit"}),
    ("copy_file", {"source": "a.txt", "destination": ".git/hooks/pre-commit"}),
    ("copy_file", {"source": "a.txt", "destination": ".git/hooks/"}),
    ("create_directory", {"path": ".git/hooks/new"}),
]


@pytest.mark.parametrize("tool,args", CALLS, ids=[f"{t}-{i}" for i, (t, _) in enumerate(CALLS)])
def test_every_writing_tool_refuses_git_internals(repo: Path, cli: CliRunner, tool: str,
                                                  args: dict[str, Any]) -> None:
    before = snapshot(repo)
    call = cli(tool, stdin=args)
    assert call.code == 3, call
    assert call.error["code"] == "protected_path"
    assert "allow_git_writes" in call.error["hint"]
    assert snapshot(repo) == before


def test_the_dialects_are_refused_too(repo: Path, cli: CliRunner) -> None:
    before = snapshot(repo)
    for argv, args in [
        (["--dialect", "codex", "apply_patch"], {"input": PATCH}),
        (["--dialect", "claude", "Write"], {"file_path": ".git/config", "content": "x"}),
        (["--dialect", "claude", "Edit"], {"file_path": ".git/config",
                                           "old_string": "bare", "new_string": "x"}),
        (["--dialect", "fiz", "write"], {"path": ".git/hooks/post-checkout", "content": "x"}),
        (["--dialect", "anthropic", "str_replace_based_edit_tool"],
         {"command": "create", "path": ".git/hooks/x", "file_text": "x"}),
    ]:
        call = cli(*argv, stdin=args)
        assert call.error["code"] == "protected_path", (argv, call)
    assert snapshot(repo) == before


def test_reading_git_internals_still_works(repo: Path, cli: CliRunner) -> None:
    assert "bare" in cli("read_file", "--path", ".git/config").result["content"]
    copied = cli("copy_file", stdin={"source": ".git/config", "destination": "config.txt"})
    assert copied.result["type"] == "file"
    done = cli("apply_edit", stdin={"path": ".git/config", "old_text": "bare = false",
                                    "new_text": "bare = true", "dry_run": True})
    assert done.code == 0, done  # a dry run writes nothing


def test_a_name_that_only_contains_git_is_not_protected(repo: Path, cli: CliRunner) -> None:
    for path in (".gitignore", ".github/workflows/ci.yml", "x.git/config", "git/config"):
        assert cli("write_file", stdin={"path": path, "content": "x\n"}).code == 0, path


@pytest.mark.parametrize("how", ["env", "config"])
def test_the_setting_allows_git_writes(repo: Path, cli: CliRunner, tmp_path: Path,
                                       how: str) -> None:
    env: dict[str, str] = {}
    if how == "env":
        env["ZBTOOLS_ALLOW_GIT_WRITES"] = "1"
    else:
        config = tmp_path / "allow.toml"
        config.write_text("[files]\nallow_git_writes = true\n")
        env["ZBTOOLS_CONFIG"] = str(config)
    call = cli("write_file", stdin={"path": ".git/hooks/pre-commit", "content": "#!/bin/sh\n"},
               env=env)
    assert call.code == 0, call
    assert (repo / ".git" / "hooks" / "pre-commit").read_text() == "#!/bin/sh\n"
    assert cli("delete_file", stdin={"path": "sub", "recursive": True}, env=env).code == 0


def test_a_bad_setting_is_a_usage_error(repo: Path, cli: CliRunner) -> None:
    call = cli("write_file", stdin={"path": "x", "content": "x"},
               env={"ZBTOOLS_ALLOW_GIT_WRITES": "maybe"})
    assert call.error["code"] == "usage_error"


# Protection follows the file: a second name (a hard link) of a file git uses is refused too.

GIT_CONFIG = "[core]\n\tbare = false\n"
LINK_PATCH = ("*** Begin Patch\n*** Update File: notes.txt\n@@\n-\tbare = false\n"
              "+\tbare = true\n*** End Patch\n")
LINK_CALLS: list[tuple[list[str], dict[str, Any]]] = [
    (["write_file"], {"path": "notes.txt", "content": "[core]\n\tfsmonitor = evil\n"}),
    (["write_append"], {"path": "notes.txt", "content": "\tfsmonitor = evil\n"}),
    (["apply_edit"], {"path": "notes.txt", "old_text": "bare = false", "new_text": "x"}),
    (["edit_file"], {"path": "notes.txt", "old_content": "bare = false", "new_content": "x"}),
    (["insert_text"], {"path": "notes.txt", "content": "x\n", "position": "end"}),
    (["apply_edit"], {"patch": LINK_PATCH}),
    (["apply_edit"], {"patch": "*** Begin Patch\n*** Delete File: notes.txt\n*** End Patch\n"}),
    (["apply_edit"], {"patch": "*** Begin Patch\n*** Update File: notes.txt\n*** Move to: n2\n"
                      "@@\n-\tbare = false\n+\tbare = true\n*** End Patch\n"}),
    (["--dialect", "codex", "apply_patch"], {"input": LINK_PATCH}),
    (["--dialect", "claude", "Write"], {"file_path": "notes.txt", "content": "x"}),
    (["--dialect", "claude", "Edit"], {"file_path": "notes.txt", "old_string": "bare",
                                       "new_string": "x"}),
    (["delete_file"], {"path": "notes.txt"}),
    (["move_file"], {"source": "notes.txt", "destination": "moved.txt"}),
    (["move_file"], {"source": "a.txt", "destination": "notes.txt", "overwrite": True}),
    (["copy_file"], {"source": "a.txt", "destination": "notes.txt", "overwrite": True}),
    (["write_file"], {"path": "via-symlink", "content": "x"}),  # a symlink to the link
]


@pytest.fixture
def linked(repo: Path) -> Path:
    """``notes.txt`` is a second name of ``.git/config`` (as ``ln .git/config notes.txt``)."""
    os.link(repo / ".git" / "config", repo / "notes.txt")
    os.symlink("notes.txt", repo / "via-symlink")
    return repo


@pytest.mark.parametrize("argv,args", LINK_CALLS, ids=[f"{' '.join(a)}-{i}" for i, (a, _)
                                                       in enumerate(LINK_CALLS)])
def test_a_write_through_a_hard_link_of_git_config_is_refused(
        linked: Path, cli: CliRunner, argv: list[str], args: dict[str, Any]) -> None:
    before = snapshot(linked)
    call = cli(*argv, stdin=args)
    assert call.code == 3, call
    assert call.error["code"] == "protected_path"
    assert ".git/config" in call.error["message"]
    assert snapshot(linked) == before
    assert (linked / ".git" / "config").stat().st_nlink == 2


def test_a_hard_link_of_git_config_is_refused_through_a_real_process(ws: Path,
                                                                      proc: CliRunner) -> None:
    (ws / ".git").mkdir()
    (ws / ".git" / "config").write_text(GIT_CONFIG)
    os.link(ws / ".git" / "config", ws / "notes.txt")
    before = snapshot(ws)
    for tool, args in [("write_file", {"path": "notes.txt", "content": "x"}),
                       ("edit_file", {"path": "notes.txt", "old_content": "bare",
                                      "new_content": "fsmonitor"})]:
        call = proc(tool, "--args", json.dumps(args))
        assert call.code == 3, call
        assert call.error["code"] == "protected_path"
    assert snapshot(ws) == before


def test_editor_and_notebook_saves_through_a_hard_link_are_refused(repo: Path,
                                                                   cli: CliRunner) -> None:
    notebook = {"cells": [{"cell_type": "code", "id": "c1", "metadata": {}, "source": "x = 1",
                           "outputs": [], "execution_count": None}],
                "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (repo / ".git" / "info").mkdir()
    (repo / ".git" / "info" / "nb.ipynb").write_text(json.dumps(notebook))
    os.link(repo / ".git" / "info" / "nb.ipynb", repo / "nb.ipynb")
    os.link(repo / ".git" / "config", repo / "notes.txt")
    before = snapshot(repo)
    edited = cli("edit_notebook_cell", stdin={"path": "nb.ipynb", "cell_index": 0,
                                                "source": "y"})
    assert edited.error["code"] == "protected_path", edited
    assert cli("open_file", stdin={"path": "notes.txt"}).code == 0
    for tool, args in [("insert_at_cursor", {"content": "x"}),
                       ("select_range", {"start_line": 1, "end_line": 1}),
                       ("replace_selection", {"content": "x"})]:
        call = cli(tool, stdin=args)
        if tool == "select_range":
            assert call.code == 0, call
        else:
            assert call.error["code"] == "protected_path", (tool, call)
    assert snapshot(repo) == before


def test_undo_through_a_hard_link_of_git_config_is_refused(ws: Path, cli: CliRunner) -> None:
    assert cli("write_file", stdin={"path": "notes.txt", "content": "a\n"}).code == 0
    assert cli("apply_edit", stdin={"path": "notes.txt", "old_text": "a",
                                    "new_text": "b"}).code == 0
    (ws / ".git").mkdir()
    os.link(ws / "notes.txt", ws / ".git" / "config")  # git's config is now that inode
    before = snapshot(ws)
    call = cli("undo", stdin={"path": "notes.txt"})
    assert call.error["code"] == "protected_path", call
    assert snapshot(ws) == before


def test_a_hard_link_between_two_ordinary_files_is_still_written_in_place(
        repo: Path, cli: CliRunner) -> None:
    (repo / "a2.txt").write_text("one\n")
    os.link(repo / "a2.txt", repo / "twin.txt")
    done = cli("write_file", stdin={"path": "a2.txt", "content": "two\n"})
    assert done.result["hardlink_broken"] is False
    assert (repo / "twin.txt").read_text() == "two\n"


def test_a_hard_link_of_a_git_file_outside_the_workspace_is_refused(tmp_path: Path,
                                                                     cli: CliRunner) -> None:
    # the workspace is a folder inside a repository: its .git lies above the workspace
    parent = tmp_path / "ws"
    outer_git = tmp_path / ".git"
    outer_git.mkdir()
    (outer_git / "config").write_text(GIT_CONFIG)
    os.link(outer_git / "config", parent / "notes.txt")
    call = cli("write_file", stdin={"path": "notes.txt", "content": "x"})
    assert call.error["code"] == "protected_path", call
    assert (outer_git / "config").read_text() == GIT_CONFIG


# Git directories and hooks not named .git: a `.git` file's `gitdir:`, `commondir`,
# `core.hooksPath`, included config files, bare repositories.

@pytest.fixture
def layouts(ws: Path) -> Path:
    """A repository whose git directory is ``realgit`` (a ``.git`` file points to it), with
    ``core.hooksPath = myhooks`` and an included config file; a worktree whose admin
    directory's ``commondir`` names a shared git directory with its own hooks path; a nested
    repository with ``.githooks``; a bare repository; a worktree moved by ``core.worktree``."""
    (ws / ".git").write_text("gitdir: realgit\n")
    real = ws / "realgit"
    for sub in ("objects", "refs", "hooks"):
        (real / sub).mkdir(parents=True)
    (real / "HEAD").write_text("ref: refs/heads/main\n")
    (real / "config").write_text(
        "# a comment\n[Core]\n\tbare = false\n\tHooksPath = myhooks ; the team's hooks\n"
        "\tworktree = ../tree\n[include]\n\tpath = ../extra.gitconfig\n"
        '[includeIf "gitdir:~/never/"]\n\tpath = "cond.gitconfig"\n')
    (ws / "extra.gitconfig").write_text("[user]\n\tname = x\n")
    (ws / "realgit" / "cond.gitconfig").write_text("")
    (ws / "myhooks").mkdir()
    (ws / "myhooks" / "pre-commit").write_text("#!/bin/sh\n")
    (ws / "tree").mkdir()
    # a worktree: its .git names an admin directory whose commondir names the shared one
    (ws / "wt").mkdir()
    (ws / "wt" / ".git").write_text(f"gitdir: {ws / 'wtadmin'}\n")  # absolute
    (ws / "wtadmin").mkdir()
    (ws / "wtadmin" / "HEAD").write_text("0" * 40 + "\n")
    (ws / "wtadmin" / "commondir").write_text("../common\n")
    for sub in ("objects", "refs"):
        (ws / "common" / sub).mkdir(parents=True)
    (ws / "common" / "config").write_text('[core]\n\thooksPath = "shared hooks"\n')
    # a nested repository with committed hooks
    (ws / "nested" / ".git").mkdir(parents=True)
    (ws / "nested" / ".git" / "config").write_text("[core]\nhookspath=.githooks\n")
    (ws / "nested" / ".githooks").mkdir()
    # a bare repository
    for sub in ("objects", "refs"):
        (ws / "bare.git" / sub).mkdir(parents=True)
    (ws / "bare.git" / "HEAD").write_text("ref: refs/heads/main\n")
    (ws / "bare.git" / "config").write_text("[core]\n\tbare = true\n")
    (ws / "a.txt").write_text("hello\n")
    return ws


PROTECTED = [
    "realgit/config", "realgit/hooks/pre-commit", "realgit/HEAD", "realgit/new/file",
    "myhooks/pre-commit", "myhooks/post-checkout", "extra.gitconfig",
    "realgit/cond.gitconfig", "tree/myhooks/pre-commit",  # hooks path against core.worktree
    "wtadmin/HEAD", "wtadmin/config", "common/config", "wt/shared hooks/pre-commit",
    "nested/.githooks/pre-commit", "bare.git/config", "bare.git/hooks/post-update",
]


@pytest.mark.parametrize("path", PROTECTED)
def test_git_directories_and_hooks_not_named_git_are_protected(layouts: Path, cli: CliRunner,
                                                               path: str) -> None:
    before = snapshot(layouts)
    for tool, args in [("write_file", {"path": path, "content": "#!/bin/sh\nevil\n"}),
                       ("write_append", {"path": path, "content": "evil\n"}),
                       ("copy_file", {"source": "a.txt", "destination": path,
                                      "overwrite": True}),
                       ("move_file", {"source": "a.txt", "destination": path,
                                      "overwrite": True})]:
        call = cli(tool, stdin=args)
        assert call.code == 3, (tool, call)
        assert call.error["code"] == "protected_path", (tool, call)
        assert "allow_git_writes" in call.error["hint"]
    assert snapshot(layouts) == before


@pytest.mark.parametrize("tool,args", [
    ("create_directory", {"path": "realgit/new"}),
    ("create_directory", {"path": "myhooks/new"}),
    ("create_directory", {"path": "bare.git/new"}),
    ("delete_file", {"path": "realgit", "recursive": True}),
    ("delete_file", {"path": "myhooks", "recursive": True}),
    ("delete_file", {"path": "myhooks/pre-commit"}),
    ("delete_file", {"path": "bare.git", "recursive": True}),
    ("delete_file", {"path": "tree", "recursive": True}),  # holds tree/myhooks, not made yet
    ("move_file", {"source": "realgit", "destination": "elsewhere"}),
    ("move_file", {"source": "myhooks", "destination": "elsewhere"}),
    ("move_file", {"source": "extra.gitconfig", "destination": "x.gitconfig"}),
    ("apply_edit", {"patch": "*** Begin Patch\n*** Add File: myhooks/pre-push\n+evil\n"
                             "*** End Patch\n"}),
    ("apply_edit", {"patch": "*** Begin Patch\n*** Update File: a.txt\n*** Move to: "
                             "realgit/hooks/pre-commit\n@@\n-hello\n+evil\n*** End Patch\n"}),
])
def test_moving_or_deleting_git_places_not_named_git_is_refused(
        layouts: Path, cli: CliRunner, tool: str, args: dict[str, Any]) -> None:
    before = snapshot(layouts)
    call = cli(tool, stdin=args)
    assert call.error["code"] == "protected_path", call
    assert snapshot(layouts) == before


def test_a_directory_moved_or_copied_onto_a_hooks_path_not_made_yet_is_refused(
        layouts: Path, cli: CliRunner) -> None:
    (layouts / "tpl").mkdir()
    (layouts / "tpl" / "pre-commit").write_text("#!/bin/sh\nevil\n")
    (layouts / "kit" / "myhooks").mkdir(parents=True)
    (layouts / "kit" / "myhooks" / "pre-commit").write_text("#!/bin/sh\nevil\n")
    before = snapshot(layouts)
    for tool in ("move_file", "copy_file"):
        for source, destination in [("tpl", "tree/myhooks"), ("kit", "tree"),
                                    ("tpl", "tree/myhooks/")]:
            if destination.endswith("/"):
                continue  # into an existing directory: tree/myhooks does not exist
            call = cli(tool, stdin={"source": source, "destination": destination})
            assert call.error["code"] == "protected_path", (tool, destination, call)
    assert snapshot(layouts) == before


def test_a_folder_holding_a_repository_is_not_moved(layouts: Path, cli: CliRunner) -> None:
    # moved, its relative gitdir: would point to a place not protected yet, where a git
    # directory could then be made
    before = snapshot(layouts)
    for source in ("nested", "wt"):
        call = cli("move_file", stdin={"source": source, "destination": "elsewhere"})
        assert call.error["code"] == "protected_path", call
    assert snapshot(layouts) == before


def test_a_folder_holding_a_repository_deep_inside_is_not_deleted(layouts: Path,
                                                                  cli: CliRunner) -> None:
    (layouts / "vendor" / "lib").mkdir(parents=True)
    (layouts / "vendor" / "lib" / ".git").write_text("gitdir: ../../.git/modules/lib\n")
    (layouts / "third" / "mirror").mkdir(parents=True)
    for sub in ("objects", "refs"):
        (layouts / "third" / "mirror" / sub).mkdir()
    before = snapshot(layouts)
    for folder in ("vendor", "third"):
        call = cli("delete_file", stdin={"path": folder, "recursive": True})
        assert call.error["code"] == "protected_path", call
    assert snapshot(layouts) == before


def test_ordinary_files_beside_git_places_stay_writable(layouts: Path, cli: CliRunner) -> None:
    for path in ("a.txt", "myhooks.txt", "realgit2/config", "tree/file.txt", "wt/src/main.c",
                 "nested/src/x.py", "nested/.githooks.md", "common2/config",
                 "myhooks-old/pre-commit"):
        done = cli("write_file", stdin={"path": path, "content": "x\n"})
        assert done.code == 0, (path, done)
    assert cli("move_file", stdin={"source": "myhooks-old", "destination": "moved"}).code == 0
    assert cli("delete_file", stdin={"path": "moved", "recursive": True}).code == 0
    assert cli("delete_file", stdin={"path": "tree/file.txt"}).code == 0


def test_a_hooks_path_holding_the_worktree_protects_only_the_hooks(ws: Path,
                                                                  cli: CliRunner) -> None:
    (ws / ".git").mkdir()
    (ws / ".git" / "config").write_text("[core]\n\thooksPath = .\n")
    assert cli("write_file", stdin={"path": "pre-commit", "content": "x"}).error["code"] == \
        "protected_path"
    assert cli("write_file", stdin={"path": "src/update", "content": "x"}).code == 0
    assert cli("write_file", stdin={"path": "notes.md", "content": "x"}).code == 0


@pytest.mark.parametrize("config", [
    "[core\n\thooksPath = myhooks\n",  # a broken header: the keys below it belong to no section
    '[core]\n\thooksPath = "myhooks\n',  # a quote left open
    "\x00\xff garbage\n[core]\n\thooksPath = myhooks\n",
    "[core]\n\thooksPath\n",  # a bare key (true): no path
    "[core]\n\thooksPath = \n",
    "[core]\n" + "x" * (2 << 20),  # too large to be a config file git wrote
])
def test_a_malformed_config_never_breaks_a_write(ws: Path, cli: CliRunner, config: str) -> None:
    (ws / ".git").mkdir()
    (ws / ".git" / "config").write_text(config, errors="surrogateescape")
    done = cli("write_file", stdin={"path": "src/a.txt", "content": "x"})
    assert done.code == 0, done
    assert cli("write_file", stdin={"path": ".git/config", "content": "x"}).code == 3


def test_a_config_line_git_cannot_read_does_not_hide_the_next_ones(ws: Path,
                                                                    cli: CliRunner) -> None:
    (ws / ".git").mkdir()
    (ws / ".git" / "config").write_text('[core]\n\tbroken = "x\n\thooksPath = myhooks\n')
    call = cli("write_file", stdin={"path": "myhooks/pre-commit", "content": "x"})
    assert call.error["code"] == "protected_path", call


def test_git_places_not_named_git_are_refused_through_a_real_process(layouts: Path,
                                                                     proc: CliRunner) -> None:
    before = snapshot(layouts)
    for path in ("realgit/config", "myhooks/pre-commit", "common/config"):
        call = proc("write_file", "--args", json.dumps({"path": path, "content": "x"}))
        assert call.code == 3, call
        assert call.error["code"] == "protected_path"
    assert snapshot(layouts) == before


def test_the_setting_allows_writes_to_every_git_place(layouts: Path, cli: CliRunner) -> None:
    env = {"ZBTOOLS_ALLOW_GIT_WRITES": "1"}
    os.link(layouts / "realgit" / "config", layouts / "notes.txt")
    for path in ("realgit/config", "myhooks/pre-commit", "notes.txt"):
        assert cli("write_file", stdin={"path": path, "content": "x\n"}, env=env).code == 0

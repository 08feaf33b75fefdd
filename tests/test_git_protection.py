"""``.git`` internals are never written by default (SECURITY T6): hooks and config are code git
runs later. Every tool that writes, edits, patches, deletes, moves or copies over a path refuses
a location inside ``.git`` (resolved: a symlink or ``..`` does not get around it) with
``protected_path`` (exit 3) and changes nothing; ``[files] allow_git_writes`` (or
``ZBTOOLS_ALLOW_GIT_WRITES=1``) lets them. Reading stays allowed."""

from __future__ import annotations

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

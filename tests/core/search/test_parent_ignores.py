"""A workspace in a subdirectory of a repository: the ignore files above it, up to the
repository's root, apply as rg and fd apply them; containment stays the workspace's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git" / "info").mkdir(parents=True)
    (root / ".git" / "info" / "exclude").write_text("secret.txt\n")
    (root / ".gitignore").write_text("*.log\nbuild/\n")
    (root / "README.md").write_text("TODO readme\n")
    src = root / "src"
    (src / "build").mkdir(parents=True)
    (src / "a.py").write_text("TODO a\n")
    (src / "debug.log").write_text("TODO log\n")
    (src / "secret.txt").write_text("TODO secret\n")
    (src / "build" / "out.py").write_text("TODO built\n")
    (src / ".gitignore").write_text("!keep.log\n")  # deeper rules win, as in git
    (src / "keep.log").write_text("TODO keep\n")
    return root


def zbtools(cwd: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ZBTOOLS_")}
    env["PYTHONPATH"] = str(REPO)
    env["ZBTOOLS_STATE_DIR"] = str(cwd.parent / "state")
    return subprocess.run([sys.executable, "-m", "zbtools", *argv], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=60, check=False)


def paths(cwd: Path, *argv: str) -> list[str]:
    done = zbtools(cwd, *argv, "--paths")
    assert done.returncode == 0, done
    return done.stdout.splitlines()


def test_the_parent_ignore_files_apply_in_a_subdirectory(repo: Path) -> None:
    src = repo / "src"
    assert paths(src, "grep_search", "TODO") == ["a.py", "keep.log"]
    assert paths(src, "find_files_glob", "*") == ["a.py", "keep.log"]
    listing = json.loads(zbtools(src, "list_directory").stdout)["result"]
    assert [e["path"] for e in listing["entries"]] == ["a.py", "keep.log"]
    assert listing["skipped"]["ignored"] == 3  # build/, debug.log, secret.txt
    # the same as from the repository's root, seen from src/
    assert paths(repo, "grep_search", "TODO", "--path", "src") == ["src/a.py", "src/keep.log"]
    # include_ignored still brings everything back
    assert paths(src, "grep_search", "TODO", "--include-ignored") == [
        "a.py", "build/out.py", "debug.log", "keep.log", "secret.txt"]


def test_containment_stays_the_workspace(repo: Path) -> None:
    done = zbtools(repo / "src", "read_file", "../README.md")
    assert done.returncode == 3
    assert json.loads(done.stdout)["error"]["code"] == "outside_workspace"


def test_a_workspace_in_an_ignored_directory_is_listed(repo: Path) -> None:
    # named explicitly (as a start directory the parent rules ignore): its own rules only
    assert paths(repo / "src" / "build", "grep_search", "TODO") == ["out.py"]


def test_outside_a_repository_nothing_above_applies(repo: Path) -> None:
    (repo / ".git" / "info" / "exclude").unlink()
    (repo / ".git" / "info").rmdir()
    (repo / ".git").rmdir()
    assert paths(repo / "src", "grep_search", "TODO") == [
        "a.py", "build/out.py", "debug.log", "keep.log", "secret.txt"]

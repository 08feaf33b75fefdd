"""What the listing and search tools of each dialect hide by default: what its seed (or its
agent's engine) says, nothing more, and a ``skipped`` count only for what was in fact left out.

* fiz ``find``/``grep``: the five directories of fiz's schema (.git, .hg, .svn, node_modules,
  vendor), no hidden or .gitignore'd file; ``exclude_dirs: []`` searches everything.
* fiz and zkit ``ls``: every entry of the directory.
* Claude ``Glob``/``Grep``: ripgrep's defaults (.gitignore and hidden files honoured, no
  directory left out by name).
* zkit ``grep``/``glob`` and the canonical tools: zbtools' defaults (docs/dialects.md).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CliRunner


@pytest.fixture
def tree(ws: Path) -> Path:
    for rel in ("node_modules/m/a.js", "target/b.txt", ".hidden/c.txt", "vendor/d.go",
                "src/e.go", ".env", "ignored.txt", ".git/config", "__pycache__/f.pyc"):
        path = ws / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("needle\n")
    (ws / ".gitignore").write_text("ignored.txt\n")
    return ws


def _paths(result: dict[str, Any]) -> set[str]:
    for key in ("files", "matches", "entries"):
        if key in result:
            items = result[key]
            return {i if isinstance(i, str) else i.get("path") or i.get("name") for i in items}
    raise AssertionError(sorted(result))


ALL_FILES = {"node_modules/m/a.js", "target/b.txt", ".hidden/c.txt", "vendor/d.go", "src/e.go",
             ".env", "ignored.txt", ".git/config", "__pycache__/f.pyc", ".gitignore"}


def test_fiz_find_and_grep_skip_only_the_seeds_five_directories(tree: Path,
                                                                cli: CliRunner) -> None:
    seen = _paths(cli("--dialect", "fiz", "find", stdin={"pattern": "**/*"}).result)
    assert seen == ALL_FILES - {"node_modules/m/a.js", "vendor/d.go", ".git/config"}
    found = cli("--dialect", "fiz", "grep", stdin={"pattern": "needle"}).result
    assert found["skipped"]["hidden"] == 0 and found["skipped"]["ignored"] == 0
    assert found["skipped"]["excluded_dirs"] == 3
    text = cli("--format", "text", "--dialect", "fiz", "find", stdin={"pattern": "**/*"}).out
    notice = text.splitlines()[-1]
    assert "3 excluded directories" in notice and "hidden" not in notice


def test_fiz_exclude_dirs_empty_searches_everything_and_reports_no_skip(
        tree: Path, cli: CliRunner) -> None:
    found = cli("--dialect", "fiz", "find", stdin={"pattern": "**/*", "exclude_dirs": []})
    assert _paths(found.result) == ALL_FILES
    assert not any(found.result["skipped"].values())
    text = cli("--format", "text", "--dialect", "fiz", "find",
               stdin={"pattern": "**/*", "exclude_dirs": []}).out
    assert "skipped" not in text
    grep = cli("--dialect", "fiz", "grep", stdin={"pattern": "needle", "exclude_dirs": []})
    assert not any(grep.result["skipped"].values())
    text = cli("--format", "text", "--dialect", "fiz", "grep",
               stdin={"pattern": "needle", "exclude_dirs": []}).out
    assert "skipped" not in text
    own = cli("--dialect", "fiz", "find", stdin={"pattern": "**/*", "exclude_dirs": ["src"]})
    assert "src/e.go" not in _paths(own.result) and "vendor/d.go" in _paths(own.result)


@pytest.mark.parametrize("dialect", ["fiz", "zkit"])
def test_ls_lists_every_entry(tree: Path, cli: CliRunner, dialect: str) -> None:
    text = cli("--format", "text", "--dialect", dialect, "ls", stdin={}).out
    for name in (".env", ".git/", ".gitignore", ".hidden/", "ignored.txt", "node_modules/",
                 "target/", "vendor/", "__pycache__/", "src/"):
        assert name in text, (name, text)
    assert "skipped" not in text


def test_claude_glob_and_grep_search_as_ripgrep_does(tree: Path, cli: CliRunner) -> None:
    rg_view = ALL_FILES - {".hidden/c.txt", ".env", "ignored.txt", ".git/config",
                           ".gitignore"}
    assert _paths(cli("--dialect", "claude", "Glob", stdin={"pattern": "**/*"}).result) == \
        rg_view
    grep = cli("--dialect", "claude", "Grep", stdin={"pattern": "needle"}).result
    assert _paths(grep) == rg_view


def test_canonical_tools_keep_zbtools_defaults(tree: Path, cli: CliRunner) -> None:
    seen = _paths(cli("find_files_glob", stdin={"pattern": "**/*"}).result)
    assert seen == {"src/e.go"}
    zkit = _paths(cli("--dialect", "zkit", "glob", stdin={"pattern": "**/*"}).result)
    assert zkit == {"src/e.go"}

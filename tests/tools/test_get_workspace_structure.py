"""get_workspace_structure: an overview tree of the project within an entry budget, leaving out
dependency and build directories and saying how much it left out."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CliRunner

TEXT = ("--format", "text")


def make(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def names(result: dict[str, Any]) -> list[str]:
    return [entry["path"] for entry in result["entries"]]


def test_two_levels_are_shown_by_default_without_dependency_directories(
        ws: Path, cli: CliRunner) -> None:
    make(ws, {"src/a/b/c.py": "", "src/main.py": "", "node_modules/p/i.js": "",
              "target/debug/x": "", "__pycache__/m.pyc": "", ".git/HEAD": "", "Cargo.toml": ""})
    result = cli("get_workspace_structure", stdin={}).result
    assert names(result) == ["Cargo.toml", "src", "src/a", "src/main.py"]
    assert result["depth"] == 2 and result["omitted"] == 0 and result["omitted_exact"] is True
    assert result["skipped"]["excluded_dirs"] == 4


def test_depth_and_path_choose_what_is_shown(ws: Path, cli: CliRunner) -> None:
    make(ws, {"src/a/b/c.py": ""})
    result = cli("get_workspace_structure", "--path", "src", "--depth", "3").result
    assert result["path"] == "src"
    assert names(result) == ["src/a", "src/a/b", "src/a/b/c.py"]


def test_the_limit_keeps_shallow_levels_first_and_counts_the_rest(ws: Path,
                                                                  cli: CliRunner) -> None:
    make(ws, {f"big/f{i:02}": "" for i in range(30)})
    make(ws, {"z.txt": ""})
    result = cli("get_workspace_structure", stdin={"limit": 5}).result
    assert names(result) == ["big", "big/f00", "big/f01", "big/f02", "z.txt"]
    assert result["count"] == 5 and result["omitted"] == 27
    out = cli("get_workspace_structure", "--limit", "5", *TEXT).out
    assert out.endswith("[27 more entries not shown (limit 5); raise limit (at most 200) or "
                        "look at a subdirectory]\n")


def test_the_default_limit_is_50_and_at_most_200(ws: Path, cli: CliRunner) -> None:
    make(ws, {f"f{i:03}": "" for i in range(60)})
    result = cli("get_workspace_structure", stdin={}).result
    assert result["count"] == 50 and result["omitted"] == 10
    call = cli("get_workspace_structure", stdin={"limit": 201})
    assert call.error["code"] == "invalid_arguments"


def test_hidden_and_ignored_entries_are_counted_and_can_be_included(ws: Path,
                                                                    cli: CliRunner) -> None:
    make(ws, {".gitignore": "dist/\n", "dist/bundle.js": "", ".env": "", "app.py": ""})
    result = cli("get_workspace_structure", stdin={}).result
    assert names(result) == ["app.py"]
    assert (result["skipped"]["ignored"], result["skipped"]["hidden"]) == (1, 2)
    everything = cli("get_workspace_structure", stdin={"include_hidden": True,
                                                       "include_ignored": True}).result
    assert names(everything) == [".env", ".gitignore", "app.py", "dist", "dist/bundle.js"]


def test_exclude_dirs_overrides_the_default_list(ws: Path, cli: CliRunner) -> None:
    make(ws, {"node_modules/p": "", "gen/x": ""})
    result = cli("get_workspace_structure", stdin={"exclude_dirs": ["gen"]}).result
    assert names(result) == ["node_modules", "node_modules/p"]


def test_text_rendering_is_a_tree_with_the_skipped_note(ws: Path, cli: CliRunner) -> None:
    make(ws, {"src/lib.rs": "", "src/main.rs": "", "Cargo.toml": "", "target/x": ""})
    out = cli("get_workspace_structure", *TEXT).out
    assert out == ("./\n"
                   "├── Cargo.toml\n"
                   "└── src/\n"
                   "    ├── lib.rs\n"
                   "    └── main.rs\n"
                   "[skipped: 1 excluded directory; to show them: exclude_dirs: []]\n")


@pytest.mark.parametrize("path,code", [
    ("missing", "not_found"), ("file.txt", "not_a_directory"), ("../", "outside_workspace")])
def test_errors_have_stable_codes(ws: Path, cli: CliRunner, path: str, code: str) -> None:
    make(ws, {"file.txt": ""})
    assert cli("get_workspace_structure", stdin={"path": path}).error["code"] == code

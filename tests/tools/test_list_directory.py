"""list_directory (aliases list_dir, ls): a tree view of a directory, transparent about what it
left out."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CliRunner, snapshot

TEXT = ("--format", "text")


def make(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def names(result: dict[str, Any]) -> list[str]:
    return [entry["path"] for entry in result["entries"]]


@pytest.mark.parametrize("tool", ["list_directory", "list_dir", "ls"])
def test_every_name_lists_the_workspace_root_by_default(ws: Path, cli: CliRunner,
                                                        tool: str) -> None:
    make(ws, {"b.txt": "hello", "a/inner.txt": ""})
    result = cli(tool, stdin={}).result
    assert result["path"] == "."
    assert result["entries"] == [
        {"path": "a", "name": "a", "type": "directory", "size": None, "depth": 1,
         "target": None},
        {"path": "b.txt", "name": "b.txt", "type": "file", "size": 5, "depth": 1,
         "target": None},
    ]
    assert result["count"] == 2 and result["truncated"] is False
    assert result["skipped"] == {"ignored": 0, "hidden": 0, "binary": 0, "too_large": 0,
                                 "excluded_dirs": 0, "unreadable": 0}


@pytest.mark.parametrize("alias", ["path", "dir", "directory", "dir_path"])
def test_the_seed_aliases_of_path_are_accepted(ws: Path, cli: CliRunner, alias: str) -> None:
    make(ws, {"src/main.rs": ""})
    assert names(cli("list_dir", stdin={alias: "src"}).result) == ["src/main.rs"]


def test_max_depth_descends_that_many_levels(ws: Path, cli: CliRunner) -> None:
    make(ws, {"src/lib/deep/x.py": "", "src/main.py": ""})
    result = cli("list_directory", "--path", "src", "--max-depth", "2").result
    assert names(result) == ["src/lib", "src/lib/deep", "src/main.py"]
    assert [e["depth"] for e in result["entries"]] == [1, 2, 1]


def test_skipped_entries_are_counted_by_kind(ws: Path, cli: CliRunner) -> None:
    make(ws, {".gitignore": "*.log\n", "debug.log": "", ".env": "", "node_modules/x/y": "",
              ".git/HEAD": "", "app.py": ""})
    result = cli("ls", stdin={}).result
    assert names(result) == ["app.py"]
    assert result["skipped"] == {"ignored": 1, "hidden": 2, "binary": 0, "too_large": 0,
                                 "excluded_dirs": 2, "unreadable": 0}


def test_switches_bring_back_hidden_ignored_and_excluded_entries(ws: Path,
                                                                 cli: CliRunner) -> None:
    make(ws, {".gitignore": "*.log\n", "debug.log": "", ".env": "", "node_modules/x": ""})
    result = cli("ls", stdin={"include_hidden": True, "include_ignored": True,
                              "exclude_dirs": []}).result
    assert names(result) == [".env", ".gitignore", "debug.log", "node_modules"]
    assert result["skipped"]["hidden"] == result["skipped"]["ignored"] == 0


def test_symlinks_are_listed_with_their_target_and_not_followed(ws: Path,
                                                                cli: CliRunner) -> None:
    make(ws, {"real/a.txt": ""})
    (ws / "inside").symlink_to("real")
    (ws / "escape").symlink_to(ws.parent / "outside")
    result = cli("ls", stdin={"max_depth": 5}).result
    assert names(result) == ["escape", "inside", "real", "real/a.txt"]
    assert [e["type"] for e in result["entries"][:2]] == ["symlink", "symlink"]
    assert result["entries"][1]["target"] == "real"


def test_limit_truncates_and_says_so(ws: Path, cli: CliRunner) -> None:
    make(ws, {f"f{i:02}": "" for i in range(12)})
    result = cli("ls", stdin={"limit": 10}).result
    assert result["count"] == 10 and result["truncated"] is True
    out = cli("ls", "--limit", "10", *TEXT).out
    assert "[showing the first 10 entries; raise limit or list a subdirectory]" in out


def test_text_rendering_is_a_tree(ws: Path, cli: CliRunner) -> None:
    make(ws, {"src/lib/x.py": "", "src/main.py": "", "README.md": ""})
    (ws / "link").symlink_to("src")
    call = cli("list_directory", "--max-depth", "3", *TEXT)
    assert call.code == 0
    assert call.out == ("./\n"
                        "├── README.md\n"
                        "├── link -> src\n"
                        "└── src/\n"
                        "    ├── lib/\n"
                        "    │   └── x.py\n"
                        "    └── main.py\n")


def test_text_rendering_says_what_was_skipped_when_nothing_is_shown(
        ws: Path, cli: CliRunner) -> None:
    make(ws, {".gitignore": "*.o\n", "a.o": "", "node_modules/m": ""})
    out = cli("ls", *TEXT).out
    assert out == ("./\n[nothing shown; skipped: 1 ignored, 1 hidden, 1 excluded directory; "
                   "to show them: include_hidden: true, include_ignored: true, exclude_dirs: []]\n")
    (ws / "empty").mkdir()
    assert cli("ls", "--path", "empty", *TEXT).out == "empty/\n(empty)\n"


@pytest.mark.parametrize("path,code", [
    ("missing", "not_found"), ("file.txt", "not_a_directory"), ("..", "outside_workspace"),
    ("/etc", "outside_workspace"), ("escape", "outside_workspace")])
def test_errors_have_stable_codes(ws: Path, cli: CliRunner, path: str, code: str) -> None:
    make(ws, {"file.txt": ""})
    (ws / "escape").symlink_to(ws.parent / "outside")
    call = cli("list_directory", stdin={"path": path})
    assert call.code != 0
    assert call.error["code"] == code


def test_listing_changes_nothing(ws: Path, cli: CliRunner) -> None:
    make(ws, {".gitignore": "x\n", "a/b/c": "d"})
    before = snapshot(ws)
    cli("ls", stdin={"max_depth": 5, "include_hidden": True})
    assert snapshot(ws) == before

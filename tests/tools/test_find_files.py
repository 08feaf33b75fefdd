"""find_files: a case-insensitive substring of file names, transparent about what it skipped."""

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


def paths(result: dict[str, Any]) -> list[str]:
    return [match["path"] for match in result["matches"]]


def test_the_pattern_is_a_case_insensitive_substring_of_the_name(ws: Path,
                                                                  cli: CliRunner) -> None:
    make(ws, {"src/test_api.py": "x", "src/MyTest.java": "", "src/main.py": "",
              "testdata/readme.md": ""})
    result = cli("find_files", stdin={"pattern": "TEST"}).result
    assert paths(result) == ["src/MyTest.java", "src/test_api.py"]
    assert result["count"] == 2 and result["truncated"] is False
    assert result["scan_limited"] is False
    first = result["matches"][1]
    assert first["type"] == "file" and first["size"] == 1
    assert first["modified"].endswith("Z") and first["modified"][4] == "-"


@pytest.mark.parametrize("alias", ["path", "dir", "directory"])
def test_the_seed_aliases_of_path_choose_where_to_search(ws: Path, cli: CliRunner,
                                                         alias: str) -> None:
    make(ws, {"src/util.py": "", "lib/util.py": ""})
    assert paths(cli("find_files", stdin={"pattern": "util", alias: "lib"}).result) == \
        ["lib/util.py"]


def test_max_depth_limits_how_deep_the_search_goes(ws: Path, cli: CliRunner) -> None:
    make(ws, {"a.txt": "", "d/a.txt": "", "d/e/a.txt": ""})
    result = cli("find_files", "--pattern", "a.txt", "--max-depth", "2").result
    assert paths(result) == ["a.txt", "d/a.txt"]
    assert paths(cli("find_files", stdin={"pattern": "a.txt"}).result) == \
        ["a.txt", "d/a.txt", "d/e/a.txt"]


def test_a_pattern_with_a_slash_matches_the_path_below_the_search_directory(
        ws: Path, cli: CliRunner) -> None:
    make(ws, {"src/api/v1/routes.py": "", "src/api/v2/routes.py": ""})
    assert paths(cli("find_files", stdin={"pattern": "API/v1"}).result) == \
        ["src/api/v1/routes.py"]


def test_wildcards_are_plain_characters_and_a_warning_points_to_the_glob_tool(
        ws: Path, cli: CliRunner) -> None:
    make(ws, {"a.py": ""})
    envelope = cli("find_files", stdin={"pattern": "*.py"}).json
    assert envelope["result"]["matches"] == []
    assert any("find_files_glob" in w for w in envelope["warnings"])


def test_type_chooses_files_directories_or_both(ws: Path, cli: CliRunner) -> None:
    make(ws, {"tests/test_x.py": ""})
    assert paths(cli("find_files", stdin={"pattern": "test"}).result) == ["tests/test_x.py"]
    assert paths(cli("find_files", stdin={"pattern": "test", "type": "directory"}).result) == \
        ["tests"]
    assert paths(cli("find_files", stdin={"pattern": "test", "type": "any"}).result) == \
        ["tests", "tests/test_x.py"]


def test_ignored_hidden_and_excluded_files_are_skipped_and_counted(ws: Path,
                                                                   cli: CliRunner) -> None:
    make(ws, {".gitignore": "*.log\nbuild/\n", "app.log": "", "build/app.js": "",
              ".app.rc": "", "node_modules/app/index.js": "", "app.py": ""})
    result = cli("find_files", stdin={"pattern": "app"}).result
    assert paths(result) == ["app.py"]
    assert result["skipped"] == {"ignored": 2, "hidden": 2, "binary": 0, "too_large": 0,
                                 "excluded_dirs": 1, "unreadable": 0}


def test_the_switches_search_ignored_hidden_and_excluded_files_too(ws: Path,
                                                                   cli: CliRunner) -> None:
    make(ws, {".gitignore": "*.log\n", "app.log": "", ".app.rc": "",
              "node_modules/app/index.js": ""})
    result = cli("find_files", stdin={"pattern": "app", "include_ignored": True}).result
    assert paths(result) == ["app.log"]
    result = cli("find_files", stdin={"pattern": "app", "include_hidden": True,
                                      "include_ignored": True, "exclude_dirs": [],
                                      "type": "any"}).result
    assert paths(result) == [".app.rc", "app.log", "node_modules/app"]


def test_text_output_is_one_path_per_line_then_what_was_skipped(ws: Path,
                                                                 cli: CliRunner) -> None:
    make(ws, {".gitignore": "*.log\n", "x.log": "", "x.py": "", "d/x.md": ""})
    assert cli("find_files", "--pattern", "x", *TEXT).out == (
        "d/x.md\nx.py\n[skipped: 1 ignored, 1 hidden; to search them: include_hidden: true, "
        "include_ignored: true]\n")


def test_text_output_says_zero_matches_and_how_to_find_skipped_files(ws: Path,
                                                                     cli: CliRunner) -> None:
    make(ws, {".gitignore": "*.log\n", "debug.log": ""})
    call = cli("find_files", "--pattern", "debug", *TEXT)
    assert call.code == 0
    assert call.out == ("[0 matches; skipped: 1 ignored, 1 hidden; to search them: "
                        "include_hidden: true, include_ignored: true]\n")
    (ws / ".gitignore").unlink()
    (ws / "debug.log").unlink()
    assert cli("find_files", "--pattern", "debug", *TEXT).out == "[0 matches]\n"


def test_limit_truncates_and_the_text_output_says_so(ws: Path, cli: CliRunner) -> None:
    make(ws, {f"f{i:02}.txt": "" for i in range(12)})
    result = cli("find_files", stdin={"pattern": "f", "limit": 10}).result
    assert result["count"] == 10 and result["truncated"] is True
    assert paths(result)[-1] == "f09.txt"
    out = cli("find_files", "--pattern", "f", "--limit", "10", *TEXT).out
    assert "[showing the first 10 matches; raise limit or narrow the search]\n" in out


def test_symlinks_are_matched_by_name_and_never_followed_outside(ws: Path,
                                                                 cli: CliRunner) -> None:
    (ws / "secret_link").symlink_to(ws.parent / "outside")
    result = cli("find_files", stdin={"pattern": "secret"}).result
    assert paths(result) == ["secret_link"]
    assert result["matches"][0]["type"] == "symlink"


def test_an_empty_pattern_is_invalid(ws: Path, cli: CliRunner) -> None:
    call = cli("find_files", stdin={"pattern": ""})
    assert call.code != 0
    assert call.error["code"] == "invalid_arguments"
    assert "list_directory" in call.error["hint"]


@pytest.mark.parametrize("path,code", [
    ("missing", "not_found"), ("file.txt", "not_a_directory"), ("..", "outside_workspace"),
    ("/etc", "outside_workspace"), ("escape", "outside_workspace")])
def test_errors_have_stable_codes(ws: Path, cli: CliRunner, path: str, code: str) -> None:
    make(ws, {"file.txt": ""})
    (ws / "escape").symlink_to(ws.parent / "outside")
    call = cli("find_files", stdin={"pattern": "secret", "path": path})
    assert call.code != 0
    assert call.error["code"] == code


def test_searching_changes_nothing(ws: Path, cli: CliRunner) -> None:
    make(ws, {".gitignore": "x\n", "a/b/c": "d"})
    before = snapshot(ws)
    cli("find_files", stdin={"pattern": "c", "include_hidden": True})
    assert snapshot(ws) == before


@pytest.mark.parametrize("tool,args", [
    ("find_files", {"pattern": "bottom"}),
    ("find_files_glob", {"pattern": "**/bottom.txt"}),
    ("grep_search", {"pattern": "bottom"}),
    ("grep_search", {"pattern": "bottom", "engine": "python", "output_mode": "count"}),
    ("codebase_search", {"query": "bottom"}),
    ("list_directory", {"max_depth": 512, "limit": 10000}),
    ("get_workspace_structure", {"depth": 512}),
])
def test_a_tree_deeper_than_the_depth_cap_says_what_was_not_entered(
        ws: Path, cli: CliRunner, tool: str, args: dict[str, Any]) -> None:
    """600 levels: the walk stops at 512 and the result says so instead of a silent "nothing"."""
    import os

    from tests.tools._mutate import make_deep_tree
    from zbtools.core.files.fsops import remove_tree

    make_deep_tree(ws, "deep", 600, leaf="bottom.txt")
    try:
        call = cli(tool, stdin=args)
        assert call.json["ok"] is True
        warnings = call.json["warnings"]
        assert any("deeper than 512 levels" in w for w in warnings), warnings
        shallow = cli("list_directory", stdin={}).json["warnings"]
        assert not any("deeper" in w for w in shallow)
    finally:
        fd = os.open(ws, os.O_RDONLY | os.O_DIRECTORY)
        try:
            remove_tree(fd, "deep", "deep")
        finally:
            os.close(fd)

"""codebase_search: a regex search with 2 lines of context around every match."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import CliRunner

TEXT = ("--format", "text")


def make(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


@pytest.mark.parametrize("alias", ["query", "pattern", "regex"])
def test_matches_come_with_two_lines_of_context(ws: Path, cli: CliRunner, alias: str) -> None:
    make(ws, {"src/lib.rs": "a\nb\nc\nfn parse() {}\nd\ne\nf\n"})
    match, = cli("codebase_search", stdin={alias: r"fn \w+\("}).result["matches"]
    assert match == {"path": "src/lib.rs", "line": 4, "text": "fn parse() {}",
                     "before": ["b", "c"], "after": ["d", "e"]}


def test_file_pattern_keeps_files_by_base_name(ws: Path, cli: CliRunner) -> None:
    make(ws, {"src/a.rs": "key\n", "Cargo.toml": "key = 1\n", "notes.md": "key\n"})
    result = cli("codebase_search", stdin={"query": "key",
                                           "file_pattern": "*.rs,*.toml"}).result
    assert [m["path"] for m in result["matches"]] == ["Cargo.toml", "src/a.rs"]


def test_max_results_defaults_to_50_and_truncates(ws: Path, cli: CliRunner) -> None:
    make(ws, {"a.txt": "x\n" * 60})
    result = cli("codebase_search", stdin={"query": "x"}).result
    assert len(result["matches"]) == 50 and result["truncated"] is True
    small = cli("codebase_search", stdin={"query": "x", "max_results": 20}).result
    assert len(small["matches"]) == 20


def test_text_output_is_ripgrep_style(ws: Path, cli: CliRunner) -> None:
    make(ws, {"a.py": "1\n2\nhit\n4\n"})
    assert cli("codebase_search", "--query", "hit", *TEXT).out == (
        "a.py-1-1\na.py-2-2\na.py:3:hit\na.py-4-4\n")


def test_an_invalid_query_is_a_regex_error(ws: Path, cli: CliRunner) -> None:
    call = cli("codebase_search", stdin={"query": "(unclosed"})
    assert call.code == 2 and call.error["code"] == "regex_error"


def test_nothing_found_says_what_was_not_searched(ws: Path, cli: CliRunner) -> None:
    make(ws, {".gitignore": "gen/\n", "gen/x.py": "needle\n"})
    out = cli("codebase_search", "--query", "needle", *TEXT).out
    assert "0 matches" in out and "1 ignored" in out


def test_the_truncation_notice_names_this_tools_own_limit(ws: Path, cli: CliRunner) -> None:
    (ws / "a.txt").write_text("hit\n" * 5)
    out = cli("codebase_search", "--query", "hit", "--max-results", "2", "--format", "text").out
    assert "raise max_results" in out
    assert "head_limit" not in out
    assert cli("codebase_search", "--query", "hit", "--head-limit", "2").code == 2

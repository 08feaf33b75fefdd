"""grep_search (aliases rg, grep): ripgrep-style content search, honest about what it skipped."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import CliRunner, snapshot

TEXT = ("--format", "text")


def make(root: Path, files: dict[str, str | bytes]) -> None:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)


def hits(result: dict[str, Any]) -> list[tuple[str, int, str]]:
    return [(m["path"], m["line"], m["text"]) for m in result["matches"]]


@pytest.mark.parametrize("tool", ["grep_search", "rg", "grep"])
def test_every_name_finds_matching_lines_with_numbers(ws: Path, cli: CliRunner,
                                                      tool: str) -> None:
    make(ws, {"a.py": "def foo():\n    return 1\nfoo()\n", "b.txt": "nothing\n"})
    result = cli(tool, stdin={"pattern": "foo"}).result
    assert hits(result) == [("a.py", 1, "def foo():"), ("a.py", 3, "foo()")]
    assert result["total_matches"] == 2 and result["files_with_matches"] == 1
    assert result["files_searched"] == 2
    assert result["truncated"] is False and result["timed_out"] is False


@pytest.mark.parametrize("alias", ["pattern", "query", "regex"])
def test_the_pattern_aliases_are_accepted(ws: Path, cli: CliRunner, alias: str) -> None:
    make(ws, {"a.txt": "x\nneedle\n"})
    assert hits(cli("grep_search", stdin={alias: "need"}).result) == [("a.txt", 2, "needle")]


@pytest.mark.parametrize("alias", ["path", "dir", "directory"])
def test_the_path_aliases_limit_the_search(ws: Path, cli: CliRunner, alias: str) -> None:
    make(ws, {"src/a.rs": "hit\n", "docs/b.md": "hit\n"})
    result = cli("rg", stdin={"pattern": "hit", alias: "src"}).result
    assert hits(result) == [("src/a.rs", 1, "hit")]
    assert result["path"] == "src"


def test_a_single_file_can_be_searched(ws: Path, cli: CliRunner) -> None:
    make(ws, {"src/a.rs": "one\ntwo hit\n", "src/b.rs": "hit\n"})
    assert hits(cli("rg", "--pattern", "hit", "--path", "src/a.rs").result) == [
        ("src/a.rs", 2, "two hit")]


def test_files_with_matches_mode_lists_paths_only(ws: Path, cli: CliRunner) -> None:
    make(ws, {"b.py": "x\nx\n", "a.py": "x\n", "c.py": "y\n"})
    result = cli("rg", stdin={"pattern": "x", "output_mode": "files_with_matches"}).result
    assert result["files"] == ["a.py", "b.py"] and result["matches"] == []
    assert cli("rg", *TEXT, stdin={"pattern": "x",
                                      "output_mode": "files_with_matches"}).out == "a.py\nb.py\n"


def test_count_mode_counts_matching_lines_per_file(ws: Path, cli: CliRunner) -> None:
    make(ws, {"a.py": "x x\nx\ny\n", "b.py": "x\n"})
    result = cli("rg", stdin={"pattern": "x", "output_mode": "count"}).result
    assert result["counts"] == [{"path": "a.py", "count": 2}, {"path": "b.py", "count": 1}]
    assert result["total_matches"] == 3
    assert cli("rg", "--pattern", "x", "--output-mode", "count", *TEXT).out == "a.py:2\nb.py:1\n"


def test_content_text_output_is_ripgrep_style_with_context(ws: Path, cli: CliRunner) -> None:
    make(ws, {"a.txt": "1\n2\nhit\n4\n5\n6\n7\nhit\n9\n"})
    out = cli("rg", "--pattern", "hit", "--context", "1", *TEXT).out
    assert out == ("a.txt-2-2\na.txt:3:hit\na.txt-4-4\n--\n"
                   "a.txt-7-7\na.txt:8:hit\na.txt-9-9\n")


@pytest.mark.parametrize("args,before,after", [
    ({"before_context": 2}, ["1", "2"], []),
    ({"B": 1}, ["2"], []),
    ({"after_context": 2}, [], ["4", "5"]),
    ({"A": 1}, [], ["4"]),
    ({"context": 1}, ["2"], ["4"]),
    ({"C": 2}, ["1", "2"], ["4", "5"]),
])
def test_context_options_and_their_aliases(ws: Path, cli: CliRunner, args: dict[str, int],
                                           before: list[str], after: list[str]) -> None:
    make(ws, {"a.txt": "1\n2\nhit\n4\n5\n"})
    match, = cli("rg", stdin={"pattern": "hit", **args}).result["matches"]
    assert (match["before"], match["after"]) == (before, after)


def test_adjacent_matches_share_their_context_in_text_output(ws: Path, cli: CliRunner) -> None:
    make(ws, {"a.txt": "a\nhit\nhit\nb\n"})
    assert cli("rg", "--pattern", "hit", "--C", "1", *TEXT).out == (
        "a.txt-1-a\na.txt:2:hit\na.txt:3:hit\na.txt-4-b\n")


@pytest.mark.parametrize("key", ["case_insensitive", "ignore_case"])
def test_case_insensitive_matching(ws: Path, cli: CliRunner, key: str) -> None:
    make(ws, {"a.txt": "Hello\nhello\nHELLO\nbye\n"})
    assert len(cli("rg", stdin={"pattern": "hello"}).result["matches"]) == 1
    assert len(cli("rg", stdin={"pattern": "hello", key: True}).result["matches"]) == 3


def test_fixed_strings_search_the_text_literally(ws: Path, cli: CliRunner) -> None:
    make(ws, {"a.txt": "f(x)\nfx\n"})
    assert hits(cli("rg", stdin={"pattern": "f(x)", "fixed_strings": True}).result) == [
        ("a.txt", 1, "f(x)")]
    assert hits(cli("rg", stdin={"pattern": "f(x)"}).result) == [("a.txt", 2, "fx")]


def test_multiline_lets_a_match_span_lines(ws: Path, cli: CliRunner) -> None:
    make(ws, {"a.rs": "struct A {\n    x: i32,\n}\n"})
    assert cli("rg", stdin={"pattern": r"\{\s*x"}).result["matches"] == []
    result = cli("rg", stdin={"pattern": r"\{\s*x", "multiline": True}).result
    assert hits(result) == [("a.rs", 1, "struct A {\n    x: i32,")]
    assert cli("rg", *TEXT, stdin={"pattern": r"\{\s*x", "multiline": True}).out == (
        "a.rs:1:struct A {\na.rs:2:    x: i32,\n")


@pytest.mark.parametrize("glob,expected", [
    ("*.py", ["src/a.py", "top.py"]),
    ("*.py,*.md", ["README.md", "src/a.py", "top.py"]),
    ("*.{py,md}", ["README.md", "src/a.py", "top.py"]),
    ("src/*", ["src/a.py", "src/b.rs"]),
    ("!*.py", ["README.md", "src/b.rs"]),
])
def test_glob_filters_files(ws: Path, cli: CliRunner, glob: str, expected: list[str]) -> None:
    make(ws, {"src/a.py": "x\n", "src/b.rs": "x\n", "top.py": "x\n", "README.md": "x\n"})
    result = cli("rg", stdin={"pattern": "x", "glob": glob,
                              "output_mode": "files_with_matches"}).result
    assert sorted(result["files"]) == expected


def test_type_filters_by_language(ws: Path, cli: CliRunner) -> None:
    make(ws, {"a.rs": "x\n", "b.py": "x\n", "c.pyi": "x\n", "d.toml": "x\n"})
    result = cli("rg", stdin={"pattern": "x", "type": "py",
                              "output_mode": "files_with_matches"}).result
    assert result["files"] == ["b.py", "c.pyi"]
    error = cli("rg", stdin={"pattern": "x", "type": "cobol"})
    assert error.code == 2 and error.error["code"] == "invalid_arguments"


def test_binary_files_are_skipped_and_counted(ws: Path, cli: CliRunner) -> None:
    make(ws, {"blob.bin": b"needle\0\x01\x02", "a.txt": "needle\n"})
    result = cli("rg", stdin={"pattern": "needle"}).result
    assert hits(result) == [("a.txt", 1, "needle")]
    assert result["skipped"]["binary"] == 1 and result["files_searched"] == 1


def test_ignored_files_are_skipped_counted_and_can_be_included(ws: Path,
                                                               cli: CliRunner) -> None:
    make(ws, {".gitignore": "*.log\nbuild/\n", "debug.log": "needle\n",
              "build/out.js": "needle\n", "app.py": "nothing\n"})
    result = cli("rg", stdin={"pattern": "needle"}).result
    assert result["matches"] == []
    assert result["skipped"]["ignored"] == 2 and result["skipped"]["hidden"] == 1
    out = cli("rg", "--pattern", "needle", *TEXT).out
    assert out.startswith("[0 matches in 1 files searched; not searched: 2 ignored, 1 hidden")
    assert "include_ignored: true" in out
    found = cli("rg", stdin={"pattern": "needle", "include_ignored": True}).result
    assert [m["path"] for m in found["matches"]] == ["build/out.js", "debug.log"]


def test_hidden_and_excluded_directories_come_back_on_request(ws: Path,
                                                             cli: CliRunner) -> None:
    make(ws, {".env": "needle\n", "node_modules/m/i.js": "needle\n"})
    assert cli("rg", stdin={"pattern": "needle"}).result["matches"] == []
    result = cli("rg", stdin={"pattern": "needle", "include_hidden": True,
                              "exclude_dirs": []}).result
    assert [m["path"] for m in result["matches"]] == [".env", "node_modules/m/i.js"]


def test_an_invalid_regex_fails_with_its_position(ws: Path, cli: CliRunner) -> None:
    make(ws, {"a.txt": "x\n"})
    call = cli("rg", stdin={"pattern": "a)b"})
    assert call.code == 2
    assert call.error["code"] == "regex_error"
    assert call.error["details"]["position"] == 1
    assert "unbalanced parenthesis" in call.error["message"]
    assert "fixed_strings" in call.error["hint"]


def test_a_catastrophic_pattern_returns_quickly_flagged_or_as_regex_timeout(
        ws: Path, cli: CliRunner) -> None:
    make(ws, {"a.txt": "a" * 50_000 + "b\n"})
    started = time.monotonic()
    call = cli("rg", stdin={"pattern": "(a+)+$", "timeout": 0.05, "engine": "python"})
    assert time.monotonic() - started < 5
    assert call.code == 1 and call.error["code"] == "regex_timeout"


def test_the_rg_engine_answers_a_catastrophic_pattern_in_linear_time(ws: Path,
                                                                     cli: CliRunner) -> None:
    from zbtools.core.search.ripgrep import find_rg

    if find_rg() is None:
        pytest.skip("no rg binary")
    make(ws, {"a.txt": "a" * 50_000 + "b\n", "c.txt": "aaa\n"})
    result = cli("rg", stdin={"pattern": "(a+)+$", "timeout": 5, "engine": "rg"}).result
    assert [m["path"] for m in result["matches"]] == ["c.txt"]
    assert result["timed_out"] is False


def test_a_timeout_after_some_files_keeps_the_partial_results(ws: Path,
                                                              cli: CliRunner) -> None:
    make(ws, {"a.txt": "aab\n", "b.txt": "a" * 50_000 + "b\n"})
    call = cli("rg", stdin={"pattern": "(a+)+$", "timeout": 0.2, "engine": "python"})
    result = call.result
    assert result["timed_out"] is True and result["files_searched"] == 1
    assert "timed out" in cli("rg", *TEXT, stdin={"pattern": "(a+)+$", "timeout": 0.2,
                                                   "engine": "python"}).out


def test_long_lines_are_cut_with_a_marker(ws: Path, cli: CliRunner) -> None:
    make(ws, {"min.js": "x" * 5000 + "needle" + "y" * 5000 + "\n"})
    text = cli("rg", stdin={"pattern": "needle"}).result["matches"][0]["text"]
    assert "needle" in text and "chars cut]" in text and len(text) < 600


def test_head_limit_and_max_results_truncate_and_say_so(ws: Path, cli: CliRunner) -> None:
    make(ws, {"a.txt": "x\n" * 10, "b.txt": "x\n"})
    for key in ("head_limit", "max_results"):
        result = cli("rg", stdin={"pattern": "x", key: 3}).result
        assert len(result["matches"]) == 3 and result["truncated"] is True
    exact = cli("rg", stdin={"pattern": "x", "head_limit": 11}).result
    assert len(exact["matches"]) == 11 and exact["truncated"] is False
    files = cli("rg", stdin={"pattern": "x", "head_limit": 1,
                             "output_mode": "files_with_matches"}).result
    assert files["files"] == ["a.txt"] and files["truncated"] is True
    assert "raise head_limit" in cli("rg", "--pattern", "x", "--head-limit", "2", *TEXT).out


def test_results_come_in_the_same_path_order_on_every_run(ws: Path, cli: CliRunner) -> None:
    make(ws, {f"d{i % 3}/f{i}.txt": "hit\n" for i in range(30)})
    runs = [cli("rg", stdin={"pattern": "hit"}).result["matches"] for _ in range(3)]
    assert runs[0] == runs[1] == runs[2]
    paths = [m["path"] for m in runs[0]]
    assert paths == sorted(paths, key=lambda p: p.split("/"))


def test_searching_outside_the_workspace_is_refused(ws: Path, cli: CliRunner) -> None:
    call = cli("rg", stdin={"pattern": "secret", "path": "../outside"})
    assert call.error["code"] == "outside_workspace"
    assert cli("rg", stdin={"pattern": "x", "path": "missing"}).error["code"] == "not_found"


def test_searching_changes_nothing(ws: Path, cli: CliRunner) -> None:
    make(ws, {"a.txt": "x\n", ".gitignore": "b\n", "b": "x\n"})
    before = snapshot(ws)
    cli("rg", stdin={"pattern": "x"})
    assert snapshot(ws) == before


def ripgrep() -> str:
    found = Path(sys.executable).parent / "rg"
    path = str(found) if found.exists() else shutil.which("rg")
    assert path, "ripgrep is a dev dependency: pip install --only-binary :all: ripgrep"
    return path


def test_content_lines_match_ripgrep(ws: Path, cli: CliRunner) -> None:
    make(ws, {"src/main.rs": "fn main() {\n    let foo = 1;\n}\n",
              "src/lib/util.py": "def foo():\n    pass\n# FOO bar foo\n",
              "README.md": "Use foo.\n\nNo match here\n", "a.txt": "foofoo\nfo o\n",
              "blob.bin": b"foo\0foo\n", "empty.txt": ""})
    ours = cli("rg", "--pattern", r"fo+\b", *TEXT).out.splitlines()
    env = {k: v for k, v in os.environ.items() if k != "RIPGREP_CONFIG_PATH"}
    theirs = subprocess.run([ripgrep(), "-n", "--no-heading", "--color", "never", r"fo+\b"],
                            cwd=ws, env=env, capture_output=True, text=True, check=True)
    assert sorted(ours) == sorted(theirs.stdout.splitlines())
    assert len(ours) == 6


def test_a_utf8_bom_is_not_part_of_the_first_line(ws: Path, cli: CliRunner) -> None:
    (ws / "bom.py").write_bytes(b"\xef\xbb\xbf# coding: utf-8\nx = 1\n")
    match, = cli("rg", stdin={"pattern": "coding"}).result["matches"]
    assert match["text"] == "# coding: utf-8"


def test_an_explicit_zero_before_or_after_wins_over_context(ws: Path, cli: CliRunner) -> None:
    make(ws, {"a.txt": "1\n2\nhit\n4\n5\n"})
    match = cli("grep_search", stdin={"pattern": "hit", "context": 2, "before_context": 0}
                ).result["matches"][0]
    assert match["before"] == [] and match["after"] == ["4", "5"]
    match = cli("grep_search", "-C", "1", "-A", "0", "--pattern", "hit").result["matches"][0]
    assert match["before"] == ["2"] and match["after"] == []


@pytest.mark.parametrize("size", [1024 * 1024 - 1, 1024 * 1024, 1024 * 1024 + 7, 3 * 1024 * 1024])
def test_files_around_the_read_buffer_size_are_searched_whole(ws: Path, cli: CliRunner,
                                                              size: int) -> None:
    from zbtools.core.search.engine import READ_BUFFER

    assert READ_BUFFER == 1024 * 1024
    body = ("x" * 99 + "\n") * (size // 100)
    tail = "needle at the end\n"
    (ws / "big.txt").write_text(body[:size - len(tail)] + tail)
    (ws / "small.txt").write_text("needle\n")
    result = cli("grep_search", "--pattern", "needle", "--engine", "python").result
    found = {m["path"]: m["line"] for m in result["matches"]}
    assert found["small.txt"] == 1
    assert found["big.txt"] == (size - len(tail)) // 100 + 1
    assert result["files_searched"] == 2


def test_file_types_are_ripgreps_own_table(ws: Path, cli: CliRunner) -> None:
    files: dict[str, str | bytes] = {
        "a.html": "x\n", "b.css": "x\n", "c.rb": "x\n", "d.php": "x\n", "e.swift": "x\n",
        "f.kt": "x\n", "g.cs": "x\n", "h.vue": "x\n", "i.txt": "x\n", "Makefile": "x\n",
        "j.py": "x\n"}
    make(ws, files)
    expected = {"html": ["a.html"], "css": ["b.css"], "ruby": ["c.rb"], "php": ["d.php"],
                "swift": ["e.swift"], "kotlin": ["f.kt"], "csharp": ["g.cs"], "vue": ["h.vue"],
                "txt": ["i.txt"], "make": ["Makefile"], "python": ["j.py"]}
    for kind, paths in expected.items():
        got = cli("grep_search", "--pattern", "x", "--type", kind,
                  "--output-mode", "files_with_matches").result
        assert got["files"] == paths, kind


def test_an_unknown_file_type_suggests_the_closest_one(cli: CliRunner) -> None:
    call = cli("grep_search", "--pattern", "x", "--type", "pyhton")
    assert call.code == 2
    assert "did you mean 'python'" in call.error["message"]
    assert "html" in call.error["details"]["known"]


@given(rows=st.lists(st.tuples(st.sampled_from(["a.py", "b/c.py", "d.txt"]),
                               st.integers(1, 30), st.sampled_from(["x", "", "y z", "p\nq"]),
                               st.booleans()), max_size=25))
@settings(max_examples=300, deadline=None, database=None)
def test_plain_content_lines_are_the_general_layout(rows: list[tuple[str, int, str, bool]]
                                                    ) -> None:
    """Matches of one line without context, in order, take a shortcut: it prints exactly
    what the general layout does, and leaves every other case to it."""
    from zbtools.toolkit import grep

    matches = [grep.Match(path=p, line=n, text=t, before=["c"] if ctx else [],
                          after=[]) for p, n, t, ctx in rows]
    shortcut = grep._plain_lines(matches)
    if shortcut is None:
        return
    from unittest import mock

    with mock.patch.object(grep, "_plain_lines", return_value=None):
        general = grep.content_lines(matches)
    assert shortcut == general

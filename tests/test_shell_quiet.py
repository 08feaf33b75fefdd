"""Quiet by default (docs/shell.md#what-is-said-on-stderr): ``--paths`` says nothing of what the
ignore files, the hidden-file default and the excluded directories left out, one notice for
what a user might have wanted (a file too large, a cut at a limit), and ``-q`` silences the
notices but never an error or its exit status. The human rendering follows the same rule
under a pseudo-terminal; ``--format text`` and JSON keep every count."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import CliRunner
from zbtools.core.search.entries import Skipped
from zbtools.dispatch import Options, split_command_line
from zbtools.entry import notices
from zbtools.options import GLOBAL_OPTIONS

RULE_KINDS = ("ignored", "hidden", "excluded", "binary")


@pytest.fixture
def tree(ws: Path) -> Path:
    """A match in a plain file, and others the walk's rules leave out: ignored, hidden, in an
    excluded directory, in a binary file."""
    (ws / ".gitignore").write_text("build.log\n")
    (ws / "a.txt").write_text("a TODO\n")
    (ws / "build.log").write_text("TODO ignored\n")
    (ws / ".secret").write_text("TODO hidden\n")
    (ws / "node_modules").mkdir()
    (ws / "node_modules" / "m.js").write_text("// TODO excluded\n")
    (ws / "blob.bin").write_bytes(b"TODO\0binary\n")
    return ws


def test_paths_say_nothing_of_what_the_rules_left_out(tree: Path, proc: CliRunner,
                                                     cli: CliRunner) -> None:
    call = proc("grep_search", "TODO", "--paths")
    assert (call.code, call.out, call.err) == (0, "a.txt\n", "")
    for argv in (("find_files_glob", "*", "--paths"), ("list_directory", "--paths"),
                 ("find_files", "a", "--paths"), ("grep_search", "TODO", "-0")):
        done = cli(*argv)
        assert done.code == 0 and done.err == "", (argv, done.err)
    # JSON still carries every count, with or without -q
    counted = cli("grep_search", "TODO", "--json")
    assert counted.result["skipped"]["ignored"] == 1 and counted.result["skipped"]["hidden"] >= 1
    assert json.loads(cli("grep_search", "TODO", "--json", "-q").out) == counted.json


def test_a_file_too_large_is_one_notice_naming_it(tree: Path, cli: CliRunner) -> None:
    (tree / "big.txt").write_text("TODO " * 400 + "\n")
    call = cli("grep_search", "TODO", "--paths", "--max-filesize", "1K")
    assert call.code == 0 and call.out == "a.txt\n"
    lines = call.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("zbtools: big.txt not searched"), call.err
    assert not any(kind in call.err for kind in RULE_KINDS)
    (tree / "big2.txt").write_text("TODO " * 400 + "\n")
    two = cli("grep_search", "TODO", "--paths", "--max-filesize", "1K").err.splitlines()
    assert len(two) == 1 and "2 files (the first: big.txt) not searched" in two[0]


def test_a_cut_at_the_limit_is_one_notice(tree: Path, cli: CliRunner) -> None:
    (tree / "b.txt").write_text("TODO b\n")
    for argv in (("grep_search", "TODO", "--head-limit", "1"),
                 ("find_files_glob", "*.txt", "--limit", "1")):
        call = cli(*argv, "--paths")
        assert call.code == 0 and len(call.out.splitlines()) == 1
        assert call.err == "zbtools: more results exist than the limit allowed; raise it or " \
            "narrow the search\n", call.err
        assert cli(*argv, "--paths", "-q").err == ""


def test_quiet_silences_notices_but_not_errors(tree: Path, proc: CliRunner) -> None:
    (tree / "big.txt").write_text("TODO " * 400 + "\n")
    quiet = proc("-q", "grep_search", "TODO", "--paths", "--max-filesize", "1K")
    assert (quiet.code, quiet.out, quiet.err) == (0, "a.txt\n", "")
    failed = proc("grep_search", "TODO", "--path", "missing", "--paths", "--quiet")
    assert failed.code == 1 and failed.out == ""  # not_found: exit 1 (contract.md#exit-codes)
    assert failed.err.startswith("error[not_found]: missing")


def test_text_output_is_the_models_and_unchanged_by_quiet(tree: Path, cli: CliRunner) -> None:
    text = cli("list_directory", "--text")
    assert "[skipped: 1 ignored" in text.out and text.err == ""
    assert cli("list_directory", "--text", "-q").out == text.out


def test_human_output_follows_the_rule(tree: Path, cli: CliRunner) -> None:
    """Off a terminal (``--human``) for speed; the pseudo-terminal test below runs the same."""
    listing = cli("list_directory", "--human", "--color", "never")
    assert listing.code == 0 and "skipped" not in listing.out + listing.err
    nothing = cli("grep_search", "NOPE", "--human", "--color", "never")
    assert nothing.out == "[0 matches in 1 files searched]\n"
    (tree / "big.txt").write_text("TODO " * 400 + "\n")
    big = cli("grep_search", "TODO", "--max-filesize", "1K", "--human", "--color", "never")
    assert "warning: big.txt not searched" in big.out
    assert not any(kind in big.out for kind in RULE_KINDS)
    quiet = cli("grep_search", "TODO", "--max-filesize", "1K", "--human", "--color", "never",
                "-q")
    assert "too large" not in quiet.out and "warning" not in quiet.out
    assert quiet.out.startswith("a.txt\n1:a TODO")


@pytest.mark.slow
def test_human_on_a_terminal_follows_the_rule(tree: Path) -> None:
    from tests.surfaces.test_terminal import on_terminal

    (tree / "big.txt").write_text("TODO " * 400 + "\n")
    listing = on_terminal(tree, "list_directory")
    assert listing.code == 0 and "a.txt" in listing.plain and "skipped" not in listing.plain
    big = on_terminal(tree, "grep_search", "TODO", "--max-filesize", "1K")
    assert "warning: big.txt not searched" in big.plain
    assert not any(kind in big.plain for kind in RULE_KINDS), big.plain
    quiet = on_terminal(tree, "grep_search", "TODO", "--max-filesize", "1K", "-q")
    assert "a TODO" in quiet.plain and "warning" not in quiet.plain
    assert "too large" not in quiet.plain
    failed = on_terminal(tree, "-q", "read_file", "missing.txt")
    assert failed.code == 1 and "error[not_found]" in failed.plain


class _Listing:
    """A listing's result as ``notices`` reads it."""

    def __init__(self, skipped: Skipped, truncated: bool) -> None:
        self.skipped = skipped
        self.truncated = truncated


counts = st.integers(min_value=0, max_value=3)


@given(ignored=counts, hidden=counts, binary=counts, excluded=counts, too_large=counts,
       unreadable=counts, truncated=st.booleans())
def test_a_notice_exactly_when_something_wanted_was_missed(
        ignored: int, hidden: int, binary: int, excluded: int, too_large: int, unreadable: int,
        truncated: bool) -> None:
    skipped = Skipped(ignored=ignored, hidden=hidden, binary=binary, excluded_dirs=excluded,
                      too_large=too_large, unreadable=unreadable)
    said = notices({"ok": True, "warnings": []}, _Listing(skipped, truncated))
    assert bool(said) == bool(too_large or unreadable or truncated)
    text = " ".join(said)
    assert not any(kind in text for kind in RULE_KINDS)
    assert (f"{too_large} too large" in text) == bool(too_large)
    assert (f"{unreadable} unreadable" in text) == bool(unreadable)


def test_quiet_is_declared_once_and_taken_from_no_tool() -> None:
    names = [n for opt in GLOBAL_OPTIONS for n in (*opt.names, *opt.shorthands)]
    assert names.count("-q") == 1 and names.count("--quiet") == 1
    for argv in (["-q", "grep_search", "x"], ["grep_search", "x", "-q"],
                 ["grep_search", "x", "--quiet", "--paths"]):
        opts = Options()
        command, rest = split_command_line(argv, opts, {})
        assert opts.quiet and command == "grep_search" and rest == ["x"], argv
    # web_search's one-letter alias of its query: its query is also its operand, so the
    # query still arrives
    opts = Options()
    command, rest = split_command_line(["web_search", "-q", "rust async"], opts, {})
    assert opts.quiet and rest == ["rust async"]
    from zbtools.registry import find

    spec: Any = find("web_search")
    assert spec.operands[0] == "query"

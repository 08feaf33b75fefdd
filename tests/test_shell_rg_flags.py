"""rg's short flags in grep_search: ``-l -c -m -w`` (and ``-i -F -g -t``), run together as rg
runs them, print what rg prints; ``-w`` after the tool's name is rg's, before it the workspace,
and a directory after it is warned about."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.conftest import CliRunner
from zbtools.core.search.ripgrep import find_rg

RG = find_rg()


def _tree(ws: Path) -> None:
    (ws / "a.txt").write_text("foo foo_bar\nfoobar\n-foo x\nFOO\nfoo again foo\n")
    (ws / "b.py").write_text("foo\nfoo = 1\nprint(foo)\n")
    (ws / "sub").mkdir()
    (ws / "sub" / "c.txt").write_text("a foo\n")


@pytest.mark.skipif(RG is None, reason="no rg binary (no ripgrep wheel here)")
def test_short_flags_print_what_rg_prints(ws: Path, cli: CliRunner, proc: CliRunner) -> None:
    assert RG is not None
    _tree(ws)
    cases = [["-l"], ["-c"], ["-m1"], ["-m", "2", "-c"], ["-w"], ["-il"], ["-wc"], ["-iwm1"],
             ["-F", "-w"], ["-g", "*.py"], ["-t", "py", "-c"]]
    for flags in cases:
        expected = subprocess.run([RG, "--no-config", "-n", "--sort", "path", "--color", "never",
                                   "foo", *flags], cwd=ws, capture_output=True, text=True,
                                  check=False)
        got = cli("grep_search", "foo", *flags, "--text")
        assert got.out == expected.stdout, (flags, got, expected.stdout)
        assert got.code == 0, (flags, got)
    assert cli("grep_search", "foo", "-m0").result["total_matches"] == 0  # rg -m0: nothing
    real = proc("grep_search", "foo", "-wc", "-m1", "--text")  # the same through a process
    assert real.out == "a.txt:1\nb.py:1\nsub/c.txt:1\n", real


def test_a_switch_and_its_parameter_conflict(ws: Path, cli: CliRunner) -> None:
    _tree(ws)
    call = cli("grep_search", "foo", "-l", "-c")
    assert call.code == 2 and call.error["code"] == "invalid_arguments", call
    assert "-c: output_mode given more than once" in call.error["message"], call
    call = cli("grep_search", "foo", "-l", "--output-mode", "count")
    assert call.error["code"] == "invalid_arguments", call
    # a switch takes no value: "--count=3" is output_mode's value "3", refused
    assert cli("grep_search", "foo", "--count=3").error["code"] == "invalid_arguments"


def test_dash_w_is_whole_words_after_the_tool_and_the_workspace_before(
        ws: Path, proc: CliRunner) -> None:
    _tree(ws)
    after = proc("grep_search", "foo", "-w", "-c", "--json")
    assert after.json["warnings"] == [], after
    assert [c["count"] for c in after.result["counts"]] == [3, 3, 1]
    before = proc("-w", "sub", "grep_search", "foo", "-c", "--json")
    assert before.result["counts"] == [{"path": "c.txt", "count": 1}], before
    # the habit of `-w DIR` at the end: read as whole words and a path, and said so
    habit = proc("grep_search", "foo", "-w", "sub", "--json")
    assert [m["path"] for m in habit.result["matches"]] == ["sub/c.txt"], habit
    warning = habit.json["warnings"][0]
    assert "--word-regexp" in warning and "--workspace" in warning and "'sub'" in warning
    outside = proc("grep_search", "foo", "-w", str(ws.parent / "outside"), "--json")
    assert outside.error["code"] == "outside_workspace", outside
    assert "-w DIR before the tool's name" in outside.error["hint"], outside


def test_help_lists_rgs_flags(cli: CliRunner) -> None:
    shown = cli("grep_search", "--help", env={"COLUMNS": "200"}).out
    for flag in ("-l, --files-with-matches", "-c, --count", "-m, --max-count N",
                 "-w, --word-regexp", "-i, --case-insensitive", "-F, --fixed-strings"):
        assert flag in shown, flag

"""rg's and fd's form, through a real process: after the pattern, a second bare word is the path
to search (``zbtools grep_search TODO src``); rg's ``-g``, ``-F`` and ``-t`` work in grep_search."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import CliRunner


def _tree(ws: Path) -> None:
    (ws / "src").mkdir()
    (ws / "src" / "a.py").write_text("# TODO one\ndef f():\n    pass\n")
    (ws / "b.py").write_text("# TODO two\n")


def test_the_second_operand_is_the_path(ws: Path, proc: CliRunner) -> None:
    _tree(ws)
    for argv, flagged in (
            (["grep_search", "TODO", "src"], ["grep_search", "TODO", "--path", "src"]),
            (["find_files_glob", "*.py", "src"], ["find_files_glob", "*.py", "--path", "src"]),
            (["find_files", "a", "src"], ["find_files", "a", "--path", "src"])):
        by_operand = proc(*argv, "--paths")
        assert by_operand.code == 0, (argv, by_operand.err)
        assert by_operand.out == proc(*flagged, "--paths").out, argv
    symbol = proc("find_symbol", "f", "src").result
    assert symbol == proc("find_symbol", "f", "--path", "src").result
    assert [d["path"] for d in symbol["definitions"]] == ["src/a.py"]
    assert proc("grep_search", "TODO", "src", "--paths").out.split() == ["src/a.py"]
    assert sorted(proc("grep_search", "TODO", "--paths").out.split()) == ["b.py", "src/a.py"]


def test_a_third_operand_is_refused_with_the_form_named(ws: Path, proc: CliRunner) -> None:
    _tree(ws)
    extra = proc("grep_search", "TODO", "src", "b.py")
    assert extra.error["code"] == "invalid_arguments"
    assert "2 operands (pattern, path)" in extra.error["message"], extra.error


def test_rgs_short_flags_mean_what_rg_means(ws: Path, proc: CliRunner) -> None:
    _tree(ws)
    (ws / "notes.txt").write_text("a.b\naxb\nTODO three\n")
    for short, long in ((["-g", "*.py"], ["--glob", "*.py"]), (["-t", "py"], ["--type", "py"])):
        got = proc("grep_search", "TODO", *short, "--paths")
        assert got.code == 0 and got.out == proc("grep_search", "TODO", *long, "--paths").out
        assert sorted(got.out.split()) == ["b.py", "src/a.py"], got.out
    fixed = proc("grep_search", "a.b", "-F", "--json").result
    assert [m["text"] for m in fixed["matches"]] == ["a.b"], fixed
    regex = proc("grep_search", "a.b", "--json").result
    assert sorted(m["text"] for m in regex["matches"]) == ["a.b", "axb"], regex

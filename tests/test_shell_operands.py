"""rg's and fd's form: after the pattern, a second bare word is the path to search
(``zbtools grep_search TODO src``), for the search and listing tools, through a real process."""

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

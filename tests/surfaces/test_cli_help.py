"""--help teaches: generated from the registry through Typer (the slow path, humans only)."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner as TyperRunner

from tests.conftest import CliRunner, run_inprocess
from zbtools.entry import main_with_argv
from zbtools.registry import all_tools
from zbtools.surfaces.cli import build_app


def test_top_level_help_lists_every_tool_and_the_exit_codes() -> None:
    result = TyperRunner().invoke(build_app(main_with_argv), ["--help"], terminal_width=200)
    assert result.exit_code == 0
    for spec in all_tools():
        assert spec.name in result.output
    assert "--workspace" in result.output


def test_top_level_help_shows_every_global_option_command_word_and_exit_status() -> None:
    """--help is made from the declarations the parser reads (zbtools.options, the contract)."""
    from zbtools.contract import EXIT_STATUSES
    from zbtools.options import COMMAND_WORDS, GLOBAL_OPTIONS

    result = TyperRunner().invoke(build_app(main_with_argv), ["--help"], terminal_width=200)
    assert result.exit_code == 0
    for opt in GLOBAL_OPTIONS:
        for name in opt.names:
            assert name in result.output, name
    for word in COMMAND_WORDS:
        assert word.name in result.output, word.name
    flat = " ".join(result.output.split())
    for status, (brief, _meaning) in EXIT_STATUSES.items():
        assert f"{status} {brief}" in flat, status


def test_every_declared_global_option_is_parsed(ws: Path) -> None:
    """Each spelling of each declared option reaches the parser's options object."""
    from zbtools.dispatch import Options, split_command_line
    from zbtools.options import GLOBAL_OPTIONS

    for opt in GLOBAL_OPTIONS:
        for name, value in [*((n, opt.value) for n in opt.names), *opt.shorthands.items()]:
            given = opt.choices[-1] if opt.choices else "x"
            argv = [name, given, "read_file"] if opt.takes_value and name in opt.names else [
                name, "read_file"]
            opts = Options()
            command, _rest = split_command_line(argv, opts)
            assert command == "read_file", name
            expected = given if opt.takes_value and name in opt.names else value
            assert getattr(opts, opt.attr) == expected, name


def test_tool_help_shows_parameters_aliases_limits_and_an_example() -> None:
    result = TyperRunner().invoke(build_app(main_with_argv), ["read_file", "--help"],
                                  terminal_width=200)
    assert result.exit_code == 0
    for text in ("--path", "--file-path", "--offset", "--limit", "out_of_range",
                 "Example: echo"):
        assert text in result.output


def test_help_through_the_real_entry_point(cli: CliRunner) -> None:
    call = cli("write_file", "--help")
    assert call.code == 0
    assert "--content" in call.out
    assert "--overwrite" in call.out


def test_help_folds_a_tools_name_as_a_call_does(cli: CliRunner, proc: CliRunner) -> None:
    """``Bash --help``, ``help READ-FILE`` and ``help List_Dir`` show the tool's help, as
    ``zbtools Bash`` runs ``bash`` (docs/dialects.md#tool-names)."""
    for argv, shown in ((["Bash", "--help"], "zbtools bash "),
                        (["help", "READ-FILE"], "zbtools read_file "),
                        (["help", "List_Dir"], "zbtools list_dir ")):
        call = cli(*argv)
        assert call.code == 0 and shown in call.out, (argv, call.out, call.err)
    real = proc("Write-File", "--help")
    assert real.code == 0 and "--content" in real.out, real.err


def test_a_bare_zbtools_on_a_terminal_shows_help(ws: Path) -> None:
    call = run_inprocess([], workspace=ws, stdout_isatty=True)
    assert call.code in (0, 2)
    assert "Usage" in call.out + call.err


def test_a_command_run_through_typer_behaves_like_the_fast_path(ws: Path) -> None:
    (ws / "a.txt").write_text("x\n")
    import os

    old = os.getcwd()
    os.chdir(ws)
    try:
        result = TyperRunner().invoke(build_app(main_with_argv), ["read_file", "--path", "a.txt"])
    finally:
        os.chdir(old)
    assert result.exit_code == 0
    assert '"content": "x\\n"' in result.output


def test_short_h_is_help_like_long_help(cli: CliRunner) -> None:
    for argv in (["-h"], ["write_file", "-h"], ["grep_search", "-h"]):
        call = cli(*argv)
        assert call.code == 0, (argv, call.err)
        assert "Usage" in call.out
    assert "--content" in cli("write_file", "-h").out

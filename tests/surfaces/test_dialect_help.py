"""``--help`` of a dialect's own tool shows that tool: its name, description and parameters
(``zbtools --dialect claude Grep --help``), for every tool of every dialect."""

from __future__ import annotations

from tests.conftest import CliRunner, run_inprocess
from zbtools.dialects import get_dialect
from zbtools.options import DIALECTS


def test_every_dialect_tool_has_its_own_help() -> None:
    for name in DIALECTS[1:]:
        for tool in get_dialect(name, {}).tools():
            shown = run_inprocess(["--dialect", name, tool.name, "--help"],
                                  env={"COLUMNS": "200"})
            assert shown.code == 0 and f"Usage: zbtools {tool.name} " in shown.out, shown
            for field in tool.params.fields():
                flag = ("-" if len(field) == 1 else "--") + field.replace("_", "-")
                assert flag in shown.out, (name, tool.name, flag)


def test_claudes_grep_and_bash_as_claude_names_them(cli: CliRunner, proc: CliRunner) -> None:
    grep = proc("--dialect", "claude", "grep", "--help", env={"COLUMNS": "200"})
    assert "Usage: zbtools Grep [OPTIONS]" in grep.out, grep
    for line in ("-B N", "-i ", "--output-mode {content|files_with_matches|count}",
                 "zbtools --dialect claude Grep"):
        assert line in grep.out, line
    bash = cli("help", "Bash", env={"ZBTOOLS_DIALECT": "claude", "COLUMNS": "200"})
    assert "--run-in-background" in bash.out and "--description TEXT" in bash.out, bash
    # without a dialect, the canonical tool of that folded name, as before
    assert "Usage: zbtools bash [OPTIONS] [COMMAND]" in cli("Bash", "--help").out

"""The shell user's habits (docs/shell.md), through a real subprocess: yes/no exit statuses,
raw text from stdin and files, operands and ``--``, ``-V``, ``help TOOL``, ``--color``,
``completion SHELL``, and ``--paths``/``-0`` for pipes. Every one is opt-in: the JSON of a call
without them is unchanged."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, CliRunner, run_inprocess


@pytest.fixture
def tree(ws: Path) -> Path:
    (ws / "a.txt").write_text("a TODO\n")
    (ws / "b.txt").write_text("nothing here\n")
    (ws / "sub").mkdir()
    (ws / "sub" / "c.py").write_text("# TODO too\n")
    return ws


# ---- 1. yes/no questions: --exit-status ---------------------------------------------------------


def test_a_search_with_no_match_exits_1_only_when_asked(tree: Path, proc: CliRunner) -> None:
    plain = proc("grep_search", "--pattern", "NOPE")
    asked = proc("grep_search", "--pattern", "NOPE", "--exit-status")
    assert plain.code == 0 and asked.code == 1
    assert asked.json == plain.json  # the output is the same
    assert proc("grep_search", "--pattern", "TODO", "--exit-status").code == 0
    assert proc("find_files_glob", "--pattern", "*.rs", "--exit-status").code == 1
    assert proc("find_files_glob", "--pattern", "*.py", "--exit-status").code == 0
    assert proc("find_files", "--pattern", "zzz", "--exit-status").code == 1
    # a failure keeps its own status
    assert proc("grep_search", "--pattern", "x", "--path", "missing",
                "--exit-status").code == 1


def test_a_command_status_passes_through_only_when_asked(ws: Path, proc: CliRunner) -> None:
    assert proc("run_command", "--command", "exit 3").code == 0
    failed = proc("run_command", "--command", "exit 3", "--exit-status")
    assert failed.code == 3 and failed.result["exit_code"] == 3
    assert proc("bash", "--command", "true", "--exit-status").code == 0
    timed_out = proc("run_command", "--command", "sleep 5", "--timeout", "0.2",
                     "--exit-status")
    assert timed_out.code == 124 and timed_out.result["timed_out"] is True
    killed = proc("run_command", "--command", "kill -TERM $$", "--exit-status")
    assert killed.code == 128 + 15


# ---- 2. raw content: - and @path ----------------------------------------------------------------


def test_dash_reads_stdin_as_raw_text(ws: Path, proc: CliRunner) -> None:
    call = proc("write_file", "--path", "f.txt", "--content", "-", stdin="x\n\n")
    assert call.code == 0, call
    assert (ws / "f.txt").read_bytes() == b"x\n\n"  # trailing newlines kept


def test_at_path_reads_a_file_relative_to_the_current_directory(ws: Path, tmp_path: Path,
                                                               proc: CliRunner) -> None:
    (ws / "src.txt").write_bytes(b"line\r\nend\n\n")
    assert proc("write_file", "--path", "dst.txt", "--content", "@src.txt").code == 0
    assert (ws / "dst.txt").read_bytes() == b"line\r\nend\n\n"
    # @@ is a literal leading @
    assert proc("write_file", "--path", "lit.txt", "--content", "@@src.txt").code == 0
    assert (ws / "lit.txt").read_text() == "@src.txt"
    missing = proc("write_file", "--path", "m.txt", "--content", "@nope.txt")
    assert missing.code == 2 and missing.error["code"] == "usage_error"
    assert "@@" in missing.error["hint"]
    assert not (ws / "m.txt").exists()


def test_json_arguments_stay_literal(ws: Path, proc: CliRunner) -> None:
    (ws / "src.txt").write_text("file\n")
    assert proc("write_file", stdin={"path": "a.txt", "content": "@src.txt"}).code == 0
    assert (ws / "a.txt").read_text() == "@src.txt"
    assert proc("write_file", "--args", '{"path": "b.txt", "content": "-"}').code == 0
    assert (ws / "b.txt").read_text() == "-"


def test_raw_stdin_is_bounded_and_exclusive(ws: Path, proc: CliRunner) -> None:
    big = proc("write_file", "--path", "big.txt", "--content", "-", stdin="x" * 2000,
               env={"ZBTOOLS_MAX_REQUEST_BYTES": "1024"})
    assert big.error["code"] == "too_large" and not (ws / "big.txt").exists()
    both = proc("write_file", "--stdin", "--path", "c.txt", "--content", "-", stdin="{}")
    assert both.error["code"] == "usage_error"


# ---- 3. operands and -- -------------------------------------------------------------------------


def test_operands_and_the_end_of_options(tree: Path, proc: CliRunner) -> None:
    assert proc("read_file", "a.txt").result["content"] == "a TODO\n"
    assert proc("read_file", "--limit", "1", "a.txt", "--text").out == "     1\ta TODO\n"
    assert proc("grep_search", "TODO", "--output-mode", "files_with_matches").result[
        "files"] == ["a.txt", "sub/c.py"]
    assert proc("run_command", "echo hi").result["stdout"] == "hi\n"
    (tree / "-dash.txt").write_text("dash\n")
    assert proc("read_file", "--", "-dash.txt").result["content"] == "dash\n"
    # an operand is taken as written: - and @ are read only for flags
    (tree / "@scope.txt").write_text("scoped\n")
    assert proc("read_file", "@scope.txt").result["content"] == "scoped\n"
    # paths and patterns are never bodies of text: @ and - are ordinary there, even as flags
    assert proc("read_file", "--path", "@scope.txt").result["content"] == "scoped\n"
    (tree / "J.java").write_text("@Override\nvoid f() {}\n")
    assert proc("grep_search", "--pattern", "@Override").result["total_matches"] == 1
    two = proc("read_file", "a.txt", "b.txt")
    assert two.code == 2 and two.error["details"]["problems"][0]["argument"] == "b.txt"
    clash = proc("read_file", "a.txt", "--path", "b.txt")
    assert clash.error["code"] == "invalid_arguments"
    none = proc("get_plan", "x")
    assert none.code == 2


def test_move_and_copy_take_two_operands(ws: Path, proc: CliRunner) -> None:
    (ws / "a.txt").write_text("a\n")
    assert proc("copy_file", "a.txt", "b.txt").code == 0
    assert proc("move_file", "b.txt", "c.txt").code == 0
    assert (ws / "c.txt").read_text() == "a\n" and not (ws / "b.txt").exists()
    extra = proc("move_file", "a.txt", "d.txt", "e.txt")
    assert extra.code == 2 and "2 operands" in extra.error["message"]
    assert "[SOURCE] [DESTINATION]" in proc("move_file", "--help").out


def test_the_operand_shows_in_help(proc: CliRunner) -> None:
    out = proc("read_file", "--help").out
    assert "[PATH]" in out and "Operand:" in out


# ---- 4. small habits ----------------------------------------------------------------------------


def test_short_version_and_help_tool(proc: CliRunner) -> None:
    from zbtools import __version__

    assert proc("-V").out == f"zbtools {__version__}\n"
    assert proc("help", "grep_search").out == proc("grep_search", "--help").out
    assert "Usage:" in proc("help").out


def test_color(ws: Path, proc: CliRunner) -> None:
    (ws / "a.txt").write_text("x = 1\n")
    always = proc("read_file", "a.txt", "--human", "--color", "always")
    assert "\x1b[" in always.out
    never = proc("read_file", "a.txt", "--human", "--color", "never",
                 env={"FORCE_COLOR": "1"})
    assert "\x1b[" not in never.out and "x = 1" in never.out
    no_color = proc("read_file", "a.txt", "--human", env={"NO_COLOR": "1", "FORCE_COLOR": "1"})
    assert "\x1b[3" not in no_color.out  # no colours (bold may stay)
    bad = proc("read_file", "a.txt", "--color", "pink")
    assert bad.error["code"] == "usage_error"


def test_usage_errors_on_a_terminal_are_rendered_like_other_errors(ws: Path) -> None:
    call = run_inprocess(["--bogus"], workspace=ws, stdout_isatty=True)
    assert call.code == 2 and call.out == ""
    assert "error[usage_error]" in call.err
    piped = run_inprocess(["--bogus"], workspace=ws)
    assert json.loads(piped.out)["error"]["code"] == "usage_error"


# ---- 5. completion ------------------------------------------------------------------------------


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_prints_the_script_devgen_writes(shell: str, proc: CliRunner) -> None:
    name = {"bash": "zbtools.bash", "zsh": "_zbtools", "fish": "zbtools.fish"}[shell]
    call = proc("completion", shell)
    assert call.code == 0
    assert call.out == (REPO / "completions" / name).read_text()


def test_completion_needs_a_shell_and_help_has_no_install_option(proc: CliRunner) -> None:
    assert proc("completion", "tcsh").error["code"] == "usage_error"
    out = proc("--help").out
    assert "--install-completion" not in out and "completion" in out


def test_the_completion_protocol_still_answers(ws: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(REPO), _ZBTOOLS_COMPLETE="complete_bash",
               COMP_WORDS="zbtools read_file --li", COMP_CWORD="2")
    out = subprocess.run([sys.executable, "-m", "zbtools"], env=env, cwd=ws,
                         capture_output=True, text=True, check=False, timeout=60).stdout
    assert "--limit" in out.split()


# ---- 6. --paths and -0 --------------------------------------------------------------------------


def test_paths_alone_on_stdout_and_notices_on_stderr(tree: Path, proc: CliRunner) -> None:
    (tree / ".hidden.txt").write_text("TODO hidden\n")
    call = proc("find_files_glob", "*.txt", "--paths")
    assert call.code == 0 and call.out == "a.txt\nb.txt\n"
    assert call.err == ""  # hidden files are left out by default, said nothing about
    grep = proc("grep_search", "TODO", "-0")
    assert grep.out == "a.txt\0sub/c.py\0"
    listing = proc("list_directory", "--paths", "--max-depth", "2")
    assert listing.out.splitlines() == ["a.txt", "b.txt", "sub", "sub/c.py"]
    # the text rendering agents read is unchanged: the notice stays in it
    assert "[skipped" in proc("find_files_glob", "*.txt", "--text").out


def test_paths_errors_go_to_stderr(ws: Path, proc: CliRunner) -> None:
    call = proc("grep_search", "x", "--path", "missing", "--paths")
    assert call.code == 1 and call.out == "" and "error[not_found]" in call.err
    other = proc("read_file", "a.txt", "--paths")
    assert other.code == 2 and "usage_error" in other.err and other.out == ""


# ---- a named config file must exist -------------------------------------------------------------


def test_a_missing_named_config_file_is_a_usage_error(ws: Path, tmp_path: Path,
                                                      proc: CliRunner) -> None:
    (ws / "a.txt").write_text("x\n")
    missing = proc("read_file", "a.txt", env={"ZBTOOLS_CONFIG": str(tmp_path / "typo.toml")})
    assert missing.code == 2 and missing.error["code"] == "usage_error"
    assert "typo.toml" in missing.error["message"]
    # the default location may be absent
    default = proc("read_file", "a.txt", env={"ZBTOOLS_CONFIG": "",
                                              "XDG_CONFIG_HOME": str(tmp_path / "none")})
    assert default.code == 0


# ---- batch line numbers, a closed stdout ---------------------------------------------------------


def test_a_malformed_batch_line_names_its_line_and_the_line_format(ws: Path,
                                                                   proc: CliRunner) -> None:
    (ws / "a.txt").write_text("x\n")
    lines = '{"id": 1, "tool": "read_file", "args": {"path": "a.txt"}}\n\nnot json\n'
    call = proc("batch", stdin=lines)
    first, bad = (json.loads(line) for line in call.out.splitlines())
    assert first["ok"] is True
    assert bad["error"]["code"] == "invalid_json"
    assert bad["error"]["details"]["line"] == 3 and "request line 3" in bad["error"]["message"]
    assert '"tool"' in bad["error"]["hint"]


def test_a_closed_stdout_is_a_clean_usage_error(ws: Path) -> None:
    (ws / "a.txt").write_text("x\n")
    env = dict(os.environ, PYTHONPATH=str(REPO))
    code = ("import os, subprocess, sys; os.close(1); "
            "sys.exit(subprocess.call([sys.executable, '-m', 'zbtools', 'write_file', 'b.txt', "
            "'--content', 'y']))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ws, env=env, capture_output=False,
                          stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
                          check=False, timeout=60)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and "error[usage_error]" in done.stderr
    assert not (ws / "b.txt").exists()  # nothing ran

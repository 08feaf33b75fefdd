"""The JSON contract (docs/contract.md): how arguments arrive and how results leave."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import REPO, CliRunner, run_inprocess, snapshot
from zbtools.contract import ERROR_CODES, ExitCode, ToolError


@pytest.fixture
def hello(ws: Path) -> Path:
    path = ws / "hello.txt"
    path.write_text("one\ntwo\nthree\n")
    return path


# -- where arguments come from --------------------------------------------------------------


def test_arguments_arrive_as_a_json_object_on_stdin(hello: Path, cli: CliRunner) -> None:
    assert cli("read_file", stdin='{"path": "hello.txt"}').result["total_lines"] == 3


def test_arguments_arrive_through_args(hello: Path, cli: CliRunner) -> None:
    assert cli("read_file", "--args", '{"path": "hello.txt", "limit": 1}').result[
        "end_line"] == 1


def test_arguments_arrive_as_flags_in_kebab_or_snake_case(hello: Path, ws: Path,
                                                          cli: CliRunner) -> None:
    assert cli("read_file_range", "--path", "hello.txt", "--start-line", "2").result[
        "start_line"] == 2
    assert cli("read_file_range", "--path=hello.txt", "--start_line=3").result["content"] == \
        "three\n"


def test_flags_override_args_which_override_stdin(hello: Path, ws: Path, cli: CliRunner) -> None:
    (ws / "other.txt").write_text("other\n")
    call = cli("read_file", "--stdin", "--args", '{"path": "other.txt", "limit": 1}',
               "--limit", "2", stdin='{"file_path": "missing.txt", "limit": 3}')
    assert call.result["path"] == "other.txt"
    assert call.result["end_line"] == 1  # other.txt has a single line; limit 2 was accepted
    call = cli("read_file", "--stdin", "--path", "hello.txt", stdin='{"filepath": "missing.txt"}')
    assert call.result["path"] == "hello.txt"
    merged = cli("read_file", "--stdin", "--limit", "1", stdin='{"path": "hello.txt"}')
    assert merged.result["end_line"] == 1


def test_with_flags_stdin_is_left_alone_unless_asked(hello: Path, cli: CliRunner) -> None:
    # e.g. inside `... | while read f; do zbtools read_file --path "$f"; done`
    call = cli("read_file", "--path", "hello.txt", stdin="not json, the loop's next line\n")
    assert call.result["path"] == "hello.txt"


def test_boolean_flags_take_no_value_or_an_explicit_one(ws: Path, cli: CliRunner) -> None:
    (ws / "d").mkdir()
    assert cli("delete_file", "--path", "d", "--no-recursive").error["code"] == "is_directory"
    assert cli("delete_file", "--path", "d", "--recursive", "false").error["code"] == \
        "is_directory"
    assert cli("delete_file", "--path", "d", "--recursive").result["type"] == "directory"


def test_every_seed_alias_of_a_field_is_accepted(hello: Path, cli: CliRunner) -> None:
    for alias in ("path", "file_path", "filepath", "filename"):
        assert cli("read_file", stdin={alias: "hello.txt"}).result["path"] == "hello.txt"


def test_a_tool_flag_wins_over_a_global_switch_of_the_same_name(ws: Path,
                                                                 cli: CliRunner) -> None:
    call = cli("write_file", "--path", "t.txt", "--text", "hello")
    assert call.result["bytes_written"] == 5
    assert (ws / "t.txt").read_text() == "hello"
    rendered = cli("--text", "read_file", "--path", "t.txt")
    assert rendered.out == "     1\thello\n"
    assert cli("read_file", "--path", "t.txt", "--text").out == "     1\thello\n"


def test_tool_name_aliases_reach_the_same_tool(ws: Path, cli: CliRunner) -> None:
    call = cli("create_file", stdin={"path": "new.txt", "text": "x"})
    assert call.json["tool"] == "write_file"
    assert (ws / "new.txt").read_text() == "x"


def test_two_aliases_of_one_field_are_an_error_not_first_wins(hello: Path,
                                                              cli: CliRunner) -> None:
    call = cli("read_file", stdin={"path": "hello.txt", "file_path": "other.txt"})
    assert call.code == ExitCode.USAGE
    problems = call.error["details"]["problems"]
    assert [p["problem"] for p in problems] == ["conflicting_aliases"]


def test_unknown_missing_and_mistyped_arguments_are_reported_together(cli: CliRunner) -> None:
    call = cli("read_file_range", stdin={"start_line": "third", "colour": "red",
                                         "context_lines": True})
    assert call.code == ExitCode.USAGE
    error = call.error
    assert error["code"] == "invalid_arguments"
    kinds = sorted(p["problem"] for p in error["details"]["problems"])
    assert kinds == ["missing_argument", "unknown_argument", "wrong_type", "wrong_type"]
    assert "path" in error["details"]["accepted"]
    assert error["details"]["accepted"]["path"]["aliases"] == ["file_path", "filepath",
                                                               "filename"]
    unknown = next(p for p in error["details"]["problems"] if p["problem"] == "unknown_argument")
    assert "file_path" in unknown["accepted"]
    assert error["hint"]


def test_an_unknown_argument_close_to_a_real_one_gets_a_suggestion(hello: Path,
                                                                   cli: CliRunner) -> None:
    call = cli("read_file", stdin={"path": "hello.txt", "limt": 3})
    assert "did you mean 'limit'" in call.error["message"]


def test_booleans_are_not_integers_and_integers_are_not_booleans(hello: Path,
                                                                 cli: CliRunner) -> None:
    assert cli("read_file", stdin={"path": "hello.txt", "limit": True}).code == ExitCode.USAGE
    assert cli("delete_file", stdin={"path": "hello.txt", "recursive": 1}).code == ExitCode.USAGE
    assert cli("read_file", stdin={"path": "hello.txt", "limit": 1.5}).code == ExitCode.USAGE


def test_null_for_an_optional_argument_means_its_default(hello: Path, cli: CliRunner) -> None:
    call = cli("read_file_range", stdin={"path": "hello.txt", "context_lines": None,
                                         "end_line": None})
    assert call.result["content"] == "one\ntwo\nthree\n"


def test_values_below_the_declared_minimum_are_invalid(hello: Path, cli: CliRunner) -> None:
    call = cli("read_file_range", stdin={"path": "hello.txt", "start_line": 0})
    assert call.error["details"]["problems"][0]["problem"] == "out_of_range"


@pytest.mark.parametrize("payload", [
    b'{"path": "hello.txt"',  # truncated
    b'{"path": "a", "path": "b"}',  # duplicate key
    b'{"path": "hello.txt", "limit": NaN}',
    b'{"path": "hello.txt", "limit": Infinity}',
    b"\xff\xfe{}",  # not UTF-8
    b"[1, 2]",  # not an object
    b'"hello.txt"',
    b"[" * 100000,  # nested beyond recursion
])
def test_malformed_requests_are_invalid_json_with_exit_2(hello: Path, cli: CliRunner,
                                                         payload: bytes) -> None:
    call = cli("read_file", stdin=payload)
    assert call.code == ExitCode.USAGE
    assert call.error["code"] == "invalid_json"
    assert call.error["hint"]


@pytest.mark.parametrize("where", ["stdin", "--args"])
@pytest.mark.parametrize("payload", ['{bad', '{"path": "hello.txt"', '{"a" 1}', "[1,", "{,}"])
def test_malformed_json_is_invalid_json_in_a_fresh_process_too(hello: Path, proc: CliRunner,
                                                               where: str, payload: str) -> None:
    """A fresh interpreter has not imported json.decoder, through which _json reports syntax
    errors (in-process tests have it already): this once came out as internal_error."""
    call = proc("read_file", stdin=payload) if where == "stdin" else \
        proc("read_file", "--args", payload)
    assert call.code == ExitCode.USAGE, call
    assert call.error["code"] == "invalid_json"
    assert "is not valid JSON: " in call.error["message"] and call.error["hint"]


def test_empty_stdin_means_no_arguments(cli: CliRunner) -> None:
    call = cli("read_file", stdin=b"  \n")
    assert call.error["code"] == "invalid_arguments"
    assert call.error["details"]["problems"][0]["problem"] == "missing_argument"


def test_requests_over_the_size_limit_are_refused(ws: Path, cli: CliRunner) -> None:
    payload = json.dumps({"path": "big.txt", "content": "x" * 5000})
    call = cli("write_file", stdin=payload, env={"ZBTOOLS_MAX_REQUEST_BYTES": "2048"})
    assert call.error["code"] == "too_large"
    assert call.code == ExitCode.USAGE
    assert not (ws / "big.txt").exists()


# -- what comes out --------------------------------------------------------------------------


def test_success_envelope_has_the_documented_shape(hello: Path, cli: CliRunner) -> None:
    envelope = cli("read_file", "--path", "hello.txt").json
    assert set(envelope) == {"zbtools", "tool", "ok", "result", "truncated", "warnings"}
    assert envelope["zbtools"] == 1
    assert envelope["tool"] == "read_file"
    assert envelope["truncated"] is False
    assert envelope["warnings"] == []


def test_error_envelope_has_code_message_hint(cli: CliRunner) -> None:
    envelope = cli("read_file", "--path", "missing.txt").json
    assert set(envelope) == {"zbtools", "tool", "ok", "error"}
    assert envelope["ok"] is False
    assert set(envelope["error"]) >= {"code", "message", "hint"}
    assert envelope["error"]["code"] == "not_found"


def test_output_is_ascii_json_even_for_control_characters_and_unicode(ws: Path,
                                                                      cli: CliRunner) -> None:
    (ws / "odd.txt").write_text("caf\u00e9 \u2028 \x1b[31mred\x1b[0m\n")
    call = cli("read_file", "--path", "odd.txt")
    assert call.out.isascii()
    assert "\n" not in call.out.rstrip("\n")
    assert call.result["content"] == "caf\u00e9 \u2028 \x1b[31mred\x1b[0m\n"


def test_text_format_is_the_model_facing_rendering(hello: Path, cli: CliRunner) -> None:
    call = cli("read_file", "--path", "hello.txt", "--text")
    assert call.out == "     1\tone\n     2\ttwo\n     3\tthree\n"
    error = cli("read_file", "--path", "nope.txt", "--format", "text")
    assert error.out.startswith("error[not_found]: ")
    assert "hint: " in error.out


def test_human_format_renders_with_rich(hello: Path, ws: Path) -> None:
    call = run_inprocess(["read_file", "--path", "hello.txt", "--human"], workspace=ws)
    assert call.code == 0
    assert "three" in call.out
    error = run_inprocess(["read_file", "--path", "nope.txt", "--human"], workspace=ws)
    assert error.code == 1
    assert "not_found" in error.err


def test_human_format_numbers_only_the_lines_of_the_file(hello: Path, ws: Path) -> None:
    call = run_inprocess(["read_file", "--path", "hello.txt", "--human"], workspace=ws)
    numbered = [line.split()[0] for line in call.out.splitlines() if line.strip()]
    assert numbered == ["1", "2", "3"]


def test_an_unknown_format_is_a_usage_error_reported_as_json(hello: Path,
                                                             cli: CliRunner) -> None:
    call = cli("read_file", "--path", "hello.txt", "--format", "yaml")
    assert call.code == ExitCode.USAGE
    assert call.error["code"] == "usage_error"


def test_an_unknown_tool_suggests_close_names(cli: CliRunner) -> None:
    call = cli("read_fil")
    assert call.code == ExitCode.USAGE
    assert call.error["code"] == "unknown_tool"
    assert "read_file" in call.error["hint"]


def test_no_tool_at_all_is_a_usage_error(cli: CliRunner) -> None:
    call = cli()
    assert call.code == ExitCode.USAGE
    assert call.error["code"] == "usage_error"


def test_an_option_before_the_tool_name_that_is_not_global_is_a_usage_error(
        cli: CliRunner) -> None:
    assert cli("--path", "x", "read_file").error["code"] == "usage_error"


def test_internal_errors_exit_4_with_an_envelope_and_no_traceback_on_stdout(
        hello: Path, ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from zbtools.tools import read_file

    def explode(*_args: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(read_file.TOOL, "run", explode)
    call = run_inprocess(["read_file", "--path", "hello.txt"], workspace=ws)
    assert call.code == ExitCode.INTERNAL
    assert call.error["code"] == "internal_error"
    assert "Traceback" not in call.out
    assert call.err == ""
    debug = run_inprocess(["read_file", "--path", "hello.txt", "--debug"], workspace=ws)
    assert "Traceback" in debug.err
    assert "Traceback" not in debug.out


def test_interruption_exits_130(hello: Path, ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from zbtools.tools import read_file

    def interrupt(*_args: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(read_file.TOOL, "run", interrupt)
    call = run_inprocess(["read_file", "--path", "hello.txt"], workspace=ws)
    assert call.code == ExitCode.INTERRUPTED
    assert call.error["code"] == "interrupted"


def test_every_error_code_maps_to_one_documented_exit_code() -> None:
    allowed = {ExitCode.TOOL_FAILED, ExitCode.USAGE, ExitCode.SAFETY, ExitCode.INTERNAL,
               ExitCode.INTERRUPTED}
    for code, (exit_code, meaning) in ERROR_CODES.items():
        assert code == code.lower() and " " not in code
        assert exit_code in allowed
        assert meaning
    with pytest.raises(ValueError, match="undeclared"):
        # mypy refuses the code too (ErrorCode); strict mypy would flag this ignore were it not
        ToolError("not_a_real_code", "x")  # type: ignore[arg-type]


def test_the_workspace_comes_from_the_option_then_the_environment_then_the_cwd(
        tmp_path: Path, hello: Path, ws: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "hello.txt").write_text("elsewhere\n")
    by_option = run_inprocess(["-w", str(other), "read_file", "--path", "hello.txt"],
                              workspace=ws)
    assert by_option.result["content"] == "elsewhere\n"
    by_env = run_inprocess(["read_file", "--path", "hello.txt"], workspace=ws)
    assert by_env.result["content"] == "one\ntwo\nthree\n"
    missing = run_inprocess(["--workspace", str(tmp_path / "nope"), "read_file", "--path",
                             "x"], workspace=ws)
    assert missing.error["code"] == "usage_error"


def test_version_and_tools_listing(cli: CliRunner) -> None:
    from zbtools import __version__

    assert cli("--version").out.strip() == f"zbtools {__version__}"
    listing = cli("tools").result["tools"]
    names = {t["name"] for t in listing}
    assert {"read_file", "read_file_range", "write_file", "write_append", "delete_file",
            "move_file", "copy_file", "get_file_info", "create_directory"} <= names
    write = next(t for t in listing if t["name"] == "write_file")
    assert write["aliases"] == ["create_file"]
    assert write["summary"]


def test_a_bad_limit_in_the_environment_is_a_usage_error(hello: Path, cli: CliRunner) -> None:
    call = cli("read_file", "--path", "hello.txt", env={"ZBTOOLS_MAX_BYTES": "lots"})
    assert call.error["code"] == "usage_error"
    assert "ZBTOOLS_MAX_BYTES" in call.error["message"]


def test_limits_come_from_the_config_file(hello: Path, tmp_path: Path, cli: CliRunner) -> None:
    config = tmp_path / "zb.toml"
    config.write_text("[limits]\nmax_lines = 10\n")
    long = hello.parent / "long.txt"
    long.write_text("".join(f"line {i}\n" for i in range(1, 31)))
    call = cli("read_file", "--path", "long.txt", env={"ZBTOOLS_CONFIG": str(config)})
    assert call.result["end_line"] == 10
    assert call.result["next_offset"] == 11
    config.write_text("[limits\n")
    assert cli("read_file", "--path", "long.txt", env={"ZBTOOLS_CONFIG": str(config)}
               ).error["code"] == "usage_error"


# -- real processes -------------------------------------------------------------------------


def _zbtools(*argv: str, cwd: Path, stdin: int | None = None,
             input_bytes: bytes | None = None, timeout: float = 20
             ) -> subprocess.CompletedProcess[bytes]:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run([sys.executable, "-m", "zbtools", *argv], cwd=cwd, env=env,
                          stdin=stdin, input=input_bytes, capture_output=True,
                          timeout=timeout, check=False)


def test_stdin_from_dev_null_with_no_flags_is_no_arguments_not_a_hang(ws: Path) -> None:
    done = _zbtools("read_file", cwd=ws, stdin=subprocess.DEVNULL)
    assert done.returncode == ExitCode.USAGE
    assert json.loads(done.stdout)["error"]["code"] == "invalid_arguments"


def test_an_idle_open_pipe_on_stdin_does_not_hang_a_call_with_flags(hello: Path,
                                                                    ws: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    started = time.monotonic()
    child = subprocess.Popen([sys.executable, "-m", "zbtools", "read_file", "--path",
                              "hello.txt"], cwd=ws, env=env, stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert child.stdin is not None and child.stdout is not None
    try:
        # The output is small enough for the pipe buffer: the child must finish on its own
        # while its stdin stays open and silent.
        child.wait(timeout=15)
    finally:
        child.stdin.close()
        if child.poll() is None:
            child.kill()
    assert time.monotonic() - started < 10
    out = child.stdout.read()
    child.stdout.close()
    assert child.stderr is not None
    child.stderr.close()
    assert json.loads(out)["result"]["content"] == "one\ntwo\nthree\n"


def test_usage_errors_are_json_envelopes_in_a_real_process(ws: Path) -> None:
    done = _zbtools("read_file", "--path", cwd=ws, input_bytes=b"")
    assert done.returncode == ExitCode.USAGE
    envelope = json.loads(done.stdout)
    assert envelope["error"]["code"] == "invalid_arguments"
    assert b"Traceback" not in done.stdout


def test_a_closed_stdout_pipe_does_not_print_a_traceback(hello: Path, ws: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    child = subprocess.Popen([sys.executable, "-m", "zbtools", "read_file", "--path",
                              "hello.txt"], cwd=ws, env=env, stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert child.stdout is not None
    child.stdout.close()
    _, err = child.communicate(timeout=20)
    assert b"Traceback" not in err


def test_failed_calls_leave_the_workspace_byte_identical(hello: Path, ws: Path,
                                                         cli: CliRunner) -> None:
    before = snapshot(ws)
    for argv, stdin in [
        (("write_file",), b'{"path": "x", "content": 1}'),
        (("write_file",), b"{broken"),
        (("write_file", "--path", "sub/x", "--content", "y", "--bogus", "1"), None),
        (("delete_file", "--path", "."), None),
        (("move_file", "--source", "hello.txt", "--destination", "../outside.txt"), None),
    ]:
        call = cli(*argv, stdin=stdin)
        assert call.code != 0
        assert snapshot(ws) == before


def test_a_mistyped_flag_suggests_the_closest_one(cli: CliRunner) -> None:
    call = cli("read_file", "--pth", "a.txt")
    assert call.code == ExitCode.USAGE
    assert "unknown flag --pth (did you mean '--path'?)" in call.error["message"]
    call = cli("grep_search", "--pattern", "x", "--case_insensitiv")
    assert "did you mean '--case-insensitive'?" in call.error["message"]


def test_a_number_argument_must_be_finite_from_flags_json_or_a_huge_integer(
        ws: Path, cli: CliRunner) -> None:
    huge = "1" + "0" * 400  # a JSON integer beyond any double
    for argv, stdin in [
        (["run_command", "--command", "touch ran", "--timeout", "nan"], None),
        (["run_command", "--command", "touch ran", "--timeout", "inf"], None),
        (["run_command", "--command", "touch ran", "--timeout", "1e400"], None),
        (["run_command"], '{"command": "touch ran", "timeout": ' + huge + "}"),
        (["grep_search", "--pattern", "x", "--timeout", "nan"], None),
        (["stop_process", "--all", "--grace", "nan"], None),
    ]:
        call = cli("--approval", "allow", *argv, stdin=stdin)
        assert call.code == ExitCode.USAGE, (argv, call)
        assert call.error["code"] == "invalid_arguments"
        assert "finite" in call.error["message"]
    assert not (ws / "ran").exists()


def test_an_integer_for_a_number_argument_is_still_accepted(ws: Path, cli: CliRunner) -> None:
    call = cli("--approval", "allow", "run_command", stdin='{"command": "true", "timeout": 5}')
    assert call.code == 0, call


# Codes with a builder in zbtools.core.errors, and the raise sites still written by hand: errors
# about a plan name or the undo journal rather than a path. A new hand-built one fails this test.
BUILT_CODES = {"is_directory", "not_found", "stale_file", "already_exists", "protected_path",
               "workspace_root_protected"}
HAND_BUILT = {"zbtools/tools/undo.py": 1, "zbtools/tools/save_plan.py": 1,
              "zbtools/tools/save_plan_append.py": 1}


def test_recurring_errors_are_built_by_their_function() -> None:
    import ast

    root = Path(__file__).resolve().parent.parent
    found: dict[str, int] = {}
    for path in sorted((root / "zbtools").rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel == "zbtools/core/errors.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id == "ToolError" and node.args
                    and isinstance(node.args[0], ast.Constant)
                    and node.args[0].value in BUILT_CODES):
                found[rel] = found.get(rel, 0) + 1
    assert found == HAND_BUILT, "build these errors with zbtools.core.errors"


def test_an_error_builder_words_its_code_once_and_takes_what_differs() -> None:
    from zbtools.core import errors

    for doing, hint in errors.IS_DIRECTORY_HINTS.items():
        err = errors.is_directory("d", doing)  # type: ignore[arg-type]
        assert (err.code, err.hint, err.details["path"]) == ("is_directory", hint, "d")
        assert err.message.startswith("d: is a directory")
    assert errors.is_directory("d", "delete", entries=1).message == "d: is a directory with 1 entry"
    assert errors.is_directory("d", "delete", entries=0).details == {"path": "d", "entries": 0}
    assert errors.is_directory(".", "read", root=True).message == \
        ".: is the workspace root directory"
    stale = errors.stale_file("f", expected_sha256="a", current_sha256="b")
    assert stale.details == {"path": "f", "expected_sha256": "a", "current_sha256": "b"}
    assert stale.hint == errors.REREAD_HINT
    gone = errors.file_vanished("f", "a")
    assert (gone.code, gone.details["current_sha256"]) == ("stale_file", None)
    assert "allow_git_writes" in errors.protected_path("x", "is git's").hint
    assert errors.workspace_root_protected("", "delete").message.startswith("an empty path")

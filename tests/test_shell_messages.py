"""Smaller shell-user fixes, through a real subprocess: every path error names its path in
``details.path``; a ``limit`` above the line cap says so; help and tool descriptions show
no raw reStructuredText."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.conftest import CliRunner, run_inprocess


def test_path_errors_carry_the_path(ws: Path, proc: CliRunner) -> None:
    (ws / "a.txt").write_text("x\n")
    (ws / "d").mkdir()
    cases = [
        (("read_file", "."), "is_directory", "."),
        (("read_file", "d"), "is_directory", "d"),
        (("create_directory", "a.txt"), "already_exists", "a.txt"),
        (("write_file", "d", "--content", "x"), "is_directory", "d"),
        (("copy_file", "d", "e"), None, None),  # copies a directory: no error
        (("move_file", "a.txt", "d/"), None, None),
        (("read_file", "nope"), "not_found", "nope"),
        (("read_file", "~/x"), "outside_workspace", None),
    ]
    for argv, code, path in cases:
        call = proc(*argv)
        if code is None:
            assert call.code == 0, call
            continue
        assert call.error["code"] == code, call
        assert isinstance(call.error.get("details"), dict), call
        assert "path" in call.error["details"], call
        if path is not None:
            assert call.error["details"]["path"] == path


PATH_ERRORS = {"not_found", "outside_workspace", "is_directory", "not_a_directory",
               "already_exists", "permission_denied", "protected_path", "dangling_symlink",
               "binary_file", "special_file", "symlink_loop", "too_large"}


def _odd_files(ws: Path) -> None:
    """A binary file, a FIFO and a symlink loop, made again before each call (a tool may
    have deleted or replaced one)."""
    (ws / "bin.dat").write_bytes(b"ab\0cd")
    if not (ws / "fifo").is_fifo():
        if (ws / "fifo").exists():
            (ws / "fifo").unlink()
        os.mkfifo(ws / "fifo")
    if not (ws / "loop").is_symlink():
        (ws / "loop").unlink(missing_ok=True)
        (ws / "loop").symlink_to("loop")


def test_every_path_error_of_every_tool_names_its_path(ws: Path) -> None:
    """Every path parameter of every tool, pointed at a missing file in a missing directory, a
    directory, a path through a file and a file outside: an error about that path carries it in
    ``details.path`` (a generated sweep: a new tool or a new raise site is covered unasked)."""
    from zbtools.core.call.flags import value_name
    from zbtools.registry import all_tools

    (ws / "a.txt").write_text("x\n")
    (ws / "d").mkdir()
    bad = ["nope/x.txt", "d", "a.txt/x", str(ws.parent / "outside" / "secret.txt"),
           "bin.dat", "fifo", "loop/x"]
    seen: set[str] = set()
    for spec in all_tools():
        fields = spec.params.fields()
        required = {n: "x" for n, f in fields.items() if f.required and f.type is not None
                    and f.type.kind == "str"}
        for name, fspec in fields.items():
            if value_name(fspec) not in ("PATH", "DIR"):
                continue
            for target in bad:
                _odd_files(ws)
                call = run_inprocess([spec.name, "--stdin"], workspace=ws,
                                     stdin=json.dumps({**required, name: target}))
                error = call.json.get("error") or {}
                if error.get("code") not in PATH_ERRORS:
                    continue
                seen.add(error["code"])
                details = error.get("details")
                assert isinstance(details, dict) and "path" in details, (spec.name, name, call)
                if not target.startswith("/"):  # the path the error is about, as given
                    assert details["path"] in (target, *required.values()), (spec.name, call)
    assert {"not_found", "is_directory", "not_a_directory", "outside_workspace",
            "already_exists", "binary_file", "special_file", "symlink_loop"} <= seen, seen


def test_a_limit_above_the_line_cap_is_lowered_with_a_warning(ws: Path,
                                                             proc: CliRunner) -> None:
    (ws / "long.txt").write_text("".join(f"line {i}\n" for i in range(1, 3001)))
    call = proc("read_file", "long.txt", "--limit", "2500")
    assert call.result["end_line"] == 2000 and call.result["next_offset"] == 2001
    assert any("limit 2500" in w and "offset=2001" in w for w in call.json["warnings"])
    # within the cap, or a file shorter than the cap: no warning, as before
    assert proc("read_file", "long.txt", "--limit", "100").json["warnings"] == []
    (ws / "short.txt").write_text("a\nb\n")
    assert proc("read_file", "short.txt", "--limit", "5000").json["warnings"] == []


def test_help_and_descriptions_show_no_restructuredtext(proc: CliRunner) -> None:
    tools = proc("tools", "--json").json["result"]["tools"]
    assert all("``" not in t["summary"] for t in tools)
    assert any("(**/*.py, src/**/*.{ts,tsx})" in t["summary"] for t in tools)  # find_files_glob
    schemas = json.loads(proc("schema", "--format", "mcp").out)
    assert all("``" not in s["description"] for s in schemas)
    for tool in ("find_files_glob", "grep_search", "read_file", "apply_edit"):
        shown = proc(tool, "--help", env={"COLUMNS": "200"}).out
        assert "``" not in shown, shown


def test_a_missing_argument_says_when_stdin_was_left_unread(ws: Path, proc: CliRunner) -> None:
    """``echo '{"path": ...}' | zbtools read_file --limit 2``: flags were given, so stdin was
    not read; the hint says so and names --stdin. With nothing on stdin, or stdin a pipe
    that stays open and empty, the hint is the usual one and the call does not wait."""
    import os
    import subprocess
    import sys

    from tests.conftest import REPO

    (ws / "a.txt").write_text("x\n")
    piped = proc("read_file", "--limit", "2", stdin={"path": "a.txt"})
    assert piped.error["code"] == "invalid_arguments"
    assert "--stdin" in piped.error["hint"], piped.error
    assert proc("read_file", "--limit", "2", "--stdin", stdin={"path": "a.txt"}).code == 0
    empty = proc("read_file", "--limit", "2", stdin="")
    assert "--stdin" not in empty.error["hint"], empty.error
    env = dict(os.environ, PYTHONPATH=str(REPO), ZBTOOLS_WORKSPACE=str(ws))
    idle = subprocess.Popen([sys.executable, "-m", "zbtools", "read_file", "--limit", "2"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, cwd=ws)
    assert idle.stdin is not None and idle.stdout is not None
    try:
        idle.wait(timeout=30)  # exits with stdin still open: it never waited on it
    finally:
        idle.stdin.close()
    error = json.loads(idle.stdout.read())["error"]
    idle.stdout.close()
    assert error["code"] == "invalid_arguments" and "--stdin" not in error["hint"], error

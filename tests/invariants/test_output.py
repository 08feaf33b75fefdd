"""Invariant 7, output: one JSON document in JSON mode, nothing of content acts on a terminal,
exit statuses as the contract's table says.

Generated workspaces hold files whose names and contents carry arbitrary control characters and
escape sequences (C0, DEL, C1, bidi controls, CSI/OSC/DCS sequences, undecodable bytes); generated
calls read, search, list, edit (dry runs), run a command over them and provoke errors that quote
them. Each call runs in process four ways:

* ``--format json`` piped: stdout is exactly one line, ASCII, one JSON object with the
  envelope's keys (and nothing else); the exit status is 0 for ``ok`` and the status of the
  error's code in ``zbtools.contract.ERROR_CODES`` otherwise; never ``internal_error``; no
  traceback on stderr;
* ``--format text``, ``--format human --color never`` on a terminal (stdout and stderr both
  ttys): neither stream holds a control character but tab, newline and CRLF (no style either);
* ``--format human --color always``: the same once rich's SGR sequences are removed;
* every format ends with the same exit status as the JSON call.

``--paths`` calls print names, not JSON: piped they are the names byte for byte, on a terminal
they obey the terminal promise.

Malformed requests (bytes that are no JSON object, arguments of the wrong type, unknown tools
and flags, bad ``--args``) end with one JSON error document and exit 2.

The oracle is the terminal itself: anything but printable text, tab and newline is a byte the
terminal would act on. The mutation check plants a renderer that passes content through
(``visible`` as the identity in the human surface) and watches the search fail.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from tests.human_cases import terminal_leaks
from tests.invariants.budget import invariant, invariant_settings, planted_bug_is_caught
from zbtools.contract import ERROR_CODES
from zbtools.dispatch import Streams
from zbtools.entry import run

pytestmark = pytest.mark.slow  # searches of generated inputs: the fast loop leaves them out

ENVELOPE_OK = {"zbtools", "tool", "ok", "result", "truncated", "warnings"}
ENVELOPE_ERROR = {"zbtools", "tool", "ok", "error"}

# Sequences a file may use against a terminal: clear, home, window title (OSC ... BEL and
# OSC ... ST), a DCS string, 8-bit CSI and OSC, a hyperlink, cursor save/restore, a bidi
# override and isolate, a backspace over text, a carriage return back to the line's start.
SEQUENCES = ["\x1b[2J", "\x1b[H", "\x1b]0;title\x07", "\x1b]2;t\x1b\\", "\x1bP1$r\x1b\\",
             "\x9b31m", "\x9d0;t\x9c", "\x1b]8;;http://e.org\x1b\\x\x1b]8;;\x1b\\", "\x1b7",
             "\x1b8", "\u202e", "\u2067", "a\x08_", "\r", "\r\n", "\x1b[31m", "\x1bc"]
BIDI = st.sampled_from(
    [chr(c) for c in (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))])
# mostly C0, DEL and C1 controls; a bidi control in one draw of four (a name holding one is
# refused, so more would spend the search on that one error)
C0_DEL_C1 = st.sampled_from([chr(c) for c in (*range(0x20), *range(0x7F, 0xA0))])
CONTROL = st.one_of(C0_DEL_C1, C0_DEL_C1, C0_DEL_C1, BIDI)
PIECE = st.sampled_from(SEQUENCES) | CONTROL | st.text(
    st.characters(codec="utf-8"), max_size=6) | st.sampled_from(
    ["TODO", "x", " ", "\t", "\n", "é", "中"])
TEXT = st.lists(PIECE, max_size=12).map("".join)


def _name_ok(name: str) -> bool:
    return name not in (".", "..") and "/" not in name and "\0" not in name \
        and len(os.fsencode(name)) <= 200


# A file name: anything but '/' and NUL, undecodable bytes included (as surrogate escapes).
NAME = st.lists(st.sampled_from(SEQUENCES) | CONTROL.filter(lambda c: c not in "\x00/")
                | st.sampled_from(["a", "b.txt", "-x", " ", "\udc9b", "\udcff", "é"]),
                min_size=1, max_size=5).map("".join).filter(_name_ok)
CONTENT = st.one_of(TEXT.map(lambda t: t.encode("utf-8", "surrogatepass")),
                    st.binary(max_size=40).map(lambda b: b.replace(b"\0", b"")),
                    st.lists(TEXT, min_size=1, max_size=6).map(
                        lambda lines: "\n".join(lines).encode("utf-8", "surrogatepass")))


@st.composite
def calls(draw: st.DrawFn, names: list[str], contents: list[bytes]) -> list[str]:
    """One command line over the workspace of ``names``: most arguments from the content."""
    name = draw(st.sampled_from(names)) if names else draw(NAME)
    content = draw(st.sampled_from(contents)).decode("utf-8", "replace") if contents else ""
    needle = draw(st.text(st.sampled_from(content or "x"), min_size=1, max_size=4)
                  | TEXT.filter(bool))
    kind = draw(st.sampled_from(["read", "read_page", "read_missing", "grep", "grep_mode",
                                 "list", "glob", "info", "edit", "edit_exact", "command",
                                 "plan", "task", "unknown_tool", "bad_args", "paths"]))

    def args(tool: str, **arguments: Any) -> list[str]:
        return [tool, "--args", json.dumps(arguments)]

    if kind == "read":
        return args("read_file", path=name)
    if kind == "read_page":
        return args("read_file", path=name, limit=draw(st.integers(1, 3)))
    if kind == "read_missing":
        return args("read_file", path=draw(NAME) + ".missing")
    if kind == "grep":
        return args("grep_search", pattern=needle, fixed_strings=draw(st.booleans()),
                    context=draw(st.integers(0, 1)))
    if kind == "grep_mode":
        return args("grep_search", pattern=needle, fixed_strings=True,
                    output_mode=draw(st.sampled_from(["files_with_matches", "count"])))
    if kind == "list":
        return args("list_directory")
    if kind == "glob":
        return args("find_files_glob", pattern="*")
    if kind == "info":
        return args("get_file_info", path=name)
    if kind == "edit":
        return args("apply_edit", path=name, old_text=needle, new_text=draw(TEXT),
                    dry_run=True)
    if kind == "edit_exact":
        line = content.split("\n")[0] or needle
        return args("apply_edit", path=name, old_text=line, new_text=draw(TEXT) + "!",
                    dry_run=True)
    if kind == "command":  # the file's bytes, through a command's output
        return args("run_command", command="cat -- *; printf '\\033[2J' >&2")
    if kind == "plan":
        return args("update_plan", steps=[{"title": t or "t"} for t in draw(
            st.lists(TEXT, min_size=1, max_size=3))], explanation=draw(TEXT))
    if kind == "task":
        return args("task", operation="create", title=draw(TEXT.filter(str.strip)))
    if kind == "paths":  # the names alone, for a pipe; shown visibly on a terminal
        return [*args(draw(st.sampled_from(["find_files_glob", "list_directory"])),
                      **({"pattern": "*"} if draw(st.booleans()) else {})), "--paths"]
    if kind == "unknown_tool":
        return [draw(NAME).lstrip("-") or "x", "--args", "{}"]
    return ["read_file", "--args", json.dumps({"path": name, "limit": needle})]


class Call:
    def __init__(self, code: int, out: str, err: str) -> None:
        self.code = code
        self.out = out
        self.err = err


def call(ws: Path, argv: list[str], *, terminal: bool, stdin: bytes | None = None) -> Call:
    """``zbtools ARGV`` in process; ``terminal``: stdout and stderr are a terminal's."""
    out, err = io.StringIO(), io.StringIO()
    streams = Streams(io.BytesIO(stdin) if stdin is not None else None, out, err,
                      stdin_isatty=False, stdout_isatty=terminal, stderr_isatty=terminal)
    env = {**os.environ, "ZBTOOLS_WORKSPACE": str(ws), "COLUMNS": "100"}
    env.pop("NO_COLOR", None)
    env.pop("FORCE_COLOR", None)
    code = run(argv, streams, env)
    return Call(code, out.getvalue(), err.getvalue())


def check_json(result: Call) -> dict[str, Any]:
    """The JSON mode's promise; returns the envelope."""
    assert "Traceback" not in result.err, result.err
    assert result.out.endswith("\n") and result.out.count("\n") == 1, result.out
    assert result.out.isascii(), result.out
    envelope = json.loads(result.out)
    assert isinstance(envelope, dict)
    if envelope["ok"] is True:
        assert envelope.keys() == ENVELOPE_OK, envelope.keys()
        assert result.code == 0, (result.code, envelope)
    else:
        assert envelope.keys() == ENVELOPE_ERROR, envelope.keys()
        error = envelope["error"]
        assert {"code", "message", "hint"} <= error.keys() <= {"code", "message", "hint",
                                                                "details"}
        assert error["code"] != "internal_error", error
        assert result.code == ERROR_CODES[error["code"]][0], (result.code, error)
    return envelope


def check_terminal(result: Call, expected: int, argv: list[str], *, styled: bool) -> None:
    assert result.code == expected, (argv, result.code, expected, result.out, result.err)
    assert "Traceback" not in result.err and "internal_error" not in result.out + result.err
    for stream in (result.out, result.err):
        leaks = terminal_leaks(stream.encode("utf-8", "surrogateescape"), styled=styled)
        assert not leaks, (argv, leaks)


@contextmanager
def workspace(root: Path, files: dict[str, bytes]) -> Iterator[Path]:
    ws = Path(tempfile.mkdtemp(dir=root))
    try:
        for name, data in files.items():
            with open(os.fsencode(str(ws / name)), "wb") as handle:
                handle.write(data)
        yield ws
    finally:
        shutil.rmtree(ws, ignore_errors=True)


FORMATS: list[tuple[list[str], bool]] = [  # (global options, styled)
    (["--format", "text"], False),
    (["--format", "human", "--color", "never"], False),
    (["--format", "human", "--color", "always"], True),
]


def check_paths(ws: Path, argv: list[str]) -> int:
    """``--paths`` in a pipe: the names byte for byte, one a line (no JSON); its status."""
    piped = call(ws, argv, terminal=False)
    assert "Traceback" not in piped.err, piped.err
    if piped.code == 0:
        names = [str(p.relative_to(ws)) for p in ws.rglob("*")]
        assert lines_of(piped.out, names), (piped.out, names)
    return piped.code


def lines_of(text: str, names: list[str]) -> bool:
    """Whether ``text`` is some of ``names``, each once and ended by a newline (a name may
    hold a newline itself, so the text is not split but matched)."""
    if not text:
        return True
    return any(text.startswith(name + "\n") and lines_of(text[len(name) + 1:],
                                                         [n for n in names if n != name])
               for name in names)


def check_calls(root: Path, files: dict[str, bytes], draw_calls: list[list[str]]) -> None:
    with workspace(root, files) as ws:
        for argv in draw_calls:
            if "--paths" in argv:
                expected = check_paths(ws, argv)
            else:
                envelope = check_json(call(ws, ["--format", "json", *argv], terminal=False))
                expected = 0 if envelope["ok"] else ERROR_CODES[envelope["error"]["code"]][0]
            for options, styled in FORMATS:
                check_terminal(call(ws, [*options, *argv], terminal=True), expected, argv,
                               styled=styled)


FILES = st.dictionaries(NAME, CONTENT, min_size=1, max_size=3)


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[dict[str, bytes], list[list[str]]]:
    files = draw(FILES)
    names, contents = list(files), list(files.values())
    return files, draw(st.lists(calls(names, contents), min_size=1, max_size=3))


HOSTILE_FILES = {"esc\x1b[2Jname": b"a \x1b]0;t\x07 \x9b31m \xc2\x9b \xe2\x80\xae TODO\r\n"}
Scenario = tuple[dict[str, bytes], list[list[str]]]


@invariant(examples=100)
@example((HOSTILE_FILES, [["read_file", "--args", '{"path": "esc\\u001b[2Jname", "limit": 1}'],
                          ["grep_search", "TODO"], ["list_directory"]]))
@example(({"a": b"x\n" * 5}, [["read_file", "a", "--limit", "2"]]))  # the paged read
@example(({"a": b"x\n"}, [["grep_search", "--args",  # a NUL reached rg's argv: exit 4
                           '{"pattern": "\\u0000", "fixed_strings": true}']]))
@given(scenario=scenarios())
def test_output_promises_hold_for_generated_content_names_and_calls(
        tmp_path: Path, scenario: Scenario) -> None:
    check_calls(tmp_path, *scenario)


# ---- malformed requests -------------------------------------------------------------------

NOT_AN_OBJECT = st.one_of(
    st.binary(max_size=40),
    st.text(max_size=40).map(str.encode),
    st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                 lambda inner: st.lists(inner, max_size=3), max_leaves=5).map(
        lambda v: json.dumps(v).encode()),
).filter(lambda data: not _is_object(data))
WRONG_TYPE = st.one_of(st.integers(), st.floats(allow_nan=False), st.booleans(),
                       st.lists(st.integers(), max_size=2), st.dictionaries(
                           st.text(max_size=3), st.integers(), max_size=2))


def _is_object(data: bytes) -> bool:
    try:
        return isinstance(json.loads(data.decode("utf-8")), dict) or not data.strip()
    except (UnicodeDecodeError, ValueError):
        return False


@st.composite
def malformed(draw: st.DrawFn) -> tuple[list[str], bytes | None]:
    kind = draw(st.sampled_from(["stdin", "args", "types", "tool", "flag"]))
    if kind == "stdin":
        return ["read_file"], draw(NOT_AN_OBJECT)
    if kind == "args":
        return ["read_file", "--args", draw(NOT_AN_OBJECT).decode("utf-8", "replace")], None
    if kind == "types":
        field = draw(st.sampled_from(["path", "limit", "offset", "hashes"]))
        value: Any = draw(WRONG_TYPE.filter(lambda v: not (field == "hashes"
                                                           and isinstance(v, bool))))
        if field in ("limit", "offset") and isinstance(value, int) \
                and not isinstance(value, bool):
            value = str(value) + "x"
        return ["read_file", "--args", json.dumps({"path": "a", field: value})], None
    if kind == "tool":
        words = {"help", "tools", "schema", "prompt", "batch", "mcp", "completion"}
        name = draw(NAME.filter(lambda n: not n.startswith("-") and n not in words))
        return [name], None
    return ["read_file", "a", "--" + draw(st.text(st.sampled_from("abcdefghijklmnopqrstuvwxyz-"),
                                                   min_size=1, max_size=8)) + "zq", "1"], None


@invariant(examples=100)
@given(request=malformed())
def test_a_malformed_request_is_one_json_error_and_exit_2(
        tmp_path: Path, request: tuple[list[str], bytes | None]) -> None:
    argv, stdin = request
    (tmp_path / "a").write_text("x\n")
    result = call(tmp_path, ["--format", "json", *argv], terminal=False, stdin=stdin)
    envelope = check_json(result)
    assert envelope["ok"] is False and result.code == 2, (argv, stdin, envelope)
    assert envelope["error"]["code"] in {"invalid_json", "invalid_arguments", "unknown_tool",
                                         "usage_error"}, envelope
    shown = call(tmp_path, ["--format", "human", "--color", "never", *argv], terminal=True,
                 stdin=stdin)
    check_terminal(shown, 2, argv, styled=False)


# ---- the mutation check -------------------------------------------------------------------


def test_a_renderer_that_passes_content_through_is_caught(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The generated inputs alone (no explicit example) find a human renderer that forgets to
    make content visible."""
    from zbtools.surfaces import human

    monkeypatch.setattr(human, "visible", lambda text: text)
    monkeypatch.setattr(human, "visible_name", lambda text: text)

    @invariant_settings(30)
    @given(scenario=scenarios())
    def search(scenario: Scenario) -> None:
        check_calls(tmp_path, *scenario)

    failure = planted_bug_is_caught(search)
    assert "leaks" in repr(failure) or "\\x1b" in repr(failure) or "x9b" in repr(failure), \
        failure

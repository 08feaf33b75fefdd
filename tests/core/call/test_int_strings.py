"""Numbers sent as strings (``{"limit": "5"}``): read as the number, with one warning each.

What counts (docs/shell.md#numbers-written-as-strings): after JSON's whitespace is stripped, an
optional sign and ASCII digits for an integer parameter; a float parameter also takes a JSON
fraction and exponent. Every other string stays ``invalid_arguments``. Checked through the
real entry points: in-process for canonical tools, a dialect's own parameters (fiz's 0-based
``offset``), a dialect passing canonical ones (Claude's ``Read``), a field nested in a list of
objects; one real subprocess; one MCP round trip through the SDK client. Two properties: the
reading agrees with a regular-expression oracle for any string, and a call with ``str(n)``
(whitespace around it) does what the call with ``n`` does, plus exactly one warning, while a
string that is not an exact integer leaves the disk as it was; a planted bug must fail them.

Map: the oracle ``_oracle``; in-process cases; subprocess; MCP; the properties and the planted
bug.
"""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import Call, CliRunner, run_inprocess, snapshot
from tests.invariants.budget import invariant, planted_bug_is_caught
from zbtools.core.call import args as args_module

_SPACE = " \t\r\n"
_INT = re.compile(r"[ \t\r\n]*[+-]?[0-9]+[ \t\r\n]*\Z")
_FLOAT = re.compile(r"[ \t\r\n]*[+-]?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?[ \t\r\n]*\Z")
LINES = "".join(f"line {i}\n" for i in range(1, 21))


def _oracle(text: str, kind: str) -> int | float | None:
    """What the string must be read as (an independent statement of the rule)."""
    if _INT.match(text):
        return int(text.strip(_SPACE))
    if kind == "float" and _FLOAT.match(text):
        return float(text.strip(_SPACE))
    return None


def _warning(name: str, raw: str, number: object) -> str:
    shown = raw.replace("\t", "\\t").replace("\r", "\\r").replace("\n", "\\n")
    return f'{name}: "{shown}" was a string and was read as the number {number}'


def _same_but_warnings(with_text: Call, with_number: Call) -> list[str]:
    """The envelopes agree but for the warnings; returns the warnings the string call added."""
    text, number = with_text.json, with_number.json
    extra, before = text.pop("warnings", []), number.pop("warnings", [])
    assert text == number
    # validation comes before the tool runs: its warnings first, then the tool's own
    assert extra[len(extra) - len(before):] == before
    return list(extra[:len(extra) - len(before)])


# ---------------------------------------------------------------------------------------------
# In-process, through the tools


def test_read_file_reads_limit_and_offset_sent_as_strings(ws: Path, cli: CliRunner) -> None:
    (ws / "a.txt").write_text(LINES)
    text = cli("read_file", stdin={"path": "a.txt", "offset": " 3\n", "limit": "+2"})
    number = cli("read_file", stdin={"path": "a.txt", "offset": 3, "limit": 2})
    assert text.code == 0
    assert text.result["content"] == "line 3\nline 4\n"
    assert _same_but_warnings(text, number) == [_warning("offset", " 3\n", 3),
                                                _warning("limit", "+2", 2)]


def test_the_text_rendering_shows_the_warning(ws: Path, cli: CliRunner) -> None:
    (ws / "a.txt").write_text(LINES)
    call = cli("read_file", "--format", "text", stdin={"path": "a.txt", "limit": "1"})
    assert call.code == 0
    assert call.out.endswith(f"warning: {_warning('limit', '1', 1)}\n")


def test_grep_search_reads_integers_and_a_float(ws: Path, cli: CliRunner) -> None:
    (ws / "a.txt").write_text("one\ntwo\nthree\n")
    args: dict[str, Any] = {"pattern": "two", "context": 1, "head_limit": 5, "timeout": 2.5}
    texts = {"context": "1", "head_limit": "05", "timeout": " 2.5 "}
    text = cli("grep_search", stdin={**args, **texts})
    number = cli("grep_search", stdin=args)
    assert text.result["matches"][0]["before"] == ["one"]
    assert _same_but_warnings(text, number) == [_warning("context", "1", 1),
                                                _warning("head_limit", "05", 5),
                                                _warning("timeout", " 2.5 ", 2.5)]
    exponent = cli("grep_search", stdin={"pattern": "two", "timeout": "1e1"})
    assert exponent.json["warnings"] == [_warning("timeout", "1e1", 10.0)]


def test_a_dialect_s_own_parameter_keeps_its_meaning(ws: Path, cli: CliRunner) -> None:
    """fiz's offset is 0-based: "2" is read as 2 and stays fiz's 2 (the third line); the warning
    quotes what was sent, not the canonical 1-based number."""
    (ws / "a.txt").write_text(LINES)
    text = cli("--dialect", "fiz", "read", stdin={"path": "a.txt", "offset": "2", "limit": "1"})
    number = cli("--dialect", "fiz", "read", stdin={"path": "a.txt", "offset": 2, "limit": 1})
    assert text.result["content"] == "line 3\n"
    assert _same_but_warnings(text, number) == [_warning("offset", "2", 2),
                                                _warning("limit", "1", 1)]


def test_a_dialect_passing_canonical_parameters(ws: Path, cli: CliRunner) -> None:
    (ws / "a.txt").write_text(LINES)
    path = str(ws / "a.txt")
    text = cli("--dialect", "claude", "Read", stdin={"file_path": path, "limit": "2"})
    number = cli("--dialect", "claude", "Read", stdin={"file_path": path, "limit": 2})
    assert _same_but_warnings(text, number) == [_warning("limit", "2", 2)]
    grep = cli("--dialect", "claude", "Grep",
               stdin={"pattern": "line 2$", "output_mode": "content", "head_limit": "1"})
    assert grep.json["warnings"] == [_warning("head_limit", "1", 1)]


def test_a_field_nested_in_a_list_of_objects(ws: Path, cli: CliRunner) -> None:
    (ws / "a.txt").write_text("x = 1\nx = 1\nx = 1\n")
    call = cli("apply_edit", stdin={"path": "a.txt", "patches": [
        {"old_text": "x = 1", "new_text": "x = 2", "occurrence": "2"}]})
    assert call.code == 0, call.out
    assert (ws / "a.txt").read_text() == "x = 1\nx = 2\nx = 1\n"
    assert call.json["warnings"][0] == _warning("patches[0].occurrence", "2", 2)


@pytest.mark.parametrize(("tool", "args", "argument"), [
    ("read_file", {"path": "a.txt", "limit": "0"}, "limit"),
    ("grep_search", {"pattern": "x", "head_limit": "-1"}, "head_limit"),
    ("grep_search", {"pattern": "x", "timeout": "1e400"}, "timeout"),
    ("apply_edit", {"path": "a.txt", "patches": [{"old_text": "x = 1", "new_text": "y",
                                                  "occurrence": " 0"}]},
     "patches[0].occurrence"),
])
def test_the_number_read_is_checked_against_the_bounds(ws: Path, cli: CliRunner, tool: str,
                                                       args: dict[str, Any],
                                                       argument: str) -> None:
    (ws / "a.txt").write_text("x = 1\nx = 1\n")
    before = snapshot(ws)
    call = cli(tool, stdin=args)
    assert call.code == 2
    assert call.error["code"] == "invalid_arguments"
    assert [p["argument"] for p in call.error["details"]["problems"]] == [argument]
    assert call.error["details"]["problems"][0]["problem"] == "out_of_range"
    assert call.error["hint"]
    assert snapshot(ws) == before


NOT_INTEGERS = ["5.0", "1e3", "0x10", "", "  ", "+", "-", "1_000", "\u0665", "five", "5 5",
                "+-5", "5\u00a0", "\u20035", "\x00", "Infinity", "true", "5L", "0o7", "--5"]


@pytest.mark.parametrize("raw", NOT_INTEGERS)
def test_a_string_that_is_no_integer_is_refused(ws: Path, cli: CliRunner, raw: str) -> None:
    (ws / "a.txt").write_text("x\n")
    call = cli("read_file", stdin={"path": "a.txt", "limit": raw})
    assert call.code == 2
    error = call.error
    assert error["code"] == "invalid_arguments" and error["hint"]
    [problem] = error["details"]["problems"]
    assert (problem["problem"], problem["argument"]) == ("wrong_type", "limit")
    assert problem["message"].startswith("limit must be an integer, got the string \"")


@pytest.mark.parametrize("raw", ["nan", "inf", "-Infinity", ".5", "5.", "1e", "2.5.1", "0x1",
                                 "1_0.5", "1e+", "e3"])
def test_a_string_that_is_no_number_is_refused(ws: Path, cli: CliRunner, raw: str) -> None:
    call = cli("grep_search", stdin={"pattern": "x", "timeout": raw})
    assert call.error["code"] == "invalid_arguments"
    assert call.error["details"]["problems"][0]["problem"] == "wrong_type"


def test_booleans_are_not_read_from_strings(ws: Path, cli: CliRunner) -> None:
    (ws / "a.txt").write_text("old\n")
    call = cli("write_file", stdin={"path": "a.txt", "content": "new\n", "overwrite": "true"})
    assert call.error["code"] == "invalid_arguments"
    assert (ws / "a.txt").read_text() == "old\n"


# ---------------------------------------------------------------------------------------------
# A real subprocess and an MCP round trip


def test_a_real_process_reads_the_string(ws: Path, proc: CliRunner) -> None:
    (ws / "a.txt").write_text(LINES)
    call = proc("read_file", "--args", '{"path": "a.txt", "limit": "1"}')
    assert call.code == 0 and call.err == ""
    assert call.result["content"] == "line 1\n"
    assert call.json["warnings"] == [_warning("limit", "1", 1)]


@pytest.mark.slow  # the SDK's client and server: a second
def test_an_mcp_client_s_string_is_read(ws: Path) -> None:
    """Through the SDK's client (in memory: the server object the stdio server runs)."""
    pytest.importorskip("mcp", reason="the mcp package is not installed")
    from mcp import types

    from tests.surfaces.mcp_memory import in_memory

    (ws / "a.txt").write_text(LINES)
    result, bad = in_memory(ws, [("read_file", {"path": "a.txt", "limit": "2"}),
                                 ("read_file", {"path": "a.txt", "limit": "2.0"})])
    assert result.is_error is False
    [block] = result.content
    assert isinstance(block, types.TextContent)
    assert block.text.startswith("     1\tline 1\n     2\tline 2\n")
    assert block.text.endswith(f"\nwarning: {_warning('limit', '2', 2)}\n")
    assert bad.is_error is True and isinstance(bad.structured_content, dict)
    assert bad.structured_content["error"]["code"] == "invalid_arguments"


# ---------------------------------------------------------------------------------------------
# Properties


@invariant(examples=200)
@given(raw=st.one_of(
    st.text(alphabet=st.sampled_from(list("0123456789+-.eE_x \t\r\n\u00a0\u0665a")),
            max_size=8),
    st.integers().map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.text(max_size=6)))
def test_reading_agrees_with_the_oracle(raw: str) -> None:
    for kind in ("int", "float"):
        got = args_module._number_text(raw, kind)
        want = _oracle(raw, kind)
        assert got == want and type(got) is type(want), (raw, kind, got, want)


_WHITESPACE = st.text(alphabet=st.sampled_from(list(_SPACE)), max_size=3)


def _fresh(parent: str, files: dict[str, str]) -> Path:
    root = Path(tempfile.mkdtemp(dir=parent))
    for name, content in files.items():
        (root / name).write_text(content)
    return root


def _call(root: Path, tool: str, args: dict[str, Any]) -> Call:
    return run_inprocess([tool], stdin=json.dumps(args), workspace=root)


def _search_same(n: int, before: str, after: str, raw: str | None) -> None:
    """read_file's offset and an edit's nested occurrence with ``str(n)`` against ``n``;
    ``raw`` (a string that is not an exact integer) must be refused with the disk unchanged."""
    with tempfile.TemporaryDirectory(prefix="zbints-") as parent:
        _compare(parent, n, before + str(n) + after, raw)


def _compare(parent: str, n: int, text: str, raw: str | None) -> None:
    files = {"a.txt": LINES, "e.txt": "x = 1\n" * 4}
    for tool, args, name, field in (
        ("read_file", {"path": "a.txt", "limit": 3}, "offset", None),
        ("apply_edit", {"path": "e.txt"}, "patches[0].occurrence", "occurrence"),
    ):
        def call_with(value: object, tool: str = tool, args: dict[str, Any] = args,
                      field: str | None = field) -> tuple[Call, dict[str, Any]]:
            root = _fresh(parent, files)
            given = dict(args)
            if field is None:
                given["offset"] = value
            else:
                given["patches"] = [{"old_text": "x = 1", "new_text": "y", field: value}]
            call = _call(root, tool, given)
            return call, snapshot(root)

        with_text, disk_text = call_with(text)
        with_number, disk_number = call_with(n)
        assert disk_text == disk_number
        if with_number.json["ok"]:
            assert _same_but_warnings(with_text, with_number) == [_warning(name, text, n)]
        else:  # out of range (offset 0, occurrence 5): the same error either way
            assert with_text.json == with_number.json
        if raw is not None:
            refused, disk = call_with(raw)
            assert refused.code == 2 and refused.error["code"] == "invalid_arguments"
            assert disk == snapshot(_fresh(parent, files))


_NOT_EXACT = st.text(max_size=6).filter(lambda s: _INT.match(s) is None)


@invariant(examples=40)
@given(n=st.integers(min_value=-2, max_value=25), before=_WHITESPACE, after=_WHITESPACE,
       raw=st.one_of(st.none(), _NOT_EXACT))
def test_a_string_call_is_the_number_call_plus_one_warning(n: int, before: str, after: str,
                                                           raw: str | None) -> None:
    _search_same(n, before, after, raw)


def test_a_planted_bug_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """Reading "5.0" as 5 for an integer (what ``int(float(s))`` would do) breaks both."""
    real = args_module._number_text

    def lenient(text: str, kind: str) -> int | float | None:
        got = real(text, kind)
        if got is None and kind == "int":
            try:
                return int(float(text))
            except (ValueError, OverflowError):
                return None
        return got

    monkeypatch.setattr(args_module, "_number_text", lenient)
    planted_bug_is_caught(test_reading_agrees_with_the_oracle)
    planted_bug_is_caught(lambda: _search_same(3, "", "", "3.0"))

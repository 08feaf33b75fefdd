"""Exact where the original is exact: each dialect's edit tool matches only with its tiers.

The table is docs/dialects.md#tiers. The invariant, for every dialect's exact tool: an edit
whose old text is not in the file, even after the tiers that tool tolerates, is refused and
leaves the file byte for byte as it was; one whose old text stands exactly once gives exactly
``str.replace(old, new, 1)`` (fiz ``patch``: the first occurrence, as its schema says). The
oracle below knows nothing of the matcher: a substring test, and a whole-line comparison with
each line stripped (a superset of the whitespace tiers), with the four curly quotes read as
straight ones for Claude.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from tests.conftest import CliRunner
from tests.invariants.budget import invariant
from zbtools.core.editing.matching.requests import ALL_TIERS
from zbtools.dialects import get_dialect

QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})

# dialect, tool, arguments for (path, old, new), whether curly quotes are folded, whether
# whitespace around lines is tolerated, whether the first of several occurrences is taken
Tool = tuple[str, str, Any, bool, bool, bool]
TOOLS: list[Tool] = [
    ("claude", "Edit", lambda p, o, n: {"file_path": p, "old_string": o, "new_string": n},
     True, True, False),
    ("zkit", "edit", lambda p, o, n: {"path": p, "old_string": o, "new_string": n},
     False, True, False),
    ("fiz", "edit", lambda p, o, n: {"path": p, "edits": [{"oldText": o, "newText": n}]},
     False, True, False),
    ("fiz", "patch", lambda p, o, n: {"path": p, "search": o, "content": n},
     False, False, True),
    ("anthropic", "str_replace_based_edit_tool",
     lambda p, o, n: {"command": "str_replace", "path": p, "old_str": o, "new_str": n},
     False, True, False),
]

# Letters, blanks, the quotes, a backslash and digits (escapes and line-number prefixes are
# text to find here); no "." or "…" (an omission placeholder is refused everywhere).
CHARS = "ab x\t'\"\u2018\u2019\u201c\u201d\\n1"
line_text = st.text(alphabet=CHARS, max_size=8)


def _lines(text: str) -> list[str]:
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def occurrences(text: str, old: str) -> list[int]:
    found, pos = [], text.find(old)
    while pos != -1:
        found.append(pos)
        pos = text.find(old, pos + 1)
    return found


def tolerated(text: str, old: str, quotes: bool, whitespace: bool) -> bool:
    """Whether a tolerated tier could find ``old`` (a superset of those tiers)."""
    if quotes and old.translate(QUOTES) in text.translate(QUOTES):
        return True
    if not whitespace:
        return False
    def fold(line: str) -> str:
        return (line.translate(QUOTES) if quotes else line).strip(" \t")

    pattern = [fold(line) for line in _lines(old)]
    lines = [fold(line) for line in _lines(text)]
    return bool(pattern) and any(lines[i:i + len(pattern)] == pattern
                                 for i in range(len(lines) - len(pattern) + 1))


@st.composite
def edits(draw: st.DrawFn) -> tuple[str, str, str]:
    lines = draw(st.lists(line_text, min_size=1, max_size=6))
    text = "\n".join(lines) + draw(st.sampled_from(["\n", ""]))
    if draw(st.booleans()):  # a piece of the file, perhaps changed
        a = draw(st.integers(0, len(text)))
        b = draw(st.integers(a, min(len(text), a + 14)))
        old = text[a:b]
        if old and draw(st.booleans()):
            i = draw(st.integers(0, len(old) - 1))
            old = old[:i] + draw(st.sampled_from(CHARS)) + old[i + 1:]
    else:
        old = draw(st.text(alphabet=CHARS + "\n", min_size=1, max_size=10))
    new = draw(st.text(alphabet=CHARS + "\n", max_size=8))
    return text, old, new


@pytest.mark.parametrize("tool", TOOLS, ids=lambda t: f"{t[0]}-{t[1]}")
@invariant(examples=40)
@given(case=edits())
def test_an_exact_tool_edits_only_what_stands_exactly(ws: Path, cli: CliRunner, tool: Tool,
                                                      case: tuple[str, str, str]) -> None:
    dialect, name, args, quotes, whitespace, first = tool
    text, old, new = case
    assume(old.strip() and old != new)
    found = occurrences(text, old)
    assume(found or not tolerated(text, old, quotes, whitespace))
    path = ws / "f.txt"
    path.write_bytes(text.encode("utf-8"))
    call = cli("--dialect", dialect, name, stdin=json.dumps(args("f.txt", old, new)))
    after = path.read_bytes().decode("utf-8")
    if len(found) == 1 or (found and first):
        assert call.code == 0, call
        assert after == text.replace(old, new, 1)
        assert call.result.get("matched_with", "exact") == "exact"
    else:
        assert call.code != 0 and call.error["code"] in (
            "no_match", "ambiguous_match"), call
        assert after == text


def test_the_tier_names_are_the_parameter_s() -> None:
    """apply_edit's ``tiers`` accepts exactly the matcher's names."""
    tool = get_dialect("zblade").lookup("apply_edit")
    assert tool is not None
    prop = tool.input_schema()["properties"]["tiers"]
    items = prop.get("items") or next(v["items"] for v in prop["anyOf"] if "items" in v)
    assert tuple(items["enum"]) == ALL_TIERS


def test_a_dialect_s_limit_cannot_be_loosened_by_the_caller(cli: CliRunner, ws: Path) -> None:
    (ws / "a.py").write_text("x = \u201chi\u201d\n")
    call = cli("--dialect", "zkit", "edit", stdin={
        "path": "a.py", "old_string": 'x = "hi"', "new_string": 'x = "ho"',
        "tiers": ["typography"]})
    assert call.error["code"] == "invalid_arguments", call
    assert (ws / "a.py").read_text() == "x = \u201chi\u201d\n"


def test_claude_edit_folds_curly_quotes_as_claude_code_does(cli: CliRunner, ws: Path) -> None:
    """old_string with straight quotes finds the file's curly ones (Claude Code's fold), and
    the file's quotes survive where the edit leaves the text alone."""
    (ws / "m.py").write_text("msg = \u201chello\u201d  # \u2018hi\u2019\nother = 1\n")
    call = cli("--dialect", "claude", "Edit", stdin={
        "file_path": "m.py", "old_string": 'msg = "hello"', "new_string": 'msg = "world"'})
    assert call.code == 0, call
    assert call.result["matched_with"] == "quotes"
    assert (ws / "m.py").read_text() == "msg = \u201cworld\u201d  # \u2018hi\u2019\nother = 1\n"


def test_claude_edit_refuses_two_places_that_differ_only_in_quotes(cli: CliRunner,
                                                                 ws: Path) -> None:
    """Counted in the folded text, not the raw one: never the first of two look-alikes (where
    Claude Code would edit the first); an exact match still wins, as in Claude Code."""
    text = 'a = \u201cq\u201d\nb = "q"\n'
    (ws / "m.py").write_text(text)
    call = cli("--dialect", "claude", "Edit", stdin={
        "file_path": "m.py", "old_string": "= \u201dq\u201c", "new_string": "= 1"})
    assert call.error["code"] == "ambiguous_match", call
    assert (ws / "m.py").read_text() == text
    call = cli("--dialect", "claude", "Edit", stdin={
        "file_path": "m.py", "old_string": '= "q"', "new_string": "= 1"})
    assert call.code == 0 and call.result["matched_with"] == "exact", call
    assert (ws / "m.py").read_text() == "a = \u201cq\u201d\nb = 1\n"


@pytest.mark.parametrize(("dialect", "name", "args"), [
    ("claude", "Edit", {"file_path": "k.py", "old_string": "x  =  compute( 1 )",
                        "new_string": "x = 2"}),
    ("zkit", "edit", {"path": "k.py", "old_string": "x = compute(1)", "new_string": "x = 2"}),
    ("fiz", "edit", {"path": "k.py", "edits": [{"oldText": "x = compute(1)",
                                                "newText": "x = 2"}]}),
    ("fiz", "patch", {"path": "k.py", "search": "x = compute(1)", "content": "x = 2"}),
    ("anthropic", "str_replace_based_edit_tool", {
        "command": "str_replace", "path": "k.py", "old_str": "x = compute(1)",
        "new_str": "x = 2"}),
])
def test_inner_whitespace_is_never_tolerated(cli: CliRunner, ws: Path, dialect: str, name: str,
                                             args: dict[str, Any]) -> None:
    text = "def f():\n    x =  compute(1)  # the one\n    return x\n"
    (ws / "k.py").write_text(text)
    call = cli("--dialect", dialect, name, stdin=args)
    assert call.error["code"] == "no_match", call
    assert (ws / "k.py").read_text() == text


def test_indentation_is_tolerated_and_reported(cli: CliRunner, ws: Path) -> None:
    (ws / "k.py").write_text("def f():\n    x = 1\n    y = 2\n")
    call = cli("--dialect", "zkit", "edit", stdin={
        "path": "k.py", "old_string": "x = 1\ny = 2", "new_string": "x = 3\ny = 4"})
    assert call.code == 0, call
    assert call.result["matched_with"] == "indentation"
    assert (ws / "k.py").read_text() == "def f():\n    x = 3\n    y = 4\n"


def test_what_the_default_ladder_would_forgive_is_refused(cli: CliRunner, ws: Path) -> None:
    """A typo, escaped newlines, an edit already made and a pasted line number: each found by
    the canonical tool, each refused by an exact dialect tool."""
    text = "def handler(request):\n    response = build(request)\n    return response\n"
    (ws / "h.py").write_text(text)
    cases = [
        ("    respnse = build(request)\n    return response", "    return None"),
        ("def handler(request):\\n    response = build(request)", "def handler(r):"),
        ("    response = build(old)", "    response = build(request)"),
        ("     2\t    response = build(request)", "    response = 1"),
    ]
    for old, new in cases:
        canonical = cli("apply_edit", stdin={"path": "h.py", "old_text": old,
                                             "new_text": new, "dry_run": True})
        assert canonical.code == 0, (old, canonical)
        call = cli("--dialect", "claude", "Edit", stdin={
            "file_path": "h.py", "old_string": old, "new_string": new})
        assert call.error["code"] == "no_match", (old, call)
        assert (ws / "h.py").read_text() == text


def test_an_exact_match_is_the_plain_replacement(cli: CliRunner, ws: Path) -> None:
    """A line sent without its indentation whose new text would be re-indented by the
    canonical tool is replaced as sent, as Claude Code does."""
    (ws / "r.py").write_text("if x:\n    foo()\n    bar()\n")
    call = cli("--dialect", "claude", "Edit", stdin={
        "file_path": "r.py", "old_string": "foo()\n", "new_string": ""})
    assert call.code == 0, call
    assert (ws / "r.py").read_text() == "if x:\n        bar()\n"


def test_over_a_real_subprocess_and_mcp(ws: Path, proc: CliRunner) -> None:
    (ws / "q.md").write_text("He said \u201cyes\u201d.\n")
    call = proc("--dialect", "fiz", "patch", stdin={
        "path": "q.md", "search": 'said "yes"', "content": 'said "no"'})
    assert call.error["code"] == "no_match", call
    assert (ws / "q.md").read_text() == "He said \u201cyes\u201d.\n"


@pytest.mark.slow
def test_claude_edit_over_mcp(ws: Path) -> None:
    pytest.importorskip("mcp")
    from mcp import Client

    from tests.surfaces.test_mcp import session, text_of

    (ws / "q.md").write_text("He said \u201cyes\u201d.\n")

    async def body(client: Client) -> None:
        result = await client.call_tool("Edit", {
            "file_path": str(ws / "q.md"), "old_string": 'said "yes"',
            "new_string": 'said "no"'})
        assert result.is_error is False, text_of(result)
        result = await client.call_tool("Edit", {
            "file_path": str(ws / "q.md"), "old_string": "said  \u201cno\u201d",
            "new_string": "x"})
        assert result.is_error is True

    session(ws, body, "--dialect", "claude")
    assert (ws / "q.md").read_text() == "He said \u201cno\u201d.\n"

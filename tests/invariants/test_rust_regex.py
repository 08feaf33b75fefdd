"""Invariant: grep_search reads ripgrep's pattern syntax as ripgrep does, or says regex_error.

Agents trained on Claude Code's Grep write ripgrep's (Rust's ``regex`` crate's) syntax:
``\\x{54}``, ``[[:^digit:]]``, ``[a-z&&[^aeiou]]``, ``\\z``, ``\\<``, ``(?x)``, ``(?U)``. For
patterns drawn from a subset of that grammar (``rust_patterns``) and generated file contents,
grep_search's matching lines are ``rg --line-number``'s, or the call fails with
``regex_error``: never another set of lines, never a silent miss. No call may emit a warning
(Python's ``re`` parser warns ``FutureWarning`` on ``[[`` and ``&&``): warnings are errors here,
and stderr stays empty. The ``rg`` binary (the ripgrep wheel's, found as the product finds it) is
the oracle; patterns ripgrep itself rejects are left out.
"""

from __future__ import annotations

import json
import subprocess
import warnings
from pathlib import Path
from typing import Any

import pytest
from hypothesis import event, example, given
from hypothesis import strategies as st

from tests.conftest import run_inprocess
from tests.invariants.budget import invariant, planted_bug_is_caught
from zbtools.core.search import rust_syntax
from zbtools.core.search.ripgrep import find_rg

RG = find_rg()
pytestmark = pytest.mark.skipif(RG is None, reason="no rg binary (no ripgrep wheel here)")

# the characters of the generated files: ASCII, Latin, Greek, the Kelvin sign (case folding)
TEXT = "abcxAB1_ -.\t\u00e9\u03b1\u212a"
LITERALS = "abcxAB1_ -.é"
ESCAPES = [r"\x{61}", r"\x41", r"\u{62}", r"\U{63}", r"\d", r"\w", r"\s", r"\W", r"\D", r"\S",
           r"\pL", r"\p{Greek}", r"\PL", r"\p{Lu}", r"\p{Ll}", r"\t", r"\.", r"\-", r"\ "]
ANCHORS = ["^", "$", r"\A", r"\z", r"\b", r"\B", r"\<", r"\>", r"\b{start}", r"\b{end}",
           r"\b{start-half}", r"\b{end-half}"]
CLASS_ITEMS = ["a", "b", "x", "A", "1", "_", "-", "é", "a-c", "A-Z", "0-9", r"\d", r"\w", r"\s",
               r"\W", r"\pL", r"\p{Greek}", "[:alpha:]", "[:^digit:]", "[:word:]",
               "[:upper:]", "[:space:]", r"\x{61}", ".", " "]


def _literal(c: str) -> str:
    return "\\" + c if c in ".-" else c


def _class(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    item = st.one_of(st.sampled_from(CLASS_ITEMS), inner)
    union = st.lists(item, min_size=1, max_size=3).map("".join)
    return st.builds(
        lambda neg, lhs, op, rhs: "[" + ("^" if neg else "") + lhs + (op + rhs if op else "")
        + "]",
        st.booleans(), union, st.sampled_from(["", "", "&&", "--", "~~"]), union)


_nested = st.deferred(lambda: _class(st.just("[b-x]") | st.just("[^a]")))

atoms = st.one_of(
    st.sampled_from(LITERALS).map(_literal), st.sampled_from(ESCAPES),
    st.sampled_from(ANCHORS), st.just("."), _nested)


def _wrap(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    repeat = st.sampled_from(["*", "+", "?", "{2}", "{1,2}", "{0,}", "*?", "+?", "{1,2}?"])
    group = st.sampled_from(["(", "(?:", "(?i:", "(?-i:", "(?s:", "(?U:", "(?x: ", "(?i-u:"])
    return st.one_of(
        st.tuples(inner, repeat).map("".join),
        st.tuples(group, inner).map(lambda t: t[0] + t[1] + ")"),
        st.lists(inner, min_size=2, max_size=4).map("".join),
        st.tuples(inner, inner).map("|".join),
        st.tuples(st.sampled_from(["(?i)", "(?U)", "(?x)", "(?-u)"]), inner).map("".join))


rust_patterns = st.recursive(atoms, _wrap, max_leaves=6)
contents = st.lists(st.text(TEXT, max_size=12), min_size=1, max_size=5).map("\n".join)


def rg_lines(pattern: str, text: str, ignore_case: bool) -> list[int] | None:
    """The lines ``rg -n`` finds, or None when ripgrep rejects the pattern."""
    assert RG is not None
    args = [RG, "--no-config", "--line-number", "--no-filename", "--color", "never"]
    if ignore_case:
        args.append("--ignore-case")
    done = subprocess.run([*args, "-e", pattern, "-"], input=text.encode(), capture_output=True,
                          check=False)
    if done.returncode == 2:
        return None
    return [int(line.split(b":", 1)[0]) for line in done.stdout.splitlines()]


def zbtools_lines(ws: Path, pattern: str, ignore_case: bool, engine: str) -> list[int] | str:
    """grep_search's lines, or its error code; warnings are errors and stderr must be empty."""
    args: dict[str, Any] = {"pattern": pattern, "path": "f.txt", "engine": engine,
                            "case_insensitive": ignore_case, "head_limit": 0}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        call = run_inprocess(["grep_search"], stdin=json.dumps(args), workspace=ws)
    assert call.err == "", call.err
    out = json.loads(call.out)
    if not out["ok"]:
        return str(out["error"]["code"])
    return [m["line"] for m in out["result"]["matches"]]


def check(ws: Path, pattern: str, text: str, ignore_case: bool, engine: str) -> None:
    expected = rg_lines(pattern, text, ignore_case)
    if expected is None:
        event("ripgrep rejects the pattern")
        return  # not ripgrep syntax: outside this promise
    (ws / "f.txt").write_text(text, encoding="utf-8")
    got = zbtools_lines(ws, pattern, ignore_case, engine)
    event(f"answer: {'regex_error' if got == 'regex_error' else 'lines'}")
    if got == "regex_error":
        return
    assert got == expected, f"{pattern!r} on {text!r}: rg {expected}, zbtools {got}"


@invariant(examples=150)
@given(pattern=rust_patterns, text=contents, ignore_case=st.booleans(),
       engine=st.sampled_from(["python", "auto"]))
@example(pattern=r"\x{54}", text="The\nx", ignore_case=False, engine="auto")
@example(pattern="[[:^digit:]]", text="123\nab1", ignore_case=False, engine="auto")
@example(pattern="[a-z&&[^aeiou]]", text="aei\nab", ignore_case=False, engine="auto")
@example(pattern=r"last\z", text="last\nlast x", ignore_case=False, engine="auto")
@example(pattern=r"(?i)a(?-i)b", text="AB\nAb\nab", ignore_case=False, engine="auto")
@example(pattern=r"(?x)[ a ] # c", text="a\n \n#", ignore_case=False, engine="auto")
@example(pattern="(?i-u:[a&&A-Z])", text="A", ignore_case=False, engine="python")
@example(pattern=r"(?i)\p{Lu}", text="a", ignore_case=False, engine="python")
@example(pattern=r"(?-u)\w", text="\u212a", ignore_case=True, engine="python")
def test_rust_syntax_reads_as_rg_does(tmp_path_factory: pytest.TempPathFactory, pattern: str,
                                      text: str, ignore_case: bool, engine: str) -> None:
    check(tmp_path_factory.getbasetemp(), pattern, text, ignore_case, engine)


@pytest.mark.parametrize(("pattern", "text", "lines"), [
    (r"\x{54}", "The\nthe", [1]), ("[[:^digit:]]", "12\n1a", [2]),
    ("[a-z&&[^aeiou]]", "ae\nab", [2]), (r"x\z", "x\nxy", [1]), (r"\Ax", "x\nyx", [1]),
    (r"[a&&b]", "a&b", []), (r"\<ab", "ab\ncab", [1]), (r"\p{Greek}", "a\nα", [2]),
    ("(?<name>ab)", "ab", [1]), ("(?x) a b # comment\n", "ab\na b", [1]),
    ("(?U)a+x", "aax", [1]), ("[[a-c]x]", "x\nz", [1]), ("(?i)k", "\u212a", [1]),
])
def test_ripgrep_examples(tmp_path: Path, pattern: str, text: str, lines: list[int]) -> None:
    assert rg_lines(pattern, text, False) == lines  # the oracle agrees with the table
    (tmp_path / "f.txt").write_text(text, encoding="utf-8")
    for engine in ("python", "auto"):
        assert zbtools_lines(tmp_path, pattern, False, engine) == lines


@pytest.mark.parametrize("pattern", [r"\Ab", r"a\z", "a.b", r"(?-s)a.b", r"^b", r"a$", r"(?-m)^b"])
def test_multiline_anchors_read_as_rg_does(tmp_path: Path, pattern: str) -> None:
    """With multiline, \\A and \\z are the file's ends (rg -U --multiline-dotall)."""
    assert RG is not None
    text = "a\nb\na\n"
    done = subprocess.run([RG, "--no-config", "-n", "-U", "--multiline-dotall", "-e", pattern,
                           "-"], input=text.encode(), capture_output=True, check=False)
    expected = [int(line.split(b":", 1)[0]) for line in done.stdout.splitlines()]
    (tmp_path / "f.txt").write_text(text, encoding="utf-8")
    call = run_inprocess(["grep_search"], stdin=json.dumps(
        {"pattern": pattern, "path": "f.txt", "multiline": True}), workspace=tmp_path)
    got = [m["line"] + n for m in json.loads(call.out)["result"]["matches"]
           for n in range(len(m["text"].split("\n")))]
    assert got == expected, (pattern, got, expected)


@pytest.mark.parametrize("pattern", [r"(?-u)\xFF", "(?-u).", r"(?-u)[^a]", r"(?-u)\W"])
def test_byte_syntax_is_refused(tmp_path: Path, pattern: str) -> None:
    """Rust syntax that matches single bytes: a clear regex_error, not a different answer."""
    (tmp_path / "f.txt").write_text("a\n", encoding="utf-8")
    call = run_inprocess(["grep_search", "--pattern", pattern, "--path", "f.txt"],
                         workspace=tmp_path)
    out = json.loads(call.out)
    assert out["error"]["code"] == "regex_error"
    assert "(?-u)" in out["error"]["message"] and out["error"]["hint"]


def test_python_only_syntax_still_works(tmp_path: Path) -> None:
    """What ripgrep rejects but the python engine reads (lookaround, backreferences, \\Z)
    keeps its Python meaning."""
    (tmp_path / "f.txt").write_text("ab\nbb\nxx\n", encoding="utf-8")
    for pattern, lines in [("(?<=a)b", [1]), (r"(.)\1", [2, 3]), (r"x\Z", [])]:
        assert zbtools_lines(tmp_path, pattern, False, "auto") == lines


def test_a_planted_translation_bug_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """Reading every pattern as Python syntax (the old behaviour) must fail the invariant."""
    def python_reading(pattern: str, *, multiline: bool = False,
                       ignore_case: bool = False) -> str | None:
        return None

    monkeypatch.setattr(rust_syntax, "translate", python_reading)
    planted_bug_is_caught(test_rust_syntax_reads_as_rg_does)

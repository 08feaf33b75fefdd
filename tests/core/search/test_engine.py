"""zbtools.core.search.engine and globs: pattern compilation, line-oriented matching, context,
cut lines, globs."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import run_inprocess
from zbtools.contract import ToolError
from zbtools.core.search import engine, native_plan
from zbtools.core.search.engine import (
    MAX_LINE_CHARS,
    SYNTAX_CHARACTERS,
    Searcher,
    SearchTimeout,
    compile_pattern,
    cut_line,
    line_local,
    required_literal,
)
from zbtools.core.search.globs import PathFilter, expand_braces, split_globs


def lines_of(searcher: Searcher, text: str) -> list[tuple[int, list[str]]]:
    return [(hit.line, hit.lines) for hit in searcher.search_text(text)]


def test_an_invalid_pattern_is_a_regex_error_with_its_position() -> None:
    with pytest.raises(ToolError) as info:
        compile_pattern("ab(c")
    assert info.value.code == "regex_error"
    assert info.value.details["position"] == 4  # where the missing ")" was expected
    assert info.value.exit_code == 2


def test_fixed_strings_escape_every_metacharacter() -> None:
    assert lines_of(Searcher("a.b(", fixed_strings=True), "axb(\na.b(\n") == [(2, ["a.b("])]


def test_ignore_case_matches_any_case() -> None:
    assert lines_of(Searcher("hello", ignore_case=True), "HeLLo\nbye\n") == [(1, ["HeLLo"])]


def test_each_matching_line_is_reported_once_with_its_number() -> None:
    assert lines_of(Searcher("o"), "foo\nbar\nboo\n") == [(1, ["foo"]), (3, ["boo"])]


def test_a_match_never_spans_lines_unless_multiline() -> None:
    assert lines_of(Searcher(r"a\s+b"), "a\nb\na b\n") == [(3, ["a b"])]
    assert lines_of(Searcher(r"a.b", multiline=True), "x\na\nb\n") == [(2, ["a", "b"])]


def test_anchors_work_per_line() -> None:
    assert lines_of(Searcher("^b$"), "a\nb\nbb\n") == [(2, ["b"])]


def test_an_empty_pattern_matches_every_line_but_no_phantom_last_line() -> None:
    assert [line for line, _ in lines_of(Searcher(""), "a\nb\n")] == [1, 2]
    assert lines_of(Searcher(""), "") == []


def test_context_lines_stop_at_the_file_edges() -> None:
    hit, = Searcher("m", before=2, after=2).search_text("a\nm\nb\n")
    assert (hit.before, hit.after) == (["a"], ["b"])


def test_a_catastrophic_pattern_times_out_quickly() -> None:
    searcher = Searcher("(a+)+$", timeout=0.05)
    started = time.monotonic()
    with pytest.raises(SearchTimeout):
        searcher.search_text("a" * 100_000 + "b")
    assert time.monotonic() - started < 2


def test_long_lines_are_cut_around_the_match_with_markers() -> None:
    line = "x" * 2000 + "needle" + "y" * 2000
    cut = cut_line(line, 2000)
    assert "needle" in cut and cut.startswith("[...") and cut.endswith("chars cut]")
    assert len(cut) < MAX_LINE_CHARS + 60
    assert cut_line("short", 3) == "short"


def test_globs_split_on_commas_outside_braces_and_braces_expand() -> None:
    assert split_globs("*.rs, *.{ts,tsx}") == ["*.rs", "*.ts", "*.tsx"]
    assert expand_braces("a{b,{c,d}}e") == ["abe", "ace", "ade"]
    assert expand_braces("a{b") == ["a{b"]


def test_a_glob_without_slash_matches_the_base_name_and_bang_excludes() -> None:
    f = PathFilter(["*.py", "!test_*"], [])
    assert f.accepts("src/app.py", "app.py")
    assert not f.accepts("src/test_app.py", "test_app.py")
    assert not f.accepts("README.md", "README.md")
    assert PathFilter(["src/**/*.py"], []).accepts("src/a/b.py", "b.py")
    assert not PathFilter(["src/**/*.py"], []).accepts("lib/a/b.py", "b.py")


def test_types_select_extensions_and_unknown_types_are_rejected() -> None:
    assert PathFilter([], ["rust"]).accepts("src/main.rs", "main.rs")
    assert not PathFilter([], ["py"]).accepts("main.rs", "main.rs")
    with pytest.raises(ToolError) as info:
        PathFilter([], ["cobol"])
    assert info.value.code == "invalid_arguments"


def test_a_required_literal_is_taken_from_the_pattern_when_it_is_safe() -> None:
    from zbtools.core.search.engine import required_literal

    assert required_literal("def get_") == b"def get_"
    assert required_literal(r"class \w+\(.*Error\)") == b"class "
    assert required_literal("foo.*bar") == b"foo"
    for unsafe in ("a|bcd", "(?i)hello", "x", r"\p{L}+abc", "(unclosed"):
        assert required_literal(unsafe) is None, unsafe


@pytest.mark.parametrize(("pattern", "local"), [
    ("def get_", True), (r"class \w+\(.*Error\)", True), ("(?<=a)xab", False),
    (r"xab(?=\n)", False), (r"\Axab", False), ("(?i)xab", False), (r"(a)\1xab", False),
    (r"\p{L}xab", False), ("a++", False)])
def test_line_local_patterns_are_told_apart(pattern: str, local: bool) -> None:
    from zbtools.core.search.engine import line_local

    assert line_local(pattern, fixed_strings=False, multiline=False) is local
    assert line_local(pattern, fixed_strings=True, multiline=False) is True
    assert line_local(pattern, fixed_strings=False, multiline=True) is False


@given(data=st.binary(max_size=3000), literal=st.sampled_from([b"abc", b"\xff\x00z", b"def "]),
       pad=st.integers(0, 50))
@settings(max_examples=200, deadline=None)
def test_a_file_is_searched_the_same_from_the_reused_buffer(data: bytes, literal: bytes,
                                                            pad: int) -> None:
    """search_bytes on a buffer longer than the file (stale bytes after it) answers as on the
    file's own bytes."""
    from zbtools.core.search.engine import Searcher, _text

    searcher = Searcher(literal.decode("latin-1"), fixed_strings=True, before=1, after=1)
    buffer = bytearray(data + literal * pad)
    got = searcher.search_bytes(buffer, len(data))
    expected = searcher.search_text(_text(data)) if literal in data else []
    assert [(h.line, h.lines, h.before, h.after) for h in got] == \
        [(h.line, h.lines, h.before, h.after) for h in expected]


@given(text=st.text(alphabet="ab\n é.*x", max_size=80),  # (a line break in a needle is refused)
       needle=st.text(alphabet="ab éx", min_size=0, max_size=4),
       fixed=st.booleans())
@settings(max_examples=300, deadline=None)
def test_a_plain_pattern_finds_what_the_regex_module_finds(text: str, needle: str,
                                                          fixed: bool) -> None:
    """Plain text skips the regex module (LiteralPattern); the hits stay the same."""
    import regex

    from zbtools.core.search.engine import LiteralPattern, Searcher

    searcher = Searcher(needle, fixed_strings=fixed, before=1, after=1)
    assert isinstance(searcher.regex, LiteralPattern)
    reference = Searcher(needle, fixed_strings=fixed, before=1, after=1)
    reference.regex = regex.compile(regex.escape(needle), regex.MULTILINE | regex.VERSION0)
    assert [(h.line, h.lines, h.before, h.after) for h in searcher.search_text(text)] == \
        [(h.line, h.lines, h.before, h.after) for h in reference.search_text(text)]


def test_patterns_with_syntax_or_ignore_case_still_use_the_regex_module() -> None:
    from zbtools.core.search.engine import LiteralPattern, Searcher

    assert not isinstance(Searcher("a.b").regex, LiteralPattern)
    assert not isinstance(Searcher("abc", ignore_case=True).regex, LiteralPattern)
    assert isinstance(Searcher("a.b", fixed_strings=True).regex, LiteralPattern)


def test_a_search_request_is_a_frozen_keyword_value() -> None:
    from zbtools.core.search.request import SearchRequest

    request = SearchRequest(pattern="TODO", limit=10, globs=["*.py"])
    assert (request.pattern, request.limit, request.path, request.per_file) == \
        ("TODO", 10, ".", False)
    with pytest.raises(AttributeError):
        request.limit = 20  # refused at run time (mypy does not see it frozen)
    with pytest.raises(TypeError):
        SearchRequest("TODO", 10)  # type: ignore[call-arg]


@pytest.mark.parametrize("pattern,fixed", [("foo\\nbar", False), ("foo\nbar", False),
                                           ("foo\nbar", True), ("[\\n]", False)])
@pytest.mark.parametrize("engine", ["python", "native", "auto"])
def test_a_line_break_without_multiline_is_a_regex_error(tmp_path: Path, pattern: str,
                                                         fixed: bool, engine: str) -> None:
    """As in ripgrep: a search line by line would never match it, and an empty answer (exit
    1 with --exit-status: "not there") would be false."""
    (tmp_path / "a.txt").write_text("foo\nbar\n")
    call = run_inprocess(["grep_search"], workspace=tmp_path, stdin=json.dumps(
        {"pattern": pattern, "fixed_strings": fixed, "engine": engine}))
    assert (call.code, call.error["code"]) == (2, "regex_error"), call
    assert "multiline" in call.error["hint"]
    escaped = run_inprocess(["grep_search"], workspace=tmp_path, stdin=json.dumps(
        {"pattern": "foo\\\\nbar", "engine": engine}))  # a backslash and an n: no line break
    assert escaped.json["ok"] is True


def test_groups_nested_too_deeply_are_a_regex_error(tmp_path: Path) -> None:
    call = run_inprocess(["grep_search"], workspace=tmp_path,
                         stdin=json.dumps({"pattern": "(" * 400 + "a" + ")" * 400}))
    assert (call.code, call.error["code"]) == (2, "regex_error"), call


# text alone, and text with each syntax character (which the parse must then read)
PATTERNS = st.text(st.characters(blacklist_categories=["Cs"]) | st.sampled_from(
    [*sorted(SYNTAX_CHARACTERS), "a", "b", "é", "#", " ", "-", "&", "~"]), max_size=12) \
    | st.sampled_from(["def get_", "ab", "a#b c", "x-y&&z~~w", "\x00ab", "\ufffd\ufffd\ufffd",
                       "\ufeffab", "a|b", "abc|", "(abc)"])


def planned(pattern: str, *, fixed: bool, word: bool, per_file: bool) -> tuple[object, ...]:
    how = native_plan.plan(pattern, fixed_strings=fixed, multiline=False, per_file=per_file,
                           word=word)
    return (line_local(pattern, fixed_strings=fixed, multiline=False),
            required_literal(pattern),
            None if how is None else (how.anchored, how.literal, how.pattern))


@settings(max_examples=400, deadline=None)
@given(pattern=PATTERNS, fixed=st.booleans(), word=st.booleans(), per_file=st.booleans())
def test_text_alone_is_planned_as_the_parse_of_its_syntax_plans_it(
        pattern: str, fixed: bool, word: bool, per_file: bool) -> None:
    """A pattern without syntax characters is known to be text without parsing it (the
    native engine's ripgrep starts before ``re`` is imported): its line locality, required
    literal and native plan are what the parse gives, and so for every pattern."""
    known = planned(pattern, fixed=fixed, word=word, per_file=per_file)
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(engine, "plain_text", lambda pattern: False)
        assert known == planned(pattern, fixed=fixed, word=word, per_file=per_file)


def test_a_plain_text_grep_starts_ripgrep_before_importing_re(tmp_path: Path) -> None:
    """The point of the above: a cold one-off literal grep spawns ripgrep first."""
    import subprocess
    import sys

    from tests.conftest import REPO

    (tmp_path / "a.txt").write_text("def get_x\n")
    code = ("import os, sys\nspawn = os.posix_spawn\n"
            "def noted(*a, **k):\n    print('re' in sys.modules, file=sys.stderr)\n"
            "    return spawn(*a, **k)\nos.posix_spawn = noted\n"
            "sys.argv = ['zbtools', 'grep_search', '--pattern', 'def get_', '--engine', "
            "'native']\nfrom zbtools.entry import main\nmain()\n")
    done = subprocess.run([sys.executable, "-c", code], check=False, cwd=tmp_path,
                          capture_output=True,
                          text=True, env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin",
                                          "ZBTOOLS_SERVER": "off"})
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines()[0] == "False"

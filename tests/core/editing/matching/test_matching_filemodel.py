"""The matching engine's file model: lines and endings, indentation measures, tier keys."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zbtools.core.editing.matching.filemodel import FileModel
from zbtools.core.editing.matching.indentation import (
    columns,
    infer_indent_unit,
    relative_depths,
    same_structure,
)
from zbtools.core.editing.matching.linekeys import (
    LINE_KEYS,
    TIERS,
    collapse_key,
    rstrip_key,
    strip_key,
    typography_key,
)


@pytest.mark.parametrize("lines,unit", [
    (["a", "\tb", "\t\tc"], "\t"),
    (["a", "    b", "        c"], "    "),
    (["a", "  b", "    c", "  d"], "  "),
    (["a", "b"], "    "),
])
def test_the_indent_unit_is_inferred(lines: list[str], unit: str) -> None:
    assert infer_indent_unit(lines) == unit


def test_a_file_is_split_on_lf_only_and_a_lone_cr_stays_content() -> None:
    model = FileModel("a\r\nb\rc\nd")
    assert model.lines == ["a", "b\rc", "d"]
    assert model.eols == ["\r\n", "\n", ""]
    assert model.text == "a\r\nb\rc\nd"
    assert model.lf_view == "a\nb\rc\nd"


def test_a_final_newline_ends_the_last_line_and_adds_no_empty_one() -> None:
    assert (FileModel("x\n").lines, FileModel("x\n").eols) == (["x"], ["\n"])
    assert (FileModel("").lines, FileModel("").eols) == ([], [])
    assert FileModel("x\n\n").lines == ["x", ""]


def test_crlf_is_the_majority_ending_only_when_crlf_lines_outnumber_lf_lines() -> None:
    assert FileModel("a\r\nb\r\nc\n").majority_eol == "\r\n"
    assert FileModel("a\r\nb\n").majority_eol == "\n"
    assert FileModel("no ending").majority_eol == "\n"


def test_lf_view_offsets_map_back_to_their_lines() -> None:
    model = FileModel("ab\r\ncd\nef")
    assert model.line_starts == [0, 3, 6, 8]
    assert [model.line_of(offset) for offset in (0, 2, 3, 5, 6, 7)] == [0, 0, 1, 1, 2, 2]


def test_a_tab_counts_to_the_next_four_column_stop() -> None:
    assert [columns(indent) for indent in ("", "    ", "\t", "  \t", " \t ", "\t\t")] == \
        [0, 4, 4, 4, 5, 8]


def test_relative_depths_are_measured_from_the_first_non_blank_line() -> None:
    assert relative_depths(["", "  a", "    b", "", "a", "\tc"]) == [None, 0, 2, None, -2, 2]


def test_same_structure_tells_a_uniform_shift_from_a_change_of_unit() -> None:
    assert same_structure([0, 4, 8], [0, 4, 8], 4) == "shift"
    assert same_structure([0, 2, 4, None], [0, 4, 8, None], 4) == "unit"
    assert same_structure([0, 2, 2], [0, 4, 8], 4) is None  # the nesting itself differs
    assert same_structure([0, None], [0, 4], 4) is None  # a blank line against a real one


def test_each_tier_key_forgives_only_what_its_tier_tolerates() -> None:
    line = "  a  =\t“b” — c\u00a0…  "
    assert rstrip_key(line) == "  a  =\t“b” — c\u00a0…"
    assert strip_key(line) == "a  =\t“b” — c\u00a0…"
    assert collapse_key(line) == "a = “b” — c …"
    assert typography_key(line) == 'a = "b" - c ...'
    assert tuple(LINE_KEYS) == TIERS
    assert LINE_KEYS["exact"](line) == line


def test_an_ascii_file_reuses_its_inner_whitespace_index_for_typography() -> None:
    ascii_model = FileModel("a  =  1\n")
    inner = ascii_model.index("inner_whitespace")
    assert ascii_model.index("typography") is inner
    assert ascii_model.normalized("typography") is ascii_model.normalized("inner_whitespace")
    curly = FileModel("s = “x”\n")
    assert curly.index("inner_whitespace") == {"s = “x”": [0]}
    assert curly.index("typography") == {'s = "x"': [0]}


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["", "a", "bb", "é", "  x  ", "\u2018q\u2019"]), max_size=60),
       st.booleans(), st.integers(1, 12), st.data())
def test_lazy_lines_are_the_split_lines(parts: list[str], final: bool, chunk: int,
                                        data: st.DataObject) -> None:
    """``LazyLines`` (chunks cut after the first line break past every ``chunk`` characters)
    gives what the whole split gives: items, negative items, slices, iteration, the offset
    where a line starts and the line an offset is on (also counted from an earlier one)."""
    import bisect

    from zbtools.core.editing.matching import lazylines

    text = "\n".join(parts) + ("\n" if final and parts else "")
    eager = FileModel(text)
    lines = eager.all_lines()
    starts = eager.line_starts
    old = lazylines.LAZY_CHUNK_CHARS
    lazylines.LAZY_CHUNK_CHARS = chunk
    try:
        lazy = lazylines.LazyLines(text, eager.line_count)
    finally:
        lazylines.LAZY_CHUNK_CHARS = old
    assert len(lazy) == len(lines)
    assert list(lazy) == lines
    for i in range(-len(lines), len(lines)):
        assert lazy[i] == lines[i]
    a = data.draw(st.integers(-3, len(lines) + 3))
    b = data.draw(st.integers(-3, len(lines) + 3))
    assert lazy[a:b] == lines[a:b]
    assert lazy[::2] == lines[::2]
    for line in range(len(lines) + 1):
        assert lazy.line_start(line) == starts[line]
    for offset in range(len(text) + 1):
        line = max(bisect.bisect_right(starts, offset) - 1, 0)
        assert lazy.line_of(offset) == line
        known = data.draw(st.integers(0, offset))  # any earlier offset with its line
        assert lazy.line_near(offset, known, lazy.line_of(known)) == line
    with pytest.raises(IndexError):
        lazy[len(lines)]


def test_a_big_text_without_cr_is_split_lazily_and_one_with_cr_at_once() -> None:
    from zbtools.core.editing.matching import filemodel, lazylines

    text = "".join(f"line {i}\n" for i in range(filemodel.LAZY_MIN_LINES + 10))
    model = FileModel(text)
    assert isinstance(model.lines, lazylines.LazyLines)
    assert model.lines[5000] == "line 5000" and model.eols[-1] == "\n"
    assert model.text_start(5000) == text.index("line 5000\n")
    assert model.line_of(text.index("line 4999\n") + 3) == 4999
    assert model._line_starts is None and model._lines is None  # nothing indexed whole
    every = model.all_lines()
    assert every[7] == "line 7"
    assert isinstance(model.lines, list)  # split once asked for whole: the list from then on
    crlf = FileModel(text.replace("\n", "\r\n"))
    assert isinstance(crlf.lines, list) and crlf.lines[5000] == "line 5000"
    assert crlf.text_start(5000) == crlf.text.index("line 5000\r\n")

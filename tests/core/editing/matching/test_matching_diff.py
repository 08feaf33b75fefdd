"""zbtools.core.editing.matching.diff: line opcodes and unified diffs in difflib's format."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zbtools.core.editing.matching.diff import LCS_MAX_CELLS, line_opcodes, unified_diff


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(["a", "b", "c", "d"]), max_size=30),
       st.lists(st.sampled_from(["a", "b", "x", "y"]), max_size=30))
def test_line_opcodes_transform_one_list_into_the_other(a: list[str], b: list[str]) -> None:
    rebuilt: list[str] = []
    at_a = at_b = 0
    for tag, i1, i2, j1, j2 in line_opcodes(a, b):
        assert (i1, j1) == (at_a, at_b)
        if tag == "equal":
            assert a[i1:i2] == b[j1:j2]
        rebuilt += b[j1:j2]
        at_a, at_b = i2, j2
    assert (at_a, at_b) == (len(a), len(b))
    assert rebuilt == b


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["a\n", "b\n", "c\n"]), max_size=40),
       st.lists(st.sampled_from(["a\n", "x\n", "c\n"]), max_size=40))
def test_the_unified_diff_matches_difflib_when_the_alignment_is_the_same(
        a: list[str], b: list[str]) -> None:
    import difflib

    mine = unified_diff("f", "".join(a), "".join(b))
    if line_opcodes(a, b) == difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        reference = "".join(difflib.unified_diff(a, b, "a/f", "b/f"))
        assert mine == reference
    assert (mine == "") == (a == b)


def test_a_middle_beyond_the_lcs_bound_is_aligned_exactly_as_difflib_does() -> None:
    import difflib

    a = [f"{i}\n" for i in range(300)]
    b = [f"{i}\n" for i in range(0, 600, 2)]
    assert len(a) * len(b) > LCS_MAX_CELLS
    assert line_opcodes(a, b) == difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()


def test_the_hunks_of_an_excerpt_are_numbered_from_its_first_line() -> None:
    assert unified_diff("f", "a\nb\n", "a\nc\n", first_line=10) == (
        "--- a/f\n+++ b/f\n@@ -10,2 +10,2 @@\n a\n-b\n+c\n")


def test_a_last_line_without_a_newline_is_marked_as_difflib_does() -> None:
    assert unified_diff("f", "a", "b") == ("--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n"
                                           "\\ No newline at end of file\n+b\n"
                                           "\\ No newline at end of file\n")


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(["a\n", "b\n", "\n", "a"]), max_size=40), st.data())
def test_an_excerpt_diff_is_the_whole_texts_diff_or_is_refused(
        lines: list[str], data: st.DataObject) -> None:
    """Repetitive lines, pure insertions and deletions, a last line without a break and
    changes that end inside a line: whenever excerpt_diff answers, it is the whole diff."""
    from zbtools.core.editing.matching.diff import excerpt_diff

    lines = [line if line.endswith("\n") or i == len(lines) - 1 else line + "\n"
             for i, line in enumerate(lines)]
    start = data.draw(st.integers(0, len(lines)))
    end = data.draw(st.integers(start, len(lines)))
    middle = data.draw(st.lists(st.sampled_from(["a\n", "b\n", "\n", "c\n", "a", "c"]),
                                max_size=4))
    before = "".join(lines)
    cut_start = len("".join(lines[:start]))
    cut_end = len("".join(lines[:end]))
    after = before[:cut_start] + "".join(middle) + before[cut_end:]
    if after == before:
        return
    reach = data.draw(st.integers(0, 5))
    lo = max(0, start - reach)
    hi = min(len(lines), end + reach)
    lo_at, hi_at = len("".join(lines[:lo])), len("".join(lines[:hi]))
    excerpt_after = before[lo_at:cut_start] + "".join(middle) + before[cut_end:hi_at]
    answer = excerpt_diff("f", before[lo_at:hi_at], excerpt_after, lo + 1, lo == 0,
                          hi == len(lines))
    if answer is not None:
        assert answer == unified_diff("f", before, after)


def test_an_excerpt_with_enough_context_gives_the_diff() -> None:
    from zbtools.core.editing.matching.diff import excerpt_diff

    lines = [f"line {i}\n" for i in range(20)]
    before = "".join(lines)
    after = before.replace("line 10\n", "line ten\nline 10.5\n")
    excerpt = "".join(lines[6:15])
    answer = excerpt_diff("f", excerpt, excerpt.replace("line 10\n", "line ten\nline 10.5\n"),
                          7, False, False)
    assert answer == unified_diff("f", before, after)
    assert answer is not None and "@@ -8,7 +8,8 @@" in answer
    # two lines of context are not enough for three
    short = "".join(lines[8:13])
    assert excerpt_diff("f", short, short.replace("line 10\n", "x\n"), 9, False, False) is None


def _transforms(a: list[str], b: list[str], ops: list[tuple[str, int, int, int, int]]) -> bool:
    rebuilt: list[str] = []
    at_a = at_b = 0
    for tag, i1, i2, j1, j2 in ops:
        if (i1, j1) != (at_a, at_b) or (tag == "equal" and a[i1:i2] != b[j1:j2]):
            return False
        rebuilt += b[j1:j2]
        at_a, at_b = i2, j2
    return (at_a, at_b) == (len(a), len(b)) and rebuilt == b


@settings(max_examples=30, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(["}\n", "\n", "pass\n"]),
                          st.integers(0, 400).map(lambda k: f"line {k}\n")),
                min_size=210, max_size=400),
       st.lists(st.tuples(st.floats(0, 1), st.sampled_from(["del", "ins", "dup", "swap"])),
                min_size=3, max_size=40))
def test_a_middle_beyond_the_lcs_bound_is_aligned_validly(
        a: list[str], edits: list[tuple[float, str]]) -> None:
    """Repetitive and unique lines, scattered insertions, deletions, duplicates and moves: the
    opcodes of a big middle always turn one list into the other, equal runs really equal."""
    b = list(a)
    for where, what in edits:
        i = int(where * (len(b) - 1))
        if what == "del":
            del b[i]
        elif what == "ins":
            b.insert(i, f"new {i}\n")
        elif what == "dup":
            b.insert(i, b[i])
        else:
            b[i], b[-1 - i] = b[-1 - i], b[i]
    assert _transforms(a, b, line_opcodes(a, b))


def test_thousands_of_scattered_changes_are_aligned_without_difflib(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """difflib's alignment of many scattered changes is quadratic (1,000 hunks: seconds)."""
    import difflib

    small = [f"line {i}\n" for i in range(3000)]
    small_b = [line.replace("line", "LINE") if i % 13 == 5 else line
               for i, line in enumerate(small)]
    reference = difflib.SequenceMatcher(None, small, small_b, autojunk=False).get_opcodes()

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("difflib was used")

    monkeypatch.setattr(difflib, "SequenceMatcher", refuse)
    assert line_opcodes(small, small_b) == reference
    a = [f"line {i}\n" for i in range(60_000)]
    b = [line.replace("line", "LINE") if i % 13 == 5 else line for i, line in enumerate(a)]
    ops = line_opcodes(a, b)
    assert _transforms(a, b, ops)
    assert sum(1 for op in ops if op[0] == "replace") == len(range(5, 60_000, 13))
    diff = unified_diff("f", "".join(a), "".join(b))
    assert diff.count("\n-line ") == len(range(5, 60_000, 13))


def test_a_big_middle_without_a_unique_line_is_one_replace() -> None:
    a = ["x\n", "y\n"] * 300
    b = ["y\n", "x\n", "x\n"] * 200
    assert line_opcodes(a, b) == [("replace", 0, 600, 0, 600)]

"""zbtools.core.editing.matching.diff: line opcodes and unified diffs in difflib's format."""

from __future__ import annotations

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

"""The matcher's invariants, as properties: unique-or-refuse, nothing outside the match moves."""

from __future__ import annotations

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from zbtools.core.editing.matching import (
    FileModel,
    MatchError,
    Request,
    apply_requests,
    has_placeholder,
    infer_indent_unit,
    strip_line_numbers,
)

line_text = st.text(alphabet="abcxyz ()=:\t", min_size=0, max_size=12)
eol = st.sampled_from(["\n", "\r\n"])


def overlapping_count(text: str, part: str) -> int:
    count, pos = 0, text.find(part)
    while pos != -1:
        count += 1
        pos = text.find(part, pos + 1)
    return count


@st.composite
def files(draw: st.DrawFn) -> tuple[list[str], list[str], bool]:
    lines = draw(st.lists(line_text, min_size=1, max_size=12))
    eols = [draw(eol) for _ in lines]
    final = draw(st.booleans())
    if not final:
        eols[-1] = ""
    return lines, eols, final


@settings(max_examples=400, deadline=None)
@given(files(), st.data())
def test_an_exact_whole_line_edit_changes_only_its_lines(
        file: tuple[list[str], list[str], bool], data: st.DataObject) -> None:
    lines, eols, _ = file
    text = "".join(a + b for a, b in zip(lines, eols, strict=True))
    start = data.draw(st.integers(0, len(lines) - 1))
    end = data.draw(st.integers(start + 1, len(lines)))
    old = "\n".join(lines[start:end])
    assume(old.strip())
    model = FileModel(text)
    assume(overlapping_count(model.lf_view, old) == 1)
    assume(all("\r" not in line for line in lines))
    new_lines = data.draw(st.lists(st.text(alphabet="QRS ", min_size=1, max_size=6),
                                   min_size=0, max_size=4))
    new = "\n".join(new_lines)
    assume(new != old)
    try:
        applied = apply_requests(text, [Request(old, new)])
    except MatchError as err:
        assert err.code in ("no_match", "no_change", "placeholder_in_new"), err.code
        return
    head = "".join(a + b for a, b in zip(lines[:start], eols[:start], strict=True))
    tail = "".join(a + b for a, b in zip(lines[end:], eols[end:], strict=True))
    assert applied.text.startswith(head)
    assert applied.text.endswith(tail)
    middle = applied.text[len(head):len(applied.text) - len(tail)]
    assert middle.replace("\r\n", "\n").rstrip("\n") == new.rstrip("\n") or not new


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["x = 1", "y = 2", "}", "    pass", ""]), min_size=2,
                max_size=10), st.data())
def test_an_old_text_found_twice_is_never_applied_without_a_decisive_hint(
        lines: list[str], data: st.DataObject) -> None:
    text = "\n".join(lines) + "\n"
    start = data.draw(st.integers(0, len(lines) - 1))
    old = lines[start]
    assume(old.strip() and text.count(old) >= 2)
    try:
        apply_requests(text, [Request(old, old + "!")])
    except MatchError as err:
        assert err.code == "ambiguous_match"
        assert len(err.details["candidates"]) >= 2
    else:
        raise AssertionError("an ambiguous edit was applied")


def test_line_number_prefixes_are_stripped_only_when_consecutive() -> None:
    assert strip_line_numbers("    12\tfoo\n    13\tbar") == ("foo\nbar", 12)
    assert strip_line_numbers("12: foo\n13: bar")[1] == 12
    assert strip_line_numbers("    12\tfoo\n    15\tbar")[1] is None
    assert strip_line_numbers("x = 1\n2\tb")[1] is None


def test_placeholders_are_recognised_in_many_comment_styles() -> None:
    for placeholder in ("// ... rest of code", "# ... existing code ...", "...",
                        "/* ... */", "<!-- ... -->", "// rest of the function unchanged"):
        assert has_placeholder(f"a()\n{placeholder}\n", "a()\nb()\n") is not None, placeholder
    assert has_placeholder("x = ...\n", "y\n") is None
    assert has_placeholder("...\n", "...\n") is None  # present in old: a real Ellipsis


@pytest.mark.parametrize("lines,unit", [
    (["a", "\tb", "\t\tc"], "\t"),
    (["a", "    b", "        c"], "    "),
    (["a", "  b", "    c", "  d"], "  "),
    (["a", "b"], "    "),
])
def test_the_indent_unit_is_inferred(lines: list[str], unit: str) -> None:
    assert infer_indent_unit(lines) == unit


def test_a_character_edit_can_join_lines_and_keep_the_final_newline_state() -> None:
    assert apply_requests("a\nb\nc\n", [Request("a\n", "a")]).text == "ab\nc\n"
    assert apply_requests("a\nlast", [Request("last", "LAST")]).text == "a\nLAST"
    assert apply_requests("a\nlast", [Request("last", "LAST\n")]).text == "a\nLAST\n"
    assert apply_requests("a\r\nb\r\n", [Request("b\n", "")]).text == "a\r\n"


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(["a", "b", "c", "d"]), max_size=30),
       st.lists(st.sampled_from(["a", "b", "x", "y"]), max_size=30))
def test_line_opcodes_transform_one_list_into_the_other(a: list[str], b: list[str]) -> None:
    from zbtools.core.editing.matching import line_opcodes

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

    from zbtools.core.editing.matching import line_opcodes, unified_diff

    mine = unified_diff("f", "".join(a), "".join(b))
    if line_opcodes(a, b) == difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        reference = "".join(difflib.unified_diff(a, b, "a/f", "b/f"))
        assert mine == reference
    assert (mine == "") == (a == b)

"""zbtools.core.editing.matching.apply: several edits to one file, all applied or none."""

from __future__ import annotations

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from zbtools.core.editing.matching.apply import apply_requests, replace_all
from zbtools.core.editing.matching.errors import MatchError
from zbtools.core.editing.matching.filemodel import FileModel
from zbtools.core.editing.matching.requests import Request

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


def test_edits_are_all_located_in_the_original_and_applied_together() -> None:
    applied = apply_requests("a\nb\nc\nd\n", [Request("d\n", "D\n"), Request("a\n", "A\n")])
    assert applied.text == "A\nb\nc\nD\n"
    assert [r["start_line"] for r in applied.reports] == [4, 1]  # in request order
    assert applied.changed


def test_overlapping_edits_are_refused_with_both_ranges() -> None:
    with pytest.raises(MatchError) as caught:
        apply_requests("a\nb\nc\n", [Request("a\nb\n", "x\n"), Request("b\nc\n", "y\n")])
    assert caught.value.code == "overlapping_edits"
    assert caught.value.message == "an edit (lines 1-2) overlaps another edit (lines 2-3)"


def test_one_failed_patch_fails_them_all_and_each_patch_status_is_listed() -> None:
    with pytest.raises(MatchError) as caught:
        apply_requests("a = 1\nb = 2\n", [Request("a = 1\n", "a = 5\n", label="patches[0]: "),
                                          Request("zzz\n", "y\n", label="patches[1]: ")])
    err = caught.value
    assert err.code == "no_match"
    assert err.message.startswith("no changes written (1 of 2 patches located; all-or-nothing)")
    assert err.hint.startswith("fix only the failed patch(es) (patches[1]) and resend all 2")
    assert [p["status"] for p in err.details["patches"]] == ["ok", "failed"]
    assert (err.details["failed"], err.details["first_failure"]) == ([1], 1)
    # Regression: the failed patch's label was repeated ("patches[1]: patches[1]: ...").
    assert "patches[1]: patches[1]:" not in err.message
    assert "; patches[1]: old_text was not found" in err.message or \
        "all-or-nothing): patches[1]: old_text was not found" in err.message


def test_a_combined_refusal_names_an_unlabelled_patch_by_its_index() -> None:
    with pytest.raises(MatchError) as caught:
        apply_requests("a = 1\nb = 2\n", [Request("a = 1\n", "a = 5\n"),
                                          Request("zzz\n", "y\n")])
    assert "all-or-nothing): patches[1]: old_text was not found" in caught.value.message


def test_patches_written_as_a_sequence_are_applied_in_sequence_with_a_warning() -> None:
    applied = apply_requests("a = 1\n", [Request("a = 1\n", "a = 2\n"),
                                         Request("a = 2\n", "a = 3\n")])
    assert applied.text == "a = 3\n"
    assert applied.warnings == [
        "patches[1] matched only after the earlier patches were applied: the patches were "
        "applied in sequence, each against the result of the previous ones (line numbers in "
        "the report refer to those intermediate texts)"]


def test_an_unchanged_edit_and_a_placeholder_in_new_text_are_refused() -> None:
    with pytest.raises(MatchError) as caught:
        apply_requests("a\n", [Request("a", "a")])
    assert caught.value.code == "no_change"
    with pytest.raises(MatchError) as caught:
        apply_requests("a()\n", [Request("a()\n", "a()\n# ... rest of code\n")])
    assert caught.value.code == "placeholder_in_new"


def test_an_edit_whose_result_is_already_there_changes_nothing_and_says_so() -> None:
    applied = apply_requests("value = compute(x)\n",
                             [Request("value = old(x)\n", "value = compute(x)\n")])
    assert (applied.text, applied.changed) == ("value = compute(x)\n", False)
    assert applied.reports[0]["matched_with"] == "already_applied"
    assert applied.warnings == ["new_text is already present at lines 1-1 and old_text is not: "
                                "nothing to do"]


def test_an_insertion_whose_addition_is_already_there_is_refused_not_repeated() -> None:
    with pytest.raises(MatchError) as refused:
        apply_requests("import os\nimport sys\n",
                       [Request("import os\n", "import os\nimport sys\n")])
    assert refused.value.code == "no_change"


def test_each_report_names_the_tier_and_the_lines_of_its_edit() -> None:
    applied = apply_requests("def f():\n\tif x:\n\t\ty()\n",
                             [Request("if x:\n    y()\n", "if x:\n    z()\n", label="e: ")])
    assert applied.text == "def f():\n\tif x:\n\t\tz()\n"
    assert applied.reports == [{"label": "e", "start_line": 2, "end_line": 3,
                                "matched_with": "indentation", "transforms": ["reindented"],
                                "disambiguated_by": None}]


def test_a_report_names_the_transforms_the_merge_made_not_only_the_requests() -> None:
    # Regression: a re-indented edit reported "transforms": [] (the merge's own list was lost).
    applied = apply_requests("class A:\n    def f(self):\n        return 1\n",
                             [Request("def f(self):\n    return 1\n",
                                      "def f(self):\n    return 2\n")])
    assert applied.text == "class A:\n    def f(self):\n        return 2\n"
    assert applied.reports[0]["transforms"] == ["reindented"]
    exact = apply_requests("a = 1\n", [Request("a = 1\n", "a = 2\n")])
    assert exact.reports[0]["transforms"] == []


def test_replace_all_replaces_every_occurrence_and_keeps_line_endings() -> None:
    applied = replace_all("x\r\ny\r\nx\r\n", Request("x", "z"), None)
    assert applied.text == "z\r\ny\r\nz\r\n"
    assert [r["start_line"] for r in applied.reports] == [1, 3]


def test_replace_all_refuses_a_count_other_than_the_expected_one() -> None:
    with pytest.raises(MatchError) as caught:
        replace_all("x\ny\nx\n", Request("x", "z"), 3)
    assert caught.value.code == "ambiguous_match"
    assert caught.value.details == {"count": 2, "expected_count": 3, "lines": [1, 3]}


def test_replace_all_falls_back_to_whole_lines_ignoring_trailing_whitespace() -> None:
    applied = replace_all("a = 1  \r\nb\r\na = 1\t\r\n", Request("a = 1\n", "a = 2\n"), None)
    assert applied.text == "a = 2\r\nb\r\na = 2\r\n"
    assert {r["matched_with"] for r in applied.reports} == {"trailing_whitespace"}

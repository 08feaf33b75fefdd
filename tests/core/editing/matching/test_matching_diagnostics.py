"""zbtools.core.editing.matching.diagnostics: a miss explained, so the next try can succeed."""

from __future__ import annotations

from zbtools.core.editing.matching.diagnostics import diagnose
from zbtools.core.editing.matching.errors import MatchError
from zbtools.core.editing.matching.filemodel import FileModel
from zbtools.core.editing.matching.linekeys import TIERS
from zbtools.core.editing.matching.requests import Request


def miss(text: str, old: str, new: str = "unrelated\n") -> MatchError:
    return diagnose(FileModel(text), Request(old, new))


def test_a_miss_names_the_closest_lines_the_first_difference_and_a_diff() -> None:
    err = miss("a = 1\nb = 2\nc = 3\nd = 4\n", "b = 2\nc = 30\nd = 4\n")
    assert err.code == "no_match"
    assert err.message == ("old_text was not found (tried: exact, trailing_whitespace, "
                           "indentation, inner_whitespace, typography); closest: lines 2-4 "
                           "(similarity 0.94)")
    assert err.hint == "re-read lines 2-4 and copy them exactly as old_text"
    assert err.details["closest"] == {"start_line": 2, "end_line": 4, "similarity": 0.94,
                                      "matching_lines": 1}
    assert err.details["first_difference"] == {"old_text_line": 2, "old_text": "c = 30",
                                               "file_line": 3, "file_text": "c = 3"}
    assert err.details["diff"] == ("      2 | b = 2\n-       | c = 30\n+     3 | c = 3\n"
                                   "      4 | d = 4")
    assert err.details["diagnosis"] == []


def test_indentation_that_differs_but_not_by_one_shift_is_named_with_visible_whitespace() -> None:
    err = miss("if x:\n    a = 1\n    b = 2\n", "if x:\n  a = 1\n      b = 2\n")
    assert err.details["diagnosis"] == [
        "only indentation differs, on 2 line(s), and not by one uniform shift: e.g. file line 2 "
        "is indented `····`, yours `··`; copy the indentation from the file"]
    assert "-       | ··a·=·1" in err.details["diff"]


def test_old_text_that_stops_mid_line_is_told_to_include_whole_lines() -> None:
    err = miss("x = 1\nvalue = compute(alpha)\n", "x = 1\nvalue = compute(alpha\n")
    assert err.details["diagnosis"] == [
        "your old_text ends mid-line: file line 2 continues with ')'; include whole lines"]


def test_old_text_that_already_shows_the_edit_is_recognised() -> None:
    err = miss("a = 1\nb = 2\nc = 3\n", "a = 1\nb = 20\nc = 3\n",
               new="a = 1\nb = 20\nc = 3\nd = 4\n")
    assert err.details["diagnosis"] == [
        "line 2 of old_text looks like the result of your edit (it is in new_text but not in "
        "the file); old_text must show the file as it is now"]


def test_literal_backslash_n_for_line_breaks_is_diagnosed_and_unescape_listed_as_tried() -> None:
    err = miss("a = 1\nb = 2\n", "a = 1\\nb = 3")
    assert err.details["tiers_tried"] == [*TIERS, "unescape"]
    assert err.details["diagnosis"] == [
        "old_text contains literal backslash-n sequences (\\n) where the file has real line "
        "breaks; send real newlines"]


def test_when_no_line_matches_the_most_similar_single_line_is_the_closest() -> None:
    err = miss("alpha = compute_value(1)\nbeta = 2\n", "alpha = compute_valeu(1)\n")
    assert err.details["closest"] == {"start_line": 1, "end_line": 1, "similarity": 0.92,
                                      "matching_lines": 0}
    assert err.details["first_difference"]["file_text"] == "alpha = compute_value(1)"


def test_an_empty_file_has_no_closest_candidate_and_a_generic_hint() -> None:
    err = miss("", "x\n")
    assert "closest" not in err.details
    assert err.hint == "copy the exact current text from the file (read it again) into old_text"
    assert err.message == ("old_text was not found (tried: exact, trailing_whitespace, "
                           "indentation, inner_whitespace, typography)")


def test_the_label_of_a_patch_prefixes_its_diagnosis() -> None:
    request = Request("nothing like it\n", "x\n", label="patches[3]: ")
    assert diagnose(FileModel("a\n"), request).message.startswith("patches[3]: old_text was not")


def test_similarity_is_exact_while_the_differing_part_is_short_and_estimated_beyond() -> None:
    """The edit distance costs the product of the two lengths; a diagnosis scores at most
    SIMILARITY_CHARS of each changed block, whatever the texts' length."""
    import random

    from rapidfuzz.distance import Levenshtein

    from zbtools.core.editing.matching.diagnostics import SIMILARITY_CHARS, _similarity

    def truth(a: list[str], b: list[str]) -> float:
        return float(Levenshtein.normalized_similarity("\n".join(a), "\n".join(b)))

    rnd = random.Random(3)
    same = [f"line {i} " + "x" * rnd.randint(0, 60) for i in range(4000)]
    near = list(same)
    near[1000] = "a changed line"
    near[1050] += " and a tail"
    assert _similarity(same, near) == truth(same, near)  # one short differing stretch
    far = list(near)
    far[3000] = "another change, far away"
    assert len("\n".join(same[1000:3000])) > SIMILARITY_CHARS
    assert _similarity(same, far) == truth(same, far)  # line by line: each block exactly
    noisy = [line if rnd.random() < 0.7 else line.upper() for line in same]
    assert abs(_similarity(same, noisy) - truth(same, noisy)) < 0.02
    shifted = same[:500] + ["  " + line for line in same[500:3500]] + same[3500:]
    assert abs(_similarity(same, shifted) - truth(same, shifted)) < 0.02  # one big block
    assert _similarity(["a" * 100_000], ["b" * 50_000]) == 0.0
    assert _similarity([], []) == 1.0

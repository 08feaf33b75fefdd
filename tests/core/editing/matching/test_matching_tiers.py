"""zbtools.core.editing.matching's tiers: candidates, choosing among them, and the tier ladder."""

from __future__ import annotations

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from zbtools.core.editing.matching.apply import apply_requests
from zbtools.core.editing.matching.candidates import find_exact, find_lines
from zbtools.core.editing.matching.elision import locate_elided
from zbtools.core.editing.matching.errors import MatchError
from zbtools.core.editing.matching.filemodel import FileModel
from zbtools.core.editing.matching.ladder import locate, scope_window
from zbtools.core.editing.matching.requests import Request
from zbtools.core.editing.matching.similarity import find_similar
from zbtools.core.files.hashing import line_hash

CONFIG = ("def load_configuration(path):\n"
          "    with open(path) as handle:\n"
          "        data = json.load(handle)\n"
          "    return validate_settings(data)\n")
# CONFIG as a model might misremember it: one variable renamed on line 2.
CONFIG_MISREMEMBERED = CONFIG.replace("as handle", "as fh")


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


def test_exact_candidates_include_overlapping_occurrences_with_their_lines() -> None:
    model = FileModel("aaa\nb\n")
    assert [(c.span, c.start, c.end) for c in find_exact(model, "aa")] == [
        ((0, 2), 0, 1), ((1, 3), 0, 1)]
    assert [(c.start, c.end) for c in find_exact(model, "a\nb")] == [(0, 2)]


def test_the_indentation_tier_matches_a_uniform_shift_but_not_a_changed_nesting() -> None:
    model = FileModel("def f():\n    if x:\n        y()\n")
    assert [(c.start, c.end) for c in find_lines(model, "if x:\n    y()\n", "indentation")] == \
        [(1, 3)]
    assert find_lines(model, "if x:\ny()\n", "indentation") == []


def test_the_inner_whitespace_tiers_ignore_a_short_single_line() -> None:
    assert find_lines(FileModel("a  =  1\n"), "a = 1\n", "inner_whitespace") == []
    long_line = FileModel("value  =  compute(x)\n")
    assert len(find_lines(long_line, "value = compute(x)\n", "inner_whitespace")) == 1


def test_the_ladder_stops_at_the_first_tier_with_a_candidate() -> None:
    model = FileModel("x = 1\n    x = 1\n")
    located = locate(model, Request("    x = 1\n", "    x = 2\n"))
    assert (located.tier, located.candidate.first_line) == ("exact", 2)


def test_an_ambiguous_refusal_lists_each_candidate_with_a_line_that_tells_it_apart() -> None:
    model = FileModel("def a():\n    x = 1\ndef b():\n    x = 1\n")
    with pytest.raises(MatchError) as caught:
        locate(model, Request("    x = 1\n", "    x = 2\n"))
    assert caught.value.code == "ambiguous_match"
    assert caught.value.message == "old_text matches 2 places (exact): line 2, line 4"
    assert caught.value.details["candidates"] == [
        {"start_line": 2, "end_line": 2, "distinguishing_line": 1,
         "distinguishing_text": "def a():"},
        {"start_line": 4, "end_line": 4, "distinguishing_line": 3,
         "distinguishing_text": "def b():"}]


def test_a_start_line_hint_picks_the_candidate_within_its_window() -> None:
    model = FileModel("x = 1\n" + "pass\n" * 20 + "x = 1\n")
    located = locate(model, Request("x = 1\n", "x = 2\n", start_line=22))
    assert (located.candidate.first_line, located.disambiguated_by) == (22, "hint")


def test_a_hint_far_from_the_only_candidate_is_overruled_with_a_warning() -> None:
    model = FileModel("pass\n" * 30 + "unique = 1\n")
    located = locate(model, Request("unique = 1\n", "unique = 2\n", start_line=2))
    assert located.candidate.first_line == 31
    assert located.disambiguated_by is None
    assert located.warnings == ["matched at line 31; the hint said 2 (the content is unique, "
                                "so it was applied there)"]


def test_occurrence_picks_the_nth_candidate_and_refuses_one_past_the_last() -> None:
    model = FileModel("x = 1\ny\nx = 1\n")
    located = locate(model, Request("x = 1\n", "x = 2\n", occurrence=2))
    assert (located.candidate.first_line, located.disambiguated_by) == (3, "occurrence")
    with pytest.raises(MatchError) as caught:
        locate(model, Request("x = 1\n", "x = 2\n", occurrence=3))
    assert caught.value.code == "no_match"
    assert caught.value.hint == "use an occurrence between 1 and 2"


def test_scope_lines_narrow_the_search_to_their_block() -> None:
    model = FileModel("class A:\n    def f(self):\n        return 1\n"
                      "class B:\n    def f(self):\n        return 1\n")
    request = Request("        return 1\n", "        return 2\n")
    request.scopes = ["class B:"]
    assert scope_window(model, request) == (3, 6, 3)
    assert locate(model, request).candidate.first_line == 6


def test_a_scope_line_found_twice_is_refused_as_an_ambiguous_scope() -> None:
    model = FileModel("class A:\n    def f(self):\n        return 1\n"
                      "class B:\n    def f(self):\n        return 1\n")
    request = Request("        return 1\n", "        return 2\n")
    request.scopes = ["    def f(self):"]
    with pytest.raises(MatchError) as caught:
        locate(model, request)
    assert caught.value.code == "ambiguous_scope"
    assert caught.value.details == {"scope": "    def f(self):", "lines": [2, 5]}


def test_a_hash_anchor_holds_the_match_and_a_stale_one_is_refused() -> None:
    model = FileModel("x = 1\ny = 2\nx = 1\n")
    held = Request("x = 1\n", "x = 3\n")
    held.anchors = [f"3:{line_hash('x = 1')}"]
    assert locate(model, held).candidate.first_line == 3
    stale = Request("x = 1\n", "x = 3\n")
    stale.anchors = [f"2:{line_hash('y = 1')}"]
    with pytest.raises(MatchError) as caught:
        locate(model, stale)
    assert caught.value.code == "stale_anchor"
    assert caught.value.details["current_text"] == "y = 2"
    malformed = Request("x = 1\n", "x = 3\n")
    malformed.anchors = ["three"]
    with pytest.raises(MatchError) as caught:
        locate(model, malformed)
    assert caught.value.code == "invalid_arguments"


def test_old_text_with_escapes_is_retried_once_unescaped_and_new_text_follows() -> None:
    model = FileModel('say("hi")\nend\n')
    request = Request('say(\\"hi\\")\n', 'say(\\"bye\\")\n')
    located = locate(model, request)
    assert (located.tier, located.unescaped) == ("exact", True)
    assert (request.old, request.new) == ('say("hi")\n', 'say("bye")\n')
    assert request.transforms == ["unescaped"]


def test_an_edit_already_in_the_file_is_located_as_a_no_op() -> None:
    model = FileModel("a = 1\nvalue = compute(x)\n")
    located = locate(model, Request("value = old(x)\n", "value = compute(x)\n"))
    assert located.already_applied
    assert located.candidate.first_line == 2
    assert located.warnings == ["new_text is already present at lines 2-2 and old_text is not: "
                                "nothing to do"]


def test_an_exact_match_warns_about_a_block_that_differs_only_in_indentation() -> None:
    model = FileModel("if a:\n    x = 1\n    y = 2\nx = 1\ny = 2\n")
    located = locate(model, Request("x = 1\ny = 2\n", "x = 0\ny = 0\n"))
    assert (located.tier, located.candidate.first_line) == ("exact", 4)
    assert located.warnings == ["1 other block(s) match when indentation is ignored, at lines "
                                "2-3; make sure you meant lines 4-5"]


def test_one_clearly_most_similar_window_is_located_with_its_score() -> None:
    model = FileModel(CONFIG + "\ndef other():\n    pass\n")
    located = locate(model, Request(CONFIG_MISREMEMBERED, CONFIG_MISREMEMBERED))
    assert located.tier == "similarity"
    assert (located.candidate.first_line, located.candidate.last_line) == (1, 4)
    assert located.similarity is not None and located.similarity >= 0.9
    assert "only approximately" in located.warnings[0]


def test_two_equally_similar_windows_are_never_chosen_between() -> None:
    model = FileModel(CONFIG + "\n" + CONFIG)
    assert find_similar(model, Request(CONFIG_MISREMEMBERED, CONFIG_MISREMEMBERED)) is None
    with pytest.raises(MatchError) as caught:
        locate(model, Request(CONFIG_MISREMEMBERED, CONFIG_MISREMEMBERED + "# done\n"))
    assert caught.value.code == "no_match"


def _decoy_file(helpers: int) -> tuple[str, str, str, int]:
    """(file, old, new, the block meant's first line): old text misremembered in every line
    it holds only once (4 of 7), so its rarest lines in the file are 3 boilerplate lines that
    stand in ``helpers`` helpers too. A look-alike (similarity 0.93) opens the file; the block
    meant (0.97) closes it, after every helper."""
    old = ["def target(self):", "    self.assertEqual(result, expected)",
           "    value = compute_the_value(alpha, beta)", "    self.assertTrue(validate(result))",
           "    logger.info('checked value %s', value)", "    cleanup_resources(alpha, beta)",
           "    return value"]
    decoy = [old[0].replace("target", "targets"), old[1],
             old[2].replace("the_value(alpha, beta", "a_value(alpha, gamma"), old[3],
             old[4].replace("checked value %s', value", "checking value %s', vals"), old[5],
             old[6].replace("value", "vals")]
    meant = [old[0].replace("target", "targte"), old[1], old[2].replace("value(", "valeu("),
             old[3], old[4].replace("value %s", "valeu %s"), old[5], old[6] + "u"]
    helper = [old[1], "    x = 1", old[3], "    y = 2", old[5], "    return None", ""]
    lines = [*decoy, ""]
    for i in range(helpers):
        lines += [f"def helper_{i}(self):", *helper]
    first = len(lines) + 1
    lines += [*meant, ""]
    new = "\n".join(old).replace("expected)", "expected)  # checked")
    return "\n".join(lines), "\n".join(old), new, first


@pytest.mark.parametrize("helpers", [20, 260, 700])
def test_a_look_alike_met_first_is_never_edited_in_place_of_a_closer_block_further_on(
        helpers: int) -> None:
    """The similarity tier scores every window around every occurrence of its anchor lines,
    or refuses: it once looked at an anchor's first 200 occurrences only, and with 260
    helpers it edited the look-alike at line 1 while the closer block was never scored.
    (20 helpers: both are scored, and the look-alike is too close a rival; 700: a file big
    enough for the lazy index, too many places to score.)"""
    text, old, new, first = _decoy_file(helpers)
    model = FileModel(text)
    assert find_similar(model, Request(old, new)) is None
    with pytest.raises(MatchError) as caught:
        apply_requests(text, [Request(old, new)])
    assert caught.value.code == "no_match"
    # alone, the block meant is edited by the same tier
    alone = text.split("\n")[first - 1:]
    located = find_similar(FileModel("\n".join(alone)), Request(old, new))
    assert located is not None and located.candidate.first_line == 1


def test_elided_old_text_locates_each_segment_in_order() -> None:
    model = FileModel("def f():\n    a = 1\n    b = 2\n    return a\n")
    found = locate_elided(model, Request("def f():\n    ...\n    return a\n",
                                         "def g():\n    ...\n    return a\n"))
    assert found is not None
    assert [(loc.tier, loc.candidate.first_line, loc.request.context_only) for loc in found] == \
        [("elision", 1, False), ("elision", 4, True)]
    assert locate_elided(model, Request("a = 1\n", "a = 2\n")) is None


def test_elision_markers_that_new_text_does_not_repeat_are_refused() -> None:
    # New text with a seam where the elided lines fit (keep them? drop them?) is refused.
    model = FileModel("def f():\n    a = 1\n    return a\n")
    with pytest.raises(MatchError) as caught:
        locate_elided(model, Request("def f():\n    ...\n    return a\n",
                                     "def g():\n    return a\n"))
    assert caught.value.code == "no_match"
    assert "does not say what becomes of the elided lines 2-2" in caught.value.message
    assert caught.value.details["closest"] == {"start_line": 1, "end_line": 3}


def test_an_old_only_elision_that_new_text_rewrites_across_replaces_the_span() -> None:
    # Old lines on both sides of the marker rewritten into one: the gap goes with them.
    model = FileModel("def f():\n    a = 1\n    return a\n")
    found = locate_elided(model, Request("def f():\n    ...\n    return a\n", "def g():\n"))
    assert found is not None
    assert [(loc.tier, loc.candidate.first_line, loc.candidate.last_line) for loc in found] == \
        [("elision", 1, 3)]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(["a", "b", "ab", "", " a", "a\r", "\rb"]), max_size=14),
       st.sampled_from(["\n", "\r\n"]), st.booleans(), st.data())
def test_the_whole_line_index_finds_the_hunk_places_a_scan_finds(
        lines: list[str], eol: str, final: bool, data: st.DataObject) -> None:
    """Past WHOLE_LINE_SCANS hunks a file's lines are indexed instead of scanned per hunk
    (which made a patch's cost the product of its hunks and the file)."""
    from zbtools.core.editing.matching import filemodel
    from zbtools.core.editing.matching.ladder import _on_line_bounds

    text = eol.join(lines) + (eol if final and lines else "")
    pieces = data.draw(st.lists(st.sampled_from(["a", "b", "ab", "", " a", "a\r", "x"]),
                                min_size=1, max_size=4))
    old = "\n".join(pieces) + data.draw(st.sampled_from(["", "\n"]))
    if not old.strip():
        return
    scanned = FileModel(text)
    expected = [(c.start, c.end, c.span) for c in find_exact(scanned, old)
                if _on_line_bounds(scanned, c)]
    indexed = FileModel(text)
    for _ in range(filemodel.WHOLE_LINE_SCANS):
        assert indexed.whole_lines_index() is None
    found = [(c.start, c.end, c.span) for c in find_exact(indexed, old, whole_lines=True)
             if _on_line_bounds(indexed, c)]
    assert found == expected

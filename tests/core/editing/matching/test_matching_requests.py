"""zbtools.core.editing.matching.requests: what a request looks like once normalised."""

from __future__ import annotations

from zbtools.core.editing.matching.requests import (
    Request,
    has_placeholder,
    normalize_request,
    pattern_lines,
    split_markers,
    strip_line_numbers,
    unescape_once,
)


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


def test_normalising_turns_crlf_into_lf_and_drops_a_leading_bom() -> None:
    request = normalize_request(Request("\ufeffa\r\nb\r\n", "\ufeffc\r\n"))
    assert (request.old, request.new) == ("a\nb\n", "c\n")
    assert request.transforms == []
    assert request.start_line is None


def test_stripped_line_numbers_become_the_start_line_hint_and_are_reported() -> None:
    request = normalize_request(Request("  12\tfoo\n  13\tbar\n", "  12\tFOO\n  13\tbar\n"))
    assert (request.old, request.new) == ("foo\nbar\n", "FOO\nbar\n")
    assert request.start_line == 12
    assert request.transforms == ["line_numbers_stripped"]


def test_an_explicit_start_line_wins_over_stripped_numbers() -> None:
    request = normalize_request(Request("12\tfoo\n13\tbar\n", "x\n", start_line=40))
    assert request.old == "foo\nbar\n"
    assert request.start_line == 40


def test_new_text_keeps_its_numbers_unless_every_line_of_it_has_them() -> None:
    request = normalize_request(Request("12\tfoo\n13\tbar\n", "12\tfoo\nbaz\n"))
    assert request.old == "foo\nbar\n"
    assert request.new == "12\tfoo\nbaz\n"


def test_one_level_of_backslash_escapes_is_removed_and_unknown_ones_are_kept() -> None:
    assert unescape_once("a\\nb\\tc\\\"d\\'e") == "a\nb\tc\"d'e"
    assert unescape_once("\\\\n") == "\\n"  # one level only: the escaped backslash stays one
    assert unescape_once("\\q and a trailing \\") == "\\q and a trailing \\"


def test_elided_text_is_cut_at_marker_lines_only() -> None:
    assert split_markers("a\n# ... existing code ...\nb\n    ...\nc") == (
        ["a", "b", "c"], ["# ... existing code ...", "..."])
    assert split_markers("x = ...\ny") == (["x = ...\ny"], [])


def test_a_final_newline_ends_the_last_pattern_line_and_adds_no_empty_one() -> None:
    assert pattern_lines("a\nb\n") == ["a", "b"]
    assert pattern_lines("a\n\n") == ["a", ""]
    assert pattern_lines("a") == ["a"]
    assert pattern_lines("") == []

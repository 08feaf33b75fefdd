"""The head/tail rule for long results (docs/configuration.md#limits).

The rule is Zaguán Blade's "Tool Result Handling" (docs/internals/sources.md#zblade).
"""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from zbtools.core.call.truncate import count_lines, cut_text

NOTICE = re.compile(r"\[\.\.\. (\d+) lines \((\d+) bytes\) omitted[^\n]* \.\.\.\]\n")


def numbered(n: int, *, final_newline: bool = True) -> str:
    text = "\n".join(f"line {i}" for i in range(1, n + 1))
    return text + "\n" if final_newline and n else text


def split_cut(text: str) -> tuple[str, re.Match[str], str]:
    """(head, notice match, tail) of a cut text."""
    found = list(NOTICE.finditer(text))
    assert len(found) == 1, text
    match = found[0]
    return text[:match.start()], match, text[match.end():]


def nbytes(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


# ---------------------------------------------------------------------------------------------
# count_lines


def test_count_lines_does_not_count_a_final_newline_as_another_line() -> None:
    assert count_lines("") == 0
    assert count_lines("a") == 1
    assert count_lines("a\n") == 1
    assert count_lines("a\nb") == 2
    assert count_lines("\n") == 1
    assert count_lines("\n\n") == 2


# ---------------------------------------------------------------------------------------------
# Within limits: unchanged


def test_text_within_both_limits_comes_back_unchanged() -> None:
    text = numbered(2000)
    cut = cut_text(text, max_bytes=10**6, max_lines=2000, head_lines=100, tail_lines=50)
    assert cut.text == text
    assert not cut.truncated
    assert (cut.total_lines, cut.omitted_lines, cut.omitted_bytes) == (2000, 0, 0)
    assert cut.total_bytes == len(text)


def test_empty_text_has_no_lines_and_is_not_cut() -> None:
    cut = cut_text("", max_bytes=256, max_lines=10, head_lines=5, tail_lines=3)
    assert (cut.text, cut.truncated, cut.total_lines, cut.total_bytes) == ("", False, 0, 0)


# ---------------------------------------------------------------------------------------------
# The line limit


def test_over_max_lines_the_first_100_and_last_50_lines_are_kept_around_a_notice() -> None:
    text = numbered(2001)
    cut = cut_text(text, max_bytes=10**6, max_lines=2000, head_lines=100, tail_lines=50)
    assert cut.truncated
    head, notice, tail = split_cut(cut.text)
    assert head == numbered(100)
    assert tail == "".join(f"line {i}\n" for i in range(1952, 2002))
    assert cut.omitted_lines == 2001 - 150
    assert notice.group(1) == str(cut.omitted_lines)
    assert "lines 101-1951 of 2001" in notice.group(0)
    assert cut.omitted_bytes == len(text) - len(head) - len(tail)
    assert notice.group(2) == str(cut.omitted_bytes)


def test_a_text_without_final_newline_keeps_its_last_line_as_is() -> None:
    text = numbered(300, final_newline=False)
    cut = cut_text(text, max_bytes=10**6, max_lines=200, head_lines=10, tail_lines=5)
    head, _, tail = split_cut(cut.text)
    assert head == numbered(10)
    assert tail == "line 296\nline 297\nline 298\nline 299\nline 300"
    assert cut.omitted_lines == 285


def test_the_notice_names_the_spill_file_and_how_to_continue() -> None:
    cut = cut_text(numbered(50), max_bytes=10**6, max_lines=10, head_lines=3, tail_lines=2,
                   how_to_continue="continue with offset=4", spill_path="/state/spill/x.txt")
    _, notice, _ = split_cut(cut.text)
    assert "full output saved to /state/spill/x.txt" in notice.group(0)
    assert "continue with offset=4" in notice.group(0)


def test_head_and_tail_shrink_in_proportion_to_fit_a_small_max_lines() -> None:
    text = numbered(500)
    cut = cut_text(text, max_bytes=10**6, max_lines=10, head_lines=100, tail_lines=50)
    assert cut.truncated
    assert count_lines(cut.text) <= 10
    head, _, tail = split_cut(cut.text)
    assert head == numbered(6)
    assert tail == "line 498\nline 499\nline 500\n"
    assert cut.omitted_lines == 491


def test_zero_head_and_tail_lines_leave_only_the_notice() -> None:
    cut = cut_text(numbered(30), max_bytes=10**6, max_lines=10, head_lines=0, tail_lines=0)
    head, _, tail = split_cut(cut.text)
    assert (head, tail, cut.omitted_lines) == ("", "", 30)


# ---------------------------------------------------------------------------------------------
# The byte limit


def test_over_max_bytes_a_few_enormous_lines_are_cut_inside_the_lines() -> None:
    text = "a" * 100_000 + "\n" + "b" * 100_000 + "\n" + "c" * 100_000 + "\n"
    cut = cut_text(text, max_bytes=51_200, max_lines=2000, head_lines=100, tail_lines=50)
    assert cut.truncated
    assert nbytes(cut.text) <= 51_200
    head, _, tail = split_cut(cut.text)
    assert head.strip("\n") and set(head.strip("\n")) == {"a"}
    assert not tail  # all three lines belong to the head: nothing is left for the tail
    assert cut.omitted_bytes == len(text) - len(head.strip("\n"))
    assert cut.omitted_lines == 2  # the partly shown first line counts as kept


def test_the_byte_budget_is_split_between_head_and_tail() -> None:
    text = "".join(f"{i}:" + "x" * 5000 + "\n" for i in range(200))
    cut = cut_text(text, max_bytes=20_000, max_lines=2000, head_lines=100, tail_lines=50)
    head, _, tail = split_cut(cut.text)
    assert nbytes(cut.text) <= 20_000
    assert head.startswith("0:xxx")
    assert text.endswith(tail) and tail.endswith("x\n")
    assert abs(nbytes(head) - nbytes(tail)) < 100


def test_a_cut_never_splits_a_character_or_drops_an_escaped_byte() -> None:
    escaped = b"\xff".decode("utf-8", "surrogateescape")
    text = ("é" + escaped + "中😀") * 20_000 + "\n"
    cut = cut_text(text, max_bytes=1_000, max_lines=2000, head_lines=100, tail_lines=50)
    head, _, tail = split_cut(cut.text)
    visible = head.removesuffix("\n")
    assert text.startswith(visible)
    assert text.endswith(tail)
    assert escaped in visible
    assert "\ufffd" not in cut.text


# ---------------------------------------------------------------------------------------------
# Property: the head and tail are exact and the counts add up

LINE = st.text(st.sampled_from("ab é中\t\r"), max_size=30)


@settings(max_examples=300, deadline=None)
@given(lines=st.lists(LINE, max_size=80), final_newline=st.booleans(),
       head_lines=st.integers(0, 20), tail_lines=st.integers(0, 20),
       extra_lines=st.integers(1, 40), max_bytes=st.integers(256, 3000))
def test_cut_text_keeps_head_and_tail_exactly_and_counts_what_it_omits(
        lines: list[str], final_newline: bool, head_lines: int, tail_lines: int,
        extra_lines: int, max_bytes: int) -> None:
    text = "\n".join(lines) + ("\n" if final_newline and lines else "")
    max_lines = head_lines + tail_lines + extra_lines
    cut = cut_text(text, max_bytes=max_bytes, max_lines=max_lines, head_lines=head_lines,
                   tail_lines=tail_lines)
    total = count_lines(text)
    assert cut.total_lines == total
    assert cut.total_bytes == nbytes(text)
    if total <= max_lines and nbytes(text) <= max_bytes:
        assert cut.text == text
        assert not cut.truncated
        return
    assert cut.truncated
    ends = text.endswith("\n")
    pieces = text.split("\n")
    if ends:
        pieces.pop()
    head_n = min(head_lines, total)
    tail_n = min(tail_lines, total - head_n)
    head_want = "\n".join(pieces[:head_n]) + ("\n" if head_n and (head_n < total or ends) else "")
    tail_want = "\n".join(pieces[total - tail_n:]) + ("\n" if tail_n and ends else "")
    head, notice, tail = split_cut(cut.text)
    if nbytes(head_want) + nbytes(tail_want) <= max(max_bytes - 400, 64):
        assert (head, tail) == (head_want, tail_want)
    visible_head = head if text.startswith(head) else head.removesuffix("\n")
    assert text.startswith(visible_head)
    assert text.endswith(tail)
    assert cut.omitted_lines == total - count_lines(visible_head) - count_lines(tail)
    assert cut.omitted_bytes == nbytes(text) - nbytes(visible_head) - nbytes(tail)
    assert notice.group(1) == str(cut.omitted_lines)
    assert notice.group(2) == str(cut.omitted_bytes)
    assert count_lines(cut.text) <= max_lines

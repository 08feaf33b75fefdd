"""``page_text``'s fast path (a page with nothing to cut, built in a few C-speed passes) against
``fill_window``, line by line, as the oracle: the same lines, content and flags for any text,
window and budget, whichever path answers."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from zbtools.core.files.lines import Window, fill_window, page_text

LINE = st.text(alphabet=st.sampled_from("ab \t\r\u00e9\u4e2d\U0001f600\udc80"), max_size=12)


def slow(text: str, start: int, count: int | None, max_bytes: int, max_line_chars: int
         ) -> Window:
    """What ``page_text`` answered before its fast path: every line through ``fill_window``."""
    window = Window()
    pieces = text.split("\n")
    final_newline = text.endswith("\n")
    if final_newline or not text:
        pieces.pop()
    total = len(pieces)
    window.total_lines = total
    window.first = start
    stop = total if count is None else min(total, start - 1 + count)
    ends = [i < total - 1 or final_newline for i in range(start - 1, stop)]
    fill_window(window, pieces[start - 1:stop], ends, max_bytes=max_bytes,
                max_line_chars=max_line_chars)
    window.has_more = window.has_more or window.last < total
    return window


@settings(max_examples=400, deadline=None)
@given(lines=st.lists(LINE, max_size=30), final=st.booleans(), start=st.integers(1, 12),
       count=st.none() | st.integers(1, 30), max_bytes=st.integers(1, 400),
       max_line_chars=st.integers(1, 14))
@example(lines=["a\r", "b"], final=False, start=1, count=None, max_bytes=1000,
         max_line_chars=10)
@example(lines=["x" * 10] * 9 + ["y"], final=True, start=1, count=None, max_bytes=10 * 19,
         max_line_chars=10)  # the budget met exactly
def test_a_page_is_what_line_by_line_filling_gives(
        lines: list[str], final: bool, start: int, count: int | None, max_bytes: int,
        max_line_chars: int) -> None:
    text = "\n".join(lines) + ("\n" if final and lines else "")
    total = len(text.split("\n")) - (1 if text.endswith("\n") or not text else 0)
    if start > max(total, 1):
        return  # out_of_range, before either path
    fast = Window()
    page_text(fast, text, "f.txt", start, count, max_bytes=max_bytes,
              max_line_chars=max_line_chars)
    oracle = slow(text, start, count, max_bytes, max_line_chars)
    assert vars(fast) == vars(oracle)

"""Result limits: the head/tail cut and spill files (docs/configuration.md#limits,
docs/internals/sources.md#zblade).

A result over ``max_bytes`` (50 KB) or ``max_lines`` (2000 lines) is cut to its first
``head_lines`` (100) and last ``tail_lines`` (50) lines with a notice in between that says how many
lines and bytes were omitted and how to get them. When ``head_lines + tail_lines`` do not fit in
``max_lines`` (a small configured limit), both shrink in proportion so that the cut text, notice
included, has at most ``max_lines`` lines. The full text is kept in a spill file (see
``Context.spill``) named in the notice and in the result, so nothing is lost.

When even the kept lines exceed ``max_bytes`` (a few enormous lines), the head and the tail get
half of the byte budget each and are cut inside a line, and the notice counts those characters too.
Lines are pieces separated by ``\\n``; the notice's counts are exact.
"""

from __future__ import annotations


class Cut:
    """The outcome of ``cut_text``."""

    __slots__ = ("omitted_bytes", "omitted_lines", "text", "total_bytes", "total_lines",
                 "truncated")

    def __init__(self, text: str, truncated: bool, total_lines: int, total_bytes: int,
                 omitted_lines: int, omitted_bytes: int) -> None:
        self.text = text
        self.truncated = truncated
        self.total_lines = total_lines
        self.total_bytes = total_bytes
        self.omitted_lines = omitted_lines
        self.omitted_bytes = omitted_bytes


def _nbytes(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def count_lines(text: str) -> int:
    """Lines as a reader counts them: a final newline does not start another line."""
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def _clip_bytes(text: str, budget: int, *, from_end: bool) -> str:
    """The longest prefix (or suffix) of ``text`` whose UTF-8 form fits in ``budget`` bytes.

    The cut falls between characters, so no character is mangled or dropped from the part kept
    (lone surrogates, which stand for undecodable bytes, included).
    """
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= budget:
        return text
    if budget <= 0:
        return ""
    if from_end:
        start = len(data) - budget
        while start < len(data) and 0x80 <= data[start] < 0xC0:  # a continuation byte
            start += 1
        piece = data[start:]
    else:
        stop = budget
        while stop > 0 and 0x80 <= data[stop] < 0xC0:
            stop -= 1
        piece = data[:stop]
    return piece.decode("utf-8", "surrogatepass")


def cut_text(text: str, *, max_bytes: int, max_lines: int, head_lines: int, tail_lines: int,
             how_to_continue: str = "", spill_path: str | None = None) -> Cut:
    """Apply the head/tail rule; return the text unchanged when it is within both limits."""
    total_bytes = _nbytes(text)
    pieces = text.split("\n")
    ends_with_newline = text.endswith("\n")
    if ends_with_newline or not text:
        pieces.pop()
    total_lines = len(pieces)
    if total_lines <= max_lines and total_bytes <= max_bytes:
        return Cut(text, False, total_lines, total_bytes, 0, 0)

    keep = max(max_lines - 1, 0)  # the cut text, notice included, stays within max_lines
    if head_lines + tail_lines > keep:
        head_lines, tail_lines = (keep * head_lines // (head_lines + tail_lines),
                                  keep - keep * head_lines // (head_lines + tail_lines))
    head_n = min(head_lines, total_lines)
    tail_n = min(tail_lines, total_lines - head_n)
    head = pieces[:head_n]
    tail = pieces[total_lines - tail_n:] if tail_n else []
    # head_text is a prefix of text and tail_text a suffix, so the counts below are exact
    head_text = "\n".join(head) + ("\n" if head and (head_n < total_lines or ends_with_newline)
                                   else "")
    tail_text = "\n".join(tail) + ("\n" if tail and ends_with_newline else "")
    budget = max(max_bytes - 400, 64)  # room for the notice
    if _nbytes(head_text) + _nbytes(tail_text) > budget:
        head_budget = budget // 2 if tail_text else budget
        head_text = _clip_bytes(head_text, head_budget, from_end=False)
        if text.startswith("\n", len(head_text)):
            head_text += "\n"  # the line ending the cut falls on is kept, not made up
        tail_text = _clip_bytes(tail_text, max(budget - _nbytes(head_text), 0), from_end=True)
    kept_bytes = _nbytes(head_text) + _nbytes(tail_text)
    omitted_bytes = total_bytes - kept_bytes
    # Count whole lines that are not visible at all; partly visible lines are counted as kept.
    kept_head_lines = count_lines(head_text)
    kept_tail_lines = count_lines(tail_text)
    omitted_lines = max(total_lines - kept_head_lines - kept_tail_lines, 0)
    first_omitted = kept_head_lines + 1
    notice = f"[... {omitted_lines} lines ({omitted_bytes} bytes) omitted"
    if omitted_lines:
        notice += f": lines {first_omitted}-{first_omitted + omitted_lines - 1} of {total_lines}"
    if spill_path:
        notice += f"; full output saved to {spill_path} (read_file reads it)"
    if how_to_continue:
        notice += f"; {how_to_continue}"
    notice += " ...]"
    if head_text and not head_text.endswith("\n"):
        head_text += "\n"  # the notice starts on a line of its own
    return Cut(f"{head_text}{notice}\n{tail_text}", True, total_lines, total_bytes,
               omitted_lines, omitted_bytes)

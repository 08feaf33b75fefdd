"""The lines of a big text, split a chunk at a time: ``LazyLines``.

A file model of a big text without a CR (issue 16) does not split it whole to answer for a few
lines: ``LazyLines`` cuts the text into chunks of about ``LAZY_CHUNK_CHARS`` characters (each
cut after a line break, each chunk's first line number counted in C) and splits a chunk when a
line of it is asked for. It answers as the list of lines would (items, slices, iteration,
``len``) and also where a line starts and which line an offset is on. Nothing here refuses.

The map::

    LazyLines                      the sequence, built from the text and its line count
    LazyLines.line_start           the offset where a line starts
    LazyLines.line_of, line_near   the line an offset is on (counted from a known one)

The bottom of ``matching``: imports no other part (``filemodel`` builds on it). ``bisect`` is
imported on first use.
"""

from __future__ import annotations

# ``_collections_abc`` is loaded by ``os`` at start-up; ``collections.abc`` would import
# ``collections`` and ``typing`` is not cheap either (tests/test_import_budget.py).
from _collections_abc import Sequence

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any


LAZY_CHUNK_CHARS = 16384  # a lazy split's chunk: ~450 lines of code, split in ~20 us


class LazyLines(Sequence[str]):
    """The lines of a big text without a CR (issue 16), split a chunk at a time on first use.

    The text is cut after the first line break past every ``LAZY_CHUNK_CHARS`` characters, and
    each chunk's first line number is counted in C (``str.count``), far cheaper than splitting
    every line and indexing its offset (benchmarks/README.md#figures-behind-the-code). A line
    is found by bisecting the chunks' first line numbers; an offset's line by bisecting their
    offsets and counting the line breaks before it in its chunk. Iterating goes through every
    chunk (a whole-file consumer asks ``FileModel.all_lines`` instead, which splits the text
    once)."""

    __slots__ = ("_chunks", "_firsts", "_len", "_offsets", "_starts", "_text")

    def __init__(self, text: str, count: int) -> None:
        starts, firsts = [0], [0]
        size = len(text)
        pos = line = 0
        while True:
            cut = text.find("\n", pos + LAZY_CHUNK_CHARS)
            if cut == -1 or cut + 1 >= size:
                break
            line += text.count("\n", pos, cut + 1)
            pos = cut + 1
            starts.append(pos)
            firsts.append(line)
        self._text = text
        self._starts = starts
        self._firsts = firsts
        self._len = count
        self._chunks: dict[int, list[str]] = {}
        # per chunk, each line's offset from the chunk's start: a patch of many hunks asks
        # for many line starts in one chunk, each then costs a lookup, not a sum
        self._offsets: dict[int, list[int]] = {}

    def _chunk(self, c: int) -> list[str]:
        lines = self._chunks.get(c)
        if lines is None:
            starts = self._starts
            end = starts[c + 1] if c + 1 < len(starts) else len(self._text)
            lines = self._text[starts[c]:end].split("\n")
            if lines[-1] == "":
                lines.pop()  # the chunk ends with a line break (or the text is empty)
            self._chunks[c] = lines
        return lines

    def __len__(self) -> int:
        return self._len

    def __getitem__(self, i: int | slice) -> Any:  # str for an int, list[str] for a slice
        import bisect

        if isinstance(i, slice):
            start, stop, step = i.indices(self._len)
            if step != 1:
                return [self[k] for k in range(start, stop, step)]
            out: list[str] = []
            while start < stop:
                c = bisect.bisect_right(self._firsts, start) - 1
                first = self._firsts[c]
                piece = self._chunk(c)[start - first:stop - first]
                if not piece:  # pragma: no cover - every line is in a chunk
                    raise AssertionError("a line outside the chunks")
                out += piece
                start += len(piece)
            return out
        if i < 0:
            i += self._len
        if not 0 <= i < self._len:
            raise IndexError("line index out of range")
        c = bisect.bisect_right(self._firsts, i) - 1
        return self._chunk(c)[i - self._firsts[c]]

    def __iter__(self) -> Iterator[str]:
        for c in range(len(self._starts)):
            yield from self._chunk(c)

    def line_start(self, line: int) -> int:
        """Offset where 0-based ``line`` starts (``len(self)``: the end of the text)."""
        import bisect

        if line >= self._len:
            return len(self._text)
        c = bisect.bisect_right(self._firsts, line) - 1
        offsets = self._offsets.get(c)
        if offsets is None:
            import itertools

            offsets = self._offsets[c] = [0, *itertools.accumulate(
                len(text) + 1 for text in self._chunk(c))]
        return self._starts[c] + offsets[line - self._firsts[c]]

    def line_near(self, offset: int, known: int, known_line: int) -> int:
        """``line_of(offset)``, counting the line breaks from ``known`` (an earlier offset,
        on ``known_line``) when it is in the same chunk: a scan's hits cost what lies between
        them, or at most a chunk each."""
        import bisect

        if offset >= len(self._text):
            return self._len
        c = max(bisect.bisect_right(self._starts, offset) - 1, 0)
        start = self._starts[c]
        if not start <= known <= offset:
            known, known_line = start, self._firsts[c]
        return known_line + self._text.count("\n", known, offset)

    def line_of(self, offset: int) -> int:
        """The 0-based line holding ``offset`` (the end of the text: ``len(self)``)."""
        import bisect

        if offset >= len(self._text):
            return self._len

        c = max(bisect.bisect_right(self._starts, offset) - 1, 0)
        return self._firsts[c] + self._text.count("\n", self._starts[c], offset)

"""What applying edits gives: the file's new text and a report per edit.

A part of ``matching`` that imports no other part, so that the bytes fast path
(``cycle._bytes_fast_path``) can report an edit without loading the tiers.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class Splice:
    """The new text as one change of the original: lines [``start_line``, ``end_line``) of it,
    which are ``original[start:end]`` (``start`` and ``end`` are line starts, or the end of
    the text), become ``middle``. A writer that has the original's bytes can copy them around
    the encoded middle instead of joining and encoding the whole new text."""

    __slots__ = ("end", "end_line", "middle", "original", "start", "start_line")

    def __init__(self, original: str, start_line: int, end_line: int, start: int, end: int,
                 middle: str) -> None:
        self.original = original
        self.start_line = start_line
        self.end_line = end_line
        self.start = start
        self.end = end
        self.middle = middle

    def text(self) -> str:
        text = self.original
        return "".join((text[:self.start], self.middle, text[self.end:]))

    def changed(self) -> bool:
        return self.middle != self.original[self.start:self.end]


class Applied:
    """The new text of a file after all its edits, with per-edit reports. Given as a
    ``Splice`` of the original, ``text`` is joined only when asked for."""

    def __init__(self, text: str | None, reports: list[dict[str, Any]], changed: bool,
                 warnings: list[str], splice: Splice | None = None) -> None:
        assert text is not None or splice is not None
        self._text = text
        self.reports = reports
        self.changed = changed
        self.warnings = warnings
        self.splice = splice

    @property
    def text(self) -> str:
        if self._text is None:
            assert self.splice is not None
            self._text = self.splice.text()
        return self._text

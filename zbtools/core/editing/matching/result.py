"""What applying edits gives: the file's new text and a report per edit.

A part of ``matching`` that imports no other part, so that the bytes fast path
(``cycle._bytes_fast_path``) can report an edit without loading the tiers.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class Applied:
    """The new text of a file after all its edits, with per-edit reports."""

    def __init__(self, text: str, reports: list[dict[str, Any]], changed: bool,
                 warnings: list[str]) -> None:
        self.text = text
        self.reports = reports
        self.changed = changed
        self.warnings = warnings

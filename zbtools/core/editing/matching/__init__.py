"""Locating an edit's old text in a file, and applying it without touching anything else.

A request (old text, new text, optional line hints) is normalised, then a ladder of tiers from
strict to tolerant looks for its old text (T1 exact to T8 similarity,
docs/internals/matching.md#tiers); the first tier with candidates decides, several candidates
left after the hints are refused as ambiguous, and a looser tier is never tried to escape an
ambiguity (docs/internals/matching.md#i1, docs/internals/matching.md#i2). Applying is a line
merge that keeps every byte the caller did not change (docs/internals/matching.md#i3).
Failures are ``MatchError`` codes: ``no_match``, ``ambiguous_match``, ``ambiguous_scope``,
``stale_anchor``, ``edit_conflict``, ``no_change``, ``placeholder_in_new``,
``overlapping_edits``.

This module is the engine's public entry: callers outside the package import its names from
here, and each name loads its part on first use (``__getattr__``), so a plain exact edit done
on the bytes loads only ``requests``, ``result`` and ``diff``. The parts, what each owns and
what each may import are in docs/internals/matching.md#parts
(``tests/core/editing/matching/test_matching_layers.py`` holds them to it).
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from zbtools.core.editing.matching.apply import apply_requests, replace_all
    from zbtools.core.editing.matching.diff import unified_diff
    from zbtools.core.editing.matching.errors import MatchError
    from zbtools.core.editing.matching.filemodel import FileModel
    from zbtools.core.editing.matching.requests import Request
    from zbtools.core.editing.matching.result import Applied

# name -> the part that defines it
_PARTS = {"Applied": "result", "apply_requests": "apply", "replace_all": "apply",
          "unified_diff": "diff", "MatchError": "errors", "FileModel": "filemodel",
          "Request": "requests"}


def __getattr__(name: str) -> Any:
    part = _PARTS.get(name)
    if part is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = f"{__name__}.{part}"
    __import__(module)  # not importlib: its import costs more than a part
    value = getattr(sys.modules[module], name)
    globals()[name] = value
    return value

__all__ = ["Applied", "FileModel", "MatchError", "Request", "apply_requests", "replace_all",
           "unified_diff"]

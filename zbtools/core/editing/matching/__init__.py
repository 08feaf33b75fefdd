"""Locating an edit's old text in a file, and applying it without touching anything else.

The design is docs/internals/matching.md. A request (old text, new text, optional line hints) is
first normalised (CRLF to LF, a leading BOM dropped, ``cat -n`` line-number prefixes pasted from
a read stripped, omission placeholders in the new text refused). Then a ladder of tiers, from
strict to tolerant, looks for the old text:

====  ====================  ===============================================================
T1    ``exact``             substring of the file (partial lines allowed)
T2    ``trailing_whitespace`` whole lines equal after removing trailing spaces/tabs
T3    ``indentation``       whole lines equal in content and in depth relative to the first
                            line (tabs vs spaces, a uniform shift); new text is re-indented
T4    ``inner_whitespace``  as T3, runs of inner spaces/tabs collapsed (needs >= 2 non-blank
                            lines or >= 12 non-space characters)
T5    ``typography``        as T4 after NFC and mapping curly quotes, dashes, odd spaces and
                            the ellipsis to ASCII
T6    ``unescape``          T1-T5 again with one level of backslash escapes removed from old
                            and new (``\\n``, ``\\t``, ``\\"`` ...), only when old has them
T7    ``elision``           old text with ``...`` marker lines: each segment located in
                            order, the elided lines kept as they are (markers repeated in
                            new text), or the whole span replaced (new text spells it out)
--    ``near_miss``         every line equal but for one typo, one line missing or one
                            extra line, at one place (tried before "already applied")
T8    ``similarity``        one window clearly more similar than any other (gated; the
                            caller's change is merged onto it, refused on a conflict)
====  ====================  ===============================================================

A bare ``...`` line that is a Python block's whole body (``def f(): ...`` on two lines) is code,
not a placeholder or marker.

The ladder stops at the first tier that has candidates. One candidate is the match; several are
filtered by the hints (``start_line``/``end_line`` keep candidates within the hint window,
``occurrence`` picks the n-th); if more than one remains the edit is refused as ambiguous and every
candidate is listed with a line that tells it apart. A looser tier is never tried to escape an
ambiguity (docs/internals/matching.md#i1, docs/internals/matching.md#i2). A hint never creates a
match. ``@@`` scope lines and ``LINE:HASH`` anchors narrow the search before any tier runs.

Applying is a line merge: lines that the caller did not change keep the file's exact bytes
(trailing whitespace, tabs, curly quotes, per-line CRLF/LF); new lines take the region's line
ending (the file's majority where the region is mixed) and, for T3-T6, the file's indentation.
Bytes outside the matched region are asserted unchanged before anything is written.

Replacement text is literal: ``$&``, ``\\1`` and ``\\g<0>`` are written as they are.

Failure modes (``MatchError.code``): ``no_match`` (with the closest candidate, the first
diverging line and a specific diagnosis), ``ambiguous_match`` (every candidate listed),
``ambiguous_scope``, ``stale_anchor``, ``edit_conflict``, ``no_change`` (old equals new),
``placeholder_in_new``, ``overlapping_edits``.

The parts, each owning one concern (its docstring states what it owns, its limits and failure
modes). An arrow points at what a part may import; nothing imports upwards, not even inside a
function or for type checking (``tests/core/editing/matching/test_matching_layers.py`` checks
this), and no part imports another's ``_private`` names::

    errors       MatchError, SNIPPET_CHARS                    (imports no part)
    diff         line_opcodes, unified_diff                   (imports no part)
    requests     Request, normalize_request, marker tests     (imports no part)
    result       Applied: new text and per-edit reports       (imports no part)
    linekeys     TIERS, LINE_KEYS: T1-T5's line keys          (imports no part)
    indentation  leading_ws, columns, relative depths         (imports no part)
    lazylines    LazyLines: a big text split per chunk        (imports no part)
    filemodel    FileModel, its lazy keys and index   -> linekeys, indentation, lazylines
    diagnostics  diagnose: a miss explained           -> errors, filemodel, requests, diff,
                                                         linekeys, indentation
    candidates   Candidate, Located, T1-T5, choose    -> errors, filemodel, requests, linekeys,
                                                         indentation
    similarity   find_similar: T8                     -> filemodel, requests, linekeys,
                                                         candidates
    nearmiss     find_near, typo_distance             -> filemodel, requests, linekeys,
                                                         candidates
    already      already_applied                      -> filemodel, requests, linekeys,
                                                         candidates, nearmiss
    ladder       locate: T1-T6, then the near miss,   -> errors, filemodel, requests, linekeys,
                 T8 and "already applied"                indentation, diagnostics, candidates,
                                                         similarity, nearmiss, already
    elision      locate_elided: T7                    -> errors, filemodel, requests, linekeys,
                                                         diagnostics, candidates, nearmiss,
                                                         ladder
    reindent     reindenter, uncut, region_eol        -> filemodel, indentation
    threeway     merge_similar, merge_near_readings   -> errors, filemodel, requests, diff,
                                                         linekeys, indentation, candidates,
                                                         reindent
    merge        render_edit: located edit -> lines   -> filemodel, requests, diff, linekeys,
                                                         indentation, candidates, reindent,
                                                         threeway
    apply        apply_requests, replace_all          -> errors, filemodel, requests, result,
                                                         diagnostics, candidates, already,
                                                         ladder, elision, merge

This module is the engine's public entry: callers outside the package import the names below
from here. Each name loads its part on first use (``__getattr__``): a plain exact edit done on
the bytes needs only ``requests``, ``result`` and ``diff`` (the tiers, merge and diagnostics
are ~2 ms of a fresh process's imports). The parts import nothing heavy at module level
(``re``, ``difflib``, ``rapidfuzz``, ``unicodedata`` are imported on first use).
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

"""Candidates: the places old text stands at one tier, and the choice among several.

A ``Candidate`` is lines [start, end) (and, for T1, a character span); ``Located`` is the one
chosen, with its tier and what the report says about it. T1 finds every occurrence in the LF
view (``find_exact``); T2-T5 find whole-line windows equal under the tier's line key, anchored
on the rarest old line (``find_lines``). ``choose`` applies the hints and ``occurrence`` among
several, else refuses as ``ambiguous_match`` listing at most ``MAX_CANDIDATES_LISTED``, each
with a line that tells it apart (docs/internals/matching.md#i1); a hint never creates a match.
Also the constants several tiers read (the near-miss and similarity bounds).

Map: ``Candidate``, ``Located``, ``find_exact``, ``find_quoted`` (the opt-in ``quotes`` tier),
``find_lines``, ``find_candidates``, ``hint_window``, ``describe``, ``choose``;
``near_conflict`` (a near miss that cannot be read one way: ``edit_conflict``). Imports
``errors``, ``filemodel``, ``linekeys``, ``indentation`` and ``requests``; every other tier
builds on it.
"""

from __future__ import annotations

from zbtools.core.editing.matching.errors import SNIPPET_CHARS, MatchError
from zbtools.core.editing.matching.indentation import relative_depths, same_structure, unit_columns
from zbtools.core.editing.matching.linekeys import LINE_KEYS, QUOTES
from zbtools.core.editing.matching.requests import Request, pattern_lines

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

    from zbtools.core.editing.matching.filemodel import FileModel

MAX_CANDIDATES_LISTED = 5
INNER_WS_SINGLE_LINE_MIN = 12
# the bounds of the tolerant tiers (near miss and similarity) on old text and on the file
SIMILARITY_MAX_FILE_BYTES = 5 * 1024 * 1024
SIMILARITY_MAX_OLD_LINES = 400
# lines too common to anchor a similar window on or to tell an elided span by
TRIVIAL = {"}", "{", "end", "pass", "return", "else:", "try:", "finally:", ")", "]", "};"}


# ---------------------------------------------------------------------------------------------
# Candidates


class Candidate:
    """A place the old text matches: lines [start, end) (0-based), optionally a char span."""

    __slots__ = ("end", "span", "start", "tier")

    def __init__(self, tier: str, start: int, end: int,
                 span: tuple[int, int] | None = None) -> None:
        self.tier = tier
        self.start = start
        self.end = end  # exclusive; start == end only for an empty match
        self.span = span  # lf_view offsets, for exact (partial-line) matches

    @property
    def first_line(self) -> int:
        return self.start + 1

    @property
    def last_line(self) -> int:
        return max(self.end, self.start + 1)

    def overlaps(self, other: Candidate) -> bool:
        if self.span is not None and other.span is not None:
            return self.span[0] < other.span[1] and other.span[0] < self.span[1]
        return self.start < max(other.end, other.start + 1) and other.start < max(
            self.end, self.start + 1)


def find_exact(model: FileModel, old: str, limit: int = 1000,
               whole_lines: bool = False) -> list[Candidate]:
    """Every occurrence of ``old`` in the file, overlapping ones included; with
    ``whole_lines`` (a patch hunk) at least those that start at a line start, found through
    the index of the file's lines once many hunks have searched it (``whole_lines_index``)."""
    view = model.lf_view
    found: list[Candidate] = []
    index = model.whole_lines_index() if whole_lines else None
    if index is not None:
        for start in index.get(old.split("\n", 1)[0], ()):
            pos = model.line_start(start)
            if len(found) >= limit:
                break
            if view.startswith(old, pos):
                end = pos + len(old)
                found.append(Candidate("exact", start, model.line_of(end - 1) + 1, (pos, end)))
        return found
    pos = view.find(old)
    while pos != -1 and len(found) < limit:
        end = pos + len(old)
        first = model.line_of(pos)
        last = model.line_of(end - 1) if end > pos else first
        found.append(Candidate("exact", first, last + 1, (pos, end)))
        pos = view.find(old, pos + 1)
    return found


def find_quoted(model: FileModel, old: str, whole_lines: bool = False,
                limit: int = 1000) -> list[Candidate]:
    """Every occurrence of ``old`` once the four curly quotes are read as straight ones on
    both sides (the ``quotes`` tier, docs/internals/matching.md#limited-tiers): a substring
    match like T1's, its span the same offsets (one character for one)."""
    folded = old.translate(QUOTES)
    view = model.quote_view
    if view is None:  # no curly quote in the file: only a curly old text could differ
        if folded == old:
            return []
        view = model.lf_view
    found: list[Candidate] = []
    pos = view.find(folded)
    while pos != -1 and len(found) < limit:
        end = pos + len(folded)
        first = model.line_of(pos)
        last = model.line_of(end - 1) if end > pos else first
        if not whole_lines or pos == model.line_start(first):
            found.append(Candidate("quotes", first, last + 1, (pos, end)))
        pos = view.find(folded, pos + 1)
    return found


def find_lines(model: FileModel, old: str, tier: str) -> list[Candidate]:
    """Whole-line windows equal to ``old`` under the tier's normalisation."""
    pattern = pattern_lines(old)
    if not pattern or not any(line.strip() for line in pattern):
        return []
    key = LINE_KEYS[tier]
    keys = [key(line) for line in pattern]
    if tier in {"inner_whitespace", "typography"}:
        non_blank = [k for k in keys if k]
        if len(non_blank) < 2 and sum(len(k.replace(" ", "")) for k in non_blank) < \
                INNER_WS_SINGLE_LINE_MIN:
            return []
    index = model.index(tier)
    normalized = model.normalized(tier)
    anchor_pos, anchor_key = _anchor(keys, index)
    starts = [p - anchor_pos for p in index.get(anchor_key, ())]
    n = len(pattern)
    relative = tier in ("indentation", "inner_whitespace", "typography")
    if relative:
        old_depths = relative_depths(pattern)
    found: list[Candidate] = []
    for start in starts:
        if start < 0 or start + n > len(model.lines):
            continue
        window = normalized[start:start + n]
        if any(w != k and (k or w) for w, k in zip(window, keys, strict=True)):
            continue
        if relative:
            depths = relative_depths(model.lines[start:start + n])
            file_w = unit_columns(model.indent_unit_near(start))  # the region's unit
            if same_structure(old_depths, depths, file_w) is None:
                continue
        found.append(Candidate(tier, start, start + n))
    return found


ANCHOR_RARE_ENOUGH = 8


def _anchor(keys: list[str], index: Mapping[str, Sequence[int]]) -> tuple[int, str]:
    """A non-blank pattern line to anchor on: any gives the same candidates, a rare one the
    fewest windows to check. The longest lines are asked first and one on at most
    ``ANCHOR_RARE_ENOUGH`` lines is taken at once (on a big file each count is a search);
    else the rarest of all."""
    best: tuple[int, int, str] | None = None
    for i, k in sorted(((i, k) for i, k in enumerate(keys) if k),
                       key=lambda ik: (-len(ik[1]), ik[0])):
        count = len(index.get(k, ()))
        if count <= ANCHOR_RARE_ENOUGH:
            return i, k
        if best is None or count < best[0]:
            best = (count, i, k)
    assert best is not None
    return best[1], best[2]


def find_candidates(model: FileModel, old: str, tier: str,
                    whole_lines: bool = False) -> list[Candidate]:
    if tier == "exact":
        return find_exact(model, old, whole_lines=whole_lines)
    if tier == "quotes":
        return find_quoted(model, old, whole_lines=whole_lines)
    return find_lines(model, old, tier)


# ---------------------------------------------------------------------------------------------
# Choosing among candidates


def hint_window(request: Request) -> tuple[int, int] | None:
    if request.start_line is None and request.end_line is None:
        return None
    start = request.start_line or request.end_line or 1
    end = request.end_line or start
    slack = max(5, request.old.count("\n") + 1)
    return start - slack, end + slack


class Located:
    """The outcome of locating one request."""

    def __init__(self, candidate: Candidate, request: Request) -> None:
        self.candidate = candidate
        self.request = request
        self.tier = candidate.tier
        self.disambiguated_by: str | None = None
        self.warnings: list[str] = []
        self.unescaped = False
        self.already_applied = False
        # where new text already stands, when a tolerant tier located old text too: a merge
        # there that changes nothing is reported as already applied
        self.applied_at: Candidate | None = None
        self.noop_or_refuse = False  # the merge must change nothing, or the edit is refused
        self.similarity: float | None = None
        # near_miss: file line of each old line (None: a line the file lacks) and the one file
        # line old text lacks (None: none)
        self.alignment: list[int | None] = []
        self.dropped: int | None = None
        # other (alignment, dropped) readings of the same window: the merge must agree
        self.alternatives: list[tuple[list[int | None], int | None]] = []


def describe(model: FileModel, cand: Candidate, others: list[Candidate]) -> dict[str, Any]:
    """A candidate with the nearest line above that tells it apart from the others."""
    info: dict[str, Any] = {"start_line": cand.first_line, "end_line": cand.last_line}
    offsets = [c.start - cand.start for c in others if c is not cand]
    for distance in range(1, 40):
        above = cand.start - distance
        if above < 0:
            break
        text = model.lines[above]
        if not text.strip():
            continue
        same = all(0 <= above + off < len(model.lines) and model.lines[above + off] == text
                   for off in offsets)
        if not same:
            info["distinguishing_line"] = above + 1
            info["distinguishing_text"] = text.strip()[:SNIPPET_CHARS]
            break
    return info


def choose(model: FileModel, cands: list[Candidate], request: Request) -> Candidate | None:
    """Apply hints; return the one candidate, or raise ``ambiguous_match``."""
    if len(cands) == 1:
        return cands[0]
    window = hint_window(request)
    chosen = cands
    if request.occurrence is not None:
        if request.occurrence > len(cands):
            raise MatchError(
                "no_match", f"occurrence {request.occurrence} asked, but old_text matches "
                f"{len(cands)} place(s) ({cands[0].tier})",
                hint=f"use an occurrence between 1 and {len(cands)}",
                details={"candidates": [describe(model, c, cands) for c in cands]})
        return cands[request.occurrence - 1]
    if window is not None:
        lo, hi = window
        chosen = [c for c in cands if c.last_line >= lo and c.first_line <= hi]
        if len(chosen) == 1:
            return chosen[0]
        # Several within the slack: a hint naming a candidate's exact lines still decides.
        exact = [c for c in chosen
                 if (request.start_line is None or c.first_line == request.start_line)
                 and (request.end_line is None or c.last_line == request.end_line)]
        if len(exact) == 1:
            return exact[0]
        if not chosen:
            chosen = cands
    listed = sorted(chosen, key=lambda c: abs(c.first_line - (request.start_line or 0))
                    if request.start_line else c.start)
    described = [describe(model, c, chosen) for c in listed[:MAX_CANDIDATES_LISTED]]
    labels: dict[str, int] = {}  # several matches in one line are named once, with a count
    for d in described:
        label = f"lines {d['start_line']}-{d['end_line']}" if d["start_line"] != \
            d["end_line"] else f"line {d['start_line']}"
        labels[label] = labels.get(label, 0) + 1
    places = ", ".join(label if n == 1 else f"{label} ({n} times)"
                       for label, n in labels.items())
    more = f" and {len(chosen) - MAX_CANDIDATES_LISTED} more" if len(chosen) > \
        MAX_CANDIDATES_LISTED else ""
    example = described[0]["start_line"]
    raise MatchError(
        "ambiguous_match",
        f"{request.label}old_text matches {len(chosen)} places ({chosen[0].tier}): "
        f"{places}{more}",
        # clauses that stand alone: a tool without start_line or occurrence drops that advice
        # (docs/internals/surfaces.md#dialect-layer)
        hint="add a line that appears only at the place you mean (each candidate is listed "
        f"with the nearest line that tells it apart); start_line={example} picks the one "
        "starting there; occurrence: 1 picks the first",
        details={"tier": chosen[0].tier, "count": len(chosen), "candidates": described})


def near_conflict(located: Located, what: str) -> MatchError:
    """``edit_conflict`` for a near miss whose reading cannot be told (``what``): old text
    matched its window but for one line, and where the edit goes depends on which."""
    cand = located.candidate
    return MatchError(
        "edit_conflict", f"{located.request.label}old_text matched lines {cand.first_line}-"
        f"{cand.last_line} but for one line, and {what}",
        hint=f"re-read lines {cand.first_line}-{cand.last_line} and resend old_text with the "
        "file's current text", details={"start_line": cand.first_line,
                                         "end_line": cand.last_line})


"""The tier ladder: where an edit's old text is in the file, unique or refused.

Owns ``Candidate`` (lines [start, end) and, for T1, a character span), ``Located`` (the chosen
candidate with its tier and what the report says about it), the candidate finders of T1-T5
(``find_exact``: every occurrence in the LF view; ``find_lines``: whole-line windows equal
under the tier's line key, anchored on the rarest old line, with the indentation structure
checked for T3-T5), ``choose`` (hints and ``occurrence`` among several candidates, else
``ambiguous_match`` with every candidate and the nearest line that tells it apart),
``scope_window`` (``@@`` scope lines), ``verify_anchors`` (``LINE:HASH`` anchors) and
``locate``, the ladder itself: T1-T5, then T1-T5 again with old text unescaped once (T6); the
first tier with candidates decides; a looser tier is never tried to escape an ambiguity
(MATCHING I1, I2); a hint never creates a match. When nothing matches and no scope, anchor or
elision bound restricts the search (and old text has no elision markers), ``locate`` tries a
near miss (``find_near``: one typo, one missing or one extra line, at one place), then T8
(gated similarity, ``find_similar``), then the edit already applied (``already_applied``: new
text as whole lines, no deleted line surviving there but for a typo). A near miss or similar
window found while new text stands carries that place (``Located.applied_at``): ``apply``
calls the edit made only when the window's merge changes nothing or refuses, so "already
applied" is never answered while a tier would apply old text. What is still unmatched is
refused with ``diagnostics.diagnose``'s ``no_match``.
``locate_elided`` is T7: old text with ``...`` marker lines, each segment located in order
(markers repeated in new text), or, when new text accounts for the elided lines (writes them
out, as they are or edited, or rewrites the lines around the marker), the span from the first
segment to the last replaced (each segment whole lines, exact or trailing-whitespace; each
marker for the fewest lines, 1 to ``ELIDED_MAX_GAP``, that let its neighbours meet; one such
span, or one whose elided lines new text writes out by a clear margin; refused when a segment
also stands inside the gap up to indentation, or new text repeats a line just outside it).

Limits: T4/T5 need >= 2 non-blank lines or >= ``INNER_WS_SINGLE_LINE_MIN`` non-space
characters; T7 segments must lie within ``ELISION_MAX_GAP`` lines of the previous one; T8 runs
only for old text of >= 3 non-blank lines and >= 40 non-space characters, at most 400 lines
and ``SIMILARITY_MAX_OLD_CHARS`` characters (each window's score is an edit distance, whose
cost is the product of the two texts' lengths), in a file of at most 5 Mi characters, on the
windows around every occurrence of its 3 rarest lines (refused past
``SIMILARITY_MAX_WINDOWS``: never a set cut short), and accepts only a best score >= 0.90
whose best non-overlapping rival scores at most best - 0.10 and below 0.85 (its 3-way merge,
in ``merge``, may still refuse).
Failure modes: ``no_match``, ``ambiguous_match``, ``ambiguous_scope``, ``stale_anchor``,
``invalid_arguments`` (a malformed anchor).

Imports ``errors``, ``filemodel``, ``requests`` and ``diagnostics``; ``merge`` and ``apply`` build
on it. ``rapidfuzz`` (T8) and ``zbtools.core.files.hashing`` (anchors) are imported on use.
"""

from __future__ import annotations

import itertools

from zbtools.core.editing.matching.diagnostics import diagnose
from zbtools.core.editing.matching.errors import SNIPPET_CHARS, MatchError
from zbtools.core.editing.matching.filemodel import (
    LINE_KEYS,
    TIERS,
    columns,
    count_at_most,
    leading_ws,
    relative_depths,
    same_structure,
    typography_key,
    unit_columns,
)
from zbtools.core.editing.matching.requests import (
    Request,
    ellipsis_is_code,
    pattern_lines,
    split_marker_lines,
    split_markers,
    unescape_once,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

    from zbtools.core.editing.matching.filemodel import FileModel

MAX_CANDIDATES_LISTED = 5
ALREADY_APPLIED_MIN_CHARS = 8
ALREADY_APPLIED_TYPO_REACH = 8  # lines each side of new text compared but for a typo
INNER_WS_SINGLE_LINE_MIN = 12
ELISION_MAX_GAP = 2000
ELIDED_MAX_GAP = 100
ELIDED_SIMILAR = 0.6
ELIDED_LIKENESS_MARGIN = 0.25
ELIDED_NEIGHBOURS = 3
SIMILARITY_MIN = 0.90
SIMILARITY_MARGIN = 0.10
SIMILARITY_RUNNER_UP_MAX = 0.85
SIMILARITY_MIN_LINES = 3
SIMILARITY_MIN_CHARS = 40
SIMILARITY_MAX_WINDOWS = 2000
SIMILARITY_MAX_FILE_BYTES = 5 * 1024 * 1024
SIMILARITY_MAX_OLD_LINES = 400
SIMILARITY_MAX_OLD_CHARS = 24_000
NEAR_TYPO_MAX_EDITS = 2
NEAR_TYPO_MIN_CHARS = 6
NEAR_SINGLE_LINE_MIN_CHARS = 16
NEAR_SINGLE_LINE_MARGIN = 4
NEAR_MIN_EQUAL_LINES = 2
NEAR_MIN_EQUAL_CHARS = 16
NEAR_TYPO_EQUAL_CHARS = 8
NEAR_RIVAL_EDITS = 4
NEAR_RIVAL_MARGIN = 2
NEAR_ONE_OFF_SIMILAR = 0.8  # a line this similar (Indel) makes a line-for-line window a rival
NEAR_SIMILAR_MAX_CHARS = 2_000  # two lines differing over more are not compared whole
TYPO_MIN_WORD = 4
NEAR_MAX_STARTS = 4000
NEAR_LINE_POSITIONS = 200  # occurrences of one line looked at for near-miss windows


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
    return find_lines(model, old, tier)


# ---------------------------------------------------------------------------------------------
# Choosing among candidates


def _hint_window(request: Request) -> tuple[int, int] | None:
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


def _describe(model: FileModel, cand: Candidate, others: list[Candidate]) -> dict[str, Any]:
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
    window = _hint_window(request)
    chosen = cands
    if request.occurrence is not None:
        if request.occurrence > len(cands):
            raise MatchError(
                "no_match", f"occurrence {request.occurrence} asked, but old_text matches "
                f"{len(cands)} place(s) ({cands[0].tier})",
                hint=f"use an occurrence between 1 and {len(cands)}",
                details={"candidates": [_describe(model, c, cands) for c in cands]})
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
    described = [_describe(model, c, chosen) for c in listed[:MAX_CANDIDATES_LISTED]]
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
        hint="add a line that appears only at the place you mean (each candidate is listed "
        f"with the nearest line that tells it apart), or pass start_line (e.g. "
        f"start_line={example}) or occurrence",
        details={"tier": chosen[0].tier, "count": len(chosen), "candidates": described})


def _find_scope_line(model: FileModel, scope: str, lo: int, hi: int,
                     request: Request) -> int:
    """The one line in [lo, hi) matching ``scope`` (T1-T5 on whole lines), else refuse."""
    for tier in TIERS:
        if tier == "exact":
            hits = [i for i in range(lo, hi) if model.lines[i] == scope]
        else:
            target = LINE_KEYS[tier](scope)
            normalized = model.normalized(tier)
            hits = [i for i in range(lo, hi) if normalized[i] == target]
        if len(hits) == 1:
            return hits[0]
        if len(hits) > 1:
            raise MatchError(
                "ambiguous_scope", f"{request.label}scope line {scope!r} occurs "
                f"{len(hits)} times (lines {', '.join(str(h + 1) for h in hits[:8])})",
                hint="add an outer scope line (e.g. the enclosing class) or more context",
                details={"scope": scope, "lines": [h + 1 for h in hits]})
    raise MatchError("no_match", f"{request.label}scope line {scope!r} was not found",
                     hint="copy the enclosing line (def/class/function header) exactly",
                     details={"scope": scope})


_CLOSERS = ("}", "};", "},", "end", ")", "]", "});", "fi", "done", "esac")


def _block_end(model: FileModel, line: int, hi: int) -> int:
    """End (exclusive) of the block a scope line opens: the lines indented deeper than it.

    A closing bracket at the scope's own indent belongs to the block. When no deeper line
    follows (a brace on its own line, a one-liner), the next 200 lines are the block.
    """
    base = columns(leading_ws(model.lines[line]))
    deeper_seen = False
    for i in range(line + 1, hi):
        text = model.lines[i]
        if not text.strip():
            continue
        if columns(leading_ws(text)) > base:
            deeper_seen = True
            continue
        if not deeper_seen:
            if text.strip() in ("{", "do", "then", "begin"):
                continue
            return min(line + 200, hi)
        return i + 1 if text.strip() in _CLOSERS else i
    return hi


def scope_window(model: FileModel, request: Request) -> tuple[int, int, int | None]:
    """(lo, hi, last scope line) the request's ``@@`` scope lines narrow the search to."""
    lo, hi, last = 0, len(model.lines), None
    for scope in request.scopes:
        found = _find_scope_line(model, scope, lo, hi, request)
        last = found
        lo, hi = found, _block_end(model, found, hi)
    return lo, hi, last


def verify_anchors(model: FileModel, request: Request) -> list[int]:
    """Check each "LINE:HASH" anchor against the file; return the 0-based anchored lines."""
    from zbtools.core.files.hashing import line_hash

    held = []
    for anchor in request.anchors:
        number, _, expected = anchor.strip().partition(":")
        if not number.isdigit() or not expected or int(number) < 1:
            raise MatchError("invalid_arguments", f"{request.label}anchor {anchor!r} is not "
                             "LINE:HASH", hint="copy it from read_file with hashes: true, e.g. "
                             "12:9f3a1c")
        line = int(number)
        if line > len(model.lines):
            raise MatchError("stale_anchor", f"{request.label}anchor line {line} is past the end "
                             f"of the file ({len(model.lines)} lines)",
                             hint="read the file again (hashes: true) and use a current anchor",
                             details={"anchor": anchor, "total_lines": len(model.lines)})
        current = line_hash(model.lines[line - 1])
        if current != expected.lower()[: len(current)]:
            raise MatchError(
                "stale_anchor", f"{request.label}line {line} changed since it was read (hash "
                f"{expected} -> {current}): it is now {model.lines[line - 1][:SNIPPET_CHARS]!r}",
                hint="read the file again (hashes: true) and redo the edit against its current "
                "content", details={"anchor": anchor, "line": line, "current_hash": current,
                                    "current_text": model.lines[line - 1][:SNIPPET_CHARS]})
        held.append(line - 1)
    return held


def _on_line_bounds(model: FileModel, cand: Candidate) -> bool:
    """Whether an exact match starts at a line start and ends at a line end (a lone CR is
    inside a line, so ``two`` never matches the end of ``one\rtwo``)."""
    assert cand.span is not None
    start, end = cand.span
    view = model.lf_view
    return start == model.line_start(cand.start) and (
        end == len(view) or view[end - 1] == "\n" or view[end] == "\n")


def locate(model: FileModel, request: Request) -> Located:
    """Run the tier ladder for one normalised request."""
    old = request.old
    if request.insert_at is not None or request.insert_after_scope:
        at = request.insert_at
        tier = "line_number"
        if request.insert_after_scope:
            _, _, last = scope_window(model, request)
            assert last is not None
            at, tier = last + 1, "scope"
        assert at is not None
        at = min(max(at, 0), len(model.lines))
        return Located(Candidate(tier, at, at), request)
    window: tuple[int, int] | None = None
    if request.scopes:
        lo, hi, _ = scope_window(model, request)
        window = (lo, hi)
    held = verify_anchors(model, request)
    if old == "":
        raise MatchError("no_match", f"{request.label}old_text is empty",
                         hint="give the exact text to replace; to add text use write_append, "
                         "or include a neighbouring line in old_text and new_text")
    if not old.strip():
        raise MatchError("no_match", f"{request.label}old_text is only whitespace, which "
                         "cannot identify a place", hint="include the neighbouring lines")
    attempts: list[tuple[str, str]] = [(old, "")]
    if "\\" in old:
        unescaped = unescape_once(old)
        if unescaped != old:
            attempts.append((unescaped, "unescape"))
    for text, how in attempts:
        for tier in TIERS:
            cands = find_candidates(model, text, tier, request.whole_lines)
            if request.whole_lines and tier == "exact":
                cands = [c for c in cands if _on_line_bounds(model, c)]
            elif request.starts_line and tier == "exact":
                # A segment after a marker is whole lines of old text: found inside a line
                # (after indentation), it is the indentation tier's, re-indented as such.
                cands = [c for c in cands
                         if c.span is not None and c.span[0] == model.line_start(c.start)]
            if window is not None:
                cands = [c for c in cands if window[0] <= c.start and c.end <= window[1]]
            if held:
                cands = [c for c in cands if all(c.start <= h < max(c.end, c.start + 1)
                                                 for h in held)]
            if request.after_line is not None:
                lo = request.after_line
                cands = [c for c in cands if lo <= c.start <= lo + ELISION_MAX_GAP]
            if not cands:
                continue
            if tier == "trailing_whitespace" and not request.whole_lines:
                cands = _with_cut_rivals(model, text, cands)
            if how:
                request.transforms.append("unescaped")
                request.old = text
                request.new = unescape_once(request.new)
            cand = choose(model, cands, request)
            assert cand is not None
            located = Located(cand, request)
            located.unescaped = bool(how)
            if len(cands) > 1:
                located.disambiguated_by = "occurrence" if request.occurrence else "hint"
            elif request.start_line is not None:
                lo_hi = _hint_window(request)
                if lo_hi and not (cand.last_line >= lo_hi[0] and cand.first_line <= lo_hi[1]):
                    located.warnings.append(
                        f"matched at line {cand.first_line}; the hint said "
                        f"{request.start_line} (the content is unique, so it was applied there)")
            if tier == "exact" and request.after_line is None:
                located.warnings += _near_duplicates(model, text, cand)
            return located
    if request.after_line is None and not held and window is None and \
            not split_markers(request.old)[1]:  # old text with markers is T7's
        # One near miss (a typo in one line, one line missing or one extra) at exactly one
        # place: the edit goes there (where it was already made, the merge changes nothing).
        # "Already applied" is an answer only where no tier would apply old text: a near miss
        # or a similar window that holds new text is merged, and the merge tells whether the
        # edit is made (it changes nothing) or not (it is applied, or refused when the window
        # is a look-alike of old text elsewhere).
        done = already_applied(model, request)
        near = find_near(model, request)
        if near is not None:
            near.applied_at = done
            return near
        similar = find_similar(model, request)
        if similar is not None:
            if done is not None:
                if not overlaps(similar.candidate, done):
                    raise _applied_or_look_alike(model, done, similar)
                similar.applied_at = done
                similar.noop_or_refuse = True
            return similar
        if done is not None:
            return as_already_applied(done, request)
    raise diagnose(model, request)


def _with_cut_rivals(model: FileModel, old: str, cands: list[Candidate]) -> list[Candidate]:
    """The trailing-whitespace tier's windows, and as rivals the places where old text stands
    with its first line read as copied from after the line's indentation (as the exact tier
    finds it inside a line), but for trailing whitespace.

    Without the slip, the exact tier would see both and ask which is meant; with it, the
    whole-line window alone would be edited, perhaps not the place the model copied from.
    """
    pattern = pattern_lines(old)
    if not pattern or not pattern[0].strip() or leading_ws(pattern[0]):
        return cands
    taken = {c.start for c in cands}
    head = pattern[0].rstrip()
    rivals = [Candidate("indentation", c.start, c.end)
              for c in find_lines(model, old, "indentation") if c.start not in taken and
              leading_ws(model.lines[c.start]) and model.lines[c.start].rstrip().endswith(head)
              and all(model.lines[c.start + i].rstrip() == line.rstrip()
                      for i, line in enumerate(pattern[1:], 1))]
    return sorted([*cands, *rivals], key=lambda c: c.start) if rivals else cands


# ---------------------------------------------------------------------------------------------
# T7: elision


def locate_elided(model: FileModel, request: Request) -> list[Located] | None:
    """T7: old text with ``...`` markers, each segment located in order, the gaps kept as is.

    New text must carry the same number of markers, so each old segment pairs with a new one
    (aider's rule). Returns None when old text has no markers; refuses when they do not pair.
    Blank lines just before a marker belong to the segment when old and new text have
    different numbers of them (an edit that adds or removes one there).
    """
    old_segments, old_markers = split_markers(request.old)
    if not old_markers:
        # A bare ``...`` body that looked like code but was not found: a marker after all.
        old_segments, old_markers = split_markers(request.old, code_aware=False)
        if not old_markers:
            return None
    code_aware = len(split_markers(request.old)[1]) == len(old_markers)
    # A "..." body old text has as code is code in new text too, even where a line new text
    # puts before it makes it look like a marker.
    old_lines = request.old.split("\n")
    bare = [(line, ellipsis_is_code(old_lines, i)) for i, line in enumerate(old_lines)
            if line.strip() == "..."]
    code = {line for line, is_code in bare if is_code and code_aware} - {
        line for line, is_code in bare if not is_code}  # (the same text a marker too: no)
    new_segments, new_markers = split_markers(request.new, code=code)
    new_aware = True
    if not code_aware and len(new_markers) < len(old_markers):
        # Old text's "..." lines were markers, not Python's Ellipsis: the same lines in new
        # text are the same markers.
        segments, markers = split_markers(request.new, code_aware=False)
        if markers == old_markers:
            new_segments, new_markers, new_aware = segments, markers, False
    if not new_markers:
        located = _locate_old_only_elision(model, request, code_aware, old_markers)
        if located is not None:
            return [located]
    if len(new_markers) != len(old_markers):
        raise MatchError(
            "no_match", f"{request.label}old_text elides code with {len(old_markers)} marker "
            f"line(s) ({old_markers[0]!r}) but new_text has {len(new_markers)}",
            hint="repeat each marker line of old_text in new_text at the same place, or send the "
            "literal code instead of markers")
    # The same segments as lists of lines: "A" and "A" with a blank line join to one text.
    old_lists = split_marker_lines(request.old, code_aware)[0]
    new_lists = split_marker_lines(request.new, new_aware, code if new_aware else ())[0]
    out: list[Located] = []
    after = 0
    for k, (old_seg, new_seg) in enumerate(zip(old_segments, new_segments, strict=True)):
        if not old_seg.strip():
            if new_seg.strip():
                raise MatchError(
                    "no_match", f"{request.label}new_text adds text next to an elision marker "
                    "with nothing in old_text to place it", hint="put a real line of context "
                    "between the marker and the added text")
            continue
        old_part = old_seg + "\n" if not old_seg.endswith("\n") else old_seg
        new_part = new_seg + "\n" if new_seg and not new_seg.endswith("\n") else new_seg
        if k == len(old_segments) - 1 and new_seg:
            # The last segment ends where old text does: with a line break or without one,
            # which the edit keeps or drops as new text's end says (as an exact match would).
            # (Deleted whole, its lines go with their line breaks, as above.)
            old_part, new_part = old_seg, new_seg
        elif _blank_tail(old_lists[k]) != _blank_tail(new_lists[k]):
            # Blank lines just before a marker that old and new text do not share are part of
            # the edit.
            old_part = "".join(line + "\n" for line in old_lists[k])
            new_part = "".join(line + "\n" for line in new_lists[k])
        part = Request(old_part, new_part, label=f"{request.label}segment {k + 1}: ")
        if out:
            part.after_line = after
        else:
            part.start_line, part.end_line = request.start_line, request.end_line
        part.context_only = old_seg == new_seg
        part.ends_elision = k == len(old_segments) - 1
        part.starts_line = k > 0
        found = locate(model, part)
        found.tier = "elision"
        after = max(found.candidate.end, found.candidate.start + 1)
        out.append(found)
    return out


def _blank_tail(lines: list[str]) -> int:
    """How many blank lines end a segment (its lines) that a marker line follows."""
    count = 0
    while count < len(lines) and not lines[-1 - count].strip():
        count += 1
    return count


def _segment_starts(model: FileModel, seg: list[str]) -> tuple[list[int], str]:
    """Where a segment of old text stands as whole lines: (sorted start lines, tier).

    Exact, else trailing-whitespace (the first tier with hits decides). A segment of blank
    lines only stands at every run of that many blank lines.
    """
    if not any(line.strip() for line in seg):
        blank = [not line.strip() for line in model.all_lines()]
        n = len(seg)
        return [i for i in range(len(blank) - n + 1) if all(blank[i:i + n])], "exact"
    text = "\n".join(seg) + "\n"
    for tier in ("exact", "trailing_whitespace"):
        cands = find_lines(model, text, tier)
        if cands:
            return sorted(c.start for c in cands), tier
    return [], "exact"


def _elided_chains(hits: list[list[int]], sizes: list[int]) -> list[tuple[int, ...]]:
    """Every tight chain of segment starts: each segment the nearest to its neighbours.

    Segment k+1 starts at least one line (the elided ones) and at most ``ELIDED_MAX_GAP``
    lines after segment k ends; in a tight chain it is the first such occurrence after segment
    k, and segment k the last occurrence before it (a marker stands for the fewest lines
    that let old text's segments meet; a longer reading would skip an occurrence of the
    very line that ends or starts the elision).
    """
    import bisect

    chains: list[tuple[int, ...]] = []
    for first in hits[0]:
        chain = [first]
        for k in range(1, len(hits)):
            after = chain[-1] + sizes[k - 1] + 1
            at = bisect.bisect_left(hits[k], after)
            if at == len(hits[k]) or hits[k][at] - (after - 1) > ELIDED_MAX_GAP:
                break
            nxt = hits[k][at]
            # segment k-1's last occurrence that still ends before ``nxt``
            before = bisect.bisect_right(hits[k - 1], nxt - 1 - sizes[k - 1]) - 1
            if hits[k - 1][before] != chain[-1]:
                break
            chain.append(nxt)
        else:
            chains.append(tuple(chain))
    return chains


def _line_similarity(a: str, b: str, cutoff: float = 0.0) -> float | None:
    """Indel similarity of two lines (0 below ``cutoff``), or None when the parts where they
    differ, their common beginning and end set aside, are longer than
    ``NEAR_SIMILAR_MAX_CHARS``: an edit distance costs the product of the two lengths (two
    lines of 1 MB: minutes), and the callers then take the cautious answer."""
    from rapidfuzz.distance import Indel, Postfix, Prefix

    if max(len(a), len(b)) > NEAR_SIMILAR_MAX_CHARS:
        head = Prefix.similarity(a, b)
        tail = Postfix.similarity(a[head:], b[head:])
        if max(len(a), len(b)) - head - tail > NEAR_SIMILAR_MAX_CHARS:
            return None
    return float(Indel.normalized_similarity(a, b, score_cutoff=cutoff))


def _similar(a: str, b: str) -> bool:
    """Whether two line keys look like one line before and after an edit (Indel >= 0.6);
    two long lines too different to compare cheaply are not."""
    return (_line_similarity(a, b, ELIDED_SIMILAR) or 0.0) >= ELIDED_SIMILAR


def _gap_likeness(elided: list[str], new_keys: list[str], segment_keys: set[str]
                  ) -> float | None:
    """How well new text's own lines (not old text's segments) write out an elided gap.

    The mean, over the gap's non-blank lines, of each one's best Indel similarity to a line
    of new text that is not a line of old text's segments: 1.0 for a gap new text repeats,
    about 0.7 for one it edits, near 0 for one it does not mention. None when two long lines
    cannot be compared cheaply (``_line_similarity``): then new text picks no place.
    """
    own = [k for k in set(new_keys) if k and k not in segment_keys]
    lines = [k for k in elided if k]
    if not lines or not own:
        return 0.0
    total = 0.0
    for k in lines:
        scores = [_line_similarity(k, n) for n in own]
        if None in scores:
            return None
        total += max(score or 0.0 for score in scores)
    return total / len(lines)


def _gap_spoken_for(old_keys: list[str], new_keys: list[str], gaps: list[int],
                    elided: list[list[str]]) -> int | None:
    """The first marker whose elided lines new text does not account for, else None.

    Old text ``A ... B`` and new text without the marker can mean "replace A to B, gap
    included" or "keep the gap" (the marker forgotten). New text accounts for a gap when one of
    its own lines (not a line of old text's segments) is an elided line as it is or edited
    (``_similar``): the gap written out; or when the diff of old text's lines to new text's
    changes across the marker (old lines on both sides of it deleted, or rewritten otherwise
    than one line for one similar line): the gap rewritten with them. Otherwise new text has a
    seam where the gap fits, and whether to keep it cannot be told.
    """
    import difflib

    segment_keys = set(old_keys)
    own = [k for k in set(new_keys) if k and k not in segment_keys]
    ops = difflib.SequenceMatcher(None, old_keys, new_keys, autojunk=False).get_opcodes()
    for k, p in enumerate(gaps):
        if any(e in own or any(_similar(e, n) for n in own) for e in elided[k] if e):
            continue
        if not any(tag != "equal" and i1 < p < i2 and (
                tag == "delete" or i2 - i1 != j2 - j1 or not all(
                    _similar(a, b) for a, b in zip(old_keys[i1:i2], new_keys[j1:j2],
                                                   strict=True)))
                for tag, i1, i2, j1, j2 in ops):
            return k
    return None


def _locate_old_only_elision(model: FileModel, request: Request, code_aware: bool,
                             markers: list[str]) -> Located | None:
    """Old text ``A ... B`` whose new text spells the elided lines out: replace A to B.

    Each segment is found as whole lines (``_segment_starts``: exact, else trailing whitespace;
    a blank segment at any blank line), then chained in order, each marker standing for at least
    one and at most ``ELIDED_MAX_GAP`` lines and for the fewest lines that let its neighbours
    meet (``_elided_chains``). One chain is the match (several: the hints decide, else
    ``ambiguous_match``). The span from the first segment's first line to the last one's last
    line is then replaced by new text, exactly as if old text had spelled the elided lines out
    as the file has them (a segment line new text repeats as sent keeps the file's bytes where
    it was found but for trailing whitespace). New text must account for every gap: all elided
    lines written in it, or a change across each marker (``_gap_spoken_for``); else the caller
    meant to keep the gap or not, which cannot be told: refused. A line just outside the span
    that new text repeats (and the span lacks) means the elision reached further: refused.
    Returns None only when old text is not ``A ... B`` at all.
    """
    segments, _ = split_marker_lines(request.old, code_aware)

    def refuse(why: str, details: dict[str, Any] | None = None) -> MatchError:
        return MatchError(
            "no_match", f"{request.label}old_text elides lines with {markers[0]!r} and new_text "
            f"does not repeat the marker, but {why}", hint="send old_text as the file has it "
            "(no markers), or repeat each marker line of old_text in new_text at the same place "
            "to keep the elided lines", details={"markers": markers, **(details or {})})

    if not segments[0] or not segments[-1]:
        raise refuse("old_text must begin and end with real lines around the markers (a "
                     "marker at an end does not say where the span ends)")
    if any(not seg for seg in segments):
        raise refuse("two markers follow each other")
    if all(not line.strip() for seg in segments for line in seg):
        raise refuse("old_text has only blank lines around the markers")
    found = [_segment_starts(model, seg) for seg in segments]
    sizes = [len(seg) for seg in segments]
    for k, (starts, _) in enumerate(found):
        if not starts:
            shown = next((line.strip() for line in segments[k] if line.strip()), "")
            text = "\n".join(segments[k]) + "\n"
            closest = diagnose(model, Request(text, text)).details.get("closest")
            raise refuse(f"its segment {k + 1} ({shown[:SNIPPET_CHARS]!r}) was not found as the "
                         "file has it (segments are matched exactly, but for trailing spaces)",
                         {"segment": k + 1, **({"closest": closest} if closest else {})})
    chains = _elided_chains([starts for starts, _ in found], sizes)
    if not chains:
        first, second = found[0][0][0] + 1, found[1][0][0] + 1
        raise refuse(f"its segments do not follow each other within {ELIDED_MAX_GAP} lines "
                     f"(segment 1 first at line {first}, segment 2 first at line {second})",
                     {"closest": {"start_line": first}})
    spans = {(c[0], c[-1] + sizes[-1]) for c in chains}
    cands = [Candidate("elision", s, e) for s, e in sorted(spans)]
    old_keys = [typography_key(line) for seg in segments for line in seg]
    segment_keys = set(old_keys)
    new_keys = [typography_key(line) for line in pattern_lines(request.new)]

    def gaps_of(chain: tuple[int, ...]) -> list[list[str]]:
        return [list(model.lines[chain[k] + sizes[k]:chain[k + 1]])
                for k in range(len(chain) - 1)]

    by_new_text = False
    if len(cands) > 1 and request.start_line is None and request.end_line is None and \
            request.occurrence is None:
        # Several places: the one whose elided lines new text writes out (as they are or
        # edited), when no other comes close, is the place meant.
        likeness = [(_gap_likeness([typography_key(line) for gap in gaps_of(c)
                                    for line in gap], new_keys, segment_keys), c)
                    for c in chains]
        scored = sorted(((like or 0.0, c) for like, c in likeness), key=lambda sc: -sc[0])
        best, runner_up = scored[0][0], scored[1][0]
        if all(like is not None for like, _ in likeness) and best >= ELIDED_SIMILAR and \
                runner_up <= best - ELIDED_LIKENESS_MARGIN:
            cands = [Candidate("elision", scored[0][1][0], scored[0][1][-1] + sizes[-1])]
            by_new_text = True
    part = Request(request.old, request.new, start_line=request.start_line,
                   end_line=request.end_line, occurrence=request.occurrence,
                   label=request.label)
    chosen = choose(model, cands, part)
    assert chosen is not None
    first_line, after = chosen.start, chosen.end
    chain = next(c for c in chains if c[0] == first_line and c[-1] + sizes[-1] == after)
    tier_used = "trailing_whitespace" if any(t != "exact" for _, t in found) else "exact"
    # What each marker stands for in this file, and the test of what new text means by it.
    elided = gaps_of(chain)
    gaps = list(itertools.accumulate(sizes[:-1]))
    norm = model.normalized("typography")
    for k in range(len(chain) - 1):
        # A segment that stands inside the gap up to indentation or typography: the marker may
        # end (or start) there, so which lines it stands for cannot be told.
        lo, hi = chain[k] + 1, chain[k + 1]
        for j, seg in ((k, segments[k]), (k + 1, segments[k + 1])):
            keys = [typography_key(line) for line in seg]
            if not any(keys):
                continue
            inside = next((i for i in range(lo, hi - len(keys) + 1) if i != chain[j] and
                           norm[i:i + len(keys)] == keys), None)
            if inside is not None:
                raise refuse(
                    f"its segment {j + 1} also stands, up to indentation, at line {inside + 1} "
                    f"inside the elided lines {chain[k] + sizes[k] + 1}-{chain[k + 1]}, so where "
                    "the elision ends cannot be told",
                    {"closest": {"start_line": first_line + 1, "end_line": after}})
    kept = set(new_keys)
    elided_keys = [[typography_key(line) for line in gap] for gap in elided]
    spelled = all(key in kept for gap in elided_keys for key in gap
                  if key and key not in segment_keys)
    if not spelled:
        seam = _gap_spoken_for(old_keys, new_keys, gaps, elided_keys)
        if seam is not None:
            lo = chain[seam] + sizes[seam]
            raise refuse(
                f"new_text does not say what becomes of the elided lines {lo + 1}-"
                f"{chain[seam + 1]} (it neither writes them out nor changes the text around "
                f"the marker): keep them or replace them?",
                {"closest": {"start_line": first_line + 1, "end_line": after}})
    span_keys = {typography_key(line) for line in model.lines[first_line:after]}
    outside = [*range(max(first_line - ELIDED_NEIGHBOURS, 0), first_line),
               *range(after, min(after + ELIDED_NEIGHBOURS, len(model.lines)))]
    for i in outside:
        key = typography_key(model.lines[i])
        if key in kept and key not in span_keys and key not in _TRIVIAL and \
                sum(ch.isalnum() for ch in key) >= 8:
            raise refuse(
                f"new_text has line {i + 1} of the file ({key[:SNIPPET_CHARS]!r}), which is "
                f"outside the span it elides (lines {first_line + 1}-{after}): the elision may "
                "reach further", {"closest": {"start_line": first_line + 1, "end_line": after}})
    # A line of a segment found but for trailing whitespace that new text repeats as sent is
    # a line the caller keeps: it is written as the file has it.
    as_file: dict[str, str | None] = {}
    for k, seg in enumerate(segments):
        for i, line in enumerate(seg):
            found_line = model.lines[chain[k] + i]
            if line != found_line:
                as_file[line] = found_line if as_file.get(line, found_line) == found_line \
                    else None
    new = "\n".join(same if (same := as_file.get(line)) is not None else line
                    for line in request.new.split("\n"))
    spelled_text = "\n".join(model.lines[first_line:after])
    full = Request(spelled_text + ("\n" if request.old.endswith("\n") else ""), new,
                   label=request.label)
    full.transforms = [*request.transforms, "elision_filled_from_file"]
    begin = model.line_start(first_line)
    located = Located(Candidate("elision", first_line, after, (begin, begin + len(full.old))),
                      full)
    if by_new_text:
        located.disambiguated_by = "new_text"
        located.warnings.append(
            f"old_text's segments meet at {len(chains)} places; lines {first_line + 1}-{after} "
            "were chosen because new_text writes out their elided lines and no other place's")
    elif len(cands) > 1:
        located.disambiguated_by = "occurrence" if request.occurrence else "hint"
    located.warnings.append(
        f"old_text elided lines with {markers[0]!r}; lines {first_line + 1}-{after} (from its "
        f"first to its last line, {tier_used}) were replaced by new_text")
    return located


# ---------------------------------------------------------------------------------------------
# Already applied, and look-alikes at a looser tier


def already_applied(model: FileModel, request: Request) -> Candidate | None:
    """The new text is in the file once and the old text is not: nothing left to do.

    A deletion (new text is part of old text) is done where new text stands and the lines it
    deletes, before and after new text, no longer stand next to it, not even with a typo
    (elsewhere in the file such a line proves nothing). Any other edit is done unless a line
    old text has and new text drops stands around new text's lines, but for a typo.
    """
    new = request.new
    if len("".join(new.split())) < ALREADY_APPLIED_MIN_CHARS or not request.old.strip():
        return None  # (old text that names no place is refused, never "done")
    core = new.strip("\n")
    deletion = new.strip() in request.old
    at = request.old.find(core) if deletion else -1
    if deletion and at < 0:
        kept = {typography_key(line) for line in new.split("\n")}
        if not any(key and key not in kept
                   for key in (typography_key(line) for line in request.old.split("\n"))):
            return None
    found = find_exact(model, core, limit=2)
    if len(found) != 1:
        return None
    cand = found[0]
    assert cand.span is not None
    view = model.lf_view
    if (cand.span[0] > 0 and view[cand.span[0] - 1] != "\n") or (
            cand.span[1] < len(view) and view[cand.span[1]] != "\n"):
        return None  # inside a longer line: new text is not what stands there
    norm = model.normalized("typography")
    if at >= 0:
        # The deleted lines are old text's lines before and after new text's (corpus cases
        # P16 already-applied-delete: a deleted "{" also kept elsewhere in new text).
        before = [typography_key(x) for x in request.old[:at].split("\n")[:-1]]
        after = [typography_key(x) for x in request.old[at + len(core):].split("\n")[1:]]
        if not any(before + after):
            return None
        above = next((norm[i] for i in range(cand.start - 1, -1, -1) if norm[i]), "")
        below = next((norm[i] for i in range(cand.end, len(norm)) if norm[i]), "")
        for mine, theirs in ((next((k for k in reversed(before) if k), ""), above),
                             (next((k for k in after if k), ""), below)):
            if mine and theirs and (mine == theirs or _typo_distance(mine, theirs, 3)
                                    is not None):
                return None  # a line the deletion removes still stands there: not done
        # Nor may one stand, as it is (indentation too; trailing whitespace proves nothing),
        # within old text's reach on its side, nor, but for a typo, among the few lines
        # nearest new text.
        reach = request.old.count("\n") + 1
        lines = model.lines
        nigh = ALREADY_APPLIED_TYPO_REACH
        for mine_lines, theirs_lines, nearest in (
                (request.old[:at].split("\n")[:-1], lines[max(cand.start - reach, 0):cand.start],
                 slice(-nigh, None)),
                (request.old[at + len(core):].split("\n")[1:], lines[cand.end:cand.end + reach],
                 slice(0, nigh))):
            if {x.rstrip() for x in mine_lines if x.strip()} & {x.rstrip() for x in theirs_lines}:
                return None
            mine_keys = [typography_key(x) for x in mine_lines][nearest]
            theirs_keys = [typography_key(x) for x in theirs_lines][nearest]
            if any(_typo_distance(k, t, 3) is not None for k in mine_keys if k
                   for t in theirs_keys if t):
                return None
        return cand
    # A line old text has and new text drops that the file still has around there, but for a
    # typo, is an edit not made yet. New text's own lines (the edit's result: a renamed
    # line is a typo's distance from the line it replaces) are not "around there".
    new_keys = {typography_key(line) for line in new.split("\n")}
    gone = [k for k in (typography_key(line) for line in request.old.split("\n"))
            if k and k not in new_keys]
    reach = request.old.count("\n") + 1
    near = [*norm[max(cand.start - reach, 0):cand.start], *norm[cand.end:cand.end + reach]]
    if any(_typo_distance(k, line, 3) is not None for k in gone for line in near):
        return None
    # Right beside new text (the nearest line above and below), a line old text has and new
    # text drops, as it is, is old text's own line still standing: not done (a line too short
    # to tell, such as "}", proves nothing).
    beside = {next((norm[i] for i in range(cand.start - 1, -1, -1) if norm[i]), ""),
              next((norm[i] for i in range(cand.end, len(norm)) if norm[i]), "")}
    if any(k in beside and len("".join(k.split())) >= ALREADY_APPLIED_MIN_CHARS for k in gone):
        return None
    if deletion and any(k in near for k in gone):
        return None  # a line the deletion removes still stands there: not done
    return cand


def insertion_already_applied(model: FileModel, located: Located) -> bool:
    """An insertion edit (new = old + added, or added + old) whose addition is already there."""
    cand = located.candidate
    old, new = located.request.old, located.request.new
    if cand.span is None or not old or len(new) <= len(old):
        return False
    view = model.lf_view
    a, b = cand.span
    if new.startswith(old):
        added = new[len(old):]
        return len(added.strip()) > 0 and view.startswith(added, b)
    if new.endswith(old):
        added = new[: len(new) - len(old)]
        return len(added.strip()) > 0 and view[:a].endswith(added)
    return False


def overlaps(a: Candidate, b: Candidate) -> bool:
    return a.start < max(b.end, b.start + 1) and b.start < max(a.end, a.start + 1)


def _applied_or_look_alike(model: FileModel, done: Candidate, similar: Located) -> MatchError:
    cand = similar.candidate
    return MatchError(
        "ambiguous_match",
        f"{similar.request.label}new_text already stands at lines {done.first_line}-"
        f"{done.last_line}, and old_text resembles lines {cand.first_line}-{cand.last_line} "
        "(not exactly): the edit may be made already, or be meant for those lines",
        hint=f"re-read the file; if the edit is not made yet, resend old_text as lines "
        f"{cand.first_line}-{cand.last_line} have it now",
        details={"candidates": [_describe(model, c, [done, cand]) for c in (done, cand)]})


def as_already_applied(cand: Candidate, request: Request) -> Located:
    """``request`` as a no-op at ``cand``, where its new text already is, with a warning."""
    loc = Located(cand, request)
    loc.already_applied = True
    loc.warnings.append(f"new_text is already present at lines {cand.first_line}-"
                        f"{cand.last_line} and old_text is not: nothing to do")
    return loc


def _near_duplicates(model: FileModel, old: str, cand: Candidate) -> list[str]:
    pattern = [line for line in pattern_lines(old) if line.strip()]
    if len(pattern) < 2 and sum(len(p.strip()) for p in pattern) < INNER_WS_SINGLE_LINE_MIN:
        return []
    if cand.span is not None and (old.startswith("\n") is False and
                                  cand.span[0] != model.line_start(cand.start)):
        return []  # a partial-line match: whole-line look-alikes are not comparable
    others = [c for c in find_lines(model, old, "indentation") if c.start != cand.start]
    if not others:
        return []
    where = ", ".join(f"{c.first_line}-{c.last_line}" for c in others[:3])
    return [f"{len(others)} other block(s) match when indentation is ignored, at lines {where}; "
            f"make sure you meant lines {cand.first_line}-{cand.last_line}"]


# ---------------------------------------------------------------------------------------------
# T8: gated similarity


_TRIVIAL = {"}", "{", "end", "pass", "return", "else:", "try:", "finally:", ")", "]", "};"}


def _informative(keys: list[str], index: Mapping[str, Sequence[int]]) -> list[int]:
    """Up to 3 pattern lines worth anchoring on: rare in the file, >= 8 word characters.

    The 3 with the fewest lines (then the longest, then the first). Lines are counted longest
    first, each only up to the third fewest count so far (``count_at_most``): on a big file
    a common line is not looked for to its last occurrence when it cannot be among them."""
    scored: list[tuple[int, int, int]] = []
    wanted = [i for i, key in enumerate(keys)
              if key not in _TRIVIAL and sum(ch.isalnum() for ch in key) >= 8]
    for i in sorted(wanted, key=lambda i: -len(keys[i])):
        bound = sorted(scored)[2][0] if len(scored) >= 3 else None
        hits = len(index.get(keys[i], ())) if bound is None else \
            count_at_most(index, keys[i], bound)
        if hits and (bound is None or hits <= bound):
            scored.append((hits, -len(keys[i]), i))
    return [i for _, _, i in sorted(scored)[:3]]


def _similarity_windows(index: Mapping[str, Sequence[int]], keys: list[str], anchors: list[int],
                        n: int, line_count: int) -> set[tuple[int, int]] | None:
    """The windows T8 scores: around every occurrence of every anchor line, the window where
    old text would stand with that line in place, shifted by up to 2 lines, of ``n`` lines
    give or take a tenth. None when they are more than ``SIMILARITY_MAX_WINDOWS``: a set cut
    short could leave out the block meant while a look-alike met earlier is scored (and
    edited), or leave out the rival that makes the best ambiguous. So no answer is better
    than a partial one.

    The limit this keeps: a window is scored only where one of the anchors stands as it is
    in old text. A rival that holds none of them exactly (each changed a little) is not
    seen; the margin and the 3-way merge are what stands between it and a wrong edit."""
    spread = max(1, n // 10)
    lengths = range(n - spread, n + spread + 1)
    windows: set[tuple[int, int]] = set()
    for a in anchors:
        if count_at_most(index, keys[a], SIMILARITY_MAX_WINDOWS) > SIMILARITY_MAX_WINDOWS:
            return None
        for pos in index[keys[a]]:
            for start in range(max(pos - a - 2, 0), pos - a + 3):
                windows.update((start, start + length) for length in lengths
                               if start + length <= line_count)
            if len(windows) > SIMILARITY_MAX_WINDOWS:
                return None
    return windows


def find_similar(model: FileModel, request: Request) -> Located | None:
    """The one window that is very similar to old text and clearly better than any other.

    Gates (MATCHING 6.4 T8): >= 3 non-blank lines and >= 40 non-space characters; best score
    >= 0.90; the best non-overlapping runner-up <= best - 0.10 and < 0.85; then the 3-way merge
    must find no conflict (checked when rendering). Returns None when a gate fails.
    """
    pattern = pattern_lines(request.old)
    non_blank = [line for line in pattern if line.strip()]
    if len(non_blank) < SIMILARITY_MIN_LINES or len("".join("".join(non_blank).split())) < \
            SIMILARITY_MIN_CHARS or len(pattern) > SIMILARITY_MAX_OLD_LINES or \
            len(request.old) > SIMILARITY_MAX_OLD_CHARS or \
            len(model.lf_view) > SIMILARITY_MAX_FILE_BYTES:
        return None
    try:
        from rapidfuzz.distance import Levenshtein
    except ImportError:  # pragma: no cover - declared dependency
        return None
    keys = [typography_key(line) for line in pattern]
    index = model.index("typography")
    norm = model.normalized("typography")
    anchors = _informative(keys, index)
    if not anchors:
        return None
    target = "\n".join(keys)
    windows = _similarity_windows(index, keys, anchors, len(pattern), len(norm))
    if windows is None:
        return None
    scored = []
    for start, end in sorted(windows):
        score = Levenshtein.normalized_similarity(target, "\n".join(norm[start:end]),
                                                  score_cutoff=0.8)
        if score:
            scored.append((score, start, end))
    if not scored:
        return None
    scored.sort(key=lambda t: (-t[0], t[1]))
    best, b_start, b_end = scored[0]
    runner_up = next((s for s, st, en in scored[1:] if en <= b_start or st >= b_end), 0.0)
    if best < SIMILARITY_MIN or runner_up > best - SIMILARITY_MARGIN or \
            runner_up >= SIMILARITY_RUNNER_UP_MAX:
        return None
    located = Located(Candidate("similarity", b_start, b_end), request)
    located.warnings.append(
        f"old_text matched lines {b_start + 1}-{b_end} only approximately "
        f"(similarity {best:.2f}); lines you did not change keep the file's text")
    located.similarity = best
    return located


# ---------------------------------------------------------------------------------------------
# Near misses: one typo, one missing line, one extra line


def _typo_distance(a: str, b: str, min_chars: int = NEAR_TYPO_MIN_CHARS) -> int | None:
    """Edits between two line keys when they differ by a typo, else None."""
    from rapidfuzz.distance import Levenshtein

    if not a or not b or min(len(a), len(b)) < min_chars or \
            abs(len(a) - len(b)) > NEAR_TYPO_MAX_EDITS:
        return None
    d = Levenshtein.distance(a, b, score_cutoff=NEAR_TYPO_MAX_EDITS)
    if d > NEAR_TYPO_MAX_EDITS or not _is_typo(a, b):
        return None
    return d


def _close(a: str, b: str) -> bool:
    """Within ``NEAR_RIVAL_EDITS`` character edits: close enough to rival a typo."""
    from rapidfuzz.distance import Levenshtein

    return Levenshtein.distance(a, b, score_cutoff=NEAR_RIVAL_EDITS) <= NEAR_RIVAL_EDITS


def _slip(a: str, b: str) -> int | None:
    """Edits between ``a`` and ``b`` when they could be one slip, else None.

    One slip: within ``NEAR_RIVAL_EDITS`` character edits, all at one place of ``a`` (inside
    one word, or one run of punctuation). A line that differs from old text at two places (a
    typo and a bracket) needs two mistakes to be the line meant: it does not rival a window
    that needs one.
    """
    from rapidfuzz.distance import Levenshtein

    d = Levenshtein.distance(a, b, score_cutoff=NEAR_RIVAL_EDITS)
    if d > NEAR_RIVAL_EDITS:
        return None
    places = {_word_at(a, op.src_pos) for op in Levenshtein.editops(a, b)}
    spans = sorted(places)
    # edits at neighbouring characters (a punctuation run) are one place too
    merged = [spans[0]] if spans else []
    for start, end in spans[1:]:
        if start <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return d if len(merged) <= 1 else None


def _word_at(text: str, pos: int) -> tuple[int, int]:
    """The span of the word (letters, digits, ``_``) at or just before ``pos``."""
    def inside(i: int) -> bool:
        return 0 <= i < len(text) and (text[i].isalnum() or text[i] == "_")

    if not inside(pos) and inside(pos - 1):
        pos -= 1  # an insertion at a word's end
    start = end = pos
    while inside(start - 1):
        start -= 1
    while inside(end):
        end += 1
    return start, end


def _is_typo(a: str, b: str) -> bool:
    """Whether every character edit from ``a`` to ``b`` is a slip inside a word.

    Letters only (or an underscore between two word characters: ``versioneinfo`` for
    ``version_info``), all in one word of at least ``TYPO_MIN_WORD`` characters: a changed
    digit is another value, a changed case another name (``True`` and ``true``), an ``s``
    added or dropped at a word's end another word (``value``, ``values``), a short name
    another name (``a`` and ``b``), and punctuation is syntax; none of those is a typo to look
    past.
    """
    from rapidfuzz.distance import Levenshtein

    ops = Levenshtein.editops(a, b)
    words = {_word_at(a, op.src_pos) for op in ops}
    theirs = {_word_at(b, op.dest_pos) for op in ops}
    if len(words) != 1 or len(theirs) != 1 or max(
            end - start for start, end in (*words, *theirs)) < TYPO_MIN_WORD:
        return False  # edits in two words, or in a short name, are another name, not a slip
    def interior(text: str, pos: int) -> bool:  # between two word characters
        return 0 < pos < len(text) - 1 and text[pos - 1].isalnum() and text[pos + 1].isalnum()

    for op in ops:
        if op.tag == "replace":
            x, y = a[op.src_pos], b[op.dest_pos]
            # an underscore for a letter inside a name is a slip too (versioneinfo)
            if (x == "_" and y.isalpha() and interior(a, op.src_pos)) or \
                    (y == "_" and x.isalpha() and interior(b, op.dest_pos)):
                continue
            if not (x.isalpha() and y.isalpha()) or x.lower() == y.lower():
                return False
        else:
            text, pos = (b, op.dest_pos) if op.tag == "insert" else (a, op.src_pos)
            ch = text[pos]
            if ch == "_" and interior(text, pos):
                continue
            if not ch.isalpha():
                return False
            after = text[pos + 1:pos + 2]
            if ch in "sS" and not (after.isalnum() or after == "_"):
                return False
    return True


def _enough_evidence(keys: list[str], equal: list[int], min_lines: int = NEAR_MIN_EQUAL_LINES,
                     min_chars: int = NEAR_MIN_EQUAL_CHARS) -> bool:
    lines = [keys[i] for i in equal if keys[i]]
    return len(lines) >= min_lines and \
        sum(len(k.replace(" ", "")) for k in lines) >= min_chars


def _one_off_similar(a: str, b: str) -> bool:
    """Whether line ``a`` is at least ``NEAR_ONE_OFF_SIMILAR`` like ``b`` (Indel).

    Two long lines too different to compare cheaply (``_line_similarity``) are compared by
    their characters' counts, which bound the similarity from above: a pair they cannot tell
    apart counts as similar, which only ever makes a window a rival (more refusals, never
    another place)."""
    score = _line_similarity(a, b, NEAR_ONE_OFF_SIMILAR)
    if score is not None:
        return bool(score)
    from collections import Counter

    counts_a, counts_b = Counter(a), Counter(b)
    differ = sum(((counts_a - counts_b) + (counts_b - counts_a)).values())
    return 1 - differ / (len(a) + len(b)) >= NEAR_ONE_OFF_SIMILAR


def _near_windows(keys: list[str], norm: Sequence[str], index: Mapping[str, Sequence[int]],
                  others: dict[tuple[int, int], list[tuple[list[int | None], int | None]]]
                  ) -> dict[tuple[int, int], tuple[list[int | None], int | None]]:
    """Every window that old text's line keys match but for one typo, one line or one extra."""
    n = len(keys)
    total = len(norm)
    starts = _near_starts(keys, index)
    found: dict[tuple[int, int], tuple[list[int | None], int | None]] = {}
    others.clear()
    if starts is None:
        return found  # too many places to look at: none is beyond doubt
    rivals: set[int] = set()  # edits of the windows that differ by one slip, not a typo
    one_off: set[tuple[int, int]] = set()  # windows equal line for line but for one line
    typos: dict[tuple[int, int], int] = {}
    for s in sorted(starts):
        if s < 0:
            continue
        lead = 0
        while lead < n and s + lead < total and keys[lead] == norm[s + lead]:
            lead += 1
        if lead == n:
            # Old text stands here but for whitespace (its indentation did not fit the file's:
            # a first line sent without its own, say): a reading of one slip elsewhere, or of
            # this place with a line dropped or added, is no better than a guess.
            return {}
        # one typo, line for line
        if s + n <= total and lead < n:
            tail = 0
            while tail < n - lead and keys[n - 1 - tail] == norm[s + n - 1 - tail]:
                tail += 1
            if lead + tail == n - 1 and keys[lead] and norm[s + lead] and (
                    _enough_evidence(keys, [i for i in range(n) if i != lead], 1,
                                     NEAR_TYPO_EQUAL_CHARS) or (
                        len(keys[lead].replace(" ", "")) >= NEAR_SINGLE_LINE_MIN_CHARS and
                        any(keys[i] for i in range(n) if i != lead))):
                # (a long typo line with a non-blank line beside it identifies a place too)
                typo = _typo_distance(keys[lead], norm[s + lead])
                if typo is not None or _one_off_similar(keys[lead], norm[s + lead]):
                    one_off.add((s, s + n))
                if typo is not None:
                    found[(s, s + n)] = ([s + i for i in range(n)], None)
                    typos[(s, s + n)] = typo
                else:
                    slip = _slip(keys[lead], norm[s + lead])
                    if slip is not None:  # nearly a typo: a rival unless clearly farther
                        rivals.add(slip)
        # one file line missing from old text (an interior one)
        if s + n + 1 <= total and n >= 2:
            tail = 0
            while tail < n and keys[n - 1 - tail] == norm[s + n - tail]:
                tail += 1
            k = max(1, n - tail)
            if k <= min(lead, n - 1) and _enough_evidence(keys, list(range(n))):
                found.setdefault((s, s + n + 1), (
                    [s + i if i < k else s + i + 1 for i in range(n)], s + k))
                # Lines equal up to indentation around the gap: each could be the missing one.
                others[(s, s + n + 1)] = [
                    ([s + i if i < j else s + i + 1 for i in range(n)], s + j)
                    for j in range(k + 1, min(lead, n - 1) + 1)]
        # one old line the file lacks (an interior one)
        if s + n - 1 <= total and n >= 3:
            tail = 0
            while tail < n - 1 and keys[n - 1 - tail] == norm[s + n - 2 - tail]:
                tail += 1
            k = max(1, n - 1 - tail)
            if k <= min(lead, n - 2) and _enough_evidence(keys, [i for i in range(n) if i != k]):
                found.setdefault((s, s + n - 1), (
                    [s + i if i < k else (None if i == k else s + i - 1) for i in range(n)],
                    None))
    if one_off:
        # A window equal to old text line for line but for one similar line (a typo, a changed
        # case or value) explains
        # old text at least as well as a window elsewhere where a line is missing or extra:
        # those are not beyond doubt (corpus case P19 case-on-edited-line: the line with a
        # changed case stood there, and an extra-line reading elsewhere put the edit at the
        # wrong place). One overlapping the window is the same place read another way.
        found = {w: v for w, v in found.items() if (v[1] is None and None not in v[0]) or
                 all(a < w[1] and w[0] < b for a, b in one_off)}
    if rivals:
        # A window that differs from old text in one line by one slip a little larger than
        # a typo's: the typo windows not clearly closer than it are not beyond doubt.
        nearest = min(rivals)
        found = {w: v for w, v in found.items() if v[1] is not None or None in v[0] or
                 typos[w] + NEAR_RIVAL_MARGIN <= nearest}
    return found


def _near_starts(keys: list[str], index: Mapping[str, Sequence[int]]) -> set[int] | None:
    """The window starts ``_near_windows`` examines, all of them, or None when there are too
    many to look at (then no near miss is accepted: one window found among some could have
    a twin among the others).

    Every window it can accept (or count as a rival) has all of old text's lines where they
    should be but one (a typo line, an extra line), or all of them around one missing file
    line: of any two lines of old text, one stands where it should, one line either side at
    most. So the occurrences of any two non-blank lines, all of them, give every such
    window: lines are looked up longest first (a long line is rarely common; on a 100k-line
    file each lookup is a scan, and a common line's many occurrences cost more), and a line
    on more than ``NEAR_LINE_POSITIONS`` lines, or whose lookup stopped early (a word on too
    many lines: ``LazyPositions``), does not count; a line the file does not have counts,
    with no occurrence. Without two such lines, the two lines with the fewest occurrences
    are taken, counted only up to what ``NEAR_MAX_STARTS`` starts allow (``count_at_most``:
    on a big file a common line is not looked for to its last occurrence), and all their
    occurrences are looked at."""
    starts: set[int] = set()
    complete = 0
    for i in sorted((i for i, key in enumerate(keys) if key), key=lambda i: -len(keys[i])):
        positions = index.get(keys[i], ())
        if not isinstance(positions, (list, tuple)) or len(positions) > NEAR_LINE_POSITIONS:
            continue  # all of them may not be known (a LazyPositions), or too many
        # (an empty tuple: a line the file does not have, which is known all the same)
        for pos in positions:
            starts.update((pos - i - 1, pos - i, pos - i + 1))
        complete += 1
        if complete == 2:
            return starts
    bound = NEAR_MAX_STARTS // 3  # occurrences the two lines may have together
    rarest = sorted((count_at_most(index, key, bound), i) for i, key in enumerate(keys)
                    if key)[:2]
    if len(rarest) < 2 or sum(count for count, _ in rarest) > bound:
        return None
    starts.clear()
    for count, i in rarest:
        for pos in index.get(keys[i], ())[:count]:  # (all of them: at most ``bound``)
            starts.update((pos - i - 1, pos - i, pos - i + 1))
    return starts


def _single_line_typo(key: str, norm: Sequence[str]) -> int | None:
    """The one file line a single old line differs from by a typo, with no rival near it."""
    from rapidfuzz.distance import Levenshtein

    if len(key.replace(" ", "")) < NEAR_SINGLE_LINE_MIN_CHARS:
        return None
    close: list[int] = []
    rivals = 0
    for i, line in enumerate(norm):
        if abs(len(line) - len(key)) > NEAR_SINGLE_LINE_MARGIN:
            continue
        d = Levenshtein.distance(key, line, score_cutoff=NEAR_SINGLE_LINE_MARGIN)
        if d <= NEAR_TYPO_MAX_EDITS and _is_typo(key, line):
            close.append(i)
        elif d <= NEAR_SINGLE_LINE_MARGIN:
            rivals += 1
        if len(close) > 1 or rivals:
            return None
    return close[0] if len(close) == 1 else None


def find_near(model: FileModel, request: Request) -> Located | None:
    """Old text that matches one window but for one near miss a model makes, at one place.

    Line keys as T5 (indentation, inner whitespace and typography ignored). Accepted, each
    only when every other line matches exactly and carries enough text (>= 2 non-blank lines,
    >= 16 characters): one line differing by a typo (<= 2 character edits; here one other
    line of >= 8 characters, or any non-blank one beside a typo line of >= 16, is enough),
    unless a window differing from old text by one slip (``_slip``) is not at least
    ``NEAR_RIVAL_MARGIN`` edits farther; one interior file line missing from old text; one
    interior old line the file lacks. A single-line old text
    (>= 16 characters) is accepted when exactly one file line is within 2 edits of it and no
    other within 4. Several windows: ``ambiguous_match`` (hints decide, as at any tier). Old
    text with elision markers is left to T7. Returns None when nothing qualifies.
    """
    pattern = pattern_lines(request.old)
    if not pattern or len(pattern) > SIMILARITY_MAX_OLD_LINES or \
            len(model.lf_view) > SIMILARITY_MAX_FILE_BYTES or split_markers(request.old)[1]:
        return None
    try:
        import rapidfuzz  # noqa: F401
    except ImportError:  # pragma: no cover - declared dependency
        return None
    keys = [typography_key(line) for line in pattern]
    norm = model.normalized("typography")
    found: dict[tuple[int, int], tuple[list[int | None], int | None]]
    others: dict[tuple[int, int], list[tuple[list[int | None], int | None]]] = {}
    if sum(1 for k in keys if k) == 1:
        # One non-blank line (blank ones around it must be blank in the file too).
        at = next(i for i, k in enumerate(keys) if k)
        line = _single_line_typo(keys[at], norm)
        found = {}
        if line is not None and line - at >= 0 and line - at + len(keys) <= len(norm) and all(
                not norm[line - at + i] for i, k in enumerate(keys) if not k):
            found = {(line - at, line - at + len(keys)): (
                [line - at + i for i in range(len(keys))], None)}
    else:
        found = _near_windows(keys, norm, model.index("typography"), others)
    if not found:
        return None
    cands = [Candidate("near_miss", s, e) for s, e in sorted(found)]
    cand = choose(model, cands, request)
    assert cand is not None
    located = Located(cand, request)
    located.alignment, located.dropped = found[(cand.start, cand.end)]
    located.alternatives = others.get((cand.start, cand.end), [])
    if len(cands) > 1:
        located.disambiguated_by = "occurrence" if request.occurrence else "hint"
    what = ("a line old_text lacks" if located.dropped is not None else
            "a line the file lacks" if None in located.alignment else "a typo in one line")
    located.warnings.append(
        f"old_text matched lines {cand.first_line}-{cand.last_line} but for {what}; lines "
        "you did not change keep the file's text")
    return located

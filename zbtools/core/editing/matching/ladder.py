"""The tier ladder: where an edit's old text is in the file, unique or refused.

``locate`` runs the ladder for one normalised request (docs/internals/matching.md#tiers):
``@@`` scope lines and ``LINE:HASH`` anchors narrow the search, then T1-T5 and T6 (old text
unescaped once), each only when the request allows it (docs/internals/matching.md#limited-tiers);
the first tier with candidates decides (``candidates.choose``), and a hint
never creates a match. When nothing matches and no scope, anchor or elision bound restricts the
search, it tries a near miss, then T8, then "already applied"; a window found while new text
stands carries that place, so "already applied" is never answered while a tier would apply old
text. What is still unmatched is ``diagnostics.diagnose``'s ``no_match``. Failure modes:
``no_match``, ``ambiguous_match``, ``ambiguous_scope``, ``stale_anchor``,
``invalid_arguments`` (a malformed anchor).

Map: ``locate`` (the ladder); ``scope_window``, ``verify_anchors`` (what scopes and anchors
allow); ``overlaps`` (new text apart from a similar window); ``ELISION_MAX_GAP``. Imports the
parts below it (docs/internals/matching.md#parts); ``zbtools.core.files.hashing`` on use.
"""

from __future__ import annotations

from zbtools.core.editing.matching.already import already_applied, as_already_applied
from zbtools.core.editing.matching.candidates import (
    INNER_WS_SINGLE_LINE_MIN,
    Candidate,
    Located,
    choose,
    describe,
    find_candidates,
    find_lines,
    hint_window,
)
from zbtools.core.editing.matching.diagnostics import diagnose
from zbtools.core.editing.matching.errors import SNIPPET_CHARS, MatchError
from zbtools.core.editing.matching.indentation import columns, leading_ws
from zbtools.core.editing.matching.linekeys import LINE_KEYS, TIERS
from zbtools.core.editing.matching.nearmiss import find_near
from zbtools.core.editing.matching.requests import (
    Request,
    pattern_lines,
    split_markers,
    unescape_once,
)
from zbtools.core.editing.matching.similarity import find_similar

TYPE_CHECKING = False
if TYPE_CHECKING:
    from zbtools.core.editing.matching.filemodel import FileModel

ELISION_MAX_GAP = 2000
# The ladder's tiers in order: ``quotes`` (opt-in) right after the exact tier it loosens.
LADDER = (TIERS[0], "quotes", *TIERS[1:])
SUBSTRING_TIERS = ("exact", "quotes")  # tiers that match inside a line, with a span


def _find_scope_line(model: FileModel, scope: str, lo: int, hi: int,
                     request: Request) -> int:
    """The one line in [lo, hi) matching ``scope`` (T1-T5 on whole lines), else refuse."""
    for tier in TIERS:
        if not request.allows(tier):
            continue
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
    if "\\" in old and request.allows("unescape"):
        unescaped = unescape_once(old)
        if unescaped != old:
            attempts.append((unescaped, "unescape"))
    tiers = [tier for tier in LADDER if request.allows(tier)]
    for text, how in attempts:
        for tier in tiers:
            cands = find_candidates(model, text, tier, request.whole_lines)
            if request.whole_lines and tier in SUBSTRING_TIERS:
                cands = [c for c in cands if _on_line_bounds(model, c)]
            elif request.starts_line and tier in SUBSTRING_TIERS:
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
                lo_hi = hint_window(request)
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
        done = already_applied(model, request) if request.allows("already_applied") else None
        near = find_near(model, request) if request.allows("near_miss") else None
        if near is not None:
            near.applied_at = done
            return near
        similar = find_similar(model, request) if request.allows("similarity") else None
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
        details={"candidates": [describe(model, c, [done, cand]) for c in (done, cand)]})


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

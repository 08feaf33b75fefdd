"""T7, elision: old text with ``...`` marker lines standing for lines it leaves out.

When new text repeats the markers, ``locate_elided`` locates each segment in order with the
ladder (each within ``ladder.ELISION_MAX_GAP`` lines of the previous one) and keeps the elided
lines as they are (aider's rule: as many markers in old and new text). When new text accounts
for the elided lines instead, the span from the first segment to the last is replaced: each
segment whole lines, each marker for the fewest lines (up to ``ELIDED_MAX_GAP``) that let its
neighbours meet, refused when that reading is in doubt (docs/internals/matching.md#elision).
A bare ``...`` line that is a Python block's whole body is code, not a marker. Failure modes:
``no_match``, ``ambiguous_match``.

Map: ``locate_elided``. Imports the parts below it, ``ladder`` included
(docs/internals/matching.md#parts); ``apply`` calls it when the ladder finds nothing.
"""

from __future__ import annotations

import itertools

from zbtools.core.editing.matching.candidates import (
    TRIVIAL,
    Candidate,
    Located,
    choose,
    find_lines,
)
from zbtools.core.editing.matching.diagnostics import diagnose
from zbtools.core.editing.matching.errors import SNIPPET_CHARS, MatchError
from zbtools.core.editing.matching.ladder import locate
from zbtools.core.editing.matching.linekeys import typography_key
from zbtools.core.editing.matching.nearmiss import line_similarity
from zbtools.core.editing.matching.requests import (
    Request,
    ellipsis_is_code,
    pattern_lines,
    split_marker_lines,
    split_markers,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from zbtools.core.editing.matching.filemodel import FileModel

ELIDED_MAX_GAP = 100
ELIDED_SIMILAR = 0.6
ELIDED_LIKENESS_MARGIN = 0.25
ELIDED_NEIGHBOURS = 3


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
        part.tiers = request.tiers
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
    _share_tab_reindentation(model, request, out)
    return out


def _share_tab_reindentation(model: FileModel, request: Request, parts: list[Located]) -> None:
    """Old text indented with tabs where the file indents with spaces, one segment re-indented
    for it: a segment found as it is (its old lines carry no indentation to tell) writes its
    new lines' leading tabs in the file's unit too, as the re-indented segments do."""
    if not any(p.candidate.tier == "indentation" for p in parts) or not any(
            line[:1] == "\t" for line in request.old.split("\n")):
        return
    for part in parts:
        if part.candidate.tier != "exact" or part.request.context_only:
            continue
        unit = model.indent_unit_near(part.candidate.start)
        if unit == "\t" or any(model.lines[i][:1] == "\t"
                               for i in range(part.candidate.start, part.candidate.end)):
            continue
        lines = part.request.new.split("\n")
        part.request.new = "\n".join(
            unit * (len(line) - len(line.lstrip("\t"))) + line.lstrip("\t") for line in lines)


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


def _similar(a: str, b: str) -> bool:
    """Whether two line keys look like one line before and after an edit (Indel >= 0.6);
    two long lines too different to compare cheaply are not."""
    return (line_similarity(a, b, ELIDED_SIMILAR) or 0.0) >= ELIDED_SIMILAR


def _gap_likeness(elided: list[str], new_keys: list[str], segment_keys: set[str]
                  ) -> float | None:
    """How well new text's own lines (not old text's segments) write out an elided gap.

    The mean, over the gap's non-blank lines, of each one's best Indel similarity to a line
    of new text that is not a line of old text's segments: 1.0 for a gap new text repeats,
    about 0.7 for one it edits, near 0 for one it does not mention. None when two long lines
    cannot be compared cheaply (``line_similarity``): then new text picks no place.
    """
    own = [k for k in set(new_keys) if k and k not in segment_keys]
    lines = [k for k in elided if k]
    if not lines or not own:
        return 0.0
    total = 0.0
    for k in lines:
        scores = [line_similarity(k, n) for n in own]
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
        if key in kept and key not in span_keys and key not in TRIVIAL and \
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
    new = _with_seam_blank_lines(segments, elided, new)
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


def _with_seam_blank_lines(segments: list[list[str]], elided: list[list[str]], new: str) -> str:
    """New text with the blank lines the file has at an elision's outer seams and old text
    does not show, where new text repeats the segment beside them with just as few.

    Old text's first segment ending in blank lines, followed in the file by more blank lines
    the marker stands for (or the last segment starting with blank lines, after more), is a
    blank line left out of old text; new text that keeps the segment and no more blank lines
    than it shows leaves them out too: it keeps the file's blank lines there, instead of
    deleting the ones it never saw. New text with more blank lines there says how many.
    """
    lines = new.split("\n")
    first, last = segments[0], segments[-1]
    head = _leading_blank(elided[0])
    shown = len(first) - len(first[:_last_text(first) + 1])  # blank lines ending the segment
    if shown and head and [x.rstrip() for x in lines[:len(first)]] == \
            [x.rstrip() for x in first] and _leading_blank(lines[len(first):]) == 0:
        lines[len(first):len(first)] = elided[0][:head]
    tail = _leading_blank(elided[-1][::-1])
    shown = _leading_blank(last)
    ending = len(lines) - (1 if lines and lines[-1] == "" else 0)  # before a final line break
    begin = ending - len(last)
    if shown and tail and begin >= 0 and [x.rstrip() for x in lines[begin:ending]] == \
            [x.rstrip() for x in last] and _leading_blank(lines[:begin][::-1]) == 0:
        lines[begin:begin] = elided[-1][len(elided[-1]) - tail:]
    return "\n".join(lines)


def _last_text(lines: list[str]) -> int:
    """The index of the last line with text (-1: none)."""
    return next((i for i in range(len(lines) - 1, -1, -1) if lines[i].strip()), -1)


def _leading_blank(lines: list[str]) -> int:
    """How many blank lines begin ``lines`` (all of them: none counted, nothing to keep)."""
    count = next((i for i, line in enumerate(lines) if line.strip()), len(lines))
    return 0 if count == len(lines) else count


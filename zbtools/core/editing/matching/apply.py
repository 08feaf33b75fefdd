"""Applying several edits to one file: all located first, then all applied, or none.

``apply_requests(text, requests)`` normalises each request, locates each against the original
text (``ladder.locate``; on a miss T7 ``elision``, then "already applied"), renders them
(``merge.render_edit``), refuses overlapping edits, and returns one ``Splice`` of the original
(docs/internals/matching.md#i3, docs/internals/matching.md#i5). Patches that fail only with
``no_match`` are retried in sequence (docs/internals/matching.md#sequential-patches).
``replace_all`` replaces every occurrence, optionally checking the count. Nothing is written
here (``cycle`` writes). Failure modes: every code of the parts, plus ``no_change``,
``placeholder_in_new`` and ``overlapping_edits``.

Map: ``apply_requests``, ``replace_all``. The top of ``matching``: it may import every part
(docs/internals/matching.md#parts), and only ``__init__`` imports it.
"""

from __future__ import annotations

import itertools

from zbtools.core.editing.matching.already import (
    already_applied,
    as_already_applied,
    insertion_already_applied,
)
from zbtools.core.editing.matching.candidates import Located, find_lines
from zbtools.core.editing.matching.diagnostics import diagnose
from zbtools.core.editing.matching.elision import locate_elided
from zbtools.core.editing.matching.errors import MatchError
from zbtools.core.editing.matching.filemodel import FileModel
from zbtools.core.editing.matching.ladder import locate
from zbtools.core.editing.matching.merge import merge_lines, render_edit
from zbtools.core.editing.matching.requests import Request, has_placeholder, normalize_request
from zbtools.core.editing.matching.result import Applied, Splice

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from zbtools.core.editing.matching.candidates import Candidate
    from zbtools.core.editing.matching.merge import Edit


def apply_requests(text: str, requests: list[Request], cr_ends_lines: bool = False) -> Applied:
    """Locate every request against the original text, refuse overlaps, apply all or nothing.

    ``cr_ends_lines``: a lone CR ends a line, in the file and in the requests (a patch's
    hunks, docs/internals/matching.md#file-model)."""
    model = FileModel(text, cr_ends_lines)
    located: list[Located] = []
    failures: list[tuple[int, MatchError]] = []
    def present(old: str) -> bool:
        return (old.replace("\r", "\n") if cr_ends_lines else old) in model.lf_view

    for i, request in enumerate(requests):
        normalize_request(request, present)
        if cr_ends_lines:  # CRLF is LF already: what CR is left ends a line
            request.old, request.new = request.old.replace("\r", "\n"), \
                request.new.replace("\r", "\n")
        try:
            if request.old == request.new:
                raise MatchError("no_change", f"{request.label}old_text and new_text are "
                                 "identical", hint="nothing to do; send the text you want "
                                 "instead as new_text")
            placeholder = has_placeholder(request.new, request.old)
            if placeholder is not None:
                raise MatchError(
                    "placeholder_in_new", f"{request.label}new_text contains the omission "
                    f"placeholder {placeholder!r}, which is not in old_text",
                    hint="write out the literal code: the edit replaces old_text with exactly "
                    "new_text, so a placeholder would delete code")
            try:
                found = locate(model, request)
            except MatchError as miss:
                if miss.code != "no_match":
                    raise
                segments = locate_elided(model, request) if request.allows("elision") \
                    else None
                if segments is not None:
                    located += segments
                    continue
                done = already_applied(model, request) if \
                    request.allows("already_applied") else None
                if done is None:
                    raise
                located.append(as_already_applied(done, request))
                continue
            if request.allows("already_applied") and insertion_already_applied(model, found):
                raise _insertion_made(found)
            located.append(found)
        except MatchError as err:
            failures.append((i, err))
    if failures:
        combined = _combine_failures(requests, failures, located)
        if len(requests) > 1 and all(err.code == "no_match" for _, err in failures) and \
                all(r.allows("sequential") for r in requests):
            sequential = _apply_sequentially(text, requests, {i for i, _ in failures},
                                             cr_ends_lines)
            if sequential is not None:
                return sequential
        raise combined
    edits: list[Edit] = []
    for k, loc in enumerate(located):
        if loc.already_applied or loc.request.context_only:
            continue
        done = loc.applied_at
        try:
            edit = render_edit(model, loc)
        except MatchError:
            if done is None:
                raise
            # The tolerant tier would not apply old text there (its merge refuses), and new
            # text stands: the edit is made.
            located[k] = as_already_applied(done, loc.request)
            continue
        if done is not None:
            changed = _changed_lines(model, edit)
            if changed is None:  # the merge changes nothing: the edit is made
                located[k] = as_already_applied(done, loc.request)
                continue
            if loc.noop_or_refuse or (changed[0] < done.end and done.start < changed[1]) or \
                    done.start < changed[0] == changed[1] < done.end:
                # It would change the very lines that already read as new text (an edit made
                # once, made again), or old text only resembles the window: refused.
                raise _applied_or_not(loc)
        edits.append(edit)
    ordered = sorted(edits, key=lambda e: (e.start, e.end))
    for prev, nxt in itertools.pairwise(ordered):
        if nxt.start < prev.end or (nxt.start == prev.end and prev.start == prev.end):
            a, b = prev.located.request, nxt.located.request
            raise MatchError(
                "overlapping_edits",
                f"{a.label or 'an edit'} (lines {prev.start + 1}-{prev.end}) overlaps "
                f"{b.label or 'another edit'} (lines {nxt.start + 1}-{nxt.end})",
                hint="merge them into one edit covering both places",
                details={"edits": [{"label": a.label, "start_line": prev.start + 1,
                                    "end_line": prev.end},
                                   {"label": b.label, "start_line": nxt.start + 1,
                                    "end_line": nxt.end}]})
    splice = _splice(model, ordered) if ordered else None
    reports = []
    warnings: list[str] = []
    rendered = {id(edit.located): edit.transforms for edit in edits}  # + "reindented" etc.
    for loc in located:
        cand = loc.candidate
        report: dict[str, Any] = {
            "label": loc.request.label.strip(": ") or None,
            "start_line": cand.first_line, "end_line": cand.last_line,
            "matched_with": "already_applied" if loc.already_applied else (
                "unescape" if loc.unescaped else loc.tier),
            "transforms": list(rendered.get(id(loc), loc.request.transforms)),
            "disambiguated_by": loc.disambiguated_by,
        }
        reports.append(report)
        warnings += [f"{loc.request.label}{w}" for w in loc.warnings]
    if splice is None:
        return Applied(text, reports, False, warnings)
    return Applied(None, reports, splice.changed(), warnings, splice)


def _changed_lines(model: FileModel, edit: Edit) -> tuple[int, int] | None:
    """The file lines [a, b) the edit rewrites (a == b: an insertion there), or None when the
    edit writes the lines the file has."""
    before = [(model.lines[i], model.eols[i]) for i in range(edit.start, edit.end)]
    after = edit.lines
    if before == after:
        return None
    head = 0
    while head < min(len(before), len(after)) and before[head] == after[head]:
        head += 1
    tail = 0
    while tail < min(len(before), len(after)) - head and \
            before[len(before) - 1 - tail] == after[len(after) - 1 - tail]:
        tail += 1
    return edit.start + head, edit.end - tail


def _insertion_made(found: Located) -> MatchError:
    """Old text stands exactly, and what new text adds to it already stands beside it: either
    the edit was made already or a second copy is wanted; which cannot be told, so nothing is
    changed and the caller is told why (never "done" while old text is still there)."""
    cand = found.candidate
    return MatchError(
        "no_change", f"{found.request.label}old_text is at lines {cand.first_line}-"
        f"{cand.last_line}, and what new_text adds to it already stands right beside it: the "
        "edit looks made already, so nothing was changed",
        hint="if the edit is made, nothing to do; to add another copy, include the existing "
        "one in old_text", details={"start_line": cand.first_line, "end_line": cand.last_line})


def _applied_or_not(loc: Located) -> MatchError:
    assert loc.applied_at is not None
    done, cand = loc.applied_at, loc.candidate
    return MatchError(
        "ambiguous_match",
        f"{loc.request.label}new_text already stands at lines {done.first_line}-"
        f"{done.last_line}, and old_text resembles lines {cand.first_line}-{cand.last_line} "
        "(not exactly), where the edit would change the file: it may be made already, or be "
        "meant for those lines",
        hint=f"re-read the file; if the edit is not made yet, resend old_text as lines "
        f"{cand.first_line}-{cand.last_line} have it now",
        details={"candidates": [{"start_line": c.first_line, "end_line": c.last_line}
                                for c in (done, cand)]})


def _apply_sequentially(text: str, requests: list[Request], failed: set[int],
                        cr_ends_lines: bool = False) -> Applied | None:
    """docs/internals/matching.md#sequential-patches: patches written as a sequence (each against
    the previous result).

    Tried only when some patches were not found against the original: each is then applied to
    the text the earlier ones produced, and must still be unique there. Reported loudly.
    """
    current = text
    reports: list[dict[str, Any]] = []
    warnings: list[str] = []
    for i, request in enumerate(requests):
        again = Request(request.old, request.new, start_line=None, end_line=None,
                        occurrence=request.occurrence, label=request.label)
        again.anchors = [] if i in failed else list(request.anchors)
        again.tiers = request.tiers
        try:
            step = apply_requests(current, [again], cr_ends_lines)
        except MatchError:
            return None
        current = step.text
        reports += step.reports
        warnings += step.warnings
    late = ", ".join(f"patches[{i}]" for i in sorted(failed))
    warnings.append(f"{late} matched only after the earlier patches were applied: the patches "
                    "were applied in sequence, each against the result of the previous ones "
                    "(line numbers in the report refer to those intermediate texts)")
    return Applied(current, reports, current != text, warnings)


def _splice(model: FileModel, ordered: list[Edit]) -> Splice:
    """The file's text with each edit's lines in place of its line range, as one change from
    the first edited line to the last: the unedited stretches between edits are slices of the
    text (no per-line work outside the edits), and the bytes before the first edited line and
    after the last one are the original's by construction (docs/internals/matching.md#i3,
    docs/internals/matching.md#i5)."""
    text = model.text
    first, last = ordered[0].start, ordered[-1].end
    pieces: list[str] = []
    cursor = first
    for edit in ordered:
        if edit.start > cursor:
            pieces.append(text[model.text_start(cursor):model.text_start(edit.start)])
        pieces += [line + eol for line, eol in edit.lines]
        cursor = edit.end
    return Splice(text, first, last, model.text_start(first), model.text_start(last),
                  "".join(pieces))


def _combine_failures(requests: list[Request], failures: list[tuple[int, MatchError]],
                      located: list[Located]) -> MatchError:
    if len(requests) == 1:
        return failures[0][1]
    first_index, first = failures[0]
    per_patch: list[dict[str, Any]] = []
    failed = dict(failures)
    ok_iter = iter(located)
    for i in range(len(requests)):
        if i in failed:
            err = failed[i]
            per_patch.append({"index": i, "status": "failed", "code": err.code,
                              "message": err.message, "details": err.details})
        else:
            loc = next(ok_iter)
            per_patch.append({"index": i, "status": "ok", "start_line": loc.candidate.first_line,
                              "end_line": loc.candidate.last_line,
                              "matched_with": loc.candidate.tier})
    # A message already starts with its request's label ("patches[1]: "): not repeated.
    summary = "; ".join(err.message if requests[i].label and err.message.startswith(
        requests[i].label) else f"patches[{i}]: {err.message}" for i, err in failures)
    return MatchError(
        first.code,
        f"no changes written ({len(requests) - len(failures)} of {len(requests)} patches "
        f"located; all-or-nothing): {summary}",
        hint=f"fix only the failed patch(es) ({', '.join(f'patches[{i}]' for i, _ in failures)})"
        f" and resend all {len(requests)}; {first.hint}",
        details={"patches": per_patch, "failed": [i for i, _ in failures],
                 "first_failure": first_index})


def replace_all(text: str, request: Request, expected_count: int | None) -> Applied:
    """Replace every occurrence (exact, else trailing-whitespace tier only)."""
    model = FileModel(text)
    normalize_request(request, lambda old: old in model.lf_view)
    if request.old == request.new:
        raise MatchError("no_change", "old_text and new_text are identical",
                         hint="nothing to do")
    if not request.old:
        raise MatchError("no_match", "old_text is empty", hint="give the text to replace")
    view = model.lf_view
    count = 0
    pieces: list[str] = []
    cursor = 0
    pos = view.find(request.old)
    starts = []
    while pos != -1:
        pieces.append(view[cursor:pos])
        pieces.append(request.new)
        starts.append(pos)
        cursor = pos + len(request.old)
        count += 1
        pos = view.find(request.old, cursor)
    tier = "exact"
    if count == 0:
        cands = find_lines(model, request.old, "trailing_whitespace") if \
            request.allows("trailing_whitespace") else []
        if not cands:
            raise diagnose(model, request)
        tier = "trailing_whitespace"
        return _replace_line_candidates(model, text, request, cands, expected_count)
    if expected_count is not None and count != expected_count:
        raise MatchError("ambiguous_match", f"old_text occurs {count} times, expected "
                         f"{expected_count}", hint="check the count, or make old_text more "
                         "specific", details={"count": count, "expected_count": expected_count,
                                              "lines": [model.line_of(s) + 1 for s in starts]})
    pieces.append(view[cursor:])
    new_view = "".join(pieces)
    new_text = _restore_eols(model, new_view)
    reports = [{"start_line": model.line_of(s) + 1, "end_line": model.line_of(
        s + max(len(request.old) - 1, 0)) + 1, "matched_with": tier} for s in starts]
    return Applied(new_text, reports, new_text != text, [])


def _replace_line_candidates(model: FileModel, text: str, request: Request,
                             cands: list[Candidate], expected_count: int | None) -> Applied:
    if expected_count is not None and len(cands) != expected_count:
        raise MatchError("ambiguous_match", f"old_text occurs {len(cands)} times (ignoring "
                         f"trailing whitespace), expected {expected_count}",
                         hint="check the count", details={"count": len(cands)})
    chosen: list[Candidate] = []
    for cand in cands:
        if not chosen or cand.start >= chosen[-1].end:
            chosen.append(cand)
    requests = []
    edits = []
    for cand in chosen:
        edits.append(render_edit(model, Located(cand, request)))
        requests.append({"start_line": cand.first_line, "end_line": cand.last_line,
                         "matched_with": cand.tier})
    splice = _splice(model, edits)
    return Applied(None, requests, splice.changed(), [], splice)


def _restore_eols(model: FileModel, new_view: str) -> str:
    """Map an edited LF view back to the file's line endings with a line merge."""
    new_model_lines = new_view.split("\n")
    ends_nl = new_view.endswith("\n")
    if ends_nl:
        new_model_lines.pop()
    old_lines = list(model.all_lines())
    out = merge_lines(model, 0, len(model.lines), old_lines, new_model_lines, lambda s: s,
                 ends_nl or not model.lines)
    if not ends_nl and out:
        out[-1] = (out[-1][0], "")
    return "".join(line + eol for line, eol in out)

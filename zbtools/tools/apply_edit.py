"""Replace text in a file: find old_text (tolerantly, never ambiguously), put new_text there.

Give ``old_text`` and ``new_text`` for one edit, or ``patches: [{old_text, new_text, start_line?,
end_line?}]`` for several: they are all located against the original file, overlaps are refused,
and nothing is written unless every one applies. ``old_text`` must identify exactly one place:
copy it from a read (line-number prefixes from ``read_file --format text`` are stripped). When it
matches several places the call is refused and every candidate is listed with a line that tells
it apart; add context, or pass ``start_line``/``end_line`` (a hint that only chooses among equal
candidates) or ``occurrence``. ``tiers`` limits the tolerances below (an exact match is then a plain
replacement). ``replace_all: true`` replaces every exact occurrence
(``expected_count`` refuses when the count differs). ``dry_run: true`` returns the diff without
writing. Pass the ``sha256`` of your last read as ``expected_sha256`` to refuse if the file
changed.

Matching tiers, strictest first, stopping at the first that finds anything: exact,
trailing_whitespace, indentation (new text is re-indented into the file's indentation),
inner_whitespace, typography (curly quotes, dashes, odd spaces), and the same again with one level
of backslash escapes removed (``unescape``); then, at one place only, ``near_miss`` (every line
equal but for one typo inside a word, one line missing or one extra line: kept lines keep the
file's text, a line the file lacks is never written) and ``elision`` (old text ``A`` / ``...`` /
``B`` with the markers repeated in new text, or new text writing out or rewriting the elided
lines: ``A`` and ``B`` must stand in order, each marker for at most 100 lines, and where several
spans fit, new text must pick one clearly or the edit is refused). A bare ``...`` that is a
Python block's whole body is code. Lines you did not change keep the file's exact bytes;
line endings (per line), BOM, encoding and final newline are preserved; replacement text is
literal (``$1``, ``\\1`` are written as they are); an exact match is a plain replacement (a
single line sent without its indentation is re-indented only when its replacement would
otherwise be garbled, and is then reported as ``indentation``). An edit that is already
applied (new_text present, old_text found by no tier that would apply it) succeeds with
``changed: false``. The result reports ``matched_with``,
the line range, transformations and warnings, and a unified diff.

Failure modes: ``no_match`` (with the closest candidate, the first differing line, a bounded diff
with visible whitespace and a specific diagnosis), ``ambiguous_match`` (every candidate listed),
``overlapping_edits``, ``no_change`` (old_text equals new_text, or what new_text adds already
follows an old_text that still stands), ``placeholder_in_new`` (new_text
contains ``// ... rest of code`` or similar that old_text lacks), ``encoding_error``,
``stale_file``, ``stale_anchor`` (an ``anchor``/``end_anchor`` "LINE:HASH" from ``read_file``
with ``hashes: true`` no longer matches that line), ``binary_file``, ``not_found``,
``invalid_arguments`` (both or neither of old_text and patches).
"""

from __future__ import annotations

from zbtools.contract import ToolError
from zbtools.core.call.args import Struct, field
from zbtools.core.editing.cycle import edit_file_text
from zbtools.toolkit.edits import EditResult, render
from zbtools.toolkit.params import NEW_ALIASES, OLD_ALIASES, PATH_ALIASES, CheckSyntax
from zbtools.toolspec import ToolSpec

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any, Literal

    from zbtools.core.call.context import Context
    from zbtools.core.editing.matching import Applied


class Placement(Struct):
    """Where one edit may match: hints that choose among equal candidates, hash anchors."""

    start_line: int | None = field(default=None, minimum=1,
                                   help="Hint: the line where old_text starts")
    end_line: int | None = field(default=None, minimum=1,
                                 help="Hint: the line where old_text ends")
    occurrence: int | None = field(default=None, minimum=1,
                                   help="Pick the n-th of several equal candidates")
    anchor: str | None = field(default=None, help="LINE:HASH from read_file hashes: the match "
                               "must include that line, unchanged")
    end_anchor: str | None = field(default=None,
                                   help="LINE:HASH of the last line of the edited range")


class Patch(Placement):
    old_text: str = field(text_body=True,
                          aliases=OLD_ALIASES, help="Text to find (must identify one place)")
    new_text: str = field(text_body=True, aliases=NEW_ALIASES, help="Replacement text")


class Params(Placement, CheckSyntax):
    path: str | None = field(default=None, aliases=PATH_ALIASES,
                             help="File to edit (optional with a patch that names its files)")
    old_text: str | None = field(text_body=True, default=None, aliases=OLD_ALIASES,
                                 help="Text to find (must identify one place)")
    new_text: str | None = field(text_body=True,
                                 default=None, aliases=NEW_ALIASES, help="Replacement text")
    patches: list[Patch] | None = field(default=None, aliases=("edits",),
                                        help="Several edits, applied all or nothing")
    replace_all: bool = field(default=False, help="Replace every exact occurrence")
    expected_count: int | None = field(default=None, minimum=0,
                                       help="With replace_all: refuse unless exactly this many")
    patch: str | None = field(text_body=True, default=None, aliases=("diff", "input"),
                              help="A unified diff or a Codex *** Begin Patch envelope")
    dry_run: bool = field(default=False, help="Report the diff without writing")
    expected_sha256: str | None = field(
        default=None, help="Refuse with stale_file unless the file's current sha256 is this")
    tiers: list[Literal["exact", "quotes", "trailing_whitespace", "indentation",
                        "inner_whitespace", "typography", "unescape", "elision", "near_miss",
                        "similarity", "already_applied", "line_numbers", "sequential"]] | None = \
        field(default=None, help="Only these matching tolerances (exact is always on; default: "
              "every one but quotes); e.g. [\"exact\"] for a plain exact replacement")


def _limit(requests: list[Any], tiers: Sequence[str] | None) -> list[Any]:
    """The tiers a caller (a dialect's exact tool: docs/dialects.md#tiers) allows."""
    if tiers is not None:
        for request in requests:
            request.tiers = frozenset(["exact", *tiers])
    return requests


def _requests(params: Params) -> list[Any]:
    from zbtools.core.editing.matching import Request

    single = params.old_text is not None or params.new_text is not None
    if single and params.patches is not None:
        raise ToolError("invalid_arguments", "give either old_text/new_text or patches, not both",
                        hint="put every edit in patches, or send one edit")
    if params.patches is not None:
        if not params.patches:
            raise ToolError("invalid_arguments", "patches is empty",
                            hint="give at least one {old_text, new_text}")
        return [_anchored(Request(p.old_text, p.new_text, start_line=p.start_line,
                                  end_line=p.end_line, occurrence=p.occurrence,
                                  label=f"patches[{i}]: "), p.anchor, p.end_anchor)
                for i, p in enumerate(params.patches)]
    if params.old_text is None or params.new_text is None:
        missing = "old_text" if params.old_text is None else "new_text"
        raise ToolError("invalid_arguments", f"missing {missing}",
                        hint="give old_text and new_text, or patches",
                        details={"problems": [{"problem": "missing_argument",
                                               "argument": missing,
                                               "message": f"missing {missing}"}]})
    return [_anchored(Request(params.old_text, params.new_text, start_line=params.start_line,
                              end_line=params.end_line, occurrence=params.occurrence),
                      params.anchor, params.end_anchor)]


def _anchored(request: Any, anchor: str | None, end_anchor: str | None) -> Any:
    request.anchors = [a for a in (anchor, end_anchor) if a]
    return request


def _run_patch(params: Params, ctx: Context) -> EditResult:
    from zbtools.core.editing.patchcycle import apply_patch_text
    from zbtools.core.files.hashing import sha256_hex

    if params.old_text is not None or params.new_text is not None or params.patches:
        raise ToolError("invalid_arguments", "give either patch or old_text/new_text/patches",
                        hint="one kind of edit per call")
    if params.replace_all or params.expected_sha256 is not None:
        raise ToolError("invalid_arguments", "replace_all and expected_sha256 do not apply to a "
                        "patch", hint="drop them; a patch's context lines guard it")
    assert params.patch is not None
    outcome = apply_patch_text(ctx, params.patch, params.path, dry_run=params.dry_run,
                               tiers=params.tiers)
    edits: list[dict[str, Any]] = []
    for change in outcome.changes:
        edits += [{"file": change.rel, **report} for report in change.reports]
    first = outcome.changes[0]
    first_edit: dict[str, Any] = edits[0] if edits else {
        "start_line": 0, "end_line": 0, "matched_with": first.action}
    tiers = {e["matched_with"] for e in edits} or {first.action}
    changed = any(c.action != "updated" or c.after != c.before for c in outcome.changes)
    return EditResult(
        path=first.rel, changed=changed,
        matched_with=first_edit["matched_with"] if len(tiers) == 1 else "mixed",
        start_line=first_edit["start_line"], end_line=first_edit["end_line"], edits=edits,
        replacements=len(edits), diff="".join(c.diff for c in outcome.changes),
        sha256=sha256_hex(first.after) if first.after is not None else "",
        dry_run=params.dry_run, files=[c.summary() for c in outcome.changes])


def run(params: Params, ctx: Context) -> EditResult:
    from zbtools.core.editing import matching

    if params.patch is not None:
        return _run_patch(params, ctx)
    if params.path is None:
        raise ToolError("invalid_arguments", "missing path",
                        hint="give the file to edit as path",
                        details={"problems": [{"problem": "missing_argument", "argument": "path",
                                               "message": "missing path"}]})
    requests = _limit(_requests(params), params.tiers)
    if params.replace_all and len(requests) != 1:
        raise ToolError("invalid_arguments", "replace_all works with one old_text/new_text",
                        hint="send one edit with replace_all, or several patches without it")

    def compute(text: str) -> Applied:
        if params.replace_all:
            return matching.replace_all(text, requests[0], params.expected_count)
        return matching.apply_requests(text, requests)

    plain = len(requests) == 1 and not params.replace_all and params.start_line is None and \
        params.end_line is None and params.occurrence is None and not requests[0].anchors
    outcome = edit_file_text(ctx, params.path, compute, [r.new for r in requests],
                             expected_sha256=params.expected_sha256, dry_run=params.dry_run,
                             simple=(requests[0].old, requests[0].new) if plain else None)
    for warning in outcome.applied.warnings:
        ctx.warn(warning)
    reports = outcome.applied.reports
    first: dict[str, Any] = reports[0] if reports else {
        "start_line": 0, "end_line": 0, "matched_with": "none"}
    tiers = {r["matched_with"] for r in reports}
    return EditResult(
        path=outcome.path, changed=outcome.changed,
        matched_with=first["matched_with"] if len(tiers) == 1 else "mixed",
        start_line=first["start_line"], end_line=first["end_line"], edits=reports,
        replacements=len(reports), diff=outcome.diff, sha256=outcome.sha256,
        dry_run=params.dry_run,
        files=[{"path": outcome.path, "action": "updated", "edits": len(reports)}],
    )


TOOL = ToolSpec(
    name="apply_edit",
    aliases=("apply_patch",),
    doc=__doc__,
    params=Params,
    result=EditResult,
    run=run,
    operand="path",
    render_text=render,
    destructive=True,
    category="edit",
)

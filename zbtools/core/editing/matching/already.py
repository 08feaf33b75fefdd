"""Already applied: new text stands in the file and old text's own lines do not.

``already_applied`` answers whether an edit whose old text is not found was made already: new
text stands once, as whole lines, and no line the edit drops stands beside it, not even with a
typo. The ladder asks it last (docs/internals/matching.md#tiers), so it is never the answer
while a tier would apply old text. ``insertion_already_applied`` asks the same of an insertion
found at T1. New text needs ``ALREADY_APPLIED_MIN_CHARS`` non-space characters; a deletion's
dropped lines are looked for within ``ALREADY_APPLIED_TYPO_REACH`` lines. Nothing is refused.

Map: ``already_applied``, ``insertion_already_applied``, ``as_already_applied`` (the no-op and
its warning). Imports ``filemodel``, ``linekeys``, ``requests``, ``candidates`` and
``nearmiss``.
"""

from __future__ import annotations

from zbtools.core.editing.matching.candidates import Candidate, Located, find_exact
from zbtools.core.editing.matching.linekeys import typography_key
from zbtools.core.editing.matching.nearmiss import typo_distance
from zbtools.core.editing.matching.requests import Request

TYPE_CHECKING = False
if TYPE_CHECKING:
    from zbtools.core.editing.matching.filemodel import FileModel

ALREADY_APPLIED_MIN_CHARS = 8
ALREADY_APPLIED_TYPO_REACH = 8  # lines each side of new text compared but for a typo


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
            if mine and theirs and (mine == theirs or typo_distance(mine, theirs, 3)
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
            if any(typo_distance(k, t, 3) is not None for k in mine_keys if k
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
    if any(typo_distance(k, line, 3) is not None for k in gone for line in near):
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


def as_already_applied(cand: Candidate, request: Request) -> Located:
    """``request`` as a no-op at ``cand``, where its new text already is, with a warning."""
    loc = Located(cand, request)
    loc.already_applied = True
    loc.warnings.append(f"new_text is already present at lines {cand.first_line}-"
                        f"{cand.last_line} and old_text is not: nothing to do")
    return loc

"""Rendering a located edit into replacement lines: the merge.

``render_edit(model, located)`` turns a ``candidates.Located`` into an ``Edit`` (replace file
lines [start, end) with these lines and endings) by a line merge of old -> new onto the matched
region (``merge_lines``): unchanged lines keep the file's bytes and endings, new lines take the
region's ending (docs/internals/matching.md#i3); T3-T6, near misses and T8 re-indent new text
into the file's indentation (``reindent``); T5 writes the file's own quotes and dashes back
(docs/internals/matching.md#typography-merge); near misses and T8 merge three ways
(``threeway``). Pure insertions keep the file's final-newline state. The whole-line tiers map
old line i to file line start + i; only T8 aligns a region that may differ. Failure mode:
``edit_conflict`` (from ``threeway``).

Map: ``Edit``, ``merge_lines``, ``render_edit``. Imports the parts below it
(docs/internals/matching.md#parts); ``difflib`` on use, by T5's character merge.
"""

from __future__ import annotations

from zbtools.core.editing.matching.candidates import Candidate
from zbtools.core.editing.matching.diff import line_opcodes
from zbtools.core.editing.matching.indentation import columns, leading_ws
from zbtools.core.editing.matching.linekeys import TYPOGRAPHY
from zbtools.core.editing.matching.reindent import (
    later_lines_in_file_columns,
    region_eol,
    reindenter,
    uncut,
)
from zbtools.core.editing.matching.requests import pattern_lines
from zbtools.core.editing.matching.threeway import merge_near_readings, merge_similar

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from zbtools.core.editing.matching.candidates import Located
    from zbtools.core.editing.matching.filemodel import FileModel


class Edit:
    """A located request turned into: replace file lines [start, end) with ``lines``."""

    def __init__(self, located: Located, start: int, end: int, lines: list[tuple[str, str]],
                 transforms: list[str]) -> None:
        self.located = located
        self.start = start
        self.end = end
        self.lines = lines  # (text, eol)
        self.transforms = transforms


def merge_lines(model: FileModel, start: int, end: int, old_lines: list[str],
                new_lines: list[str], render_new: Callable[[str], str], ends_with_newline: bool,
                line_merge: Callable[[str, str, str], str] | None = None,
                ) -> list[tuple[str, str]]:
    """3-way line merge: old->new changes applied onto file lines [start, end).

    Old line i corresponds to file line start+i (the line tiers are 1:1). Lines the request
    left unchanged are emitted with the file's bytes and ending. ``line_merge(old, file, new)``,
    when given, renders a line rewritten one-for-one (the typography tier's character merge).
    """
    eol = region_eol(model, start, end)
    out: list[tuple[str, str]] = []
    for op, i1, i2, j1, j2 in line_opcodes(old_lines, new_lines):
        if op == "equal":
            out += [(model.lines[start + i], model.eols[start + i]) for i in range(i1, i2)]
        elif op == "replace" and i2 - i1 == j2 - j1:
            # Line for line: each rewritten line keeps its own ending (mixed-EOL files).
            out += [(line_merge(old_lines[i1 + k], model.lines[start + i1 + k],
                                new_lines[j1 + k]) if line_merge else
                     render_new(new_lines[j1 + k]), model.eols[start + i1 + k] or eol)
                    for k in range(i2 - i1)]
        else:
            out += [(render_new(line), eol) for line in new_lines[j1:j2]]
    for k in range(len(out) - 1):
        if out[k][1] == "":  # the file's last line, no longer last: it needs an ending now
            out[k] = (out[k][0], eol)
    if out:
        # The last output line ends the way the edit says: without a newline it joins the
        # next line (or ends the file without one); with one it keeps the file's ending.
        last_eol = model.eols[end - 1] if end > start else ""
        text, current = out[-1]
        if not ends_with_newline:
            out[-1] = (text, "")
        elif current == "":
            out[-1] = (text, last_eol or eol)
    return out


def render_edit(model: FileModel, located: Located) -> Edit:
    edit = _render(model, located)
    if located.request.ends_elision and not edit.lines and edit.end == len(model.lines) and \
            edit.start > 0 and model.eols[-1] == "":
        # An elision's last segment deleted whole at the end of a file without a final line
        # break: the line before it becomes the last one, and ends as the file did (exactly
        # as the elided lines spelled out in old text would have been replaced).
        return Edit(located, edit.start - 1, edit.end, [(model.lines[edit.start - 1], "")],
                    edit.transforms)
    return edit


def _render(model: FileModel, located: Located) -> Edit:
    cand = located.candidate
    request = located.request
    transforms = list(request.transforms)
    if cand.tier in ("line_number", "scope"):  # a pure insertion before line cand.start
        new_lines = pattern_lines(request.new)
        eol = model.majority_eol
        at = cand.start
        if at == len(model.lines) and model.lines and model.eols[-1] == "":
            # Appending to a file without a final newline: end the old last line, and keep
            # the file's "no final newline" state on the new last line.
            out = [(model.lines[-1], eol)] + [(line, eol) for line in new_lines]
            out[-1] = (out[-1][0], "")
            return Edit(located, at - 1, at, out, transforms)
        return Edit(located, at, at, [(line, eol) for line in new_lines], transforms)
    if cand.tier == "exact" and not request.limited and \
            _whole_line_drift(model, cand, request.old, request.new):
        # Reported as what it is: the indentation tier's reading, not the exact tier's.
        cand = located.candidate = Candidate("indentation", cand.start, cand.end)
        located.tier = cand.tier
    if cand.span is not None:  # exact: replace characters inside the affected lines
        first = cand.start
        last = cand.end
        line_start = model.line_start(first)
        region_view = model.lf_view[line_start:model.line_start(last)]
        a, b = cand.span[0] - line_start, cand.span[1] - line_start
        new_text = _quote_merge(request.old, region_view[a:b], request.new) \
            if cand.tier == "quotes" else request.new
        new_region = region_view[:a] + new_text + region_view[b:]
        old_lines = region_view.split("\n")
        new_lines = new_region.split("\n")
        ends_nl = new_region.endswith("\n") or (new_region == "" and region_view.endswith("\n"))
        if region_view.endswith("\n"):
            old_lines.pop()
        if new_region.endswith("\n"):
            new_lines.pop()
        if new_region == "":
            new_lines = []
        out = merge_lines(model, first, last, old_lines, new_lines, lambda s: s, ends_nl)
        return Edit(located, first, last, out, transforms)
    if cand.tier == "similarity":
        return Edit(located, cand.start, cand.end, merge_similar(model, located), transforms)
    if cand.tier == "near_miss":
        lines, end = merge_near_readings(model, located)
        return Edit(located, cand.start, end, lines, transforms)
    old_lines = sent = pattern_lines(request.old)
    new_lines = pattern_lines(request.new) if request.new else []
    if not request.new and not request.old.endswith("\n"):
        # Deleted without its last line break: the line break stays, on an empty line, as the
        # exact tier's plain replacement leaves it.
        new_lines = [""]
    end = cand.end
    if request.new and request.old.endswith("\n") != request.new.endswith("\n"):
        # Old and new text end differently: the edit removes (or adds) the line break after
        # its last line, exactly as the exact tier would.
        if request.old.endswith("\n") and end < len(model.lines):
            old_lines = [*old_lines, model.lines[end]]
            new_lines = [*new_lines[:-1], new_lines[-1] + model.lines[end]]
            end += 1
        elif request.new.endswith("\n"):
            new_lines = [*new_lines, ""]
    render: Callable[[str], str]
    if cand.tier == "trailing_whitespace":
        render = str
    else:
        old_lines, new_lines = uncut(model, cand.start, old_lines, new_lines, [
            cand.start + i if cand.start + i < len(model.lines) else None
            for i in range(len(old_lines))])
        sent = old_lines[:len(sent)]
        render = reindenter(model, cand.start, sent, new_lines=new_lines)
        if render(sent[0] if sent else "") != (sent[0] if sent else ""):
            transforms.append("reindented")
            if located.tier != "elision" and \
                    later_lines_in_file_columns(model, cand.start, sent, new_lines):
                # One line sent less indented whose new text goes on in the file's own
                # columns: only the first line moves (the exact tier reads it the same way).
                # (An elision's segment is part of old text of several lines, in its own
                # columns.)
                # Old text's line moves with it, so a new line that repeats it is the file's.
                old_lines = [render(old_lines[0]), *old_lines[1:]]
                new_lines = [render(new_lines[0]), *new_lines[1:]]
                render = str
    line_merge = None
    if cand.tier == "typography":
        swaps = _typographic_swaps(sent, model.lines[cand.start:cand.end])
        table = str.maketrans(swaps)
        indent_render = render
        if swaps:
            def render(line: str) -> str:
                return indent_render(line.translate(table))

            transforms.append("typography_restored")

        def line_merge(old: str, found: str, new: str) -> str:
            return _typography_merge(old, found, indent_render(new), table)

    # Whole-line tiers keep the region's final-newline state.
    out = merge_lines(model, cand.start, end, old_lines, new_lines, render,
                      model.eols[end - 1] != "", line_merge)
    return Edit(located, cand.start, end, out, transforms)


def _whole_line_drift(model: FileModel, cand: Candidate, old: str, new: str) -> bool:
    """A one-line old text found by the exact tier after only indentation, to its line's end,
    whose plain replacement would leave new text at odds with that indentation.

    The exact tier's answer is the plain string replacement. Two shapes of edit are read as a
    whole line sent less indented instead (the indentation tier, reported as such) because the
    replacement would be garbled otherwise, unambiguously: old text takes its line break and
    new text is blank (the line's indentation would be glued to the next line), or a later
    line of new text stands shallower than the file's line and no deeper than old text's
    (new text is written in old text's columns, not the file's). New text whose later lines
    all stand deeper than old text's is written in the file's own columns: spliced as sent.
    """
    assert cand.span is not None
    line_start = model.line_start(cand.start)
    prefix = model.lf_view[line_start:cand.span[0]]
    body = old.removesuffix("\n")
    if not prefix or prefix.strip(" \t") or "\n" in body or cand.end - cand.start != 1:
        return False
    if cand.span[1] != line_start + len(model.lines[cand.start]) + old.endswith("\n"):
        return False  # the match stops inside its line
    if old.endswith("\n") and not new.strip():
        return True
    depth = columns(leading_ws(model.lines[cand.start]))
    sent = columns(leading_ws(body))
    later = [line for line in new.split("\n")[1:] if line.strip()]
    # Shallower than the file's line and no deeper than old text's own: in old text's columns
    # (a line between the two may be a dedent to an enclosing level in the file's columns,
    # which the plain replacement writes as sent).
    return any(columns(leading_ws(line)) < depth and columns(leading_ws(line)) <= sent
               for line in later)


QUOTE_MERGE_MAX_CHARS = 8_000


def _quote_merge(old: str, found: str, new: str) -> str:
    """The ``quotes`` tier's new text: old -> new changes replayed onto the file's text, so
    its curly quotes survive where the caller left the text alone (``found`` is old text as
    the file spells it, one character for one)."""
    if len(old) + len(new) > QUOTE_MERGE_MAX_CHARS:  # a character diff grows as their product
        return new
    import difflib

    out = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new,
                                                      autojunk=False).get_opcodes():
        out.append(found[i1:i2] if op == "equal" else new[j1:j2])
    return "".join(out)


def _typography_merge(old: str, found: str, new: str, table: dict[int, str]) -> str:
    """docs/internals/matching.md#typography-merge: apply old->new character changes onto the file's
    line, so the file's own quotes and dashes survive in the parts of a changed line that were not
    edited."""
    import difflib

    o, f = old.strip(" \t"), found.strip(" \t")
    if len(o) != len(f) or any(a != b and a.translate(TYPOGRAPHY) != b.translate(TYPOGRAPHY)
                               for a, b in zip(o, f, strict=True)):
        return new.translate(table)
    indent = leading_ws(new)
    content = new[len(indent):]
    out = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, o, content,
                                                      autojunk=False).get_opcodes():
        out.append(f[i1:i2] if op == "equal" else content[j1:j2].translate(table))
    return indent + "".join(out)


def _typographic_swaps(old_lines: list[str], file_lines: Sequence[str]) -> dict[str, str]:
    """Characters the request spelled typographically differently from the file.

    Where the request wrote curly quotes (or dashes, odd spaces) for the file's straight ones,
    the same characters in its new text are written the file's way; only one-to-one swaps
    seen consistently in the matched lines are used, so nothing is guessed.
    """
    swaps: dict[str, str] = {}
    for old, found in zip(old_lines, file_lines, strict=False):
        a, b = old.strip(" \t"), found.strip(" \t")
        if len(a) != len(b):
            continue
        for x, y in zip(a, b, strict=True):
            if x == y:
                continue
            if x.translate(TYPOGRAPHY) != y.translate(TYPOGRAPHY) or \
                    swaps.get(x, y) != y:
                return {}
            if x.translate(TYPOGRAPHY) != x:  # only undo the request's typographic characters
                swaps[x] = y
    return swaps

"""Rendering a located edit into replacement lines: the merge.

``render_edit(model, located)`` turns a ``candidates.Located`` into an ``Edit``: replace file lines
[start, end) with these (text, line ending) pairs. It is a line merge of old -> new onto the
matched region (``merge_lines``): lines the caller left unchanged keep the file's exact bytes
and endings; new lines take the region's line ending (the file's majority where the region is
mixed); T1 replaces characters inside the affected lines; T3-T6 and T8 re-indent new lines from
old text's indentation into the file's (a uniform shift, or a change of unit level by level,
tabs and spaces never mixed in one indent; near misses and T8 measure it on the lines old text
and the file share, and read a first line sent without its indentation, its other lines with
theirs, at the indentation that fits them: ``_uncut``); T5 writes the file's own curly quotes
and dashes back into the parts of a changed line that were not edited; T8 is a 3-way merge that
refuses (``edit_conflict``) when a line the caller changes differs from the file, and writes
once a line the file has, old text lacks and new text adds next to the change (both sides made
the same insertion). Pure
insertions (a line number, or right after a scope line) keep the file's final-newline state.

Limits: the whole-line tiers map old line i to file line start + i (they match 1:1); only T8
aligns old text with a region that may differ from it. A region's final-newline state follows
the edit: old text without a trailing newline joins the next line. Failure mode:
``edit_conflict`` (T8 only).

Imports ``errors``, ``filemodel``, ``requests``, ``diff`` (``line_opcodes``) and ``candidates``
(``Located`` for types only); ``apply`` builds on it. ``difflib`` is imported on use, by T5's
character merge and T8's alignment only.
"""

from __future__ import annotations

from zbtools.core.editing.matching.candidates import Candidate
from zbtools.core.editing.matching.diff import line_opcodes
from zbtools.core.editing.matching.errors import SNIPPET_CHARS, MatchError
from zbtools.core.editing.matching.filemodel import (
    LINE_KEYS,
    TAB_COLUMNS,
    TYPOGRAPHY,
    columns,
    infer_indent_unit,
    leading_ws,
    relative_depths,
    relative_unit,
    same_structure,
    unit_columns,
)
from zbtools.core.editing.matching.requests import pattern_lines

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


def _region_eol(model: FileModel, start: int, end: int) -> str:
    eols = {e for e in model.eols[start:end] if e}
    return eols.pop() if len(eols) == 1 else model.majority_eol


def merge_lines(model: FileModel, start: int, end: int, old_lines: list[str],
                new_lines: list[str], render_new: Callable[[str], str], ends_with_newline: bool,
                line_merge: Callable[[str, str, str], str] | None = None,
                ) -> list[tuple[str, str]]:
    """3-way line merge: old->new changes applied onto file lines [start, end).

    Old line i corresponds to file line start+i (the line tiers are 1:1). Lines the request
    left unchanged are emitted with the file's bytes and ending. ``line_merge(old, file, new)``,
    when given, renders a line rewritten one-for-one (the typography tier's character merge).
    """
    eol = _region_eol(model, start, end)
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


def _indent_for(cols: int, unit: str) -> str:
    return "\t" * (cols // TAB_COLUMNS) + " " * (cols % TAB_COLUMNS) if unit == "\t" \
        else " " * cols


def _reindenter(model: FileModel, start: int, old_lines: list[str],
                aligned: Sequence[int | None] | None = None) -> Callable[[str], str]:
    """Re-indent new lines from old's indentation into the file's (T3-T6, T8).

    A uniform shift moves every line by the same number of columns, keeping each line's own
    sub-indentation; a change of unit (tabs vs spaces, 2 vs 4) converts depths level by level.
    Lines are measured from old's first non-blank line, and may go shallower than it. Old line
    i stands at file line ``start + i``, or at ``aligned[i]`` when given (near misses and T8,
    where old text may lack a line of the file or have one it lacks: None).
    """
    sent = old_lines
    if aligned is not None:
        pairs = [(line, f) for line, f in zip(old_lines, aligned, strict=True) if f is not None]
        sent = [line for line, _ in pairs]
    first = next((i for i, line in enumerate(sent) if line.strip()), 0)
    at = start + first if aligned is None else (pairs[first][1] if pairs else len(model.lines))
    if at >= len(model.lines):
        return str
    old_base_str = leading_ws(sent[first]) if sent else ""
    old_base = columns(old_base_str)
    file_base = leading_ws(model.lines[at])
    file_base_cols = columns(file_base)
    window = model.lines[start:start + len(old_lines)] if aligned is None else \
        [model.lines[f] for _, f in pairs]
    file_unit = model.indent_unit_near(start)
    mode = "shift"
    old_depths = relative_depths(sent)
    if len(window) == len(sent):
        mode = same_structure(old_depths, relative_depths(window),
                              unit_columns(file_unit)) or "unit"
    old_tabs = any("\t" in leading_ws(line) for line in sent if line.strip())
    file_tabs = any("\t" in leading_ws(line) for line in window if line.strip())
    if old_tabs != file_tabs:
        mode = "unit"  # tabs vs spaces: convert level by level, never mix them in one indent
    old_w = relative_unit(old_depths) or unit_columns(infer_indent_unit(old_lines))
    file_w = unit_columns(file_unit)
    if mode == "unit" and len(window) == len(sent):
        # A level is what it is in the matched lines (as ``same_structure`` compared them):
        # a block whose only depth is 8 columns in a 4-column file steps by 8.
        file_w = relative_unit(relative_depths(window)) or file_w
    if mode == "shift" and old_base_str == file_base:
        return str  # nothing moved: new lines keep the indentation they were sent with

    def render(line: str) -> str:
        if not line.strip():
            return ""
        indent = leading_ws(line)
        content = line[len(indent):]
        rel = columns(indent) - old_base
        if mode == "shift":
            if rel >= 0 and indent.startswith(old_base_str):
                return file_base + indent[len(old_base_str):] + content
            return _indent_for(max(file_base_cols + rel, 0), file_unit) + content
        levels, rest = divmod(rel, old_w)
        if levels >= 0:
            return file_base + _indent_for(levels * file_w, file_unit) + " " * rest + content
        return _indent_for(max(file_base_cols + levels * file_w + rest, 0), file_unit) + content

    return render


def _uncut(model: FileModel, start: int, old_lines: list[str], new_lines: list[str],
           file_lines: list[int | None]) -> tuple[list[str], list[str]]:
    """Old and new text read with old text's first line at the indentation it stands at, when
    that line was sent without it (copied from after the indentation, as an exact match may
    start inside a line) while old text's other lines carry theirs.

    The tolerant tiers re-indent new text by the shift from old text's first line to the
    file's (``_reindenter``); a first line sent without its indentation would shift every
    other line by the indentation left out. So when the indentation old text is sent with does
    not map line for line onto the file's (``file_lines``: the file line of each old line,
    None for a line the file lacks), the first line is given the one indentation (spaces or
    tabs, up to ``_UNCUT_MAX`` columns) under which it does, and so does new text's first line
    (it continues the file's line where old text's does, as the exact tier's splice would).
    Otherwise both are returned as they are.
    """
    mapped = [(i, f) for i, f in enumerate(file_lines)
              if f is not None and old_lines[i].strip() and model.lines[f].strip()]
    if len(mapped) < 2 or mapped[0][0] != 0 or leading_ws(old_lines[0]):
        return old_lines, new_lines
    first = leading_ws(model.lines[mapped[0][1]])
    # Every other line as the file has it: the first was copied from after its indentation
    # (a change of indent unit that happens to land on the file's own is no likelier).
    verbatim = first and all(leading_ws(old_lines[i]) == leading_ws(model.lines[f])
                             for i, f in mapped[1:])
    if not verbatim and _maps_onto(model, start, old_lines, file_lines):
        return old_lines, new_lines  # a uniform re-indentation, the first line included
    for indent in [first] if verbatim else [
            *(" " * n for n in range(1, _UNCUT_MAX + 1)),
            *("\t" * n for n in range(1, _UNCUT_MAX // TAB_COLUMNS + 1))]:
        lines = [indent + old_lines[0], *old_lines[1:]]
        if _maps_onto(model, start, lines, file_lines):
            if new_lines and new_lines[0].strip():
                new_lines = [indent + new_lines[0], *new_lines[1:]]
            return lines, new_lines
    return old_lines, new_lines


_UNCUT_MAX = 40
_SLIP = 0.9  # Indel similarity of a file line and old text's line with a slip in it


def _maps_onto(model: FileModel, start: int, old_lines: list[str],
               file_lines: Sequence[int | None]) -> bool:
    """Whether re-indenting old text's own lines puts each at its file line's indentation."""
    render = _reindenter(model, start, old_lines, file_lines)
    return all(leading_ws(render(old_lines[i])) == leading_ws(model.lines[f])
               for i, f in enumerate(file_lines)
               if f is not None and old_lines[i].strip() and model.lines[f].strip())


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
    if cand.span is not None and _whole_line_drift(model, cand, request.old, request.new):
        # Reported as what it is: the indentation tier's reading, not the exact tier's.
        cand = located.candidate = Candidate("indentation", cand.start, cand.end)
        located.tier = cand.tier
    if cand.span is not None:  # exact: replace characters inside the affected lines
        first = cand.start
        last = cand.end
        line_start = model.line_start(first)
        region_view = model.lf_view[line_start:model.line_start(last)]
        a, b = cand.span[0] - line_start, cand.span[1] - line_start
        new_region = region_view[:a] + request.new + region_view[b:]
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
        return Edit(located, cand.start, cand.end, _merge_similar(model, located), transforms)
    if cand.tier == "near_miss":
        lines, end = _merge_near_readings(model, located)
        return Edit(located, cand.start, end, lines, transforms)
    old_lines = sent = pattern_lines(request.old)
    new_lines = pattern_lines(request.new) if request.new else []
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
        old_lines, new_lines = _uncut(model, cand.start, old_lines, new_lines, [
            cand.start + i if cand.start + i < len(model.lines) else None
            for i in range(len(old_lines))])
        sent = old_lines[:len(sent)]
        render = _reindenter(model, cand.start, sent)
        if render(sent[0] if sent else "") != (sent[0] if sent else ""):
            transforms.append("reindented")
            if located.tier != "elision" and \
                    _later_lines_in_file_columns(model, cand.start, sent, new_lines):
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
    line of new text stands shallower than the file's line (new text is written in old text's
    columns, not the file's). New text whose later lines all stand at least as deep as the
    file's line is written in the file's own columns: spliced as sent.
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
    later = [line for line in new.split("\n")[1:] if line.strip()]
    return any(columns(leading_ws(line)) < depth for line in later)


def _later_lines_in_file_columns(model: FileModel, start: int, sent: list[str],
                                 new_lines: list[str]) -> bool:
    """Old text is one line, sent less indented than the file's line, and new text's later
    lines all stand at least as deep as the file's line: they are written in the file's
    columns, not old text's, and shifting them would indent them twice."""
    if len(sent) != 1 or not sent[0].strip() or not new_lines or not new_lines[0].strip():
        return False
    depth = columns(leading_ws(model.lines[start]))
    later = [line for line in new_lines[1:] if line.strip()]
    return columns(leading_ws(sent[0])) < depth and bool(later) and \
        all(columns(leading_ws(line)) >= depth for line in later)


def _typography_merge(old: str, found: str, new: str, table: dict[int, str]) -> str:
    """MATCHING 6.5 step 5: apply old->new character changes onto the file's line, so the
    file's own quotes and dashes survive in the parts of a changed line that were not edited."""
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


def keep_file_spelling(old: str, found: str, new: str) -> str | None:
    """``new`` with the file's own spelling in the spans of the line the edit left alone.

    ``old`` is the caller's version of the file's line ``found``, equal to it up to typography
    and whitespace (``"..."`` for ``"…"``, a space for a NBSP, ``--`` never: that is another
    text). Each span that ``old -> new`` keeps is written as the file has it; what the edit
    changes is written as sent. None when the lines are not equal up to typography, when the
    edit cuts through a span the caller spelt differently, or when the result would differ
    from ``new`` other than in typography. Indentation is ``new``'s.
    """
    import difflib

    key = LINE_KEYS["typography"]
    o, f = old.lstrip(" \t"), found.lstrip(" \t")
    indent = leading_ws(new)
    n = new[len(indent):]
    if o == f or key(o) != key(f):
        return None
    spans = difflib.SequenceMatcher(None, o, f, autojunk=False).get_opcodes()

    def file_text(a: int, b: int) -> str | None:
        out = []
        for tag, o1, o2, f1, f2 in spans:
            if tag == "equal":
                lo, hi = max(a, o1), min(b, o2)
                if lo < hi:
                    out.append(f[f1 + lo - o1:f1 + hi - o1])
            elif o1 == o2:  # characters only the file has
                if a < o1 < b:
                    out.append(f[f1:f2])
            elif a <= o1 and o2 <= b:
                out.append(f[f1:f2])
            elif o1 < b and a < o2:
                return None  # the edit cuts through a span spelt otherwise
        return "".join(out)

    out: list[str] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, o, n, autojunk=False).get_opcodes():
        piece = file_text(i1, i2) if tag == "equal" else n[j1:j2]
        if piece is None:
            return None
        out.append(piece)
    merged = "".join(out)
    if key(merged) != key(n):
        return None
    return indent + merged


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


def _merge_similar(model: FileModel, located: Located) -> list[tuple[str, str]]:
    """3-way merge for T8: the caller's change applied onto lines that may differ from old."""
    import difflib

    cand = located.candidate
    request = located.request
    old_lines = pattern_lines(request.old)
    new_lines = pattern_lines(request.new) if request.new else []
    file_lines = model.lines[cand.start:cand.end]
    key = LINE_KEYS["typography"]
    b = difflib.SequenceMatcher(None, [key(x) for x in old_lines], [key(x) for x in file_lines],
                                autojunk=False)
    from rapidfuzz.distance import Indel

    old_to_file: dict[int, int] = {}
    slipped: set[int] = set()  # file lines old text has but for a slip (a typo): not lacking
    for op, i1, i2, j1, j2 in b.get_opcodes():
        if op == "equal":
            for k in range(i2 - i1):
                old_to_file[i1 + k] = j1 + k
        elif op == "replace":
            slipped.update(j1 + k for k in range(min(i2 - i1, j2 - j1))
                           if Indel.normalized_similarity(key(old_lines[i1 + k]),
                                                          key(file_lines[j1 + k])) >= _SLIP)
    aligned = [cand.start + old_to_file[i] if i in old_to_file else None
               for i in range(len(old_lines))]
    old_lines, new_lines = _uncut(model, cand.start, old_lines, new_lines, aligned)
    if not _maps_onto(model, cand.start, old_lines, aligned):
        raise MatchError(
            "edit_conflict", f"{request.label}old_text matched lines {cand.first_line}-"
            f"{cand.last_line} only approximately, and its indentation does not map onto the "
            "file's (lines at one depth in old_text stand at different depths there)",
            hint=f"re-read lines {cand.first_line}-{cand.last_line} and resend old_text with the "
            "file's current text", details={"start_line": cand.first_line,
                                             "end_line": cand.last_line})
    render = _reindenter(model, cand.start, old_lines, aligned)
    eol = _region_eol(model, cand.start, cand.end)
    a = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    replacements: list[tuple[int, int, list[tuple[str, str]]]] = []  # [f1, f2) -> lines
    for op, i1, i2, j1, j2 in a.get_opcodes():
        if op == "equal":
            continue
        changed = list(range(i1, i2))
        missing = [i for i in changed if i not in old_to_file]
        if missing:
            raise MatchError(
                "edit_conflict",
                f"{request.label}old_text matched lines {cand.first_line}-{cand.last_line} only "
                "approximately, and a line you are changing differs from the file: "
                f"{old_lines[missing[0]].strip()[:SNIPPET_CHARS]!r}",
                hint=f"re-read lines {cand.first_line}-{cand.last_line} and resend old_text with "
                "the file's current text", details={"start_line": cand.first_line,
                                                     "end_line": cand.last_line})
        if changed:
            mapped = [old_to_file[i] for i in changed]
            if mapped != list(range(mapped[0], mapped[0] + len(mapped))):
                raise MatchError(
                    "edit_conflict", f"{request.label}the file has lines that old_text lacks "
                    f"inside the region you are changing (near line {cand.start + mapped[0] + 1})",
                    hint="re-read the region and resend old_text with the file's current text")
            f1, f2 = mapped[0], mapped[-1] + 1
        elif i1 in old_to_file:  # pure insertion before old line i1
            f1 = f2 = old_to_file[i1]
        elif i1 - 1 in old_to_file:
            f1 = f2 = old_to_file[i1 - 1] + 1
        else:
            raise MatchError("edit_conflict", f"{request.label}the place of the insertion "
                             "differs from the file", hint="re-read the region and resend")
        # File lines old text lacks right before or after the lines replaced (or at the point
        # of an insertion) that new text writes too: the caller and the file made the same
        # insertion, which is written once, with the file's bytes.
        mapped_lines = set(old_to_file.values()) | slipped
        pre = f1
        while pre > 0 and pre - 1 not in mapped_lines:
            pre -= 1
        post = f2
        while post < len(file_lines) and post not in mapped_lines:
            post += 1
        emitted: list[tuple[str, str]] | None = None
        if (pre, post) != (f1, f2):
            extra = list(range(pre, f1)) + list(range(f2, post))
            wanted = [key(x) for x in new_lines[j1:j2]]
            region = list(range(pre, post))
            blocks = difflib.SequenceMatcher(
                None, [key(file_lines[k]) for k in region], wanted, autojunk=False
            ).get_matching_blocks()
            from_file = {j + n: region[i + n] for i, j, size in blocks for n in range(size)}
            if set(extra) <= set(from_file.values()):
                # every extra line is among new text's lines: new text rewrites the whole
                # region, extras included, and writes the extras as the file has them
                emitted = [(file_lines[from_file[n]], model.eols[cand.start + from_file[n]])
                           if from_file.get(n, -1) in extra else (render(line), eol)
                           for n, line in enumerate(new_lines[j1:j2])]
                f1, f2 = pre, post
        if emitted is None:
            if (pre, post) != (f1, f2) and not _edits_line_for_line(
                    [key(x) for x in old_lines[i1:i2]], [key(x) for x in new_lines[j1:j2]]):
                # An insertion, deletion or rewrite next to a file line old text lacks: whether
                # that line is part of what changes (or on which side of it new lines go)
                # cannot be told.
                near = pre if pre < f1 else f2
                raise MatchError(
                    "edit_conflict", f"{request.label}old_text matched lines {cand.first_line}-"
                    f"{cand.last_line} only approximately, and the file has a line old_text "
                    f"lacks next to the lines you change: line {cand.start + near + 1} "
                    f"{file_lines[near].strip()[:SNIPPET_CHARS]!r}",
                    hint=f"re-read lines {cand.first_line}-{cand.last_line} and resend old_text "
                    "with the file's current text", details={"start_line": cand.first_line,
                                                             "end_line": cand.last_line,
                                                             "line": cand.start + near + 1})
            emitted = [(render(line), eol) for line in new_lines[j1:j2]]
            if op == "replace" and i2 - i1 == j2 - j1 and (f1, f2) == (mapped[0], mapped[-1] + 1):
                # A line changed in place keeps the file's spelling (curly quotes, "…", NBSP)
                # in the parts the edit did not touch (corpus cases P6 to-ascii+new).
                for k in range(i2 - i1):
                    kept = keep_file_spelling(old_lines[i1 + k], file_lines[f1 + k],
                                              emitted[k][0])
                    if kept is not None:
                        emitted[k] = (kept, eol)
        replacements.append((f1, f2, emitted))
    out: list[tuple[str, str]] = []
    cursor = 0
    for f1, f2, lines in sorted(replacements):
        if f1 < cursor:
            raise MatchError("edit_conflict", f"{request.label}two of your changes meet lines "
                             "the file has and old_text lacks", hint="re-read the region and "
                             "resend old_text with the file's current text")
        out += [(file_lines[k], model.eols[cand.start + k]) for k in range(cursor, f1)]
        out += lines
        cursor = f2
    out += [(file_lines[k], model.eols[cand.start + k]) for k in range(cursor, len(file_lines))]
    for k in range(len(out) - 1):
        if out[k][1] == "":  # the file's last line, no longer last: it needs an ending now
            out[k] = (out[k][0], eol)
    if out and out[-1][1] == "" and model.eols[cand.end - 1] != "":
        out[-1] = (out[-1][0], eol)
    elif out and out[-1][1] != "" and model.eols[cand.end - 1] == "":
        out[-1] = (out[-1][0], "")  # the file ends without a line break: it still does
    return out


def _edits_line_for_line(old: list[str], new: list[str]) -> bool:
    """Whether old lines become as many new lines, each an edit of its own (Indel >= 0.6)."""
    from rapidfuzz.distance import Indel

    return len(old) == len(new) > 0 and all(
        Indel.normalized_similarity(a, b, score_cutoff=0.6) >= 0.6
        for a, b in zip(old, new, strict=True))


class _Misfit(MatchError):
    """A near miss's reading whose alignment old text's indentation contradicts."""


def _near_conflict(located: Located, what: str) -> MatchError:
    cand = located.candidate
    return MatchError(
        "edit_conflict", f"{located.request.label}old_text matched lines {cand.first_line}-"
        f"{cand.last_line} but for one line, and {what}",
        hint=f"re-read lines {cand.first_line}-{cand.last_line} and resend old_text with the "
        "file's current text", details={"start_line": cand.first_line,
                                         "end_line": cand.last_line})


def _leans_towards(file: str, mine: str, new: str) -> bool:
    """Whether ``mine`` is ``file`` part-way to ``new``: characters ``new`` brings, put in.

    Every edit from the file's line to old text's lies on a shortest path to new text's, and
    one of them adds or changes a character (dropping characters that new text drops anyway
    is a slip, not the edit's result leaking into old text).
    """
    from rapidfuzz.distance import Levenshtein

    ops = Levenshtein.editops(file, mine)
    if all(op.tag == "delete" for op in ops):
        return False
    return len(ops) + Levenshtein.distance(mine, new) == Levenshtein.distance(file, new)


_PAIRING_MIN_WORD_CHARS = 2


def _pairs_with(line: str, added: list[str], removed: list[str]) -> bool:
    """Whether one of ``added`` is ``line`` or a rewrite of it rather than of a removed line."""
    from rapidfuzz.distance import Indel

    key = LINE_KEYS["typography"]
    text = key(line)
    if sum(ch.isalnum() for ch in text) < _PAIRING_MIN_WORD_CHARS:
        return False  # ")" or a blank line is like many lines: no line pairs with it
    for new in added:
        score = Indel.normalized_similarity(text, key(new))
        if score >= 0.6 and all(Indel.normalized_similarity(key(old), key(new)) < score
                                for old in removed):
            return True
    return False


def _merge_near_readings(model: FileModel, located: Located
                         ) -> tuple[list[tuple[str, str]], int]:
    """``_merge_near`` for each reading of which line is missing; they must agree.

    When lines equal up to indentation stand around the gap, any of them could be the one old
    text lacks: every reading must merge, to the same lines. A reading is set aside only when
    old text's own indentation contradicts it (``_Misfit``); a reading refused for anything
    else (its change meets the line it says is lacking) refuses the edit.
    """
    readings = [(located.alignment, located.dropped), *located.alternatives]
    results: list[tuple[list[tuple[str, str]], int]] = []
    first_error: MatchError | None = None
    misfit: MatchError | None = None
    for align, dropped in readings:
        located.alignment, located.dropped = align, dropped
        try:
            results.append(_merge_near(model, located))
        except _Misfit as err:
            misfit = misfit or err  # old text's indentation says it does not sit this way
        except MatchError as err:
            first_error = first_error or err
    located.alignment, located.dropped = readings[0]
    if first_error is not None:
        # One reading's change meets the line it says old text lacks, where another's does
        # not: which one is lacking decides where the change goes.
        raise first_error
    if not results:
        assert misfit is not None
        raise misfit
    if any(r != results[0] for r in results[1:]):
        raise _near_conflict(located, "which of the look-alike lines there old_text lacks "
                             "cannot be told")
    return results[0]


def _merge_near(model: FileModel, located: Located) -> tuple[list[tuple[str, str]], int]:
    """The merge for a near miss: old -> new applied onto the window, line by line.

    Lines the caller kept keep the file's bytes (a typo in a kept line is the caller's, not
    the file's); a line old text has and the file lacks is never written, even where new text
    repeats it; the file line old text lacks is kept once: as it is when the edit does not
    touch it, in place of new text's copy of it when new text has it where the edit inserts,
    replaced when the edit inserts a rewrite of it there (a similar line). Anything else that
    touches it is refused (``edit_conflict``): the caller cannot have meant to drop a line it
    did not see. So is new text put where the missing line is a blank line or a bracket (fewer
    than two letters or digits: like too many lines to pair with one of them), and an edit
    that rewrites only lines the file lacks (was the line a slip, or invented?).
    """
    from rapidfuzz.distance import Indel

    cand = located.candidate
    request = located.request
    old_lines = pattern_lines(request.old)
    new_lines = pattern_lines(request.new) if request.new else []
    align = list(located.alignment)
    dropped = located.dropped
    end = cand.end
    if request.new and request.old.endswith("\n") != request.new.endswith("\n"):
        # As for the whole-line tiers: the edit removes (or adds) its last line break.
        if request.old.endswith("\n") and end < len(model.lines):
            old_lines = [*old_lines, model.lines[end]]
            new_lines = [*new_lines[:-1], new_lines[-1] + model.lines[end]]
            align.append(end)
            end += 1
        elif request.new.endswith("\n"):
            new_lines = [*new_lines, ""]
    key = LINE_KEYS["typography"]
    first = next((i for i, f in enumerate(align) if f is not None), 0)
    first_file = align[first]
    assert first_file is not None
    sent = [old_lines[i] for i, f in enumerate(align) if f is not None]
    old_lines, new_lines = _uncut(model, first_file - first, old_lines, new_lines, align)
    if all(leading_ws(old_lines[i]) == leading_ws(model.lines[f])
           for i, f in enumerate(align) if f is not None and old_lines[i].strip()):
        render: Callable[[str], str] = str
    elif _maps_onto(model, first_file - first, old_lines, align):
        render = _reindenter(model, first_file - first, old_lines, align)
    else:
        near = _near_conflict(located, "its indentation does not map onto the file's (lines "
                              "at one depth in old_text stand at different depths there)")
        raise _Misfit(near.code, near.message, hint=near.hint, details=near.details)
    del sent
    eol = _region_eol(model, cand.start, end)
    out: list[tuple[str, str]] = []
    cursor = cand.start
    used_dropped = False

    def emit_file(upto: int) -> None:
        nonlocal cursor
        while cursor < upto:
            out.append((model.lines[cursor], model.eols[cursor]))
            cursor += 1

    def mapped_before(i: int) -> int:
        for k in range(i - 1, -1, -1):
            f = align[k]
            if f is not None:
                return f + 1
        return cand.start

    for op, i1, i2, j1, j2 in line_opcodes(old_lines, new_lines):
        if op == "equal":
            for i in range(i1, i2):
                f = align[i]
                if f is None:
                    continue  # the file lacks this line: new text's copy is not written
                emit_file(f)
                emit_file(f + 1)
            continue
        mapped = [f for f in (align[i] for i in range(i1, i2)) if f is not None]
        if i2 > i1 and j2 > j1 and not mapped:
            # Only lines the file lacks rewritten: whether the rewrite belongs there (the
            # line was a slip of old text) or nowhere (it was invented) cannot be told.
            raise _near_conflict(located, "the lines you change are not in the file: "
                                 f"{old_lines[i1].strip()[:SNIPPET_CHARS]!r}")
        r1, r2 = (mapped[0], mapped[-1] + 1) if mapped else (mapped_before(i1),) * 2
        added = new_lines[j1:j2]
        for i in range(i1, i2):
            f = align[i]
            if f is None or key(old_lines[i]) == key(model.lines[f]):
                continue
            # The line with the typo is one the edit changes: refused when it leans towards
            # new text (the result of the edit leaking into old text), not a slip.
            if any(_leans_towards(key(model.lines[f]), key(old_lines[i]), key(line))
                   for line in added):
                raise _near_conflict(located, "the line you change differs from the file's "
                                     "in a way that looks like the edit's result: "
                                     f"{model.lines[f].strip()[:SNIPPET_CHARS]!r}")
        rendered = [(render(line), eol) for line in added]
        if dropped is not None and not used_dropped and (
                (r1 <= dropped <= r2 and (dropped < r2 or r1 == r2)) or
                (dropped in (r1 - 1, r2) and _pairs_with(model.lines[dropped], added,
                                                         old_lines[i1:i2]))):
            # The edit touches the file line old text lacks.
            text = key(model.lines[dropped])
            if r1 == r2 and sum(ch.isalnum() for ch in text) < _PAIRING_MIN_WORD_CHARS and \
                    any(key(line) != text for line in added):
                # New lines put where the file has a blank line or a bracket old text lacks,
                # one of them like it: is it that line, and on which side of it do the others
                # go? A line like many others cannot tell.
                raise _near_conflict(located, "the edit touches a file line old_text lacks, "
                                     f"{model.lines[dropped].strip()!r}, which new text's "
                                     "lines cannot be told apart from")
            same = [k for k, line in enumerate(added) if key(line) == text]
            if same:
                k = same[0]
                if leading_ws(rendered[k][0]) == leading_ws(model.lines[dropped]):
                    rendered[k] = (model.lines[dropped], model.eols[dropped] or eol)
            elif not any(Indel.normalized_similarity(text, key(line)) >= 0.6 for line in added):
                raise _near_conflict(located, "the edit touches a file line old_text lacks: "
                                     f"{model.lines[dropped].strip()[:SNIPPET_CHARS]!r}")
            r1, r2 = min(r1, dropped), max(r2, dropped + 1)
            used_dropped = True
        elif dropped is not None and not used_dropped and dropped in (r1 - 1, r2):
            # Right next to the lines the edit changes, a file line old text lacks: whether
            # the change meant to take it in cannot be told.
            raise _near_conflict(located, "right next to the lines you change the file has a "
                                 f"line old_text lacks: {model.lines[dropped].strip()[:60]!r}")
        if mapped and mapped != list(range(r1, r1 + len(mapped))) and \
                [f for f in range(r1, r2) if f != dropped] != mapped:
            raise _near_conflict(located, "the lines you change are not together in the file")
        emit_file(r1)
        out += rendered
        cursor = max(cursor, r2)
    emit_file(end)
    for k in range(len(out) - 1):
        if out[k][1] == "":
            out[k] = (out[k][0], eol)
    if out and out[-1][1] == "" and model.eols[end - 1] != "":
        out[-1] = (out[-1][0], eol)
    if out and model.eols[end - 1] == "" and out[-1][1] != "":
        out[-1] = (out[-1][0], "")
    return out, end

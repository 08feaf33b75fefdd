"""Re-indenting new text into the file's indentation, and the line ending a region takes.

The tolerant tiers find old text at an indentation other than the one it was sent with (T3-T6,
near misses, T8); the merge writes new text at the file's. ``reindenter`` measures the change
from old text's indentation to the file's region (a uniform shift, or a change of unit level by
level, tabs and spaces never mixed in one indent) and returns the function that re-indents each
new line. ``uncut`` reads a first line sent without its indentation (copied from after it, as an
exact match may start inside a line) at the indentation under which old text's lines map onto
the file's (``maps_onto``). ``region_eol`` is the line ending new lines take: the region's, or
the file's majority where the region is mixed. Nothing here refuses.

The map::

    region_eol                   the line ending of new lines in a region
    reindenter, _indent_for      old text's indentation -> the file's, per new line
    uncut                        old and new text with a first line's indentation restored
    maps_onto                    whether re-indented old lines land at their file lines'
    later_lines_in_file_columns  one line sent less indented, new text in the file's columns

Imports ``filemodel`` (for types) and ``indentation``; ``threeway`` and ``merge`` build on it.
"""

from __future__ import annotations

from zbtools.core.editing.matching.indentation import (
    TAB_COLUMNS,
    columns,
    infer_indent_unit,
    leading_ws,
    relative_depths,
    relative_unit,
    same_structure,
    unit_columns,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from zbtools.core.editing.matching.filemodel import FileModel

_UNCUT_MAX = 40


def region_eol(model: FileModel, start: int, end: int) -> str:
    eols = {e for e in model.eols[start:end] if e}
    return eols.pop() if len(eols) == 1 else model.majority_eol


def _indent_for(cols: int, unit: str) -> str:
    return "\t" * (cols // TAB_COLUMNS) + " " * (cols % TAB_COLUMNS) if unit == "\t" \
        else " " * cols


def reindenter(model: FileModel, start: int, old_lines: list[str],
                aligned: Sequence[int | None] | None = None,
                new_lines: Sequence[str] = ()) -> Callable[[str], str]:
    """Re-indent new lines from old's indentation into the file's (T3-T6, T8).

    A uniform shift moves every line by the same number of columns, keeping each line's own
    sub-indentation; a change of unit (tabs vs spaces, 2 vs 4) converts depths level by level.
    Lines are measured from old's first non-blank line, and may go shallower than it. Old line
    i stands at file line ``start + i``, or at ``aligned[i]`` when given (near misses and T8,
    where old text may lack a line of the file or have one it lacks: None). A level of the
    request is its old text's step, else its ``new_lines``' own (one line of old text nested
    two columns deeper in new text is a level, a tab in a tab-indented file), else the unit
    old text's indentation suggests.
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
    old_w = relative_unit(old_depths) or relative_unit(relative_depths(new_lines)) \
        or unit_columns(infer_indent_unit(old_lines))
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


def uncut(model: FileModel, start: int, old_lines: list[str], new_lines: list[str],
           file_lines: list[int | None]) -> tuple[list[str], list[str]]:
    """Old and new text read with old text's first line at the indentation it stands at, when
    that line was sent without it (copied from after the indentation, as an exact match may
    start inside a line) while old text's other lines carry theirs.

    The tolerant tiers re-indent new text by the shift from old text's first line to the
    file's (``reindenter``); a first line sent without its indentation would shift every
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
    if not verbatim and maps_onto(model, start, old_lines, file_lines):
        return old_lines, new_lines  # a uniform re-indentation, the first line included
    for indent in [first] if verbatim else [
            *(" " * n for n in range(1, _UNCUT_MAX + 1)),
            *("\t" * n for n in range(1, _UNCUT_MAX // TAB_COLUMNS + 1))]:
        lines = [indent + old_lines[0], *old_lines[1:]]
        if maps_onto(model, start, lines, file_lines):
            if new_lines and new_lines[0].strip():
                new_lines = [indent + new_lines[0], *new_lines[1:]]
            return lines, new_lines
    return old_lines, new_lines


def maps_onto(model: FileModel, start: int, old_lines: list[str],
               file_lines: Sequence[int | None]) -> bool:
    """Whether re-indenting old text's own lines puts each at its file line's indentation."""
    render = reindenter(model, start, old_lines, file_lines)
    return all(leading_ws(render(old_lines[i])) == leading_ws(model.lines[f])
               for i, f in enumerate(file_lines)
               if f is not None and old_lines[i].strip() and model.lines[f].strip())


def later_lines_in_file_columns(model: FileModel, start: int, sent: list[str],
                                new_lines: list[str]) -> bool:
    """Old text is one line (blank lines after it aside), sent less indented than the file's
    line, and new text's later lines all stand deeper than old text's own column: they are
    written in the file's columns, not old text's (a line left of the file's is a dedent to an
    enclosing level, as the exact tier reads it), and shifting them would indent them twice."""
    if not sent or not sent[0].strip() or any(line.strip() for line in sent[1:]) or \
            not new_lines or not new_lines[0].strip():
        return False
    depth = columns(leading_ws(model.lines[start]))
    later = [line for line in new_lines[1:] if line.strip()]
    own = columns(leading_ws(sent[0]))
    return own < depth and bool(later) and all(columns(leading_ws(line)) > own for line in later)

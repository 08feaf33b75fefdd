"""Indentation measures: how deep a line is, and whether two blocks have the same shape.

The tiers that ignore indentation (T3-T5, near misses, T8) still compare a block's structure,
and the merge re-indents new text into the file's: both measure indents here. ``leading_ws``
is a line's indent and ``columns`` its width (a tab to the next stop of ``TAB_COLUMNS``);
``infer_indent_unit`` the unit lines are indented by (tabs when tab-led indents dominate, else
the most frequent step between consecutive lines, else the smallest width that divides them
all, 4 spaces for a flat text); ``relative_depths`` each line's depth relative to the first
non-blank one (in columns), and ``same_structure`` how old text's depths map onto the file's:
a uniform shift, a change of unit level by level, or not at all. Nothing here refuses.

The map::

    leading_ws, columns          a line's indent, and its width in columns
    infer_indent_unit            the unit of a run of lines (``_common_step``: spaces)
    relative_depths              each line's indent relative to the first non-blank line
    relative_unit, unit_columns  a block's step (gcd of those depths); a unit's width
    same_structure               "shift", "unit" or None: one block's depths onto another's

The bottom of ``matching``: imports no other part. ``math`` is imported on first use.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

TAB_COLUMNS = 4


def leading_ws(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def columns(indent: str) -> int:
    """Width of an indent, a tab counting as ``TAB_COLUMNS`` columns up to the next stop."""
    col = 0
    for ch in indent:
        col = (col // TAB_COLUMNS + 1) * TAB_COLUMNS if ch == "\t" else col + 1
    return col


# What the unit is inferred from, per line: None for a blank line, else (width of its leading
# whitespace, it starts with a tab, it holds a tab).
LineIndent = tuple[int, bool, bool] | None


def line_indent(line: str) -> LineIndent:
    if not line.strip():
        return None
    indent = leading_ws(line)
    return len(indent), indent.startswith("\t"), "\t" in indent


def infer_indent_unit(lines: Iterable[str]) -> str:
    """``"\\t"`` when tab-led indents dominate, else spaces: the smallest common step."""
    return unit_of_indents([line_indent(line) for line in lines])


def unit_of_indents(indents: Sequence[LineIndent]) -> str:
    """``infer_indent_unit`` of lines given by their ``line_indent`` (a caller that looks at
    overlapping regions measures each line once)."""
    tabs = spaces = 0
    widths: dict[int, int] = {}
    for indent in indents:
        if indent is None or not indent[0]:
            continue
        if indent[1]:
            tabs += 1
        else:
            spaces += 1
            widths[indent[0]] = widths.get(indent[0], 0) + 1
    if tabs > spaces:
        return "\t"
    if not widths:
        return "    "
    step = _common_step(indents)
    if step:
        return " " * step
    for step in (2, 4, 8, 3):
        if all(w % step == 0 for w in widths) and step <= min(widths):
            best = step
            if step == 2 and sum(n for w, n in widths.items() if w % 4 == 0) >= 0.8 * sum(
                    widths.values()):
                best = 4
            return " " * best
    return " " * min(widths)


def _common_step(indents: Sequence[LineIndent]) -> int:
    """The most frequent indent increase between consecutive non-blank space-indented lines."""
    counts: dict[int, int] = {}
    previous: int | None = None
    for indent in indents:
        if indent is None:
            continue
        width, _, has_tab = indent
        if has_tab:
            previous = None
            continue
        if previous is not None and width > previous:
            delta = width - previous
            if delta in (2, 3, 4, 8):
                counts[delta] = counts.get(delta, 0) + 1
        previous = width
    if not counts:
        return 0
    return max(counts, key=lambda d: (counts[d], d == 4))


def relative_unit(depths: list[int | None]) -> int:
    """The indent step of a block: gcd of its non-zero relative depths (0 when flat)."""
    import math

    step = 0
    for depth in depths:
        if depth:
            step = math.gcd(step, abs(depth))
    return step


def same_structure(old_depths: list[int | None], file_depths: list[int | None],
                   file_unit_cols: int) -> str | None:
    """How old's indentation maps onto the file's: "shift", "unit", or None (no match)."""
    if any((a is None) != (b is None) for a, b in zip(old_depths, file_depths, strict=True)):
        return None
    if all(a == b for a, b in zip(old_depths, file_depths, strict=True)):
        return "shift"
    old_w = relative_unit(old_depths)
    file_w = relative_unit(file_depths) or file_unit_cols
    if old_w and all(a is None or b is None or a * file_w == b * old_w
                     for a, b in zip(old_depths, file_depths, strict=True)):
        return "unit"
    return None


def unit_columns(unit: str) -> int:
    return TAB_COLUMNS if unit == "\t" else max(len(unit), 1)


def relative_depths(lines: Sequence[str]) -> list[int | None]:
    """Indent of each non-blank line relative to the first, in columns (blank lines: None)."""
    base: int | None = None
    out: list[int | None] = []
    for line in lines:
        if not line.strip():
            out.append(None)
            continue
        col = columns(leading_ws(line))
        if base is None:
            base = col
        out.append(col - base)
    return out

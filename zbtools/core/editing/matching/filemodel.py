"""The file model and the per-tier line normalisations: how every other part sees a file.

Owns ``FileModel``: a decoded text split on ``\\n`` (never ``splitlines``) into lines and their
endings (``\\r\\n``, ``\\n``, or ``""`` for a last line without one), with the majority ending,
the inferred indent unit, the LF view (every CRLF shown as LF) and its line offsets, and per
tier the normalised lines and an index from normalised line to line numbers, each built on
first use and cached. Also the indentation measures the tiers and the merge share
(``leading_ws``, ``columns``, ``infer_indent_unit``, ``relative_depths``, ``relative_unit``,
``same_structure``, ``unit_columns``) and the line keys of tiers T1-T5 (``TIERS``,
``LINE_KEYS``: exact, trailing whitespace stripped, both ends stripped, inner runs collapsed,
typography mapped to ASCII after NFC).

Limits: a lone ``\\r`` is content, not a line ending; a tab counts as ``TAB_COLUMNS`` (4)
columns to the next stop; the indent unit comes from the file alone (tabs when tab-led indents
dominate, else the most frequent step between consecutive lines, else the smallest width that
divides them all, 4 spaces for a flat file). Nothing here refuses: every ``str`` is a valid
file. Decoding bytes (BOM, surrogate escapes) is ``zbtools.core.files.textio``'s job.

The bottom of ``matching``: imports no other part. ``bisect``, ``math`` and ``unicodedata`` are
imported on first use.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

TIERS = ("exact", "trailing_whitespace", "indentation", "inner_whitespace", "typography")
TAB_COLUMNS = 4

# T5 maps these to ASCII; the merge writes the file's own back into lines the caller left alone.
TYPOGRAPHY = str.maketrans({
    "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u2032": "'",
    "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"', "\u2033": '"',
    "\u00ab": '"', "\u00bb": '"',
    "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-", "\u2015": "-",
    "\u2212": "-",
    "\u00a0": " ", "\u2002": " ", "\u2003": " ", "\u2004": " ", "\u2005": " ", "\u2006": " ",
    "\u2007": " ", "\u2008": " ", "\u2009": " ", "\u200a": " ", "\u202f": " ", "\u205f": " ",
    "\u3000": " ", "\u200b": "", "\ufeff": "",
    "\u2026": "...",
})


class FileModel:
    """A decoded file as lines plus their endings (``\\r\\n``, ``\\n`` or ``""`` for the last)."""

    def __init__(self, text: str) -> None:
        parts = text.split("\n")
        self.lines: list[str] = []
        self.eols: list[str] = []
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            if last:
                if part == "":
                    break
                self.lines.append(part)
                self.eols.append("")
            elif part.endswith("\r"):
                self.lines.append(part[:-1])
                self.eols.append("\r\n")
            else:
                self.lines.append(part)
                self.eols.append("\n")
        crlf = self.eols.count("\r\n")
        lf = self.eols.count("\n")
        self.majority_eol = "\r\n" if crlf > lf else "\n"
        self.indent_unit = infer_indent_unit(self.lines)
        self._lf_view: str | None = None
        self._line_starts: list[int] | None = None
        self._indexes: dict[str, dict[str, list[int]]] = {}
        self._normalized: dict[str, list[str]] = {}

    @property
    def text(self) -> str:
        return "".join(line + eol for line, eol in zip(self.lines, self.eols, strict=True))

    @property
    def lf_view(self) -> str:
        """The text with every CRLF shown as LF (lone CRs stay content)."""
        if self._lf_view is None:
            self._lf_view = "".join(
                line + ("\n" if eol else "") for line, eol in zip(self.lines, self.eols,
                                                                   strict=True))
        return self._lf_view

    @property
    def line_starts(self) -> list[int]:
        """Offset in ``lf_view`` where each line starts (plus one past the end)."""
        if self._line_starts is None:
            starts = [0]
            for line, eol in zip(self.lines, self.eols, strict=True):
                starts.append(starts[-1] + len(line) + (1 if eol else 0))
            self._line_starts = starts
        return self._line_starts

    def line_of(self, offset: int) -> int:
        """0-based line containing ``lf_view`` offset."""
        import bisect

        return max(bisect.bisect_right(self.line_starts, offset) - 1, 0)

    def normalized(self, tier: str) -> list[str]:
        if tier == "typography" and "inner_whitespace" in self._normalized and \
                self.lf_view.isascii():
            return self._normalized["inner_whitespace"]  # identical keys for ASCII text
        if tier not in self._normalized:
            key = LINE_KEYS[tier]
            self._normalized[tier] = [key(line) for line in self.lines]
        return self._normalized[tier]

    def index(self, tier: str) -> dict[str, list[int]]:
        if tier == "typography" and "inner_whitespace" in self._indexes and \
                self.lf_view.isascii():
            return self._indexes["inner_whitespace"]
        if tier not in self._indexes:
            table: dict[str, list[int]] = {}
            for i, key in enumerate(self.normalized(tier)):
                table.setdefault(key, []).append(i)
            self._indexes[tier] = table
        return self._indexes[tier]


def leading_ws(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def columns(indent: str) -> int:
    """Width of an indent, a tab counting as ``TAB_COLUMNS`` columns up to the next stop."""
    col = 0
    for ch in indent:
        col = (col // TAB_COLUMNS + 1) * TAB_COLUMNS if ch == "\t" else col + 1
    return col


def infer_indent_unit(lines: Iterable[str]) -> str:
    """``"\\t"`` when tab-led indents dominate, else spaces: the smallest common step."""
    tabs = spaces = 0
    widths: dict[int, int] = {}
    for line in lines:
        if not line.strip():
            continue
        indent = leading_ws(line)
        if not indent:
            continue
        if indent.startswith("\t"):
            tabs += 1
        else:
            spaces += 1
            widths[len(indent)] = widths.get(len(indent), 0) + 1
    if tabs > spaces:
        return "\t"
    if not widths:
        return "    "
    step = _common_step(lines)
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


def _common_step(lines: Iterable[str]) -> int:
    """The most frequent indent increase between consecutive non-blank space-indented lines."""
    counts: dict[int, int] = {}
    previous: int | None = None
    for line in lines:
        if not line.strip():
            continue
        indent = leading_ws(line)
        if "\t" in indent:
            previous = None
            continue
        width = len(indent)
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


def relative_depths(lines: list[str]) -> list[int | None]:
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


# ---------------------------------------------------------------------------------------------
# Line normalisations per tier


def rstrip_key(line: str) -> str:
    """T2: trailing spaces and tabs removed."""
    return line.rstrip(" \t")


def strip_key(line: str) -> str:
    """T3: leading and trailing spaces and tabs removed (the depth is compared separately)."""
    return line.strip(" \t")


def collapse_key(line: str) -> str:
    """T4: every run of whitespace one space, none at either end."""
    return " ".join(line.split())


def typography_key(line: str) -> str:
    """T5: the T4 key after NFC and mapping curly quotes, dashes, odd spaces to ASCII."""
    if line.isascii():  # nothing to normalise or map: the inner-whitespace key
        return collapse_key(line)
    import unicodedata

    return collapse_key(unicodedata.normalize("NFC", line).translate(TYPOGRAPHY))


LINE_KEYS: dict[str, Callable[[str], str]] = {
    "exact": lambda line: line,
    "trailing_whitespace": rstrip_key,
    "indentation": strip_key,
    "inner_whitespace": collapse_key,
    "typography": typography_key,
}

"""Locating an edit's old text in a file, and applying it without touching anything else.

The design is MATCHING.md sections 6-7. A request (old text, new text, optional line hints) is
first normalised (CRLF to LF, a leading BOM dropped, ``cat -n`` line-number prefixes pasted from
a read stripped, omission placeholders in the new text refused). Then a ladder of tiers, from
strict to tolerant, looks for the old text:

====  ====================  ===============================================================
T1    ``exact``             substring of the file (partial lines allowed)
T2    ``trailing_whitespace`` whole lines equal after removing trailing spaces/tabs
T3    ``indentation``       whole lines equal in content and in depth relative to the first
                            line (tabs vs spaces, a uniform shift); new text is re-indented
T4    ``inner_whitespace``  as T3, runs of inner spaces/tabs collapsed (needs >= 2 non-blank
                            lines or >= 12 non-space characters)
T5    ``typography``        as T4 after NFC and mapping curly quotes, dashes, odd spaces and
                            the ellipsis to ASCII
T6    ``unescape``          T1-T5 again with one level of backslash escapes removed from old
                            and new (``\\n``, ``\\t``, ``\\"`` ...), only when old has them
====  ====================  ===============================================================

The ladder stops at the first tier that has candidates. One candidate is the match; several are
filtered by the hints (``start_line``/``end_line`` keep candidates within the hint window,
``occurrence`` picks the n-th); if more than one remains the edit is refused as ambiguous and every
candidate is listed with a line that tells it apart. A looser tier is never tried to escape an
ambiguity (MATCHING I1, I2). A hint never creates a match.

Applying is a line merge: lines that the caller did not change keep the file's exact bytes
(trailing whitespace, tabs, curly quotes, per-line CRLF/LF); new lines take the region's line
ending (the file's majority where the region is mixed) and, for T3-T6, the file's indentation.
Bytes outside the matched region are asserted unchanged before anything is written.

Replacement text is literal: ``$&``, ``\\1`` and ``\\g<0>`` are written as they are.

Not yet here (later slices of issue 3): the elision tier (T7), the gated similarity tier (T8),
``@@`` scope lines and hash anchors.

Failure modes (``MatchError.code``): ``no_match`` (with the closest candidate, the first
diverging line and a specific diagnosis), ``ambiguous_match`` (every candidate listed),
``no_change`` (old equals new), ``placeholder_in_new``, ``overlapping_edits``.
"""

from __future__ import annotations

import itertools

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from collections.abc import Callable, Iterable
    from typing import Any

TIERS = ("exact", "trailing_whitespace", "indentation", "inner_whitespace", "typography")
MAX_CANDIDATES_LISTED = 5
SNIPPET_CHARS = 120
ALREADY_APPLIED_MIN_CHARS = 8
INNER_WS_SINGLE_LINE_MIN = 12
TAB_COLUMNS = 4
ELISION_MAX_GAP = 2000
SIMILARITY_MIN = 0.90
SIMILARITY_MARGIN = 0.10
SIMILARITY_RUNNER_UP_MAX = 0.85
SIMILARITY_MIN_LINES = 3
SIMILARITY_MIN_CHARS = 40
SIMILARITY_MAX_WINDOWS = 2000
SIMILARITY_MAX_FILE_BYTES = 5 * 1024 * 1024
SIMILARITY_MAX_OLD_LINES = 400

_TYPOGRAPHY = str.maketrans({
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

# Compiled on first use: ``re`` (with ``enum``) costs ~5 ms of a cold call, and a plain exact
# edit never needs a regular expression.
_PATTERN_SOURCES: dict[str, tuple[str, bool]] = {
    "line_number": (r"^\s*(\d+)(?::[0-9a-f]{6}\t|\t|\s*[│|→:]\s?)", False),
    "placeholder": (
        r"^\s*(?:(?://|#|--|;|/\*|<!--|\*)\s*)?(?:\.\.\.|…)\s*(?:\(?\s*(?:rest|remaining|existing|"
        r"unchanged|other|previous|same|more)\b[^\n]*)?(?:\*/|-->)?\s*$|"
        r"(?:rest of (?:the )?(?:code|file|function|class|method|implementation)|"
        r"existing code (?:here|remains|unchanged)|code (?:remains )?unchanged)", True),
    "elision": (
        r"^\s*(?:(?://|#|--|;|/\*|<!--|\*)\s*)?(?:\.\.\.|…)(?:\s*\(?(?:existing|rest|remaining|"
        r"unchanged|more|other|same|previous)\b[^\n]*?)?\s*(?:\.\.\.|…)?\s*(?:\*/|-->)?\s*$", True),
}
_PATTERNS: dict[str, re.Pattern[str]] = {}


def _rx(name: str) -> re.Pattern[str]:
    pattern = _PATTERNS.get(name)
    if pattern is None:
        import re

        source, ignore_case = _PATTERN_SOURCES[name]
        pattern = re.compile(source, re.IGNORECASE if ignore_case else 0)
        _PATTERNS[name] = pattern
    return pattern


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "'": "'", "\\": "\\"}


class MatchError(Exception):
    """A refusal with a stable code, a message for the model, a hint and details."""

    def __init__(self, code: str, message: str, hint: str = "",
                 details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.hint = hint
        self.details = details or {}


# ---------------------------------------------------------------------------------------------
# The file model


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
            key = _LINE_KEYS[tier]
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


def _relative_unit(depths: list[int | None]) -> int:
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
    old_w = _relative_unit(old_depths)
    file_w = _relative_unit(file_depths) or file_unit_cols
    if old_w and all(a is None or b is None or a * file_w == b * old_w
                     for a, b in zip(old_depths, file_depths, strict=True)):
        return "unit"
    return None


def unit_columns(unit: str) -> int:
    return TAB_COLUMNS if unit == "\t" else max(len(unit), 1)


# ---------------------------------------------------------------------------------------------
# Line normalisations per tier


def _rstrip(line: str) -> str:
    return line.rstrip(" \t")


def _strip(line: str) -> str:
    return line.strip(" \t")


def _collapse(line: str) -> str:
    return " ".join(line.split())


def _typography(line: str) -> str:
    if line.isascii():  # nothing to normalise or map: the inner-whitespace key
        return _collapse(line)
    import unicodedata

    return _collapse(unicodedata.normalize("NFC", line).translate(_TYPOGRAPHY))


_LINE_KEYS: dict[str, Callable[[str], str]] = {
    "exact": lambda line: line,
    "trailing_whitespace": _rstrip,
    "indentation": _strip,
    "inner_whitespace": _collapse,
    "typography": _typography,
}


# ---------------------------------------------------------------------------------------------
# Requests


class Request:
    """One edit after normalisation: old/new text (LF), hints and what was done to them."""

    def __init__(self, old: str, new: str, *, start_line: int | None = None,
                 end_line: int | None = None, occurrence: int | None = None,
                 label: str = "") -> None:
        self.old = old
        self.new = new
        self.start_line = start_line
        self.end_line = end_line
        self.occurrence = occurrence
        self.label = label
        self.transforms: list[str] = []
        self.scopes: list[str] = []  # "@@ def foo():" lines narrowing the search, outermost first
        self.insert_at: int | None = None  # pure insertion before this 0-based line
        self.insert_after_scope = False  # pure insertion right after the (last) scope line
        self.anchors: list[str] = []  # "LINE:HASH" from a read with hashes: the match holds them
        self.after_line: int | None = None  # elision segments: match at/after this 0-based line
        self.context_only = False  # an elision segment that only anchors (old == new)


def _lf(text: str) -> str:
    text = text.removeprefix("\ufeff")
    return text.replace("\r\n", "\n")


def strip_line_numbers(text: str) -> tuple[str, int | None]:
    """Remove ``cat -n``-style prefixes when every non-blank line has consecutive ones."""
    lines = text.split("\n")
    if not all(line.lstrip()[:1].isdigit() for line in lines if line.strip()):
        return text, None  # cheap test first: most requests carry no prefixes at all
    numbered = [(i, _rx("line_number").match(line)) for i, line in enumerate(lines) if line.strip()]
    if not numbered or any(m is None for _, m in numbered):
        return text, None
    numbers = [int(m.group(1)) for _, m in numbered if m is not None]
    positions = [i for i, _ in numbered]
    expected = [numbers[0] + (p - positions[0]) for p in positions]
    if numbers != expected:
        return text, None
    out = []
    for line in lines:
        match = _rx("line_number").match(line)
        out.append(line[match.end():] if match and line.strip() else line)
    return "\n".join(out), numbers[0]


def has_placeholder(new: str, old: str) -> str | None:
    """An omission placeholder line of ``new`` that ``old`` does not contain, if any."""
    lowered = new.lower()
    if "..." not in new and "…" not in new and not any(
            word in lowered for word in ("rest of", "existing code", "unchanged")):
        return None  # cheap test first: the regular expression is rarely needed
    old_lines = {line.strip() for line in old.split("\n")}
    for line in new.split("\n"):
        if line.strip() and line.strip() not in old_lines and _rx("placeholder").search(line):
            return line.strip()
    return None


def normalize_request(request: Request) -> Request:
    old, new = _lf(request.old), _lf(request.new)
    stripped, first = strip_line_numbers(old)
    if first is not None and stripped != old:
        old = stripped
        new_stripped, new_first = strip_line_numbers(new)
        if new_first is not None:
            new = new_stripped
        request.transforms.append("line_numbers_stripped")
        if request.start_line is None:
            request.start_line = first
    request.old, request.new = old, new
    return request


def unescape_once(text: str) -> str:
    out = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text) and text[i + 1] in _ESCAPES:
            out.append(_ESCAPES[text[i + 1]])
            i += 2
        else:
            out.append(ch)
            i += 1
    return "".join(out)


# ---------------------------------------------------------------------------------------------
# Candidates


class Candidate:
    """A place the old text matches: lines [start, end) (0-based), optionally a char span."""

    __slots__ = ("end", "span", "start", "tier")

    def __init__(self, tier: str, start: int, end: int,
                 span: tuple[int, int] | None = None) -> None:
        self.tier = tier
        self.start = start
        self.end = end  # exclusive; start == end only for an empty match
        self.span = span  # lf_view offsets, for exact (partial-line) matches

    @property
    def first_line(self) -> int:
        return self.start + 1

    @property
    def last_line(self) -> int:
        return max(self.end, self.start + 1)

    def overlaps(self, other: Candidate) -> bool:
        if self.span is not None and other.span is not None:
            return self.span[0] < other.span[1] and other.span[0] < self.span[1]
        return self.start < max(other.end, other.start + 1) and other.start < max(
            self.end, self.start + 1)


def find_exact(model: FileModel, old: str, limit: int = 1000) -> list[Candidate]:
    """Every occurrence of ``old`` in the file, overlapping ones included."""
    view = model.lf_view
    found: list[Candidate] = []
    pos = view.find(old)
    while pos != -1 and len(found) < limit:
        end = pos + len(old)
        first = model.line_of(pos)
        last = model.line_of(end - 1) if end > pos else first
        found.append(Candidate("exact", first, last + 1, (pos, end)))
        pos = view.find(old, pos + 1)
    return found


def _pattern_lines(old: str) -> list[str]:
    lines = old.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _relative_depths(lines: list[str]) -> list[int | None]:
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


def find_lines(model: FileModel, old: str, tier: str) -> list[Candidate]:
    """Whole-line windows equal to ``old`` under the tier's normalisation."""
    pattern = _pattern_lines(old)
    if not pattern or not any(line.strip() for line in pattern):
        return []
    key = _LINE_KEYS[tier]
    keys = [key(line) for line in pattern]
    if tier in {"inner_whitespace", "typography"}:
        non_blank = [k for k in keys if k]
        if len(non_blank) < 2 and sum(len(k.replace(" ", "")) for k in non_blank) < \
                INNER_WS_SINGLE_LINE_MIN:
            return []
    index = model.index(tier)
    normalized = model.normalized(tier)
    # Anchor on the rarest non-blank pattern line.
    anchor_pos, anchor_key = min(
        ((i, k) for i, k in enumerate(keys) if k), key=lambda ik: len(index.get(ik[1], ())))
    starts = [p - anchor_pos for p in index.get(anchor_key, ())]
    n = len(pattern)
    relative = tier in ("indentation", "inner_whitespace", "typography")
    if relative:
        old_depths = _relative_depths(pattern)
        file_w = unit_columns(model.indent_unit)
    found: list[Candidate] = []
    for start in starts:
        if start < 0 or start + n > len(model.lines):
            continue
        window = normalized[start:start + n]
        if any(w != k and (k or w) for w, k in zip(window, keys, strict=True)):
            continue
        if relative:
            depths = _relative_depths(model.lines[start:start + n])
            if same_structure(old_depths, depths, file_w) is None:
                continue
        found.append(Candidate(tier, start, start + n))
    return found


def find_candidates(model: FileModel, old: str, tier: str) -> list[Candidate]:
    if tier == "exact":
        return find_exact(model, old)
    return find_lines(model, old, tier)


# ---------------------------------------------------------------------------------------------
# Choosing among candidates


def _hint_window(request: Request) -> tuple[int, int] | None:
    if request.start_line is None and request.end_line is None:
        return None
    start = request.start_line or request.end_line or 1
    end = request.end_line or start
    slack = max(5, request.old.count("\n") + 1)
    return start - slack, end + slack


class Located:
    """The outcome of locating one request."""

    def __init__(self, candidate: Candidate, request: Request) -> None:
        self.candidate = candidate
        self.request = request
        self.tier = candidate.tier
        self.disambiguated_by: str | None = None
        self.warnings: list[str] = []
        self.unescaped = False
        self.already_applied = False
        self.similarity: float | None = None


def _describe(model: FileModel, cand: Candidate, others: list[Candidate]) -> dict[str, Any]:
    """A candidate with the nearest line above that tells it apart from the others."""
    info: dict[str, Any] = {"start_line": cand.first_line, "end_line": cand.last_line}
    offsets = [c.start - cand.start for c in others if c is not cand]
    for distance in range(1, 40):
        above = cand.start - distance
        if above < 0:
            break
        text = model.lines[above]
        if not text.strip():
            continue
        same = all(0 <= above + off < len(model.lines) and model.lines[above + off] == text
                   for off in offsets)
        if not same:
            info["distinguishing_line"] = above + 1
            info["distinguishing_text"] = text.strip()[:SNIPPET_CHARS]
            break
    return info


def choose(model: FileModel, cands: list[Candidate], request: Request) -> Candidate | None:
    """Apply hints; return the one candidate, or raise ``ambiguous_match``."""
    if len(cands) == 1:
        return cands[0]
    window = _hint_window(request)
    chosen = cands
    if request.occurrence is not None:
        if request.occurrence > len(cands):
            raise MatchError(
                "no_match", f"occurrence {request.occurrence} asked, but old_text matches "
                f"{len(cands)} place(s) ({cands[0].tier})",
                hint=f"use an occurrence between 1 and {len(cands)}",
                details={"candidates": [_describe(model, c, cands) for c in cands]})
        return cands[request.occurrence - 1]
    if window is not None:
        lo, hi = window
        chosen = [c for c in cands if c.last_line >= lo and c.first_line <= hi]
        if len(chosen) == 1:
            return chosen[0]
        # Several within the slack: a hint naming a candidate's exact lines still decides.
        exact = [c for c in chosen
                 if (request.start_line is None or c.first_line == request.start_line)
                 and (request.end_line is None or c.last_line == request.end_line)]
        if len(exact) == 1:
            return exact[0]
        if not chosen:
            chosen = cands
    listed = sorted(chosen, key=lambda c: abs(c.first_line - (request.start_line or 0))
                    if request.start_line else c.start)
    described = [_describe(model, c, chosen) for c in listed[:MAX_CANDIDATES_LISTED]]
    labels: dict[str, int] = {}  # several matches in one line are named once, with a count
    for d in described:
        label = f"lines {d['start_line']}-{d['end_line']}" if d["start_line"] != \
            d["end_line"] else f"line {d['start_line']}"
        labels[label] = labels.get(label, 0) + 1
    places = ", ".join(label if n == 1 else f"{label} ({n} times)"
                       for label, n in labels.items())
    more = f" and {len(chosen) - MAX_CANDIDATES_LISTED} more" if len(chosen) > \
        MAX_CANDIDATES_LISTED else ""
    example = described[0]["start_line"]
    raise MatchError(
        "ambiguous_match",
        f"{request.label}old_text matches {len(chosen)} places ({chosen[0].tier}): "
        f"{places}{more}",
        hint="add a line that appears only at the place you mean (each candidate is listed "
        f"with the nearest line that tells it apart), or pass start_line (e.g. "
        f"start_line={example}) or occurrence",
        details={"tier": chosen[0].tier, "count": len(chosen), "candidates": described})


def _find_scope_line(model: FileModel, scope: str, lo: int, hi: int,
                     request: Request) -> int:
    """The one line in [lo, hi) matching ``scope`` (T1-T5 on whole lines), else refuse."""
    for tier in TIERS:
        if tier == "exact":
            hits = [i for i in range(lo, hi) if model.lines[i] == scope]
        else:
            target = _LINE_KEYS[tier](scope)
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
    from zbtools.core.files.textio import line_hash

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
    if "\\" in old:
        unescaped = unescape_once(old)
        if unescaped != old:
            attempts.append((unescaped, "unescape"))
    for text, how in attempts:
        for tier in TIERS:
            cands = find_candidates(model, text, tier)
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
                lo_hi = _hint_window(request)
                if lo_hi and not (cand.last_line >= lo_hi[0] and cand.first_line <= lo_hi[1]):
                    located.warnings.append(
                        f"matched at line {cand.first_line}; the hint said "
                        f"{request.start_line} (the content is unique, so it was applied there)")
            if tier == "exact" and request.after_line is None:
                located.warnings += _near_duplicates(model, text, cand)
            return located
    if request.after_line is None and not held and window is None:
        # An edit that is already in the file must be a no-op, never re-applied near a
        # look-alike by the similarity tier (corpus cases P16).
        done = already_applied(model, request)
        if done is not None:
            return _noop(done, request)
        similar = find_similar(model, request)
        if similar is not None:
            return similar
    raise diagnose(model, request)


# ---------------------------------------------------------------------------------------------
# T8: gated similarity


_TRIVIAL = {"}", "{", "end", "pass", "return", "else:", "try:", "finally:", ")", "]", "};"}


def _informative(keys: list[str], index: dict[str, list[int]]) -> list[int]:
    """Up to 3 pattern lines worth anchoring on: rare in the file, >= 8 word characters."""
    scored = []
    for i, key in enumerate(keys):
        if key in _TRIVIAL or sum(ch.isalnum() for ch in key) < 8:
            continue
        hits = len(index.get(key, ()))
        if hits:
            scored.append((hits, -len(key), i))
    return [i for _, _, i in sorted(scored)[:3]]


def find_similar(model: FileModel, request: Request) -> Located | None:
    """The one window that is very similar to old text and clearly better than any other.

    Gates (MATCHING 6.4 T8): >= 3 non-blank lines and >= 40 non-space characters; best score
    >= 0.90; the best non-overlapping runner-up <= best - 0.10 and < 0.85; then the 3-way merge
    must find no conflict (checked when rendering). Returns None when a gate fails.
    """
    pattern = _pattern_lines(request.old)
    non_blank = [line for line in pattern if line.strip()]
    if len(non_blank) < SIMILARITY_MIN_LINES or len("".join("".join(non_blank).split())) < \
            SIMILARITY_MIN_CHARS or len(pattern) > SIMILARITY_MAX_OLD_LINES or \
            len(model.lf_view) > SIMILARITY_MAX_FILE_BYTES:
        return None
    try:
        from rapidfuzz.distance import Levenshtein
    except ImportError:  # pragma: no cover - declared dependency
        return None
    keys = [_typography(line) for line in pattern]
    index = model.index("typography")
    norm = model.normalized("typography")
    anchors = _informative(keys, index)
    if not anchors:
        return None
    target = "\n".join(keys)
    n = len(pattern)
    spread = max(1, n // 10)
    windows: set[tuple[int, int]] = set()
    for a in anchors:
        for pos in index[keys[a]][:200]:
            for shift in range(-2, 3):
                for length in range(n - spread, n + spread + 1):
                    start = pos - a + shift
                    if start >= 0 and length > 0 and start + length <= len(norm):
                        windows.add((start, start + length))
            if len(windows) > SIMILARITY_MAX_WINDOWS:
                break
    scored = []
    for start, end in sorted(windows)[:SIMILARITY_MAX_WINDOWS]:
        score = Levenshtein.normalized_similarity(target, "\n".join(norm[start:end]),
                                                  score_cutoff=0.8)
        if score:
            scored.append((score, start, end))
    if not scored:
        return None
    scored.sort(key=lambda t: (-t[0], t[1]))
    best, b_start, b_end = scored[0]
    runner_up = next((s for s, st, en in scored[1:] if en <= b_start or st >= b_end), 0.0)
    if best < SIMILARITY_MIN or runner_up > best - SIMILARITY_MARGIN or \
            runner_up >= SIMILARITY_RUNNER_UP_MAX:
        return None
    located = Located(Candidate("similarity", b_start, b_end), request)
    located.warnings.append(
        f"old_text matched lines {b_start + 1}-{b_end} only approximately "
        f"(similarity {best:.2f}); lines you did not change keep the file's text")
    located.similarity = best
    return located


def _merge_similar(model: FileModel, located: Located) -> list[tuple[str, str]]:
    """3-way merge for T8: the caller's change applied onto lines that may differ from old."""
    import difflib

    cand = located.candidate
    request = located.request
    old_lines = _pattern_lines(request.old)
    new_lines = _pattern_lines(request.new) if request.new else []
    file_lines = model.lines[cand.start:cand.end]
    key = _LINE_KEYS["typography"]
    b = difflib.SequenceMatcher(None, [key(x) for x in old_lines], [key(x) for x in file_lines],
                                autojunk=False)
    old_to_file: dict[int, int] = {}
    for op, i1, i2, j1, _ in b.get_opcodes():
        if op == "equal":
            for k in range(i2 - i1):
                old_to_file[i1 + k] = j1 + k
    render = _reindenter(model, cand.start, old_lines)
    eol = _region_eol(model, cand.start, cand.end)
    a = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    replacements: list[tuple[int, int, list[str]]] = []  # file window [f1, f2) -> new lines
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
        replacements.append((f1, f2, new_lines[j1:j2]))
    out: list[tuple[str, str]] = []
    cursor = 0
    for f1, f2, lines in sorted(replacements):
        out += [(file_lines[k], model.eols[cand.start + k]) for k in range(cursor, f1)]
        out += [(render(line), eol) for line in lines]
        cursor = f2
    out += [(file_lines[k], model.eols[cand.start + k]) for k in range(cursor, len(file_lines))]
    if out and out[-1][1] == "" and model.eols[cand.end - 1] != "":
        out[-1] = (out[-1][0], eol)
    return out


def _near_duplicates(model: FileModel, old: str, cand: Candidate) -> list[str]:
    pattern = [line for line in _pattern_lines(old) if line.strip()]
    if len(pattern) < 2 and sum(len(p.strip()) for p in pattern) < INNER_WS_SINGLE_LINE_MIN:
        return []
    if cand.span is not None and (old.startswith("\n") is False and
                                  cand.span[0] != model.line_starts[cand.start]):
        return []  # a partial-line match: whole-line look-alikes are not comparable
    others = [c for c in find_lines(model, old, "indentation") if c.start != cand.start]
    if not others:
        return []
    where = ", ".join(f"{c.first_line}-{c.last_line}" for c in others[:3])
    return [f"{len(others)} other block(s) match when indentation is ignored, at lines {where}; "
            f"make sure you meant lines {cand.first_line}-{cand.last_line}"]


# ---------------------------------------------------------------------------------------------
# Diagnosing a miss


def _visible(text: str) -> str:
    return (text.replace("\t", "→").replace(" ", "·").replace("\r", "␍")
            .replace("\u00a0", "⍽"))[:SNIPPET_CHARS]


def diagnose(model: FileModel, request: Request) -> MatchError:
    """``no_match`` with the closest candidate, the first divergence and a specific cause."""
    old = request.old
    pattern = _pattern_lines(old)
    details: dict[str, Any] = {"tiers_tried": [*TIERS, *(["unescape"] if "\\" in old else [])]}
    notes: list[str] = []
    if "\\n" in old and "\n" not in old.strip("\n"):
        notes.append("old_text contains literal backslash-n sequences (\\n) where the file has "
                     "real line breaks; send real newlines")
    closest = _closest(model, pattern)
    hint = "copy the exact current text from the file (read it again) into old_text"
    if closest is not None:
        start, matched, score = closest
        details["closest"] = {"start_line": start + 1,
                              "end_line": min(start + len(pattern), len(model.lines)),
                              "similarity": round(score, 2),
                              "matching_lines": matched}
        window = model.lines[start:start + len(pattern)]
        differing = [i for i, (a, b) in enumerate(zip(pattern, window, strict=False))
                     if _rstrip(a) != _rstrip(b)]
        ws_only = [i for i in differing if _strip(pattern[i]) == _strip(window[i])]
        if differing and len(ws_only) == len(differing) and len(window) == len(pattern):
            notes.append(
                f"only indentation differs, on {len(ws_only)} line(s), and not by one uniform "
                f"shift: e.g. file line {start + ws_only[0] + 1} is indented "
                f"`{_visible(leading_ws(window[ws_only[0]]))}`, yours "
                f"`{_visible(leading_ws(pattern[ws_only[0]]))}`; copy the indentation from the "
                "file")
        if differing:
            matched = differing[0]
        if matched < len(pattern) and start + matched < len(model.lines):
            old_line = pattern[matched]
            file_line = model.lines[start + matched]
            details["first_difference"] = {
                "old_text_line": matched + 1, "old_text": old_line[:SNIPPET_CHARS],
                "file_line": start + matched + 1, "file_text": file_line[:SNIPPET_CHARS]}
            if _strip(old_line) == _strip(file_line) and old_line != file_line and not notes:
                notes.append(f"only whitespace differs at file line {start + matched + 1}: "
                             f"file `{_visible(leading_ws(file_line))}` vs yours "
                             f"`{_visible(leading_ws(old_line))}`")
            elif file_line.startswith(old_line.rstrip()) and matched == len(pattern) - 1:
                notes.append(f"your old_text ends mid-line: file line {start + matched + 1} "
                             f"continues with {file_line[len(old_line.rstrip()):][:60]!r}; "
                             "include whole lines")
            elif request.new and old_line.strip() and old_line.strip() in request.new and \
                    old_line.strip() not in model.lf_view:
                notes.append(f"line {matched + 1} of old_text looks like the result of your "
                             "edit (it is in new_text but not in the file); old_text must show "
                             "the file as it is now")
        details["diff"] = _bounded_diff(pattern, model.lines[start:start + len(pattern) + 2],
                                        start)
        hint = (f"re-read lines {start + 1}-{start + len(pattern)} and copy them exactly as "
                "old_text")
    details["diagnosis"] = notes
    where = ""
    if closest is not None:
        where = f"; closest: lines {closest[0] + 1}-{closest[0] + len(pattern)} " \
                f"(similarity {closest[2]:.2f})"
    message = f"{request.label}old_text was not found (tried: {', '.join(details['tiers_tried'])})"
    message += where
    if notes:
        message += ". " + "; ".join(notes)
    return MatchError("no_match", message, hint=hint, details=details)


def _closest(model: FileModel, pattern: list[str]) -> tuple[int, int, float] | None:
    """(start, matching prefix lines, similarity) of the best window, or None.

    Bounded (MATCHING I7): prefix lengths are counted for at most 200 occurrences of each
    pattern line, and similarity is scored (rapidfuzz) only for the few longest prefixes.
    """
    if not pattern or not model.lines:
        return None
    keys = [_typography(line) for line in pattern]
    norm = model.normalized("typography")
    index = model.index("typography")
    # 1. Longest exact-prefix window (normalised), anchored on each occurrence of a line.
    prefixes: dict[int, int] = {}
    for k_pos, key in enumerate(keys):
        if not key:
            continue
        for pos in index.get(key, ())[:200]:
            start = pos - k_pos
            if start < 0 or start in prefixes:
                continue
            matched = 0
            while matched < len(keys) and start + matched < len(norm) and \
                    norm[start + matched] == keys[matched]:
                matched += 1
            prefixes[start] = matched
        if prefixes and max(prefixes.values()) > 0:
            break
    if prefixes:
        top = sorted(prefixes, key=lambda st: (-prefixes[st], st))[:5]
        scored = [(prefixes[st], _similarity(pattern, model.lines[st:st + len(pattern)]), st)
                  for st in top]
        matched, score, start = max(scored, key=lambda t: (t[0], t[1], -t[2]))
        return start, matched, score
    # 2. The most informative line, by single-line similarity.
    informative = max(range(len(keys)), key=lambda i: len(keys[i]))
    if not keys[informative]:
        return None
    near = _closest_line(keys[informative], norm)
    if near is None:
        return None
    first = max(near - informative, 0)
    return first, 0, _similarity(pattern, model.lines[first:first + len(pattern)])


def _closest_line(key: str, lines: list[str]) -> int | None:
    import difflib

    try:
        from rapidfuzz import fuzz, process
    except ImportError:  # pragma: no cover - declared dependency
        close = difflib.get_close_matches(key, lines, n=1, cutoff=0.6)
        return lines.index(close[0]) if close else None
    found = process.extractOne(key, lines, scorer=fuzz.ratio, score_cutoff=60)
    return None if found is None else int(found[2])


def _similarity(a: list[str], b: list[str]) -> float:
    import difflib

    left, right = "\n".join(a), "\n".join(b)
    try:
        from rapidfuzz.distance import Levenshtein
    except ImportError:  # pragma: no cover - declared dependency
        return difflib.SequenceMatcher(None, left, right, autojunk=False).ratio()
    return float(Levenshtein.normalized_similarity(left, right))


def _bounded_diff(pattern: list[str], window: list[str], start: int, limit: int = 40) -> str:
    import difflib

    out = []
    matcher = difflib.SequenceMatcher(None, pattern, window, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            out.append(f"  {start + j1 + 1:>5} | {window[j1][:SNIPPET_CHARS]}" if i2 - i1 == 1
                       else f"        ({i2 - i1} equal lines)")
            continue
        if op == "insert" and i1 == len(pattern):
            # The file lines after the end of old_text are context, not a difference.
            out += [f"  {start + j + 1:>5} | {window[j][:SNIPPET_CHARS]}" for j in range(j1, j2)]
            continue
        out += [f"- {'':>5} | {_visible(line) if _strip(line) == _strip(window[j1 + k]) else line[:SNIPPET_CHARS]}"  # noqa: E501
                if j1 + k < j2 else f"- {'':>5} | {line[:SNIPPET_CHARS]}"
                for k, line in enumerate(pattern[i1:i2])]
        out += [f"+ {start + j + 1:>5} | {_visible(window[j]) if i1 + j - j1 < i2 and _strip(window[j]) == _strip(pattern[i1 + j - j1]) else window[j][:SNIPPET_CHARS]}"  # noqa: E501
                for j in range(j1, j2)]
    if len(out) > limit:
        out = [*out[:limit], f"... ({len(out) - limit} more diff lines)"]
    return "\n".join(out)


# ---------------------------------------------------------------------------------------------
# Rendering a located edit into replacement lines


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


Opcode = tuple[str, int, int, int, int]
LCS_MAX_CELLS = 40_000


def line_opcodes(a: list[str], b: list[str]) -> list[Opcode]:
    """``SequenceMatcher.get_opcodes`` for line lists, without importing difflib for the usual
    small edit (difflib pulls in ``re``): the common head and tail are trimmed, and a middle of
    at most ``LCS_MAX_CELLS`` line pairs is aligned by a longest common subsequence."""
    n, m = len(a), len(b)
    head = 0
    while head < n and head < m and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < n - head and tail < m - head and a[n - 1 - tail] == b[m - 1 - tail]:
        tail += 1
    a_mid, b_mid = a[head:n - tail], b[head:m - tail]
    if len(a_mid) * len(b_mid) > LCS_MAX_CELLS:
        import difflib

        return list(difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes())
    ops: list[Opcode] = []
    if head:
        ops.append(("equal", 0, head, 0, head))
    ops += _lcs_opcodes(a_mid, b_mid, head, head)
    if tail:
        ops.append(("equal", n - tail, n, m - tail, m))
    merged: list[Opcode] = []
    for op in ops:  # adjacent equal runs become one, as difflib reports them
        if merged and op[0] == "equal" == merged[-1][0]:
            merged[-1] = ("equal", merged[-1][1], op[2], merged[-1][3], op[4])
        else:
            merged.append(op)
    return merged


def _lcs_opcodes(a: list[str], b: list[str], da: int, db: int) -> list[Opcode]:
    n, m = len(a), len(b)
    if not n and not m:
        return []
    if not n:
        return [("insert", da, da, db, db + m)]
    if not m:
        return [("delete", da, da + n, db, db)]
    # lengths[i][j]: LCS of a[i:] and b[j:]
    lengths = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        row, below = lengths[i], lengths[i + 1]
        ai = a[i]
        for j in range(m - 1, -1, -1):
            row[j] = below[j + 1] + 1 if ai == b[j] else max(below[j], row[j + 1])
    pairs: list[tuple[int, int]] = []
    i = j = 0
    while i < n and j < m:
        if a[i] == b[j]:
            pairs.append((i, j))
            i += 1
            j += 1
        elif lengths[i + 1][j] >= lengths[i][j + 1]:
            i += 1
        else:
            j += 1
    ops: list[Opcode] = []
    i = j = 0
    for pi, pj in [*pairs, (n, m)]:
        if i < pi and j < pj:
            ops.append(("replace", da + i, da + pi, db + j, db + pj))
        elif i < pi:
            ops.append(("delete", da + i, da + pi, db + j, db + j))
        elif j < pj:
            ops.append(("insert", da + i, da + i, db + j, db + pj))
        if pi < n:
            if ops and ops[-1][0] == "equal" and ops[-1][2] == da + pi:
                _, s1, _, s2, _ = ops[-1]
                ops[-1] = ("equal", s1, da + pi + 1, s2, db + pj + 1)
            else:
                ops.append(("equal", da + pi, da + pi + 1, db + pj, db + pj + 1))
        i, j = pi + 1, pj + 1
    return ops


def _merge(model: FileModel, start: int, end: int, old_lines: list[str], new_lines: list[str],
           render_new: Callable[[str], str], ends_with_newline: bool,
           line_merge: Callable[[str, str, str], str] | None = None) -> list[tuple[str, str]]:
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


def _reindenter(model: FileModel, start: int, old_lines: list[str]) -> Callable[[str], str]:
    """Re-indent new lines from old's indentation into the file's (T3-T6, T8).

    A uniform shift moves every line by the same number of columns, keeping each line's own
    sub-indentation; a change of unit (tabs vs spaces, 2 vs 4) converts depths level by level.
    Lines are measured from old's first non-blank line, and may go shallower than it.
    """
    first = next((i for i, line in enumerate(old_lines) if line.strip()), 0)
    if start + first >= len(model.lines):
        return str
    old_base_str = leading_ws(old_lines[first]) if old_lines else ""
    old_base = columns(old_base_str)
    file_base = leading_ws(model.lines[start + first])
    file_base_cols = columns(file_base)
    window = model.lines[start:start + len(old_lines)]
    file_unit = model.indent_unit
    mode = "shift"
    old_depths = _relative_depths(old_lines)
    if len(window) == len(old_lines):
        mode = same_structure(old_depths, _relative_depths(window),
                              unit_columns(file_unit)) or "unit"
    old_tabs = any("\t" in leading_ws(line) for line in old_lines if line.strip())
    file_tabs = any("\t" in leading_ws(line) for line in window if line.strip())
    if old_tabs != file_tabs:
        mode = "unit"  # tabs vs spaces: convert level by level, never mix them in one indent
    old_w = _relative_unit(old_depths) or unit_columns(infer_indent_unit(old_lines))
    file_w = unit_columns(file_unit)
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
            return file_base + file_unit * levels + " " * rest + content
        return _indent_for(max(file_base_cols + levels * file_w + rest, 0), file_unit) + content

    return render


def render_edit(model: FileModel, located: Located) -> Edit:
    cand = located.candidate
    request = located.request
    transforms = list(request.transforms)
    if cand.tier in ("line_number", "scope"):  # a pure insertion before line cand.start
        new_lines = _pattern_lines(request.new)
        eol = model.majority_eol
        at = cand.start
        if at == len(model.lines) and model.lines and model.eols[-1] == "":
            # Appending to a file without a final newline: end the old last line, and keep
            # the file's "no final newline" state on the new last line.
            out = [(model.lines[-1], eol)] + [(line, eol) for line in new_lines]
            out[-1] = (out[-1][0], "")
            return Edit(located, at - 1, at, out, transforms)
        return Edit(located, at, at, [(line, eol) for line in new_lines], transforms)
    if cand.span is not None:  # exact: replace characters inside the affected lines
        first = cand.start
        last = cand.end
        line_start = model.line_starts[first]
        region_view = model.lf_view[line_start:model.line_starts[last]]
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
        out = _merge(model, first, last, old_lines, new_lines, lambda s: s, ends_nl)
        return Edit(located, first, last, out, transforms)
    if cand.tier == "similarity":
        return Edit(located, cand.start, cand.end, _merge_similar(model, located), transforms)
    old_lines = _pattern_lines(request.old)
    new_lines = _pattern_lines(request.new) if request.new else []
    render: Callable[[str], str]
    if cand.tier == "trailing_whitespace":
        render = str
    else:
        render = _reindenter(model, cand.start, old_lines)
        if render(old_lines[0] if old_lines else "") != (old_lines[0] if old_lines else ""):
            transforms.append("reindented")
    line_merge = None
    if cand.tier == "typography":
        swaps = _typographic_swaps(old_lines, model.lines[cand.start:cand.end])
        table = str.maketrans(swaps)
        indent_render = render
        if swaps:
            def render(line: str) -> str:
                return indent_render(line.translate(table))

            transforms.append("typography_restored")

        def line_merge(old: str, found: str, new: str) -> str:
            return _typography_merge(old, found, indent_render(new), table)

    # Whole-line tiers keep the region's final-newline state.
    out = _merge(model, cand.start, cand.end, old_lines, new_lines, render,
                 model.eols[cand.end - 1] != "", line_merge)
    return Edit(located, cand.start, cand.end, out, transforms)


def _typography_merge(old: str, found: str, new: str, table: dict[int, str]) -> str:
    """MATCHING 6.5 step 5: apply old->new character changes onto the file's line, so the
    file's own quotes and dashes survive in the parts of a changed line that were not edited."""
    import difflib

    o, f = old.strip(" \t"), found.strip(" \t")
    if len(o) != len(f) or any(a != b and a.translate(_TYPOGRAPHY) != b.translate(_TYPOGRAPHY)
                               for a, b in zip(o, f, strict=True)):
        return new.translate(table)
    indent = leading_ws(new)
    content = new[len(indent):]
    out = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, o, content,
                                                      autojunk=False).get_opcodes():
        out.append(f[i1:i2] if op == "equal" else content[j1:j2].translate(table))
    return indent + "".join(out)


def _typographic_swaps(old_lines: list[str], file_lines: list[str]) -> dict[str, str]:
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
            if x.translate(_TYPOGRAPHY) != y.translate(_TYPOGRAPHY) or \
                    swaps.get(x, y) != y:
                return {}
            if x.translate(_TYPOGRAPHY) != x:  # only undo the request's typographic characters
                swaps[x] = y
    return swaps


def already_applied(model: FileModel, request: Request) -> Candidate | None:
    """The new text is in the file once and the old text is not: nothing left to do.

    Not when new text is part of old text (a deletion): its presence then proves nothing.
    """
    new = request.new
    if len("".join(new.split())) < ALREADY_APPLIED_MIN_CHARS:
        return None
    if new.strip() in request.old:
        # A deletion: done only if every line it deletes is gone from the file (otherwise old
        # text merely failed to match, and "nothing to do" would be a lie).
        kept = {_typography(line) for line in new.split("\n")}
        deleted = [key for key in (_typography(line) for line in request.old.split("\n"))
                   if key and key not in kept]
        index = model.index("typography")
        if not deleted or any(key in index for key in deleted):
            return None
    found = find_exact(model, new, limit=2)
    if len(found) == 1:
        return found[0]
    return None


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


# ---------------------------------------------------------------------------------------------
# Applying several edits to one file


class Applied:
    """The new text of a file after all its edits, with per-edit reports."""

    def __init__(self, text: str, reports: list[dict[str, Any]], changed: bool,
                 warnings: list[str]) -> None:
        self.text = text
        self.reports = reports
        self.changed = changed
        self.warnings = warnings


def apply_requests(text: str, requests: list[Request]) -> Applied:
    """Locate every request against the original text, refuse overlaps, apply all or nothing."""
    model = FileModel(text)
    located: list[Located] = []
    failures: list[tuple[int, MatchError]] = []
    noops: list[int] = []
    for i, request in enumerate(requests):
        normalize_request(request)
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
                segments = locate_elided(model, request)
                if segments is not None:
                    located += segments
                    continue
                done = already_applied(model, request)
                if done is None:
                    raise
                noops.append(i)
                located.append(_noop(done, request))
                continue
            if insertion_already_applied(model, found):
                noops.append(i)
                found.already_applied = True
            located.append(found)
        except MatchError as err:
            failures.append((i, err))
    if failures:
        combined = _combine_failures(requests, failures, located)
        if len(requests) > 1 and all(err.code == "no_match" for _, err in failures):
            sequential = _apply_sequentially(text, requests, {i for i, _ in failures})
            if sequential is not None:
                return sequential
        raise combined
    edits = [render_edit(model, loc) for loc in located
             if not loc.already_applied and not loc.request.context_only]
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
    pieces: list[str] = []
    cursor = 0
    for edit in ordered:
        pieces += [model.lines[i] + model.eols[i] for i in range(cursor, edit.start)]
        pieces += [line + eol for line, eol in edit.lines]
        cursor = edit.end
    pieces += [model.lines[i] + model.eols[i] for i in range(cursor, len(model.lines))]
    new_text = "".join(pieces)
    _check_outside_unchanged(model, ordered, new_text)
    reports = []
    warnings: list[str] = []
    for loc in located:
        cand = loc.candidate
        report: dict[str, Any] = {
            "label": loc.request.label.strip(": ") or None,
            "start_line": cand.first_line, "end_line": cand.last_line,
            "matched_with": "already_applied" if loc.already_applied else (
                "unescape" if loc.unescaped else loc.tier),
            "transforms": list(loc.request.transforms),
            "disambiguated_by": loc.disambiguated_by,
        }
        reports.append(report)
        warnings += [f"{loc.request.label}{w}" for w in loc.warnings]
    return Applied(new_text, reports, new_text != text, warnings)


def _apply_sequentially(text: str, requests: list[Request], failed: set[int]) -> Applied | None:
    """MATCHING 6.7.2: patches written as a sequence (each against the previous result).

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
        try:
            step = apply_requests(current, [again])
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


def _split_markers(text: str) -> tuple[list[str], list[str]]:
    """Segments of ``text`` between elision marker lines, and the markers themselves."""
    segments: list[list[str]] = [[]]
    markers: list[str] = []
    for line in text.split("\n"):
        if _rx("elision").match(line):
            markers.append(line.strip())
            segments.append([])
        else:
            segments[-1].append(line)
    return ["\n".join(seg) for seg in segments], markers


def locate_elided(model: FileModel, request: Request) -> list[Located] | None:
    """T7: old text with ``...`` markers, each segment located in order, the gaps kept as is.

    New text must carry the same number of markers, so each old segment pairs with a new one
    (aider's rule). Returns None when old text has no markers; refuses when they do not pair.
    """
    old_segments, old_markers = _split_markers(request.old)
    if not old_markers:
        return None
    new_segments, new_markers = _split_markers(request.new)
    if len(new_markers) != len(old_markers):
        raise MatchError(
            "no_match", f"{request.label}old_text elides code with {len(old_markers)} marker "
            f"line(s) ({old_markers[0]!r}) but new_text has {len(new_markers)}",
            hint="repeat each marker line of old_text in new_text at the same place, or send the "
            "literal code instead of markers")
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
        part = Request(old_seg + "\n" if not old_seg.endswith("\n") else old_seg,
                       new_seg + "\n" if new_seg and not new_seg.endswith("\n") else new_seg,
                       label=f"{request.label}segment {k + 1}: ")
        if out:
            part.after_line = after
        else:
            part.start_line, part.end_line = request.start_line, request.end_line
        part.context_only = old_seg == new_seg
        found = locate(model, part)
        found.tier = "elision"
        after = max(found.candidate.end, found.candidate.start + 1)
        out.append(found)
    return out


def _noop(cand: Candidate, request: Request) -> Located:
    loc = Located(cand, request)
    loc.already_applied = True
    loc.warnings.append(f"new_text is already present at lines {cand.first_line}-"
                        f"{cand.last_line} and old_text is not: nothing to do")
    return loc


def _check_outside_unchanged(model: FileModel, edits: list[Edit], new_text: str) -> None:
    """MATCHING I3: bytes before the first and after the last edited line are untouched."""
    if not edits:
        return
    original = model.text
    head = "".join(model.lines[i] + model.eols[i] for i in range(edits[0].start))
    tail = "".join(model.lines[i] + model.eols[i] for i in range(edits[-1].end,
                                                                   len(model.lines)))
    if not (original.startswith(head) and new_text.startswith(head) and
            original.endswith(tail) and new_text.endswith(tail)):
        raise AssertionError("edit would change bytes outside the matched region")


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
    summary = "; ".join(f"patches[{i}]: {err.message}" for i, err in failures)
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
    normalize_request(request)
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
        cands = find_lines(model, request.old, "trailing_whitespace")
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
    pieces: list[str] = []
    cursor = 0
    for cand in chosen:
        loc = Located(cand, request)
        edit = render_edit(model, loc)
        pieces += [model.lines[i] + model.eols[i] for i in range(cursor, edit.start)]
        pieces += [line + eol for line, eol in edit.lines]
        cursor = edit.end
        requests.append({"start_line": cand.first_line, "end_line": cand.last_line,
                         "matched_with": cand.tier})
    pieces += [model.lines[i] + model.eols[i] for i in range(cursor, len(model.lines))]
    new_text = "".join(pieces)
    return Applied(new_text, requests, new_text != text, [])


def _restore_eols(model: FileModel, new_view: str) -> str:
    """Map an edited LF view back to the file's line endings with a line merge."""
    new_model_lines = new_view.split("\n")
    ends_nl = new_view.endswith("\n")
    if ends_nl:
        new_model_lines.pop()
    old_lines = list(model.lines)
    out = _merge(model, 0, len(model.lines), old_lines, new_model_lines, lambda s: s,
                 ends_nl or not model.lines)
    if not ends_nl and out:
        out[-1] = (out[-1][0], "")
    return "".join(line + eol for line, eol in out)




def _range(start: int, stop: int, offset: int) -> str:
    """difflib's unified range format: "N" for one line, "N,len" else (N-1 when empty)."""
    beginning, length = start + 1 + offset, stop - start
    if length == 1:
        return str(beginning)
    if not length:
        beginning -= 1
    return f"{beginning},{length}"


def _grouped(codes: list[Opcode], n: int) -> list[list[Opcode]]:
    """``SequenceMatcher.get_grouped_opcodes``: hunks with ``n`` lines of context."""
    if not codes:
        codes = [("equal", 0, 1, 0, 1)]
    codes = list(codes)
    if codes[0][0] == "equal":
        tag, i1, i2, j1, j2 = codes[0]
        codes[0] = (tag, max(i1, i2 - n), i2, max(j1, j2 - n), j2)
    if codes[-1][0] == "equal":
        tag, i1, i2, j1, j2 = codes[-1]
        codes[-1] = (tag, i1, min(i2, i1 + n), j1, min(j2, j1 + n))
    groups: list[list[Opcode]] = []
    group: list[Opcode] = []
    for tag, i1, i2, j1, j2 in codes:
        lo_a, lo_b = i1, j1
        if tag == "equal" and i2 - i1 > 2 * n:
            group.append((tag, i1, min(i2, i1 + n), j1, min(j2, j1 + n)))
            groups.append(group)
            group = []
            lo_a, lo_b = max(i1, i2 - n), max(j1, j2 - n)
        group.append((tag, lo_a, i2, lo_b, j2))
    if group and not (len(group) == 1 and group[0][0] == "equal"):
        groups.append(group)
    return groups


def unified_diff(path: str, before: str, after: str, context: int = 3,
                 first_line: int = 1) -> str:
    """A unified diff in difflib's format, from ``line_opcodes`` (no difflib import on the hot
    path; the common head and tail are trimmed first, so a one-line change in a 50,000-line
    file costs microseconds). ``first_line`` numbers the hunks when ``before`` is an excerpt
    starting at that line."""
    a = before.splitlines(keepends=True)
    b = after.splitlines(keepends=True)
    offset = first_line - 1
    out: list[str] = []
    for group in _grouped(line_opcodes(a, b), context):
        if not out:
            out += [f"--- a/{path}\n", f"+++ b/{path}\n"]
        first, last = group[0], group[-1]
        out.append(f"@@ -{_range(first[1], last[2], offset)} "
                   f"+{_range(first[3], last[4], offset)} @@\n")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out += [" " + line for line in a[i1:i2]]
                continue
            if tag in ("replace", "delete"):
                out += ["-" + line for line in a[i1:i2]]
            if tag in ("replace", "insert"):
                out += ["+" + line for line in b[j1:j2]]
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
                   for line in out)

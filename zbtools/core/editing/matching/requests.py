"""Request normalisation: one edit's old and new text, made ready for the tiers to compare.

Owns ``Request`` (old and new text, the ``start_line``/``end_line``/``occurrence`` hints, a label
that prefixes messages, the tolerances it allows (``tiers``, ``allows``: ``ALL_TIERS``,
``DEFAULT_TIERS``, docs/internals/matching.md#limited-tiers), and the fields other producers
set: ``@@`` scope lines, an insertion point, hash anchors, the bounds of an elision segment)
and ``normalize_request``: CRLF to LF, a leading BOM dropped, and ``cat -n`` (or
read-with-hashes) line-number prefixes stripped when every non-blank line of old text carries
consecutive ones, ``line_numbers`` is allowed and old text as sent is not in the file word for
word (then the digits are the file's own); the first number then becomes a
``start_line`` hint and ``line_numbers_stripped`` is recorded in ``transforms``. Also the text
tests the engine applies to a request: ``strip_line_numbers``, ``has_placeholder`` (an
omission placeholder in new text that old text lacks), ``unescape_once`` (one level of
backslash escapes, for the T6 retry), ``split_markers`` (text cut at T7 elision marker lines)
and ``pattern_lines`` (a text as the lines a whole-line tier compares).

Limits: normalisation never refuses; the refusals it enables (``no_change``,
``placeholder_in_new``) are raised by ``apply``. Line numbers are stripped from new text only
when all of its non-blank lines carry them too. The regular expressions are compiled on first
use, so a plain exact edit never imports ``re``.

The bottom of ``matching``: imports no other part.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from collections.abc import Callable, Collection

# Compiled on first use: ``re`` (with ``enum``) costs ~5 ms of a cold call, and a plain exact
# edit never needs a regular expression.
_PATTERN_SOURCES: dict[str, tuple[str, bool]] = {
    # "12→" is Claude Code's read format: the text starts right after the arrow
    "line_number": (r"^\s*(\d+)(?::[0-9a-f]{6}\t|\t|\s*→|\s*[│|:]\s?)", False),
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


# Every tolerance a request may be limited to (docs/internals/matching.md#limited-tiers):
# the ladder's tiers, in order, then what else reads old text other than as sent.
ALL_TIERS = ("exact", "quotes", "trailing_whitespace", "indentation", "inner_whitespace",
             "typography", "unescape", "elision", "near_miss", "similarity", "already_applied",
             "line_numbers", "sequential")
# What a request allows when no limit is set: everything but ``quotes`` (the canonical
# ladder folds quotes in ``typography``; ``quotes`` is Claude Code's substring fold).
DEFAULT_TIERS = frozenset(ALL_TIERS) - {"quotes"}

_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "'": "'", "\\": "\\"}


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
        self.ends_elision = False  # an elision's last segment: it ends where old text does
        self.starts_line = False  # an elision segment after a marker: it starts a line
        self.whole_lines = False  # a patch hunk: old matches whole lines, never mid-line
        # the tolerances allowed (None: ``DEFAULT_TIERS``); ``exact`` is always allowed
        self.tiers: frozenset[str] | None = None

    def allows(self, tier: str) -> bool:
        """Whether this request may be matched or read with ``tier``."""
        return tier == "exact" or tier in (self.tiers if self.tiers is not None
                                           else DEFAULT_TIERS)

    @property
    def limited(self) -> bool:
        """Whether a caller limited the tiers (an exact match is then a plain replacement)."""
        return self.tiers is not None and self.tiers != DEFAULT_TIERS


def _lf(text: str) -> str:
    text = text.removeprefix("\ufeff")
    return text.replace("\r\n", "\n")


def strip_line_numbers(text: str) -> tuple[str, int | None]:
    """Remove ``cat -n``-style prefixes when every non-blank line has consecutive ones."""
    lines = text.split("\n")
    if not all(_numbered_shape(line) for line in lines if line.strip()):
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


def _numbered_shape(line: str) -> bool:
    """Whether ``line`` may carry a line-number prefix: digits after the indentation, then a
    tab, or a separator (``│ | → :``) after optional whitespace. Every line the
    ``line_number`` expression matches passes; most lines that start with a number (data,
    numbered text) do not, and then ``re`` is not imported."""
    body = line.lstrip()
    digits = next((i for i, ch in enumerate(body) if not ch.isdigit()), len(body))
    rest = body[digits:]
    return digits > 0 and (rest[:1] == "\t" or rest.lstrip()[:1] in ("│", "|", "→", ":"))


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def ellipsis_is_code(lines: list[str], i: int) -> bool:
    """Whether line ``i``, a bare ``...``, is Python's Ellipsis as a block's whole body.

    It is when the previous non-blank line opens a block (ends with ``:``, as ``def``,
    ``class`` and ``if`` lines do), the ``...`` is indented deeper than that line, and the next
    non-blank line (if any) is back at that line's depth or shallower: an overload or protocol
    stub, an abstract method's body. Elsewhere a bare ``...`` stands for elided lines.
    """
    if lines[i].strip() != "...":
        return False
    prev = next((line for line in reversed(lines[:i]) if line.strip()), None)
    if prev is None or not prev.rstrip().endswith(":") or _indent(lines[i]) <= _indent(prev):
        return False
    after = next((line for line in lines[i + 1:] if line.strip()), None)
    return after is None or _indent(after) <= _indent(prev)


def has_placeholder(new: str, old: str) -> str | None:
    """An omission placeholder line of ``new`` that ``old`` does not contain, if any.

    A bare ``...`` that is a Python block's whole body (``ellipsis_is_code``) is code, not a
    placeholder.
    """
    lowered = new.lower()
    if "..." not in new and "…" not in new and not any(
            word in lowered for word in ("rest of", "existing code", "unchanged")):
        return None  # cheap test first: the regular expression is rarely needed
    old_lines = {line.strip() for line in old.split("\n")}
    lines = new.split("\n")
    for i, line in enumerate(lines):
        if line.strip() and line.strip() not in old_lines and \
                _rx("placeholder").search(line) and not ellipsis_is_code(lines, i):
            return line.strip()
    return None


def normalize_request(request: Request, present: Callable[[str], bool] | None = None
                      ) -> Request:
    """Normalise ``request`` in place. ``present(old)`` tells whether old text as sent stands
    word for word in the file: text that only looks numbered (``12:30 lunch``, a dict's
    ``2: "two",`` rows, TSV) is then the file's own and keeps its digits."""
    old, new = _lf(request.old), _lf(request.new)
    if not request.allows("line_numbers"):
        request.old, request.new = old, new
        return request
    stripped, first = strip_line_numbers(old)
    if first is not None and stripped != old and (present is None or not present(old)):
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


def pattern_lines(old: str) -> list[str]:
    """``old`` as the lines a whole-line tier compares: a final newline ends the last line."""
    lines = old.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def split_marker_lines(text: str, code_aware: bool = True, code: Collection[str] = (),
                       ) -> tuple[list[list[str]], list[str]]:
    """Segments of ``text`` between elision marker lines, as lists of lines, and the markers.

    A bare ``...`` that is a Python block's whole body (``ellipsis_is_code``) is code, not a
    marker, unless ``code_aware`` is false (old text that was not found as code). Unlike
    ``split_markers`` it tells a segment of one blank line (``[""]``) from no line at all
    (``[]``: a marker at the start or the end, or two markers in a row); a final newline ends
    the last line rather than starting an empty one. Lines of ``code`` are never markers.
    """
    return _split_at_markers(pattern_lines(text), code_aware, code)


def _split_at_markers(lines: list[str], code_aware: bool, code: Collection[str] = ()
                      ) -> tuple[list[list[str]], list[str]]:
    segments: list[list[str]] = [[]]
    markers: list[str] = []
    for i, line in enumerate(lines):
        if _rx("elision").match(line) and line not in code and \
                not (code_aware and ellipsis_is_code(lines, i)):
            markers.append(line.strip())
            segments.append([])
        else:
            segments[-1].append(line)
    return segments, markers


def split_markers(text: str, code_aware: bool = True, code: Collection[str] = ()
                  ) -> tuple[list[str], list[str]]:
    """Segments of ``text`` between elision marker lines, and the markers themselves.

    A bare ``...`` that is a Python block's whole body (``ellipsis_is_code``) is code, not a
    marker, unless ``code_aware`` is false (old text that was not found as code); so is a line
    of ``code`` (new text's copy of a ``...`` body old text has).
    """
    segments, markers = _split_at_markers(text.split("\n"), code_aware, code)
    return ["\n".join(seg) for seg in segments], markers

"""The oracle: an independent, brute-force labeller of edit cases
(docs/internals/matching.md#oracle).

It never looks at zbtools' matcher. It re-states the tier ladder of section 6.4 (T1 exact,
T2 trailing whitespace, T3 indentation, T4 inner whitespace, T5 typography, T6 one-level
unescaping of T1-T5) with its own normalisers, counts every window of the file that each tier
accepts, and derives the label of a case from where the truth span stands among them.

A re-statement can be stricter or looser than a correct matcher on corner cases (is ``x = 1``
inside ``x = 10`` a single-line T2 match? is a two-level indent jump a unit change?). So every
tier is evaluated twice: ``strict`` accepts only what every reasonable reading accepts, ``loose``
everything some reasonable reading could accept. A matcher's candidate set at a tier lies
between the two; the oracle enumerates the outcomes that are possible under that bound
(``apply@X``, ``ambiguous``, ``not_found``, ``noop``) and labels the case:

* only ``apply@truth`` possible -> ``must_apply``;
* only refusals possible -> ``must_refuse`` (with the acceptable error codes);
* ``apply@truth`` or a refusal -> ``either``;
* only the already-applied no-op possible -> ``noop``, which a refusal that leaves the file as
  it was also passes when it has the code the case lists: ``no_change`` for an insertion whose
  added text already stands beside an old text that still stands (a resend and a wish for a
  second copy look alike), ``ambiguous_match`` for an edit made whose old text a tier past T6
  (near miss, similarity), which this oracle does not model, may still find elsewhere;
* ``apply`` somewhere else possible -> ``discard`` (the case is ill-posed: a legitimate matcher
  could edit another place, so it cannot be scored; the generator drops it).

Hints (``start_line``/``end_line`` or line-number prefixes) filter candidates of one tier as in
section 6.4: keep those intersecting ``[start - slack, end + slack]``, ``slack = max(5, len)``.
"""

from __future__ import annotations

import functools
import itertools
import math
import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

MUST_REFUSE_FAMILIES = frozenset({"P14", "P18", "P19"})
DESTRUCTIVE_FAMILIES = frozenset({"P10", "P13"})
CONFLICT_CODES = ("no_match", "edit_conflict")
ALREADY_APPLIED_MIN = 8  # non-whitespace characters (hermes)
T4_SINGLE_LINE_MIN = 12
SUBSET_ENUMERATION_LIMIT = 8

IDENTICAL = "old_text == new_text"  # the reason of a no-op whose texts are equal

TIERS = ("exact", "trailing_whitespace", "indentation", "inner_whitespace", "typography")


# --------------------------------------------------------------------------------------------
# The oracle's own view of a file


@dataclass(frozen=True)
class OFile:
    lines: tuple[str, ...]
    line_offsets: tuple[int, ...]  # offset of each line in ``lf``, plus len(lf)
    lf: str
    _keys: dict[tuple[str, bool], tuple[str, ...]] = field(default_factory=dict, compare=False)
    _index: dict[str, dict[str, list[int]]] = field(default_factory=dict, compare=False)

    @staticmethod
    def from_bytes(raw: bytes) -> OFile:
        return _ofile_cached(raw)

    @staticmethod
    def parse(raw: bytes) -> OFile:
        if raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        text = raw.decode("utf-8", "surrogateescape")
        parts = text.split("\n")
        tail = parts.pop()
        lines = [p[:-1] if p.endswith("\r") else p for p in parts]
        if tail:
            lines.append(tail)
        lf = "\n".join(lines) + ("\n" if text.endswith("\n") else "")
        offsets = [0]
        for line in lines:
            offsets.append(offsets[-1] + len(line) + 1)
        offsets[-1] = len(lf)
        return OFile(tuple(lines), tuple(offsets), lf)

    @functools.cached_property
    def indent_unit(self) -> int:
        """Width of the file's indent unit in spaces: the shallowest positive space indent."""
        widths = [len(x) - len(x.lstrip(" ")) for x in self.lines if x.startswith(" ")]
        return min((w for w in widths if w), default=4)

    def keys(self, tier: str, loose: bool) -> tuple[str, ...]:
        """``content_key`` of every line, computed once per file and reading."""
        got = self._keys.get((tier, loose))
        if got is None:
            got = tuple(content_key(tier, line, loose) for line in self.lines)
            self._keys[(tier, loose)] = got
        return got

    def index(self, tier: str) -> dict[str, list[int]]:
        """Strict key -> 0-based line numbers holding it."""
        got = self._index.get(tier)
        if got is None:
            got = {}
            for i, key in enumerate(self.keys(tier, False)):
                got.setdefault(key, []).append(i)
            self._index[tier] = got
        return got

    def line_of(self, offset: int) -> int:
        """1-based line holding character ``offset`` of ``lf``."""
        lo, hi = 0, len(self.lines) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.line_offsets[mid] <= offset:
                lo = mid
            else:
                hi = mid - 1
        return lo + 1


@functools.lru_cache(maxsize=32)
def _ofile_cached(raw: bytes) -> OFile:
    return OFile.parse(raw)


@dataclass(frozen=True)
class Span:
    """A region of the file: 1-based inclusive lines; columns (0-based, end exclusive) or None
    for whole lines."""

    start_line: int
    end_line: int
    start_col: int | None = None
    end_col: int | None = None

    def to_json(self) -> dict[str, int | None]:
        return {"start_line": self.start_line, "end_line": self.end_line,
                "start_col": self.start_col, "end_col": self.end_col}

    @staticmethod
    def from_json(data: dict[str, Any]) -> Span:
        return Span(int(data["start_line"]), int(data["end_line"]), data.get("start_col"),
                    data.get("end_col"))


@dataclass(frozen=True)
class Cand:
    """A candidate location found by a tier."""

    start_line: int
    end_line: int
    key: tuple[Any, ...]  # identity: ("c", a, b) chars of lf, ("l", s, e), ("s", line, n)
    exact: bool = False  # True when it is exactly the truth


@dataclass
class Verdict:
    label: str  # must_apply | must_refuse | either | noop | discard
    refuse_codes: tuple[str, ...] = ()
    reason: str = ""
    tier: str | None = None  # first tier whose strict set is non-empty
    candidates: list[tuple[int, int]] = field(default_factory=list)
    outcomes: list[str] = field(default_factory=list)
    truth_in_candidates: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"label": self.label, "refuse_codes": list(self.refuse_codes),
                "reason": self.reason, "tier": self.tier,
                "candidates": [list(c) for c in self.candidates], "outcomes": self.outcomes,
                "truth_in_candidates": self.truth_in_candidates}


# --------------------------------------------------------------------------------------------
# Request normalisation (section 6.3)

_PREFIX_CATN = re.compile(r"^ *(\d+)\t")
_PREFIX_SEP = re.compile(r"^\s*(\d+)(?:\s*→|\s*[│|:]\s?)")


def normalize_request_text(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n").removeprefix("\ufeff")


def strip_line_numbers(text: str) -> tuple[str, int | None]:
    """Strip read-tool prefixes when every non-blank line has one and they are consecutive."""
    ends_nl = text.endswith("\n")
    rows = text.split("\n")
    if ends_nl:
        rows.pop()
    if not rows or not any(r.strip() for r in rows):
        return text, None
    for pattern in (_PREFIX_CATN, _PREFIX_SEP):
        numbers: list[int] = []
        stripped: list[str] = []
        for row in rows:
            if not row.strip():
                stripped.append(row)
                continue
            m = pattern.match(row)
            if m is None:
                break
            numbers.append(int(m.group(1)))
            stripped.append(row[m.end():])
        else:
            if numbers and all(b == a + 1 for a, b in itertools.pairwise(numbers)):
                return "\n".join(stripped) + ("\n" if ends_nl else ""), numbers[0]
    return text, None


def strip_new_line_numbers(text: str) -> str:
    """``new`` loses its prefixes only if every non-blank line carries one (any numbering)."""
    ends_nl = text.endswith("\n")
    rows = text.split("\n")
    if ends_nl:
        rows.pop()
    for pattern in (_PREFIX_CATN, _PREFIX_SEP):
        out: list[str] = []
        for row in rows:
            if not row.strip():
                out.append(row)
                continue
            m = pattern.match(row)
            if m is None:
                break
            out.append(row[m.end():])
        else:
            if any(r.strip() for r in rows):
                return "\n".join(out) + ("\n" if ends_nl else "")
    return text


PLACEHOLDER_RE = re.compile(
    r"^[ \t]*(?:(?:#|//|/\*|<!--|--|;)[ \t]*)?(?:\.\.\.|…)[ \t]*(?:\*/|-->)?[ \t]*$"
    r"|(?:#|//|/\*|<!--)[ \t]*(?:\.\.\.|…)?[ \t]*"
    r"(?:rest of (?:the )?(?:code|file|function)|existing code|unchanged)\b",
    re.IGNORECASE | re.MULTILINE)


def has_placeholder(text: str) -> bool:
    return bool(PLACEHOLDER_RE.search(text))


# --------------------------------------------------------------------------------------------
# Normalisers (the oracle's own; strict and loose readings)

_STRICT_TYPO = {
    **dict.fromkeys("\u2018\u2019\u201a\u201b", "'"),
    **dict.fromkeys("\u201c\u201d\u201e\u201f", '"'),
    **dict.fromkeys("\u2010\u2011\u2012\u2013\u2212", "-"),
    **dict.fromkeys("\u00a0\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f"
                    "\u205f\u3000", " "),
    "\u2026": "...",
}
_STRICT_TABLE = str.maketrans(_STRICT_TYPO)
_LOOSE_TABLE = str.maketrans({**_STRICT_TYPO, "\u2014": "-", "\u2015": "-", "\u2032": "'",
                              "\u2033": '"', "\u00ab": '"', "\u00bb": '"', "\u2039": "'",
                              "\u203a": "'", "\u2000": " ", "\u2001": " ", "\ufeff": ""})
_WS_RUN = re.compile(r"[ \t]+")
_ANY_WS = re.compile(r"\s+")


def typo_strict(s: str) -> str:
    return unicodedata.normalize("NFC", s).translate(_STRICT_TABLE)


def typo_loose(s: str) -> str:
    out = unicodedata.normalize("NFKC", s).translate(_LOOSE_TABLE)
    while "--" in out:
        out = out.replace("--", "-")
    return out


def content_key(tier: str, line: str, loose: bool) -> str:
    """What a tier compares of one line, besides indentation (handled separately at T3+)."""
    if tier == "trailing_whitespace":
        return line.rstrip() if loose else line.rstrip(" \t")
    if tier == "indentation":
        return line.strip() if loose else line.strip(" \t")
    if tier == "inner_whitespace":
        return _ANY_WS.sub("", line) if loose else _WS_RUN.sub(" ", line.strip(" \t"))
    if tier == "typography":
        if loose:
            return _ANY_WS.sub("", typo_loose(line))
        return _WS_RUN.sub(" ", typo_strict(line).strip(" \t"))
    raise ValueError(tier)


def _lead(line: str) -> str:
    return line[:len(line) - len(line.lstrip(" \t"))]


def _profile(block: Sequence[str]) -> tuple[str, list[int]] | None:
    """(indent character, widths relative to the first non-blank line) of a block whose leads
    use one character only; ``""`` for a block without indentation; None for mixed leads."""
    leads = [_lead(line) for line in block if line.strip(" \t")]
    if not leads:
        return "", []
    chars = set("".join(leads))
    if len(chars) > 1:
        return None
    base = len(leads[0])
    return (chars.pop() if chars else ""), [len(lead) - base for lead in leads]


def _unit(char: str, rel: Sequence[int]) -> int:
    positive = [abs(x) for x in rel if x]
    if char == "\t" or not positive:
        return 1
    return math.gcd(*positive)


def indent_equivalent_strict(old: Sequence[str], window: Sequence[str], file_unit: int) -> bool:
    """Equal relative depth under every plausible reading of "depth in indent units":

    A. a uniform shift, or a unit change (tab <-> N spaces, or N <-> M spaces) where each
       space unit is the gcd of that block's relative indents (2, 4 or 8);
    B. each block's depths in its own unit (tab, or gcd of its relative indents);
    C. old in its own unit, the window in the file's unit (``file_unit`` spaces; 1 for tabs).

    Only when all three agree is a window a candidate every conformant matcher must see."""
    po, pw = _profile(old), _profile(window)
    if po is None or pw is None:  # mixed tabs and spaces: only an identical layout is safe
        lo = [_lead(x) for x in old if x.strip(" \t")]
        lw = [_lead(x) for x in window if x.strip(" \t")]
        return bool(lo) and len(lo) == len(lw) and all(
            a.startswith(lo[0]) and b.startswith(lw[0]) and a[len(lo[0]):] == b[len(lw[0]):]
            for a, b in zip(lo, lw, strict=True))
    (co, ro), (cw, rw) = po, pw
    if len(ro) != len(rw):
        return False
    if ro == rw and (co == cw or not any(ro)):
        return True  # identical relative layout: a uniform shift, whatever the unit readings
    # A
    if co == cw == " " and ro != rw:  # a unit change between space widths (2 <-> 4 ...)
        go, gw = _unit(" ", ro), _unit(" ", rw)
        a_ok = go in (2, 4, 8) and gw in (2, 4, 8) and \
            [Fraction(x, go) for x in ro] == [Fraction(x, gw) for x in rw]
    elif co == cw or not co or not cw:
        a_ok = ro == rw
    else:
        tabs, spaces = (ro, rw) if co == "\t" else (rw, ro)
        unit = _unit(" ", spaces)
        a_ok = (not any(spaces) and not any(tabs)) or (
            unit in (2, 4, 8) and [x * unit for x in tabs] == spaces)
    if not a_ok:
        return False
    uo = _unit(co, ro)
    depth_o = [Fraction(x, uo) for x in ro]
    # B
    uw = _unit(cw, rw)
    if depth_o != [Fraction(x, uw) for x in rw]:
        return False
    # C
    uf = 1 if cw == "\t" else file_unit
    return depth_o == [Fraction(x, uf) for x in rw]


def indent_equivalent_loose(old: Sequence[str], window: Sequence[str]) -> bool:
    """Same shape of indentation changes (deeper / same / shallower), any unit."""

    def widths(block: Sequence[str]) -> list[int]:
        return [len(_lead(line).expandtabs(8)) for line in block if line.strip()]

    wo, ww = widths(old), widths(window)

    def sign(x: int) -> int:
        return (x > 0) - (x < 0)

    return [sign(b - a) for a, b in itertools.pairwise(wo)] == \
        [sign(b - a) for a, b in itertools.pairwise(ww)]


# --------------------------------------------------------------------------------------------
# Candidate search


@dataclass
class Query:
    old: str  # normalised request text (LF, no BOM, prefixes stripped)
    lines: list[str]  # old split into lines (without a trailing empty line)
    ends_nl: bool

    @staticmethod
    def of(old: str) -> Query:
        ends_nl = old.endswith("\n")
        rows = old.split("\n")
        if ends_nl:
            rows.pop()
        return Query(old, rows, ends_nl)


def exact_candidates(f: OFile, old: str) -> tuple[list[Cand], list[Cand]]:
    """T1: every occurrence of ``old`` in the LF view (loose: overlapping ones too)."""
    loose: list[Cand] = []
    pos = f.lf.find(old)
    while pos != -1 and old:
        end = pos + len(old)
        loose.append(Cand(f.line_of(pos), f.line_of(end - 1), ("c", pos, end)))
        pos = f.lf.find(old, pos + 1)
    strict: list[Cand] = []
    stop = -1
    for cand in loose:
        if cand.key[1] >= stop:
            strict.append(cand)
            stop = cand.key[2]
    return strict, loose


def _single_line_candidates(f: OFile, tier: str, line: str, loose: bool) -> list[Cand]:
    if loose:
        needle = content_key(tier, line, True)
        out: list[Cand] = []
        if not needle:
            return out
        for i, hay in enumerate(f.keys(tier, True)):
            if needle not in hay:
                continue
            start = hay.find(needle)
            n = 0
            while start != -1:
                # the first occurrence on a line is the same location as a whole-line match
                key = ("l", i + 1, i + 1) if n == 0 else ("s", i + 1, n)
                out.append(Cand(i + 1, i + 1, key))
                n += 1
                start = hay.find(needle, start + 1)
        return out
    if tier in ("inner_whitespace", "typography") and len(_ANY_WS.sub("", line)) < \
            T4_SINGLE_LINE_MIN:
        return []
    needle = content_key(tier, line, False)
    return [Cand(i + 1, i + 1, ("l", i + 1, i + 1)) for i in f.index(tier).get(needle, [])]


def line_candidates(f: OFile, tier: str, q: Query, loose: bool) -> list[Cand]:
    """T2-T5 over whole-line windows (single-line old: also inside one line when loose)."""
    k = len(q.lines)
    if k == 0:
        return []
    if k == 1:
        return _single_line_candidates(f, tier, q.lines[0], loose)
    keys_old = tuple(content_key(tier, line, loose) for line in q.lines)
    if tier in ("inner_whitespace", "typography") and not loose and \
            sum(1 for x in q.lines if x.strip()) < 2:
        return []
    file_keys = f.keys(tier, loose)
    n = len(f.lines)
    starts: Iterable[int]
    if not loose:
        starts = f.index(tier).get(keys_old[0], [])
    elif k >= 3:
        middle = f.keys(tier, True)
        starts = [i for i in range(n - k + 1) if middle[i + 1] == keys_old[1]]
    else:
        starts = range(n - k + 1)
    out: list[Cand] = []
    for i in starts:
        if i + k > n:
            continue
        window = f.lines[i:i + k]
        wkeys = file_keys[i:i + k]
        if loose:
            if not (wkeys[0].endswith(keys_old[0]) and wkeys[-1].startswith(keys_old[-1])):
                continue
            if wkeys[1:-1] != keys_old[1:-1]:
                continue
            if any(bool(a) != bool(b) for a, b in zip(wkeys, keys_old, strict=True)):
                continue
            if tier != "trailing_whitespace" and k >= 3 and \
                    not indent_equivalent_loose(q.lines[1:-1], window[1:-1]):
                continue
        else:
            if wkeys != keys_old:
                continue
            if tier != "trailing_whitespace" and \
                    not indent_equivalent_strict(q.lines, window, f.indent_unit):
                continue
        out.append(Cand(i + 1, i + k, ("l", i + 1, i + k)))
    return _non_overlapping(out) if not loose else out


def _non_overlapping(cands: list[Cand]) -> list[Cand]:
    out: list[Cand] = []
    stop = 0
    for c in cands:
        if c.start_line > stop:
            out.append(c)
            stop = c.end_line
    return out


_ESCAPE_RE = re.compile(r"\\([ntr\"'\\])")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "'": "'", "\\": "\\"}


def has_escapes(text: str) -> bool:
    return bool(_ESCAPE_RE.search(text))


def unescape_strict(text: str) -> str:
    return _ESCAPE_RE.sub(lambda m: _ESCAPES[m.group(1)], text)


def unescape_sequential(text: str) -> str:
    for src, dst in (("\\n", "\n"), ("\\t", "\t"), ("\\r", "\r"), ('\\"', '"'), ("\\'", "'"),
                     ("\\\\", "\\")):
        text = text.replace(src, dst)
    return text


@dataclass
class TierResult:
    name: str
    strict: list[Cand]
    loose: list[Cand]


def ladder(f: OFile, old: str) -> Iterator[TierResult]:
    """Strict and loose candidates of every tier, in ladder order (T6 = unescaped T1-T5).

    Lazy: a caller that stops at the first tier with strict candidates pays for no other."""

    def run(text_strict: str, text_loose: str | None, prefix: str) -> Iterator[TierResult]:
        qs = Query.of(text_strict)
        ql = Query.of(text_loose) if text_loose is not None and text_loose != text_strict \
            else qs
        s1, l1 = exact_candidates(f, text_strict)
        if ql is not qs and text_loose is not None:
            l1 = _merge(l1, exact_candidates(f, text_loose)[1])
        yield TierResult(prefix + "exact", s1, l1)
        for tier in TIERS[1:]:
            strict = line_candidates(f, tier, qs, False)
            loose = _merge(strict, line_candidates(f, tier, qs, True))
            if ql is not qs:
                loose = _merge(loose, line_candidates(f, tier, ql, True))
            yield TierResult(prefix + tier, strict, loose)

    if not old.strip():
        return
    yield from run(old, None, "")
    if has_escapes(old):
        yield from run(unescape_strict(old), unescape_sequential(old), "unescape:")


def _merge(a: Iterable[Cand], b: Iterable[Cand]) -> list[Cand]:
    seen: dict[tuple[Any, ...], Cand] = {}
    for c in itertools.chain(a, b):
        seen.setdefault(c.key, c)
    return list(seen.values())


# --------------------------------------------------------------------------------------------
# Outcomes and labels


@dataclass(frozen=True)
class Hint:
    start: int
    end: int

    def keeps(self, cand: Cand, k: int) -> bool:
        slack = max(5, k)
        return cand.end_line >= self.start - slack and cand.start_line <= self.end + slack


def _truth_test(f: OFile, truth: Span) -> Callable[[Cand], bool]:
    whole = truth.start_col is None
    line_start = f.line_offsets[truth.start_line - 1]
    a = line_start + (truth.start_col or 0)
    if whole:
        b = f.line_offsets[truth.end_line - 1] + len(f.lines[truth.end_line - 1])
    else:
        b = f.line_offsets[truth.end_line - 1] + (truth.end_col or 0)

    def test(c: Cand) -> bool:
        if c.key[0] == "c":
            ca, cb = c.key[1], c.key[2]
            return bool(ca == a and (cb == b or (cb == b + 1 and f.lf[b:b + 1] == "\n")))
        if c.key[0] == "l":
            return (c.start_line, c.end_line) == (truth.start_line, truth.end_line)
        return False  # a second occurrence inside one line is never the truth

    return test


def _subsets(strict: list[Cand], loose: list[Cand]) -> Iterable[list[Cand]]:
    skeys = {c.key for c in strict}
    extra = [c for c in loose if c.key not in skeys]
    if len(extra) <= SUBSET_ENUMERATION_LIMIT:
        for r in range(len(extra) + 1):
            for combo in itertools.combinations(extra, r):
                yield strict + list(combo)
    else:
        yield strict
        yield strict + extra
        for c in extra:
            yield [*strict, c]


def _decide(m: list[Cand], hint: Hint | None, k: int) -> list[tuple[str, Cand | None]]:
    """What a matcher may do with the candidate set ``m``.

    The hint keeps the candidates within ``slack`` of it (section 6.4); a matcher may also
    take the one candidate that starts exactly on the hinted line (line-number prefixes and
    hints are usually exact), so that reading is a second possible outcome."""
    if len(m) == 1:
        return [("apply", m[0])]
    if hint is None:
        return [("ambiguous", None)]
    kept = [c for c in m if hint.keeps(c, k)]
    if len(kept) == 1:
        return [("apply", kept[0])]
    out: list[tuple[str, Cand | None]] = [("ambiguous", None)]
    exact = [c for c in m if c.start_line == hint.start]
    if len(exact) == 1:
        out.append(("apply", exact[0]))
    return out


def _insertion_noop(f: OFile, cand: Cand, old: str, new: str) -> bool:
    """Section 6.6: an insertion-style edit whose added text already follows (or precedes)."""
    if cand.key[0] != "c" or not old:
        return False
    a, b = cand.key[1], cand.key[2]
    if new.startswith(old) and len(new) > len(old):
        return f.lf[b:].startswith(new[len(old):])
    if new.endswith(old) and len(new) > len(old):
        added = new[:len(new) - len(old)]
        return f.lf[:a].endswith(added)
    return False


def _new_present_once(f: OFile, new: str) -> bool:
    if len(_ANY_WS.sub("", new)) < ALREADY_APPLIED_MIN:
        return False
    first = f.lf.find(new)
    return first != -1 and f.lf.find(new, first + 1) == -1


def label_single(raw: bytes, old_text: str, new_text: str, truth: Span, *, family: str = "P0",
                 start_line: int | None = None, end_line: int | None = None) -> Verdict:
    """Label one ``old_text -> new_text`` request on the file ``raw``."""
    f = OFile.from_bytes(raw)
    old = normalize_request_text(old_text)
    new = normalize_request_text(new_text)
    old, prefix_hint = strip_line_numbers(old)
    if prefix_hint is not None:
        new = strip_new_line_numbers(new)
    if old == new:
        return Verdict("noop", ("no_change",), IDENTICAL, outcomes=["identical"])
    if not old.strip():
        return Verdict("must_refuse", (), "whitespace-only old_text")
    if has_placeholder(new) and not has_placeholder(old):
        return Verdict("must_refuse", ("placeholder_in_new",), "placeholder in new_text")
    k = len(Query.of(old).lines)
    hint: Hint | None = None
    if start_line is not None:
        hint = Hint(start_line, end_line if end_line is not None else start_line + k - 1)
    elif prefix_hint is not None:
        hint = Hint(prefix_hint, prefix_hint + k - 1)
    is_truth = _truth_test(f, truth)

    outcomes: set[tuple[str, Any]] = set()
    insertion_made = False
    first_tier: str | None = None
    first_cands: list[Cand] = []
    stopped = False
    for tier in ladder(f, old):
        if not tier.loose:
            continue
        if first_tier is None:
            first_tier, first_cands = tier.name, tier.loose
        for m in _subsets(tier.strict, tier.loose):
            if not m:
                continue
            for kind, cand in _decide(m, hint, k):
                if kind == "apply" and cand is not None:
                    if _insertion_noop(f, cand, old, new):
                        outcomes.add(("noop", None))
                        insertion_made = True
                    else:
                        outcomes.add(("apply", (cand.key, is_truth(cand))))
                else:
                    outcomes.add(("ambiguous", tier.name))
        if tier.strict:
            first_tier, first_cands = tier.name, tier.strict
            stopped = True
            break
    if not stopped:
        outcomes.add(("noop", None) if _new_present_once(f, new) else ("not_found", None))

    kinds = {o[0] for o in outcomes}
    names = sorted(f"{o[0]}@{o[1][1] if o[0] == 'apply' else o[1]}" for o in outcomes)
    verdict = Verdict("discard", tier=first_tier, outcomes=names,
                      candidates=[(c.start_line, c.end_line) for c in first_cands[:20]],
                      truth_in_candidates=any(is_truth(c) for c in first_cands))
    if any(o[0] == "apply" and not o[1][1] for o in outcomes):
        verdict.reason = "a legitimate matcher could apply at another location"
        return verdict
    if family in MUST_REFUSE_FAMILIES:
        if kinds <= {"not_found", "ambiguous"}:
            verdict.label = "must_refuse"
            verdict.refuse_codes = CONFLICT_CODES if kinds == {"not_found"} else \
                ("ambiguous_match", *CONFLICT_CODES)
            verdict.reason = f"{family}: old_text does not match the file"
        else:
            verdict.reason = f"{family} perturbation still matches"
        return verdict
    if kinds == {"apply"}:
        verdict.label, verdict.reason = "must_apply", "unique at its tier"
    elif kinds == {"noop"}:
        verdict.label, verdict.reason = "noop", "already applied"
        verdict.refuse_codes = ("no_change",) if insertion_made else ("ambiguous_match",)
    elif kinds == {"ambiguous"}:
        verdict.label, verdict.reason = "must_refuse", "several candidates at the first tier"
        verdict.refuse_codes = ("ambiguous_match",)
    elif kinds <= {"apply", "ambiguous", "not_found"}:
        verdict.label = "either"
        verdict.reason = "not found by T1-T6" if kinds == {"not_found"} else \
            "strict and loose readings disagree"
        verdict.refuse_codes = tuple(sorted(
            ({"ambiguous_match"} if "ambiguous" in kinds else set())
            | ({"no_match", "edit_conflict"} if "not_found" in kinds else set())))
    else:
        verdict.reason = "no-op mixed with other outcomes"
    return verdict


def replace_all_windows(f: OFile, old: str) -> tuple[str, list[Cand], list[Cand]]:
    """The T1 (else T2) occurrences replace_all would edit: (tier, strict, loose)."""
    strict = exact_candidates(f, old)[0]
    if strict:
        return "exact", strict, strict
    q = Query.of(old)
    strict2 = line_candidates(f, "trailing_whitespace", q, False)
    loose2 = _non_overlapping(sorted(line_candidates(f, "trailing_whitespace", q, True),
                                     key=lambda c: c.start_line)) if len(q.lines) > 1 else []
    if len(q.lines) == 1:
        loose2 = strict2
    return "trailing_whitespace", strict2, loose2


def label_replace_all(raw: bytes, old_text: str, new_text: str, truths: Sequence[Span], *,
                      expected_count: int | None = None) -> Verdict:
    f = OFile.from_bytes(raw)
    old = normalize_request_text(old_text)
    new = normalize_request_text(new_text)
    if old == new:
        return Verdict("noop", ("no_change",), IDENTICAL, outcomes=["identical"])
    tier, strict, loose = replace_all_windows(f, old)
    verdict = Verdict("discard", tier=tier if strict else None,
                      candidates=[(c.start_line, c.end_line) for c in strict[:20]])
    if [c.key for c in strict] != [c.key for c in loose]:
        verdict.reason = "replace_all occurrences differ between readings"
        return verdict
    if not strict:
        verdict.label, verdict.refuse_codes = "must_refuse", ("no_match",)
        verdict.reason = "replace_all only at T1-T2, and neither matches"
        return verdict
    if expected_count is not None and expected_count != len(strict):
        verdict.label, verdict.refuse_codes = "must_refuse", ()
        verdict.reason = f"expected_count {expected_count} != {len(strict)} occurrences"
        return verdict
    tests = [_truth_test(f, t) for t in truths]
    if len(tests) == len(strict) and all(t(c) for t, c in zip(tests, strict, strict=True)):
        verdict.label, verdict.reason = "must_apply", f"{len(strict)} occurrences at {tier}"
    else:
        verdict.reason = "replace_all occurrences are not the truth spans"
    return verdict


def label_patches(raw: bytes, patches: Sequence[dict[str, Any]], truths: Sequence[Span | None],
                  *, families: Sequence[str]) -> Verdict:
    """All-or-nothing: every patch is labelled against the original file."""
    verdicts: list[Verdict] = []
    for patch, truth, family in zip(patches, truths, families, strict=True):
        # a patch built to fail has no truth: any location it could apply at is wrong
        span = truth if truth is not None else Span(1, 1, 0, 0)
        verdicts.append(label_single(raw, patch["old_text"], patch["new_text"], span,
                                     family=family, start_line=patch.get("start_line"),
                                     end_line=patch.get("end_line")))
    labels = [v.label for v in verdicts]
    out = Verdict("discard", outcomes=[f"patches[{i}]:{v.label}" for i, v in enumerate(verdicts)])
    spans = sorted((t.start_line, t.end_line) for t in truths if t is not None)
    if any(b[0] <= a[1] for a, b in itertools.pairwise(spans)):
        out.label, out.refuse_codes = "must_refuse", ("overlapping_edits",)
        out.reason = "patches overlap"
        return out
    if "discard" in labels or "noop" in labels:
        out.reason = "a patch is ill-posed or already applied"
        return out
    if "must_refuse" in labels:
        out.label = "must_refuse"
        out.refuse_codes = tuple(sorted({c for v in verdicts if v.label == "must_refuse"
                                         for c in v.refuse_codes}))
        out.reason = "a patch fails, so nothing may be written"
    elif all(x == "must_apply" for x in labels):
        out.label, out.reason = "must_apply", "every patch is unique"
    else:
        out.label, out.reason = "either", "a patch may or may not apply"
        out.refuse_codes = tuple(sorted({c for v in verdicts for c in v.refuse_codes}))
    return out


def label_request(raw: bytes, request: dict[str, Any], truth: Sequence[Span | None], *,
                  family: str, patch_families: Sequence[str] | None = None) -> Verdict:
    """Dispatch on the request shape."""
    if "patches" in request:
        return label_patches(raw, request["patches"], truth,
                             families=patch_families or [family] * len(request["patches"]))
    spans = [t for t in truth if t is not None]
    if request.get("replace_all"):
        return label_replace_all(raw, request["old_text"], request["new_text"], spans,
                                 expected_count=request.get("expected_count"))
    nowhere = Span(1, 1, 0, 0)  # no truth (the text is absent): every location is wrong
    return label_single(raw, request["old_text"], request["new_text"],
                        spans[0] if spans else nowhere, family=family,
                        start_line=request.get("start_line"), end_line=request.get("end_line"))

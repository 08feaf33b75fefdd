"""Deterministic, seeded generation of edit cases (docs/internals/matching.md#corpus-generation).

For a source file the generator picks a target span (1-25 whole lines, biased to blocks), makes
an intended edit in the file's own conventions (rename, literal, insert, delete, wrap in a
block, replace, pure insertion, pure deletion), renders the expected file bytes from it (per-line
EOL, BOM, indent unit, final newline: context lines keep the file's bytes, new lines take the
region's EOL), then perturbs the request the way models do (families P0-P26). The oracle
(``oracle.py``) labels every case; cases it calls ill-posed are dropped.

``generate_corpus(seed, families=..., per_family=...)`` is a pure function of its arguments and
the source bytes: the same seed gives the same cases, byte for byte, in any process.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import random
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from tests.edit_corpus.oracle import (
    CONFLICT_CODES,
    IDENTICAL,
    OFile,
    Span,
    Verdict,
    label_request,
)
from tests.edit_corpus.sources import (
    FileModel,
    LineReplacement,
    Source,
    Sources,
    apply_replacements,
    kind_of,
    load_sources,
    sha256_hex,
)

DEFAULT_FAMILIES: tuple[str, ...] = (
    "P0", "P1", "P2", "P3", "P4", "P5", "P6", "P7", "P9", "P11", "P12", "P14", "P15", "P16",
    "P17", "P18", "P19", "P20", "P21", "P22", "P23", "P26")
#: Families whose matcher tiers come later (elision, similarity, sequential patches, diffs).
LATER_FAMILIES: tuple[str, ...] = ("P8", "P10", "P13", "P24", "P25")
ALL_FAMILIES: tuple[str, ...] = tuple(sorted(DEFAULT_FAMILIES + LATER_FAMILIES,
                                             key=lambda f: int(f[1:])))
LABELS = ("must_apply", "must_refuse", "either", "noop")

Rng = random.Random


# --------------------------------------------------------------------------------------------
# Cases


@dataclass
class Case:
    id: str
    family: str  # "P0".."P26", or "peer"
    variant: str
    perturbations: list[str]
    source: Source
    file_ops: list[LineReplacement]  # mutations of the source that make this case's file
    request: dict[str, Any]
    truth: list[Span | None]  # one per edit (None: a patch built to fail)
    label: str  # must_apply | must_refuse | either | noop
    refuse_codes: list[str]  # acceptable error codes when refusing ([] = any)
    expected_ops: list[LineReplacement]  # on the case file: the applied outcome
    noop_kind: str | None = None  # "already_applied" | "identical"
    peer: str | None = None  # the peer issue a regression case restates
    oracle: dict[str, Any] = field(default_factory=dict)

    @property
    def kind(self) -> str:
        if "patches" in self.request:
            return "patches"
        return "replace_all" if self.request.get("replace_all") else "single"

    @property
    def file_bytes(self) -> bytes:
        return _materialise(self.source.raw, tuple(self.file_ops))

    @property
    def expected_bytes(self) -> bytes:
        """The file after a correct apply (for ``must_refuse``/``noop``: unchanged)."""
        return _materialise(self.file_bytes, tuple(self.expected_ops))

    def to_json(self) -> dict[str, Any]:
        """One JSONL record (docs/internals/matching.md#corpus-records), from which the case can be
        rebuilt."""
        return {
            "id": self.id,
            "family": self.family,
            "variant": self.variant,
            "peer": self.peer,
            "source": {"path": self.source.key, "sha256": self.source.sha256,
                       "name": self.source.name},
            "file_ops": [op.to_json() for op in self.file_ops],
            "truth": [t.to_json() if t is not None else None for t in self.truth],
            "request": {"kind": self.kind, "payload": self.request},
            "perturbations": self.perturbations,
            "label": self.label,
            "refuse_code": self.refuse_codes,
            "noop_kind": self.noop_kind,
            "expected_ops": [op.to_json() for op in self.expected_ops],
            "expected_sha256": sha256_hex(self.expected_bytes),
            "oracle": self.oracle,
        }

    @staticmethod
    def from_json(data: dict[str, Any], sources: Sources) -> Case:
        src = data["source"]
        source = sources[src["path"]] if src["path"] in sources.by_key else \
            peer_sources()[src["path"]]
        if source.sha256 != src["sha256"]:
            raise ValueError(f"{data['id']}: source {src['path']} changed")
        case = Case(
            id=data["id"], family=data["family"], variant=data["variant"],
            perturbations=list(data["perturbations"]), source=source,
            file_ops=[LineReplacement.from_json(x) for x in data["file_ops"]],
            request=data["request"]["payload"],
            truth=[Span.from_json(t) if t is not None else None for t in data["truth"]],
            label=data["label"], refuse_codes=list(data["refuse_code"]),
            expected_ops=[LineReplacement.from_json(x) for x in data["expected_ops"]],
            noop_kind=data["noop_kind"], peer=data["peer"], oracle=data["oracle"])
        if sha256_hex(case.expected_bytes) != data["expected_sha256"]:
            raise ValueError(f"{data['id']}: expected bytes do not regenerate")
        return case


_MATERIALISED: dict[tuple[bytes, tuple[LineReplacement, ...]], bytes] = {}


def _materialise(raw: bytes, ops: tuple[LineReplacement, ...]) -> bytes:
    if not ops:
        return raw
    key = (raw, ops)
    got = _MATERIALISED.get(key)
    if got is None:
        if len(_MATERIALISED) > 256:
            _MATERIALISED.clear()
        got = _MATERIALISED[key] = apply_replacements(raw, ops)
    return got


def dumps_jsonl(cases: Iterable[Case]) -> str:
    return "".join(json.dumps(c.to_json(), sort_keys=True) + "\n" for c in cases)


def loads_jsonl(text: str, sources: Sources) -> list[Case]:
    return [Case.from_json(json.loads(line), sources) for line in text.splitlines() if line]


# --------------------------------------------------------------------------------------------
# Intended edits


@dataclass
class NewLine:
    """One line of the intended ``new`` text.

    ``src`` is the index of the old line it copies unchanged (the file's bytes are kept for it),
    or None for a changed/inserted line whose file content is ``exp``. ``req`` is what the
    request carries for it (perturbations change ``req``; ``exp`` only when the matcher cannot
    undo the perturbation, e.g. trailing whitespace the model stripped from a changed line)."""

    req: str
    exp: str
    src: int | None = None

    @staticmethod
    def same(text: str, src: int) -> NewLine:
        return NewLine(text, text, src)

    @staticmethod
    def changed(text: str) -> NewLine:
        return NewLine(text, text, None)


IDENT = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]{2,}\b")
NUMBER = re.compile(r"(?<![\w.])\d{1,6}(?![\w.])")
STRING = re.compile(r"\"([A-Za-z][^\"\\\n]{0,30})\"")
_KEYWORD_TEXT = """
and as assert async await break class continue def del elif else except finally for from global
if import in is lambda nonlocal not or pass raise return try while with yield self None True False
func package var const type struct return int char void static unsigned size_t sizeof include
define while switch case default break goto enum typedef extern public private sealed namespace
using new then fi esac done echo local the and for are with this that from
"""
KEYWORDS = frozenset(_KEYWORD_TEXT.split())
BLOCK_OPENER = re.compile(r"[:{(\[]\s*$")
BRACE_KINDS = frozenset({"go", "c"})


def lead(line: str) -> str:
    return line[:len(line) - len(line.lstrip(" \t"))]


def inserted_line(kind: str, indent: str, n: int) -> str:
    body = {
        "python": f"zb_value_{n} = {n}",
        "go": f"zbValue{n} := {n}",
        "c": f"zb_value_{n} = {n};",
        "shell": f"ZB_VALUE_{n}={n}",
        "yaml": f"zb_key_{n}: {n}",
        "json": f'"zb_key_{n}": {n},',
    }.get(kind, f"Inserted line {n} of the corpus.")
    return indent + body


@dataclass
class EditSpec:
    """Constraints on an edit: boundary lines to keep, allowed kinds."""

    kinds: Sequence[str] = ("rename", "literal", "insert", "delete", "wrap", "replace",
                            "append", "delete_all")
    weights: Sequence[int] | None = None
    keep_first: bool = False
    keep_last: bool = False


DEFAULT_WEIGHTS = {"rename": 30, "literal": 15, "insert": 15, "delete": 10, "wrap": 10,
                   "replace": 8, "append": 7, "delete_all": 5}


def make_edit(rng: Rng, lines: Sequence[str], kind: str, unit: str, spec: EditSpec
              ) -> tuple[str, list[NewLine]] | None:
    """An intended edit of the span ``lines``: (edit kind, new lines), or None."""
    weights = spec.weights or [DEFAULT_WEIGHTS.get(k, 10) for k in spec.kinds]
    order = list(spec.kinds)
    for _ in range(4):
        choice = rng.choices(order, weights=weights)[0]
        new = _EDITS[choice](rng, list(lines), kind, unit)
        if new is None:
            continue
        if [n.req for n in new] == list(lines):
            continue
        if spec.keep_first and (not new or new[0].src != 0):
            continue
        if spec.keep_last and (not new or new[-1].src != len(lines) - 1):
            continue
        return choice, new
    return None


def _edit_rename(rng: Rng, lines: list[str], kind: str, unit: str) -> list[NewLine] | None:
    counts: dict[str, int] = {}
    for line in lines:
        for m in IDENT.finditer(line):
            word = m.group(0)
            if word not in KEYWORDS and not word.startswith("zb"):
                counts[word] = counts.get(word, 0) + 1
    if not counts:
        return None
    word = rng.choice(sorted(counts))
    pattern = re.compile(rf"\b{re.escape(word)}\b")
    new_word = word + "_v2"
    out = []
    for i, line in enumerate(lines):
        changed = pattern.sub(new_word, line)
        out.append(NewLine.same(line, i) if changed == line else NewLine.changed(changed))
    return out


def _edit_literal(rng: Rng, lines: list[str], kind: str, unit: str) -> list[NewLine] | None:
    sites: list[tuple[int, re.Match[str], str]] = []
    for i, line in enumerate(lines):
        sites += [(i, m, "num") for m in NUMBER.finditer(line)]
        sites += [(i, m, "str") for m in STRING.finditer(line)]
    if not sites:
        return None
    i, m, what = rng.choice(sites)
    line = lines[i]
    if what == "num":
        repl = str(int(m.group(0)) + rng.randint(1, 9))
        changed = line[:m.start()] + repl + line[m.end():]
    else:
        changed = line[:m.start(1)] + "zb " + line[m.start(1):]
    return [NewLine.changed(changed) if j == i else NewLine.same(x, j)
            for j, x in enumerate(lines)]


def _indent_after(lines: list[str], i: int, unit: str) -> str:
    """Indentation for a line inserted before index ``i``."""
    if i < len(lines) and lines[i].strip():
        below = lead(lines[i])
        if i > 0 and BLOCK_OPENER.search(lines[i - 1]):
            return below if len(below) > len(lead(lines[i - 1])) else lead(lines[i - 1]) + unit
        return below
    above = next((x for x in reversed(lines[:i]) if x.strip()), lines[0])
    return lead(above) + (unit if BLOCK_OPENER.search(above) else "")


def _edit_insert(rng: Rng, lines: list[str], kind: str, unit: str) -> list[NewLine] | None:
    i = rng.randint(1, len(lines)) if len(lines) > 1 else rng.choice([0, 1])
    if i == len(lines):
        return _edit_append(rng, lines, kind, unit)
    new = [NewLine.same(x, j) for j, x in enumerate(lines)]
    new.insert(i, NewLine.changed(inserted_line(kind, _indent_after(lines, i, unit),
                                                rng.randint(100, 999))))
    return new


def _edit_append(rng: Rng, lines: list[str], kind: str, unit: str) -> list[NewLine] | None:
    new = [NewLine.same(x, j) for j, x in enumerate(lines)]
    indent = _indent_after(lines, len(lines), unit)
    for _ in range(rng.randint(1, 2)):
        new.append(NewLine.changed(inserted_line(kind, indent, rng.randint(100, 999))))
    return new


def _edit_delete(rng: Rng, lines: list[str], kind: str, unit: str) -> list[NewLine] | None:
    choices = [j for j, x in enumerate(lines) if x.strip()]
    if len(lines) < 2 or not choices:
        return None
    i = rng.choice(choices)
    return [NewLine.same(x, j) for j, x in enumerate(lines) if j != i]


def _edit_wrap(rng: Rng, lines: list[str], kind: str, unit: str) -> list[NewLine] | None:
    if kind not in ("python", "go", "c", "shell"):
        return None
    starts = [j for j, x in enumerate(lines) if x.strip() and not BLOCK_OPENER.search(x)]
    if not starts:
        return None
    i = rng.choice(starts)
    base = lead(lines[i])
    j = i
    while j + 1 < len(lines) and j - i < 4 and (
            not lines[j + 1].strip() or (len(lead(lines[j + 1])) >= len(base)
                                         and lead(lines[j + 1]).startswith(base))):
        j += 1
    while j > i and not lines[j].strip():
        j -= 1
    if any(BLOCK_OPENER.search(x) for x in lines[i:j + 1]):
        j = i
    n = rng.randint(100, 999)
    header = {"python": f"{base}if zb_flag_{n}:", "go": f"{base}if zbFlag{n} {{",
              "c": f"{base}if (zb_flag_{n}) {{",
              "shell": f'{base}if [ -n "$ZB_FLAG_{n}" ]; then'}[kind]
    closer = {"go": f"{base}}} // zb_flag_{n}", "c": f"{base}}} /* zb_flag_{n} */",
              "shell": f"{base}fi # zb_flag_{n}"}.get(kind)
    new = [NewLine.same(x, k) for k, x in enumerate(lines[:i])]
    new.append(NewLine.changed(header))
    for k in range(i, j + 1):
        x = lines[k]
        new.append(NewLine.changed(unit + x) if x.strip() else NewLine.same(x, k))
    if closer:
        new.append(NewLine.changed(closer))
    new += [NewLine.same(x, k) for k, x in enumerate(lines) if k > j]
    return new


def _edit_replace(rng: Rng, lines: list[str], kind: str, unit: str) -> list[NewLine] | None:
    base = lead(next(x for x in lines if x.strip()))
    return [NewLine.changed(inserted_line(kind, base, rng.randint(100, 999)))
            for _ in range(rng.randint(1, 3))]


def _edit_delete_all(rng: Rng, lines: list[str], kind: str, unit: str) -> list[NewLine] | None:
    return []


_EDITS: dict[str, Callable[[Rng, list[str], str, str], list[NewLine] | None]] = {
    "rename": _edit_rename, "literal": _edit_literal, "insert": _edit_insert,
    "delete": _edit_delete, "wrap": _edit_wrap, "replace": _edit_replace,
    "append": _edit_append, "delete_all": _edit_delete_all,
}


# --------------------------------------------------------------------------------------------
# Rendering the expected file


def render_replacement(fm: FileModel, start: int, end: int, new: Sequence[NewLine]) -> str:
    """The text replacing lines ``start..end`` when ``new`` is applied in the file's conventions.

    Copied lines keep their bytes and EOL; changed lines take the region's EOL when uniform,
    else the file's majority EOL; the final-newline state of the file is kept."""
    span_eols = {e for e in fm.eols[start - 1:end] if e}
    region_eol = next(iter(span_eols)) if len(span_eols) == 1 else fm.majority_eol
    at_eof_without_nl = end == len(fm.lines) and not fm.final_newline
    out = []
    for i, nl in enumerate(new):
        if nl.src is not None:
            content, eol = fm.lines[start - 1 + nl.src], fm.eols[start - 1 + nl.src]
        else:
            content, eol = nl.exp, region_eol
        if at_eof_without_nl and i == len(new) - 1:
            eol = ""
        elif not eol:
            eol = region_eol
        out.append(content + eol)
    return "".join(out)


# --------------------------------------------------------------------------------------------
# Spans


LENGTH_BUCKETS = ((1, 1, 20), (2, 4, 30), (5, 12, 35), (13, 25, 15))


def eligible_line(fm: FileModel, i: int) -> bool:
    """Lines a span may contain: decodable, no lone CR; ASCII in files that are not UTF-8
    (a model cannot reproduce their bytes, and tools may refuse to mix encodings)."""
    return fm.line_is_plain(i) and (fm.valid_utf8 or fm.lines[i].isascii())


def pick_span(rng: Rng, fm: FileModel, *, min_len: int = 1, max_len: int = 25,
              pure_indent: bool = False, must_start: int | None = None,
              must_end: int | None = None, avoid_eof: bool = False,
              tries: int = 25) -> tuple[int, int] | None:
    """A span ``(start, end)`` (1-based, inclusive) of plain lines with one EOL style."""
    n = len(fm.lines)
    starts = [i for i in range(n) if fm.lines[i].strip() and eligible_line(fm, i)]
    if not starts:
        return None
    for _ in range(tries):
        lo, hi, _w = rng.choices(LENGTH_BUCKETS, weights=[b[2] for b in LENGTH_BUCKETS])[0]
        low = max(lo, min_len)
        length = min(rng.randint(low, max(min(hi, max_len), low)), max_len)
        if must_start is not None:
            s = must_start - 1
        elif must_end is not None:
            s = max(0, must_end - length)
        else:
            s = rng.choice(starts)
        if rng.random() < 0.4 and must_end is None and BLOCK_OPENER.search(fm.lines[s]):
            base = len(lead(fm.lines[s]))
            e = s
            while e + 1 < n and e - s + 1 < max_len and (
                    not fm.lines[e + 1].strip() or len(lead(fm.lines[e + 1])) > base):
                e += 1
            if e + 1 < n and e - s + 1 < max_len and len(lead(fm.lines[e + 1])) == base and \
                    fm.lines[e + 1].strip() in ("}", "};", "end", "fi", "esac", ")", "]"):
                e += 1
        else:
            e = min(n - 1, s + length - 1)
        if must_end is not None:
            e = must_end - 1
        while e > s and not fm.lines[e].strip():
            e -= 1
        while s < e and not fm.lines[s].strip():
            s += 1
        if e - s + 1 < min_len or e - s + 1 > max_len:
            continue
        if must_start is not None and s != must_start - 1:
            continue
        if avoid_eof and e == n - 1:
            continue
        if not all(eligible_line(fm, i) for i in range(s, e + 1)):
            continue
        eols = {x for x in fm.eols[s:e + 1] if x}
        if len(eols) > 1:
            continue
        if pure_indent and not pure_indentation(fm.lines[s:e + 1], fm.indent_unit):
            continue
        return s + 1, e + 1
    return None


def pure_indentation(lines: Sequence[str], unit: str) -> bool:
    """Every lead is made of whole units of the file's indent character, and the first
    non-blank line is the shallowest."""
    leads = [lead(x) for x in lines if x.strip()]
    if not leads:
        return False
    for x in leads:
        if unit == "\t":
            if x.strip("\t"):
                return False
        elif x.strip(" ") or len(x) % len(unit):
            return False
    return len(leads[0]) == min(len(x) for x in leads)


# --------------------------------------------------------------------------------------------
# Drafts: a case before its request text is rendered


@dataclass
class Draft:
    source: Source
    fm: FileModel
    file_ops: list[LineReplacement]
    start: int
    end: int
    old: list[str]
    new: list[NewLine]
    edit_kind: str
    variant: str = ""
    perturbations: list[str] = field(default_factory=list)
    trailing_nl: bool = True
    cut_start: int = 0
    cut_end: int = 0
    eol: str = "\n"
    bom_prefix: bool = False
    escape: bool = False
    prefix_style: str | None = None
    prefix_new: bool = False
    hint: tuple[int, int] | None = None

    @property
    def file_bytes(self) -> bytes:
        return self.fm.raw

    def replacement(self) -> LineReplacement:
        return LineReplacement(self.start, self.end,
                               render_replacement(self.fm, self.start, self.end, self.new))

    def texts(self) -> tuple[str, str]:
        old_lines = list(self.old)
        new_lines = [n.req for n in self.new]
        old = "\n".join(old_lines) + ("\n" if self.trailing_nl else "")
        new = "\n".join(new_lines) + ("\n" if self.trailing_nl and new_lines else "")
        if self.cut_start:
            assert old[:self.cut_start] == new[:self.cut_start]
            old, new = old[self.cut_start:], new[self.cut_start:]
        if self.cut_end:
            assert old[-self.cut_end:] == new[-self.cut_end:]
            old, new = old[:-self.cut_end], new[:-self.cut_end]
        if self.prefix_style:
            old = add_line_numbers(old, self.start, self.prefix_style)
            if self.prefix_new:
                new = add_line_numbers(new, self.start, self.prefix_style)
        if self.escape:
            old, new = escape_one_level(old, "\t" in old), escape_one_level(new, "\t" in old)
        if self.eol != "\n":
            old, new = old.replace("\n", self.eol), new.replace("\n", self.eol)
        if self.bom_prefix:
            old = "\ufeff" + old
        return old, new

    def truth(self) -> Span:
        if self.cut_start or self.cut_end:
            last = self.old[-1]
            end_col = len(last) - self.cut_end
            if self.start == self.end:
                return Span(self.start, self.end, self.cut_start, end_col)
            return Span(self.start, self.end, self.cut_start, end_col)
        return Span(self.start, self.end)


def add_line_numbers(text: str, first: int, style: str) -> str:
    ends_nl = text.endswith("\n")
    rows = text.split("\n")
    if ends_nl:
        rows.pop()
    fmt = {"catn": "{n:>6}\t{line}", "pipe": "{n:>6} │ {line}", "arrow": "{n:>6}→{line}",
           "colon": "{n}: {line}"}[style]
    out = [fmt.format(n=first + i, line=row) for i, row in enumerate(rows)]
    return "\n".join(out) + ("\n" if ends_nl else "")


def escape_one_level(text: str, tabs: bool) -> str:
    text = text.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')
    return text.replace("\t", "\\t") if tabs else text


def base_draft(rng: Rng, source: Source, *, spec: EditSpec | None = None,
               fm: FileModel | None = None, file_ops: Sequence[LineReplacement] = (),
               span: tuple[int, int] | None = None, **span_args: Any) -> Draft | None:
    fm = fm or source.model
    span = span or pick_span(rng, fm, **span_args)
    if span is None:
        return None
    s, e = span
    lines = list(fm.lines[s - 1:e])
    made = make_edit(rng, lines, source.kind, fm.indent_unit, spec or EditSpec())
    if made is None:
        return None
    kind, new = made
    draft = Draft(source, fm, list(file_ops), s, e, lines, new, kind)
    at_eof = e == len(fm.lines) and not fm.final_newline
    if at_eof:
        draft.trailing_nl = False
    elif new:
        draft.trailing_nl = rng.random() < 0.6
    if not draft.trailing_nl and not new:
        return None  # deleting whole lines needs the trailing newline in old_text
    return draft


# --------------------------------------------------------------------------------------------
# Finishing a case


class Counter:
    def __init__(self) -> None:
        self.n = 0
        self.discarded: dict[str, int] = {}

    def next(self) -> int:
        self.n += 1
        return self.n


def short_name(source: Source) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", source.name).strip("_")[:24]


def finish(family: str, draft: Draft, counter: Counter, *, extra: dict[str, Any] | None = None,
           tier: Callable[[str | None], bool] | None = None) -> Case | None:
    old, new = draft.texts()
    request: dict[str, Any] = {"path": draft.source.name, "old_text": old, "new_text": new}
    if draft.hint is not None:
        request["start_line"], request["end_line"] = draft.hint
    request.update(extra or {})
    truth = draft.truth()
    rep = draft.replacement()
    return make_case(family, draft.variant, draft.perturbations, draft.source, draft.file_ops,
                     request, [truth], [rep], counter, tier=tier)


def make_case(family: str, variant: str, perturbations: Sequence[str], source: Source,
              file_ops: Sequence[LineReplacement], request: dict[str, Any],
              truth: Sequence[Span | None], expected_ops: Sequence[LineReplacement],
              counter: Counter, *, patch_families: Sequence[str] | None = None,
              peer: str | None = None, want: str | None = None,
              tier: Callable[[str | None], bool] | None = None) -> Case | None:
    """Label a request with the oracle and make it a case (None: the oracle discards it, or
    it is not the label ``want`` / the first tier is not accepted by ``tier``)."""
    raw = _materialise(source.raw, tuple(file_ops))
    verdict: Verdict = label_request(raw, request, truth, family=family,
                                     patch_families=patch_families)
    if tier is not None and verdict.label != "discard" and not tier(verdict.tier):
        verdict.label, verdict.reason = "discard", f"matched at tier {verdict.tier}"
    if verdict.label == "discard" or (want is not None and verdict.label != want):
        key = f"{family}:{verdict.label}:{verdict.reason}"
        counter.discarded[key] = counter.discarded.get(key, 0) + 1
        if peer is not None:
            raise AssertionError(f"peer case {peer}/{variant}: oracle says {verdict}")
        return None
    n = counter.next()
    label = verdict.label
    noop_kind = None
    ops = list(expected_ops)
    if label in ("must_refuse", "noop"):
        ops = []
    if label == "noop":
        noop_kind = "identical" if verdict.reason == IDENTICAL else "already_applied"
    digest = hashlib.sha256(json.dumps(request, sort_keys=True).encode("utf-8",
                                                                      "surrogatepass"))
    case_id = f"{family}-{n:04d}-{short_name(source)}-{variant or 'base'}-" \
              f"{digest.hexdigest()[:6]}"
    return Case(id=case_id, family=family, variant=variant, perturbations=list(perturbations),
                source=source, file_ops=list(file_ops), request=request, truth=list(truth),
                label=label, refuse_codes=list(verdict.refuse_codes), expected_ops=ops,
                noop_kind=noop_kind, peer=peer, oracle=verdict.to_json())


# --------------------------------------------------------------------------------------------
# Perturbations (each returns False when it does not apply to the draft)


def _map_context(draft: Draft, fn: Callable[[str], str], lines: Iterable[int]) -> None:
    """Apply ``fn`` to old lines ``lines`` and to the new lines copying them."""
    chosen = set(lines)
    for i in chosen:
        draft.old[i] = fn(draft.old[i])
    for nl in draft.new:
        if nl.src in chosen:
            nl.req = fn(nl.req)


def p1_trailing_ws(rng: Rng, draft: Draft) -> bool:
    candidates = [i for i, x in enumerate(draft.old) if x.strip()]
    picks = rng.sample(candidates, min(len(candidates), rng.randint(1, 3)))
    suffix = rng.choice([" ", "  ", "\t", " \t", "    "])
    _map_context(draft, lambda x: x + suffix, picks)
    draft.perturbations.append("P1:add")
    return True


def p1_strip_all(draft: Draft) -> bool:
    if not any(x != x.rstrip(" \t") for x in draft.old):
        return False
    _map_context(draft, lambda x: x.rstrip(" \t"), range(len(draft.old)))
    for nl in draft.new:
        if nl.src is None:
            nl.req = nl.exp = nl.req.rstrip(" \t")
    draft.perturbations.append("P1:strip")
    return True


def _all_lines_map(draft: Draft, fn: Callable[[str], str | None]) -> bool:
    """Apply ``fn`` to every non-blank request line (old and new); None aborts."""
    olds: list[str] = []
    for x in draft.old:
        y = fn(x) if x.strip() else x
        if y is None:
            return False
        olds.append(y)
    news: list[str] = []
    for nl in draft.new:
        y = fn(nl.req) if nl.req.strip() else nl.req
        if y is None:
            return False
        news.append(y)
    draft.old = olds
    for nl, y in zip(draft.new, news, strict=True):
        nl.req = y
    return True


def p2_indent_shift(rng: Rng, draft: Draft) -> bool:
    unit = draft.fm.indent_unit
    lines = draft.old + [n.req for n in draft.new]
    if not pure_indentation(draft.old, unit) or not all(
            pure_indentation([x], unit) for x in lines if x.strip()):
        return False
    min_lead = min(len(lead(x)) for x in lines if x.strip())
    ch = "\t" if unit == "\t" else " "
    options = ["+1", "+2"] if ch == "\t" else ["+2", "+4", "+8", "-2", "-4"]
    if min_lead:
        options.append("-all")
    choice = rng.choice(options)
    amount = min_lead if choice == "-all" else int(choice[1:])
    if choice.startswith("-") and amount > min_lead:
        choice = "+" + choice[1:]
    if choice.startswith("+"):
        ok = _all_lines_map(draft, lambda x: ch * amount + x)
    else:
        ok = _all_lines_map(draft, lambda x: x[amount:])
    draft.perturbations.append(f"P2:{choice}")
    return ok


def p3_tabs_spaces(rng: Rng, draft: Draft) -> bool:
    unit = draft.fm.indent_unit
    if not pure_indentation(draft.old, unit):
        return False
    if not any(lead(x) for x in draft.old if x.strip()):
        return False  # old carries no indentation: nothing tells the unit apart
    if unit == "\t":
        width = rng.choice([2, 4, 4, 8])

        def fn(x: str) -> str | None:
            t = lead(x)
            return None if t.strip("\t") else " " * (width * len(t)) + x[len(t):]
        label = f"P3:tab->{width}sp"
    else:
        w = len(unit)

        def fn(x: str) -> str | None:
            t = lead(x)
            return None if t.strip(" ") or len(t) % w else "\t" * (len(t) // w) + x[len(t):]
        label = f"P3:{w}sp->tab"
    draft.perturbations.append(label)
    return _all_lines_map(draft, fn)


INNER_WS = re.compile(r"(?<=\S)([ \t]+)(?=\S)")


def p5_inner_ws(rng: Rng, draft: Draft) -> bool:
    sites = [i for i, x in enumerate(draft.old) if INNER_WS.search(x.strip(" \t"))]
    if not sites:
        return False
    picks = rng.sample(sites, min(len(sites), rng.randint(1, 2)))

    def fn(x: str) -> str:
        base = lead(x)
        body = x[len(base):]
        runs = list(INNER_WS.finditer(body))
        m = runs[len(body) % len(runs)]
        repl = "  " if m.group(1) == " " else " "
        return base + body[:m.start()] + repl + body[m.end():]

    _map_context(draft, fn, picks)
    draft.perturbations.append("P5")
    return True


TYPO_TO_ASCII = {"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2013": "-",
                 "\u00a0": " ", "\u2026": "..."}


def p6_typography(rng: Rng, draft: Draft) -> bool:
    text = "".join(draft.old)
    has_typo = any(ch in text for ch in (*TYPO_TO_ASCII, "\u2014"))
    dash = rng.choice(["-", "--"])

    if has_typo:
        def fn(x: str) -> str:
            for a, b in TYPO_TO_ASCII.items():
                x = x.replace(a, b)
            return x.replace("\u2014", dash)
        label = f"P6:to-ascii(em={dash})"
    else:
        if not re.search(r"['\"]", text):
            return False

        def fn(x: str) -> str:
            x = re.sub(r"(?<=\w)'(?=\w)", "\u2019", x)
            x = re.sub(r"\"([^\"\n]*)\"", "\u201c\\1\u201d", x)
            return re.sub(r"'([^'\n]*)'", "\u2018\\1\u2019", x)
        label = "P6:to-curly"
    changed_too = rng.random() < 0.5
    olds = [fn(x) for x in draft.old]
    if olds == draft.old:
        return False
    draft.old = olds
    for nl in draft.new:
        if nl.src is not None or changed_too:
            nl.req = fn(nl.req)
    draft.perturbations.append(label + ("+new" if changed_too else ""))
    return True


# --------------------------------------------------------------------------------------------
# Families


@dataclass
class Ctx:
    sources: Sources
    counter: Counter
    pool: list[Source]


FamilyGen = Callable[[Rng, Source, Ctx], Case | None]


def _spec_for(family: str) -> EditSpec:
    return EditSpec()


def gen_p0(rng: Rng, source: Source, ctx: Ctx) -> Case | None:
    if rng.random() < 0.25:  # a single-line substring edit
        draft = base_draft(rng, source, min_len=1, max_len=1,
                           spec=EditSpec(kinds=("rename", "literal")))
        if draft is None:
            return None
        line, new_line = draft.old[0], draft.new[0].req
        a = 0
        while a < min(len(line), len(new_line)) and line[a] == new_line[a]:
            a += 1
        b = 0
        while b < min(len(line), len(new_line)) - a and line[-1 - b] == new_line[-1 - b]:
            b += 1
        draft.trailing_nl = False
        draft.cut_start = rng.randint(max(0, a - 12), a)
        draft.cut_end = rng.randint(max(0, b - 12), b)
        draft.variant = "substring"
        return finish("P0", draft, ctx.counter)
    draft = base_draft(rng, source)
    if draft is None:
        return None
    draft.variant = draft.edit_kind
    return finish("P0", draft, ctx.counter)


def gen_p1(rng: Rng, source: Source, ctx: Ctx) -> Case | None:
    fm = source.model
    if "trailing_ws" in source.tags or rng.random() < 0.4:
        # the file has trailing whitespace the model does not reproduce
        span = pick_span(rng, fm, min_len=2)
        if span is None:
            return None
        s, e = span
        ops: list[LineReplacement] = []
        if "trailing_ws" not in source.tags:
            for i in rng.sample(range(s, e + 1), min(e - s + 1, rng.randint(1, 3))):
                if fm.lines[i - 1].strip():
                    text = fm.lines[i - 1] + rng.choice([" ", "  ", "\t"]) + fm.eols[i - 1]
                    ops.append(LineReplacement(i, i, text))
        mfm = FileModel.parse(apply_replacements(source.raw, ops)) if ops else fm
        draft = base_draft(rng, source, fm=mfm, file_ops=ops, span=span)
        if draft is None or not p1_strip_all(draft):
            return None
        draft.variant = "file-trailing"
    else:
        draft = base_draft(rng, source, min_len=2)
        if draft is None or not p1_trailing_ws(rng, draft):
            return None
        draft.variant = "old-trailing"
    return finish("P1", draft, ctx.counter)


INDENT_TIERS = ("indentation", "inner_whitespace", "typography")


def gen_p2(rng: Rng, source: Source, ctx: Ctx) -> Case | None:
    draft = base_draft(rng, source, min_len=2, pure_indent=True)
    if draft is None or not p2_indent_shift(rng, draft):
        return None
    draft.variant = draft.perturbations[-1].split(":")[1]
    if rng.random() < 0.25:
        draft.eol = "\r\n" if draft.fm.majority_eol == "\n" else "\n"
        draft.perturbations.append("P4")
    return finish("P2", draft, ctx.counter, tier=lambda t: t in INDENT_TIERS)


def gen_p3(rng: Rng, source: Source, ctx: Ctx) -> Case | None:
    draft = base_draft(rng, source, min_len=2, pure_indent=True)
    if draft is None or not p3_tabs_spaces(rng, draft):
        return None
    draft.variant = draft.perturbations[-1].split(":")[1]
    if rng.random() < 0.3:
        p1_trailing_ws(rng, draft)
    return finish("P3", draft, ctx.counter, tier=lambda t: t in INDENT_TIERS)


def gen_p4(rng: Rng, source: Source, ctx: Ctx) -> Case | None:
    draft = base_draft(rng, source)
    if draft is None:
        return None
    file_eol = draft.fm.majority_eol
    mixed = len({e for e in draft.fm.eols if e}) > 1
    draft.eol = rng.choice(["\n", "\r\n"]) if mixed else ("\r\n" if file_eol == "\n" else "\n")
    draft.variant = ("mixed-file" if mixed else f"{'crlf' if file_eol != chr(10) else 'lf'}"
                     "-file") + f"+{'crlf' if draft.eol == chr(13) + chr(10) else 'lf'}-request"
    draft.perturbations.append("P4")
    return finish("P4", draft, ctx.counter)


def gen_p5(rng: Rng, source: Source, ctx: Ctx) -> Case | None:
    draft = base_draft(rng, source, min_len=2)
    if draft is None or not p5_inner_ws(rng, draft):
        return None
    draft.variant = draft.edit_kind
    return finish("P5", draft, ctx.counter)


def gen_p6(rng: Rng, source: Source, ctx: Ctx) -> Case | None:
    draft = base_draft(rng, source, min_len=1)
    if draft is None or not p6_typography(rng, draft):
        return None
    draft.variant = draft.perturbations[-1].split(":")[1]
    return finish("P6", draft, ctx.counter)


def gen_p7(rng: Rng, source: Source, ctx: Ctx) -> Case | None:
    control = rng.random() < 0.35
    for _ in range(6):
        draft = base_draft(rng, source, min_len=1, max_len=8)
        if draft is None:
            return None
        text = "\n".join(draft.old)
        if control and "\\" not in text:
            continue
        if control:
            draft.variant = "control-backslash-in-file"
            draft.perturbations.append("P7:control")
            return finish("P7", draft, ctx.counter, tier=lambda t: t == "exact")
        draft.escape = True
        draft.variant = "escaped"
        draft.perturbations.append("P7:escaped")
        # only a request that T1-T5 cannot place tests the unescaping tier (and its new_text
        # is unescaped only there)
        return finish("P7", draft, ctx.counter,
                      tier=lambda t: t is not None and t.startswith("unescape:"))
    return None


def gen_p9(rng: Rng, source: Source, ctx: Ctx) -> Case | None:
    drop_first = rng.random() < 0.5
    spec = EditSpec(keep_first=drop_first, keep_last=not drop_first)
    draft = base_draft(rng, source, min_len=3, spec=spec)
    if draft is None:
        return None
    if drop_first:
        draft.old.pop(0)
        draft.new.pop(0)
        for nl in draft.new:
            if nl.src is not None:
                nl.src -= 1
        draft.start += 1
        draft.variant = "drop-first"
    else:
        draft.old.pop()
        draft.new.pop()
        draft.end -= 1
        draft.variant = "drop-last"
        if draft.end < len(draft.fm.lines) and not draft.new:
            draft.trailing_nl = True
    if not any(x.strip() for x in draft.old):
        return None
    draft.perturbations.append(f"P9:{draft.variant}")
    return finish("P9", draft, ctx.counter)


def gen_p11(rng: Rng, source: Source, ctx: Ctx) -> Case | None:
    start_mid = rng.random() < 0.5
    draft = base_draft(rng, source, min_len=1, max_len=12,
                       spec=EditSpec(kinds=("rename", "literal", "insert", "delete")))
    if draft is None or not draft.new:
        return None
    if start_mid:
        a = 0
        old0, new0 = draft.old[0], draft.new[0].req
        while a < min(len(old0), len(new0)) and old0[a] == new0[a]:
            a += 1
        if a < 2:
            return None
        draft.cut_start = rng.randint(1, a - 1) if a > 1 else 1
        draft.variant = "start-mid-line"
    else:
        oldz, newz = draft.old[-1], draft.new[-1].req
        b = 0
        while b < min(len(oldz), len(newz)) and oldz[-1 - b] == newz[-1 - b]:
            b += 1
        if b < 2 or (len(draft.old) == 1 and len(draft.new) != 1):
            return None
        draft.trailing_nl = False
        draft.cut_end = rng.randint(1, b - 1)
        draft.variant = "end-mid-line"
    if draft.cut_end and draft.cut_end >= len(draft.old[-1]):
        return None
    draft.perturbations.append(f"P11:{draft.variant}")
    return finish("P11", draft, ctx.counter)


def gen_p12(rng: Rng, source: Source, ctx: Ctx) -> Case | None:
    draft = base_draft(rng, source, min_len=1, max_len=15)
    if draft is None:
        return None
    draft.prefix_style = rng.choice(["catn", "catn", "pipe"])
    draft.prefix_new = bool(draft.new) and rng.random() < 0.5
    draft.variant = draft.prefix_style + ("+new" if draft.prefix_new else "")
    draft.perturbations.append(f"P12:{draft.variant}")
    return finish("P12", draft, ctx.counter)


def _one_to_one(draft: Draft) -> list[int]:
    """Indices of old lines changed by a 1:1 edit (rename/literal)."""
    if len(draft.new) != len(draft.old):
        return []
    return [i for i, nl in enumerate(draft.new) if nl.src is None]


def _t8_sized(lines: Sequence[str]) -> bool:
    return sum(1 for x in lines if x.strip()) >= 3 and len(re.sub(r"\s", "", "".join(lines))) >= 40


def gen_p14(rng: Rng, source: Source, ctx: Ctx) -> Case | None:
    draft = base_draft(rng, source, min_len=3, spec=EditSpec(kinds=("rename", "literal")))
    if draft is None:
        return None
    changed = _one_to_one(draft)
    if not changed:
        return None
    i = rng.choice(changed)
    old_line, new_line = draft.old[i], draft.new[i].req
    ops = [op for op in difflib.SequenceMatcher(None, old_line, new_line, autojunk=False)
           .get_opcodes() if op[0] != "equal"]
    if len(ops) >= 2 and rng.random() < 0.6:
        # target-state leakage: old already carries the first part of the change
        _tag, a1, a2, b1, b2 = ops[0]
        draft.old[i] = old_line[:a1] + new_line[b1:b2] + old_line[a2:]
        draft.variant = "leaked-target-state"
    else:
        # hallucination on the very line being changed: another token differs
        tokens = list(re.finditer(r"[A-Za-z]{3,}|\d+", old_line))
        if not tokens:
            return None
        m = rng.choice(tokens)
        word = m.group(0)
        mutated = word + "s" if word.isalpha() else str(int(word) + 7)
        draft.old[i] = old_line[:m.start()] + mutated + old_line[m.end():]
        if draft.old[i] == new_line:
            return None
        follows = old_line[m.end():m.end() + 1]
        # An "s" put inside a longer name (explicit_bases -> explicits_bases, hsv_to_rgb ->
        # hsvs_to_rgb) is one letter slipped into a word: the typo the near_miss tier recovers
        # on a changed line when the rest of old text identifies the place beyond doubt (issue
        # 15). Such a case may apply at the truth or be refused (``either``). A digit changed,
        # or an "s" at a word's end (another value, a plural: another word) is not a typo and
        # must still be refused.
        typo = word.isalpha() and (follows.isalnum() or follows == "_")
        draft.variant = "typo-on-edited-line" if typo else "altered-edited-line"
    draft.perturbations.append(f"P14:{draft.variant}")
    case = finish("P14", draft, ctx.counter)
    if case is not None and draft.variant == "typo-on-edited-line" and \
            case.label == "must_refuse" and set(case.refuse_codes) <= set(CONFLICT_CODES):
        case.label = case.oracle["label"] = "either"
        case.oracle["reason"] = "P14: a typo in a changed line, recoverable (issue 15)"
        case.expected_ops = [draft.replacement()]
    return case


def far_position(rng: Rng, fm: FileModel, s: int, e: int) -> int | None:
    """A line boundary (insert before line p, 1-based) far from ``s..e``."""
    n = len(fm.lines)
    last = n if fm.final_newline else n - 1
    options = [p for p in range(1, last + 2) if not (s < p <= e)
               and (p == 1 or not fm.lines[p - 2].rstrip().endswith("\\"))]
    if not options:
        return None
    picks = rng.sample(options, min(6, len(options)))
    return max(picks, key=lambda p: min(abs(p - s), abs(p - e - 1)))


def gen_p15(rng: Rng, source: Source, ctx: Ctx) -> Case | None:
    fm = source.model
    variant = rng.choice(["dup", "dup", "dup+hint", "dup+wrong-hint", "dup-reindented",
                          "dup-reindented+shifted-old"])
    reindent = variant.startswith("dup-reindented")
    span = pick_span(rng, fm, min_len=1, max_len=12, pure_indent=reindent)
    if span is None:
        return None
    s, e = span
    k = e - s + 1
    p = far_position(rng, fm, s, e)
    if p is None:
        return None
    region_eol = next((x for x in fm.eols[s - 1:e] if x), fm.majority_eol)
    unit = fm.indent_unit
    copy = []
    for i in range(s - 1, e):
        line = fm.lines[i]
        if reindent and line.strip():
            line = unit + line
        copy.append(line + (fm.eols[i] or region_eol))
    op = LineReplacement(p, p - 1, "".join(copy))
    mfm = FileModel.parse(apply_replacements(source.raw, [op]))
    if p <= s:
        s, e = s + k, e + k
    draft = base_draft(rng, source, fm=mfm, file_ops=[op], span=(s, e))
    if draft is None:
        return None
    draft.variant = variant
    draft.perturbations.append(f"P15:{variant}")
    if variant == "dup+hint":
        draft.hint = (s, e)
    elif variant == "dup+wrong-hint":
        n = len(mfm.lines)
        far = [x for x in (1, n // 2, n) if min(abs(x - s), abs(x - p)) > 2 * max(5, k) + k]
        if not far:
            return None
        draft.hint = (far[0], min(n, far[0] + k - 1))
    elif variant == "dup-reindented+shifted-old" and not p2_indent_shift(rng, draft):
        return None
    return finish("P15", draft, ctx.counter)


def gen_p16(rng: Rng, source: Source, ctx: Ctx) -> Case | None:
    fm = source.model
    draft = base_draft(rng, source, spec=EditSpec(kinds=tuple(
        k for k in DEFAULT_WEIGHTS if k != "delete_all")))
    if draft is None or not draft.new:
        return None
    rep = draft.replacement()
    mfm = FileModel.parse(apply_replacements(fm.raw, [rep]))
    old, new = draft.texts()
    e2 = draft.start + len(draft.new) - 1
    request = {"path": source.name, "old_text": old, "new_text": new}
    return make_case("P16", "already-applied-" + draft.edit_kind, ["P16"], source, [rep],
                     request, [Span(draft.start, e2)], [], ctx.counter, want="noop") \
        if mfm.lines else None


def gen_p17(rng: Rng, source: Source, ctx: Ctx) -> Case | None:
    draft = base_draft(rng, source)
    if draft is None:
        return None
    draft.new = [NewLine.same(x, i) for i, x in enumerate(draft.old)]
    if not draft.trailing_nl and draft.end < len(draft.fm.lines):
        draft.trailing_nl = rng.random() < 0.5
    draft.variant = "identical"
    draft.perturbations.append("P17")
    return finish("P17", draft, ctx.counter)


def _informative(line: str) -> str | None:
    key = re.sub(r"\s+", " ", line).strip()
    letters = re.sub(r"[\W_]", "", key)
    return key if len(letters) >= 8 else None


def _shares_informative_line(old_lines: Iterable[str], raw: bytes) -> bool:
    f = OFile.from_bytes(raw)
    keys = {k for k in (_informative(x) for x in f.lines) if k}
    return any(_informative(x) in keys for x in old_lines if _informative(x))


def gen_p18(rng: Rng, source: Source, ctx: Ctx) -> Case | None:
    if rng.random() < 0.6:
        others = [s for s in ctx.pool if s.key != source.key and s.kind == source.kind] or \
            [s for s in ctx.pool if s.key != source.key]
        other = rng.choice(others)
        draft = base_draft(rng, other, min_len=2, max_len=10)
        if draft is None:
            return None
        old, new = draft.texts()
        raw = source.raw
        ops: list[LineReplacement] = []
        variant = "from-other-file"
    else:
        draft = base_draft(rng, source, min_len=2, max_len=8)
        if draft is None:
            return None
        old, new = draft.texts()
        ops = [LineReplacement(draft.start, draft.end, "")]
        raw = apply_replacements(source.raw, ops)
        if not FileModel.parse(raw).lines:
            return None
        variant = "deleted-code"
    if _shares_informative_line(draft.old, raw):
        ctx.counter.discarded["P18:shares a line with the file"] = \
            ctx.counter.discarded.get("P18:shares a line with the file", 0) + 1
        return None
    request = {"path": source.name, "old_text": old, "new_text": new}
    return make_case("P18", variant, ["P18"], source, ops, request, [None], [], ctx.counter,
                     want="must_refuse")


def _flip_case(word: str) -> str:
    if word in ("True", "False", "None"):
        return word.lower()
    if word[0].isupper():
        return word[0].lower() + word[1:]
    return word[0].upper() + word[1:]


def gen_p19(rng: Rng, source: Source, ctx: Ctx) -> Case | None:
    draft = base_draft(rng, source, min_len=1, spec=EditSpec(kinds=("rename", "literal")))
    if draft is None:
        return None
    changed = _one_to_one(draft)
    if not changed:
        return None
    lines = range(len(draft.old)) if not _t8_sized(draft.old) else changed
    sites = [(i, m) for i in lines for m in re.finditer(r"\b[A-Za-z][A-Za-z_]+\b", draft.old[i])]
    if not sites:
        return None
    i, m = rng.choice(sites)
    draft.old[i] = draft.old[i][:m.start()] + _flip_case(m.group(0)) + draft.old[i][m.end():]
    for nl in draft.new:
        if nl.src == i:
            nl.req = draft.old[i]
    draft.variant = "case-on-edited-line" if i in changed else "case-small-span"
    draft.perturbations.append("P19")
    return finish("P19", draft, ctx.counter)


def gen_p20(rng: Rng, source: Source, ctx: Ctx) -> Case | None:
    draft = base_draft(rng, source, must_start=1, min_len=1, max_len=8)
    if draft is None:
        return None
    draft.bom_prefix = rng.random() < 0.5
    draft.variant = "bom-in-old" if draft.bom_prefix else "bom-file"
    draft.perturbations.append(f"P20:{draft.variant}")
    return finish("P20", draft, ctx.counter)


def gen_p21(rng: Rng, source: Source, ctx: Ctx) -> Case | None:
    fm = source.model
    draft = base_draft(rng, source, must_end=len(fm.lines), min_len=2, max_len=10,
                       spec=EditSpec(keep_last=True, kinds=("rename", "literal", "insert",
                                                            "delete", "wrap")))
    if draft is None:
        return None
    draft.trailing_nl = True  # old_text and new_text end with "\n"; the file does not
    draft.variant = "old-ends-with-newline"
    draft.perturbations.append("P21")
    return finish("P21", draft, ctx.counter)


def gen_p22(rng: Rng, source: Source, ctx: Ctx) -> Case | None:
    fm = source.model
    span = pick_span(rng, fm, min_len=2, max_len=12)
    if span is None:
        return None
    s, e = span
    eol = next((x for x in fm.eols[s - 1:e] if x), fm.majority_eol)
    variant = rng.choice(["formfeed-inside", "formfeed-before", "line-separator",
                          "lone-cr-elsewhere"])
    k_added = 0
    if variant == "formfeed-inside":
        at = rng.randint(s + 1, e)
        ops = [LineReplacement(at, at - 1, "\x0c" + eol)]
        e += 1
        k_added = 1
    elif variant == "formfeed-before":
        ops = [LineReplacement(s, s - 1, "\x0c" + eol)]
        k_added = 1
        s, e = s + 1, e + 1
    elif variant == "line-separator":
        at = rng.randint(s, e)
        line = fm.lines[at - 1]
        ops = [LineReplacement(at, at, line + " \u2028 zb" + (fm.eols[at - 1] or ""))]
    else:
        p = far_position(rng, fm, s, e)
        if p is None:
            return None
        ops = [LineReplacement(p, p - 1, "zb lone\rcarriage return" + eol)]
        if p <= s:
            s, e = s + 1, e + 1
    del k_added
    mfm = FileModel.parse(apply_replacements(source.raw, ops))
    draft = base_draft(rng, source, fm=mfm, file_ops=ops, span=(s, e))
    if draft is None:
        return None
    draft.variant = variant
    draft.perturbations.append(f"P22:{variant}")
    return finish("P22", draft, ctx.counter)


def _disjoint_spans(rng: Rng, fm: FileModel, count: int) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    for _ in range(count * 8):
        if len(spans) == count:
            break
        span = pick_span(rng, fm, min_len=1, max_len=6, tries=5)
        if span is None:
            continue
        s, e = span
        if all(e + 1 < a or b + 1 < s for a, b in spans):
            spans.append(span)
    return sorted(spans)


def gen_p23(rng: Rng, source: Source, ctx: Ctx) -> Case | None:
    fm = source.model
    if len(fm.lines) < 30:
        return None
    count = rng.randint(2, 5)
    spans = _disjoint_spans(rng, fm, count)
    if len(spans) < 2:
        return None
    fail = rng.random() < 0.5
    spec = EditSpec(kinds=("rename", "literal", "insert", "delete"))
    patches: list[dict[str, Any]] = []
    truths: list[Span | None] = []
    reps: list[LineReplacement] = []
    families: list[str] = []
    for s, e in spans:
        draft = base_draft(rng, source, span=(s, e), spec=spec)
        if draft is None:
            return None
        draft.trailing_nl = bool(draft.new) or draft.trailing_nl
        if e == len(fm.lines) and not fm.final_newline:
            draft.trailing_nl = False
            if not draft.new:
                return None
        old, new = draft.texts()
        patch: dict[str, Any] = {"old_text": old, "new_text": new}
        if rng.random() < 0.3:
            patch["start_line"] = s
        patches.append(patch)
        truths.append(Span(s, e))
        reps.append(draft.replacement())
        families.append("P0")
    variant = f"{len(patches)}-patches-ok"
    if fail:
        j = rng.randrange(len(patches))
        how = rng.choice(["absent", "case-flip"])
        if how == "absent":
            others = [s for s in ctx.pool if s.key != source.key and s.kind == source.kind] or \
                [s for s in ctx.pool if s.key != source.key]
            other_draft = base_draft(rng, rng.choice(others), min_len=2, max_len=5)
            if other_draft is None or _shares_informative_line(other_draft.old, source.raw):
                return None
            old, new = other_draft.texts()
            patches[j] = {"old_text": old, "new_text": new}
            families[j] = "P18"
        else:
            old = patches[j]["old_text"]
            words = list(re.finditer(r"\b[A-Za-z][A-Za-z_]+\b", old))
            if not words:
                return None
            m = rng.choice(words)
            patches[j] = {"old_text": old[:m.start()] + _flip_case(m.group(0)) + old[m.end():],
                          "new_text": patches[j]["new_text"]}
            families[j] = "P19"
        truths[j] = None
        variant = f"{len(patches)}-patches-{how}-at-{j}"
    request = {"path": source.name, "patches": patches}
    return make_case("P23", variant, ["P23"], source, [], request, truths,
                     [] if fail else reps, ctx.counter, patch_families=families,
                     want="must_refuse" if fail else None)


def gen_p26(rng: Rng, source: Source, ctx: Ctx) -> Case | None:
    fm = source.model
    variant = rng.choice(["token", "token", "line", "count-ok", "count-wrong", "indent-only",
                          "trailing-ws"])
    lf = fm.lf_view
    if variant in ("token", "count-ok", "count-wrong"):
        counts: dict[str, int] = {}
        for m in IDENT.finditer(lf):
            counts[m.group(0)] = counts.get(m.group(0), 0) + 1
        words = sorted(w for w, c in counts.items() if 2 <= c <= 8 and len(w) >= 4
                       and lf.count(w) == c and w not in KEYWORDS)
        if not words:
            return None
        word = rng.choice(words)
        occurrences = _find_all(lf, word)
        lines_hit = sorted({lf.count("\n", 0, a) + 1 for a in occurrences})
        if any(not fm.line_is_plain(i - 1) for i in lines_hit):
            return None
        new_word = word + "_v2"
        reps = [LineReplacement(i, i, fm.lines[i - 1].replace(word, new_word)
                                + fm.eols[i - 1]) for i in lines_hit]
        truths: list[Span | None] = []
        for a in occurrences:
            row = lf.count("\n", 0, a) + 1
            col = a - (lf.rfind("\n", 0, a) + 1)
            truths.append(Span(row, row, col, col + len(word)))
        request: dict[str, Any] = {"path": source.name, "old_text": word, "new_text": new_word,
                                   "replace_all": True}
        if variant == "count-ok":
            request["expected_count"] = len(occurrences)
        elif variant == "count-wrong":
            request["expected_count"] = len(occurrences) + 1
        return make_case("P26", variant, ["P26"], source, [], request, truths, reps,
                         ctx.counter)
    # whole lines occurring at least twice
    positions: dict[str, list[int]] = {}
    for i, line in enumerate(fm.lines):
        if len(line.strip()) >= 8 and fm.line_is_plain(i):
            positions.setdefault(line, []).append(i + 1)
    repeated = sorted(line for line, at in positions.items() if len(at) >= 2)
    if not repeated:
        return None
    line = rng.choice(repeated)
    at = positions[line]
    made = _edit_rename(rng, [line], source.kind, fm.indent_unit)
    if made is None or made[0].src is not None:
        return None
    new_line = made[0].req
    if variant == "indent-only":
        unit = fm.indent_unit
        request = {"path": source.name, "old_text": unit * 3 + line + "\n",
                   "new_text": unit * 3 + new_line + "\n", "replace_all": True}
        return make_case("P26", variant, ["P26", "P2"], source, [], request, [], [],
                         ctx.counter, want="must_refuse")
    if variant == "trailing-ws":
        ops = [LineReplacement(i, i, line + rng.choice([" ", "\t", "  "]) + fm.eols[i - 1])
               for i in at]
        raw = apply_replacements(source.raw, ops)
        mfm = FileModel.parse(raw)
    else:
        ops, mfm = [], fm
    if any(not mfm.eols[i - 1] for i in at):
        return None
    if lf.count(line + "\n") != len(at) and variant == "line":
        return None
    reps = [LineReplacement(i, i, new_line + mfm.eols[i - 1]) for i in at]
    request = {"path": source.name, "old_text": line + "\n", "new_text": new_line + "\n",
               "replace_all": True}
    return make_case("P26", variant, ["P26"] + (["P1"] if ops else []), source, ops, request,
                     [Span(i, i) for i in at], reps, ctx.counter)


def _find_all(text: str, needle: str) -> list[int]:
    out = []
    pos = text.find(needle)
    while pos != -1:
        out.append(pos)
        pos = text.find(needle, pos + len(needle))
    return out


# Families whose matcher tiers come later: generated only when asked for.


def gen_p8(rng: Rng, source: Source, ctx: Ctx) -> Case | None:
    """Paired elision: the same unchanged middle of old and new replaced by a marker line.

    Labelled by the oracle, which does not model T7: ``either`` until elision is specified in
    the oracle too."""
    draft = base_draft(rng, source, min_len=8, max_len=25,
                       spec=EditSpec(kinds=("rename", "literal")))
    if draft is None or len(draft.new) != len(draft.old):
        return None
    k = len(draft.old)
    same = [i for i in range(1, k - 1) if draft.new[i].src == i]
    if len(same) < 3:
        return None
    a = rng.choice(same[:-2])
    b = a
    while b + 1 < k - 1 and draft.new[b + 1].src == b + 1 and b - a < 8:
        b += 1
    if b - a < 2:
        return None
    marker = {"python": "# ... existing code ...", "shell": "# ..."}.get(
        source.kind, "// ... existing code ..." if source.kind in BRACE_KINDS else "...")
    line = lead(draft.old[a]) + marker
    old_lines = [*draft.old[:a], line, *draft.old[b + 1:]]
    new_lines = [*(n.req for n in draft.new[:a]), line, *(n.req for n in draft.new[b + 1:])]
    old = "\n".join(old_lines) + ("\n" if draft.trailing_nl else "")
    new = "\n".join(new_lines) + ("\n" if draft.trailing_nl else "")
    request = {"path": source.name, "old_text": old, "new_text": new}
    return make_case("P8", "paired-marker", ["P8"], source, [], request,
                     [Span(draft.start, draft.end)], [draft.replacement()], ctx.counter)


def gen_p10(rng: Rng, source: Source, ctx: Ctx) -> Case | None:
    """Boundary hallucination: a line that is not in the file added at an edge of old and new
    (as context). Applied via T8 only if gated, so the label is ``either`` at best; the
    expected result drops the hallucinated line (the merge keeps the file's lines)."""
    draft = base_draft(rng, source, min_len=3, spec=EditSpec(kinds=("rename", "literal")))
    if draft is None:
        return None
    fake = inserted_line(source.kind, lead(draft.old[0]), rng.randint(100, 999))
    rep = draft.replacement()
    if rng.random() < 0.5:
        draft.old.insert(0, fake)
        draft.new.insert(0, NewLine(fake, fake, None))
        variant = "fake-first-line"
    else:
        draft.old.append(fake)
        draft.new.append(NewLine(fake, fake, None))
        variant = "fake-last-line"
    old, new = draft.texts()
    request = {"path": source.name, "old_text": old, "new_text": new}
    return make_case("P10", variant, ["P10"], source, [], request,
                     [Span(draft.start, draft.end)], [rep], ctx.counter)


def gen_p13(rng: Rng, source: Source, ctx: Ctx) -> Case | None:
    """A middle line hallucinated in old (and copied into new), not touched by the edit."""
    draft = base_draft(rng, source, min_len=5, spec=EditSpec(kinds=("rename", "literal")))
    if draft is None:
        return None
    untouched = [i for i, nl in enumerate(draft.new) if nl.src == i and 0 < i < len(draft.old) - 1
                 and re.search(r"[A-Za-z]{3,}", draft.old[i])]
    if not untouched or len(draft.new) != len(draft.old):
        return None
    i = rng.choice(untouched)
    m = rng.choice(list(re.finditer(r"[A-Za-z]{3,}", draft.old[i])))
    altered = draft.old[i][:m.start()] + m.group(0)[::-1] + draft.old[i][m.end():]
    if altered == draft.old[i]:
        return None
    draft.old[i] = altered
    draft.new[i].req = altered
    draft.variant = "hallucinated-context-line"
    draft.perturbations.append("P13")
    return finish("P13", draft, ctx.counter)


def gen_p24(rng: Rng, source: Source, ctx: Ctx) -> Case | None:
    """Two patches whose spans overlap: must refuse (overlapping_edits)."""
    fm = source.model
    span = pick_span(rng, fm, min_len=4, max_len=12)
    if span is None:
        return None
    s, e = span
    mid = (s + e) // 2
    d1 = base_draft(rng, source, span=(s, mid + 1), spec=EditSpec(kinds=("rename", "literal")))
    d2 = base_draft(rng, source, span=(mid, e), spec=EditSpec(kinds=("rename", "literal")))
    if d1 is None or d2 is None:
        return None
    d1.trailing_nl = d2.trailing_nl = True
    if e == len(fm.lines) and not fm.final_newline:
        d2.trailing_nl = False
    patches = []
    for d in (d1, d2):
        old, new = d.texts()
        patches.append({"old_text": old, "new_text": new})
    request = {"path": source.name, "patches": patches}
    return make_case("P24", "overlap", ["P24"], source, [], request,
                     [Span(s, mid + 1), Span(mid, e)], [], ctx.counter)


def gen_p25(rng: Rng, source: Source, ctx: Ctx) -> Case | None:
    """A unified-diff version of a P0 edit, sent as ``{path, patch}``; labelled as the
    equivalent old_text/new_text request (headers carry the true line numbers)."""
    draft = base_draft(rng, source, min_len=1, max_len=10)
    if draft is None:
        return None
    old, new = draft.texts()
    if not old.endswith("\n") or (new and not new.endswith("\n")):
        return None
    rows = [f"--- a/{source.name}", f"+++ b/{source.name}",
            f"@@ -{draft.start},{len(draft.old)} +{draft.start},{len(draft.new)} @@"]
    sm = difflib.SequenceMatcher(None, draft.old, [n.req for n in draft.new], autojunk=False)
    for tag, a1, a2, b1, b2 in sm.get_opcodes():
        if tag == "equal":
            rows += [" " + x for x in draft.old[a1:a2]]
        else:
            rows += ["-" + x for x in draft.old[a1:a2]]
            rows += ["+" + n.req for n in draft.new[b1:b2]]
    request = {"path": source.name, "patch": "\n".join(rows) + "\n"}
    # the hunk header's line numbers are a hint, as start_line/end_line would be
    label_req = {"path": source.name, "old_text": old, "new_text": new,
                 "start_line": draft.start, "end_line": draft.end}
    case = make_case("P25", "udiff", ["P25"], source, [], label_req, [draft.truth()],
                     [draft.replacement()], ctx.counter)
    if case is not None:
        case.request = request
    return case


FAMILY_GENERATORS: dict[str, FamilyGen] = {
    "P0": gen_p0, "P1": gen_p1, "P2": gen_p2, "P3": gen_p3, "P4": gen_p4, "P5": gen_p5,
    "P6": gen_p6, "P7": gen_p7, "P8": gen_p8, "P9": gen_p9, "P10": gen_p10, "P11": gen_p11,
    "P12": gen_p12, "P13": gen_p13, "P14": gen_p14, "P15": gen_p15, "P16": gen_p16,
    "P17": gen_p17, "P18": gen_p18, "P19": gen_p19, "P20": gen_p20, "P21": gen_p21,
    "P22": gen_p22, "P23": gen_p23, "P24": gen_p24, "P25": gen_p25, "P26": gen_p26,
}


def family_sources(family: str, sources: Sources) -> list[Source]:
    pool = [s for s in sources.all() if "big" not in s.tags]
    if family == "P20":
        return sources.tagged("bom")
    if family == "P21":
        return sources.tagged("no_final_newline")
    if family == "P4":
        special = sources.tagged("crlf") + sources.tagged("mixed_eol")
        return special * 3 + pool
    if family == "P1":
        return sources.tagged("trailing_ws") * 4 + pool
    if family == "P3":
        tabbed = [s for s in pool if s.model.indent_unit == "\t"]
        return tabbed * 3 + pool
    if family == "P6":  # curly quotes cannot go into a file that is not UTF-8
        utf8 = [s for s in pool if s.model.valid_utf8]
        typo = [s for s in utf8 if any(ch in s.model.lf_view for ch in "\u2019\u201c\u2014\u00a0")]
        return typo * 6 + utf8
    if family == "P7":
        escaped = [s for s in pool if s.kind in ("json", "c", "latex", "shell")]
        return escaped * 3 + pool
    if family == "P15":
        return [s for s in pool if len(s.model.lines) >= 20]
    if family in ("P23", "P24"):
        return [s for s in pool if len(s.model.lines) >= 30]
    return pool


# --------------------------------------------------------------------------------------------
# The corpus


@dataclass
class Corpus:
    cases: list[Case]
    seed: int
    families: tuple[str, ...]
    discarded: dict[str, int]
    skipped_sources: dict[str, str]
    shortfall: dict[str, int]  # family -> cases missing from the target

    def by_family(self) -> dict[str, list[Case]]:
        out: dict[str, list[Case]] = {}
        for case in self.cases:
            out.setdefault(case.family, []).append(case)
        return out


def generate_corpus(seed: int = 0, *, families: Sequence[str] = DEFAULT_FAMILIES,
                    per_family: int = 12, peers: bool = True,
                    sources: Sources | None = None) -> Corpus:
    """Cases for every family in ``families`` (``per_family`` each) plus the peer cases."""
    sources = sources or load_sources()
    unknown = set(families) - set(FAMILY_GENERATORS)
    if unknown:
        raise ValueError(f"unknown families: {sorted(unknown)}")
    counter = Counter()
    pool = [s for s in sources.all() if "big" not in s.tags]
    ctx = Ctx(sources, counter, pool)
    cases: list[Case] = []
    shortfall: dict[str, int] = {}
    for family in families:
        rng = random.Random(f"zbtools-edit-corpus:{seed}:{family}")
        eligible = family_sources(family, sources)
        order = eligible[:]
        rng.shuffle(order)
        made: list[Case] = []
        attempts = 0
        limit = per_family * 60
        while len(made) < per_family and attempts < limit and order:
            source = order[attempts % len(order)]
            attempts += 1
            case = FAMILY_GENERATORS[family](rng, source, ctx)
            if case is not None:
                made.append(case)
        if len(made) < per_family:
            shortfall[family] = per_family - len(made)
        cases += made
    if peers:
        cases += peer_cases(counter)
    return Corpus(cases, seed, tuple(families), dict(sorted(counter.discarded.items())),
                  dict(sources.skipped), shortfall)


# --------------------------------------------------------------------------------------------
# Peer-regression cases (hand-written, docs/internals/matching.md#corpus-generation)


def _peer_source(name: str, text: str | bytes) -> Source:
    raw = text if isinstance(text, bytes) else text.encode("utf-8")
    return Source(f"peer:{name}", name, kind_of(name), raw, "peer", frozenset({"peer"}))


def peer_sources() -> dict[str, Source]:
    base = load_sources(stdlib=False)
    out: dict[str, Source] = {}

    def add(source: Source) -> None:
        out[source.key] = source

    add(_peer_source("aaaa.py", "x = 'aaaa'\ny = 1\n"))
    add(_peer_source("pi355.ini", (
        b"[server]\r\nhost = localhost\r\nport = 8080\r\n\r\n"
        b"[backup]\r\nhost = localhost\r\nport = 8080\r\n\r\n"
        b"[mirror]\r\nhost = example.org\r\nport = 8081\r\n")))
    add(_peer_source("empty_guard.py", "def main():\n    print('hello')\n\n\nmain()\n"))
    add(base["generated:big_handlers.py"] if "generated:big_handlers.py" in base.by_key
        else _big_source())
    return out


def _big_source() -> Source:
    from tests.edit_corpus.sources import big_file
    return big_file()


def peer_cases(counter: Counter | None = None) -> list[Case]:
    """Every peer regression of section 8.2 that the enabled families cover."""
    counter = counter or Counter()
    fx = load_sources(stdlib=False)
    peers = peer_sources()
    out: list[Case] = []

    def case(peer: str, variant: str, source: Source, request: dict[str, Any],
             truth: Sequence[Span | None], reps: Sequence[LineReplacement], want: str,
             *, file_ops: Sequence[LineReplacement] = (), family: str = "peer",
             patch_families: Sequence[str] | None = None) -> None:
        request = {"path": source.name, **request}
        made = make_case(family, variant, [f"peer:{peer}"], source, file_ops, request, truth,
                         reps, counter, patch_families=patch_families, peer=peer, want=want)
        assert made is not None
        made.family = "peer"
        made.id = "peer-" + made.id.split("-", 1)[1]
        out.append(made)

    def rep(source: Source, s: int, e: int, new_lines: Sequence[str | int]) -> LineReplacement:
        """Replace lines s..e: ints copy old line s+i (0-based offset), strs are new lines."""
        fm = source.model
        news = [NewLine.same(fm.lines[s - 1 + x], x) if isinstance(x, int)
                else NewLine.changed(x) for x in new_lines]
        return LineReplacement(s, e, render_replacement(fm, s, e, news))

    dup = fx["fixture:duplicates.py"]
    close_body = ("        if self.open:\n            self.conn.close()\n"
                  "            self.open = False\n        return None\n")
    close_new = close_body.replace("self.conn.close()", "self.pool.release(self.conn)")
    # the two-close() trap (docs/internals/matching.md#i1), exact tier
    case("two-close", "exact-duplicate", dup,
         {"old_text": "    def close(self):\n" + close_body,
          "new_text": "    def close(self):\n" + close_new}, [Span(14, 18)], [], "must_refuse")
    # ... with a hint it applies at the hinted copy
    case("two-close", "hint-picks-second", dup,
         {"old_text": close_body, "new_text": close_new, "start_line": 30, "end_line": 33},
         [Span(30, 33)], [rep(dup, 30, 33, [0, "            self.pool.release(self.conn)", 2, 3])],
         "must_apply")
    # opencode's bug: dedented old_text matches two blocks at different indents (T3) -> ambiguous
    case("two-close", "dedented-matches-two-indents", dup,
         {"old_text": "if self.open:\n    self.conn.close()\n    self.open = False\nreturn None\n",
          "new_text": "if self.open:\n    self.pool.release(self.conn)\n    self.open = False\n"
                      "return None\n"}, [Span(15, 18)], [], "must_refuse")
    # distinguishing context makes it unique
    case("two-close", "with-distinguishing-context", dup,
         {"old_text": "    def write(self, data):\n        self.conn.sendall(data)\n\n"
                      "    def close(self):\n        if self.open:\n",
          "new_text": "    def write(self, data):\n        self.conn.sendall(bytes(data))\n\n"
                      "    def close(self):\n        if self.open:\n"},
         [Span(26, 30)], [rep(dup, 26, 30, [0, "        self.conn.sendall(bytes(data))", 2, 3,
                                            4])], "must_apply")

    stats = fx["fixture:stats.py"]
    inner = '        "games": 12,\n        "wins": 7,\n        "draws": 3,\n'
    case("aider-2050", "player-white-black-shape", stats,
         {"old_text": inner, "new_text": inner.replace('"wins": 7', '"wins": 8')},
         [Span(7, 9)], [], "must_refuse")
    case("aider-2050", "with-key-line", stats,
         {"old_text": '    "player_black": {\n' + inner,
          "new_text": '    "player_black": {\n' + inner.replace('"wins": 7', '"wins": 8')},
         [Span(12, 15)], [rep(stats, 12, 15, [0, 1, '        "wins": 8,', 3])], "must_apply")
    game = fx["fixture:game.json"]
    case("aider-2050", "json-clock-in-two-players", game,
         {"old_text": '    "clock": "01:12:30",\n    "time_control": "90+30"\n',
          "new_text": '    "clock": "01:10:00",\n    "time_control": "90+30"\n'},
         [Span(10, 11)], [], "must_refuse")

    go = fx["fixture:server.go"]
    case("opencode-14046", "weak-brace-anchor", go,
         {"old_text": "\t}\n", "new_text": "\t} // end\n"}, [Span(32, 32)], [], "must_refuse")
    case("opencode-14046", "return-brace", go,
         {"old_text": "\t\treturn\n\t}\n", "new_text": "\t\treturn // done\n\t}\n"},
         [Span(45, 46)], [], "must_refuse")
    inv = fx["fixture:inventory.py"]
    case("opencode-14632", "three-lines-plus-newline", inv,
         {"old_text": "    def release(self, sku: str, amount: int) -> None:\n"
                      "        held = self.reserved.get(sku, 0)\n"
                      "        if amount > held:\n",
          "new_text": "    def release(self, sku: str, amount: int) -> None:\n"
                      "        held = self.reserved.get(sku, 0)\n"
                      "        if amount <= 0 or amount > held:\n"},
         [Span(56, 58)], [rep(inv, 56, 58, [0, 1, "        if amount <= 0 or amount > held:"])],
         "must_apply")
    tws = fx["generated:trailing_ws.py"]
    case("opencode-45199", "blank-middle-lines-with-whitespace", tws,
         {"old_text": "        self.data = {}\n\n        self.hits = 0\n",
          "new_text": "        self.data = {}\n\n        self.hits = 1\n"},
         [Span(4, 6)], [rep(tws, 4, 6, [0, 1, "        self.hits = 1"])], "must_apply")
    case("cline-11439", "old-ends-mid-line", inv,
         {"old_text": "        if amount <= 0 or amount > MAX_RES",
          "new_text": "        if amount < 1 or amount > MAX_RES"},
         [Span(45, 45, 0, 42)],
         [rep(inv, 45, 45, ["        if amount < 1 or amount > MAX_RESERVATION:"])], "must_apply")

    guard = peers["peer:empty_guard.py"]
    case("cline-9555", "miss-with-empty-new-never-empties", guard,
         {"old_text": "def main():\n    print('goodbye')\n", "new_text": ""},
         [None], [], "must_refuse", family="P18")
    case("cline-9555", "multi-patch-miss-never-empties", guard,
         {"patches": [{"old_text": "def main():\n    print('hello')\n\n\nmain()\n",
                       "new_text": ""},
                      {"old_text": "print('missing')\n", "new_text": ""}]},
         [Span(1, 5), None], [], "must_refuse", patch_families=["P0", "P18"])

    pi = peers["peer:pi355.ini"]
    case("pi-355", "crlf-file-replace-all-lf-request", pi,
         {"old_text": "host = localhost\nport = 8080\n",
          "new_text": "host = 0.0.0.0\nport = 8080\n", "replace_all": True},
         [Span(2, 3), Span(6, 7)],
         [rep(pi, 2, 3, ["host = 0.0.0.0", 1]), rep(pi, 6, 7, ["host = 0.0.0.0", 1])],
         "must_apply")
    tex = fx["fixture:paper.tex"]
    case("gemini-20416", "latex-title-literal", tex,
         {"old_text": "\\title{Notes on the Nabla Operator}\n",
          "new_text": "\\title{Notes on the Nabla and Tau Operators}\n"},
         [Span(7, 7)], [rep(tex, 7, 7, ["\\title{Notes on the Nabla and Tau Operators}"])],
         "must_apply")
    case("gemini-20416", "latex-title-trailing-ws", tex,
         {"old_text": "\\title{Notes on the Nabla Operator}  \n"
                      "\\author{A. Author \\and B. Author}\n",
          "new_text": "\\title{Notes on \\textbackslash nabla}  \n"
                      "\\author{A. Author \\and B. Author}\n"},
         [Span(7, 8)], [rep(tex, 7, 8, ["\\title{Notes on \\textbackslash nabla}  ", 1])],
         "must_apply")
    sh = fx["fixture:deploy.sh"]
    case("gemini-6488", "shell-quote-escape", sh,
         {"old_text": "log 'done: it'\\''s live'", "new_text": "log 'done: it'\\''s really live'"},
         [Span(32, 32, 0, 24)], [rep(sh, 32, 32, ["log 'done: it'\\''s really live'"])],
         "must_apply")
    case("gemini-26209", "json-literal-backslash-n", game,
         {"old_text": '"notes": "Hello\\nworld: the',
          "new_text": '"notes": "Hello\\nbrave world: the'},
         [Span(3, 3, 2, 29)],
         [rep(game, 3, 3, ['  "notes": "Hello\\nbrave world: the \\"opening\\" was a Sicilian.'
                           '\\tAdjourned at move 41.",'])], "must_apply")
    aaaa = peers["peer:aaaa.py"]
    case("hermes-aaaa", "replace-all-self-overlap", aaaa,
         {"old_text": "aa", "new_text": "b", "replace_all": True},
         [Span(1, 1, 5, 7), Span(1, 1, 7, 9)], [rep(aaaa, 1, 1, ["x = 'bb'"])], "must_apply")
    case("hermes-aaaa", "single-edit-is-ambiguous", aaaa,
         {"old_text": "aa", "new_text": "b"}, [Span(1, 1, 5, 7)], [], "must_refuse")
    for i, token in enumerate(("$&", "\\1", "\\g<0>", "$1 and \\\\")):
        case("dollar-backrefs", f"literal-{i}", inv,
             {"old_text": 'DEFAULT_LOCATION = "main"', "new_text": f'DEFAULT_LOCATION = "{token}"'},
             [Span(10, 10, 0, 25)], [rep(inv, 10, 10, [f'DEFAULT_LOCATION = "{token}"'])],
             "must_apply")
    case("dollar-backrefs", "literal-at-trailing-ws-tier", tws,
         {"old_text": "    def get(self, key):\n        if key in self.data:\n",
          "new_text": "    def get(self, key):\n        if key in self.data and r'\\1$&':\n"},
         [Span(9, 10)], [rep(tws, 9, 10, [0, "        if key in self.data and r'\\1$&':"])],
         "must_apply")
    case("tabs-vs-spaces", "go-tabs-request-spaces", go,
         {"old_text": "    if s.closed {\n        return ErrClosed\n    }\n"
                      "    s.closed = true\n",
          "new_text": "    if s.closed {\n        return ErrClosed\n    }\n"
                      "    s.closed = true\n    s.requests = 0\n"},
         [Span(74, 77)], [rep(go, 74, 77, [0, 1, 2, 3, "\ts.requests = 0"])], "must_apply")
    crlf = fx["generated:crlf_service.cs"]
    case("crlf-lf", "crlf-file-lf-request", crlf,
         {"old_text": "            _issued++;\n            return rate * hours;\n",
          "new_text": "            _issued++;\n            return Math.Round(rate * hours, 2);\n"},
         [Span(24, 25)],
         [rep(crlf, 24, 25, [0, "            return Math.Round(rate * hours, 2);"])], "must_apply")
    stray = fx["generated:stray_byte.py"]
    case("latin1-elsewhere", "stray-byte-kept", stray,
         {"old_text": '    if size == "large":\n        base += 0.60\n',
          "new_text": '    if size == "large":\n        base += 0.75\n'},
         [Span(13, 14)], [rep(stray, 13, 14, [0, "        base += 0.75"])], "must_apply")
    latin = fx["generated:latin1_stock.txt"]
    case("latin1-elsewhere", "latin1-file-ascii-edit", latin,
         {"old_text": "Quantity: 12\n", "new_text": "Quantity: 15\n"},
         [Span(13, 13)], [rep(latin, 13, 13, ["Quantity: 15"])], "must_apply")
    case("multi-edit-one-miss", "three-patches-one-missing", inv,
         {"patches": [
             {"old_text": "MAX_RESERVATION = 50\n", "new_text": "MAX_RESERVATION = 80\n"},
             {"old_text": "        self.audit = True\n",
              "new_text": "        self.audit = False\n"},
             {"old_text": "        self.audit = Maybe\n",
              "new_text": "        self.audit = None\n"}]},
         [Span(11, 11), Span(34, 34), None], [], "must_refuse",
         patch_families=["P0", "P0", "P18"])
    applied_src = fx["fixture:inventory.py"]
    ops = [rep(applied_src, 11, 11, ["MAX_RESERVATION = 80"])]
    case("already-applied", "resend-after-success", applied_src,
         {"old_text": "MAX_RESERVATION = 50\n", "new_text": "MAX_RESERVATION = 80\n"},
         [Span(11, 11)], [], "noop", file_ops=ops)
    big = peers["peer:big_handlers.py"] if "peer:big_handlers.py" in peers else \
        peers["generated:big_handlers.py"]
    miss = "".join(f"def missing_{i:03d}(request):\n    return request.get('absent_{i}')\n"
                   for i in range(100))
    case("agent-os-439", "200-line-miss-in-12k-lines", big,
         {"old_text": miss, "new_text": miss.replace("absent", "present")},
         [None], [], "must_refuse", family="P18")
    return out

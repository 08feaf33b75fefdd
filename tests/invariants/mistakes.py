"""Edit requests on real source files, with the mistakes models make, and the file meant.

The generator behind ``test_wrong_place.py``. It builds on the edit corpus (``tests/edit_corpus``):
its source files (hand-written fixtures, byte-exact generated ones: CRLF, mixed line endings,
BOM, tabs, no final newline; hash-pinned standard-library modules), its intended edits
(``make_edit``: rename, literal, insert, delete, wrap, replace, append, delete all) and the way it
renders the file an edit means (``render_replacement``: kept lines keep their bytes, new lines
take the region's line ending). To those it adds the files and the changes of the real-code
benchmark (``benchmarks/data/realcode.json.gz``: old files of public packages and the hunks their
next release made).

``edit_cases()`` is a hypothesis strategy of ``EditCase``: a file, the bytes it must have after a
correct edit, and a request as a model sends it, after zero or more mistakes:

* to the lines sent, before the file meant is fixed: ``strip`` (trailing whitespace the model
  dropped, also from the lines it writes), ``trailing`` (trailing whitespace it added to lines it
  keeps), ``typo`` (one slip in a word of a line, repeated where new text keeps that line);
* structural, to the request only: ``missing`` (an interior line it keeps left out of old and
  new text), ``extra`` (an interior line the file lacks: a neighbour repeated, a line from
  elsewhere, an invented one; in both texts, or in old text only as if deleted), ``elision``
  (kept lines replaced by a ``... existing code ...`` marker, in both texts or old text only);
* to the text as a whole: ``reindent`` (every line shifted by 1-8 spaces or a tab, or tabs and
  spaces swapped), ``cut`` (old and new text start after the first line's indentation, as a
  substring copied from a read), ``numbers`` (``cat -n``, ``12: `` or ``12 │`` prefixes from a
  read), ``eol`` (CRLF for LF or the reverse).

and, in the file, optionally a ``decoy``: a copy of the target block planted far from it, with one
line changed (an identifier renamed), also re-indented, or an exact copy. Each case names the
tool that sends it: ``apply_edit``, ``edit_file``, Claude's ``Edit`` or a Codex ``apply_patch``
envelope. ``EditCase.probe`` keeps old text's lines as the model meant them (no prefixes, LF),
for the test's check that no other place of the file fits the request better than the target.
"""

from __future__ import annotations

import difflib
import functools
import gzip
import json
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import assume
from hypothesis import strategies as st

from tests.edit_corpus.generate import (
    IDENT,
    KEYWORDS,
    Draft,
    NewLine,
    base_draft,
    eligible_line,
    far_position,
    inserted_line,
    lead,
    p1_strip_all,
    p1_trailing_ws,
    pick_span,
    pure_indentation,
)
from tests.edit_corpus.sources import (
    FileModel,
    LineReplacement,
    Source,
    apply_replacements,
    kind_of,
    load_sources,
)

REALCODE = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "realcode.json.gz"
MAX_BLOCK = 15
TOOLS = ("apply_edit", "apply_edit", "apply_edit", "edit_file", "Edit", "apply_patch")
MISTAKES = ("strip", "trailing", "typo", "missing", "extra", "elision", "reindent", "cut",
            "numbers", "eol")
DECOYS = (None, None, "changed", "changed", "changed-reindented", "copy")


@dataclass(frozen=True)
class EditCase:
    """One request, the file it is sent to and the bytes a correct edit leaves there."""

    name: str  # the file's name in the workspace
    before: bytes = field(repr=False)
    intended: bytes = field(repr=False)
    tool: str  # apply_edit | edit_file | Edit | apply_patch
    old: str  # old text as sent (for apply_patch: the envelope)
    new: str
    target: tuple[int, int]  # the edited lines of ``before``, 0-based [start, end)
    probe: tuple[str, ...]  # old text's lines as meant: no prefixes, LF, no cut indentation
    marker: int | None = None  # index in ``probe`` of an elision marker line
    alternatives: tuple[bytes, ...] = field(default=(), repr=False)  # other readings, correct
    mistakes: tuple[str, ...] = ()
    decoy: str | None = None
    source: str = ""

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        """Hypothesis prints a failing case through this: without the file's bytes."""
        printer.text(repr(self))

    @property
    def exact_request(self) -> bool:
        """No mistake changes what old text says: it is the file's text (up to the
        normalisations every tier starts with: line endings, line-number prefixes; Claude's
        Edit reads a pasted prefix as text to find, as Claude Code does:
        docs/dialects.md#tiers)."""
        exact = {"eol", "cut"} if self.tool == "Edit" else {"numbers", "eol", "cut"}
        return not set(self.mistakes) - exact

    def arguments(self) -> tuple[list[str], dict[str, Any]]:
        """The command line and the JSON arguments that send this request."""
        if self.tool == "apply_patch":
            return ["--dialect", "codex", "apply_patch"], {"input": self.old}
        if self.tool == "Edit":
            return ["--dialect", "claude", "Edit"], {"file_path": self.name,
                                                     "old_string": self.old,
                                                     "new_string": self.new}
        if self.tool == "edit_file":
            return ["edit_file"], {"path": self.name, "old_content": self.old,
                                   "new_content": self.new}
        return ["apply_edit"], {"path": self.name, "old_text": self.old, "new_text": self.new}

    def describe(self) -> str:
        return (f"{self.tool} on {self.source or self.name} lines {self.target[0] + 1}-"
                f"{self.target[1]}, mistakes {list(self.mistakes)}, decoy {self.decoy}\n"
                f"old: {self.old!r}\nnew: {self.new!r}")


# --------------------------------------------------------------------------------------------
# Sources and release edits


@dataclass(frozen=True)
class ReleaseEdit:
    """A hunk of a package's next release: lines [i1, i2) of ``key``'s file become ``repl``."""

    key: str
    i1: int
    i2: int
    repl: tuple[str, ...]


@functools.cache
def _realcode() -> tuple[tuple[Source, ...], tuple[ReleaseEdit, ...]]:
    data = json.loads(gzip.decompress(REALCODE.read_bytes()))
    sources = tuple(Source(f"realcode:{path}", Path(path).name, kind_of(path),
                           text.encode("utf-8"), "realcode")
                    for path, text in sorted(data["files"].items()))
    edits: set[ReleaseEdit] = set()
    for case in data["cases"]:
        expect = case["expect"]
        if expect is None or expect.get("replace_all") or \
                expect["i2"] - expect["i1"] > MAX_BLOCK - 2:
            continue
        edits.add(ReleaseEdit(f"realcode:{case['file']}", expect["i1"], expect["i2"],
                              tuple(expect["repl"])))
    return sources, tuple(sorted(edits, key=lambda e: (e.key, e.i1, e.i2, e.repl)))


@functools.cache
def all_sources() -> tuple[Source, ...]:
    """The corpus's sources and the real-code files, smallest first (hypothesis shrinks
    towards the first)."""
    corpus = [s for s in load_sources().all() if "big" not in s.tags]
    return tuple(sorted([*corpus, *_realcode()[0]], key=lambda s: (len(s.raw), s.key)))


def release_edits() -> tuple[ReleaseEdit, ...]:
    return _realcode()[1]


# --------------------------------------------------------------------------------------------
# The target and the intended edit


def _decoy(rng: random.Random, fm: FileModel, s: int, e: int, how: str
           ) -> LineReplacement | None:
    """A copy of lines s..e (1-based) far from them: one identifier renamed (``changed``),
    also one indent unit deeper (``changed-reindented``), or as they are (``copy``)."""
    p = far_position(rng, fm, s, e)
    if p is None:
        return None
    lines = list(fm.lines[s - 1:e])
    if how.startswith("changed"):
        sites = [(i, m) for i, line in enumerate(lines) for m in IDENT.finditer(line)
                 if m.group(0) not in KEYWORDS]
        if not sites:
            return None
        i, m = rng.choice(sites)
        lines[i] = lines[i][:m.end()] + "_zb" + lines[i][m.end():]
    if how.endswith("reindented"):
        lines = [fm.indent_unit + x if x.strip() else x for x in lines]
    region_eol = next((x for x in fm.eols[s - 1:e] if x), fm.majority_eol)
    return LineReplacement(p, p - 1, "".join(
        x + (fm.eols[s - 1 + k] or region_eol) for k, x in enumerate(lines)))


def _release_draft(rng: random.Random, source: Source, fm: FileModel,
                   ops: list[LineReplacement], edit: ReleaseEdit, shift: int,
                   span: tuple[int, int]) -> Draft | None:
    s, e = span
    old = list(fm.lines[s - 1:e])
    a = edit.i1 + shift - (s - 1)
    b = e - (edit.i2 + shift)
    new_lines = old[:a] + list(edit.repl) + old[len(old) - b:]
    if new_lines == old:
        return None
    new: list[NewLine] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new_lines,
                                                       autojunk=False).get_opcodes():
        if tag == "equal":
            new += [NewLine.same(old[i], i) for i in range(i1, i2)]
        else:
            new += [NewLine.changed(x) for x in new_lines[j1:j2]]
    draft = Draft(source, fm, ops, s, e, old, new, "release")
    if e == len(fm.lines) and fm.eols[-1] == "":
        draft.trailing_nl = False
    elif new and old[-1].strip():  # (a blank last line is only there with its line break)
        draft.trailing_nl = rng.random() < 0.6
    return None if not draft.trailing_nl and not new else draft


def _span_of_release(rng: random.Random, fm: FileModel, edit: ReleaseEdit
                     ) -> tuple[int, int] | None:
    a, b = rng.randint(0, 3), rng.randint(0, 3)
    if edit.i1 == edit.i2 and a + b == 0:
        a = 1
    s, e = max(edit.i1 - a, 0) + 1, min(edit.i2 + b, len(fm.lines))
    if e < s or e - s + 1 > MAX_BLOCK or not any(x.strip() for x in fm.lines[s - 1:e]):
        return None
    if not all(eligible_line(fm, i) for i in range(s - 1, e)):
        return None
    return s, e


# --------------------------------------------------------------------------------------------
# Mistakes


def _typo(rng: random.Random, line: str) -> str | None:
    """One slip inside a word of at least four letters: two letters swapped, one dropped,
    doubled or replaced."""
    words = [m for m in IDENT.finditer(line) if sum(ch.isalpha() for ch in m.group(0)) >= 4]
    if not words:
        return None
    m = rng.choice(words)
    word = m.group(0)
    letters = [i for i, ch in enumerate(word) if ch.isalpha()]
    i = rng.choice(letters[1:] or letters)
    how = rng.choice(["swap", "drop", "double", "replace"])
    if how == "swap" and i + 1 < len(word) and word[i + 1].isalpha() and word[i] != word[i + 1]:
        slipped = word[:i] + word[i + 1] + word[i] + word[i + 2:]
    elif how == "drop":
        slipped = word[:i] + word[i + 1:]
    elif how == "double":
        slipped = word[:i] + word[i] + word[i:]
    else:
        ch = rng.choice([c for c in "aeiourstnl" if c != word[i].lower()])
        slipped = word[:i] + ch + word[i + 1:]
    return line[:m.start()] + slipped + line[m.end():]


class Request:
    """A draft's request lines with, for each old line, the line of the block it stands for
    (None: a line the block lacks), so structural mistakes keep old and new text together."""

    def __init__(self, draft: Draft) -> None:
        self.draft = draft
        self.origin: list[int | None] = list(range(len(draft.old)))
        self.marker: int | None = None
        self.alternatives: list[bytes] = []  # other files a correct edit may leave

    def copies(self, i: int) -> list[int]:
        """Indices in new text of the lines copying old line ``i`` unchanged."""
        src = self.origin[i]
        return [k for k, nl in enumerate(self.draft.new) if src is not None and nl.src == src]

    def typo(self, rng: random.Random) -> bool:
        old = self.draft.old
        lines = [i for i, x in enumerate(old) if _typo(rng, x) is not None]
        if not lines:
            return False
        i = rng.choice(lines)
        slipped = _typo(rng, old[i])
        assert slipped is not None
        for k in self.copies(i):
            self.draft.new[k].req = slipped
        old[i] = slipped
        return True

    def missing(self, rng: random.Random) -> bool:
        """An interior line the request keeps, left out of old and new text. Next to a line
        the edit changes, new text's lines there may be read as a rewrite of it: the file
        without it is then a correct outcome too."""
        old = self.draft.old
        lines = [i for i in range(1, len(old) - 1) if len(self.copies(i)) == 1]
        if not lines:
            return False
        def around(i: int) -> bool:  # the lines next to it kept, nothing put between
            at = self.copies(i)[0]
            return self.copies(i - 1) == [at - 1] and self.copies(i + 1) == [at + 1]

        quiet = [i for i in lines if around(i)]
        i = rng.choice(quiet if quiet and rng.random() < 0.7 else lines)
        at = self.copies(i)[0]
        del self.draft.new[at]
        if i not in quiet:
            self.alternatives.append(apply_replacements(self.draft.fm.raw,
                                                        [self.draft.replacement()]))
        del old[i]
        del self.origin[i]
        return True

    def extra(self, rng: random.Random) -> bool:
        old = self.draft.old
        if len(old) < 2:
            return False
        i = rng.randint(1, len(old) - 1)
        flavour = rng.choice(["neighbour", "elsewhere", "invented"])
        fm = self.draft.fm
        # A repeated line is one the request keeps, both times: with one of two equal lines
        # changed or deleted, which one the file has cannot be told. Other invented lines
        # equal no line of the block, for the same reason.
        if flavour == "neighbour":
            kept = [j for j in (i - 1, i) if self.copies(j)]
            if not kept:
                return False
            line = old[rng.choice(kept)]
        elif flavour == "elsewhere":
            pool = [x for j, x in enumerate(fm.lines) if x.strip() and eligible_line(fm, j)]
            line = rng.choice(pool)
        else:
            line = inserted_line(self.draft.source.kind, lead(old[i]), rng.randint(1000, 9999))
        if not line.strip() or (flavour != "neighbour" and line.strip() in {
                x.strip() for x in [*old, *(nl.req for nl in self.draft.new)]}):
            return False
        before = self.copies(i - 1)
        after = self.copies(i)
        if flavour == "neighbour" or (rng.random() < 0.7 and (before or after)):  # kept
            at = before[-1] + 1 if before else after[0]
            self.draft.new.insert(at, NewLine(line, line, None))
        old.insert(i, line)
        self.origin.insert(i, None)
        return True

    def elision(self, rng: random.Random) -> bool:
        """A run of kept lines replaced by a marker line: in new text too (the lines kept), or
        in old text only, new text writing the lines out as the file has them (the span from
        the first line to the last replaced). The lines around the run are the file's lines
        next to it (a marker stands for what lies between its neighbours in the file: a line
        left out beside it would be elided too). In the second form the run is lines the
        request copies as they are: else new text would write a typo, and mean it."""
        old = self.draft.old
        fm, start = self.draft.fm, self.draft.start - 1
        if self.draft.end == len(fm.lines) and not fm.final_newline:
            # (deleting the file's last line through its own segment leaves the line break
            # before it: see test_an_elided_deletion_of_the_last_line_keeps_no_final_newline)
            return False
        paired = rng.random() < 0.7
        invented = {old[k].strip() for k in range(len(old)) if self.origin[k] is None}

        def exact(k: int) -> bool:
            src = self.origin[k]
            return src is not None and old[k] == fm.lines[start + src]

        def adjacent(a: int, b: int) -> bool:
            first, second = self.origin[a], self.origin[b]
            return first is not None and second is not None and first + 1 == second

        runs = []
        for i in range(1, len(old) - 1):
            for j in range(i + 1, len(old)):
                copies = [self.copies(k) for k in range(i, j)]
                if any(len(c) != 1 for c in copies) or \
                        [c[0] for c in copies] != list(range(copies[0][0], copies[0][0] + j - i)):
                    break
                if invented & {x.strip() for x in old[i:j]}:
                    break  # an invented line equal to an elided one would stand in for it
                if not adjacent(j - 2, j - 1) or (not paired and not exact(j - 1)):
                    break
                if not (adjacent(i - 1, i) and adjacent(j - 1, j)):
                    continue  # the marker stands for the lines between its neighbours
                if any(x.strip() for x in old[:i]) and any(x.strip() for x in old[j:]):
                    runs.append((i, j))
        if not runs:
            return False
        # (short segments around the marker often stand elsewhere too: often the run that
        # leaves the longest ones)
        i, j = rng.choice(runs) if rng.random() < 0.5 else \
            max(runs, key=lambda r: min(r[0], len(old) - r[1]))
        kind = self.draft.source.kind
        comment = {"python": "#", "shell": "#", "yaml": "#", "go": "//", "c": "//"}.get(kind)
        texts = ["..."] + ([f"{comment} ... existing code ...", f"{comment} ..."] if comment
                           else [])
        marker = lead(old[i]) + rng.choice(texts)
        first = self.copies(i)[0]
        if paired:
            self.draft.new[first:first + j - i] = [NewLine(marker, marker, None)]
        old[i:j] = [marker]
        self.origin[i:j] = [None]
        self.marker = i
        return True

    def reindent(self, rng: random.Random) -> bool:
        draft = self.draft
        lines = [x for x in [*draft.old, *(nl.req for nl in draft.new)] if x.strip()]
        leads = [lead(x) for x in lines]
        unit = draft.fm.indent_unit
        if not leads:
            return False
        if all(not x.strip(" ") for x in leads):  # spaces only
            delta = rng.choice([d for d in range(-8, 9) if d])
            least = min(len(x) for x in leads)
            real = [x for x, src in zip(draft.old, self.origin, strict=True)
                    if x.strip() and src is not None]
            if delta < 0 and (-delta > least or len(real) < 2):
                delta = -delta  # (one line dedented is a substring of its line: found exactly)
            if unit != "\t" and rng.random() < 0.25 and pure_indentation(draft.old, unit) and \
                    all(len(x) % len(unit) == 0 for x in leads) and least < max(map(len, leads)):
                width = len(unit)
                return self._map(lambda x: "\t" * (len(lead(x)) // width) + x[len(lead(x)):])
            if delta > 0:
                return self._map(lambda x: " " * delta + x)
            return self._map(lambda x: x[-delta:])
        if all(not x.strip("\t") for x in leads):  # tabs only
            if rng.random() < 0.4 and any(leads):
                width = rng.choice([2, 4, 8])
                return self._map(lambda x: " " * (width * len(lead(x))) + x[len(lead(x)):])
            if rng.random() < 0.5 and all(leads):
                return self._map(lambda x: x[1:])
            return self._map(lambda x: "\t" + x)
        return False

    def _map(self, fn: Any) -> bool:
        old = [fn(x) if x.strip() else x for x in self.draft.old]
        if all(a == b for a, b, src in zip(old, self.draft.old, self.origin, strict=True)
               if src is not None):
            return False  # the file's lines sent as they are: new text's indentation is meant
        self.draft.old = old
        for nl in self.draft.new:
            if nl.req.strip():
                nl.req = fn(nl.req)
        return True

    def cut(self) -> bool:
        draft = self.draft
        indent = lead(draft.old[0]) if draft.old else ""
        if not indent or not draft.new or not draft.new[0].req.startswith(indent) or \
                draft.old[0] == indent:
            return False
        draft.cut_start = len(indent)
        return True


# --------------------------------------------------------------------------------------------
# The strategy


def _patch_envelope(name: str, old: Sequence[str], new: Sequence[str]) -> str:
    rows = ["*** Begin Patch", f"*** Update File: {name}", "@@"]
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, list(old), list(new),
                                                       autojunk=False).get_opcodes():
        if tag == "equal":
            rows += [" " + x for x in old[i1:i2]]
            continue
        rows += ["-" + x for x in old[i1:i2]]
        rows += ["+" + x for x in new[j1:j2]]
    return "\n".join([*rows, "*** End Patch"]) + "\n"


@dataclass
class _Plan:
    tool: str
    mistakes: list[str] = field(default_factory=list)
    decoy: str | None = None


@st.composite
def edit_cases(draw: st.DrawFn, decoys: Sequence[str | None] = DECOYS,
               mistakes: Sequence[str] = MISTAKES, max_mistakes: int = 3,
               min_mistakes: int = 0) -> EditCase:
    """A request with up to ``max_mistakes`` of ``mistakes`` (see the module docstring)."""
    plan = _Plan(draw(st.sampled_from(TOOLS)))
    count = draw(st.sampled_from([n for n in (0, 1, 1, 2, 2, 3)
                                  if min_mistakes <= n <= max_mistakes]))
    wanted = draw(st.lists(st.sampled_from(list(mistakes)), min_size=count, max_size=count,
                           unique=True))
    plan.decoy = draw(st.sampled_from(list(decoys)))
    release = draw(st.booleans())
    rng = draw(st.randoms(use_true_random=False))
    if release:
        edit = draw(st.sampled_from(release_edits()))
        source = next(s for s in all_sources() if s.key == edit.key)
    else:
        source = draw(st.sampled_from(all_sources()))
    fm = source.model
    span = _span_of_release(rng, fm, edit) if release else pick_span(rng, fm, max_len=MAX_BLOCK)
    assume(span is not None)
    assert span is not None
    s, e = span
    ops: list[LineReplacement] = []
    shift = 0
    if plan.decoy is not None:
        op = _decoy(rng, fm, s, e, plan.decoy)
        if op is not None:
            ops.append(op)
            fm = FileModel.parse(apply_replacements(fm.raw, ops))
            if op.start <= s:
                shift = e - s + 1
        else:
            plan.decoy = None
    s, e = s + shift, e + shift
    draft = _release_draft(rng, source, fm, ops, edit, shift, (s, e)) if release else \
        base_draft(rng, source, fm=fm, file_ops=ops, span=(s, e))
    assume(draft is not None)
    assert draft is not None
    request = Request(draft)
    # Mistakes that change what the model writes for lines it changes come first: the file
    # meant is the one its new text describes.
    # (old text ending inside a last line whose trailing spaces it dropped would be found as
    # it is, ending before them, and the spaces kept: it ends with its line break instead)
    last_spaced = bool(draft.old) and draft.old[-1] != draft.old[-1].rstrip(" \t")
    if "strip" in wanted and (not last_spaced or fm.final_newline or
                              draft.end < len(fm.lines)) and p1_strip_all(draft):
        draft.trailing_nl = draft.trailing_nl or last_spaced
        plan.mistakes.append("strip")
    intended = apply_replacements(fm.raw, [draft.replacement()])
    # (a line old text has twice: which copy new text's line repeats is the case builder's
    # guess, so a trailing space added to one copy can land on the other in new text)
    spoken = [x for x in draft.old if x.strip()]
    if "trailing" in wanted and spoken and len(set(spoken)) == len(spoken):
        p1_trailing_ws(rng, draft)
        plan.mistakes.append("trailing")
    for name in ("typo", "missing", "extra", "elision", "reindent"):
        # A line left out and one invented make a line replaced: not a slip of the kind
        # models make, and as close to look-alike lines elsewhere as to the target. An elided
        # request is not re-indented: the oracle's better place for an elision compares lines
        # without their indentation, so it cannot tell a re-indented decoy the request
        # matches exactly from the target (the tool rightly edits the exact match).
        if name in wanted and not (name == "extra" and "missing" in plan.mistakes) and \
                not (name == "reindent" and "elision" in plan.mistakes) and \
                getattr(request, name)(rng):
            plan.mistakes.append(name)
    probe = tuple(draft.old)
    if plan.tool != "apply_patch":
        # Old text cut after its first line's indentation, and re-indented: the shift must
        # show in two lines of different depth after the first. With none, old text is the
        # file's and new text is meant as sent; with one depth only, the lines after the first
        # read as well as a change of indent unit (5 columns for 4) as a shift.
        depths = {lead(x) for x, src in zip(draft.old[1:], request.origin[1:], strict=True)
                  if x.strip() and src is not None}
        if "cut" in wanted and ("reindent" not in plan.mistakes or len(depths) > 1) and \
                request.cut():
            plan.mistakes.append("cut")
        if "numbers" in wanted:
            draft.prefix_style = rng.choice(["catn", "catn", "pipe", "arrow", "colon"])
            draft.prefix_new = bool(draft.new) and rng.random() < 0.4
            plan.mistakes.append("numbers")
        if "eol" in wanted:
            draft.eol = "\r\n" if fm.majority_eol == "\n" else "\n"
            plan.mistakes.append("eol")
        old, new = draft.texts()
    else:
        assume(draft.trailing_nl)
        old, new = _patch_envelope(source.name, draft.old, [nl.req for nl in draft.new]), ""
    return EditCase(source.name, fm.raw, intended, plan.tool, old, new, (s - 1, e), probe,
                    request.marker, tuple(request.alternatives), tuple(plan.mistakes),
                    plan.decoy, source.key)

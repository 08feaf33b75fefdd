"""The file model: how every other part sees a file (docs/internals/matching.md#file-model).

``FileModel`` is a decoded text split on ``\\n`` (never ``splitlines``) into lines and their
endings, with the majority ending, the inferred indent unit, the LF view and its line offsets,
and per tier the normalised lines and an index from normalised line to line numbers, each built
on first use. A big text without a CR is split a chunk at a time (``lazylines``), and the
tiers' lookups in a big file find the lines holding one word of the request with ``str.find``
instead of indexing every line. A lone ``\\r`` is content, unless the model is made with
``cr_ends_lines`` (a patch's): then it ends a line, and that line keeps it as its ending.
Nothing here refuses; decoding bytes is ``zbtools.core.files.decoding``'s job.

Map: ``FileModel``; ``count_at_most`` (a key's line count, bounded); ``LazyKeys``,
``LazyIndex``, ``LazyPositions`` (a big file's keys and index, computed when asked). Imports
``linekeys``, ``indentation`` and ``lazylines``; ``bisect`` on first use.
"""

from __future__ import annotations

# ``_collections_abc`` is loaded by ``os`` at start-up; ``collections.abc`` would import
# ``collections`` and ``typing`` is not cheap either (tests/test_import_budget.py).
from _collections_abc import Mapping, Sequence

from zbtools.core.editing.matching.indentation import (
    LineIndent,
    infer_indent_unit,
    line_indent,
    unit_of_indents,
)
from zbtools.core.editing.matching.lazylines import LazyLines
from zbtools.core.editing.matching.linekeys import LINE_KEYS, QUOTES, typography_key

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any


class FileModel:
    """A decoded file as lines plus their endings (``\\r\\n``, ``\\n`` or ``""`` for the last).

    Everything is built on first use (issue 16: an edit pays for what it needs, not for the
    file): an exact edit needs only the LF view, one ``str.find`` and the line numbers around
    the match; the lines and their endings are split once, in C, when something asks for them;
    the indent unit is inferred from the lines around the place it is needed
    (``indent_unit_near``); the per-tier normalised lines and indexes stay whole-file (the
    tiers that need them pay for them).
    """

    def __init__(self, text: str, cr_ends_lines: bool = False) -> None:
        self._text = text
        # a lone CR ends a line too (a patch's hunks: docs/internals/matching.md#file-model)
        self._cr_lines = cr_ends_lines and "\r" in text.replace("\r\n", "")
        self._lines: list[str] | None = None
        self._eols: list[str] | None = None
        self._majority_eol: str | None = None
        self._indent_unit: str | None = None
        self._units: dict[int, str] = {}
        self._indents: dict[int, list[LineIndent]] = {}
        self._lf_view: str | None = None
        self._quote_view: tuple[str | None] | None = None
        self._line_starts: list[int] | None = None
        self._text_starts: list[int] | None = None
        self._line_count: int | None = None
        self._counted = 0
        self._indexes: dict[str, dict[str, list[int]]] = {}
        self._normalized: dict[str, list[str]] = {}
        self._found: dict[str, dict[str, list[int]]] = {}  # tier -> key -> lines (lazy)
        # word -> the lines it is on and their texts (None: on too many lines)
        self._word_lines: dict[str, tuple[list[int], list[str]] | None] = {}
        self._non_ascii: dict[str, list[int]] | None = None
        # (tier, key) -> the first lines with the key, and whether they are all of them
        self._first: dict[tuple[str, str], tuple[list[int], bool]] = {}
        self._stripped: list[str] | None = None  # every line, stripped of whitespace
        self._lazy_lines: LazyLines | None = None
        self._has_cr: bool | None = None
        self._scans = 0
        self._whole_line_scans = 0

    def whole_lines_index(self) -> dict[str, list[int]] | None:
        """Line (without its ending) -> the lines equal to it, once whole-line exact searches
        (a patch's hunks, each one unique in the whole file) have scanned the text
        ``WHOLE_LINE_SCANS`` times: from then on one index is cheaper than a scan per hunk,
        which made a patch's cost the product of its hunks and the file's size. None before
        (the caller scans the text)."""
        if "exact" not in self._indexes:
            self._whole_line_scans += 1
            if self._whole_line_scans <= WHOLE_LINE_SCANS:
                return None
        return self.full_index("exact")

    def _split(self) -> None:
        text = self._text
        parts = text.split("\n")
        last = parts.pop()  # "" when the text ends with a line break (or is empty)
        if self._cr_lines:
            lines, eols = [], []
            for part in parts:
                body, end = (part[:-1], "\r\n") if part.endswith("\r") else (part, "\n")
                *ended, tail = body.split("\r")
                lines += [*ended, tail]
                eols += ["\r"] * len(ended) + [end]
            *ended, last = last.split("\r")
            lines += ended
            eols += ["\r"] * len(ended)
        elif self.has_cr:
            lines = [p[:-1] if p.endswith("\r") else p for p in parts]
            eols = ["\r\n" if p.endswith("\r") else "\n" for p in parts]
        else:
            lines, eols = parts, ["\n"] * len(parts)
        if last != "":
            lines.append(last)  # a last line without an ending (a lone CR stays content)
            eols.append("")
        self._lines, self._eols = lines, eols

    @property
    def lines(self) -> Sequence[str]:
        """The lines without their endings; for a big text without a CR (``LAZY_MIN_LINES``)
        until something needs them all, a ``LazyLines`` that splits only the chunks asked
        for."""
        if self._lines is not None:
            return self._lines
        lazy = self._chunked()
        return lazy if lazy is not None else self.all_lines()

    def _chunked(self) -> LazyLines | None:
        """The ``LazyLines`` of a big text without a CR (which also finds offsets and lines
        without indexing every line), else None."""
        if self._lazy_lines is None and self.line_count >= LAZY_MIN_LINES and \
                not self.has_cr:
            self._lazy_lines = LazyLines(self._text, self.line_count)
        return self._lazy_lines

    def all_lines(self) -> list[str]:
        """Every line, split at once (what a consumer of the whole file asks for)."""
        if self._lines is None:
            self._split()
            assert self._lines is not None
        return self._lines

    @property
    def eols(self) -> list[str]:
        if self._eols is None:
            if self._chunked() is not None:  # no CR: every line ends with LF but the last
                eols = ["\n"] * self.line_count
                if eols and not self._text.endswith("\n"):
                    eols[-1] = ""
                self._eols = eols
            else:
                self._split()
            assert self._eols is not None
        return self._eols

    @property
    def line_count(self) -> int:
        """``len(self.lines)``, without splitting the text."""
        if self._lines is not None:
            return len(self._lines)
        if self._cr_lines:
            return len(self.all_lines())
        if self._line_count is None:
            text = self._text
            self._line_count = text.count("\n") + (1 if text and not text.endswith("\n")
                                                   else 0)
        return self._line_count

    @property
    def majority_eol(self) -> str:
        if self._majority_eol is None:
            crlf = self._text.count("\r\n")
            lf = self._text.count("\n") - crlf
            self._majority_eol = "\r\n" if crlf > lf else "\n"
        return self._majority_eol

    @property
    def indent_unit(self) -> str:
        """The indent unit inferred from the whole file."""
        if self._indent_unit is None:
            self._indent_unit = infer_indent_unit(self.all_lines())
        return self._indent_unit

    def indent_unit_near(self, line: int) -> str:
        """The indent unit of the region around ``line``: the whole file's up to
        ``UNIT_WHOLE_FILE_LINES`` lines, else that of the ``UNIT_BLOCK``-line blocks from two
        before the line's block to two after it (so the same for every line of a block)."""
        lines = self.lines
        if len(lines) <= UNIT_WHOLE_FILE_LINES:
            return self.indent_unit
        block = max(line, 0) // UNIT_BLOCK
        unit = self._units.get(block)
        if unit is None:
            indents: list[LineIndent] = []
            for near in range(max(block - 2, 0), block + 3):
                indents += self._block_indents(near)
            unit = unit_of_indents(indents)
            self._units[block] = unit
        return unit

    def _block_indents(self, block: int) -> list[LineIndent]:
        """Each line's ``line_indent`` in one block, measured once: neighbouring regions
        overlap, and a patch of many hunks asks for every region of a big file."""
        found = self._indents.get(block)
        if found is None:
            found = self._indents[block] = [
                line_indent(text)
                for text in self.lines[block * UNIT_BLOCK:(block + 1) * UNIT_BLOCK]]
        return found

    @property
    def text(self) -> str:
        return self._text

    @property
    def has_cr(self) -> bool:
        if self._has_cr is None:
            self._has_cr = "\r" in self._text
        return self._has_cr

    @property
    def lf_view(self) -> str:
        """The text with every CRLF shown as LF (lone CRs stay content, unless they end
        lines: then they are shown as LF too)."""
        if self._lf_view is None:
            text = self._text
            self._lf_view = text.replace("\r\n", "\n") if self.has_cr else text
            if self._cr_lines:
                self._lf_view = self._lf_view.replace("\r", "\n")
        return self._lf_view

    @property
    def quote_view(self) -> str | None:
        """``lf_view`` with the four curly quotes read as straight ones (None: it has none)."""
        if self._quote_view is None:
            view = self.lf_view
            folded = view.translate(QUOTES) if not view.isascii() else view
            self._quote_view = (folded,) if folded != view else (None,)
        return self._quote_view[0]

    @property
    def line_starts(self) -> list[int]:
        """Offset in ``lf_view`` where each line starts (plus one past the end)."""
        if self._line_starts is None:
            import itertools

            lines = self.all_lines()
            starts = [0]
            starts += itertools.accumulate(map((1).__add__, map(len, lines)))
            if lines and self.eols[-1] == "":
                starts[-1] -= 1
            self._line_starts = starts
        return self._line_starts

    def line_start(self, line: int) -> int:
        """``line_starts[line]``, without indexing every line of a lazily split text."""
        lazy = self._chunked() if self._line_starts is None else None
        return self.line_starts[line] if lazy is None else lazy.line_start(line)

    def text_start(self, line: int) -> int:
        """Offset in ``text`` (line endings as in the file) where 0-based ``line`` starts;
        ``line_count`` gives the end of the text."""
        if not self.has_cr:
            return self.line_start(line)
        if self._text_starts is None:
            import itertools
            import operator

            starts = [0]
            starts += itertools.accumulate(map(operator.add, map(len, self.all_lines()),
                                               map(len, self.eols)))
            self._text_starts = starts
        return self._text_starts[line]

    def line_of(self, offset: int) -> int:
        """0-based line containing ``lf_view`` offset."""
        if self._line_starts is None and self._counted < LINE_OF_COUNTS and \
                0 <= offset < len(self.lf_view):
            # The first few lookups (an exact match's two ends) count the line breaks before
            # the offset, in C; indexing every line start pays only for many lookups.
            self._counted += 1
            return self.lf_view.count("\n", 0, offset)
        lazy = self._chunked() if self._line_starts is None else None
        if lazy is not None:
            return lazy.line_of(offset)
        import bisect

        return max(bisect.bisect_right(self.line_starts, offset) - 1, 0)

    def normalized(self, tier: str) -> Sequence[str]:
        """Every line's key at ``tier``; for a big file (``LAZY_MIN_LINES``) a sequence that
        computes the keys it is asked for (all of them only when iterated)."""
        if self._lazy() and tier not in self._normalized:
            return LazyKeys(self, tier)
        return self.all_keys(tier)

    def all_keys(self, tier: str) -> list[str]:
        if tier == "typography" and "inner_whitespace" in self._normalized and \
                self.lf_view.isascii():
            return self._normalized["inner_whitespace"]  # identical keys for ASCII text
        if tier not in self._normalized:
            lines = self.all_lines()
            # The common tiers inline their key (no call per line: about twice as fast).
            if tier == "exact":
                keys = list(lines)
            elif tier == "trailing_whitespace":
                keys = [line.rstrip(" \t") for line in lines]
            elif tier == "indentation":
                keys = [line.strip(" \t") for line in lines]
            elif tier == "inner_whitespace":
                keys = [" ".join(line.split()) for line in lines]
            elif tier == "typography":
                keys = [" ".join(line.split()) if line.isascii() else typography_key(line)
                        for line in lines]
            else:  # pragma: no cover - every tier is above
                keys = [LINE_KEYS[tier](line) for line in lines]
            self._normalized[tier] = keys
        return self._normalized[tier]

    def index(self, tier: str) -> Mapping[str, Sequence[int]]:
        """Key -> the lines that have it, at ``tier``; for a big file (``LAZY_MIN_LINES``) a
        mapping that finds the lines of the keys it is asked for (``lines_with_key``)."""
        if self._lazy() and tier not in self._indexes:
            return LazyIndex(self, tier)
        return self.full_index(tier)

    def full_index(self, tier: str) -> dict[str, list[int]]:
        if tier == "typography" and "inner_whitespace" in self._indexes and \
                self.lf_view.isascii():
            return self._indexes["inner_whitespace"]
        if tier not in self._indexes:
            table: dict[str, list[int]] = {}
            for i, key in enumerate(self.all_keys(tier)):
                table.setdefault(key, []).append(i)
            self._indexes[tier] = table
        return self._indexes[tier]

    # -- the lazy index (issue 16): only the request's lines are looked for --------------------

    def _lazy(self) -> bool:
        return self._scans <= LAZY_MAX_SCANS and self.line_count >= LAZY_MIN_LINES

    def lines_with_key(self, tier: str, key: str) -> list[int] | None:
        """The lines whose ``tier`` key is ``key``, found without indexing every line: the
        key's longest word (a run without whitespace, which every line with that key contains
        as it is, for every tier; for ``typography`` every ASCII line) is searched for with
        ``str.find``, and the lines it is on are checked; at ``typography`` the non-ASCII lines
        are indexed apart. A key of one word on many lines is looked up among the lines
        stripped of whitespace (``_lines_of_word``). Past ``LAZY_MAX_SCANS`` searches, or for
        a word too common to be worth it, the whole index is built instead (what it costs
        without laziness); None when the word is on too many lines (``LazyPositions`` then
        finds the first ones)."""
        if tier in self._indexes or not self._lazy():
            return self.full_index(tier).get(key, [])
        cache = self._found.setdefault(tier, {})
        found = cache.get(key)
        if found is not None:
            return found
        words = key.split()
        if tier in ("exact", "trailing_whitespace", "indentation") and key.strip():
            probe = key.strip()  # these keys stand in their lines as they are
        else:
            probe = max(words, key=len) if words else ""
        if not probe:  # no word: this tier indexes every line
            return self.full_index(tier).get(key, [])
        hits = self._lines_of_word(probe) if len(words) == 1 else self._word_hits(probe)
        if hits is None:
            if not self._lazy():  # past the searches' budget: this tier indexes every line
                return self.full_index(tier).get(key, [])
            return None  # a word on too many lines
        keyf = LINE_KEYS[tier]
        lines, texts = hits
        if len(words) > 1 and len(lines) > 8:  # every word must be in the line: a cheap test
            found = [i for i, t in zip(lines, texts, strict=True)
                     if all(w in t for w in words) and keyf(t) == key]
        else:
            found = [i for i, t in zip(lines, texts, strict=True) if keyf(t) == key]
        if tier == "typography":
            extra = self._non_ascii_index().get(key)
            if extra:
                found = sorted(set(found).union(extra))
        cache[key] = found
        return found

    def known_lines_with_key(self, tier: str, key: str) -> list[int] | None:
        """``lines_with_key(tier, key)`` when it is known without looking (None else)."""
        if tier in self._indexes:
            return self._indexes[tier].get(key, [])
        return self._found.get(tier, {}).get(key)

    def first_lines_with_key(self, tier: str, key: str, limit: int) -> list[int]:
        """``lines_with_key(tier, key)[:limit]``, scanning only as far as needed (for a key
        whose word is on too many lines to find them all)."""
        words = key.split()
        probe = max(words, key=len) if words else ""
        if not probe or tier in self._indexes or not self._lazy():
            return self.full_index(tier).get(key, [])[:limit]
        if len(words) == 1:  # found whole, as cheaply
            found = self.lines_with_key(tier, key)
            if found is not None:
                return found[:limit]
        seen = self._first.get((tier, key))
        if seen is not None and (seen[1] or len(seen[0]) >= limit):
            found = seen[0][:limit]  # (near misses and the diagnosis ask for the same key)
        else:
            found = self._scan_first(tier, key, probe, limit)
        if tier == "typography":
            extra = self._non_ascii_index().get(key)
            if extra:
                found = sorted(set(found).union(extra))[:limit]
        return found

    def _scan_first(self, tier: str, key: str, probe: str, limit: int) -> list[int]:
        """The first ``limit`` lines (of ASCII text, at ``typography``) whose key is ``key``,
        found through ``probe``; kept with whether the scan went to the end of the file."""
        keyf = LINE_KEYS[tier]
        found: list[int] = []
        known = self._word_lines.get(probe)
        if known is not None:  # the word's lines were found already: no scan
            for line, text in zip(*known, strict=True):
                if keyf(text) == key:
                    found.append(line)
                    if len(found) >= limit:
                        break
            exhausted = len(found) < limit
        else:
            view = self.lf_view
            pos, line, counted = view.find(probe), 0, 0
            while pos != -1 and len(found) < limit:
                line, counted = self._line_at(pos, counted, line), pos
                end = view.find("\n", pos)
                if keyf(view[view.rfind("\n", 0, pos) + 1:end if end != -1 else None]) == key:
                    found.append(line)
                pos = view.find(probe, end + 1) if end != -1 else -1
            exhausted = pos == -1
        self._first[(tier, key)] = (found, exhausted)
        return found[:]

    def _lines_of_word(self, word: str) -> tuple[list[int], list[str]] | None:
        """A superset of the lines whose key is ``word`` alone, with their texts (a key of
        one word, at any tier, is its line with some whitespace stripped): the lines it is
        on, found with ``str.find`` while they are few; past ``LAZY_WORD_HITS`` (a word like
        ``)``, on tens of thousands of lines, each found and checked in Python), the lines
        whose whole text stripped of whitespace is the word, compared in C over a list of
        every line stripped (built once for the file)."""
        if self._stripped is None:
            hits = self._word_hits(word, LAZY_WORD_HITS)
            if hits is not None or self._scans > LAZY_MAX_SCANS:
                return hits
            self._stripped = list(map(str.strip, self.all_lines()))
        stripped, lines = self._stripped, self.lines
        found: list[int] = []
        at = -1
        try:
            while True:
                at = stripped.index(word, at + 1)
                found.append(at)
        except ValueError:
            return found, [lines[i] for i in found]

    def _line_at(self, offset: int, known: int, known_line: int) -> int:
        """The line of LF-view ``offset``, given an earlier offset ``known`` on ``known_line``
        (``LazyLines.line_near``; the line offsets' index for a text with a CR)."""
        lazy = self._chunked()
        if lazy is not None:
            return lazy.line_near(offset, known, known_line)
        import bisect

        return max(bisect.bisect_right(self.line_starts, offset) - 1, 0)

    def _word_hits(self, word: str, max_hits: int = 0) -> tuple[list[int], list[str]] | None:
        """The lines whose text contains ``word``, with their texts (None: on more than
        ``max_hits``, by default ``LAZY_MAX_HITS``): found with ``str.find`` in the LF view,
        each line's number counted in C from the previous hit's or its chunk's start
        (``_line_at``) and its text sliced there (no line list needed)."""
        if word in self._word_lines:
            return self._word_lines[word]
        self._scans += 1
        if self._scans > LAZY_MAX_SCANS:
            return None
        view = self.lf_view
        lines: list[int] = []
        texts: list[str] = []
        bound = max_hits or LAZY_MAX_HITS
        pos, line, counted = view.find(word), 0, 0
        while pos != -1:
            line, counted = self._line_at(pos, counted, line), pos
            end = view.find("\n", pos)
            lines.append(line)
            texts.append(view[view.rfind("\n", 0, pos) + 1:end if end != -1 else None])
            if len(lines) > bound:
                self._word_lines[word] = None
                return None
            pos = view.find(word, end + 1) if end != -1 else -1
        self._word_lines[word] = (lines, texts)
        return lines, texts

    def _non_ascii_index(self) -> dict[str, list[int]]:
        """The typography keys of the lines that are not ASCII (their key may not contain
        their words as they are: curly quotes, odd spaces)."""
        if self._non_ascii is None:
            table: dict[str, list[int]] = {}
            view, step = self.lf_view, 1 << 14
            pos, line, counted = 0, 0, 0
            while pos < len(view):  # ASCII stretches are skipped, tested in C
                end = view.find("\n", pos + step)
                end = len(view) if end == -1 else end + 1
                if not view[pos:end].isascii():
                    line += view.count("\n", counted, pos)
                    counted = pos
                    for i, text in enumerate(view[pos:end].split("\n"), line):
                        if not text.isascii():
                            table.setdefault(typography_key(text), []).append(i)
                pos = end
            self._non_ascii = table
        return self._non_ascii


LAZY_MIN_LINES = 5000  # smaller files index every line (a few ms)
WHOLE_LINE_SCANS = 8  # whole-line exact searches of one file before it is indexed
LAZY_MAX_SCANS = 32  # words searched for in one file before indexing it whole is cheaper
LAZY_MAX_HITS = 20000  # lines one word may be on before indexing the file is cheaper
LAZY_WORD_HITS = 2000  # lines a key's only word may be on before comparing stripped lines
LAZY_SPAN_SHARE = 4  # a slice of a quarter of the lines or more: every key built, then kept


def count_at_most(index: Mapping[str, Sequence[int]], key: str, bound: int) -> int:
    """``len(index.get(key, ()))`` when that is at most ``bound``, else ``bound + 1``: the lazy
    index of a big file stops looking at the line past ``bound`` occurrences."""
    if isinstance(index, LazyIndex):
        return index.count_at_most(key, bound)
    return min(len(index.get(key, ())), bound + 1)


class LazyKeys(Sequence[str]):
    """``FileModel.normalized`` of a big file: keys computed per line asked for."""

    def __init__(self, model: FileModel, tier: str) -> None:
        self._model = model
        self._tier = tier
        self._key = LINE_KEYS[tier]

    def __len__(self) -> int:
        return self._model.line_count

    def __getitem__(self, i: int | slice) -> Any:  # str for an int, list[str] for a slice
        model = self._model
        if self._tier in model._normalized:
            return model._normalized[self._tier][i]
        lines = model.lines
        if isinstance(i, slice):
            start, stop, _ = i.indices(model.line_count)
            if (stop - start) * LAZY_SPAN_SHARE >= model.line_count:
                # a span this big is asked for again (the candidates, then the diagnosis of a
                # miss): every key, built once, costs less than computing it twice
                return model.all_keys(self._tier)[i]
            return [self._key(line) for line in lines[i]]
        return self._key(lines[i])

    def __iter__(self) -> Iterator[str]:
        return iter(self._model.all_keys(self._tier))  # every key: build them all once


class LazyIndex(Mapping[str, Sequence[int]]):
    """``FileModel.index`` of a big file: each key's lines found when asked for (for a key
    whose word is on too many lines, a ``LazyPositions`` that finds only the first ones when
    only those are asked for)."""

    def __init__(self, model: FileModel, tier: str) -> None:
        self._model = model
        self._tier = tier

    def _lookup(self, key: str) -> Sequence[int]:
        found = self._model.lines_with_key(self._tier, key)
        if found is None:  # its word is on too many lines
            return LazyPositions(self._model, self._tier, key)
        return found

    def __getitem__(self, key: str) -> Sequence[int]:
        found = self._lookup(key)
        if not found:
            raise KeyError(key)
        return found

    def count_at_most(self, key: str, bound: int) -> int:
        """See the module function ``count_at_most``."""
        found = self._model.known_lines_with_key(self._tier, key)
        if found is None:
            found = self._model.first_lines_with_key(self._tier, key, bound + 1)
        return min(len(found), bound + 1)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and bool(self._lookup(key))

    def __iter__(self) -> Iterator[str]:
        return iter(self._model.full_index(self._tier))

    def __len__(self) -> int:
        return len(self._model.full_index(self._tier))


UNIT_WHOLE_FILE_LINES = 2048
UNIT_BLOCK = 256
LINE_OF_COUNTS = 8


class LazyPositions(Sequence[int]):
    """The lines of one key whose word is on too many lines: ``[:n]`` finds the first ``n``
    (``FileModel.first_lines_with_key``), anything else all of them (the tier's index)."""

    def __init__(self, model: FileModel, tier: str, key: str) -> None:
        self._model = model
        self._tier = tier
        self._key = key

    def _all(self) -> list[int]:
        return self._model.full_index(self._tier).get(self._key, [])

    def __len__(self) -> int:
        return len(self._all())

    def __bool__(self) -> bool:
        return bool(self._model.first_lines_with_key(self._tier, self._key, 1))

    def __getitem__(self, i: int | slice) -> Any:  # int for an int, list[int] for a slice
        if isinstance(i, slice) and i.start in (None, 0) and i.step in (None, 1) and \
                i.stop is not None and i.stop >= 0:
            return self._model.first_lines_with_key(self._tier, self._key, i.stop)
        return self._all()[i]

    def __iter__(self) -> Iterator[int]:
        return iter(self._all())

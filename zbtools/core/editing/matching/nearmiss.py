"""The near-miss tier: old text that matches one window but for one mistake, at one place.

``find_near`` compares T5 line keys and accepts one line differing by a typo, one interior file
line missing from old text, or one interior old line the file lacks, each only at one place and
with enough equal text around it. A typo (``typo_distance``) is at most 2 character edits, all
letters, inside one word of at least ``TYPO_MIN_WORD`` characters: a changed digit, case,
plural or short name is another text, not a slip (docs/internals/matching.md#near-miss).
Bounded by ``SIMILARITY_MAX_OLD_LINES``, ``SIMILARITY_MAX_FILE_BYTES`` and ``NEAR_MAX_STARTS``
(docs/internals/matching.md#i7). Failure mode: ``ambiguous_match``.

Map: ``find_near``, ``typo_distance``, ``line_similarity``. Imports ``filemodel``,
``linekeys``, ``requests`` and ``candidates``; ``rapidfuzz`` on use.
"""

from __future__ import annotations

from zbtools.core.editing.matching.candidates import (
    SIMILARITY_MAX_FILE_BYTES,
    SIMILARITY_MAX_OLD_LINES,
    Candidate,
    Located,
    choose,
    near_conflict,
)
from zbtools.core.editing.matching.errors import SNIPPET_CHARS
from zbtools.core.editing.matching.filemodel import count_at_most
from zbtools.core.editing.matching.linekeys import typography_key
from zbtools.core.editing.matching.requests import Request, pattern_lines, split_markers

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from zbtools.core.editing.matching.filemodel import FileModel

NEAR_TYPO_MAX_EDITS = 2
NEAR_TYPO_MIN_CHARS = 6
NEAR_SINGLE_LINE_MIN_CHARS = 16
NEAR_SINGLE_LINE_MARGIN = 4
NEAR_MIN_EQUAL_LINES = 2
NEAR_MIN_EQUAL_CHARS = 16
NEAR_TYPO_EQUAL_CHARS = 8
NEAR_RIVAL_EDITS = 4
NEAR_RIVAL_MARGIN = 2
NEAR_ONE_OFF_SIMILAR = 0.8  # a line this similar (Indel) makes a line-for-line window a rival
NEAR_SIMILAR_MAX_CHARS = 2_000  # two lines differing over more are not compared whole
TYPO_MIN_WORD = 4
NEAR_MAX_STARTS = 4000
NEAR_LINE_POSITIONS = 200  # occurrences of one line looked at for near-miss windows


def typo_distance(a: str, b: str, min_chars: int = NEAR_TYPO_MIN_CHARS) -> int | None:
    """Edits between two line keys when they differ by a typo, else None."""
    from rapidfuzz.distance import Levenshtein

    if not a or not b or min(len(a), len(b)) < min_chars or \
            abs(len(a) - len(b)) > NEAR_TYPO_MAX_EDITS:
        return None
    d = Levenshtein.distance(a, b, score_cutoff=NEAR_TYPO_MAX_EDITS)
    if d > NEAR_TYPO_MAX_EDITS or not _is_typo(a, b):
        return None
    return d


def _close(a: str, b: str) -> bool:
    """Within ``NEAR_RIVAL_EDITS`` character edits: close enough to rival a typo."""
    from rapidfuzz.distance import Levenshtein

    return Levenshtein.distance(a, b, score_cutoff=NEAR_RIVAL_EDITS) <= NEAR_RIVAL_EDITS


def _slip(a: str, b: str) -> int | None:
    """Edits between ``a`` and ``b`` when they could be one slip, else None.

    One slip: within ``NEAR_RIVAL_EDITS`` character edits, all at one place of ``a`` (inside
    one word, or one run of punctuation). A line that differs from old text at two places (a
    typo and a bracket) needs two mistakes to be the line meant: it does not rival a window
    that needs one.
    """
    from rapidfuzz.distance import Levenshtein

    d = Levenshtein.distance(a, b, score_cutoff=NEAR_RIVAL_EDITS)
    if d > NEAR_RIVAL_EDITS:
        return None
    places = {_word_at(a, op.src_pos) for op in Levenshtein.editops(a, b)}
    spans = sorted(places)
    # edits at neighbouring characters (a punctuation run) are one place too
    merged = [spans[0]] if spans else []
    for start, end in spans[1:]:
        if start <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return d if len(merged) <= 1 else None


def _word_at(text: str, pos: int) -> tuple[int, int]:
    """The span of the word (letters, digits, ``_``) at or just before ``pos``."""
    def inside(i: int) -> bool:
        return 0 <= i < len(text) and (text[i].isalnum() or text[i] == "_")

    if not inside(pos) and inside(pos - 1):
        pos -= 1  # an insertion at a word's end
    start = end = pos
    while inside(start - 1):
        start -= 1
    while inside(end):
        end += 1
    return start, end


def _is_typo(a: str, b: str) -> bool:
    """Whether every character edit from ``a`` to ``b`` is a slip inside a word.

    Letters only (or an underscore between two word characters: ``versioneinfo`` for
    ``version_info``), all in one word of at least ``TYPO_MIN_WORD`` characters: a changed
    digit is another value, a changed case another name (``True`` and ``true``), an ``s``
    added or dropped at a word's end another word (``value``, ``values``), a short name
    another name (``a`` and ``b``), and punctuation is syntax; none of those is a typo to look
    past.
    """
    from rapidfuzz.distance import Levenshtein

    ops = Levenshtein.editops(a, b)
    words = {_word_at(a, op.src_pos) for op in ops}
    theirs = {_word_at(b, op.dest_pos) for op in ops}
    if len(words) != 1 or len(theirs) != 1 or max(
            end - start for start, end in (*words, *theirs)) < TYPO_MIN_WORD:
        return False  # edits in two words, or in a short name, are another name, not a slip
    def interior(text: str, pos: int) -> bool:  # between two word characters
        return 0 < pos < len(text) - 1 and text[pos - 1].isalnum() and text[pos + 1].isalnum()

    for op in ops:
        if op.tag == "replace":
            x, y = a[op.src_pos], b[op.dest_pos]
            # an underscore for a letter inside a name is a slip too (versioneinfo)
            if (x == "_" and y.isalpha() and interior(a, op.src_pos)) or \
                    (y == "_" and x.isalpha() and interior(b, op.dest_pos)):
                continue
            if not (x.isalpha() and y.isalpha()) or x.lower() == y.lower():
                return False
        else:
            text, pos = (b, op.dest_pos) if op.tag == "insert" else (a, op.src_pos)
            ch = text[pos]
            if ch == "_" and interior(text, pos):
                continue
            if not ch.isalpha():
                return False
            after = text[pos + 1:pos + 2]
            if ch in "sS" and not (after.isalnum() or after == "_"):
                return False
    return True


def line_similarity(a: str, b: str, cutoff: float = 0.0) -> float | None:
    """Indel similarity of two lines (0 below ``cutoff``), or None when the parts where they
    differ, their common beginning and end set aside, are longer than
    ``NEAR_SIMILAR_MAX_CHARS``: an edit distance costs the product of the two lengths (two
    lines of 1 MB: minutes), and the callers then take the cautious answer."""
    from rapidfuzz.distance import Indel, Postfix, Prefix

    if max(len(a), len(b)) > NEAR_SIMILAR_MAX_CHARS:
        head = Prefix.similarity(a, b)
        tail = Postfix.similarity(a[head:], b[head:])
        if max(len(a), len(b)) - head - tail > NEAR_SIMILAR_MAX_CHARS:
            return None
    return float(Indel.normalized_similarity(a, b, score_cutoff=cutoff))


def _enough_evidence(keys: list[str], equal: list[int], min_lines: int = NEAR_MIN_EQUAL_LINES,
                     min_chars: int = NEAR_MIN_EQUAL_CHARS) -> bool:
    lines = [keys[i] for i in equal if keys[i]]
    return len(lines) >= min_lines and \
        sum(len(k.replace(" ", "")) for k in lines) >= min_chars


def _one_off_similar(a: str, b: str) -> bool:
    """Whether line ``a`` is at least ``NEAR_ONE_OFF_SIMILAR`` like ``b`` (Indel).

    Two long lines too different to compare cheaply (``line_similarity``) are compared by
    their characters' counts, which bound the similarity from above: a pair they cannot tell
    apart counts as similar, which only ever makes a window a rival (more refusals, never
    another place)."""
    score = line_similarity(a, b, NEAR_ONE_OFF_SIMILAR)
    if score is not None:
        return bool(score)
    from collections import Counter

    counts_a, counts_b = Counter(a), Counter(b)
    differ = sum(((counts_a - counts_b) + (counts_b - counts_a)).values())
    return 1 - differ / (len(a) + len(b)) >= NEAR_ONE_OFF_SIMILAR


def _near_windows(keys: list[str], norm: Sequence[str], index: Mapping[str, Sequence[int]],
                  others: dict[tuple[int, int], list[tuple[list[int | None], int | None]]]
                  ) -> dict[tuple[int, int], tuple[list[int | None], int | None]]:
    """Every window that old text's line keys match but for one typo, one line or one extra."""
    n = len(keys)
    total = len(norm)
    starts = _near_starts(keys, index)
    found: dict[tuple[int, int], tuple[list[int | None], int | None]] = {}
    others.clear()
    if starts is None:
        return found  # too many places to look at: none is beyond doubt
    rivals: set[int] = set()  # edits of the windows that differ by one slip, not a typo
    one_off: set[tuple[int, int]] = set()  # windows equal line for line but for one line
    typos: dict[tuple[int, int], int] = {}
    for s in sorted(starts):
        if s < 0:
            continue
        lead = 0
        while lead < n and s + lead < total and keys[lead] == norm[s + lead]:
            lead += 1
        if lead == n:
            # Old text stands here but for whitespace (its indentation did not fit the file's:
            # a first line sent without its own, say): a reading of one slip elsewhere, or of
            # this place with a line dropped or added, is no better than a guess.
            return {}
        # one typo, line for line
        if s + n <= total and lead < n:
            tail = 0
            while tail < n - lead and keys[n - 1 - tail] == norm[s + n - 1 - tail]:
                tail += 1
            if lead + tail == n - 1 and keys[lead] and norm[s + lead] and (
                    _enough_evidence(keys, [i for i in range(n) if i != lead], 1,
                                     NEAR_TYPO_EQUAL_CHARS) or (
                        len(keys[lead].replace(" ", "")) >= NEAR_SINGLE_LINE_MIN_CHARS and
                        any(keys[i] for i in range(n) if i != lead))):
                # (a long typo line with a non-blank line beside it identifies a place too)
                typo = typo_distance(keys[lead], norm[s + lead])
                if typo is not None or _one_off_similar(keys[lead], norm[s + lead]):
                    one_off.add((s, s + n))
                if typo is not None:
                    found[(s, s + n)] = ([s + i for i in range(n)], None)
                    typos[(s, s + n)] = typo
                else:
                    slip = _slip(keys[lead], norm[s + lead])
                    if slip is not None:  # nearly a typo: a rival unless clearly farther
                        rivals.add(slip)
        # one file line missing from old text (an interior one)
        if s + n + 1 <= total and n >= 2:
            tail = 0
            while tail < n and keys[n - 1 - tail] == norm[s + n - tail]:
                tail += 1
            k = max(1, n - tail)
            if k <= min(lead, n - 1) and _enough_evidence(keys, list(range(n))):
                found.setdefault((s, s + n + 1), (
                    [s + i if i < k else s + i + 1 for i in range(n)], s + k))
                # Lines equal up to indentation around the gap: each could be the missing one.
                others[(s, s + n + 1)] = [
                    ([s + i if i < j else s + i + 1 for i in range(n)], s + j)
                    for j in range(k + 1, min(lead, n - 1) + 1)]
        # one old line the file lacks (an interior one)
        if s + n - 1 <= total and n >= 3:
            tail = 0
            while tail < n - 1 and keys[n - 1 - tail] == norm[s + n - 2 - tail]:
                tail += 1
            k = max(1, n - 1 - tail)
            if k <= min(lead, n - 2) and _enough_evidence(keys, [i for i in range(n) if i != k]):
                found.setdefault((s, s + n - 1), (
                    [s + i if i < k else (None if i == k else s + i - 1) for i in range(n)],
                    None))
    if one_off:
        # A window equal to old text line for line but for one similar line (a typo, a changed
        # case or value) explains
        # old text at least as well as a window elsewhere where a line is missing or extra:
        # those are not beyond doubt (corpus case P19 case-on-edited-line: the line with a
        # changed case stood there, and an extra-line reading elsewhere put the edit at the
        # wrong place). One overlapping the window is the same place read another way.
        found = {w: v for w, v in found.items() if (v[1] is None and None not in v[0]) or
                 all(a < w[1] and w[0] < b for a, b in one_off)}
    if rivals:
        # A window that differs from old text in one line by one slip a little larger than
        # a typo's: the typo windows not clearly closer than it are not beyond doubt.
        nearest = min(rivals)
        found = {w: v for w, v in found.items() if v[1] is not None or None in v[0] or
                 typos[w] + NEAR_RIVAL_MARGIN <= nearest}
    return found


def _near_starts(keys: list[str], index: Mapping[str, Sequence[int]]) -> set[int] | None:
    """The window starts ``_near_windows`` examines, all of them, or None when there are too
    many to look at (then no near miss is accepted: one window found among some could have
    a twin among the others).

    Every window it can accept (or count as a rival) has all of old text's lines where they
    should be but one (a typo line, an extra line), or all of them around one missing file
    line: of any two lines of old text, one stands where it should, one line either side at
    most. So the occurrences of any two non-blank lines, all of them, give every such
    window: lines are looked up longest first (a long line is rarely common; on a 100k-line
    file each lookup is a scan, and a common line's many occurrences cost more), and a line
    on more than ``NEAR_LINE_POSITIONS`` lines, or whose lookup stopped early (a word on too
    many lines: ``LazyPositions``), does not count; a line the file does not have counts,
    with no occurrence. Without two such lines, the two lines with the fewest occurrences
    are taken, counted only up to what ``NEAR_MAX_STARTS`` starts allow (``count_at_most``:
    on a big file a common line is not looked for to its last occurrence), and all their
    occurrences are looked at."""
    starts: set[int] = set()
    complete = 0
    for i in sorted((i for i, key in enumerate(keys) if key), key=lambda i: -len(keys[i])):
        positions = index.get(keys[i], ())
        if not isinstance(positions, (list, tuple)) or len(positions) > NEAR_LINE_POSITIONS:
            continue  # all of them may not be known (a LazyPositions), or too many
        # (an empty tuple: a line the file does not have, which is known all the same)
        for pos in positions:
            starts.update((pos - i - 1, pos - i, pos - i + 1))
        complete += 1
        if complete == 2:
            return starts
    bound = NEAR_MAX_STARTS // 3  # occurrences the two lines may have together
    rarest = sorted((count_at_most(index, key, bound), i) for i, key in enumerate(keys)
                    if key)[:2]
    if len(rarest) < 2 or sum(count for count, _ in rarest) > bound:
        return None
    starts.clear()
    for count, i in rarest:
        for pos in index.get(keys[i], ())[:count]:  # (all of them: at most ``bound``)
            starts.update((pos - i - 1, pos - i, pos - i + 1))
    return starts


def _single_line_typo(key: str, norm: Sequence[str]) -> int | None:
    """The one file line a single old line differs from by a typo, with no rival near it."""
    from rapidfuzz.distance import Levenshtein

    if len(key.replace(" ", "")) < NEAR_SINGLE_LINE_MIN_CHARS:
        return None
    close: list[int] = []
    rivals = 0
    for i, line in enumerate(norm):
        if abs(len(line) - len(key)) > NEAR_SINGLE_LINE_MARGIN:
            continue
        d = Levenshtein.distance(key, line, score_cutoff=NEAR_SINGLE_LINE_MARGIN)
        if d <= NEAR_TYPO_MAX_EDITS and _is_typo(key, line):
            close.append(i)
        elif d <= NEAR_SINGLE_LINE_MARGIN:
            rivals += 1
        if len(close) > 1 or rivals:
            return None
    return close[0] if len(close) == 1 else None


def find_near(model: FileModel, request: Request) -> Located | None:
    """Old text that matches one window but for one near miss a model makes, at one place.

    Line keys as T5 (indentation, inner whitespace and typography ignored). Accepted, each
    only when every other line matches exactly and carries enough text (>= 2 non-blank lines,
    >= 16 characters): one line differing by a typo (<= 2 character edits; here one other
    line of >= 8 characters, or any non-blank one beside a typo line of >= 16, is enough),
    unless a window differing from old text by one slip (``_slip``) is not at least
    ``NEAR_RIVAL_MARGIN`` edits farther; one interior file line missing from old text; one
    interior old line the file lacks. A single-line old text
    (>= 16 characters) is accepted when exactly one file line is within 2 edits of it and no
    other within 4. Several windows: ``ambiguous_match`` (hints decide, as at any tier). Old
    text with elision markers is left to T7. Returns None when nothing qualifies.
    """
    pattern = pattern_lines(request.old)
    if not pattern or len(pattern) > SIMILARITY_MAX_OLD_LINES or \
            len(model.lf_view) > SIMILARITY_MAX_FILE_BYTES or split_markers(request.old)[1]:
        return None
    try:
        import rapidfuzz  # noqa: F401
    except ImportError:  # pragma: no cover - declared dependency
        return None
    keys = [typography_key(line) for line in pattern]
    norm = model.normalized("typography")
    found: dict[tuple[int, int], tuple[list[int | None], int | None]]
    others: dict[tuple[int, int], list[tuple[list[int | None], int | None]]] = {}
    if sum(1 for k in keys if k) == 1:
        # One non-blank line (blank ones around it must be blank in the file too).
        at = next(i for i, k in enumerate(keys) if k)
        line = _single_line_typo(keys[at], norm)
        found = {}
        if line is not None and line - at >= 0 and line - at + len(keys) <= len(norm) and all(
                not norm[line - at + i] for i, k in enumerate(keys) if not k):
            found = {(line - at, line - at + len(keys)): (
                [line - at + i for i in range(len(keys))], None)}
    else:
        found = _near_windows(keys, norm, model.index("typography"), others)
    if not found:
        return None
    cands = [Candidate("near_miss", s, e) for s, e in sorted(found)]
    cand = choose(model, cands, request)
    assert cand is not None
    located = Located(cand, request)
    located.alignment, located.dropped = found[(cand.start, cand.end)]
    located.alternatives = others.get((cand.start, cand.end), [])
    if len(cands) > 1:
        located.disambiguated_by = "occurrence" if request.occurrence else "hint"
    _refuse_a_typo_read_as_invented(model, request, located, keys, norm)
    what = ("a line old_text lacks" if located.dropped is not None else
            "a line the file lacks" if None in located.alignment else "a typo in one line")
    located.warnings.append(
        f"old_text matched lines {cand.first_line}-{cand.last_line} but for {what}; lines "
        "you did not change keep the file's text")
    return located


def _refuse_a_typo_read_as_invented(model: FileModel, request: Request, located: Located,
                                    keys: list[str], norm: Sequence[str]) -> None:
    """Refuse the reading "old text has a line the file lacks" when that line is a typo's
    distance from a file line nearby: old text may as well be the file's lines with a typo in
    that one and another left out, and the two readings put the edit in different places."""
    cand = located.candidate
    reach = len(keys)
    lo, hi = max(cand.start - reach, 0), min(cand.end + reach, len(norm))
    for i, f in enumerate(located.alignment):
        if f is not None or not keys[i]:
            continue
        near = next((j for j in range(lo, hi) if norm[j] != keys[i]
                     and typo_distance(keys[i], norm[j], 3) is not None), None)
        if near is not None:
            raise near_conflict(located, f"the line the file lacks, "
                                f"{pattern_lines(request.old)[i].strip()[:SNIPPET_CHARS]!r}, is "
                                f"a typo's distance from line {near + 1}: invented, or mistyped "
                                "with another left out? The edit would go elsewhere")


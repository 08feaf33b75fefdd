"""T8, gated similarity: the one window clearly more similar to old text than any other.

``find_similar`` anchors on up to 3 informative lines of old text (rare in the file, with enough
word characters), scores the windows around each of their occurrences by normalised Levenshtein
similarity of the T5 line keys, and accepts the best only when it clears the gates
(docs/internals/matching.md#t8); ``threeway.merge_similar`` then merges the caller's change onto
it. It runs only within the bounds of docs/internals/matching.md#i7 (old text of 3 to 400
lines, ``SIMILARITY_MAX_OLD_CHARS``, ``SIMILARITY_MAX_WINDOWS``: never a set cut short).
Nothing is refused here: a failed gate returns None.

Map: ``find_similar``. Imports ``filemodel``, ``linekeys``, ``requests`` and ``candidates``;
the ladder calls it; ``rapidfuzz`` on use.
"""

from __future__ import annotations

from zbtools.core.editing.matching.candidates import (
    SIMILARITY_MAX_FILE_BYTES,
    SIMILARITY_MAX_OLD_LINES,
    TRIVIAL,
    Candidate,
    Located,
)
from zbtools.core.editing.matching.filemodel import count_at_most
from zbtools.core.editing.matching.linekeys import typography_key
from zbtools.core.editing.matching.requests import Request, pattern_lines

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from zbtools.core.editing.matching.filemodel import FileModel

SIMILARITY_MIN = 0.90
SIMILARITY_MARGIN = 0.10
SIMILARITY_RUNNER_UP_MAX = 0.85
SIMILARITY_MIN_LINES = 3
SIMILARITY_MIN_CHARS = 40
SIMILARITY_MAX_WINDOWS = 2000
SIMILARITY_MAX_OLD_CHARS = 24_000


def _informative(keys: list[str], index: Mapping[str, Sequence[int]]) -> list[int]:
    """Up to 3 pattern lines worth anchoring on: rare in the file, >= 8 word characters.

    The 3 with the fewest lines (then the longest, then the first). Lines are counted longest
    first, each only up to the third fewest count so far (``count_at_most``): on a big file
    a common line is not looked for to its last occurrence when it cannot be among them."""
    scored: list[tuple[int, int, int]] = []
    wanted = [i for i, key in enumerate(keys)
              if key not in TRIVIAL and sum(ch.isalnum() for ch in key) >= 8]
    for i in sorted(wanted, key=lambda i: -len(keys[i])):
        bound = sorted(scored)[2][0] if len(scored) >= 3 else None
        hits = len(index.get(keys[i], ())) if bound is None else \
            count_at_most(index, keys[i], bound)
        if hits and (bound is None or hits <= bound):
            scored.append((hits, -len(keys[i]), i))
    return [i for _, _, i in sorted(scored)[:3]]


def _similarity_windows(index: Mapping[str, Sequence[int]], keys: list[str], anchors: list[int],
                        n: int, line_count: int) -> set[tuple[int, int]] | None:
    """The windows T8 scores: around every occurrence of every anchor line, the window where
    old text would stand with that line in place, shifted by up to 2 lines, of ``n`` lines
    give or take a tenth. None when they are more than ``SIMILARITY_MAX_WINDOWS``: a set cut
    short could leave out the block meant while a look-alike met earlier is scored (and
    edited), or leave out the rival that makes the best ambiguous. So no answer is better
    than a partial one.

    The limit this keeps: a window is scored only where one of the anchors stands as it is
    in old text. A rival that holds none of them exactly (each changed a little) is not
    seen; the margin and the 3-way merge are what stands between it and a wrong edit."""
    spread = max(1, n // 10)
    lengths = range(n - spread, n + spread + 1)
    windows: set[tuple[int, int]] = set()
    for a in anchors:
        if count_at_most(index, keys[a], SIMILARITY_MAX_WINDOWS) > SIMILARITY_MAX_WINDOWS:
            return None
        for pos in index[keys[a]]:
            for start in range(max(pos - a - 2, 0), pos - a + 3):
                windows.update((start, start + length) for length in lengths
                               if start + length <= line_count)
            if len(windows) > SIMILARITY_MAX_WINDOWS:
                return None
    return windows


def find_similar(model: FileModel, request: Request) -> Located | None:
    """The one window that is very similar to old text and clearly better than any other.

    Gates (docs/internals/matching.md#t8): >= 3 non-blank lines and >= 40 non-space characters; best
    score >= 0.90; the best non-overlapping runner-up <= best - 0.10 and < 0.85; then the 3-way
    merge must find no conflict (checked when rendering). Returns None when a gate fails.
    """
    pattern = pattern_lines(request.old)
    non_blank = [line for line in pattern if line.strip()]
    if len(non_blank) < SIMILARITY_MIN_LINES or len("".join("".join(non_blank).split())) < \
            SIMILARITY_MIN_CHARS or len(pattern) > SIMILARITY_MAX_OLD_LINES or \
            len(request.old) > SIMILARITY_MAX_OLD_CHARS or \
            len(model.lf_view) > SIMILARITY_MAX_FILE_BYTES:
        return None
    try:
        from rapidfuzz.distance import Levenshtein
    except ImportError:  # pragma: no cover - declared dependency
        return None
    keys = [typography_key(line) for line in pattern]
    index = model.index("typography")
    norm = model.normalized("typography")
    anchors = _informative(keys, index)
    if not anchors:
        return None
    target = "\n".join(keys)
    windows = _similarity_windows(index, keys, anchors, len(pattern), len(norm))
    if windows is None:
        return None
    scored = []
    for start, end in sorted(windows):
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

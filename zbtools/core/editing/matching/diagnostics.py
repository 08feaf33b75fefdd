"""Diagnosing a miss: the ``no_match`` refusal that tells the caller what to fix.

``diagnose(model, request)`` returns (does not raise) a ``MatchError("no_match", ...)`` naming
the tiers tried, the closest window of the file, the first line where old text and the file
diverge, a bounded diff of the two, and a cause when one is recognisable: indentation, whitespace
only, old text ending mid-line, the edit already showing, literal ``\\n`` sent for line breaks
(docs/internals/matching.md#messages). Its cost is bounded by the size of the request and the
file, not their product (docs/internals/matching.md#i7): windows come from at most 200
occurrences per line, long lines and blocks are compared on ``LINE_CHARS`` and
``SIMILARITY_CHARS``. A diagnosis is advice: it never changes what was matched.

Map: ``diagnose``. Imports ``diff``, ``errors``, ``filemodel``, ``linekeys``, ``indentation``
and ``requests``; the tiers import it, so it imports no tier.
"""

from __future__ import annotations

from zbtools.core.editing.matching.diff import line_opcodes
from zbtools.core.editing.matching.errors import SNIPPET_CHARS, MatchError
from zbtools.core.editing.matching.indentation import leading_ws
from zbtools.core.editing.matching.linekeys import TIERS, rstrip_key, strip_key, typography_key
from zbtools.core.editing.matching.requests import pattern_lines

LINE_CHARS = 1000
SIMILARITY_CHARS = 20_000

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from zbtools.core.editing.matching.filemodel import FileModel
    from zbtools.core.editing.matching.requests import Request


def _visible(text: str) -> str:
    return (text.replace("\t", "→").replace(" ", "·").replace("\r", "␍")
            .replace("\u00a0", "⍽"))[:SNIPPET_CHARS]


def diagnose(model: FileModel, request: Request) -> MatchError:
    """``no_match`` with the closest candidate, the first divergence and a specific cause."""
    old = request.old
    pattern = pattern_lines(old)
    tried = [t for t in (TIERS[0], "quotes", *TIERS[1:]) if request.allows(t)]
    if "\\" in old and request.allows("unescape"):
        tried.append("unescape")
    details: dict[str, Any] = {"tiers_tried": tried}
    notes: list[str] = []
    if "\\n" in old and "\n" not in old.strip("\n"):
        notes.append("old_text contains literal backslash-n sequences (\\n) where the file has "
                     "real line breaks; send real newlines")
    closest = _closest(model, pattern)
    hint = "copy the exact current text from the file (read it again) into old_text"
    if closest is not None:
        start, matched, score = closest
        last = min(start + len(pattern), len(model.lines))  # never past the end of the file
        details["closest"] = {"start_line": start + 1,
                              "end_line": last,
                              "similarity": round(score, 2),
                              "matching_lines": matched}
        window = model.lines[start:start + len(pattern)]
        differing = [i for i, (a, b) in enumerate(zip(pattern, window, strict=False))
                     if rstrip_key(a) != rstrip_key(b)]
        ws_only = [i for i in differing if strip_key(pattern[i]) == strip_key(window[i])]
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
            if strip_key(old_line) == strip_key(file_line) and old_line != file_line and not notes:
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
        hint = (f"re-read lines {start + 1}-{last} and copy them exactly as "
                "old_text")
    details["diagnosis"] = notes
    where = ""
    if closest is not None:
        where = f"; closest: lines {closest[0] + 1}-" \
                f"{min(closest[0] + len(pattern), len(model.lines))} " \
                f"(similarity {closest[2]:.2f})"
    message = f"{request.label}old_text was not found (tried: {', '.join(details['tiers_tried'])})"
    message += where
    if notes:
        message += ". " + "; ".join(notes)
    return MatchError("no_match", message, hint=hint, details=details)


def _closest(model: FileModel, pattern: list[str]) -> tuple[int, int, float] | None:
    """(start, matching prefix lines, similarity) of the best window, or None.

    Bounded (docs/internals/matching.md#i7): prefix lengths are counted for at most 200 occurrences
    of each pattern line, and similarity is scored (rapidfuzz) only for the few longest prefixes.
    """
    if not pattern or not model.lines:
        return None
    keys = [typography_key(line) for line in pattern]
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
        import operator

        if len(prefixes) * len(keys) > len(norm):
            # Every window below is compared whole: the keys of a big file's lines are
            # computed once, not again for each window (200 windows of 30,000 lines: 4 s).
            norm = model.all_keys("typography")
        blanks = [i for i, key in enumerate(keys) if not key]

        # The longest matching prefixes first; among equal ones (all 0 when old text's first
        # line is the one that differs), the windows with the most equal non-blank lines.
        def equal_lines(st: int) -> int:
            window = norm[st:st + len(keys)]
            same: int = sum(map(operator.eq, keys, window))
            return same - sum(1 for i in blanks if i < len(window) and not window[i])

        top = sorted(prefixes, key=lambda st: (-prefixes[st], -equal_lines(st), st))[:5]
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


def _closest_line(key: str, lines: Sequence[str]) -> int | None:
    import difflib

    try:
        from rapidfuzz import fuzz, process
    except ImportError:  # pragma: no cover - declared dependency
        close = difflib.get_close_matches(key, lines, n=1, cutoff=0.6)
        return lines.index(close[0]) if close else None
    found = process.extractOne(key[:LINE_CHARS], lines, scorer=fuzz.ratio, score_cutoff=60,
                               processor=_line_head)
    return None if found is None else int(found[2])


def _line_head(line: str) -> str:
    return line[:LINE_CHARS]


def _similarity(a: list[str], b: Sequence[str]) -> float:
    """Levenshtein similarity of the two texts; where they differ over a long stretch, that of
    an edit script that keeps the lines they share.

    Exact as long as the part between the texts' common beginning and common end is at most
    ``SIMILARITY_CHARS`` long (rapidfuzz sets those aside itself). Beyond, the lines are aligned
    (``line_opcodes``, linear) and each changed block is scored apart: exactly up to
    ``SIMILARITY_CHARS``, a longer one from the same share of each side's first lines (at most
    ``SIMILARITY_CHARS``), scaled to its length.
    """
    import difflib

    left, right = "\n".join(a), "\n".join(b)
    longest = max(len(left), len(right))
    if not longest:
        return 1.0
    try:
        from rapidfuzz.distance import Levenshtein, Postfix, Prefix
    except ImportError:  # pragma: no cover - declared dependency
        left, right = left[:SIMILARITY_CHARS], right[:SIMILARITY_CHARS]
        return difflib.SequenceMatcher(None, left, right, autojunk=False).ratio()
    head = Prefix.similarity(left, right)
    tail = Postfix.similarity(left[head:], right[head:])
    if max(len(left), len(right)) - head - tail <= SIMILARITY_CHARS:
        return float(Levenshtein.normalized_similarity(left, right))
    distance = 0
    for tag, i1, i2, j1, j2 in line_opcodes(list(a), list(b)):
        if tag == "equal":
            continue
        x, y = "\n".join(a[i1:i2]), "\n".join(b[j1:j2])
        if i1 == i2 or j1 == j2:
            distance += len(x) + len(y) + 1  # the lines and the break that joined them
        elif max(len(x), len(y)) <= SIMILARITY_CHARS:
            distance += Levenshtein.distance(x, y)
        else:  # the same share of each side's lines, as many as fit, scaled up
            share = SIMILARITY_CHARS / max(len(x), len(y))
            x_cut = "\n".join(a[i1:i1 + max(1, int((i2 - i1) * share))])[:SIMILARITY_CHARS]
            y_cut = "\n".join(b[j1:j1 + max(1, int((j2 - j1) * share))])[:SIMILARITY_CHARS]
            rate = Levenshtein.distance(x_cut, y_cut) / max(len(x_cut), len(y_cut), 1)
            distance += max(abs(len(x) - len(y)), round(rate * max(len(x), len(y))))
    return max(0.0, 1.0 - distance / longest)


def _bounded_diff(pattern: list[str], window: Sequence[str], start: int, limit: int = 40
                   ) -> str:
    out = []
    for op, i1, i2, j1, j2 in line_opcodes(pattern, list(window)):
        if op == "equal":
            out.append(f"  {start + j1 + 1:>5} | {window[j1][:SNIPPET_CHARS]}" if i2 - i1 == 1
                       else f"        ({i2 - i1} equal lines)")
            continue
        if op == "insert" and i1 == len(pattern):
            # The file lines after the end of old_text are context, not a difference.
            out += [f"  {start + j + 1:>5} | {window[j][:SNIPPET_CHARS]}" for j in range(j1, j2)]
            continue
        out += [f"- {'':>5} | {_visible(line) if strip_key(line) == strip_key(window[j1 + k]) else line[:SNIPPET_CHARS]}"  # noqa: E501
                if j1 + k < j2 else f"- {'':>5} | {line[:SNIPPET_CHARS]}"
                for k, line in enumerate(pattern[i1:i2])]
        out += [f"+ {start + j + 1:>5} | {_visible(window[j]) if i1 + j - j1 < i2 and strip_key(window[j]) == strip_key(pattern[i1 + j - j1]) else window[j][:SNIPPET_CHARS]}"  # noqa: E501
                for j in range(j1, j2)]
    if len(out) > limit:
        out = [*out[:limit], f"... ({len(out) - limit} more diff lines)"]
    return "\n".join(out)

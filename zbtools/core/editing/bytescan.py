"""The checks of an exact edit done on the bytes: where old text is, and whether it may be.

``cycle`` does a plain exact, unique edit of a UTF-8 file as a splice of its bytes, without
decoding, splitting or modelling the file (docs/internals/performance.md#big-files); these
checks say when that gives the engine's answer. Old text is located through a probe (its
longest line without indentation, which every occurrence and every look-alike up to
indentation holds), so one scan finds its occurrences and its look-alikes. Nothing here
refuses: a check that fails sends the edit the whole way, through the engine.

Map: ``plain_pair``, ``text_start`` (the request and the file, as a splice allows them);
``Probe``, ``look_alike_probe``, ``all_occurrences``, ``only_occurrence``,
``has_near_duplicate``; ``exact_special_case`` (the exact tier would do more than splice);
``context_region``, ``decoded_context``, ``context_is_enough`` (the diff's context);
``line_offset``. Imports matching's ``requests`` and ``diff`` on use only.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from zbtools.core.files.workspace import Resolved

Probe = tuple[bytes, int, int, list[bytes]]


def plain_pair(res: Resolved, simple: tuple[str, str]) -> tuple[bytes, bytes] | None:
    """(old, new) as UTF-8 bytes when this edit may be a splice on the bytes (the
    request-side conditions of ``cycle._bytes_fast_path``), else None."""
    from zbtools.core.editing.matching.requests import has_placeholder, strip_line_numbers

    old, new = simple
    if not old.strip() or "\r" in old or "\r" in new or old == new or \
            old.startswith("\ufeff") or new.startswith("\ufeff"):
        return None
    if res.st is not None and res.st.st_nlink > 1:
        return None  # a hard-linked file: the full engine keeps its inode (txn.replace_file)
    if strip_line_numbers(old)[1] is not None or has_placeholder(new, old) is not None:
        return None  # the engine strips the prefixes, or refuses the placeholder
    try:
        return old.encode("utf-8"), new.encode("utf-8")
    except UnicodeEncodeError:
        return None


def text_start(head: bytes) -> int | None:
    """Where the text starts after a UTF-8 BOM (0 or 3), judging by the file's first bytes;
    None for a file that looks binary or UTF-16 (the full engine handles those)."""
    if head.find(b"\x00", 0, 8192) != -1 or head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return None
    return 3 if head.startswith(b"\xef\xbb\xbf") else 0


def look_alike_probe(old: str) -> Probe | None:
    """(old text's longest line without its indentation, where that stands in old text's
    bytes, which line it is, every line of old text without its indentation) when old text
    has enough to look for look-alikes of (as the engine's ``ladder._near_duplicates``: two
    non-blank lines, or 12 characters), else None. Every occurrence of old text holds the
    probe at that offset, so one scan for the probe finds both old text's occurrences and its
    look-alikes."""
    from zbtools.core.editing.matching.requests import pattern_lines

    lines = pattern_lines(old)
    non_blank = [line for line in lines if line.strip()]
    if len(non_blank) < 2 and sum(len(line.strip()) for line in non_blank) < 12:
        return None
    keys = [line.strip(" \t").encode("utf-8") for line in lines]
    at = max(range(len(lines)), key=lambda i: len(lines[i].strip(" \t")))
    if not keys[at]:
        return None
    line = lines[at]
    before = "".join(x + "\n" for x in lines[:at]) + line[:len(line) - len(line.lstrip(" \t"))]
    return keys[at], len(before.encode("utf-8")), at, keys


def all_occurrences(data: bytes, key: bytes, start: int, limit: int = 0) -> list[int] | None:
    """Every offset of ``key`` in ``data`` from ``start`` on, overlapping ones too (None: more
    than ``limit``, when given)."""
    found: list[int] = []
    pos = data.find(key, start)
    while pos != -1:
        found.append(pos)
        if limit and len(found) > limit:
            return None
        pos = data.find(key, pos + 1)
    return found


def only_occurrence(data: bytes, needle: bytes, start: int,
                     probe: Probe | None, hits: list[int] | None) -> int:
    """Where ``needle`` occurs in ``data`` from ``start`` on, when it occurs exactly once
    (overlapping occurrences counted), else -1: through the probe's occurrences when there
    is a probe (each occurrence of the needle holds it), else with two ``bytes.find``."""
    if probe is None or hits is None:
        first = data.find(needle, start)
        return -1 if first == -1 or data.find(needle, first + 1) != -1 else first
    offset = probe[1]
    found = [q - offset for q in hits
             if q - offset >= start and data.startswith(needle, q - offset)]
    return found[0] if len(found) == 1 else -1


def has_near_duplicate(data: bytes, start: int, line_start: int, probe: Probe,
                        hits: list[int]) -> bool:
    """Whether a line other than the match's own equals, up to indentation, old text's
    longest line (every block that matches old up to indentation has one): the engine then
    warns about the look-alike (``ladder._near_duplicates``), so it gets to decide. Only that
    line's occurrences (``hits``, from the scan that located old text) are looked at;
    nothing is indexed, and lines are told apart by where they start (no line counting up
    to each occurrence)."""
    key, _, at, keys = probe
    own = line_start  # where the file line old's line `at` is on starts
    for _ in range(at):
        own = data.find(b"\n", own) + 1
    stop = -1
    for pos in hits:
        if pos < stop:
            continue  # the same line again
        begin = max(data.rfind(b"\n", 0, pos) + 1, start)
        stop = data.find(b"\n", pos)
        stop = len(data) if stop == -1 else stop
        if begin != own and data[begin:stop].strip(b" \t") == key and \
                _window_matches(data, start, begin, stop, at, keys):
            return True
    return False


def _window_matches(data: bytes, start: int, begin: int, stop: int, at: int,
                    keys: list[bytes]) -> bool:
    """Whether the lines around the one at data[begin:stop] equal ``keys`` up to indentation,
    that line being the ``at``-th (the look-alike needs every line, not only the longest);
    the text starts at ``start`` (after a BOM)."""
    lo = begin
    for k in range(at - 1, -1, -1):  # the lines above, nearest first
        if lo <= start:
            return False
        above = max(data.rfind(b"\n", 0, lo - 1) + 1, start)
        if data[above:lo - 1].strip(b" \t") != keys[k]:
            return False
        lo = above
    hi = stop
    for k in range(at + 1, len(keys)):  # the lines below
        if hi >= len(data):
            return False
        below = data.find(b"\n", hi + 1)
        below = len(data) if below == -1 else below
        if data[hi + 1:below].strip(b" \t") != keys[k]:
            return False
        hi = below
    return True


def exact_special_case(data: bytes, start: int, first: int, end: int, old: str, new: str,
                        probe: Probe | None, hits: list[int] | None) -> bool:
    """Whether the engine's exact tier would do more than splice ``new`` over data[first:end]
    (the cases ``cycle._bytes_fast_path`` leaves to it); ``start``: where the text starts (after a
    BOM, which is no part of line 1); ``probe`` and ``hits``: old text's look-alike probe and
    its occurrences (``look_alike_probe``)."""
    if new.startswith(old) and new[len(old):].strip() and \
            data.startswith(new[len(old):].encode("utf-8"), end):
        return True  # the insertion is already there: a no-op, reported as such
    if new.endswith(old) and new[:len(new) - len(old)].strip() and \
            data.endswith(new[:len(new) - len(old)].encode("utf-8"), 0, first):
        return True
    line_start = max(data.rfind(b"\n", 0, first) + 1, start)
    if first > line_start and not data[line_start:first].strip(b" \t") and \
            "\n" not in old.removesuffix("\n"):
        return True  # one line sent less indented than the file has it: maybe whole-line drift
    if probe is None or (first != line_start and not old.startswith("\n")):
        return False  # a partial-line match: the engine does not look for look-alikes
    if hits is None:  # a common line: found again, all of them
        hits = all_occurrences(data, probe[0], start)
        assert hits is not None
    return has_near_duplicate(data, start, line_start, probe, hits)


def context_region(data: bytes, first: int, end: int, start: int) -> tuple[int, int, int]:
    """The changed lines plus 3 lines of context each side, for the diff: (where the region
    starts, the context lines before the match, where it ends). ``data`` may be a window of
    the file; ``start`` is where its text starts (after a BOM)."""
    region_start = data.rfind(b"\n", 0, first) + 1
    context_before = 0
    while context_before < 3 and region_start > start:
        region_start = data.rfind(b"\n", 0, region_start - 1) + 1
        context_before += 1
    region_start = max(region_start, start)
    region_end = end
    for _ in range(4):
        stop = data.find(b"\n", region_end)
        region_end = len(data) if stop == -1 else stop + 1
    return region_start, context_before, region_end


def context_is_enough(context: tuple[str, str], simple: tuple[str, str], at_start: bool,
                       at_end: bool) -> bool:
    """Whether the diff of the excerpt (context around old, then around new) is the whole
    file's: a change between repeated lines can slide past 3 lines of context."""
    from zbtools.core.editing.matching.diff import excerpt_is_whole

    head, tail = context
    old, new = simple
    return excerpt_is_whole(head + old + tail, head + new + tail, at_start, at_end)


def decoded_context(data: bytes, region_start: int, first: int, end: int,
                     region_end: int) -> tuple[str, str] | None:
    """The context before and after the match as text; None unless both sides are whole
    UTF-8 characters (strict decoding of the region checks it)."""
    try:
        return data[region_start:first].decode("utf-8"), data[end:region_end].decode("utf-8")
    except UnicodeDecodeError:
        return None


def line_offset(data: bytes, begin: int, line: int, at_least: int) -> int:
    """Where 0-based ``line`` starts in ``data`` (text from ``begin``, strict UTF-8), given
    where it starts in the decoded text (``at_least``: a character takes at least a byte):
    the line breaks before that many bytes are counted in C, and the few lines that
    multi-byte characters pushed further are stepped over one by one."""
    if line == 0:
        return begin
    pos = begin + at_least
    seen = data.count(b"\n", begin, pos)
    while seen < line:
        pos = data.index(b"\n", pos) + 1
        seen += 1
    return pos

"""The read-modify-write cycle shared by the edit tools.

Reads the file once (regular files only, binary refused), checks ``expected_sha256``, decodes it
with full fidelity (``decoding.decode``), lets the matcher compute the new text, encodes it the way
the file was (encoding, BOM, undecodable bytes), and writes it atomically, refusing with
``stale_file`` if the file changed between the read and the write. ``dry_run`` stops before the
write and returns the same report and diff.

Failure modes: the matcher's refusals (``no_match``, ``ambiguous_match``, ``overlapping_edits``,
``no_change``, ``placeholder_in_new``), ``encoding_error`` (new text the file's encoding cannot
hold, or non-ASCII text for a file that is not valid UTF-8: that would mix encodings),
``binary_file``, ``not_found``, ``is_directory``, ``stale_file``, ``permission_denied``.

A plain exact edit is done on the bytes (``_bytes_fast_path``). From 1 MiB its two sha256
(before, for the undo journal; after, for the result) run on a helper thread and the line
number of the match is counted on another while the write's ``fsync`` waits on the disk;
both are done before anything is reported or an error raised. Over 16 MiB the file is not
read whole (``_streamed_edit``): its lines are counted on a helper thread while the kernel
copies it. Nothing else is threaded.
"""

from __future__ import annotations

import os

from zbtools.contract import ToolError
from zbtools.core.files.decoding import decode, is_utf8
from zbtools.core.files.hashing import FAST_HASH_BYTES, sha256_hex
from zbtools.core.files.reading import read_bytes, read_bytes_stat
from zbtools.core.files.replacing import create_file, replace_parts
from zbtools.core.files.staging import sync_group
from zbtools.core.files.staleness import Guard, check_expected

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from zbtools.core.call.context import Context
    from zbtools.core.editing.matching import Applied
    from zbtools.core.files.decoding import Decoded
    from zbtools.core.files.replacing import WriteOutcome
    from zbtools.core.files.streaming import Background
    from zbtools.core.files.workspace import Resolved

MAX_EDIT_BYTES = 256 * 1024 * 1024


class EditOutcome:
    def __init__(self, path: str, applied: Applied, diff: str, sha256: str | None, changed: bool,
                 dry_run: bool) -> None:
        self.path = path
        self.applied = applied
        self.diff = diff
        self.sha256 = sha256
        self.changed = changed
        self.dry_run = dry_run


def to_tool_error(err: Any) -> ToolError:
    return ToolError(err.code, err.message, hint=err.hint, details=err.details)


def check_new_text(texts: list[str], invalid_utf8: bool, shown: str) -> None:
    if not invalid_utf8:
        return
    for text in texts:
        for ch in text:
            if ord(ch) > 127 and not 0xDC80 <= ord(ch) <= 0xDCFF:
                raise ToolError(
                    "encoding_error", f"{shown}: is not valid UTF-8 and the new text contains "
                    f"{ch!r}; writing it would mix encodings in one file",
                    hint="use only ASCII in the new text, or convert the file to UTF-8 first "
                    "(write_file with encoding: utf-8)", details={"character": ch})


def edit_file_text(ctx: Context, path: str, compute: Callable[[str], Applied],
                   new_texts: list[str], *, expected_sha256: str | None,
                   dry_run: bool, tool: str = "apply_edit",
                   simple: tuple[str, str] | None = None) -> EditOutcome:
    """Apply ``compute`` to the file's text and write the result (unless ``dry_run``).

    ``simple`` = (old, new) marks a plain single edit without hints: on a big UTF-8 file it is
    first tried on the bytes (``_bytes_fast_path``), without decoding or splitting the file.
    """
    from zbtools.core.editing.matching import MatchError, unified_diff

    with ctx.workspace.resolve(path, write=not dry_run) as res:
        group = sync_group()
        if simple is not None and expected_sha256 is None and res.st is not None and \
                STREAM_BYTES < res.st.st_size <= MAX_EDIT_BYTES and \
                (group is None or group.staged_for(res) is None):
            streamed = _streamed_edit(ctx, res, simple, path, dry_run)
            if streamed is not None:
                return streamed
        data, read_st = read_bytes_stat(res, max_bytes=MAX_EDIT_BYTES, shown=path)
        check_expected(data, expected_sha256, path)
        if simple is not None:
            fast = _bytes_fast_path(ctx, res, data, read_st, simple, path, dry_run, tool)
            if fast is not None:
                return fast
        decoded = decode(data, shown=path)
        check_new_text(new_texts, decoded.invalid_utf8, path)
        try:
            applied = compute(decoded.text)
        except MatchError as err:
            raise to_tool_error(err) from None
        rel = res.rel
        if not applied.changed:
            return EditOutcome(rel, applied, "", sha256_hex(data), False, dry_run)
        if applied.splice is not None and decoded.encoding == "utf-8" and \
                not decoded.invalid_utf8 and (res.st is None or res.st.st_nlink == 1):
            spliced = _spliced_edit(ctx, res, data, read_st, decoded, applied, path, dry_run,
                                    tool)
            if spliced is not None:
                return spliced
        new_data = decoded.encode(applied.text)
        diff = unified_diff(rel, decoded.display_text(), _display(applied.text, decoded))
        digest = sha256_hex(new_data)
        if dry_run:
            return EditOutcome(rel, applied, diff, digest, True, True)
        from zbtools.core.editing.txn import replace_file

        # Staleness: the file must still hold exactly the bytes read (as strong as comparing
        # their sha256, without hashing either).
        written = replace_file(ctx, res, new_data, expected_sha256=None, expected_data=data,
                               shown=path, tool=tool, read_stat=read_st, defer_dir_sync=True)
        _record(ctx, res, written, data, tool, digest, None)
        return EditOutcome(rel, applied, diff, digest, True, False)


FAST_PATH_BYTES = 4 * 1024 * 1024
HASH_RESULT_BYTES = 16 * 1024 * 1024  # larger results report no sha256 (and keep no undo)


def _bytes_fast_path(ctx: Context, res: Resolved, data: bytes, read_st: os.stat_result,
                     simple: tuple[str, str], path: str, dry_run: bool, tool: str
                     ) -> EditOutcome | None:
    """A plain exact, unique edit done on the bytes (issue 16, PERFORMANCE section 7).

    Exact matching comes first for every file size: the file is not decoded, split or
    modelled, and the bytes outside the match are copied untouched by construction. Returns
    None (the full engine decides, with the same result it always gave) unless this is the
    case where the engine's answer is a plain splice: the file is UTF-8 (optionally with a
    BOM), not binary; old and new contain no CR and no BOM, old carries no line-number
    prefixes and new no omission placeholder; old occurs exactly once (overlapping
    occurrences counted); and none of the exact tier's special cases applies: an insertion
    already made (new = old + text already after it, or text already before it + old), a
    single line found after only indentation (rendered as the indentation tier), a file
    with CRs below ``FAST_PATH_BYTES`` (its line endings go through the line merge), or a
    block whose lines also stand elsewhere up to indentation (the near-duplicate warning).
    """
    pair = _plain_pair(res, simple)
    if pair is None:
        return None
    old, new = simple
    needle, replacement = pair
    start = _text_start(data)
    if start is None:
        return None
    big = len(data) >= FAST_PATH_BYTES
    if not big and b"\r" in data:
        return None
    probe = _look_alike_probe(old)
    hits = None if probe is None else _all_occurrences(data, probe[0], start, PROBE_HITS)
    first = _only_occurrence(data, needle, start, probe, hits)
    if first == -1:
        return None  # absent or ambiguous: the full engine explains it
    end = first + len(needle)
    if big and b"\n" in replacement and b"\n" not in needle and \
            data.count(b"\r\n") > data.count(b"\n") - data.count(b"\r\n"):
        replacement = replacement.replace(b"\n", b"\r\n")  # a CRLF file gets CRLF lines
    new_size = len(data) - len(needle) + len(replacement)
    if not big:
        if not is_utf8(data):  # the engine decodes a valid UTF-8 file as UTF-8, others not
            return None
        if _exact_special_case(data, start, first, end, old, new, probe, hits):
            return None
    region_start, context_before, region_end = _context(data, first, end, start)
    context = _decoded_context(data, region_start, first, end, region_end)
    if context is None or not _context_is_enough(
            context, simple, region_start <= start, region_end >= len(data)):
        return None  # (the change slides past its context: the engine diffs the whole text)
    pieces = [memoryview(data)[:first], memoryview(replacement), memoryview(data)[end:]]
    lines_before: list[int] = []  # the newlines before the match, counted once

    def count_lines() -> None:
        lines_before.append(data.count(b"\n", 0, first))

    def outcome(digest: str | None) -> EditOutcome:
        return _splice_outcome(res, simple, needle, context, lines_before[0] + 1,
                               context_before, digest, dry_run)

    # The result's sha256 is a full extra pass (~25 ms per 50 MB): like reads of huge files,
    # edits of files over HASH_RESULT_BYTES report null and keep the cost near a copy's.
    hashed = new_size <= HASH_RESULT_BYTES
    if dry_run:
        count_lines()
        return outcome(_hash_parts(pieces) if hashed else None)
    # Counting the lines of a big file (~20 ms for 45 MB) is done while its new version's
    # fsync waits on the disk; a small file's count costs less than a thread.
    meanwhile = count_lines if len(data) >= FAST_HASH_BYTES else None
    if meanwhile is None:
        count_lines()
    name = res.name
    assert name is not None

    def write() -> WriteOutcome:
        if big:
            # Staleness by identity, size and nanosecond mtime: re-hashing 50 MB would double
            # the cost.
            seen = os.stat(name, dir_fd=res.dir_fd)
            return replace_parts(res, pieces, Guard(unchanged_since=seen), group=sync_group(),
                                 meanwhile=meanwhile, shown=path)
        # staleness by the bytes themselves (as strong as their sha256, and cheaper)
        return replace_parts(res, pieces, Guard(expected_data=data, read_stat=read_st),
                             group=sync_group(), meanwhile=meanwhile, shown=path)

    digest = _write_splice(ctx, res, data, first, end, replacement, tool, write, hashed)
    return outcome(digest)


SPLICE_DIFF_CONTEXT = 3  # unified_diff's context lines


def _spliced_edit(ctx: Context, res: Resolved, data: bytes, read_st: os.stat_result,
                  decoded: Decoded, applied: Applied, path: str, dry_run: bool, tool: str
                  ) -> EditOutcome | None:
    """Write the matcher's result as the original bytes around the encoded changed lines
    (``Applied.splice``), for a UTF-8 file read strictly (optionally with a BOM) with one
    link: the new text is never joined, encoded or diffed whole (~15 ms for 100k lines).

    Such a file's bytes are its text encoded back exactly, and a line break is one byte that
    no other character's encoding contains, so the changed lines start and end after the
    same count of line breaks in the bytes as in the text (``_line_offset``). The diff is
    that of the excerpts around the change when ``excerpt_diff`` proves it the whole texts'
    diff; else None is returned before anything is written, and the caller goes the whole way.
    """
    from zbtools.core.editing.matching.diff import excerpt_diff

    splice = applied.splice
    assert splice is not None
    text = splice.original
    lo = splice.start
    for _ in range(SPLICE_DIFF_CONTEXT + 1):  # (one more: the middle may end inside a line)
        if lo == 0:
            break
        lo = text.rfind("\n", 0, lo - 1) + 1
    hi = splice.end
    for _ in range(SPLICE_DIFF_CONTEXT + 1):
        newline = text.find("\n", hi)
        if newline == -1:
            hi = len(text)
            break
        hi = newline + 1
    diff = excerpt_diff(res.rel, text[lo:hi],
                        "".join((text[lo:splice.start], splice.middle, text[splice.end:hi])),
                        splice.start_line - text.count("\n", lo, splice.start) + 1,
                        lo == 0, hi == len(text), SPLICE_DIFF_CONTEXT)
    if diff is None:
        return None
    begin = len(decoded.bom)
    first = _line_offset(data, begin, splice.start_line, splice.start)
    end = len(data) if splice.end == len(text) else \
        _line_offset(data, begin, splice.end_line, splice.end)
    replacement = decoded.encode(splice.middle, with_bom=False)
    view = memoryview(data)
    pieces = [view[:first], memoryview(replacement), view[end:]]
    if dry_run:
        return EditOutcome(res.rel, applied, diff, _hash_parts(pieces), True, True)
    digest = _write_splice(
        ctx, res, data, first, end, replacement, tool,
        lambda: replace_parts(res, pieces, Guard(expected_data=data, read_stat=read_st),
                              group=sync_group(), shown=path), True)
    return EditOutcome(res.rel, applied, diff, digest, True, False)


def _write_splice(ctx: Context, res: Resolved, data: bytes, first: int, end: int,
                  replacement: bytes, tool: str, write: Callable[[], WriteOutcome],
                  hashed: bool) -> str | None:
    """Write ``data`` with ``replacement`` over data[first:end] (``write``), then warn of a
    hard link made meanwhile and journal the change for ``undo``; returns the new sha256.
    ``hashed`` false (a result over ``HASH_RESULT_BYTES``): no sha256, no journal, a
    warning. From ``FAST_HASH_BYTES`` the two sha256 are computed beside the write
    (``_digests_beside``), done before anything is reported or raised."""
    digests = _digests_beside(data, first, end, replacement) \
        if hashed and len(data) >= FAST_HASH_BYTES else None
    try:
        written = write()
    finally:
        if digests is not None:
            digests.wait()
    if written.hardlink_broken:  # a link made since the file was resolved
        from zbtools.core.editing.txn import warn_if_link_broken  # (not on the usual path)

        warn_if_link_broken(ctx, res, written)
    if not hashed:
        _warn_unrecorded(ctx, res)
        return None
    # (any error of the hashing thread is raised here)
    before_digest, digest = digests.result() if digests is not None else \
        _hash_both(data, first, end, replacement)
    _record(ctx, res, written, data, tool, digest, before_digest)
    return digest


def _line_offset(data: bytes, begin: int, line: int, at_least: int) -> int:
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


def _record(ctx: Context, res: Resolved, written: WriteOutcome, before: bytes, tool: str,
            after_sha256: str | None, before_sha256: str | None) -> None:
    """Journal the change for ``undo``; a change the session's group staged is journaled once
    it is written (``SyncGroup.defer``), and not at all if it never is. While the group holds
    staged files or records waiting for them, every change waits so (written ones too): the
    journal keeps the order of the changes, which ``undo`` without a path relies on."""
    from zbtools.core.editing.undo import other_names, record

    links = other_names(ctx, res) if written.hardlink_broken else None

    def journal() -> None:
        record(ctx, res.rel, before, None, tool, after_sha256=after_sha256,
               before_sha256=before_sha256, links=links)

    group = sync_group()
    if group is not None and (written.staged or group.staged or group.waiting):
        group.defer(res, journal)
    else:
        journal()


def _warn_unrecorded(ctx: Context, res: Resolved) -> None:
    ctx.warn(f"{res.rel} is larger than {HASH_RESULT_BYTES >> 20} MiB: this change is not "
             "kept for undo and its sha256 is not computed")


STREAM_BYTES = HASH_RESULT_BYTES  # past it, nothing needs the whole file in memory
CONTEXT_REACH = 1 << 16  # bytes first read each side of the match for the diff's context


def _streamed_edit(ctx: Context, res: Resolved, simple: tuple[str, str], path: str,
                   dry_run: bool) -> EditOutcome | None:
    """``_bytes_fast_path`` for a file over ``STREAM_BYTES``, which is never read whole.

    Such a file's change is not kept for undo and its sha256 is not computed, so nothing
    needs its bytes in this process: old text is looked for with ``pread`` into one reused
    1 MB buffer (``find_twice``, which stops at a second occurrence), the diff's context is
    read around the match, the new version is the old file's bytes before and after the
    match copied inside the kernel (``copy_file_range``) around the new text, and the line
    number is counted the same way while the new file's ``fsync`` waits on the disk. Memory
    stays near 1 MB whatever the file's size, and the copy costs no pass through this
    process. Staleness as on the in-memory path for big files: the file's inode, size and
    nanosecond mtime, taken when it was opened, must still hold right before the rename.
    Returns None (the caller reads the file and goes on as for any size) when old text is
    absent or ambiguous, the file looks binary or UTF-16, new text would add lines where
    old text has none (a CRLF file would get CRLF lines: the in-memory path counts them), or
    the match does not fall on whole UTF-8 characters.
    """
    from zbtools.core.files.reading import open_regular
    from zbtools.core.files.streaming import (
        Background,
        count_in_file,
        find_twice,
        writeback_starter,
    )

    pair = _plain_pair(res, simple)
    if pair is None:
        return None
    needle, replacement = pair
    if b"\n" in replacement and b"\n" not in needle:
        return None
    fd, seen = open_regular(res, shown=path)
    try:
        size = seen.st_size
        start = _text_start(os.pread(fd, 8192, 0))
        if not STREAM_BYTES < size <= MAX_EDIT_BYTES or start is None or \
                size - len(needle) + len(replacement) <= HASH_RESULT_BYTES:
            return None  # (a result of at most HASH_RESULT_BYTES gets its sha256)
        first, again = find_twice(fd, needle, start)
        if first == -1 or again:
            return None  # absent or ambiguous: the full engine explains it
        end = first + len(needle)
        reach = CONTEXT_REACH
        while True:
            lo, hi = max(start, first - reach), min(size, end + reach)
            window = os.pread(fd, hi - lo, lo)
            if len(window) != hi - lo:
                return None  # it shrank meanwhile: the caller reads it as it is now
            region_start, context_before, region_end = _context(window, first - lo,
                                                                 end - lo, 0)
            context = _decoded_context(window, region_start, first - lo, end - lo,
                                       region_end)
            if context is None:
                return None
            whole = lo <= start and hi >= size
            if not (lo > start and region_start == 0) and \
                    not (hi < size and region_end == len(window)) and (whole or (
                        _context_is_enough(context, simple, lo <= start and region_start == 0,
                                           hi >= size and region_end == len(window)))):
                break
            reach *= 4  # a context line runs past the window, or the change slides past it
        if not dry_run:
            writeback_starter()  # its import, before the thread below holds the GIL
        # Counting the lines before the match (~25 ms for 45 MB, holding the GIL) goes on
        # while the copy and the fsync wait on the kernel and the disk.
        lines_before = Background(lambda: count_in_file(fd, b"\n", first))
        try:
            if not dry_run:
                replace_parts(res, [(0, first), memoryview(replacement), (end, size - end)],
                              Guard(unchanged_since=seen), group=sync_group(), copy_from=fd,
                              shown=path)
        finally:
            lines_before.wait()  # the thread reads fd: done before it is closed
        line = int(lines_before.result()) + 1
    finally:
        os.close(fd)
    if not dry_run:
        _warn_unrecorded(ctx, res)
    return _splice_outcome(res, simple, needle, context, line, context_before, None, dry_run)


def _plain_pair(res: Resolved, simple: tuple[str, str]) -> tuple[bytes, bytes] | None:
    """(old, new) as UTF-8 bytes when this edit may be a splice on the bytes (the
    request-side conditions of ``_bytes_fast_path``), else None."""
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


def _text_start(head: bytes) -> int | None:
    """Where the text starts after a UTF-8 BOM (0 or 3), judging by the file's first bytes;
    None for a file that looks binary or UTF-16 (the full engine handles those)."""
    if head.find(b"\x00", 0, 8192) != -1 or head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return None
    return 3 if head.startswith(b"\xef\xbb\xbf") else 0


def _context(data: bytes, first: int, end: int, start: int) -> tuple[int, int, int]:
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


def _context_is_enough(context: tuple[str, str], simple: tuple[str, str], at_start: bool,
                       at_end: bool) -> bool:
    """Whether the diff of the excerpt (context around old, then around new) is the whole
    file's: a change between repeated lines can slide past 3 lines of context."""
    from zbtools.core.editing.matching.diff import excerpt_is_whole

    head, tail = context
    old, new = simple
    return excerpt_is_whole(head + old + tail, head + new + tail, at_start, at_end)


def _decoded_context(data: bytes, region_start: int, first: int, end: int,
                     region_end: int) -> tuple[str, str] | None:
    """The context before and after the match as text; None unless both sides are whole
    UTF-8 characters (strict decoding of the region checks it)."""
    try:
        return data[region_start:first].decode("utf-8"), data[end:region_end].decode("utf-8")
    except UnicodeDecodeError:
        return None


def _splice_outcome(res: Resolved, simple: tuple[str, str], needle: bytes,
                    context: tuple[str, str], line: int, context_before: int,
                    digest: str | None, dry_run: bool) -> EditOutcome:
    """The report of a splice on the bytes: the exact tier's, with its diff."""
    from zbtools.core.editing.matching import Applied, unified_diff

    old, new = simple
    head, tail = context
    last = line + needle.count(b"\n", 0, len(needle) - 1)  # the line of old's last char
    diff = unified_diff(res.rel, head + old + tail, head + new + tail,
                        first_line=line - context_before)
    report: dict[str, Any] = {"label": None, "start_line": line, "end_line": last,
                              "matched_with": "exact", "transforms": [],
                              "disambiguated_by": None}
    return EditOutcome(res.rel, Applied("", [report], True, []), diff, digest, True, dry_run)


def _exact_special_case(data: bytes, start: int, first: int, end: int, old: str, new: str,
                        probe: Probe | None, hits: list[int] | None) -> bool:
    """Whether the engine's exact tier would do more than splice ``new`` over data[first:end]
    (the cases ``_bytes_fast_path`` leaves to it); ``start``: where the text starts (after a
    BOM, which is no part of line 1); ``probe`` and ``hits``: old text's look-alike probe and
    its occurrences (``_look_alike_probe``)."""
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
        hits = _all_occurrences(data, probe[0], start)
        assert hits is not None
    return _has_near_duplicate(data, start, line_start, probe, hits)


PROBE_HITS = 64  # occurrences of the probe past which old text is located with bytes.find


Probe = tuple[bytes, int, int, list[bytes]]


def _look_alike_probe(old: str) -> Probe | None:
    """(old text's longest line without its indentation, where that stands in old text's
    bytes, which line it is, every line of old text without its indentation) when old text
    has enough to look for look-alikes of (as the engine's ``tiers._near_duplicates``: two
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


def _all_occurrences(data: bytes, key: bytes, start: int, limit: int = 0) -> list[int] | None:
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


def _only_occurrence(data: bytes, needle: bytes, start: int,
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


def _has_near_duplicate(data: bytes, start: int, line_start: int, probe: Probe,
                        hits: list[int]) -> bool:
    """Whether a line other than the match's own equals, up to indentation, old text's
    longest line (every block that matches old up to indentation has one): the engine then
    warns about the look-alike (``tiers._near_duplicates``), so it gets to decide. Only that
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


def _hash_parts(pieces: list[memoryview]) -> str:
    from zbtools.core.files.hashing import sha256_for

    hasher = sha256_for(sum(len(piece) for piece in pieces))()
    for piece in pieces:
        hasher.update(piece)
    digest: str = hasher.hexdigest()
    return digest


def _hash_both(data: bytes, first: int, end: int, replacement: bytes,
               new: Callable[..., Any] | None = None) -> tuple[str, str]:
    """The sha256 of ``data`` and of ``data`` with ``replacement`` spliced over
    ``data[first:end]``: the bytes before the edit are hashed once for both (the hash state
    after them is copied), which saves up to a whole pass over the file. ``new``: the sha256
    constructor (``_hash_size``'s choice when not given)."""
    if new is None:
        from zbtools.core.files.hashing import sha256_for

        new = sha256_for(_hash_size(data, first, end, replacement))
    view = memoryview(data)
    before = new(view[:first])
    after = before.copy()
    before.update(view[first:])
    after.update(replacement)
    after.update(view[end:])
    return before.hexdigest(), after.hexdigest()


def _hash_size(data: bytes, first: int, end: int, replacement: bytes) -> int:
    """How many bytes ``_hash_both`` hashes."""
    return len(data) + len(replacement) - (end - first) + len(data) - first


def _digests_beside(data: bytes, first: int, end: int, replacement: bytes) -> Background:
    """``_hash_both`` in the ``Background``, for a file of ``FAST_HASH_BYTES`` or more; its
    ``result()`` is (sha256 before, sha256 after). Started right before the write, once the
    checks are done.

    OpenSSL's sha256 releases the GIL while it hashes, and the write and its ``fsync`` wait
    on the kernel and the disk, so the thread costs nothing on the caller's path (the two
    hashes take ~5 ms for a 3.5 MB file, on a core of their own on a 2-CPU machine). It also
    imports OpenSSL (~3 ms, holding the GIL): while this thread is in its write and
    ``fsync``, which need no GIL. (Imported during the checks instead, which hold the GIL,
    the two threads passed it back and forth for ~10 ms.) The thread only reads immutable
    bytes."""
    from zbtools.core.files.hashing import sha256_for
    from zbtools.core.files.streaming import Background

    size = _hash_size(data, first, end, replacement)
    return Background(lambda: _hash_both(data, first, end, replacement, sha256_for(size)))


def _display(text: str, decoded: Any) -> str:
    if not decoded.invalid_utf8:
        return text
    return str(text.encode("utf-8", "surrogateescape").decode("utf-8", "replace"))


# ---------------------------------------------------------------------------------------------
# Multi-file patches


class FileChange:
    """One file of a patch: what it was, what it becomes, and how to undo it."""

    def __init__(self, shown: str, action: str) -> None:
        self.shown = shown
        self.action = action  # updated | created | deleted | renamed
        self.res: Resolved | None = None
        self.dest: Resolved | None = None
        self.rel = shown
        self.dest_rel: str | None = None
        self.before: bytes | None = None
        self.after: bytes | None = None
        self.mode: int | None = None
        self.reports: list[dict[str, Any]] = []
        self.diff = ""
        self.done = False

    def close(self) -> None:
        for res in (self.res, self.dest):
            if res is not None:
                res.close()

    def summary(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.rel, "action": self.action,
                               "edits": len(self.reports)}
        if self.dest_rel is not None:
            out["destination"] = self.dest_rel
        return out


class PatchOutcome:
    def __init__(self, changes: list[FileChange], dry_run: bool) -> None:
        self.changes = changes
        self.dry_run = dry_run


def _label(change_path: str, count: int) -> str:
    return f"{change_path}: " if count > 1 else ""


def _prepare(ctx: Context, patch: Any, shown: str, label: str, changes: list[FileChange]
             ) -> None:
    """Add ``patch``'s change to ``changes`` before resolving anything, so that the caller
    closes its directory descriptors whatever fails on the way (a refused file of a patch
    must not leak them in a batch or MCP session)."""
    import stat as stat_module

    from zbtools.core.editing.matching import MatchError, apply_requests, unified_diff
    from zbtools.core.editing.patching import hunk_requests

    if patch.kind == "add":
        change = FileChange(shown, "created")
        changes.append(change)
        change.res = ctx.workspace.resolve(shown, create_parents=True, write=True)
        if change.res.exists:
            raise ToolError("already_exists", f"{shown}: the patch adds this file, but it "
                            "exists", hint="use an Update section (or a diff with context) to "
                            "change an existing file", details={"path": shown})
        text = "\n".join(patch.add_lines) + ("" if patch.add_no_newline or not patch.add_lines
                                             else "\n")
        change.after = text.encode("utf-8")
        change.rel = change.res.rel
        change.diff = unified_diff(change.rel, "", text)
        return
    change = FileChange(shown, "deleted" if patch.kind == "delete" else "updated")
    changes.append(change)
    change.res = ctx.workspace.resolve(shown, write=True)
    data = read_bytes(change.res, max_bytes=MAX_EDIT_BYTES, shown=shown)
    assert change.res.st is not None
    change.mode = stat_module.S_IMODE(change.res.st.st_mode)
    change.before = data
    change.rel = change.res.rel
    decoded = decode(data, shown=shown)
    if patch.kind == "delete":
        if patch.hunks:
            expected = [line for h in patch.hunks for line in h.old]
            actual = decoded.text.replace("\r\n", "\n").split("\n")
            if actual and actual[-1] == "":
                actual.pop()
            if [a.rstrip() for a in actual] != [e.rstrip() for e in expected]:
                raise ToolError("no_match", f"{label}the patch deletes {shown}, but the file's "
                                "content differs from the lines the patch removes",
                                hint="read the file again; delete it with delete_file if that is "
                                "still intended")
        change.diff = unified_diff(change.rel, decoded.display_text(), "")
        return
    try:
        requests = hunk_requests(patch, label)
        check_new_text([r.new for r in requests], decoded.invalid_utf8, shown)
        applied = apply_requests(decoded.text, requests) if requests else None
    except MatchError as err:
        raise to_tool_error(err) from None
    new_text = applied.text if applied is not None else decoded.text
    change.after = decoded.encode(new_text)
    change.reports = applied.reports if applied is not None else []
    for warning in applied.warnings if applied is not None else []:
        ctx.warn(warning)
    if patch.new_path is not None:
        change.action = "renamed"
        change.dest = ctx.workspace.resolve(patch.new_path, follow_last=False,
                                            create_parents=True, write=True)
        if change.dest.exists:
            raise ToolError("already_exists", f"{patch.new_path}: the patch moves {shown} "
                            "there, but it exists", details={"path": patch.new_path})
        change.dest_rel = change.dest.rel
    change.diff = unified_diff(change.rel, decoded.display_text(),
                               _display(new_text, decoded))


def _commit(ctx: Context, change: FileChange) -> None:
    """Commit a patch's only change when it is one atomic step (no rename)."""
    assert change.res is not None
    if change.action == "created":
        assert change.after is not None
        try:
            change.res.ensure_parents()
            create_file(change.res, change.after, shown=change.shown)
        except BaseException:
            change.res.rollback_parents()
            raise
    elif change.action == "deleted":
        assert change.res.name is not None
        try:
            os.unlink(change.res.name, dir_fd=change.res.dir_fd)
        except OSError as exc:
            from zbtools.core.files.workspace import os_error

            raise os_error(exc, change.shown) from exc
    elif change.action == "updated":
        assert change.after is not None and change.before is not None
        if change.after != change.before:
            from zbtools.core.editing.txn import replace_file

            replace_file(ctx, change.res, change.after,
                         expected_sha256=sha256_hex(change.before), shown=change.shown,
                         tool="apply_edit")
    else:  # a rename is two steps: it always goes through _commit_all
        raise AssertionError(f"{change.action} of {change.shown} outside a transaction")
    change.done = True


def _commit_all(ctx: Context, changes: list[FileChange]) -> None:
    """Commit several changes all or nothing, even under ``kill -9`` (``editing.txn``)."""
    from zbtools.core.editing.txn import Step, run_transaction

    steps: list[Step] = []
    for change in changes:
        assert change.res is not None
        if change.action == "created":
            steps.append(Step(change.res, "write", change.after))
        elif change.action == "deleted":
            steps.append(Step(change.res, "delete", before=change.before))
        elif change.action == "updated":
            if change.after != change.before:
                steps.append(Step(change.res, "write", change.after, before=change.before))
        else:  # renamed: the new name, then the old one goes
            assert change.dest is not None
            steps.append(Step(change.dest, "write", change.after, mode=change.mode))
            steps.append(Step(change.res, "delete", before=change.before))
    if steps:
        run_transaction(ctx, steps, "apply_edit")
    for change in changes:
        change.done = True


def apply_patch_text(ctx: Context, text: str, default_path: str | None, *,
                     dry_run: bool) -> PatchOutcome:
    """Parse a unified diff or Codex patch, validate every file, then write them all."""
    from zbtools.core.editing.matching import MatchError
    from zbtools.core.editing.patching import parse_patch

    try:
        patches = parse_patch(text)
    except MatchError as err:
        raise to_tool_error(err) from None
    for patch in patches:
        if patch.path == "":
            if default_path is None:
                raise ToolError("invalid_arguments", "the patch has hunks but no file headers",
                                hint="give path, or add --- a/FILE / +++ b/FILE headers")
            patch.path = default_path
    names = [p.path for p in patches]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ToolError("patch_parse_error", f"the patch names {duplicates[0]} more than once",
                        hint="merge its hunks into one section")
    group = sync_group()
    if group is not None:
        group.flush()  # a patch reads and writes its files its own way: staged versions first
    changes: list[FileChange] = []
    try:
        for patch in patches:
            _prepare(ctx, patch, patch.path, _label(patch.path, len(patches)), changes)
        if dry_run:
            return PatchOutcome(changes, True)
        if len(changes) > 1 or any(c.action == "renamed" for c in changes):
            _commit_all(ctx, changes)  # several files: through the intent journal
        else:
            _commit(ctx, changes[0])
        from zbtools.core.editing.undo import other_names, record
        from zbtools.core.state.store import on_path_deleted, on_path_moved

        for change in changes:
            # a delete, a rename or a replace by a new file takes the name from its other hard
            # links: undo gives it back its inode
            links = other_names(ctx, change.res) if change.res is not None else None
            if change.action == "renamed":
                record(ctx, change.rel, change.before, None, "apply_edit", change.mode,
                       links=links)
                record(ctx, change.dest_rel or change.rel, None, change.after, "apply_edit",
                       parents=list(change.dest.created) if change.dest is not None else None)
                on_path_moved(ctx, change.rel, change.dest_rel or change.rel)  # tabs follow
            else:
                record(ctx, change.rel, change.before,
                       None if change.action == "deleted" else change.after, "apply_edit",
                       change.mode, links=links if change.action != "created" else None,
                       parents=list(change.res.created)
                       if change.action == "created" and change.res is not None else None)
                if change.action == "deleted":
                    on_path_deleted(ctx, change.rel)  # an open editor tab of it closes
        return PatchOutcome(changes, False)
    finally:
        for change in changes:
            change.close()

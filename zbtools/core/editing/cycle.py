"""The read-modify-write cycle shared by the edit tools.

Reads the file once (regular files only, binary refused), checks ``expected_sha256``, decodes it
with full fidelity (``decoding.decode``), lets the matcher compute the new text, encodes it the
way the file was (encoding, BOM, undecodable bytes) and writes it atomically, refusing with
``stale_file`` if the file changed between the read and the write; ``dry_run`` stops before the
write with the same report and diff. A plain exact edit is done on the bytes, without decoding
the file (docs/internals/performance.md#big-files); from 1 MiB its digests and line count run on
helper threads while the write's ``fsync`` waits on the disk, and over 16 MiB the file is
streamed, never read whole. Failure modes: the matcher's refusals, ``encoding_error`` (text the
file's encoding cannot hold, or non-ASCII text in a file that is not UTF-8), ``binary_file``,
``not_found``, ``is_directory``, ``stale_file``, ``permission_denied``, and the syntax
guard's ``syntax_error`` (``syntaxguard``: every path checks the new bytes before writing).

Map: ``EditOutcome``, ``edit_file_text`` (the cycle); ``to_tool_error``, ``check_new_text``;
``display``. Its byte-level checks are ``bytescan``'s, its digests ``splicehash``'s; a
multi-file patch is ``patchcycle``'s, built on this module.
"""

from __future__ import annotations

import os

from zbtools.contract import ToolError
from zbtools.core.editing.bytescan import (
    all_occurrences,
    context_is_enough,
    context_region,
    decoded_context,
    exact_special_case,
    line_offset,
    look_alike_probe,
    only_occurrence,
    plain_pair,
    text_start,
)
from zbtools.core.editing.splicehash import digests_beside, hash_both, hash_parts
from zbtools.core.files.decoding import decode, is_utf8
from zbtools.core.files.hashing import FAST_HASH_BYTES, sha256_hex
from zbtools.core.files.reading import read_bytes_stat
from zbtools.core.files.replacing import replace_parts
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
        _guard(ctx, res, data, new_data)
        diff = unified_diff(rel, decoded.display_text(), display(applied.text, decoded))
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
    """A plain exact, unique edit done on the bytes (issue 16,
    docs/internals/performance.md#big-files).

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
    pair = plain_pair(res, simple)
    if pair is None:
        return None
    old, new = simple
    needle, replacement = pair
    start = text_start(data)
    if start is None:
        return None
    big = len(data) >= FAST_PATH_BYTES
    if not big and b"\r" in data:
        return None
    probe = look_alike_probe(old)
    hits = None if probe is None else all_occurrences(data, probe[0], start, PROBE_HITS)
    first = only_occurrence(data, needle, start, probe, hits)
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
        if exact_special_case(data, start, first, end, old, new, probe, hits):
            return None
    region_start, context_before, region_end = context_region(data, first, end, start)
    context = decoded_context(data, region_start, first, end, region_end)
    if context is None or not context_is_enough(
            context, simple, region_start <= start, region_end >= len(data)):
        return None  # (the change slides past its context: the engine diffs the whole text)
    pieces = [memoryview(data)[:first], memoryview(replacement), memoryview(data)[end:]]
    lines_before: list[int] = []  # the newlines before the match, counted once

    def count_lines() -> None:
        lines_before.append(data.count(b"\n", 0, first))

    def outcome(digest: str | None) -> EditOutcome:
        return _splice_outcome(res, simple, needle, context, lines_before[0] + 1,
                               context_before, digest, dry_run)

    _guard(ctx, res, data, pieces)
    # The result's sha256 is a full extra pass (~25 ms per 50 MB): like reads of huge files,
    # edits of files over HASH_RESULT_BYTES report null and keep the cost near a copy's.
    hashed = new_size <= HASH_RESULT_BYTES
    if dry_run:
        count_lines()
        return outcome(hash_parts(pieces) if hashed else None)
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
    link: the new text is never joined, encoded or diffed whole
    (benchmarks/README.md#figures-behind-the-code).

    Such a file's bytes are its text encoded back exactly, and a line break is one byte that
    no other character's encoding contains, so the changed lines start and end after the
    same count of line breaks in the bytes as in the text (``line_offset``). The diff is
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
    first = line_offset(data, begin, splice.start_line, splice.start)
    end = len(data) if splice.end == len(text) else \
        line_offset(data, begin, splice.end_line, splice.end)
    replacement = decoded.encode(splice.middle, with_bom=False)
    view = memoryview(data)
    pieces = [view[:first], memoryview(replacement), view[end:]]
    _guard(ctx, res, data, pieces)
    if dry_run:
        return EditOutcome(res.rel, applied, diff, hash_parts(pieces), True, True)
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
    (``digests_beside``), done before anything is reported or raised."""
    digests = digests_beside(data, first, end, replacement) \
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
        hash_both(data, first, end, replacement)
    _record(ctx, res, written, data, tool, digest, before_digest)
    return digest


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

    pair = plain_pair(res, simple)
    if pair is None:
        return None
    needle, replacement = pair
    if b"\n" in replacement and b"\n" not in needle:
        return None
    fd, seen = open_regular(res, shown=path)
    try:
        size = seen.st_size
        start = text_start(os.pread(fd, 8192, 0))
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
            region_start, context_before, region_end = context_region(window, first - lo,
                                                                 end - lo, 0)
            context = decoded_context(window, region_start, first - lo, end - lo,
                                       region_end)
            if context is None:
                return None
            whole = lo <= start and hi >= size
            if not (lo > start and region_start == 0) and \
                    not (hi < size and region_end == len(window)) and (whole or (
                        context_is_enough(context, simple, lo <= start and region_start == 0,
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


def _guard(ctx: Context, res: Resolved, before: bytes, after: bytes | list[memoryview]
           ) -> None:
    """The syntax guard (``syntaxguard``) of the new bytes (or their pieces), before anything
    is written: a refusal leaves the file as it was. Nothing is joined for a file it skips."""
    from zbtools.core.editing.syntaxguard import check_change, wanted

    size = len(after) if isinstance(after, bytes) else sum(len(piece) for piece in after)
    if wanted(ctx, res.rel, before[:256], size):
        check_change(ctx, res.rel, before, after if isinstance(after, bytes) else
                     b"".join(after))


PROBE_HITS = 64  # occurrences of the probe past which old text is located with bytes.find


def display(text: str, decoded: Any) -> str:
    if not decoded.invalid_utf8:
        return text
    return str(text.encode("utf-8", "surrogateescape").decode("utf-8", "replace"))

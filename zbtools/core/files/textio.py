"""Reading and writing files without losing a byte (DESIGN section 5, SECURITY 4.3-4.4).

Reading:

* Only regular files are opened (``O_NOFOLLOW | O_NONBLOCK | O_NOCTTY`` relative to the parent's
  fd, then ``fstat``): FIFOs, sockets and devices are refused with ``special_file`` before a single
  byte is read, so a read never hangs.
* Encoding, in ripgrep's order: a BOM (UTF-8, UTF-32 before UTF-16), else a NUL byte in the first
  8 KiB means binary (``binary_file``), else strict UTF-8, else a guess that is accepted only if
  it round-trips the bytes exactly, else UTF-8 with ``surrogateescape`` (lossless for editing;
  shown with U+FFFD and ``invalid_utf8: true``). There is no guess for bytes that are mostly
  well-formed UTF-8 (a UTF-8 file with a few bad bytes); else the guess is Windows-1252 when the
  bytes read as Western text in it (the common legacy case, which charset-normalizer often
  misreads in short files: "café" as Urdu cp1006), else charset-normalizer's best code page.
* Line windows of big files are read in 1 MiB chunks and located with ``bytes.count``/``find``;
  the whole file is never decoded or split (a 100 MB file is read with about 2 MiB of buffers).

Writing:

* Atomic: a temp file ``.<name>.zbtmp-<pid>-<start>-<host>-<hex>`` created with ``O_EXCL |
  O_NOFOLLOW`` in the same directory, written in a loop (short writes), mode and owner copied,
  ``fsync``, ``rename`` with dir fds, ``fsync`` of the directory. A crash leaves the old or the
  new file, never half of one; ENOSPC and friends happen before the rename and leave the
  original untouched.
* No debris: a temp name carries its writer's pid, the process start time (``/proc/PID/stat``
  field 22) and a token of the boot and PID namespace, so a writer that died (``kill -9``, power
  loss) is told from a live one. Every write into a directory first removes the dead writers'
  temp files there (``sweep_dead_temps``): regular files whose name matches the scheme exactly
  and whose writer is gone (no such pid, or a pid reused by a process that started at another
  time; a writer of another boot or namespace once its file is an hour old). A live writer's
  file and a name that merely looks similar are left alone. The walker never lists our temp
  files (``is_temp_name``). Before its first temp file in a directory, a process also logs
  that directory in the state directory (``writerlog.note_dir``), so that when it is killed
  the next call of any tool cleans up there (``editing.leftovers``).
* Replacing a file never keeps setuid/setgid bits (``SPECIAL_BITS``): the kernel clears them
  when anyone but root writes to such a file, because the new content is not what whoever set
  them vetted; a replace by rename must not be a way around that. Every other permission bit,
  and the owner and group where allowed, are kept.
* ``ZBTOOLS_TEST_PAUSE_BEFORE_RENAME=N`` (test-only, for the crash tests): the process stops
  before its N-th rename (or link, unlink) that publishes a change, writes
  ``zbtools-test-paused <N>`` to stderr and sleeps, so a test can kill it at that exact point
  (with ``ZBTOOLS_TEST_RESUME_FILE=PATH``, it goes on once PATH exists).
* No lost update: a write with a precondition (``expected_sha256``, or the content an edit
  read) checks it again right before its rename (``check_unchanged``: same inode, size,
  nanosecond mtime and ctime, and the content again for a recently changed file unless its
  ctime moves on every change, as with Linux's multigrain timestamps); another
  process's change made while the new version was being written is refused with
  ``stale_file`` and left as it is. What remains is the microseconds between that check and
  the rename; other zbtools processes are kept out of it by the workspace edit lock.
* Create-only publishes with ``link()`` (fails on any existing name, even a dangling symlink).
* ``atomic_write`` replacing a file with several hard links breaks the link (reported as
  ``hardlink_broken``); the tools replace files through ``editing.txn.replace_file``, which
  keeps the inode instead when every name is inside the workspace. In-place appends refuse
  such files (``hardlink_refused``).
* Writing bytes identical to the current content does nothing (``changed: false``, mtime kept).
* Read-only files (no write bit) are refused with ``permission_denied``, by replacing writes and
  by appends alike, even for root: a rename would bypass the mode the user set.
"""

from __future__ import annotations

import errno
import os
import stat
import sys

from zbtools.contract import ToolError
from zbtools.core.files.workspace import os_error

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence
    from typing import Any

    from zbtools.core.files.workspace import Resolved

if TYPE_CHECKING:
    from hashlib import sha256 as sha256  # noqa: PLC0414 - explicit re-export for mypy
else:
    try:  # hashlib pulls in OpenSSL bindings (~3 ms); the builtin module is enough for SHA-256
        from _sha256 import sha256
    except ImportError:  # pragma: no cover - other interpreters
        from hashlib import sha256


READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
BINARY_SNIFF_BYTES = 8192
CHUNK = 1 << 20

BOMS: tuple[tuple[bytes, str], ...] = (
    (b"\xef\xbb\xbf", "utf-8"),
    (b"\xff\xfe\x00\x00", "utf-32-le"),
    (b"\x00\x00\xfe\xff", "utf-32-be"),
    (b"\xff\xfe", "utf-16-le"),
    (b"\xfe\xff", "utf-16-be"),
)


LINE_HASH_CHARS = 6


def line_hash(line: str) -> str:
    """The short, stable hash of one line's text (no line ending) used by hash anchors."""
    digest: str = sha256(line.encode("utf-8", "surrogatepass")).hexdigest()
    return digest[:LINE_HASH_CHARS]


FAST_HASH_BYTES = 1 << 20


def sha256_for(size: int) -> Callable[..., Any]:
    """The sha256 constructor to hash ``size`` more bytes with: the builtin module's for small
    data (no import cost), OpenSSL's (about 5x faster, but ~3.6 ms to import) from 1 MiB up,
    and for everything once this process has hashed 1 MiB in all (a batch or a server: 8 KiB
    take 27 us with the builtin module, 5 us with OpenSSL)."""
    _hashed[0] += size
    if _hashed[0] >= FAST_HASH_BYTES:
        try:  # the OpenSSL module itself: ``hashlib`` would also load blake2 (~0.4 ms more)
            from _hashlib import openssl_sha256
        except ImportError:  # a Python built without OpenSSL
            from hashlib import sha256 as openssl_sha256
        return openssl_sha256
    return sha256


_hashed = [0]  # bytes this process asked sha256_for to hash


def sha256_hex(data: bytes) -> str:
    """SHA-256 of ``data`` (with ``sha256_for``'s choice of module)."""
    digest: str = sha256_for(len(data))(data).hexdigest()
    return digest


def sha256_fd(fd: int) -> str:
    """SHA-256 of a whole open file, read with ``pread`` from offset 0 in 1 MiB chunks."""
    import hashlib

    hasher = hashlib.sha256()
    offset = 0
    while True:
        chunk = os.pread(fd, CHUNK, offset)
        if not chunk:
            return hasher.hexdigest()
        hasher.update(chunk)
        offset += len(chunk)


def sniff_bom(head: bytes) -> tuple[str, bytes] | None:
    for bom, encoding in BOMS:
        if head.startswith(bom):
            return encoding, bom
    return None


def looks_binary(head: bytes) -> bool:
    """ripgrep's rule: binary iff a NUL byte appears (we look at the first 8 KiB)."""
    return head.find(b"\x00", 0, BINARY_SNIFF_BYTES) != -1


def newline_style(data: bytes | str) -> str:
    """``lf``, ``crlf``, ``cr``, ``mixed`` or ``none`` for bytes or text."""
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    crlf = data.count(b"\r\n")
    lf = data.count(b"\n") - crlf
    cr = data.count(b"\r") - crlf
    kinds = [k for k, n in (("crlf", crlf), ("lf", lf), ("cr", cr)) if n]
    if not kinds:
        return "none"
    return kinds[0] if len(kinds) == 1 else "mixed"


def dominant_newline(data: bytes) -> str:
    """The newline new lines should take: the most common style (ties and none: LF)."""
    crlf = data.count(b"\r\n")
    lf = data.count(b"\n") - crlf
    return "\r\n" if crlf > lf else "\n"


class Decoded:
    """Text decoded from bytes, with everything needed to encode it back identically."""

    __slots__ = ("_newline", "_raw", "bom", "encoding", "invalid_utf8", "text")

    def __init__(self, text: str, encoding: str, bom: bytes, newline: str | None,
                 invalid_utf8: bool, raw: bytes | None = None) -> None:
        self.text = text
        self.encoding = encoding  # a Python codec name
        self.bom = bom
        self._newline = newline  # lf crlf cr mixed none; None: from ``raw`` when asked
        self._raw = raw
        self.invalid_utf8 = invalid_utf8  # text holds surrogate escapes of undecodable bytes

    @property
    def newline(self) -> str:
        """``lf``, ``crlf``, ``cr``, ``mixed`` or ``none`` (counted on first use: three passes
        over the file that an edit does not need)."""
        if self._newline is None:
            self._newline = newline_style(self._raw if self._raw is not None else self.text)
        return self._newline

    @property
    def errors(self) -> str:
        return "surrogateescape" if self.invalid_utf8 else "strict"

    def encode(self, text: str, *, with_bom: bool = True) -> bytes:
        """Encode ``text`` the way the original was, or raise ``encoding_error``;
        ``with_bom=False``: a part of the text after its start."""
        try:
            encoded = text.encode(self.encoding, self.errors)
            return self.bom + encoded if with_bom and self.bom else encoded
        except UnicodeEncodeError as exc:
            bad = text[exc.start:exc.end]
            raise ToolError(
                "encoding_error",
                f"the text contains {bad!r}, which the file's encoding {self.encoding} cannot "
                "represent",
                hint="use only characters the file's encoding supports, or convert the file to "
                "UTF-8 first (write_file with the full content)",
                details={"encoding": self.encoding, "character": bad},
            ) from exc

    def display_text(self) -> str:
        """The text for showing: undecodable bytes become U+FFFD."""
        if not self.invalid_utf8:
            return self.text
        return self.text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")

    @property
    def encoding_label(self) -> str:
        label = self.encoding.replace("_", "-").lower()
        return f"{label}-bom" if self.bom and label == "utf-8" else label


def decode(data: bytes, *, shown: str = "") -> Decoded:
    """Decode file bytes per the module rules; raise ``binary_file`` for binary data."""
    bom = sniff_bom(data[:4])
    if bom is not None:
        encoding, bom_bytes = bom
        body = data[len(bom_bytes):]
        try:
            text = body.decode(encoding)
        except UnicodeDecodeError:
            if encoding == "utf-8":
                text = body.decode("utf-8", "surrogateescape")
                return Decoded(text, "utf-8", bom_bytes, newline_style(text), True)
            # Not valid UTF-16/32 after all: the "BOM" was the start of 8-bit text or binary
            # data (e.g. Latin-1 "\xff\xfe..."); detect it like a file without a BOM.
        else:
            return Decoded(text, encoding, bom_bytes, newline_style(text), False)
    if looks_binary(data):
        raise ToolError("binary_file", f"{shown}: is a binary file (it contains NUL bytes)",
                        hint="text tools do not read binary files; use get_file_info for its "
                        "size and type", details={"path": shown, "size": len(data)})
    try:
        return Decoded(data.decode("utf-8"), "utf-8", b"", None, False, raw=data)
    except UnicodeDecodeError:
        pass
    guess = _guess_encoding(data)
    if guess is not None:
        try:
            text = data.decode(guess)
            if text.encode(guess) == data:
                return Decoded(text, guess, b"", newline_style(text), False)
        except (UnicodeError, LookupError):
            pass
    return Decoded(data.decode("utf-8", "surrogateescape"), "utf-8", b"", newline_style(data),
                   True)


UTF8_CHECK_CHUNK = 16384


def is_utf8(data: bytes) -> bool:
    """Whether ``data`` decodes as strict UTF-8 (exactly when ``data.decode("utf-8")`` would
    succeed), without building the text: ASCII chunks are skipped (``bytes.isascii``), the
    others go through an incremental decoder (which carries a sequence cut at a chunk's end
    over to the next). For source code that is mostly ASCII: ~0.3 ms for 3.5 MB instead of
    3-10 ms for decoding it whole (a text with one character above U+00FF takes 2 bytes a
    character)."""
    if data.isascii():
        return True
    import codecs  # loaded at start-up by the encodings package

    decoder = codecs.getincrementaldecoder("utf-8")()
    pending = False
    try:
        for at in range(0, len(data), UTF8_CHECK_CHUNK):
            chunk = data[at:at + UTF8_CHECK_CHUNK]
            if pending or not chunk.isascii():
                decoder.decode(chunk)
                pending = bool(decoder.getstate()[0])
        decoder.decode(b"", True)
    except UnicodeDecodeError:
        return False
    return True


def _guess_encoding(data: bytes) -> str | None:
    """The likely encoding of bytes that are neither UTF-8 nor marked by a BOM, or ``None``."""
    sample = data[: 1 << 20]
    import re  # lazy: only non-UTF-8 files get here

    high = len(sample) - len(sample.translate(None, bytes(range(0x80, 0x100))))
    in_utf8 = sum(len(m) for m in re.findall(_UTF8_SEQUENCE, sample))
    if in_utf8 * 2 >= high:
        return None  # mostly well-formed UTF-8: a UTF-8 file with a few bad bytes
    if _reads_as_western(sample):
        return "cp1252"
    try:
        from charset_normalizer import from_bytes  # lazy: ~15 ms, only for non-UTF-8 files
    except ImportError:  # pragma: no cover - declared dependency
        return None
    for match in from_bytes(sample):
        encoding = str(match.encoding)
        # UTF-16/32 without a BOM and without NUL bytes is implausible; ASCII/UTF-8 failed already
        if encoding not in ("ascii", "utf_8") and not encoding.startswith(("utf_16", "utf_32")):
            return encoding
    return None


_UTF8_SEQUENCE = rb"[\xc2-\xdf][\x80-\xbf]|[\xe0-\xef][\x80-\xbf]{2}|[\xf0-\xf4][\x80-\xbf]{3}"

# Non-ASCII punctuation that may stand between two letters in Western text: don't, x·y, a–b.
_INWORD_MARKS = frozenset("\u2019\u2018\u00b7\u2013\u2014")


def _reads_as_western(sample: bytes) -> bool:
    """Whether ``sample`` decodes in Windows-1252 to plausible Western text.

    Single-byte Cyrillic, Greek, Hebrew or Arabic text decoded this way is mostly accented
    letters; Central European code pages and multi-byte CJK encodings put symbols inside words
    (cp1250 "Zażółć" reads "Za¿ó³æ"). Either makes the sample implausible. The letters of the
    first 64 KiB are examined.
    """
    try:
        text = sample.decode("cp1252")
    except UnicodeDecodeError:
        return False
    letters = accented = 0
    previous_letter = False
    mark_after_letter = False
    for char in text[:65536]:
        if char.isalpha():
            letters += 1
            if not char.isascii():
                accented += 1
            if mark_after_letter:
                return False  # a symbol between two letters
            previous_letter = True
            mark_after_letter = False
        else:
            mark_after_letter = (previous_letter and not char.isascii()
                                 and char not in _INWORD_MARKS)
            previous_letter = False
    return accented * 2 <= letters


def apply_newline(text: str, newline: str) -> str:
    """Give text with bare LF line ends the requested style; text already using CR is kept."""
    if newline == "\r\n" and "\r" not in text and "\n" in text:
        return text.replace("\n", "\r\n")
    return text


# ---------------------------------------------------------------------------------------------
# Reading


def open_regular(res: Resolved, *, shown: str | None = None) -> tuple[int, os.stat_result]:
    """Open the resolved final entry for reading; it must be a regular file."""
    shown = shown or res.requested
    if res.name is None or res.st is None:
        if res.name is None:
            raise ToolError("is_directory", f"{shown}: is the workspace root directory",
                            hint="use list_directory to see a directory", details={"path": shown})
        raise ToolError("not_found", f"{shown}: no such file",
                        hint="check the path with list_directory or find_files",
                        details={"path": shown})
    if stat.S_ISDIR(res.st.st_mode):
        raise ToolError("is_directory", f"{shown}: is a directory, not a file",
                        hint="use list_directory to see a directory", details={"path": shown})
    if not stat.S_ISREG(res.st.st_mode):
        raise special_file_error(shown, res.st)
    try:
        fd = os.open(res.name, READ_FLAGS, dir_fd=res.dir_fd)
    except OSError as exc:
        raise os_error(exc, shown) from exc
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        if stat.S_ISDIR(st.st_mode):
            raise ToolError("is_directory", f"{shown}: is a directory, not a file",
                            details={"path": shown})
        raise special_file_error(shown, st)
    return fd, st


def special_file_error(shown: str, st: os.stat_result) -> ToolError:
    mode = st.st_mode
    kind = ("FIFO" if stat.S_ISFIFO(mode) else "socket" if stat.S_ISSOCK(mode)
            else "device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "special file")
    return ToolError("special_file", f"{shown}: is a {kind}, not a regular file",
                     hint="only regular files are read or written", details={"kind": kind})


def read_fd(fd: int, limit: int | None = None, size: int | None = None) -> bytes:
    """Read from ``fd`` to EOF (or ``limit`` bytes), whatever ``st_size`` claims.

    A regular file is first read with one ``read`` of its size (no chunk list to join: for a
    50 MB file that saves a copy and ~20 ms); ``/proc``-style files that report size 0 and
    files that grew meanwhile fall through to the chunked loop. ``size``: the caller's fresh
    ``fstat`` of ``fd`` (saves asking again; only a hint, as ``st_size`` always is).
    """
    parts: list[bytes] = []
    total = 0
    if size is None:
        try:
            size = os.fstat(fd).st_size
        except OSError:
            size = 0
    if size > CHUNK and (limit is None or size < limit):
        first = os.read(fd, size)
        parts.append(first)
        total = len(first)
        if total == size:
            more = os.read(fd, 1)
            if not more:
                return first
            parts.append(more)
            total += 1
    while True:
        want = CHUNK if limit is None else min(CHUNK, limit - total)
        if want <= 0:
            break
        chunk = os.read(fd, want)
        if not chunk:
            break
        parts.append(chunk)
        total += len(chunk)
    return b"".join(parts)


def read_bytes(res: Resolved, *, max_bytes: int | None = None, shown: str | None = None) -> bytes:
    """The whole content of a regular file; ``too_large`` beyond ``max_bytes``."""
    return read_bytes_stat(res, max_bytes=max_bytes, shown=shown)[0]


def read_bytes_stat(res: Resolved, *, max_bytes: int | None = None, shown: str | None = None
                    ) -> tuple[bytes, os.stat_result]:
    """``read_bytes``, with the ``fstat`` of the descriptor read taken before reading: an edit
    hands it to ``atomic_write`` (``read_stat``) so that an unchanged file is not read again."""
    group = sync_group()
    staged = group.read(res) if group is not None and group.staged else None
    if staged is not None:  # edited earlier in this session's group, not written yet
        return staged.data, staged.base_st
    fd, st = open_regular(res, shown=shown)
    try:
        if max_bytes is not None and st.st_size > max_bytes:
            raise ToolError("too_large", f"{shown or res.requested}: {st.st_size} bytes exceeds "
                            f"the {max_bytes}-byte limit for this operation",
                            hint="read it in ranges with read_file_range",
                            details={"path": shown or res.requested})
        data = read_fd(fd, None if max_bytes is None else max_bytes + 1, st.st_size)
        if max_bytes is not None and len(data) > max_bytes:
            raise ToolError("too_large", f"{shown or res.requested}: exceeds the "
                            f"{max_bytes}-byte limit for this operation",
                            details={"path": shown or res.requested})
        return data, st
    finally:
        os.close(fd)


SCAN_CHUNK = 1 << 20


def find_twice(fd: int, needle: bytes, start: int = 0) -> tuple[int, bool]:
    """Where ``needle`` first occurs in the file at or after offset ``start`` (-1: nowhere),
    and whether it occurs again after that (overlapping occurrences count), read with
    ``pread`` in ``SCAN_CHUNK`` pieces into one reused buffer: a file of any size is scanned
    in about 1 MB of memory, and the scan stops at the second occurrence. The file is read
    as it is now; a caller that relies on the answer checks that the file did not change."""
    if not needle:
        raise ValueError("empty needle")
    keep = len(needle) - 1  # an occurrence may straddle two reads: their joint is kept
    buf = bytearray(SCAN_CHUNK + keep)
    view = memoryview(buf)
    carried = 0  # bytes at the front of buf carried over from the previous read
    base = start  # file offset of buf[0]
    first = -1
    while True:
        got = os.preadv(fd, [view[carried:carried + SCAN_CHUNK]], base + carried)
        if not got:
            return first, False
        end = carried + got
        at = buf.find(needle, 0, end)
        if at != -1:
            if first != -1:
                return first, True
            first = base + at
            if buf.find(needle, at + 1, end) != -1:
                return first, True
        carried = min(keep, end)
        if first != -1:  # a second occurrence may only start after the first one's start
            carried = min(carried, base + end - first - 1)
        buf[:carried] = buf[end - carried:end]
        base += end - carried


def count_in_file(fd: int, byte: bytes, end: int) -> int:
    """How many times the single ``byte`` occurs in the file's first ``end`` bytes (read with
    ``pread`` in ``SCAN_CHUNK`` pieces into one reused buffer)."""
    buf = bytearray(SCAN_CHUNK)
    view = memoryview(buf)
    total = offset = 0
    while offset < end:
        got = os.preadv(fd, [view[:min(SCAN_CHUNK, end - offset)]], offset)
        if not got:
            break
        total += buf.count(byte, 0, got)
        offset += got
    return total


def copy_range(src_fd: int, dst_fd: int, offset: int, length: int) -> None:
    """Append ``length`` bytes of ``src_fd`` from ``offset`` to ``dst_fd`` (at its current
    offset): ``copy_file_range``, which copies inside the kernel (no buffer in this process,
    page cache to page cache, or a clone where the filesystem shares extents), falling back
    to ``pread``/``write`` where the kernel or filesystem refuses it. ``EOFError`` when the
    source ends before ``offset + length`` (it shrank meanwhile)."""
    done = 0
    native = hasattr(os, "copy_file_range")
    while done < length:
        if native:
            try:
                got = os.copy_file_range(src_fd, dst_fd, length - done, offset + done)
            except OSError as exc:
                if exc.errno not in (errno.EXDEV, errno.ENOSYS, errno.EINVAL,
                                     errno.EOPNOTSUPP, errno.EPERM, errno.ETXTBSY):
                    raise
                native = False
                continue
        else:
            chunk = os.pread(src_fd, min(CHUNK, length - done), offset + done)
            got = len(chunk)
            view = memoryview(chunk)
            while view:
                view = view[os.write(dst_fd, view):]
        if not got:
            raise EOFError("the source file ended early")
        done += got


# ---------------------------------------------------------------------------------------------
# Writing


class WriteOutcome:
    __slots__ = ("changed", "created", "hardlink_broken", "old_links", "old_size",
                 "owner_changed", "staged")

    def __init__(self) -> None:
        self.created = False
        self.changed = True
        self.hardlink_broken = False
        self.old_links = 1  # the replaced file's names, when it was replaced
        self.owner_changed = False
        self.old_size: int | None = None
        self.staged = False  # kept by the session's SyncGroup, written when it flushes


STAGE_MAX_BYTES = 1 << 20  # a file whose new version is larger is written at once
STAGE_TOTAL_BYTES = 16 << 20  # new versions a group holds in all


class Staged:
    """A file's new version held by a ``SyncGroup``, not written yet: ``base`` is the file as
    it was read before the group's first edit of it (``base_st`` its ``fstat``), ``data`` the
    content after the group's edits so far. ``calls`` are the tokens of the calls that wrote
    or read it: they all stand or fall with its write."""

    def __init__(self, dir_fd: int, name: str, shown: str, base_st: os.stat_result,
                 base: bytes, data: bytes) -> None:
        self.dir_fd = dir_fd
        self.name = name
        self.shown = shown
        self.base_st = base_st
        self.base = base
        self.data = data
        self.calls: list[object] = []
        self.lost = False  # its write failed: what waited for it (``SyncGroup.defer``) never runs


class SyncGroup:
    """Fsyncs, and writes of files edited more than once, deferred across consecutive edits of
    one session.

    A long-lived session (``batch``) opens a group around consecutive edits whose results it
    has not sent yet; ``atomic_write(..., defer_dir_sync=True)`` then still ``fsync``s the new
    file before renaming it over the old one, but leaves the directory's ``fsync`` to
    ``commit``, and the undo journal leaves its appended record's ``fsync`` there too
    (``defer_file``). ``commit`` makes all of them durable at once; the session sends the
    results only after it, so every result a caller has seen is as durable as without the
    group. What a system crash before ``commit`` can lose is in ``docs/batch.md``.

    Staging (``staging``, set by the session around a call that edits one file through
    ``cycle.edit_file_text``): the new version of an existing file (one link, at most
    ``STAGE_MAX_BYTES``) is kept here (``stage``) instead of written, and the next edits of
    that file in the group read it from here (``read``) and replace it; ``flush`` writes each
    staged file once (``atomic_write``: ``fsync``, the check that the file is still the one
    first read, rename) and then runs what waited for it (``defer``: the undo records). A
    hundred small edits of one file cost one write. A file that changed on disk meanwhile is
    not written: every call that wrote or read its staged version is failed with that error
    (``failed``, by call token) and the session reports it instead of the call's result. The
    session flushes before any call that is not such an edit, so nothing else ever sees a
    file older than its staged version.
    """

    def __init__(self) -> None:
        self.dirs: dict[tuple[int, int], int] = {}
        self.files: dict[tuple[int, int], int] = {}
        self.staging = False
        self.call: object = None  # the token of the call running now
        self.staged: dict[tuple[int, int, str], Staged] = {}
        self.staged_bytes = 0
        # what waits for the flush, in order, with the staged version it depends on (None: it
        # waits only to keep the order of the undo journal)
        self.waiting: list[tuple[Staged | None, Callable[[], object]]] = []
        self.failed: dict[object, ToolError] = {}

    def _hold(self, table: dict[tuple[int, int], int], fd: int) -> None:
        st = os.fstat(fd)
        key = (st.st_dev, st.st_ino)
        if key not in table:
            table[key] = os.dup(fd)

    def defer_dir(self, dir_fd: int) -> None:
        self._hold(self.dirs, dir_fd)

    def defer_file(self, fd: int) -> None:
        self._hold(self.files, fd)

    @property
    def pending(self) -> bool:
        return bool(self.dirs or self.files or self.staged or self.waiting)

    @staticmethod
    def key(res: Resolved) -> tuple[int, int, str]:
        assert res.name is not None
        st = os.fstat(res.dir_fd)
        return st.st_dev, st.st_ino, res.name

    def staged_for(self, res: Resolved) -> Staged | None:
        if not self.staged or res.name is None:
            return None
        return self.staged.get(self.key(res))

    def read(self, res: Resolved) -> Staged | None:
        """The staged version of ``res``, if any (the running call now depends on it)."""
        entry = self.staged_for(res)
        if entry is not None:
            entry.calls.append(self.call)
        return entry

    def stage(self, res: Resolved, data: bytes, expected_data: bytes | None,
              read_stat: os.stat_result | None, known_changed: bool,
              shown: str) -> WriteOutcome | None:
        """Keep ``data`` as ``res``'s new version instead of writing it; None when it must be
        written now (``atomic_write`` then does, and reports what is wrong with the file)."""
        key = self.key(res)
        entry = self.staged.get(key)
        outcome = WriteOutcome()
        if entry is not None:
            if expected_data is not None and expected_data != entry.data:
                raise _changed_meanwhile(shown)  # edits read the staged version: cannot be
            outcome.old_size = len(entry.data)
            outcome.staged = True
            if not known_changed and data == entry.data:
                outcome.changed = False
                return outcome
            self.staged_bytes += len(data) - len(entry.data)
            entry.data = data
            entry.calls.append(self.call)
            if len(data) > STAGE_MAX_BYTES or self.staged_bytes > STAGE_TOTAL_BYTES:
                # Grown past what a group holds: written now (once, checked against the
                # version first read, as the flush would), so memory stays bounded. Its undo
                # records still wait for the flush, in order.
                del self.staged[key]
                self.staged_bytes -= len(data)
                error = self._write(entry)
                if error is not None:
                    raise error
                outcome.staged = False
            return outcome
        if not self.staging or expected_data is None or len(data) > STAGE_MAX_BYTES or \
                self.staged_bytes + len(data) > STAGE_TOTAL_BYTES or res.name is None:
            return None
        try:
            fd = os.open(res.name, READ_FLAGS, dir_fd=res.dir_fd)
        except OSError:
            return None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1 or not st.st_mode & 0o222:
                return None
            if (read_stat is None or _identity(st) != _identity(read_stat)) and \
                    not holds_exactly(fd, expected_data):
                return None
        finally:
            os.close(fd)
        if not known_changed and data == expected_data:
            return None  # a no-op: nothing to stage
        entry = Staged(os.dup(res.dir_fd), res.name, shown, st, expected_data, data)
        entry.calls.append(self.call)
        self.staged[key] = entry
        self.staged_bytes += len(data)
        outcome.old_size = st.st_size
        outcome.staged = True
        return outcome

    def defer(self, res: Resolved, work: Callable[[], object]) -> None:
        """Run ``work`` at the flush, once ``res``'s staged version (if it has one now) is
        written, never if it is not. Tied to that version, not to the file's name: a change
        of the same file written at once earlier in the group (too big to stage, say) landed
        whatever becomes of a version staged after it, and keeps its undo record."""
        self.waiting.append((self.staged_for(res), work))

    def _write(self, entry: Staged) -> ToolError | None:
        """Write a staged version no longer in ``staged`` (``atomic_write``: only over the
        version first read); on failure every call that wrote or read it is failed with the
        error (``failed``), which is returned. Its directory descriptor is closed."""
        from zbtools.core.files.workspace import Resolved

        staging, self.staging = self.staging, False  # a write, not another stage
        try:
            if entry.data != entry.base:
                res = Resolved(entry.shown, [], entry.dir_fd, entry.name, entry.base_st, [])
                # sole_link: a file with one link when staged that got another meanwhile is
                # not replaced by a new inode (its other name would silently keep the old
                # content, where a lone edit changes it in place for both)
                atomic_write(res, entry.data, expected_data=entry.base,
                             read_stat=entry.base_st, known_changed=True, shown=entry.shown,
                             defer_dir_sync=True, sole_link=True)
            else:  # edits that undid each other: nothing to write, but their results stand
                # only if the file is still the one they were made on
                check_unchanged(entry.dir_fd, entry.name, entry.base_st, entry.shown,
                                expected=entry.base)
        except (ToolError, OSError) as exc:
            entry.lost = True
            error = exc if isinstance(exc, ToolError) else os_error(exc, entry.shown)
            for call in entry.calls:
                self.failed.setdefault(call, error)
            return error
        finally:
            self.staging = staging
            os.close(entry.dir_fd)
        return None

    def flush(self) -> None:
        """Write every staged file (in the order first staged), then run what waited."""
        while self.staged:
            self._write(self.staged.pop(next(iter(self.staged))))
        self.staged_bytes = 0
        waiting, self.waiting = self.waiting, []
        for depends, work in waiting:
            if depends is None or not depends.lost:
                work()

    def commit(self) -> None:
        """``flush``, then ``fsync`` every deferred file, then every deferred directory (errors
        as in ``atomic_write``: some filesystems refuse to ``fsync`` a directory)."""
        self.flush()
        for table in (self.files, self.dirs):
            while table:
                _, fd = table.popitem()
                try:
                    os.fsync(fd)
                except OSError:
                    pass
                finally:
                    os.close(fd)


_sync_group: list[SyncGroup] = []  # the open group, if any (at most one)


def open_sync_group() -> SyncGroup:
    """Open the session's group (``SyncGroup``); writes defer to it until it is closed."""
    if not _sync_group:
        _sync_group.append(SyncGroup())
    return _sync_group[0]


def close_sync_group() -> None:
    """Commit the open group, if any, and stop deferring."""
    if _sync_group:
        group = _sync_group.pop()
        group.commit()


def sync_group() -> SyncGroup | None:
    return _sync_group[0] if _sync_group else None


def _unlink_quiet(name: str, dir_fd: int) -> None:
    try:
        os.unlink(name, dir_fd=dir_fd)
    except OSError:
        pass


def current_umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


# ---------------------------------------------------------------------------------------------
# Temp names that tell a live writer from a dead one


TEMP_TAGS = ("zbtmp", "zbdel", "zbbak")
LEGACY_HOST = "legacy"  # the host part given to a temp name of an earlier zbtools version
SPECIAL_BITS = stat.S_ISUID | stat.S_ISGID
FOREIGN_STALE_SECONDS = 3600
_own: list[str] = []


def process_start(pid: int) -> str | None:
    """The start time of process ``pid`` (clock ticks since boot, ``/proc/PID/stat`` field 22),
    ``None`` when it does not exist; ``"0"`` when it cannot be told (no ``/proc``)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            raw = fh.read()
    except FileNotFoundError:
        if not os.path.isdir("/proc/self"):
            return "0"  # no procfs: liveness by pid alone
        return None
    except OSError:
        return "0"
    fields = raw[raw.rfind(b")") + 2:].split()
    return fields[19].decode("ascii") if len(fields) > 19 else "0"


def _host() -> str:
    """8 hex digits naming this boot and PID namespace: pids mean something only within both."""
    try:
        with open("/proc/sys/kernel/random/boot_id", "rb") as fh:
            boot = fh.read().strip()
        namespace = os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        return "00000000"
    return sha256_hex(boot + b":%d" % namespace)[:8]


def own_start() -> str:
    """This process's start time (see ``process_start``)."""
    if not _own:
        _own.extend((process_start(os.getpid()) or "0", _host()))
    return _own[0]


def own_host() -> str:
    """This process's boot and PID namespace token (see ``temp_name``)."""
    own_start()
    return _own[1]


def parse_temp_name(name: str) -> tuple[str, int, str, str] | None:
    """``(tag, pid, start, host)`` when ``name`` is exactly one of our temp names, else None."""
    if not name.startswith(".") or "-" not in name:
        return None
    head, _, tail = name.rpartition(".")
    if len(head) < 2:
        return None
    parts = tail.split("-")
    if len(parts) == 2 and parts[0] in TEMP_TAGS and len(parts[1]) == 12 and all(
            c in "0123456789abcdef" for c in parts[1]):
        # the name earlier zbtools versions gave (``.<name>.<tag>-<12 hex>``): its writer cannot
        # be asked, so it is treated as another machine's (left alone while it is young)
        return parts[0], 0, "0", LEGACY_HOST
    if len(parts) != 5 or parts[0] not in TEMP_TAGS:
        return None
    tag, pid, start, host, rand = parts
    if not (pid.isdigit() and pid.isascii() and start.isdigit() and start.isascii()
            and _hex8(host) and _hex8(rand)):
        return None
    return tag, int(pid), start, host


def _hex8(text: str) -> bool:
    return len(text) == 8 and all(c in "0123456789abcdef" for c in text)


def is_temp_name(name: str) -> bool:
    """Whether ``name`` is one of our temp, staging or backup names (never shown by listings)."""
    return name[:1] == "." and ".zb" in name and parse_temp_name(name) is not None


def writer_alive(pid: int, start: str) -> bool:
    """Whether process ``pid``, started at ``start``, of this boot and PID namespace, is still
    running (unsure counts as alive)."""
    if pid == os.getpid():
        return start == own_start() or own_start() == "0"
    current = process_start(pid)
    if current is None:
        return False
    if current == "0" or start == "0":
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except OSError:
            return True
        return True
    return current == start


def dead_temp(dir_fd: int, entry: str, tags: tuple[str, ...]) -> os.stat_result | None:
    """The ``lstat`` of ``entry`` (in ``dir_fd``) when it is named exactly by ``temp_name`` with
    one of ``tags`` and its writer is gone, else None.

    A writer of this boot and PID namespace is gone when its pid is, or now belongs to a process
    started at another time. A writer of another (another container or machine sharing the
    directory, or a boot before this one) cannot be asked: its entry counts as left behind only
    once it has not changed for ``FOREIGN_STALE_SECONDS`` (an hour)."""
    parsed = parse_temp_name(entry)
    if parsed is None or parsed[0] not in tags:
        return None
    _, pid, start, host = parsed
    local = host == own_host()
    if local and writer_alive(pid, start):
        return None
    try:
        st = os.lstat(entry, dir_fd=dir_fd)
    except OSError:
        return None
    if not local:
        import time

        if time.time() - st.st_mtime < FOREIGN_STALE_SECONDS:
            return None
    return st


def dead_entries(dir_fd: int, tags: tuple[str, ...]) -> Iterator[tuple[str, os.stat_result]]:
    """The entries of the directory ``dir_fd`` that dead writers left, named by ``temp_name``
    with one of ``tags`` (see ``dead_temp``), with their ``lstat``."""
    try:
        names = os.listdir(dir_fd)
    except OSError:
        return
    for entry in names:
        if ".zb" in entry:
            st = dead_temp(dir_fd, entry, tags)
            if st is not None:
                yield entry, st


def sweep_dead_temps(dir_fd: int) -> int:
    """Remove the temp files (``zbtmp``, regular files) of dead writers in the directory
    ``dir_fd`` (see ``dead_temp``); returns how many. A live writer's file is never touched.

    A long-lived process (``batch``, ``mcp``) sweeps one directory at most once every
    ``SWEEP_EVERY`` seconds: listing a directory of 100,000 entries costs about 20 ms, and a
    killed writer's debris is rare; a new process (the next command-line call) sweeps anew."""
    import time

    try:
        folder = os.fstat(dir_fd)
    except OSError:
        return 0
    now = time.monotonic()
    key = (folder.st_dev, folder.st_ino)
    if now - _swept.get(key, -SWEEP_EVERY) < SWEEP_EVERY:
        return 0
    if len(_swept) > 4096:
        _swept.clear()
    _swept[key] = now
    removed = 0
    for entry, st in dead_entries(dir_fd, ("zbtmp",)):
        if not stat.S_ISREG(st.st_mode):
            continue
        try:
            os.unlink(entry, dir_fd=dir_fd)
            removed += 1
        except OSError:
            pass
    return removed


SWEEP_EVERY = 60.0
_swept: dict[tuple[int, int], float] = {}  # directory -> when this process last swept it
_pauses: list[int] = [0]


def pause_point() -> None:
    """Test-only: with ``ZBTOOLS_TEST_PAUSE_BEFORE_RENAME=N``, stop before the N-th rename (or
    link, unlink) that publishes a change, so a crash test can kill the process right there.
    With ``ZBTOOLS_TEST_RESUME_FILE=PATH`` too, the process goes on once PATH exists (a race
    test changes the file meanwhile)."""
    wanted = os.environ.get("ZBTOOLS_TEST_PAUSE_BEFORE_RENAME")
    if not wanted:
        return
    _pauses[0] += 1
    if str(_pauses[0]) != wanted:
        return
    import time

    os.write(2, f"zbtools-test-paused {_pauses[0]}\n".encode("ascii"))
    resume = os.environ.get("ZBTOOLS_TEST_RESUME_FILE")
    while not (resume and os.path.exists(resume)):
        time.sleep(0.02 if resume else 3600)


# A change made within this many nanoseconds of the file's last change may carry the very same
# timestamps (kernels without fine-grained timestamps tick every 1-10 ms): such a file is
# hashed again rather than trusted by its ``stat``.
RECENT_CHANGE_NS = 2_000_000_000

# Linux 6.13 and later give a file a fine-grained ctime when it changes after its ctime was
# read ("multigrain timestamps"), on these file systems: there, every change made after a
# ``stat`` moves the ctime, and a file whose identity held needs no second read. Below
# FINE_CTIME_MIN_BYTES, reading the file again costs less than finding its file system.
FINE_CTIME_KERNEL = (6, 13)
FINE_CTIME_FS = frozenset({"ext4", "xfs", "btrfs", "tmpfs"})
FINE_CTIME_MIN_BYTES = 1 << 20
_fine_ctime: dict[int, bool] = {}


def ctime_moves_on_every_change(dev: int) -> bool:
    """Whether every change to a file on device ``dev`` made after a ``stat`` of it gives it a
    new ctime (the ``stat`` marks the ctime as seen; the next change then takes a
    fine-grained time instead of the clock tick's): Linux >= 6.13, on ext4, xfs, btrfs or
    tmpfs as ``/proc/self/mountinfo`` names the device. False when unsure (another system or
    kernel, another file system, a device that mountinfo does not list, as a btrfs
    subvolume's may not be). Limits, as for any timestamp: writes through a shared ``mmap``
    to pages already dirty, and a system clock set back."""
    known = _fine_ctime.get(dev)
    if known is None:
        try:
            known = _kernel_moves_ctime() and mount_types().get(dev) in FINE_CTIME_FS
        except OSError:
            known = False
        _fine_ctime[dev] = known
    return known


def _kernel_moves_ctime() -> bool:
    if not sys.platform.startswith("linux"):
        return False
    parts = os.uname().release.split(".", 2)
    if len(parts) < 2 or not parts[0].isdigit():
        return False
    minor = parts[1]
    digits = len(minor) - len(minor.lstrip("0123456789"))
    return digits > 0 and (int(parts[0]), int(minor[:digits])) >= FINE_CTIME_KERNEL


def mount_types() -> dict[int, str]:
    """Each mounted device number -> its file system type, from ``/proc/self/mountinfo``
    (raises OSError where there is none)."""
    out: dict[int, str] = {}
    with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as fh:
        for line in fh:
            left, sep, right = line.partition(" - ")
            if not sep:
                continue
            fields = left.split()
            if len(fields) < 3 or ":" not in fields[2]:
                continue
            major, _, minor = fields[2].partition(":")
            try:
                dev = os.makedev(int(major), int(minor))
            except ValueError:
                continue
            # a device mounted twice keeps its first type: bind mounts repeat the same one
            out.setdefault(dev, right.split(" ", 1)[0])
    return out


def _identity(st: os.stat_result) -> tuple[int, int, int, int, int]:
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


def _changed_meanwhile(shown: str) -> ToolError:
    return ToolError("stale_file", f"{shown}: was changed by someone else while the new "
                     "version was being written; nothing was written",
                     hint="read the file again and redo the change against its current "
                     "content", details={"changed_during_write": True})


def check_unchanged(dir_fd: int, name: str, seen: os.stat_result, shown: str, *,
                    expected_sha256: str | None = None, expected: bytes | None = None) -> None:
    """Refuse with ``stale_file`` unless the entry ``name`` is still the very file ``seen`` was
    taken of, unchanged: same inode, size, and nanosecond mtime and ctime. Called right before
    the rename that replaces it, so another process's change made while the new version was
    being written is never overwritten. When the old content is known (``expected_sha256`` or
    ``expected``) and the file changed recently (timestamps may not have moved), it is hashed
    again too, unless its ctime moves on every change (``ctime_moves_on_every_change``; from
    ``FINE_CTIME_MIN_BYTES``). ``seen`` must be a ``stat`` taken before the content was read."""
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        raise _changed_meanwhile(shown) from None
    if _identity(st) != _identity(seen):
        raise _changed_meanwhile(shown)
    if expected_sha256 is None and expected is None:
        return
    import time

    if time.time_ns() - st.st_ctime_ns >= RECENT_CHANGE_NS:
        return
    if st.st_size >= FINE_CTIME_MIN_BYTES and ctime_moves_on_every_change(st.st_dev):
        return  # ``seen`` was a stat taken before the read: a change since moved the ctime
    fd = os.open(name, READ_FLAGS, dir_fd=dir_fd)
    try:
        if _identity(os.fstat(fd)) != _identity(seen):
            same = False
        elif expected is not None:
            same = holds_exactly(fd, expected)
        else:
            assert expected_sha256 is not None
            same = sha256_hex(read_fd(fd)) == expected_sha256.lower()
    finally:
        os.close(fd)
    if not same:
        raise _changed_meanwhile(shown)


COMPARE_CHUNK = 256 * 1024


def holds_exactly(fd: int, expected: bytes) -> bool:
    """Whether ``fd`` (read from its current offset to EOF) holds exactly ``expected``.

    Read in ``COMPARE_CHUNK`` pieces, each compared in place (``bytes.startswith`` at an
    offset is a ``memcmp``): no second copy of the file is built, which for a few MB costs
    more than the reads (fresh pages to fault in) and stops at the first difference."""
    offset = 0
    while True:
        chunk = os.read(fd, COMPARE_CHUNK)
        if not chunk:
            return offset == len(expected)
        if not expected.startswith(chunk, offset):
            return False
        offset += len(chunk)


def temp_name(name: str, tag: str = "zbtmp") -> str:
    """A hidden sibling name ``.<name>.<tag>-<pid>-<start>-<host>-<hex>`` that fits in NAME_MAX.

    ``pid``, ``start`` (the process start time) and ``host`` (this boot and PID namespace) let
    a later call tell a dead writer's leftovers from a live writer's files
    (``sweep_dead_temps``).

    The original name is cut to at most 100 *bytes* (at a character boundary): names of 100
    characters can be 400 bytes in UTF-8, and the temp name must never be the one that is too long.
    """
    raw = os.fsencode(name)
    if len(raw) > 100:
        raw = raw[:100]
        while raw and raw[-1] & 0xC0 == 0x80:  # drop a cut multi-byte sequence: continuations
            raw = raw[:-1]
        if raw and raw[-1] >= 0xC0:  # ... and its lead byte
            raw = raw[:-1]
        name = os.fsdecode(raw)
    return f".{name}.{tag}-{os.getpid()}-{own_start()}-{own_host()}-{os.urandom(4).hex()}"


def check_expected(data: bytes, expected_sha256: str | None, shown: str) -> None:
    if expected_sha256 is None:
        return
    actual = sha256_hex(data)
    if actual != expected_sha256.lower():
        raise ToolError("stale_file", f"{shown}: changed since it was read (sha256 differs)",
                        hint="read the file again and redo the change against its current "
                        "content", details={"expected_sha256": expected_sha256,
                                            "current_sha256": actual})


def atomic_write(res: Resolved, data: bytes, *, create_only: bool = False,
                 expected_sha256: str | None = None, mode: int | None = None,
                 shown: str | None = None,
                 unchanged_since: os.stat_result | None = None,
                 known_changed: bool = False,
                 parts: Sequence[memoryview | tuple[int, int]] | None = None,
                 copy_from: int | None = None,
                 expected_data: bytes | None = None,
                 read_stat: os.stat_result | None = None,
                 defer_dir_sync: bool = False,
                 meanwhile: Callable[[], object] | None = None,
                 sole_link: bool = False) -> WriteOutcome:
    """Replace (or create) the resolved final entry with ``data`` atomically.

    ``unchanged_since`` refuses with ``stale_file`` when the file's inode, size or nanosecond
    mtime differ from that earlier ``stat`` (a cheap staleness check for big files). ``parts``,
    when given, are written one after the other instead of ``data`` (a big file edited in the
    middle is never joined into a second copy); they require ``known_changed``. A part given
    as ``(offset, length)`` is that range of the file open as ``copy_from``, copied in the
    kernel (``copy_range``); the source ending early is ``stale_file``.
    ``expected_data`` refuses with ``stale_file`` unless the file still holds exactly those
    bytes (as strong as comparing their sha256, without hashing); with ``read_stat`` (the
    ``fstat`` of the descriptor ``expected_data`` was read from, ``read_bytes_stat``), a file
    whose identity (inode, size, nanosecond mtime and ctime) is still that one is not read
    again here unless the write may be a no-op: the check right before the rename
    (``check_unchanged``) is the one that counts, and it reads the content again when the file
    changed recently (when its timestamps may not have moved). ``defer_dir_sync``: when
    the session has a ``SyncGroup`` open, the directory's ``fsync`` after the rename is left to
    the group's ``commit`` (the new file's own ``fsync`` before the rename never is).
    ``meanwhile``: work (that must not raise) done on another thread while the new file's
    ``fsync`` waits on the disk (``fsync_while``); it is done when this returns or raises.
    ``sole_link``: refuse with ``stale_file`` when the file has more than one hard link (the
    caller read it with one, and replacing it would silently split its names).

    A replaced file keeps its permission bits (and owner, when allowed); a new file gets ``mode``
    exactly when given (copy_file passes the source's bits), else ``0666 & ~umask``.
    """
    shown = shown or res.requested
    if res.name is None:
        raise ToolError("workspace_root_protected", f"{shown}: is the workspace root",
                        hint="write to a file path inside the workspace")
    group = sync_group() if defer_dir_sync else None
    if group is not None and not create_only and expected_sha256 is None and \
            copy_from is None and ((group.staging and unchanged_since is None)
                                   or group.staged_for(res) is not None):
        staged = group.stage(res, data if parts is None else b"".join(
            p for p in parts if not isinstance(p, tuple)),  # (ranges come with copy_from)
            expected_data, read_stat, known_changed, shown)
        if staged is not None:
            if meanwhile is not None:
                meanwhile()
            return staged
    outcome = WriteOutcome()
    dir_fd, name = res.dir_fd, res.name
    old_st: os.stat_result | None = None
    try:
        ofd = os.open(name, READ_FLAGS, dir_fd=dir_fd)
    except FileNotFoundError:
        ofd = -1
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # the name is (now) a symlink: resolution must be redone
            raise ToolError("path_changed", f"{shown}: is a symbolic link that could not be "
                            "followed safely", hint="call the tool again") from exc
        if exc.errno == errno.EISDIR:
            raise ToolError("is_directory", f"{shown}: is a directory",
                            hint="give a file path, not a directory",
                            details={"path": shown}) from exc
        raise os_error(exc, shown) from exc
    if ofd >= 0:
        try:
            old_st = os.fstat(ofd)
            if stat.S_ISDIR(old_st.st_mode):
                raise ToolError("is_directory", f"{shown}: is a directory",
                                hint="give a file path, not a directory", details={"path": shown})
            if not stat.S_ISREG(old_st.st_mode):
                raise special_file_error(shown, old_st)
            if create_only:
                raise ToolError("already_exists", f"{shown}: already exists",
                                hint="use edit_file/apply_edit to change it, or pass "
                                "overwrite: true to replace it whole",
                                details={"path": shown, "size": old_st.st_size})
            if unchanged_since is not None and (
                    old_st.st_ino, old_st.st_size, old_st.st_mtime_ns) != (
                    unchanged_since.st_ino, unchanged_since.st_size,
                    unchanged_since.st_mtime_ns):
                raise ToolError("stale_file", f"{shown}: changed while being edited",
                                hint="read the file again and redo the edit",
                                details={"path": shown})
            if not old_st.st_mode & 0o222:
                raise ToolError("permission_denied", f"{shown}: is read-only (mode "
                                f"{stat.S_IMODE(old_st.st_mode):04o})",
                                hint="make it writable first if replacing it is intended",
                                details={"path": shown})
            if sole_link and old_st.st_nlink > 1:
                raise ToolError("stale_file", f"{shown}: got another hard link since it was "
                                "read; nothing was written", hint="edit it again: a file with "
                                "several links is changed in place, so that every name sees "
                                "the change", details={"path": shown,
                                                       "links": old_st.st_nlink})
            # The old bytes are read only to check expected_sha256 or expected_data, or to
            # detect a no-op write (same size); a caller that knows the content differs skips
            # that second read, and so does one whose read is provably of this very file
            # version (check_unchanged repeats the check before the rename in any case).
            same_version = expected_sha256 is None and expected_data is not None and \
                read_stat is not None and _identity(old_st) == _identity(read_stat) and \
                (known_changed or data != expected_data)
            old = read_fd(ofd, None, old_st.st_size) if not same_version and (
                expected_sha256 is not None or expected_data is not None
                or (old_st.st_size == len(data) and not known_changed)) else None
            if old is not None:
                check_expected(old, expected_sha256, shown)
                if expected_data is not None and old != expected_data:
                    raise ToolError("stale_file", f"{shown}: changed since it was read",
                                    hint="read the file again and redo the change against "
                                    "its current content", details={"path": shown})
                if not known_changed and old == data:
                    outcome.changed = False
                    outcome.old_size = len(old)
                    return outcome
            outcome.old_size = old_st.st_size
        finally:
            os.close(ofd)
    else:
        if expected_sha256 is not None:
            raise ToolError("stale_file", f"{shown}: no longer exists (expected_sha256 given)",
                            hint="read the file again; it was deleted or moved",
                            details={"expected_sha256": expected_sha256, "current_sha256": None})
        if expected_data is not None or unchanged_since is not None:
            # The caller read an existing file: one deleted or moved away since then must not
            # come back under its old name (a sync group's flush comes long after the read).
            raise ToolError("stale_file", f"{shown}: no longer exists (deleted or moved since "
                            "it was read); nothing was written",
                            hint="read the file again; it was deleted or moved",
                            details={"path": shown, "current_sha256": None})
        outcome.created = True
    from zbtools.core.files.writerlog import note_dir  # the write path only: reads skip it

    note_dir(dir_fd)  # before the temp file exists: a kill from here on is cleaned up
    sweep_dead_temps(dir_fd)
    tmp = temp_name(name)
    fd = -1
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                     0o600, dir_fd=dir_fd)
        try:
            write_parts(fd, parts if parts is not None else [memoryview(data)], copy_from)
        except EOFError:  # the file copied from shrank
            raise _changed_meanwhile(shown) from None
        if old_st is not None:
            try:
                os.fchown(fd, old_st.st_uid, old_st.st_gid)
            except PermissionError:
                outcome.owner_changed = True
            # after fchown, which may clear the bits itself; never setuid/setgid (see above)
            os.fchmod(fd, stat.S_IMODE(old_st.st_mode) & ~SPECIAL_BITS)
        else:
            os.fchmod(fd, stat.S_IMODE(mode) & ~SPECIAL_BITS if mode is not None
                      else 0o666 & ~current_umask())
        if meanwhile is None:
            os.fsync(fd)
        else:
            fsync_while(fd, meanwhile)
        os.close(fd)
        fd = -1
        pause_point()
        if old_st is not None and (expected_sha256 is not None or unchanged_since is not None
                                   or expected_data is not None):
            # the precondition held when the file was read: it must still hold now, right
            # before the rename (another process may have written meanwhile)
            check_unchanged(dir_fd, name, old_st, shown, expected_sha256=expected_sha256,
                            expected=expected_data)
        if old_st is None:
            # No-clobber publish: link() fails on any existing name, even a dangling symlink.
            try:
                os.link(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd, follow_symlinks=False)
            except FileExistsError:
                raise ToolError("already_exists", f"{shown}: was created by someone else "
                                "meanwhile", hint="read it and decide; nothing was written",
                                details={"path": shown}) \
                    from None
            except OSError as exc:
                if exc.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.EMLINK):
                    raise
                if create_only:
                    raise ToolError("io_error", f"{shown}: the filesystem has no hard links, "
                                    "so create-only cannot be atomic") from exc
                os.rename(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
            else:
                os.unlink(tmp, dir_fd=dir_fd)
        else:
            os.rename(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
            outcome.hardlink_broken = old_st.st_nlink > 1
            outcome.old_links = old_st.st_nlink
        if group is not None:
            group.defer_dir(dir_fd)
        else:
            try:
                os.fsync(dir_fd)
            except OSError:
                pass  # some filesystems refuse fsync on directories; the rename is done
        return outcome
    except ToolError:
        if fd >= 0:
            os.close(fd)
        _unlink_quiet(tmp, dir_fd)
        raise
    except OSError as exc:
        if fd >= 0:
            os.close(fd)
        _unlink_quiet(tmp, dir_fd)
        raise os_error(exc, shown) from exc


WRITEBACK_STEP = 8 << 20  # a new file this big or more has its pages sent to disk as written


def write_parts(fd: int, parts: Sequence[memoryview | tuple[int, int]],
                copy_from: int | None) -> None:
    """Write ``parts`` to ``fd`` one after the other (a ``(offset, length)`` part is that range
    of ``copy_from``, copied with ``copy_range``; ``EOFError`` if it ends early).

    A file of ``2 * WRITEBACK_STEP`` or more has each ``WRITEBACK_STEP`` handed to the disk as
    soon as it is written (``sync_file_range``, which only starts the writing): the disk then
    works while the rest is written, and the ``fsync`` that follows waits for what is left
    rather than for the whole file (for 50 MB here: 4-9 ms instead of 27-32). Durability
    still comes from that ``fsync`` alone."""
    total = sum(p[1] if isinstance(p, tuple) else len(p) for p in parts)
    kick = writeback_starter() if total >= 2 * WRITEBACK_STEP else None
    step = WRITEBACK_STEP if kick is not None else max(total, 1)
    written = 0
    for piece in parts:
        done = 0
        size = piece[1] if isinstance(piece, tuple) else len(piece)
        while done < size:
            n = min(step - written % step, size - done)
            if isinstance(piece, tuple):
                assert copy_from is not None
                copy_range(copy_from, fd, piece[0] + done, n)
            else:
                view = piece[done:done + n]
                while view:
                    view = view[os.write(fd, view):]
            done += n
            written += n
            if kick is not None and written % step == 0:
                kick(fd, written - step, step)


_writeback: list[Callable[[int, int, int], object] | None] = []


def writeback_starter() -> Callable[[int, int, int], object] | None:
    """``sync_file_range(fd, offset, length, SYNC_FILE_RANGE_WRITE)`` from the C library
    (Python has no binding), or None where there is none (not Linux, no ``ctypes``)."""
    if not _writeback:
        start: Callable[[int, int, int], object] | None = None
        try:
            import ctypes

            function = ctypes.CDLL(None, use_errno=True).sync_file_range
            function.argtypes = (ctypes.c_int, ctypes.c_int64, ctypes.c_int64, ctypes.c_uint)
            function.restype = ctypes.c_int

            def start(fd: int, offset: int, length: int) -> object:
                return function(fd, offset, length, 2)  # SYNC_FILE_RANGE_WRITE

        except (ImportError, OSError, AttributeError):
            start = None
        _writeback.append(start)
    return _writeback[0]


class Background:
    """``work()`` running on a thread of its own from now on; ``result`` waits for it and
    returns its value (or raises its error). For work that releases the GIL or overlaps
    work that does (``fsync``, ``copy_file_range``, OpenSSL hashing): on a 2-CPU machine it
    then costs nothing on the caller's path. Without a thread to be had (a process or thread
    limit) the work is done right here. ``_thread`` is built in (``threading`` would be an
    import)."""

    def __init__(self, work: Callable[[], Any]) -> None:
        import _thread

        self._done = _thread.allocate_lock()
        self._done.acquire()
        self._value: Any = None
        self._error: BaseException | None = None
        self._work = work
        try:
            _thread.start_new_thread(self._run, ())
        except RuntimeError:
            self._run()

    def _run(self) -> None:
        try:
            self._value = self._work()
        except BaseException as exc:  # handed to the waiting thread
            self._error = exc
        finally:
            self._done.release()

    def wait(self) -> None:
        """Until the work is done (its error, if any, is kept for ``result``)."""
        with self._done:
            pass

    def result(self) -> Any:
        self.wait()
        if self._error is not None:
            raise self._error
        return self._value


def fsync_while(fd: int, work: Callable[[], object]) -> None:
    """``os.fsync(fd)`` on this thread while ``work`` runs in the ``Background``, then wait
    for it.

    ``fsync`` releases the GIL while the disk works, so CPU work that holds the GIL (a
    ``bytes.count`` over 45 MB) goes on beside it instead of after it. The work runs on the
    new thread, not here: a thread started while this one sits in a long C call that holds
    the GIL would not get to its own ``fsync`` before that call ends. ``work`` is done (or
    has raised, which is raised here after the ``fsync``) when this returns."""
    job = Background(work)
    try:
        os.fsync(fd)
    finally:
        job.wait()
    job.result()


def append_in_place(res: Resolved, data: bytes, *, expected_sha256: str | None,
                    shown: str) -> tuple[bool, int]:
    """Append ``data`` to an existing regular file; returns (hardlinks_ok, new_size).

    In place (``O_APPEND``): a crash can leave a partial tail, which is acceptable for appends.
    """
    assert res.name is not None
    sweep_dead_temps(res.dir_fd)
    try:
        fd = os.open(res.name, os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW | os.O_NONBLOCK
                     | os.O_CLOEXEC | os.O_NOCTTY, dir_fd=res.dir_fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ToolError("path_changed", f"{shown}: became a symbolic link",
                            hint="call the tool again") from exc
        if exc.errno == errno.ENXIO:  # FIFO without reader
            raise ToolError("special_file", f"{shown}: is a FIFO, not a regular file",
                            details={"path": shown}) from exc
        raise os_error(exc, shown) from exc
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise special_file_error(shown, st)
        if not st.st_mode & 0o222:  # our own check: root would be let through by the kernel
            raise ToolError("permission_denied", f"{shown}: is read-only (mode "
                            f"{stat.S_IMODE(st.st_mode):04o})",
                            hint="make it writable first if appending to it is intended",
                            details={"path": shown})
        if st.st_nlink > 1:
            raise ToolError("hardlink_refused", f"{shown}: has {st.st_nlink} hard links; an "
                            "in-place append would change every one of them",
                            hint="write the whole new content with write_file (which breaks the "
                            "link) if that is intended", details={"path": shown})
        if expected_sha256 is not None:
            rfd = os.open(res.name, READ_FLAGS, dir_fd=res.dir_fd)
            try:
                check_expected(read_fd(rfd), expected_sha256, shown)
            finally:
                os.close(rfd)
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        except OSError as exc:
            if view.nbytes != len(data):  # a partial append: cut the tail back off
                try:
                    os.ftruncate(fd, st.st_size)
                except OSError:
                    pass
            raise os_error(exc, shown) from exc
        return True, st.st_size + len(data)
    finally:
        os.close(fd)


# ---------------------------------------------------------------------------------------------
# The format of an existing file, for writing new text the way the file already is


class FileFormat:
    """How an existing file encodes text: what new text written into it should follow."""

    __slots__ = ("binary", "bom", "encoding", "ends_with_newline", "invalid_utf8", "newline",
                 "size")

    def __init__(self, encoding: str = "utf-8", bom: bytes = b"", newline: str = "\n",
                 ends_with_newline: bool = True, binary: bool = False, size: int = 0,
                 invalid_utf8: bool = False) -> None:
        self.encoding = encoding
        self.bom = bom
        self.newline = newline  # "\n" or "\r\n": the file's dominant line ending
        self.ends_with_newline = ends_with_newline
        self.binary = binary
        self.size = size
        self.invalid_utf8 = invalid_utf8

    @property
    def style(self) -> str:
        return "crlf" if self.newline == "\r\n" else "lf"

    @property
    def label(self) -> str:
        label = self.encoding.replace("_", "-").lower()
        return f"{label}-bom" if self.bom and label == "utf-8" else label

    def encode(self, text: str, *, with_bom: bool) -> bytes:
        errors = "surrogateescape" if self.invalid_utf8 else "strict"
        decoded = Decoded("", self.encoding, self.bom if with_bom else b"", self.style,
                          self.invalid_utf8 and errors == "surrogateescape")
        return decoded.encode(text)


PROBE_WHOLE_BYTES = 8 * 1024 * 1024


def probe_format(res: Resolved, *, shown: str | None = None) -> tuple[FileFormat, bytes | None]:
    """The format of the existing regular file ``res``, and its bytes when it is small."""
    fd, st = open_regular(res, shown=shown)
    try:
        whole = st.st_size <= PROBE_WHOLE_BYTES
        data = read_fd(fd) if whole else os.read(fd, CHUNK)
        last = data[-1:] if whole else os.pread(fd, 1, max(st.st_size - 1, 0))
    finally:
        os.close(fd)
    fmt = FileFormat(size=st.st_size, ends_with_newline=last in (b"\n", b""))
    fmt.newline = dominant_newline(data)
    bom = sniff_bom(data[:4])
    if bom is None and looks_binary(data):
        fmt.binary = True
        return fmt, data if whole else None
    if bom is not None:
        fmt.encoding, fmt.bom = bom
        if fmt.encoding != "utf-8":  # count newlines in the decoded text, not the raw bytes
            try:
                fmt.newline = dominant_newline(data[len(fmt.bom):].decode(fmt.encoding)
                                               .encode("utf-8"))
            except UnicodeDecodeError:
                pass
        return fmt, data if whole else None
    sample = data if whole else data[: len(data) - 4]
    try:
        sample.decode("utf-8")
    except UnicodeDecodeError:
        decoded = decode(sample, shown=shown or res.requested)
        fmt.encoding = decoded.encoding
        fmt.invalid_utf8 = decoded.invalid_utf8
    return fmt, data if whole else None


def convert_newlines(text: str, mode: str, fmt: FileFormat | None) -> str:
    """Apply a ``newline`` argument (auto, lf, crlf, as_is) to text about to be written."""
    if mode == "as_is":
        return text
    if mode == "lf":
        return text.replace("\r\n", "\n")
    if mode == "crlf":
        return text.replace("\r\n", "\n").replace("\n", "\r\n")
    if fmt is not None and fmt.newline == "\r\n":
        return apply_newline(text, "\r\n")
    return text

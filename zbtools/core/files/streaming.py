"""Big files in bounded memory: scans with ``pread``, kernel copies, writes in parts.

An edit of a file of any size never holds a second copy of it: the old text is located by
scanning the file in ``SCAN_CHUNK`` pieces read into one reused buffer (``find_twice``,
``count_in_file``), and the new version is written as parts, the unchanged ranges copied inside
the kernel (``copy_range``: ``copy_file_range``, falling back to ``pread``/``write``) around the
new text (``write_parts``), its pages handed to the disk as they are written. CPU work that can
go on while the disk works runs beside the wait (``Background``, ``fsync_while``).

Map: ``find_twice``, ``count_in_file``, ``copy_range``, ``write_parts``, ``writeback_starter``,
``Background``, ``fsync_while``.
"""

from __future__ import annotations

import errno
import os

from zbtools.core.files.reading import CHUNK

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any


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


WRITEBACK_STEP = 8 << 20  # a new file this big or more has its pages sent to disk as written


def write_parts(fd: int, parts: Sequence[memoryview | tuple[int, int]],
                copy_from: int | None) -> None:
    """Write ``parts`` to ``fd`` one after the other (a ``(offset, length)`` part is that range
    of ``copy_from``, copied with ``copy_range``; ``EOFError`` if it ends early).

    A file of ``2 * WRITEBACK_STEP`` or more has each ``WRITEBACK_STEP`` handed to the disk as
    soon as it is written (``sync_file_range``, which only starts the writing): the disk then
    works while the rest is written, and the ``fsync`` that follows waits for what is left
    rather than for the whole file (benchmarks/README.md#figures-behind-the-code). Durability
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

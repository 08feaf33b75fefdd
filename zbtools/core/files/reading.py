"""Reading a file's bytes: only regular files, never a hang, as the session sees them.

Only regular files are opened (``O_NOFOLLOW | O_NONBLOCK | O_NOCTTY`` relative to the parent's
fd, then ``fstat``): FIFOs, sockets and devices are refused with ``special_file`` before a single
byte is read, so a read never hangs. A file is read to its end whatever its ``st_size`` claims.
Within a ``batch`` session, a file whose new version is held by the session's ``SyncGroup``
(``staging``) is read from there (``staged_versions``).

Map: ``open_regular`` (a descriptor and its ``fstat``), ``read_fd``, ``read_bytes`` and
``read_bytes_stat`` (the whole content), ``special_file_error``; ``READ_FLAGS``, ``CHUNK``.
"""

from __future__ import annotations

import os
import stat

from zbtools.contract import ToolError
from zbtools.core.errors import is_directory, not_found
from zbtools.core.files.workspace import os_error

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from zbtools.core.files.workspace import Resolved

READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
CHUNK = 1 << 20

# While a ``batch`` session's sync group is open, its ``read_version`` (``staging``, which puts
# it here): the new version of a file the group holds and has not written yet, with the
# ``fstat`` of the file it was made from, or None. Reads see that version, not the disk's.
staged_versions: list[Callable[[Resolved], tuple[bytes, os.stat_result] | None]] = []


def open_regular(res: Resolved, *, shown: str | None = None) -> tuple[int, os.stat_result]:
    """Open the resolved final entry for reading; it must be a regular file."""
    shown = shown or res.requested
    if res.name is None or res.st is None:
        if res.name is None:
            raise is_directory(shown, "read", root=True)
        raise not_found(shown, what="no such file",
                        hint="check the path with list_directory or find_files")
    if stat.S_ISDIR(res.st.st_mode):
        raise is_directory(shown, "read")
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
            raise is_directory(shown, "read")
        raise special_file_error(shown, st)
    return fd, st


def special_file_error(shown: str, st: os.stat_result) -> ToolError:
    mode = st.st_mode
    kind = ("FIFO" if stat.S_ISFIFO(mode) else "socket" if stat.S_ISSOCK(mode)
            else "device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "special file")
    return ToolError("special_file", f"{shown}: is a {kind}, not a regular file",
                     hint="only regular files are read or written",
                     details={"path": shown, "kind": kind})


def read_fd(fd: int, limit: int | None = None, size: int | None = None) -> bytes:
    """Read from ``fd`` to EOF (or ``limit`` bytes), whatever ``st_size`` claims.

    A regular file is first read with one ``read`` of its size (no chunk list to join, so no
    second copy of a big file); ``/proc``-style files that report size 0 and
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
    hands it to its write (``Guard.read_stat``) so that an unchanged file is not read again."""
    staged = staged_versions[0](res) if staged_versions else None
    if staged is not None:  # edited earlier in this session's group, not written yet
        return staged
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

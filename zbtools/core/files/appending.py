"""Appending in place: the one write that is not atomic, and the files it refuses.

An append writes at the end of the file's own inode (``O_APPEND``), then ``fsync``s it: a crash
can leave a partial tail, which is acceptable for appends, and a failed write cuts the tail it
left back off. It refuses what a replace would refuse (special files; read-only files, even for
root) and files with several hard links (``hardlink_refused``: every name would change), and
checks the caller's ``expected_sha256`` first.

Map: ``append_in_place``.
"""

from __future__ import annotations

import errno
import os
import stat

from zbtools.contract import ToolError
from zbtools.core.files.reading import READ_FLAGS, read_fd, special_file_error
from zbtools.core.files.staleness import check_expected
from zbtools.core.files.tempnames import sweep_dead_temps
from zbtools.core.files.workspace import os_error

TYPE_CHECKING = False
if TYPE_CHECKING:
    from zbtools.core.files.workspace import Resolved


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

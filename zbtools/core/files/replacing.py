"""Creating and replacing files without losing a byte (docs/contract.md#safety-and-fidelity).

A write never changes a file in place: the new content goes to a temp file beside it, is
``fsync``-ed and renamed over the file (a new file is published with ``link()``), then the
directory is ``fsync``-ed, so a crash leaves the old file or the new one
(docs/internals/files.md#atomic-replace). The caller's ``Guard`` (``staleness``) is checked
before the write and again right before the rename. A replace drops setuid and setgid, refuses
a read-only file (``permission_denied``), does nothing when the bytes are the same, and gives a
file with several hard links a new inode (``hardlink_broken``). Before its first temp file in a
directory a process logs the directory (``writerlog.note_dir``) and sweeps dead writers' files.

Map: ``create_file`` (create only), ``replace_whole`` (the whole content), ``replace_parts``
(parts and kernel-copied ranges), each returning a ``WriteOutcome``; ``pause_point``
(test-only: ``ZBTOOLS_TEST_PAUSE_BEFORE_RENAME=N``); ``SPECIAL_BITS``, ``current_umask``.
"""

from __future__ import annotations

import errno
import os
import stat

from zbtools.contract import ToolError
from zbtools.core.errors import (
    already_exists,
    file_vanished,
    is_directory,
    stale_file,
    workspace_root_protected,
)
from zbtools.core.files.reading import READ_FLAGS, read_fd, special_file_error
from zbtools.core.files.staleness import (
    UNGUARDED,
    Guard,
    changed_meanwhile,
    check_expected,
    check_unchanged,
    file_identity,
)
from zbtools.core.files.streaming import fsync_while, write_parts
from zbtools.core.files.tempnames import sweep_dead_temps, temp_name
from zbtools.core.files.workspace import os_error

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Protocol

    from zbtools.core.files.workspace import Resolved

    class Group(Protocol):
        """What a write asks of a session's sync group (``staging.SyncGroup``, which builds
        on this module)."""

        staging: bool

        def staged_for(self, res: Resolved) -> object: ...

        def stage(self, res: Resolved, data: bytes, guard: Guard, known_changed: bool,
                  shown: str) -> WriteOutcome | None: ...

        def defer_dir(self, dir_fd: int) -> None: ...

SPECIAL_BITS = stat.S_ISUID | stat.S_ISGID


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


def create_file(res: Resolved, data: bytes, *, mode: int | None = None,
                shown: str | None = None) -> WriteOutcome:
    """Create the resolved final entry with ``data``; ``already_exists`` when the name is
    taken, now or by the time the new file is published. The new file gets ``mode`` exactly
    when given (copy_file passes the source's bits; never setuid/setgid), else
    ``0666 & ~umask``."""
    return _write(res, data, None, UNGUARDED, shown, create_only=True, mode=mode)


def replace_whole(res: Resolved, data: bytes, guard: Guard = UNGUARDED, *,
                  group: Group | None = None, mode: int | None = None,
                  shown: str | None = None) -> WriteOutcome:
    """Replace the file's whole content with ``data``, refusing with ``stale_file`` when it is
    no longer what ``guard`` says the caller read. With no file there, create it (``mode`` as
    for ``create_file``), unless the guard says the caller read one. ``group``: the session's
    open ``SyncGroup``, which the directory's ``fsync`` after the rename is left to (its
    ``commit``; the new file's own ``fsync`` before the rename never is), and which may keep
    the new version of a file the session edits instead (``SyncGroup.stage``)."""
    return _write(res, data, None, guard, shown, mode=mode, group=group)


def replace_parts(res: Resolved, parts: Sequence[memoryview | tuple[int, int]], guard: Guard,
                  *, group: Group | None = None, copy_from: int | None = None,
                  meanwhile: Callable[[], object] | None = None,
                  shown: str | None = None) -> WriteOutcome:
    """Replace the file's content with ``parts`` written one after the other, a content the
    caller knows differs from the file's (a big file edited in the middle is never joined into
    a second copy). A part given as ``(offset, length)`` is that range of the file open as
    ``copy_from``, copied in the kernel (``copy_range``); the source ending early is
    ``stale_file``. ``meanwhile``: work (that must not raise) done on another thread while the
    new file's ``fsync`` waits on the disk (``fsync_while``); it is done when this returns or
    raises. ``group`` as for ``replace_whole``."""
    return _write(res, b"", parts, guard, shown, known_changed=True, copy_from=copy_from,
                  meanwhile=meanwhile, group=group)


def _write(res: Resolved, data: bytes, parts: Sequence[memoryview | tuple[int, int]] | None,
           guard: Guard, shown: str | None, *, create_only: bool = False,
           known_changed: bool = False, mode: int | None = None, copy_from: int | None = None,
           meanwhile: Callable[[], object] | None = None,
           group: Group | None = None) -> WriteOutcome:
    """The write behind the three operations: ``parts`` (None: ``data`` whole), ``known_changed``
    (the content differs from the file's: no read to detect a no-op), ``create_only``."""
    shown = shown or res.requested
    if res.name is None:
        raise workspace_root_protected(shown, "write")
    if group is not None and not create_only and guard.expected_sha256 is None and \
            copy_from is None and ((group.staging and guard.unchanged_since is None)
                                   or group.staged_for(res) is not None):
        staged = group.stage(res, data if parts is None else b"".join(
            p for p in parts if not isinstance(p, tuple)),  # (ranges come with copy_from)
            guard, known_changed, shown)
        if staged is not None:
            if meanwhile is not None:
                meanwhile()
            return staged
    outcome = WriteOutcome()
    old_st = _examine(res.dir_fd, res.name, data, guard, create_only, known_changed, shown,
                      outcome)
    if not outcome.changed:
        return outcome
    return _publish(res.dir_fd, res.name, parts if parts is not None else [memoryview(data)],
                    old_st, guard, create_only, mode, copy_from, meanwhile, group, shown,
                    outcome)


def _examine(dir_fd: int, name: str, data: bytes, guard: Guard, create_only: bool,
             known_changed: bool, shown: str, outcome: WriteOutcome) -> os.stat_result | None:
    """The ``stat`` of the file about to be replaced, once it passed every check (None: there
    is none, and one may be created); a write of the bytes it holds already is a no-op
    (``outcome.changed`` false)."""
    try:
        ofd = os.open(name, READ_FLAGS, dir_fd=dir_fd)
    except FileNotFoundError:
        if guard.checks_content:
            raise file_vanished(shown, guard.expected_sha256) from None
        outcome.created = True
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # the name is (now) a symlink: resolution must be redone
            raise ToolError("path_changed", f"{shown}: is a symbolic link that could not be "
                            "followed safely", hint="call the tool again") from exc
        if exc.errno == errno.EISDIR:
            raise is_directory(shown, "write") from exc
        raise os_error(exc, shown) from exc
    try:
        old_st = os.fstat(ofd)
        if stat.S_ISDIR(old_st.st_mode):
            raise is_directory(shown, "write")
        if not stat.S_ISREG(old_st.st_mode):
            raise special_file_error(shown, old_st)
        if create_only:
            raise already_exists(shown, hint="use edit_file/apply_edit to change it, or pass "
                                 "overwrite: true to replace it whole",
                                 details={"path": shown, "size": old_st.st_size})
        since = guard.unchanged_since
        if since is not None and (old_st.st_ino, old_st.st_size, old_st.st_mtime_ns) != (
                since.st_ino, since.st_size, since.st_mtime_ns):
            raise stale_file(shown, "changed while being edited",
                             hint="read the file again and redo the edit")
        if not old_st.st_mode & 0o222:
            raise ToolError("permission_denied", f"{shown}: is read-only (mode "
                            f"{stat.S_IMODE(old_st.st_mode):04o})",
                            hint="make it writable first if replacing it is intended",
                            details={"path": shown})
        if guard.sole_link and old_st.st_nlink > 1:
            raise stale_file(shown, "got another hard link since it was read; nothing was "
                             "written", hint="edit it again: a file with several links is "
                             "changed in place, so that every name sees the change",
                             links=old_st.st_nlink)
        # The old bytes are read only to check expected_sha256 or expected_data, or to
        # detect a no-op write (same size); a caller that knows the content differs skips
        # that second read, and so does one whose read is provably of this very file
        # version (check_unchanged repeats the check before the rename in any case).
        expected_sha256, expected_data = guard.expected_sha256, guard.expected_data
        same_version = expected_sha256 is None and expected_data is not None and \
            guard.read_stat is not None and \
            file_identity(old_st) == file_identity(guard.read_stat) and \
            (known_changed or data != expected_data)
        old = read_fd(ofd, None, old_st.st_size) if not same_version and (
            expected_sha256 is not None or expected_data is not None
            or (old_st.st_size == len(data) and not known_changed)) else None
        if old is not None:
            check_expected(old, expected_sha256, shown)
            if expected_data is not None and old != expected_data:
                raise stale_file(shown)
            if not known_changed and old == data:
                outcome.changed = False
                outcome.old_size = len(old)
                return old_st
        outcome.old_size = old_st.st_size
        return old_st
    finally:
        os.close(ofd)


def _publish(dir_fd: int, name: str, parts: Sequence[memoryview | tuple[int, int]],
             old_st: os.stat_result | None, guard: Guard, create_only: bool, mode: int | None,
             copy_from: int | None, meanwhile: Callable[[], object] | None,
             group: Group | None, shown: str, outcome: WriteOutcome) -> WriteOutcome:
    """Write the new version to a temp file and put it in the file's place (``old_st``: the
    file replaced, None: created), checking ``guard`` again right before the rename."""
    from zbtools.core.files.writerlog import note_dir  # the write path only: reads skip it

    note_dir(dir_fd)  # before the temp file exists: a kill from here on is cleaned up
    sweep_dead_temps(dir_fd)
    tmp = temp_name(name)
    fd = -1
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                     0o600, dir_fd=dir_fd)
        try:
            write_parts(fd, parts, copy_from)
        except EOFError:  # the file copied from shrank
            raise changed_meanwhile(shown) from None
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
        if old_st is not None and guard.checks_content:
            # the precondition held when the file was read: it must still hold now, right
            # before the rename (another process may have written meanwhile)
            check_unchanged(dir_fd, name, old_st, shown, expected_sha256=guard.expected_sha256,
                            expected=guard.expected_data)
        if old_st is None:
            # No-clobber publish: link() fails on any existing name, even a dangling symlink.
            try:
                os.link(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd, follow_symlinks=False)
            except FileExistsError:
                raise already_exists(shown, what="was created by someone else meanwhile",
                                     hint="read it and decide; nothing was written") from None
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


def _unlink_quiet(name: str, dir_fd: int) -> None:
    try:
        os.unlink(name, dir_fd=dir_fd)
    except OSError:
        pass


def current_umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


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

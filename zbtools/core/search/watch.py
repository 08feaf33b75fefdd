"""Change notification for the warm search cache: Linux inotify on the directories a session walked.

A long-lived session (``batch``, ``mcp``) that walked a tree once can answer the same walk again
without listing or ``stat``-ing anything, provided it knows nothing changed since. The
``ChangeMonitor`` watches each directory the walk entered (the watch is added through
``/proc/self/fd/N`` on the descriptor the walk holds, *before* the directory is listed or its
children are stat'ed), and keeps the events the kernel queued since, in order, each with a
sequence number. A walk recorded at sequence ``s`` is still exact when no event after ``s``
concerns it; the events that do name what to look at again (``walk.Snapshot``).

Why this is exact: the kernel queues an inotify event inside the system call that makes the
change (``write``, ``truncate``, ``rename``, ``unlink``, ``utime``, ``chmod``...), before that
call returns, so a change finished by another process before our call starts is already in the
queue when we read it. A queue overflow (``IN_Q_OVERFLOW``) or a log past ``LOG_CAP`` events
forgets everything recorded before it.

Limits (where inotify is blind, the monitor is not used or the entry is always re-checked):

* only directories on local file systems are watched (``LOCAL_FS_TYPES``, read from
  ``/proc/self/mountinfo``): a network or FUSE file system can change without an event here;
* a regular file with more than one hard link is always ``stat``-ed again: a change made through
  a link in an unwatched directory notifies that directory only;
* a hard link made to a file after the walk from a directory that is not watched, and then
  written in place through that link, raises no event here either (the kernel notifies the
  link's own directory, and a link count change only watchers of the file itself); editors and
  zbtools replace files by rename, which never touches the old inode. Links made inside the
  watched directories are followed (``recording.py``);
* writes through a shared ``mmap`` raise no event (they do not promptly move ``mtime`` either);
* at most ``capacity`` directories are watched per session (the ``search_watch_dirs`` limit,
  also bounded by the kernel's ``fs.inotify.max_user_watches``); a walk with an unwatched
  directory is simply not recorded;
* mounting a file system over a walked directory raises no event in it.

Failure modes: none raised; anything unexpected (no inotify, no ``/proc``, a failed watch)
turns the monitor off for that walk, and the session falls back to ``stat`` validation.
"""

from __future__ import annotations

import os
import struct

from zbtools.core.files.staleness import mount_types

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

IN_MODIFY = 0x2
IN_ATTRIB = 0x4
IN_MOVED_FROM = 0x40
IN_MOVED_TO = 0x80
IN_CREATE = 0x100
IN_DELETE = 0x200
IN_DELETE_SELF = 0x400
IN_MOVE_SELF = 0x800
IN_UNMOUNT = 0x2000
IN_Q_OVERFLOW = 0x4000
IN_IGNORED = 0x8000
IN_ONLYDIR = 0x1000000
IN_ISDIR = 0x40000000

STRUCTURAL = IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE
SELF = IN_DELETE_SELF | IN_MOVE_SELF | IN_UNMOUNT | IN_IGNORED
WATCH_MASK = IN_MODIFY | IN_ATTRIB | STRUCTURAL | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR
LOG_CAP = 200_000  # events kept; past it every recorded walk is forgotten
EVENT_HEADER = struct.Struct("iIII")  # wd, mask, cookie, len (then len bytes of name)

# File systems where every change is made by this kernel, so every change raises an event here.
LOCAL_FS_TYPES = frozenset({
    "ext2", "ext3", "ext4", "xfs", "btrfs", "tmpfs", "f2fs", "zfs", "bcachefs", "jfs",
    "reiserfs", "overlay", "ramfs", "nilfs2",
})

# One event: (wd, mask, name, cookie) with name "" for the directory itself; the cookie pairs
# the two halves of a rename (IN_MOVED_FROM, IN_MOVED_TO), 0 for other events.
Event = tuple[int, int, str, int]


class ChangeMonitor:
    """One inotify instance and the ordered log of the events it reported."""

    def __init__(self, fd: int, add_watch: Callable[[int, bytes, int], int],
                 capacity: int) -> None:
        self.fd = fd
        self._add_watch = add_watch
        self.capacity = capacity
        self.seq = 0  # the number of the newest event read
        self.reset_seq = 0  # events up to this one are forgotten: older recordings are void
        self.log: list[tuple[int, Event]] = []
        self.wds: set[int] = set()  # the directories watched
        self._local: dict[int, bool] = {}
        self._fs: dict[int, str] | None = None
        import threading

        # mcp runs listing tools in parallel threads: events must be numbered in the order
        # they were read, and a poll must not return before another's events are logged
        self._lock = threading.Lock()

    @classmethod
    def open(cls, capacity: int) -> ChangeMonitor | None:
        """A monitor, or None where inotify is unavailable (not Linux, no ``/proc``) or
        ``capacity`` is 0."""
        import sys

        if capacity <= 0 or not sys.platform.startswith("linux"):
            return None
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            init1 = libc.inotify_init1
            add_watch = libc.inotify_add_watch
            add_watch.argtypes = (ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32)
            add_watch.restype = ctypes.c_int
            fd = init1(os.O_NONBLOCK | os.O_CLOEXEC)
            if fd < 0 or not os.path.isdir("/proc/self/fd"):
                if fd >= 0:
                    os.close(fd)
                return None
        except (OSError, AttributeError):
            return None
        return cls(fd, add_watch, capacity)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __del__(self) -> None:  # the kernel allows few inotify instances per user (128)
        self.close()

    def is_local(self, dev: int) -> bool:
        """Whether device ``dev`` holds a file system every change to which raises an event."""
        known = self._local.get(dev)
        if known is None:
            if self._fs is None:
                try:
                    self._fs = mount_types()
                except OSError:
                    self._fs = {}
            known = self._local[dev] = self._fs.get(dev) in LOCAL_FS_TYPES
        return known

    def watch(self, dir_fd: int) -> int | None:
        """Watch the directory open as ``dir_fd``; its watch descriptor, or None when it cannot
        be watched (capacity or the kernel's limit reached). The caller ``fstat``s it, checks
        ``is_local``, lists it and stats its children only *after* this returns, so no change
        falls in between unseen."""
        if self.fd < 0 or len(self.wds) >= self.capacity:
            return None
        wd = self._add_watch(self.fd, f"/proc/self/fd/{dir_fd}".encode(), WATCH_MASK)
        if wd < 0:
            self.capacity = len(self.wds)  # ENOSPC (the kernel's limit) or worse: no more
            return None
        self.wds.add(wd)
        return wd

    def poll(self) -> int:
        """Read every queued event into the log; the newest event's sequence number."""
        with self._lock:
            return self._poll()

    def _poll(self) -> int:
        if self.fd < 0:
            return self.seq
        header = EVENT_HEADER
        size = header.size
        while True:
            try:
                data = os.read(self.fd, 1 << 16)
            except BlockingIOError:
                break
            except OSError:
                self.close()
                self.forget()
                break
            if not data:
                break
            pos = 0
            while pos + size <= len(data):
                wd, mask, cookie, length = header.unpack_from(data, pos)
                raw = data[pos + size:pos + size + length]
                pos += size + length
                if mask & IN_Q_OVERFLOW:
                    self.forget()
                    continue
                if mask & IN_IGNORED:  # the watch is gone (directory deleted, unmounted)
                    self.wds.discard(wd)
                name = os.fsdecode(raw.split(b"\0", 1)[0])
                self.seq += 1
                self.log.append((self.seq, (wd, mask, name, cookie)))
        if len(self.log) > LOG_CAP:
            self.forget()
        return self.seq

    def forget(self) -> None:
        """Void every recording made so far (a lost event, or too many to keep)."""
        self.seq += 1
        self.reset_seq = self.seq
        self.log.clear()

    def events_since(self, seq: int) -> list[Event] | None:
        """The events after sequence ``seq``, oldest first; None when some were forgotten."""
        with self._lock:  # a poll in another thread may forget the log meanwhile
            return self._events_since(seq)

    def _events_since(self, seq: int) -> list[Event] | None:
        if seq < self.reset_seq:
            return None
        log = self.log
        if not log or log[-1][0] <= seq:
            return []
        # the log is ordered by sequence: find the first newer event by bisection
        lo, hi = 0, len(log)
        while lo < hi:
            mid = (lo + hi) // 2
            if log[mid][0] <= seq:
                lo = mid + 1
            else:
                hi = mid
        return [event for _, event in log[lo:]]

"""Change notification for the warm search cache: Linux inotify on the directories a session walked.

A long-lived session (``batch``, ``mcp``) that walked a tree once can answer the same walk again
without listing or ``stat``-ing anything, provided nothing changed since. ``ChangeMonitor``
watches each directory a walk enters (before the directory is listed) and keeps the events the
kernel queued since, in order, each with a sequence number; a walk recorded at sequence ``s``
is still exact when no later event concerns it (docs/internals/search.md#warm-session). Only
local file systems are watched, at most ``capacity`` directories; a queue overflow or a log
past ``LOG_CAP`` events forgets every recording. Where inotify is blind (hard links made from
unwatched directories, shared ``mmap`` writes, mounts), docs/search.md#warm-searches-in-a-session
says what users do. Nothing is raised: anything unexpected turns the monitor off for that walk,
and the session falls back to ``stat`` validation.

Map: ``ChangeMonitor``, ``LOCAL_FS_TYPES``, ``LOG_CAP``, the inotify constants.
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

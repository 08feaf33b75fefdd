"""The recording of a walk, replayed by a long-lived session while nothing changed it.

A ``Walk`` in a session with a change monitor (``watch.py``) records what it produces: each
entry in order with the skip counts at that point (``steps``), and each directory it listed with
its watch (``frames``). ``still_exact`` reads the monitor's events since the recording was last
known exact and decides whether replaying it gives what walking now would:

* nothing in its directories happened: yes;
* a regular file it produced was written in place, had its attributes changed, or was replaced
  by another regular file of the same name (every zbtools write): yes, with that entry's size,
  mtime and signature read again, and the mtime of the directory whose listing changed;
* a name that was not produced (hidden, ignored, excluded) came and went between two calls (a
  writer's temp file): yes;
* anything else (a name created, deleted or renamed, an ignore file touched, a directory moved,
  deleted, chmod'ed, a lost event): no, and the walk runs again for real.

Every directory reached while re-checking is opened one component at a time from the walk's
start without following symlinks, and checked to be the directory recorded (``open_below``).
Failure modes: none raised; anything unexpected answers "no".
"""

from __future__ import annotations

import os
import stat
from typing import Generic, Literal, Protocol, TypeVar

from zbtools.core.files.fsops import entry_kind
from zbtools.core.files.workspace import DIR_FLAGS
from zbtools.core.search.cache import signature, watched_signature
from zbtools.core.search.watch import (
    IN_ATTRIB,
    IN_CREATE,
    IN_ISDIR,
    IN_MODIFY,
    IN_MOVED_FROM,
    IN_MOVED_TO,
    STRUCTURAL,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Collection

    from zbtools.core.search.watch import ChangeMonitor


class Entry(Protocol):
    """What a recording reads and brings up to date of a walk's entry (``walk.Entry``)."""

    rel: str
    name: str
    kind: str
    size: int | None
    mtime: float
    sig: tuple[int, int, int, int, int] | None


E = TypeVar("E", bound=Entry)

# What a walk yields and counts at one entry: (entry, is_dir, its directory's Recording.frames
# index, the counters when it was produced: unreadable, excluded_dirs, hidden, ignored, loops,
# depth_limited, truncated).
Counters = tuple[int, int, int, int, int, bool, bool]
Step = tuple[E, bool, int, Counters]


def open_below(start_fd: int, start_rel: str, rel: str, ident: tuple[int, int]) -> int:
    """Directory ``rel`` (relative to the workspace root, at or below ``start_rel``, whose
    descriptor is ``start_fd``), opened one component at a time without following symlinks;
    ``start_fd`` itself for the start. -1 when it cannot be opened or is not the directory
    ``ident`` (``st_dev``, ``st_ino``) names any more. The caller closes what is not
    ``start_fd``."""
    if rel == start_rel:
        return start_fd
    below = rel if start_rel == "." else rel[len(start_rel) + 1:]
    fd = start_fd
    try:
        for comp in below.split("/"):
            nxt = os.open(comp, DIR_FLAGS, dir_fd=fd)
            if fd != start_fd:
                os.close(fd)
            fd = nxt
        st = os.fstat(fd)
    except OSError:
        if fd != start_fd:
            os.close(fd)
        return -1
    if (st.st_dev, st.st_ino) != ident:
        os.close(fd)
        return -1
    return fd


class Recording(Generic[E]):
    """A walk as it was produced, replayable while the change monitor reports nothing that
    alters it (``still_exact``). ``complete`` is False for a prefix (the consumer stopped)."""

    __slots__ = ("by_rel", "by_wd", "complete", "exact", "final", "frames", "max_entries", "seq",
                 "steps")

    def __init__(self, seq: int, max_entries: int) -> None:
        self.seq = seq  # the monitor's newest event when the walk started
        self.max_entries = max_entries  # the walk's entry cap
        self.steps: list[Step[E]] = []
        self.frames: list[tuple[str, tuple[int, int], int | None]] = []  # (rel, ident, wd)
        self.final: Counters = (0, 0, 0, 0, 0, False, False)
        self.complete = False
        self.exact = True  # every directory entered was watched
        self.by_wd: dict[int, int] = {}
        self.by_rel: dict[str, tuple[E, int]] | None = None

    def serves(self, max_entries: int) -> bool:
        """Whether a walk capped at ``max_entries`` produces exactly what was recorded: the
        same cap, or a whole walk that stopped short of both caps."""
        return max_entries == self.max_entries or (
            self.complete and not self.final[6] and len(self.steps) <= max_entries)

    def add_frame(self, rel: str, ident: tuple[int, int], wd: int | None) -> int:
        """Note a directory the walk listed (``wd``: its watch, None if unwatched); its index,
        which the steps produced from it refer to."""
        index = len(self.frames)
        self.frames.append((rel, ident, wd))
        if wd is None:
            self.exact = False
        else:
            self.by_wd[wd] = index
        return index

    def locate(self, rel: str) -> tuple[E, int] | None:
        """The recorded entry at ``rel`` and the index of its directory, if one was produced."""
        if self.by_rel is None:
            self.by_rel = {step[0].rel: (step[0], step[2]) for step in self.steps}
        return self.by_rel.get(rel)

    def still_exact(self, monitor: ChangeMonitor, start_rel: str, start_fd: int, seq: int,
                    rule_files: Collection[str]) -> bool:
        """Whether replaying gives what walking now would (``monitor``'s events up to ``seq``
        considered; ``start_fd`` is the walk's start, ``start_rel`` its path; a name in
        ``rule_files``, the ignore files, changes what is listed); entries whose files changed
        in place (or were replaced by a regular file) are brought up to date on the way."""
        events = monitor.events_since(self.seq)
        if events is None:
            return False
        touched: dict[tuple[int, str], tuple[int, int]] = {}  # -> (first mask, all masks)
        relisted: set[int] = set()  # directories whose listing (and so mtime) changed
        # Hard links: a name made by link() to a produced file and written through (or
        # utime'd) changes that file without an event on its own name (a link count change
        # notifies only watchers of the inode). So the names an inode was written through are
        # followed: one that still exists at the end is stat'ed (its st_nlink and inode tell
        # which produced files share it); one that went away (deleted, replaced by a rename,
        # moved out of these directories) leaves that inode unknown, and then no produced
        # file's signature is vouched for any more (each is stat'ed again on its next use).
        written: set[tuple[int, str]] = set()
        carried: set[int] = set()  # cookies of renames that took a written inode away
        lost = False
        for wd, mask, name, cookie in events:
            where = self.by_wd.get(wd)
            if where is None:
                continue
            if not name:  # the directory itself: moved, deleted, chmod, utime...
                return False
            if name in rule_files:
                return False
            key = (where, name)
            if mask & STRUCTURAL:
                relisted.add(where)
                if key in written:  # the written inode's name goes (or is renamed over)
                    written.discard(key)
                    if mask & IN_MOVED_FROM:
                        carried.add(cookie)
                    else:
                        lost = True
                if mask & IN_MOVED_TO and cookie in carried:
                    carried.discard(cookie)
                    written.add(key)
            if mask & (IN_MODIFY | IN_ATTRIB) and not mask & IN_ISDIR:
                written.add(key)
            before = touched.get(key)
            touched[key] = (mask, mask) if before is None else (before[0], before[1] | mask)
        shared: set[tuple[int, int]] = set()  # inodes of produced files with other links now
        for (where, name), (first, every) in touched.items():
            st = self._recheck(start_rel, start_fd, where, name, first, every)
            if st is False:
                return False
            if st is None:
                lost = lost or (where, name) in written
            elif st.st_nlink > 1 and not stat.S_ISDIR(st.st_mode):
                shared.add((st.st_dev, st.st_ino))
        for where in relisted:
            if where and not self._recheck_dir(start_rel, start_fd, where):
                return False
        if lost or carried or shared:
            for step in self.steps:
                entry = step[0]
                sig = entry.sig
                if sig is not None and entry.kind != "directory" and (
                        lost or carried or (sig[0], sig[1]) in shared):
                    entry.sig = None
        self.seq = seq
        return True

    def _lstat(self, start_rel: str, start_fd: int, where: int,
               name: str) -> os.stat_result | None:
        rel, ident, _wd = self.frames[where]
        fd = open_below(start_fd, start_rel, rel, ident)
        if fd < 0:
            raise OSError("moved")
        try:
            return os.stat(name, dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            return None
        finally:
            if fd != start_fd:
                os.close(fd)

    def _recheck(self, start_rel: str, start_fd: int, where: int, name: str, first: int,
                 every: int) -> os.stat_result | Literal[False] | None:
        """False when the change alters the walk; else the name's ``lstat`` now (None: it
        does not exist)."""
        frel = self.frames[where][0]
        known = self.locate(name if frel == "." else f"{frel}/{name}")
        try:
            st = self._lstat(start_rel, start_fd, where, name)
        except OSError:
            return False
        if known is None:  # not produced: skipped (hidden, ignored...), or absent then
            # unchanged only if it did not exist then (first seen created) nor exists now
            return None if first & (IN_CREATE | IN_MOVED_TO) and st is None else False
        entry = known[0]
        if entry.kind == "directory":
            return st if not every & (STRUCTURAL | IN_ATTRIB) else False
        if (every & STRUCTURAL and entry.kind != "file") or st is None or \
                entry_kind(st.st_mode) != entry.kind:
            return False
        entry.mtime = st.st_mtime
        entry.size = st.st_size
        entry.sig = watched_signature(st)
        return st

    def _recheck_dir(self, start_rel: str, start_fd: int, where: int) -> bool:
        """A directory whose listing changed: its entry's timestamps, re-read."""
        rel, ident, _wd = self.frames[where]
        known = self.locate(rel)
        if known is None:
            return False
        entry, parent = known
        try:
            st = self._lstat(start_rel, start_fd, parent, entry.name)
        except OSError:
            return False
        if st is None or not stat.S_ISDIR(st.st_mode) or (st.st_dev, st.st_ino) != ident:
            return False
        entry.mtime = st.st_mtime
        entry.sig = signature(st)
        return True

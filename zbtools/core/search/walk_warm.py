"""A walk in a long-lived session (``batch``, ``mcp``): cached listings and replayed walks.

``WarmWalk`` is the half of ``walk.Walk`` that a session's ``cache`` switches on. Each
directory's listing (its children after the hidden, excluded-directory and ignore rules, with
what it skipped) is kept and used again while the directory's timestamps and every ignore file
that decided it are unchanged (``_scan_cached``, ``_store``). Where the session's change
monitor works (``watch.py``) the whole walk is recorded (``recording.py``), and the same walk
asked again is replayed from the recording, without listing or ``stat``, while the monitor
reports nothing that alters it; an entry's ``sig`` then vouches that its ``size`` and ``mtime``
are current. Tools may keep what they derived from a walk with its recording
(``memo``/``keep_memo``). A recording bigger than ``RECORDING_SHARE`` of the cache is not kept.

Map: ``parent_fd``/``stat`` (the entry just produced, walked or replayed), the listing cache,
the recordings (``_prepare``, ``_recorded``, ``_keep``, ``_replay``), the memos, the walk's
counters (``state``, ``restore``, ``walked``).
"""

from __future__ import annotations

import os

from zbtools.core.search.cache import watched_signature
from zbtools.core.search.entries import Entry
from zbtools.core.search.layers import IGNORE_FILES

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Hashable, Iterator
    from typing import Any

    from zbtools.core.search.cache import SearchCache
    from zbtools.core.search.entries import Frame, Skipped
    from zbtools.core.search.layers import Layer, Print, RuleFiles
    from zbtools.core.search.recording import Counters, Recording
    from zbtools.core.search.watch import ChangeMonitor

NONE_COUNTED: Counters = (0, 0, 0, 0, 0, False, False)
# At most this share of the session cache for one recording: a 200k-entry walk's (~40 MB) in a
# 64 MiB cache evicted the searches' results, then itself, and repeats got slower than cold ones
RECORDING_SHARE = 0.25


def walked(own: Counters, before: Counters, after: Counters) -> Counters:
    """``own`` (what a walk counted so far) plus what one of its steps counted, from the
    counters ``before`` and ``after`` it."""
    return (own[0] + after[0] - before[0], own[1] + after[1] - before[1],
            own[2] + after[2] - before[2], own[3] + after[3] - before[3],
            own[4] + after[4] - before[4], after[5], after[6])


class WarmWalk:
    """What ``walk.Walk`` does with a session's cache; see the module docstring."""

    # the walk's own state (set by ``Walk.__init__``)
    cache: SearchCache | None
    rel: str
    rules: RuleFiles
    skipped: Skipped
    with_stat: bool
    max_depth: int
    max_entries: int
    loops: int
    depth_limited: bool
    truncated: bool
    _now: int
    _monitor: ChangeMonitor | None
    _start_fd: int
    _start_unsteady: bool
    _switches: tuple[bool, bool, frozenset[str]]
    _parent_fd: int
    _moved: bool
    _replaying: Recording[Entry] | None
    _replay_frame: int
    _replay_dir: tuple[int, int]

    if TYPE_CHECKING:
        def _walk(self, fd: int, recording: Recording[Entry] | None) -> Iterator[Entry]: ...

    # -- where the entry just produced lives ---------------------------------------------

    @property
    def parent_fd(self) -> int:
        """The directory holding the entry just produced (valid until the next step)."""
        if self._replaying is None:
            return self._parent_fd
        return self._replay_dir_fd()

    def stat(self, entry: Entry) -> None:
        """Fill ``entry.size``/``mtime`` of the entry just produced (for ``with_stat=False``)."""
        if entry.sig is not None:
            return  # stat'ed while watched, and nothing changed it since
        try:
            st = os.stat(entry.name, dir_fd=self.parent_fd, follow_symlinks=False)
        except OSError:
            return
        entry.mtime = st.st_mtime
        if entry.kind != "directory":
            entry.size = st.st_size
            if self._monitor is not None:  # a directory's is vouched for only once entered
                entry.sig = watched_signature(st)

    # -- listings kept in the cache ---------------------------------------------------

    def _counts(self) -> tuple[int, int, int, int]:
        sk = self.skipped
        return (sk.unreadable, sk.excluded_dirs, sk.hidden, sk.ignored)

    def _cache_key(self, frame: Frame) -> tuple[Any, ...]:
        return ("dir", frame.rel, frame.ident, self._switches)

    def _cache_check(self, frame: Frame) -> tuple[Any, ...]:
        """What a listing of ``frame`` depends on besides its own ignore files: the directory's
        timestamps and every ignore file above it (read at the start, or inherited)."""
        st = frame.st
        return (st.st_mtime_ns, st.st_ctime_ns, tuple(self.rules.start_prints), frame.prints)

    def _store(self, cache: SearchCache, frame: Frame, check: Any,
               layers_before: tuple[Layer, ...], own: list[Print],
               counted: tuple[int, int, int, int]) -> None:
        from zbtools.core.search.cache import settled

        if self.rules.unsteady or not settled(frame.st, self._now):
            return  # just changed: listed again next time, until it has settled
        after = self._counts()
        deltas = tuple(b - a for a, b in zip(counted, after, strict=True))
        children = tuple((e.name, e.kind, e.target, is_dir) for e, is_dir in frame.children)
        value = (children, deltas, tuple(own), frame.layers[len(layers_before):])
        cost = sum(len(c[0]) * 2 + 120 for c in children) + 400 * len(own)
        cache.put(self._cache_key(frame), check, value, cost)

    def _scan_cached(self, cache: SearchCache, frame: Frame, check: Any) -> bool:
        """Fill ``frame`` from the cache when its listing is there and still valid."""
        value = cache.get(self._cache_key(frame), check)
        if value is None:
            return False
        children, deltas, own, own_layers = value
        from zbtools.core.search.cache import signature

        for where, sig in own:  # the directory's own ignore files, unchanged?
            try:
                st = os.stat(where.rpartition("/")[2], dir_fd=frame.fd, follow_symlinks=False)
            except OSError:
                return False
            if signature(st) != sig:
                return False
            if st.st_nlink > 1:
                self.rules.linked = True
        frame.layers = (*frame.layers, *own_layers)
        frame.prints = (*frame.prints, *own)
        sk = self.skipped
        sk.unreadable += deltas[0]
        sk.excluded_dirs += deltas[1]
        sk.hidden += deltas[2]
        sk.ignored += deltas[3]
        prefix = "" if frame.rel == "." else frame.rel + "/"
        depth = frame.depth + 1
        kept: list[tuple[Entry, bool]] = []
        with_stat = self.with_stat
        watched = frame.wd is not None
        for name, kind, target, is_dir in children:
            size: int | None = None
            mtime = 0.0
            sig = None
            if with_stat and not is_dir:  # as the walk: a directory's size is none
                try:
                    st = os.stat(name, dir_fd=frame.fd, follow_symlinks=False)
                except OSError:
                    sk.unreadable += 1
                    continue
                size = st.st_size
                mtime = st.st_mtime
                sig = watched_signature(st) if watched else None
            entry = Entry(prefix + name, name, kind, size, depth, target, mtime)
            entry.sig = sig
            kept.append((entry, is_dir))
        frame.children = kept
        return True

    # -- recordings of whole walks, replayed while nothing changed ---------------------

    def _prepare(self) -> Recording[Entry] | None:
        """The recording this walk will replay (still exact), or None; decided once, before
        anything is produced."""
        if self._prepared or self._monitor is None or self._start_fd < 0:
            return self._kept
        self._prepared = True
        assert self.cache is not None
        st = os.fstat(self._start_fd)
        # one recording serves walks with or without stat data (a replay stats what it lacks)
        # and any entry cap it did not reach
        self._key = ("walk", self.rel, st.st_dev, st.st_ino, self._switches, self.max_depth)
        self._seq = self._monitor.poll()
        recording: Recording[Entry] | None = self.cache.get(self._key,
                                                            tuple(self.rules.start_prints))
        self._recordable = not self.cache.get(("too big", self._key), True)
        if recording is not None and not (
                recording.serves(self.max_entries) and recording.still_exact(
                    self._monitor, self.rel, self._start_fd, self._seq, IGNORE_FILES)):
            recording = None
        self._kept = recording
        return recording

    _prepared = False
    _recordable = True  # not known too big to record (a walk that was is not recorded again)
    _key: tuple[Any, ...] = ()
    _seq = 0
    _kept: Recording[Entry] | None = None  # the recording this walk replayed, or made and kept

    def _recorded(self, fd: int) -> Iterator[Entry]:
        """The walk, recorded; the recording is kept when the walk ends or its consumer stops
        (a prefix), not when it fails."""
        from zbtools.core.search.recording import Recording

        recording: Recording[Entry] = Recording(self._seq, self.max_entries)
        try:
            yield from self._walk(fd, recording)
        except GeneratorExit:
            self._keep(recording)
            raise
        self._keep(recording)

    def _keep(self, recording: Recording[Entry]) -> None:
        self._kept = None
        if recording.exact and not self._moved and not self.rules.linked and \
                self.cache is not None and not self._start_unsteady:
            cost = sum(len(step[0].rel) * 2 + 200 for step in recording.steps) + \
                100 * len(recording.frames)
            if cost > self.cache.capacity * RECORDING_SHARE:
                # it would push out the listings and results that make repeats cheap; and
                # recording it again next time would only cost
                self.cache.put(("too big", self._key), True, True, 64)
                return
            self.cache.put(self._key, tuple(self.rules.start_prints), recording, cost)
            self._kept = recording

    # -- what a consumer derives from a walk, kept with its recording (warm sessions) ----

    def memo(self, key: Hashable) -> Any:
        """The value ``keep_memo(key, ...)`` kept on an earlier call whose walk this one
        replays (same entries, same counts; their size and mtime may have been brought up to
        date), else None. Call before iterating; use ``refresh`` on the entries it holds and
        ``restore`` on the walk state it holds."""
        recording = self._prepare()
        if recording is None or self.cache is None:
            return None
        return self.cache.get(("memo", self._key, key), recording)

    def keep_memo(self, key: Hashable, value: Any, cost: int) -> None:
        """Keep ``value`` (about ``cost`` bytes), derived from this walk's entries only, for
        later calls that replay the same recording."""
        if self._kept is not None and self.cache is not None:
            self.cache.put(("memo", self._key, key), self._kept, value, cost)

    def refresh(self, entry: Entry) -> None:
        """Bring an entry of a memo up to date (size and mtime) when they are not known
        current, opening its directory from the start without following symlinks."""
        if entry.sig is not None or self._kept is None:
            return
        recording = self._kept
        known = recording.locate(entry.rel)
        if known is None:
            return
        self._replaying, self._replay_frame = recording, known[1]
        try:
            self.stat(entry)
        finally:
            self._replaying = None

    def state(self) -> Counters:
        """The counts and flags as they are now (``skipped``, ``loops``, ``depth_limited``,
        ``truncated``)."""
        sk = self.skipped
        return (sk.unreadable, sk.excluded_dirs, sk.hidden, sk.ignored, self.loops,
                self.depth_limited, self.truncated)

    def restore(self, state: Counters) -> None:
        """Counts and flags as ``state`` (from ``state()`` on a walk this one replays)."""
        sk = self.skipped
        (sk.unreadable, sk.excluded_dirs, sk.hidden, sk.ignored, self.loops,
         self.depth_limited, self.truncated) = state

    def _count(self, before: Counters, after: Counters) -> None:
        """Move what the walk itself counted from ``before`` to ``after``. The skip counts are
        shared with the consumer (grep counts the files it could not read into ``skipped``
        too), so only the walk's difference is applied; loops and the flags are the walk's."""
        sk = self.skipped
        sk.unreadable += after[0] - before[0]
        sk.excluded_dirs += after[1] - before[1]
        sk.hidden += after[2] - before[2]
        sk.ignored += after[3] - before[3]
        self.loops, self.depth_limited, self.truncated = after[4], after[5], after[6]

    def _replay(self, recording: Recording[Entry]) -> Iterator[Entry]:
        """Produce a still-exact recording's entries, counting as the walk did at each."""
        last = NONE_COUNTED
        with_stat = self.with_stat
        for entry, _is_dir, frame, counters in recording.steps:
            if counters is not last:
                self._count(last, counters)
                last = counters
            self._replay_frame = frame
            if with_stat and entry.sig is None and entry.kind != "directory":
                self.stat(entry)  # not known current (hard links): as the walk would see it
            yield entry
        if recording.complete:
            self._count(last, recording.final)

    def _replay_dir_fd(self) -> int:
        """The directory of the replayed entry, opened component by component from the start
        (``O_NOFOLLOW``) and checked to be the directory recorded; -1 if it is not."""
        index = self._replay_frame
        if self._replay_dir[0] == index:
            return self._replay_dir[1]
        self._close_replay_dir()
        assert self._replaying is not None
        from zbtools.core.search.recording import open_below

        rel, ident, _wd = self._replaying.frames[index]
        fd = open_below(self._start_fd, self.rel, rel, ident)
        self._replay_dir = (index, fd)
        return fd

    def _close_replay_dir(self) -> None:
        fd = self._replay_dir[1]
        if fd >= 0 and fd != self._start_fd:
            os.close(fd)
        self._replay_dir = (-1, -1)

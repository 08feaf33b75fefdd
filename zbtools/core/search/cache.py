"""The warm search cache of a long-lived session (``batch``, ``mcp``), re-checked on every use.

A session keeps one ``SearchCache``, which each call's walk and search consult: directory
listings (after the hidden, excluded and ignore rules, with what was skipped), valid while the
directory's ``mtime_ns`` and ``ctime_ns`` and every ignore file that decided it are unchanged;
and one file's result for one search, valid while its inode, size, ``mtime_ns`` and
``ctime_ns`` are. Every value is validated against a fresh ``stat`` on every use and stored
only once what it depends on is ``SETTLE_NS`` old (git's "racily clean" rule,
docs/internals/search.md#warm-session). Memory is bounded by ``capacity`` bytes, least recently
used first out; 0 keeps nothing. File contents are never kept. A network file system's server
clock far behind this machine's could make a just-changed file look settled: a known limit.

Map: ``SearchCache``, ``settled``, ``signature``, ``watched_signature``, ``now_ns``,
``SETTLE_NS``, ``ENTRY_COST``.
"""

from __future__ import annotations

import stat
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    import os
    from collections.abc import Hashable
    from typing import Any

    from zbtools.core.search.watch import ChangeMonitor

SETTLE_NS = 2_000_000_000  # a value is kept once what it depends on is older than this
ENTRY_COST = 160  # bytes charged per cached value besides its own estimate


def settled(st: os.stat_result, now_ns: int) -> bool:
    """Whether ``st``'s timestamps are old enough for a value read now to be kept."""
    return max(st.st_mtime_ns, st.st_ctime_ns) < now_ns - SETTLE_NS


def signature(st: os.stat_result) -> tuple[int, int, int, int, int]:
    """What a cached value depends on: identity, size and both timestamps."""
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def watched_signature(st: os.stat_result, sig: tuple[int, int, int, int, int] | None = None
                      ) -> tuple[int, int, int, int, int] | None:
    """``signature`` (``sig`` when the caller has it already), or None for a regular file with
    other hard links: a change made through a link elsewhere notifies only that link's
    directory, so such a file is always re-read."""
    if st.st_nlink > 1 and not stat.S_ISDIR(st.st_mode):
        return None
    return sig if sig is not None else signature(st)


def now_ns() -> int:
    return time.time_ns()


class SearchCache:
    """Values keyed by what they describe, each stored with what validates it."""

    def __init__(self, capacity: int, watch_dirs: int = 0) -> None:
        self.capacity = capacity
        self.watch_dirs = watch_dirs  # directories the change monitor may watch (0: none)
        self._monitor: ChangeMonitor | None = None
        self._monitor_tried = False
        self.used = 0
        self.hits = 0
        self.misses = 0
        self._values: dict[Hashable, tuple[Hashable, Any, int]] = {}  # oldest use first
        self.searches: set[Hashable] = set()  # the searches run in this session (their keys)

    def get(self, key: Hashable, check: Hashable) -> Any:
        """The value stored under ``key`` when it was stored with ``check``; else None (and a
        value stored with another check is dropped)."""
        item = self._values.pop(key, None)
        if item is None or item[0] != check:
            if item is not None:
                self.used -= item[2]
            self.misses += 1
            return None
        self._values[key] = item  # most recently used last
        self.hits += 1
        return item[1]

    def put(self, key: Hashable, check: Hashable, value: Any, cost: int) -> None:
        """Keep ``value`` (about ``cost`` bytes) under ``key`` while ``check`` holds."""
        cost += ENTRY_COST
        if cost > self.capacity:
            return
        old = self._values.pop(key, None)
        if old is not None:
            self.used -= old[2]
        while self._values and self.used + cost > self.capacity:
            oldest = next(iter(self._values))
            self.used -= self._values.pop(oldest)[2]
        self._values[key] = (check, value, cost)
        self.used += cost

    def change_monitor(self) -> ChangeMonitor | None:
        """The session's change monitor (``watch.py``), opened on first use; None when there
        is none (no capacity, not Linux)."""
        if not self._monitor_tried:
            self._monitor_tried = True
            if self.capacity > 0 and self.watch_dirs > 0:
                from zbtools.core.search.watch import ChangeMonitor

                self._monitor = ChangeMonitor.open(self.watch_dirs)
        return self._monitor

    def __len__(self) -> int:
        return len(self._values)

    def close(self) -> None:
        """Stop watching (the session ends)."""
        if self._monitor is not None:
            self._monitor.close()

    def clear(self) -> None:
        self._values.clear()
        self.searches.clear()
        self.used = 0

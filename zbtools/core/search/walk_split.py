"""A second process that scans a one-shot walk's directories from the other end
(docs/internals/search.md#split-walk).

A walk of a large tree spends most of its time listing directories and taking a ``stat`` of each
file, on one core. In a process that runs one call and exits (``Walk(split=True)``), once the
walk has scanned ``SPLIT_AFTER`` directories and may still give ``SPLIT_LEFT`` entries,
``Ahead.start`` forks a child that walks the same tree with the same rules but its siblings in
descending order, so it starts where the walk will end, and sends each directory's scan (its
kept entries, the ignore files it holds, what it left out) through a pipe. The walk takes a scan
from there whenever the child got to a directory first (``Ahead.fill``) and scans the others
itself, so every choice (order, limits, counts) stays the walk's own and the answer is the same
with or without the child. The child is stopped once the walk has passed everything it could
still scan, and in any case when the walk ends. It is forked, stopped and talked to as the
search's helper is (``helper``): only where that one may be, it writes nothing but its pipe,
and leaves with ``os._exit``.

Map: ``Ahead`` (the parent's side), ``scan_ahead`` (the child's), ``may_split``,
``SPLIT_AFTER``, ``SPLIT_LEFT``.
"""

from __future__ import annotations

import os
import sys

from zbtools.core.search.entries import Entry, Frame, walk_order
from zbtools.core.search.helper import Frames, fork_helper, send_frame, stop_helper, worker_count

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Protocol

    from zbtools.core.search.entries import Skipped
    from zbtools.core.search.layers import Print

    class Walk(Protocol):
        """What of ``walk.Walk`` the scanner uses (walk.py imports this module)."""

        skipped: Skipped
        max_depth: int
        _ahead: Ahead | None
        _visited: set[tuple[int, int]]

        def _scan(self, frame: Frame) -> None: ...

        def _open_child(self, parent: Frame, entry: Entry) -> Frame | None: ...

        def _counts(self) -> tuple[int, int, int, int]: ...

        def adopt_rules(self, frame: Frame, names: frozenset[str],
                        own: list[Print] | None = None) -> None: ...

SPLIT_AFTER = 48  # directories the walk scans alone first: a small tree never forks
# entries the walk may still give when it would fork: a walk cut sooner (a listing's default
# limit of 1,000) ends before the child's scans are of use, and the fork costs it 3 ms
SPLIT_LEFT = 2000
PIPE_BYTES = 1 << 20  # asked for the pipe (the child waits when it is full)
HELD = 64  # the child descends no deeper than this below the start (its open directories)

# one directory's scan as sent: (rel, ignore file names, counts left out as Walk._counts
# gives them, entries); an entry is (rel, name, kind, size, depth, target, mtime, descend)
Sent = tuple[str, str, str, "int | None", int, "str | None", float, bool]
Scan = tuple[str, tuple[str, ...], tuple[int, int, int, int], list[Sent]]


def may_split() -> bool:
    """Whether this process may fork a scanner now: where the search may fork its helper
    (``helper.worker_count``: two CPUs, ``ZBTOOLS_SEARCH_WORKERS`` not 1), and with no thread
    but this one (a fork copies no other thread, and whatever lock one held)."""
    threading = sys.modules.get("threading")
    return worker_count() > 1 and (threading is None or threading.active_count() <= 1)


class Ahead:
    """The parent's side: the child's pid, the pipe's read end, and the scans received."""

    def __init__(self, pid: int, fd: int) -> None:
        self.pid = pid
        self.fd = fd
        self.frames = Frames()
        self.scans: dict[str, Scan] = {}
        self.last: tuple[str, str] | None = None  # the newest scan received, its walk order
        self.running = True

    @classmethod
    def start(cls, walk: Walk, top: Frame) -> Ahead | None:
        """Fork the child below the walk's start frame ``top``; None when it cannot be."""
        try:
            read, write = os.pipe2(os.O_CLOEXEC)
        except OSError:
            return None
        try:
            import fcntl

            fcntl.fcntl(read, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
        except (OSError, AttributeError, ImportError):
            pass
        pid = fork_helper(lambda: scan_ahead(walk, top, write), close=(read,))
        if pid is None:
            os.close(read)
            os.close(write)
            return None
        os.close(write)
        os.set_blocking(read, False)
        return cls(pid, read)

    def fill(self, walk: Walk, frame: Frame) -> bool:
        """Give ``frame`` the child's scan of it, if one came (True); else the walk scans it.
        The child is stopped once the walk has gone past all it could still scan."""
        self.drain()
        got = self.scans.pop(frame.rel, None)
        if got is None:
            if self.running and self.last is not None and walk_order(frame.rel) > self.last[1] \
                    and not frame.rel.startswith(self.last[0] + "/"):
                self.stop()
            return False
        _, names, left_out, entries = got
        if names:
            walk.adopt_rules(frame, frozenset(names))
        sk = walk.skipped  # left_out: as Walk._counts gives them
        sk.unreadable += left_out[0]
        sk.excluded_dirs += left_out[1]
        sk.hidden += left_out[2]
        sk.ignored += left_out[3]
        frame.children = [(Entry(e[0], e[1], e[2], e[3], e[4], e[5], e[6]), e[7])
                          for e in entries]
        return True

    def drain(self) -> None:
        """Read what the pipe holds now, and each whole scan in it."""
        if self.fd < 0:
            return
        while True:
            try:
                chunk = os.read(self.fd, PIPE_BYTES)
            except BlockingIOError:
                break
            except OSError:
                chunk = b""
            if not chunk:
                os.close(self.fd)
                self.fd = -1
                break
            self.frames.feed(chunk)
        scan: Scan
        try:
            for scan in self.frames.values():
                self.scans[scan[0]] = scan
                self.last = (scan[0], walk_order(scan[0]))
        except (ValueError, EOFError):  # not the child's frames: the walk goes on alone
            self.frames.clear()
            self.stop()

    def stop(self) -> None:
        """Stop the child (if it still runs) and reap it; the scans received stay."""
        if self.running:
            self.running = False
            stop_helper(self.pid)
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def scan_ahead(walk: Walk, top: Frame, out: int) -> None:
    """The child: walk below ``top`` (the start, scanned already) with the walk's rules,
    siblings in descending order, sending each directory's scan to ``out``. Only this
    process's copy of ``walk`` changes; every directory is opened anew (a descriptor shared
    with the parent shares its reading place)."""
    from zbtools.core.files.workspace import DIR_FLAGS

    walk._ahead = None
    walk._visited = set()
    root = Frame(os.open(".", DIR_FLAGS, dir_fd=top.fd), top.rel, top.depth, top.layers)
    root.children = top.children
    # each level: a frame and its subdirectories still to enter, the last one first
    stack: list[tuple[Frame, list[Entry]]] = []
    frame: Frame | None = root
    while True:
        if frame is not None:
            if frame is not root:
                before = walk._counts()
                walk._scan(frame)
                after = walk._counts()
                entries: list[Sent] = [
                    (e.rel, e.name, e.kind, e.size, e.depth, e.target, e.mtime, descend)
                    for e, descend in frame.children]
                left_out = (after[0] - before[0], after[1] - before[1], after[2] - before[2],
                            after[3] - before[3])
                send_frame(out, (frame.rel, tuple(sorted(frame.ignore_names)), left_out,
                                 entries))
            below = [e for e, descend in frame.children
                     if descend and e.depth < walk.max_depth] if len(stack) < HELD else []
            stack.append((frame, below))
        frame = None
        while stack and not stack[-1][1]:
            done, _ = stack.pop()
            os.close(done.fd)
        if not stack:
            return
        parent, below = stack[-1]
        frame = walk._open_child(parent, below.pop())


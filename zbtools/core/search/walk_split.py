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
with or without the child. Given the consumer's ``render`` (a listing that only writes its
entries as JSON), the child also writes each subtree it finished whole, and the walk
(``Walk.written``) takes a subtree so written in one piece where it fits in the walk's limit and
holds no directory the walk has been in (``Ahead.subtree``): no entry of it is made, given or
written again in the walk's process. The child is stopped once the walk has passed everything
it could still scan, and in any case when the walk ends. It is forked, stopped and talked to as the
search's helper is (``helper``): only where that one may be, it writes nothing but its pipe,
and leaves with ``os._exit``.

Map: ``Ahead`` (the parent's side), ``scan_ahead`` (the child's, ``_Open`` a directory it is
in), ``may_split``, ``SPLIT_AFTER``, ``SPLIT_LEFT``, ``Render``.
"""

from __future__ import annotations

import os
import sys

from zbtools.core.search.entries import Entry, Frame, Rendered, walk_order
from zbtools.core.search.helper import Frames, fork_helper, send_frame, stop_helper, worker_count

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Protocol

    from zbtools.core.search.entries import Skipped
    from zbtools.core.search.layers import Print

    class Walk(Protocol):
        """What of ``walk.Walk`` the scanner uses (walk.py imports this module)."""

        skipped: Skipped
        max_depth: int
        loops: int
        render: Render | None
        _ahead: Ahead | None
        _visited: set[tuple[int, int]]

        def _scan(self, frame: Frame) -> None: ...

        def _open_child(self, parent: Frame, entry: Entry) -> Frame | None: ...

        def _counts(self) -> tuple[int, int, int, int]: ...

        def adopt_rules(self, frame: Frame, names: frozenset[str],
                        own: list[Print] | None = None) -> None: ...

    # the consumer's writer of a run of entries (one text for all of them)
    Render = Callable[[list[Entry]], str]

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
# a subtree the child finished, written (sent after those of its subdirectories): (rel, entries
# below it, counts left out below it, its (st_dev, st_ino), its pieces in walk order: a text
# of some of its entries as ``render`` wrote them, or ``(rel,)`` for a subdirectory's subtree)
Whole = tuple[str, int, tuple[int, int, int, int], tuple[int, int], list[str | tuple[str]]]


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
        self.wholes: dict[str, Whole] = {}
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

    def subtree(self, walk: Walk, rel: str, left: int) -> Rendered | None:
        """What is below the directory ``rel`` as the child wrote it whole, if it did, it gives
        at most ``left`` entries and none of its directories is one the walk has been in; its
        counts and directories become the walk's. None: the walk enters it itself."""
        self.drain()
        top = self.wholes.get(rel)
        if top is None or top[1] > left:
            return None
        texts: list[str] = []
        idents: list[tuple[int, int]] = []
        if not self._gather(top, texts, idents) or not walk._visited.isdisjoint(idents):
            return None
        walk._visited.update(idents)
        sk = walk.skipped
        left_out = top[2]
        sk.unreadable += left_out[0]
        sk.excluded_dirs += left_out[1]
        sk.hidden += left_out[2]
        sk.ignored += left_out[3]
        return Rendered(texts, top[1])

    def _gather(self, whole: Whole, texts: list[str], idents: list[tuple[int, int]]) -> bool:
        """``whole``'s texts and directories, its subdirectories' in their places; False when
        one is missing (never: the child sends a subtree after those below it)."""
        idents.append(whole[3])
        for piece in whole[4]:
            if isinstance(piece, str):
                texts.append(piece)
                continue
            below = self.wholes.get(piece[0])
            if below is None or not self._gather(below, texts, idents):
                return False
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
        scan: Scan | Whole
        try:
            for scan in self.frames.values():
                if len(scan) == 5:
                    self.wholes[scan[0]] = scan
                else:
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


class _Open:
    """A directory the child is in: its frame, the subdirectories still to enter (the last
    one first), and, where it writes subtrees (``render``), the counts before its scan, the
    entries below each subdirectory it finished whole, and whether it can still be whole."""

    __slots__ = ("before", "below", "finished", "frame", "whole")

    def __init__(self, frame: Frame, below: list[Entry], before: tuple[int, int, int, int]
                 ) -> None:
        self.frame = frame
        self.below = below
        self.before = before
        self.finished: dict[str, int] = {}
        self.whole = True


def scan_ahead(walk: Walk, top: Frame, out: int) -> None:
    """The child: walk below ``top`` (the start, scanned already) with the walk's rules,
    siblings in descending order, sending each directory's scan to ``out``, or with
    ``walk.render`` each subtree it finished whole instead (``_send_whole``; the walk scans
    the few directories the child is still in when they meet). Only this process's copy
    of ``walk`` changes; every directory is opened anew (a descriptor shared with the parent
    shares its reading place)."""
    from zbtools.core.files.workspace import DIR_FLAGS

    walk._ahead = None
    walk._visited = set()
    render = walk.render
    root = Frame(os.open(".", DIR_FLAGS, dir_fd=top.fd), top.rel, top.depth, top.layers)
    root.children = top.children
    stack: list[_Open] = []
    frame: Frame | None = root
    before = walk._counts()
    while True:
        if frame is not None:
            if frame is not root:
                before = walk._counts()
                walk._scan(frame)
            if frame is not root and render is None:
                after = walk._counts()
                entries: list[Sent] = [
                    (e.rel, e.name, e.kind, e.size, e.depth, e.target, e.mtime, descend)
                    for e, descend in frame.children]
                left_out = (after[0] - before[0], after[1] - before[1], after[2] - before[2],
                            after[3] - before[3])
                send_frame(out, (frame.rel, tuple(sorted(frame.ignore_names)), left_out,
                                 entries))
            below = [e for e, descend in frame.children
                     if descend and e.depth < walk.max_depth]
            opened = _Open(frame, below if len(stack) < HELD else [], before)
            if below and len(stack) >= HELD:
                opened.whole = False  # what is below it is not all walked
            stack.append(opened)
        frame = None
        while stack and not stack[-1].below:
            done = stack.pop()
            os.close(done.frame.fd)
            if render is None or not stack:
                continue
            if done.whole:  # (the root is never sent: the walk has it)
                stack[-1].finished[done.frame.rel] = _send_whole(walk, done, render, out)
            else:
                stack[-1].whole = False
        if not stack:
            return
        parent = stack[-1]
        loops = walk.loops
        frame = walk._open_child(parent.frame, parent.below.pop())
        if frame is None and walk.loops != loops:
            parent.whole = False  # a directory met again: which one the walk lists is its own


def _send_whole(walk: Walk, done: _Open, render: Render, out: int) -> int:
    """Send the subtree of the directory ``done`` the child finished whole (a ``Whole``); the
    number of entries below it."""
    pieces: list[str | tuple[str]] = []
    run: list[Entry] = []
    count = 0
    for entry, _ in done.frame.children:
        run.append(entry)
        below = done.finished.get(entry.rel)
        if below:
            pieces.append(render(run))
            run = []
            pieces.append((entry.rel,))
            count += below
    if run:
        pieces.append(render(run))
    count += len(done.frame.children)
    after = walk._counts()
    before = done.before
    left_out = (after[0] - before[0], after[1] - before[1], after[2] - before[2],
                after[3] - before[3])
    send_frame(out, (done.frame.rel, count, left_out, done.frame.ident, pieces))
    return count

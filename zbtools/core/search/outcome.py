"""What a search found, accounted file by file in walk order, whichever engine searched.

``Outcome`` is a search's answer (the files with hits, totals, what was skipped, whether a
limit or the deadline stopped it); ``record`` accounts one file's result into it and says
whether to go on, so limits, truncation and counts are the same on every engine. ``want`` and
``evaluate`` are the python engine's per-file step. The engines that search ahead of the
accounting (a forked helper, rg batches, the native engine's replay) give every file a
``Slot`` as the walk meets it and account the known prefix through a ``Replay``.
"""

from __future__ import annotations

from zbtools.core.search.engine import SearchTimeout

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from zbtools.core.search.engine import FileStatus, Hit, Searcher
    from zbtools.core.search.entries import Skipped


class FileHits:
    """The hits of one file (``count`` is its number of hits, possibly more than listed)."""

    __slots__ = ("count", "hits", "path")

    def __init__(self, path: str, hits: list[Hit], count: int) -> None:
        self.path = path
        self.hits = hits
        self.count = count


class Outcome:
    """What a search found, and what it skipped."""

    def __init__(self, path: str, skipped: Skipped, max_count: int | None = None) -> None:
        self.path = path
        self.max_count = max_count  # most hits recorded of one file (rg -m); None: all
        self.files: list[FileHits] = []
        self.total = 0  # hits found (lines, or matches in multiline mode)
        self.files_searched = 0
        self.truncated = False
        self.timed_out = False
        self.skipped = skipped
        self.loops = 0
        self.depth_limited = False  # directories beyond walk.MAX_DEPTH were not entered
        self.engine = "python"
        self.named = False  # the path named a file (searched whatever the walk's rules)
        self.first_too_large: str | None = None  # what a warning names of the files too large
        # told every file's result before it is accounted (the warm cache keeps them):
        # (rel, status, hits, whether hits is every hit of the file)
        self.observer: Callable[[str, FileStatus, list[Hit], bool], None] | None = None


def want(outcome: Outcome, limit: int, per_file: bool) -> int | None:
    """How many hits to collect from the next file (None: all, to count them)."""
    if per_file:
        return None
    return max(limit - outcome.total, 0) + 1


def evaluate(searcher: Searcher, dir_fd: int, name: str,
             wanted: int | None) -> tuple[FileStatus, list[Hit]]:
    """Search one file: its status and hits (at most ``wanted``); a timeout is a status."""
    try:
        return searcher.search_file(dir_fd, name, wanted)
    except SearchTimeout:
        return "timeout", []


def record(outcome: Outcome, rel: str, status: FileStatus, hits: list[Hit], limit: int,
           per_file: bool) -> bool:
    """Account one file's result into ``outcome`` in walk order; ``False``: stop here."""
    if outcome.observer is not None:
        # a file searched for fewer hits than it may hold was cut at the number wanted then,
        # which is at least what is still wanted now
        outcome.observer(rel, status, hits, per_file or len(hits) < limit - outcome.total + 1)
    if outcome.max_count is not None:
        # a file's hits past the cap are not results: as if the file held no more (the search
        # asked for at least as many as the cap, or for what the limit leaves, which is fewer)
        hits = hits[:outcome.max_count]
    used = len(outcome.files) if per_file else outcome.total
    if used >= limit:
        # One more searchable file with a match: the results are cut (files skipped past the
        # limit are not counted, the search stopped before them).
        outcome.truncated = status == "ok" and bool(hits)
        return not outcome.truncated
    if status == "timeout":
        outcome.timed_out = True
        return False
    if status != "ok":
        if status != "other":
            setattr(outcome.skipped, status, getattr(outcome.skipped, status) + 1)
        if status == "too_large" and outcome.first_too_large is None:
            outcome.first_too_large = rel
        return True
    outcome.files_searched += 1
    if not hits:
        return True
    if not per_file and outcome.total + len(hits) > limit:
        hits = hits[:limit - outcome.total]
        outcome.truncated = True
    outcome.total += len(hits)
    outcome.files.append(FileHits(rel, hits, len(hits)))
    return not outcome.truncated


class Slot:
    """One file of a parallel search, in walk order: filled in when its result is known."""

    __slots__ = ("fd", "hits", "mark", "rel", "status")

    def __init__(self, rel: str, mark: tuple[int, int, int, int]) -> None:
        self.rel = rel
        self.status: FileStatus | None = None
        self.hits: list[Hit] = []
        self.fd = -1  # the rg engine keeps the vetted file open here
        # The walk's own skip counts when it produced this file: a search that stops here
        # reports those, as a one-process search (whose walk stops here too) would.
        self.mark = mark


class Replay:
    """Results that arrive out of order, accounted in walk order through ``record``.

    The engines that search ahead of the accounting (a forked helper, rg batches) give every
    file a ``slot`` as the walk meets it and call ``advance`` when results come in; the known
    prefix is recorded, so limits, truncation and counts are those of the one-process search,
    and ``stopped`` tells the walk to end.
    """

    def __init__(self, outcome: Outcome, limit: int, per_file: bool) -> None:
        self.outcome = outcome
        self.limit = limit
        self.per_file = per_file
        self.queue: list[Slot] = []
        self.head = 0
        self.stopped = False
        self.files_unreadable = 0  # "unreadable" files recorded (the rest are the walk's)
        self.stop_mark: tuple[int, int, int, int] | None = None

    def slot(self, rel: str) -> Slot:
        sk = self.outcome.skipped
        slot = Slot(rel, (sk.ignored, sk.hidden, sk.excluded_dirs,
                          sk.unreadable - self.files_unreadable))
        self.queue.append(slot)
        return slot

    def advance(self) -> None:
        outcome = self.outcome
        queue = self.queue
        while not self.stopped and self.head < len(queue):
            slot = queue[self.head]
            if slot.status is None:
                break
            self.head += 1
            counted = outcome.skipped.unreadable
            go_on = record(outcome, slot.rel, slot.status, slot.hits, self.limit, self.per_file)
            self.files_unreadable += outcome.skipped.unreadable - counted
            if not go_on:
                self.stopped = True
                self.stop_mark = slot.mark
        if self.head > 4096:
            del queue[:self.head]
            self.head = 0

    def settle(self) -> None:
        """After the walk ended: the walk's skip counts as they were at the stopping file (the
        walk may have gone on before it learnt that the search had stopped)."""
        if self.stop_mark is not None:
            sk = self.outcome.skipped
            sk.ignored, sk.hidden, sk.excluded_dirs, walk_unreadable = self.stop_mark
            sk.unreadable = walk_unreadable + self.files_unreadable

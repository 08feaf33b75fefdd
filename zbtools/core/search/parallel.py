"""Search a big tree with two processes: this one walks and searches, a forked helper searches.

The walk stays in the calling process (it owns the ignore rules and the skipped counts). Once it
has met ``FORK_AFTER`` files, ``Pool`` forks one helper and hands it runs of files (at most
``RUN_FILES`` siblings of one directory) while the helper has fewer than ``BACKLOG`` runs queued;
the other runs are searched here, inline. Every file gets a slot in walk order; slots are
replayed through ``outcome.record`` as soon as all slots before them are known, so limits,
truncation and skipped counts are exactly those of a one-process search, and the search stops
(the helper is killed) as soon as the limit is met.

The helper opens each run's directory from the workspace root descriptor, one
``O_NOFOLLOW | O_DIRECTORY`` component at a time (the walk's own containment rule), and the files
in it with ``O_NOFOLLOW``; it never uses a path string. Messages are length-prefixed ``marshal``
frames over two pipes; the parent never blocks writing (runs are small and at most ``BACKLOG``
are in flight) and drains results between runs.

Failure modes: if the helper dies or sends garbage, the runs it did not answer are searched here,
so an error costs time, never results. No helper is forked with one usable CPU, without
``os.fork``, or with ``ZBTOOLS_SEARCH_WORKERS=1``. The helper exits when its request pipe closes
(the parent finished or died) and never writes to stdout or stderr.
"""

from __future__ import annotations

import os
import select

from zbtools.core.files.workspace import DIR_FLAGS
from zbtools.core.search.engine import Hit
from zbtools.core.search.helper import (
    Frames,
    fork_helper,
    read_frame,
    send_frame,
    stop_helper,
)
from zbtools.core.search.outcome import Replay, Slot, evaluate, want

TYPE_CHECKING = False
if TYPE_CHECKING:
    from zbtools.core.search.engine import FileStatus, Searcher
    from zbtools.core.search.entries import Entry
    from zbtools.core.search.outcome import Outcome
    from zbtools.core.search.request import SearchJob

FORK_AFTER = 200
RUN_FILES = 24
BACKLOG = 8


class _Run:
    __slots__ = ("directory", "names", "slots")

    def __init__(self, directory: str) -> None:
        self.directory = directory
        self.names: list[str] = []
        self.slots: list[Slot] = []


class Pool:
    """The python engine's two-process search (a ``warm.FileSearch``); see the module
    docstring."""

    def __init__(self, job: SearchJob, outcome: Outcome) -> None:
        self.workspace = job.workspace
        self.searcher = job.searcher
        self.outcome = outcome
        self.limit = job.request.limit
        self.per_file = job.request.per_file
        self.replay = Replay(outcome, self.limit, self.per_file)
        self.files_seen = 0
        self.pid = 0
        self.to_child = -1
        self.from_child = -1
        self.inbox = Frames()
        self.sent: dict[int, _Run] = {}
        self.next_id = 0
        self.run: _Run | None = None  # the helper's run being filled
        self.run_here: str | None = None  # the directory of the run searched here
        self.here_len = 0

    @property
    def stopped(self) -> bool:
        return self.replay.stopped

    # -- the caller's side ---------------------------------------------------------------

    def known(self, rel: str, status: FileStatus, hits: list[Hit]) -> bool:
        self.done_here(rel, status, hits)
        return not self.stopped

    def search(self, dir_fd: int, entry: Entry) -> bool:
        if not self.take(entry.rel, entry.name):
            status, hits = evaluate(self.searcher, dir_fd, entry.name,
                                    want(self.outcome, self.limit, self.per_file))
            self.done_here(entry.rel, status, hits)
        return not self.stopped

    def take(self, rel: str, name: str) -> bool:
        """Give a file to the helper (True) or leave it to the caller (False, then
        ``done_here``)."""
        self.files_seen += 1
        if self.pid == 0 and (self.files_seen <= FORK_AFTER or not self._fork()):
            return False
        directory = rel[:len(rel) - len(name) - 1] if len(rel) > len(name) else ""
        run = self.run
        if run is not None and (run.directory != directory or len(run.names) >= RUN_FILES):
            self._send(run)
            run = self.run = None
        if run is None and self.run_here is not None and (
                self.run_here != directory or self.here_len >= RUN_FILES):
            self.run_here = None
        if run is None and self.run_here is None:
            self._poll(0)
            if len(self.sent) < BACKLOG and self.pid > 0:
                run = self.run = _Run(directory)
            else:
                self.run_here = directory
                self.here_len = 0
        if run is not None:
            run.names.append(name)
            run.slots.append(self.replay.slot(rel))
            return True
        self.here_len += 1
        return False

    def done_here(self, rel: str, status: FileStatus, hits: list[Hit]) -> None:
        slot = self.replay.slot(rel)
        slot.status = status
        slot.hits = hits
        self.replay.advance()

    def finish(self) -> None:
        """After the walk: collect every outstanding answer and replay the rest."""
        if self.run is not None and not self.stopped:
            self._send(self.run)
        self.run = None
        if self.to_child >= 0:
            os.close(self.to_child)
            self.to_child = -1
        while self.sent and not self.stopped:
            if not self._poll(None):
                self._search_orphans()
        self.replay.advance()
        self.replay.settle()

    def close(self) -> None:
        for fd in (self.to_child, self.from_child):
            if fd >= 0:
                os.close(fd)
        self.to_child = self.from_child = -1
        if self.pid > 0:
            stop_helper(self.pid)
            self.pid = -1

    # -- the helper ----------------------------------------------------------------------

    def _fork(self) -> bool:
        try:
            req_r, req_w = os.pipe2(os.O_CLOEXEC)
            res_r, res_w = os.pipe2(os.O_CLOEXEC)
        except OSError:
            self.pid = -1
            return False
        pid = fork_helper(lambda: _serve(self.workspace.root_fd, self.searcher, req_r, res_w),
                          close=(req_w, res_r))
        if pid is None:
            for fd in (req_r, req_w, res_r, res_w):
                os.close(fd)
            self.pid = -1
            return False
        os.close(req_r)
        os.close(res_w)
        self.pid = pid
        self.to_child = req_w
        self.from_child = res_r
        return True

    def _send(self, run: _Run) -> None:
        ident = self.next_id
        self.next_id += 1
        wanted = None if self.per_file else self.limit + 1
        self.sent[ident] = run
        try:
            send_frame(self.to_child, (ident, run.directory, run.names, wanted))
        except OSError:
            self._search_orphans()

    def _poll(self, timeout: float | None) -> bool:
        """Read and apply the helper's answers; False when it is gone (EOF or garbage)."""
        if self.from_child < 0:
            return False
        while True:
            ready, _, _ = select.select([self.from_child], [], [], timeout)
            if not ready:
                return True
            try:
                chunk = os.read(self.from_child, 1 << 20)
            except OSError:
                chunk = b""
            if not chunk:
                os.close(self.from_child)
                self.from_child = -1
                return False
            self.inbox.feed(chunk)
            if not self._unpack():
                return False
            if timeout is None:
                return True
            timeout = 0

    def _unpack(self) -> bool:
        try:
            for ident, results in self.inbox.values():
                run = self.sent.pop(ident)
                for slot, (status, raw_hits) in zip(run.slots, results, strict=True):
                    slot.status = status
                    slot.hits = [Hit(*h) for h in raw_hits]
        except (ValueError, EOFError, TypeError, KeyError):
            self.inbox.clear()
            return False
        self.replay.advance()
        return True

    def _search_orphans(self) -> None:
        """The helper is gone: search what it did not answer here."""
        for run in list(self.sent.values()):
            fd = _open_directory(self.workspace.root_fd, run.directory)
            for name, slot in zip(run.names, run.slots, strict=True):
                if fd < 0:
                    slot.status = "unreadable"
                    continue
                slot.status, slot.hits = evaluate(self.searcher, fd, name, want_all(self))
            if fd >= 0:
                os.close(fd)
        self.sent.clear()
        self.replay.advance()


def want_all(pool: Pool) -> int | None:
    return None if pool.per_file else pool.limit + 1


def _open_directory(root_fd: int, directory: str) -> int:
    """A descriptor of ``directory`` (relative to the root, or absolute in another root: a root's
    real path has no symlink), one no-follow hop at a time."""
    try:
        # a directory of another workspace root is shown (and given) as an absolute path
        fd = os.open("/", DIR_FLAGS) if directory.startswith("/") else os.dup(root_fd)
    except OSError:
        return -1
    directory = directory.lstrip("/")
    if not directory:
        return fd
    for part in directory.split("/"):
        try:
            nxt = os.open(part, DIR_FLAGS, dir_fd=fd)
        except OSError:
            os.close(fd)
            return -1
        os.close(fd)
        fd = nxt
    return fd


def _serve(root_fd: int, searcher: Searcher, requests: int, results: int) -> None:
    """The helper's loop: search each run it is sent, answer with the statuses and hits."""
    timed_out = False
    while (request := read_frame(requests)) is not None:
        ident, directory, names, wanted = request
        answers: list[tuple[str, list[tuple[int, list[str], list[str], list[str]]]]] = []
        fd = _open_directory(root_fd, directory)
        for name in names:
            if timed_out:
                answers.append(("timeout", []))
                continue
            if fd < 0:
                answers.append(("unreadable", []))
                continue
            status, hits = evaluate(searcher, fd, name, wanted)
            timed_out = status == "timeout"
            answers.append((status, [(h.line, h.lines, h.before, h.after) for h in hits]))
        if fd >= 0:
            os.close(fd)
        send_frame(results, (ident, answers))

"""The one loop of the engines that walk in python, and its use of the session cache.

``walk_files`` walks a directory search's tree (``walk.Walk``, with the session's ``cache``),
keeps the files the path filter accepts and hands each one, in walk order, to the engine's
``FileSearch``: its cached result when the file is unchanged (``known``), else the file itself
(``search``). The python engine (``tree.PythonEngine``: inline or with a forked helper,
``parallel.Pool``) and the rg engine (``ripgrep.RgSearch``) differ only in their ``FileSearch``.

``WarmSearch`` is the cache's part. For each file the walk yields, ``lookup`` stats it (unless
the walk's change monitor vouches for the signature it has) and returns its kept result when the
file is unchanged; otherwise the file is searched as usual and ``observe`` (the outcome's
observer, told each result before it is accounted) keeps the result when it is complete (not cut
at the number of hits wanted) and the file had settled before it was read. Failure modes: none
of its own; a file that cannot be stat'ed is simply searched.
"""

from __future__ import annotations

import os
import stat

from zbtools.core.search.cache import SETTLE_NS, now_ns, signature, watched_signature

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Protocol

    from zbtools.core.search.cache import SearchCache
    from zbtools.core.search.engine import FileStatus, Hit, Searcher
    from zbtools.core.search.entries import Entry
    from zbtools.core.search.outcome import Outcome
    from zbtools.core.search.request import SearchJob
    from zbtools.core.search.walk import Walk

    class FileSearch(Protocol):
        """What an engine does with the files ``walk_files`` hands it; each call returns False
        when the search stops there (a limit met, the deadline passed)."""

        def known(self, rel: str, status: FileStatus, hits: list[Hit]) -> bool:
            """A file whose result the session cache still holds."""
            ...

        def search(self, dir_fd: int, entry: Entry) -> bool:
            """A file to search (``entry.name`` in the directory open on ``dir_fd``)."""
            ...

        def finish(self) -> None:
            """After the walk: account what is still outstanding."""
            ...

        def close(self) -> None:
            """Release processes and descriptors, whatever happened."""
            ...


def walk_files(job: SearchJob, engine: str,
               start: Callable[[Outcome, bool], FileSearch]) -> Outcome:
    """Search a directory: ``start(outcome, repeated)`` makes the engine's ``FileSearch``
    (``repeated``: the same search ran before in this session, so most results are cached)."""
    from zbtools.core.search.globs import files_to_search
    from zbtools.core.search.outcome import Outcome
    from zbtools.core.search.walk import Walk

    request = job.request
    walk = Walk(job.workspace, request.path, max_depth=10_000, max_entries=10**9,
                include_hidden=request.include_hidden, include_ignored=request.include_ignored,
                exclude_dirs=request.exclude_dirs, with_stat=False, cache=job.cache)
    outcome = Outcome(walk.rel, walk.skipped, request.max_count)
    outcome.engine = engine
    warm = WarmSearch(walk.cache, job.searcher, outcome) if walk.cache is not None else None
    tick = job.tick
    try:
        files = start(outcome, warm is not None and warm.repeated)
    except BaseException:
        walk.close()
        raise
    try:
        for entry in files_to_search(walk, job.path_filter):
            if tick is not None:
                tick(outcome.files_searched)
            known = warm.lookup(walk, entry) if warm is not None else None
            if known is not None:
                if not files.known(entry.rel, *known):
                    break
            elif not files.search(walk.parent_fd, entry):
                break
        files.finish()
    finally:
        walk.close()
        files.close()
    outcome.loops = walk.loops
    outcome.depth_limited = walk.depth_limited
    return outcome


class WarmSearch:
    """A search's use of the session cache: files' results still valid are taken from it, and
    new complete results of settled files are kept (see ``zbtools.core.search.cache``)."""

    def __init__(self, cache: SearchCache, searcher: Searcher, outcome: Outcome) -> None:
        self.cache = cache
        self.key = searcher.cache_key
        self.now = now_ns()
        self.pending: dict[str, tuple[int, int, int, int, int]] = {}
        # a search run before in this session: most files' results are known, so a helper
        # process would only add its cost (the few changed files are read here)
        self.repeated = self.key in cache.searches
        if len(cache.searches) > 1024:
            cache.searches.clear()
        cache.searches.add(self.key)
        outcome.observer = self.observe

    def lookup(self, walk: Walk, entry: Entry) -> tuple[FileStatus, list[Hit]] | None:
        sig = entry.sig  # known current (the walk is watched, see watch.py): no stat needed
        if sig is None:
            try:
                st = os.stat(entry.name, dir_fd=walk.parent_fd, follow_symlinks=False)
            except OSError:
                return None
            if not stat.S_ISREG(st.st_mode):
                return None
            sig = signature(st)
            if walk.watched:  # known current from now on: size and mtime with it
                entry.size = st.st_size
                entry.mtime = st.st_mtime
                entry.sig = watched_signature(st, sig)
        known: tuple[FileStatus, list[Hit]] | None = self.cache.get(
            ("grep", sig[0], sig[1], self.key), sig)
        if known is None and max(sig[3], sig[4]) < self.now - SETTLE_NS:  # settled
            self.pending[entry.rel] = sig
        return known

    def observe(self, rel: str, status: FileStatus, hits: list[Hit], complete: bool) -> None:
        sig = self.pending.pop(rel, None)
        if sig is None or not complete or status not in ("ok", "binary", "too_large"):
            return
        cost = sum(sum(len(line) for line in (*h.lines, *h.before, *h.after)) * 2 + 100
                   for h in hits)
        self.cache.put(("grep", sig[0], sig[1], self.key), sig, (status, hits), cost)

"""A search's use of the session cache (``zbtools.core.search.cache``), for both engines.

For each file the walk yields, ``lookup`` stats it (unless the walk's change monitor vouches
for the signature it has) and returns its kept result when the file is
unchanged; otherwise the file is searched as usual and ``observe`` (the outcome's observer, told
each result before it is accounted) keeps the result when it is complete (not cut at the number of
hits wanted) and the file had settled before it was read. Failure modes: none of its own; a file
that cannot be stat'ed is simply searched.
"""

from __future__ import annotations

import os
import stat

from zbtools.core.search.cache import SETTLE_NS, now_ns, signature, watched_signature

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from zbtools.core.files.workspace import Workspace
    from zbtools.core.search.cache import SearchCache
    from zbtools.core.search.engine import FileStatus, Hit, Outcome, Searcher
    from zbtools.core.search.walk import Entry, Walk


def open_search(workspace: Workspace, path: str, searcher: Searcher, *, include_hidden: bool,
                include_ignored: bool, exclude_dirs: Sequence[str] | None,
                cache: SearchCache | None) -> tuple[Walk, Outcome, WarmSearch | None]:
    """The walk of a directory search, its outcome, and its use of the session cache (None
    without one): what the python and rg engines start from."""
    from zbtools.core.search.engine import Outcome
    from zbtools.core.search.walk import Walk

    walk = Walk(workspace, path, max_depth=10_000, max_entries=10**9,
                include_hidden=include_hidden, include_ignored=include_ignored,
                exclude_dirs=exclude_dirs, with_stat=False, cache=cache)
    outcome = Outcome(walk.rel, walk.skipped)
    warm = WarmSearch(walk.cache, searcher, outcome) if walk.cache is not None else None
    return walk, outcome, warm


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

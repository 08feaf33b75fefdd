"""Searching a file or a tree: the path every search takes, one process, two, or ripgrep.

``search_tree`` searches one file (a path naming a file is searched whatever the ignore rules
say) or walks a directory (``walk.Walk``: ignore rules, hidden and excluded
entries), in walk order. It hands runs of files to a forked helper on big trees (``parallel``), or
the files the walk picks to ripgrep when the rg engine is asked for (``ripgrep``); the matching
itself is ``engine``'s. The results, their order, the limits and the skipped counts are the same on
every path.

Failure modes: ``special_file`` (the path names a device, a FIFO, ...), ``regex_timeout`` (the
deadline passed before a single file was searched), and what ``Workspace.resolve`` raises
(``not_found``, ``outside_workspace``).
"""

from __future__ import annotations

import gc
import stat

from zbtools.contract import ToolError
from zbtools.core.search.engine import (
    Outcome,
    SearchTimeout,
    evaluate,
    files_to_search,
    record,
    want,
)
from zbtools.core.search.warm import open_search

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from zbtools.core.files.workspace import Workspace
    from zbtools.core.search.cache import SearchCache
    from zbtools.core.search.engine import PathFilter, RgRequest, Searcher


def search_tree(workspace: Workspace, searcher: Searcher, path: str, path_filter: PathFilter,
                *, limit: int, per_file: bool, include_hidden: bool = False,
                include_ignored: bool = False,
                exclude_dirs: Sequence[str] | None = None, workers: int | None = None,
                rg: RgRequest | None = None, cache: SearchCache | None = None,
                tick: Callable[[int], None] | None = None) -> Outcome:
    """Search ``path`` (a file or a directory) until ``limit`` hits, or ``limit`` files when
    ``per_file`` (files_with_matches and count modes), in walk order (sorted, pre-order).

    A big tree is searched by this process and a forked helper together (``parallel``);
    the results are the same, in the same order. ``workers`` (default: ``ZBTOOLS_SEARCH_WORKERS``
    or the usable CPUs, at most 2) of 1 keeps it to one process. With ``rg`` (the rg engine,
    ``ripgrep``), ripgrep searches the files the walk picks. With a ``cache`` (a long-lived
    session's), directory listings and files' results that are still valid are taken from it
    and new ones kept (the rg engine keeps nothing: it is not used with a cache).

    ``tick``, if given, is called with the number of files searched so far before each file of
    a directory; it may raise (a cancelled call) to stop the search.

    Raises ``regex_timeout`` when the deadline passed before a single file was searched.
    """
    from zbtools.core.search.walk import Skipped

    with workspace.resolve(path) as res:
        if res.st is not None and not stat.S_ISDIR(res.st.st_mode):
            outcome = Outcome(res.rel, Skipped())
            outcome.named = True
            if not stat.S_ISREG(res.st.st_mode):
                from zbtools.core.files.fsops import entry_kind

                raise ToolError("special_file", f"{path}: is a {entry_kind(res.st.st_mode)}, "
                                "not a regular file", details={"path": path})
            name = res.name if res.name is not None else "."
            try:
                status, hits = searcher.search_file(res.dir_fd, name,
                                                    want(outcome, limit, per_file))
            except SearchTimeout:
                status, hits = "timeout", []
            record(outcome, res.rel, status, hits, limit, per_file)
            return finish(outcome)
    if rg is not None and rg.native:
        if cache is None:  # a long-lived session's warm walk is faster than any process
            from zbtools.core.search.native import search_tree_native

            native = search_tree_native(
                workspace, rg, searcher, path, path_filter, limit=limit, per_file=per_file,
                include_hidden=include_hidden, include_ignored=include_ignored,
                exclude_dirs=exclude_dirs, tick=tick)
            if native is not None:
                return finish(native)
        rg = rg.fallback
    searcher.compile()  # before any file is read: an invalid pattern fails the call here
    if rg is not None:
        from zbtools.core.search.ripgrep import search_tree_rg

        return finish(search_tree_rg(
            workspace, rg, searcher, path, path_filter, limit=limit, per_file=per_file,
            include_hidden=include_hidden, include_ignored=include_ignored,
            exclude_dirs=exclude_dirs, cache=cache, tick=tick))
    walk, outcome, warm = open_search(workspace, path, searcher, include_hidden=include_hidden,
                                      include_ignored=include_ignored,
                                      exclude_dirs=exclude_dirs, cache=cache)
    from zbtools.core.search.parallel import Pool, worker_count

    pool = Pool(workspace, searcher, outcome, limit, per_file) \
        if worker_count(workers) > 1 and not (warm is not None and warm.repeated) else None
    # the search makes objects by the hundred thousand, and a session's cache keeps as many
    # alive: a cyclic collection would scan them all again and again (a fifth of a first
    # search of a 200k-file tree in a session), to free nothing
    paused_gc = gc.isenabled()
    if paused_gc:
        gc.disable()
    try:
        for entry in files_to_search(walk, path_filter):
            if tick is not None:
                tick(outcome.files_searched)
            known = warm.lookup(walk, entry) if warm is not None else None
            if known is not None:
                if pool is not None:
                    pool.done_here(entry.rel, *known)
                    if pool.stopped:
                        break
                elif not record(outcome, entry.rel, *known, limit, per_file):
                    break
                continue
            if pool is not None and pool.take(entry.rel, entry.name):
                if pool.stopped:
                    break
                continue
            status, hits = evaluate(searcher, walk.parent_fd, entry.name,
                                    want(outcome, limit, per_file))
            if pool is not None:
                pool.done_here(entry.rel, status, hits)
            elif not record(outcome, entry.rel, status, hits, limit, per_file):
                break
            if pool is not None and pool.stopped:
                break
        if pool is not None:
            pool.finish()
            pool.replay.settle()
    finally:
        if paused_gc:
            gc.enable()
        walk.close()
        if pool is not None:
            pool.close()
    outcome.loops = walk.loops
    outcome.depth_limited = walk.depth_limited
    return finish(outcome)


def finish(outcome: Outcome) -> Outcome:
    if outcome.timed_out and outcome.files_searched == 0:
        raise ToolError("regex_timeout", "the pattern ran out of time before any file was "
                        "searched", hint="simplify the pattern (nested quantifiers such as "
                        "(a+)+ backtrack exponentially), search fewer files, or raise timeout",
                        details={"path": outcome.path})
    return outcome

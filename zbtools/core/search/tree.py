"""Searching a file or a tree: the path every search takes, and the python engine.

``search(job, engines)`` searches one file (a path naming a file is searched whatever the ignore
rules say) or hands a directory to a chain of engines (``request.Engine``), the first that does
not decline answering: ``native.NativeEngine`` (ripgrep walks and matches), ``ripgrep.RgEngine``
(the files our walk picks go to ripgrep) and ``PythonEngine``, which never declines and ends
every chain. ``PythonEngine`` walks (``warm.walk_files``: ignore rules, hidden and excluded
entries, the session's cache) and matches with ``engine.Searcher``, in this process
(``Inline``) or, on a big tree, with a forked helper (``parallel.Pool``). The results, their
order, the limits and the skipped counts are the same on every path.

Failure modes: ``special_file`` (the path names a device, a FIFO, ...), ``regex_timeout`` (the
deadline passed before a single file was searched), and what ``Workspace.resolve`` raises
(``not_found``, ``outside_workspace``).
"""

from __future__ import annotations

import stat

from zbtools.contract import ToolError
from zbtools.core.call.collector import Paused
from zbtools.core.search.outcome import Outcome, evaluate, record, want

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from zbtools.core.search.engine import FileStatus, Hit
    from zbtools.core.search.entries import Entry
    from zbtools.core.search.parallel import Pool
    from zbtools.core.search.request import Engine, SearchJob


class PythonEngine:
    """Our walk and our matcher; see the module docstring. ``workers`` (default:
    ``ZBTOOLS_SEARCH_WORKERS`` or the usable CPUs, at most 2) of 1 keeps it to one process."""

    name = "python"

    def __init__(self, workers: int | None = None) -> None:
        self.workers = workers

    def search(self, job: SearchJob) -> Outcome:
        from zbtools.core.search.helper import worker_count
        from zbtools.core.search.parallel import Pool
        from zbtools.core.search.warm import walk_files

        job.searcher.compile()  # before any file is read: an invalid pattern fails the call here
        two = worker_count(self.workers) > 1

        def start(outcome: Outcome, repeated: bool) -> Inline | Pool:
            # a repeated search's results are mostly cached: a helper would only add its cost
            return Pool(job, outcome) if two and not repeated else Inline(job, outcome)

        # the search makes objects by the hundred thousand, and a session's cache keeps as many
        # alive
        with Paused():
            return walk_files(job, self.name, start)


class Inline:
    """The python engine in this process alone: each file searched and accounted as the walk
    meets it (``warm.FileSearch``)."""

    def __init__(self, job: SearchJob, outcome: Outcome) -> None:
        self.searcher = job.searcher
        self.outcome = outcome
        self.limit = job.request.limit
        self.per_file = job.request.per_file

    def known(self, rel: str, status: FileStatus, hits: list[Hit]) -> bool:
        return record(self.outcome, rel, status, hits, self.limit, self.per_file)

    def search(self, dir_fd: int, entry: Entry) -> bool:
        status, hits = evaluate(self.searcher, dir_fd, entry.name,
                                want(self.outcome, self.limit, self.per_file))
        return record(self.outcome, entry.rel, status, hits, self.limit, self.per_file)

    def finish(self) -> None:
        pass

    def close(self) -> None:
        pass


PYTHON = PythonEngine()


def search(job: SearchJob, engines: Sequence[Engine] = (PYTHON,)) -> Outcome:
    """Search ``job.request.path`` (a file or a directory) until ``limit`` hits, or ``limit``
    files when ``per_file`` (files_with_matches and count modes), in walk order (sorted,
    pre-order), with the first engine of ``engines`` that does not decline (the chain ends with
    a ``PythonEngine``).

    Raises ``regex_timeout`` when the deadline passed before a single file was searched.
    """
    from zbtools.core.search.entries import Skipped

    request = job.request
    with job.workspace.resolve(request.path) as res:
        if res.st is not None and not stat.S_ISDIR(res.st.st_mode):
            outcome = Outcome(res.rel, Skipped(), request.max_count)
            outcome.named = True
            if not stat.S_ISREG(res.st.st_mode):
                from zbtools.core.files.fsops import entry_kind

                raise ToolError("special_file", f"{request.path}: is a "
                                f"{entry_kind(res.st.st_mode)}, not a regular file",
                                details={"path": request.path})
            name = res.name if res.name is not None else "."
            status, hits = evaluate(job.searcher, res.dir_fd, name,
                                    want(outcome, request.limit, request.per_file))
            record(outcome, res.rel, status, hits, request.limit, request.per_file)
            return finish(outcome)
    for engine in engines:
        found = engine.search(job)
        if found is not None:
            return finish(found)
    raise ValueError("every engine declined: a chain ends with a PythonEngine")


def finish(outcome: Outcome) -> Outcome:
    if outcome.timed_out and outcome.files_searched == 0:
        raise ToolError("regex_timeout", "the pattern ran out of time before any file was "
                        "searched", hint="simplify the pattern (nested quantifiers such as "
                        "(a+)+ backtrack exponentially), search fewer files, or raise timeout",
                        details={"path": outcome.path})
    return outcome

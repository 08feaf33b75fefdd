"""What a search asks for, and the interface of the engines that answer it.

A tool turns its parameters into one ``SearchRequest`` (a frozen value: the pattern and how to
read it, where to search and which files, how many results, the context lines, the caps), wraps
it in a ``SearchJob`` with the call's surroundings (the workspace, the session's cache, the
progress ticker) and hands the job to ``tree.search`` with a chain of engines. Every engine has
the one method of ``Engine``: ``search(job)`` returns the ``outcome.Outcome`` of a directory
search, or None when it declines (the next engine in the chain answers). The engines:
``tree.PythonEngine`` (our walk and matcher, with a forked helper on big trees),
``ripgrep.RgEngine`` (our walk, ripgrep matches) and ``native.NativeEngine`` (ripgrep walks and
matches); the two that walk in python share one loop and its warm cache (``warm.walk_files``).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Protocol

    from zbtools.core.files.workspace import Workspace
    from zbtools.core.search.cache import SearchCache
    from zbtools.core.search.outcome import Outcome

    class Engine(Protocol):
        """Who walks and matches (see the module docstring)."""

        name: str  # python, rg or native: what the result's ``engine`` says

        def search(self, job: SearchJob) -> Outcome | None:
            """The outcome of searching the directory ``job.request.path``, or None: this
            engine declines (it could not answer exactly as the python engine would)."""
            ...


class SearchRequest:
    """One search, as every engine takes it: a frozen value, keyword-built (not a dataclass:
    start-up cost, see ``core.call.args``)."""

    __slots__ = ("after", "before", "exclude_dirs", "fixed_strings", "globs", "ignore_case",
                 "include_hidden", "include_ignored", "limit", "max_count", "max_file_bytes",
                 "multiline", "path", "pattern", "per_file", "timeout", "types", "word")

    pattern: str
    limit: int  # most hits, or most files when per_file
    path: str  # a file or a directory, relative to the workspace root
    globs: Sequence[str]  # split (``globs.split_globs``); "!" excludes
    types: Sequence[str]  # file types, as ``rg --type-list`` names them
    ignore_case: bool
    fixed_strings: bool
    word: bool  # whole words only, as rg -w
    multiline: bool
    before: int  # context lines
    after: int
    per_file: bool  # files_with_matches and count modes
    max_count: int | None  # most hits of one file (rg -m); None: no cap
    max_file_bytes: int | None  # None: every file is searched, as rg does
    timeout: float  # seconds for the whole search, from the job's start
    include_hidden: bool
    include_ignored: bool
    exclude_dirs: Sequence[str] | None  # None: walk.DEFAULT_EXCLUDED_DIRS

    def __init__(self, *, pattern: str, limit: int, path: str = ".", globs: Sequence[str] = (),
                 types: Sequence[str] = (), ignore_case: bool = False,
                 fixed_strings: bool = False, word: bool = False,
                 multiline: bool = False, before: int = 0,
                 after: int = 0, per_file: bool = False, max_count: int | None = None,
                 max_file_bytes: int | None = None,
                 timeout: float = 10.0, include_hidden: bool = False,
                 include_ignored: bool = False,
                 exclude_dirs: Sequence[str] | None = None) -> None:
        values = locals()
        for name in self.__slots__:
            object.__setattr__(self, name, values[name])

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"SearchRequest is frozen: cannot set {name}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"SearchRequest is frozen: cannot delete {name}")

    def __repr__(self) -> str:
        return "SearchRequest(" + ", ".join(f"{name}={getattr(self, name)!r}"
                                           for name in self.__slots__) + ")"


class SearchJob:
    """One search under way: its request, what every engine derives from it alike (the
    ``searcher``, whose deadline they share, and the ``path_filter``) and the call's
    surroundings. Building it fails on an unknown file type (``invalid_arguments``)."""

    def __init__(self, workspace: Workspace, request: SearchRequest, *,
                 cache: SearchCache | None = None,
                 tick: Callable[[int], None] | None = None) -> None:
        from zbtools.core.search.engine import Searcher
        from zbtools.core.search.globs import PathFilter

        self.workspace = workspace
        self.request = request
        self.searcher = Searcher(request.pattern, ignore_case=request.ignore_case,
                                 fixed_strings=request.fixed_strings,
                                 multiline=request.multiline, before=request.before,
                                 after=request.after, timeout=request.timeout,
                                 max_file_bytes=request.max_file_bytes, word=request.word)
        self.path_filter = PathFilter(list(request.globs), list(request.types))
        self.cache = cache  # a long-lived session's (batch, mcp), or None
        # called with the number of files searched so far before each file; may raise (a
        # cancelled call) to stop the search
        self.tick = tick

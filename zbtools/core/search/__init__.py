"""Listing and searching a workspace.

A tool builds a ``request.SearchRequest`` and hands it, as a ``request.SearchJob``, to
``tree.search`` with a chain of engines (``request.Engine``): ``tree.PythonEngine``,
``ripgrep.RgEngine``, ``native.NativeEngine``. Map: ``request`` (the request, the job, the
engine interface), ``tree`` (the search's one path, the python engine), ``warm`` (the one
walk-and-cache loop), ``engine`` (patterns and one file's matcher), ``globs`` (which files),
``outcome`` (the answer, accounted in walk order), ``parallel`` (a second process for big
trees), ``ripgrep`` and ``native`` with ``native_plan`` and ``native_log`` (ripgrep
engines); the walk: ``walk`` (the one directory walker), ``entries`` (what it yields and
counts), ``layers`` and ``ignore`` (ignore files and their rules), ``walk_warm``, ``cache``,
``recording`` and ``watch`` (a long-lived session's warm cache); ``filetypes`` (rg's types).

May import ``zbtools.core.files`` and ``zbtools.core.call``.
"""

from zbtools.core import lazy_names

TYPE_CHECKING = False
if TYPE_CHECKING:
    from zbtools.core.search.cache import SearchCache
    from zbtools.core.search.engine import MAX_STREAM_LINE, compile_pattern, required_literal
    from zbtools.core.search.entries import (
        DEFAULT_EXCLUDED_DIRS,
        MAX_DEPTH,
        Entry,
        Rendered,
        Skipped,
        WalkSwitches,
        derived,
        walk_notes,
    )
    from zbtools.core.search.globs import PathFilter, split_globs
    from zbtools.core.search.native import NativeEngine
    from zbtools.core.search.native_plan import plan
    from zbtools.core.search.outcome import Outcome
    from zbtools.core.search.request import Engine, SearchJob, SearchRequest
    from zbtools.core.search.ripgrep import RgEngine, compatible, find_rg
    from zbtools.core.search.tree import PYTHON, search
    from zbtools.core.search.walk import Walk

# The public names, each with the submodule to import it from (see zbtools.core.lazy_names).
__all__ = ["DEFAULT_EXCLUDED_DIRS", "MAX_DEPTH", "MAX_STREAM_LINE", "PYTHON", "Engine", "Entry",
           "NativeEngine", "Outcome", "PathFilter", "Rendered", "RgEngine", "SearchCache",
           "SearchJob",
           "SearchRequest", "Skipped", "Walk", "WalkSwitches", "compatible", "compile_pattern",
           "derived", "find_rg", "plan", "required_literal", "search", "split_globs", "walk_notes"]

_SUBMODULE = {"DEFAULT_EXCLUDED_DIRS": "entries", "MAX_DEPTH": "entries",
              "MAX_STREAM_LINE": "engine", "PYTHON": "tree", "Engine": "request",
              "Entry": "entries", "NativeEngine": "native", "Outcome": "outcome",
              "PathFilter": "globs", "Rendered": "entries", "RgEngine": "ripgrep",
              "SearchCache": "cache",
              "SearchJob": "request", "SearchRequest": "request", "Skipped": "entries",
              "Walk": "walk", "WalkSwitches": "entries", "compatible": "ripgrep",
              "compile_pattern": "engine", "derived": "entries", "find_rg": "ripgrep",
              "plan": "native_plan", "required_literal": "engine", "search": "tree",
              "split_globs": "globs", "walk_notes": "entries"}

__getattr__ = lazy_names(__name__, _SUBMODULE, globals())

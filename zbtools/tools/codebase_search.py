"""Search the codebase for a regular expression and show each match with 2 lines of context.

A simpler face of grep_search for quick lookups: ``query`` is a regular expression (ripgrep's
syntax), searched line by line in every text file below ``path`` (default ``.``, the workspace
root); ``file_pattern`` keeps only the files whose base name matches one of its comma-separated
globs (``*.rs,*.toml``). Each result has ``path``, ``line``, ``text`` and the 2 lines
``before`` and ``after`` it, in path order (sorted, the same on every run). Text output is
ripgrep's ``path:line:text`` with context lines as ``path-line-text``. Hidden files, files
matched by ``.gitignore``/``.ignore``/``.rgignore``, the default excluded directories (``.git``,
``node_modules``...) and binary files are not searched but counted in ``skipped``; every text
file is searched whatever its size (big ones in blocks, in bounded memory), and a file that
could not be read makes ``total_is_lower_bound`` true, with a warning; use grep_search for more
control (case, literal text, output modes, context size).

Limits and failure modes: at most ``max_results`` matching lines (default 50, at most 1000;
``truncated`` tells); lines over 500 characters are cut with a marker; the search stops after
10 seconds with ``timed_out: true`` (or ``regex_timeout`` if no file could be searched).
Errors: ``regex_error`` (invalid pattern, with its position), ``not_found``,
``outside_workspace``.
"""

from __future__ import annotations

from zbtools.core.call.args import Struct, field
from zbtools.toolkit.grep import (
    GrepResult,
    found,
    matched_paths,
    render,
    to_result,
    warn_skips,
    warn_walk_notes,
)
from zbtools.toolkit.params import DIR_ALIASES
from zbtools.toolspec import ToolSpec

TYPE_CHECKING = False
if TYPE_CHECKING:
    from zbtools.core.call.context import Context

CONTEXT_LINES = 2
TIMEOUT = 10.0


class Params(Struct):
    query: str = field(aliases=("pattern", "regex"), help="Regular expression to search for")
    file_pattern: str | None = field(default=None, aliases=("glob", "include"),
                                     help="Only files whose base name matches one of these "
                                     "comma-separated globs, e.g. '*.rs,*.toml'")
    max_results: int = field(default=50, minimum=1, maximum=1000, aliases=("limit",),
                             help="Most matching lines to return (at most 1000)")
    path: str = field(default=".", aliases=DIR_ALIASES,
                      help="File or directory to search, relative to the workspace root")


def run(params: Params, ctx: Context) -> GrepResult:
    from zbtools.core.search.globs import split_globs
    from zbtools.core.search.request import SearchJob, SearchRequest
    from zbtools.core.search.tree import search

    request = SearchRequest(pattern=params.query, path=params.path,
                            globs=split_globs(params.file_pattern or ""), before=CONTEXT_LINES,
                            after=CONTEXT_LINES, limit=params.max_results, timeout=TIMEOUT)
    job = SearchJob(ctx.workspace, request, cache=ctx.search_cache,
                    tick=ctx.ticker("files searched"))
    job.searcher.compile()
    outcome = search(job)
    warn_walk_notes(outcome, ctx)
    warn_skips(outcome, ctx, None, multiline=False)
    return to_result(outcome, "content")


def render_results(result: GrepResult) -> str:
    return render(result, "max_results")


TOOL = ToolSpec(
    name="codebase_search",
    doc=__doc__,
    params=Params,
    result=GrepResult,
    run=run,
    render_text=render_results,
    operand=("query", "path"),
    exit_status=found,
    paths=matched_paths,
    read_only=True,
    idempotent=True,
    parallel_safe=True,
    category="search",
)

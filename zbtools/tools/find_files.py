"""Find files whose name contains a text (a case-insensitive substring, not a glob).

Walks ``path`` (default ``.``, the workspace root; aliases ``dir``, ``directory``) down to
``max_depth`` levels (default: no limit) and returns the files whose *name* contains
``pattern``, compared case-insensitively: ``test`` finds ``test_api.py`` and ``MyTest.java``.
``*``, ``?`` and ``[`` are plain characters here; for wildcards and ``**`` use
``find_files_glob``. A pattern containing ``/`` is matched against the path relative to
``path`` instead of the name (``api/v1`` finds ``src/api/v1/routes.py``). ``type`` chooses
``file`` (default: anything but a directory), ``directory`` or ``any``. Each match has ``path``
(relative to the workspace root), ``type``, ``size`` and ``modified`` (ISO 8601 UTC), in tree
order (a directory's contents right after it, siblings sorted by name).

Hidden entries, entries matched by ``.gitignore``/``.ignore``/``.rgignore``/ ``.git/info/exclude``
and the default excluded directories (``.git``, ``node_modules``, ``target``, ``__pycache__``,
``vendor``, ``.venv``...) are not searched but counted in ``skipped``; ``include_hidden``,
``include_ignored`` and ``exclude_dirs`` (which replaces the default list; ``[]`` excludes nothing)
bring them back. Symlinks are matched by their own name and never followed.

Limits and failure modes: at most ``limit`` matches (default 100, at most 10000, ``0`` for no cap;
``truncated`` tells); at most 200000 entries are examined (``scan_limited`` tells: more matches may
exist, search a subdirectory); ``max_depth`` at most 512. Unreadable directories are counted in
``skipped.unreadable``, not fatal. Errors: ``invalid_arguments`` (empty pattern), ``not_found``,
``not_a_directory`` (the path is a file), ``outside_workspace``.
"""

from __future__ import annotations

from zbtools.contract import ToolError
from zbtools.core.call.args import Struct, field
from zbtools.core.search.entries import MAX_DEPTH, Skipped, WalkSwitches
from zbtools.core.search.walk import Walk
from zbtools.toolkit.finding import (
    DEFAULT_LIMIT,
    MAX_LIMIT,
    MAX_PATTERN,
    NO_CAP,
    SCAN_CAP,
    Match,
    found,
    loop_warning,
    match_paths,
    path_match,
    render_matches,
    to_match,
    wanted_type,
)
from zbtools.toolkit.params import DEPTH_ALIASES, SEARCH_DIR_ALIASES
from zbtools.toolspec import ToolSpec

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Literal

    from zbtools.core.call.context import Context


class Params(WalkSwitches):
    pattern: str = field(aliases=("name", "query"),
                         help="Text the file name must contain (case-insensitive; not a glob). "
                         "With a '/', matched against the path below `path`")
    path: str = field(default=".", aliases=SEARCH_DIR_ALIASES,
                      help="Directory to search, relative to the workspace root")
    max_depth: int | None = field(default=None, minimum=1, maximum=MAX_DEPTH,
                                  aliases=DEPTH_ALIASES,
                                  help="Levels to descend (1: direct children only); "
                                  "default no limit")
    type: Literal["file", "directory", "any"] = field(
        default="file", help="file (anything but a directory), directory, or any")
    limit: int = field(default=DEFAULT_LIMIT, minimum=0, maximum=MAX_LIMIT,
                       help="Most matches to return (at most 10000; 0: no cap)")


class Result(Struct):
    path: str = field(help="The directory searched, relative to the workspace root")
    matches: list[Match] = field(help="The matches, in tree order")
    count: int = field(help="Number of matches returned")
    truncated: bool = field(help="More matches exist than limit allowed")
    scan_limited: bool = field(help="The search stopped after 200000 entries: more matches "
                               "may exist")
    skipped: Skipped = field(help="What was not searched, by kind (hidden, ignored...)")


def run(params: Params, ctx: Context) -> Result:
    needle = params.pattern.casefold()
    if not needle or len(needle) > MAX_PATTERN:
        raise ToolError("invalid_arguments", "pattern must be 1 to 1000 characters",
                        hint="give part of a file name, e.g. 'test' or '.py'; "
                        "list_directory lists everything", details={"pattern": params.pattern})
    walk = Walk(ctx.workspace, params.path, max_depth=params.max_depth or MAX_DEPTH,
                max_entries=SCAN_CAP, include_hidden=params.include_hidden,
                include_ignored=params.include_ignored, exclude_dirs=params.exclude_dirs,
                with_stat=False, cache=ctx.search_cache)
    on_path = "/" in needle
    cut = 0 if walk.rel == "." else len(walk.rel) + 1
    matches: list[Match] = []
    truncated = False
    text_only = ctx.text_only
    for entry in walk:
        if not wanted_type(entry.kind, params.type):
            continue
        text = entry.rel[cut:] if on_path else entry.name
        if needle not in text.casefold():
            continue
        if len(matches) >= (params.limit or NO_CAP):
            truncated = True
            break
        if text_only:  # the text rendering shows paths only: no stat
            matches.append(path_match(entry))
            continue
        walk.stat(entry)
        matches.append(to_match(entry))
    loop_warning(walk, ctx)
    if not matches and any(c in needle for c in "*?["):
        ctx.warn("pattern is a plain substring here; for wildcards use find_files_glob")
    return Result(path=walk.rel, matches=matches, count=len(matches), truncated=truncated,
                  scan_limited=walk.truncated, skipped=walk.skipped)


def render(result: Result) -> str:
    return render_matches(result.matches, result.count, result.truncated, result.scan_limited,
                          result.skipped)


TOOL = ToolSpec(
    name="find_files",
    doc=__doc__,
    params=Params,
    result=Result,
    run=run,
    render_text=render,
    operand=("pattern", "path"),
    exit_status=found,
    paths=match_paths,
    read_only=True,
    idempotent=True,
    parallel_safe=True,
    category="search",
)

"""Get an overview of the project's directory tree, a few levels deep, within an entry budget.

Shows ``path`` (default ``.``) to ``depth`` levels (default 2) as a tree, at most ``limit``
entries (default 50, at most 200). When the tree is bigger, shallower levels are kept first (all
top-level entries before any second-level one) and ``omitted`` says how many entries were left
out, so the overview stays useful on big repositories. Dependency, build and VCS directories
(``node_modules``, ``target``, ``.git``, ``__pycache__``, ``vendor``, ``.venv``...), hidden
entries and entries matched by ``.gitignore``/``.ignore``/``.rgignore`` are not shown but counted in
``skipped``; ``include_hidden``, ``include_ignored`` and ``exclude_dirs`` change that. Symlinks
are shown, never followed.

Limits and failure modes: at most 10000 entries are examined (beyond, ``omitted_exact`` is false
and ``omitted`` is a lower bound); ``depth`` at most 512. Directories that cannot be read are
counted in ``skipped.unreadable``. Errors: ``not_found``, ``not_a_directory``,
``outside_workspace``.
"""

from __future__ import annotations

from zbtools.core.call.args import Struct, field
from zbtools.core.search.entries import MAX_DEPTH, Skipped, WalkSwitches
from zbtools.core.search.walk import Walk
from zbtools.toolkit.listing import Entry, skipped_note, to_entry, tree_lines
from zbtools.toolkit.params import LIST_DIR_ALIASES
from zbtools.toolspec import ToolSpec

TYPE_CHECKING = False
if TYPE_CHECKING:
    from zbtools.core.call.context import Context

DEFAULT_LIMIT = 50
MAX_LIMIT = 200
SCAN_CAP = 10_000


class Params(WalkSwitches):
    path: str = field(default=".", aliases=LIST_DIR_ALIASES,
                      help="Directory to start from, relative to the workspace root")
    depth: int = field(default=2, minimum=1, maximum=MAX_DEPTH, aliases=("max_depth",),
                       help="Levels to show")
    limit: int = field(default=DEFAULT_LIMIT, minimum=1, maximum=MAX_LIMIT,
                       help="Most entries to show (at most 200)")


class Result(Struct):
    path: str = field(help="The directory shown, relative to the workspace root")
    entries: list[Entry] = field(help="The entries shown, in tree order")
    count: int = field(help="Number of entries shown")
    omitted: int = field(help="Entries within depth left out by limit")
    omitted_exact: bool = field(help="False when the walk stopped early: omitted is a minimum")
    depth: int = field(help="The depth shown")
    skipped: Skipped = field(help="What was not shown, by kind (hidden, ignored, excluded...)")


def run(params: Params, ctx: Context) -> Result:
    walk = Walk(ctx.workspace, params.path, max_depth=params.depth, max_entries=SCAN_CAP,
                include_hidden=params.include_hidden, include_ignored=params.include_ignored,
                exclude_dirs=params.exclude_dirs, cache=ctx.search_cache)
    found = list(walk)
    order = sorted(range(len(found)), key=lambda i: (found[i].depth, i))
    keep = sorted(order[:params.limit])
    entries = [to_entry(found[i]) for i in keep]
    for note in walk.notes():
        ctx.warn(note)
    return Result(path=walk.rel, entries=entries, count=len(entries),
                  omitted=len(found) - len(entries), omitted_exact=not walk.truncated,
                  depth=params.depth, skipped=walk.skipped)


def render(result: Result) -> str:
    out = "\n".join(tree_lines(result.path, result.entries)) + "\n"
    if result.omitted:
        more = "" if result.omitted_exact else "at least "
        out += (f"[{more}{result.omitted} more entries not shown (limit {result.count}); raise "
                "limit (at most 200) or look at a subdirectory]\n")
    return out + skipped_note(result.skipped, not result.entries)


TOOL = ToolSpec(
    name="get_workspace_structure",
    doc=__doc__,
    params=Params,
    result=Result,
    run=run,
    operand="path",
    render_text=render,
    read_only=True,
    idempotent=True,
    parallel_safe=True,
)

"""List a directory's contents as a tree: names, types and sizes, down to max_depth levels.

Lists ``path`` (default ``.``, the workspace root) to ``max_depth`` levels (default 1: the direct
children only), siblings sorted by name, directories shown with a trailing ``/`` and symlinks as
``name -> target`` (never followed). The JSON result has one entry per item (``path``, ``name``,
``type``, ``size``, ``depth``, ``target`` for symlinks). Hidden entries, entries matched by
``.gitignore``/``.ignore``/``.rgignore``/``.git/info/exclude`` and the default excluded directories
(``.git``, ``node_modules``, ``target``, ``__pycache__``, ``vendor``...) are left out but counted in
``skipped``; ``include_hidden``, ``include_ignored`` and ``exclude_dirs`` (which replaces the
default list; ``[]`` excludes nothing) bring them back. A directory named explicitly is listed even
when it is ignored or excluded, its entries judged by the ignore rules as anywhere else.

Limits and failure modes: at most ``limit`` entries (default 1000, at most 10000, ``0`` for no
cap; ``truncated`` tells); ``max_depth`` at most 512. Directories that cannot be read are counted in
``skipped.unreadable``, not fatal. Errors: ``not_found``, ``not_a_directory`` (the path is a
file), ``outside_workspace``.
"""

from __future__ import annotations

from zbtools.core.call.args import Struct, field
from zbtools.core.call.fastjson import Encoded
from zbtools.core.search.entries import MAX_DEPTH, Skipped, WalkSwitches, derived
from zbtools.core.search.walk import Walk
from zbtools.toolkit.listing import (
    Entry,
    entries_json,
    entries_text,
    skipped_note,
    to_entry,
    tree_lines,
)
from zbtools.toolkit.params import DEPTH_ALIASES, LIST_DIR_ALIASES
from zbtools.toolspec import ToolSpec

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from zbtools.core.call.context import Context

    AnyList = list[Any]
else:
    AnyList = list  # (typing is not loaded by a cold call)

DEFAULT_LIMIT = 1000
MAX_LIMIT = 10_000
NO_CAP = 2**62  # limit 0


class Params(WalkSwitches):
    path: str = field(default=".", aliases=LIST_DIR_ALIASES,
                      help="Directory to list, relative to the workspace root")
    max_depth: int = field(default=1, minimum=1, maximum=MAX_DEPTH, aliases=DEPTH_ALIASES,
                           help="Levels to descend; 1 lists only the direct children")
    limit: int = field(default=DEFAULT_LIMIT, minimum=0, maximum=MAX_LIMIT,
                       help="Most entries to return (at most 10000; 0: no cap)")


class Result(Struct):
    path: str = field(help="The directory listed, relative to the workspace root")
    entries: list[Entry] = field(help="The entries, in tree order (pre-order, sorted by name)")
    count: int = field(help="Number of entries returned")
    truncated: bool = field(help="More entries exist than limit allowed")
    skipped: Skipped = field(help="What was left out, by kind")

    def to_json(self) -> dict[str, Any]:
        entries = self.entries
        if type(entries) is not WrittenEntries:
            return super().to_json()
        out = super().to_json()  # (no entry in the list: the other fields as ever)
        out["entries"] = Encoded(entries.text)
        return out


class WrittenEntries(AnyList):
    """The entries as their JSON text, written while the walk went (``entries_json`` of
    ``Walk.written``: the second scanner's subtrees as it wrote them), where only the JSON
    text of the call's result is made (``Context.json_text``). It holds no ``Entry``: the
    result's ``count`` says how many it stands for."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text


def run(params: Params, ctx: Context) -> Result:
    walk = Walk(ctx.workspace, params.path, max_depth=params.max_depth,
                max_entries=params.limit or NO_CAP, include_hidden=params.include_hidden,
                include_ignored=params.include_ignored, exclude_dirs=params.exclude_dirs,
                cache=ctx.search_cache, split=ctx.may_fork,
                render=entries_text if ctx.json_text else None)
    entries: list[Entry]
    if walk.cache is None:  # one call: nothing to reuse
        if ctx.text_only:
            walk.with_stat = False  # the tree shows no sizes: no stat per file
        if ctx.json_text:
            # written as they come: while the second scanner still walks, not after
            entries = WrittenEntries(entries_json(walk.written()))
        else:
            entries = [to_entry(e) for e in walk]
    else:
        # a session replaying the same walk reuses each entry's result while its stat holds
        made: dict[str, tuple[object, Entry]] = walk.memo("list") or {}
        entries = [derived(made, e, to_entry) for e in walk]
        walk.keep_memo("list", made, 400 * len(made) + 200)
    for note in walk.notes():
        ctx.warn(note)
    count = walk.produced if type(entries) is WrittenEntries else len(entries)
    return Result(path=walk.rel, entries=entries, count=count, truncated=walk.truncated,
                  skipped=walk.skipped)


def listed(result: Result) -> int:
    """``--exit-status``: 0 when the listing shows something, 1 when it is empty."""
    return 0 if result.count else 1


def entry_paths(result: Result) -> list[str]:
    """``--paths``: every entry's path, in tree order."""
    return [e.path for e in result.entries]


def render(result: Result) -> str:
    out = "\n".join(tree_lines(result.path, result.entries)) + "\n"
    if result.truncated:
        out += f"[showing the first {result.count} entries; raise limit or list a subdirectory]\n"
    return out + skipped_note(result.skipped, not result.entries)


TOOL = ToolSpec(
    name="list_directory",
    aliases=("list_dir", "ls"),
    doc=__doc__,
    params=Params,
    result=Result,
    run=run,
    render_text=render,
    operand="path",
    exit_status=listed,
    paths=entry_paths,
    read_only=True,
    idempotent=True,
    parallel_safe=True,
)

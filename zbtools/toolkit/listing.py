"""What list_directory and get_workspace_structure share: the entry type and the tree drawing.

``Entry`` is one listed entry (``to_entry`` from a walk entry); ``entries_json`` writes a walk's
entries as the JSON of theirs (``entries_text``: a listing's ``render``); ``tree_lines`` draws
entries as a tree; ``skipped_note`` says what was left out.
"""

from __future__ import annotations

from zbtools.core.call.args import Struct, field
from zbtools.core.search.entries import Rendered

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

    from zbtools.core.search.entries import Entry as WalkEntry
    from zbtools.core.search.entries import Skipped


_new = object.__new__


class Entry(Struct):
    path: str = field(help="Relative to the workspace root, POSIX separators")
    name: str = field(help="The entry's name")
    type: str = field(help="file, directory, symlink, fifo, socket, device")
    size: int | None = field(help="Size in bytes (null for directories)")
    depth: int = field(help="1 for the direct children of the listed directory")
    target: str | None = field(help="The link's text, for a symlink (never followed)")


def to_entry(e: WalkEntry) -> Entry:
    # every field, in order: what Struct.__init__ stores, at a third of its cost (a listing
    # makes thousands)
    entry = _new(Entry)
    entry.__dict__ = {"path": e.rel, "name": e.name, "type": e.kind, "size": e.size,
                      "depth": e.depth, "target": e.target}
    return entry


def entries_json(entries: Iterable[WalkEntry | Rendered]) -> str:
    """``dumps_ascii([to_entry(e).to_json() for e in entries])``, written directly from the
    walk's entries (docs/internals/performance.md#direct-json); a ``Rendered`` item's texts,
    from ``entries_text``, stand for its entries."""
    return "[" + entries_text(entries) + "]"


def entries_text(entries: Iterable[WalkEntry | Rendered]) -> str:
    """The entries' JSON objects joined by ``", "``: an f-string per entry costs a quarter of a
    dict and its encoding, and no ``Entry`` is made (tests/toolkit/test_listing_json.py holds
    it equal to the JSON of their values). A listing's ``render`` (``Walk.written``)."""
    from zbtools.core.call.fastjson import encode_str as enc

    kinds = {"file": '"file"', "directory": '"directory"'}
    return ", ".join([
        ", ".join(e.texts) if isinstance(e, Rendered) else
        f'{{"path": {enc(e.rel)}, "name": {enc(e.name)}, '
        f'"type": {kinds.get(e.kind) or enc(e.kind)}, '
        f'"size": {"null" if e.size is None else int(e.size)}, "depth": {int(e.depth)}, '
        f'"target": {"null" if e.target is None else enc(e.target)}}}'
        for e in entries])


def tree_lines(root: str, entries: list[Entry]) -> list[str]:
    """``root/`` then one ``├── name`` line per entry, drawn from the entries' depths. Each
    depth's prefix is made once, from its parent's (a listing of thousands of entries)."""
    last = [False] * len(entries)  # last among its siblings: no later sibling
    later: list[bool] = [False]  # by depth: a later entry at that depth, in the same parent
    for i in range(len(entries) - 1, -1, -1):
        depth = entries[i].depth
        if len(later) > depth + 1:
            del later[depth + 1:]  # a shallower entry ends the deeper groups
        elif len(later) <= depth:
            later.extend([False] * (depth + 1 - len(later)))
        last[i] = not later[depth]
        later[depth] = True
    lines = [root if root.endswith("/") else root + "/"]
    prefixes = [""]  # prefixes[k]: what precedes an entry below k open ancestors
    for entry, is_last in zip(entries, last, strict=True):
        del prefixes[entry.depth:]
        prefix = prefixes[-1]
        label = entry.name + ("/" if entry.type == "directory" else "")
        if entry.type == "symlink":
            label += f" -> {entry.target}"
        lines.append(prefix + ("└── " if is_last else "├── ") + label)
        prefixes.append(prefix + ("    " if is_last else "│   "))
    return lines


def skipped_note(skipped: Skipped, empty: bool) -> str:
    described = skipped.describe()
    if not described:
        return "(empty)\n" if empty else ""
    lead = "nothing shown; " if empty else ""
    return f"[{lead}skipped: {described}{skipped.remedy('show')}]\n"

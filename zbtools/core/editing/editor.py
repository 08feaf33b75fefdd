"""The headless editor behind open_file, goto_line, select_range, get_selection, ...
(docs/internals/sources.md#zblade, docs/editor-state.md).

The editor state is one locked state document (``core/state/store.py``, ``editor.json`` in the
workspace's state directory): the open files in tab order, the active file, and each file's
cursor and selection. Positions are what an editor shows: 1-based lines and columns counting
code points, between characters, a selection's end exclusive. Each position is stored with the
file's sha256 and an anchor (its lines plus one line of context each side); when the file
changed since, the anchor is looked up within ``NEARBY_LINES`` and must occur exactly once, else
editing calls fail with ``stale_file`` rather than edit a shifted region. Open files that no
longer exist are dropped with a warning, and no other file becomes active in their place.
Limits: ``MAX_TABS`` open files, ``MAX_EDITOR_BYTES`` per file (``too_large``).

Map: ``Editor`` (the state, its tabs and re-anchored positions), ``Tab``, ``TextModel``,
``load``/``Loaded`` (a file as the editor reads it), ``order``, ``edit_active`` and
``EditReport`` (an edit of the active selection).
"""

from __future__ import annotations

import stat

from zbtools.contract import ToolError
from zbtools.core.errors import stale_file
from zbtools.core.files.decoding import decode
from zbtools.core.files.hashing import sha256_hex
from zbtools.core.files.reading import read_bytes
from zbtools.core.state.store import EDITOR, StateFile

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from zbtools.core.call.context import Context
    from zbtools.core.files.decoding import Decoded
    from zbtools.core.files.workspace import Resolved

MAX_TABS = 100
MAX_EDITOR_BYTES = 64 * 1024 * 1024
ANCHOR_MAX_CHARS = 64 * 1024
NEARBY_LINES = 200


class TextModel:
    """A decoded text as editor lines, with position <-> offset conversion."""

    def __init__(self, text: str) -> None:
        self.text = text
        parts = text.split("\n")
        self.lines = [p[:-1] if p.endswith("\r") else p for p in parts]
        self.starts = [0]
        for part in parts[:-1]:
            self.starts.append(self.starts[-1] + len(part) + 1)

    @property
    def line_count(self) -> int:
        return len(self.lines)

    def clamp(self, line: int, column: int) -> tuple[int, int, bool]:
        """The nearest valid position, and whether it differs from the one asked for."""
        good_line = min(max(line, 1), self.line_count)
        good_column = min(max(column, 1), len(self.lines[good_line - 1]) + 1)
        return good_line, good_column, (good_line, good_column) != (line, column)

    def offset(self, line: int, column: int) -> int:
        return self.starts[line - 1] + column - 1

    def position(self, offset: int) -> tuple[int, int]:
        from bisect import bisect_right

        index = bisect_right(self.starts, offset) - 1
        column = min(offset - self.starts[index], len(self.lines[index])) + 1
        return index + 1, column


class Tab:
    """One open file: its cursor, its selection and the anchor of both."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.cursor = (1, 1)
        self.selection: tuple[int, int, int, int] | None = None  # start line, col, end line, col
        self.sha256: str | None = None  # the file's content when the positions were set
        self.stat: list[int] | None = None  # [inode, size, mtime_ns] at that time
        self.anchor_line = 1  # first line of the anchor block
        self.anchor: list[str] | None = None  # the block's lines (None: kept as a hash)
        self.anchor_sha: str | None = None
        self.anchor_count = 0
        self.anchor_edges = [False, False]  # the block started at the top / ended at the end

    # -- persistence

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "cursor": list(self.cursor),
                "selection": list(self.selection) if self.selection else None,
                "sha256": self.sha256, "stat": self.stat, "anchor_line": self.anchor_line,
                "anchor": self.anchor, "anchor_sha": self.anchor_sha,
                "anchor_count": self.anchor_count, "anchor_edges": self.anchor_edges}

    @classmethod
    def from_json(cls, raw: Any) -> Tab | None:
        """The tab, or None when ``raw`` does not have the expected shape."""
        def ints(value: Any, count: int) -> bool:
            return isinstance(value, list) and len(value) == count and all(
                type(v) is int and v >= 0 for v in value)

        if not isinstance(raw, dict) or not isinstance(raw.get("path"), str):
            return None
        tab = cls(raw["path"])
        cursor: Any = raw.get("cursor")
        selection: Any = raw.get("selection")
        if not ints(cursor, 2) or not (selection is None or ints(selection, 4)):
            return None
        if 0 in cursor or (selection and 0 in selection):
            return None  # lines and columns are 1-based
        tab.cursor = (cursor[0], cursor[1])
        if selection:
            tab.selection = (selection[0], selection[1], selection[2], selection[3])
        tab.sha256 = raw.get("sha256")
        tab.stat = raw.get("stat")
        tab.anchor_line = raw.get("anchor_line", 1)
        tab.anchor = raw.get("anchor")
        tab.anchor_sha = raw.get("anchor_sha")
        tab.anchor_count = raw.get("anchor_count", 0)
        tab.anchor_edges = raw.get("anchor_edges", [False, False])
        if not (isinstance(tab.sha256, str | None) and (tab.stat is None or ints(tab.stat, 3))
                and type(tab.anchor_line) is int and type(tab.anchor_count) is int
                and (tab.anchor is None or (isinstance(tab.anchor, list)
                                            and all(isinstance(x, str) for x in tab.anchor)))
                and isinstance(tab.anchor_sha, str | None)
                and isinstance(tab.anchor_edges, list) and len(tab.anchor_edges) == 2
                and all(type(e) is bool for e in tab.anchor_edges)):
            return None
        return tab

    # -- positions

    @property
    def span(self) -> tuple[int, int]:
        """First and last line the cursor and selection touch."""
        lines = [self.cursor[0]]
        if self.selection:
            lines += [self.selection[0], self.selection[2]]
        return min(lines), max(lines)

    def place(self, model: TextModel, sha: str, st: list[int] | None,
              cursor: tuple[int, int], selection: tuple[int, int, int, int] | None) -> None:
        """Set the positions (already valid for ``model``) and anchor them in it."""
        self.cursor = cursor
        self.selection = selection if selection and selection[:2] != selection[2:] else None
        self.sha256 = sha
        self.stat = st
        core_first, core_last = self.span
        first = max(core_first - 1, 1)
        last = min(core_last + 1, model.line_count)
        block = model.lines[first - 1:last]
        self.anchor_edges = [first == 1, last == model.line_count]
        if sum(len(line) + 1 for line in block) <= ANCHOR_MAX_CHARS:
            self.anchor, self.anchor_sha = block, None
            self.anchor_line, self.anchor_count = first, len(block)
        else:  # too big to keep: a hash of the covered lines, checked in place only
            core = model.lines[core_first - 1:core_last]
            self.anchor = None
            self.anchor_sha = sha256_hex("\n".join(core).encode("utf-8", "surrogatepass"))
            self.anchor_line, self.anchor_count = core_first, len(core)

    def _shift(self, delta: int) -> None:
        self.cursor = (self.cursor[0] + delta, self.cursor[1])
        if self.selection:
            sl, sc, el, ec = self.selection
            self.selection = (sl + delta, sc, el + delta, ec)

    def reanchor(self, model: TextModel, sha: str, st: list[int] | None) -> str:
        """Bring the positions up to date with the file's current text.

        Returns ``unchanged`` (same content), ``shifted`` (found again, positions moved by whole
        lines) or ``lost`` (not found unambiguously; the positions are left as they were).
        """
        if sha == self.sha256:
            if not self._fits(model):
                return "lost"  # a tampered state: positions the text never had
            self.stat = st
            return "unchanged"
        delta = self._find(model)
        if delta is None:
            return "lost"
        self._shift(delta)
        if not self._fits(model):
            self._shift(-delta)
            return "lost"
        self.place(model, sha, st, self.cursor, self.selection)
        return "shifted"

    def _fits(self, model: TextModel) -> bool:
        """Whether every position lies inside ``model``'s text."""
        return all(1 <= line <= model.line_count and 1 <= column <= len(model.lines[line - 1]) + 1
                   for line, column in self._positions())

    def _positions(self) -> list[tuple[int, int]]:
        out = [self.cursor]
        if self.selection:
            out += [self.selection[:2], self.selection[2:]]
        return out

    def _find(self, model: TextModel) -> int | None:
        lines = model.lines
        if self.anchor is None:
            block = lines[self.anchor_line - 1:self.anchor_line - 1 + self.anchor_count]
            same = len(block) == self.anchor_count and sha256_hex(
                "\n".join(block).encode("utf-8", "surrogatepass")) == self.anchor_sha
            return 0 if same else None
        found = _unique_nearby(lines, self.anchor, self.anchor_line, self.anchor_edges)
        if found is not None:
            return found - self.anchor_line
        first, last = self.span
        core = self.anchor[first - self.anchor_line:last - self.anchor_line + 1]
        if core and any(line.strip() for line in core):
            found = _unique_nearby(lines, core, first)
            if found is not None:
                return found - first
        return None


def _unique_nearby(lines: list[str], block: list[str], near: int,
                   edges: list[bool] | None = None) -> int | None:
    """The 1-based line where ``block`` occurs as whole lines within NEARBY_LINES of ``near``,
    if it occurs there exactly once. ``edges``: the block must start at the first line / end
    at the last line (its context was the start or end of the file)."""
    if not block:
        return None
    size = len(block)
    low = max(near - 1 - NEARBY_LINES, 0)
    high = min(near - 1 + NEARBY_LINES, len(lines) - size)
    if edges and edges[0]:
        high = min(high, 0)
    if edges and edges[1]:
        low = max(low, len(lines) - size)
    head = block[0]
    found: int | None = None
    for i in range(low, high + 1):
        if lines[i] == head and lines[i:i + size] == block:
            if found is not None:
                return None
            found = i + 1
    return found


class Loaded:
    """A file read for the editor: its bytes, decoded text and line model."""

    def __init__(self, data: bytes, decoded: Decoded, st: list[int] | None) -> None:
        self.data = data
        self.decoded = decoded
        self.model = TextModel(decoded.text)
        self.sha256 = sha256_hex(data)
        self.stat = st


def stat_key(st: Any) -> list[int]:
    return [st.st_ino, st.st_size, st.st_mtime_ns]


def load(res: Resolved, shown: str) -> Loaded:
    """Read and decode the resolved regular file (``binary_file``, ``too_large``, ...)."""
    data = read_bytes(res, max_bytes=MAX_EDITOR_BYTES, shown=shown)
    decoded = decode(data, shown=shown)
    st = None
    if res.name is not None:
        import os

        try:
            st = stat_key(os.stat(res.name, dir_fd=res.dir_fd))
        except OSError:
            st = None
    return Loaded(data, decoded, st)


class Editor:
    """The locked editor state of one workspace; use as a context manager.

    On entry, open files that no longer exist are dropped (with a warning). Changes are written
    by ``save()``; leaving without it (an error) writes nothing.
    """

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.state = StateFile(ctx, EDITOR)
        self.tabs: list[Tab] = []
        self.active: str | None = None
        self.closed_missing: list[str] = []

    def __enter__(self) -> Editor:
        self.state.__enter__()
        try:
            self._parse()
            self._reconcile()
        except BaseException:
            self.state.__exit__()
            raise
        return self

    def __exit__(self, *_exc: object) -> None:
        self.state.__exit__()

    def _parse(self) -> None:
        data = self.state.data
        raw_tabs = data.get("tabs", [])
        if not isinstance(raw_tabs, list):
            raise self.state.corrupt("has no list of open files")
        for raw in raw_tabs:
            tab = Tab.from_json(raw)
            if tab is None:
                raise self.state.corrupt("has an open file entry of the wrong shape")
            self.tabs.append(tab)
        active = data.get("active")
        if active is not None and (not isinstance(active, str) or self.find(active) is None):
            raise self.state.corrupt("names an active file that is not open")
        self.active = active

    def _reconcile(self) -> None:
        for tab in list(self.tabs):
            if not self._exists(tab.path):
                self.closed_missing.append(tab.path)
                self.close(tab.path, activate_neighbour=False)
        if self.closed_missing:
            names = ", ".join(self.closed_missing)
            self.ctx.warn(f"closed {names}: no longer there (deleted, or moved by something "
                          "other than move_file)")

    def _exists(self, rel: str) -> bool:
        try:
            with self.ctx.workspace.resolve(rel) as res:
                return res.st is not None and stat.S_ISREG(res.st.st_mode)
        except ToolError:
            return False

    def save(self) -> None:
        self.state.data["tabs"] = [tab.to_json() for tab in self.tabs]
        self.state.data["active"] = self.active
        self.state.save()

    # -- tabs

    def find(self, path: str) -> Tab | None:
        return next((t for t in self.tabs if t.path == path), None)

    @property
    def active_index(self) -> int | None:
        return next((i for i, t in enumerate(self.tabs) if t.path == self.active), None)

    def active_tab(self) -> Tab:
        tab = self.find(self.active) if self.active is not None else None
        if tab is None:
            raise ToolError("no_active_file", "no file is open in the editor",
                            hint="open one first with open_file (path, optional line)",
                            details={"open_files": [t.path for t in self.tabs]})
        return tab

    def open(self, rel: str) -> tuple[Tab, bool]:
        """Activate the tab of ``rel``, opening a new one at the end; (tab, already open)."""
        tab = self.find(rel)
        already = tab is not None
        if tab is None:
            tab = Tab(rel)
            self.tabs.append(tab)
            while len(self.tabs) > MAX_TABS:
                victim = next(t for t in self.tabs if t is not tab and t.path != self.active)
                self.tabs.remove(victim)
                self.ctx.warn(f"closed {victim.path}: at most {MAX_TABS} files stay open")
        self.active = rel
        return tab, already

    def close(self, path: str, *, activate_neighbour: bool = True) -> bool:
        """Close ``path``'s tab; if it was active, the tab to its right (else left) becomes
        active, or none when ``activate_neighbour`` is false (the file vanished: an edit meant
        for it must not land in another file)."""
        tab = self.find(path)
        if tab is None:
            return False
        index = self.tabs.index(tab)
        self.tabs.remove(tab)
        if self.active == path:
            self.active = self.tabs[min(index, len(self.tabs) - 1)].path \
                if self.tabs and activate_neighbour else None
        return True

    # -- reading the active file

    def sync(self, tab: Tab, loaded: Loaded, *, strict: bool) -> bool:
        """Re-anchor ``tab`` to the file as loaded; returns whether its positions shifted.

        ``strict``: a lost place is ``stale_file``; otherwise the positions are clamped into
        the file and a warning says they may be off.
        """
        outcome = tab.reanchor(loaded.model, loaded.sha256, loaded.stat)
        if outcome == "shifted":
            self.ctx.warn(f"{tab.path} changed since the cursor/selection was set; the "
                          "positions were re-anchored to where that text is now")
            return True
        if outcome == "unchanged":
            return False
        if strict:
            raise stale_file(tab.path, "changed since the cursor/selection was set, and the "
                             "text it was on cannot be found unambiguously nearby",
                             hint="set the position again (goto_line or select_range) after "
                             "reading the file", expected_sha256=tab.sha256,
                             current_sha256=loaded.sha256)
        model = loaded.model
        cl, cc, _ = model.clamp(*tab.cursor)
        selection = None
        if tab.selection:
            sl, sc, _ = model.clamp(tab.selection[0], tab.selection[1])
            el, ec, _ = model.clamp(tab.selection[2], tab.selection[3])
            selection = (sl, sc, el, ec)
        tab.place(model, loaded.sha256, loaded.stat, (cl, cc), selection)
        self.ctx.warn(f"{tab.path} changed since the cursor/selection was set and that text "
                      "was not found again: the positions kept their line numbers and may be "
                      "off")
        return False


def order(start: tuple[int, int], end: tuple[int, int]) -> tuple[int, int, int, int]:
    """A selection from two positions, start first."""
    if end < start:
        start, end = end, start
    return (start[0], start[1], end[0], end[1])


class EditReport:
    """What replace_selection / insert_at_cursor did."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.changed = False
        self.start = (1, 1)  # where the new text starts
        self.end = (1, 1)  # where it ends: the cursor afterwards
        self.replaced_chars = 0
        self.inserted_chars = 0
        self.sha256 = ""
        self.reanchored = False
        self.diff = ""


def edit_active(ctx: Context, content: str, *, replace: bool, tool: str) -> EditReport:
    """Put ``content`` at the active file's selection (``replace``) or cursor, and save it.

    The file is written the way the edit tools write: original encoding, BOM and undecodable
    bytes kept, bare LF in ``content`` becoming CRLF in a CRLF file, atomic replace refused with
    ``stale_file`` if the file changes between read and write, the old bytes journaled for undo.
    """
    import os

    from zbtools.core.editing.cycle import check_new_text
    from zbtools.core.files.decoding import apply_newline

    with Editor(ctx) as editor:
        tab = editor.active_tab()
        report = EditReport(tab.path)
        with ctx.workspace.resolve(tab.path, write=True) as res:
            loaded = load(res, tab.path)
            report.reanchored = editor.sync(tab, loaded, strict=True)
            model = loaded.model
            if replace and tab.selection is None:
                ctx.warn("nothing was selected: the content was inserted at the cursor")
            if replace and tab.selection is not None:
                a = model.offset(tab.selection[0], tab.selection[1])
                b = model.offset(tab.selection[2], tab.selection[3])
            else:
                a = b = model.offset(*tab.cursor)
            check_new_text([content], loaded.decoded.invalid_utf8, tab.path)
            old = model.text
            crlf = old.count("\r\n")
            text = apply_newline(content, "\r\n" if crlf > old.count("\n") - crlf else "\n")
            new = old[:a] + text + old[b:]
            new_model = TextModel(new)
            report.start = new_model.position(a)
            report.end = new_model.position(a + len(text))
            report.replaced_chars = b - a
            report.inserted_chars = len(text)
            new_data = loaded.data
            if new != old:
                new_data = loaded.decoded.encode(new)
                from zbtools.core.editing.syntaxguard import check_change
                from zbtools.core.editing.txn import replace_file

                check_change(ctx, res.rel, loaded.data, new_data)  # before the write

                replace_file(ctx, res, new_data, expected_sha256=loaded.sha256, shown=tab.path,
                             tool="replace_selection" if replace else "insert_at_cursor")
                report.changed = True
                from zbtools.core.editing.matching import unified_diff

                report.diff = unified_diff(tab.path, _shown(old, loaded.decoded),
                                           _shown(new, loaded.decoded))
            report.sha256 = sha256_hex(new_data)
            assert res.name is not None
            try:
                st: list[int] | None = stat_key(os.stat(res.name, dir_fd=res.dir_fd))
            except OSError:
                st = None
        if report.changed:
            from zbtools.core.editing.undo import record

            record(ctx, tab.path, loaded.data, new_data, tool)
        tab.place(new_model, report.sha256, st, report.end, None)
        editor.save()
        return report


def _shown(text: str, decoded: Decoded) -> str:
    if not decoded.invalid_utf8:
        return text
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")

"""Get the editor's state: the active file, the open files (tabs) and the cursor and selection.

Returns exactly Zaguán Blade's fields plus the selection columns: ``active_file``,
``open_files`` (tab order), ``active_tab_index`` (0-based), ``cursor_line``, ``cursor_column``,
``selection_start_line``, ``selection_start_column``, ``selection_end_line``,
``selection_end_column``. Lines and columns are 1-based, columns count characters; with nothing
selected the selection fields are null, and with no file open everything but ``open_files`` is
null. The state persists between calls (it lives in the workspace's state directory, outside the
workspace); files that no longer exist are dropped from the open files first, with a warning. If
the active file changed since its cursor was set, the cursor and selection are re-anchored to
where their text is now (or kept, with a warning that they may be off).

Failure modes: ``state_corrupt`` (the editor state file is unreadable or from a newer zbtools;
it is never overwritten), ``io_error``.
"""

from __future__ import annotations

import os

from zbtools.contract import ToolError
from zbtools.core.call.args import Struct, field
from zbtools.core.editing.editor import Editor, load, stat_key
from zbtools.toolspec import ToolSpec

TYPE_CHECKING = False
if TYPE_CHECKING:
    from zbtools.core.call.context import Context
    from zbtools.core.editing.editor import Tab


class Params(Struct):
    pass


class Result(Struct):
    active_file: str | None = field(help="The active file, relative to the workspace root")
    open_files: list[str] = field(help="The open files, in tab order")
    active_tab_index: int | None = field(help="Index of the active tab in open_files (0-based)")
    cursor_line: int | None = field(help="Cursor line (1-based)")
    cursor_column: int | None = field(help="Cursor column (1-based, in characters)")
    selection_start_line: int | None = field(help="First line of the selection (null: none)")
    selection_start_column: int | None = field(help="Column where the selection starts")
    selection_end_line: int | None = field(help="Last line of the selection")
    selection_end_column: int | None = field(
        help="Column where the selection ends (exclusive: the position after its last character)")


def refresh_active(ctx: Context, editor: Editor) -> None:
    """Re-anchor the active tab if its file changed (a stat first: usually no read at all)."""
    tab = editor.find(editor.active) if editor.active is not None else None
    if tab is None:
        return
    try:
        with ctx.workspace.resolve(tab.path) as res:
            if res.st is not None and tab.stat == stat_key(res.st) and tab.sha256:
                return
            editor.sync(tab, load(res, tab.path), strict=False)
    except ToolError as err:
        ctx.warn(f"{tab.path}: the cursor could not be checked against the file: {err.message}")
    except OSError as err:  # pragma: no cover - a race with a concurrent delete
        ctx.warn(f"{tab.path}: {os.strerror(err.errno or 0)}")


def state_result(editor: Editor) -> Result:
    tab: Tab | None = editor.find(editor.active) if editor.active is not None else None
    selection = tab.selection if tab is not None else None
    return Result(
        active_file=tab.path if tab else None,
        open_files=[t.path for t in editor.tabs],
        active_tab_index=editor.active_index if tab else None,
        cursor_line=tab.cursor[0] if tab else None,
        cursor_column=tab.cursor[1] if tab else None,
        selection_start_line=selection[0] if selection else None,
        selection_start_column=selection[1] if selection else None,
        selection_end_line=selection[2] if selection else None,
        selection_end_column=selection[3] if selection else None,
    )


def run(params: Params, ctx: Context) -> Result:
    with Editor(ctx) as editor:
        refresh_active(ctx, editor)
        editor.save()
        return state_result(editor)


def render(result: Result) -> str:
    if result.active_file is None:
        if not result.open_files:
            return "no file is open (open_file opens one)\n"
        return ("no file is active (open_file activates one); open files:\n"
                + "".join(f"    {path}\n" for path in result.open_files))
    assert result.active_tab_index is not None
    out = (f"active: {result.active_file} (tab {result.active_tab_index + 1} of "
           f"{len(result.open_files)})\n"
           f"cursor: line {result.cursor_line}, column {result.cursor_column}\n")
    if result.selection_start_line is not None:
        out += (f"selection: {result.selection_start_line}:{result.selection_start_column} to "
                f"{result.selection_end_line}:{result.selection_end_column}\n")
    else:
        out += "selection: none\n"
    out += "open files:\n" + "".join(
        f"  {'*' if i == result.active_tab_index else ' '} {path}\n"
        for i, path in enumerate(result.open_files))
    return out


TOOL = ToolSpec(
    name="get_editor_state",
    doc=__doc__,
    params=Params,
    result=Result,
    run=run,
    render_text=render,
    read_only=True,
    idempotent=True,
    parallel_safe=True,
    category="editor",
)

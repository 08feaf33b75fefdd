"""Select a range of the active file, from a start position to an end position (exclusive).

Positions are 1-based lines and columns, columns counting characters and lying between them:
``(1, 1)`` to ``(1, 5)`` selects the first four characters of line 1, and ``start_line: 3`` alone
selects the text of line 3 (``end_line`` defaults to the start line, ``end_column`` to the end of
that line; ``(3, 1)`` to ``(4, 1)`` would include its line ending). Positions beyond the file are
clamped, and the result says so. The cursor goes to the end position. The selection is anchored
to its text: get_selection and replace_selection re-find it if the file changes, or fail with
``stale_file``. Selecting an empty range just places the cursor.

Failure modes: ``no_active_file``, ``not_found`` (the active file disappeared), ``binary_file``,
``too_large``, ``state_corrupt``.
"""

from __future__ import annotations

from zbtools.core.call.args import Struct, field
from zbtools.core.editing.editor import Editor, load, order
from zbtools.toolspec import ToolSpec

TYPE_CHECKING = False
if TYPE_CHECKING:
    from zbtools.core.call.context import Context


class Params(Struct):
    start_line: int = field(minimum=1, help="Line where the selection starts (1-based)")
    start_column: int = field(default=1, minimum=1,
                              help="Column where it starts (1-based, in characters)")
    end_line: int | None = field(default=None, minimum=1,
                                 help="Line where it ends (default: the start line)")
    end_column: int | None = field(default=None, minimum=1,
                                   help="Column where it ends, exclusive (default: the end of "
                                   "the end line)")


class Result(Struct):
    path: str = field(help="The active file, relative to the workspace root")
    selection_start_line: int = field(help="First line of the selection")
    selection_start_column: int = field(help="Column where the selection starts")
    selection_end_line: int = field(help="Last line of the selection")
    selection_end_column: int = field(help="Column where it ends (exclusive)")
    cursor_line: int = field(help="Cursor line (the end position)")
    cursor_column: int = field(help="Cursor column")
    selected_chars: int = field(help="Characters selected (0: only the cursor was placed)")
    clamped: bool = field(help="A position lay beyond the file and was clamped")


def run(params: Params, ctx: Context) -> Result:
    with Editor(ctx) as editor:
        tab = editor.active_tab()
        with ctx.workspace.resolve(tab.path) as res:
            loaded = load(res, tab.path)
        model = loaded.model
        sl, sc, clamped_start = model.clamp(params.start_line, params.start_column)
        end_line = params.end_line if params.end_line is not None else params.start_line
        if params.end_column is not None:
            el, ec, clamped_end = model.clamp(end_line, params.end_column)
        else:
            el, _, clamped_end = model.clamp(end_line, 1)
            ec = len(model.lines[el - 1]) + 1
        clamped = clamped_start or clamped_end
        if clamped:
            ctx.warn(f"{tab.path}: the range lies partly beyond the file ({model.line_count} "
                     f"lines): selected {sl}:{sc} to {el}:{ec}")
        selection = order((sl, sc), (el, ec))
        tab.place(model, loaded.sha256, loaded.stat, (el, ec), selection)
        editor.save()
        count = model.offset(*selection[2:]) - model.offset(*selection[:2])
        return Result(path=tab.path, selection_start_line=selection[0],
                      selection_start_column=selection[1], selection_end_line=selection[2],
                      selection_end_column=selection[3], cursor_line=el, cursor_column=ec,
                      selected_chars=count, clamped=clamped)


def render(result: Result) -> str:
    return (f"{result.path}: selected {result.selection_start_line}:"
            f"{result.selection_start_column} to {result.selection_end_line}:"
            f"{result.selection_end_column} ({result.selected_chars} characters)\n")


TOOL = ToolSpec(
    name="select_range",
    doc=__doc__,
    params=Params,
    result=Result,
    run=run,
    render_text=render,
    idempotent=True,
    category="editor",
)

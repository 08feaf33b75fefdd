"""Move the cursor to a line (and column) of the active file, clearing the selection.

Lines and columns are 1-based; columns count characters. A line past the end goes to the last
line and a column past the end of its line to the end of that line: the result reports the
position reached, the one requested and ``clamped: true`` (with a warning), never silently. The
result also shows the text of the line the cursor is on.

Failure modes: ``no_active_file`` (open a file with open_file first), ``not_found`` (the active
file disappeared), ``binary_file``, ``too_large``, ``state_corrupt``.
"""

from __future__ import annotations

from zbtools.core.call.args import Struct, field
from zbtools.core.editing.editor import Editor, load
from zbtools.toolspec import ToolSpec

TYPE_CHECKING = False
if TYPE_CHECKING:
    from zbtools.core.call.context import Context

LINE_TEXT_CHARS = 500


class Params(Struct):
    line: int = field(minimum=1, help="Line number (1-indexed)")
    column: int | None = field(default=None, minimum=1,
                               help="Column number (1-indexed, in characters; default 1)")


class Result(Struct):
    path: str = field(help="The active file, relative to the workspace root")
    cursor_line: int = field(help="Cursor line now")
    cursor_column: int = field(help="Cursor column now")
    requested_line: int = field(help="The line asked for")
    requested_column: int = field(help="The column asked for")
    clamped: bool = field(help="The position asked for lay beyond the file and was clamped")
    line_count: int = field(help="Lines in the file, as an editor counts them")
    line_text: str = field(help=f"The text of the cursor's line (at most {LINE_TEXT_CHARS} "
                           "characters)")


def run(params: Params, ctx: Context) -> Result:
    column = params.column or 1
    with Editor(ctx) as editor:
        tab = editor.active_tab()
        with ctx.workspace.resolve(tab.path) as res:
            loaded = load(res, tab.path)
        model = loaded.model
        line, col, clamped = model.clamp(params.line, column)
        if clamped:
            ctx.warn(f"{tab.path}: line {params.line}, column {column} lies beyond the file "
                     f"({model.line_count} lines): the cursor went to line {line}, column {col}")
        tab.place(model, loaded.sha256, loaded.stat, (line, col), None)
        editor.save()
        text = model.lines[line - 1]
        if loaded.decoded.invalid_utf8:
            text = text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        return Result(path=tab.path, cursor_line=line, cursor_column=col,
                      requested_line=params.line, requested_column=column, clamped=clamped,
                      line_count=model.line_count, line_text=text[:LINE_TEXT_CHARS])


def render(result: Result) -> str:
    note = (f" (clamped from {result.requested_line}:{result.requested_column})"
            if result.clamped else "")
    return (f"{result.path}: cursor at line {result.cursor_line}, column "
            f"{result.cursor_column}{note}\n{result.cursor_line:6}\t{result.line_text}\n")


TOOL = ToolSpec(
    name="goto_line",
    doc=__doc__,
    params=Params,
    result=Result,
    run=run,
    render_text=render,
    idempotent=True,
    category="editor",
)

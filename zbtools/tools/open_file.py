"""Open a file in the editor: it joins the open files (a new tab at the end) and becomes active.

The cursor goes to ``line`` (and ``column``), else to line 1, column 1; reopening a file that is
already open just activates its tab and, without ``line``, keeps its cursor and selection (moved
along if the file changed meanwhile). A line or column beyond the file is clamped to the last
line or the end of the line, and the result says so (``clamped``, ``requested_line``, a warning).
The file must be an existing text file inside the workspace; it is read, never written. The
editor state persists between calls (see get_editor_state).

Failure modes: ``not_found``, ``is_directory``, ``binary_file``, ``special_file``, ``too_large``
(over 64 MiB), ``outside_workspace``, ``state_corrupt`` (the editor state file is unreadable or
from a newer zbtools; it is never overwritten).
"""

from __future__ import annotations

from zbtools.core.call.args import Struct, field
from zbtools.core.editing.editor import Editor, load
from zbtools.toolkit.params import PATH_ALIASES
from zbtools.toolspec import ToolSpec

TYPE_CHECKING = False
if TYPE_CHECKING:
    from zbtools.core.call.context import Context


class Params(Struct):
    path: str = field(aliases=PATH_ALIASES,
                      help="File to open, relative to the workspace root or absolute inside it")
    line: int | None = field(default=None, minimum=1,
                             help="Line to put the cursor on (1-based; default 1, or the "
                             "file's last cursor position when it is already open)")
    column: int | None = field(default=None, minimum=1,
                               help="Column on that line (1-based, in characters; default 1)")


class Result(Struct):
    path: str = field(help="The file opened, relative to the workspace root")
    already_open: bool = field(help="The file was open already; its tab was activated")
    cursor_line: int = field(help="Cursor line now (1-based)")
    cursor_column: int = field(help="Cursor column now (1-based)")
    requested_line: int | None = field(help="The line asked for")
    clamped: bool = field(help="The position asked for lay beyond the file and was clamped")
    line_count: int = field(help="Lines in the file, as an editor counts them (a final "
                            "newline starts an empty last line)")
    active_tab_index: int = field(help="Index of this file's tab in open_files (0-based)")
    open_files: list[str] = field(help="The open files, in tab order")


def run(params: Params, ctx: Context) -> Result:
    with ctx.workspace.resolve(params.path) as res:
        loaded = load(res, params.path)
        rel = res.rel
    model = loaded.model
    clamped = False
    with Editor(ctx) as editor:
        tab, already = editor.open(rel)
        if already and params.line is None and params.column is None:
            editor.sync(tab, loaded, strict=False)
        else:
            want_line = params.line or 1
            want_column = params.column or 1
            line, column, clamped = model.clamp(want_line, want_column)
            if clamped:
                ctx.warn(f"{rel}: line {want_line}, column {want_column} lies beyond the file "
                         f"({model.line_count} lines): the cursor went to line {line}, "
                         f"column {column}")
            tab.place(model, loaded.sha256, loaded.stat, (line, column), None)
        editor.save()
        index = editor.active_index
        assert index is not None
        return Result(path=rel, already_open=already, cursor_line=tab.cursor[0],
                      cursor_column=tab.cursor[1], requested_line=params.line, clamped=clamped,
                      line_count=model.line_count, active_tab_index=index,
                      open_files=[t.path for t in editor.tabs])


def render(result: Result) -> str:
    verb = "activated" if result.already_open else "opened"
    return (f"{verb} {result.path} at line {result.cursor_line}, column {result.cursor_column} "
            f"(tab {result.active_tab_index + 1} of {len(result.open_files)}, "
            f"{result.line_count} lines)\n")


TOOL = ToolSpec(
    name="open_file",
    doc=__doc__,
    params=Params,
    result=Result,
    run=run,
    operand="path",
    render_text=render,
    idempotent=True,
    category="editor",
)

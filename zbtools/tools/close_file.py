"""Close an open file's tab (by default the active one), or every tab with ``all: true``.

When the active tab closes, the tab to its right (else its left) becomes active, as in an editor.
Closing a file that is not open changes nothing and says so (``was_open: false``); the file
itself is never touched.

Failure modes: ``no_active_file`` (no path given and no file is active), ``outside_workspace``,
``state_corrupt``.
"""

from __future__ import annotations

from zbtools.contract import ToolError
from zbtools.core.call.args import Struct, field
from zbtools.core.editing.editor import Editor
from zbtools.toolkit.params import PATH_ALIASES
from zbtools.toolspec import ToolSpec

TYPE_CHECKING = False
if TYPE_CHECKING:
    from zbtools.core.call.context import Context


class Params(Struct):
    path: str | None = field(default=None, aliases=PATH_ALIASES,
                             help="File to close (default: the active file)")
    all: bool = field(default=False, help="Close every open file")


class Result(Struct):
    closed: list[str] = field(help="The files whose tabs were closed")
    was_open: bool = field(help="Something was open to close")
    active_file: str | None = field(help="The active file now")
    open_files: list[str] = field(help="The open files now, in tab order")


def _rel(ctx: Context, path: str) -> str | None:
    try:
        with ctx.workspace.resolve(path) as res:
            return res.rel
    except ToolError as err:
        if err.code in ("not_found", "not_a_directory"):
            return None  # a path that cannot exist is not open either
        raise


def run(params: Params, ctx: Context) -> Result:
    if params.all and params.path is not None:
        raise ToolError("invalid_arguments", "give path or all: true, not both",
                        hint="all: true closes every open file")
    with Editor(ctx) as editor:
        if params.all:
            closed = [t.path for t in editor.tabs]
            editor.tabs.clear()
            editor.active = None
        else:
            rel = editor.active_tab().path if params.path is None else _rel(ctx, params.path)
            closed = [rel] if rel is not None and editor.close(rel) else []
        editor.save()
        return Result(closed=closed, was_open=bool(closed), active_file=editor.active,
                      open_files=[t.path for t in editor.tabs])


def render(result: Result) -> str:
    if not result.was_open:
        out = "nothing to close: that file is not open\n"
    else:
        out = f"closed {', '.join(result.closed)}\n"
    if result.active_file is not None:
        out += f"active: {result.active_file} ({len(result.open_files)} open)\n"
    else:
        out += "no file is open\n" if not result.open_files else "no file is active\n"
    return out


TOOL = ToolSpec(
    name="close_file",
    doc=__doc__,
    params=Params,
    result=Result,
    run=run,
    render_text=render,
    idempotent=True,
    category="editor",
)

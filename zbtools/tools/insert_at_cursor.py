"""Insert content at the cursor of the active file, and save the file.

The content goes in exactly as given (no newline is added), and the cursor moves to just after
it; a selection is cleared, not replaced (replace_selection does that). The file is written like
the edit tools write it: encoding, BOM, line endings (bare LF becomes CRLF in a CRLF file) and
every other byte kept, atomically, and undoable with ``undo``. If the file changed since the
cursor was placed, the cursor is re-anchored to its line's text; when that cannot be found
unambiguously nearby the call fails with ``stale_file`` and nothing is written.

Failure modes: ``no_active_file``, ``stale_file``, ``encoding_error``, ``binary_file``,
``permission_denied``, ``too_large``, ``state_corrupt``.
"""

from __future__ import annotations

from zbtools.core.call.args import field
from zbtools.core.editing.editor import edit_active
from zbtools.toolkit.params import CONTENT_ALIASES, CheckSyntax
from zbtools.toolkit.selection import SelectionEditResult, to_result
from zbtools.toolkit.selection import render as render_edit
from zbtools.toolspec import ToolSpec

TYPE_CHECKING = False
if TYPE_CHECKING:
    from zbtools.core.call.context import Context


class Params(CheckSyntax):
    content: str = field(text_body=True, aliases=CONTENT_ALIASES, help="Content to insert")


def run(params: Params, ctx: Context) -> SelectionEditResult:
    return to_result(edit_active(ctx, params.content, replace=False, tool="insert_at_cursor"))


def render(result: SelectionEditResult) -> str:
    if not result.changed:
        return (f"{result.path}: unchanged (nothing to insert); cursor at line "
                f"{result.cursor_line}, column {result.cursor_column}\n")
    return render_edit(result)


TOOL = ToolSpec(
    name="insert_at_cursor",
    doc=__doc__,
    params=Params,
    result=SelectionEditResult,
    run=run,
    render_text=render,
    destructive=True,
    category="editor",
)

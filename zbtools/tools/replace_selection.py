"""Replace the current selection of the active file with new content, and save the file.

The file is written like the edit tools write it: encoding, BOM, line endings (bare LF in the
content becomes CRLF in a CRLF file) and every byte outside the selection are kept, the write is
atomic, and the change can be undone with ``undo``. Afterwards the selection is cleared and the
cursor sits right after the inserted text, as in an editor. With nothing selected the content is
inserted at the cursor (with a warning). If the file changed since the selection was made, the
selection is re-anchored to where its text is now; when that text cannot be found unambiguously
nearby the call fails with ``stale_file`` and nothing is written: a shifted region is never
edited.

Failure modes: ``no_active_file``, ``stale_file``, ``encoding_error`` (the content cannot be
written in the file's encoding), ``binary_file``, ``permission_denied``, ``too_large``,
``state_corrupt``.
"""

from __future__ import annotations

from zbtools.core.call.args import field
from zbtools.core.editing.editor import edit_active
from zbtools.toolkit.params import CONTENT_ALIASES, CheckSyntax
from zbtools.toolkit.selection import SelectionEditResult, render, to_result
from zbtools.toolspec import ToolSpec

TYPE_CHECKING = False
if TYPE_CHECKING:
    from zbtools.core.call.context import Context


class Params(CheckSyntax):
    content: str = field(text_body=True, aliases=CONTENT_ALIASES, help="Replacement content")


def run(params: Params, ctx: Context) -> SelectionEditResult:
    return to_result(edit_active(ctx, params.content, replace=True, tool="replace_selection"))


TOOL = ToolSpec(
    name="replace_selection",
    doc=__doc__,
    params=Params,
    result=SelectionEditResult,
    run=run,
    render_text=render,
    destructive=True,
    category="editor",
)

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

from zbtools.core.call.args import Struct, field
from zbtools.core.editing.editor import edit_active
from zbtools.tools.write_file import CONTENT_ALIASES
from zbtools.toolspec import ToolSpec

TYPE_CHECKING = False
if TYPE_CHECKING:
    from zbtools.core.call.context import Context
    from zbtools.core.editing.editor import EditReport


class Params(Struct):
    content: str = field(text_body=True, aliases=CONTENT_ALIASES, help="Replacement content")


class Result(Struct):
    path: str = field(help="The file edited, relative to the workspace root")
    changed: bool = field(help="The file's content changed")
    start_line: int = field(help="Line where the new content starts")
    start_column: int = field(help="Column where it starts")
    end_line: int = field(help="Line where it ends")
    end_column: int = field(help="Column where it ends (exclusive)")
    cursor_line: int = field(help="Cursor line afterwards (right after the new content)")
    cursor_column: int = field(help="Cursor column afterwards")
    replaced_chars: int = field(help="Characters removed (the selection's length)")
    inserted_chars: int = field(help="Characters inserted")
    reanchored: bool = field(help="The file had changed and the selection was found again")
    sha256: str = field(help="SHA-256 of the file afterwards")
    diff: str = field(help="Unified diff of the change")


def to_result(report: EditReport) -> Result:
    return Result(path=report.path, changed=report.changed, start_line=report.start[0],
                  start_column=report.start[1], end_line=report.end[0],
                  end_column=report.end[1], cursor_line=report.end[0],
                  cursor_column=report.end[1], replaced_chars=report.replaced_chars,
                  inserted_chars=report.inserted_chars, reanchored=report.reanchored,
                  sha256=report.sha256, diff=report.diff)


def run(params: Params, ctx: Context) -> Result:
    return to_result(edit_active(ctx, params.content, replace=True, tool="replace_selection"))


def render(result: Result) -> str:
    if not result.changed:
        head = f"{result.path}: unchanged (the content equals the selection)\n"
    else:
        head = result.diff if result.diff.endswith("\n") else result.diff + "\n"
    return head + (f"cursor at line {result.cursor_line}, column {result.cursor_column}\n")


TOOL = ToolSpec(
    name="replace_selection",
    doc=__doc__,
    params=Params,
    result=Result,
    run=run,
    render_text=render,
    destructive=True,
    category="editor",
)

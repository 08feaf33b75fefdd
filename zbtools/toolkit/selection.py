"""What the editor's selection edits share (replace_selection, insert_at_cursor).

``SelectionEditResult`` is their result, ``to_result`` builds it from an ``EditReport`` of
``zbtools.core.editing.editor``, ``render`` is its text form.
"""

from __future__ import annotations

from zbtools.core.call.args import field
from zbtools.toolkit.params import SyntaxReport

TYPE_CHECKING = False
if TYPE_CHECKING:
    from zbtools.core.editing.editor import EditReport


class SelectionEditResult(SyntaxReport):
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


def to_result(report: EditReport) -> SelectionEditResult:
    return SelectionEditResult(path=report.path, changed=report.changed, start_line=report.start[0],
                  start_column=report.start[1], end_line=report.end[0],
                  end_column=report.end[1], cursor_line=report.end[0],
                  cursor_column=report.end[1], replaced_chars=report.replaced_chars,
                  inserted_chars=report.inserted_chars, reanchored=report.reanchored,
                  sha256=report.sha256, diff=report.diff)


def render(result: SelectionEditResult) -> str:
    if not result.changed:
        head = f"{result.path}: unchanged (the content equals the selection)\n"
    else:
        head = result.diff if result.diff.endswith("\n") else result.diff + "\n"
    return head + (f"cursor at line {result.cursor_line}, column {result.cursor_column}\n")

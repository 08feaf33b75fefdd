"""Insert lines into a file after a given line (0 = at the top), or at its start or end.

``insert_line: N`` puts the text after line N (``0``: before the first line; the file's line count:
at the end), as Anthropic's text-editor ``insert`` does; ``position: "start"`` or ``"end"`` does
the same as fiz's patch ``prepend``/``append``. The text is inserted as whole lines: a missing final
newline is supplied, new lines take the file's line endings, and a file without a final newline
keeps that state when text is added at its end. Pass ``expected_sha256`` to refuse if the file
changed since your read; ``dry_run: true`` returns the diff only.

Failure modes: ``out_of_range`` (insert_line beyond the end; the details give the line count),
``invalid_arguments`` (neither or both of insert_line and position), ``encoding_error``,
``stale_file``, ``binary_file``, ``not_found``, ``is_directory``.
"""

from __future__ import annotations

from zbtools.contract import ToolError
from zbtools.core.call.args import field
from zbtools.core.editing.cycle import edit_file_text
from zbtools.toolkit.edits import EditResult, single_result
from zbtools.toolkit.edits import render as render_edit
from zbtools.toolkit.params import PATH_ALIASES, CheckSyntax
from zbtools.toolspec import ToolSpec

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Literal

    from zbtools.core.call.context import Context
    from zbtools.core.editing.matching import Applied


class Params(CheckSyntax):
    path: str = field(aliases=PATH_ALIASES, help="File to insert into")
    content: str = field(text_body=True,
                         aliases=("new_str", "insert_text", "text"), help="Lines to insert")
    insert_line: int | None = field(default=None, minimum=0,
                                    help="Insert after this line (0 = top of the file)")
    position: Literal["start", "end"] | None = field(
        default=None, help="Insert at the start or the end instead of after a line")
    dry_run: bool = field(default=False, help="Report the diff without writing")
    expected_sha256: str | None = field(
        default=None, help="Refuse with stale_file unless the file's current sha256 is this")


def run(params: Params, ctx: Context) -> EditResult:
    from zbtools.core.editing import matching

    if (params.insert_line is None) == (params.position is None):
        raise ToolError("invalid_arguments", "give exactly one of insert_line and position",
                        hint="insert_line: 0 inserts at the top; position: end appends")
    text = params.content if params.content.endswith("\n") or not params.content \
        else params.content + "\n"

    def compute(file_text: str) -> Applied:
        model = matching.FileModel(file_text)
        total = len(model.lines)
        at = params.insert_line if params.insert_line is not None else (
            0 if params.position == "start" else total)
        if at > total:
            raise ToolError("out_of_range", f"{params.path}: insert_line {at} is past the end "
                            f"of the file, which has {total} lines",
                            hint=f"use a line between 0 and {total}",
                            details={"total_lines": total, "insert_line": at})
        request = matching.Request("", text, label="")
        request.insert_at = at
        return matching.apply_requests(file_text, [request])

    outcome = edit_file_text(ctx, params.path, compute, [text],
                             expected_sha256=params.expected_sha256, dry_run=params.dry_run,
                             tool="insert_text")
    first = outcome.applied.reports[0]["start_line"]
    return single_result(outcome, params.dry_run, matched_with="insert", end_line=first - 1)


TOOL = ToolSpec(
    name="insert_text",
    doc=__doc__,
    params=Params,
    result=EditResult,
    run=run,
    operand="path",
    render_text=render_edit,
    destructive=True,
    category="edit",
)

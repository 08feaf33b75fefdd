"""Replace old_content with new_content in a file (Zaguán Blade's legacy search/replace tool).

The same engine as apply_edit: ``old_content`` must identify exactly one place, matched exactly or
with tolerance for whitespace, indentation, typography and escaping, never ambiguously; the rest
of the file keeps its bytes. Pass ``expected_sha256`` to refuse if the file changed since your
read, ``dry_run: true`` to see the diff without writing.

Failure modes: ``no_match`` (with the closest candidate and what differs), ``ambiguous_match``
(every candidate listed; add context), ``no_change``, ``placeholder_in_new``,
``encoding_error``, ``stale_file``, ``binary_file``, ``not_found``.
"""

from __future__ import annotations

from zbtools.core.call.args import field
from zbtools.core.editing.cycle import edit_file_text
from zbtools.toolkit.edits import EditResult, single_result
from zbtools.toolkit.edits import render as render_edit
from zbtools.toolkit.params import PATH_ALIASES, CheckSyntax
from zbtools.toolspec import ToolSpec

TYPE_CHECKING = False
if TYPE_CHECKING:
    from zbtools.core.call.context import Context
    from zbtools.core.editing.matching import Applied


class Params(CheckSyntax):
    path: str = field(aliases=PATH_ALIASES, help="File to edit")
    old_content: str = field(text_body=True, aliases=("old", "from"), help="Text to find")
    new_content: str = field(text_body=True, aliases=("new", "to"), help="Replacement text")
    dry_run: bool = field(default=False, help="Report the diff without writing")
    expected_sha256: str | None = field(
        default=None, help="Refuse with stale_file unless the file's current sha256 is this")


# The engine edit_file shares with apply_edit words its errors in apply_edit's names; edit_file
# speaks its own and drops advice it cannot follow (docs/internals/surfaces.md#dialect-layer).
OWN_WORDS: dict[str, str | None] = {
    "old_text": "old_content", "new_text": "new_content", "patches": None, "patch": None,
    "start_line": None, "end_line": None, "occurrence": None, "anchor": None,
    "end_anchor": None, "replace_all": None, "expected_count": None}


def run(params: Params, ctx: Context) -> EditResult:
    from zbtools.contract import ToolError

    try:
        return _run(params, ctx)
    except ToolError as exc:
        from zbtools.core.call.wording import Wording

        raise Wording(OWN_WORDS).error(exc, "re-read the file and resend old_content as the "
                                       "file has it, with a neighbouring line if it is not "
                                       "unique") from None


def _run(params: Params, ctx: Context) -> EditResult:
    from zbtools.core.editing import matching

    request = matching.Request(params.old_content, params.new_content)

    def compute(text: str) -> Applied:
        return matching.apply_requests(text, [request])

    outcome = edit_file_text(ctx, params.path, compute, [params.new_content],
                             expected_sha256=params.expected_sha256, dry_run=params.dry_run,
                             tool="edit_file", simple=(params.old_content, params.new_content))
    for warning in outcome.applied.warnings:
        ctx.warn(warning)
    return single_result(outcome, params.dry_run)


TOOL = ToolSpec(
    name="edit_file",
    doc=__doc__,
    params=Params,
    result=EditResult,
    run=run,
    operand="path",
    render_text=render_edit,
    destructive=True,
    category="edit",
)

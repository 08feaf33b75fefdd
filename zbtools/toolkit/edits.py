"""What the text-editing tools share (apply_edit, edit_file, insert_text): their result.

``EditResult`` is the result of every one of them; ``single_result`` builds it for a one-edit
tool from its ``EditOutcome``; ``render`` is its text form.
"""

from __future__ import annotations

from zbtools.core.call.args import field
from zbtools.toolkit.params import SyntaxReport

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from zbtools.core.editing.cycle import EditOutcome


class EditResult(SyntaxReport):
    path: str = field(help="The file, relative to the workspace root")
    changed: bool = field(help="False when the edit was already applied")
    matched_with: str = field(help="Tier of the (first) edit: exact, indentation, ...")
    start_line: int = field(help="First line of the (first) matched region, original file")
    end_line: int = field(help="Last line of the (first) matched region, original file")
    edits: list[dict[str, Any]] = field(help="Per edit: lines, tier, transforms")
    replacements: int = field(help="Number of places replaced")
    diff: str = field(help="Unified diff of the change")
    sha256: str | None = field(help="SHA-256 of the file after the edit (or as it would be; "
                               "null for files over 16 MiB edited on bytes)")
    dry_run: bool = field(help="Nothing was written")
    files: list[dict[str, Any]] = field(help="Per file: path, action (updated, created, "
                                        "deleted, renamed, copied), edits")


def single_result(outcome: EditOutcome, dry_run: bool, *, matched_with: str | None = None,
                  end_line: int | None = None) -> EditResult:
    """The result of a one-edit tool (edit_file, insert_text) from its outcome."""
    report = outcome.applied.reports[0]
    return EditResult(
        path=outcome.path, changed=outcome.changed,
        matched_with=matched_with or report["matched_with"], start_line=report["start_line"],
        end_line=report["end_line"] if end_line is None else end_line,
        edits=outcome.applied.reports, replacements=1, diff=outcome.diff,
        sha256=outcome.sha256, dry_run=dry_run,
        files=[{"path": outcome.path, "action": "updated", "edits": 1}],
    )


def render(result: EditResult) -> str:
    if not result.changed:
        return f"{result.path}: already as requested; nothing changed\n"
    verb = "Would edit" if result.dry_run else "Edited"
    if len(result.files) > 1 or result.files[0]["action"] != "updated":
        done = ", ".join(f"{f['action']} {f['path']}" for f in result.files)
        return f"{'Would apply' if result.dry_run else 'Applied'} patch: {done}\n{result.diff}"
    places = ", ".join(f"lines {e['start_line']}-{e['end_line']} ({e['matched_with']})"
                       for e in result.edits[:10])
    more = f" and {len(result.edits) - 10} more" if len(result.edits) > 10 else ""
    return f"{verb} {result.path}: {places}{more}\n{result.diff}"

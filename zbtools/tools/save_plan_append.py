"""Append a chunk of text to an existing plan document ``.zbtools/plans/<name>.md``.

The partner of save_plan for plans longer than one call's content (as write_append is for
files): the text is appended exactly as given, in place, in the plan file's encoding and line
endings, with a warning if it continues a last line that had no newline. The plan must exist:
a misspelt name is refused rather than starting a second plan.

Failure modes: ``not_found`` (no plan of that name: create it with save_plan),
``invalid_arguments`` (a bad name), ``hardlink_refused``, ``encoding_error``,
``permission_denied``, ``no_space``, ``outside_workspace``.
"""

from __future__ import annotations

from zbtools.contract import ToolError
from zbtools.core.call.args import Struct, field
from zbtools.core.state.plans import PLAN_DIR, plan_name, plan_path
from zbtools.toolkit.params import CONTENT_ALIASES, PLAN_NAME_ALIASES
from zbtools.toolkit.writing import append_text
from zbtools.toolspec import ToolSpec

TYPE_CHECKING = False
if TYPE_CHECKING:
    from zbtools.core.call.context import Context


class Params(Struct):
    name: str = field(aliases=PLAN_NAME_ALIASES, help="Name of the plan to append to")
    content: str = field(text_body=True,
                         aliases=CONTENT_ALIASES, help="Text to add at the end of the plan")


class Result(Struct):
    name: str = field(help="The plan's name")
    path: str = field(help="The plan file, relative to the workspace root")
    bytes_appended: int = field(help="Bytes added")
    size: int = field(help="The plan file's size afterwards")
    sha256: str | None = field(help="SHA-256 of the whole file afterwards")


def run(params: Params, ctx: Context) -> Result:
    name = plan_name(params.name)
    shown = plan_path(name)
    try:
        with ctx.workspace.resolve(shown) as res:
            present = res.st is not None
    except ToolError as err:
        if err.code != "not_found":
            raise
        present = False
    if not present:
        raise ToolError("not_found", f"no plan named {name!r} ({shown})",
                        hint="create it with save_plan first; list plans with list_directory "
                        f"{PLAN_DIR}", details={"name": name, "path": shown})
    done = append_text(ctx, shown, params.content)
    return Result(name=name, path=done.path, bytes_appended=done.bytes_appended, size=done.size,
                  sha256=done.sha256)


def render(result: Result) -> str:
    return (f"appended to plan {result.name} ({result.path}): +{result.bytes_appended} bytes, "
            f"now {result.size}\n")


TOOL = ToolSpec(
    name="save_plan_append",
    doc=__doc__,
    params=Params,
    result=Result,
    run=run,
    render_text=render,
    category="plans",
)

"""Save a plan document as ``.zbtools/plans/<name>.md`` in the workspace; never overwrites one.

The plan is a markdown artifact the user can revisit, edit or share. Scaffold a long
plan with its first part, then add the rest with save_plan_append; track execution with
update_plan. The name is 1-64 letters, digits, ``.``, ``_`` or ``-`` (no separators, no ``..``,
not starting with a dot or dash; a trailing ``.md`` is dropped). The content is written as given,
in UTF-8, atomically, and can be undone with ``undo``.

Failure modes: ``already_exists`` (a plan of that name exists: append with save_plan_append,
or track progress with update_plan), ``invalid_arguments`` (a bad name), ``encoding_error``,
``permission_denied``, ``no_space``, ``outside_workspace`` (``.zbtools`` leads outside).
"""

from __future__ import annotations

from zbtools.contract import ToolError
from zbtools.core.call.args import Struct, field
from zbtools.core.files.fileformat import FileFormat
from zbtools.core.files.hashing import sha256_hex
from zbtools.core.files.replacing import create_file
from zbtools.core.state.plans import plan_name, plan_path
from zbtools.toolkit.params import CONTENT_ALIASES, PLAN_NAME_ALIASES
from zbtools.toolspec import ToolSpec

TYPE_CHECKING = False
if TYPE_CHECKING:
    from zbtools.core.call.context import Context



class Params(Struct):
    name: str = field(aliases=PLAN_NAME_ALIASES,
                      help="Plan name: letters, digits, '.', '_', '-' (saved as "
                      ".zbtools/plans/<name>.md)")
    content: str = field(text_body=True, aliases=CONTENT_ALIASES, help="The plan, in markdown")


class Result(Struct):
    name: str = field(help="The plan's name")
    path: str = field(help="The plan file, relative to the workspace root")
    size: int = field(help="Bytes written")
    sha256: str = field(help="SHA-256 of the file")
    parents_created: list[str] = field(help="Directories created for the plan")


def exists_error(name: str, rel: str) -> ToolError:
    return ToolError("already_exists", f"plan {name!r} already exists ({rel})",
                     hint="add to it with save_plan_append, track its steps with update_plan, "
                     "or choose another name; plans are never overwritten",
                     details={"name": name, "path": rel})


def run(params: Params, ctx: Context) -> Result:
    name = plan_name(params.name)
    shown = plan_path(name)
    data = FileFormat().encode(params.content, with_bom=False)
    with ctx.workspace.resolve(shown, create_parents=True, write=True) as res:
        if res.exists:
            raise exists_error(name, res.rel)
        try:
            res.ensure_parents()
            create_file(res, data, shown=shown)
        except ToolError as err:
            res.rollback_parents()
            if err.code == "already_exists":
                raise exists_error(name, res.rel) from None
            raise
        except BaseException:
            res.rollback_parents()
            raise
        from zbtools.core.editing.undo import record

        record(ctx, res.rel, None, data, "save_plan", parents=list(res.created))
        return Result(name=name, path=res.rel, size=len(data), sha256=sha256_hex(data),
                      parents_created=list(res.created))


def render(result: Result) -> str:
    return f"saved plan {result.name} as {result.path} ({result.size} bytes)\n"


TOOL = ToolSpec(
    name="save_plan",
    doc=__doc__,
    params=Params,
    result=Result,
    run=run,
    render_text=render,
    category="plans",
)

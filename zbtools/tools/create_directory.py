"""Create a directory, and any missing parent directories (like ``mkdir -p``).

An existing directory is success (``created: false``), so the call is idempotent. Directories are
created one component at a time relative to the already-checked parent, never following a
symlink out of the workspace.

Failure modes: ``already_exists`` (the path is a file or other non-directory),
``not_a_directory`` (a parent is a file), ``permission_denied``, ``outside_workspace``.
"""

from __future__ import annotations

import os
import stat

from zbtools.core.call.args import Struct, field
from zbtools.core.errors import already_exists
from zbtools.core.files.workspace import os_error
from zbtools.toolkit.params import DIR_ALIASES
from zbtools.toolspec import ToolSpec

TYPE_CHECKING = False
if TYPE_CHECKING:
    from zbtools.core.call.context import Context

NOT_A_DIRECTORY_HINT = "choose another name, or delete the file first"


class Params(Struct):
    path: str = field(aliases=DIR_ALIASES, help="Directory path to create")


class Result(Struct):
    path: str = field(help="The directory, relative to the workspace root")
    created: bool = field(help="False when it already existed")
    parents_created: list[str] = field(help="Missing parent directories that were created")


def run(params: Params, ctx: Context) -> Result:
    with ctx.workspace.resolve(params.path, create_parents=True, write=True) as res:
        if res.exists:
            assert res.st is not None
            if stat.S_ISDIR(res.st.st_mode):
                ctx.warn(f"{res.rel} already existed")
                return Result(path=res.rel, created=False, parents_created=[])
            raise already_exists(params.path, what="exists and is not a directory",
                                 hint=NOT_A_DIRECTORY_HINT)
        assert res.name is not None
        try:
            res.ensure_parents()
            os.mkdir(res.name, 0o777, dir_fd=res.dir_fd)
        except FileExistsError:
            st = os.stat(res.name, dir_fd=res.dir_fd, follow_symlinks=False)
            if stat.S_ISDIR(st.st_mode):
                return Result(path=res.rel, created=False, parents_created=list(res.created))
            res.rollback_parents()
            raise already_exists(params.path, what="was created meanwhile as a non-directory",
                                 hint=NOT_A_DIRECTORY_HINT) from None
        except OSError as exc:
            res.rollback_parents()
            raise os_error(exc, params.path) from exc
        except BaseException:
            res.rollback_parents()
            raise
        return Result(path=res.rel, created=True, parents_created=list(res.created))


def render(result: Result) -> str:
    if not result.created:
        return f"{result.path} already exists\n"
    return f"created directory {result.path}\n"


TOOL = ToolSpec(
    name="create_directory",
    doc=__doc__,
    params=Params,
    result=Result,
    run=run,
    operand="path",
    render_text=render,
    idempotent=True,
)

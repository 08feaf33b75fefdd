"""Delete a file, a symlink or (with ``recursive: true``) a directory and everything in it.

A symlink is removed itself, never its target. Directories need ``recursive: true``, even empty
ones, and the workspace root can never be deleted, however it is spelled (``.``,
``""``, ``a/..``, its absolute path). A directory is first renamed to a hidden sibling, so it
vanishes from its name at once, then emptied without following any link (any depth); if that
fails half-way, what remains is renamed back and the error details count what was deleted.

Failure modes: ``not_found``, ``is_directory`` (a directory without ``recursive: true``; the
details count its entries), ``workspace_root_protected``, ``permission_denied``,
``outside_workspace``.
"""

from __future__ import annotations

import os

from zbtools.contract import ToolError
from zbtools.core.call.args import Struct, field
from zbtools.core.errors import is_directory, not_found, workspace_root_protected
from zbtools.core.files.fsops import entry_kind, remove_tree, sweep_dead_dirs
from zbtools.core.files.tempnames import temp_name
from zbtools.core.files.workspace import DIR_FLAGS, os_error
from zbtools.core.files.writerlog import note_dir
from zbtools.toolkit.params import PATH_ALIASES
from zbtools.toolspec import ToolSpec

TYPE_CHECKING = False
if TYPE_CHECKING:
    from zbtools.core.call.context import Context



class Params(Struct):
    path: str = field(aliases=PATH_ALIASES, help="Path to delete")
    recursive: bool = field(default=False,
                            help="Required to delete a directory and everything inside it")


class Result(Struct):
    path: str = field(help="What was deleted, relative to the workspace root")
    type: str = field(help="file, directory, symlink, fifo, socket or device")
    files_deleted: int = field(help="Files (and special files) removed")
    directories_deleted: int = field(help="Directories removed")
    symlinks_deleted: int = field(help="Symlinks removed (their targets are untouched)")
    bytes_freed: int = field(help="Total size of the files removed")


def _count_entries(dir_fd: int, name: str) -> int:
    try:
        fd = os.open(name, DIR_FLAGS, dir_fd=dir_fd)
    except OSError:
        return -1
    try:
        with os.scandir(fd) as it:
            return sum(1 for _ in it)
    finally:
        os.close(fd)


def run(params: Params, ctx: Context) -> Result:
    # "" names the root for delete, not a usage slip (docs/internals/security.md#delete-move-copy)
    if params.path == "":
        raise workspace_root_protected("", "delete")
    with ctx.workspace.resolve(params.path, follow_last=False, write=True) as res:
        if res.is_root:
            raise workspace_root_protected(params.path, "delete")
        if res.st is None or res.name is None:
            raise not_found(params.path, hint="nothing to delete; check the path with "
                            "list_directory")
        kind = entry_kind(res.st.st_mode)
        if kind != "directory":
            try:
                os.unlink(res.name, dir_fd=res.dir_fd)
            except OSError as exc:
                raise os_error(exc, params.path) from exc
            from zbtools.core.state.store import on_path_deleted

            on_path_deleted(ctx, res.rel)  # an open editor tab of it closes
            is_link = kind == "symlink"
            return Result(path=res.rel, type=kind, files_deleted=0 if is_link else 1,
                          directories_deleted=0, symlinks_deleted=1 if is_link else 0,
                          bytes_freed=0 if is_link else res.st.st_size)
        if not params.recursive:
            entries = _count_entries(res.dir_fd, res.name)
            raise is_directory(params.path, "delete", entries=entries)
        # a repository's own folder goes with git's internals
        ctx.workspace.check_git_inside(res, "deletes", "delete its other contents one by one")
        note_dir(res.dir_fd)  # the half-deleted tree of a kill is removed by the next call
        sweep_dead_dirs(res.dir_fd)  # what killed deletes and copies left here
        hidden = temp_name(res.name, "zbdel")
        try:
            os.rename(res.name, hidden, src_dir_fd=res.dir_fd, dst_dir_fd=res.dir_fd)
        except OSError as exc:
            raise os_error(exc, params.path) from exc
        try:
            count = remove_tree(res.dir_fd, hidden, params.path)
        except ToolError as err:
            try:
                os.rename(hidden, res.name, src_dir_fd=res.dir_fd, dst_dir_fd=res.dir_fd)
                err.message += "; the part not yet deleted was restored under its name"
            except OSError:
                err.message += f"; the part not yet deleted remains as {hidden}"
            raise
        from zbtools.core.state.store import on_path_deleted

        on_path_deleted(ctx, res.rel)
        return Result(path=res.rel, type="directory", files_deleted=count.files,
                      directories_deleted=count.directories, symlinks_deleted=count.symlinks,
                      bytes_freed=count.bytes)


def render(result: Result) -> str:
    if result.type != "directory":
        return f"deleted {result.type} {result.path}\n"
    return (f"deleted directory {result.path} ({result.files_deleted} files, "
            f"{result.directories_deleted} directories, {result.symlinks_deleted} symlinks)\n")


TOOL = ToolSpec(
    name="delete_file",
    doc=__doc__,
    params=Params,
    result=Result,
    run=run,
    operand="path",
    render_text=render,
    destructive=True,
)


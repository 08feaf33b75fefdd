"""Move or rename a file, directory or symlink inside the workspace.

Missing parent directories of the destination are created (and removed again if the move fails).
An existing destination is never replaced unless ``overwrite: true`` (``already_exists``); a
directory is never replaced, even then. End the destination with ``/`` to move the source into
that existing directory, keeping its name (like ``mv a.txt dir/``); ``.`` (the workspace root)
always means into the root. A symlink is moved as a link and its target is untouched; a relative
link moved to another directory is reported in ``warnings``, since its text now points somewhere
else. The rename is atomic, and without ``overwrite`` it is done with
``renameat2(RENAME_NOREPLACE)`` so a file that appears meanwhile is not clobbered either.

Failure modes: ``not_found`` (source), ``already_exists``, ``is_directory`` (overwrite onto a
directory), ``not_a_directory`` (a directory onto a file, a destination ending in / that is not a
directory, a parent that is a file), ``invalid_arguments`` (a directory into itself, source equals
destination), ``cross_device``, ``workspace_root_protected`` (moving the root),
``outside_workspace``.
"""

from __future__ import annotations

import os
import stat

from zbtools.contract import ToolError
from zbtools.core.call.args import Struct, field
from zbtools.core.files.fsops import entry_kind, rename_noreplace
from zbtools.core.files.replacing import pause_point
from zbtools.core.files.workspace import os_error
from zbtools.toolspec import ToolSpec

TYPE_CHECKING = False
if TYPE_CHECKING:
    from zbtools.core.call.context import Context
    from zbtools.core.files.workspace import Resolved

SOURCE_ALIASES = ("src", "from_path", "old_path")
DESTINATION_ALIASES = ("dest", "dst", "target", "to_path", "new_path")


class Params(Struct):
    source: str = field(aliases=SOURCE_ALIASES, help="Path to move")
    destination: str = field(aliases=DESTINATION_ALIASES,
                             help="New path; ending in / means into that directory")
    overwrite: bool = field(default=False, help="Replace an existing destination file")


class Result(Struct):
    source: str = field(help="The source, relative to the workspace root")
    destination: str = field(help="The new path, relative to the workspace root")
    type: str = field(help="file, directory, symlink, ...")
    overwritten: bool = field(help="An existing destination file was replaced")
    parents_created: list[str] = field(help="Directories created for the destination")


def open_source(ctx: Context, path: str, *, follow: bool, write: bool = False) -> Resolved:
    """The source of a move (``write``: it goes away from there) or a copy."""
    res = ctx.workspace.resolve(path, follow_last=follow, write=write)
    if res.is_root:
        res.close()
        raise ToolError("workspace_root_protected", f"{path}: is the workspace root",
                        hint="name a file or directory inside the workspace")
    if res.st is None:
        res.close()
        raise ToolError("not_found", f"{path}: no such file or directory",
                        hint="check the source path with list_directory",
                        details={"path": path})
    return res


def open_destination(ctx: Context, destination: str, source: Resolved, *,
                     follow: bool = False) -> Resolved:
    """Resolve the destination; a trailing ``/`` means "inside this existing directory".

    The workspace root is never a destination itself, so a destination naming it (``.``) means
    "inside the root" too. ``follow`` follows a final symlink (copy writes through it; a move
    replaces the link itself).
    """
    assert source.name is not None
    if not (destination.endswith("/") and destination.strip("/")):
        res = ctx.workspace.resolve(destination, follow_last=follow, create_parents=True,
                                    write=True)
        if not res.is_root:
            return _below_checked(ctx, res)
        res.close()
    folder = ctx.workspace.resolve(destination)
    try:
        if folder.st is None or not stat.S_ISDIR(folder.st.st_mode) or folder.missing:
            raise ToolError("not_a_directory", f"{destination}: is not an existing directory",
                            hint="a destination ending in / must be an existing directory; "
                            "drop the / to give the new name itself", details={"path": destination})
        inner = destination.rstrip("/") + "/" + source.name
    finally:
        folder.close()
    return _below_checked(ctx, ctx.workspace.resolve(inner, follow_last=follow,
                                                     create_parents=True, write=True))


def _below_checked(ctx: Context, res: Resolved) -> Resolved:
    """``res``, unless a directory moved or copied there would fill a place git uses below it
    (a hooks directory not yet made): then ``protected_path``."""
    try:
        ctx.workspace.check_git_below(res)
    except BaseException:
        res.close()
        raise
    return res


def check_pair(source: Resolved, dest: Resolved, params_source: str, params_dest: str,
               overwrite: bool) -> bool:
    """Validate a move/copy pair; returns whether an existing destination will be replaced."""
    if dest.is_root:
        raise ToolError("workspace_root_protected", f"{params_dest}: is the workspace root",
                        hint="give a path inside the workspace")
    if dest.rel == source.rel:
        raise ToolError("invalid_arguments", "source and destination are the same path",
                        hint="give a different destination")
    assert source.st is not None
    if stat.S_ISDIR(source.st.st_mode) and dest.rel.startswith(source.rel + "/"):
        raise ToolError("invalid_arguments", f"cannot put directory {source.rel} inside itself "
                        f"({dest.rel})", hint="choose a destination outside the source")
    if not dest.exists:
        return False
    assert dest.st is not None
    if not overwrite:
        raise ToolError("already_exists", f"{params_dest}: already exists",
                        hint="pass overwrite: true to replace it, or end the destination with / "
                        "to put the source inside an existing directory",
                        details={"destination": dest.rel,
                                 "type": entry_kind(dest.st.st_mode)})
    if stat.S_ISDIR(dest.st.st_mode):
        raise ToolError("is_directory", f"{params_dest}: is a directory, which is never replaced",
                        hint="delete it first, or end the destination with / to move into it",
                        details={"path": params_dest})
    if stat.S_ISDIR(source.st.st_mode):
        raise ToolError("not_a_directory", f"{params_dest}: is a file; a directory cannot "
                        "replace it", hint="delete it first or choose another name",
                        details={"path": params_dest})
    return True


def run(params: Params, ctx: Context) -> Result:
    with open_source(ctx, params.source, follow=False, write=True) as src, \
            open_destination(ctx, params.destination, src) as dst:
        assert src.st is not None and src.name is not None
        if stat.S_ISDIR(src.st.st_mode):  # a repository's folder stays where git knows it
            ctx.workspace.check_git_inside(src, "moves", "move its other contents")
        replacing = check_pair(src, dst, params.source, params.destination, params.overwrite)
        assert dst.name is not None
        try:
            dst.ensure_parents()
            pause_point()  # test-only hook (crash tests): a no-op unless asked for
            if replacing:
                try:
                    os.rename(src.name, dst.name, src_dir_fd=src.dir_fd, dst_dir_fd=dst.dir_fd)
                except OSError as exc:
                    raise os_error(exc, params.destination) from exc
            else:
                rename_noreplace(src.dir_fd, src.name, dst.dir_fd, dst.name,
                                 is_dir=stat.S_ISDIR(src.st.st_mode), shown=params.destination)
        except BaseException:
            dst.rollback_parents()
            raise
        from zbtools.core.state.store import on_path_moved

        on_path_moved(ctx, src.rel, dst.rel)  # open editor tabs follow the move
        if stat.S_ISLNK(src.st.st_mode) and dst.parent_rel != src.parent_rel:
            target = os.readlink(dst.name, dir_fd=dst.dir_fd)
            if not target.startswith("/"):
                ctx.warn(f"{dst.rel} is a relative symlink ({target!r}) moved to another "
                         "directory: it now points to a different place")
        return Result(source=src.rel, destination=dst.rel, type=entry_kind(src.st.st_mode),
                      overwritten=replacing, parents_created=list(dst.created))


def render(result: Result) -> str:
    extra = " (replaced the old file)" if result.overwritten else ""
    return f"moved {result.source} -> {result.destination}{extra}\n"


TOOL = ToolSpec(
    name="move_file",
    doc=__doc__,
    params=Params,
    result=Result,
    run=run,
    operand=("source", "destination"),
    render_text=render,
    destructive=True,
)

"""What move_file and copy_file share: resolving a source and a destination, and checking
the pair.

``open_source`` and ``open_destination`` resolve the two paths (a destination ending in ``/``
means "inside that directory"); ``check_pair`` refuses what neither tool does (the root, a
directory into itself, an existing destination without ``overwrite``).
"""

from __future__ import annotations

import stat

from zbtools.contract import ToolError
from zbtools.core.errors import (
    already_exists,
    is_directory,
    not_found,
    workspace_root_protected,
)
from zbtools.core.files.fsops import entry_kind

TYPE_CHECKING = False
if TYPE_CHECKING:
    from zbtools.core.call.context import Context
    from zbtools.core.files.workspace import Resolved


def open_source(ctx: Context, path: str, *, follow: bool, write: bool = False) -> Resolved:
    """The source of a move (``write``: it goes away from there) or a copy."""
    res = ctx.workspace.resolve(path, follow_last=follow, write=write)
    if res.is_root:
        res.close()
        raise workspace_root_protected(path)
    if res.st is None:
        res.close()
        raise not_found(path, hint="check the source path with list_directory")
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
        raise workspace_root_protected(params_dest)
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
        raise already_exists(params_dest, hint="pass overwrite: true to replace it, or end the "
                             "destination with / to put the source inside an existing directory",
                             details={"path": params_dest, "destination": dest.rel,
                                      "type": entry_kind(dest.st.st_mode)})
    if stat.S_ISDIR(dest.st.st_mode):
        raise is_directory(params_dest, "replace")
    if stat.S_ISDIR(source.st.st_mode):
        raise ToolError("not_a_directory", f"{params_dest}: is a file; a directory cannot "
                        "replace it", hint="delete it first or choose another name",
                        details={"path": params_dest})
    return True

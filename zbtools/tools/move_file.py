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

from zbtools.core.call.args import Struct, field
from zbtools.core.files.fsops import entry_kind, rename_noreplace
from zbtools.core.files.replacing import pause_point
from zbtools.core.files.workspace import os_error
from zbtools.toolkit.params import DESTINATION_ALIASES, SOURCE_ALIASES
from zbtools.toolkit.transfer import check_pair, open_destination, open_source
from zbtools.toolspec import ToolSpec

TYPE_CHECKING = False
if TYPE_CHECKING:
    from zbtools.core.call.context import Context


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

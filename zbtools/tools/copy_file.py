"""Copy a file, or a directory with everything in it, inside the workspace.

Missing parent directories of the destination are created. An existing destination file is
replaced only with ``overwrite: true`` (``already_exists`` otherwise); an existing directory is
never merged into or replaced. End the destination with ``/`` to copy into that existing
directory, keeping the name; ``.`` (the workspace root) always means into the root. A new copy
gets the source's permission bits; a replaced file keeps its own. A source that is a symlink is
copied as the file or directory it points to, and a destination that is a symlink is written
through (both inside the workspace only). Inside a copied directory, symlinks are copied as links
when their target stays inside the workspace from the new place too, and skipped (listed in
``skipped`` with the reason) otherwise; FIFOs, sockets and devices are skipped and listed. A
directory is assembled in a hidden staging folder and renamed into place, so it appears whole or
not at all, and a failure leaves nothing behind.

Failure modes: ``not_found``, ``already_exists``, ``is_directory`` (a directory with
``recursive: false``, or a file onto a directory), ``not_a_directory`` (a directory onto a file,
a destination ending in / that is not a directory, a parent that is a file), ``invalid_arguments``
(a directory into itself, source equals destination), ``special_file``, ``permission_denied``,
``no_space``, ``outside_workspace``.
"""

from __future__ import annotations

import os

from zbtools.contract import ToolError
from zbtools.core.call.args import Struct, field
from zbtools.core.errors import is_directory
from zbtools.core.files.fsops import (
    copy_tree,
    entry_kind,
    remove_tree,
    rename_noreplace,
    sweep_dead_dirs,
)
from zbtools.core.files.reading import read_bytes
from zbtools.core.files.replacing import create_file, replace_whole
from zbtools.core.files.tempnames import temp_name
from zbtools.core.files.workspace import DIR_FLAGS, os_error
from zbtools.core.files.writerlog import note_dir
from zbtools.toolkit.params import DESTINATION_ALIASES, SOURCE_ALIASES
from zbtools.toolkit.transfer import check_pair, open_destination, open_source
from zbtools.toolspec import ToolSpec

TYPE_CHECKING = False
if TYPE_CHECKING:
    from zbtools.core.call.context import Context


class Params(Struct):
    source: str = field(aliases=SOURCE_ALIASES, help="Path to copy")
    destination: str = field(aliases=DESTINATION_ALIASES,
                             help="Path of the copy; ending in / means into that directory")
    overwrite: bool = field(default=False, help="Replace an existing destination file")
    recursive: bool = field(default=True, help="Copy directories with their contents")


class Result(Struct):
    source: str = field(help="The source, relative to the workspace root")
    destination: str = field(help="The copy, relative to the workspace root")
    type: str = field(help="file or directory")
    overwritten: bool = field(help="An existing destination file was replaced")
    files_copied: int = field(help="Files copied")
    directories_copied: int = field(help="Directories created in the copy")
    symlinks_copied: int = field(help="Symlinks recreated in the copy")
    bytes_copied: int = field(help="Bytes of file content copied")
    skipped: list[dict[str, str]] = field(help="Entries not copied, with the reason")
    parents_created: list[str] = field(help="Directories created for the destination")


def run(params: Params, ctx: Context) -> Result:
    with open_source(ctx, params.source, follow=True) as src, \
            open_destination(ctx, params.destination, src, follow=True) as dst:
        assert src.st is not None and src.name is not None
        replacing = check_pair(src, dst, params.source, params.destination, params.overwrite)
        kind = entry_kind(src.st.st_mode)
        if kind == "directory" and not params.recursive:
            raise is_directory(params.source, "copy")
        if kind not in ("file", "directory"):
            raise ToolError("special_file", f"{params.source}: is a {kind}; only files and "
                            "directories are copied", details={"path": params.source})
        if kind == "file":
            data = read_bytes(src, shown=params.source)
            try:
                dst.ensure_parents()
                if replacing:  # (the mode is for a destination removed meanwhile)
                    replace_whole(dst, data, mode=src.st.st_mode, shown=params.destination)
                else:
                    create_file(dst, data, mode=src.st.st_mode, shown=params.destination)
            except BaseException:
                dst.rollback_parents()
                raise
            return Result(source=src.rel, destination=dst.rel, type="file",
                          overwritten=replacing, files_copied=1, directories_copied=0,
                          symlinks_copied=0, bytes_copied=len(data), skipped=[],
                          parents_created=list(dst.created))
        assert dst.name is not None
        try:
            dst.ensure_parents()
            src_fd = os.open(src.name, DIR_FLAGS, dir_fd=src.dir_fd)
        except OSError as exc:
            dst.rollback_parents()
            raise os_error(exc, params.source) from exc
        except BaseException:
            dst.rollback_parents()
            raise
        note_dir(dst.dir_fd)  # the half-made copy of a kill is removed by the next call
        sweep_dead_dirs(dst.dir_fd)  # what killed deletes and copies left here
        staging = temp_name(dst.name)
        parent_rel = dst.parent_rel
        staging_rel = staging if parent_rel == "." else f"{parent_rel}/{staging}"
        source_rel = src.rel

        def link_refusal(rel: str) -> str | None:
            # The link must stay inside both where it was and where the copy puts it.
            for base in (source_rel, staging_rel):
                try:
                    ctx.workspace.resolve(f"{base}/{rel}").close()
                except ToolError as err:
                    if err.code == "outside_workspace":
                        return "symlink pointing outside the workspace"
                    return f"symlink whose target cannot be checked ({err.code})"
            return None

        try:
            count = copy_tree(src_fd, dst.dir_fd, staging, shown=params.source,
                              link_refusal=link_refusal)
            rename_noreplace(dst.dir_fd, staging, dst.dir_fd, dst.name, is_dir=True,
                             shown=params.destination)
        except BaseException:
            try:
                remove_tree(dst.dir_fd, staging, staging)
            except (ToolError, OSError):
                pass
            dst.rollback_parents()
            raise
        finally:
            os.close(src_fd)
        return Result(source=src.rel, destination=dst.rel, type="directory", overwritten=False,
                      files_copied=count.files, directories_copied=count.directories,
                      symlinks_copied=count.symlinks, bytes_copied=count.bytes,
                      skipped=count.skipped, parents_created=list(dst.created))


def render(result: Result) -> str:
    if result.type == "file":
        extra = " (replaced the old file)" if result.overwritten else ""
        return f"copied {result.source} -> {result.destination}{extra}\n"
    out = (f"copied directory {result.source} -> {result.destination} ({result.files_copied} "
           f"files, {result.directories_copied} directories, {result.symlinks_copied} symlinks)\n")
    for item in result.skipped:
        out += f"skipped {item['path']}: {item['reason']}\n"
    return out


TOOL = ToolSpec(
    name="copy_file",
    doc=__doc__,
    params=Params,
    result=Result,
    run=run,
    operand=("source", "destination"),
    render_text=render,
)

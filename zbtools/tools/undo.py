"""Undo the most recent change an edit tool made to a file (or, without a path, anywhere).

Restores the bytes the file had before that change: apply_edit, edit_file, insert_text, a patch
(created files are deleted again, with the directories made for them
while they are empty; deleted or renamed ones restored), write_file or write_append.
Each undo steps one version further back (the last 20 versions of each file are kept, in the
state directory outside the workspace). ``dry_run: true`` says what would be restored.

It refuses with ``stale_file`` when the file changed since the change being undone (its current
sha256 is not the one that change produced), so work done afterwards is never clobbered.

The file gets back its permission bits, and its hard links: a file deleted, renamed or replaced
by a new one (a patch of several files, a name outside the workspace) shares its inode again with
its other names in the workspace when one of them still holds the old content; when none does,
the content comes back in a file of its own and a warning says so.

Failure modes: ``not_found`` (nothing to undo for that path, or at all), ``stale_file``,
``already_exists`` (restoring a deleted file whose name is taken again), ``io_error`` (a corrupt
journal), ``outside_workspace``.
"""

from __future__ import annotations

import os
import stat

from zbtools.contract import ToolError
from zbtools.core.call.args import Struct, field
from zbtools.core.editing.undo import Journal, Undoing
from zbtools.core.errors import stale_file
from zbtools.core.files.hashing import sha256_hex
from zbtools.core.files.reading import read_bytes
from zbtools.core.files.replacing import create_file
from zbtools.core.files.workspace import os_error
from zbtools.toolkit.params import PATH_ALIASES
from zbtools.toolspec import ToolSpec

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from zbtools.core.call.context import Context
    from zbtools.core.files.workspace import Resolved


class Params(Struct):
    path: str | None = field(default=None, aliases=PATH_ALIASES,
                             help="File whose last change to undo (default: the newest change)")
    dry_run: bool = field(default=False, help="Say what would be restored, change nothing")


class Result(Struct):
    path: str = field(help="The file restored, relative to the workspace root")
    action: str = field(help="restored, deleted (undoing a creation) or recreated")
    tool: str = field(help="The tool whose change was undone")
    undone_at: float = field(help="When that change was made (Unix time)")
    sha256: str | None = field(help="SHA-256 of the file now (null when deleted)")
    remaining: int = field(help="Older versions of this file still available to undo")
    dry_run: bool = field(help="Nothing was changed")


def _current(ctx: Context, rel: str) -> bytes | None:
    with ctx.workspace.resolve(rel) as res:
        if res.st is None:
            return None
        return read_bytes(res, shown=rel)


def _relink(ctx: Context, res: Resolved, links: list[str], before: bytes, rel: str) -> bool:
    """Give ``rel`` back the inode it shared with its other hard links (``links``, recorded by
    the change that took the name away: a delete, a rename, a replace by a new file), when one
    of them still holds exactly ``before``: a hard link made beside it, then renamed over it.
    False when the name already shares that inode (the plain restore keeps it) or no link
    qualifies, with a warning then: the content comes back in a file of its own."""
    from zbtools.core.files.tempnames import temp_name

    assert res.name is not None
    digest = sha256_hex(before)
    for other in links:
        try:
            with ctx.workspace.resolve(other, follow_last=False, write=True) as peer:
                st = peer.st
                if st is None or peer.name is None or not stat.S_ISREG(st.st_mode) or \
                        sha256_hex(read_bytes(peer, shown=other)) != digest:
                    continue
                if res.st is not None and (res.st.st_dev, res.st.st_ino) == \
                        (st.st_dev, st.st_ino):
                    return False
                res.ensure_parents()
                if res.st is None:
                    os.link(peer.name, res.name, src_dir_fd=peer.dir_fd,
                            dst_dir_fd=res.dir_fd, follow_symlinks=False)
                    return True
                tmp = temp_name(res.name)
                os.link(peer.name, tmp, src_dir_fd=peer.dir_fd, dst_dir_fd=res.dir_fd,
                        follow_symlinks=False)
                try:
                    os.rename(tmp, res.name, src_dir_fd=res.dir_fd, dst_dir_fd=res.dir_fd)
                except OSError:
                    os.unlink(tmp, dir_fd=res.dir_fd)
                    raise
                return True
        except ToolError:
            continue
        except OSError as exc:
            raise os_error(exc, rel) from exc
    ctx.warn(f"{rel} had other hard links ({', '.join(links)}); none holds its old content "
             "any more, so it is restored as a separate file")
    return False


def _delete(ctx: Context, res: Resolved, current: bytes, entry: dict[str, Any],
            journal: Journal) -> None:
    """Undo a creation: the file goes, then the directories made for it while they are empty,
    then its record. Several steps, so they go through the intent journal (``editing.txn``):
    a kill part-way is rolled back or completed by the next call, record and all."""
    from zbtools.core.editing.txn import Step, run_transaction

    def drop() -> None:
        journal.entries.remove(entry)
        journal.save()

    run_transaction(ctx, [Step(res, "delete", before=current)], "undo",
                    undoing=Undoing(str(entry["id"]), list(entry.get("parents") or []), drop))


def run(params: Params, ctx: Context) -> Result:
    target: str | None = None
    if params.path is not None:
        with ctx.workspace.resolve(params.path, follow_last=False) as res:
            target = res.rel
    with Journal(ctx) as journal:
        candidates = [e for e in journal.entries if target is None or e["path"] == target]
        if not candidates:
            where = f" for {target}" if target else ""
            raise ToolError("not_found", f"nothing to undo{where}",
                            hint="only changes made by zbtools edit tools can be undone",
                            details={"path": target} if target else None)
        entry: dict[str, Any] = candidates[-1]
        rel = entry["path"]
        current = _current(ctx, rel)
        current_sha = sha256_hex(current) if current is not None else None
        if current_sha != entry["after_sha256"]:
            raise stale_file(rel, f"changed since the {entry['tool']} change being undone; "
                             "undoing it would lose the later work",
                             hint="read the file and revert by hand with apply_edit if still "
                             "wanted", expected_sha256=entry["after_sha256"],
                             current_sha256=current_sha)
        before = journal.get_blob(entry["before_blob"]) if entry["before_blob"] else None
        action = "deleted" if before is None else ("recreated" if current is None
                                                   else "restored")
        remaining = len(candidates) - 1 if target else len(
            [e for e in journal.entries if e["path"] == rel]) - 1
        if not params.dry_run:
            with ctx.workspace.resolve(rel, follow_last=False, create_parents=True,
                                          write=True) as res:
                if before is None:
                    assert current is not None  # it is as the change made it
                    _delete(ctx, res, current, entry, journal)
                elif entry.get("links") and _relink(ctx, res, entry["links"], before, rel):
                    pass  # the name has its inode back, shared with its other hard links
                else:
                    if entry.get("links") == []:  # its other names lie outside the workspace
                        ctx.warn(f"{rel} had hard links outside the workspace, which are "
                                 "never written through: it is restored as a separate file")
                    res.ensure_parents()
                    if current is None:
                        create_file(res, before, mode=entry.get("mode"), shown=rel)
                    else:  # against the content just checked; a hard link is kept
                        from zbtools.core.editing.txn import replace_file

                        replace_file(ctx, res, before, expected_sha256=current_sha, shown=rel,
                                     tool="undo")
            if before is not None:  # an undone creation dropped its record with the file
                journal.entries.remove(entry)
                journal.save()
    return Result(path=rel, action=action, tool=entry["tool"], undone_at=entry["time"],
                  sha256=sha256_hex(before) if before is not None else None,
                  remaining=remaining, dry_run=params.dry_run)


def render(result: Result) -> str:
    verb = "would be" if result.dry_run else "was"
    what = {"restored": "restored to its previous version", "deleted": "deleted (it had been "
            "created)", "recreated": "recreated"}[result.action]
    return (f"{result.path} {verb} {what}, undoing {result.tool}; {result.remaining} older "
            "version(s) left\n")


TOOL = ToolSpec(
    name="undo",
    aliases=("undo_edit",),
    doc=__doc__,
    params=Params,
    result=Result,
    run=run,
    render_text=render,
    destructive=True,
    category="edit",
)

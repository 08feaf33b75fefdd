"""Multi-file changes that are all or nothing, even when the process is killed (``kill -9``).

POSIX renames one file atomically, never several, so a patch that touches more than one file (or
renames one), and an ``undo`` of a creation (``editing.undo.Undoing``), goes through an intent
journal in the state directory: written and ``fsync``-ed before anything in the workspace
changes, naming every staged version and every backup (a hard link to the original inode), then
the renames, then ``committed`` (docs/internals/files.md#intent-journal). A failure part-way
rolls back in the process; a process killed part-way leaves the journal, and the next call of
any tool rolls a ``prepared`` journal back or completes a ``committed`` one before doing
anything else, and says so in its warnings. Failure modes: ``stale_file``, the file system's
``os_error`` codes; an unreadable journal is left in place with a warning.

Map: ``Step``, ``run_transaction`` (the journal, commit and rollback), ``recover`` (what the
next call runs); ``replace_file``, ``write_in_place``, ``journaled_append``,
``warn_if_link_broken`` (one file written in place or replaced, keeping its inode, all or
nothing under ``kill -9``).
"""

from __future__ import annotations

import errno
import os
import stat

from zbtools.contract import ToolError
from zbtools.core.errors import already_exists, stale_file
from zbtools.core.files.appending import append_in_place
from zbtools.core.files.hashing import sha256_hex
from zbtools.core.files.reading import read_fd
from zbtools.core.files.replacing import SPECIAL_BITS, current_umask, pause_point
from zbtools.core.files.staleness import check_unchanged
from zbtools.core.files.tempnames import (
    own_host,
    own_start,
    sweep_dead_temps,
    temp_name,
    writer_alive,
)
from zbtools.core.files.writerlog import note_dir

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from zbtools.core.call.context import Context
    from zbtools.core.editing.undo import Undoing
    from zbtools.core.files.replacing import WriteOutcome
    from zbtools.core.files.workspace import Resolved

JOURNAL_VERSION = 1
TXN_DIR = "txn"
_NO_LINKS = (errno.EPERM, errno.EMLINK, errno.EOPNOTSUPP)  # no hard links here
REPATCH_HINT = "read the files again and redo the patch"


class Step:
    """One file of a transaction: write ``data`` to it (``mode`` for a new file), or delete it."""

    def __init__(self, res: Resolved, op: str, data: bytes | None = None,
                 before: bytes | None = None, mode: int | None = None) -> None:
        assert res.name is not None
        self.res = res
        self.op = op  # write | delete
        self.data = data
        self.before = before  # the content the caller read (None: the file must not exist)
        self.mode = mode
        self.seen: os.stat_result | None = None  # the file as the patch read it (staged)
        self.tmp = temp_name(res.name) if op == "write" else None
        self.backup = temp_name(res.name, "zbbak") if before is not None else None
        comps = res.parent_rel.split("/")
        self.dirs = ["/".join(comps[:len(comps) - k]) for k in range(len(res.missing))]

    def record(self) -> dict[str, Any]:
        return {"op": self.op, "path": self.res.rel, "tmp": self.tmp, "backup": self.backup,
                "sha256": sha256_hex(self.data) if self.data is not None else None,
                "dirs": self.dirs}


def _folder(ctx: Context) -> str:
    return os.path.join(ctx.state_path(), TXN_DIR)


def _fsync_dir(dir_fd: int) -> None:
    try:
        os.fsync(dir_fd)
    except OSError:
        pass


def _write_journal(folder: str, name: str, doc: dict[str, Any]) -> None:
    from zbtools.core.call.fastjson import dumps_ascii
    from zbtools.core.state.store import replace_durably

    replace_durably(folder, name, (dumps_ascii(doc) + "\n").encode("ascii"))


def _unlink_quiet(name: str | None, dir_fd: int) -> None:
    if name is None:
        return
    try:
        os.unlink(name, dir_fd=dir_fd)
    except OSError:
        pass


def _stage(step: Step) -> None:
    """Write the new version beside the target and link the old one to its backup."""
    res = step.res
    assert res.name is not None
    res.ensure_parents()
    dir_fd = res.dir_fd
    note_dir(dir_fd)
    sweep_dead_temps(dir_fd)
    if step.backup is not None:
        linked = True
        try:
            os.link(res.name, step.backup, src_dir_fd=dir_fd, dst_dir_fd=dir_fd,
                    follow_symlinks=False)
        except FileNotFoundError:
            raise stale_file(res.rel, "was deleted while the patch was being applied",
                             hint=REPATCH_HINT) from None
        except OSError as exc:
            if exc.errno not in _NO_LINKS:
                raise
            linked = False
            _write_new(dir_fd, step.backup, step.before or b"", _mode_of(res))
        # The file itself (after the link, which changes its ctime) is what the patch read:
        # its identity is kept for the check right before its rename (``_apply``).
        try:
            fd = os.open(res.name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                         dir_fd=dir_fd)
        except FileNotFoundError:
            fd = -1
        try:
            if fd >= 0:
                step.seen = os.fstat(fd)
                same = read_fd(fd) == step.before
            else:
                same = False
        finally:
            if fd >= 0:
                os.close(fd)
        if not same or (linked and not _same_inode(dir_fd, step.backup, step.seen)):
            # the backup may not be of what the patch read: a rollback must not put it back
            _unlink_quiet(step.backup, dir_fd)
            raise stale_file(res.rel, "changed while the patch was being applied",
                             hint=REPATCH_HINT)
    if step.op == "write":
        assert step.tmp is not None and step.data is not None
        if step.before is not None:
            mode = _mode_of(res)
        elif step.mode is not None:
            mode = step.mode & ~SPECIAL_BITS
        else:
            mode = 0o666 & ~current_umask()
        _write_new(dir_fd, step.tmp, step.data, mode)
        if step.before is not None and res.st is not None:
            try:
                os.chown(step.tmp, res.st.st_uid, res.st.st_gid, dir_fd=dir_fd,
                         follow_symlinks=False)
                os.chmod(step.tmp, mode, dir_fd=dir_fd)
            except OSError:
                pass


def _same_inode(dir_fd: int, backup: str, seen: os.stat_result | None) -> bool:
    """Whether the backup is a hard link to the inode ``seen``."""
    if seen is None:
        return False
    try:
        st = os.stat(backup, dir_fd=dir_fd, follow_symlinks=False)
    except OSError:
        return False
    return (st.st_dev, st.st_ino) == (seen.st_dev, seen.st_ino)


def _mode_of(res: Resolved) -> int:
    return stat.S_IMODE(res.st.st_mode) & ~SPECIAL_BITS if res.st is not None else 0o600


def _write_new(dir_fd: int, name: str, data: bytes, mode: int) -> None:
    fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                 0o600, dir_fd=dir_fd)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fchmod(fd, mode)
        os.fsync(fd)
    finally:
        os.close(fd)


def _apply(step: Step) -> None:
    res = step.res
    assert res.name is not None
    dir_fd = res.dir_fd
    pause_point()
    if step.seen is not None:  # what the patch read must still be there, unchanged
        try:
            check_unchanged(dir_fd, res.name, step.seen, res.rel, expected=step.before)
        except ToolError:
            _unlink_quiet(step.backup, dir_fd)  # the rollback must leave this file alone
            raise
    if step.op == "delete":
        os.unlink(res.name, dir_fd=dir_fd)
    elif step.before is not None:
        assert step.tmp is not None
        os.rename(step.tmp, res.name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    else:
        assert step.tmp is not None
        try:  # no clobber: link() fails on any existing name
            os.link(step.tmp, res.name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd,
                    follow_symlinks=False)
        except FileExistsError:
            raise already_exists(res.rel, hint="read it and decide", what="was created by "
                                 "someone else while the patch was being applied") from None
        except OSError as exc:
            if exc.errno not in _NO_LINKS:
                raise
            os.rename(step.tmp, res.name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        else:
            os.unlink(step.tmp, dir_fd=dir_fd)


def _begin(ctx: Context, tool: str, steps: list[dict[str, Any]], what: str, untouched: str,
           advice: str = "", undoing: dict[str, Any] | None = None
           ) -> tuple[str, str, dict[str, Any]]:
    """Write a ``prepared`` journal of ``steps``: (its folder, its name, the document).
    Raises ``io_error`` (``what`` is refused, ``untouched`` says so) when it cannot be written."""
    folder = _folder(ctx)
    txn_id = f"{os.getpid()}-{os.urandom(6).hex()}"
    name = f"{txn_id}.json"
    doc: dict[str, Any] = {"v": JOURNAL_VERSION, "kind": "txn", "id": txn_id, "tool": tool,
                           "pid": os.getpid(), "start": own_start(), "host": own_host(),
                           "time": round(ctx.clock(), 3), "state": "prepared", "steps": steps}
    if undoing is not None:
        doc["undoing"] = undoing
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        _write_journal(folder, name, doc)
    except OSError as exc:
        _forget(folder, name)
        raise ToolError("io_error", f"cannot write the journal that makes {what} all or "
                        f"nothing ({folder}: {os.strerror(exc.errno or 0)}); {untouched}",
                        hint="make the state directory writable, or set ZBTOOLS_STATE_DIR to a "
                        "writable directory" + advice) from exc
    return folder, name, doc


def run_transaction(ctx: Context, steps: list[Step], tool: str, *,
                    undoing: Undoing | None = None) -> None:
    """Apply every step or none (see the module docstring). The caller holds the edit lock and
    keeps the steps' ``Resolved`` open; it closes them. ``undoing``: the steps undo a change of
    the undo journal, which goes with them (``Undoing``)."""
    from zbtools.core.files.workspace import os_error

    folder, name, doc = _begin(ctx, tool, [s.record() for s in steps],
                               "a change of several files", "nothing was changed",
                               "; or change the files one at a time",
                               undoing.record() if undoing is not None else None)
    try:
        for step in steps:
            _stage(step)
        for step in steps:  # the staged files and backups are durable before the first rename
            _fsync_dir(step.res.dir_fd)
        for step in steps:
            _apply(step)
        for step in steps:
            _fsync_dir(step.res.dir_fd)
        doc["state"] = "committed"
        _write_journal(folder, name, doc)
        pause_point()  # test-only: a kill right after the commit point
    except BaseException as exc:
        failed = _rollback(ctx, doc)[1]
        if failed:  # the journal stays: the next call tries again
            ctx.warn("the change could not be rolled back completely ("
                     + "; ".join(failed) + "); the next zbtools call on this workspace tries "
                     "again")
        else:
            _forget(folder, name)
        if isinstance(exc, OSError):
            raise os_error(exc, steps[0].res.rel) from exc
        raise
    for step in steps:
        _unlink_quiet(step.backup, step.res.dir_fd)
        _unlink_quiet(step.tmp, step.res.dir_fd)
        st = step.res.st
        if step.op == "write" and step.before is not None and st is not None and \
                st.st_nlink > 1:
            ctx.warn(f"{step.res.rel} had {st.st_nlink} hard links: a patch of several files "
                     "replaces each file whole, so its other names keep the old content "
                     "(hardlink_broken); patch it alone to keep the link")
    if undoing is not None:  # a kill before the journal goes: the next call finishes this
        undoing.finish(ctx)
    _forget(folder, name)


PAGE = 4096


def journaled_append(ctx: Context, res: Resolved, data: bytes, *,
                     expected_sha256: str | None, shown: str) -> int:
    """Append ``data`` in place, all or nothing even under ``kill -9``; returns the new size.

    The kernel copies a write into the page cache page by page and stops at the next page when
    the process is killed, so an append that stays within one page cannot be cut short and
    needs nothing more. A longer one first writes the journal (the file, its inode and its size
    before); the next call truncates a cut-short append back to that size."""
    assert res.st is not None
    before = res.st.st_size
    if before % PAGE + len(data) <= PAGE:
        return append_in_place(res, data, expected_sha256=expected_sha256, shown=shown)[1]
    folder, name, _ = _begin(ctx, "write_append", [
        {"op": "append", "path": res.rel, "size": before, "length": len(data),
         "dev": res.st.st_dev, "ino": res.st.st_ino}], "an append", "nothing was appended")
    try:
        pause_point()  # test-only: a kill after the journal, before the write
        return append_in_place(res, data, expected_sha256=expected_sha256, shown=shown)[1]
    finally:
        _forget(folder, name)


def replace_file(ctx: Context, res: Resolved, data: bytes, *, expected_sha256: str | None,
                 shown: str, tool: str, expected_data: bytes | None = None,
                 read_stat: os.stat_result | None = None,
                 defer_dir_sync: bool = False) -> WriteOutcome:
    """Replace an existing (or create a new) file's content with ``data``, keeping its inode
    when it has other hard links that all lie inside the workspace.

    A file with one link is replaced atomically (``replace_whole``). A file with several keeps
    its inode, so every name sees the new content (and its owner, mode and extended attributes
    stay): only when a bounded walk of the workspace finds every one of its names there
    (``Workspace.links_all_inside``), since a name outside would be changed too
    (docs/internals/security.md#t3). Otherwise it is replaced atomically and the link is broken,
    with a warning (``hardlink_broken``). The in-place write is journaled (``write_in_place``).
    ``expected_data`` (the bytes the file must still hold) and ``read_stat`` are the
    ``Guard``'s; ``defer_dir_sync``: write within the session's ``SyncGroup``, if one is open
    (``replace_whole``'s ``group``)."""
    from zbtools.core.files.replacing import replace_whole
    from zbtools.core.files.staging import sync_group
    from zbtools.core.files.staleness import Guard

    st = res.st
    group = sync_group() if defer_dir_sync else None
    staged = group is not None and group.staged_for(res) is not None
    if st is not None and stat.S_ISREG(st.st_mode) and st.st_nlink > 1 and res.base == "" \
            and not staged and ctx.workspace.links_all_inside(st):
        if expected_sha256 is None and expected_data is not None:
            expected_sha256 = sha256_hex(expected_data)
        return write_in_place(ctx, res, data, expected_sha256=expected_sha256, shown=shown,
                              tool=tool)
    outcome = replace_whole(res, data, Guard(expected_sha256=expected_sha256,
                                             expected_data=expected_data, read_stat=read_stat),
                            group=group, shown=shown)
    warn_if_link_broken(ctx, res, outcome)
    return outcome


def warn_if_link_broken(ctx: Context, res: Resolved, outcome: WriteOutcome) -> None:
    """The warning of a replace that split a file's hard links (``hardlink_broken``: it had
    other names when it was replaced, e.g. a link made after it was read)."""
    if outcome.hardlink_broken:
        ctx.warn(f"{res.rel} had {outcome.old_links} hard links, some of them outside the "
                 "workspace (or made while it was edited): it was replaced by a new file, so "
                 "its other names keep the old content (hardlink_broken)")


def write_in_place(ctx: Context, res: Resolved, data: bytes, *, expected_sha256: str | None,
                   shown: str, tool: str) -> WriteOutcome:
    """Overwrite the file's own inode with ``data``, losing nothing even under ``kill -9``.

    Order: the journal (naming the file's inode, the sha256 of its old and new content and a
    backup name) is made durable; then a full copy of the old content is written beside the
    file (``.<name>.zbbak-…``) and made durable; the change is checked again (``stale_file``
    if someone wrote meanwhile); only then is the file overwritten, truncated and ``fsync``-ed;
    the backup and the journal go last. A call killed part-way is finished by the next one
    (``_recover_in_place``): a file left half-written gets its old content back from the
    backup, in the same inode."""
    from zbtools.core.files.reading import READ_FLAGS, special_file_error
    from zbtools.core.files.replacing import WriteOutcome
    from zbtools.core.files.staleness import check_expected
    from zbtools.core.files.workspace import os_error

    assert res.name is not None
    outcome = WriteOutcome()
    try:
        fd = os.open(res.name, (READ_FLAGS & ~os.O_RDONLY) | os.O_RDWR, dir_fd=res.dir_fd)
    except OSError as exc:
        raise os_error(exc, shown) from exc
    backup: str | None = None
    journal: tuple[str, str] | None = None
    written = False
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise special_file_error(shown, st)
        if not st.st_mode & 0o222:
            raise ToolError("permission_denied", f"{shown}: is read-only (mode "
                            f"{stat.S_IMODE(st.st_mode):04o})",
                            hint="make it writable first if changing it is intended")
        old = read_fd(fd)
        check_expected(old, expected_sha256, shown)
        outcome.old_size = len(old)
        if old == data:
            outcome.changed = False
            return outcome
        backup = temp_name(res.name, "zbbak")
        folder, name, _ = _begin(ctx, tool, [
            {"op": "inplace", "path": res.rel, "backup": backup, "dev": st.st_dev,
             "ino": st.st_ino, "old_sha256": sha256_hex(old), "sha256": sha256_hex(data)}],
            "an in-place write", "nothing was changed")
        journal = (folder, name)
        _write_new(res.dir_fd, backup, old, 0o600)
        _fsync_dir(res.dir_fd)
        pause_point()  # test-only: a kill with the journal and the backup durable
        check_unchanged(res.dir_fd, res.name, st, shown, expected=old)
        written = True
        _overwrite(fd, data)
        pause_point()  # test-only: a kill after the new content is durable
    except BaseException as exc:
        if written:  # put the old content back into the inode
            try:
                _overwrite(fd, old)
                written = False
            except OSError:
                pass  # the journal and the backup stay: the next call restores it
        if not written:
            _unlink_quiet(backup, res.dir_fd)
            if journal is not None:
                _forget(*journal)
        if isinstance(exc, OSError):
            raise os_error(exc, shown) from exc
        raise
    finally:
        os.close(fd)
    _unlink_quiet(backup, res.dir_fd)
    _forget(*journal)
    return outcome


def _overwrite(fd: int, data: bytes) -> None:
    os.lseek(fd, 0, os.SEEK_SET)
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
    os.ftruncate(fd, len(data))
    os.fsync(fd)


def _recover_in_place(ctx: Context, record: dict[str, Any]) -> tuple[str, bool]:
    """Finish an in-place write cut short: (what was found, whether the journal can go)."""
    res = _open_step(ctx, record)
    if res is None:
        return "the file is gone", True
    backup = str(record.get("backup"))
    try:
        fd, st = _open_journaled(res, record, os.O_RDWR)
        try:
            if st is None:
                found = "the file was replaced since; it was left as it is"
            else:
                current = sha256_hex(read_fd(fd))
                if current == record.get("sha256"):
                    found = "the new content had been written whole"
                elif current == record.get("old_sha256"):
                    found = "nothing had been written"
                else:
                    saved = _read_quiet(backup, res.dir_fd)
                    if saved is None or sha256_hex(saved) != record.get("old_sha256"):
                        return ("the file is part-written and its backup "
                                f"{backup} is not complete; both were left as they are", False)
                    _overwrite(fd, saved)
                    found = "the part-written file got its old content back"
        finally:
            os.close(fd)
        _unlink_quiet(backup, res.dir_fd)
        return found, True
    except OSError as exc:
        return f"the file could not be checked ({os.strerror(exc.errno or 0)})", False
    finally:
        res.close()


def _open_journaled(res: Resolved, record: dict[str, Any],
                    flags: int) -> tuple[int, os.stat_result | None]:
    """The journaled file opened with ``flags``, and its ``fstat``; None for the stat when it is
    no longer the regular file the journal names (another inode: replaced since)."""
    assert res.name is not None
    fd = os.open(res.name, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                 dir_fd=res.dir_fd)
    try:
        st = os.fstat(fd)
    except OSError:
        os.close(fd)
        raise
    if (st.st_dev, st.st_ino) != (record.get("dev"), record.get("ino")) or \
            not stat.S_ISREG(st.st_mode):
        return fd, None
    return fd, st


def _read_quiet(name: str, dir_fd: int) -> bytes | None:
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
    except OSError:
        return None
    try:
        return read_fd(fd)
    finally:
        os.close(fd)


def _recover_append(ctx: Context, record: dict[str, Any]) -> str:
    """Cut a cut-short append back off; returns what was found."""
    res = _open_step(ctx, record)
    if res is None:
        return "the file is gone"
    try:
        size, length = int(record["size"]), int(record["length"])
        fd, st = _open_journaled(res, record, os.O_WRONLY)
        try:
            if st is None:
                return "the file was replaced since; it was left as it is"
            if st.st_size == size + length:
                return "the append had been written whole"
            if size < st.st_size < size + length:
                os.ftruncate(fd, size)
                os.fsync(fd)
                return "the part of the append that had been written was cut off"
            if st.st_size == size:
                return "nothing had been appended"
            return "the file changed since; it was left as it is"
        finally:
            os.close(fd)
    except (OSError, ValueError, TypeError, KeyError):
        return "the file could not be checked"
    finally:
        res.close()


def _forget(folder: str, name: str) -> None:
    try:
        os.unlink(os.path.join(folder, name))
    except OSError:
        pass
    try:
        os.rmdir(folder)  # gone when empty: the next call's check is one failed stat
    except OSError:
        pass


def _open_step(ctx: Context, record: dict[str, Any]) -> Resolved | None:
    try:
        res = ctx.workspace.resolve(str(record["path"]), follow_last=False, create_parents=True)
    except ToolError:
        return None
    if res.missing or res.name is None:
        res.close()  # its directory was never created: nothing of this step reached the disk
        return None
    return res


def _regular_sha(res: Resolved) -> str | None:
    assert res.name is not None
    try:
        fd = os.open(res.name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                     dir_fd=res.dir_fd)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return sha256_hex(read_fd(fd))
    finally:
        os.close(fd)


def _rollback(ctx: Context, doc: dict[str, Any]) -> tuple[list[str], list[str]]:
    """Put every file of the journal back as it was; returns the paths it had to change and
    what failed (each step is tried, whatever failed before it)."""
    touched: list[str] = []
    failed: list[str] = []
    for record in reversed(doc["steps"]):
        res = _open_step(ctx, record)
        if res is not None:
            try:
                assert res.name is not None
                _unlink_quiet(record.get("tmp"), res.dir_fd)
                backup = record.get("backup")
                if backup is not None:
                    try:
                        os.rename(backup, res.name, src_dir_fd=res.dir_fd, dst_dir_fd=res.dir_fd)
                    except FileNotFoundError:
                        pass  # never staged (nothing changed yet) or already put back
                    else:
                        touched.append(res.rel)
                    _unlink_quiet(backup, res.dir_fd)  # the same inode as the file: still there
                elif record.get("op") == "write" and record.get("sha256") is not None and \
                        _regular_sha(res) == record["sha256"]:
                    os.unlink(res.name, dir_fd=res.dir_fd)  # a new file: ours by its content
                    touched.append(res.rel)
                _fsync_dir(res.dir_fd)
            except OSError as exc:
                failed.append(f"{res.rel}: {os.strerror(exc.errno or 0)}")
            finally:
                res.close()
        for rel in record.get("dirs") or []:
            try:
                parent = ctx.workspace.resolve(rel, follow_last=False)
            except ToolError:
                continue
            try:
                if parent.name is not None and parent.st is not None and \
                        stat.S_ISDIR(parent.st.st_mode):
                    os.rmdir(parent.name, dir_fd=parent.dir_fd)
            except OSError:
                pass
            finally:
                parent.close()
    return touched, failed


def _complete(ctx: Context, doc: dict[str, Any]) -> tuple[list[str], list[str]]:
    """Finish a committed journal: record the change for undo, remove backups and staging.
    Returns the paths finished, and those whose change cannot be undone: the writer had
    already removed their backup (the old version) when it was killed, and a record without
    it would say the file was created, so that ``undo`` would delete it."""
    from zbtools.core.editing.undo import record as record_undo

    done: list[str] = []
    lost: list[str] = []
    for record in doc["steps"]:
        res = _open_step(ctx, record)
        if res is None:
            continue
        try:
            assert res.name is not None
            before: bytes | None = None
            mode: int | None = None  # the old file's (its backup is that inode, or a copy)
            backup = record.get("backup")
            if backup is not None:
                try:
                    fd = os.open(backup, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC,
                                 dir_fd=res.dir_fd)
                except OSError:
                    fd = -1
                if fd >= 0:
                    try:
                        mode = stat.S_IMODE(os.fstat(fd).st_mode)
                        before = read_fd(fd)
                    finally:
                        os.close(fd)
            after: bytes | None = None
            if record.get("op") == "write":
                try:
                    fd = os.open(res.name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC,
                                 dir_fd=res.dir_fd)
                    try:
                        after = read_fd(fd)
                    finally:
                        os.close(fd)
                except OSError:
                    after = None
            if backup is not None and before is None:
                lost.append(res.rel)
            elif before is not None or after is not None:
                record_undo(ctx, res.rel, before, after, str(doc.get("tool") or "apply_edit"),
                            mode)
            _unlink_quiet(backup, res.dir_fd)
            _unlink_quiet(record.get("tmp"), res.dir_fd)
            done.append(res.rel)
        finally:
            res.close()
    return done, lost


def _discard(ctx: Context, doc: dict[str, Any]) -> list[str]:
    """Remove a committed journal's backups and staged files; returns the paths done."""
    done: list[str] = []
    for record in doc["steps"]:
        res = _open_step(ctx, record)
        if res is not None:
            _unlink_quiet(record.get("backup"), res.dir_fd)
            _unlink_quiet(record.get("tmp"), res.dir_fd)
            done.append(res.rel)
            res.close()
    return done


def recover(ctx: Context) -> None:
    """Finish every unfinished journal of a dead writer (see the module docstring)."""
    from zbtools.core.call.fastjson import loads_strict
    from zbtools.core.state.store import EditLock

    folder = _folder(ctx)
    with EditLock(ctx):
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            return
        for name in names:
            path = os.path.join(folder, name)
            if name.startswith("."):  # a journal write that was cut short
                parts = name.rsplit(".tmp-", 1)
                pid = parts[1].split("-")[0] if len(parts) == 2 else ""
                if pid.isdigit() and not writer_alive(int(pid), "0"):
                    _forget(folder, name)
                continue
            if not name.endswith(".json"):
                continue
            try:
                with open(path, "rb") as fh:
                    doc = loads_strict(fh.read().decode("utf-8"))
                if not isinstance(doc, dict) or doc.get("v") != JOURNAL_VERSION or \
                        not isinstance(doc.get("steps"), list):
                    raise ValueError("not a journal")
            except (OSError, ValueError, UnicodeDecodeError):
                ctx.warn(f"an unfinished change journal {path} cannot be read; it was left "
                         "untouched (move it away once the files are checked)")
                continue
            owner, started = doc.get("pid"), str(doc.get("start"))
            if isinstance(owner, int) and owner != os.getpid() and \
                    doc.get("host") == own_host() and writer_alive(owner, started):
                continue  # its writer is still at work (one of another boot is not)
            try:
                finished = _finish(ctx, doc)
            except (OSError, ToolError, ValueError, KeyError, TypeError) as exc:
                ctx.warn(f"an unfinished change journal {path} could not be finished ({exc}); "
                         "it was left for the next call")
                continue
            if finished:
                _forget(folder, name)


def _finish(ctx: Context, doc: dict[str, Any]) -> bool:
    """Roll back or complete one dead writer's journal; whether it can be forgotten."""
    owner = doc.get("pid")
    tool = doc.get("tool") or "a change"
    steps = doc["steps"]
    if len(steps) == 1 and isinstance(steps[0], dict) and steps[0].get("op") == "inplace":
        found, done = _recover_in_place(ctx, steps[0])
        ctx.warn(f"an interrupted {tool} of {steps[0].get('path')} (process {owner}), which "
                 f"was writing the file in place, was checked: {found}")
        return done
    if len(steps) == 1 and isinstance(steps[0], dict) and steps[0].get("op") == "append":
        found = _recover_append(ctx, steps[0])
        ctx.warn(f"an interrupted {tool} to {steps[0].get('path')} (process {owner}) "
                 f"was checked: {found}")
    elif doc.get("state") == "committed" and isinstance(doc.get("undoing"), dict):
        from zbtools.core.editing.undo import finish_undoing

        paths = _discard(ctx, doc)
        problem = finish_undoing(ctx, doc["undoing"])
        ctx.warn(f"an interrupted {tool} (process {owner}) had changed every file; it was "
                 f"completed ({', '.join(paths) or 'no files'})" + problem)
    elif doc.get("state") == "committed":
        paths, lost = _complete(ctx, doc)
        ctx.warn(f"an interrupted {tool} (process {owner}) had changed every file; its "
                 f"leftover backups were removed ({', '.join(paths) or 'no files'})"
                 + (f"; its change of {', '.join(lost)} cannot be undone (the old version "
                    "was already gone)" if lost else ""))
    else:
        failed = _rollback(ctx, doc)[1]
        if failed:
            ctx.warn(f"an interrupted {tool} (process {owner}) could not be rolled "
                     f"back completely ({'; '.join(failed)}); the next call tries again")
            return False
        kept = [str(r.get("path")) for r in doc["steps"] if r.get("backup")]
        gone = [str(r.get("path")) for r in doc["steps"] if not r.get("backup")]
        ctx.warn(f"an interrupted {tool} (process {owner}) was rolled back: every file "
                 "it touched is as it was before it ("
                 + "; ".join(part for part in (
                     "kept: " + ", ".join(kept) if kept else "",
                     "not created: " + ", ".join(gone) if gone else "") if part)
                 + ")")
    return True

"""The undo journal: the previous versions of files the edit tools changed
(docs/internals/files.md#undo-journal, docs/internals/security.md#state).

Every successful change made by an edit tool is recorded in the workspace's state directory, outside
the workspace: the bytes before, the sha256 after, the tool and the time. The undo tool
(``zbtools.tools.undo``) restores the newest version of a file, or the newest change anywhere, and
refuses with ``stale_file`` when the file changed since that edit, so an undo never clobbers later
work. The last ``KEEP_PER_FILE`` versions per file and ``KEEP_TOTAL`` entries per workspace are
kept; a file over ``MAX_BLOB`` is not journaled (the change still happens, with a warning). Failure
modes: an unreadable or corrupt journal is ``io_error``, never silently rewritten; a journal write
that fails after the edit succeeded becomes a warning.

Map: ``Journal`` (the open, locked journal and its blobs), ``record`` (a change journaled),
``other_names`` (a file's other hard links), ``tidy`` (a killed writer's temp files),
``Undoing`` (an undo of a creation run as a transaction of ``editing.txn``, its record going
with it, so a kill part-way leaves both as they were or both done).
"""

from __future__ import annotations

import os
import stat

from zbtools.contract import ToolError
from zbtools.core.files.hashing import sha256_hex
from zbtools.core.files.writerlog import note_journal

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from zbtools.core.call.context import Context
    from zbtools.core.files.workspace import Resolved

KEEP_PER_FILE = 20
KEEP_TOTAL = 500
MAX_BLOB = 16 * 1024 * 1024
JOURNAL_VERSION = 1
COMPACT_BYTES = 256 * 1024  # about 1,000 records: then the journal is pruned and rewritten


class Journal:
    """The open, locked journal of one workspace; use as a context manager."""

    def __init__(self, ctx: Context) -> None:
        self._ctx = ctx
        # Not ``ctx.state_dir`` (a ``makedirs`` per edit): ``open`` creates it when missing.
        self.folder = os.path.join(ctx.state_path(), "undo")
        self.blobs = os.path.join(self.folder, "blobs")
        self.path = os.path.join(self.folder, "journal.jsonl")
        self._lock_fd = -1
        self.entries: list[dict[str, Any]] = []

    def __enter__(self) -> Journal:
        if self._lock_fd < 0:  # not opened already by ``open(load=False)``
            self.open(load=True)
        return self

    def open(self, *, load: bool) -> Journal:
        """Take the lock and (``load``) read the entries; ``record`` appends without reading."""
        from zbtools.core.state.store import acquire_lock

        try:
            self._lock_fd = acquire_lock(os.path.join(self.folder, "lock"))
        except FileNotFoundError:
            # ctx.state_dir creates the workspace's state directory first (mode 0700)
            os.makedirs(os.path.join(self._ctx.state_dir, "undo", "blobs"), mode=0o700,
                        exist_ok=True)
            self._lock_fd = acquire_lock(os.path.join(self.folder, "lock"))
        if not os.path.isdir(self.blobs):
            os.makedirs(self.blobs, mode=0o700, exist_ok=True)
        if load:
            try:
                self.entries = self._load()
            except BaseException:
                self.__exit__()  # a corrupt journal must not leave the lock held
                raise
        return self

    def __exit__(self, *_exc: object) -> None:
        if self._lock_fd >= 0:
            os.close(self._lock_fd)  # closing releases the flock
            self._lock_fd = -1

    def _load(self) -> list[dict[str, Any]]:
        from zbtools.core.call.fastjson import loads_strict

        try:
            with open(self.path, encoding="utf-8") as fh:
                content = fh.read()
        except FileNotFoundError:
            return []
        lines = content.splitlines()
        entries = []
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                entry = loads_strict(line)
            except ValueError as exc:
                if number == len(lines) and not content.endswith("\n"):
                    break  # a partial last line: an append cut short by a crash
                raise ToolError("io_error", f"the undo journal {self.path} is corrupt at line "
                                f"{number}", hint="move the file away to start a new journal"
                                ) from exc
            if not isinstance(entry, dict) or entry.get("v") != JOURNAL_VERSION:
                raise ToolError("io_error", f"the undo journal {self.path} has an entry of an "
                                "unknown version (written by a newer zbtools?)",
                                hint="use the zbtools version that wrote it, or move it away")
            entries.append(entry)
        return _pruned(entries)

    def append(self, entry: dict[str, Any]) -> int:
        """Append one record (one write); returns the journal's size after it. Its ``fsync`` is
        done now, or by the session's ``SyncGroup`` when one is open."""
        from zbtools.core.call.fastjson import dumps_ascii
        from zbtools.core.files.staging import sync_group

        line = (dumps_ascii(entry) + "\n").encode("ascii")
        fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            st = os.fstat(fd)
            size = st.st_size
            # As the last append (of this process or another: its stamp is in the lock file)
            # left it, whole: nothing to check. Reading the whole journal to check it costs a
            # fresh process up to ~4 ms per edit.
            known = self._stamped(st)
            if size and not known:
                self._load()  # refuses a corrupt journal (io_error): it is never appended to
            if size and not known and os.pread(fd, 1, size - 1) != b"\n":
                # A partial record of a crashed append: cut it off (under the lock).
                tail = min(size, 1 << 16)
                chunk = os.pread(fd, tail, size - tail)
                keep = size - tail + chunk.rfind(b"\n") + 1 if b"\n" in chunk else 0
                os.ftruncate(fd, keep)
                size = keep
            view = memoryview(line)
            while view:
                view = view[os.write(fd, view):]
            group = sync_group()
            if group is not None:
                group.defer_file(fd)
            else:
                os.fsync(fd)
            self._stamp_lock(_stamp(os.fstat(fd)))
        finally:
            os.close(fd)
        return size + len(line)

    def _stamped(self, st: os.stat_result) -> bool:
        """Whether the lock file holds ``st``'s stamp: the journal is as an append under this
        lock left it (a change by anyone else moves its size or mtime)."""
        try:
            return os.pread(self._lock_fd, 128, 0) == _stamp_line(_stamp(st))
        except OSError:
            return False

    def _stamp_lock(self, stamp: tuple[int, int, int, int]) -> None:
        """Leave the journal's stamp in the lock file for the next process (best effort: a
        missing or stale stamp only makes the next append read the journal)."""
        line = _stamp_line(stamp)
        try:
            os.pwrite(self._lock_fd, line, 0)
            os.ftruncate(self._lock_fd, len(line))
        except OSError:
            pass

    def save(self) -> None:
        from zbtools.core.call.fastjson import dumps_ascii

        note_journal()  # a kill before the rename leaves the temp file to the next call
        tmp = f"{self.path}.tmp-{os.getpid()}"
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write("".join(dumps_ascii(e) + "\n" for e in self.entries))
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, self.path)
        self._prune_blobs()

    def put_blob(self, data: bytes, digest: str | None = None) -> str:
        """Keep ``data`` as the blob named by its sha256 (``digest``, when the caller has it)."""
        if digest is None:
            digest = sha256_hex(data)
        path = os.path.join(self.blobs, digest)
        if not os.path.exists(path):
            note_journal()
            tmp = f"{path}.tmp-{os.getpid()}"
            with open(tmp, "wb") as fh:
                fh.write(data)
            os.replace(tmp, path)
        return digest

    def get_blob(self, digest: str) -> bytes:
        try:
            with open(os.path.join(self.blobs, digest), "rb") as fh:
                data = fh.read()
        except OSError as exc:
            raise ToolError("io_error", "the saved version is missing from the undo journal",
                            hint="it may have been pruned or deleted") from exc
        if sha256_hex(data) != digest:  # cut short by a power cut (blobs are not fsync-ed)
            raise ToolError("io_error", "the saved version in the undo journal is damaged "
                            "(its content does not match its sha256)",
                            hint="it was probably cut short by a crash; nothing was changed")
        return data

    def _prune_blobs(self) -> None:
        wanted = {e.get("before_blob") for e in self.entries}
        try:
            names = os.listdir(self.blobs)
        except OSError:
            return
        for name in names:
            if name not in wanted:
                try:
                    os.unlink(os.path.join(self.blobs, name))
                except OSError:
                    pass


def other_names(ctx: Context, res: Resolved) -> list[str] | None:
    """The other names, in the workspace, of the file ``res`` had before a change that takes
    this name away from its inode (a delete, a rename, a replace that breaks the link), so that
    ``undo`` can give the name its inode back (``Workspace.link_names``: the walk the write
    already made, cached). None for a file with one link; an empty list for one whose other
    names all lie outside the workspace (``undo`` then says it restores a file of its own)."""
    st = res.st
    if st is None or res.missing or res.base or not stat.S_ISREG(st.st_mode) or \
            st.st_nlink < 2:
        return None
    names, _ = ctx.workspace.link_names(st)
    return [n for n in names if n != res.rel]


def record(ctx: Context, rel: str, before: bytes | None, after: bytes | None, tool: str,
           mode: int | None = None, *, after_sha256: str | None = None,
           before_sha256: str | None = None, links: list[str] | None = None,
           parents: list[str] | None = None) -> None:
    """Journal one change of ``rel`` (None: the file did not exist before / after).

    ``after_sha256``, when the caller has it, stands for ``after`` (which is then None): the
    new bytes need not be joined or hashed again. ``before_sha256``, when the caller has it,
    must be the sha256 of ``before`` (which is still kept): it is not hashed again. ``links``:
    the file's other hard links in the workspace, when the change took this name away from
    them (``other_names``). ``parents``: the directories the change created for a new file,
    which undoing it removes again when they are empty."""
    if before == after and after_sha256 is None:
        return
    if before is not None and len(before) > MAX_BLOB:
        ctx.warn(f"{rel} is larger than {MAX_BLOB // (1 << 20)} MiB: this change is not kept "
                 "for undo")
        return
    try:
        with Journal(ctx).open(load=False) as journal:
            entry: dict[str, Any] = {
                "v": JOURNAL_VERSION, "id": os.urandom(4).hex(), "path": rel, "tool": tool,
                "time": round(ctx.clock(), 3),
                "before_blob": journal.put_blob(before, before_sha256)
                if before is not None else None,
                "after_sha256": after_sha256 if after_sha256 is not None else (
                    sha256_hex(after) if after is not None else None),
                "mode": mode,
            }
            if links is not None:
                entry["links"] = links
            if parents:
                entry["parents"] = parents
            if journal.append(entry) > COMPACT_BYTES:
                journal.entries = journal._load()  # pruned as read
                journal.save()
    except (OSError, ToolError) as exc:
        ctx.warn(f"the change was made but could not be recorded for undo: {exc}")


class Undoing:
    """What an ``undo`` carried out as a transaction (``editing.txn.run_transaction``) does
    once its files are changed: remove the directories the undone change created (``prune``,
    outermost first) while they are empty, then drop its record (``entry``, by id) from this
    journal, which the caller holds locked (``drop``). Both are in the intent journal, so that
    a kill after its commit leaves them to the next call (``finish_undoing``): the undo is then
    done whole, record and all, and undoing further back goes on from there."""

    def __init__(self, entry: str, prune: list[str], drop: Callable[[], None]) -> None:
        self.entry = entry
        self.prune = prune
        self.drop = drop

    def record(self) -> dict[str, Any]:
        return {"entry": self.entry, "prune": self.prune}

    def finish(self, ctx: Context) -> None:
        prune_dirs(ctx, self.prune)
        self.drop()


def finish_undoing(ctx: Context, record: dict[str, Any]) -> str:
    """Finish a killed undo's ``Undoing`` (its ``record``) for the recovery: prune, then drop
    the record if it is still there. Returns what could not be done, as a clause of the
    recovery's warning (empty when all was)."""
    prune_dirs(ctx, [str(d) for d in record.get("prune") or []])
    try:
        with Journal(ctx) as journal:
            kept = [e for e in journal.entries if e.get("id") != record.get("entry")]
            if len(kept) != len(journal.entries):
                journal.entries = kept
                journal.save()
    except (OSError, ToolError) as exc:  # the files are done; the record stays, stale
        return f"; its record could not be removed from the undo journal ({exc})"
    return ""


def prune_dirs(ctx: Context, dirs: list[str]) -> None:
    """Remove ``dirs`` (outermost first), deepest first, while they are empty: anything put in
    them since stays, and so do they. One already gone (removed before a kill) is passed."""
    for rel in reversed(dirs):
        try:
            with ctx.workspace.resolve(rel, follow_last=False, write=True) as res:
                if res.name is not None and res.st is None:
                    continue
                if res.name is None or res.st is None or not stat.S_ISDIR(res.st.st_mode):
                    return
                os.rmdir(res.name, dir_fd=res.dir_fd)
                try:
                    os.fsync(res.dir_fd)
                except OSError:
                    pass
        except (ToolError, OSError):
            return


def tidy(ctx: Context) -> None:
    """Remove the temp files of saved versions and journal rewrites that a killed process cut
    short (``editing.leftovers`` calls this for a dead writer that logged the journal). Every
    such file is written under the journal's lock, so any found while holding it is dead."""
    from zbtools.core.state.store import acquire_lock

    folder = os.path.join(ctx.state_path(), "undo")
    try:
        lock = acquire_lock(os.path.join(folder, "lock"))
    except OSError:
        return  # no journal
    try:
        for where in (folder, os.path.join(folder, "blobs")):
            try:
                names = os.listdir(where)
            except OSError:
                continue
            for name in names:
                if ".tmp-" in name:
                    try:
                        os.unlink(os.path.join(where, name))
                    except OSError:
                        pass
    finally:
        os.close(lock)


def _pruned(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The last ``KEEP_PER_FILE`` entries of each path, then the last ``KEEP_TOTAL``."""
    seen: dict[Any, int] = {}
    kept: list[dict[str, Any]] = []
    for entry in reversed(entries):
        path = entry.get("path")
        seen[path] = seen.get(path, 0) + 1
        if seen[path] <= KEEP_PER_FILE:
            kept.append(entry)
    kept.reverse()
    return kept[-KEEP_TOTAL:]


def _stamp(st: os.stat_result) -> tuple[int, int, int, int]:
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


def _stamp_line(stamp: tuple[int, int, int, int]) -> bytes:
    return "journal {} {} {} {}\n".format(*stamp).encode("ascii")

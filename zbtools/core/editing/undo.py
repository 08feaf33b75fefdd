"""The undo journal: the previous versions of files the edit tools changed (DESIGN section 8).

Every successful change made by an edit tool (apply_edit, edit_file, insert_text, patches,
write_file, write_append) is recorded in the workspace's state directory (outside the
workspace): the bytes before (as a content-addressed blob), the sha256 after, the tool and the
time. ``undo`` restores the newest version of a file, or the newest change anywhere, and refuses
with ``stale_file`` when the file changed since that edit, so an undo never clobbers work done
after it (by the user, an editor or another tool).

Limits: the last ``KEEP_PER_FILE`` (20) versions per file and ``KEEP_TOTAL`` (500) entries per
workspace are kept; older ones and their blobs are pruned. Files larger than ``MAX_BLOB``
(16 MiB) are not journaled (the change still happens, with a warning that it cannot be
undone). Every read-modify-write of the journal holds an exclusive ``flock`` on
``undo/lock``, because agents call tools in parallel.

Failure modes: an unreadable or corrupt journal is reported (``io_error``) and never silently
rewritten; a journal write that fails after the edit itself succeeded becomes a warning.
"""

from __future__ import annotations

import os

from zbtools.contract import ToolError
from zbtools.core.files.textio import sha256_hex

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from zbtools.core.call.context import Context

KEEP_PER_FILE = 20
KEEP_TOTAL = 500
MAX_BLOB = 16 * 1024 * 1024
JOURNAL_VERSION = 1


class Journal:
    """The open, locked journal of one workspace; use as a context manager."""

    def __init__(self, ctx: Context) -> None:
        self.folder = os.path.join(ctx.state_dir, "undo")
        self.blobs = os.path.join(self.folder, "blobs")
        self.path = os.path.join(self.folder, "journal.jsonl")
        self._lock_fd = -1
        self.entries: list[dict[str, Any]] = []

    def __enter__(self) -> Journal:
        from zbtools.core.state.store import acquire_lock

        os.makedirs(self.blobs, mode=0o700, exist_ok=True)
        self._lock_fd = acquire_lock(os.path.join(self.folder, "lock"))
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
                lines = fh.read().splitlines()
        except FileNotFoundError:
            return []
        entries = []
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                entry = loads_strict(line)
            except ValueError as exc:
                raise ToolError("io_error", f"the undo journal {self.path} is corrupt at line "
                                f"{number}", hint="move the file away to start a new journal"
                                ) from exc
            if not isinstance(entry, dict) or entry.get("v") != JOURNAL_VERSION:
                raise ToolError("io_error", f"the undo journal {self.path} has an entry of an "
                                "unknown version (written by a newer zbtools?)",
                                hint="use the zbtools version that wrote it, or move it away")
            entries.append(entry)
        return entries

    def save(self) -> None:
        from zbtools.core.call.fastjson import dumps_ascii

        tmp = f"{self.path}.tmp-{os.getpid()}"
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write("".join(dumps_ascii(e) + "\n" for e in self.entries))
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, self.path)
        self._prune_blobs()

    def put_blob(self, data: bytes) -> str:
        digest = sha256_hex(data)
        path = os.path.join(self.blobs, digest)
        if not os.path.exists(path):
            tmp = f"{path}.tmp-{os.getpid()}"
            with open(tmp, "wb") as fh:
                fh.write(data)
            os.replace(tmp, path)
        return digest

    def get_blob(self, digest: str) -> bytes:
        try:
            with open(os.path.join(self.blobs, digest), "rb") as fh:
                return fh.read()
        except OSError as exc:
            raise ToolError("io_error", "the saved version is missing from the undo journal",
                            hint="it may have been pruned or deleted") from exc

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


def record(ctx: Context, rel: str, before: bytes | None, after: bytes | None, tool: str,
           mode: int | None = None, *, after_sha256: str | None = None) -> None:
    """Journal one change of ``rel`` (None: the file did not exist before / after).

    ``after_sha256``, when the caller has it, stands for ``after`` (which is then None): the
    new bytes need not be joined or hashed again."""
    if before == after and after_sha256 is None:
        return
    if before is not None and len(before) > MAX_BLOB:
        ctx.warn(f"{rel} is larger than {MAX_BLOB // (1 << 20)} MiB: this change is not kept "
                 "for undo")
        return
    try:
        with Journal(ctx) as journal:
            entry: dict[str, Any] = {
                "v": JOURNAL_VERSION, "id": os.urandom(4).hex(), "path": rel, "tool": tool,
                "time": round(ctx.clock(), 3),
                "before_blob": journal.put_blob(before) if before is not None else None,
                "after_sha256": after_sha256 if after_sha256 is not None else (
                    sha256_hex(after) if after is not None else None),
                "mode": mode,
            }
            journal.entries.append(entry)
            per_file = [e for e in journal.entries if e["path"] == rel]
            drop = {id(e) for e in per_file[:-KEEP_PER_FILE]}
            kept = [e for e in journal.entries if id(e) not in drop]
            journal.entries = kept[-KEEP_TOTAL:]
            journal.save()
    except (OSError, ToolError) as exc:
        ctx.warn(f"the change was made but could not be recorded for undo: {exc}")

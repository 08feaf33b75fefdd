"""A ``batch`` session's sync group: fsyncs deferred, and small edited files held, across edits.

A long-lived session opens a ``SyncGroup`` around consecutive edits whose results it has not
sent yet. The writes then leave the directory's ``fsync`` (and the undo journal its record's)
to the group's ``commit``, made before any result is sent; and the new version of a file edited
more than once is held here (staged) and written once, checked against the version first read,
when the group flushes. The class docstring says what each step guarantees.

Map: ``SyncGroup`` (``stage``, ``read``, ``defer``, ``flush``, ``commit``), ``Staged``;
``open_sync_group``, ``close_sync_group``, ``sync_group``.
"""

from __future__ import annotations

import os
import stat

from zbtools.contract import ToolError
from zbtools.core.files import reading
from zbtools.core.files.reading import READ_FLAGS
from zbtools.core.files.replacing import WriteOutcome, replace_whole
from zbtools.core.files.staleness import (
    Guard,
    changed_meanwhile,
    check_unchanged,
    file_identity,
    holds_exactly,
)
from zbtools.core.files.workspace import os_error

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from zbtools.core.files.workspace import Resolved

STAGE_MAX_BYTES = 1 << 20  # a file whose new version is larger is written at once
STAGE_TOTAL_BYTES = 16 << 20  # new versions a group holds in all


class Staged:
    """A file's new version held by a ``SyncGroup``, not written yet: ``base`` is the file as
    it was read before the group's first edit of it (``base_st`` its ``fstat``), ``data`` the
    content after the group's edits so far. ``calls`` are the tokens of the calls that wrote
    or read it: they all stand or fall with its write."""

    def __init__(self, dir_fd: int, name: str, shown: str, base_st: os.stat_result,
                 base: bytes, data: bytes) -> None:
        self.dir_fd = dir_fd
        self.name = name
        self.shown = shown
        self.base_st = base_st
        self.base = base
        self.data = data
        self.calls: list[object] = []
        self.lost = False  # its write failed: what waited for it (``SyncGroup.defer``) never runs


class SyncGroup:
    """Fsyncs, and writes of files edited more than once, deferred across consecutive edits of
    one session.

    A long-lived session (``batch``) opens a group around consecutive edits whose results it
    has not sent yet; a write given the group (``replace_whole``, ``replace_parts``) then
    still ``fsync``s the new file before renaming it over the old one, but leaves the
    directory's ``fsync`` to ``commit``, and the undo journal leaves its appended record's
    ``fsync`` there too (``defer_file``). ``commit`` makes all of them durable at once; the
    session sends the results only after it, so every result a caller has seen is as durable
    as without the group. What a system crash before ``commit`` can lose is in ``docs/batch.md``.

    Staging (``staging``, set by the session around a call that edits one file through
    ``cycle.edit_file_text``): the new version of an existing file (one link, at most
    ``STAGE_MAX_BYTES``) is kept here (``stage``) instead of written, and the next edits of
    that file in the group read it from here (``read``) and replace it; ``flush`` writes each
    staged file once (``replace_whole``: ``fsync``, the check that the file is still the one
    first read, rename) and then runs what waited for it (``defer``: the undo records). A
    hundred small edits of one file cost one write. A file that changed on disk meanwhile is
    not written: every call that wrote or read its staged version is failed with that error
    (``failed``, by call token) and the session reports it instead of the call's result. The
    session flushes before any call that is not such an edit, so nothing else ever sees a
    file older than its staged version.
    """

    def __init__(self) -> None:
        self.dirs: dict[tuple[int, int], int] = {}
        self.files: dict[tuple[int, int], int] = {}
        self.staging = False
        self.call: object = None  # the token of the call running now
        self.staged: dict[tuple[int, int, str], Staged] = {}
        self.staged_bytes = 0
        # what waits for the flush, in order, with the staged version it depends on (None: it
        # waits only to keep the order of the undo journal)
        self.waiting: list[tuple[Staged | None, Callable[[], object]]] = []
        self.failed: dict[object, ToolError] = {}

    def _hold(self, table: dict[tuple[int, int], int], fd: int) -> None:
        st = os.fstat(fd)
        key = (st.st_dev, st.st_ino)
        if key not in table:
            table[key] = os.dup(fd)

    def defer_dir(self, dir_fd: int) -> None:
        self._hold(self.dirs, dir_fd)

    def defer_file(self, fd: int) -> None:
        self._hold(self.files, fd)

    @property
    def pending(self) -> bool:
        return bool(self.dirs or self.files or self.staged or self.waiting)

    @staticmethod
    def key(res: Resolved) -> tuple[int, int, str]:
        assert res.name is not None
        st = os.fstat(res.dir_fd)
        return st.st_dev, st.st_ino, res.name

    def staged_for(self, res: Resolved) -> Staged | None:
        if not self.staged or res.name is None:
            return None
        return self.staged.get(self.key(res))

    def read(self, res: Resolved) -> Staged | None:
        """The staged version of ``res``, if any (the running call now depends on it)."""
        entry = self.staged_for(res)
        if entry is not None:
            entry.calls.append(self.call)
        return entry

    def read_version(self, res: Resolved) -> tuple[bytes, os.stat_result] | None:
        """``read``'s version of ``res`` as ``reading.read_bytes_stat`` returns a file: the
        content, and the ``fstat`` of the file it was made from."""
        entry = self.read(res) if self.staged else None
        return None if entry is None else (entry.data, entry.base_st)

    def stage(self, res: Resolved, data: bytes, guard: Guard, known_changed: bool,
              shown: str) -> WriteOutcome | None:
        """Keep ``data`` as ``res``'s new version instead of writing it; None when it must be
        written now (the caller's write then does, and reports what is wrong with the file).
        ``known_changed``: the caller knows ``data`` differs from the file."""
        expected_data, read_stat = guard.expected_data, guard.read_stat
        key = self.key(res)
        entry = self.staged.get(key)
        outcome = WriteOutcome()
        if entry is not None:
            if expected_data is not None and expected_data != entry.data:
                raise changed_meanwhile(shown)  # edits read the staged version: cannot be
            outcome.old_size = len(entry.data)
            outcome.staged = True
            if not known_changed and data == entry.data:
                outcome.changed = False
                return outcome
            self.staged_bytes += len(data) - len(entry.data)
            entry.data = data
            entry.calls.append(self.call)
            if len(data) > STAGE_MAX_BYTES or self.staged_bytes > STAGE_TOTAL_BYTES:
                # Grown past what a group holds: written now (once, checked against the
                # version first read, as the flush would), so memory stays bounded. Its undo
                # records still wait for the flush, in order.
                del self.staged[key]
                self.staged_bytes -= len(data)
                error = self._write(entry)
                if error is not None:
                    raise error
                outcome.staged = False
            return outcome
        if not self.staging or expected_data is None or len(data) > STAGE_MAX_BYTES or \
                self.staged_bytes + len(data) > STAGE_TOTAL_BYTES or res.name is None:
            return None
        try:
            fd = os.open(res.name, READ_FLAGS, dir_fd=res.dir_fd)
        except OSError:
            return None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1 or not st.st_mode & 0o222:
                return None
            if (read_stat is None or file_identity(st) != file_identity(read_stat)) and \
                    not holds_exactly(fd, expected_data):
                return None
        finally:
            os.close(fd)
        if not known_changed and data == expected_data:
            return None  # a no-op: nothing to stage
        entry = Staged(os.dup(res.dir_fd), res.name, shown, st, expected_data, data)
        entry.calls.append(self.call)
        self.staged[key] = entry
        self.staged_bytes += len(data)
        outcome.old_size = st.st_size
        outcome.staged = True
        return outcome

    def defer(self, res: Resolved, work: Callable[[], object]) -> None:
        """Run ``work`` at the flush, once ``res``'s staged version (if it has one now) is
        written, never if it is not. Tied to that version, not to the file's name: a change
        of the same file written at once earlier in the group (too big to stage, say) landed
        whatever becomes of a version staged after it, and keeps its undo record."""
        self.waiting.append((self.staged_for(res), work))

    def _write(self, entry: Staged) -> ToolError | None:
        """Write a staged version no longer in ``staged`` (``replace_whole``: only over the
        version first read); on failure every call that wrote or read it is failed with the
        error (``failed``), which is returned. Its directory descriptor is closed."""
        from zbtools.core.files.workspace import Resolved

        staging, self.staging = self.staging, False  # a write, not another stage
        try:
            if entry.data != entry.base:
                res = Resolved(entry.shown, [], entry.dir_fd, entry.name, entry.base_st, [])
                # sole_link: a file with one link when staged that got another meanwhile is
                # not replaced by a new inode (its other name would silently keep the old
                # content, where a lone edit changes it in place for both)
                replace_whole(res, entry.data, Guard(expected_data=entry.base,
                                                     read_stat=entry.base_st, sole_link=True),
                              shown=entry.shown, group=self)
            else:  # edits that undid each other: nothing to write, but their results stand
                # only if the file is still the one they were made on
                check_unchanged(entry.dir_fd, entry.name, entry.base_st, entry.shown,
                                expected=entry.base)
        except (ToolError, OSError) as exc:
            entry.lost = True
            error = exc if isinstance(exc, ToolError) else os_error(exc, entry.shown)
            for call in entry.calls:
                self.failed.setdefault(call, error)
            return error
        finally:
            self.staging = staging
            os.close(entry.dir_fd)
        return None

    def flush(self) -> None:
        """Write every staged file (in the order first staged), then run what waited."""
        while self.staged:
            self._write(self.staged.pop(next(iter(self.staged))))
        self.staged_bytes = 0
        waiting, self.waiting = self.waiting, []
        for depends, work in waiting:
            if depends is None or not depends.lost:
                work()

    def commit(self) -> None:
        """``flush``, then ``fsync`` every deferred file, then every deferred directory (errors
        as in a write's own: some filesystems refuse to ``fsync`` a directory)."""
        self.flush()
        for table in (self.files, self.dirs):
            while table:
                _, fd = table.popitem()
                try:
                    os.fsync(fd)
                except OSError:
                    pass
                finally:
                    os.close(fd)


_sync_group: list[SyncGroup] = []  # the open group, if any (at most one)


def open_sync_group() -> SyncGroup:
    """Open the session's group (``SyncGroup``); writes defer to it until it is closed."""
    if not _sync_group:
        _sync_group.append(SyncGroup())
        reading.staged_versions.append(_sync_group[0].read_version)
    return _sync_group[0]


def close_sync_group() -> None:
    """Commit the open group, if any, and stop deferring."""
    if _sync_group:
        group = _sync_group.pop()
        reading.staged_versions.clear()
        group.commit()


def sync_group() -> SyncGroup | None:
    return _sync_group[0] if _sync_group else None

"""Where a killed zbtools process may have left temp entries, so that the next call removes them.

A write leaves hidden temp entries while it runs, and a process killed at that moment leaves
them behind. Before its first temp entry in a directory, a process notes the directory in its
own log, ``<state dir>/writers/<pid>-<start>-<host>``, removed at exit; the next call of any tool
(``editing.leftovers.sweep_dead_writers``) removes a dead writer's entries from the directories
it names, then its log (docs/internals/files.md#writer-log). A live writer's entries and a
change journal's backups are never touched. Without ``/proc`` or a writable state directory
nothing is logged, and the next write into a directory remains what cleans it.

Map: ``note_dir`` (a directory logged), ``note_journal`` (the undo journal's temp files),
``use``, ``log_name``, ``drop``, ``FOLDER``.
"""

from __future__ import annotations

import os

FOLDER = "writers"

_folder: list[str | None] = [None]  # this process's log folder (the workspace's state dir)
_noted: set[tuple[int, int]] = set()  # directories in this process's log there
_logs: list[str] = []  # the logs this process created (removed at exit)
_who = ["0-00000000"]  # this process's start time and host token (see ``tempnames.temp_name``)


def use(state_path: str, start: str, host: str) -> None:
    """Log into ``state_path``'s folder from now on (set by every call that changes files), as
    the writer started at ``start`` on ``host`` (``tempnames.own_start``, ``own_host``). A process
    that moves on to another workspace (tests, a server's new root) drops its old log: the
    calls that wrote there are over, and so are their temp entries."""
    folder = os.path.join(state_path, FOLDER)
    if folder != _folder[0]:
        drop()
        _folder[0] = folder
    _who[0] = f"{start}-{host}"


def log_name() -> str:
    return f"{os.getpid()}-{_who[0]}"


def note_dir(dir_fd: int) -> None:
    """Before this process first creates a temp entry in the directory ``dir_fd``: log it."""
    if _folder[0] is None:
        return
    try:
        st = os.fstat(dir_fd)
        key = (st.st_dev, st.st_ino)
        if key in _noted:
            return
        real = os.readlink(f"/proc/self/fd/{dir_fd}")
    except OSError:
        return  # no /proc: the next write into the directory cleans it
    if real.startswith("/") and not real.endswith(" (deleted)"):
        _append(key, f"{key[0]} {key[1]} {os.fsencode(real).hex()}\n")


def note_journal() -> None:
    """Before this process first writes a temp file in the workspace's undo journal (a saved
    version, or the journal rewritten): log it, so the next call removes one cut short."""
    if _folder[0] is not None and (0, 0) not in _noted:
        _append((0, 0), JOURNAL_LINE)


JOURNAL_LINE = "undo\n"


def _append(key: tuple[int, int], line: str) -> None:
    folder = _folder[0]
    assert folder is not None
    path = os.path.join(folder, log_name())
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        try:
            fd = os.open(path, flags, 0o600)
        except FileNotFoundError:
            os.makedirs(folder, mode=0o700, exist_ok=True)
            fd = os.open(path, flags, 0o600)
        try:
            os.write(fd, line.encode("ascii"))  # one short append: whole, or not at all
        finally:
            os.close(fd)
    except OSError:
        return  # an unwritable state directory: the next write into the directory cleans it
    if not _logs:
        import atexit

        atexit.register(drop)
    if path not in _logs:
        _logs.append(path)
    _noted.add(key)


def drop() -> None:
    """Remove this process's logs (its calls are over: they left no temp entries)."""
    while _logs:
        try:
            os.unlink(_logs.pop())
        except OSError:
            pass
    _noted.clear()

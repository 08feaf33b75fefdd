"""A bounded walk of a directory tree on file descriptors, and the names of a hard-linked file.

``walk_tree`` visits every entry below a directory depth-first, the way ``fsops.remove_tree``
walks: one directory fd held at a time, climbing back through ``..`` checked by (st_dev,
st_ino), never following a symlink and never leaving the top's device, so neither the
recursion limit nor the open-files limit bounds the depth. It can stop early, and be bounded in
entries and seconds. ``link_names`` uses it to find the names of a file with several hard links
(for the in-place write of ``txn.replace_file`` and the protection of git's files in
``Workspace``), ``gitguard.git_inside`` to look for git's directories before a recursive delete.

Imports only the standard library, so every module of ``zbtools.core.files`` may use it.
"""

from __future__ import annotations

import os
import stat

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
LINK_SCAN_ENTRIES = 200_000
LINK_SCAN_SECONDS = 2.0


def _key(st: os.stat_result) -> tuple[int, int]:
    return st.st_dev, st.st_ino


def _open_checked(name: str, dir_fd: int, expected: tuple[int, int]) -> int:
    """Open the directory ``name`` (a child, or ``..``) without following a link; it must be
    the directory the walk saw there (else ``FileNotFoundError``: replaced or moved meanwhile)."""
    fd = os.open(name, DIR_FLAGS, dir_fd=dir_fd)
    if _key(os.fstat(fd)) != expected:
        os.close(fd)
        raise FileNotFoundError(name)
    return fd


def walk_tree(top_fd: int, visit: Callable[[str, str, os.stat_result], bool], *,
              max_entries: int | None = None, max_seconds: float | None = None) -> str:
    """Call ``visit(rel, name, st)`` for every entry below the directory ``top_fd``, depth
    first: ``rel`` is the path of the entry's directory below the top (``""`` at the top),
    ``st`` its ``lstat``. Returns ``"stopped"`` when ``visit`` returned True (the walk ends
    there), ``"done"`` when it saw everything, ``"cut"`` when it hit a bound (``max_entries``
    entries, ``max_seconds``) or a directory changed under it."""
    import time

    deadline = time.monotonic() + max_seconds if max_seconds is not None else None
    seen = [0]
    fd = os.dup(top_fd)
    try:
        top = _key(os.fstat(fd))

        def scan(rel: str) -> list[tuple[str, tuple[int, int]]] | str:
            """The subdirectories of the directory open as ``fd``, or how the walk ends."""
            subdirs: list[tuple[str, tuple[int, int]]] = []
            with os.scandir(fd) as entries:
                for entry in entries:
                    seen[0] += 1
                    if (max_entries is not None and seen[0] > max_entries) or (
                            deadline is not None and time.monotonic() > deadline):
                        return "cut"
                    try:
                        est = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    if visit(rel, entry.name, est):
                        return "stopped"
                    if stat.S_ISDIR(est.st_mode) and est.st_dev == top[0]:
                        subdirs.append((entry.name, _key(est)))
            return subdirs

        first = scan("")
        if isinstance(first, str):
            return first
        chain: list[tuple[tuple[int, int], str, list[tuple[str, tuple[int, int]]]]] = [
            (top, "", first)]
        on_chain = {top}
        while chain:
            here, rel, pending = chain[-1]
            if pending:
                child, child_key = pending.pop()
                if child_key in on_chain:
                    continue
                try:
                    child_fd = _open_checked(child, fd, child_key)
                except OSError:
                    continue  # gone or replaced meanwhile: not seen
                os.close(fd)
                fd = child_fd
                child_rel = f"{rel}/{child}" if rel else child
                subdirs = scan(child_rel)
                if isinstance(subdirs, str):
                    return subdirs
                chain.append((child_key, child_rel, subdirs))
                on_chain.add(child_key)
                continue
            chain.pop()
            on_chain.discard(here)
            if not chain:
                break
            up = _open_checked("..", fd, chain[-1][0])
            os.close(fd)
            fd = up
        return "done"
    except OSError:
        return "cut"
    finally:
        os.close(fd)


def link_names(root_fd: int, st: os.stat_result, *, max_entries: int = LINK_SCAN_ENTRIES,
               max_seconds: float = LINK_SCAN_SECONDS) -> tuple[list[str], bool]:
    """The names (paths below ``root_fd``) of the file ``st``, found by a bounded ``walk_tree``
    that stops once it has all ``st_nlink`` of them; and whether the walk was complete (it
    found them all or saw every entry). Not complete: it hit its bounds (``max_entries``,
    ``max_seconds``) or a directory changed under it."""
    key = _key(st)
    names: list[str] = []

    def visit(rel: str, name: str, est: os.stat_result) -> bool:
        if _key(est) == key and not stat.S_ISDIR(est.st_mode):
            names.append(f"{rel}/{name}" if rel else name)
            return len(names) >= st.st_nlink
        return False

    ending = walk_tree(root_fd, visit, max_entries=max_entries, max_seconds=max_seconds)
    return names, ending != "cut"

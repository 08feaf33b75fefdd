"""Whole-tree file operations on directory file descriptors: delete, no-clobber rename, copy.

Everything here works relative to held directory fds and never follows a symlink: a link inside a
tree being deleted is unlinked (its target untouched), a link inside a tree being copied is copied
as a link (or skipped when it would point outside the workspace). Walks are iterative (no
recursion limit: a 2000-level tree is fine) and detect directory loops by (st_dev, st_ino).

* ``remove_tree``: deletes a directory's contents depth-first with ``unlinkat``/``rmdir``.
  Callers first rename the directory to a hidden sibling, so it disappears atomically from its
  name and a failure half-way can be rolled back to the original name (with what remains).
* ``rename_noreplace``: ``renameat2(RENAME_NOREPLACE)`` through ctypes (atomic no-clobber), else
  ``link``+``unlink`` for files, else a checked ``rename`` for directories (a documented race).
* ``copy_tree``: copies into a hidden staging sibling which is then renamed into place, so the
  destination appears whole or not at all.
"""

from __future__ import annotations

import errno
import os
import stat

from zbtools.contract import ToolError
from zbtools.core.textio import CHUNK, READ_FLAGS
from zbtools.core.workspace import DIR_FLAGS, os_error

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

RENAME_NOREPLACE = 1
_renameat2: Callable[[int, bytes, int, bytes, int], int] | bool | None = False


def entry_kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "symlink"
    if stat.S_ISDIR(mode):
        return "directory"
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISFIFO(mode):
        return "fifo"
    if stat.S_ISSOCK(mode):
        return "socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "device"
    return "other"


class TreeCount:
    __slots__ = ("bytes", "directories", "files", "skipped", "symlinks")

    def __init__(self) -> None:
        self.files = 0
        self.directories = 0
        self.symlinks = 0
        self.bytes = 0
        self.skipped: list[dict[str, str]] = []


def remove_tree(parent_fd: int, name: str, shown: str) -> TreeCount:
    """Delete directory ``name`` (in ``parent_fd``) and everything below it, without recursion."""
    count = TreeCount()
    root_fd = os.open(name, DIR_FLAGS, dir_fd=parent_fd)
    # stack of (fd of a directory, its name in the parent, fd of the parent)
    stack: list[tuple[int, str, int]] = [(root_fd, name, parent_fd)]
    seen = {(os.fstat(root_fd).st_dev, os.fstat(root_fd).st_ino)}
    try:
        while stack:
            dir_fd, dir_name, dir_parent = stack[-1]
            descended = False
            with os.scandir(dir_fd) as entries:
                for entry in entries:
                    st = entry.stat(follow_symlinks=False)
                    if stat.S_ISDIR(st.st_mode):
                        key = (st.st_dev, st.st_ino)
                        if key in seen:
                            raise ToolError("io_error", f"{shown}: directory loop at "
                                            f"{entry.name}")
                        seen.add(key)
                        child = os.open(entry.name, DIR_FLAGS, dir_fd=dir_fd)
                        stack.append((child, entry.name, dir_fd))
                        descended = True
                        break
                    os.unlink(entry.name, dir_fd=dir_fd)
                    if stat.S_ISLNK(st.st_mode):
                        count.symlinks += 1
                    else:
                        count.files += 1
                        count.bytes += st.st_size
            if descended:
                continue
            stack.pop()
            os.close(dir_fd)
            os.rmdir(dir_name, dir_fd=dir_parent)
            count.directories += 1
    except OSError as exc:
        raise os_error(exc, shown) from exc
    finally:
        for fd, _, _ in stack:
            os.close(fd)
    return count


def _load_renameat2() -> Callable[[int, bytes, int, bytes, int], int] | None:
    global _renameat2
    if _renameat2 is False:
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            func = libc.renameat2
            func.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                             ctypes.c_uint]
            func.restype = ctypes.c_int

            def call(a: int, b: bytes, c: int, d: bytes, flags: int) -> int:
                if func(a, b, c, d, flags) == 0:
                    return 0
                return ctypes.get_errno()

            _renameat2 = call
        except (OSError, AttributeError):
            _renameat2 = None
    return _renameat2 if callable(_renameat2) else None


def rename_noreplace(src_dir: int, src: str, dst_dir: int, dst: str, *, is_dir: bool,
                     shown: str) -> None:
    """Rename without ever replacing an existing destination (``already_exists`` instead)."""
    func = _load_renameat2()
    if func is not None:
        err = func(src_dir, os.fsencode(src), dst_dir, os.fsencode(dst), RENAME_NOREPLACE)
        if err == 0:
            return
        if err not in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
            raise os_error(OSError(err, os.strerror(err)), shown)
    if not is_dir:
        try:
            os.link(src, dst, src_dir_fd=src_dir, dst_dir_fd=dst_dir, follow_symlinks=False)
        except OSError as exc:
            if exc.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.EMLINK):
                raise os_error(exc, shown) from exc
        else:
            os.unlink(src, dir_fd=src_dir)
            return
    try:
        os.stat(dst, dir_fd=dst_dir, follow_symlinks=False)
    except FileNotFoundError:
        pass
    else:
        raise ToolError("already_exists", f"{shown}: the destination exists",
                        hint="pass overwrite: true to replace it")
    try:
        os.rename(src, dst, src_dir_fd=src_dir, dst_dir_fd=dst_dir)
    except OSError as exc:
        raise os_error(exc, shown) from exc


def copy_regular(src_fd: int, dst_dir: int, dst_name: str, mode: int) -> int:
    """Copy an open regular file into a new file ``dst_name`` (must not exist); returns bytes."""
    out = os.open(dst_name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                  0o600, dir_fd=dst_dir)
    total = 0
    try:
        while True:
            chunk = os.read(src_fd, CHUNK)
            if not chunk:
                break
            view = memoryview(chunk)
            while view:
                view = view[os.write(out, view):]
            total += len(chunk)
        os.fchmod(out, stat.S_IMODE(mode))
    finally:
        os.close(out)
    return total


def copy_tree(src_fd: int, dst_parent: int, dst_name: str, *, shown: str,
              link_ok: Callable[[str], bool]) -> TreeCount:
    """Copy the directory open as ``src_fd`` to a new directory ``dst_name`` in ``dst_parent``.

    Each symlink is recreated, then ``link_ok(relative_path)`` (relative to the copied tree's
    root) decides whether it may stay; refused links are removed and reported skipped.
    """
    count = TreeCount()
    mode = stat.S_IMODE(os.fstat(src_fd).st_mode)
    os.mkdir(dst_name, 0o700, dir_fd=dst_parent)
    dst_root = os.open(dst_name, DIR_FLAGS, dir_fd=dst_parent)
    pending_modes: list[tuple[int, int]] = [(os.dup(dst_root), mode)]
    stack: list[tuple[int, int, str]] = [(os.dup(src_fd), dst_root, "")]
    seen = {(os.fstat(src_fd).st_dev, os.fstat(src_fd).st_ino)}
    count.directories += 1
    try:
        while stack:
            s_fd, d_fd, rel = stack.pop()
            try:
                with os.scandir(s_fd) as entries:
                    items = sorted(entries, key=lambda e: e.name)
                for entry in items:
                    st = entry.stat(follow_symlinks=False)
                    child_rel = f"{rel}{entry.name}"
                    kind = entry_kind(st.st_mode)
                    if kind == "directory":
                        key = (st.st_dev, st.st_ino)
                        if key in seen:
                            count.skipped.append({"path": child_rel, "reason": "directory loop"})
                            continue
                        seen.add(key)
                        child_src = os.open(entry.name, DIR_FLAGS, dir_fd=s_fd)
                        os.mkdir(entry.name, 0o700, dir_fd=d_fd)
                        child_dst = os.open(entry.name, DIR_FLAGS, dir_fd=d_fd)
                        pending_modes.append((os.dup(child_dst), stat.S_IMODE(st.st_mode)))
                        stack.append((child_src, child_dst, child_rel + "/"))
                        count.directories += 1
                    elif kind == "file":
                        fd = os.open(entry.name, READ_FLAGS, dir_fd=s_fd)
                        try:
                            count.bytes += copy_regular(fd, d_fd, entry.name, st.st_mode)
                        finally:
                            os.close(fd)
                        count.files += 1
                    elif kind == "symlink":
                        target = os.readlink(entry.name, dir_fd=s_fd)
                        os.symlink(target, entry.name, dir_fd=d_fd)
                        if link_ok(child_rel):
                            count.symlinks += 1
                        else:
                            os.unlink(entry.name, dir_fd=d_fd)
                            count.skipped.append({"path": child_rel, "reason":
                                                  "symlink pointing outside the workspace"})
                    else:
                        count.skipped.append({"path": child_rel, "reason": f"{kind} (only "
                                              "files, directories and symlinks are copied)"})
            finally:
                os.close(s_fd)
                os.close(d_fd)
        for fd, dir_mode in reversed(pending_modes):
            os.fchmod(fd, dir_mode)
    except OSError as exc:
        raise os_error(exc, shown) from exc
    finally:
        for s_fd, d_fd, _ in stack:
            os.close(s_fd)
            os.close(d_fd)
        for fd, _ in pending_modes:
            os.close(fd)
    return count

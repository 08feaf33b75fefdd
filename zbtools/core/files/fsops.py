"""Whole-tree file operations on directory file descriptors: delete, no-clobber rename, copy.

Everything here works relative to held directory fds and never follows a symlink: a link inside a
tree being deleted is unlinked (its target untouched), a link inside a tree being copied is copied
as a link (or skipped when it would point outside the workspace). Walks are iterative and hold one
directory fd per tree at a time, climbing back through ``..`` checked by (st_dev, st_ino): neither
the recursion limit nor the open-files limit bounds the depth (a 2000-level tree is fine with
``ulimit -n 256``). Directory loops (bind mounts) are detected by (st_dev, st_ino) too.

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
from zbtools.core.errors import already_exists
from zbtools.core.files.reading import CHUNK, READ_FLAGS
from zbtools.core.files.tempnames import dead_entries
from zbtools.core.files.workspace import DIR_FLAGS, os_error

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


def _key(st: os.stat_result) -> tuple[int, int]:
    return st.st_dev, st.st_ino


def _open_child(name: str, dir_fd: int, expected: tuple[int, int], shown: str) -> int:
    """Open subdirectory ``name`` without following links; it must be the one just listed."""
    fd = os.open(name, DIR_FLAGS, dir_fd=dir_fd)
    if _key(os.fstat(fd)) != expected:
        os.close(fd)
        raise ToolError("path_changed", f"{shown}: {name} was replaced during the walk",
                        hint="call the tool again")
    return fd


def _open_parent(fd: int, expected: tuple[int, int], shown: str) -> int:
    """Climb to ``..`` (never a symlink); it must still be the directory the walk came from."""
    up = os.open("..", DIR_FLAGS, dir_fd=fd)
    if _key(os.fstat(up)) != expected:
        os.close(up)
        raise ToolError("path_changed", f"{shown}: a directory was moved during the walk",
                        hint="call the tool again")
    return up


def _unlink_entries(fd: int, count: TreeCount) -> list[tuple[str, tuple[int, int]]]:
    """Unlink every non-directory in the directory ``fd``; return its subdirectories."""
    subdirs: list[tuple[str, tuple[int, int]]] = []
    with os.scandir(fd) as entries:
        for entry in entries:
            st = entry.stat(follow_symlinks=False)
            if stat.S_ISDIR(st.st_mode):
                subdirs.append((entry.name, _key(st)))
                continue
            os.unlink(entry.name, dir_fd=fd)
            if stat.S_ISLNK(st.st_mode):
                count.symlinks += 1
            else:
                count.files += 1
                count.bytes += st.st_size
    return subdirs


def sweep_dead_dirs(dir_fd: int) -> int:
    """Remove what dead writers left of directory operations in ``dir_fd``: the half-deleted
    ``.NAME.zbdel-…`` directory of a killed recursive delete (finishing it) and the half-copied
    ``.NAME.zbtmp-…`` staging directory of a killed directory copy (see ``tempnames.dead_temp``:
    never a live writer's). Returns how many were removed."""
    removed = 0
    for entry, st in dead_entries(dir_fd, ("zbdel", "zbtmp")):
        if not stat.S_ISDIR(st.st_mode):
            continue
        try:
            remove_tree(dir_fd, entry, entry)
            removed += 1
        except (OSError, ToolError):
            pass
    return removed


def remove_tree(parent_fd: int, name: str, shown: str) -> TreeCount:
    """Delete directory ``name`` (in ``parent_fd``) and everything below it, without recursion.

    Only one directory fd is held at a time (the walk climbs back with a checked ``..``), so the
    depth of the tree is limited neither by the stack nor by the open-files limit.
    """
    count = TreeCount()
    fd = -1
    try:
        fd = os.open(name, DIR_FLAGS, dir_fd=parent_fd)
        top = _key(os.fstat(fd))
        # the directories from the top down to the one open as fd: (name, key, subdirectories
        # still to delete)
        chain: list[tuple[str, tuple[int, int], list[tuple[str, tuple[int, int]]]]] = [
            (name, top, _unlink_entries(fd, count))]
        on_chain = {top}
        while True:
            dir_name, key, pending = chain[-1]
            if pending:
                child, child_key = pending.pop()
                if child_key in on_chain:
                    raise ToolError("io_error", f"{shown}: directory loop at {child}")
                try:
                    child_fd = _open_child(child, fd, child_key, shown)
                except FileNotFoundError:
                    continue  # removed meanwhile
                os.close(fd)
                fd = child_fd
                chain.append((child, child_key, _unlink_entries(fd, count)))
                on_chain.add(child_key)
                continue
            # Look again before climbing: readdir may miss entries unlinked during the scan.
            pending.extend(_unlink_entries(fd, count))
            if pending:
                continue
            chain.pop()
            on_chain.discard(key)
            if not chain:
                os.close(fd)
                fd = -1
                os.rmdir(name, dir_fd=parent_fd)
                count.directories += 1
                return count
            up = _open_parent(fd, chain[-1][1], shown)
            os.close(fd)
            fd = up
            os.rmdir(dir_name, dir_fd=fd)
            count.directories += 1
    except (OSError, ToolError) as exc:
        err = exc if isinstance(exc, ToolError) else os_error(exc, shown)
        err.details.update(files_deleted=count.files, directories_deleted=count.directories,
                           symlinks_deleted=count.symlinks)
        if err is exc:
            raise
        raise err from exc
    finally:
        if fd >= 0:
            os.close(fd)


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
        raise already_exists(shown, hint="pass overwrite: true to replace it",
                             what="the destination exists")
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


class _CopyFrame:
    __slots__ = ("dst_key", "mode", "pending", "rel", "src_key")

    def __init__(self, rel: str, src_key: tuple[int, int], dst_key: tuple[int, int], mode: int,
                 pending: list[tuple[str, os.stat_result]]) -> None:
        self.rel = rel  # relative path of this directory inside the copied tree, "" or "a/b/"
        self.src_key = src_key
        self.dst_key = dst_key
        self.mode = mode
        self.pending = pending  # subdirectories still to copy, last one first


def _copy_entries(s_fd: int, d_fd: int, rel: str, count: TreeCount,
                  link_refusal: Callable[[str], str | None]
                  ) -> list[tuple[str, os.stat_result]]:
    """Copy the files and symlinks of one directory; return its subdirectories (reversed)."""
    with os.scandir(s_fd) as entries:
        items = sorted(entries, key=lambda e: e.name)
    subdirs: list[tuple[str, os.stat_result]] = []
    for entry in items:
        st = entry.stat(follow_symlinks=False)
        child_rel = f"{rel}{entry.name}"
        kind = entry_kind(st.st_mode)
        if kind == "directory":
            subdirs.append((entry.name, st))
        elif kind == "file":
            fd = os.open(entry.name, READ_FLAGS, dir_fd=s_fd)
            try:
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    count.skipped.append({"path": child_rel, "reason": "changed into a special "
                                          "file during the copy"})
                    continue
                count.bytes += copy_regular(fd, d_fd, entry.name, st.st_mode)
            finally:
                os.close(fd)
            count.files += 1
        elif kind == "symlink":
            target = os.readlink(entry.name, dir_fd=s_fd)
            os.symlink(target, entry.name, dir_fd=d_fd)
            reason = link_refusal(child_rel)
            if reason is None:
                count.symlinks += 1
            else:
                os.unlink(entry.name, dir_fd=d_fd)
                count.skipped.append({"path": child_rel, "reason": reason})
        else:
            count.skipped.append({"path": child_rel, "reason": f"{kind} (only files, "
                                  "directories and symlinks are copied)"})
    subdirs.reverse()
    return subdirs


def copy_tree(src_fd: int, dst_parent: int, dst_name: str, *, shown: str,
              link_refusal: Callable[[str], str | None]) -> TreeCount:
    """Copy the directory open as ``src_fd`` to a new directory ``dst_name`` in ``dst_parent``.

    Each symlink is recreated, then ``link_refusal(relative_path)`` (relative to the copied
    tree's root) says why it may not stay (or ``None``); refused links are removed and reported
    skipped. Only two directory fds are held at a time (source and copy; the walk climbs back
    with a checked ``..``), and each copied directory gets its mode when it is complete.
    """
    count = TreeCount()
    s_fd = d_fd = -1
    try:
        s_fd = os.dup(src_fd)
        s_st = os.fstat(s_fd)
        os.mkdir(dst_name, 0o700, dir_fd=dst_parent)
        d_fd = os.open(dst_name, DIR_FLAGS, dir_fd=dst_parent)
        count.directories += 1
        chain = [_CopyFrame("", _key(s_st), _key(os.fstat(d_fd)), stat.S_IMODE(s_st.st_mode),
                            _copy_entries(s_fd, d_fd, "", count, link_refusal))]
        on_chain = {_key(s_st)}
        while True:
            frame = chain[-1]
            if frame.pending:
                name, st = frame.pending.pop()
                key = _key(st)
                if key in on_chain:
                    count.skipped.append({"path": frame.rel + name, "reason": "directory loop"})
                    continue
                try:
                    child_src = _open_child(name, s_fd, key, shown)
                except FileNotFoundError:
                    continue  # removed meanwhile
                try:
                    os.mkdir(name, 0o700, dir_fd=d_fd)
                    child_dst = os.open(name, DIR_FLAGS, dir_fd=d_fd)
                except BaseException:
                    os.close(child_src)
                    raise
                os.close(s_fd)
                s_fd = child_src
                os.close(d_fd)
                d_fd = child_dst
                count.directories += 1
                rel = f"{frame.rel}{name}/"
                chain.append(_CopyFrame(rel, key, _key(os.fstat(d_fd)), stat.S_IMODE(st.st_mode),
                                        _copy_entries(s_fd, d_fd, rel, count, link_refusal)))
                on_chain.add(key)
                continue
            chain.pop()
            on_chain.discard(frame.src_key)
            if not chain:
                os.fchmod(d_fd, frame.mode)
                return count
            up_src = _open_parent(s_fd, chain[-1].src_key, shown)
            os.close(s_fd)
            s_fd = up_src
            # climb first, then set the mode: a mode without x would forbid opening ".."
            up_dst = _open_parent(d_fd, chain[-1].dst_key, shown)
            os.fchmod(d_fd, frame.mode)
            os.close(d_fd)
            d_fd = up_dst
    except OSError as exc:
        raise os_error(exc, shown) from exc
    finally:
        if s_fd >= 0:
            os.close(s_fd)
        if d_fd >= 0:
            os.close(d_fd)

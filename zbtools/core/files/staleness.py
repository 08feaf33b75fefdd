"""No lost update: what a writer knows about the file it read, and the checks that hold it.

A write with a precondition (a ``Guard``: the ``expected_sha256`` a caller gave, the bytes an
edit read, the ``stat`` it read them with) checks it against the file before writing, and again
right before its rename (``check_unchanged``: same inode, size, nanosecond mtime and ctime, and
the content again for a recently changed file unless its ctime moves on every change, as with
Linux's multigrain timestamps); another process's change made while the new version was being
written is refused with ``stale_file`` and left as it is. What remains is the microseconds
between that check and the rename; other zbtools processes are kept out of it by the workspace
edit lock.

Map: ``Guard`` (and ``UNGUARDED``), ``check_unchanged``, ``check_expected``, ``holds_exactly``,
``file_identity``; the ``stale_file`` error ``changed_meanwhile``;
``ctime_moves_on_every_change`` and ``mount_types``.
"""

from __future__ import annotations

import os
import sys

from zbtools.contract import ToolError
from zbtools.core.errors import stale_file
from zbtools.core.files.hashing import sha256_hex
from zbtools.core.files.reading import READ_FLAGS, read_fd


class Guard:
    """What a writer knows about the file it read, so that a change made by someone else since
    is refused (``stale_file``) rather than overwritten; the file gone since is refused too
    when the guard expects content or a ``stat``. Frozen: one value travels with the write.

    ``expected_sha256``: the file must still hash to it (a tool's ``expected_sha256``).
    ``expected_data``: it must still hold exactly these bytes (as strong as comparing their
    sha256, without hashing). ``read_stat``: the ``fstat`` of the descriptor ``expected_data``
    was read from (``read_bytes_stat``): a file whose identity (inode, size, nanosecond mtime
    and ctime) is still that one is not read again, unless the write may be a no-op; the check
    right before the rename (``check_unchanged``) is the one that counts, and it reads the
    content again when the file changed recently. ``unchanged_since``: an earlier ``stat``; the
    inode, size and nanosecond mtime must still be its (a cheap check for big files).
    ``sole_link``: the caller read the file with one hard link; one made since is refused
    (replacing the file would silently split its names).
    """

    __slots__ = ("expected_data", "expected_sha256", "read_stat", "sole_link", "unchanged_since")

    expected_sha256: str | None
    expected_data: bytes | None
    read_stat: os.stat_result | None
    unchanged_since: os.stat_result | None
    sole_link: bool

    def __init__(self, *, expected_sha256: str | None = None, expected_data: bytes | None = None,
                 read_stat: os.stat_result | None = None,
                 unchanged_since: os.stat_result | None = None, sole_link: bool = False) -> None:
        init = object.__setattr__
        init(self, "expected_sha256", expected_sha256)
        init(self, "expected_data", expected_data)
        init(self, "read_stat", read_stat)
        init(self, "unchanged_since", unchanged_since)
        init(self, "sole_link", sole_link)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"a Guard is frozen: {name} cannot be set")

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__
                          if getattr(self, name) not in (None, False))
        return f"Guard({shown})"

    @property
    def checks_content(self) -> bool:
        """Whether the file must still be the one read (by content or by ``stat``), both now
        and right before the rename; a file gone since must not come back."""
        return self.expected_sha256 is not None or self.expected_data is not None or \
            self.unchanged_since is not None


UNGUARDED = Guard()  # the caller read nothing: whatever is there is replaced


# A change made within this many nanoseconds of the file's last change may carry the very same
# timestamps (kernels without fine-grained timestamps tick every 1-10 ms): such a file is
# hashed again rather than trusted by its ``stat``.
RECENT_CHANGE_NS = 2_000_000_000

# Linux 6.13 and later give a file a fine-grained ctime when it changes after its ctime was
# read ("multigrain timestamps"), on these file systems: there, every change made after a
# ``stat`` moves the ctime, and a file whose identity held needs no second read. Below
# FINE_CTIME_MIN_BYTES, reading the file again costs less than finding its file system.
FINE_CTIME_KERNEL = (6, 13)
FINE_CTIME_FS = frozenset({"ext4", "xfs", "btrfs", "tmpfs"})
FINE_CTIME_MIN_BYTES = 1 << 20
_fine_ctime: dict[int, bool] = {}


def ctime_moves_on_every_change(dev: int) -> bool:
    """Whether every change to a file on device ``dev`` made after a ``stat`` of it gives it a
    new ctime (the ``stat`` marks the ctime as seen; the next change then takes a
    fine-grained time instead of the clock tick's): Linux >= 6.13, on ext4, xfs, btrfs or
    tmpfs as ``/proc/self/mountinfo`` names the device. False when unsure (another system or
    kernel, another file system, a device that mountinfo does not list, as a btrfs
    subvolume's may not be). Limits, as for any timestamp: writes through a shared ``mmap``
    to pages already dirty, and a system clock set back."""
    known = _fine_ctime.get(dev)
    if known is None:
        try:
            known = _kernel_moves_ctime() and mount_types().get(dev) in FINE_CTIME_FS
        except OSError:
            known = False
        _fine_ctime[dev] = known
    return known


def _kernel_moves_ctime() -> bool:
    if not sys.platform.startswith("linux"):
        return False
    parts = os.uname().release.split(".", 2)
    if len(parts) < 2 or not parts[0].isdigit():
        return False
    minor = parts[1]
    digits = len(minor) - len(minor.lstrip("0123456789"))
    return digits > 0 and (int(parts[0]), int(minor[:digits])) >= FINE_CTIME_KERNEL


def mount_types() -> dict[int, str]:
    """Each mounted device number -> its file system type, from ``/proc/self/mountinfo``
    (raises OSError where there is none)."""
    out: dict[int, str] = {}
    with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as fh:
        for line in fh:
            left, sep, right = line.partition(" - ")
            if not sep:
                continue
            fields = left.split()
            if len(fields) < 3 or ":" not in fields[2]:
                continue
            major, _, minor = fields[2].partition(":")
            try:
                dev = os.makedev(int(major), int(minor))
            except ValueError:
                continue
            # a device mounted twice keeps its first type: bind mounts repeat the same one
            out.setdefault(dev, right.split(" ", 1)[0])
    return out


def file_identity(st: os.stat_result) -> tuple[int, int, int, int, int]:
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


def changed_meanwhile(shown: str) -> ToolError:
    return stale_file(shown, "was changed by someone else while the new version was being "
                      "written; nothing was written", changed_during_write=True)


def check_unchanged(dir_fd: int, name: str, seen: os.stat_result, shown: str, *,
                    expected_sha256: str | None = None, expected: bytes | None = None) -> None:
    """Refuse with ``stale_file`` unless the entry ``name`` is still the very file ``seen`` was
    taken of, unchanged: same inode, size, and nanosecond mtime and ctime. Called right before
    the rename that replaces it, so another process's change made while the new version was
    being written is never overwritten. When the old content is known (``expected_sha256`` or
    ``expected``) and the file changed recently (timestamps may not have moved), it is hashed
    again too, unless its ctime moves on every change (``ctime_moves_on_every_change``; from
    ``FINE_CTIME_MIN_BYTES``). ``seen`` must be a ``stat`` taken before the content was read."""
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        raise changed_meanwhile(shown) from None
    if file_identity(st) != file_identity(seen):
        raise changed_meanwhile(shown)
    if expected_sha256 is None and expected is None:
        return
    import time

    if time.time_ns() - st.st_ctime_ns >= RECENT_CHANGE_NS:
        return
    if st.st_size >= FINE_CTIME_MIN_BYTES and ctime_moves_on_every_change(st.st_dev):
        return  # ``seen`` was a stat taken before the read: a change since moved the ctime
    fd = os.open(name, READ_FLAGS, dir_fd=dir_fd)
    try:
        if file_identity(os.fstat(fd)) != file_identity(seen):
            same = False
        elif expected is not None:
            same = holds_exactly(fd, expected)
        else:
            assert expected_sha256 is not None
            same = sha256_hex(read_fd(fd)) == expected_sha256.lower()
    finally:
        os.close(fd)
    if not same:
        raise changed_meanwhile(shown)


COMPARE_CHUNK = 256 * 1024


def holds_exactly(fd: int, expected: bytes) -> bool:
    """Whether ``fd`` (read from its current offset to EOF) holds exactly ``expected``.

    Read in ``COMPARE_CHUNK`` pieces, each compared in place (``bytes.startswith`` at an
    offset is a ``memcmp``): no second copy of the file is built, which for a few MB costs
    more than the reads (fresh pages to fault in) and stops at the first difference."""
    offset = 0
    while True:
        chunk = os.read(fd, COMPARE_CHUNK)
        if not chunk:
            return offset == len(expected)
        if not expected.startswith(chunk, offset):
            return False
        offset += len(chunk)


def check_expected(data: bytes, expected_sha256: str | None, shown: str) -> None:
    if expected_sha256 is None:
        return
    actual = sha256_hex(data)
    if actual != expected_sha256.lower():
        raise stale_file(shown, "changed since it was read (sha256 differs)",
                         expected_sha256=expected_sha256, current_sha256=actual)

"""Temp names that tell a live writer from a dead one, and the sweep of dead writers' debris.

A write leaves hidden entries while it runs (the temp file of an atomic replace, a copy's
staging directory, an in-place write's backup), named ``.<name>.<tag>-<pid>-<start>-<host>-<hex>``:
the writer's pid, the process start time (``/proc/PID/stat`` field 22) and a token of the boot
and PID namespace, so a writer that died (``kill -9``, power loss) is told from a live one.
Every write into a directory first removes the dead writers' temp files there
(``sweep_dead_temps``): regular files whose name matches the scheme exactly and whose writer is
gone (no such pid, or a pid reused by a process that started at another time; a writer of
another boot or namespace once its file is an hour old). A live writer's file and a name that
merely looks similar are left alone. The walker never lists these names (``is_temp_name``).

Map: ``temp_name``, ``parse_temp_name``, ``is_temp_name``; ``own_start``, ``own_host``,
``process_start``, ``writer_alive``; ``dead_temp``, ``dead_entries``, ``sweep_dead_temps``.
"""

from __future__ import annotations

import os
import stat

from zbtools.core.files.hashing import sha256_hex

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

TEMP_TAGS = ("zbtmp", "zbdel", "zbbak")
LEGACY_HOST = "legacy"  # the host part given to a temp name of an earlier zbtools version
FOREIGN_STALE_SECONDS = 3600
_own: list[str] = []


def process_start(pid: int) -> str | None:
    """The start time of process ``pid`` (clock ticks since boot, ``/proc/PID/stat`` field 22),
    ``None`` when it does not exist; ``"0"`` when it cannot be told (no ``/proc``)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            raw = fh.read()
    except FileNotFoundError:
        if not os.path.isdir("/proc/self"):
            return "0"  # no procfs: liveness by pid alone
        return None
    except OSError:
        return "0"
    fields = raw[raw.rfind(b")") + 2:].split()
    return fields[19].decode("ascii") if len(fields) > 19 else "0"


def _host() -> str:
    """8 hex digits naming this boot and PID namespace: pids mean something only within both."""
    try:
        with open("/proc/sys/kernel/random/boot_id", "rb") as fh:
            boot = fh.read().strip()
        namespace = os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        return "00000000"
    return sha256_hex(boot + b":%d" % namespace)[:8]


def own_start() -> str:
    """This process's start time (see ``process_start``)."""
    if not _own:
        _own.extend((process_start(os.getpid()) or "0", _host()))
    return _own[0]


def own_host() -> str:
    """This process's boot and PID namespace token (see ``temp_name``)."""
    own_start()
    return _own[1]


def parse_temp_name(name: str) -> tuple[str, int, str, str] | None:
    """``(tag, pid, start, host)`` when ``name`` is exactly one of our temp names, else None."""
    if not name.startswith(".") or "-" not in name:
        return None
    head, _, tail = name.rpartition(".")
    if len(head) < 2:
        return None
    parts = tail.split("-")
    if len(parts) == 2 and parts[0] in TEMP_TAGS and len(parts[1]) == 12 and all(
            c in "0123456789abcdef" for c in parts[1]):
        # the name earlier zbtools versions gave (``.<name>.<tag>-<12 hex>``): its writer cannot
        # be asked, so it is treated as another machine's (left alone while it is young)
        return parts[0], 0, "0", LEGACY_HOST
    if len(parts) != 5 or parts[0] not in TEMP_TAGS:
        return None
    tag, pid, start, host, rand = parts
    if not (pid.isdigit() and pid.isascii() and start.isdigit() and start.isascii()
            and _hex8(host) and _hex8(rand)):
        return None
    return tag, int(pid), start, host


def _hex8(text: str) -> bool:
    return len(text) == 8 and all(c in "0123456789abcdef" for c in text)


def is_temp_name(name: str) -> bool:
    """Whether ``name`` is one of our temp, staging or backup names (never shown by listings)."""
    return name[:1] == "." and ".zb" in name and parse_temp_name(name) is not None


def writer_alive(pid: int, start: str) -> bool:
    """Whether process ``pid``, started at ``start``, of this boot and PID namespace, is still
    running (unsure counts as alive)."""
    if pid == os.getpid():
        return start == own_start() or own_start() == "0"
    current = process_start(pid)
    if current is None:
        return False
    if current == "0" or start == "0":
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except OSError:
            return True
        return True
    return current == start


def dead_temp(dir_fd: int, entry: str, tags: tuple[str, ...]) -> os.stat_result | None:
    """The ``lstat`` of ``entry`` (in ``dir_fd``) when it is named exactly by ``temp_name`` with
    one of ``tags`` and its writer is gone, else None.

    A writer of this boot and PID namespace is gone when its pid is, or now belongs to a process
    started at another time. A writer of another (another container or machine sharing the
    directory, or a boot before this one) cannot be asked: its entry counts as left behind only
    once it has not changed for ``FOREIGN_STALE_SECONDS`` (an hour)."""
    parsed = parse_temp_name(entry)
    if parsed is None or parsed[0] not in tags:
        return None
    _, pid, start, host = parsed
    local = host == own_host()
    if local and writer_alive(pid, start):
        return None
    try:
        st = os.lstat(entry, dir_fd=dir_fd)
    except OSError:
        return None
    if not local:
        import time

        if time.time() - st.st_mtime < FOREIGN_STALE_SECONDS:
            return None
    return st


def dead_entries(dir_fd: int, tags: tuple[str, ...]) -> Iterator[tuple[str, os.stat_result]]:
    """The entries of the directory ``dir_fd`` that dead writers left, named by ``temp_name``
    with one of ``tags`` (see ``dead_temp``), with their ``lstat``."""
    try:
        names = os.listdir(dir_fd)
    except OSError:
        return
    for entry in names:
        if ".zb" in entry:
            st = dead_temp(dir_fd, entry, tags)
            if st is not None:
                yield entry, st


def sweep_dead_temps(dir_fd: int) -> int:
    """Remove the temp files (``zbtmp``, regular files) of dead writers in the directory
    ``dir_fd`` (see ``dead_temp``); returns how many. A live writer's file is never touched.

    A long-lived process (``batch``, ``mcp``) sweeps one directory at most once every
    ``SWEEP_EVERY`` seconds: listing a big directory is not free
    (benchmarks/README.md#figures-behind-the-code), and a killed writer's debris is rare; a new
    process (the next command-line call) sweeps anew."""
    import time

    try:
        folder = os.fstat(dir_fd)
    except OSError:
        return 0
    now = time.monotonic()
    key = (folder.st_dev, folder.st_ino)
    if now - _swept.get(key, -SWEEP_EVERY) < SWEEP_EVERY:
        return 0
    if len(_swept) > 4096:
        _swept.clear()
    _swept[key] = now
    removed = 0
    for entry, st in dead_entries(dir_fd, ("zbtmp",)):
        if not stat.S_ISREG(st.st_mode):
            continue
        try:
            os.unlink(entry, dir_fd=dir_fd)
            removed += 1
        except OSError:
            pass
    return removed


SWEEP_EVERY = 60.0
_swept: dict[tuple[int, int], float] = {}  # directory -> when this process last swept it


def temp_name(name: str, tag: str = "zbtmp") -> str:
    """A hidden sibling name ``.<name>.<tag>-<pid>-<start>-<host>-<hex>`` that fits in NAME_MAX.

    ``pid``, ``start`` (the process start time) and ``host`` (this boot and PID namespace) let
    a later call tell a dead writer's leftovers from a live writer's files
    (``sweep_dead_temps``).

    The original name is cut to at most 100 *bytes* (at a character boundary): names of 100
    characters can be 400 bytes in UTF-8, and the temp name must never be the one that is too long.
    """
    raw = os.fsencode(name)
    if len(raw) > 100:
        raw = raw[:100]
        while raw and raw[-1] & 0xC0 == 0x80:  # drop a cut multi-byte sequence: continuations
            raw = raw[:-1]
        if raw and raw[-1] >= 0xC0:  # ... and its lead byte
            raw = raw[:-1]
        name = os.fsdecode(raw)
    return f".{name}.{tag}-{os.getpid()}-{own_start()}-{own_host()}-{os.urandom(4).hex()}"

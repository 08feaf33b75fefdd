"""What the search's forked helper processes share: ``parallel`` (a second process searching
files) and ``walk_split`` (a second process scanning directories).

Whether a helper may be forked at all (``worker_count``: ``ZBTOOLS_SEARCH_WORKERS`` or the
usable CPUs, and ``os.fork``); forking one that runs a function with SIGINT and SIGPIPE at
their defaults and leaves with ``os._exit``, writing nothing but its pipes (``fork_helper``);
stopping and reaping it (``stop_helper``); and the messages both ways, each a ``marshal``
value behind its length (``send_frame``, ``read_frame`` for a blocking reader, ``Frames`` for
one that reads what has come).
"""

from __future__ import annotations

# signal's numbers without its enums (importing signal costs a cold call enum and functools)
import _signal  # type: ignore[import-not-found]
import marshal
import os
import struct

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence
    from typing import Any

HEADER = struct.Struct("<I")  # a frame's length, before its marshal bytes


def worker_count(requested: int | None = None) -> int:
    """How many processes work on one search or walk (1 or 2): ``requested``, else the
    environment, else CPUs."""
    if requested is None:
        raw = os.environ.get("ZBTOOLS_SEARCH_WORKERS", "")
        requested = int(raw) if raw.isdigit() else None
    if requested is None:
        try:
            requested = len(os.sched_getaffinity(0))
        except (AttributeError, OSError):
            requested = os.cpu_count() or 1
    if not hasattr(os, "fork"):
        return 1
    return max(1, min(requested, 2))


def fork_helper(work: Callable[[], None], close: Sequence[int] = ()) -> int | None:
    """Fork a helper that closes the descriptors ``close`` (the parent's ends of its pipes)
    and runs ``work``; its pid, or None when the system refuses the fork. The helper never
    returns to the caller's code: it ends with ``os._exit`` (1 if ``work`` raised)."""
    try:
        pid = os.fork()
    except OSError:
        return None
    if pid == 0:
        code = 1
        try:
            for fd in close:
                os.close(fd)
            _signal.signal(_signal.SIGINT, _signal.SIG_DFL)
            _signal.signal(_signal.SIGPIPE, _signal.SIG_DFL)
            work()
            code = 0
        finally:
            os._exit(code)
    return pid


def stop_helper(pid: int) -> None:
    """Kill the helper ``pid`` (it may have ended already) and reap it."""
    try:
        os.kill(pid, _signal.SIGKILL)
    except OSError:
        pass
    try:
        os.waitpid(pid, 0)
    except OSError:
        pass


def send_frame(fd: int, value: Any) -> None:
    """``value`` (what ``marshal`` writes) as one frame, whole, on ``fd``."""
    payload = marshal.dumps(value)
    view = memoryview(HEADER.pack(len(payload)) + payload)
    while view:
        view = view[os.write(fd, view):]


def read_frame(fd: int) -> Any | None:
    """The next frame's value from the blocking ``fd``; None at its end."""
    header = _read_exact(fd, HEADER.size)
    body = None if header is None else _read_exact(fd, HEADER.unpack(header)[0])
    return None if body is None else marshal.loads(body)


def _read_exact(fd: int, size: int) -> bytes | None:
    chunks = []
    while size:
        chunk = os.read(fd, size)
        if not chunk:
            return None
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


class Frames:
    """Frames read as they come: ``feed`` what was read, then take the whole ones from
    ``values`` (a frame that is not ``marshal`` data raises ``ValueError`` or ``EOFError``)."""

    __slots__ = ("box",)

    def __init__(self) -> None:
        self.box = bytearray()

    def feed(self, chunk: bytes) -> None:
        self.box += chunk

    def values(self) -> Iterator[Any]:
        box = self.box
        while len(box) >= HEADER.size:
            (size,) = HEADER.unpack_from(box)
            end = HEADER.size + size
            if len(box) < end:
                return
            body = bytes(box[HEADER.size:end])
            del box[:end]
            yield marshal.loads(body)

    def clear(self) -> None:
        del self.box[:]

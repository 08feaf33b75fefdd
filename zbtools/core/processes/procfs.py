"""Linux process facts from ``/proc`` and safe signalling (docs/internals/security.md#t16).

Stdlib only (``os``, ``signal``): the command supervisor imports this module too.

* ``read_stat(pid)`` parses ``/proc/PID/stat`` after the last ``)`` (the command name may contain
  spaces and parentheses): state, ppid, pgid and the start time (field 22, clock ticks since boot).
  A PID together with its start time names one process for ever; PIDs alone are recycled.
* ``signal_process(pid, sig, start_time)`` opens a pidfd first, then checks the start time, then
  signals through the pidfd, so a process that exits and whose PID is reused in between is never
  hit.
* ``descendants(root)`` walks the ppid links of every process; ``kill_by_token`` finds the
  processes whose environment carries ``ZBTOOLS_JOB=<token>`` (every command zbtools starts gets
  one), which also finds ``setsid`` escapees that were re-parented away from the supervisor.
"""

from __future__ import annotations

import os
import signal
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

TOKEN_VAR = "ZBTOOLS_JOB"


class Stat:
    __slots__ = ("pgid", "pid", "ppid", "start_time", "state")

    def __init__(self, pid: int, state: str, ppid: int, pgid: int, start_time: int) -> None:
        self.pid = pid
        self.state = state
        self.ppid = ppid
        self.pgid = pgid
        self.start_time = start_time


def read_stat(pid: int) -> Stat | None:
    """The process's stat line, or ``None`` when it does not exist (any more)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            raw = fh.read()
    except OSError:
        return None
    try:
        fields = raw[raw.rindex(b")") + 2:].split()
        return Stat(pid, fields[0].decode("ascii", "replace"), int(fields[1]), int(fields[2]),
                    int(fields[19]))
    except (ValueError, IndexError):
        return None


def start_time(pid: int) -> int | None:
    st = read_stat(pid)
    return None if st is None else st.start_time


def is_alive(pid: int, started: int | None) -> bool:
    """The process ``pid`` exists, is not a zombie and (if given) started at ``started``."""
    st = read_stat(pid)
    return st is not None and st.state != "Z" and (started is None or st.start_time == started)


def all_stats() -> list[Stat]:
    out: list[Stat] = []
    try:
        names = os.listdir("/proc")
    except OSError:
        return out
    for name in names:
        if name.isdigit():
            st = read_stat(int(name))
            if st is not None:
                out.append(st)
    return out


def descendants(root: int) -> list[Stat]:
    """Every process below ``root`` in the ppid tree (zombies included)."""
    children: dict[int, list[Stat]] = {}
    for st in all_stats():
        children.setdefault(st.ppid, []).append(st)
    out: list[Stat] = []
    todo = [root]
    seen = {root}
    while todo:
        for st in children.get(todo.pop(), []):
            if st.pid not in seen:
                seen.add(st.pid)
                out.append(st)
                todo.append(st.pid)
    return out


def signal_process(pid: int, sig: int, started: int | None = None,
                   check: Callable[[int], bool] | None = None) -> bool:
    """Send ``sig`` to ``pid`` only if it is still the process we mean; True when sent."""
    try:
        pidfd = os.pidfd_open(pid)
    except OSError:
        return False
    try:
        if started is not None and start_time(pid) != started:
            return False
        if check is not None and not check(pid):
            return False
        signal.pidfd_send_signal(pidfd, sig)
        return True
    except OSError:
        return False
    finally:
        os.close(pidfd)


def has_token(pid: int, token: str) -> bool:
    needle = f"{TOKEN_VAR}={token}".encode()
    try:
        with open(f"/proc/{pid}/environ", "rb") as fh:
            return needle in fh.read().split(b"\0")
    except OSError:
        return False


def token_pids(token: str) -> list[int]:
    me = os.getpid()
    out: list[int] = []
    try:
        names = os.listdir("/proc")
    except OSError:
        return out
    for name in names:
        if name.isdigit() and int(name) != me and has_token(int(name), token):
            st = read_stat(int(name))
            if st is not None and st.state != "Z":
                out.append(int(name))
    return out


def kill_by_token(token: str, timeout: float = 3.0) -> int:
    """SIGKILL every live process carrying ``ZBTOOLS_JOB=token``; the number killed."""
    killed: set[int] = set()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        pids = token_pids(token)
        if not pids:
            break
        for pid in pids:
            if signal_process(pid, signal.SIGKILL, check=lambda p: has_token(p, token)):
                killed.add(pid)
        time.sleep(0.01)
    return len(killed)


def signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"SIG{number}"


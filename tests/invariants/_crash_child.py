"""The kill switch of the crash invariant: count a process's changes to the disk, die at the k-th.

``install(switch)`` wraps every ``os`` function through which zbtools changes the disk (renames,
links, unlinks, directory changes, opens for writing, writes, truncations, mode and owner
changes, ``fsync``; the ``renameat2`` of ``fsops`` and ``open`` for writing too) so that each
call is one *step*: the k-th step sends the process ``SIGKILL`` before it happens (``partial``:
a write or copy does about half of its bytes first, cut at a page boundary of the file as a
kill in the middle of the kernel's copy is; ``page_cut``). The same wrappers count (and, with
``trace``, name) the steps of an uninterrupted call in the test process, which is how the test
knows where the kill points of a call lie.

``fsync`` is counted but not done: a kill (unlike a power cut) loses nothing the kernel already
has, so it changes nothing the invariant looks at, and it would be most of a call's time.

``main()`` is the child: ``python -c 'from tests.invariants._crash_child import main; main()'
TOOL ...`` reads ``CRASHKIT_KILL_AT`` (the step to die at; 0: never), ``CRASHKIT_PARTIAL``
and ``CRASHKIT_FD`` (a pipe: ``start`` at the first step, ``count N`` at a normal exit) from
its environment, removes them, and runs zbtools' own entry point. Test-only; standard library
only (the child imports nothing else before zbtools).
"""

from __future__ import annotations

import builtins
import os
import signal
import sys
from collections.abc import Callable
from typing import Any

WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND

# os functions that change the disk; each call is one step
STEPS = ("rename", "replace", "link", "unlink", "remove", "rmdir", "mkdir", "symlink", "write",
         "pwrite", "ftruncate", "truncate", "fsync", "fdatasync", "fchmod", "chmod", "fchown",
         "chown", "copy_file_range", "sendfile", "utime")
SKIPPED = frozenset({"fsync", "fdatasync"})  # counted, not done (see the module docstring)


class Switch:
    """Where a process dies: at step ``kill_at`` (0: never), a write half done if ``partial``.
    ``steps`` counts the steps taken; ``on_first`` runs at the first one."""

    def __init__(self, kill_at: int = 0, partial: bool = False,
                 on_first: Callable[[], None] | None = None) -> None:
        self.kill_at = kill_at
        self.partial = partial
        self.on_first = on_first
        self.steps = 0
        self.trace: list[str] | None = None  # ``"name path"`` of each step, when a list

    def step(self, name: str, args: tuple[Any, ...] = ()) -> bool:
        """Count one step; whether the process is to die at it."""
        self.steps += 1
        if self.trace is not None:
            names = [str(a) for a in args[:2] if isinstance(a, str)]
            if name in ("write", "pwrite", "ftruncate") and args and isinstance(args[0], int):
                try:  # what the descriptor writes to (the test picks in-place writes by it)
                    names.append(os.readlink(f"/proc/self/fd/{args[0]}"))
                except OSError:
                    pass
            self.trace.append(" ".join([name, *names]))
        if self.steps == 1 and self.on_first is not None:
            self.on_first()
        return self.steps == self.kill_at


def die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)
    while True:  # SIGKILL is delivered before the next instruction; never go on
        signal.pause()


PAGE = 4096


def page_cut(fd: int, length: int, offset: int | None) -> int:
    """How much of a write of ``length`` bytes at ``offset`` (None: the descriptor's own, the
    end for ``O_APPEND``) a kill can leave written, about half of it: the kernel copies a write
    page by page and stops between two pages only, so a cut falls on a page boundary of the
    file, and a write within one page is whole or not done (0)."""
    import fcntl

    if offset is None:
        if fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_APPEND:
            offset = os.fstat(fd).st_size
        else:
            offset = os.lseek(fd, 0, os.SEEK_CUR)
    first = PAGE - offset % PAGE
    if first >= length:
        return 0
    return first + (max(length // 2 - first, 0) // PAGE) * PAGE


def _cut(name: str, real: Callable[..., Any], args: tuple[Any, ...],
         kwargs: dict[str, Any]) -> None:
    """Do the part of the write ``name(*args)`` that a kill in its middle leaves done."""
    if name in ("write", "pwrite"):
        data = memoryview(args[1])
        cut = page_cut(args[0], data.nbytes, args[2] if name == "pwrite" else None)
        if cut:
            real(args[0], data[:cut], *args[2:])
    elif name == "copy_file_range":
        offset = args[4] if len(args) > 4 else kwargs.get("offset_dst")
        cut = page_cut(args[1], args[2], offset)
        if cut:
            real(args[0], args[1], cut, *args[3:], **kwargs)


def _wrap(name: str, real: Callable[..., Any], switch: Switch) -> Callable[..., Any]:
    def counted(*args: Any, **kwargs: Any) -> Any:
        if name == "open" and not (args[1] if len(args) > 1 else kwargs.get("flags", 0)) \
                & WRITE_FLAGS:
            return real(*args, **kwargs)
        if switch.step(name, args):
            if switch.partial:
                _cut(name, real, args, kwargs)
            die()
        if name in SKIPPED:
            return None
        return real(*args, **kwargs)

    return counted


def _wrap_builtin_open(real: Callable[..., Any], switch: Switch) -> Callable[..., Any]:
    def counted(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        if any(c in mode for c in "wax+") and not isinstance(file, int) and \
                switch.step("open", (str(file),)):
            die()
        return real(file, mode, *args, **kwargs)

    return counted


def install(switch: Switch) -> Callable[[], None]:
    """Count (and kill at) every step of this process from now on; returns the undo."""
    from zbtools.core.files import fsops

    saved: list[tuple[Any, str, Any]] = []
    for name in (*STEPS, "open"):
        real = getattr(os, name, None)
        if real is not None:
            saved.append((os, name, real))
            setattr(os, name, _wrap(name, real, switch))
    saved.append((builtins, "open", builtins.open))
    builtins.open = _wrap_builtin_open(builtins.open, switch)
    rename2 = fsops._load_renameat2()
    if rename2 is not None:
        saved.append((fsops, "_renameat2", fsops._renameat2))

        def counted_rename2(*args: Any) -> int:
            if switch.step("renameat2"):
                die()
            assert rename2 is not None
            return rename2(*args)

        fsops._renameat2 = counted_rename2

    def restore() -> None:
        for owner, name, real in reversed(saved):
            setattr(owner, name, real)

    return restore


def main() -> None:
    kill_at = int(os.environ.pop("CRASHKIT_KILL_AT", "0") or "0")
    partial = os.environ.pop("CRASHKIT_PARTIAL", "") == "1"
    report = int(os.environ.pop("CRASHKIT_FD", "-1") or "-1")
    write = os.write

    def started() -> None:
        if report >= 0:
            write(report, b"start\n")

    switch = Switch(kill_at, partial, started)
    if os.environ.pop("CRASHKIT_TRACE", ""):
        switch.trace = []
    install(switch)
    if report >= 0:
        import atexit

        def finish() -> None:
            for step in switch.trace or []:
                write(report, b"step %s\n" % os.fsencode(step))
            write(report, b"count %d\n" % switch.steps)

        atexit.register(finish)
    from zbtools.entry import main as zbtools_main

    sys.argv[0] = "zbtools"
    zbtools_main()

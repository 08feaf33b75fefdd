"""Helpers shared by the tests of the mutating file tools (write, append, delete, move, copy...)."""

from __future__ import annotations

import errno
import os
import resource
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Call

HIDDEN_MARKERS = (".zbtmp-", ".zbdel-")


def leftovers(root: Path) -> list[str]:
    """Temp files, staging folders and trash our tools may create, anywhere below ``root``."""
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            if any(marker in name for marker in HIDDEN_MARKERS):
                found.append(os.path.relpath(os.path.join(dirpath, name), root))
    return found


def make_deep_tree(parent: Path, name: str, depth: int, *, leaf: str = "leaf.txt") -> None:
    """``parent/name/d/d/.../d/leaf`` with ``depth`` levels of ``d`` (built with dir fds: the
    full path is longer than PATH_MAX)."""
    fd = os.open(parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.mkdir(name, dir_fd=fd)
        child = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = child
        for _ in range(depth):
            os.mkdir("d", dir_fd=fd)
            child = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = child
        out = os.open(leaf, os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
        os.write(out, b"bottom\n")
        os.close(out)
    finally:
        os.close(fd)


@contextmanager
def open_files_limit(soft: int) -> Iterator[None]:
    """Lower the soft RLIMIT_NOFILE of this process (as on a default ``ulimit -n`` desktop)."""
    old_soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(soft, hard), hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (old_soft, hard))


def fail_with(monkeypatch: pytest.MonkeyPatch, name: str, code: int = errno.ENOSPC,
              *, when: Callable[..., bool] | None = None) -> list[tuple[Any, ...]]:
    """Make ``os.<name>`` raise ``OSError(code)`` (when ``when(*args)`` holds); returns the calls
    that failed."""
    real = getattr(os, name)
    failed: list[tuple[Any, ...]] = []

    def fake(*args: Any, **kwargs: Any) -> Any:
        if when is None or when(*args, **kwargs):
            failed.append(args)
            raise OSError(code, os.strerror(code))
        return real(*args, **kwargs)

    monkeypatch.setattr(os, name, fake)
    return failed


def ok(call: Call) -> dict[str, Any]:
    """The result of a call that must have succeeded (exit 0)."""
    assert call.code == 0, call
    return call.result

"""The native engine starts ripgrep with ``os.posix_spawn`` where the process's directory is the
workspace root, and the child gets what ``subprocess.Popen`` would give it: only its three
standard descriptors (an inheritable one of ours is closed), SIGPIPE and SIGXFSZ at their
defaults, exit statuses as ``Popen`` reports them; elsewhere ``start_here`` declines and
``Popen`` starts it (a search from another directory finds the same)."""

from __future__ import annotations

import os
import shutil
import signal
import sys
from pathlib import Path

import pytest

from tests.conftest import run_inprocess
from zbtools.core.search.native import Child, start_here
from zbtools.core.search.ripgrep import find_rg

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="/proc and posix_spawn as on Linux")


def spawned(args: list[str], root: Path) -> tuple[int, bytes]:
    """Run ``args`` through ``start_here`` with the cwd at ``root``: status and output."""
    out = os.memfd_create("out", os.MFD_CLOEXEC)
    err_r, err_w = os.pipe2(os.O_CLOEXEC)
    root_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        child = start_here(args, root_fd, out, err_w)
        assert child is not None
        code = child.wait()
        return code, os.pread(out, 1 << 20, 0)
    finally:
        for fd in (out, err_r, err_w, root_fd):
            os.close(fd)


def test_the_child_gets_only_its_standard_descriptors_and_default_signals(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    null = os.open(os.devnull, os.O_RDONLY)
    leaked = os.dup2(null, 200, inheritable=True)
    try:
        code, out = spawned([shutil.which("ls") or "/bin/ls", "-l", "/proc/self/fd"], tmp_path)
        assert code == 0
        links = {left.split()[-1]: target for left, _, target in
                 (line.partition(" -> ") for line in out.decode().splitlines()[1:])}
        assert {"0", "1", "2"} <= set(links)
        # beyond 0, 1 and 2, only ls's own descriptor on the directory it lists
        assert all(target.startswith("/proc/") for fd, target in links.items()
                   if fd not in ("0", "1", "2")), links
        code, out = spawned(["cat", "/proc/self/status"], tmp_path)  # found on PATH
    finally:
        os.close(leaked)
        os.close(null)
    ignored = next(int(line.split()[1], 16) for line in out.splitlines()
                   if line.startswith(b"SigIgn:"))
    for sig in (signal.SIGPIPE, signal.SIGXFSZ):
        assert not ignored & (1 << (sig - 1))


def test_exit_statuses_read_as_popen_reads_them(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert spawned(["sh", "-c", "exit 3"], tmp_path)[0] == 3
    out = os.memfd_create("out", os.MFD_CLOEXEC)
    root_fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        child = start_here(["sleep", "30"], root_fd, out, out)
        assert isinstance(child, Child)
        assert child.poll() is None
        child.kill()
        assert child.wait() == -signal.SIGKILL
        child.kill()  # reaped: nothing is sent
        assert child.poll() == -signal.SIGKILL
    finally:
        os.close(out)
        os.close(root_fd)


def test_elsewhere_popen_starts_it_and_finds_the_same(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    if find_rg() is None:  # found as the product finds it (the ripgrep wheel's on CI)
        pytest.skip("no rg binary (no ripgrep wheel here)")
    (tmp_path / "sub").mkdir()
    (tmp_path / "a.py").write_text("def get_x():\n    pass\n")
    (tmp_path / "sub" / "b.py").write_text("x = 1\ndef get_y(): ...\n")
    (tmp_path / ".gitignore").write_text("ignored.py\n")
    (tmp_path / "ignored.py").write_text("def get_z(): ...\n")
    root_fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        monkeypatch.chdir(tmp_path / "sub")
        assert start_here(["true"], root_fd, 5, 5) is None  # not the workspace root
    finally:
        os.close(root_fd)
    argv = ["-w", str(tmp_path), "grep_search", "--pattern", "def get_", "--engine", "native"]
    elsewhere = run_inprocess(argv)
    monkeypatch.chdir(tmp_path)
    here = run_inprocess(argv)
    assert elsewhere.out == here.out
    result = here.json["result"]
    assert result["engine"] == "native" and result["skipped"]["ignored"] == 1
    assert [(m["path"], m["line"]) for m in result["matches"]] == [("a.py", 1), ("sub/b.py", 2)]

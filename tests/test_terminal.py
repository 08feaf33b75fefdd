"""A person at a terminal (``--format human``, the default on a TTY), checked under a real
pseudo-terminal: rg-style colours for searches, red/green diffs, a command's output as it comes,
the terminal's own background, tables for ``tools`` and ``list_processes``; ``NO_COLOR``."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

from tests.conftest import REPO

CSI = re.compile(rb"\x1b\[([0-9;]*)m")
COLOUR = re.compile(rb"\x1b\[(?:[0-9;]*;)?(?:3[0-7]|9[0-7]|38;[0-9;]+|4[0-7]|10[0-7]|48;[0-9;]+)m")
BACKGROUND = re.compile(rb"\x1b\[(?:[0-9;]*;)?(?:4[0-7]|10[0-7]|48;[0-9;]+)m")


class Run:
    def __init__(self, chunks: list[tuple[float, bytes]], ended: float, code: int) -> None:
        self.chunks = chunks
        self.ended = ended
        self.code = code
        self.raw = b"".join(data for _, data in chunks)
        self.plain = CSI.sub(b"", self.raw).decode("utf-8", "replace").replace("\r\n", "\n")

    def first_seen(self, text: bytes) -> float:
        seen = b""
        for at, data in self.chunks:
            seen += data
            if text in seen:
                return at
        raise AssertionError(f"{text!r} never arrived: {self.raw!r}")


def on_terminal(ws: Path, *argv: str, env: dict[str, str] | None = None,
                columns: int = 100) -> Run:
    """Run ``zbtools ARGV`` with stdin, stdout and stderr on a pseudo-terminal."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    environment = {k: v for k, v in os.environ.items()
                   if k not in ("NO_COLOR", "FORCE_COLOR", "COLUMNS", "LINES")}
    environment.update(PYTHONPATH=str(REPO), TERM="xterm-256color", **(env or {}))
    started = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "zbtools", *argv], stdin=slave,
                            stdout=slave, stderr=slave, cwd=ws, env=environment,
                            close_fds=True)
    os.close(slave)
    chunks: list[tuple[float, bytes]] = []
    try:
        while True:
            ready, _, _ = select.select([master], [], [], 60)
            if not ready:
                break
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: every holder of the terminal has closed it
                break
            if not data:
                break
            chunks.append((time.monotonic() - started, data))
    finally:
        os.close(master)
        code = proc.wait(timeout=60)
    return Run(chunks, time.monotonic() - started, code)


@pytest.fixture
def project(ws: Path) -> Path:
    (ws / "app.py").write_text("import os\n\n\ndef main():\n    return os.getcwd()  # TODO\n")
    (ws / "notes.md").write_text("a TODO here\nand TODO there\n")
    return ws


def test_grep_is_coloured_like_rg(project: Path) -> None:
    run = on_terminal(project, "grep_search", "TODO", "-C", "1")
    assert run.code == 0
    assert b"\x1b[35mapp.py\x1b[0m" in run.raw  # the path: a magenta heading
    assert re.search(rb"\x1b\[32m5\x1b\[0m:", run.raw)  # the line number: green
    assert b"\x1b[1;31mTODO\x1b[0m" in run.raw  # the match: bold red
    assert "app.py\n4-def main():\n5:    return os.getcwd()  # TODO\n" in run.plain
    assert "notes.md\n1:a TODO here\n2:and TODO there\n" in run.plain


def test_edit_diffs_are_red_and_green(project: Path) -> None:
    run = on_terminal(project, "apply_edit", "notes.md", "--old-text", "a TODO here",
                      "--new-text", "a DONE here")
    assert run.code == 0
    assert b"\x1b[31m-a TODO here" in run.raw
    assert b"\x1b[32m+a DONE here" in run.raw
    assert (project / "notes.md").read_text().startswith("a DONE here")


def test_reads_keep_the_terminal_background(project: Path) -> None:
    run = on_terminal(project, "read_file", "app.py")
    assert run.code == 0
    assert CSI.search(run.raw)  # highlighted...
    assert not BACKGROUND.search(run.raw), run.raw  # ...on the terminal's own background
    lines = run.plain.splitlines()
    assert lines[0].strip() == "1 import os"
    # no line padded to the terminal's 100 columns
    assert max(len(line) for line in lines) == len("  5     return os.getcwd()  # TODO"), lines


def test_a_long_command_shows_its_output_as_it_comes(ws: Path) -> None:
    run = on_terminal(ws, "run_command", "echo first; sleep 2; echo second >&2; exit 3")
    assert run.code == 0  # the exit status stays opt-in (--exit-status)
    assert run.ended - run.first_seen(b"first") > 1.5  # seen long before the command ended
    assert run.first_seen(b"second") > run.first_seen(b"first")
    assert run.plain.count("first") == 1  # not shown again at the end
    assert "[exit code 3;" in run.plain


def test_tools_and_processes_are_tables(ws: Path) -> None:
    tools = on_terminal(ws, "tools")
    header = tools.plain.splitlines()[0].split()
    assert header == ["tool", "kind", "summary"]
    assert re.search(r"^grep_search +reads +Search file contents", tools.plain, re.M)
    started = on_terminal(ws, "run_command", "sleep 30", "--background")
    assert started.code == 0
    try:
        listing = on_terminal(ws, "list_processes")
        header = listing.plain.splitlines()[0].split()
        assert header == ["id", "status", "exit", "runtime", "pid", "output", "command"]
        assert re.search(r"running .* sleep 30$", listing.plain, re.M)
    finally:
        on_terminal(ws, "stop_process", "--all")


def test_no_color_turns_colours_off(project: Path) -> None:
    for argv in (("grep_search", "TODO"), ("read_file", "app.py")):
        run = on_terminal(project, *argv, env={"NO_COLOR": "1"})
        # no colour (bold may stay: NO_COLOR is about colour, https://no-color.org)
        assert run.code == 0 and not COLOUR.search(run.raw), run.raw
        never = on_terminal(project, *argv, "--color", "never")
        assert not CSI.search(never.raw)

"""A person at a terminal (``--format human``, the default on a TTY), checked under a real
pseudo-terminal: rg-style colours for searches, red/green diffs, a command's output as it comes,
the terminal's own background, tables for ``tools`` and ``list_processes``; ``NO_COLOR``; the
escape sequences of content (a file's bytes or name, a command's output, a command to approve)
shown visibly and never acted on, while piped text stays byte for byte. Every tool's every
rendering is run on a terminal by ``tests/surfaces/test_human_rendering.py``."""

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

pytestmark = pytest.mark.slow  # real pseudo-terminals

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
                columns: int = 100, module: str = "zbtools",
                answer: tuple[bytes, bytes] | None = None) -> Run:
    """Run ``zbtools ARGV`` (``python -m MODULE ARGV``) with stdin, stdout and stderr on a
    pseudo-terminal. ``answer``: (prompt, reply): the terminal becomes the program's
    controlling terminal (its ``/dev/tty``), and the reply is typed once the prompt shows."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    environment = {k: v for k, v in os.environ.items()
                   if k not in ("NO_COLOR", "FORCE_COLOR", "COLUMNS", "LINES")}
    environment.update(PYTHONPATH=str(REPO), TERM="xterm-256color", **(env or {}))

    def controlling_terminal() -> None:
        os.setsid()
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    started = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", module, *argv], stdin=slave,
                            stdout=slave, stderr=slave, cwd=ws, env=environment,
                            close_fds=True,
                            # two system calls between fork and exec, no lock taken
                            preexec_fn=controlling_terminal if answer else None)  # noqa: PLW1509
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
            if answer and answer[0] in b"".join(c for _, c in chunks):
                os.write(master, answer[1])
                answer = None
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


def test_grep_scope_headings_name_each_definition(project: Path) -> None:
    run = on_terminal(project, "grep_search", "TODO", "--show-scope")
    assert run.code == 0
    assert b"\x1b[36m@@ function main (lines 4-5)\x1b[0m" in run.raw  # a cyan heading
    assert "app.py\n@@ function main (lines 4-5)\n5:    return os.getcwd()  # TODO\n" in run.plain
    assert "notes.md\n1:a TODO here\n" in run.plain  # no definitions in Markdown: no heading


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


# A clear-screen, a window title (OSC ... BEL), an 8-bit CSI, a bidi override, a backspace and
# a lone carriage return, as a file may hold them.
HOSTILE = "\x1b[2J\x1b]0;owned\x07\x9b31m\u202eevil\x08\rX"
RAW = [b"\x1b[2J", b"\x1b]0;", b"\x07", b"\xc2\x9b", b"\xe2\x80\xae", b"\x08"]


def assert_shown_not_acted_on(raw: bytes) -> None:
    for sequence in RAW:
        assert sequence not in raw, (sequence, raw)
    assert b"^[[2J^[]0;owned^G<U+009B>31m<U+202E>evil^H^MX" in raw, raw


def test_a_paged_read_at_a_terminal_says_where_to_continue(ws: Path) -> None:
    (ws / "f.txt").write_text("".join(f"line {n}\n" for n in range(1, 11)))
    run = on_terminal(ws, "read_file", "f.txt", "--limit", "4")
    assert run.code == 0, run.raw
    assert "more lines follow; continue at line 5" in run.plain
    assert "internal_error" not in run.plain and "5 line 5" not in run.plain
    (ws / "big.txt").write_text("".join(f"line {n}\n" for n in range(1, 2102)))
    over = on_terminal(ws, "read_file", "big.txt")  # over the 2,000-line cap of one read
    assert over.code == 0, over.raw[-2000:]
    assert "continue at line 2001" in over.plain


def test_a_file_cannot_clear_the_screen_or_retitle_the_window(ws: Path) -> None:
    (ws / "evil.txt").write_text(f"before {HOSTILE} TODO\n")
    for argv in (("read_file", "evil.txt"), ("grep_search", "TODO"),
                 ("read_file", "evil.txt", "--format", "text"),
                 ("grep_search", "TODO", "--format", "text")):
        run = on_terminal(ws, *argv)
        assert run.code == 0, run.raw
        assert_shown_not_acted_on(run.raw)
    grep = on_terminal(ws, "grep_search", "TODO")
    assert b"\x1b[35mevil.txt\x1b[0m" in grep.raw  # our own colours still work
    assert b"\x1b[1;31mTODO\x1b[0m" in grep.raw


def test_a_name_or_a_message_cannot_drive_the_terminal_either(ws: Path) -> None:
    (ws / "esc\x1b[2Jname.txt").write_text("x\n")
    missing = on_terminal(ws, "read_file", "no\x1b]0;pe")
    assert missing.code == 1
    assert b"error[not_found]" in missing.raw and b"no^[]0;pe: no such file" in missing.raw
    for argv in (("list_directory",), ("find_files_glob", "*", "--paths"),
                 ("grep_search", "x", "--format", "text")):
        run = on_terminal(ws, *argv)
        assert run.code == 0 and b"esc^[[2Jname.txt" in run.raw, run.raw
        assert b"\x1b[2J" not in run.raw


def test_a_commands_output_is_shown_visibly_as_it_comes(ws: Path) -> None:
    run = on_terminal(ws, "run_command", "printf 'a\\033[2Jb\\r\\n'; printf 'c\\rd' >&2")
    assert run.code == 0, run.raw
    assert b"a^[[2Jb\r\r\n" in run.raw  # the terminal adds a CR before each LF
    assert re.search(rb"c\^Md\r\n\x1b\[2m\[exit code 0", run.raw), run.raw  # a line of its own
    assert b"\x1b[2J" not in run.raw


def test_the_command_to_approve_is_shown_as_it_is(ws: Path) -> None:
    command = "rm -f notes.txt\r\x1b[2Kecho harmless"  # on a terminal: only 'echo harmless'
    run = on_terminal(ws, "--approval", "confirm", "run_command", command,
                      answer=(b"[y/N] ", b"n\n"))
    assert run.code == 3, run.raw
    assert b"rm -f notes.txt^M^[[2Kecho harmless" in run.raw
    assert b"error[approval_denied]" in run.raw


def test_piped_text_stays_byte_for_byte(ws: Path) -> None:
    """What a model reads is the file as it is: only a terminal gets the visible form."""
    (ws / "evil.txt").write_text(f"before {HOSTILE}\n")
    piped = subprocess.run([sys.executable, "-m", "zbtools", "read_file", "evil.txt",
                            "--format", "text"], cwd=ws, capture_output=True, check=False,
                           env={**os.environ, "PYTHONPATH": str(REPO)})
    assert piped.returncode == 0
    assert f"     1\tbefore {HOSTILE}\n".encode() in piped.stdout


def test_notices_at_a_terminal_name_flags_not_json(project: Path) -> None:
    """A person is told what to type: ``--head-limit``, ``--fixed-strings``; the text a model
    reads keeps its JSON words (tests/test_shell_notices.py)."""
    cut = on_terminal(project, "grep_search", "TODO", "--head-limit", "1")
    assert "[showing the first 1 lines; raise --head-limit or narrow the search]" in cut.plain
    failed = on_terminal(project, "grep_search", "TODO(")
    assert failed.code == 2, failed.plain
    assert "pass --fixed-strings to search for the text literally" in failed.plain

"""Running a shell command in the foreground (docs/commands.md): env, capture, timeout.

The command never runs as a child of this process directly: ``supervisor.py`` beside this module
(a tiny stdlib script, started with ``python -I -S``) is the child, becomes a subreaper and forks
the command in a new session and process group (see its docstring). This module

* builds the command's environment: the caller's environment minus secrets (names containing
  KEY, SECRET, TOKEN, PASSW(OR)D, CREDENTIAL, AUTH, COOKIE or SESSION, agent and credential
  sockets such as ``SSH_AUTH_SOCK``, values that embed ``user:password@`` in a URL), plus the
  configured passthrough patterns, plus non-interactive settings (``PAGER=cat``,
  ``GIT_TERMINAL_PROMPT=0``, ``GIT_EDITOR=true``, ...), plus the call's own ``env``;
* drains stdout and stderr continuously through 1 MiB pipes, keeping at most the first and last
  ``CAPTURE`` bytes of each stream in memory and counting the rest, so any amount of output runs
  in bounded memory;
* enforces the timeout twice: the supervisor kills the tree at ``timeout`` (SIGTERM, grace,
  SIGKILL), and this side gives up on the supervisor itself at ``timeout + grace + BACKSTOP``
  (SIGKILL to it and to every process carrying the call's ``ZBTOOLS_JOB`` token);
* turns bytes into JSON-safe text: invalid UTF-8 becomes U+FFFD, ANSI escape sequences are removed
  and ``\\r`` progress redraws collapse to their last state unless ``raw`` is asked for.
"""

from __future__ import annotations

import os
import sys
import time

from zbtools.contract import ToolError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

    from zbtools.core.call.config import ExecSettings

SUPERVISOR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "supervisor.py")
CAPTURE = 1 << 20  # bytes kept from the head and from the tail of each stream
CHUNK = 1 << 16
PIPE_SIZE = 1 << 20
F_SETPIPE_SZ = 1031
BACKSTOP = 3.0  # seconds past timeout + grace before the supervisor itself is killed
SECRET_WORDS = ("KEY", "SECRET", "TOKEN", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH", "COOKIE",
                "SESSION")
SECRET_NAMES = frozenset({"SSH_AUTH_SOCK", "SSH_AGENT_PID", "GPG_AGENT_INFO", "DOCKER_HOST",
                          "DOCKER_CONFIG", "KUBECONFIG", "DBUS_SESSION_BUS_ADDRESS", "SSH_ASKPASS",
                          "SUDO_ASKPASS", "GIT_ASKPASS", "NETRC", "PGPASSFILE", "VAULT_ADDR"})
NON_INTERACTIVE = {
    "PAGER": "cat", "GIT_PAGER": "cat", "MANPAGER": "cat", "SYSTEMD_PAGER": "cat",
    "GIT_TERMINAL_PROMPT": "0", "GIT_EDITOR": "true", "EDITOR": "true", "VISUAL": "true",
    "GCM_INTERACTIVE": "never", "DEBIAN_FRONTEND": "noninteractive", "NO_COLOR": "1",
    "TERM": "dumb", "PIP_NO_INPUT": "1", "PYTHONUNBUFFERED": "1",
}


def is_secret(name: str, value: str) -> bool:
    upper = name.upper()
    if upper in SECRET_NAMES or any(word in upper for word in SECRET_WORDS):
        return True
    at = value.find("@")
    scheme = value.find("://")
    # a URL with user:password@ (DATABASE_URL=postgres://u:p@host/db)
    return 0 < scheme < at and ":" in value[scheme + 3:at]


def build_env(base: Mapping[str, str], passthrough: list[str], additions: Mapping[str, str],
              token: str) -> tuple[dict[str, str], list[str]]:
    """The command's environment and the names of the variables withheld (never their values)."""
    import fnmatch

    env: dict[str, str] = {}
    withheld: list[str] = []
    for name, value in base.items():
        if is_secret(name, value) and not any(fnmatch.fnmatchcase(name, p) for p in passthrough):
            withheld.append(name)
            continue
        env[name] = value
    env.update(NON_INTERACTIVE)
    env.update(additions)
    from zbtools.core.processes.procfs import TOKEN_VAR

    env[TOKEN_VAR] = token
    return env, sorted(withheld)


def new_token() -> str:
    return os.urandom(6).hex()


def shell_argv(settings: ExecSettings, command: str) -> list[str]:
    shell = settings.shell
    if not os.path.isabs(shell) or not os.access(shell, os.X_OK):
        shell = "/bin/sh"
    return [shell, "-c", command]


# ---- decoding --------------------------------------------------------------------------------

_ANSI = None


def clean_text(data: bytes, raw: bool) -> str:
    """Bytes -> text that is always valid JSON: U+FFFD for invalid UTF-8; ANSI removed."""
    text = data.decode("utf-8", "replace")
    if raw:
        return text
    global _ANSI
    if _ANSI is None:
        import re

        _ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
                           r"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?|\x1b[@-Z\\-_]|\x1b")
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    if "\r" in text:
        lines = text.split("\n")
        for i, line in enumerate(lines):
            if "\r" in line:
                body = line[:-1] if line.endswith("\r") else line
                lines[i] = body.rsplit("\r", 1)[-1] + ("\r" if line.endswith("\r") else "")
        text = "\n".join(lines)
    return text


class Capture:
    """The first and last ``limit`` bytes of a stream, and its total size."""

    def __init__(self, limit: int = CAPTURE) -> None:
        from collections import deque

        self.limit = limit
        self.head = bytearray()
        self.tail: deque[bytes] = deque()
        self.tail_len = 0
        self.total = 0

    def add(self, data: bytes) -> None:
        self.total += len(data)
        room = self.limit - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if not data:
            return
        self.tail.append(data)
        self.tail_len += len(data)
        while self.tail_len - len(self.tail[0]) >= self.limit:
            self.tail_len -= len(self.tail.popleft())

    def text(self, raw: bool) -> tuple[str, int]:
        """The kept text and the number of bytes dropped from the middle."""
        tail = b"".join(self.tail)
        if len(tail) > self.limit:
            tail = tail[len(tail) - self.limit:]
        dropped = self.total - len(self.head) - len(tail)
        if not dropped:
            return clean_text(bytes(self.head) + tail, raw), 0
        # cut at whole UTF-8 characters on both sides of the gap
        head = bytes(self.head)
        while head and 0x80 <= head[-1] < 0xC0 and len(self.head) - len(head) < 3:
            head = head[:-1]
        if head and head[-1] >= 0xC0:
            head = head[:-1]
        start = 0
        while start < min(3, len(tail)) and 0x80 <= tail[start] < 0xC0:
            start += 1
        dropped = self.total - len(head) - (len(tail) - start)
        return (clean_text(head, raw) + f"\n[... {dropped} bytes of output not kept ...]\n"
                + clean_text(tail[start:], raw)), dropped


# ---- the foreground run ----------------------------------------------------------------------

class Outcome:
    def __init__(self) -> None:
        self.exit_code: int | None = None
        self.signal: str | None = None
        self.timed_out = False
        self.duration_ms = 0
        self.leftovers = 0
        self.stdout = Capture()
        self.stderr = Capture()
        self.sandbox_warning = ""


def _pipe() -> tuple[int, int]:
    r, w = os.pipe2(os.O_CLOEXEC)
    try:
        import fcntl

        fcntl.fcntl(r, F_SETPIPE_SZ, PIPE_SIZE)
    except OSError:
        pass
    return r, w


def start_supervisor(mode: str, extra: list[str], *, pass_fds: tuple[int, ...],
                     stdin: int | None, stderr: int | None = None) -> Any:
    import subprocess

    try:
        return subprocess.Popen(
            [sys.executable, "-I", "-S", SUPERVISOR, mode, *extra], stdin=stdin,
            stdout=subprocess.DEVNULL,
            stderr=stderr if stderr is not None else subprocess.DEVNULL,
            pass_fds=pass_fds, close_fds=True, start_new_session=True)
    except OSError as exc:
        raise ToolError("spawn_failed", f"cannot start the command supervisor: "
                        f"{os.strerror(exc.errno or 0)}",
                        hint="the Python interpreter running zbtools could not be executed"
                        ) from exc


def run_foreground(cfg: dict[str, Any], *, merge: bool, timeout: float, grace: float,
                   token: str, cancelled: Callable[[], bool] | None = None,
                   progress: Callable[[float], None] | None = None,
                   output: Callable[[str, bytes], None] | None = None) -> Outcome:
    """Run the command described by ``cfg`` under a foreground supervisor and collect it.

    ``cancelled`` is polled while the command runs: once it says True the supervisor is told
    to stop (it kills the whole tree: SIGTERM, the grace period, SIGKILL) and, once it has,
    ``interrupted`` is raised. ``progress`` is called with the seconds run so far; ``output``,
    if given, with ``"stdout"`` or ``"stderr"`` and each chunk as it arrives (merged output is
    all ``"stdout"``).
    """
    import json
    import select
    import subprocess

    out = Outcome()
    out_r, out_w = _pipe()
    err_r, err_w = (out_r, out_w) if merge else _pipe()
    st_r, st_w = os.pipe2(os.O_CLOEXEC)
    cfg = dict(cfg, mode="fg", out_fd=out_w, err_fd=err_w, status_fd=st_w, timeout=timeout,
               grace=grace)
    fds = tuple(sorted({out_w, err_w, st_w, cfg["cwd_fd"]}))
    started = time.monotonic()
    try:
        proc = start_supervisor("fg", [], pass_fds=fds, stdin=subprocess.PIPE)
    finally:
        for fd in {out_w, err_w, st_w}:
            os.close(fd)
    status = b""
    open_fds = {out_r: out.stdout, st_r: None}
    if not merge:
        open_fds[err_r] = out.stderr
    backstop = started + timeout + grace + BACKSTOP
    status_done_at: float | None = None
    cancel_sent = False
    # how long one wait may last: short when someone polls cancellation or watches progress
    tick = 0.1 if cancelled is not None or progress is not None else 1.0
    try:
        assert proc.stdin is not None
        try:
            proc.stdin.write((json.dumps(cfg) + "\n").encode())
            proc.stdin.flush()
        except BrokenPipeError:
            pass
        while open_fds:
            now = time.monotonic()
            if not cancel_sent and cancelled is not None and cancelled():
                cancel_sent = True
                try:
                    proc.stdin.close()  # the supervisor kills the tree, then reports
                except OSError:
                    pass
                backstop = min(backstop, now + grace + BACKSTOP)
            if progress is not None and not cancel_sent:
                progress(now - started)
            if status_done_at is not None and now - status_done_at > 0.5:
                break  # the tree is gone; a holder we cannot see must not keep us here
            if now > backstop:
                out.timed_out = True
                proc.kill()
                from zbtools.core.processes.procfs import kill_by_token

                kill_by_token(token)
                break
            limit = backstop - now if status_done_at is None else 0.5
            ready, _, _ = select.select(list(open_fds), [], [], max(min(limit, tick), 0))
            for fd in ready:
                try:
                    data = os.read(fd, CHUNK if fd == st_r else PIPE_SIZE)
                except InterruptedError:
                    continue
                sink = open_fds[fd]
                if not data:
                    del open_fds[fd]
                    if fd == st_r:
                        status_done_at = time.monotonic()
                elif sink is None:
                    status += data
                else:
                    sink.add(data)
                    if output is not None:
                        output("stdout" if fd == out_r else "stderr", data)
    finally:
        for fd in {out_r, err_r, st_r}:
            os.close(fd)
        try:
            if proc.stdin is not None:
                proc.stdin.close()  # the supervisor's cancel signal, if it is still running
        except OSError:
            pass
        try:
            proc.wait(timeout=grace + BACKSTOP)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    out.duration_ms = int((time.monotonic() - started) * 1000)
    if cancel_sent:
        raise ToolError("interrupted", "the call was cancelled by the client; the command and "
                        "every process it started were stopped",
                        hint="run it again, or with background: true for long jobs")
    if not status:
        if not out.timed_out:
            raise ToolError("spawn_failed", "the command supervisor ended without a report",
                            hint="rerun with --debug; this is likely a bug in zbtools")
        out.signal = "SIGKILL"
        return out
    report = json.loads(status.decode("utf-8", "replace").splitlines()[0])
    if report.get("error"):
        code = report["error"].get("code", "spawn_failed")
        message = report["error"].get("message", "")
        if code == "sandbox_unavailable":
            raise ToolError("sandbox_unavailable", message, hint="the kernel refused to "
                            "confine the command; run without require_sandbox, or on a kernel "
                            "with Landlock")
        raise ToolError("spawn_failed", f"cannot run the command: {message}",
                        hint="check the configured shell and the working directory")
    out.exit_code = report.get("exit_code")
    out.signal = report.get("signal")
    out.timed_out = bool(report.get("timed_out"))
    out.leftovers = int(report.get("leftovers") or 0)
    out.sandbox_warning = report.get("sandbox_warning") or ""
    return out

"""The command supervisor: one small process per command that owns it and its whole tree.

Run as a script (``python -I -S .../zbtools/core/processes/supervisor.py fg|bg ...``) so that
it starts fast and imports only the standard library, ``zbtools.core.processes.procfs`` and,
for a sandbox, ``zbtools.core.processes.landlock``. It becomes a child subreaper, so every
orphan of the tree stays visible and killable; forks the command into its own session with
stdin from ``/dev/null`` (or the caller's text), the pinned working directory, a parent-death
signal and no core dumps, optionally confined by Landlock; on timeout, stop or cancellation
sends SIGTERM (then SIGCONT) to the group and every descendant and SIGKILL after the grace
period, until none is left, also when the leader exits by itself; and reports a status line
(``fg``) or detaches and keeps a capped, rotating log and ``meta.json`` (``bg``), honouring a
``ttl`` and stop requests (docs/commands.md).

Map: ``Supervisor`` (the process), ``Log`` (a background job's rotating log), ``main``.
"""

from __future__ import annotations

import errno
import json
import os
import select
import signal
import sys
import time

if __name__ == "__main__":  # run as a script: make the package importable without site
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))))

from zbtools.core.processes import procfs

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
F_SETPIPE_SZ = 1031
PIPE_SIZE = 1 << 20
CHUNK = 1 << 16
LINGER = 0.05  # after the leader exits, output still in flight is read for this long
META_EVERY = 0.1


def _prctl(option: int, value: int) -> None:
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(option, value, 0, 0, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


def _write_atomic(path: str, data: dict[str, Any]) -> None:
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(data, fh)
    os.replace(tmp, path)


class Log:
    """Two rotating segments (``out.0``, ``out.1``) of ``seg`` bytes; absolute offsets."""

    def __init__(self, folder: str, cap: int) -> None:
        self.seg = max(cap // 2, 4096)
        self.total = 0
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC
        self.fds = [os.open(os.path.join(folder, f"out.{i}"), flags, 0o600) for i in (0, 1)]

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            index, offset = divmod(self.total, self.seg)
            piece = view[:self.seg - offset]
            fd = self.fds[index % 2]
            if offset == 0 and index >= 2:
                os.ftruncate(fd, 0)  # recycle the oldest segment: its bytes are dropped
            os.pwrite(fd, piece, offset)
            self.total += len(piece)
            view = view[len(piece):]


class Supervisor:
    def __init__(self, cfg: dict[str, Any], job_dir: str | None) -> None:
        self.cfg = cfg
        self.job_dir = job_dir
        self.mode = cfg["mode"]
        self.pid = 0
        self.pgid = 0
        self.start_time: int | None = None
        self.leader_status: int | None = None
        self.stop_requested = False
        self.cancelled = False
        self.timed_out = False
        self.stop_reason = ""
        self.leftovers = 0
        self.sandbox_warning = ""
        self.out_r = -1
        self.out_eof = True
        self.log: Log | None = None
        self.last_meta = 0.0
        self.started_at = time.time()
        self.t0 = time.monotonic()
        self.wake_r, self.wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        self.meta: dict[str, Any] = {}

    # ---- setup -------------------------------------------------------------------------------
    def _signals(self) -> None:
        def stop(_sig: int, _frame: object) -> None:
            self.stop_requested = True

        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, stop)
        signal.signal(signal.SIGCHLD, lambda _s, _f: None)
        signal.set_wakeup_fd(self.wake_w, warn_on_full_buffer=False)

    def spawn(self) -> str | None:
        """Fork and exec the command; an error message (``code:text``) on failure."""
        cfg = self.cfg
        if self.mode == "bg":
            self.out_r, out_w = os.pipe2(os.O_CLOEXEC)
            try:
                import fcntl

                fcntl.fcntl(self.out_r, F_SETPIPE_SZ, PIPE_SIZE)
            except OSError:
                pass
            out_fd = err_fd = out_w
            self.out_eof = False
        else:
            out_fd, err_fd = cfg["out_fd"], cfg["err_fd"]
        sandbox = cfg.get("sandbox")
        if sandbox:
            from zbtools.core.processes import landlock  # before the fork: ctypes is loaded once
        import resource  # imported before the fork: the child only calls into it
        err_r, err_w = os.pipe2(os.O_CLOEXEC)
        me = os.getpid()
        pid = os.fork()
        if pid == 0:  # the command's process: no Python-level cleanup from here on
            try:
                os.close(err_r)
                os.setsid()
                if cfg.get("stdin") is not None:
                    fd = os.memfd_create("stdin")
                    os.write(fd, cfg["stdin"].encode("utf-8", "surrogateescape"))
                    os.lseek(fd, 0, os.SEEK_SET)
                else:
                    fd = os.open(os.devnull, os.O_RDONLY)
                os.dup2(fd, 0)
                os.dup2(out_fd, 1)
                os.dup2(err_fd, 2)
                os.fchdir(cfg["cwd_fd"])
                _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
                if os.getppid() != me:
                    os._exit(1)
                resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
                for sig in (signal.SIGPIPE, signal.SIGTERM, signal.SIGINT, signal.SIGHUP,
                            signal.SIGCHLD, signal.SIGXFSZ):
                    signal.signal(sig, signal.SIG_DFL)
                signal.set_wakeup_fd(-1)
                if sandbox:
                    try:
                        landlock.restrict_self(read=sandbox["read"], write=sandbox["write"],
                                               deny_network=sandbox["deny_network"])
                    except OSError as exc:
                        message = f"Landlock could not be applied: {exc.strerror}"
                        if sandbox.get("required"):
                            os.write(err_w, f"sandbox_unavailable:{message}".encode())
                            os._exit(126)
                        os.write(err_w, f"warning:{message}\n".encode())
                argv = cfg["argv"]
                os.execve(argv[0], argv, cfg["env"])
            except BaseException as exc:  # report and leave; never return into the supervisor
                text = str(exc.strerror if isinstance(exc, OSError) else exc)
                try:
                    os.write(err_w, f"spawn_failed:{cfg['argv'][0]}: {text}".encode())
                finally:
                    os._exit(127)
        os.close(err_w)
        if self.mode == "bg":
            os.close(out_fd)
        else:
            os.close(out_fd)
            if err_fd != out_fd:
                os.close(err_fd)
        report = b""
        while True:  # EOF once the exec succeeded (close-on-exec) or the child gave up
            try:
                piece = os.read(err_r, 4096)
            except InterruptedError:
                continue
            if not piece:
                break
            report += piece
        os.close(err_r)
        self.pid = self.pgid = pid
        self.start_time = procfs.start_time(pid)
        text = report.decode("utf-8", "replace")
        if text.startswith("warning:"):
            self.sandbox_warning = text[len("warning:"):].strip()
        elif text:
            self._reap_all(block_for=pid)
            return text
        return None

    # ---- the loop ----------------------------------------------------------------------------
    def _reap_all(self, block_for: int = 0) -> None:
        while True:
            try:
                pid, status = os.waitpid(-1, 0 if block_for else os.WNOHANG)
            except ChildProcessError:
                return
            except InterruptedError:
                continue
            if pid == 0:
                return
            if pid == self.pid:
                self.leader_status = status
            if pid == block_for:
                block_for = 0

    def _pump(self, timeout: float) -> None:
        """Wait up to ``timeout`` for output, signals or cancellation; handle what came."""
        fds = [self.wake_r]
        if not self.out_eof:
            fds.append(self.out_r)
        if self.mode == "fg" and not self.cancelled:
            fds.append(0)
        try:
            ready, _, _ = select.select(fds, [], [], max(timeout, 0))
        except InterruptedError:
            ready = []
        if self.wake_r in ready:
            try:
                while os.read(self.wake_r, 4096):
                    pass
            except BlockingIOError:
                pass
        if self.out_r in ready and not self.out_eof:
            for _ in range(16):  # bounded per wake-up so signals stay responsive
                try:
                    data = os.read(self.out_r, CHUNK)
                except InterruptedError:
                    continue
                if not data:
                    self.out_eof = True
                    break
                assert self.log is not None
                self.log.write(data)
                if len(data) < CHUNK or not select.select([self.out_r], [], [], 0)[0]:
                    break
            self._meta_tick()
        if 0 in ready and self.mode == "fg":
            try:
                gone = not os.read(0, 4096)
            except OSError:
                gone = True
            if gone:
                self.cancelled = True
        self._reap_all()

    def _meta_tick(self, force: bool = False) -> None:
        if self.mode != "bg":
            return
        now = time.monotonic()
        if force or now - self.last_meta >= META_EVERY:
            self.last_meta = now
            assert self.log is not None
            self.meta["bytes_total"] = self.log.total
            self._save_meta()

    def _save_meta(self) -> None:
        assert self.job_dir is not None
        _write_atomic(os.path.join(self.job_dir, "meta.json"), self.meta)

    def _signal_tree(self, sig: int) -> int:
        me = os.getpid()
        sent = 0
        if self.leader_status is None and self.pgid:
            try:
                os.killpg(self.pgid, sig)  # the leader is unreaped: its group id is still ours
                sent += 1
            except OSError:
                pass
        stopped = []
        for st in procfs.descendants(me):
            if st.state != "Z" and procfs.signal_process(
                    st.pid, sig, st.start_time, lambda p: _below(p, me)):
                sent += 1
                if st.state in "Tt":
                    stopped.append(st)
        if sig == signal.SIGTERM:  # a stopped process acts on SIGTERM only once continued
            if self.leader_status is None and self.pgid:
                try:
                    os.killpg(self.pgid, signal.SIGCONT)
                except OSError:
                    pass
            for st in stopped:
                procfs.signal_process(st.pid, signal.SIGCONT, st.start_time,
                                      lambda p: _below(p, me))
        return sent

    def _live_descendants(self) -> list[procfs.Stat]:
        return [st for st in procfs.descendants(os.getpid()) if st.state != "Z"]

    def kill_tree(self, grace: float) -> None:
        self._signal_tree(signal.SIGTERM)
        end = time.monotonic() + grace
        while time.monotonic() < end:
            self._pump(0.02)
            if not self._live_descendants():
                self._reap_all()
                return
        end = time.monotonic() + 10.0
        while time.monotonic() < end:
            self._signal_tree(signal.SIGKILL)
            self._pump(0.01)
            if not procfs.descendants(os.getpid()):
                return

    def _control_grace(self) -> float:
        grace = float(self.cfg.get("grace", 2.0))
        if self.job_dir is not None:
            try:
                with open(os.path.join(self.job_dir, "control.json"), encoding="utf-8") as fh:
                    grace = float(json.load(fh).get("grace", grace))
            except (OSError, ValueError, TypeError, AttributeError):
                pass
        return min(max(grace, 0.0), 300.0)

    def run(self) -> int:
        try:
            _prctl(PR_SET_CHILD_SUBREAPER, 1)
        except OSError:
            pass
        self._signals()
        for key in ("cwd_fd", "status_fd", "out_fd", "err_fd"):
            if key in self.cfg:
                os.set_inheritable(self.cfg[key], False)
        if self.mode == "bg":
            assert self.job_dir is not None
            self.log = Log(self.job_dir, int(self.cfg.get("log_cap", 8 << 20)))
            self.meta = dict(self.cfg.get("meta", {}))
            self.meta.update(status="starting", supervisor_pid=os.getpid(),
                             supervisor_start_time=procfs.start_time(os.getpid()),
                             started_at=self.started_at, bytes_total=0, seg_size=self.log.seg)
            self._save_meta()
        failure = self.spawn()
        if failure is not None:
            code, _, message = failure.partition(":")
            return self.finish(error={"code": code, "message": message})
        if self.mode == "bg":
            self.meta.update(status="running", pid=self.pid, pgid=self.pgid,
                             start_time=self.start_time)
            if self.sandbox_warning:
                self.meta["sandbox_warning"] = self.sandbox_warning
            self._save_meta()
        limit = self.cfg.get("timeout") if self.mode == "fg" else self.cfg.get("ttl")
        deadline = self.t0 + float(limit) if limit else None
        while self.leader_status is None:
            if self.stop_requested or self.cancelled:
                self.stop_reason = "cancelled" if self.cancelled else "stopped"
                self.kill_tree(self._control_grace())
                break
            if deadline is not None and time.monotonic() >= deadline:
                self.timed_out = True
                self.kill_tree(float(self.cfg.get("grace", 2.0)))
                break
            wait = 0.1 if deadline is None else min(0.1, deadline - time.monotonic())
            self._pump(wait)
        else:
            end = time.monotonic() + LINGER
            while time.monotonic() < end and not (self.out_eof and self.mode == "bg"):
                self._pump(0.01)
            left = self._live_descendants()
            if left:
                self.leftovers = len(left)
                self.kill_tree(float(self.cfg.get("leftover_grace", 1.0)))
        self._reap_all()
        end = time.monotonic() + 2.0  # every writer is gone: read the rest of the output
        while not self.out_eof and time.monotonic() < end:
            self._pump(0.05)
        return self.finish()

    def finish(self, error: dict[str, str] | None = None) -> int:
        status = self.leader_status
        exit_code = sig = None
        if status is not None:
            code = os.waitstatus_to_exitcode(status)
            if code < 0:
                sig = procfs.signal_name(-code)
            else:
                exit_code = code
        report: dict[str, Any] = {
            "exit_code": exit_code, "signal": sig, "timed_out": self.timed_out,
            "stopped": self.stop_reason, "leftovers": self.leftovers,
            "duration_ms": int((time.monotonic() - self.t0) * 1000),
            "sandbox_warning": self.sandbox_warning, "error": error,
        }
        if self.mode == "fg":
            data = (json.dumps(report) + "\n").encode()
            try:
                os.write(self.cfg["status_fd"], data)
            except OSError:
                pass
            return 0
        if error is not None:
            state = "failed"
        elif self.timed_out:
            state = "timed_out"
        elif self.stop_reason:
            state = "stopped"
        else:
            state = "exited"
        self.meta.update(report, status=state, ended_at=time.time())
        self._meta_tick(force=True)
        return 0


def _below(pid: int, ancestor: int) -> bool:
    """``pid`` is still a descendant of ``ancestor`` (checked right before signalling)."""
    seen = 0
    while pid > 1 and seen < 4096:
        st = procfs.read_stat(pid)
        if st is None:
            return False
        if st.ppid == ancestor:
            return True
        pid = st.ppid
        seen += 1
    return False


def main(argv: list[str]) -> int:
    mode = argv[1] if len(argv) > 1 else ""
    if mode == "fg":
        line = b""
        while not line.endswith(b"\n"):
            piece = os.read(0, 1 << 16)
            if not piece:
                return 1
            line += piece
        cfg = json.loads(line)
        return Supervisor(cfg, None).run()
    if mode == "bg" and len(argv) > 2:
        job_dir = argv[2]
        with open(os.path.join(job_dir, "spec.json"), encoding="utf-8") as fh:
            cfg = json.load(fh)
        if os.fork() != 0:  # detach: the caller reaps the first process at once
            os._exit(0)
        try:
            err = os.open(os.path.join(job_dir, "supervisor.err"),
                          os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
            os.dup2(err, 2)
        except OSError as exc:
            if exc.errno != errno.ENOENT:
                raise
        return Supervisor(cfg, job_dir).run()
    sys.stderr.write("usage: _supervisor.py fg  (config line on stdin) | bg JOB_DIR\n")
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))

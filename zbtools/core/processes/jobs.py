"""Background jobs: one detached supervisor per job, state on disk, no resident daemon.

Layout: ``<state dir>/proc/<id>/`` with ``spec.json`` (what to run, written here), ``meta.json``
(written by the supervisor with an atomic replace: status, pid, pgid, start time, exit code or
signal, ``bytes_total``), ``out.0``/``out.1`` (the output log, two rotating halves of
``log_cap``), ``control.json`` (the grace period of a stop request) and ``supervisor.err``.

Ids are 12 lowercase hex characters from ``os.urandom``, checked against ``ID_RE`` before any
path is built from them. The same token is set as ``ZBTOOLS_JOB`` in the command's environment,
so the job's processes can be found even after their supervisor is gone.

* Output offsets are absolute byte positions in the job's whole output. The log keeps the last
  one to two halves; ``read_output`` reports how many bytes between the cursor and the oldest
  byte kept were ``dropped``.
* A job is signalled only through its supervisor, identified by pid *and* start time (field 22
  of ``/proc/PID/stat``), so a recycled PID is never hit.
* A job whose supervisor vanished (killed with SIGKILL, machine reboot) is noticed by every
  ``list``/``read``/``stop``: its remaining processes are killed by token and it is marked
  ``lost``. Jobs that ended are kept for ``KEEP_SECONDS`` (at most ``KEEP_JOBS`` of them).
"""

from __future__ import annotations

import json
import os
import signal
import time

from zbtools.contract import ToolError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from zbtools.core.call.config import ExecSettings
    from zbtools.core.call.context import Context

ACTIVE = ("starting", "running")
KEEP_SECONDS = 24 * 3600
KEEP_JOBS = 50
START_WAIT = 10.0


def valid_id(job_id: str) -> bool:
    return len(job_id) == 12 and all(c in "0123456789abcdef" for c in job_id)


def jobs_root(ctx: Context) -> str:
    path = os.path.join(ctx.state_dir, "proc")
    os.makedirs(path, mode=0o700, exist_ok=True)
    return path


def job_dir(ctx: Context, job_id: str) -> str:
    if not isinstance(job_id, str) or not valid_id(job_id):
        raise ToolError("process_not_found", f"{job_id!r} is not a process id",
                        hint="ids are the 12-character values returned by bash, or by "
                        "run_command with background: true; list_processes shows them")
    path = os.path.join(jobs_root(ctx), job_id)
    if not os.path.isdir(path):
        raise ToolError("process_not_found", f"no background process {job_id} in this "
                        "workspace", hint="list_processes shows the known processes")
    return path


def _load(path: str) -> dict[str, Any] | None:
    for _ in range(3):
        try:
            with open(os.path.join(path, "meta.json"), encoding="utf-8") as fh:
                value = json.load(fh)
            return value if isinstance(value, dict) else None
        except FileNotFoundError:
            return None
        except ValueError:
            time.sleep(0.005)
    return None


def _save(path: str, meta: dict[str, Any]) -> None:
    tmp = os.path.join(path, f"meta.json.{os.getpid()}.{os.urandom(3).hex()}.tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(meta, fh)
    os.replace(tmp, os.path.join(path, "meta.json"))


def supervisor_alive(meta: dict[str, Any]) -> bool:
    from zbtools.core.processes.procfs import is_alive

    pid = meta.get("supervisor_pid")
    return isinstance(pid, int) and is_alive(pid, meta.get("supervisor_start_time"))


def reconcile(ctx: Context, job_id: str, meta: dict[str, Any]) -> dict[str, Any]:
    """Notice a job whose supervisor is gone: kill what is left of it, mark it ``lost``."""
    if meta.get("status") not in ACTIVE or supervisor_alive(meta):
        return meta
    path = os.path.join(jobs_root(ctx), job_id)
    fresh = _load(path) or meta  # the supervisor may have finished in the meantime
    if fresh.get("status") not in ACTIVE:
        return fresh
    from zbtools.core.processes.procfs import kill_by_token

    killed = kill_by_token(job_id)
    fresh.update(status="lost", ended_at=time.time(), leftovers=killed,
                 error={"code": "lost", "message": "the supervisor disappeared; the job's "
                        "processes were killed"})
    _save(path, fresh)
    return fresh


def read_meta(ctx: Context, job_id: str) -> dict[str, Any]:
    path = job_dir(ctx, job_id)
    meta = _load(path)
    if meta is None:
        raise ToolError("process_not_found", f"background process {job_id} has no state",
                        hint="list_processes shows the known processes")
    return reconcile(ctx, job_id, meta)


def launch(ctx: Context, cfg: dict[str, Any], job_id: str, settings: ExecSettings,
           command: str, cwd: str, ttl: float, *, grace: float) -> dict[str, Any]:
    """Start a detached supervisor for ``cfg``; return its meta once the command runs."""
    import subprocess

    from zbtools.core.processes.proc import start_supervisor

    prune(ctx)
    path = os.path.join(jobs_root(ctx), job_id)
    os.mkdir(path, 0o700)
    spec = dict(cfg, mode="bg", ttl=ttl, grace=grace, log_cap=settings.log_cap,
                meta={"id": job_id, "command": command, "cwd": cwd, "ttl": ttl,
                      "log_cap": settings.log_cap})
    with open(os.path.join(path, "spec.json"), "w", encoding="utf-8") as fh:
        json.dump(spec, fh)
    proc = start_supervisor("bg", [path], pass_fds=(cfg["cwd_fd"],),
                            stdin=subprocess.DEVNULL)
    proc.wait()  # the first process detaches at once (double fork)
    try:
        os.unlink(os.path.join(path, "spec.json"))  # it holds the environment
    except OSError:
        pass
    deadline = time.monotonic() + START_WAIT
    meta: dict[str, Any] | None = None
    while time.monotonic() < deadline:
        meta = _load(path)
        if meta is not None and meta.get("status") != "starting":
            break
        time.sleep(0.005)
    if meta is None or meta.get("status") == "starting":
        raise ToolError("spawn_failed", "the background supervisor did not start in time",
                        hint="the machine may be overloaded; list_processes shows the job if "
                        "it started later", details={"id": job_id})
    error = meta.get("error")
    if meta.get("status") == "failed" and isinstance(error, dict):
        forget(ctx, job_id)
        if error.get("code") == "sandbox_unavailable":
            raise ToolError("sandbox_unavailable", str(error.get("message")),
                            hint="drop require_sandbox or use a kernel with Landlock")
        raise ToolError("spawn_failed", f"cannot run the command: {error.get('message')}",
                        hint="check the configured shell and the working directory")
    return meta


class Chunk:
    __slots__ = ("data", "dropped", "more", "next_cursor")

    def __init__(self, data: bytes, next_cursor: int, dropped: int, more: bool) -> None:
        self.data = data
        self.next_cursor = next_cursor
        self.dropped = dropped
        self.more = more


def read_output(ctx: Context, job_id: str, cursor: int, *, max_bytes: int,
                meta: dict[str, Any] | None = None) -> Chunk:
    """Bytes from ``cursor`` (absolute offset) on, at most ``max_bytes``."""
    path = job_dir(ctx, job_id)
    for _ in range(5):
        if meta is None:
            meta = read_meta(ctx, job_id)
        total = int(meta.get("bytes_total") or 0)
        seg = int(meta.get("seg_size") or 1)
        last = (total - 1) // seg if total else 0
        kept_from = max(last - 1, 0) * seg
        dropped = max(kept_from - cursor, 0)
        start = min(max(cursor, kept_from), total)
        stop = min(total, start + max_bytes)
        data = bytearray()
        pos = start
        while pos < stop:
            index, offset = divmod(pos, seg)
            want = min(stop - pos, seg - offset)
            try:
                with open(os.path.join(path, f"out.{index % 2}"), "rb") as fh:
                    fh.seek(offset)
                    piece = fh.read(want)
            except OSError:
                piece = b""
            if len(piece) < want:
                break
            data += piece
            pos += want
        after = _load(path) or meta
        newest = (int(after.get("bytes_total") or 0) - 1) // seg
        if pos == stop and newest <= start // seg + 1:
            if stop < total and stop > start:  # never split a UTF-8 character between reads
                keep = len(data)
                back = 0
                while back < 3 and keep - back - 1 >= 0 and 0x80 <= data[keep - back - 1] < 0xC0:
                    back += 1
                if keep - back - 1 >= 0 and data[keep - back - 1] >= 0xC0:
                    need = 2 if data[keep - back - 1] < 0xE0 else (
                        3 if data[keep - back - 1] < 0xF0 else 4)
                    if back + 1 < need and keep - back - 1 > 0:
                        del data[keep - back - 1:]
                        stop = start + len(data)
            return Chunk(bytes(data), stop, dropped, stop < total)
        meta = None  # the writer recycled a segment under us: read again
    return Chunk(b"", max(cursor, 0), 0, True)


def wait_for_output(ctx: Context, job_id: str, cursor: int, wait: float) -> dict[str, Any]:
    deadline = time.monotonic() + wait
    meta = read_meta(ctx, job_id)
    while (time.monotonic() < deadline and meta.get("status") in ACTIVE
           and int(meta.get("bytes_total") or 0) <= cursor):
        ctx.check_cancelled()  # a cancelled wait ends; the job itself runs on
        time.sleep(0.02)
        meta = read_meta(ctx, job_id)
    return meta


def stop(ctx: Context, job_id: str, grace: float) -> tuple[dict[str, Any], bool]:
    """Stop a job (SIGTERM to its tree, ``grace`` seconds, SIGKILL); (meta, was_running)."""
    path = job_dir(ctx, job_id)
    meta = read_meta(ctx, job_id)
    if meta.get("status") not in ACTIVE:
        return meta, False
    with open(os.path.join(path, "control.json.tmp"), "w", encoding="utf-8") as fh:
        json.dump({"grace": grace}, fh)
    os.replace(os.path.join(path, "control.json.tmp"), os.path.join(path, "control.json"))
    from zbtools.core.processes.procfs import signal_process

    signal_process(int(meta["supervisor_pid"]), signal.SIGTERM, meta.get("supervisor_start_time"))
    deadline = time.monotonic() + grace + 5.0
    while time.monotonic() < deadline:
        meta = read_meta(ctx, job_id)
        if meta.get("status") not in ACTIVE:
            return meta, True
        time.sleep(0.02)
    signal_process(int(meta["supervisor_pid"]), signal.SIGKILL, meta.get("supervisor_start_time"))
    time.sleep(0.05)
    return read_meta(ctx, job_id), True


def list_jobs(ctx: Context) -> list[dict[str, Any]]:
    prune(ctx)
    root = jobs_root(ctx)
    out = []
    for name in sorted(os.listdir(root)):
        if not valid_id(name):
            continue
        meta = _load(os.path.join(root, name))
        if meta is not None:
            out.append(reconcile(ctx, name, meta))
    out.sort(key=lambda m: float(m.get("started_at") or 0))
    return out


def forget(ctx: Context, job_id: str) -> None:
    import shutil

    if valid_id(job_id):
        shutil.rmtree(os.path.join(jobs_root(ctx), job_id), ignore_errors=True)
        shutil.rmtree(os.path.join(ctx.state_dir, "tmp", job_id), ignore_errors=True)


def prune(ctx: Context) -> None:
    """Forget ended jobs older than ``KEEP_SECONDS``, and all but the newest ``KEEP_JOBS``."""
    root = jobs_root(ctx)
    ended = []
    now = time.time()
    for name in os.listdir(root):
        if not valid_id(name):
            continue
        meta = _load(os.path.join(root, name))
        if meta is None:
            try:  # a directory without meta for a minute: a launch that never started
                if now - os.stat(os.path.join(root, name)).st_mtime > 60:
                    forget(ctx, name)
            except OSError:
                pass
            continue
        if meta.get("status") not in ACTIVE:
            ended.append((float(meta.get("ended_at") or 0), name))
    ended.sort(reverse=True)
    for index, (ended_at, name) in enumerate(ended):
        if index >= KEEP_JOBS or now - ended_at > KEEP_SECONDS:
            forget(ctx, name)

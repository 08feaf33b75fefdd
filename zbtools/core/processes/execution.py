"""What ``run_command`` and ``bash`` share: policy checks, sandbox plan, foreground/background run.

Order of a call: the command's size (``too_large`` past 128 KiB, which the kernel would refuse
anyway), the guardrail (``guardrail_refused``), the timeout bounds, the working directory
(resolved inside the workspace and pinned as an open fd), the sandbox plan
(``sandbox_unavailable`` when one is required and the kernel cannot do it), approval
(``approval_required`` / ``approval_denied``), the environment, then the run:

* foreground: ``proc.run_foreground``; stdout and stderr separately (or merged), each cut to the
  result limits (head + tail) with the kept text in a spill file;
* ``background: true``: a detached supervisor (``core.jobs``); the result carries its ``id``;
* ``on_timeout: "background"``: the command starts under a detached supervisor from the
  beginning, this call follows its log until it ends or the timeout passes, and then hands back
  either the finished result or the ``id`` of the still-running process (its output so far and
  the cursor for ``bash_output``). Output is then stdout and stderr combined.
"""

from __future__ import annotations

import os
import sys
import time

from zbtools.contract import ToolError
from zbtools.core.errors import not_found

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from zbtools.core.call.config import ExecSettings
    from zbtools.core.call.context import Context


class Request:
    def __init__(self, *, command: str, cwd: str = ".", env: dict[str, str] | None = None,
                 stdin: str | None = None, timeout: float | None = None,
                 background: bool = False, on_timeout: str = "kill", merge_stderr: bool = False,
                 raw: bool = False, sandbox: bool | None = None, require_sandbox: bool = False,
                 network: str | None = None, max_runtime: float | None = None) -> None:
        self.command = command
        self.cwd = cwd
        self.env = env or {}
        self.stdin = stdin
        self.timeout = timeout
        self.background = background
        self.on_timeout = on_timeout
        self.merge_stderr = merge_stderr
        self.raw = raw
        self.sandbox = sandbox
        self.require_sandbox = require_sandbox
        self.network = network
        self.max_runtime = max_runtime


# ---- policy ----------------------------------------------------------------------------------

# The command reaches the shell as one argument of ``bash -c``, and Linux refuses an argument of
# 128 KiB or more (MAX_ARG_STRLEN, counting its terminating NUL) with E2BIG: a longer command
# could never run, so it is refused before the guardrail or anything else looks at it.
MAX_COMMAND_BYTES = 128 * 1024 - 1


def check_command_size(command: str) -> None:
    size = len(command) if len(command) > MAX_COMMAND_BYTES else len(
        command.encode("utf-8", "surrogatepass"))
    if size <= MAX_COMMAND_BYTES:
        return
    raise ToolError(
        "too_large", f"the command is {size} bytes; a command can be at most "
        f"{MAX_COMMAND_BYTES} bytes (128 KiB, the operating system's limit on one argument)",
        hint="write the script to a file in the workspace (write_file) and run that file, e.g. "
        "`bash script.sh`; pass large data in a file or on stdin, not in the command line",
        details={"bytes": size, "limit": MAX_COMMAND_BYTES})


def check_guardrail(settings: ExecSettings, command: str) -> None:
    if not settings.guardrail:
        return
    from zbtools.core.processes.guardrail import check

    violation = check(command, settings.guardrail_allow)
    if violation is None:
        return
    raise ToolError(
        "guardrail_refused", f"refused by the shell-policy guardrail ({violation.rule}): "
        f"{violation.explanation}",
        hint="this looks destructive and was not run; if it is really intended, the user can "
        f"allow the rule with ZBTOOLS_GUARDRAIL_ALLOW={violation.rule} (or guardrail_allow "
        "under [exec] in config.toml). The guardrail is advisory, not a security boundary.",
        details={"rule": violation.rule, "explanation": violation.explanation,
                 "command": violation.segment})


def sandbox_plan(ctx: Context, settings: ExecSettings, req: Request, tmpdir: str
                 ) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    """(the supervisor's sandbox spec or None, the ``sandbox`` report of the result)."""
    mode = settings.sandbox
    if req.sandbox and mode == "off":
        mode = "landlock"  # a call may tighten the policy, never loosen it
    elif req.sandbox is False and mode != "off":
        ctx.warn(f"sandbox: false ignored: the configured sandbox policy is {mode!r}")
    required = settings.require_sandbox or req.require_sandbox
    deny_net = (req.network or settings.network) == "deny" or settings.network == "deny"
    if required and mode == "off":
        mode = "landlock"
    report: dict[str, Any] = {"kind": "none", "abi": None, "network": "open"}
    if mode == "off" and not deny_net:
        return None, report
    if mode == "off":
        mode = "landlock"
    from zbtools.core.processes.landlock import abi_version

    abi = abi_version()
    if abi < 1 or (deny_net and abi < 4):
        what = ("Landlock is not available on this kernel" if abi < 1 else
                f"denying the network needs Landlock ABI 4, the kernel has {abi}")
        if required or (mode == "landlock" and settings.sandbox == "landlock"):
            raise ToolError("sandbox_unavailable", f"{what}; the command was not run",
                            hint="run on Linux >= 5.13 (6.7 for network rules) with Landlock "
                            "enabled, or drop require_sandbox",
                            details={"abi": abi})
        ctx.warn(f"{what}: the command runs without that confinement")
        if abi < 1:
            return None, report
        deny_net = False
    read = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt",
            "/proc", "/sys", "/dev", "/run", "/var", sys.prefix, sys.base_prefix,
            sys.exec_prefix, os.path.dirname(os.path.realpath(sys.executable))]
    read += [p for p in ctx.env.get("PATH", "").split(":") if os.path.isabs(p)]
    read += settings.sandbox_read
    write = [*ctx.workspace.roots, tmpdir, "/dev/null", "/dev/zero", "/dev/full", "/dev/tty",
             "/dev/ptmx", "/dev/pts", *settings.sandbox_write]
    spec = {"read": read, "write": write, "deny_network": deny_net, "required": required}
    report = {"kind": "landlock", "abi": abi, "network": "denied" if deny_net else "open"}
    return spec, report


def open_cwd(ctx: Context, cwd: str) -> tuple[int, str]:
    """An fd of the working directory (inside the workspace) and its relative path."""
    from zbtools.core.files.workspace import DIR_FLAGS, os_error

    with ctx.workspace.resolve(cwd) as res:
        if not res.exists:
            raise not_found(cwd, what="working directory does not exist",
                            hint="create it first, or pass a cwd relative to the workspace root")
        try:
            fd = os.dup(res.dir_fd) if res.is_root else os.open(res.name or ".", DIR_FLAGS,
                                                                  dir_fd=res.dir_fd)
        except OSError as exc:
            if exc.errno == 20:  # ENOTDIR
                raise ToolError("not_a_directory", f"{cwd}: is not a directory",
                                hint="cwd must be a directory; pass its parent, or omit cwd to "
                                "run in the workspace root",
                                details={"path": cwd, "cwd": cwd}) from exc
            raise os_error(exc, cwd) from exc
        return fd, res.rel


def _bounded_timeout(ctx: Context, settings: ExecSettings, timeout: float | None) -> float:
    if timeout is None:
        return float(settings.default_timeout)
    if timeout > settings.max_timeout:
        ctx.warn(f"timeout {timeout:g}s lowered to the configured maximum "
                 f"{settings.max_timeout:g}s")
        return float(settings.max_timeout)
    return float(timeout)


# ---- the call --------------------------------------------------------------------------------

def execute(ctx: Context, req: Request) -> dict[str, Any]:
    """Run ``req``; the fields of the shared command result (see ``tools/run_command.py``)."""
    from zbtools.core.call.config import load_exec_settings

    settings = load_exec_settings(ctx.env)
    if not req.command.strip():
        raise ToolError("invalid_arguments", "command is empty", hint="give a shell command")
    if "\x00" in req.command:
        raise ToolError("invalid_arguments", "command contains a NUL byte",
                        hint="a shell command cannot contain NUL; write binary data with printf "
                        "escapes such as '\\0' instead")
    bad_env = [k for k in req.env if not k or "=" in k or "\x00" in k or "\x00" in req.env[k]]
    if bad_env:
        raise ToolError("invalid_arguments", f"invalid environment variable name(s) or value(s): "
                        f"{', '.join(map(repr, bad_env))}",
                        hint="names must be non-empty without '=' or NUL, values without NUL, "
                        "e.g. {\"env\": {\"RUST_LOG\": \"debug\"}}",
                        details={"env": bad_env})
    check_command_size(req.command)
    check_guardrail(settings, req.command)
    timeout = _bounded_timeout(ctx, settings, req.timeout)
    from zbtools.core.processes.proc import build_env, new_token, shell_argv

    token = new_token()
    cwd_fd, cwd_rel = open_cwd(ctx, req.cwd)
    tmpdir = ""
    try:
        tmp_root = os.path.join(ctx.state_dir, "tmp")
        os.makedirs(tmp_root, mode=0o700, exist_ok=True)
        tmpdir = os.path.join(tmp_root, token)
        spec, report = sandbox_plan(ctx, settings, req, tmpdir)
        from zbtools.core.processes.approval import approve

        approve(settings.approval, req.command, cwd_rel)
        env, withheld = build_env(ctx.env, settings.env_passthrough, req.env, token)
        if spec is not None:
            os.mkdir(tmpdir, 0o700)
            env.update(TMPDIR=tmpdir, TMP=tmpdir, TEMP=tmpdir)
        cfg: dict[str, Any] = {"argv": shell_argv(settings, req.command), "env": env,
                               "cwd_fd": cwd_fd, "stdin": req.stdin, "sandbox": spec,
                               "leftover_grace": min(settings.kill_grace, 1.0)}
        base: dict[str, Any] = {"command": req.command, "cwd": cwd_rel, "sandbox": report,
                                "env_withheld": withheld}
        if req.background or req.on_timeout == "background":
            from zbtools.core.processes import jobs

            ttl = min(req.max_runtime or settings.max_background, settings.max_background)
            meta = jobs.launch(ctx, cfg, token, settings, req.command, cwd_rel, ttl,
                               grace=settings.kill_grace)
            if req.background:
                return {**base, **_background_result(meta, "", 0)}
            return {**base, **_follow(ctx, meta, timeout, req.raw)}
        from zbtools.core.processes.proc import run_foreground

        ctx.check_cancelled()
        outcome = run_foreground(cfg, merge=req.merge_stderr, timeout=timeout,
                                 grace=settings.kill_grace, token=token,
                                 cancelled=ctx.cancel_check,
                                 progress=_progress(ctx, timeout), output=ctx.output_sink)
    finally:
        os.close(cwd_fd)
        if tmpdir and not (req.background or req.on_timeout == "background"):
            import shutil

            shutil.rmtree(tmpdir, ignore_errors=True)
    if outcome.sandbox_warning:
        ctx.warn(outcome.sandbox_warning + "; the command ran without it")
        report = {"kind": "none", "abi": None, "network": "open"}
        base["sandbox"] = report
    if outcome.leftovers:
        ctx.warn(f"the command left {outcome.leftovers} process(es) running; they were stopped "
                 "(use background: true for servers and watchers)")
    stdout, out_dropped = outcome.stdout.text(req.raw)
    stderr, err_dropped = outcome.stderr.text(req.raw)
    return {**base, **shape_output(ctx, stdout, stderr, outcome.stdout.total,
                                   outcome.stderr.total, out_dropped + err_dropped),
            "exit_code": outcome.exit_code, "signal": outcome.signal,
            "timed_out": outcome.timed_out, "duration_ms": outcome.duration_ms,
            "leftovers_killed": outcome.leftovers, "background": False, "id": None,
            "status": "timed_out" if outcome.timed_out else "exited", "next_cursor": None}


def _progress(ctx: Context, timeout: float) -> Callable[[float], None] | None:
    """Seconds run so far, out of the timeout, for whoever watches the call's progress."""
    if ctx.progress_sink is None:
        return None

    def report(elapsed: float) -> None:
        ctx.progress(round(elapsed, 1), timeout, f"running for {elapsed:.0f} s")

    return report


def shape_output(ctx: Context, stdout: str, stderr: str, out_total: int, err_total: int,
                 dropped: int) -> dict[str, Any]:
    """Cut stdout and stderr to the result limits (stderr gets at most a quarter)."""
    from zbtools.core.call.truncate import count_lines, cut_text

    limits = ctx.limits
    err_bytes = len(stderr.encode("utf-8", "surrogatepass"))
    out_bytes = len(stdout.encode("utf-8", "surrogatepass"))
    fits = (out_bytes + err_bytes <= limits.max_bytes
            and count_lines(stdout) + count_lines(stderr) <= limits.max_lines)
    spill = None
    if not fits or dropped:
        spill = ctx.spill("command", f"--- stdout ({out_total} bytes) ---\n{stdout}\n"
                          f"--- stderr ({err_total} bytes) ---\n{stderr}")
    if not fits:
        err_budget = max(min(err_bytes, limits.max_bytes // 4), 256)
        err_lines = max(min(count_lines(stderr), limits.max_lines // 4), 10)
        how = "narrow the output (grep, head, tail) or read the spill file"
        if stderr:
            stderr = cut_text(stderr, max_bytes=err_budget, max_lines=err_lines,
                              head_lines=limits.head_lines, tail_lines=limits.tail_lines,
                              how_to_continue=how, spill_path=spill).text
        used = len(stderr.encode("utf-8", "surrogatepass"))
        stdout = cut_text(stdout, max_bytes=max(limits.max_bytes - used, 256),
                          max_lines=max(limits.max_lines - count_lines(stderr), 10),
                          head_lines=limits.head_lines, tail_lines=limits.tail_lines,
                          how_to_continue=how, spill_path=spill).text
    return {"stdout": stdout, "stderr": stderr, "stdout_bytes": out_total,
            "stderr_bytes": err_total, "truncated": not fits or bool(dropped),
            "full_output": spill}


def _background_result(meta: dict[str, Any], output: str, cursor: int) -> dict[str, Any]:
    return {"stdout": output, "stderr": "", "stdout_bytes": cursor, "stderr_bytes": 0,
            "truncated": False, "full_output": None, "exit_code": meta.get("exit_code"),
            "signal": meta.get("signal"), "timed_out": False,
            "duration_ms": int(max(time.time() - float(meta.get("started_at") or time.time()),
                                   0) * 1000),
            "leftovers_killed": int(meta.get("leftovers") or 0), "background": True,
            "id": meta["id"], "status": meta.get("status", "running"), "next_cursor": cursor}


def _follow(ctx: Context, meta: dict[str, Any], timeout: float, raw: bool) -> dict[str, Any]:
    """Wait for a supervised job until it ends or ``timeout`` passes (``on_timeout``)."""
    from zbtools.core.processes import jobs

    deadline = time.monotonic() + timeout
    job_id = meta["id"]
    while meta.get("status") in jobs.ACTIVE and time.monotonic() < deadline:
        if ctx.cancelled:
            from zbtools.core.call.config import load_exec_settings

            jobs.stop(ctx, job_id, load_exec_settings(ctx.env).kill_grace)
            jobs.forget(ctx, job_id)
            ctx.check_cancelled()
        time.sleep(min(0.02, max(deadline - time.monotonic(), 0)))
        meta = jobs.read_meta(ctx, job_id)
    finished = meta.get("status") not in jobs.ACTIVE
    chunk = jobs.read_output(ctx, job_id, 0, max_bytes=4 << 20, meta=meta)
    from zbtools.core.processes.proc import clean_text

    text = clean_text(chunk.data, raw)
    if finished:
        result = shape_output(ctx, text, "", int(meta.get("bytes_total") or 0), 0,
                              chunk.dropped)
        jobs.forget(ctx, job_id)
        return {**result, "exit_code": meta.get("exit_code"), "signal": meta.get("signal"),
                "timed_out": False, "duration_ms": int(meta.get("duration_ms") or 0),
                "leftovers_killed": int(meta.get("leftovers") or 0), "background": False,
                "id": None, "status": meta.get("status", "exited"), "next_cursor": None}
    ctx.warn(f"the command was still running after {timeout:g}s and continues in the "
             f"background as {job_id}: read its output with bash_output (cursor "
             f"{chunk.next_cursor}), stop it with stop_process")
    shaped = shape_output(ctx, text, "", chunk.next_cursor, 0, chunk.dropped)
    result = _background_result(meta, shaped["stdout"], chunk.next_cursor)
    result.update(truncated=shaped["truncated"], full_output=shaped["full_output"],
                  timed_out=True)
    return result

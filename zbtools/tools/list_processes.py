"""List the background processes of this workspace: running ones and recently ended ones, with
status, pid, runtime and output size. Failure modes: none beyond configuration errors
(usage_error).

A process whose supervisor disappeared is reported ``lost`` (what was left of it is killed when
it is noticed). Ended processes are kept for 24 hours, at most the 50 most recent.

Failure modes: only ``usage_error`` for a malformed ``[exec]`` configuration.
"""

from __future__ import annotations

from zbtools.core.call.args import Struct, field
from zbtools.toolspec import ToolSpec

TYPE_CHECKING = False
if TYPE_CHECKING:
    from zbtools.core.call.context import Context


class Params(Struct):
    running_only: bool = field(default=False, help="Only processes still running")


class Process(Struct):
    id: str = field(help="Process id for bash_output / stop_process")
    command: str = field(help="The command (first 200 characters)")
    cwd: str = field(help="Working directory, relative to the workspace root")
    status: str = field(help="running, exited, stopped, timed_out, failed or lost")
    pid: int | None = field(help="Operating-system pid of the command's process group leader")
    started_at: float = field(help="Start time, seconds since the epoch")
    runtime_ms: int = field(help="How long it ran (or runs so far)")
    exit_code: int | None = field(help="Exit status, when it ended by itself")
    signal: str | None = field(help="Signal that ended it")
    bytes_total: int = field(help="Output written so far")


class Result(Struct):
    processes: list[Process] = field(help="Oldest first")
    running: int = field(help="How many are still running")


def run(params: Params, ctx: Context) -> Result:
    import time

    from zbtools.core.processes import jobs

    out = []
    for meta in jobs.list_jobs(ctx):
        active = meta.get("status") in jobs.ACTIVE
        if params.running_only and not active:
            continue
        started = float(meta.get("started_at") or 0)
        ended = time.time() if active else float(meta.get("ended_at") or started)
        command = str(meta.get("command", ""))
        out.append(Process(id=str(meta.get("id")), command=command[:200],
                           cwd=str(meta.get("cwd", ".")), status=str(meta.get("status")),
                           pid=meta.get("pid"), started_at=started,
                           runtime_ms=int(max(ended - started, 0) * 1000),
                           exit_code=meta.get("exit_code"), signal=meta.get("signal"),
                           bytes_total=int(meta.get("bytes_total") or 0)))
    return Result(processes=out, running=sum(p.status in jobs.ACTIVE for p in out))


def render(result: Result) -> str:
    if not result.processes:
        return "no background processes\n"
    lines = []
    for p in result.processes:
        end = f" exit {p.exit_code}" if p.exit_code is not None else (
            f" {p.signal}" if p.signal else "")
        lines.append(f"{p.id} {p.status}{end} {p.runtime_ms // 1000}s pid={p.pid} "
                     f"{p.bytes_total}B  {p.command}\n")
    return "".join(lines)


TOOL = ToolSpec(
    name="list_processes",
    aliases=("ps", "list_shells"),
    doc=__doc__,
    params=Params,
    result=Result,
    run=run,
    render_text=render,
    read_only=True,
    parallel_safe=True,
    category="commands",
)

"""Terminate a background process and its whole process tree (SIGTERM, a grace period, then
SIGKILL), or every background process of the workspace with all: true. Failure modes:
process_not_found, invalid_arguments (neither id nor all).

The stop goes through the job's supervisor, identified by pid and start time, so a recycled PID
is never signalled: it sends SIGTERM to the process group and every descendant (``setsid``
escapees included), waits ``grace`` seconds (default 5), then SIGKILLs whatever is left until
nothing remains. Stopping a process that already ended is not an error: ``was_running`` is false.

Failure modes: ``process_not_found`` for an unknown or malformed id; ``invalid_arguments``
when neither ``id`` nor ``all`` is given, or both.
"""

from __future__ import annotations

from zbtools.contract import ToolError
from zbtools.core.call.args import Struct, field
from zbtools.toolkit.params import PROCESS_ID_ALIASES
from zbtools.toolspec import ToolSpec

TYPE_CHECKING = False
if TYPE_CHECKING:
    from zbtools.core.call.context import Context


class Params(Struct):
    id: str | None = field(default=None, aliases=PROCESS_ID_ALIASES, help="Background process id")
    all: bool = field(default=False, help="Stop every running background process of the "
                      "workspace")
    grace: float = field(default=5.0, minimum=0, maximum=300,
                         help="Seconds between SIGTERM and SIGKILL")


class Stopped(Struct):
    id: str = field(help="The process id")
    was_running: bool = field(help="It was running when the call came")
    status: str = field(help="Status afterwards (stopped, exited, lost, ...)")
    exit_code: int | None = field(help="Exit status, when it ended by itself")
    signal: str | None = field(help="Signal that ended it")
    command: str = field(help="The command")


class Result(Struct):
    stopped: list[Stopped] = field(help="One entry per process")


def run(params: Params, ctx: Context) -> Result:
    from zbtools.core.processes import jobs

    if params.id is None and not params.all:
        raise ToolError("invalid_arguments", "give the id of a process, or all: true",
                        hint="list_processes shows the ids")
    if params.id is not None and params.all:
        raise ToolError("invalid_arguments", "give either id or all: true, not both",
                        hint="drop all to stop that one process, or drop id to stop every one")
    ids = [params.id] if params.id is not None else [
        str(m["id"]) for m in jobs.list_jobs(ctx) if m.get("status") in jobs.ACTIVE]
    out = []
    for job_id in ids:
        meta, was_running = jobs.stop(ctx, job_id, params.grace)
        out.append(Stopped(id=job_id, was_running=was_running, status=str(meta.get("status")),
                           exit_code=meta.get("exit_code"), signal=meta.get("signal"),
                           command=str(meta.get("command", ""))))
    return Result(stopped=out)


def render(result: Result) -> str:
    if not result.stopped:
        return "no background process was running\n"
    lines = []
    for s in result.stopped:
        verb = "stopped" if s.was_running else "had already ended"
        lines.append(f"{s.id} {verb} ({s.status}{', ' + s.signal if s.signal else ''}): "
                     f"{s.command}\n")
    return "".join(lines)


TOOL = ToolSpec(
    name="stop_process",
    aliases=("kill_shell", "kill_process"),
    doc=__doc__,
    params=Params,
    result=Result,
    run=run,
    operand="id",
    render_text=render,
    destructive=True,
    idempotent=True,
    category="commands",
)

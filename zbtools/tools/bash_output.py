"""Read the output of a background process since a cursor (cursor-based polling), with its status
and exit code. Failure modes: process_not_found (unknown or malformed id).

Pass the ``id`` that ``bash``/``run_command`` returned and the ``cursor`` of the previous call
(0 for the beginning); the result has the text from there on (stdout and stderr combined, at
most ``max_bytes``, default the result limit of 50 KB), ``next_cursor`` for the next call,
``more`` when further output is already waiting, and ``dropped``: bytes between the cursor and
the oldest byte the size-capped log still holds (the log keeps the last 4 to 8 MiB by default).
``wait_ms`` waits up to that long for new output or the end of the process. Statuses:
``running``, ``exited``, ``stopped`` (by stop_process), ``timed_out`` (its maximum lifetime
passed), ``failed``, ``lost`` (its supervisor disappeared; what was left of it was killed).

Failure modes: ``process_not_found`` when the id is malformed (ids are 12 hex characters,
never paths) or unknown in this workspace (ended processes are forgotten after 24 hours).
"""

from __future__ import annotations

from zbtools.core.call.args import Struct, field
from zbtools.toolkit.params import PROCESS_ID_ALIASES
from zbtools.toolspec import ToolSpec

TYPE_CHECKING = False
if TYPE_CHECKING:
    from zbtools.core.call.context import Context



class Params(Struct):
    id: str = field(aliases=PROCESS_ID_ALIASES, help="Background process id")
    cursor: int = field(default=0, minimum=0, aliases=("offset", "since"),
                        help="Byte offset to read from (next_cursor of the previous call)")
    wait_ms: int = field(default=0, minimum=0, maximum=60000,
                         help="Wait up to this long for new output or the end of the process")
    max_bytes: int | None = field(default=None, minimum=256, help="Most bytes to return")
    raw: bool = field(default=False, help="Keep ANSI escapes and \\r redraws")


class Result(Struct):
    id: str = field(help="The process id")
    output: str = field(help="Output from cursor to next_cursor")
    cursor: int = field(help="Where this output starts (after any dropped bytes)")
    next_cursor: int = field(help="Pass this as cursor next time")
    more: bool = field(help="More output is already waiting")
    dropped: int = field(help="Bytes lost between the cursor and the oldest byte kept")
    bytes_total: int = field(help="All output the process has written so far")
    status: str = field(help="running, exited, stopped, timed_out, failed or lost")
    running: bool = field(help="The process is still running")
    exit_code: int | None = field(help="Exit status once it ended by itself")
    signal: str | None = field(help="Signal that ended it")
    command: str = field(help="The command")


def run(params: Params, ctx: Context) -> Result:
    from zbtools.core.processes import jobs
    from zbtools.core.processes.proc import clean_text

    meta = jobs.read_meta(ctx, params.id)
    if params.wait_ms:
        meta = jobs.wait_for_output(ctx, params.id, params.cursor, params.wait_ms / 1000.0)
    limit = params.max_bytes or ctx.limits.max_bytes
    chunk = jobs.read_output(ctx, params.id, params.cursor, max_bytes=limit, meta=meta)
    total = int(meta.get("bytes_total") or 0)
    if params.cursor > total:
        ctx.warn(f"cursor {params.cursor} is past the end of the output ({total} bytes)")
    status = str(meta.get("status"))
    return Result(id=params.id, output=clean_text(chunk.data, params.raw),
                  cursor=chunk.next_cursor - len(chunk.data), next_cursor=chunk.next_cursor,
                  more=chunk.more, dropped=chunk.dropped, bytes_total=total, status=status,
                  running=status in jobs.ACTIVE, exit_code=meta.get("exit_code"),
                  signal=meta.get("signal"), command=str(meta.get("command", "")))


def render(result: Result) -> str:
    out = ""
    if result.dropped:
        out += f"[{result.dropped} bytes dropped from the capped log]\n"
    out += result.output
    if out and not out.endswith("\n"):
        out += "\n"
    state = result.status
    if result.exit_code is not None:
        state += f", exit code {result.exit_code}"
    if result.signal:
        state += f", {result.signal}"
    more = "; more output waiting" if result.more else ""
    return out + f"[{result.id}: {state}; next_cursor {result.next_cursor}{more}]\n"


TOOL = ToolSpec(
    name="bash_output",
    aliases=("process_output", "get_process_output"),
    doc=__doc__,
    params=Params,
    result=Result,
    run=run,
    operand="id",
    render_text=render,
    read_only=True,
    parallel_safe=True,
    category="commands",
)

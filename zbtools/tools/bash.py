"""Execute a shell command for targeted repo operations such as builds, tests or git; returns
stdout, stderr and exit code, or a process id for long-running commands. Failure modes:
guardrail_refused, approval_required, approval_denied, sandbox_unavailable, spawn_failed,
too_large (a command over 128 KiB).

Do not use it to discover or read files (find_files, grep_search, list_directory and read_file
do that better). ``timeout_ms`` defaults to 120000 (as in fiz; ``timeout`` is the same value in
milliseconds, as in Claude Code's Bash). The command runs like ``run_command``: in the workspace
root (or ``cwd``), its own process group, stdin from /dev/null, a scrubbed environment, the
whole process tree stopped at the timeout (SIGTERM, grace, SIGKILL) or, with
``on_timeout: "background"``, handed to the process manager (as in zkit) so that a dev server or a
long test loop keeps running: the result then carries ``id`` and ``next_cursor`` for
``bash_output``, and ``stop_process`` ends it. ``background: true`` (``run_in_background``)
returns the id at once.

Failure modes: as run_command: ``too_large`` (a command over 128 KiB, the operating system's
limit on one argument: run a long script from a file), ``guardrail_refused``, ``approval_required``,
``approval_denied``, ``sandbox_unavailable``, ``spawn_failed``, and ``not_found`` /
``outside_workspace`` for ``cwd``; a timeout is reported as ``timed_out``, not as an error.
"""

from __future__ import annotations

from zbtools.core.call.args import Struct, field
from zbtools.toolkit.commands import CommandResult, exit_status, render, to_result
from zbtools.toolkit.params import BACKGROUND_ALIASES, COMMAND_ALIASES, CWD_ALIASES
from zbtools.toolspec import ToolSpec

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Literal

    from zbtools.core.call.context import Context


class Params(Struct):
    command: str = field(text_body=True, aliases=COMMAND_ALIASES, help="Shell command to execute")
    timeout_ms: int | None = field(default=None, aliases=("timeout",), minimum=1,
                                   help="Timeout in milliseconds (default 120000)")
    cwd: str = field(default=".", aliases=CWD_ALIASES,
                     help="Working directory, relative to the workspace root (inside it)")
    background: bool = field(default=False, aliases=BACKGROUND_ALIASES,
                             help="Run in the background and return a process id at once")
    on_timeout: Literal["kill", "background"] = field(
        default="kill", help="kill: stop the tree at the timeout; background: keep it running "
        "and return its process id")
    description: str | None = field(default=None, help="What the command does (for logs and "
                                    "approval prompts; not executed)")
    env: dict[str, str] = field(default_factory=dict, help="Extra environment variables")
    merge_stderr: bool = field(default=False, help="Interleave stderr into stdout")
    raw: bool = field(default=False, help="Keep ANSI escapes and \\r redraws in the output")
    sandbox: bool | None = field(default=None, help="Confine the command with Landlock")
    require_sandbox: bool = field(default=False, help="Refuse to run unless the sandbox works")
    network: Literal["allow", "deny"] | None = field(
        default=None, help="deny: no TCP inside the sandbox")
    max_bytes: int | None = field(default=None, minimum=256, help="Result size limit (bytes)")
    max_lines: int | None = field(default=None, minimum=10, help="Result line limit")


def run(params: Params, ctx: Context) -> CommandResult:
    from zbtools.core.processes.execution import Request, execute

    timeout = None if params.timeout_ms is None else params.timeout_ms / 1000.0
    req = Request(command=params.command, cwd=params.cwd, env=params.env, timeout=timeout,
                  background=params.background, on_timeout=params.on_timeout,
                  merge_stderr=params.merge_stderr, raw=params.raw, sandbox=params.sandbox,
                  require_sandbox=params.require_sandbox, network=params.network)
    result = to_result(execute(ctx, req))
    if result.timed_out and params.timeout_ms is not None and params.timeout_ms < 1000:
        # `timeout: 30` meant as seconds (run_command's unit) is 30 ms here: say so, without
        # naming the parameter (fiz's timeout_ms, Claude's timeout, Codex's timeout_ms)
        ctx.warn(f"the timeout is in milliseconds: {params.timeout_ms} ms; for "
                 f"{params.timeout_ms} seconds give {params.timeout_ms * 1000}")
    return result


TOOL = ToolSpec(
    name="bash",
    doc=__doc__,
    params=Params,
    result=CommandResult,
    run=run,
    render_text=render,
    operand="command",
    exit_status=exit_status,
    destructive=True,
    category="commands",
)

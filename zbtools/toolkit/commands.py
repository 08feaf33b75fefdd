"""What run_command and bash share: the command result, its text and its exit status.

``CommandResult`` (with its ``Sandbox``) is what both tools return; ``to_result`` builds it from
``zbtools.core.processes.execution.execute``'s fields, ``render`` is its text form and
``exit_status`` its ``--exit-status``.
"""

from __future__ import annotations

from zbtools.core.call.args import Struct, field

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class Sandbox(Struct):
    kind: str = field(help="landlock, or none")
    abi: int | None = field(help="the Landlock ABI applied (null without a sandbox)")
    network: str = field(help="open or denied")


class CommandResult(Struct):
    command: str = field(help="The command as run")
    cwd: str = field(help="Working directory, relative to the workspace root")
    exit_code: int | None = field(help="Exit status (null when a signal ended it or running)")
    signal: str | None = field(help="Name of the signal that ended the command (SIGKILL, ...)")
    timed_out: bool = field(help="The timeout passed before the command finished")
    duration_ms: int = field(help="Wall time in milliseconds")
    stdout: str = field(help="Standard output (head and tail when truncated)")
    stderr: str = field(help="Standard error (head and tail when truncated)")
    stdout_bytes: int = field(help="Total bytes written to stdout")
    stderr_bytes: int = field(help="Total bytes written to stderr")
    truncated: bool = field(help="Some output is not shown (see full_output)")
    full_output: str | None = field(help="File keeping the output captured, when truncated")
    leftovers_killed: int = field(help="Processes left running by the command that were stopped")
    background: bool = field(help="The command runs in the background (see id)")
    id: str | None = field(help="Background process id for bash_output / stop_process")
    status: str = field(help="exited, timed_out, running, ...")
    next_cursor: int | None = field(help="bash_output cursor after the output shown")
    sandbox: Sandbox = field(help="The confinement the command ran under")
    env_withheld: list[str] = field(help="Names of environment variables not passed on")


def to_result(fields: dict[str, Any]) -> CommandResult:
    sandbox = Sandbox(**fields.pop("sandbox"))
    return CommandResult(sandbox=sandbox, **fields)


def exit_status(result: CommandResult) -> int:
    """``--exit-status``: the command's own status, as a shell sees it: its exit code, 124 for
    a timeout (as ``timeout(1)``), 128 + N for a signal N, 0 for a command left running in the
    background."""
    if result.timed_out and not result.background:
        return 124
    if result.exit_code is not None:
        return result.exit_code
    if result.signal:
        import signal

        try:
            return 128 + int(signal.Signals[result.signal])
        except KeyError:
            return 1
    return 0


def render(result: CommandResult) -> str:
    out = result.stdout
    if out and not out.endswith("\n"):
        out += "\n"
    if result.stderr:
        out += "[stderr]\n" + result.stderr + ("" if result.stderr.endswith("\n") else "\n")
    if result.background and result.status in ("running", "starting"):
        out += (f"[running in the background as {result.id}; read more with bash_output "
                f"(cursor {result.next_cursor}), stop with stop_process]\n")
        return out
    if result.timed_out:
        end = f"timed out, ended by {result.signal or 'SIGKILL'}"  # the duration follows
    elif result.signal:
        end = f"killed by {result.signal}"
    else:
        end = f"exit code {result.exit_code}"
    if result.truncated and result.full_output:
        end += f"; full output in {result.full_output}"
    return out + f"[{end}; {result.duration_ms} ms]\n"

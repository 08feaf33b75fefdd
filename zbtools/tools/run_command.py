"""Execute a shell command in the workspace (bash -c) and return its exit status, stdout and
stderr; may require user approval. Failure modes: guardrail_refused, approval_required,
approval_denied, sandbox_unavailable, spawn_failed, not_found or not_a_directory (cwd),
outside_workspace, too_large (a command over 128 KiB).

The command runs in ``cwd`` (relative to the workspace root, default the root, never outside it)
in its own session and process group, with stdin from ``/dev/null`` unless ``stdin`` text is
given, so commands that read input (``cat``, ``read x``, prompts) return at once. A command
still running at ``timeout`` (seconds, default 120, configurable maximum) gets SIGTERM on its
whole process tree, then SIGKILL after a grace period (2 s); processes that escaped with
``setsid`` are caught too. Processes the command leaves running when it exits are stopped as
well: use ``background: true`` for servers and watchers, then ``bash_output``, ``stop_process``
and ``list_processes``. With ``on_timeout: "background"`` a command still running at the timeout
keeps running in the background and its process id is returned instead.

Result: ``exit_code`` (or ``signal``, e.g. ``SIGKILL``, when a signal ended it), ``timed_out``,
``duration_ms``, ``stdout`` and ``stderr`` (``merge_stderr: true`` interleaves both into stdout),
their total sizes in bytes, ``truncated``, and ``sandbox`` (``kind``, ``abi``, ``network``).
Output of any size is read continuously in bounded memory; a result over the limits (50 KB /
2000 lines) keeps its first and last lines and names a ``full_output`` file (the first and last
MiB of each stream). Invalid UTF-8 is shown as U+FFFD; ANSI escapes and ``\\r`` redraws are
removed unless ``raw: true``.

The environment is the caller's minus secrets (names with KEY, SECRET, TOKEN, PASSWORD,
CREDENTIAL, AUTH, COOKIE, SESSION; SSH_AUTH_SOCK and similar sockets), listed by name in
``env_withheld``; the configured ``env_passthrough`` patterns let chosen ones through. Pagers and
prompts are disabled (PAGER=cat, GIT_TERMINAL_PROMPT=0, GIT_EDITOR=true, TERM=dumb, NO_COLOR=1).
A call's ``env`` adds variables. An advisory guardrail refuses obviously destructive commands
(``rm -rf /``, ``mkfs``, ``curl | sh``, ...); it is not a security boundary: ``sandbox: true``
(Landlock) confines writes to the workspace and a private temp dir and can deny the network.

A command can be at most 131,071 bytes (128 KiB in UTF-8, the operating system's limit on one
argument of ``bash -c``); a longer one is refused at once with ``too_large``: put a long script
in a file and run the file, and pass large data in a file or on ``stdin``.

Failure modes: ``too_large`` (the command over 128 KiB; nothing ran), ``guardrail_refused``
(exit 3; details name the rule), ``approval_required`` (policy confirm and no /dev/tty),
``approval_denied``, ``sandbox_unavailable`` (a sandbox was required and the kernel cannot
provide it; nothing ran), ``spawn_failed``, ``not_found`` / ``not_a_directory`` /
``outside_workspace`` for ``cwd``. A timeout is not an error:
``timed_out`` is true. The command's own exit status is in the result; zbtools exits 0.
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
    command: str = field(text_body=True,
                         aliases=COMMAND_ALIASES, help="Shell command to execute (bash -c)")
    cwd: str = field(default=".", aliases=CWD_ALIASES,
                     help="Working directory, relative to the workspace root (inside it)")
    timeout: float | None = field(default=None, minimum=0.001, help="Seconds before the command "
                                  "is stopped (default 120; configurable maximum)")
    env: dict[str, str] = field(default_factory=dict, help="Extra environment variables")
    stdin: str | None = field(default=None, aliases=("input",),
                              help="Text given to the command on stdin (default: /dev/null)")
    background: bool = field(default=False, aliases=BACKGROUND_ALIASES,
                             help="Run in the background and return a process id at once")
    on_timeout: Literal["kill", "background"] = field(
        default="kill", help="What happens to a command still running at the timeout")
    merge_stderr: bool = field(default=False, help="Interleave stderr into stdout")
    raw: bool = field(default=False, help="Keep ANSI escapes and \\r redraws in the output")
    sandbox: bool | None = field(default=None, help="Confine the command with Landlock (a call "
                                 "can turn the sandbox on, never off)")
    require_sandbox: bool = field(default=False, help="Refuse to run unless the sandbox works")
    network: Literal["allow", "deny"] | None = field(
        default=None, help="deny: no TCP inside the sandbox (Landlock ABI >= 4)")
    max_bytes: int | None = field(default=None, minimum=256, help="Result size limit (bytes)")
    max_lines: int | None = field(default=None, minimum=10, help="Result line limit")


def run(params: Params, ctx: Context) -> CommandResult:
    from zbtools.core.processes.execution import Request, execute

    req = Request(command=params.command, cwd=params.cwd, env=params.env, stdin=params.stdin,
                  timeout=params.timeout, background=params.background,
                  on_timeout=params.on_timeout, merge_stderr=params.merge_stderr,
                  raw=params.raw, sandbox=params.sandbox,
                  require_sandbox=params.require_sandbox, network=params.network)
    return to_result(execute(ctx, req))


TOOL = ToolSpec(
    name="run_command",
    aliases=("execute_command", "shell"),
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

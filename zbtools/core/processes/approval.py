"""Approval of commands before they run: ``allow``, ``confirm`` or ``deny``
(docs/internals/sources.md#zblade).

``confirm`` asks on the controlling terminal, ``/dev/tty``, never on stdin (which carries the JSON
request) and never on stdout (which carries the JSON result). Without a controlling terminal
(a harness, CI, ``setsid``) the command is refused with ``approval_required``; an answer other
than ``y``/``yes``, or none within ``TIMEOUT`` seconds, refuses it with ``approval_denied``. The
command is shown with its control characters made visible (``zbtools.core.call.terminal``).
"""

from __future__ import annotations

import os

from zbtools.contract import ToolError

TIMEOUT = 120.0
HINT = ("set the approval policy to allow for trusted sessions: zbtools --approval allow, "
        "ZBTOOLS_APPROVAL=allow, or approval = \"allow\" under [exec] in config.toml")


def approve(policy: str, command: str, cwd: str) -> None:
    """Return when the command may run; raise the refusal otherwise."""
    if policy == "allow":
        return
    if policy == "deny":
        raise ToolError("approval_denied", "running commands is disabled by the approval "
                        "policy (deny)", hint=HINT, details={"policy": policy})
    try:
        fd = os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError:
        raise ToolError("approval_required", "the approval policy is confirm but there is no "
                        "terminal to ask on (/dev/tty)", hint=HINT,
                        details={"policy": policy}) from None
    try:
        import select

        from zbtools.core.call.terminal import visible, visible_name

        # shown, never acted on: an escape sequence or a carriage return in the command must
        # not hide what it runs from the person approving it
        shown = visible(command if len(command) <= 2000 else command[:2000] + " ...")
        prompt = f"\nzbtools: run this command in {visible_name(cwd)}?\n  {shown}\n[y/N] "
        os.write(fd, prompt.encode("utf-8", "replace"))
        answer = b""
        ready, _, _ = select.select([fd], [], [], TIMEOUT)
        if ready:
            answer = os.read(fd, 1024)
    except OSError:
        answer = b""
    finally:
        os.close(fd)
    if answer.strip().lower() not in (b"y", b"yes"):
        raise ToolError("approval_denied", "the user did not approve the command",
                        hint="ask the user, or propose a different command",
                        details={"policy": policy})

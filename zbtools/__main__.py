"""The program as a process: ``zbtools`` (the installed script) and ``python -m zbtools``.

A process runs one call and exits, so it starts with the cyclic garbage collector off: the
thousands of objects start-up creates (modules, functions, tables) live until exit, and
collections during the imports would only walk them. ``zbtools.dispatch.end_start_up`` freezes
them and turns the collector on before a tool runs or a session (``batch``, ``mcp``) starts.
Calls in a process that is not this one (the in-process runner) keep their collector as it is.
Before anything else, a call is offered to a running ``zbtools serve`` (``zbtools.handoff``).
"""

from __future__ import annotations


def main() -> None:
    import gc

    gc.disable()
    import sys

    from zbtools.handoff import hand_off

    code = hand_off(sys.argv[1:])  # a running ``zbtools serve`` takes the call, or None
    if code is not None:
        import os

        sys.stderr.flush()
        os._exit(code)
    from zbtools.entry import main as run_process

    run_process()


if __name__ == "__main__":
    main()

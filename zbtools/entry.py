"""The program's main: a command line in, one result out, through the dispatcher or a surface.

Usage::

    zbtools [GLOBAL OPTIONS] TOOL [--param VALUE ...] [GLOBAL OPTIONS]
    echo '{"path": "README.md"}' | zbtools read_file
    zbtools read_file --args '{"path": "README.md"}'
    zbtools read_file --path README.md --limit 20 --json
    zbtools tools | schema | prompt | batch | mcp

This module only chooses: ``--version``; ``--help`` (and a bare ``zbtools`` on a terminal, and
shell completion requests) go to the Typer surface; the command words go to their surfaces
(``catalog``, ``batch``, ``mcp_server``); a tool name goes to ``zbtools.dispatch``, whose result
is printed as JSON or text, or by the ``human`` surface on a terminal. Argument sources, global
options and exit codes are described in ``zbtools.dispatch``.

The top layer: imports the dispatcher and the surfaces; nothing imports it but ``__main__`` and
the development tools.
"""

from __future__ import annotations

import os
import sys

from zbtools.contract import ToolError, error_envelope
from zbtools.core.call.fastjson import dumps_ascii
from zbtools.dispatch import (
    COMMANDS,
    Options,
    Streams,
    ToolCall,
    debugging,
    emit,
    failure,
    output_format,
    process_streams,
    split_command_line,
    write,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from zbtools.core.call.context import Context
    from zbtools.toolspec import ToolSpec


def run(argv: list[str], streams: Streams, env: Mapping[str, str]) -> int:
    """One call of the program; returns the exit status. Never raises (but SystemExit)."""
    opts = Options()
    fmt = "json"
    call = ToolCall(opts, streams, env)
    try:
        command, rest = split_command_line(argv, opts, env)
        fmt = output_format(opts, streams, env)
        if opts.version:
            from zbtools import __version__

            write(streams, f"zbtools {__version__}\n")
            return 0
        if opts.help or (command is None and streams.stdout_isatty and fmt == "human"):
            return help_and_completion(argv, streams, env)
        if command is None:
            raise ToolError("usage_error", "no tool given",
                            hint="usage: zbtools TOOL [--param VALUE ...] with JSON arguments "
                            "on stdin or --args; `zbtools tools` lists the tools")
        if command in COMMANDS:
            call.tool = command
            return run_command_word(command, rest, opts, streams, env, fmt)
        envelope, result = call.run(command, rest, fmt)
        show(streams, fmt, call.spec, call.tool, envelope, result, call.ctx)
        return 0
    except SystemExit:
        raise
    except BaseException as exc:  # the contract: one JSON envelope, never a traceback on stdout
        error = failure(exc, debug=debugging(opts, env), stderr=streams.stderr)
        envelope = error_envelope(call.tool, error)
        documented = isinstance(exc, (ToolError, KeyboardInterrupt))
        try:
            show(streams, fmt if documented or fmt != "human" else "json", call.spec,
                 call.tool, envelope, None, call.ctx)
        except BaseException:
            write(streams, dumps_ascii(envelope) + "\n")
        return error.exit_code
    finally:
        call.close()


def show(streams: Streams, fmt: str, spec: ToolSpec | None, tool: str | None,
         envelope: dict[str, Any], result_obj: Any, ctx: Context | None) -> None:
    """Print one envelope in ``fmt``: JSON and text by the dispatcher, human by its surface."""
    if fmt != "human":
        emit(streams, fmt, spec, tool, envelope, result_obj, ctx)
        return
    from zbtools.surfaces.human import render_human

    render_human(spec, tool, envelope, result_obj, ctx, streams)


def run_command_word(command: str, rest: list[str], opts: Options, streams: Streams,
                     env: Mapping[str, str], fmt: str) -> int:
    """``tools``, ``schema``, ``prompt``, ``batch`` and ``mcp``: each is its surface's."""
    if command == "mcp":
        from zbtools.surfaces.mcp_server import serve

        return serve(rest, opts, streams, env)
    if command == "batch":
        from zbtools.surfaces.batch import batch_command

        return batch_command(rest, opts, streams, env, fmt)
    from zbtools.surfaces import catalog

    handler = {"tools": catalog.tools_command, "schema": catalog.schema_command,
               "prompt": catalog.prompt_command}[command]
    return handler(rest, opts, streams, env, fmt)


def help_and_completion(argv: list[str], streams: Streams, env: Mapping[str, str]) -> int:
    """The Typer surface; a command it runs comes back here as an argv."""
    from zbtools.surfaces.cli import run_typer

    return run_typer(argv, streams, lambda again: run(again, process_streams(), env))


def main_with_argv(argv: list[str]) -> int:
    return run(argv, process_streams(), os.environ)


def main() -> None:
    if "_ZBTOOLS_COMPLETE" in os.environ:  # a shell asking for completions (completions/)
        sys.exit(help_and_completion(sys.argv[1:], process_streams(), os.environ))
    sys.exit(run(sys.argv[1:], process_streams(), os.environ))

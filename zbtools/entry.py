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
is printed as JSON or text, or by the ``human`` surface on a terminal. Argument sources are
described in ``zbtools.dispatch``; global options and command words are declared in
``zbtools.options``, exit statuses in ``zbtools.contract``.

The top layer: imports the dispatcher and the surfaces; nothing imports it but ``__main__`` and
the development tools.
"""

from __future__ import annotations

import os
import sys

from zbtools.contract import ToolError, error_envelope
from zbtools.core.call.fastjson import dumps_ascii
from zbtools.dispatch import (
    Options,
    Streams,
    ToolCall,
    debugging,
    emit,
    end_start_up,
    failure,
    output_format,
    process_streams,
    split_command_line,
    write,
)
from zbtools.options import COLORS, COMMANDS, COMPLETE_VAR, choice_list

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

    from zbtools.core.call.context import Context
    from zbtools.toolspec import ToolSpec


def run(argv: list[str], streams: Streams, env: Mapping[str, str],
        one_process: bool = False, session: Callable[[Context], None] | None = None) -> int:
    """One call of the program; returns the exit status. Never raises (but SystemExit).
    ``one_process``: the process exits after it (``main``), so the call may fork.
    ``session``: gives a tool call's context a long-lived session's state (``zbtools serve``)."""
    opts = Options()
    fmt: str | None = None
    call = ToolCall(opts, streams, env)
    call.one_process = one_process
    call.session = session
    try:
        command, rest = split_command_line(argv, opts, env)
        fmt = output_format(opts, streams, env)
        check_color(opts)
        if opts.version:
            from zbtools import __version__

            write(streams, f"zbtools {__version__}\n")
            return 0
        dialect = opts.dialect if opts.dialect is not None else env.get("ZBTOOLS_DIALECT")
        if opts.help or (command is None and streams.stdout_isatty and fmt == "human"):
            return help_and_completion(_folded(argv, command, dialect), streams, env, dialect)
        if command is None:
            raise ToolError("usage_error", "no tool given",
                            hint="usage: zbtools TOOL [--param VALUE ...] with JSON arguments "
                            "on stdin or --args; `zbtools tools` lists the tools")
        if command == "help":  # zbtools help TOOL = zbtools TOOL --help
            return help_and_completion(
                _folded([*rest[:1], "--help"], rest[0] if rest else None, dialect), streams,
                env, dialect)
        if command in COMMANDS:
            call.tool = command
            return run_command_word(command, rest, opts, streams, env, fmt)
        if fmt == "human" and streams.stdout_isatty and opts.paths is None:
            from zbtools.surfaces.human import live_output

            call.prepare = lambda spec, ctx: live_output(spec, ctx, streams)
        envelope, result = call.run(command, rest, fmt)
        spec = call.spec
        if opts.paths is not None and spec is not None and spec.paths is not None:
            from zbtools.textout import shell_envelope

            print_paths(streams, spec.paths(result), opts.paths, [] if opts.quiet else
                        notices(shell_envelope(envelope, spec, call.tool), result))
        else:
            show(streams, fmt, spec, call.tool, envelope, result, call.ctx, opts.color,
                 call.arguments, quiet=opts.quiet)
        global _read_only_done
        _read_only_done = spec is not None and spec.read_only
        if opts.exit_status and spec is not None and spec.exit_status is not None:
            return spec.exit_status(result)
        return 0
    except SystemExit:
        raise
    except BaseException as exc:  # the contract: one JSON envelope, never a traceback on stdout
        error = failure(exc, debug=debugging(opts, env), stderr=streams.stderr)
        envelope = error_envelope(call.tool, error)
        documented = isinstance(exc, (ToolError, KeyboardInterrupt))
        if fmt is None:  # the command line itself was wrong: still shown as the user sees errors
            fmt = fallback_format(opts, streams, env)
        try:
            if opts.paths is not None:  # a pipe of paths: the error goes to stderr
                from zbtools.textout import render_error, shell_envelope

                shown = shell_envelope(envelope, call.spec, call.tool)
                streams.stderr.write(on_stderr(streams, render_error(shown["error"])))
                return error.exit_code
            show(streams, fmt if documented or fmt != "human" else "json", call.spec,
                 call.tool, envelope, None, call.ctx, opts.color)
        except BaseException:
            write(streams, dumps_ascii(envelope) + "\n")
        return error.exit_code
    finally:
        call.close()


def show(streams: Streams, fmt: str, spec: ToolSpec | None, tool: str | None,
         envelope: dict[str, Any], result_obj: Any, ctx: Context | None,
         color: str | None = None, arguments: dict[str, Any] | None = None, *,
         quiet: bool = False) -> None:
    """Print one envelope in ``fmt``: JSON and text by the dispatcher, human by its surface
    (``arguments``: the call's, for what it highlights; ``quiet``: ``-q``, no notices)."""
    if fmt != "human":
        emit(streams, fmt, spec, tool, envelope, result_obj, ctx)
        return
    from zbtools.surfaces.human import render_human
    from zbtools.textout import shell_envelope

    envelope = shell_envelope(envelope, spec, tool)

    render_human(spec, tool, envelope, result_obj, ctx, streams, color=color,
                 arguments=arguments, quiet=quiet)


def check_color(opts: Options) -> None:
    if opts.color is not None and opts.color not in COLORS:
        raise ToolError("usage_error", f"unknown color mode {opts.color!r}",
                        hint=f"use --color {choice_list(COLORS)}")


def fallback_format(opts: Options, streams: Streams, env: Mapping[str, str]) -> str:
    """The format of an error found while reading the command line (before its format was)."""
    try:
        return output_format(opts, streams, env)
    except ToolError:
        return "human" if streams.stdout_isatty else "json"


def notices(envelope: dict[str, Any], result: Any) -> list[str]:
    """What ``--paths`` says on stderr beside the paths: only what a user might have wanted
    and did not get (docs/shell.md#what-is-said-on-stderr): a result cut or partial, files too
    large or unreadable, the tool's warnings. What the ignore files, the hidden-file default
    and the excluded directories left out is the normal result, said nothing about."""
    out: list[str] = []
    if getattr(result, "truncated", False):
        out.append("more results exist than the limit allowed; raise it or narrow the search")
    if getattr(result, "scan_limited", False):
        out.append("the search stopped after 200000 entries: more matches may exist")
    if getattr(result, "timed_out", False):
        out.append("the search timed out: results are partial")
    skipped = getattr(result, "skipped", None)
    # the search tools warn about each kind of file they missed (a total is then a lower
    # bound): the warning is the notice, said once; the listings only count them
    warned = hasattr(result, "total_is_lower_bound")
    missed = getattr(skipped, "missed", None)
    described = missed().describe() if missed is not None and not warned else ""
    if described:
        out.append(f"skipped: {described}")
    return out + [str(w) for w in envelope.get("warnings", [])]


def print_paths(streams: Streams, paths: list[str], end: str, notes: list[str]) -> None:
    """``--paths``/``-0``: the paths alone on stdout (each ended by ``end``), notices on stderr.
    Byte for byte in a pipe; on a terminal a name's control characters are shown, not run."""
    if streams.stdout_isatty:
        from zbtools.core.call.terminal import visible_name

        paths = [visible_name(p) for p in paths]
    write(streams, "".join(p + end for p in paths))
    for note in notes:
        streams.stderr.write(on_stderr(streams, f"zbtools: {note}\n"))


def on_stderr(streams: Streams, text: str) -> str:
    """``text`` as it may be written to stderr: its control characters shown on a terminal."""
    if not streams.stderr_isatty:
        return text
    from zbtools.core.call.terminal import visible

    return visible(text)


def run_command_word(command: str, rest: list[str], opts: Options, streams: Streams,
                     env: Mapping[str, str], fmt: str) -> int:
    """``tools``, ``schema``, ``prompt``, ``batch``, ``mcp``, ``serve`` and ``completion``: each
    is its surface's."""
    end_start_up()
    if command == "completion":
        from zbtools.surfaces.cli import completion_command

        return completion_command(rest, streams)
    if command == "mcp":
        from zbtools.surfaces.mcp_server import serve

        return serve(rest, opts, streams, env)
    if command == "batch":
        from zbtools.surfaces.batch import batch_command

        return batch_command(rest, opts, streams, env, fmt)
    if command == "serve":
        from zbtools.surfaces.server import serve_command

        return serve_command(rest, opts, streams, env, fmt, run)
    from zbtools.surfaces import catalog

    if command == "tools" and fmt == "human":
        from zbtools.surfaces.human import tools_table

        tools_table(catalog.tool_listing(rest, opts, env), streams, opts.color)
        return 0
    handler = {"tools": catalog.tools_command, "schema": catalog.schema_command,
               "prompt": catalog.prompt_command}[command]
    return handler(rest, opts, streams, env, fmt)


def _folded(argv: list[str], command: str | None, dialect: str | None = None) -> list[str]:
    """``argv`` with the tool's name as the help knows it: names fold case and ``-`` for help
    as for a call (``zbtools Bash --help`` is ``bash``'s, docs/dialects.md#tool-names); with a
    dialect, its own tool of that name first (``--dialect claude grep --help``: ``Grep``)."""
    if command is None or command in COMMANDS or command == "help" or command not in argv:
        return argv
    at = argv.index(command)
    if dialect is not None:
        from zbtools.dialects import get_dialect

        try:
            tool = get_dialect(dialect, {}).lookup(command, own_only=True)
        except ToolError:  # an unknown dialect: the help of the canonical tools
            tool = None
        if tool is not None:
            return [*argv[:at], tool.name, *argv[at + 1:]]
    from zbtools.registry import find, fold_name

    spec = find(command)
    if spec is None or command in spec.names:
        return argv
    # (find found it folded: the folded name is one of the tool's)
    return [*argv[:at], fold_name(command), *argv[at + 1:]]


def _typed_dialect(env: Mapping[str, str]) -> str | None:
    """The ``--dialect`` of the command line a shell is completing (its words are in the
    environment typer's scripts set), else ``$ZBTOOLS_DIALECT``: completion then offers the
    dialect's own tools and their flags."""
    import shlex

    line = env.get("COMP_WORDS") or env.get("_TYPER_COMPLETE_ARGS") or ""
    try:
        words = shlex.split(line)
    except ValueError:  # an open quote: the word being typed
        words = line.split()
    for at, word in enumerate(words):
        if word == "--dialect" and at + 1 < len(words):
            return words[at + 1]
        if word.startswith("--dialect="):
            return word.partition("=")[2]
    return env.get("ZBTOOLS_DIALECT") or None


def help_and_completion(argv: list[str], streams: Streams, env: Mapping[str, str],
                        dialect: str | None = None) -> int:
    """The Typer surface; a command it runs comes back here as an argv (with ``dialect``:
    the selected one, or None)."""
    from zbtools.surfaces.cli import run_typer

    if dialect is None and COMPLETE_VAR in env:  # a shell asking: the words typed so far
        dialect = _typed_dialect(env)
    chosen = ["--dialect", dialect] if dialect else []
    return run_typer(argv, streams,
                     lambda again: run([*chosen, *again], process_streams(), env), dialect)


def main_with_argv(argv: list[str]) -> int:
    if sys.stdout is None:
        return closed_stdout()
    return run(argv, process_streams(), os.environ)


def closed_stdout() -> int:
    """stdout closed (``zbtools ... >&-``): nowhere to put the result, so nothing runs (a write
    would happen with no way to report it); the error goes to stderr, exit 2."""
    if sys.stderr is not None:
        sys.stderr.write("error[usage_error]: stdout is closed: there is nowhere to write the "
                         "result, so nothing was run\nhint: redirect stdout to a file or to "
                         "/dev/null instead of closing it\n")
    return 2


# Set by ``run`` when a call of a read-only tool has succeeded and been shown.
_read_only_done = False


def quick_exit(code: int) -> None:
    """End the process now, without tearing the interpreter down, after a read-only tool's
    call: freeing the call's objects one by one (thousands of entries or matches) costs a few
    milliseconds of a cold call (docs/internals/performance.md#quick-exit). Only when nothing
    is left to run or write at exit: no ``atexit`` callback, no thread but daemons, the
    standard streams flushed; otherwise returns and the process exits as usual."""
    import atexit

    if atexit._ncallbacks():
        return
    threading = sys.modules.get("threading")
    if threading is not None and any(not t.daemon and t is not threading.main_thread()
                                     for t in threading.enumerate()):
        return
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except (OSError, ValueError):
        return  # (a closed pipe: the usual exit reports it as it always has)
    os._exit(code)


def main() -> None:
    if sys.stdout is None:
        sys.exit(closed_stdout())
    if COMPLETE_VAR in os.environ:  # a shell asking for completions (completions/)
        sys.exit(help_and_completion(sys.argv[1:], process_streams(), os.environ))
    code = run(sys.argv[1:], process_streams(), os.environ, one_process=True)
    if _read_only_done:
        quick_exit(code)
    sys.exit(code)

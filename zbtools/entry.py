"""The command-line entry point: argv and stdin in, one result out (DESIGN sections 2-3).

This is the hot path of every agent call, so it is a small hand-written dispatcher that imports
only the one tool it runs: no typer, rich, mcp or pydantic (a test checks ``sys.modules`` in a
fresh interpreter). Typer is loaded only for ``--help`` and shell completion, rich only for
``--format human``.

Usage::

    zbtools [GLOBAL OPTIONS] TOOL [--param VALUE ...] [GLOBAL OPTIONS]
    echo '{"path": "README.md"}' | zbtools read_file
    zbtools read_file --args '{"path": "README.md"}'
    zbtools read_file --path README.md --limit 20 --json

Arguments come from a JSON object on stdin, ``--args JSON`` and ``--param VALUE`` flags; flags
override ``--args``, which overrides stdin. With neither flags nor ``--args``, stdin is the request
(a terminal is never read). With flags or ``--args``, stdin is not read unless ``--stdin`` is
given: a harness that leaves an idle pipe open never hangs a call, and a shell loop
(``... | while read f; do zbtools read_file --path "$f"; done``) never has its input eaten.
Requests above ``max_request_bytes`` (16 MiB) are refused with ``too_large``.

Global options: ``--workspace/-w DIR`` (else ``$ZBTOOLS_WORKSPACE``, else the current directory),
``--format json|text|human`` (``--json``, ``--text``, ``--human``; default json when stdout is not
a terminal, human when it is; ``$ZBTOOLS_FORMAT``), ``--dialect NAME``, ``--debug`` (tracebacks
of internal errors on stderr), ``--version``, ``--help``.

Exit codes: 0 ok, 1 the tool failed as documented, 2 invalid arguments or usage, 3 refused for
safety, 4 internal error, 130 interrupted. stdout never carries a traceback.
"""

from __future__ import annotations

import os
import sys

from zbtools.contract import ToolError, error_envelope, success_envelope
from zbtools.core.call.fastjson import dumps_ascii, loads_strict

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, MutableMapping
    from typing import Any, BinaryIO, TextIO

    from zbtools.core.call.args import FieldSpec, Struct
    from zbtools.core.call.context import Context
    from zbtools.dialects import DialectTool
    from zbtools.toolspec import ToolSpec

FORMATS = ("json", "text", "human")
VALUE_OPTIONS = {"--workspace": "workspace", "-w": "workspace", "--format": "format",
                 "--dialect": "dialect", "--args": "args", "--approval": "approval"}
APPROVAL_POLICIES = ("allow", "confirm", "deny")
SWITCHES: dict[str, tuple[str, object]] = {
    "--json": ("format", "json"), "--text": ("format", "text"), "--human": ("format", "human"),
    "--debug": ("debug", True), "--stdin": ("stdin", True)}
# Command words that are not tools, dispatched by zbtools.commands.run_command_word.
COMMANDS = ("tools", "mcp", "schema", "prompt", "batch")
# Options a command word parses itself when they follow it (``schema --format openai``).
COMMAND_FLAGS: dict[str, set[str]] = {"schema": {"--format"}}


class Options:
    def __init__(self) -> None:
        self.workspace: str | None = None
        self.format: str | None = None
        self.dialect: str | None = None
        self.args: str | None = None
        self.approval: str | None = None  # overrides [exec] approval / ZBTOOLS_APPROVAL
        self.debug = False
        self.stdin = False  # read stdin even when flags or --args are given
        self.help = False
        self.version = False


class Streams:
    """Where a call reads and writes; the real process or an in-process test."""

    def __init__(self, stdin: BinaryIO | None, stdout: TextIO, stderr: TextIO,
                 stdin_isatty: bool, stdout_isatty: bool) -> None:
        self.stdin = stdin
        self.stdout = stdout
        self.stderr = stderr
        self.stdin_isatty = stdin_isatty
        self.stdout_isatty = stdout_isatty


def parse_request(data: bytes, source: str) -> dict[str, Any]:
    """Decode one JSON object strictly: UTF-8, no NaN/Infinity, no duplicate keys."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ToolError("invalid_json", f"{source} is not valid UTF-8 (byte {exc.start})",
                        hint="send the request as UTF-8 JSON") from exc
    if not text.strip():
        return {}
    try:
        value = loads_strict(text)
    except RecursionError:
        raise ToolError("invalid_json", f"{source} is nested too deeply",
                        hint="send a flat JSON object of arguments") from None
    except ValueError as exc:
        raise ToolError("invalid_json", f"{source} is not valid JSON: {exc}",
                        hint='send one JSON object, e.g. {"path": "README.md"}') from exc
    if type(value) is not dict:
        raise ToolError("invalid_json", f"{source} must be a JSON object, got "
                        f"{type(value).__name__}", hint='wrap the arguments in an object: '
                        '{"path": "README.md"}')
    return value


def uses_dialect(opts: Options, env: Mapping[str, str]) -> bool:
    """True when a dialect other than the canonical ``zblade`` is selected."""
    name = opts.dialect if opts.dialect is not None else env.get("ZBTOOLS_DIALECT")
    return name is not None and name.strip().lower() not in ("", "zblade")


def _tool_structs(command: str, opts: Options, env: Mapping[str, str]
                  ) -> tuple[ToolSpec | None, DialectTool | None, list[type[Struct]]]:
    """The tool ``command`` names (in the selected dialect) and where its flags are declared."""
    if uses_dialect(opts, env):
        from zbtools.dialects import get_dialect

        tool = get_dialect(opts.dialect, env).lookup(command)
        if tool is None:
            return None, None, []
        return tool.spec, tool, tool.flag_structs()
    from zbtools.registry import find

    spec = find(command)
    return spec, None, [spec.params] if spec is not None else []


def _tool_flags(command: str, opts: Options, env: Mapping[str, str]) -> set[str]:
    """The ``--flags`` a tool declares (they win over same-named global switches)."""
    if command in COMMANDS:
        return COMMAND_FLAGS.get(command, set())
    try:
        structs = _tool_structs(command, opts, env)[2]
    except ToolError:
        return set()  # an unknown dialect is reported once the command line is parsed
    names = {n for struct in structs for f in struct.fields().values() for n in f.names}
    return {"--" + n for n in names} | {"--" + n.replace("_", "-") for n in names}


def _split_argv(argv: list[str], opts: Options, env: Mapping[str, str] | None = None
                ) -> tuple[str | None, list[str]]:
    """Global options anywhere; the first bare word is the command; the rest is the tool's.

    After the tool name, a flag the tool declares itself wins over a global switch of the same
    name when a value follows it (``write_file --text hello``: ``text`` is an alias of
    ``content``); a bare ``--text`` at the end, or before another flag, is still the format.
    """
    command: str | None = None
    rest: list[str] = []
    own: set[str] = set()
    i = 0
    while i < len(argv):
        token = argv[i]
        name, eq, inline = token.partition("=") if token.startswith("--") else (token, "", "")
        bare_switch = token in SWITCHES and (i + 1 >= len(argv) or argv[i + 1].startswith("--"))
        if command is not None and name in own and not bare_switch:
            rest.append(token)
            if not eq and i + 1 < len(argv) and not argv[i + 1].startswith("--"):
                i += 1
                rest.append(argv[i])
        elif token in ("-h", "--help"):
            opts.help = True
        elif token == "--version":
            opts.version = True
        elif name in VALUE_OPTIONS:
            if eq:
                value = inline
            elif i + 1 < len(argv):
                i += 1
                value = argv[i]
            else:
                raise ToolError("usage_error", f"{name} needs a value",
                                hint=f"e.g. {name} VALUE")
            setattr(opts, VALUE_OPTIONS[name], value)
        elif token in SWITCHES:
            attr, switch = SWITCHES[token]
            setattr(opts, attr, switch)
        elif command is None and not token.startswith("-"):
            command = token
            own = _tool_flags(command, opts, env if env is not None else {})
        elif command is None:
            raise ToolError("usage_error", f"unknown option {token} before the tool name",
                            hint="usage: zbtools [--workspace DIR] [--format F] TOOL [--param "
                            "VALUE ...]; see zbtools --help")
        else:
            rest.append(token)
            # a tool flag's value may itself start with "-": keep it attached to its flag
            if (token.startswith("--") and "=" not in token and i + 1 < len(argv)
                    and not argv[i + 1].startswith("--") and argv[i + 1] not in VALUE_OPTIONS
                    and argv[i + 1] != "-h"):
                i += 1
                rest.append(argv[i])
        i += 1
    return command, rest


def _flag_table(structs: list[type[Struct]]
                ) -> tuple[dict[str, str], dict[str, FieldSpec]]:
    """Every spelling -> field name, and field name -> its spec; the first struct wins."""
    from zbtools.core.call.args import alias_table

    table: dict[str, str] = {}
    fields: dict[str, FieldSpec] = {}
    for struct in structs:
        for spelling, name in alias_table(struct).items():
            if spelling not in table and (name not in fields or fields[name] is
                                          struct.fields()[name]):
                table[spelling] = name
        for name, fspec in struct.fields().items():
            fields.setdefault(name, fspec)
    return table, fields


def _parse_tool_flags(structs: list[type[Struct]], tokens: list[str]
                      ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """``--name VALUE`` / ``--name=VALUE`` / ``--flag`` / ``--no-flag`` -> canonical JSON values.

    Returns the values and the problems found; problems are reported together with those of
    validation, so one error lists everything wrong with the call. ``structs`` are the
    declarations the flags may belong to (a dialect tool's own, then its canonical tool's).
    """
    from zbtools.core.call.args import coerce_flag

    table, fields = _flag_table(structs)
    values: dict[str, Any] = {}
    problems: list[dict[str, Any]] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        i += 1
        if len(token) == 2 and token[0] == "-" and token[1].isalpha() and token[1] in table:
            token = "-" + token  # a one-letter alias as a short flag: -C 2, like grep
        if not token.startswith("--") or token == "--":
            problems.append({"problem": "unexpected_value", "argument": token,
                             "message": f"unexpected value {token!r}: values follow a --flag"})
            continue
        raw_name, eq, inline = token[2:].partition("=")
        key = raw_name.replace("-", "_")
        negated = False
        canonical = table.get(key) or table.get(raw_name)
        if canonical is None and key.startswith("no_"):
            canonical = table.get(key[3:])
            negated = canonical is not None
        if canonical is None:
            from zbtools.core.call.args import did_you_mean

            flag_names = sorted({"--" + n.replace("_", "-") for n in table})
            problems.append({"problem": "unknown_argument", "argument": raw_name,
                             "message": f"unknown flag --{raw_name}"
                             + did_you_mean("--" + raw_name.replace("_", "-"), flag_names),
                             "accepted": sorted("--" + n.replace("_", "-") for f in
                                                fields.values() for n in f.names)})
            if not eq and i < len(tokens) and not tokens[i].startswith("--"):
                i += 1
            continue
        fspec = fields[canonical]
        assert fspec.type is not None
        is_bool = fspec.type.kind == "bool"
        if negated and not is_bool:
            problems.append({"problem": "unknown_argument", "argument": raw_name,
                             "message": f"--{raw_name}: only boolean flags have a --no- form"})
            continue
        if eq:
            raw: str | None = inline
        elif is_bool:
            raw = None
            if i < len(tokens) and tokens[i].lower() in ("true", "false", "yes", "no", "1", "0",
                                                        "on", "off"):
                raw = tokens[i]
                i += 1
        elif i < len(tokens):
            raw = tokens[i]
            i += 1
        else:
            problems.append({"problem": "missing_value", "argument": canonical,
                             "message": f"--{raw_name} needs a value"})
            continue
        if canonical in values:
            problems.append({"problem": "conflicting_aliases", "argument": canonical,
                             "message": f"--{raw_name}: {canonical} given more than once"})
            continue
        if raw is None:
            values[canonical] = not negated
        else:
            value = coerce_flag(fspec, raw)
            values[canonical] = (not value) if negated and isinstance(value, bool) else value
    return values, problems


def _merge(structs: list[type[Struct]], base: dict[str, Any], override: dict[str, Any]
           ) -> dict[str, Any]:
    """Drop every spelling in ``base`` of the fields ``override`` sets, then overlay it.

    ``override`` keeps its own spellings, so two aliases of one field inside the same source
    still reach validation and are refused as ``conflicting_aliases``.
    """
    table = _flag_table(structs)[0]
    replaced = {table.get(k, k) for k in override}
    merged = {k: v for k, v in base.items() if table.get(k, k) not in replaced}
    merged.update(override)
    return merged


def _unknown_tool(command: str, opts: Options, env: Mapping[str, str]) -> ToolError:
    import difflib

    if uses_dialect(opts, env):
        from zbtools.dialects import get_dialect

        dialect = get_dialect(opts.dialect, env)
        names = [t.name for t in dialect.tools()]
        where = f" in the {dialect.name} dialect"
        listing = f"`zbtools --dialect {dialect.name} schema` lists its tools"
    else:
        from zbtools.registry import all_tools

        names = sorted(n for s in all_tools() for n in s.names)
        where, listing = "", "`zbtools tools` lists every tool"
    close = difflib.get_close_matches(command, names, n=3, cutoff=0.6)
    return ToolError("unknown_tool", f"no tool named {command!r}{where}",
                     hint=(f"did you mean {', '.join(close)}? " if close else "") + listing,
                     details={"tools": names})


def _read_stdin(streams: Streams, limit: int, read: bool) -> bytes:
    if not read or streams.stdin is None or streams.stdin_isatty:
        return b""
    data = streams.stdin.read(limit + 1)
    if len(data) > limit:
        raise ToolError("too_large", f"the request is larger than {limit} bytes",
                        hint="send less content per call (write_append adds to a file in "
                        "chunks), or raise ZBTOOLS_MAX_REQUEST_BYTES",
                        details={"limit": limit})
    return data


def _make_context(opts: Options, env: Mapping[str, str]) -> Context:
    from zbtools.core.call.config import load_config, load_limits
    from zbtools.core.call.context import Context
    from zbtools.core.files.workspace import Workspace

    if opts.approval is not None:
        if opts.approval not in APPROVAL_POLICIES:
            raise ToolError("usage_error", f"unknown approval policy {opts.approval!r}",
                            hint="use --approval allow, confirm or deny")
        # The harness's choice for this call: it reaches run_command as the setting would.
        env = {**env, "ZBTOOLS_APPROVAL": opts.approval}
    config = load_config(env)
    limits = load_limits(env, config)
    root = opts.workspace or env.get("ZBTOOLS_WORKSPACE") or os.getcwd()
    return Context(Workspace(root), limits=limits, env=env)


def _write(streams: Streams, text: str) -> None:
    try:
        streams.stdout.write(text)
        streams.stdout.flush()
    except BrokenPipeError:
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, streams.stdout.fileno())
        except (OSError, ValueError, AttributeError):
            pass


def emit(streams: Streams, fmt: str, spec: ToolSpec | None, tool: str | None,
         envelope: dict[str, Any], result_obj: Any, ctx: Context | None) -> None:
    if fmt == "json":
        _write(streams, dumps_ascii(envelope) + "\n")
        return
    if fmt == "text":
        from zbtools.textout import render_text

        _write(streams, render_text(spec, tool, envelope, result_obj, ctx))
        return
    from zbtools.render import render_human

    render_human(spec, tool, envelope, result_obj, ctx, streams)


def run(argv: list[str], streams: Streams, env: MutableMapping[str, str] | Mapping[str, str]
        ) -> int:
    """One call of the program; returns the exit status. Never raises (but SystemExit)."""
    opts = Options()
    fmt = "json"
    tool: str | None = None
    spec: ToolSpec | None = None
    ctx: Context | None = None
    try:
        command, rest = _split_argv(argv, opts, env)
        fmt = opts.format or env.get("ZBTOOLS_FORMAT") or (
            "human" if streams.stdout_isatty else "json")
        if fmt not in FORMATS:
            bad, fmt = fmt, "json"
            raise ToolError("usage_error", f"unknown format {bad!r}",
                            hint="use --format json, text or human")
        if opts.version:
            from zbtools import __version__

            _write(streams, f"zbtools {__version__}\n")
            return 0
        if opts.help or (command is None and streams.stdout_isatty and fmt == "human"):
            from zbtools.cli import run_typer

            return run_typer(argv, streams)
        if command is None:
            raise ToolError("usage_error", "no tool given",
                            hint="usage: zbtools TOOL [--param VALUE ...] with JSON arguments "
                            "on stdin or --args; `zbtools tools` lists the tools")
        tool = command
        if command in COMMANDS:
            from zbtools.commands import run_command_word

            return run_command_word(command, rest, opts, streams, env, fmt)
        spec, dtool, structs = _tool_structs(command, opts, env)
        if spec is None:
            raise _unknown_tool(command, opts, env)
        tool = dtool.name if dtool is not None else spec.name
        flags, flag_problems = _parse_tool_flags(structs, rest)
        ctx = _make_context(opts, env)
        limit = ctx.limits.max_request_bytes
        args_json = parse_request(opts.args.encode("utf-8", "surrogateescape"), "--args") \
            if opts.args is not None else {}
        stdin_json = parse_request(
            _read_stdin(streams, limit, opts.stdin or not (flags or flag_problems
                                                            or opts.args is not None)),
            "stdin")
        merged = _merge(structs, _merge(structs, stdin_json, args_json), flags)
        if dtool is not None:
            from zbtools.dialects import invoke

            outcome = invoke(dtool, merged, ctx, flag_problems)
            result, payload = outcome.result, outcome.payload
        else:
            from zbtools.core.call.args import validate

            params = validate(spec.params, merged, flag_problems)
            per_call = {key: getattr(params, key, None) for key in ("max_bytes", "max_lines")}
            if any(v is not None for v in per_call.values()):
                ctx.limits = ctx.limits.with_overrides(**per_call)
            result = spec.call(params, ctx)
            # The text rendering works from the result object: the JSON form (thousands of
            # entries for a listing) is only built when it is printed.
            payload = {} if fmt == "text" and spec.render_text is not None else \
                result.to_json()
        truncated = payload.get("truncated", False) if payload else \
            getattr(result, "truncated", False)
        envelope = success_envelope(tool, payload, truncated=bool(truncated),
                                    warnings=ctx.warnings)
        emit(streams, fmt, spec, tool, envelope, result, ctx)
        return 0
    except ToolError as failure:
        emit(streams, fmt, spec, tool, error_envelope(tool, failure), None, ctx)
        return failure.exit_code
    except KeyboardInterrupt:
        stop = ToolError("interrupted", "interrupted", hint="the call was cancelled; nothing "
                         "was left half-written (writes are atomic)")
        emit(streams, fmt, spec, tool, error_envelope(tool, stop), None, ctx)
        return stop.exit_code
    except SystemExit:
        raise
    except BaseException as exc:  # the contract: one JSON envelope, never a traceback on stdout
        if opts.debug or env.get("ZBTOOLS_DEBUG"):
            import traceback

            traceback.print_exc(file=streams.stderr)
        bug = ToolError("internal_error", f"internal error: {type(exc).__name__}: {exc}",
                        hint="a bug in zbtools; rerun with --debug for a traceback on stderr "
                        "and report it")
        try:
            emit(streams, "json" if fmt == "human" else fmt, spec, tool,
                 error_envelope(tool, bug), None, ctx)
        except BaseException:
            _write(streams, dumps_ascii(error_envelope(tool, bug)) + "\n")
        return bug.exit_code
    finally:
        if ctx is not None:
            ctx.workspace.close()


def process_streams() -> Streams:
    """The real process's stdin/stdout/stderr."""
    stdin = sys.stdin.buffer if sys.stdin is not None else None
    try:
        stdin_isatty = stdin is not None and os.isatty(stdin.fileno())
    except (OSError, ValueError):
        stdin_isatty = False
    try:
        stdout_isatty = os.isatty(sys.stdout.fileno())
    except (OSError, ValueError):
        stdout_isatty = False
    return Streams(stdin, sys.stdout, sys.stderr, stdin_isatty, stdout_isatty)


def main_with_argv(argv: list[str]) -> int:
    return run(argv, process_streams(), os.environ)


def main() -> None:
    if "_ZBTOOLS_COMPLETE" in os.environ:  # a shell asking for completions (completions/)
        from zbtools.cli import run_typer

        sys.exit(run_typer(sys.argv[1:], process_streams()))
    sys.exit(run(sys.argv[1:], process_streams(), os.environ))

"""The one way in: a command line (argv and stdin) becomes a tool call, and a call a result.

Every surface runs its tools through ``call_tool`` here, so a tool behaves the same whichever
way it is reached: the same validation, per-call limits, workspace containment and edit lock
(docs/internals/surfaces.md#one-way-in). On the command line, flags override ``--args``, which
overrides stdin, and stdin is read only when neither is given or ``--stdin`` asks (README.md;
operands, ``-``/``@file`` and the shell options in docs/shell.md).
Global options and command words are declared in ``zbtools.options``, exit statuses in
``zbtools.contract``. This is the hot path of every agent call: it imports only the tool it
runs (docs/internals/performance.md#start-up-budget), never a surface or ``zbtools.entry``.

* ``split_command_line``: global options and the command word out of argv, into ``Options``.
* ``ToolCall``: one call from a command line, step by step; ``call_tool`` validates and runs
  any call; ``success`` and ``failure`` make its envelope, ``emit`` prints it.
* ``parse_tool_flags``, ``flag_table``, ``read_raw_values``, ``merge_arguments``,
  ``parse_request``, ``read_stdin``: the argument sources and their merge.
* ``make_context``, ``selected_dialect``, ``output_format``, ``debugging``: what a call runs in.
* ``Options``, ``Streams``, ``process_streams``: the parsed options and the process's streams.
"""

from __future__ import annotations

import os
import sys

from zbtools.contract import ToolError, success_envelope
from zbtools.core.call.fastjson import dumps_ascii, loads_strict
from zbtools.options import (
    APPROVAL_POLICIES,
    COMMAND_FLAGS,
    COMMANDS,
    FORMATS,
    GLOBAL_OPTIONS,
    choice_list,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from typing import Any, BinaryIO, TextIO

    from zbtools.core.call.args import FieldSpec, Struct
    from zbtools.core.call.context import Context
    from zbtools.dialects import Dialect, DialectTool
    from zbtools.toolspec import Outcome, ToolSpec

# The parser's tables, read from the one declaration of the options (zbtools.options).
VALUE_OPTIONS = {name: opt.attr for opt in GLOBAL_OPTIONS if opt.takes_value
                 for name in opt.names}
SWITCHES: dict[str, tuple[str, object]] = {
    name: (opt.attr, opt.shorthands.get(name, opt.value)) for opt in GLOBAL_OPTIONS
    for name in opt.switch_names if opt.attr not in ("help", "version")}
HELP_NAMES = next(opt.names for opt in GLOBAL_OPTIONS if opt.attr == "help")
VERSION_NAMES = next(opt.names for opt in GLOBAL_OPTIONS if opt.attr == "version")
# One-letter global options: never taken as the value of a tool flag before them.
SHORT_GLOBALS = tuple(name for opt in GLOBAL_OPTIONS for name in (*opt.names, *opt.shorthands)
                      if len(name) == 2)


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
        self.exit_status = False  # a success's status says yes/no (--exit-status)
        self.paths: str | None = None  # --paths ("\n") or -0 ("\0"): the paths a listing found
        self.color: str | None = None  # auto, always or never (human output)
        self.quiet = False  # -q: no notices on stderr or under human results, errors still


class Streams:
    """Where a call reads and writes; the real process or an in-process test."""

    def __init__(self, stdin: BinaryIO | None, stdout: TextIO, stderr: TextIO,
                 stdin_isatty: bool, stdout_isatty: bool, stderr_isatty: bool = False) -> None:
        self.stdin = stdin
        self.stdout = stdout
        self.stderr = stderr
        self.stdin_isatty = stdin_isatty
        self.stdout_isatty = stdout_isatty
        self.stderr_isatty = stderr_isatty


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


def tool_structs(command: str, opts: Options, env: Mapping[str, str]
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


def tool_flags(command: str, opts: Options, env: Mapping[str, str]) -> set[str]:
    """The ``--flags`` a tool declares (they win over same-named global switches)."""
    if command in COMMANDS:
        return COMMAND_FLAGS.get(command, set())
    try:
        structs = tool_structs(command, opts, env)[2]
    except ToolError:
        return set()  # an unknown dialect is reported once the command line is parsed
    fields = [f for struct in structs for f in struct.fields().values()]
    names = {n for f in fields for n in (*f.names, *f.switches)}
    # a one-letter flag of the tool wins over a global option of that letter after the tool's
    # name (``grep_search -w``: whole words, as rg), except a global switch (``-q``), which
    # keeps its meaning everywhere (docs/shell.md#rgs-flags)
    letters = {"-" + n for n in names if len(n) == 1 and "-" + n not in SWITCHES}
    return {"--" + n for n in names} | {"--" + n.replace("_", "-") for n in names} | letters


def split_command_line(argv: list[str], opts: Options, env: Mapping[str, str] | None = None
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
            if (not eq and i + 1 < len(argv) and not argv[i + 1].startswith("--")
                    and argv[i + 1] not in SHORT_GLOBALS):
                i += 1
                rest.append(argv[i])
        elif token == "--":
            # the end of the options: what follows is the tool's (operands and values)
            tail = argv[i + 1:]
            if command is None and tail:
                command, tail = tail[0], tail[1:]
            if command is not None:
                rest += ["--", *tail]
            break
        elif token in HELP_NAMES:
            opts.help = True
        elif token in VERSION_NAMES:
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
            own = tool_flags(command, opts, env if env is not None else {})
        elif command is None:
            raise ToolError("usage_error", f"unknown option {token} before the tool name",
                            hint="usage: zbtools [--workspace DIR] [--format F] TOOL [--param "
                            "VALUE ...]; see zbtools --help")
        else:
            rest.append(token)
            # a tool flag's value may itself start with "-": keep it attached to its flag
            if (token.startswith("--") and "=" not in token and i + 1 < len(argv)
                    and not argv[i + 1].startswith("--")
                    and argv[i + 1] not in SHORT_GLOBALS):
                i += 1
                rest.append(argv[i])
        i += 1
    return command, rest


def flag_table(structs: list[type[Struct]]
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
            for spelling in fspec.switches:
                table.setdefault(spelling, name)
                table.setdefault(spelling.replace("_", "-"), name)
    return table, fields


def short_flags(token: str, table: Mapping[str, str], fields: Mapping[str, FieldSpec]
                ) -> list[str] | None:
    """``-m2`` -> ``[-m, 2]``, ``-il`` -> ``[-i, -l]``: one-letter flags run together, the last
    of them maybe with its value attached; None when a letter is not one of the tool's."""
    out: list[str] = []
    for at, letter in enumerate(token[1:], start=1):
        name = table.get(letter) if letter.isalpha() else None
        if name is None:
            return None
        out.append("-" + letter)
        fspec = fields[name]
        assert fspec.type is not None
        if fspec.type.kind != "bool" and letter not in fspec.switches:
            if at + 1 < len(token):
                out.append(token[at + 1:])
            return out
    return out


def parse_tool_flags(structs: list[type[Struct]], tokens: list[str],
                     operands: tuple[str, ...] = (), literal: set[str] | None = None,
                     tables: tuple[dict[str, str], dict[str, FieldSpec]] | None = None
                     ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """``--name VALUE`` / ``--name=VALUE`` / ``--flag`` / ``--no-flag`` -> canonical JSON values.

    Returns the values and the problems found; problems are reported together with those of
    validation, so one error lists everything wrong with the call. ``structs`` are the
    declarations the flags may belong to (a dialect tool's own, then its canonical tool's).
    ``operands`` are the parameters bare words stand for, in order (the tool's
    ``ToolSpec.operands``: ``zbtools read_file README.md``); ``--`` ends the flags: every token
    after it is a bare word. The names given so are added to ``literal`` (an operand is taken as
    written: ``-`` and ``@PATH`` are read only for flags). ``tables``: ``flag_table(structs)``
    when the caller has it already.
    """
    from zbtools.core.call.flags import coerce_flag

    table, fields = tables if tables is not None else flag_table(structs)
    values: dict[str, Any] = {}
    problems: list[dict[str, Any]] = []
    bare: list[str] = []
    tokens = list(tokens)
    i = 0
    while i < len(tokens):
        token = tokens[i]
        i += 1
        if token == "--":
            bare += tokens[i:]
            break
        if len(token) > 2 and token[0] == "-" and token[1] != "-":
            letters = short_flags(token, table, fields)
            if letters is not None:  # -m2 is -m 2, -il is -i -l, as rg and grep read them
                token = letters[0]
                tokens[i:i] = letters[1:]
        if len(token) == 2 and token[0] == "-" and token[1].isalpha() and token[1] in table:
            token = "-" + token  # a one-letter alias as a short flag: -C 2, like grep
        if not token.startswith("--"):
            bare.append(token)
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
        switch = key if key in fspec.switches else raw_name
        if switch in fspec.switches and key not in fspec.names and not eq:
            if canonical in values:
                problems.append({"problem": "conflicting_aliases", "argument": canonical,
                                 "message": f"{tokens[i - 1]}: {canonical} given more than "
                                 "once"})
            else:
                values[canonical] = fspec.switches[switch]
            continue
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
    taken = [name for name in operands if name in fields][:len(bare)]
    for name, token in zip(taken, bare, strict=False):
        if name in values:
            problems.append({"problem": "conflicting_aliases", "argument": name,
                             "message": f"{name} given both as --{name.replace('_', '-')} "
                             f"and as the operand {token!r}"})
        else:
            values[name] = coerce_flag(fields[name], token)
            if literal is not None:
                literal.add(name)
    for token in bare[len(taken):]:
        where = (f"this tool takes {len(operands)} operand{'s' if len(operands) > 1 else ''} "
                 f"({', '.join(operands)})" if operands else "this tool takes no operand")
        problems.append({"problem": "unexpected_value", "argument": token,
                         "message": f"unexpected value {token!r}: values follow a --flag; "
                         + where})
    return values, problems


def merge_arguments(table: dict[str, str], base: dict[str, Any], override: dict[str, Any]
                    ) -> dict[str, Any]:
    """Drop every spelling in ``base`` of the fields ``override`` sets, then overlay it
    (``table``: every spelling -> field name, from ``flag_table``).

    ``override`` keeps its own spellings, so two aliases of one field inside the same source
    still reach validation and are refused as ``conflicting_aliases``.
    """
    if not override or not base:
        return {**base, **override}
    replaced = {table.get(k, k) for k in override}
    merged = {k: v for k, v in base.items() if table.get(k, k) not in replaced}
    merged.update(override)
    return merged


def unknown_tool_error(command: str, opts: Options, env: Mapping[str, str]) -> ToolError:
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


def too_large(source: str, limit: int) -> ToolError:
    return ToolError("too_large", f"{source} is larger than {limit} bytes",
                     hint="send less content per call (write a big file in parts: create it, "
                     "then append the rest), or raise ZBTOOLS_MAX_REQUEST_BYTES",
                     details={"limit": limit})


def raw_text(data: bytes, source: str, limit: int) -> str:
    if len(data) > limit:
        raise too_large(source, limit)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ToolError("usage_error", f"{source} is not valid UTF-8 (byte {exc.start})",
                        hint="text arguments are UTF-8; write_file keeps a file's own "
                        "encoding when it already exists") from exc


def read_raw_values(flags: dict[str, Any], fields: Mapping[str, FieldSpec], streams: Streams,
                    limit: int, json_on_stdin: bool,
                    literal: set[str] | frozenset[str] = frozenset()) -> dict[str, Any]:
    """A text-body flag's value (``FieldSpec.text_body``: file content, old and new text, a
    patch, a command; never a path or a pattern, where ``@types/x`` and ``@Override`` are
    ordinary values) ``-`` is stdin and ``@PATH`` a file's content, byte for byte (gh's and
    curl's habit); ``@@...`` stands for a literal value starting with one ``@``.

    Only flags: JSON arguments (stdin, ``--args``, batch, MCP) and operands (``literal``) are
    always literal. ``PATH`` is
    relative to the current directory, as the shell completed it, and may be outside the
    workspace: it is the caller's own file, read like stdin. Both are bounded by
    ``max_request_bytes``.
    """
    out = dict(flags)
    stdin_taken: str | None = None
    for name, value in flags.items():
        fspec = fields.get(name)
        if name in literal or type(value) is not str or fspec is None or not fspec.text_body \
                or not (value == "-" or value.startswith("@")):
            continue
        flag = "--" + name.replace("_", "-")
        if value.startswith("@@"):
            out[name] = value[1:]
        elif value == "-":
            if json_on_stdin or stdin_taken is not None:
                other = "--stdin" if json_on_stdin else f"--{stdin_taken}"
                raise ToolError("usage_error", f"{flag} - and {other} both read stdin",
                                hint="give one of them a file instead: --NAME @PATH")
            stdin_taken = name.replace("_", "-")
            data = streams.stdin.read(limit + 1) if streams.stdin is not None else b""
            out[name] = raw_text(data, f"stdin (for {flag} -)", limit)
        else:
            path = value[1:]
            try:
                with open(path, "rb") as fh:
                    data = fh.read(limit + 1)
            except OSError as exc:
                raise ToolError("usage_error", f"{flag} @{path}: cannot read it: "
                                f"{exc.strerror or exc}",
                                hint=f"@PATH reads a file (relative to the current directory); "
                                f"for a value that starts with @, write @@ ({flag} @{value})",
                                details={"path": path}) from None
            out[name] = raw_text(data, f"{flag} @{path}", limit)
    return out


def shadowed_global(rest: Sequence[str], table: Mapping[str, str]) -> str | None:
    """A warning when a one-letter flag of the tool that is also a global option (``-w``)
    is followed by an existing directory: the call may have meant the global one."""
    for at, token in enumerate(rest[:-1]):
        if token == "--":
            break
        if (token in VALUE_OPTIONS and len(token) == 2 and token[1] in table
                and not rest[at + 1].startswith("-") and os.path.isdir(rest[at + 1])):
            own = "--" + table[token[1]].replace("_", "-")
            meant = next(n for n in VALUE_OPTIONS if n.startswith("--")
                         and VALUE_OPTIONS[n] == VALUE_OPTIONS[token])
            return (f"{token} after the tool's name is its {own}, not {meant}: "
                    f"{rest[at + 1]!r} was read as an operand; for {meant}, put {token} "
                    "DIR before the tool's name")
    return None


def note_unread_stdin(error: ToolError, streams: Streams) -> None:
    """A call that lacks an argument while stdin, left unread because flags were given, holds
    something: the hint says so (the habit of ``echo '{...}' | zbtools TOOL --flag``)."""
    problems = error.details.get("problems") if error.details else None
    if error.code != "invalid_arguments" or not isinstance(problems, list) or not any(
            isinstance(p, dict) and p.get("problem") == "missing_argument" for p in problems):
        return
    stdin = streams.stdin
    if stdin is None or streams.stdin_isatty:
        return
    try:
        import select

        ready = bool(select.select([stdin.fileno()], [], [], 0)[0])
    except (AttributeError, OSError, ValueError):  # (io.UnsupportedOperation is both)
        ready = True  # an in-memory stream: reading it never waits
    if not ready or not stdin.read(4096).strip():
        return
    note = ("stdin was not read because flags were given: add --stdin to read its JSON "
            "arguments as well, or pass one text parameter from it as --NAME -")
    error.hint = f"{error.hint}; {note}" if error.hint else note


def read_stdin(streams: Streams, limit: int, read: bool) -> bytes:
    if not read or streams.stdin is None or streams.stdin_isatty:
        return b""
    data = streams.stdin.read(limit + 1)
    if len(data) > limit:
        raise too_large("the request", limit)
    return data


def make_context(opts: Options, env: Mapping[str, str],
                 roots: Sequence[str] | None = None) -> Context:
    """The context of one call. ``roots`` (a surface's choice, e.g. an MCP client's roots),
    when given and not empty, replace ``--workspace``: the first is the workspace root, the
    others admit absolute paths inside them."""
    from zbtools.core.call.config import load_config, load_files_settings, load_limits
    from zbtools.core.call.context import Context
    from zbtools.core.files.workspace import Workspace

    if opts.approval is not None:
        if opts.approval not in APPROVAL_POLICIES:
            raise ToolError("usage_error", f"unknown approval policy {opts.approval!r}",
                            hint=f"use --approval {choice_list(APPROVAL_POLICIES)}")
        # The harness's choice for this call: it reaches run_command as the setting would.
        env = {**env, "ZBTOOLS_APPROVAL": opts.approval}
    config = load_config(env)
    limits = load_limits(env, config)
    files = load_files_settings(env, config)
    if roots:
        workspace = Workspace(roots[0], roots[1:])
    else:
        workspace = Workspace(opts.workspace or env.get("ZBTOOLS_WORKSPACE") or os.getcwd())
    workspace.protect_git = not files["allow_git_writes"]
    workspace.check_syntax = files["check_syntax"]
    return Context(workspace, limits=limits, env=env)


def write(streams: Streams, text: str) -> None:
    try:
        streams.stdout.write(text)
        streams.stdout.flush()
    except BrokenPipeError:
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, streams.stdout.fileno())
        except (OSError, ValueError, AttributeError):
            pass


def selected_dialect(opts: Options, env: Mapping[str, str]) -> Dialect:
    """The dialect ``--dialect`` or ``$ZBTOOLS_DIALECT`` names (``zblade`` by default)."""
    from zbtools.dialects import get_dialect

    return get_dialect(opts.dialect, env)


def output_format(opts: Options, streams: Streams, env: Mapping[str, str]) -> str:
    """``--format``, else ``$ZBTOOLS_FORMAT``, else human on a terminal and json elsewhere."""
    fmt = opts.format or env.get("ZBTOOLS_FORMAT") or (
        "human" if streams.stdout_isatty else "json")
    if fmt not in FORMATS:
        raise ToolError("usage_error", f"unknown format {fmt!r}",
                        hint=f"use --format {choice_list(FORMATS)}")
    return fmt


class ToolCall:
    """One tool call from a command line: the tool the argv names, its arguments (flags,
    ``--args``, stdin), its context, and the run through ``call_tool``.

    Built in steps, in this order, so that a failure at any step still knows the tool's name for
    the error envelope and the context to close: the tool (``unknown_tool``), the flags
    (problems kept for validation), the context (workspace and limits), the JSON sources
    (``invalid_json``, ``too_large``), validation and the run.
    """

    def __init__(self, opts: Options, streams: Streams, env: Mapping[str, str]) -> None:
        self.opts = opts
        self.streams = streams
        self.env = env
        self.tool: str | None = None  # the name the envelope carries
        self.spec: ToolSpec | None = None
        self.ctx: Context | None = None
        # called with the tool and its context before it runs (a surface's live output)
        self.prepare: Callable[[ToolSpec, Context], None] | None = None
        self.arguments: dict[str, Any] = {}  # the merged arguments, once read
        self.one_process = False  # the process exits after this call (``Context.may_fork``)
        # gives the context a long-lived session's state (``zbtools serve``'s warm cache)
        self.session: Callable[[Context], None] | None = None

    def run(self, command: str, rest: list[str], fmt: str) -> tuple[dict[str, Any], Struct]:
        """Run ``command`` with the tool arguments ``rest``: (success envelope, result)."""
        opts = self.opts
        self.tool = command
        spec, dtool, structs = tool_structs(command, opts, self.env)
        if spec is None:
            raise unknown_tool_error(command, opts, self.env)
        self.spec = spec
        self.tool = tool = dtool.name if dtool is not None else spec.name
        # a dialect with its own parameter names has no operand (its names are not the tool's)
        operands = spec.operands if dtool is None or not dtool.declares_params else ()
        literal: set[str] = set()
        tables = flag_table(structs)  # once: flags, raw values and the merge all need it
        flags, flag_problems = parse_tool_flags(structs, rest, operands, literal, tables)
        if opts.paths is not None and spec.paths is None:
            raise ToolError("usage_error", f"{tool} has no paths to print",
                            hint="--paths and -0 work with the listings and searches: "
                            "list_directory, find_files, find_files_glob, grep_search, "
                            "codebase_search")
        self.ctx = ctx = make_context(opts, self.env)
        if self.session is not None:
            self.session(ctx)
        shadowed = shadowed_global(rest, tables[0])
        if shadowed is not None:
            ctx.warn(shadowed)
        if self.prepare is not None:
            self.prepare(spec, ctx)
        if flags:
            flags = read_raw_values(flags, tables[1], self.streams,
                                    ctx.limits.max_request_bytes, opts.stdin, literal)
        args_json = parse_request(opts.args.encode("utf-8", "surrogateescape"), "--args") \
            if opts.args is not None else {}
        read = opts.stdin or not (flags or flag_problems or opts.args is not None)
        stdin_json = parse_request(read_stdin(self.streams, ctx.limits.max_request_bytes, read),
                                   "stdin")
        arguments = merge_arguments(tables[0], merge_arguments(tables[0], stdin_json, args_json),
                                    flags)
        self.arguments = arguments
        end_start_up()
        ctx.json_text = fmt == "json" and dtool is None and opts.paths is None
        ctx.may_fork = self.one_process
        try:
            outcome = call_tool(spec, dtool, arguments, ctx, flag_problems,
                                json_payload=fmt != "text")
        except ToolError as error:
            if not read:
                note_unread_stdin(error, self.streams)
            if shadowed is not None:
                error.hint = f"{error.hint}; {shadowed}" if error.hint else shadowed
            raise
        self.spec = outcome.spec  # a dialect tool's rendering speaks the dialect's words
        return success(tool, outcome, ctx), outcome.result

    def close(self) -> None:
        if self.ctx is not None:
            self.ctx.workspace.close()


def end_start_up() -> None:
    """The collector on, for the tool or session about to run, where the process started with it
    off (``zbtools.__main__``): what start-up created is frozen out of every later collection,
    exit's included. A no-op where the collector is on (an in-process call)."""
    import gc

    if not gc.isenabled():
        gc.freeze()
        gc.enable()


def call_tool(spec: ToolSpec, dialect_tool: DialectTool | None, arguments: dict[str, Any],
              ctx: Context, problems: list[dict[str, Any]] | None = None, *,
              json_payload: bool = True) -> Outcome:
    """Validate ``arguments``, apply the call's own limits and run the tool (``ToolSpec.call``).

    A dialect tool translates its arguments and adapts the result and errors to its dialect.
    ``json_payload=False`` skips building the JSON form where only the text rendering is
    printed (thousands of entries for a listing); the canonical path never imports a dialect.
    """
    if dialect_tool is not None:
        from zbtools.dialects import invoke

        return invoke(dialect_tool, arguments, ctx, problems)
    from zbtools.core.call.args import validate
    from zbtools.toolspec import Outcome, apply_call_limits

    params = validate(spec.params, arguments, problems, ctx.warnings)
    apply_call_limits(params, ctx)
    text_only = not json_payload and spec.render_text is not None
    ctx.text_only = text_only
    result = spec.call(params, ctx)
    payload = {} if text_only else result.to_json()
    return Outcome(spec, result, payload)


def success(tool: str, outcome: Outcome, ctx: Context) -> dict[str, Any]:
    """The success envelope of ``outcome`` (truncated from the payload, or the result when the
    payload was not built), carrying the call's warnings."""
    payload = outcome.payload
    truncated = payload.get("truncated", False) if payload else \
        getattr(outcome.result, "truncated", False)
    return success_envelope(tool, payload, truncated=bool(truncated), warnings=ctx.warnings)


INTERNAL_HINT = "a bug in zbtools; rerun with --debug for a traceback on stderr and report it"


def failure(exc: BaseException, *, debug: bool, stderr: TextIO | None,
            hint: str = INTERNAL_HINT) -> ToolError:
    """The ``ToolError`` an exception out of a call becomes: itself when it is one,
    ``interrupted`` for Ctrl-C, else ``internal_error`` (its traceback on ``stderr`` when
    debugging). Never a traceback on stdout: that is the contract."""
    if isinstance(exc, ToolError):
        return exc
    if isinstance(exc, KeyboardInterrupt):
        return ToolError("interrupted", "interrupted", hint="the call was cancelled; nothing "
                         "was left half-written (writes are atomic)")
    if debug and stderr is not None:
        import traceback

        text = "".join(traceback.format_exception(exc))
        try:
            on_terminal = stderr.isatty()
        except (OSError, ValueError):
            on_terminal = False
        if on_terminal:  # a traceback quotes values: content's control characters shown
            from zbtools.core.call.terminal import visible

            text = visible(text)
        stderr.write(text)
    return ToolError("internal_error", f"internal error: {type(exc).__name__}: {exc}",
                     hint=hint)


def debugging(opts: Options, env: Mapping[str, str]) -> bool:
    return bool(opts.debug or env.get("ZBTOOLS_DEBUG"))


def emit(streams: Streams, fmt: str, spec: ToolSpec | None, tool: str | None,
         envelope: dict[str, Any], result_obj: Any, ctx: Context | None) -> None:
    """Print one envelope as JSON or as the text rendering (``human`` is a surface's). The text
    rendering is what a model reads, byte for byte, except on a terminal: there the control
    characters of content are shown (``terminal.visible``), not acted on."""
    if fmt == "text":
        from zbtools.textout import render_text

        text = render_text(spec, tool, envelope, result_obj, ctx)
        if streams.stdout_isatty:  # (imported only then: a cold call's start-up)
            from zbtools.core.call.terminal import visible

            text = visible(text)
        write(streams, text)
        return
    write(streams, dumps_ascii(envelope) + "\n")


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
    try:
        stderr_isatty = sys.stderr is not None and os.isatty(sys.stderr.fileno())
    except (OSError, ValueError):
        stderr_isatty = False
    return Streams(stdin, sys.stdout, sys.stderr, stdin_isatty, stdout_isatty, stderr_isatty)

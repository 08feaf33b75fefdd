"""The Typer application: ``--help``, shell completion, and a human-friendly fallback.

Generated from the registry: every tool is a command whose options are its parameters (aliases
included as extra option names). The hot path never comes here; ``zbtools.entry`` hands over only
``--help``, a bare ``zbtools`` on a terminal, and completion requests. A command run through this
app is turned back into an argv and handed to the ``run_argv`` the caller passes in (the
program's own entry point), so behaviour is identical whichever way it is reached. Each value
is shown by its name (``value_name``: ``PATH``, ``N``, ``{a|b}``), never typer's ``<str>``
(``click_command``), and completion offers every value whose set is known (``_offer``,
``_tool_names``).

A surface: imports the registry and the contract, never another surface or the entry point.
"""

from __future__ import annotations

import inspect
import json
import os
from typing import TYPE_CHECKING, Any, Optional

import typer
from typer.core import TyperArgument, TyperOption

from zbtools import __version__
from zbtools.contract import ERROR_CODES, EXIT_STATUSES
from zbtools.core.call.flags import value_name
from zbtools.options import (
    COMMAND_WORDS,
    COMMANDS,
    COMPLETE_VAR,
    GLOBAL_OPTIONS,
    SERVE_IDLE_SECONDS,
    SHELLS,
    CommandWord,
    choice_list,
)
from zbtools.toolspec import plain_literals

if TYPE_CHECKING:
    from collections.abc import Callable

    from zbtools.core.call.args import FieldSpec
    from zbtools.dialects import DialectTool
    from zbtools.dispatch import Streams
    from zbtools.toolspec import ToolSpec

EPILOG = (
    "Arguments: a JSON object on stdin, --args JSON, or --param VALUE flags (flags win). "
    "Output: one JSON envelope on stdout (--format json, the default off a terminal). "
    "Exit codes: " + ", ".join(f"{status} {brief}" for status, (brief, _) in EXIT_STATUSES.items())
    + "."
)

_PY_TYPES: dict[str, type] = {"str": str, "int": int, "float": float, "bool": bool}


def _option_type(spec: FieldSpec) -> type:
    assert spec.type is not None
    return _PY_TYPES.get(spec.type.kind, str)


def _option_help(spec: FieldSpec) -> str:
    assert spec.type is not None
    text = spec.help
    if spec.type.kind == "literal" and not value_name(spec).startswith("{"):
        text += f" [one of: {', '.join(str(c) for c in spec.type.choices)}]"
    if spec.required:
        text += " [required]"
    return text


def _offer(values: tuple[str, ...] | list[str]) -> Callable[[str], list[str]]:
    """A completion callback: the values that start with what was typed."""
    def complete(incomplete: str) -> list[str]:
        return [value for value in values if value.startswith(incomplete)]
    return complete


def _choices(spec: FieldSpec) -> tuple[str, ...]:
    """The values a shell may complete for a field: a choice's, else none (a switch's two
    spellings are option names, which the shell completes as such)."""
    assert spec.type is not None
    return tuple(str(c) for c in spec.type.choices) if spec.type.kind == "literal" else ()


def _tool_names(ctx: typer.Context, incomplete: str) -> list[str]:
    """What may follow ``help`` (the canonical tools and the command words), ``schema`` or
    ``prompt`` (the selected dialect's tools, then the canonical ones: both are looked up
    there, while help knows only the canonical tools)."""
    from zbtools.registry import all_tools

    names: list[str] = []
    chosen = ctx.parent.params.get("dialect") if ctx.parent is not None else None
    if ctx.info_name != "help":
        from zbtools.contract import ToolError
        from zbtools.dialects import get_dialect

        try:  # no --dialect: $ZBTOOLS_DIALECT's, as the command would use
            names += [tool.name for tool in get_dialect(chosen or None, os.environ).tools()]
        except ToolError:  # an unknown dialect: the canonical names still help
            pass
    names += [spec.name for spec in all_tools()]
    if ctx.info_name == "help":
        names += [word for word in COMMANDS if word != "help"]
    return [name for name in dict.fromkeys(names) if name.startswith(incomplete)]


def _switch_groups(spec: FieldSpec) -> dict[object, list[str]]:
    """A field's switches as flags, by the value they set: ``{"count": ["-c", "--count"]}``."""
    groups: dict[object, list[str]] = {}
    for spelling, value in spec.switches.items():
        groups.setdefault(value, []).append(
            ("-" if len(spelling) == 1 else "--") + spelling.replace("_", "-"))
    return groups


def _make_command(spec: ToolSpec | DialectHelp, run_argv: Callable[[list[str]], int]) -> Any:
    fields = spec.params.fields()
    parameters = []
    annotations: dict[str, Any] = {}
    switches: dict[str, str] = {}  # a switch's keyword -> the flag it gives back
    for name, fspec in fields.items():
        # a one-letter name is a short flag too (Claude's Grep: -B, -i)
        flag = ("-" if len(name) == 1 else "--") + name.replace("_", "-")
        # a one-letter alias is a short flag (-g, -C), as the command line reads it
        extra = [("-" if len(a) == 1 else "--") + a.replace("_", "-") for a in fspec.aliases]
        py_type = _option_type(fspec)
        if py_type is bool:
            decls = [flag] if len(name) == 1 else [f"{flag}/--no-{name.replace('_', '-')}",
                                                   *(e for e in extra if len(e) == 2)]
        else:
            decls = [flag, *extra]
        choices = _choices(fspec)
        option = typer.Option(None, *decls, help=_option_help(fspec), show_default=False,
                              metavar=value_name(fspec) or None,
                              autocompletion=_offer(choices) if choices else None)
        annotations[name] = Optional[py_type]  # noqa: UP045 - typer needs a runtime object
        parameters.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY,
                                            default=option, annotation=annotations[name]))
        for value, spellings in _switch_groups(fspec).items():
            key = f"switch_{len(switches)}_"
            switches[key] = spellings[0]
            annotations[key] = bool
            parameters.append(inspect.Parameter(key, inspect.Parameter.KEYWORD_ONLY,
                                                annotation=bool, default=typer.Option(
                                                    False, *spellings, show_default=False,
                                                    help=f"Same as {flag} {value}")))
    placeholders = spec.operand_placeholders()
    operands = [name for name, _ in placeholders]
    for index, (operand, placeholder) in enumerate(placeholders):
        key = f"operand_{index}_"
        annotations[key] = Optional[str]  # noqa: UP045
        parameters.insert(index, inspect.Parameter(
            key, inspect.Parameter.POSITIONAL_OR_KEYWORD,
            annotation=Optional[str],  # noqa: UP045
            default=typer.Argument(None, metavar=placeholder,
                                   show_default=False,
                                   help=f"The {operand} (same as --{operand.replace('_', '-')})")))
    annotations["args"] = Optional[str]  # noqa: UP045
    parameters.append(inspect.Parameter(
        "args", inspect.Parameter.KEYWORD_ONLY, annotation=Optional[str],  # noqa: UP045
        default=typer.Option(None, "--args", metavar="JSON",
                             help="All arguments as one JSON object")))

    def command(**kwargs: Any) -> None:
        argv = [spec.name]
        operand_values = [kwargs.pop(f"operand_{i}_", None) for i in range(len(operands))]
        for key, value in kwargs.items():
            if value is None:
                continue
            if key in switches:
                argv += [switches[key]] if value else []
            elif key == "args":
                argv += ["--args", value]
            elif isinstance(value, bool):
                argv.append(f"--{key}" if value else f"--no-{key}")
            else:
                argv.append(f"--{key}={value}")
        given = [value for value in operand_values if value is not None]
        if given:
            argv += ["--", *given]
        raise typer.Exit(run_argv(argv))

    command.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    command.__annotations__ = annotations
    command.__doc__ = spec.doc
    command.__name__ = spec.name
    return command


def _invocation(spec: ToolSpec | DialectHelp) -> str:
    """How a command line names the tool: ``read_file``, ``--dialect claude Read``."""
    return f"--dialect {spec.dialect} {spec.name}" if isinstance(spec, DialectHelp) else \
        spec.name


def _epilog(spec: ToolSpec | DialectHelp) -> str:
    paragraphs = [plain_literals(" ".join(p.split()))
                  for p in spec.details.split("\n\n") if p.strip()]
    required = {name: f"<{name}>" for name, f in spec.params.fields().items() if f.required}
    example = json.dumps(required)
    paragraphs.append(f"Example: echo '{example}' | zbtools {_invocation(spec)}")
    if spec.operands:
        bare = " ".join(shown for _, shown in spec.operand_placeholders())
        flags = " ".join(f"--{op.replace('_', '-')} {shown}"
                         for op, shown in spec.operand_placeholders())
        paragraphs.append(f"Operand: zbtools {spec.name} {bare} is zbtools {spec.name} {flags}; "
                          "after --, a value may start with -.")
    return "\n\n".join(paragraphs)


HELP_NAMES = next(opt.names for opt in GLOBAL_OPTIONS if opt.attr == "help")
HELP_OPTIONS = sorted(HELP_NAMES, key=len)  # -h, then --help


def _global_options() -> Callable[..., None]:
    """The app's callback: the global options (``zbtools.options``) as Typer sees them. Only
    ``--version`` acts here; a command's argv goes back through the parser with them."""
    parameters = []
    annotations: dict[str, Any] = {}
    for opt in GLOBAL_OPTIONS:
        if not opt.in_help:
            continue
        if opt.takes_value:
            default = typer.Option(None, *opt.names, help=opt.help, metavar=opt.metavar,
                                   autocompletion=_offer(opt.choices) if opt.choices else None)
            annotations[opt.attr] = Optional[str]  # noqa: UP045 - typer needs a runtime object
        else:
            default = typer.Option(False, *opt.names, help=opt.help)
            annotations[opt.attr] = bool
        parameters.append(inspect.Parameter(opt.attr, inspect.Parameter.KEYWORD_ONLY,
                                            default=default, annotation=annotations[opt.attr]))

    def main(**values: Any) -> None:
        if values.get("version"):
            typer.echo(f"zbtools {__version__}")
            raise typer.Exit(0)

    main.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    main.__annotations__ = annotations
    main.__doc__ = "zbtools: read, write, edit and search files for agents, scripts and CI."
    return main


def _word_help(name: str) -> str:
    """The ``--help`` of the command word ``name``, as ``zbtools.options`` declares it."""
    word: CommandWord = next(w for w in COMMAND_WORDS if w.name == name)
    return plain_literals(word.help)


def _dialect_tools(name: str | None) -> list[DialectTool]:
    """The own tools of the dialect ``name`` (none for the canonical one, or an unknown one:
    the call itself reports that)."""
    from zbtools.contract import ToolError
    from zbtools.dialects import DEFAULT_DIALECT, get_dialect

    if not name:
        return []
    try:
        chosen = get_dialect(name, os.environ)
    except ToolError:
        return []
    return [] if chosen.name == DEFAULT_DIALECT else chosen.tools()


class DialectHelp:
    """A dialect's own tool as its ``--help`` shows it: its name, description and parameters
    (a canonical tool's operands only where it takes the canonical parameters)."""

    def __init__(self, tool: DialectTool) -> None:
        self.name = tool.name
        self.dialect = tool.dialect.name if tool.dialect is not None else ""
        self.params = tool.params
        self.doc = tool.description
        self.details = f"Runs zbtools' {tool.spec.name} (zbtools {tool.spec.name} --help)."
        self.operands = () if tool.declares_params else tool.spec.operands
        self._placeholders = () if tool.declares_params else tool.spec.operand_placeholders()

    def operand_placeholders(self) -> tuple[tuple[str, str], ...]:
        return tuple(self._placeholders)


def build_app(run_argv: Callable[[list[str]], int], rich: bool = True,
              dialect: str | None = None) -> typer.Typer:
    """The app; its commands hand their argv to ``run_argv`` and exit with its status.
    ``dialect``: its own tools are commands too, each with its own parameters (a name it shares
    with a canonical tool is the dialect's)."""
    from zbtools.dialects.definitions import FORMATS as SCHEMA_FORMATS
    from zbtools.registry import all_tools

    app = typer.Typer(
        name="zbtools",
        # On a pipe (an agent or a script reading the help) plain text, without loading rich's
        # help renderer and its markdown parser: 60 ms of a 180 ms --help.
        rich_markup_mode="rich" if rich else None,
        help="The standard coding-agent tools: JSON in, JSON out. `zbtools TOOL --help` "
        "explains one tool.",
        epilog=EPILOG,
        no_args_is_help=True,
        # `zbtools completion SHELL` prints the script; typer's --install-completion and
        # --show-completion guess the shell and fail through zbtools' own argv, so they are off.
        add_completion=False,
        pretty_exceptions_enable=False,
        # -h as well: the fast path sends "-h" here as help (zbtools.dispatch.split_command_line)
        context_settings={"help_option_names": HELP_OPTIONS},
    )

    app.callback()(_global_options())

    for spec in all_tools():
        app.command(name=spec.name, help=plain_literals(spec.doc.split("\n\n", 1)[0]),
                    epilog=_epilog(spec))(
            _make_command(spec, run_argv))
        for alias in spec.aliases:
            app.command(name=alias, help=f"Alias of {spec.name}.", hidden=True)(
                _make_command(spec, run_argv))
    for tool in _dialect_tools(dialect):
        shown = DialectHelp(tool)
        app.command(name=tool.name, help=plain_literals(shown.doc.split("\n\n", 1)[0]),
                    epilog=_epilog(shown))(_make_command(shown, run_argv))

    @app.command(name="help", help=_word_help("help"))
    def help_command(tool: Optional[str] = typer.Argument(  # noqa: UP045
            None, metavar="TOOL", help="A tool (or command) name",
            autocompletion=_tool_names)) -> None:
        raise typer.Exit(run_argv([*([tool] if tool else []), "--help"]))

    @app.command(name="completion", help=_word_help("completion"))
    def completion_cmd(shell: str = typer.Argument(
            ..., metavar="SHELL", help=choice_list(SHELLS),
            autocompletion=_offer(SHELLS))) -> None:
        raise typer.Exit(run_argv(["completion", shell]))

    @app.command(name="tools", help=_word_help("tools"))
    def tools_command() -> None:
        raise typer.Exit(run_argv(["tools"]))

    def _globals(ctx: typer.Context) -> list[str]:
        params = ctx.parent.params if ctx.parent is not None else {}
        argv: list[str] = []
        for key in ("workspace", "dialect", "approval"):
            if params.get(key):
                argv += [f"--{key}", str(params[key])]
        return argv

    @app.command(name="schema", help=_word_help("schema"))
    def schema_command(
        ctx: typer.Context,
        tools: Optional[list[str]] = typer.Argument(  # noqa: B008, UP045
            None, metavar="TOOL", autocompletion=_tool_names,
            help="Only these tools (dialect or canonical names), in this order"),
        format: str = typer.Option(
            SCHEMA_FORMATS[0], "--format", metavar="FORMAT", help=choice_list(SCHEMA_FORMATS),
            autocompletion=_offer(SCHEMA_FORMATS)),
    ) -> None:
        raise typer.Exit(run_argv([*_globals(ctx), "schema", "--format", format,
                                         *(tools or [])]))

    @app.command(name="prompt", help=_word_help("prompt"))
    def prompt_command(
        ctx: typer.Context,
        tools: Optional[list[str]] = typer.Argument(  # noqa: B008, UP045
            None, metavar="TOOL", help="Only these tools", autocompletion=_tool_names),
    ) -> None:
        raise typer.Exit(run_argv([*_globals(ctx), "prompt", *(tools or [])]))

    @app.command(name="batch", help=_word_help("batch"))
    def batch_command(ctx: typer.Context) -> None:
        raise typer.Exit(run_argv([*_globals(ctx), "batch"]))

    @app.command(name="serve", help=_word_help("serve"))
    def serve_command(
        idle: Optional[float] = typer.Option(  # noqa: UP045
            None, "--idle", metavar="SECONDS", help="Stop after this long without a call "
            f"({SERVE_IDLE_SECONDS})"),
        status: bool = typer.Option(False, "--status", help="Describe the running server "
                                    "(exit 1: none)"),
        stop: bool = typer.Option(False, "--stop", help="Stop the running server (exit 1: "
                                  "none)"),
    ) -> None:
        argv = ["serve"] + (["--idle", repr(idle)] if idle is not None else [])
        raise typer.Exit(run_argv(argv + ["--status"] * status + ["--stop"] * stop))

    @app.command(name="mcp", help=_word_help("mcp"))
    def mcp_command(ctx: typer.Context) -> None:
        raise typer.Exit(run_argv([*_globals(ctx), "mcp"]))

    return app


class _NamedArgument(TyperArgument):
    """An argument shown by its placeholder alone: ``PATTERN``, where typer would add the
    Python type (``PATTERN <str>``) whatever the metavar says."""

    def display_type_rich(self, ctx: Any) -> str | None:
        return None


class _Switch(TyperOption):
    """A switch, shown without a value: the rich help would show ``<bool>`` as if it took
    one."""

    def display_type_rich(self, ctx: Any) -> str | None:
        return None


def click_command(app: typer.Typer) -> Any:
    """``app`` as click runs it (what ``app(...)`` builds), every parameter shown by the name
    of its value, never by its Python type: arguments by their placeholder alone, switches
    with none."""
    command = typer.main.get_command(app)
    subcommands = getattr(command, "commands", {}).values()
    for sub in (command, *subcommands):
        # --help too: click makes it once per command, on first use (here)
        helper = sub.get_help_option(typer.Context(sub, help_option_names=HELP_OPTIONS))
        for param in (*sub.params, helper):
            if type(param) is TyperArgument and param.metavar:
                param.__class__ = _NamedArgument
            elif type(param) is TyperOption and param.is_flag:
                param.__class__ = _Switch
    return command


def completion_script(shell: str) -> str:
    """typer's completion script for ``shell`` (what ``completions/`` holds)."""
    from typer._completion_shared import get_completion_script

    return get_completion_script(prog_name="zbtools", complete_var=COMPLETE_VAR,
                                 shell=shell) + "\n"


def completion_command(rest: list[str], streams: Streams) -> int:
    """``zbtools completion bash|zsh|fish``: print the script, like ``gh completion -s bash``."""
    from zbtools.contract import ToolError

    if len(rest) != 1 or rest[0] not in SHELLS:
        raise ToolError("usage_error", f"completion needs one shell: {choice_list(SHELLS)}",
                        hint='e.g. eval "$(zbtools completion bash)" in ~/.bashrc')
    streams.stdout.write(completion_script(rest[0]))
    streams.stdout.flush()
    return 0


def error_code_table() -> str:
    return "\n".join(f"{code} (exit {exit_code}): {meaning}"
                     for code, (exit_code, meaning) in ERROR_CODES.items())


def run_typer(argv: list[str], streams: Streams, run_argv: Callable[[list[str]], int],
              dialect: str | None = None) -> int:
    """Run the Typer app on ``argv`` writing to ``streams``; return its exit status."""
    import contextlib

    app = build_app(run_argv, rich=streams.stdout_isatty, dialect=dialect)
    if COMPLETE_VAR in os.environ:
        # typer's completion protocol (the scripts of completions/), which add_completion=True
        # would have installed
        from typer._completion_classes import completion_init

        completion_init()
    with contextlib.redirect_stdout(streams.stdout), contextlib.redirect_stderr(streams.stderr):
        try:
            click_command(app).main(args=argv, prog_name="zbtools", standalone_mode=True)
        except SystemExit as exc:
            code = exc.code
            return code if isinstance(code, int) else (0 if code is None else 2)
    return 0


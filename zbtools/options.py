"""The program's own command line: its global options and command words, each declared once.

``GLOBAL_OPTIONS`` and ``COMMAND_WORDS`` are to the program what a tool's ``Params`` are to a
tool: the parser (``zbtools.dispatch.split_command_line``), ``--help`` (the Typer app of
``zbtools.surfaces.cli``), the man page (``zbtools.devgen``) and the shell completions generated
from that app all read them; nothing lists an option or a command word by hand. The exit statuses
are the contract's (``zbtools.contract.EXIT_STATUSES``).

On the hot path of every call: stdlib only, no imports at all.
"""

from __future__ import annotations


class GlobalOption:
    """One option of zbtools itself, valid before or after the tool name.

    ``names`` are its spellings (long first); ``attr`` the ``dispatch.Options`` attribute it
    sets. An option with a ``metavar`` takes a value (one of ``choices`` when given); without
    one it is a switch that sets ``attr`` to ``value``. ``shorthands`` are other switches that
    set the same attribute to a value of their own (``--json`` is ``--format json``). ``help``
    is the line ``--help`` shows, ``manual`` the man page's paragraph (reStructuredText);
    ``in_help``: whether the top-level ``--help`` lists it (``--args`` is listed per tool, and
    ``--help`` is Typer's own).
    """

    __slots__ = (
        "attr",
        "choices",
        "help",
        "in_help",
        "manual",
        "metavar",
        "names",
        "shorthands",
        "value",
    )

    def __init__(self, names: tuple[str, ...], attr: str, *, help: str, manual: str,
                 metavar: str | None = None, value: object = True,
                 choices: tuple[str, ...] = (), shorthands: dict[str, object] | None = None,
                 in_help: bool = True) -> None:
        self.names = names
        self.attr = attr
        self.metavar = metavar
        self.value = value
        self.choices = choices
        self.shorthands = shorthands or {}
        self.help = help
        self.manual = manual
        self.in_help = in_help

    @property
    def takes_value(self) -> bool:
        return self.metavar is not None

    @property
    def switch_names(self) -> tuple[str, ...]:
        """Every spelling that is a switch: its own names (when it takes no value) and its
        shorthands."""
        return (() if self.takes_value else self.names) + tuple(self.shorthands)


def choice_list(choices: tuple[str, ...]) -> str:
    """``a, b or c``: an option's values as a hint names them."""
    return f"{', '.join(choices[:-1])} or {choices[-1]}"


FORMATS = ("json", "text", "human")
APPROVAL_POLICIES = ("allow", "confirm", "deny")
COLORS = ("auto", "always", "never")
# the dialects zbtools.dialects implements, the first the default (``zblade``)
DIALECTS: tuple[str, ...] = ("zblade", "claude", "zkit", "fiz", "anthropic", "codex",
                             "gemini")

GLOBAL_OPTIONS: tuple[GlobalOption, ...] = (
    GlobalOption(
        ("--workspace", "-w"), "workspace", metavar="DIR",
        help="Workspace root (default $ZBTOOLS_WORKSPACE or the current directory)",
        manual="The workspace root (else ``$ZBTOOLS_WORKSPACE``, else the current directory)."),
    GlobalOption(
        ("--format",), "format", metavar="FORMAT", choices=FORMATS,
        shorthands={"--json": "json", "--text": "text", "--human": "human"},
        help="json, text or human (also --json, --text, --human)",
        manual="``json`` (the default when stdout is not a terminal), ``text`` (the "
        "model-facing rendering) or ``human`` (coloured, the default on a terminal); "
        "**--json**, **--text** and **--human** are short for them."),
    GlobalOption(
        ("--dialect",), "dialect", metavar="NAME", choices=DIALECTS,
        help=f"Tool dialect: {DIALECTS[0]} (default), {', '.join(DIALECTS[1:])} (else "
        "$ZBTOOLS_DIALECT)",
        manual="The tool dialect: tool and parameter names of another tool set ("
        + ", ".join(f"``{d}``" for d in DIALECTS) + ")."),
    GlobalOption(
        ("--args",), "args", metavar="JSON", in_help=False,
        help="All arguments as one JSON object",
        manual="All arguments as one JSON object."),
    GlobalOption(
        ("--approval",), "approval", metavar="POLICY", choices=APPROVAL_POLICIES,
        help="Command approval policy for this call: allow, confirm (ask on the terminal) or "
        "deny (else $ZBTOOLS_APPROVAL or [exec] approval)",
        manual="The command approval policy for this call: ``allow``, ``confirm`` (ask on the "
        "controlling terminal) or ``deny``; overrides ``ZBTOOLS_APPROVAL`` and the "
        "configuration file."),
    GlobalOption(
        ("--stdin",), "stdin",
        help="Read JSON arguments from stdin even with flags",
        manual="Read the JSON request from stdin even when flags or ``--args`` are given."),
    GlobalOption(
        ("--exit-status",), "exit_status",
        help="A yes/no exit status: 1 when a search or listing finds nothing, a command's own "
        "status for run_command and bash",
        manual="A yes/no exit status for a success: 1 when a search or listing finds nothing; "
        "for ``run_command`` and ``bash`` the command's own status (124 on a timeout, 128+N for "
        "signal N). The output is unchanged."),
    GlobalOption(
        ("--paths",), "paths", value="\n", shorthands={"-0": "\0", "--null": "\0"},
        help="Listings and searches: only the paths, one a line (notices on stderr); -0 "
        "(--null) ends each with NUL",
        manual="Listings and searches: print only the paths found, one a line (**-0**: each "
        "ended by NUL), with errors on stderr, and notices when something was missed (a file "
        "too large or unreadable, a result cut at a limit, a timeout, warnings)."),
    GlobalOption(
        ("--quiet", "-q"), "quiet",
        help="No notices (a file too large or unreadable, a result cut at a limit, warnings); "
        "errors are still shown",
        manual="Print no notices: nothing but errors on stderr beside **--paths**, and no "
        "warnings or notes of skipped files under the results of ``--format human``. Errors "
        "are still written and the exit status is unchanged; ``json`` and ``text`` output are "
        "the same."),
    GlobalOption(
        ("--color",), "color", metavar="WHEN", choices=COLORS,
        help="auto (default; honours NO_COLOR and FORCE_COLOR), always or never: colours of "
        "--format human",
        manual="``auto`` (the default: colours on a terminal, honouring ``NO_COLOR`` and "
        "``FORCE_COLOR``), ``always`` or ``never``, for ``--format human``."),
    GlobalOption(
        ("--debug",), "debug",
        help="Tracebacks on stderr",
        manual="Print tracebacks of internal errors on stderr."),
    GlobalOption(
        ("--version", "-V"), "version",
        help="Print the version",
        manual="Print the version."),
    GlobalOption(
        ("--help", "-h"), "help", in_help=False,
        help="Show this message and exit",
        manual="Show help for the program or for one tool."),
)
# ``--`` is no option but the man page lists it with them (split_command_line acts on it).
END_OF_OPTIONS = ("--", "The end of the options: what follows is the tool's operand.")


class CommandWord:
    """A first word that is not a tool: ``zbtools tools``, ``zbtools batch``, ...

    ``summary`` is its one line in ``--help`` and the man page (its ````literals```` shown
    plain in ``--help``); ``details`` the rest of its ``--help`` (plain text paragraphs);
    ``operand`` what follows it in the man page's entry (``help TOOL``); ``synopsis``: whether
    the man page's synopsis names it among the commands.
    """

    __slots__ = ("details", "name", "operand", "summary", "synopsis")

    def __init__(self, name: str, summary: str, details: str = "", *, operand: str = "",
                 synopsis: bool = True) -> None:
        self.name = name
        self.summary = summary
        self.details = details
        self.operand = operand
        self.synopsis = synopsis

    @property
    def help(self) -> str:
        """Its ``--help`` text: the summary, then the details."""
        return self.summary + ("\n\n" + self.details if self.details else "")


SERVE_IDLE_SECONDS = 1800  # how long ``zbtools serve`` waits for a call before it stops

COMMAND_WORDS: tuple[CommandWord, ...] = (
    CommandWord("tools", "List every tool with its aliases and summary."),
    CommandWord(
        "batch", "Run many calls in one process: JSON Lines on stdin, one result line per "
        "request.",
        'Each line is {"id": ..., "tool": "read_file", "args": {...}} ("name"/"arguments" work '
        "too); each result line is the usual envelope with \"id\" first, in request order. A "
        "malformed line yields an error line and processing continues; EOF ends with status 0. "
        'With --format text each envelope also carries "text", the rendering a model should '
        "see."),
    CommandWord(
        "mcp", "Serve the tools of the selected dialect over MCP on stdio (needs the mcp "
        "extra).",
        'Register it with an MCP client, e.g. in .mcp.json: {"mcpServers": {"zbtools": '
        '{"command": "zbtools", "args": ["--workspace", "/path/to/repo", "mcp"]}}}.\n\n'
        "Tool failures are MCP tool errors (isError) with the error code, message and hint."),
    CommandWord(
        "serve", "Keep a warm process that runs this user's one-shot calls of the reading "
        "tools.",
        "While it runs, zbtools TOOL ... processes of the same installation hand the calls of "
        "the search and file-reading tools (output not to a terminal) to it and print what it "
        "answers, from caches kept warm between calls; any other call, or one that finds it "
        "busy, runs in its own process as before. It prints one JSON line when it listens and "
        f"stops after --idle SECONDS without a call ({SERVE_IDLE_SECONDS}), on SIGTERM, or "
        "with zbtools serve --stop; zbtools serve --status describes it. ZBTOOLS_SERVER=off "
        "turns the hand-off off for a call; ZBTOOLS_SERVER=/path.sock chooses another "
        "socket."),
    CommandWord(
        "schema", "Print tool definitions ready for an API call (a JSON array), in the selected "
        "dialect.",
        "jsonschema: one draft 2020-12 document per tool; anthropic: {name, description, "
        "input_schema}; openai: {type: function, function: {name, description, parameters}}; "
        "openai-strict: the same with strict: true (every property required, optional ones "
        "nullable, every object closed); mcp: {name, description, inputSchema, annotations}."),
    CommandWord(
        "prompt", "Print the system-prompt snippet listing the tools of the selected dialect "
        "(markdown).",
        'The "Adding Tools to Your AI System Prompt" format of Zaguán Blade\'s tool reference: '
        'one line per tool with its arguments, then how to call one (<tool_call>{"name": ..., '
        '"arguments": ...}).'),
    CommandWord(
        "help", "Show the help of one tool (``zbtools help TOOL`` is ``zbtools TOOL --help``).",
        operand="TOOL", synopsis=False),
    CommandWord(
        "completion", 'Print the shell completion script: ``eval "$(zbtools completion bash)"``.',
        "Put that line in ~/.bashrc (zsh: ~/.zshrc with zsh; fish: zbtools completion fish > "
        "~/.config/fish/completions/zbtools.fish).",
        operand="SHELL", synopsis=False),
)
COMMANDS = tuple(word.name for word in COMMAND_WORDS)
# ``zbtools completion SHELL``: the shells, and the variable their scripts set to ask the program
# for candidates (``entry.main`` hands such a call to Typer)
SHELLS = ("bash", "zsh", "fish")
COMPLETE_VAR = "_ZBTOOLS_COMPLETE"
# Options a command word parses itself when they follow it (``schema --format openai``).
COMMAND_FLAGS: dict[str, set[str]] = {"schema": {"--format"}}

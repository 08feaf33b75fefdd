"""--help names every value (``PATH``, ``PATTERN``, ``N``, ``{a|b}``), never a Python type
(``<str>``), and the shell completions offer every value whose set is known: the dialects, the
formats, the tools after ``help`` and ``schema``, a tool's choices, a switch's two spellings.

The placeholders come from one function (``zbtools.core.call.flags.value_name``) over every
tool's parameters; completion is checked through the protocol the scripts of ``completions/``
speak (in process for every choice of every tool, in a real bash with the script loaded for a
few), and once each under a real subprocess and a pseudo-terminal."""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO, CliRunner
from tests.test_generated import _shim
from zbtools.core.call.args import FieldSpec, Struct, field
from zbtools.core.call.flags import value_name
from zbtools.dispatch import Streams
from zbtools.entry import help_and_completion, main_with_argv
from zbtools.options import COMPLETE_VAR, DIALECTS, FORMATS, GLOBAL_OPTIONS, SHELLS
from zbtools.registry import all_tools, find
from zbtools.surfaces.cli import build_app, click_command
from zbtools.toolspec import ToolSpec

# what typer writes when nothing names a value: <str>, <int>, <list[str]>, <bool>... (an
# example's "<path>" names a parameter: it is no type)
TYPE_PLACEHOLDER = re.compile(
    r"<(?:str|int|float|bool|bytes|text|integer|number|string|list\[[^>]*\])>", re.IGNORECASE)


@pytest.fixture(scope="module")
def app_help() -> Any:
    """``--help`` of one command through the app as the program runs it (built once)."""
    command = click_command(build_app(main_with_argv, rich=False))

    def show(*argv: str) -> str:
        out = io.StringIO()
        with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as done:
            command.main(args=[*argv, "--help"], prog_name="zbtools", standalone_mode=True)
        assert done.value.code == 0, (argv, out.getvalue())
        return out.getvalue()

    return show


def _flat(text: str) -> str:
    return " ".join(text.split())


# ---- placeholders -------------------------------------------------------------------------------


@pytest.mark.parametrize("tool,param,expected", [
    ("grep_search", "pattern", "PATTERN"),
    ("grep_search", "path", "PATH"),
    ("grep_search", "glob", "GLOB"),
    ("grep_search", "head_limit", "N"),
    ("grep_search", "timeout", "SECONDS"),
    ("grep_search", "output_mode", "{content|files_with_matches|count}"),
    ("grep_search", "case_insensitive", ""),  # a switch takes no value
    ("grep_search", "exclude_dirs", "JSON"),
    ("find_files_glob", "pattern", "GLOB"),  # its alias says what the pattern is
    ("codebase_search", "query", "PATTERN"),
    ("web_search", "query", "QUERY"),
    ("web_fetch", "url", "URL"),
    ("bash", "command", "COMMAND"),
    ("bash", "timeout_ms", "MS"),
    ("run_command", "cwd", "DIR"),
    ("bash_output", "id", "ID"),
    ("edit_notebook_cell", "cell_id", "ID"),
    ("edit_notebook_cell", "source", "TEXT"),  # the cell's text, not a path
    ("copy_file", "source", "PATH"),
    ("write_file", "content", "TEXT"),
    ("apply_edit", "patch", "PATCH"),
    ("find_symbol", "kind", "KIND"),  # too many choices to list in the placeholder
])
def test_each_value_is_named_for_what_it_is(tool: str, param: str, expected: str) -> None:
    spec = find(tool)
    assert spec is not None
    assert value_name(spec.params.fields()[param]) == expected


def test_a_field_may_name_its_value_itself() -> None:
    class Params(Struct):
        rev: str = field(help="A revision", metavar="REV")
        path: str = field(help="A file")

    fields: dict[str, FieldSpec] = Params.fields()
    assert value_name(fields["rev"]) == "REV"
    assert value_name(fields["path"]) == "PATH"
    spec = ToolSpec(name="show", params=Params, result=Params, run=lambda p, c: p, doc="Show.",
                    operand=("rev", "path"))
    assert spec.operand_placeholders() == [("rev", "REV"), ("path", "PATH")]


def test_every_tools_help_names_every_value(app_help: Any) -> None:
    """For every tool: no Python type in angle brackets anywhere, each flag that takes a value
    followed by its placeholder, each operand shown by its own."""
    for spec in all_tools():
        text = app_help(spec.name)
        assert not TYPE_PLACEHOLDER.search(text), (spec.name, TYPE_PLACEHOLDER.search(text))
        flat = _flat(text)
        for name, fspec in spec.params.fields().items():
            metavar = value_name(fspec)
            if not metavar:
                continue
            # (one-letter aliases are short flags, which the help lists first: -g, --glob)
            longs = [a for a in fspec.aliases if len(a) > 1]
            last = "--" + (longs[-1] if longs else name).replace("_", "-")
            assert f"{last} {metavar} " in flat, (spec.name, name, metavar)
        assert "--args JSON " in flat, spec.name
        usage = text.splitlines()[0]
        for _, shown in spec.operand_placeholders():
            assert f"[{shown}]" in usage, (spec.name, usage)


def test_the_programs_own_help_names_every_value(app_help: Any) -> None:
    top = _flat(app_help())
    for opt in GLOBAL_OPTIONS:
        if opt.takes_value and opt.in_help:
            assert f"{opt.names[0]} {opt.metavar} " in top, opt.names
    shown = {word: app_help(word) for word in ("help", "schema", "prompt", "completion")}
    for word, text in [("top", top), *shown.items()]:
        assert not TYPE_PLACEHOLDER.search(text), (word, text)
    assert "Usage: zbtools help [OPTIONS] [TOOL]" in shown["help"]
    assert "--format FORMAT " in _flat(shown["schema"])
    assert "Usage: zbtools completion [OPTIONS] {SHELL}" in shown["completion"]


def test_two_operands_of_one_kind_keep_their_names(app_help: Any) -> None:
    assert "Usage: zbtools move_file [OPTIONS] [SOURCE] [DESTINATION]" in app_help("move_file")
    assert "[GLOB]" in app_help("find_files_glob").splitlines()[0]


def test_help_through_a_real_subprocess(proc: CliRunner) -> None:
    call = proc("grep_search", "--help")
    assert call.code == 0, call.err
    assert not TYPE_PLACEHOLDER.search(call.out)
    flat = _flat(call.out)
    for text in ("[PATTERN]", "--regex PATTERN", "--directory PATH", "--include GLOB",
                 "--max-results N", "--output-mode {content|files_with_matches|count}"):
        assert text in flat, text


@pytest.mark.slow  # a pseudo-terminal and rich's renderer
def test_help_on_a_terminal_names_the_values(ws: Path) -> None:
    from tests.surfaces.test_terminal import on_terminal

    shown = on_terminal(ws, "grep_search", "--help", columns=160)
    assert shown.code == 0
    assert not TYPE_PLACEHOLDER.search(shown.plain), shown.plain
    for text in ("PATTERN", "GLOB", "{content|files_with_matches|count}", "SECONDS"):
        assert text in shown.plain, text


# ---- completion ---------------------------------------------------------------------------------


def _complete(monkeypatch: pytest.MonkeyPatch, shell: str, line: str) -> str:
    """What the program answers the script of ``completions/`` for ``shell`` asking about
    ``line`` (the words typed so far, the last one being completed)."""
    with monkeypatch.context() as patch:
        patch.setenv(COMPLETE_VAR, f"complete_{shell}")
        if shell == "bash":
            words = line.split()
            patch.setenv("COMP_WORDS", line)
            patch.setenv("COMP_CWORD", str(len(words) if line.endswith(" ") else len(words) - 1))
        else:
            patch.setenv("_TYPER_COMPLETE_ARGS", line)
            patch.setenv("_TYPER_COMPLETE_FISH_ACTION", "get-args")
        out, err = io.StringIO(), io.StringIO()
        code = help_and_completion([], Streams(None, out, err, stdin_isatty=False,
                                               stdout_isatty=False), os.environ)
    assert code == 0, err.getvalue()
    return out.getvalue()


def test_every_choice_of_every_tool_is_offered(monkeypatch: pytest.MonkeyPatch) -> None:
    """The invariant: after a flag whose values are a known set, exactly that set."""
    for spec in all_tools():
        for name, fspec in spec.params.fields().items():
            assert fspec.type is not None
            if fspec.type.kind != "literal":
                continue
            flag = "--" + name.replace("_", "-")
            offered = _complete(monkeypatch, "bash", f"zbtools {spec.name} {flag} ").split()
            assert offered == [str(c) for c in fspec.type.choices], (spec.name, name)


def test_the_programs_options_and_words_offer_their_values(
        monkeypatch: pytest.MonkeyPatch) -> None:
    def bash(line: str) -> list[str]:
        return _complete(monkeypatch, "bash", line).split()

    assert bash("zbtools --dialect ") == list(DIALECTS)
    assert bash("zbtools --format ") == list(FORMATS)
    assert bash("zbtools --approval d") == ["deny"]
    assert bash("zbtools --color ") == ["auto", "always", "never"]
    assert bash("zbtools completion ") == list(SHELLS)
    assert bash("zbtools schema --format openai") == ["openai", "openai-strict"]
    assert bash("zbtools help grep") == ["grep_search"]
    assert "batch" in bash("zbtools help ")  # help also explains the command words
    # schema takes the dialect's names: the dialect's tools come first
    assert bash("zbtools --dialect claude schema Gr") == ["Grep"]
    assert bash("zbtools --dialect claude help Gr") == []  # help knows canonical tools only
    monkeypatch.setenv("ZBTOOLS_DIALECT", "claude")
    assert bash("zbtools prompt Gl") == ["Glob"]
    # a switch: both spellings
    assert bash("zbtools grep_search x --no-fixed") == ["--no-fixed-strings"]
    assert set(bash("zbtools delete_file --rec")) == {"--recursive"}


@pytest.mark.parametrize("shell", ["zsh", "fish"])
def test_zsh_and_fish_are_offered_the_values_too(monkeypatch: pytest.MonkeyPatch,
                                                shell: str) -> None:
    """Their scripts (completions/) hold no list: they ask the program, which answers in each
    shell's own form."""
    script = (REPO / "completions" / ("_zbtools" if shell == "zsh" else "zbtools.fish"))
    assert f"{COMPLETE_VAR}=complete_{shell}" in script.read_text(encoding="utf-8")
    dialects = _complete(monkeypatch, shell, "zbtools --dialect ")
    modes = _complete(monkeypatch, shell, "zbtools grep_search --output-mode ")
    for value in DIALECTS:
        assert (f'"{value}"' if shell == "zsh" else f"{value}\n") in dialects, value
    for value in ("content", "files_with_matches", "count"):
        assert (f'"{value}"' if shell == "zsh" else f"{value}\n") in modes, value


@pytest.mark.slow  # a real bash running the real script, which starts zbtools each time
def test_bash_with_the_script_loaded_offers_the_values(tmp_path: Path) -> None:
    if shutil.which("bash") is None:
        pytest.skip("no bash")
    script = REPO / "completions" / "zbtools.bash"
    asked = [("zbtools", "--dialect", "''"), ("zbtools", "grep_search", "--output-mode", "f"),
             ("zbtools", "help", "list_")]
    probe = f"source {str(script)!r}\n"
    for words in asked:
        probe += (f"COMP_WORDS=({' '.join(words)}); COMP_CWORD={len(words) - 1}; "
                  'COMPREPLY=(); _zbtools_completion zbtools; printf "%s\\n" "${COMPREPLY[@]}"; '
                  "echo ---\n")
    env = dict(os.environ, PATH=f"{_shim(tmp_path)}:{os.environ.get('PATH', '')}")
    done = subprocess.run(["bash", "--norc", "--noprofile", "-c", probe], env=env,
                          capture_output=True, text=True, timeout=60, check=True)
    dialects, modes, tools, _ = done.stdout.split("---\n")
    assert dialects.split() == list(DIALECTS)
    assert modes.split() == ["files_with_matches"]
    assert tools.split() == ["list_directory", "list_processes"]


def test_completion_offers_the_dialects_own_tools_and_flags(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``--dialect claude`` typed before the tool (or ``$ZBTOOLS_DIALECT``): Claude's tools
    are offered, and then their own flags."""
    assert "Grep" in _complete(monkeypatch, "bash", "zbtools --dialect claude Gr").split()
    assert "-B" in _complete(monkeypatch, "bash", "zbtools --dialect claude Grep -").split()
    monkeypatch.setenv("ZBTOOLS_DIALECT", "claude")
    assert "Grep" in _complete(monkeypatch, "bash", "zbtools Gr").split()
    monkeypatch.delenv("ZBTOOLS_DIALECT")
    assert "Grep" not in _complete(monkeypatch, "bash", "zbtools Gr").split()

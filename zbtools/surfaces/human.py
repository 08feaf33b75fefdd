"""``--format human``: coloured rendering with rich for a person at a terminal (lazy import).

Reads are highlighted with line numbers, searches drawn as ``rg`` draws them, diffs coloured, a
foreground command's output shown as it comes, processes as a table and plans as a checklist;
other results fall back to the text rendering (``zbtools.textout``), in the terminal's own
palette and background, with colours following ``--color``, ``NO_COLOR`` and ``FORCE_COLOR``
(docs/shell.md#a-person-at-a-terminal). Every string from content goes through ``visible``
(``zbtools.core.call.terminal``) before rich sees it, so only rich's own styling reaches the
terminal (docs/shell.md#control-characters-from-content-are-shown-not-run). A surface: never
imports another surface.

* ``render_human``: one envelope, as a person should see it.
* ``live_output``: a foreground command's output streamed while it runs.
* ``tools_table``: the ``zbtools tools`` listing; ``diff_text``: a unified diff, coloured.
* ``console_colors``: rich's console options for a ``--color`` value.
"""

from __future__ import annotations

from zbtools.core.call.terminal import visible, visible_name
from zbtools.textout import as_flags

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from rich.console import Console
    from rich.text import Text

    from zbtools.core.call.context import Context
    from zbtools.dispatch import Streams
    from zbtools.toolspec import ToolSpec


def console_colors(color: str | None) -> dict[str, Any]:
    """rich Console arguments for ``--color``."""
    if color == "always":
        return {"force_terminal": True, "no_color": False}
    if color == "never":
        return {"color_system": None}
    return {}


def live_output(spec: ToolSpec, ctx: Context, streams: Streams) -> None:
    """For a command run in the foreground: write its output to the terminal as it comes
    (stdout to stdout, stderr to stderr); ``render_human`` then prints only how it ended."""
    if spec.category != "commands":
        return
    ctx.output_sink = _LiveOutput(ctx, streams)


class _LiveOutput:
    """The sink of a command's output: decoded as it comes and shown with its control characters
    made visible. A carriage return that ends a chunk waits for the next one, where a newline may
    follow it (a CRLF line end, shown as one). ``finish`` ends an unfinished last line, so that
    how the command ended starts a line of its own."""

    def __init__(self, ctx: Context, streams: Streams) -> None:
        import codecs

        self.ctx = ctx
        self.streams = streams
        self.decoders = {"stdout": codecs.getincrementaldecoder("utf-8")("replace"),
                         "stderr": codecs.getincrementaldecoder("utf-8")("replace")}
        self.pending = {"stdout": "", "stderr": ""}
        self.at_line_start = True

    def __call__(self, stream: str, data: bytes) -> None:
        text = self.pending[stream] + self.decoders[stream].decode(data)
        self.pending[stream] = "\r" if text.endswith("\r") else ""
        if self.pending[stream]:
            text = text[:-1]
        out = self.streams.stdout if stream == "stdout" else self.streams.stderr
        if text:
            out.write(visible(text))
            out.flush()
            self.at_line_start = text.endswith("\n")
        self.ctx.output_shown = True

    def finish(self) -> None:
        """Show what is still held: the decoders' partial characters, a final carriage return."""
        for stream in ("stdout", "stderr"):
            text = self.pending[stream] + self.decoders[stream].decode(b"", final=True)
            self.pending[stream] = ""
            if text:
                out = self.streams.stdout if stream == "stdout" else self.streams.stderr
                out.write(visible(text))
                out.flush()
                self.at_line_start = text.endswith("\n")
        if not self.at_line_start:
            self.streams.stdout.write("\n")
            self.streams.stdout.flush()
            self.at_line_start = True


def render_human(spec: ToolSpec | None, tool: str | None, envelope: dict[str, Any],
                 result_obj: Any, ctx: Context | None, streams: Streams,
                 color: str | None = None, arguments: dict[str, Any] | None = None, *,
                 quiet: bool = False) -> None:
    """``color``: ``always`` (even off a terminal, and over ``NO_COLOR``), ``never`` (no ANSI
    styling at all), else ``auto``: rich's own choice, which honours ``NO_COLOR`` and
    ``FORCE_COLOR``. ``arguments``: the call's, for the matches a search highlights.
    ``quiet`` (``-q``): no warnings and no notes of what was skipped (an error is shown)."""
    from rich.console import Console
    from rich.text import Text

    from zbtools.textout import render_text

    finish = getattr(ctx.output_sink, "finish", None) if ctx is not None else None
    if finish is not None:
        finish()
    if not envelope["ok"]:
        _error(Console(file=streams.stderr, highlight=False, soft_wrap=True,
                       **console_colors(color)), envelope["error"])
        return
    result_obj = _noticed(result_obj, quiet)
    if quiet:
        envelope = dict(envelope, warnings=[])
    console = Console(file=streams.stdout, highlight=False, soft_wrap=True,
                      **console_colors(color))
    result = envelope["result"]
    warnings = envelope.get("warnings", [])
    if not isinstance(result, dict):
        console.print(Text(visible(render_text(spec, tool, envelope, result_obj, ctx))), end="")
        return
    if ("content" in result and "path" in result and result["content"]
            and ("start_line" in result or "first_line" in result)):
        _read(console, result)
    elif _is_plan(result):
        _checklist(console, result["steps"], result.get("explanation"))
    elif _is_grep(result):
        _grep(console, result, spec, arguments,
              render_text(spec, tool, dict(envelope, warnings=[]), result_obj, ctx))
    elif isinstance(result.get("processes"), list) and result["processes"]:
        _processes(console, result["processes"])
    elif spec is not None and spec.category == "commands" and ctx is not None \
            and ctx.output_shown and "exit_code" in result:
        _command_end(console, spec, result_obj, envelope, ctx)
    elif isinstance(result.get("diff"), str) and result["diff"]:
        text = render_text(spec, tool, dict(envelope, warnings=[]), result_obj, ctx)
        head, sep, tail = text.partition(result["diff"])
        console.print(Text(visible(head)), end="")
        if sep:
            console.print(diff_text(sep), end="")
            console.print(Text(visible(tail)), end="")
    else:
        text = render_text(spec, tool, envelope, result_obj, ctx)
        if spec is not None and tool in spec.names and spec.category != "commands":
            text = _flagged_notes(text, list(spec.params.fields()))
        console.print(Text(visible(text)), end="")
        return  # the text rendering carries the warnings
    for warning in warnings:
        console.print(Text.assemble(("warning:", "yellow"), " ", visible(str(warning))))


def _is_note(line: str) -> bool:
    """A ``[...]`` line of a text rendering: what was cut or skipped, how to go on."""
    return line.startswith("[") and line.endswith("]")


def _flagged_notes(text: str, names: list[str]) -> str:
    """The ``[...]`` notes that end a rendering (before its ``warning:`` lines, which
    ``shell_envelope`` wrote already), their parameters written as flags (``as_flags``); what
    comes before them (a listing, file names) is left as it is."""
    lines = text.split("\n")
    at = len(lines) - 1 if lines[-1] == "" else len(lines)
    while at > 0 and (_is_note(lines[at - 1]) or lines[at - 1].startswith("warning: ")):
        at -= 1
    return "\n".join(lines[:at] + [as_flags(line, names) if _is_note(line) else line
                                    for line in lines[at:]])


def _noticed(result_obj: Any, quiet: bool) -> Any:
    """The result as a person is told about it: its ``skipped`` counts reduced to what they
    might have wanted (too large, unreadable), or to nothing under ``-q``; the ignore files,
    the hidden-file default and the excluded directories are the normal result, not news
    (docs/shell.md#what-is-said-on-stderr). The JSON result keeps every count."""
    missed = getattr(getattr(result_obj, "skipped", None), "missed", None)
    if missed is None:
        return result_obj
    import copy

    shown = copy.copy(result_obj)
    shown.skipped = missed() if not quiet else type(result_obj.skipped)()
    return shown


def _error(console: Console, error: dict[str, Any]) -> None:
    """``error[code]`` in red, the hint in yellow, then what the text rendering shows beside
    them (the problems, an ambiguous edit's candidates, the diff against the closest match)."""
    from rich.text import Text

    from zbtools.textout import render_error

    head = f"error[{error['code']}]: {error['message']}\n"
    console.print(Text.assemble((f"error[{error['code']}]", "bold red"), ": ",
                                visible(str(error["message"]))))
    if error.get("hint"):
        head += f"hint: {error['hint']}\n"
        console.print(Text.assemble(("hint:", "yellow"), " ", visible(str(error["hint"]))))
    rest = render_error(error)
    rest = rest[len(head):] if rest.startswith(head) else ""
    diff = (error.get("details") or {}).get("diff")
    before, sep, after = rest.partition(diff) if isinstance(diff, str) and diff else \
        (rest, "", "")
    console.print(Text(visible(before)), end="")
    if sep:
        console.print(diff_text(sep), end="")
        console.print(Text(visible(after)), end="")


def _read(console: Console, result: dict[str, Any]) -> None:
    from rich.syntax import Syntax

    start = result.get("first_line") or result.get("start_line") or 1
    from rich.text import Text

    lexer = Syntax.guess_lexer(result["path"], code=result["content"][:4096])
    code = visible(result["content"].replace("\r\n", "\n"))
    # The final newline ends the last line; it does not start a numbered empty one.
    code = code[:-1] if code.endswith("\n") else code
    # The ANSI palette on the terminal's own background: readable on dark and light terminals,
    # and no line is padded to the terminal's width.
    console.print(Syntax(code, lexer, theme="ansi_dark", background_color="default",
                         line_numbers=True, start_line=start, word_wrap=False))
    if result.get("truncated"):
        more = result.get("next_offset") or result.get("next_start_line")
        console.print(Text(f"… more lines follow; continue at line {more}", style="dim"))


def _is_plan(result: dict[str, Any]) -> bool:
    steps = result.get("steps")
    return isinstance(steps, list) and bool(steps) and all(
        isinstance(s, dict) and "status" in s and "title" in s for s in steps)


def _is_grep(result: dict[str, Any]) -> bool:
    return "output_mode" in result and isinstance(result.get("matches"), list) and all(
        isinstance(m, dict) and {"path", "line", "text"} <= m.keys() for m in result["matches"])


def diff_text(diff: str) -> Text:
    """A unified diff in the colours of ``git diff``: removals red, additions green."""
    from rich.text import Text

    out = Text()
    for line in diff.splitlines(keepends=True):
        if line.startswith(("+++", "---")):
            style = "bold"
        elif line.startswith("+"):
            style = "green"
        elif line.startswith("-"):
            style = "red"
        elif line.startswith("@@"):
            style = "cyan"
        else:
            style = ""
        out.append(visible(line), style=style)
    if diff and not diff.endswith("\n"):
        out.append("\n")
    return out


def _matcher(spec: ToolSpec | None, arguments: dict[str, Any] | None) -> Any:
    """The call's pattern, compiled as the search compiled it, or None."""
    if spec is None or not arguments:
        return None
    try:
        from zbtools.core.call.args import validate
        from zbtools.core.search.engine import compile_pattern

        params: Any = validate(spec.params, arguments)
        return compile_pattern(params.pattern,
                               ignore_case=getattr(params, "case_insensitive", False),
                               fixed_strings=getattr(params, "fixed_strings", False))
    except Exception:  # a dialect's spelling, an odd pattern: no highlighting, same text
        return None


def _highlighted(text: str, pattern: Any) -> Text:
    """The line with the pattern's matches in bold red: matched on the line as it is, then
    each piece made visible (a control character may be part of a match)."""
    from rich.text import Text

    out = Text()
    if pattern is None:
        return Text(visible(text))
    pos = shown = 0
    for _ in range(200):  # a line holds at most 500 characters; enough for any real line
        try:
            m = pattern.search(text, pos, timeout=0.05)
        except Exception:
            break
        if m is None or (m.end() == m.start() and m.start() >= len(text)):
            break
        if m.end() > m.start():
            out.append(visible(text[shown:m.start()]))
            out.append(visible(text[m.start():m.end()]), style="bold red")
            shown = m.end()
        pos = m.end() if m.end() > m.start() else m.start() + 1
    out.append(visible(text[shown:]))
    return out


def _grep(console: Console, result: dict[str, Any], spec: ToolSpec | None,
          arguments: dict[str, Any] | None, text: str) -> None:
    """rg's terminal layout: the path as a heading, ``N:line`` for matches, ``N-line`` for
    context, ``--`` between groups, a blank line between files; the text form's notices."""
    from rich.text import Text

    mode = result["output_mode"]
    path_style = "magenta"
    if mode == "files_with_matches":
        for path in result.get("files", []):
            console.print(Text(visible_name(path), style=path_style))
    elif mode == "count":
        for c in result.get("counts", []):
            console.print(Text.assemble((visible_name(c["path"]), path_style), ":",
                                        str(c["count"])))
    else:
        pattern = _matcher(spec, arguments)
        rows: dict[str, dict[int, tuple[str, str]]] = {}
        # show_scope: a heading before each match whose enclosing definition differs from the
        # previous match's in its file (files_without_scope get none)
        unscoped = result.get("files_without_scope")
        headings: dict[str, dict[int, str]] = {}
        last_scope: dict[str, str] = {}
        for m in result["matches"]:
            lines = rows.setdefault(m["path"], {})
            before = m.get("before") or []
            if isinstance(unscoped, list) and m["path"] not in unscoped:
                label = _scope_heading(m.get("scope"))
                if last_scope.get(m["path"]) != label:
                    last_scope[m["path"]] = label
                    first = m["line"] - len(before)
                    at = next((n for n in range(first, m["line"]) if n not in lines), m["line"])
                    headings.setdefault(m["path"], {})[at] = label
            for i, line in enumerate(before):
                lines.setdefault(m["line"] - len(before) + i, ("-", line))
            own = m["text"].split("\n")
            for i, line in enumerate(own):
                lines[m["line"] + i] = (":", line)
            for i, line in enumerate(m.get("after") or []):
                lines.setdefault(m["line"] + len(own) + i, ("-", line))
        for index, (path, lines) in enumerate(rows.items()):
            if index:
                console.print()
            console.print(Text(visible_name(path), style=path_style))
            previous: int | None = None
            for number in sorted(lines):
                if previous is not None and number > previous + 1:
                    console.print(Text("--", style="dim"))
                heading = headings.get(path, {}).get(number)
                if heading is not None:
                    console.print(Text(visible(heading), style="cyan"))
                sep, line = lines[number]
                body = _highlighted(line, pattern) if sep == ":" else Text(visible(line))
                console.print(Text.assemble((str(number), "green"), sep, body))
                previous = number
    notes = [line for line in text.splitlines() if _is_note(line)]
    names = list(spec.params.fields()) if spec is not None else []
    for note in notes:
        console.print(Text(visible(as_flags(note, names)), style="dim"))


def _scope_heading(scope: Any) -> str:
    """``@@ method A.f (lines 2-4)``, or ``@@ top level``: grep's show_scope heading, in the
    words of its text rendering."""
    from zbtools.toolkit.grep import scope_label

    return "@@ " + scope_label(scope if isinstance(scope, dict) else None)


def _processes(console: Console, processes: list[dict[str, Any]]) -> None:
    from rich.table import Table
    from rich.text import Text

    table = Table(box=None, header_style="bold", pad_edge=False)
    for column in ("id", "status", "exit", "runtime", "pid", "output", "command"):
        table.add_column(column, justify="right" if column in ("runtime", "pid", "output")
                         else "left", overflow="fold")
    colours = {"running": "green", "exited": "", "killed": "red", "timed_out": "red"}
    for p in processes:
        end = str(p.get("exit_code")) if p.get("exit_code") is not None else (
            p.get("signal") or "")
        status = str(p.get("status", ""))
        table.add_row(Text(visible_name(str(p.get("id", "")))),
                      Text(visible(status), style=colours.get(status, "")),
                      Text(visible(str(end))), f"{(p.get('runtime_ms') or 0) // 1000}s",
                      str(p.get("pid") or ""), f"{p.get('bytes_total') or 0}B",
                      Text(visible(str(p.get("command", "")))))
    console.print(table)


def _command_end(console: Console, spec: ToolSpec, result_obj: Any, envelope: dict[str, Any],
                 ctx: Context) -> None:
    """A command whose output was shown as it came: only how it ended, in colour."""
    import copy

    from rich.text import Text

    from zbtools.textout import render_text

    quiet = copy.copy(result_obj)
    quiet.stdout = ""
    quiet.stderr = ""
    end = render_text(spec, spec.name, dict(envelope, warnings=[]), quiet, ctx).strip("\n")
    result = envelope["result"]
    ok = result.get("exit_code") == 0 and not result.get("timed_out")
    console.print(Text(visible(end), style="dim" if ok else "bold red"))


def tools_table(listing: list[dict[str, Any]], streams: Streams, color: str | None) -> None:
    """``zbtools tools`` at a terminal: a table of names, aliases, kind and summary."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    table = Table(box=None, header_style="bold", pad_edge=False)
    table.add_column("tool", no_wrap=True)
    table.add_column("kind", no_wrap=True)
    table.add_column("summary")
    for t in listing:
        kind = Text("reads", style="green") if t["read_only"] else Text(
            "changes", style="yellow" if t["destructive"] else "")
        name = Text(t["name"], style="bold cyan")
        if t["aliases"]:
            name.append("\n" + ", ".join(t["aliases"]), style="dim")
        summary = t["summary"].replace("``", "")
        first, dot, _ = summary.partition(". ")  # the first sentence: one or two lines
        table.add_row(name, kind, first + (dot.strip() if dot else ""))
    Console(file=streams.stdout, highlight=False, **console_colors(color)).print(table)


STEP_STYLES = {"completed": ("✔", "green"), "in_progress": ("▶", "bold yellow"),
               "pending": ("○", "dim")}


def _checklist(console: Any, steps: list[dict[str, Any]], explanation: str | None) -> None:
    from rich.text import Text

    done = sum(1 for s in steps if s["status"] == "completed")
    console.print(Text.assemble(("plan ", "bold"), f"{done}/{len(steps)} completed"))
    if explanation:
        console.print(Text(visible(str(explanation)), style="italic"))
    for number, step in enumerate(steps, 1):
        mark, style = STEP_STYLES.get(step["status"], ("?", ""))
        console.print(Text.assemble(f"{number:>3}. ", (mark, style), " ",
                                    (visible(str(step["title"])),
                                     style if step["status"] != "pending" else "")))

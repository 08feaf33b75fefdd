"""``--format human``: coloured rendering with rich for a person at a terminal (lazy import).

Reads are shown with syntax highlighting and line numbers; plans (a result with ``steps`` of
``{title, status}``) as a coloured checklist; other results use the text rendering; errors are
printed in red to stderr with the hint in yellow.

A surface: imports the text rendering (``zbtools.textout``), never another surface.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

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


def render_human(spec: ToolSpec | None, tool: str | None, envelope: dict[str, Any],
                 result_obj: Any, ctx: Context | None, streams: Streams,
                 color: str | None = None) -> None:
    """``color``: ``always`` (even off a terminal, and over ``NO_COLOR``), ``never`` (no ANSI
    styling at all), else ``auto``: rich's own choice, which honours ``NO_COLOR`` and
    ``FORCE_COLOR``."""
    from rich.console import Console
    from rich.markup import escape
    from rich.text import Text

    from zbtools.textout import render_text

    if not envelope["ok"]:
        error = envelope["error"]
        console = Console(file=streams.stderr, highlight=False, **console_colors(color))
        console.print(Text.assemble((f"error[{error['code']}]", "bold red"), ": ",
                                    error["message"]))
        if error.get("hint"):
            console.print(f"[yellow]hint:[/] {escape(error['hint'])}")
        for problem in error.get("details", {}).get("problems", [])[1:] if len(
                error.get("details", {}).get("problems", [])) > 1 else []:
            console.print(f"  - {escape(problem['message'])}")
        return
    console = Console(file=streams.stdout, highlight=False, **console_colors(color))
    result = envelope["result"]
    if (isinstance(result, dict) and "content" in result and "path" in result
            and ("start_line" in result or "first_line" in result) and result["content"]):
        from rich.syntax import Syntax

        start = result.get("first_line") or result.get("start_line") or 1
        lexer = Syntax.guess_lexer(result["path"], code=result["content"][:4096])
        code = result["content"].replace("\r\n", "\n")
        # The final newline ends the last line; it does not start a numbered empty one.
        code = code[:-1] if code.endswith("\n") else code
        console.print(Syntax(code, lexer, line_numbers=True, start_line=start, word_wrap=False))
        if result.get("truncated"):
            more = result.get("next_offset") or result.get("next_start_line")
            console.print(f"[dim]… more lines follow; continue at line {more}[/]")
        for warning in envelope.get("warnings", []):
            console.print(f"[yellow]warning:[/] {escape(warning)}")
        return
    steps = result.get("steps") if isinstance(result, dict) else None
    if isinstance(steps, list) and all(isinstance(s, dict) and "status" in s and "title" in s
                                       for s in steps) and steps:
        _checklist(console, steps, result.get("explanation"))
        for warning in envelope.get("warnings", []):
            console.print(f"[yellow]warning:[/] {escape(warning)}")
        return
    console.print(Text(render_text(spec, tool, envelope, result_obj, ctx)), end="")


STEP_STYLES = {"completed": ("✔", "green"), "in_progress": ("▶", "bold yellow"),
               "pending": ("○", "dim")}


def _checklist(console: Any, steps: list[dict[str, Any]], explanation: str | None) -> None:
    from rich.text import Text

    done = sum(1 for s in steps if s["status"] == "completed")
    console.print(Text.assemble(("plan ", "bold"), f"{done}/{len(steps)} completed"))
    if explanation:
        console.print(Text(explanation, style="italic"))
    for number, step in enumerate(steps, 1):
        mark, style = STEP_STYLES.get(step["status"], ("?", ""))
        console.print(Text.assemble(f"{number:>3}. ", (mark, style), " ",
                                    (str(step["title"]), style if step["status"] != "pending"
                                     else "")))

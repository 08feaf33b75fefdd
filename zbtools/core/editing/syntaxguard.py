"""The syntax guard every writer of file contents calls once the new bytes are known.

``check_changes`` takes each file's path and its bytes before (None: a new file) and after,
once every byte to write is known and before any is written: the one place where a change of
a file in a supported language meets ``core/code/syntax.py``
(docs/internals/code.md#syntax-guard). What it does follows the call's ``check_syntax`` (the
tool parameter, else the workspace's ``[files] check_syntax`` setting): ``off`` parses
nothing; ``warn`` lets the write happen, adds a warning a model reads and keeps a report for
the result's ``syntax`` field (``ToolSpec.call`` fills it); ``refuse`` raises ``syntax_error``
with every file's problems, so that nothing is written (all files of a patch, or none). A file
in no supported language, or too big to parse (``MAX_PARSE_BYTES``), is not checked.

Map: ``mode``, ``wanted``, ``check_changes``, ``check_change``.
"""

from __future__ import annotations

from zbtools.contract import ToolError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from zbtools.core.call.context import Context

SHOWN_PROBLEMS = 3  # problems a warning or an error message quotes (details hold them all)


def mode(ctx: Context) -> str:
    """``warn``, ``refuse`` or ``off``: the call's own choice, else the configured one."""
    return ctx.check_syntax or ctx.workspace.check_syntax


def wanted(ctx: Context, path: str, head: bytes = b"", size: int = 0) -> bool:
    """Whether a change of ``path`` (whose first bytes are ``head``, its new size ``size``) is
    checked at all: the guard is on, the file is in a supported language and not too big to
    parse. Lets a writer that holds its new bytes in pieces skip joining them."""
    if mode(ctx) == "off":
        return False
    from zbtools.core.code.languages import MAX_PARSE_BYTES, language_for

    return size <= MAX_PARSE_BYTES and language_for(path, head) is not None


def check_change(ctx: Context, path: str, before: bytes | None, after: bytes) -> None:
    """``check_changes`` for one file."""
    check_changes(ctx, [(path, before, after)])


def check_changes(ctx: Context, changes: Sequence[tuple[str, bytes | None, bytes]]) -> None:
    """Check each (path relative to the workspace, bytes before or None, bytes after) and act
    on what the changes introduced as the call's ``check_syntax`` says. Raises ``syntax_error``
    (refuse) before anything is written; else adds warnings and reports to ``ctx``."""
    how = mode(ctx)
    if how == "off":
        return
    from zbtools.core.code.languages import language_for

    reports: list[dict[str, Any]] = []
    for path, before, after in changes:
        if before == after:
            continue
        language = language_for(path, after[:256])
        if language is None:
            continue
        from zbtools.core.code.syntax import introduced

        # What the check keeps for the next edit of the file (its parse, its Python units)
        # pays only in a session (batch, mcp: a search cache); a one-shot call has no next
        # edit, and a process running many calls (a harness in Python) must not hold them.
        key = f"{ctx.workspace.root}\0{path}" if ctx.search_cache is not None else None
        problems = introduced(language, before, after, key=key)
        if problems:
            reports.append({"path": path, "language": language.name,
                            "introduced": [p.to_json() for p in problems]})
    if not reports:
        return
    if how == "refuse":
        raise _refusal(reports)
    for report in reports:
        ctx.warn(_warning(report))
    ctx.syntax_reports.extend(reports)


def _describe(report: dict[str, Any]) -> str:
    problems = report["introduced"]
    listed = "; ".join(f"line {p['line']}, column {p['column']}: {p['message']}"
                       for p in problems[:SHOWN_PROBLEMS])
    more = f" (and {len(problems) - SHOWN_PROBLEMS} more)" if len(problems) > SHOWN_PROBLEMS \
        else ""
    return f"{report['path']}: {listed}{more}"


def _label(report: dict[str, Any]) -> str:
    from zbtools.core.code.languages import LANGUAGES

    language = LANGUAGES.get(report["language"])
    return language.label if language is not None else report["language"]


def _warning(report: dict[str, Any]) -> str:
    first = report["introduced"][0]
    return (f"the change was written but introduced {_label(report)} parse errors in "
            f"{_describe(report)}; fix them in your next edit (the result's syntax field has "
            f"them all). Around line {first['line']} the file now reads:\n"
            f"{first['lines'].rstrip()}")


def _refusal(reports: list[dict[str, Any]]) -> ToolError:
    files = " and ".join(_describe(r) for r in reports[:3])
    first = reports[0]["introduced"][0]
    return ToolError(
        "syntax_error", f"the change would introduce parse errors: {files}; nothing was "
        "written",
        hint=f"fix the new text around line {first['line']} of {reports[0]['path']} (the "
        "details quote the lines) and send the call again; check_syntax: warn writes a "
        "change that breaks the parse (and says so), off does not check",
        details={"files": reports})

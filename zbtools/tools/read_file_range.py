"""Read a range of lines from a text file (1-indexed, inclusive), with optional context lines.

``start_line`` defaults to 1 and ``end_line`` to the end of the file; ``context_lines`` adds that
many lines before and after the range (clamped at the file's edges). The text rendering numbers
lines like ``cat -n``. The result reports the range actually returned, the file's line count and
its sha256 (for ``expected_sha256`` on later edits).

Failure modes: ``out_of_range`` when ``start_line`` lies past the end of the file (the message
and details give the line count); ``invalid_arguments`` when ``end_line`` < ``start_line``; an
``end_line`` past the end is clamped with a warning. The range is also cut at ``max_bytes``
(default 50 KB) or 2000 lines, with ``next_start_line`` to continue. Huge files are read in
bounded chunks and reading stops after the range, so a range in the middle of a 100 MB file costs
about what ``sed -n 'A,Bp;Bq'`` does; ``total_lines`` and ``sha256`` are then null.
Otherwise as read_file: ``not_found``, ``is_directory``, ``binary_file``, ``special_file``.
"""

from __future__ import annotations

from zbtools.contract import ToolError
from zbtools.core.call.args import Struct, field
from zbtools.core.files.lines import read_window
from zbtools.toolkit.params import PATH_ALIASES
from zbtools.toolspec import ToolSpec

TYPE_CHECKING = False
if TYPE_CHECKING:
    from zbtools.core.call.context import Context


class Params(Struct):
    path: str = field(aliases=PATH_ALIASES,
                      help="File path, relative to the workspace root or absolute inside it")
    start_line: int = field(default=1, minimum=1, help="First line of the range, 1-indexed")
    end_line: int | None = field(default=None, minimum=1,
                                 help="Last line of the range, inclusive (default: end of file)")
    context_lines: int = field(default=0, minimum=0, maximum=10000,
                               help="Extra lines to show before and after the range")
    max_lines: int | None = field(default=None, minimum=1,
                                  help="Most lines to return in this call (default 2000)")
    max_bytes: int | None = field(default=None, minimum=256,
                                  help="Most bytes of text to return (default 51200)")


class Result(Struct):
    path: str = field(help="The file, relative to the workspace root")
    content: str = field(help="The lines returned (context included), original line endings")
    start_line: int = field(help="First line of the requested range")
    end_line: int = field(help="Last line of the requested range actually returned")
    first_line: int = field(help="First line returned, context included")
    last_line: int = field(help="Last line returned, context included")
    total_lines: int | None = field(help="Lines in the file (null when not counted: huge files)")
    size: int = field(help="File size in bytes")
    sha256: str | None = field(help="SHA-256 of the file's bytes (null when not hashed)")
    encoding: str = field(help="Detected encoding")
    newline: str = field(help="Newline style: lf, crlf, cr, mixed or none")
    invalid_utf8: bool = field(help="Undecodable bytes are shown as U+FFFD")
    lines_cut: int = field(help="Lines shown cut at max_line_chars")
    truncated: bool = field(help="The range was cut by the size limits")
    next_start_line: int | None = field(help="Where to continue when truncated")


def run(params: Params, ctx: Context) -> Result:
    start, end, context = params.start_line, params.end_line, params.context_lines
    if end is not None and end < start:
        raise ToolError("invalid_arguments", f"end_line {end} is before start_line {start}",
                        hint="give end_line >= start_line, or omit end_line to read to the end",
                        details={"problems": [{"problem": "out_of_range", "argument": "end_line",
                                               "message": "end_line < start_line"}]})
    first = max(1, start - context)
    count = None if end is None else end + context - first + 1
    limits = ctx.limits
    count_cap = limits.max_lines  # per-call max_lines/max_bytes are applied to ctx.limits
    with ctx.workspace.resolve(params.path) as res:
        try:
            window = read_window(res, first, min(count or count_cap, count_cap),
                                 max_bytes=limits.max_bytes,
                                 max_line_chars=limits.max_line_chars)
        except ToolError as exc:
            if exc.code != "out_of_range":
                raise
            # the context start lies past the end too: report the start_line asked for
            raise _beyond(params.path, start, exc.details["total_lines"]) from None
        rel = res.rel
    total = window.total_lines
    if start > window.last and not window.has_more and not (total == 0 and start == 1):
        raise _beyond(params.path, start, total if total is not None else window.last)
    requested_last = end if end is not None else None
    last_in_range = min(window.last, requested_last) if requested_last else window.last
    if end is not None and total is not None and end > total:
        ctx.warn(f"end_line {end} is past the end of the file; returned lines up to {total}")
    truncated = window.has_more and (end is None or window.last < end + context)
    if window.invalid_utf8:
        ctx.warn("the file is not valid UTF-8: undecodable bytes are shown as U+FFFD")
    return Result(
        path=rel, content=window.content, start_line=start,
        end_line=max(min(last_in_range, window.last), start - 1), first_line=window.first,
        last_line=window.last, total_lines=total, size=window.size, sha256=window.sha256,
        encoding=window.encoding, newline=window.newline, invalid_utf8=window.invalid_utf8,
        lines_cut=window.capped_lines, truncated=truncated,
        next_start_line=window.last + 1 if truncated else None,
    )


def _beyond(path: str, start: int, known: int) -> ToolError:
    return ToolError("out_of_range", f"{path}: start_line {start} is beyond the end of the file, "
                     f"which has {known} line{'s' if known != 1 else ''}",
                     hint=f"use a start_line between 1 and {max(known, 1)}",
                     details={"total_lines": known, "start_line": start})


def render(result: Result) -> str:
    lines = result.content.split("\n")
    if result.content.endswith("\n"):
        lines.pop()
    out = "".join(f"{n:6}\t{line.removesuffix(chr(13))}\n"
                  for n, line in enumerate(lines, result.first_line))
    if result.total_lines == 0:
        return f"({result.path} is empty)\n"
    if result.truncated and result.next_start_line is not None:
        out += (f"[range cut at line {result.last_line} by the size limits; continue with "
                f"start_line={result.next_start_line}]\n")
    return out


TOOL = ToolSpec(
    name="read_file_range",
    doc=__doc__,
    params=Params,
    result=Result,
    run=run,
    operand="path",
    render_text=render,
    read_only=True,
    idempotent=True,
    parallel_safe=True,
)

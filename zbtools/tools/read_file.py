"""Read a text file, with line numbers, a page at a time.

Returns up to ``limit`` lines (default 2000) starting at line ``offset`` (1-based, default 1), at
most ``max_bytes`` (default 50 KB) of them; lines longer than 2000 characters are shown cut with
a marker. ``max_lines``/``max_bytes`` override the configured result limits for this
call. When more lines remain, ``truncated`` is true and ``next_offset`` is the line to continue
from. The result carries the file's ``sha256`` (pass it as ``expected_sha256`` to a later edit or
write to refuse it if the file changed meanwhile), its encoding, newline style and line count.
``hashes: true`` adds a short content hash per line (``line_hashes``; the text rendering
shows ``12:9f3a1c`` before the tab): pass ``anchor: "12:9f3a1c"`` to apply_edit to pin an edit to
that line, refused with ``stale_anchor`` if the line changed.

Limits and failure modes: ``not_found``, ``is_directory``, ``binary_file`` (NUL bytes in the
first 8 KiB), ``special_file`` (FIFOs, sockets and devices are never opened for reading),
``out_of_range`` (offset past the end; the details give the line count), ``outside_workspace``.
Files over 8 MiB are read in bounded chunks: only the requested window is decoded, and
``total_lines``/``sha256`` are null unless the window reaches the end of the file. Files that are
not UTF-8 are decoded with a detected encoding that round-trips exactly, else shown with U+FFFD
(``invalid_utf8: true``) while their bytes stay untouched.
"""

from __future__ import annotations

from zbtools.core.args import Struct, field
from zbtools.core.lines import read_window
from zbtools.registry import ToolSpec

TYPE_CHECKING = False
if TYPE_CHECKING:
    from zbtools.core.context import Context

PATH_ALIASES = ("file_path", "filepath", "filename")


class Params(Struct):
    path: str = field(aliases=PATH_ALIASES,
                      help="File path, relative to the workspace root or absolute inside it")
    offset: int | None = field(default=None, minimum=1,
                               help="First line to read, 1-based (default 1)")
    limit: int | None = field(default=None, minimum=1,
                              help="Number of lines to read (default 2000)")
    max_lines: int | None = field(default=None, minimum=1,
                                  help="Most lines to return in this call (default 2000)")
    max_bytes: int | None = field(default=None, minimum=256,
                                  help="Most bytes of text to return (default 51200)")
    hashes: bool = field(default=False,
                         help="Add a short hash per line (anchors for apply_edit's anchor)")


class Result(Struct):
    path: str = field(help="The file, relative to the workspace root")
    content: str = field(help="The lines read, with their original line endings")
    start_line: int = field(help="Line number of the first line returned")
    end_line: int = field(help="Line number of the last line returned (start_line - 1 if none)")
    total_lines: int | None = field(help="Lines in the file (null when not counted: huge files)")
    size: int = field(help="File size in bytes")
    sha256: str | None = field(help="SHA-256 of the file's bytes (null when not hashed)")
    encoding: str = field(help="Detected encoding, e.g. utf-8, utf-8-bom, utf-16-le, cp1252")
    newline: str = field(help="Newline style: lf, crlf, cr, mixed or none")
    invalid_utf8: bool = field(help="Undecodable bytes are shown as U+FFFD")
    lines_cut: int = field(help="Lines shown cut at max_line_chars")
    truncated: bool = field(help="More lines follow; continue at next_offset")
    next_offset: int | None = field(help="The offset to pass to read the next page")
    line_hashes: list[str] | None = field(
        help="With hashes: one 6-hex hash per returned line; anchor edits with 'LINE:HASH'")


def run(params: Params, ctx: Context) -> Result:
    limits = ctx.limits
    start = params.offset or 1
    cap = limits.max_lines  # a per-call max_lines is already applied to ctx.limits
    count = min(params.limit, cap) if params.limit else cap
    with ctx.workspace.resolve(params.path) as res:
        window = read_window(res, start, count, max_bytes=limits.max_bytes,
                             max_line_chars=limits.max_line_chars)
        rel = res.rel
    more = window.has_more
    if window.invalid_utf8:
        ctx.warn("the file is not valid UTF-8: undecodable bytes are shown as U+FFFD; edits "
                 "keep the original bytes")
    hashes = None
    if params.hashes:
        from zbtools.core.textio import line_hash

        hashes = [line_hash(line) for line in _lines(window.content)]
    return Result(
        path=rel, content=window.content, start_line=window.first, end_line=window.last,
        total_lines=window.total_lines, size=window.size, sha256=window.sha256,
        encoding=window.encoding, newline=window.newline, invalid_utf8=window.invalid_utf8,
        lines_cut=window.capped_lines, truncated=more,
        next_offset=window.last + 1 if more else None, line_hashes=hashes,
    )


def _lines(content: str) -> list[str]:
    lines = content.split("\n")
    if content.endswith("\n"):
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


def render_window_text(numbered: str, result: Result) -> str:
    """``cat -n`` lines plus a footer saying where the page stops and how to go on."""
    if result.total_lines == 0:
        return f"({result.path} is empty)\n"
    out = numbered
    total = f" of {result.total_lines}" if result.total_lines is not None else ""
    if result.truncated and result.next_offset is not None:
        out += (f"[showing lines {result.start_line}-{result.end_line}{total} of {result.path}; "
                f"continue with offset={result.next_offset}]\n")
    if result.lines_cut:
        out += f"[{result.lines_cut} long line(s) shown cut]\n"
    return out


def render(result: Result) -> str:
    lines = _lines(result.content)
    if result.line_hashes is not None:
        numbered = "".join(f"{n:6}:{h}\t{line}\n" for n, (line, h) in
                           enumerate(zip(lines, result.line_hashes, strict=True),
                                     result.start_line))
    else:
        numbered = "".join(f"{n:6}\t{line}\n" for n, line in enumerate(lines, result.start_line))
    return render_window_text(numbered, result)


TOOL = ToolSpec(
    name="read_file",
    doc=__doc__,
    params=Params,
    result=Result,
    run=run,
    render_text=render,
    read_only=True,
    idempotent=True,
    parallel_safe=True,
)

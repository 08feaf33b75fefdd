"""Read a text file with line numbers, a page at a time; also images (returned as base64), the
text of PDF pages and the cells of Jupyter notebooks. Failure modes: not_found, binary_file,
out_of_range, too_large, encrypted_pdf, no_text_layer, missing_dependency.

Returns up to ``limit`` lines (default 2000) starting at line ``offset`` (1-based, default 1), at
most ``max_bytes`` (default 50 KB) of them; lines longer than 2000 characters are shown cut with
a marker. ``max_lines``/``max_bytes`` override the configured result limits for this
call. When more lines remain, ``truncated`` is true and ``next_offset`` is the line to continue
from. The result carries the file's ``sha256`` (pass it as ``expected_sha256`` to a later edit or
write to refuse it if the file changed meanwhile), its encoding, newline style and line count.
``hashes: true`` adds a short content hash per line (``line_hashes``; the text rendering
shows ``12:9f3a1c`` before the tab): pass ``anchor: "12:9f3a1c"`` to apply_edit to pin an edit to
that line, refused with ``stale_anchor`` if the line changed.

``as_base64: true`` returns any file whole (binary, audio, video, an unknown format) as base64
``data`` with its ``mime`` type (from its magic bytes, else its name; ``kind: "binary"``), up
to ``max_base64_bytes`` (1 MiB by default, at most 16 MiB; a larger file is refused with
``too_large``, never cut); over MCP the bytes also come as a block: image, audio, or an
embedded resource with the file's URI. Audio and video files are never shown as text, even
without a NUL byte (``binary_file``).

Also reads images (PNG, JPEG, GIF, WebP, BMP: ``kind: "image"`` with ``mime``, ``width``,
``height`` and the bytes as base64 ``data``; SVG is text), PDFs (``kind: "pdf"``: the text of
each page, ``pages: "1-5,8"`` selects pages, ``page_count``) and Jupyter notebooks (``kind:
"notebook"``: cells in order with index, id, type, execution count, source and text outputs,
images in outputs summarised; ``raw: true`` shows the JSON instead; edit cells with
edit_notebook_cell). PDF and notebook text is paged like any text (offset, limit, max_bytes,
next_offset). Images over ``max_image_pixels`` (25 million) or ``max_image_bytes`` (5 MiB) are
refused with ``too_large`` unless ``downscale: true`` asks for a smaller copy;
``include_data: false`` gives the metadata only. Images and PDFs use Pillow and pypdf, which
every install of zbtools brings.

A result cut to the size limits names a spill file holding its full text (``full output saved
to /.../spill/NAME.txt``): read_file reads that absolute path too, although it lies outside the
workspace (only files directly in this workspace's spill folder).

Limits and failure modes: ``not_found``, ``is_directory``, ``binary_file`` (NUL bytes in the
first 8 KiB, and not an image or PDF), ``special_file`` (FIFOs, sockets and devices are never
opened for reading), ``out_of_range`` (offset or pages past the end), ``outside_workspace``,
``too_large``, ``unsupported_format`` (a corrupt image, PDF or notebook), ``encrypted_pdf``,
``no_text_layer`` (a scanned PDF), ``missing_dependency`` (Pillow or pypdf absent from the
install; the hint is the command that installs it).
Files over 8 MiB are read in bounded chunks: only the requested window is decoded, and
``total_lines``/``sha256`` are null unless the window reaches the end of the file. Files that are
not UTF-8 are decoded with a detected encoding that round-trips exactly, else shown with U+FFFD
(``invalid_utf8: true``) while their bytes stay untouched.
"""

from __future__ import annotations

import os

from zbtools.contract import ToolError
from zbtools.core.call.args import Struct, field
from zbtools.core.files.lines import read_window
from zbtools.toolkit.params import PATH_ALIASES
from zbtools.toolspec import ToolSpec

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Literal

    from zbtools.core.call.config import Limits
    from zbtools.core.call.context import Context
    from zbtools.core.files.workspace import Resolved, Workspace

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".jpe", ".gif", ".webp", ".bmp", ".dib")


def kind_by_name(name: str) -> str | None:
    """The reader a file name routes to (image, pdf, notebook), or None for text."""
    lower = name.lower()
    if lower.endswith(".ipynb"):
        return "notebook"
    if lower.endswith(".pdf"):
        return "pdf"
    if lower.endswith(IMAGE_SUFFIXES):
        return "image"
    return None


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
    pages: str | None = field(default=None,
                              help='PDF pages to read, e.g. "1-5,8" or "3-" (default all)')
    downscale: bool = field(default=False,
                            help="Images over the limits: return a smaller copy instead of "
                            "refusing")
    max_image_pixels: int | None = field(default=None, minimum=1,
                                         help="Largest image, in pixels (default 25000000)")
    max_image_bytes: int | None = field(default=None, minimum=1024,
                                        help="Largest image data, in bytes (default 5242880)")
    include_data: bool = field(default=True,
                               help="Images: include the base64 data (false: metadata only)")
    raw: bool = field(default=False,
                      help="Read a notebook or .pdf-named file as plain text lines")
    as_base64: bool = field(default=False,
                            help="Return the file's bytes whole as base64 data with their MIME "
                            "type (any file: binary, audio, unknown formats)")
    max_base64_bytes: int | None = field(
        default=None, minimum=1, maximum=16 * 1024 * 1024,
        help="With as_base64: largest file returned, in bytes (default 1048576); larger ones "
        "are refused with too_large, never cut")


def of_kind(help: str) -> Any:
    """A field only reads of some kinds have (an image's width): absent from other results."""
    return field(default=None, omit_null=True, help=help)


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
    kind: Literal["text", "image", "pdf", "notebook", "binary"] = field(
        default="text", help="What was read: text, image, pdf, notebook, or binary (as_base64)")
    mime: str | None = of_kind("Images and as_base64: the MIME type of data")
    width: int | None = of_kind("Images: width in pixels (of data)")
    height: int | None = of_kind("Images: height in pixels (of data)")
    original_width: int | None = of_kind("Images: width of the file")
    original_height: int | None = of_kind("Images: height of the file")
    downscaled: bool | None = of_kind("Images: data is a smaller copy")
    data: str | None = of_kind("Images and as_base64: the bytes, base64")
    data_bytes: int | None = of_kind("Images and as_base64: size of data before base64")
    page_count: int | None = of_kind("PDFs: pages in the document")
    pages: list[int] | None = of_kind("PDFs: the pages returned")
    cell_count: int | None = of_kind("Notebooks: cells in the notebook")
    cells: list[dict[str, Any]] | None = of_kind(
        "Notebooks: the cells shown (index, id, cell_type, "
        "execution_count, outputs, start_line, end_line in content)")


def run(params: Params, ctx: Context) -> Result:
    limits = ctx.limits
    start = params.offset or 1
    cap = limits.max_lines  # a per-call max_lines is already applied to ctx.limits
    count = min(params.limit, cap) if params.limit else cap
    workspace = ctx.workspace
    spill_name = ctx.spill_file(params.path)
    if spill_name is not None:
        # A result cut to the limits names its spill file (outside the workspace, in
        # zbtools' own state): reading it back is the one read allowed there, contained in
        # that folder by the same resolver.
        from zbtools.core.files.workspace import Workspace

        workspace = Workspace(os.path.dirname(os.path.normpath(params.path)))
    try:
        result = _read(params, ctx, workspace, spill_name, start, count, limits)
        if params.limit and params.limit > cap and result.truncated:
            returned = result.end_line - result.start_line + 1
            # what stopped the page is what to raise: the line cap, or the byte budget first
            raise_what = "max_lines" if returned >= cap else \
                f"max_bytes (the page reached its {limits.max_bytes} bytes first)"
            ctx.warn(f"limit {params.limit} is above the {cap}-line cap of one read (max_lines): "
                     f"{returned} lines returned; continue with offset={result.next_offset}, "
                     f"or raise {raise_what}")
        return result
    finally:
        if workspace is not ctx.workspace:
            workspace.close()


def _read(params: Params, ctx: Context, workspace: Workspace, spill_name: str | None,
          start: int, count: int, limits: Limits) -> Result:
    with workspace.resolve(spill_name or params.path) as res:
        if params.as_base64:
            from zbtools.core.media.binary import DEFAULT_MAX_BASE64_BYTES, read_base64

            return Result(**read_base64(res, params.path, params.max_base64_bytes
                                        or DEFAULT_MAX_BASE64_BYTES))
        kind = None if params.raw or spill_name else kind_by_name(res.rel)
        if kind is None and not spill_name and _media_suffix(res.rel):
            _refuse_media(res, params.path)
        if kind is None:
            extra = 0
            if params.hashes:  # the text shows each line as "  12:9f3a1c\t": a page fits
                from zbtools.core.files.hashing import line_hash

                extra = 1 + len(line_hash(""))
            try:
                window = read_window(res, start, count, max_bytes=limits.max_bytes,
                                     max_line_chars=limits.max_line_chars, line_extra=extra,
                                     hashes=params.hashes)
            except ToolError as exc:
                if exc.code != "binary_file":
                    raise
                from zbtools.core.media.richread import sniff

                kind = sniff(res)
                if kind is None:
                    exc.hint = ("read_file shows text, images (PNG, JPEG, GIF, WebP, BMP), "
                                "PDFs and notebooks; this is another binary format: pass "
                                "as_base64: true for its bytes and MIME type, or use "
                                "get_file_info for its size and type")
                    raise
        if kind is not None:
            return _read_rich(kind, res, params, ctx, start, count)
        rel = os.path.normpath(params.path) if spill_name else res.rel
    more = window.has_more
    if window.invalid_utf8:
        ctx.warn("the file is not valid UTF-8: undecodable bytes are shown as U+FFFD; edits "
                 "keep the original bytes")
    hashes = window.line_hashes if params.hashes else None
    return Result(
        path=rel, content=window.content, start_line=window.first, end_line=window.last,
        total_lines=window.total_lines, size=window.size, sha256=window.sha256,
        encoding=window.encoding, newline=window.newline, invalid_utf8=window.invalid_utf8,
        lines_cut=window.capped_lines, truncated=more,
        next_offset=window.last + 1 if more else None, line_hashes=hashes,
    )


def _media_suffix(name: str) -> bool:
    from zbtools.core.media.binary import AUDIO_VIDEO_SUFFIXES

    dot = name.rfind(".")
    return dot >= 0 and name[dot:].lower() in AUDIO_VIDEO_SUFFIXES


def _refuse_media(res: Resolved, shown: str) -> None:
    """An audio or video file is binary even without a NUL byte: never shown as text."""
    from zbtools.core.files.decoding import BINARY_SNIFF_BYTES
    from zbtools.core.files.reading import open_regular
    from zbtools.core.media.binary import looks_like_media, mime_type

    fd, _ = open_regular(res, shown=shown)
    try:
        head = os.read(fd, BINARY_SNIFF_BYTES)
    finally:
        os.close(fd)
    if looks_like_media(res.rel, head):
        mime = mime_type(head, res.rel)
        raise ToolError("binary_file", f"{shown}: is {mime} media, not text",
                        hint="pass as_base64: true for its bytes and MIME type, or use "
                        "get_file_info for its size and type",
                        details={"path": shown, "mime": mime})


def _read_rich(kind: str, res: Resolved, params: Params, ctx: Context, start: int,
               count: int) -> Result:
    from zbtools.core.media import richread

    if kind == "image":
        fields = richread.read_image(res, params)
        if fields["downscaled"]:
            ctx.warn(f"the image was downscaled from {fields['original_width']}x"
                     f"{fields['original_height']} to {fields['width']}x{fields['height']}")
    elif kind == "pdf":
        fields = richread.read_pdf(res, params, ctx.limits, start, count)
    else:
        fields = richread.read_notebook(res, params, ctx.limits, start, count)
    return Result(**fields)


def _lines(content: str) -> list[str]:
    if not content:
        return []  # an empty window holds no line (not one empty line)
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
    if result.kind == "binary":
        return (f"[{result.path}: {result.mime}, {result.data_bytes} bytes; the base64 data is "
                "in the JSON result]\n")
    if result.kind == "image":
        shown = "" if result.data is None else "; the base64 data is in the JSON result"
        scaled = (f", downscaled from {result.original_width}x{result.original_height}"
                  if result.downscaled else "")
        return (f"[image {result.path}: {result.mime}, {result.width}x{result.height} pixels"
                f"{scaled}, {result.data_bytes} bytes{shown}]\n")
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
    operand="path",
    render_text=render,
    read_only=True,
    idempotent=True,
    parallel_safe=True,
)

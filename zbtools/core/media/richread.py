"""read_file beyond text: images, PDFs and notebooks (docs/internals/sources.md#claude), as result
fields.

read_file routes a file here by its extension (``.ipynb``, ``.pdf``, image extensions), or when
the text reader found it binary and its magic bytes say image or PDF. PDF text and notebook
renderings are then paged exactly like text: numbered lines, ``offset``/``limit``, the byte
budget and ``next_offset`` (``zbtools.core.files.lines``). Images are returned whole as base64
within their own limits (see ``zbtools.core.media.images``), never cut.
"""

from __future__ import annotations

import os

from zbtools.contract import ToolError
from zbtools.core.files.hashing import sha256_hex
from zbtools.core.files.lines import Window, page_text
from zbtools.core.files.reading import CHUNK, open_regular, read_bytes

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from zbtools.core.call.config import Limits
    from zbtools.core.files.workspace import Resolved

MAX_PDF_BYTES = 256 * 1024 * 1024
MAX_NOTEBOOK_BYTES = 64 * 1024 * 1024
MAX_IMAGE_FILE_BYTES = 256 * 1024 * 1024


def sniff(res: Resolved) -> str | None:
    """``image`` or ``pdf`` from the first bytes of the file, else None."""
    from zbtools.core.media.images import sniff_image
    from zbtools.core.media.pdf import is_pdf

    fd, _ = open_regular(res)
    try:
        head = os.read(fd, min(CHUNK, 1024))
    finally:
        os.close(fd)
    if sniff_image(head) is not None:
        return "image"
    if is_pdf(head):
        return "pdf"
    return None


def window_text(text: str, shown: str, start: int, count: int | None, limits: Limits
                ) -> Window:
    """Page an in-memory text with the same rules as a text file."""
    window = Window()
    window.newline = "lf" if text else "none"
    page_text(window, text, shown, start, count, max_bytes=limits.max_bytes,
              max_line_chars=limits.max_line_chars)
    return window


def _paged(window: Window, rel: str, size: int, sha: str, newline: str) -> dict[str, Any]:
    more = window.has_more
    return {"path": rel, "content": window.content, "start_line": window.first,
            "end_line": window.last, "total_lines": window.total_lines, "size": size,
            "sha256": sha, "encoding": "utf-8", "newline": newline, "invalid_utf8": False,
            "lines_cut": window.capped_lines, "truncated": more,
            "next_offset": window.last + 1 if more else None, "line_hashes": None}


def read_pdf(res: Resolved, params: Any, limits: Limits, start: int, count: int | None
             ) -> dict[str, Any]:
    from zbtools.core.media.pdf import extract_pages, is_pdf, render_pages

    raw = read_bytes(res, max_bytes=MAX_PDF_BYTES, shown=params.path)
    if not is_pdf(raw[:1024]):
        raise ToolError("unsupported_format", f"{params.path}: is named .pdf but is not a PDF "
                        "(no %PDF- header)", hint="pass raw: true to read it as text")
    page_count, pages = extract_pages(raw, params.path, params.pages)
    text = render_pages(page_count, pages)
    window = window_text(text, params.path, start, count, limits)
    out = _paged(window, res.rel, len(raw), sha256_hex(raw), "lf")
    out.update(kind="pdf", page_count=page_count, pages=[n for n, _ in pages])
    return out


def read_notebook(res: Resolved, params: Any, limits: Limits, start: int, count: int | None
                  ) -> dict[str, Any]:
    from zbtools.core.media.notebook import parse, render

    raw = read_bytes(res, max_bytes=MAX_NOTEBOOK_BYTES, shown=params.path)
    notebook = parse(raw, params.path)
    text, summaries = render(notebook)
    window = window_text(text, params.path, start, count, limits)
    newline = "crlf" if "\r\n" in notebook.text else "lf"
    out = _paged(window, res.rel, len(raw), sha256_hex(raw), newline)
    last = window.last
    shown = [s for s in summaries if s["end_line"] >= window.first and s["start_line"] <= last]
    out.update(kind="notebook", cells=shown, cell_count=len(summaries))
    return out


def read_image(res: Resolved, params: Any) -> dict[str, Any]:
    import base64

    from zbtools.core.media.images import DEFAULT_MAX_BYTES, DEFAULT_MAX_PIXELS, load_image

    raw = read_bytes(res, max_bytes=MAX_IMAGE_FILE_BYTES, shown=params.path)
    picture = load_image(raw, params.path, downscale=params.downscale,
                         max_pixels=params.max_image_pixels or DEFAULT_MAX_PIXELS,
                         max_bytes=params.max_image_bytes or DEFAULT_MAX_BYTES)
    return {"path": res.rel, "content": "", "start_line": 1, "end_line": 0,
            "total_lines": None, "size": len(raw), "sha256": sha256_hex(raw),
            "encoding": "binary", "newline": "none", "invalid_utf8": False, "lines_cut": 0,
            "truncated": False, "next_offset": None, "line_hashes": None, "kind": "image",
            "mime": picture.mime, "width": picture.width, "height": picture.height,
            "downscaled": picture.downscaled,
            "original_width": picture.original[0], "original_height": picture.original[1],
            "data": base64.b64encode(picture.data).decode("ascii")
            if params.include_data else None,
            "data_bytes": len(picture.data)}

"""PDFs for read_file: the text layer of selected pages, with pypdf (extra ``media``).

Pages are chosen with a range list such as ``"1-5,8"`` (1-based; ``"3-"`` means from page 3 to
the end); by default every page. The text of each page is extracted by pypdf in layout order.
An encrypted PDF that does not open with an empty password is refused with ``encrypted_pdf``;
when every selected page has no text at all (a scanned document), ``no_text_layer`` says that
OCR is needed. A file that is not a valid PDF is ``unsupported_format``.
"""

from __future__ import annotations

from zbtools.contract import ToolError
from zbtools.core.call.optional import require

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def is_pdf(head: bytes) -> bool:
    """PDF readers accept the ``%PDF-`` header anywhere in the first 1024 bytes."""
    return b"%PDF-" in head[:1024]


def parse_pages(spec: str | None, count: int) -> list[int]:
    """1-based page numbers from ``"1-5,8"``, in the order given, without repeats."""
    if spec is None or not spec.strip():
        return list(range(1, count + 1))
    pages: list[int] = []
    for raw in spec.split(","):
        part = raw.strip()
        if not part:
            continue
        first_text, dash, last_text = part.partition("-")
        try:
            first = int(first_text) if first_text.strip() else 1
            last = (int(last_text) if last_text.strip() else count) if dash else first
        except ValueError:
            raise ToolError("invalid_arguments", f"pages: {part!r} is not a page or range",
                            hint='use page numbers and ranges such as "1-5,8" or "3-"'
                            ) from None
        if first < 1 or last < first:
            raise ToolError("invalid_arguments", f"pages: {part!r} is not a valid range",
                            hint='pages are numbered from 1; write ranges as "2-4"')
        if first > count:
            raise ToolError("out_of_range", f"pages: page {first} is beyond the end of the "
                            f"document, which has {count} page{'s' if count != 1 else ''}",
                            hint=f"use pages between 1 and {count}",
                            details={"page_count": count})
        for number in range(first, min(last, count) + 1):
            if number not in pages:
                pages.append(number)
    if not pages:
        raise ToolError("invalid_arguments", "pages: no page selected",
                        hint='for example "1-5,8"')
    return pages


def extract_pages(raw: bytes, shown: str, spec: str | None) -> tuple[int, list[tuple[int, str]]]:
    """The page count and ``(page number, text)`` of each selected page."""
    import io

    pypdf: Any = require("pypdf", "reading PDFs")
    errors: Any = require("pypdf.errors", "reading PDFs")  # DependencyError (AES) below
    try:
        reader = pypdf.PdfReader(io.BytesIO(raw))
        if reader.is_encrypted:
            try:
                opened = reader.decrypt("")
            except errors.DependencyError as exc:
                raise ToolError("encrypted_pdf", f"{shown}: the PDF is encrypted with AES and "
                                "the cryptography library is missing",
                                hint="pip install cryptography") from exc
            if not opened:
                raise ToolError("encrypted_pdf", f"{shown}: the PDF is encrypted (password "
                                "protected) and cannot be read",
                                hint="ask for an unencrypted copy, or decrypt it with "
                                "qpdf --decrypt --password=... in.pdf out.pdf")
        count = len(reader.pages)
        pages = parse_pages(spec, count)
        out = [(n, _page_text(reader.pages[n - 1])) for n in pages]
    except ToolError:
        raise
    except MemoryError:
        raise
    except Exception as exc:  # pypdf raises many kinds on malformed input:
        # (PyPdfError, ValueError, KeyError, IndexError, NotImplementedError for unknown
        # filters, AssertionError, zlib.error, struct.error, RecursionError, ...)
        raise ToolError("unsupported_format", f"{shown}: the PDF cannot be read: "
                        f"{exc or type(exc).__name__}",
                        hint="the file may be truncated or corrupt") from exc
    if out and not any(text.strip() for _, text in out):
        raise ToolError("no_text_layer", f"{shown}: the selected page(s) have no text layer; "
                        "the document is probably scanned images", hint="run OCR on it first "
                        "(for example ocrmypdf), or look at the pages as images",
                        details={"page_count": count, "pages": [n for n, _ in out]})
    return count, out


def _page_text(page: Any) -> str:
    text = page.extract_text() or ""
    return str(text).replace("\r\n", "\n").replace("\r", "\n")


def render_pages(count: int, pages: list[tuple[int, str]]) -> str:
    parts = []
    for number, text in pages:
        body = text if text.endswith("\n") or not text else text + "\n"
        if not text.strip():
            body = "(no text on this page)\n"
        parts.append(f"--- page {number} of {count} ---\n{body}")
    return "".join(parts)

"""The format of an existing file, so that new text is written into it the way it already is.

``write_file``, ``write_append`` and ``save_plan`` write text that must follow the file it goes
into: its encoding and BOM, its dominant line ending, whether it ends with a newline.
``probe_format`` reads that from the file (a big file from its head and last byte only), and
``convert_newlines`` applies a tool's ``newline`` argument to the text about to be written.

Map: ``FileFormat``, ``probe_format``, ``convert_newlines``.
"""

from __future__ import annotations

import os

from zbtools.core.files.decoding import (
    Decoded,
    apply_newline,
    decode,
    dominant_newline,
    encoding_label,
    looks_binary,
    sniff_bom,
)
from zbtools.core.files.reading import CHUNK, open_regular, read_fd

TYPE_CHECKING = False
if TYPE_CHECKING:
    from zbtools.core.files.workspace import Resolved


class FileFormat:
    """How an existing file encodes text: what new text written into it should follow."""

    __slots__ = ("binary", "bom", "encoding", "ends_with_newline", "invalid_utf8", "newline",
                 "size")

    def __init__(self, encoding: str = "utf-8", bom: bytes = b"", newline: str = "\n",
                 ends_with_newline: bool = True, binary: bool = False, size: int = 0,
                 invalid_utf8: bool = False) -> None:
        self.encoding = encoding
        self.bom = bom
        self.newline = newline  # "\n" or "\r\n": the file's dominant line ending
        self.ends_with_newline = ends_with_newline
        self.binary = binary
        self.size = size
        self.invalid_utf8 = invalid_utf8

    @property
    def style(self) -> str:
        return "crlf" if self.newline == "\r\n" else "lf"

    @property
    def label(self) -> str:
        return encoding_label(self.encoding, bool(self.bom))

    def encode(self, text: str, *, with_bom: bool) -> bytes:
        errors = "surrogateescape" if self.invalid_utf8 else "strict"
        decoded = Decoded("", self.encoding, self.bom if with_bom else b"", self.style,
                          self.invalid_utf8 and errors == "surrogateescape")
        return decoded.encode(text)


PROBE_WHOLE_BYTES = 8 * 1024 * 1024


def probe_format(res: Resolved, *, shown: str | None = None) -> tuple[FileFormat, bytes | None]:
    """The format of the existing regular file ``res``, and its bytes when it is small."""
    fd, st = open_regular(res, shown=shown)
    try:
        whole = st.st_size <= PROBE_WHOLE_BYTES
        data = read_fd(fd) if whole else os.read(fd, CHUNK)
        last = data[-1:] if whole else os.pread(fd, 1, max(st.st_size - 1, 0))
    finally:
        os.close(fd)
    fmt = FileFormat(size=st.st_size, ends_with_newline=last in (b"\n", b""))
    fmt.newline = dominant_newline(data)
    bom = sniff_bom(data[:4])
    if bom is None and looks_binary(data):
        fmt.binary = True
        return fmt, data if whole else None
    if bom is not None:
        fmt.encoding, fmt.bom = bom
        if fmt.encoding != "utf-8":  # count newlines in the decoded text, not the raw bytes
            try:
                fmt.newline = dominant_newline(data[len(fmt.bom):].decode(fmt.encoding)
                                               .encode("utf-8"))
            except UnicodeDecodeError:
                pass
        return fmt, data if whole else None
    sample = data if whole else data[: len(data) - 4]
    try:
        sample.decode("utf-8")
    except UnicodeDecodeError:
        decoded = decode(sample, shown=shown or res.requested)
        fmt.encoding = decoded.encoding
        fmt.invalid_utf8 = decoded.invalid_utf8
    return fmt, data if whole else None


def convert_newlines(text: str, mode: str, fmt: FileFormat | None) -> str:
    """Apply a ``newline`` argument (auto, lf, crlf, as_is) to text about to be written."""
    if mode == "as_is":
        return text
    if mode == "lf":
        return text.replace("\r\n", "\n")
    if mode == "crlf":
        return text.replace("\r\n", "\n").replace("\n", "\r\n")
    if fmt is not None and fmt.newline == "\r\n":
        return apply_newline(text, "\r\n")
    return text

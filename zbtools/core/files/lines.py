"""Reading a window of lines from a text file, in bounded memory.

Lines are separated by ``\\n`` (a ``\\r`` before it belongs to the line ending); numbering is
1-based; a final newline does not start another line, so an empty file has 0 lines.

Files up to ``FULL_SCAN_BYTES`` (8 MiB), and every UTF-16/UTF-32 file, are read whole: the
result then knows ``total_lines`` and ``sha256`` (the token edits can require), and the encoding
is detected on the whole content. Larger files are streamed in 1 MiB chunks, their encoding
judged on their first MiB (``decoding.sample_encoding``): newlines are counted
with ``bytes.count``/``split`` until the window starts, only the window is decoded, and reading
stops once it is complete, so the cost is proportional to the window's offset, not the file's
size, and memory is bounded by the chunk size plus the window. For those, ``total_lines`` and
``sha256`` are reported only when the scan reaches the end of the file (the window ends at or
runs into it); otherwise they are ``null``. A single line longer than the collection cap (at
least 1 MiB) is shown cut rather than read whole; the scan reads on to its end to tell
whether another line follows (when none does, the file is counted and hashed as above).

Shown lines longer than ``max_line_chars`` are cut with a marker; the window also stops early
(``truncated``) once its ``cat -n`` rendering (with ``line_extra`` bytes more a line: a read's
line hashes) would exceed ``max_bytes``, and says which line to continue from. With ``hashes``
each line's ``line_hash`` is taken of its exact text, as an edit decodes it, not of what is
shown.
"""

from __future__ import annotations

import os

from zbtools.contract import ToolError
from zbtools.core.files.decoding import (
    decode,
    encoding_label,
    looks_binary,
    newline_style,
    sample_encoding,
    sniff_bom,
    trim_partial_utf8,
)
from zbtools.core.files.hashing import sha256_fd, sha256_hex
from zbtools.core.files.reading import CHUNK, open_regular, read_fd

TYPE_CHECKING = False
if TYPE_CHECKING:
    from zbtools.core.files.workspace import Resolved

FULL_SCAN_BYTES = 8 * 1024 * 1024
WIDE_TEXT_LIMIT = 256 * 1024 * 1024  # UTF-16/32 files must be decoded whole
LINE_PREFIX_DIGITS = 6  # "     12\t" in the numbered rendering: a tab and a newline more


class Window:
    """A contiguous run of lines and what is known about the whole file."""

    def __init__(self) -> None:
        self.first = 1  # line number of lines[0]
        self.lines: list[str] = []  # shown text of each line, without its line ending
        self.content = ""  # the window's text with its line endings (exact unless lines were cut)
        self.total_lines: int | None = None
        self.sha256: str | None = None
        self.size = 0
        self.encoding = "utf-8"
        self.newline = "none"
        self.invalid_utf8 = False
        self.capped_lines = 0  # lines shown cut at max_line_chars
        self.truncated = False  # stopped by max_bytes/max_lines before the requested end
        self.has_more = False  # lines exist after the window
        # bytes each shown line carries beyond its ``cat -n`` prefix (a read's line hashes)
        self.line_extra = 0
        # with ``read_window(hashes=True)``: each line's ``line_hash`` as an edit sees the line
        # (its exact text, before U+FFFD or a cut is shown), so its anchor holds
        self.line_hashes: list[str] | None = None

    @property
    def last(self) -> int:
        """Line number of the last line in the window (``first - 1`` when empty)."""
        return self.first + len(self.lines) - 1

    def numbered(self) -> str:
        """``cat -n`` rendering of the window."""
        return "".join(f"{n:6}\t{line}\n" for n, line in enumerate(self.lines, self.first))


def _nbytes(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def fill_window(window: Window, pieces: list[str], ends: list[bool], *, max_bytes: int,
          max_line_chars: int, open_ended: bool = False) -> None:
    """Shape raw line texts into the window, honouring the byte budget.

    ``open_ended``: the last piece is only the start of a line too long to read whole.
    """
    shown: list[str] = []
    exact: list[str] = []
    used = 0
    number = window.first
    for index, (piece, has_end) in enumerate(zip(pieces, ends, strict=True)):
        line = piece[:-1] if piece.endswith("\r") else piece
        if len(line) > max_line_chars:
            more = len(line) - max_line_chars
            amount = f"more than {more}" if open_ended and index == len(pieces) - 1 else more
            line = f"{line[:max_line_chars]}… [line cut: {amount} more characters]"
            window.capped_lines += 1
        cost = _nbytes(line) + max(LINE_PREFIX_DIGITS, len(str(number))) + 2 + window.line_extra
        number += 1
        if shown and used + cost > max_bytes:
            window.truncated = True
            window.has_more = True
            break
        used += cost
        shown.append(line)
        carriage = "\r" if piece.endswith("\r") else ""
        exact.append(line + carriage + ("\n" if has_end else ""))
    window.lines = shown
    window.content = "".join(exact)


def read_window(res: Resolved, start: int, count: int | None, *, max_bytes: int,
                max_line_chars: int, full_scan_bytes: int = FULL_SCAN_BYTES,
                line_extra: int = 0, hashes: bool = False) -> Window:
    """Read lines ``start .. start+count-1`` (``count=None``: to the end of the file);
    ``line_extra``: bytes each line's rendering carries beyond the ``cat -n`` prefix, counted
    in ``max_bytes``; ``hashes``: fill ``line_hashes``."""
    fd, st = open_regular(res)
    try:
        head = os.read(fd, CHUNK)
        window = Window()
        window.line_extra = line_extra
        bom = sniff_bom(head[:4])
        if bom is None and looks_binary(head):
            raise ToolError("binary_file", f"{res.requested}: is a binary file (it contains "
                            "NUL bytes)", hint="text tools do not read binary files; use "
                            "get_file_info for its size",
                            details={"path": res.requested, "size": st.st_size})
        wide = bom is not None and bom[0] != "utf-8"
        if st.st_size <= full_scan_bytes or wide:
            limit = WIDE_TEXT_LIMIT if wide else None
            data = head + read_fd(fd, None if limit is None else limit)
            if limit is not None and len(data) > limit:
                raise ToolError("too_large", f"{res.requested}: a {bom and bom[0]} file larger "
                                f"than {limit} bytes cannot be read",
                                details={"path": res.requested})
            _whole(window, data, res.requested, start, count, max_bytes, max_line_chars,
                   hashes)
        else:
            _stream(window, fd, head, res.requested, start, count, max_bytes, max_line_chars,
                    hashes)
        return window
    finally:
        os.close(fd)


def _hash_lines(window: Window, exact: str, skipped: int) -> None:
    """``window.line_hashes`` of its lines in ``exact`` (the text as an edit decodes it, its
    first ``skipped`` lines before the window's), split no further than the window's end."""
    from zbtools.core.files.hashing import line_hash

    begin = window.first - 1 - skipped
    stop = begin + len(window.lines)
    pieces = exact.split("\n", stop)
    hashes = []
    for i in range(begin, stop):
        line = pieces[i]
        if line.endswith("\r") and i + 1 < len(pieces):  # a CRLF's CR: the line ending's
            line = line[:-1]
        hashes.append(line_hash(line))
    window.line_hashes = hashes


def _whole(window: Window, data: bytes, shown: str, start: int, count: int | None,
           max_bytes: int, max_line_chars: int, hashes: bool = False) -> None:
    decoded = decode(data, shown=shown)
    text = decoded.display_text()
    window.size = len(data)
    window.sha256 = sha256_hex(data)
    window.encoding = decoded.encoding_label
    window.newline = decoded.newline
    window.invalid_utf8 = decoded.invalid_utf8
    page_text(window, text, shown, start, count, max_bytes=max_bytes,
              max_line_chars=max_line_chars)
    if hashes:
        _hash_lines(window, decoded.text, 0)


def page_text(window: Window, text: str, shown: str, start: int, count: int | None, *,
              max_bytes: int, max_line_chars: int) -> None:
    """Fill ``window`` with ``count`` lines (None: all) of a whole text from line ``start``;
    ``beyond_end_error`` when ``start`` is past its last line."""
    pieces = text.split("\n")
    final_newline = text.endswith("\n")
    if final_newline or not text:
        pieces.pop()
    total = len(pieces)
    window.total_lines = total
    window.first = start
    if start > max(total, 1):
        raise beyond_end_error(shown, start, total)
    stop = total if count is None else min(total, start - 1 + count)
    chosen = pieces[start - 1:stop]
    if not _fits(window, chosen, stop < total or final_newline, max_bytes, max_line_chars):
        ends = [i < total - 1 or final_newline for i in range(start - 1, stop)]
        fill_window(window, chosen, ends, max_bytes=max_bytes, max_line_chars=max_line_chars)
    window.has_more = window.has_more or window.last < total


def _fits(window: Window, pieces: list[str], last_end: bool, max_bytes: int,
          max_line_chars: int) -> bool:
    """``fill_window``'s result in a few C-speed passes where nothing is cut: no line longer
    than ``max_line_chars`` and, counted generously (every ``\\r`` and ``\\n`` too), the whole
    rendering within ``max_bytes``. False, having changed nothing, where that is not certain.
    ``last_end``: the last piece ends with a newline (the others always do)."""
    if not pieces or max(map(len, pieces)) > max_line_chars:
        return False
    text = "\n".join(pieces)
    prefix = max(LINE_PREFIX_DIGITS, len(str(window.first + len(pieces) - 1))) + 2 + \
        window.line_extra
    if _nbytes(text) + len(pieces) * prefix > max_bytes:
        return False
    window.lines = [p[:-1] if p.endswith("\r") else p for p in pieces] if "\r" in text \
        else pieces
    window.content = text + "\n" if last_end else text
    return True


def beyond_end_error(shown: str, start: int, total: int) -> ToolError:
    return ToolError("out_of_range", f"{shown}: line {start} is beyond the end of the file, "
                     f"which has {total} line{'s' if total != 1 else ''}",
                     hint=f"use a start line between 1 and {max(total, 1)}",
                     details={"total_lines": total, "start_line": start})


def _stream(window: Window, fd: int, head: bytes, shown: str, start: int, count: int | None,
            max_bytes: int, max_line_chars: int, hashes: bool = False) -> None:
    """Chunked scan for big files: skip ``start-1`` newlines, then collect the window."""
    window.size = os.fstat(fd).st_size
    bom = sniff_bom(head[:4])
    offset = len(bom[1]) if bom else 0
    codec = None if bom else sample_encoding(fd)
    window.encoding = encoding_label(codec or "utf-8", bom is not None)
    last_byte = head[-1:]
    line_no = 1
    chunk = head[offset:]
    # A generous cap on collected bytes: the window is cut to max_bytes anyway, and a single
    # enormous line must not be read whole.
    collect_cap = max(4 * max_bytes, 1 << 20) + 4 * max_line_chars
    collected: list[bytes] = []
    collected_bytes = 0
    newlines_in_window = 0
    want = count
    started = start == 1
    eof = False
    done = False
    while not done:
        if not started:
            need = start - line_no
            found = chunk.count(b"\n")
            if found < need:
                line_no += found
                chunk = b""
            else:
                chunk = chunk.split(b"\n", need)[-1]
                line_no = start
                started = True
        if started and chunk:
            if want is not None:
                found = chunk.count(b"\n")
                if newlines_in_window + found >= want:
                    cut = 0
                    for _ in range(want - newlines_in_window):
                        cut = chunk.index(b"\n", cut) + 1
                    collected.append(chunk[:cut])
                    done = True
                    if chunk[cut:]:
                        window.has_more = True
                    else:  # the window ends at a chunk's end: maybe exactly at the file's end
                        extra = os.read(fd, 1)
                        window.has_more = bool(extra)
                        eof = not extra
                    break
                newlines_in_window += found
            collected.append(chunk)
            collected_bytes += len(chunk)
            if collected_bytes > collect_cap:
                window.truncated = True
                window.has_more = True
                break
        chunk = os.read(fd, CHUNK)
        if not chunk:
            eof = True
            break
        last_byte = chunk[-1:]
    if eof and not started:
        total = line_no - 1 + (1 if last_byte not in (b"", b"\n") else 0)
        raise beyond_end_error(shown, start, total)
    raw = b"".join(collected)
    complete = b"\n" in raw
    cut_short = window.truncated and not complete  # one line too long to read whole
    line_end = b""
    if cut_short and not eof:
        line_end, more = _rest_of_line(fd)
        if not more:  # nothing follows it: the window is the whole rest of the file
            window.truncated = window.has_more = False
            eof = True
    if window.truncated and not raw.endswith(b"\n"):
        # The cap cut a line short: drop it (it starts the next window), unless it is the only
        # line, which is then shown cut at max_line_chars instead; an incomplete UTF-8 sequence
        # at its end is no decoding error.
        raw = raw[:raw.rindex(b"\n") + 1] if complete else trim_partial_utf8(raw)
    exact = None  # the window as an edit decodes it, when that is not what is shown
    try:
        text = raw.decode(codec or "utf-8")
    except UnicodeDecodeError:
        text = raw.decode("utf-8", "replace")
        exact = raw.decode("utf-8", "surrogateescape")
        window.invalid_utf8 = True
        window.encoding = encoding_label("utf-8", bom is not None)  # (the sample misled)
    window.newline = newline_style(raw + line_end)
    pieces = text.split("\n")
    final_newline = text.endswith("\n")
    if final_newline or not text:
        pieces.pop()
    final_newline = final_newline or bool(line_end)  # (the cut line's own, read past)
    ends = [i < len(pieces) - 1 or final_newline for i in range(len(pieces))]
    window.first = start
    if eof:
        if start > 1 and not pieces:
            raise beyond_end_error(shown, start, start - 1)
        # Hashed only now that the window reached the end: a window in the middle of a huge
        # file never pays for hashing it (the builtin SHA-256 runs at ~300 MB/s here).
        window.sha256 = sha256_fd(fd)
        window.total_lines = start - 1 + len(pieces)
    fill_window(window, pieces, ends, max_bytes=max_bytes, max_line_chars=max_line_chars,
          open_ended=cut_short)
    if hashes:  # (a line too long to read whole is hashed as far as it was read)
        _hash_lines(window, text if exact is None else exact, start - 1)


def _rest_of_line(fd: int) -> tuple[bytes, bool]:
    """Read on past the end of a line too long to collect: (how it ends, ``b"\\n"``,
    ``b"\\r\\n"`` or ``b""`` at the end of the file; whether anything follows it)."""
    previous = b""
    while True:
        chunk = os.read(fd, CHUNK)
        if not chunk:
            return b"", False
        at = chunk.find(b"\n")
        if at >= 0:
            before = chunk[at - 1:at] if at else previous
            after = chunk[at + 1:] or os.read(fd, 1)
            return (b"\r\n" if before == b"\r" else b"\n"), bool(after)
        previous = chunk[-1:]

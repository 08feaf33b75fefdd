"""Any file's bytes for read_file's ``as_base64`` mode, and which files are never shown as text.

* ``mime_type``: the MIME type from the first bytes (magic numbers of the common image,
  audio, video, archive and document formats), else from the name (Python's ``mimetypes``
  table), else ``application/octet-stream``.
* ``read_base64``: the whole file as base64 with its MIME type, within a byte limit
  (``too_large`` above it, naming the size; never a cut-off prefix that would decode to a
  broken file).
* ``looks_like_media``: audio and video files (by extension, confirmed by their magic bytes or
  by not being clean UTF-8 text) are binary even without a NUL byte in their first 8 KiB, so
  they are never returned as mojibake text.

Failure modes: ``too_large``, plus ``open_regular``'s (``not_found``, ``special_file``, ...).
"""

from __future__ import annotations

import os

from zbtools.contract import ToolError
from zbtools.core.files.hashing import sha256_hex
from zbtools.core.files.reading import CHUNK, open_regular, read_fd

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from zbtools.core.files.workspace import Resolved

DEFAULT_MAX_BASE64_BYTES = 1024 * 1024
MAX_BASE64_BYTES = 16 * 1024 * 1024

# (offset, magic, MIME type), most specific first
MAGIC: tuple[tuple[int, bytes, str], ...] = (
    (0, b"\x89PNG\r\n\x1a\n", "image/png"),
    (0, b"\xff\xd8\xff", "image/jpeg"),
    (0, b"GIF87a", "image/gif"),
    (0, b"GIF89a", "image/gif"),
    (0, b"BM", "image/bmp"),
    (0, b"%PDF-", "application/pdf"),
    (0, b"PK\x03\x04", "application/zip"),
    (0, b"\x1f\x8b", "application/gzip"),
    (0, b"BZh", "application/x-bzip2"),
    (0, b"\xfd7zXZ\x00", "application/x-xz"),
    (0, b"7z\xbc\xaf\x27\x1c", "application/x-7z-compressed"),
    (0, b"\x7fELF", "application/x-executable"),
    (0, b"ID3", "audio/mpeg"),
    (0, b"fLaC", "audio/flac"),
    (0, b"OggS", "audio/ogg"),
    (0, b"MThd", "audio/midi"),
    (0, b"#!AMR", "audio/amr"),
    (0, b"\x1aE\xdf\xa3", "video/webm"),
    (0, b"\x00\x00\x01\xba", "video/mpeg"),
    (0, b"SQLite format 3\x00", "application/vnd.sqlite3"),
    (0, b"\x00asm", "application/wasm"),
)
RIFF = {b"WAVE": "audio/wav", b"WEBP": "image/webp", b"AVI ": "video/x-msvideo"}
AUDIO_VIDEO_SUFFIXES = frozenset({
    ".mp3", ".wav", ".flac", ".ogg", ".oga", ".opus", ".m4a", ".aac", ".wma", ".aif", ".aiff",
    ".mid", ".midi", ".amr", ".mp4", ".m4v", ".mkv", ".webm", ".avi", ".mov", ".wmv", ".flv",
    ".mpg", ".mpeg", ".3gp"})


def sniff_mime(head: bytes) -> str | None:
    """The MIME type the first bytes of a file name, or None."""
    for offset, magic, mime in MAGIC:
        if head[offset:offset + len(magic)] == magic:
            return mime
    if head[:4] == b"RIFF" and head[8:12] in RIFF:
        return RIFF[head[8:12]]
    if head[4:8] == b"ftyp":  # ISO media: MP4, M4A, MOV, HEIC...
        brand = head[8:12]
        if brand in (b"M4A ", b"M4B "):
            return "audio/mp4"
        if brand in (b"qt  ",):
            return "video/quicktime"
        if brand in (b"heic", b"heix", b"mif1"):
            return "image/heic"
        return "video/mp4"
    if len(head) >= 2 and head[0] == 0xFF and head[1] & 0xE0 == 0xE0 and head[1] & 0x06:
        return "audio/mpeg"  # an MPEG audio frame (an MP3 without an ID3 tag)
    return None


def mime_type(head: bytes, name: str) -> str:
    """The file's MIME type from its first bytes, else its name, else octet-stream."""
    sniffed = sniff_mime(head)
    if sniffed is not None:
        return sniffed
    import mimetypes

    # Python's own table, not the host's /etc/mime.types: the same answer on every machine
    guessed, _ = mimetypes.MimeTypes().guess_type(name, strict=False)
    return guessed or "application/octet-stream"


def looks_like_media(name: str, head: bytes) -> bool:
    """An audio or video file by its extension, unless it is in fact clean UTF-8 text."""
    dot = name.rfind(".")
    if dot < 0 or name[dot:].lower() not in AUDIO_VIDEO_SUFFIXES:
        return False
    if sniff_mime(head) is not None:
        return True
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 3:  # not just a character cut at the end of the sample
            return True
        text = head[:exc.start].decode("utf-8")
    return any(ord(c) < 32 and c not in "\t\n\r\f" for c in text)


def read_base64(res: Resolved, shown: str, max_bytes: int) -> dict[str, Any]:
    """The file's bytes as base64 with its MIME type: read_file's result fields."""
    import base64

    fd, st = open_regular(res, shown=shown)
    try:
        if st.st_size > max_bytes:
            raise ToolError("too_large", f"{shown}: is {st.st_size} bytes, over the "
                            f"{max_bytes}-byte limit of as_base64",
                            hint=f"pass max_base64_bytes (up to {MAX_BASE64_BYTES}) to read "
                            "it whole, or use get_file_info for its size and type",
                            details={"path": shown, "size": st.st_size, "limit": max_bytes})
        raw = read_fd(fd, max_bytes + 1)
    finally:
        os.close(fd)
    if len(raw) > max_bytes:
        raise ToolError("too_large", f"{shown}: grew over the {max_bytes}-byte limit while "
                        "being read", details={"path": shown, "limit": max_bytes})
    assert res.name is not None
    return {"path": res.rel, "content": "", "start_line": 1, "end_line": 0,
            "total_lines": None, "size": len(raw), "sha256": sha256_hex(raw),
            "encoding": "binary", "newline": "none", "invalid_utf8": False, "lines_cut": 0,
            "truncated": False, "next_offset": None, "line_hashes": None, "kind": "binary",
            "mime": mime_type(raw[:CHUNK], res.name), "data": base64.b64encode(raw).decode(
                "ascii"), "data_bytes": len(raw)}

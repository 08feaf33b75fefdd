"""Get metadata about a file, directory or symlink: size, type, times, mode, lines, encoding.

Returns ``path``, ``size``, ``is_directory``, ``is_file``, ``is_symlink``, ``modified``,
``accessed`` and ``created`` (ISO 8601, UTC; ``created`` only where the platform reports a birth
time, null on Linux), ``readonly`` (no write permission bit set), plus ``type``, ``mode``
(octal), and for text files ``line_count`` and ``encoding`` (``binary: true`` instead for binary
files); for directories ``entries`` (the number of direct children); for symlinks
``symlink_target`` (the link text) and the metadata of what it points to. Nothing is modified.

Limits: lines are counted for files up to 256 MiB (``line_count`` is null beyond). A file or
directory that cannot be read still gets its metadata, with those fields null and a warning. A
symlink pointing outside the workspace is refused with ``outside_workspace``, like every other
path. Failure modes: ``not_found``, ``outside_workspace``, ``symlink_loop``,
``permission_denied`` (a parent directory cannot be searched).
"""

from __future__ import annotations

import os
import stat

from zbtools.contract import ToolError
from zbtools.core.call.args import Struct, field
from zbtools.core.errors import not_found
from zbtools.core.files.decoding import (
    decode,
    encoding_label,
    looks_binary,
    sample_encoding,
    sniff_bom,
)
from zbtools.core.files.fsops import entry_kind
from zbtools.core.files.reading import CHUNK, READ_FLAGS, read_fd
from zbtools.core.files.workspace import DIR_FLAGS
from zbtools.toolkit.finding import iso_utc
from zbtools.toolkit.params import PATH_ALIASES
from zbtools.toolspec import ToolSpec

TYPE_CHECKING = False
if TYPE_CHECKING:
    from zbtools.core.call.context import Context
    from zbtools.core.files.workspace import Resolved

COUNT_LINES_LIMIT = 256 * 1024 * 1024
DECODE_WHOLE_LIMIT = 8 * 1024 * 1024


class Params(Struct):
    path: str = field(aliases=PATH_ALIASES, help="Path to inspect")


class Result(Struct):
    path: str = field(help="The path, relative to the workspace root")
    type: str = field(help="file, directory, symlink, fifo, socket, device")
    size: int = field(help="Size in bytes (of the target, for a symlink)")
    is_directory: bool = field(help="It is (or points to) a directory")
    is_file: bool = field(help="It is (or points to) a regular file")
    is_symlink: bool = field(help="The path itself is a symbolic link")
    symlink_target: str | None = field(help="The link's text, for a symlink")
    modified: str = field(help="Last modification, ISO 8601 UTC")
    accessed: str = field(help="Last access, ISO 8601 UTC (as the file system keeps it: often "
                          "updated only once a day, or never, by mount options)")
    created: str | None = field(help="Creation (birth) time, ISO 8601 UTC, where the platform "
                                "reports it (macOS, BSD, Windows); null on Linux")
    readonly: bool = field(help="No write permission bit is set")
    mode: str = field(help="Permission bits in octal, e.g. 0644")
    line_count: int | None = field(help="Lines, for text files")
    encoding: str | None = field(help="Detected encoding, for text files")
    binary: bool | None = field(help="True for binary files (NUL bytes)")
    entries: int | None = field(help="Direct children, for directories")


def _text_facts(res: Resolved) -> tuple[int | None, str | None, bool]:
    assert res.name is not None
    fd = os.open(res.name, READ_FLAGS, dir_fd=res.dir_fd)
    try:
        size = os.fstat(fd).st_size
        head = os.read(fd, CHUNK)
        bom = sniff_bom(head[:4])
        if bom is None and looks_binary(head):
            return None, None, True
        if size <= DECODE_WHOLE_LIMIT:
            data = head + read_fd(fd)
            try:
                decoded = decode(data)
            except ToolError:
                return None, None, True
            text = decoded.text
            lines = text.count("\n") + (0 if not text or text.endswith("\n") else 1)
            return lines, decoded.encoding_label, False
        if bom is not None and bom[0] != "utf-8":
            wide = _wide_lines(fd, bom[0], len(bom[1])) if size <= COUNT_LINES_LIMIT else None
            if wide is not None or size > COUNT_LINES_LIMIT:
                return wide, bom[0], False
            bom = None  # not that encoding after all: read as 8-bit text, as decode does
        # judged on the first MiB, as read_file judges a file this size
        codec = sample_encoding(fd) if bom is None else None
        encoding = encoding_label(codec or "utf-8", bom is not None)
        if size > COUNT_LINES_LIMIT:
            return None, encoding, False
        os.lseek(fd, len(head), os.SEEK_SET)
        newlines = head.count(b"\n")
        last = head[-1:]
        while True:
            chunk = os.read(fd, CHUNK)
            if not chunk:
                break
            newlines += chunk.count(b"\n")
            last = chunk[-1:]
        return newlines + (0 if last in (b"\n", b"") else 1), encoding, False
    finally:
        os.close(fd)


def _wide_lines(fd: int, encoding: str, skip: int) -> int | None:
    """The lines of a UTF-16 or UTF-32 file (``skip``: its BOM's bytes), decoded a chunk at a
    time; None when it does not decode (a BOM that only looked like one)."""
    import codecs

    decoder = codecs.getincrementaldecoder(encoding)()
    newlines = 0
    last = ""
    offset = skip
    try:
        while True:
            chunk = os.pread(fd, CHUNK, offset)
            text = decoder.decode(chunk, final=not chunk)
            newlines += text.count("\n")
            last = text[-1:] or last
            if not chunk:
                break
            offset += len(chunk)
    except UnicodeDecodeError:
        return None
    return newlines + (0 if last in ("\n", "") else 1)


def run(params: Params, ctx: Context) -> Result:
    with ctx.workspace.resolve(params.path, follow_last=False) as link:
        if link.st is None:
            raise not_found(params.path)
        is_symlink = stat.S_ISLNK(link.st.st_mode)
        target_text = os.readlink(link.name, dir_fd=link.dir_fd) if is_symlink and link.name \
            else None
        rel = link.rel
    with ctx.workspace.resolve(params.path) as res:
        st = res.st
        if st is None:  # a dangling symlink inside the workspace
            assert link.st is not None
            st = link.st
        kind = entry_kind(st.st_mode)
        line_count = encoding = binary = entries = None
        try:
            if kind == "file" and res.st is not None:
                line_count, encoding, is_binary = _text_facts(res)
                binary = is_binary
            elif kind == "directory":
                fd = os.open(res.name, DIR_FLAGS, dir_fd=res.dir_fd) if res.name else os.dup(
                    res.dir_fd)
                try:
                    with os.scandir(fd) as it:
                        entries = sum(1 for _ in it)
                finally:
                    os.close(fd)
        except OSError as exc:  # unreadable: the metadata above is still worth returning
            ctx.warn(f"{rel}: contents not inspected ({os.strerror(exc.errno or 0)}); "
                     + ("line_count and encoding" if kind == "file" else "entries")
                     + " are null")
    return Result(
        path=rel, type="symlink" if is_symlink else kind, size=st.st_size,
        is_directory=kind == "directory", is_file=kind == "file", is_symlink=is_symlink,
        symlink_target=target_text, modified=iso_utc(st.st_mtime),
        accessed=iso_utc(st.st_atime), created=birth_time(st),
        readonly=not st.st_mode & 0o222, mode=f"{stat.S_IMODE(st.st_mode):04o}",
        line_count=line_count, encoding=encoding, binary=binary, entries=entries,
    )


def birth_time(st: os.stat_result) -> str | None:
    birth = getattr(st, "st_birthtime", None)
    return iso_utc(birth) if isinstance(birth, float | int) else None


def render(result: Result) -> str:
    lines = [f"path: {result.path}", f"type: {result.type}", f"size: {result.size}",
             f"modified: {result.modified}", f"mode: {result.mode}"
             + (" (read-only)" if result.readonly else "")]
    if result.created is not None:
        lines.append(f"created: {result.created}")
    if result.symlink_target is not None:
        lines.append(f"symlink to: {result.symlink_target}")
    if result.line_count is not None:
        lines.append(f"lines: {result.line_count}")
    if result.encoding is not None:
        lines.append(f"encoding: {result.encoding}")
    if result.binary:
        lines.append("binary: yes")
    if result.entries is not None:
        lines.append(f"entries: {result.entries}")
    return "\n".join(lines) + "\n"


TOOL = ToolSpec(
    name="get_file_info",
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

"""Write a whole file: create it, or replace an existing one; parent directories are created.

Overwrites by default; pass ``overwrite: false`` to refuse when the file exists
(``already_exists``; use edit_file/apply_edit to change part of a file instead). A brand-new file
never needs a prior read. When replacing, pass the ``sha256`` from your last read as
``expected_sha256`` and the write is refused with ``stale_file`` if the file changed meanwhile.

The write is atomic (temp file, fsync, rename): readers see the old or the new file, never half of
one, and a failure (disk full, permission) leaves the old file and the directories exactly as they
were. Replacing keeps the file's permission bits, its encoding and byte-order mark, and its line
endings (``newline: auto`` turns bare LF into CRLF in a CRLF file; ``lf``, ``crlf`` or ``as_is``
choose explicitly); ``encoding`` can convert it (e.g. ``utf-8``, which drops a byte-order mark).
``newline: as_is`` with ``encoding: utf-8`` writes the content exactly as received. New files
are written as given, in UTF-8. Writing identical bytes changes nothing (``changed: false``).

Failure modes: ``already_exists`` (overwrite false), ``is_directory``, ``not_a_directory`` (a
parent is a file), ``stale_file``, ``permission_denied`` (read-only file or directory),
``encoding_error`` (text the file's encoding cannot hold), ``special_file``, ``no_space``,
``outside_workspace`` (also a symlink, even a dangling one, that points outside),
``protected_path`` (git's own files: inside ``.git`` or another git directory, a hooks path, or
a hard link of one of them). Replacing a file that has other hard links keeps its inode
(every name sees the new content) when all its names are inside the workspace; otherwise the
link is broken (a name outside is never written through) and the result says
``hardlink_broken: true``.
"""

from __future__ import annotations

import codecs
import stat

from zbtools.contract import ToolError
from zbtools.core.call.args import field
from zbtools.core.errors import already_exists, file_vanished, is_directory
from zbtools.core.files.fileformat import FileFormat, convert_newlines, probe_format
from zbtools.core.files.hashing import sha256_hex
from zbtools.core.files.replacing import create_file, replace_whole
from zbtools.core.files.staleness import Guard
from zbtools.toolkit.params import CONTENT_ALIASES, PATH_ALIASES, CheckSyntax, SyntaxReport
from zbtools.toolkit.writing import prepare_target
from zbtools.toolspec import ToolSpec

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Literal

    from zbtools.core.call.context import Context


class Params(CheckSyntax):
    path: str = field(aliases=PATH_ALIASES,
                      help="File path, relative to the workspace root or absolute inside it")
    content: str = field(text_body=True,
                         aliases=CONTENT_ALIASES, help="The complete new content of the file")
    overwrite: bool = field(default=True,
                            help="Replace an existing file (false: refuse with already_exists)")
    expected_sha256: str | None = field(
        default=None, help="Refuse with stale_file unless the file's current sha256 is this")
    newline: Literal["auto", "lf", "crlf", "as_is"] = field(
        default="auto", help="Line endings: auto keeps an existing file's style")
    encoding: str = field(default="auto",
                          help="Encoding: auto keeps an existing file's; or a codec name")


class Result(SyntaxReport):
    path: str = field(help="The file, relative to the workspace root")
    action: Literal["created", "overwritten", "unchanged"] = field(help="What happened")
    changed: bool = field(help="False when the file already had exactly this content")
    bytes_written: int = field(help="Size of the new file in bytes")
    sha256: str = field(help="SHA-256 of the new file's bytes")
    encoding: str = field(help="Encoding written")
    newline: str = field(help="Line-ending style written: lf, crlf, mixed or none")
    parents_created: list[str] = field(help="Directories created for the file")
    hardlink_broken: bool = field(help="The old file had other hard links, now separate")


def resolve_encoding(requested: str, fmt: FileFormat | None) -> FileFormat:
    """The format to write: the existing file's, or UTF-8, or an explicit codec."""
    if requested == "auto":
        if fmt is None or fmt.binary:
            return FileFormat()
        return fmt
    try:
        info = codecs.lookup(requested)
    except LookupError:
        info = None
    # rot13, base64, hex...: codecs of bytes to bytes or of text to text, not text encodings
    if info is None or not getattr(info, "_is_text_encoding", True):
        raise ToolError("invalid_arguments", f"unknown encoding {requested!r}" if info is None
                        else f"{requested!r} is not a text encoding",
                        hint='use "auto" or a codec name such as "utf-8", "latin-1"')
    name = info.name
    base = fmt or FileFormat()
    bom = b"\xef\xbb\xbf" if name == "utf-8-sig" else b""
    return FileFormat(encoding="utf-8" if name == "utf-8-sig" else name, bom=bom,
                      newline=base.newline)


def run(params: Params, ctx: Context) -> Result:
    from zbtools.core.files.decoding import newline_style

    with prepare_target(ctx, params.path) as res:
        fmt: FileFormat | None = None
        old: bytes | None = None
        if res.exists:
            assert res.st is not None
            if stat.S_ISDIR(res.st.st_mode):
                raise is_directory(params.path, "write")
            if not params.overwrite:
                raise already_exists(params.path, hint="use edit_file/apply_edit to change "
                                     "part of it, or pass overwrite: true to replace it whole",
                                     details={"path": res.rel, "size": res.st.st_size})
            fmt, old = probe_format(res, shown=params.path)
        target = resolve_encoding(params.encoding, fmt)
        text = convert_newlines(params.content, params.newline, fmt)
        if target.bom and text.startswith("\ufeff"):
            text = text[1:]  # the content's own byte-order mark is the one the file keeps
        data = target.encode(text, with_bom=True)
        from zbtools.core.editing.syntaxguard import check_change

        if old is not None or not res.exists:  # (a file too big to hold whole: unchecked)
            check_change(ctx, res.rel, old, data)  # the syntax guard, before any write
        try:
            res.ensure_parents()
            if res.exists:
                from zbtools.core.editing.txn import replace_file

                outcome = replace_file(ctx, res, data, expected_sha256=params.expected_sha256,
                                       shown=params.path, tool="write_file")
            elif params.overwrite:
                outcome = replace_whole(res, data, Guard(expected_sha256=params.expected_sha256),
                                        shown=params.path)
            elif params.expected_sha256 is not None:  # create only, yet a file was expected
                raise file_vanished(params.path, params.expected_sha256)
            else:
                outcome = create_file(res, data, shown=params.path)
        except BaseException:
            res.rollback_parents()
            raise
        if outcome.changed and (old is not None or outcome.created):
            from zbtools.core.editing.undo import other_names, record

            record(ctx, res.rel, old, data, "write_file", parents=list(res.created),
                   links=other_names(ctx, res) if outcome.hardlink_broken else None)
        action: Literal["created", "overwritten", "unchanged"] = (
            "created" if outcome.created else "overwritten" if outcome.changed else "unchanged")
        return Result(
            path=res.rel, action=action, changed=outcome.changed, bytes_written=len(data),
            sha256=sha256_hex(data), encoding=target.label, newline=newline_style(text),
            parents_created=list(res.created), hardlink_broken=outcome.hardlink_broken,
        )


def render(result: Result) -> str:
    verb = {"created": "created", "overwritten": "overwrote", "unchanged": "unchanged:"}[
        result.action]
    extra = " (a hard link was broken)" if result.hardlink_broken else ""
    return f"{verb} {result.path} ({result.bytes_written} bytes){extra}\n"


TOOL = ToolSpec(
    name="write_file",
    aliases=("create_file",),
    doc=__doc__,
    params=Params,
    result=Result,
    run=run,
    operand="path",
    render_text=render,
    destructive=True,
    idempotent=True,
)

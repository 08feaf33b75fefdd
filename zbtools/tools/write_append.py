"""Append text to the end of a file, creating it (and its parent directories) if missing.

The structural partner of write_file for large content: scaffold a file with
``write_file(path, "")``, then add it in chunks. The text is appended as given: no
newline is added before or after it; if the file did not end with a newline the result warns that
the text joined its last line. In an existing file, bare LF line endings in the text are written
as CRLF when the file uses CRLF, and the text is encoded in the file's encoding.

The append happens in place (``O_APPEND``). A call killed part-way leaves the file as it was or
with the whole new text: an append longer than what is left of the file's last 4 KiB page is
journaled first, and the next zbtools call cuts a partial tail back off. Pass
``expected_sha256`` to refuse with ``stale_file`` if the file changed since you read it.

Failure modes: ``hardlink_refused`` (the file has several hard links: appending in place would
change them all), ``stale_file``, ``binary_file``, ``is_directory``, ``not_a_directory`` (a parent
is a file), ``special_file``, ``encoding_error``, ``permission_denied`` (also a read-only file,
even for root), ``no_space``, ``outside_workspace``.
"""

from __future__ import annotations

from zbtools.contract import ToolError
from zbtools.core.call.args import Struct, field
from zbtools.core.files.fileformat import FileFormat, convert_newlines, probe_format
from zbtools.core.files.hashing import sha256_hex
from zbtools.core.files.replacing import create_file
from zbtools.tools.write_file import CONTENT_ALIASES, PATH_ALIASES, prepare_target
from zbtools.toolspec import ToolSpec

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Literal

    from zbtools.core.call.context import Context

HASH_LIMIT = 8 * 1024 * 1024


class Params(Struct):
    path: str = field(aliases=PATH_ALIASES,
                      help="File path, relative to the workspace root or absolute inside it")
    content: str = field(text_body=True,
                         aliases=CONTENT_ALIASES, help="Text to add at the end of the file")
    expected_sha256: str | None = field(
        default=None, help="Refuse with stale_file unless the file's current sha256 is this")
    newline: Literal["auto", "lf", "crlf", "as_is"] = field(
        default="auto", help="Line endings: auto follows the file's style")


class Result(Struct):
    path: str = field(help="The file, relative to the workspace root")
    created: bool = field(help="The file did not exist and was created")
    bytes_appended: int = field(help="Bytes added")
    size: int = field(help="The file's size afterwards")
    sha256: str | None = field(help="SHA-256 of the whole file afterwards (null above 8 MiB)")
    encoding: str = field(help="Encoding the text was written in")
    parents_created: list[str] = field(help="Directories created for the file")


def run(params: Params, ctx: Context) -> Result:
    with prepare_target(ctx, params.path) as res:
        if not res.exists:
            if params.expected_sha256 is not None:
                raise ToolError("stale_file", f"{params.path}: does not exist (expected_sha256 "
                                "given)", hint="read the file again; it was deleted or moved",
                                details={"expected_sha256": params.expected_sha256,
                                         "current_sha256": None})
            text = convert_newlines(params.content, params.newline, None)
            data = FileFormat().encode(text, with_bom=False)
            try:
                res.ensure_parents()
                create_file(res, data, shown=params.path)
            except BaseException:
                res.rollback_parents()
                raise
            from zbtools.core.editing.undo import record

            record(ctx, res.rel, None, data, "write_append", parents=list(res.created))
            return Result(path=res.rel, created=True, bytes_appended=len(data), size=len(data),
                          sha256=sha256_hex(data), encoding="utf-8",
                          parents_created=list(res.created))
        fmt, old = probe_format(res, shown=params.path)
        if fmt.binary:
            raise ToolError("binary_file", f"{params.path}: is a binary file",
                            hint="text is appended only to text files",
                            details={"path": params.path})
        text = convert_newlines(params.content, params.newline, fmt)
        data = fmt.encode(text, with_bom=fmt.size == 0)
        if fmt.size and not fmt.ends_with_newline and text and not text.startswith(("\n", "\r")):
            ctx.warn("the file did not end with a newline: the appended text continues its last "
                     "line")
        from zbtools.core.editing.txn import journaled_append

        size = journaled_append(ctx, res, data, expected_sha256=params.expected_sha256,
                                shown=params.path)
        unchanged_meanwhile = old is not None and size == len(old) + len(data)
        digest = None
        if old is not None and unchanged_meanwhile:
            from zbtools.core.editing.undo import record

            record(ctx, res.rel, old, old + data, "write_append")
            if size <= HASH_LIMIT:
                digest = sha256_hex(old + data)
        return Result(path=res.rel, created=False, bytes_appended=len(data), size=size,
                      sha256=digest, encoding=fmt.label, parents_created=[])


def render(result: Result) -> str:
    verb = "created" if result.created else "appended to"
    return f"{verb} {result.path} (+{result.bytes_appended} bytes, now {result.size})\n"


TOOL = ToolSpec(
    name="write_append",
    doc=__doc__,
    params=Params,
    result=Result,
    run=run,
    operand="path",
    render_text=render,
)

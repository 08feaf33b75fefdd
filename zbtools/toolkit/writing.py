"""What the writing tools share: the target of a whole-file write, and an append.

``prepare_target`` resolves a file to write (never the workspace root); ``append_text`` is
write_append's whole operation (``AppendResult``), which save_plan_append uses on a plan file.
"""

from __future__ import annotations

from zbtools.contract import ToolError
from zbtools.core.call.args import field
from zbtools.core.editing.syntaxguard import check_change
from zbtools.core.errors import file_vanished, is_directory
from zbtools.core.files.fileformat import FileFormat, convert_newlines, probe_format
from zbtools.core.files.hashing import sha256_hex
from zbtools.core.files.replacing import create_file
from zbtools.toolkit.params import SyntaxReport

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Literal

    from zbtools.core.call.context import Context
    from zbtools.core.files.workspace import Resolved


def prepare_target(ctx: Context, path: str) -> Resolved:
    res = ctx.workspace.resolve(path, create_parents=True, write=True)
    if res.is_root:
        res.close()
        raise is_directory(path, "write", root=True)
    return res


HASH_LIMIT = 8 * 1024 * 1024


class AppendResult(SyntaxReport):
    path: str = field(help="The file, relative to the workspace root")
    created: bool = field(help="The file did not exist and was created")
    bytes_appended: int = field(help="Bytes added")
    size: int = field(help="The file's size afterwards")
    sha256: str | None = field(help="SHA-256 of the whole file afterwards (null above 8 MiB)")
    encoding: str = field(help="Encoding the text was written in")
    parents_created: list[str] = field(help="Directories created for the file")


def append_text(ctx: Context, path: str, content: str, *,
                newline: Literal["auto", "lf", "crlf", "as_is"] = "auto",
                expected_sha256: str | None = None) -> AppendResult:
    """Append ``content`` to the file ``path`` (created if missing): write_append's run, and
    save_plan_append's."""
    with prepare_target(ctx, path) as res:
        if not res.exists:
            if expected_sha256 is not None:
                raise file_vanished(path, expected_sha256)
            text = convert_newlines(content, newline, None)
            data = FileFormat().encode(text, with_bom=False)
            check_change(ctx, res.rel, None, data)  # (the syntax guard: before any write)
            try:
                res.ensure_parents()
                create_file(res, data, shown=path)
            except BaseException:
                res.rollback_parents()
                raise
            from zbtools.core.editing.undo import record

            record(ctx, res.rel, None, data, "write_append", parents=list(res.created))
            return AppendResult(path=res.rel, created=True, bytes_appended=len(data),
                                size=len(data), sha256=sha256_hex(data), encoding="utf-8",
                                parents_created=list(res.created))
        fmt, old = probe_format(res, shown=path)
        if fmt.binary:
            raise ToolError("binary_file", f"{path}: is a binary file",
                            hint="text is appended only to text files",
                            details={"path": path})
        text = convert_newlines(content, newline, fmt)
        data = fmt.encode(text, with_bom=fmt.size == 0)
        if old is not None:  # (a file too big to hold whole is not checked)
            check_change(ctx, res.rel, old, old + data)
        if fmt.size and not fmt.ends_with_newline and text and not text.startswith(("\n", "\r")):
            ctx.warn("the file did not end with a newline: the appended text continues its last "
                     "line")
        from zbtools.core.editing.txn import journaled_append

        size = journaled_append(ctx, res, data, expected_sha256=expected_sha256,
                                shown=path)
        unchanged_meanwhile = old is not None and size == len(old) + len(data)
        digest = None
        if old is not None and unchanged_meanwhile:
            from zbtools.core.editing.undo import record

            record(ctx, res.rel, old, old + data, "write_append")
            if size <= HASH_LIMIT:
                digest = sha256_hex(old + data)
        return AppendResult(path=res.rel, created=False, bytes_appended=len(data), size=size,
                            sha256=digest, encoding=fmt.label, parents_created=[])

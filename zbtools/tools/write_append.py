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

from zbtools.core.call.args import field
from zbtools.toolkit.params import CONTENT_ALIASES, PATH_ALIASES, CheckSyntax
from zbtools.toolkit.writing import AppendResult, append_text
from zbtools.toolspec import ToolSpec

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Literal

    from zbtools.core.call.context import Context

class Params(CheckSyntax):
    path: str = field(aliases=PATH_ALIASES,
                      help="File path, relative to the workspace root or absolute inside it")
    content: str = field(text_body=True,
                         aliases=CONTENT_ALIASES, help="Text to add at the end of the file")
    expected_sha256: str | None = field(
        default=None, help="Refuse with stale_file unless the file's current sha256 is this")
    newline: Literal["auto", "lf", "crlf", "as_is"] = field(
        default="auto", help="Line endings: auto follows the file's style")


def run(params: Params, ctx: Context) -> AppendResult:
    return append_text(ctx, params.path, params.content, newline=params.newline,
                       expected_sha256=params.expected_sha256)


def render(result: AppendResult) -> str:
    verb = "created" if result.created else "appended to"
    return f"{verb} {result.path} (+{result.bytes_appended} bytes, now {result.size})\n"


TOOL = ToolSpec(
    name="write_append",
    doc=__doc__,
    params=Params,
    result=AppendResult,
    run=run,
    operand="path",
    render_text=render,
)

"""The read-modify-write cycle shared by the edit tools.

Reads the file once (regular files only, binary refused), checks ``expected_sha256``, decodes it
with full fidelity (``textio.decode``), lets the matcher compute the new text, encodes it the way
the file was (encoding, BOM, undecodable bytes), and writes it atomically, refusing with
``stale_file`` if the file changed between the read and the write. ``dry_run`` stops before the
write and returns the same report and diff.

Failure modes: the matcher's refusals (``no_match``, ``ambiguous_match``, ``overlapping_edits``,
``no_change``, ``placeholder_in_new``), ``encoding_error`` (new text the file's encoding cannot
hold, or non-ASCII text for a file that is not valid UTF-8: that would mix encodings),
``binary_file``, ``not_found``, ``is_directory``, ``stale_file``, ``permission_denied``.
"""

from __future__ import annotations

from zbtools.contract import ToolError
from zbtools.core.textio import atomic_write, check_expected, decode, read_bytes, sha256_hex

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from zbtools.core.context import Context
    from zbtools.core.matching import Applied

MAX_EDIT_BYTES = 256 * 1024 * 1024


class EditOutcome:
    def __init__(self, path: str, applied: Applied, diff: str, sha256: str, changed: bool,
                 dry_run: bool) -> None:
        self.path = path
        self.applied = applied
        self.diff = diff
        self.sha256 = sha256
        self.changed = changed
        self.dry_run = dry_run


def to_tool_error(err: Any) -> ToolError:
    return ToolError(err.code, err.message, hint=err.hint, details=err.details)


def check_new_text(texts: list[str], invalid_utf8: bool, shown: str) -> None:
    if not invalid_utf8:
        return
    for text in texts:
        for ch in text:
            if ord(ch) > 127 and not 0xDC80 <= ord(ch) <= 0xDCFF:
                raise ToolError(
                    "encoding_error", f"{shown}: is not valid UTF-8 and the new text contains "
                    f"{ch!r}; writing it would mix encodings in one file",
                    hint="use only ASCII in the new text, or convert the file to UTF-8 first "
                    "(write_file with encoding: utf-8)", details={"character": ch})


def edit_file_text(ctx: Context, path: str, compute: Callable[[str], Applied],
                   new_texts: list[str], *, expected_sha256: str | None,
                   dry_run: bool) -> EditOutcome:
    """Apply ``compute`` to the file's text and write the result (unless ``dry_run``)."""
    from zbtools.core.matching import MatchError, unified_diff

    with ctx.workspace.resolve(path) as res:
        data = read_bytes(res, max_bytes=MAX_EDIT_BYTES, shown=path)
        check_expected(data, expected_sha256, path)
        decoded = decode(data, shown=path)
        check_new_text(new_texts, decoded.invalid_utf8, path)
        try:
            applied = compute(decoded.text)
        except MatchError as err:
            raise to_tool_error(err) from None
        rel = res.rel
        if not applied.changed:
            return EditOutcome(rel, applied, "", sha256_hex(data), False, dry_run)
        new_data = decoded.encode(applied.text)
        diff = unified_diff(rel, decoded.display_text(), _display(applied.text, decoded))
        if dry_run:
            return EditOutcome(rel, applied, diff, sha256_hex(new_data), True, True)
        atomic_write(res, new_data, expected_sha256=sha256_hex(data), shown=path)
        return EditOutcome(rel, applied, diff, sha256_hex(new_data), True, False)


def _display(text: str, decoded: Any) -> str:
    if not decoded.invalid_utf8:
        return text
    return str(text.encode("utf-8", "surrogateescape").decode("utf-8", "replace"))

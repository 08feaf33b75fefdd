"""A session's parses of single files, kept against the bytes they were made from.

``outline`` of a file, ``find_symbol``, ``edit_symbol`` and ``grep_search --show-scope`` read a
file and parse it. In a ``batch`` or ``mcp`` session (a search cache on the call's context) the
result is kept under the file's path with the file's bytes as the check: a later call that reads
exactly those bytes reuses it, any other bytes parse again. Content, not a stat signature,
validates an entry, so a version a batch sync group holds but has not written yet, or a file
changed twice within one timestamp tick, is never answered from an older parse
(docs/internals/code.md#symbol-tools). A call outside a session parses every time and keeps
nothing.

Map: ``session_parse``.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import TypeVar

    from zbtools.core.call.context import Context

    T = TypeVar("T")

_KEY = "code-parse"
# what a parse holds beyond the bytes kept as its check (definitions, their names and lines)
COST_PER_BYTE = 3


def session_parse(ctx: Context, what: str, rel: str, data: bytes, compute: Callable[[], T]
                  ) -> T:
    """``compute()`` (a parse of ``data``, the bytes of ``rel``, of the kind ``what``), or the
    value a call of this session computed from the same bytes."""
    cache = ctx.search_cache
    if cache is None or cache.capacity <= 0:
        return compute()
    key = (_KEY, what, ctx.workspace.root, rel)
    found: T | None = cache.get(key, data)
    if found is not None:
        return found
    value = compute()
    cache.put(key, data, value, COST_PER_BYTE * len(data))
    return value

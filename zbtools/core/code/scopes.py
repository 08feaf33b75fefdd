"""The definition around a line: the scopes grep's ``show_scope`` labels its matches with.

A line's scope is the innermost definition whose lines hold it (``start_line`` to ``end_line``,
as ``read_symbols`` gives them, so a label agrees with the outline), or None at the top level.
Only definitions that hold code are scopes: functions, methods, classes and the other
containers, types, macros and properties; a constant or a field is data, never a scope
(docs/internals/code.md#grep-scopes).

Map: ``DATA_KINDS``; ``Scopes`` (a file's scopes, ``Scopes.at(line)``); ``scopes_of`` (a
language and a file's bytes to its ``Scopes``).
"""

from __future__ import annotations

from bisect import bisect_right

from zbtools.core.code.symbols import read_symbols

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

    from zbtools.core.code.languages import Language
    from zbtools.core.code.symbols import Definition

DATA_KINDS = frozenset({"constant", "field"})


class Scopes:
    """A file's scopes, in file order, each with the scope that holds it."""

    __slots__ = ("_definitions", "_parents", "_starts")

    def __init__(self, definitions: Iterable[Definition]) -> None:
        # read_symbols' order: by start, an enclosing definition before what it holds
        self._definitions = [d for d in definitions if d.kind not in DATA_KINDS]
        self._starts = [d.start_line for d in self._definitions]
        self._parents: list[int] = []
        stack: list[int] = []
        for index, definition in enumerate(self._definitions):
            while stack and not self._holds(stack[-1], definition):
                stack.pop()
            self._parents.append(stack[-1] if stack else -1)
            stack.append(index)

    def _holds(self, index: int, inner: Definition) -> bool:
        outer = self._definitions[index]
        return outer.start_byte <= inner.start_byte and inner.end_byte <= outer.end_byte

    def at(self, line: int) -> Definition | None:
        """The innermost scope whose lines hold ``line`` (1-based); None at the top level.

        The last scope starting on or before the line holds it, or one of the scopes around
        that one does: a scope that holds the line without holding that one would have to end
        before it starts, so both share the line, and the later one (the one a reader meets
        last before the match) is the answer."""
        index = bisect_right(self._starts, line) - 1
        while index >= 0 and self._definitions[index].end_line < line:
            index = self._parents[index]
        return self._definitions[index] if index >= 0 else None


def scopes_of(language: Language, source: bytes) -> Scopes:
    """The scopes of ``source``, a file in ``language`` (one with symbols)."""
    return Scopes(read_symbols(language, source, references=False).definitions)

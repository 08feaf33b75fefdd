"""A Python file edited again in the same process, checked by compiling only what changed.

A long-lived process (``batch``, ``mcp``) that checked a file keeps its bytes (``remember``).
When the next change of that file starts from exactly those bytes, the file is cut into units
(once, from its ``ast``): its top-level statements, and the members of its top-level classes.
The units the change touched are compiled alone, a class's members under a ``class _:`` line
between two ``pass`` lines at the members' indentation; when they compile the whole file does
(docs/internals/code.md#syntax-guard gives the argument and where it stops: a change near a
``from __future__`` import, a ``global`` or ``nonlocal`` statement, a file with a coding
line), and ``check`` says True. Anything else is None: the caller compiles the whole file.

Map: ``check``, ``remember``, ``forget``; ``Units`` (a file's units, kept up to date across
changes); ``quiet_compile``, ``common_prefix``, ``common_suffix`` (shared with ``syntax``).
"""

from __future__ import annotations

from bisect import bisect_right

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

KEEP = 16  # files remembered per process
_CACHE: dict[str, Units] = {}
# a chunk bigger than this share of the file is not worth it: the whole file is compiled
MAX_SHARE = 0.5
# a statement whose scope may reach past the chunk: the whole file is compiled
BAIL = rb"(?m)(?:^|;)[ \t]*(?:global|nonlocal)\b"


class Units:
    """A file known to compile: its bytes and, once cut, its units as byte offsets of line
    starts. ``top``: each top-level unit's start, then the end of the file; ``members``: for a
    top-level class (by its index in ``top``), each member's start, then the class's end."""

    __slots__ = ("cut", "data", "flags", "future", "members", "top")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.cut = False
        self.top: list[int] = []
        self.members: dict[int, list[int]] = {}
        self.flags = 0
        self.future = -1  # the index of the last unit holding a __future__ import

    def cut_units(self) -> bool:
        """Cut ``data`` into units; False when it cannot be (no statements, a coding line)."""
        import _ast as ast  # (the C module: ``ast`` itself imports enum and more)

        self.cut = True
        data = self.data
        if b"coding" in b"\n".join(data.split(b"\n", 2)[:2]) or data.startswith(b"\xef\xbb\xbf"):
            return False
        try:
            tree = quiet_compile(data, ast.PyCF_ONLY_AST)
            assert isinstance(tree, ast.Module)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return False
        starts = [0]
        find = data.find
        at = find(b"\n")
        while at != -1:
            starts.append(at + 1)
            at = find(b"\n", at + 1)
        starts.append(len(data))

        def boundaries(body: list[ast.stmt]) -> list[int]:
            out: list[int] = []
            last_end = 0
            for stmt in body:
                first = stmt.lineno
                for deco in getattr(stmt, "decorator_list", ()):
                    first = min(first, deco.lineno)
                if first > last_end:  # (not on a line an earlier statement ends on)
                    out.append(starts[first - 1])
                last_end = max(last_end, stmt.end_lineno or stmt.lineno)
            return out

        top = boundaries(tree.body)
        if not top:
            return False
        self.top = [*top, len(data)]
        for stmt in tree.body:
            if isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__":
                import __future__

                self.future = bisect_right(self.top, starts[stmt.lineno - 1]) - 1
                for alias in stmt.names:
                    feature = getattr(__future__, alias.name, None)
                    self.flags |= getattr(feature, "compiler_flag", 0)
            elif isinstance(stmt, ast.ClassDef) and stmt.body and \
                    stmt.body[0].lineno > stmt.lineno:
                index = bisect_right(self.top, starts[stmt.lineno - 1]) - 1
                inner = boundaries(stmt.body)
                if inner:
                    self.members[index] = [*inner, self.top[index + 1]]
        return True


def remember(key: str | None, data: bytes) -> None:
    """``data`` compiles: a later change of the file that starts from it may be checked in
    part."""
    if key is None:
        return
    _CACHE.pop(key, None)
    if len(_CACHE) >= KEEP:
        del _CACHE[next(iter(_CACHE))]
    _CACHE[key] = Units(data)


def forget(key: str | None) -> None:
    if key is not None:
        _CACHE.pop(key, None)


def check(key: str, before: bytes, after: bytes) -> bool | None:
    """True when ``after`` compiles, proven from the units of ``before`` the change touched;
    None when that cannot be told so (the caller compiles ``after`` whole)."""
    units = _CACHE.get(key)
    if units is None or units.data != before:
        return None
    if not units.cut and not units.cut_units():
        _CACHE.pop(key, None)
        return None
    if not units.top:
        return None
    limit = min(len(before), len(after))
    lo = common_prefix(before, after, limit)
    hi = len(before) - common_suffix(before, after, limit - lo)
    top = units.top
    first = min(bisect_right(top, lo) - 1, len(top) - 2)  # (text added at the end: the last)
    last = bisect_right(top, hi - 1) - 1 if hi > lo else first
    if first < 0 or first <= units.future or last >= len(top) - 1:
        return None  # in the lines before the first statement, or near a __future__ import
    delta = len(after) - len(before)
    members = units.members.get(first) if first == last else None
    if members is not None and members[0] <= lo < members[-1]:
        inner_first = bisect_right(members, lo) - 1
        inner_last = bisect_right(members, hi - 1) - 1 if hi > lo else inner_first
        start, end = members[inner_first], members[inner_last + 1]
        chunk = after[start:end + delta]
        source = member_source(chunk, _indent(before, start) if inner_first > 0 else None,
                               _indent(before, end) if inner_last + 2 < len(members) else None)
        tail = end < len(before)
    else:
        start, end = top[first], top[last + 1]
        chunk = after[start:end + delta]
        if b"coding" in b"\n".join(chunk.split(b"\n", 2)[:2]):
            return None
        source = chunk
        tail = end < len(before)
        members = None
    if len(chunk) > MAX_SHARE * len(after) or (tail and not chunk.endswith(b"\n")) or \
            b"__future__" in chunk or b"__future__" in before[start:end]:
        return None
    if (b"global" in chunk or b"nonlocal" in chunk) and _bail(chunk):
        return None
    if not _compiles(source, units.flags):
        return None
    _advance(units, after, first, last, members, start, end, delta)
    return True


def member_source(chunk: bytes, before: bytes | None, after: bytes | None) -> bytes:
    """The members ``chunk`` of a class, to compile alone: under ``class _:``, between a
    ``pass`` at the indentation of the member before (``before``; None: the class's first
    member) and one at the indentation of the member after (None: the class's last), which
    the tokenizer and the parser meet as they meet the real neighbours."""
    opening = before + b"pass\n" if before is not None else b""
    closing = after + b"pass\n" if after is not None else b""
    return b"class _:\n" + opening + chunk + closing


def _bail(chunk: bytes) -> bool:
    import re

    return re.search(BAIL, chunk) is not None


def _indent(data: bytes, at: int) -> bytes:
    """The whitespace that starts the first line of code at or after byte ``at`` (a line
    start): blank and comment lines are skipped, as the tokenizer skips them. (A unit may
    start with blank lines: text inserted right at a unit's start joins that unit.)"""
    while True:
        end = at
        while end < len(data) and data[end] in b" \t\f":
            end += 1
        if end < len(data) and data[end] in b"#\r\n":
            newline = data.find(b"\n", end)
            if newline != -1:
                at = newline + 1
                continue
        return data[at:end]


def _compiles(source: bytes, flags: int) -> bool:
    try:
        quiet_compile(source, flags)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def _advance(units: Units, after: bytes, first: int, last: int, members: list[int] | None,
             start: int, end: int, delta: int) -> None:
    """The units of ``after``: the units the change touched merged into one, those after it
    moved by ``delta`` bytes."""
    top = units.top
    if members is not None:
        inner_first = members.index(start)
        inner_last = members.index(end) - 1
        members[inner_first + 1:] = [b + delta for b in members[inner_last + 1:]]
        units.top = [*top[:first + 1], *(t + delta for t in top[first + 1:])]
        shifted_from = first + 1
        removed = 0
    else:
        units.top = [*top[:first + 1], *(t + delta for t in top[last + 1:])]
        shifted_from = last + 1
        removed = last - first
    moved: dict[int, list[int]] = {}
    for index, bounds in units.members.items():
        if index < first or (index == first and members is not None):
            moved[index] = bounds
        elif index >= shifted_from:
            moved[index - removed] = [b + delta for b in bounds]
    units.members = moved
    units.data = after


# ---- what the guard's modules share -----------------------------------------------------------

def quiet_compile(data: bytes | str, flags: int = 0) -> object:
    """``compile`` without printing its warnings (invalid escape sequences...): they are not
    errors, and stderr is not ours to write. Through the C module's filter list: the
    ``warnings`` module costs a cold call more than the compile (tests/test_import_budget.py)."""
    import _warnings
    import sys

    entry = ("ignore", None, Warning, None, 0)
    # once ``warnings`` is imported its list is the one in force (catch_warnings rebinds it)
    filters: list[Any] = getattr(sys.modules.get("warnings"), "filters", _warnings.filters)
    mutated = getattr(_warnings, "_filters_mutated", None)
    filters.insert(0, entry)
    if mutated is not None:
        mutated()
    try:
        return compile(data, "<edit>", "exec", flags, dont_inherit=True)
    finally:
        filters.remove(entry)
        if mutated is not None:
            mutated()


def common_prefix(a: bytes, b: bytes, limit: int) -> int:
    if a[:limit] == b[:limit]:
        return limit
    lo, hi = 0, limit  # a[:lo] == b[:lo], a[:hi] != b[:hi]: halve (each compare is memcmp)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid
    return lo


def common_suffix(a: bytes, b: bytes, limit: int) -> int:
    if limit <= 0:
        return 0
    if a[len(a) - limit:] == b[len(b) - limit:]:
        return limit
    lo, hi = 0, limit
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if a[len(a) - mid:len(a) - lo] == b[len(b) - mid:len(b) - lo]:
            lo = mid
        else:
            hi = mid
    return lo

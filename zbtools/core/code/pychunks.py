"""A Python file edited again in the same process, checked by compiling only what changed.

A long-lived process (``batch``, ``mcp``) that checked a file keeps its bytes (``remember``).
When the next change of that file starts from exactly those bytes, the file is cut into units
(once, from its ``ast``): its top-level statements, and the members of its top-level classes.
The units the change touched are compiled alone, a class's members under a ``class _:`` line
between two ``pass`` lines at the members' indentation, and a change inside one function's body
(a top-level function or a method, not async) only the body statements it touched, under a
``def _():`` line at the function's own indentation; when they compile the whole file does
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
# the sentinel for the statement after a function-body chunk: valid in a function body only
IN_FUNCTION = b"return\n"


class Units:
    """A file known to compile: its bytes and, once cut, its units as byte offsets of line
    starts. ``top``: each top-level unit's start, then the end of the file; ``members``: for a
    top-level class (by its index in ``top``), each member's start, then the class's end;
    ``bodies``: for a function (top-level or a method, not ``async``, by its unit's start) with
    no ``global`` or ``nonlocal`` statement, the start of each statement of its body and the
    unit's end, counted from the unit's start (a change elsewhere moves only the key)."""

    __slots__ = ("bodies", "cut", "data", "flags", "future", "members", "top")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.cut = False
        self.top: list[int] = []
        self.members: dict[int, list[int]] = {}
        self.bodies: dict[int, list[int]] = {}
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

        def body(stmt: ast.stmt, start: int, end: int) -> None:
            # only a body whose first statement starts a line of its own (not ``def f(): x``);
            # not an async one, whose statements depend on each other (``await`` needs it,
            # ``return 1`` is an error once a ``yield`` is anywhere in it)
            if not isinstance(stmt, ast.FunctionDef) or not stmt.body:
                return
            head = stmt.body[0]
            line = starts[head.lineno - 1]
            if head.lineno <= stmt.lineno or data[line:line + head.col_offset].strip():
                return
            inner = boundaries(stmt.body)
            if inner and inner[0] == line and not _bail(data[start:end]):
                self.bodies[start] = [b - start for b in (*inner, end)]

        top = boundaries(tree.body)
        if not top:
            return False
        self.top = [*top, len(data)]
        for stmt in tree.body:
            if isinstance(stmt, ast.FunctionDef):
                index = bisect_right(self.top, starts[stmt.lineno - 1]) - 1
                body(stmt, self.top[index], self.top[index + 1])
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
                    bounds = self.members[index] = [*inner, self.top[index + 1]]
                    for member in stmt.body:
                        at = bisect_right(bounds, starts[member.lineno - 1]) - 1
                        if 0 <= at < len(bounds) - 1:
                            body(member, bounds[at], bounds[at + 1])
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
        if inner_first == inner_last and _statements(units, before, after, start, end, lo, hi,
                                                     _indent(before, start)):
            _advance(units, after, first, last, members, start, end, delta, statements=True)
            return True
        chunk = after[start:end + delta]
        source = member_source(chunk, _indent(before, start) if inner_first > 0 else None,
                               _indent(before, end) if inner_last + 2 < len(members) else None)
        tail = end < len(before)
    else:
        start, end = top[first], top[last + 1]
        if first == last and _statements(units, before, after, start, end, lo, hi, None):
            _advance(units, after, first, last, None, start, end, delta, statements=True)
            return True
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


def _statements(units: Units, before: bytes, after: bytes, start: int, end: int, lo: int,
                hi: int, member_indent: bytes | None) -> bool:
    """True when the change (bytes ``lo`` to ``hi`` of ``before``) lies in the body of the
    function that is the unit ``start``-``end`` (``member_indent``: the indentation of a
    method's class members; None: a top-level function) and the body statements it touched
    compile alone, under ``def _():`` at the function's own indentation, after a ``pass`` at the
    indentation of the statement before (none for the first), then a ``return`` at the
    indentation of the statement after (none after the last), which only a function body
    takes, and a ``pass`` at the indentation of the code after the function (none at the end
    of the file): a chunk that leaves the function, or leaves the lines after it at an
    indentation no open block has, fails alone as the file would whole
    (docs/internals/code.md#syntax-guard)."""
    bounds = units.bodies.get(start)
    if bounds is None:
        return False
    lo -= start
    hi -= start
    if not bounds[0] <= lo or hi > bounds[-1] or (hi == lo and lo == bounds[-1]):
        return False
    first = bisect_right(bounds, lo) - 1
    last = bisect_right(bounds, hi - 1) - 1 if hi > lo else first
    last = min(last, len(bounds) - 2)
    delta = len(after) - len(before)
    chunk_start, chunk_end = start + bounds[first], start + bounds[last + 1]
    chunk = after[chunk_start:chunk_end + delta]
    if chunk_end < len(before) and not chunk.endswith(b"\n"):
        return False
    # a scope statement reaches the function's other statements (a function holding one has
    # no ``bodies`` entry): one in the new text, and the whole function is compiled
    if b"__future__" in chunk or ((b"global" in chunk or b"nonlocal" in chunk) and
                                  _bail(chunk)):
        return False
    header = b"def _():\n" if member_indent is None else b"class _:\n" + member_indent + \
        b"def _():\n"
    opening = _indent(before, start + bounds[first - 1]) + b"pass\n" if first > 0 else b""
    closing = _indent(before, chunk_end) + IN_FUNCTION if last + 2 < len(bounds) else b""
    if start + bounds[-1] < len(before):
        closing += _indent(before, start + bounds[-1]) + b"pass\n"
    if not _compiles(header + opening + chunk + closing, units.flags):
        return False
    bounds[first + 1:] = [b + delta for b in bounds[last + 1:]]
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
             start: int, end: int, delta: int, *, statements: bool = False) -> None:
    """The units of ``after``: the units the change touched merged into one, those after it
    moved by ``delta`` bytes. ``statements``: the change was checked in the body of the
    function ``start``-``end``, whose statements ``_statements`` already merged."""
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
    bodies: dict[int, list[int]] = {}
    for key, bounds in units.bodies.items():
        if key < start or (key == start and statements):
            bodies[key] = bounds
        elif key >= end:
            bodies[key + delta] = bounds
    units.bodies = bodies
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

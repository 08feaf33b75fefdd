"""The parse errors a change introduced: present in a file's new bytes, not in its old ones.

The syntax guard of every writer (docs/internals/code.md#syntax-guard) asks ``introduced`` with
the file's language and its bytes before and after the change. Python is checked with the
standard library's own compiler (``compile``: the parser, the symbol table and the code
generator's checks, no tree-sitter): when the new text compiles nothing was introduced, and when
it does not while the old text did, the compiler's one error is the one introduced. Every other
language, and Python whose old text was already broken, is parsed with tree-sitter; its
``ERROR`` and ``MISSING`` nodes of both versions are compared by kind and by line, lines after
the changed bytes mapped back by the lines the change added or removed, so that an error the
file already had is never reported again because it moved. In a long-lived process (``batch``,
``mcp``) a Python file edited again is checked by compiling only the top-level statements (or
top-level class members) the change touched (``pychunks``), and a file of another language is
parsed again from its last tree, as tree-sitter parses an edited text.

Map: ``Problem``; ``introduced`` (the entry point), ``python_error``, ``tree_errors``;
``MAX_PROBLEMS``.
"""

from __future__ import annotations

from zbtools.core.code.languages import MAX_PARSE_BYTES
from zbtools.core.code.pychunks import common_prefix, common_suffix, quiet_compile

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from zbtools.core.code.languages import Language

MAX_PROBLEMS = 10  # reported per file: the first ones (a model fixes the first first)
# a broken Python file bigger than this is compared around the change only (``_window_diff``)
WINDOW_BYTES = 512 * 1024
WINDOW_LINES = 200
CONTEXT_LINES = 1  # lines shown each side of a problem's line


class Problem:
    """One parse error of the new text: 1-based line and column (characters), a message, and
    the lines around it numbered as ``read_file`` numbers them."""

    __slots__ = ("column", "line", "lines", "message")

    def __init__(self, line: int, column: int, message: str, lines: str = "") -> None:
        self.line = line
        self.column = column
        self.message = message
        self.lines = lines

    def to_json(self) -> dict[str, object]:
        return {"line": self.line, "column": self.column, "message": self.message,
                "lines": self.lines}

    def __repr__(self) -> str:
        return f"Problem({self.line}:{self.column} {self.message})"


def introduced(language: Language, before: bytes | None, after: bytes, *,
               key: str | None = None) -> list[Problem]:
    """The parse errors of ``after`` that ``before`` (None: a new file) did not have, first
    first, at most ``MAX_PROBLEMS``. ``key`` names the file for the Python chunk cache (a
    later change of the same file, whose old bytes are this change's new ones, compiles only
    what it touched)."""
    if len(after) > MAX_PARSE_BYTES:
        return []
    old = before or b""
    if language.name == "python":
        return _python(old, after, key)
    problems = _tree_diff(language, old, after, key)
    return problems[:MAX_PROBLEMS]


# ---- Python: the compiler ------------------------------------------------------------------

def python_error(data: bytes | str) -> SyntaxError | None:
    """The compiler's first error in ``data`` (None: it compiles)."""
    try:
        quiet_compile(data)
    except SyntaxError as exc:
        return exc
    except ValueError as exc:  # (null bytes, on some versions)
        return SyntaxError(str(exc))
    except (RecursionError, MemoryError):
        return None  # too deep to tell: the guard stays silent rather than guess
    return None


def _python(before: bytes, after: bytes, key: str | None) -> list[Problem]:
    from zbtools.core.code import pychunks  # (already loaded: the names above)

    verdict = pychunks.check(key, before, after) if key is not None else None
    if verdict is True:
        return []
    error = python_error(after)
    if error is None:
        pychunks.remember(key, after)
        return []
    pychunks.forget(key)
    old_error = python_error(before)
    if old_error is None:
        return [_python_problem(error, after)]
    # Both versions broken: the compiler stops at its first error, so tree-sitter compares them
    # all; the compiler's first error still counts when it moved to a line of its own.
    from zbtools.core.code.languages import LANGUAGES

    if len(after) > WINDOW_BYTES:
        problems = _window_diff(LANGUAGES["python"], before, after)
    else:
        problems = _tree_diff(LANGUAGES["python"], before, after)
    change = Change(before, after)
    new_line = (error.lineno or 1) - 1
    old_line = (old_error.lineno or 1) - 1
    mapped = change.to_before_row(new_line)
    if mapped is None:
        same = change.in_before_region(old_line)
    else:
        same = mapped == old_line
    if not same and all(p.line != new_line + 1 for p in problems):
        problems.append(_python_problem(error, after))
        problems.sort(key=lambda p: (p.line, p.column))
    return problems[:MAX_PROBLEMS]


def _python_problem(error: SyntaxError, data: bytes) -> Problem:
    line = error.lineno or 1
    column = error.offset or 1
    message = error.msg or str(error)
    column = max(column, 1)
    return Problem(line, column, message, excerpt(data, line - 1))


# ---- tree-sitter ---------------------------------------------------------------------------

class Error:
    """A tree-sitter ``ERROR`` or ``MISSING`` node: its kind, start (row, byte column) and the
    bytes it covers."""

    __slots__ = ("column", "kind", "row", "text")

    def __init__(self, kind: str, row: int, column: int, text: bytes) -> None:
        self.kind = kind
        self.row = row
        self.column = column
        self.text = text


def tree_errors(language: Language, data: bytes, tree: Any = None) -> list[Error]:
    """The ``ERROR`` and ``MISSING`` nodes of ``data``'s parse tree (``tree``, else parsed
    now), in order."""
    if tree is None:
        from zbtools.core.code.languages import parser

        tree = parser(language).parse(data)
    root = tree.root_node
    if not root.has_error:
        return []
    found: list[Error] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if node.is_missing:
            point = node.start_point
            found.append(Error(f"missing {node.type}", point.row, point.column, b""))
            continue
        if node.is_error:
            point = node.start_point
            found.append(Error("error", point.row, point.column,
                               data[node.start_byte:node.end_byte]))
            continue
        stack.extend(child for child in reversed(node.children) if child.has_error)
    found.sort(key=lambda e: (e.row, e.column))
    return found


def _for_tree(data: bytes) -> bytes:
    """``data`` as tree-sitter reads it: UTF-8, without a byte-order mark (UTF-16 and UTF-32
    files, known by theirs, are converted, and a file that is not UTF-8 is read as Latin-1:
    tree-sitter would call its other bytes errors; rows and columns stay those of the text)."""
    if data.startswith(b"\xef\xbb\xbf"):
        return data[3:]
    for bom, codec in ((b"\xff\xfe\x00\x00", "utf-32-le"), (b"\x00\x00\xfe\xff", "utf-32-be"),
                       (b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be")):
        if data.startswith(bom):
            try:
                return data[len(bom):].decode(codec).encode("utf-8", "surrogatepass")
            except UnicodeError:
                return data
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1").encode("utf-8")
    return data


class Change:
    """Where two versions of a file differ: the common prefix and suffix of their bytes, and
    the rows of each version's changed region (0-based, inclusive)."""

    def __init__(self, before: bytes, after: bytes) -> None:
        limit = min(len(before), len(after))
        prefix = common_prefix(before, after, limit)
        suffix = common_suffix(before, after, limit - prefix)
        self.before_rows = (before.count(b"\n", 0, prefix),
                            before.count(b"\n", 0, len(before) - suffix))
        self.after_rows = (self.before_rows[0], after.count(b"\n", 0, len(after) - suffix))
        self.row_delta = self.after_rows[1] - self.before_rows[1]
        # a change that ends a line inside it: the rows after it keep their numbers
        self.region_empty = prefix == len(before) - suffix and prefix == len(after) - suffix

    def to_before_row(self, row: int) -> int | None:
        """The row of ``before`` an unchanged row of ``after`` was (None: a changed row)."""
        if row < self.after_rows[0]:
            return row
        if row > self.after_rows[1]:
            return row - self.row_delta
        return None

    def in_before_region(self, row: int) -> bool:
        return self.before_rows[0] <= row <= self.before_rows[1]


TREES_KEPT = 8  # parse trees kept per process, for a file edited again (batch, mcp)
_TREES: dict[str, tuple[bytes, Any]] = {}


def _parse_after(language: Language, before: bytes, after: bytes, key: str | None) -> Any:
    """``after``'s tree: parsed again from ``before``'s when this process parsed ``before``
    last (``key``: the file), which costs about what the change touched; kept for the next."""
    from zbtools.core.code.languages import parser

    kept = _TREES.pop(key, None) if key is not None else None
    old_tree = None
    if kept is not None and kept[0] == before and kept[1].language == parser(language).language:
        old_tree = kept[1]
        limit = min(len(before), len(after))
        start = common_prefix(before, after, limit)
        suffix = common_suffix(before, after, limit - start)
        old_end, new_end = len(before) - suffix, len(after) - suffix
        begin = _point(before, start, 0, 0)
        old_tree.edit(start_byte=start, old_end_byte=old_end, new_end_byte=new_end,
                      start_point=begin, old_end_point=_point(before, old_end, start, begin[0]),
                      new_end_point=_point(after, new_end, start, begin[0]))
    tree = parser(language).parse(after, old_tree) if old_tree is not None else \
        parser(language).parse(after)
    if key is not None:
        if len(_TREES) >= TREES_KEPT:
            del _TREES[next(iter(_TREES))]
        _TREES[key] = (after, tree)
    return tree


def _point(data: bytes, offset: int, known: int, row: int) -> tuple[int, int]:
    """(row, byte column) of ``offset``, counting from ``known``, an offset at row ``row``
    (the rows before the change are counted once)."""
    row += data.count(b"\n", known, offset)
    return row, offset - (data.rfind(b"\n", 0, offset) + 1)


def _tree_diff(language: Language, before: bytes, after: bytes, key: str | None = None
               ) -> list[Problem]:
    """tree-sitter's errors of ``after`` that ``before`` lacks. An error on an unchanged row
    is old when ``before`` has one of the same kind on the row it was; errors on changed rows
    are old as many of each kind as ``before``'s changed rows had."""
    from collections import Counter

    after = _for_tree(after)
    before = _for_tree(before)
    new = tree_errors(language, after, _parse_after(language, before, after, key))
    if not new:
        return []
    old = tree_errors(language, before) if before else []
    change = Change(before, after)
    kept = {(e.kind, e.row) for e in old if not change.in_before_region(e.row)}
    region = Counter(e.kind for e in old if change.in_before_region(e.row))
    problems: list[Problem] = []
    for error in new:
        row = change.to_before_row(error.row)
        if row is not None and (error.kind, row) in kept:
            continue
        if row is None and region[error.kind] > 0:
            region[error.kind] -= 1
            continue
        problems.append(_tree_problem(error, after))
        if len(problems) >= MAX_PROBLEMS:
            break
    return problems


def _window_diff(language: Language, before: bytes, after: bytes) -> list[Problem]:
    """``_tree_diff`` of the changed lines and ``WINDOW_LINES`` lines each side, widened to the
    nearest top-level ``def``, ``class`` or decorator line (a cut inside a string or a bracket
    would read as errors the change did not make), for a big file already broken:
    tree-sitter's error recovery reads a broken file at a fraction of its usual speed
    (seconds for a few MB), and errors far from the change are old ones
    (docs/internals/code.md#syntax-guard)."""
    limit = min(len(before), len(after))
    prefix = common_prefix(before, after, limit)
    suffix = common_suffix(before, after, limit - prefix)
    start = before.rfind(b"\n", 0, prefix) + 1
    for n in range(WINDOW_LINES * 10):
        if start == 0 or (n >= WINDOW_LINES and before.startswith(_TOP, start)):
            break
        start = before.rfind(b"\n", 0, start - 1) + 1
    end = len(before) - suffix
    end = before.find(b"\n", end - 1 if end else 0) + 1 or len(before)
    for n in range(WINDOW_LINES * 10):
        if end >= len(before) or (n >= WINDOW_LINES and before.startswith(_TOP, end)):
            break
        end = before.find(b"\n", end) + 1 or len(before)
    end = max(end, len(before) - suffix)
    first_row = before.count(b"\n", 0, start)
    window = _tree_diff(language, before[start:end], after[start:len(after) - (len(before) - end)])
    return [Problem(p.line + first_row, p.column, p.message, excerpt(after, p.line - 1 + first_row))
            for p in window]


_TOP = (b"def ", b"class ", b"async def ", b"@")


def _tree_problem(error: Error, data: bytes) -> Problem:
    line = _line(data, error.row)
    column = len(line[:error.column].decode("utf-8", "replace")) + 1
    if error.kind == "error":
        shown = error.text.split(b"\n", 1)[0].strip()[:40].decode("utf-8", "replace")
        message = f"syntax error at {shown!r}" if shown else "syntax error"
    else:
        what = error.kind.removeprefix("missing ")
        message = f"missing {what!r}" if not what.isidentifier() else f"missing {what}"
    return Problem(error.row + 1, column, message, excerpt(data, error.row))


def _line(data: bytes, row: int) -> bytes:
    start = 0
    for _ in range(row):
        found = data.find(b"\n", start)
        if found == -1:
            return b""
        start = found + 1
    end = data.find(b"\n", start)
    return data[start:end if end != -1 else len(data)].rstrip(b"\r")


def excerpt(data: bytes, row: int) -> str:
    """Rows ``row - CONTEXT_LINES`` to ``row + CONTEXT_LINES`` of ``data``, numbered as
    ``read_file`` numbers lines (``     12<TAB>text``), so that a model can quote them back."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    first = max(row - CONTEXT_LINES, 0)
    last = row + CONTEXT_LINES  # (the piece after it is the rest of the file)
    parts = data.split(b"\n", last + 1)
    shown = parts[first:last + 1]
    if len(parts) <= last + 1 and shown and shown[-1] == b"" and first + len(shown) - 1 > row:
        shown.pop()  # the empty "line" after a final newline
    out = []
    for number, raw in enumerate(shown, first + 1):
        text = raw.rstrip(b"\r").decode("utf-8", "replace")
        if len(text) > 200:
            text = text[:200] + "..."
        out.append(f"{number:6}\t{text}\n")
    return "".join(out)

"""An edit placed by a definition instead of by old text: replace it, replace its body, or
insert text before or after it.

``plan_edit`` turns a file's bytes, one ``Definition`` (``core/code/symbols``) and an action
into the one byte range to replace and its replacement; every other byte of the file stays as
it was (docs/internals/code.md#symbol-tools). What it writes:

- **replace**: the definition with its decorators, attributes and the comments directly above
  it (``outer_start_byte``), from the start of its line to its end; the text after it on its
  last line stays (a ``;`` directly after it is replaced when the new text ends with one).
  Empty new text deletes the definition and its line.
- **replace_body**: what is between the body's braces (a brace-delimited body; new text may
  come with or without them), or an indented body (Python, Ruby) from the line after the
  header, comment lines above its first statement included.
- **insert_before** / **insert_after**: whole lines before the definition's decorators and
  comments, or after its last line, at its indentation, separated from it by as many blank
  lines as separate it from its neighbour on its other side (else on this side; at most two).

New text is written in the definition's columns (``fit``): indentation it was sent with is
shifted to the definition's (the body's for replace_body), tabs and spaces converted level by
level, and a first line sent without indentation while the later lines already stand in the
file's columns (copied from a read) gets only the first line indented. Line endings are the
file's.

Map: ``ACTIONS``, ``SymbolEdit``, ``plan_edit``; ``fit`` (the re-indentation).
"""

from __future__ import annotations

from zbtools.contract import ToolError
from zbtools.core.editing.matching.indentation import (
    TAB_COLUMNS,
    columns,
    infer_indent_unit,
    leading_ws,
    relative_depths,
    relative_unit,
    unit_columns,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from zbtools.core.code.symbols import Definition

ACTIONS = ("replace", "replace_body", "insert_before", "insert_after")
MAX_GAP = 2  # blank lines kept between an inserted definition and its neighbour
LINE_COMMENTS = (b"#", b"//")  # comment lines above an indented body's first statement


class SymbolEdit:
    """Replace ``source[start:end]`` with ``replacement``; ``first_line``/``last_line``: the
    lines of the range in the original (an insertion: ``last_line`` = ``first_line`` - 1)."""

    __slots__ = ("end", "first_line", "last_line", "replacement", "start")

    def __init__(self, source: bytes, start: int, end: int, replacement: bytes) -> None:
        self.start = start
        self.end = end
        self.replacement = replacement
        self.first_line = source.count(b"\n", 0, start) + 1
        self.last_line = self.first_line - 1 if start == end else \
            source.count(b"\n", 0, max(end - 1, start)) + 1

    def apply(self, source: bytes) -> bytes:
        return b"".join((source[:self.start], self.replacement, source[self.end:]))


def plan_edit(source: bytes, definition: Definition, action: str, new_text: str,
              language: str = "") -> SymbolEdit:
    """The byte range ``action`` replaces in ``source`` and what replaces it; ``language``
    (its name in ``core/code/languages``) gives the indent unit of a file with no indented
    line yet (a tab for Go, as gofmt writes)."""
    return _Planner(source, definition, new_text, language).plan(action)


def _indent_for(cols: int, unit: str) -> str:
    return "\t" * (cols // TAB_COLUMNS) + " " * (cols % TAB_COLUMNS) if unit == "\t" \
        else " " * cols


def fit(lines: list[str], target: str, unit: str) -> list[str]:
    """``lines`` (no line endings) re-indented so that the first non-blank one stands at
    ``target``, in the file's indent ``unit``; blank lines of moved text become empty."""
    nonblank = [line for line in lines if line.strip()]
    if not nonblank:
        return []
    base = leading_ws(nonblank[0])
    later = nonblank[1:]
    goal = columns(target)
    if columns(base) < goal and later and all(columns(leading_ws(line)) > goal
                                             for line in later):
        # a first line copied without its indentation, the others as the file has them
        first = lines.index(nonblank[0])
        return [target + line.lstrip(" \t") if i == first else
                (line if line.strip() else "") for i, line in enumerate(lines)]
    file_tabs = "\t" in target or (not target and unit == "\t")
    sent_tabs = any("\t" in leading_ws(line) for line in nonblank)
    indented = any(leading_ws(line) != base for line in nonblank)
    if base == target and (sent_tabs == file_tabs or not indented):
        return list(lines)  # already in place: written as sent, blank lines too
    convert = indented and sent_tabs != file_tabs
    sent_unit = (relative_unit(relative_depths(nonblank))
                 or unit_columns(infer_indent_unit(nonblank))) if convert else 1
    out = []
    for line in lines:
        if not line.strip():
            out.append("")
            continue
        indent = leading_ws(line)
        content = line[len(indent):]
        rel = columns(indent) - columns(base)
        if convert:
            levels, rest = divmod(rel, sent_unit)
            cols = max(goal + levels * unit_columns(unit) + rest, 0)
            if levels >= 0:
                out.append(target + _indent_for(levels * unit_columns(unit), unit)
                           + " " * rest + content)
            else:
                out.append(_indent_for(cols, unit) + content)
        elif rel >= 0 and indent.startswith(base):
            out.append(target + indent[len(base):] + content)
        else:
            out.append(_indent_for(max(goal + rel, 0), unit) + content)
    return out


class _Planner:
    def __init__(self, source: bytes, definition: Definition, new_text: str,
                 language: str) -> None:
        self.source = source
        self.language = language
        self.d = definition
        crlf = source.count(b"\r\n")
        self.eol = b"\r\n" if crlf and crlf * 2 >= source.count(b"\n") else b"\n"
        lines = new_text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        while lines and not lines[0].strip():
            lines.pop(0)
        while lines and not lines[-1].strip():
            lines.pop()
        self.lines = lines
        self._unit: str | None = None

    # ---- the file's lines --------------------------------------------------------------

    def line_start(self, pos: int) -> int:
        return self.source.rfind(b"\n", 0, pos) + 1

    def line_end(self, pos: int) -> int:
        """The position of the line break ending the line of ``pos`` (or the file's end)."""
        end = self.source.find(b"\n", pos)
        return len(self.source) if end < 0 else end

    def indent_at(self, pos: int) -> str:
        start = self.line_start(pos)
        line = self.source[start:self.line_end(pos)]
        return leading_ws(line.decode("utf-8", "surrogateescape"))

    def starts_line(self, pos: int) -> bool:
        return not self.source[self.line_start(pos):pos].strip(b" \t")

    @property
    def unit(self) -> str:
        if self._unit is None:
            lines = self.source.decode("utf-8", "surrogateescape").splitlines()
            indented = any(line[:1] in (" ", "\t") and line.strip() for line in lines)
            self._unit = infer_indent_unit(lines) if indented or self.language != "go" \
                else "\t"
        return self._unit

    def blank_lines_above(self, pos: int) -> int:
        count = 0
        start = self.line_start(pos)
        while start > 0 and count <= MAX_GAP:
            above = self.line_start(start - 1)
            if self.source[above:start].strip():
                break
            count += 1
            start = above
        return count

    def blank_lines_below(self, pos: int) -> int:
        count = 0
        end = self.line_end(pos)
        while end + 1 < len(self.source) and count <= MAX_GAP:
            below = self.line_end(end + 1)
            if self.source[end + 1:below].strip():
                break
            count += 1
            end = below
        return count

    def encode(self, lines: list[str]) -> bytes:
        return self.eol.join(line.encode("utf-8", "surrogateescape") for line in lines)

    def fitted(self, target: str) -> list[str]:
        return fit(self.lines, target, self.unit)

    # ---- the actions --------------------------------------------------------------------

    def plan(self, action: str) -> SymbolEdit:
        if action == "replace":
            return self.replace()
        if action == "replace_body":
            return self.replace_body()
        if not self.lines:
            raise ToolError("invalid_arguments", f"{action}: new_text is empty",
                            hint="give the text to insert")
        return self.insert_before() if action == "insert_before" else self.insert_after()

    def replace(self) -> SymbolEdit:
        d, source = self.d, self.source
        outer = d.outer_start_byte
        whole_line = self.starts_line(outer)
        start = self.line_start(outer) if whole_line else outer
        end = d.end_byte
        if source[end:end + 1] == b";" and self.lines and self.lines[-1].rstrip().endswith(";"):
            end += 1  # ``const f = () => 1;`` sent whole, its ``;`` too
        if not self.lines:  # a deletion: the definition's lines go, and one of two gaps
            return self.delete(start, end, whole_line)
        target = self.indent_at(outer)
        lines = self.fitted(target)
        if not whole_line:
            lines[0] = lines[0].lstrip(" \t")
        tail = self.eol if source[start:end].endswith(b"\n") else b""
        return SymbolEdit(source, start, end, self.encode(lines) + tail)

    def delete(self, start: int, end: int, whole_line: bool) -> SymbolEdit:
        source = self.source
        if source[end - 1:end] == b"\n":
            end -= 1
        rest = source[end:self.line_end(end)]
        if whole_line and not rest.strip():
            end = min(self.line_end(end) + 1, len(source))
            # blank lines on both sides: as many stay as the wider gap had
            drop = self.blank_lines_above(start)
            while drop and end < len(source) and not source[end:self.line_end(end)].strip():
                end = min(self.line_end(end) + 1, len(source))
                drop -= 1
            if end == len(source):  # nor do blank lines end the file
                while start > 0 and not source[self.line_start(start - 1):start].strip():
                    start = self.line_start(start - 1)
        return SymbolEdit(source, start, end, b"")

    def replace_body(self) -> SymbolEdit:
        d, source = self.d, self.source
        if d.body_start_byte is None or d.body_end_byte is None:
            raise ToolError("invalid_arguments",
                            f"{d.qualname} ({d.kind}) has no body to replace",
                            hint="use action replace with the whole definition",
                            details={"symbol": d.qualname, "line": d.start_line})
        start, end = d.body_start_byte, d.body_end_byte
        header_indent = self.indent_at(d.start_byte)
        if source[start:start + 1] == b"{" and source[end - 1:end] == b"}":
            return self.replace_braced(start + 1, end - 1, header_indent)
        if self.starts_line(start):
            target = self.indent_at(start)
            start = self.line_start(start)
            header_line = self.line_start(d.start_byte)
            while start > header_line:  # comment lines above the first statement
                above = self.line_start(start - 1)
                line = source[above:start].strip()
                if above <= header_line or (line and not line.startswith(LINE_COMMENTS)):
                    break
                start = above
            lines = self.fitted(target)
            tail = self.eol if source[start:end].endswith(b"\n") else b""
            return SymbolEdit(source, start, end, self.encode(lines) + tail)
        # a body on the header's line: one line stays there, more go below it
        lines = [line.strip() for line in self.lines]
        if len(lines) == 1:
            return SymbolEdit(source, start, end, self.encode(lines))
        while start > 0 and source[start - 1:start] in (b" ", b"\t"):
            start -= 1
        lines = self.fitted(header_indent + self.unit)
        return SymbolEdit(source, start, end, self.eol + self.encode(lines))

    def replace_braced(self, start: int, end: int, header_indent: str) -> SymbolEdit:
        source = self.source
        stripped = "\n".join(self.lines).strip()
        if stripped.startswith("{") and stripped.endswith("}"):
            inner = stripped[1:-1].split("\n")
            while inner and not inner[0].strip():
                inner.pop(0)
            while inner and not inner[-1].strip():
                inner.pop()
            self.lines = inner
        close = self.indent_at(end) if self.starts_line(end) else header_indent
        target = header_indent + self.unit
        pos = self.line_end(start) + 1
        while pos < end:  # the body's own indentation: its first line that holds code
            line_end = self.line_end(pos)
            if source[pos:line_end].strip():
                target = self.indent_at(pos)
                break
            pos = line_end + 1
        lines = self.fitted(target)
        if not lines:
            return SymbolEdit(source, start, end,
                              self.eol + close.encode() if b"\n" in source[start:end] else b"")
        return SymbolEdit(source, start, end,
                          self.eol + self.encode(lines) + self.eol + close.encode())

    def gap(self, after: bool) -> int:
        """The blank lines between the new text and the definition: those between it and the
        neighbour on its other side (a sibling, more likely than on this side, where a scope
        may close), else those on this side."""
        d = self.d
        above = self.blank_lines_above(d.outer_start_byte)
        below = self.blank_lines_below(max(d.end_byte - 1, d.start_byte))
        first, second = (above, below) if after else (below, above)
        return min(first or second, MAX_GAP)

    def insert_before(self) -> SymbolEdit:
        d, source = self.d, self.source
        outer = d.outer_start_byte
        target = self.indent_at(outer)
        lines = self.fitted(target)
        blank = self.eol * self.gap(after=False)
        if self.starts_line(outer):
            at = self.line_start(outer)
            return SymbolEdit(source, at, at, self.encode(lines) + self.eol + blank)
        lines[0] = lines[0].lstrip(" \t")
        return SymbolEdit(source, outer, outer,
                          self.encode(lines) + self.eol + blank + target.encode())

    def insert_after(self) -> SymbolEdit:
        d, source = self.d, self.source
        end = d.end_byte
        target = self.indent_at(d.outer_start_byte)
        lines = self.fitted(target)
        blank = self.eol * self.gap(after=True)
        if source[end - 1:end] == b"\n":
            return SymbolEdit(source, end, end, blank + self.encode(lines) + self.eol)
        line_end = self.line_end(end)
        if source[end:line_end].strip() in (b"", b";", b","):
            if line_end == len(source):  # the last line, without a line break
                return SymbolEdit(source, line_end, line_end,
                                  self.eol + blank + self.encode(lines))
            return SymbolEdit(source, line_end + 1, line_end + 1,
                              blank + self.encode(lines) + self.eol)
        # more code after it on its line (a class's closing brace): the text goes between
        return SymbolEdit(source, end, end, self.eol + blank + self.encode(lines))

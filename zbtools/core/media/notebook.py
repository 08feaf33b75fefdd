"""Jupyter notebooks (nbformat 4): reading cells and editing one cell byte-stably.

No nbformat dependency: its import pulls jsonschema and traitlets, and its writer re-serialises
the whole file. Here the file is parsed twice: once with ``json`` for the values, and once by a
small scanner (``json.JSONDecoder.raw_decode`` value by value) that records where each cell
object starts and ends in the text. An edit then replaces, inserts or removes only that span;
every other byte of the file (other cells, metadata, indentation, trailing newline) stays as it
was. The one cell written is serialised in the file's own style: its indentation unit, its key
order (kept for a replaced cell, nbformat's sorted order when the file is sorted), ASCII escaping
only if the file uses it, and the file's line ending. The result is checked before it is
written: it must parse, be a structurally valid nbformat 4 notebook, and every other cell must be
unchanged.

Failure modes: ``unsupported_format`` (not JSON, not nbformat 4, malformed cells).
"""

from __future__ import annotations

import json

from zbtools.contract import ToolError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

CELL_TYPES = ("code", "markdown", "raw")
_WS = " \t\n\r"


def _bad(shown: str, why: str) -> ToolError:
    return ToolError("unsupported_format", f"{shown}: is not a readable nbformat 4 notebook "
                     f"({why})", hint="read it with raw: true to see the JSON text")


class Notebook:
    def __init__(self, text: str, bom: str, data: dict[str, Any],
                 spans: list[tuple[int, int]], brackets: tuple[int, int]) -> None:
        self.text = text
        self.bom = bom
        self.data = data
        self.spans = spans
        self.brackets = brackets  # positions of "[" and "]" of the cells array

    @property
    def cells(self) -> list[dict[str, Any]]:
        cells: list[dict[str, Any]] = self.data["cells"]
        return cells

    def encode(self, text: str) -> bytes:
        return (self.bom + text).encode("utf-8", "surrogateescape")


def parse(raw: bytes, shown: str) -> Notebook:
    bom = ""
    if raw.startswith(b"\xef\xbb\xbf"):
        bom, raw = "\ufeff", raw[3:]
    try:
        text = raw.decode("utf-8")
        data = json.loads(text)
    except (UnicodeDecodeError, ValueError) as exc:
        raise _bad(shown, f"invalid JSON: {exc}") from exc
    except RecursionError as exc:
        raise _bad(shown, "JSON nested too deeply") from exc
    check(data, shown)
    try:
        spans, brackets = _scan(text)
    except (ValueError, IndexError, RecursionError) as exc:
        raise _bad(shown, f"unexpected JSON layout: {exc}") from exc
    if len(spans) != len(data["cells"]):
        raise _bad(shown, "the cells array could not be located")
    return Notebook(text, bom, data, spans, brackets)


def check(data: Any, shown: str) -> None:
    """Structural validation of nbformat 4 (the parts tools rely on)."""
    if not isinstance(data, dict):
        raise _bad(shown, "the top level is not an object")
    if data.get("nbformat") != 4:
        raise _bad(shown, f"nbformat {data.get('nbformat')!r}; only version 4 is supported")
    cells = data.get("cells")
    if not isinstance(cells, list):
        raise _bad(shown, "no cells array")
    if not isinstance(data.get("metadata", {}), dict):
        raise _bad(shown, "metadata is not an object")
    for index, cell in enumerate(cells):
        if not isinstance(cell, dict) or cell.get("cell_type") not in CELL_TYPES:
            raise _bad(shown, f"cell {index} has no valid cell_type")
        source = cell.get("source", "")
        if not (isinstance(source, str) or
                (isinstance(source, list) and all(isinstance(s, str) for s in source))):
            raise _bad(shown, f"cell {index}: source is not text")
        if cell["cell_type"] == "code" and not isinstance(cell.get("outputs", []), list):
            raise _bad(shown, f"cell {index}: outputs is not a list")


def _skip(text: str, i: int) -> int:
    while i < len(text) and text[i] in _WS:
        i += 1
    return i


def _scan(text: str) -> tuple[list[tuple[int, int]], tuple[int, int]]:
    """Spans of the cells and the cells array's brackets in the top-level object."""
    decoder = json.JSONDecoder()
    i = _skip(text, 0)
    if text[i] != "{":
        raise ValueError("no object")
    i += 1
    spans: list[tuple[int, int]] = []
    brackets = (-1, -1)
    while True:
        i = _skip(text, i)
        if text[i] == "}":
            break
        key, i = decoder.raw_decode(text, i)
        i = _skip(text, i)
        if text[i] != ":":
            raise ValueError(f"':' expected at {i}")
        i = _skip(text, i + 1)
        if key == "cells":
            spans, brackets, i = _scan_array(text, i, decoder)
        else:
            _, i = decoder.raw_decode(text, i)
        i = _skip(text, i)
        if text[i] == ",":
            i += 1
        elif text[i] != "}":
            raise ValueError(f"',' or '}}' expected at {i}")
    if brackets[0] < 0:
        raise ValueError("no cells")
    return spans, brackets


def _scan_array(text: str, i: int, decoder: json.JSONDecoder
                ) -> tuple[list[tuple[int, int]], tuple[int, int], int]:
    if text[i] != "[":
        raise ValueError("cells is not an array")
    opening = i
    spans: list[tuple[int, int]] = []
    i = _skip(text, i + 1)
    if text[i] == "]":
        return spans, (opening, i), i + 1
    while True:
        start = i
        _, end = decoder.raw_decode(text, i)
        spans.append((start, end))
        i = _skip(text, end)
        if text[i] == ",":
            i = _skip(text, i + 1)
        elif text[i] == "]":
            return spans, (opening, i), i + 1
        else:
            raise ValueError(f"',' or ']' expected at {i}")


# ---- reading -------------------------------------------------------------------------------


def source_text(cell: dict[str, Any]) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def _joined(value: Any) -> str:
    if isinstance(value, list):
        return "".join(str(v) for v in value)
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _strip_ansi(text: str) -> str:
    import re

    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text)


def _line(text: str) -> str:
    return text if not text or text.endswith("\n") else text + "\n"


def _output_text(output: dict[str, Any]) -> tuple[str, str]:
    """A header describing an output, and its text (images summarised, never dumped)."""
    kind = str(output.get("output_type", "?"))
    if kind == "stream":
        return f"stream {output.get('name', 'stdout')}", _joined(output.get("text", ""))
    if kind == "error":
        lines = output.get("traceback")
        trace = "\n".join(_strip_ansi(str(t)) for t in lines) if isinstance(lines, list) else ""
        head = f"{output.get('ename', 'Error')}: {output.get('evalue', '')}"
        return "error", trace if trace.strip() else head
    data = output.get("data", {})
    if not isinstance(data, dict):
        return kind, ""
    notes = []
    text = ""
    for mime in ("text/plain", "text/markdown", "text/latex", "application/json", "text/html"):
        if mime in data:
            text = _joined(data[mime])
            if mime != "text/plain":
                notes.append(mime)
            break
    for mime, value in data.items():
        if mime.startswith("image/") or mime not in ("text/plain", "text/markdown",
                                                     "text/latex", "application/json",
                                                     "text/html"):
            size = len(_joined(value))
            notes.append(f"{mime} ({size} characters, not shown)")
    header = kind + (f" [{', '.join(notes)}]" if notes else "")
    return header, _strip_ansi(text)


def render(notebook: Notebook) -> tuple[str, list[dict[str, Any]]]:
    """The cells as text (headers, source, outputs) and one summary per cell with its lines."""
    parts: list[str] = []
    summaries: list[dict[str, Any]] = []
    line = 1
    for index, cell in enumerate(notebook.cells):
        kind = cell["cell_type"]
        header = f"[cell {index}] {kind}"
        if isinstance(cell.get("id"), str):
            header += f" id={cell['id']}"
        if kind == "code":
            header += f" execution_count={cell.get('execution_count')}"
        block = [header + "\n", _line(source_text(cell))]
        outputs = cell.get("outputs", []) if kind == "code" else []
        for number, output in enumerate(outputs if isinstance(outputs, list) else []):
            if not isinstance(output, dict):
                continue
            what, text = _output_text(output)
            block.append(f"[cell {index} output {number}: {what}]\n")
            block.append(_line(text))
        block.append("\n")
        chunk = "".join(block)
        lines = chunk.count("\n")
        summaries.append({"index": index, "id": cell.get("id"), "cell_type": kind,
                          "execution_count": cell.get("execution_count") if kind == "code"
                          else None, "outputs": len(outputs) if isinstance(outputs, list)
                          else 0, "start_line": line, "end_line": line + lines - 1})
        line += lines
        parts.append(chunk)
    return "".join(parts), summaries


# ---- editing -------------------------------------------------------------------------------


class Style:
    """How the file writes JSON: indentation, escaping, key order, line ending."""

    def __init__(self, notebook: Notebook) -> None:
        text = notebook.text
        self.newline = "\r\n" if "\r\n" in text else "\n"
        self.indent: str | None = None
        first = text.find("\n")
        if first >= 0:
            start = first + 1
            end = _skip(text, start)
            run = text[start:end].replace("\r", "").replace("\n", "")
            self.indent = run or None
        self.ensure_ascii = text.isascii() and "\\u" in text and any(
            _escape_is_non_ascii(text, i) for i in _escapes(text))
        keys_sorted = list(notebook.data) == sorted(notebook.data)
        for cell in notebook.cells:
            keys_sorted = keys_sorted and list(cell) == sorted(cell)
        self.sort_keys = keys_sorted
        self.list_source = not notebook.cells or any(
            isinstance(c.get("source"), list) for c in notebook.cells)
        self.with_ids = (notebook.data.get("nbformat_minor", 0) >= 5
                         or any("id" in c for c in notebook.cells))

    def dump(self, cell: dict[str, Any], base: str) -> str:
        text = json.dumps(cell, indent=self.indent, ensure_ascii=self.ensure_ascii,
                          sort_keys=self.sort_keys)
        if self.indent is None:
            return text
        lines = text.split("\n")
        return lines[0] + "".join(self.newline + base + line for line in lines[1:])


def _escapes(text: str) -> list[int]:
    out: list[int] = []
    i = text.find("\\u")
    while i >= 0 and len(out) < 50:
        out.append(i)
        i = text.find("\\u", i + 2)
    return out


def _escape_is_non_ascii(text: str, i: int) -> bool:
    try:
        return int(text[i + 2:i + 6], 16) >= 0x80
    except ValueError:
        return False


def split_source(source: str, as_list: bool) -> list[str] | str:
    return source.splitlines(keepends=True) if as_list else source


def new_cell(style: Style, cell_type: str, source: str, existing_ids: set[str]
             ) -> dict[str, Any]:
    import os

    cell: dict[str, Any] = {"cell_type": cell_type}
    if cell_type == "code":
        cell["execution_count"] = None
    if style.with_ids:
        new_id = os.urandom(4).hex()
        while new_id in existing_ids:
            new_id = os.urandom(4).hex()
        cell["id"] = new_id
    cell["metadata"] = {}
    if cell_type == "code":
        cell["outputs"] = []
    cell["source"] = split_source(source, style.list_source)
    return cell


def retype(cell: dict[str, Any], cell_type: str) -> None:
    """Change a cell's type, adding or dropping the keys nbformat ties to each type."""
    if cell["cell_type"] == cell_type:
        return
    cell["cell_type"] = cell_type
    if cell_type == "code":
        cell.setdefault("execution_count", None)
        cell.setdefault("outputs", [])
        cell.pop("attachments", None)
    else:
        cell.pop("execution_count", None)
        cell.pop("outputs", None)


def _base_indent(text: str, start: int, style: Style) -> str:
    line_start = text.rfind("\n", 0, start) + 1
    prefix = text[line_start:start]
    if prefix.strip() == "":
        return prefix
    return (style.indent or "") * 2


def replace_cell(nb: Notebook, index: int, cell: dict[str, Any]) -> str:
    style = Style(nb)
    start, end = nb.spans[index]
    return nb.text[:start] + style.dump(cell, _base_indent(nb.text, start, style)) + \
        nb.text[end:]


def delete_cell(nb: Notebook, index: int) -> str:
    text, spans = nb.text, nb.spans
    if len(spans) == 1:
        opening, closing = nb.brackets
        return text[:opening + 1] + text[closing:]
    if index < len(spans) - 1:
        return text[:spans[index][0]] + text[spans[index + 1][0]:]
    return text[:spans[index - 1][1]] + text[spans[index][1]:]


def insert_cell(nb: Notebook, index: int, cell: dict[str, Any]) -> str:
    style = Style(nb)
    text, spans = nb.text, nb.spans
    if not spans:
        opening, closing = nb.brackets
        if style.indent is None:
            return text[:opening + 1] + style.dump(cell, "") + text[closing:]
        outer = _base_indent(text, closing, style) if text[:closing].rstrip(" \t").endswith(
            "\n") else style.indent
        base = outer + style.indent
        return (text[:opening + 1] + style.newline + base + style.dump(cell, base) +
                style.newline + outer + text[closing:])
    if index < len(spans):
        start = spans[index][0]
        base = _base_indent(text, start, style)
        gap = text[(spans[index - 1][1] + 1) if index > 0 else nb.brackets[0] + 1:start]
        gap = gap.lstrip(",") if index > 0 else gap
        return text[:start] + style.dump(cell, base) + "," + gap + text[start:]
    last_start, last_end = spans[-1]
    base = _base_indent(text, last_start, style)
    before = spans[-2][1] if len(spans) > 1 else nb.brackets[0]
    gap = text[before + 1:last_start]
    return text[:last_end] + "," + gap + style.dump(cell, base) + text[last_end:]


def verify(before: Notebook, after_text: str, shown: str,
           expected_cells: list[dict[str, Any]]) -> None:
    """The edited text must parse as a valid notebook whose cells are ``expected_cells`` and
    whose other members are those of ``before``; else nothing is written."""
    try:
        data = json.loads(after_text)
    except ValueError as exc:  # a bug here, never the caller's fault: refuse to write
        raise ToolError("internal_error", f"{shown}: the edited notebook would not be valid "
                        f"JSON ({exc}); nothing was written") from exc
    check(data, shown)
    old_rest = {k: v for k, v in before.data.items() if k != "cells"}
    new_rest = {k: v for k, v in data.items() if k != "cells"}
    if old_rest != new_rest or data["cells"] != expected_cells:
        raise ToolError("internal_error", f"{shown}: the edit would change more than the one "
                        "cell; nothing was written")

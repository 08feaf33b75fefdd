"""Edit one cell of a Jupyter notebook (.ipynb) by index or id: replace its source, insert a
new cell, or delete it, keeping the rest of the file byte for byte. Failure modes: not_found,
unsupported_format, out_of_range, unknown_id, ambiguous_id, stale_file, invalid_arguments.

Cells are named by ``cell_index`` (0-based, as read_file shows them: ``[cell 3]``) or by
``cell_id``. ``mode: replace`` (default) sets the cell's source (``cell_type`` converts it too:
a code cell gets ``outputs`` and ``execution_count``, other types lose them;
``clear_outputs: true`` empties a code cell's outputs). ``mode: insert`` adds a new cell
(``cell_type`` default code) at ``cell_index`` (0 = first, the cell count = at the end), or right
after the cell ``cell_id``, or at the end when neither is given. ``mode: delete`` removes the
cell.

The notebook stays valid nbformat 4 JSON and byte-stable: only the text of the one cell changes;
every other byte (other cells, metadata, indentation, key order, trailing newline) is kept, and
the edited cell is written in the file's own JSON style. The result is re-parsed and checked
before the atomic write; the change is recorded for ``undo``. Pass the ``sha256`` from read_file
as ``expected_sha256`` to refuse the edit if the file changed meanwhile.

Failure modes: ``not_found``, ``unsupported_format`` (not an nbformat 4 notebook),
``out_of_range`` (cell_index beyond the cells), ``unknown_id`` (no cell has cell_id; the ids are
listed), ``ambiguous_id`` (several cells have cell_id: use cell_index),
``invalid_arguments`` (no source for replace or insert, both cell_index and cell_id),
``stale_file``, ``outside_workspace``.
"""

from __future__ import annotations

import copy

from zbtools.contract import ToolError
from zbtools.core.call.args import Struct, field
from zbtools.toolkit.params import PATH_ALIASES
from zbtools.toolspec import ToolSpec

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Literal

    from zbtools.core.call.context import Context
    from zbtools.core.media.notebook import Notebook

MAX_NOTEBOOK_BYTES = 64 * 1024 * 1024


class Params(Struct):
    path: str = field(aliases=("notebook_path", *PATH_ALIASES),
                      help="The .ipynb file, relative to the workspace root or absolute inside it")
    mode: Literal["replace", "insert", "delete"] = field(
        default="replace", aliases=("edit_mode", "operation"),
        help="replace a cell's source, insert a new cell, or delete a cell")
    cell_index: int | None = field(default=None, minimum=0, aliases=("cell_number", "index"),
                                   help="0-based cell index (insert: the new cell's index)")
    cell_id: str | None = field(default=None, aliases=("id",),
                                help="The cell's id (insert: the new cell goes after it)")
    source: str | None = field(text_body=True, default=None, aliases=("new_source", "content"),
                               help="The cell's new source (replace, insert)")
    cell_type: Literal["code", "markdown", "raw"] | None = field(
        default=None, help="Type of the new cell, or convert the replaced one")
    clear_outputs: bool = field(default=False,
                                help="replace: empty a code cell's outputs and execution_count")
    expected_sha256: str | None = field(
        default=None, help="Refuse with stale_file unless the file's current sha256 is this")


class Result(Struct):
    path: str = field(help="The notebook, relative to the workspace root")
    mode: str = field(help="replace, insert or delete")
    cell_index: int = field(help="Index of the cell edited, inserted or deleted")
    cell_id: str | None = field(help="Its id (null if the notebook has no cell ids)")
    cell_type: str = field(help="Its type")
    cell_count: int = field(help="Cells in the notebook after the edit")
    changed: bool = field(help="False when the cell already had this source and type")
    bytes_written: int = field(help="Size of the notebook file written")
    sha256: str = field(help="SHA-256 of the new file's bytes")


def _locate(nb: Notebook, params: Params, *, inserting: bool) -> int:
    cells = nb.cells
    if params.cell_index is not None and params.cell_id is not None:
        raise ToolError("invalid_arguments", "give cell_index or cell_id, not both")
    if params.cell_id is not None:
        found = [index for index, cell in enumerate(cells) if cell.get("id") == params.cell_id]
        if len(found) > 1:
            raise ToolError("ambiguous_id", f"{params.path}: {len(found)} cells have the id "
                            f"{params.cell_id!r}", hint="name the cell by cell_index instead "
                            "(read_file shows [cell N])", details={"cell_indexes": found[:200]})
        if found:
            return found[0] + 1 if inserting else found[0]
        ids = [c.get("id") for c in cells if isinstance(c.get("id"), str)]
        raise ToolError("unknown_id", f"{params.path}: no cell has id {params.cell_id!r}",
                        hint="read the notebook with read_file to see cell ids, or use "
                        "cell_index", details={"ids": ids[:200]})
    if params.cell_index is None:
        if inserting:
            return len(cells)
        raise ToolError("invalid_arguments", f"{params.mode} needs cell_index or cell_id",
                        hint="read the notebook with read_file: cells are shown as [cell N]")
    limit = len(cells) if inserting else len(cells) - 1
    if params.cell_index > limit:
        raise ToolError("out_of_range", f"{params.path}: cell {params.cell_index} does not "
                        f"exist; the notebook has {len(cells)} cell(s)",
                        hint=f"use a cell_index from 0 to {limit}" if limit >= 0 else
                        "the notebook is empty: insert a cell first",
                        details={"cell_count": len(cells)})
    return params.cell_index


def run(params: Params, ctx: Context) -> Result:
    from zbtools.core.files.hashing import sha256_hex
    from zbtools.core.files.reading import read_bytes
    from zbtools.core.media import notebook

    if params.mode != "delete" and params.source is None:
        raise ToolError("invalid_arguments", f"{params.mode} needs source",
                        hint="pass the cell's complete new source as source")
    with ctx.workspace.resolve(params.path, write=True) as res:
        raw = read_bytes(res, max_bytes=MAX_NOTEBOOK_BYTES, shown=params.path)
        if params.expected_sha256 is not None:
            from zbtools.core.files.staleness import check_expected

            check_expected(raw, params.expected_sha256, params.path)
        nb = notebook.parse(raw, params.path)
        style = notebook.Style(nb)
        expected = copy.deepcopy(nb.cells)
        index = _locate(nb, params, inserting=params.mode == "insert")
        changed = True
        if params.mode == "delete":
            cell = nb.cells[index]
            del expected[index]
            text = notebook.delete_cell(nb, index)
        elif params.mode == "insert":
            ids = {c["id"] for c in nb.cells if isinstance(c.get("id"), str)}
            assert params.source is not None
            cell = notebook.new_cell(style, params.cell_type or "code", params.source, ids)
            expected.insert(index, cell)
            text = notebook.insert_cell(nb, index, cell)
        else:
            assert params.source is not None
            cell = copy.deepcopy(nb.cells[index])
            notebook.retype(cell, params.cell_type or cell["cell_type"])
            as_list = isinstance(cell.get("source"), list) or (
                "source" not in cell and style.list_source)
            if notebook.source_text(cell) != params.source or "source" not in cell:
                cell["source"] = notebook.split_source(params.source, as_list)
            if params.clear_outputs and cell["cell_type"] == "code":
                cell["outputs"] = []
                cell["execution_count"] = None
            changed = cell != nb.cells[index]
            expected[index] = cell
            text = notebook.replace_cell(nb, index, cell) if changed else nb.text
        notebook.verify(nb, text, params.path, expected)
        data = nb.encode(text)
        if changed:
            from zbtools.core.editing.txn import replace_file

            replace_file(ctx, res, data, expected_sha256=params.expected_sha256,
                         shown=params.path, tool="edit_notebook_cell")
            from zbtools.core.editing.undo import record

            record(ctx, res.rel, raw, data, "edit_notebook_cell")
        cell_id = cell.get("id")
        return Result(path=res.rel, mode=params.mode, cell_index=index,
                      cell_id=cell_id if isinstance(cell_id, str) else None,
                      cell_type=str(cell["cell_type"]), cell_count=len(expected),
                      changed=changed, bytes_written=len(data), sha256=sha256_hex(data))


def render(result: Result) -> str:
    verb = {"replace": "replaced", "insert": "inserted", "delete": "deleted"}[result.mode]
    if not result.changed:
        verb = "unchanged:"
    ident = f" (id {result.cell_id})" if result.cell_id else ""
    return (f"{verb} {result.cell_type} cell {result.cell_index}{ident} of {result.path}; "
            f"{result.cell_count} cell(s)\n")


TOOL = ToolSpec(
    name="edit_notebook_cell",
    aliases=("notebook_edit",),
    doc=__doc__,
    params=Params,
    result=Result,
    run=run,
    operand="path",
    render_text=render,
    destructive=True,
)

"""Notebooks: read_file renders cells; edit_notebook_cell edits one cell byte-stably."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CliRunner, snapshot

TEXT = ("--format", "text")


def notebook(cells: list[dict[str, Any]] | None = None, minor: int = 5) -> dict[str, Any]:
    if cells is None:
        cells = [
            {"cell_type": "markdown", "id": "intro", "metadata": {},
             "source": ["# Analysis\n", "Some *text* é"]},
            {"cell_type": "code", "execution_count": 3, "id": "load", "metadata": {"tags": []},
             "outputs": [
                 {"name": "stdout", "output_type": "stream", "text": ["loaded 3 rows\n"]},
                 {"data": {"image/png": "iVBORw0KGgo" * 50, "text/plain": ["<Figure 1>"]},
                  "metadata": {}, "output_type": "display_data"},
                 {"data": {"text/plain": ["42"]}, "execution_count": 3, "metadata": {},
                  "output_type": "execute_result"},
             ],
             "source": ["import pandas as pd\n", "df = pd.read_csv('x.csv')"]},
            {"cell_type": "code", "execution_count": 4, "id": "boom", "metadata": {},
             "outputs": [{"ename": "ZeroDivisionError", "evalue": "division by zero",
                          "output_type": "error",
                          "traceback": ["\x1b[0;31mZeroDivisionError\x1b[0m: division by zero"]}],
             "source": "1/0"},
            {"cell_type": "raw", "id": "raw1", "metadata": {}, "source": []},
        ]
    return {"cells": cells, "metadata": {"kernelspec": {"display_name": "Python 3",
                                                        "language": "python", "name": "python3"},
                                         "language_info": {"name": "python"}},
            "nbformat": 4, "nbformat_minor": minor}


def nbformat_text(data: dict[str, Any]) -> str:
    """What nbformat.write produces: indent 1, sorted keys, raw UTF-8, final newline."""
    return json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def put(ws: Path, data: dict[str, Any], name: str = "nb.ipynb", text: str | None = None) -> Path:
    path = ws / name
    path.write_bytes((text if text is not None else nbformat_text(data)).encode("utf-8"))
    return path


# ---- reading -----------------------------------------------------------------------------------


def test_cells_are_shown_in_order_with_index_id_type_and_outputs(ws: Path,
                                                                 cli: CliRunner) -> None:
    put(ws, notebook())
    result = cli("read_file", "--path", "nb.ipynb").result
    assert result["kind"] == "notebook"
    assert result["cell_count"] == 4
    content = result["content"]
    assert "[cell 0] markdown id=intro\n# Analysis\nSome *text* é\n" in content
    assert "[cell 1] code id=load execution_count=3\nimport pandas as pd\n" in content
    assert "[cell 1 output 0: stream stdout]\nloaded 3 rows\n" in content
    assert "image/png (550 characters, not shown)" in content
    assert "iVBOR" not in content
    assert "<Figure 1>" in content
    assert "[cell 1 output 2: execute_result]\n42\n" in content
    assert "ZeroDivisionError: division by zero" in content
    assert "\x1b" not in content
    cells = result["cells"]
    assert [c["index"] for c in cells] == [0, 1, 2, 3]
    assert [c["id"] for c in cells] == ["intro", "load", "boom", "raw1"]
    assert cells[1]["execution_count"] == 3 and cells[1]["outputs"] == 3
    lines = content.split("\n")
    assert lines[cells[1]["start_line"] - 1].startswith("[cell 1]")


def test_a_notebook_is_paged_like_text(ws: Path, cli: CliRunner) -> None:
    cells: list[dict[str, Any]] = [
        {"cell_type": "code", "execution_count": None, "id": f"c{i}", "metadata": {},
         "outputs": [], "source": [f"x = {i}\n", "y = 2"]} for i in range(100)]
    put(ws, notebook(cells))
    first = cli("read_file", stdin={"path": "nb.ipynb", "limit": 40}).result
    assert first["truncated"] is True and first["next_offset"] == 41
    assert first["cells"][-1]["index"] == 9
    second = cli("read_file", stdin={"path": "nb.ipynb", "offset": 41, "limit": 40}).result
    assert second["cells"][0]["index"] == 10
    assert "[cell 10] code id=c10" in second["content"]


def test_raw_reads_the_json(ws: Path, cli: CliRunner) -> None:
    path = put(ws, notebook())
    result = cli("read_file", stdin={"path": "nb.ipynb", "raw": True}).result
    assert result["kind"] == "text"
    assert result["content"] == path.read_text()


def test_a_broken_notebook_is_unsupported_format(ws: Path, cli: CliRunner) -> None:
    (ws / "bad.ipynb").write_text('{"cells": [')
    call = cli("read_file", "--path", "bad.ipynb")
    assert call.error["code"] == "unsupported_format"
    assert "raw: true" in call.error["hint"]
    (ws / "v3.ipynb").write_text('{"nbformat": 3, "worksheets": []}')
    assert cli("read_file", "--path", "v3.ipynb").error["code"] == "unsupported_format"


# ---- editing -----------------------------------------------------------------------------------


def edit(cli: CliRunner, **args: Any) -> dict[str, Any]:
    return cli("edit_notebook_cell", stdin={"path": "nb.ipynb", **args}).result


def test_replacing_a_cell_changes_only_its_source_bytes(ws: Path, cli: CliRunner) -> None:
    data = notebook()
    path = put(ws, data)
    result = edit(cli, cell_index=1, source="import polars as pl\ndf = pl.read_csv('x.csv')")
    assert result["changed"] is True
    data["cells"][1]["source"] = ["import polars as pl\n", "df = pl.read_csv('x.csv')"]
    assert path.read_text() == nbformat_text(data)  # exactly what nbformat would write
    assert result["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()


def test_replacing_by_id_and_converting_the_type(ws: Path, cli: CliRunner) -> None:
    data = notebook()
    path = put(ws, data)
    edit(cli, cell_id="boom", source="Explanation", cell_type="markdown")
    cell = json.loads(path.read_text())["cells"][2]
    assert cell == {"cell_type": "markdown", "id": "boom", "metadata": {},
                    "source": "Explanation"}
    edit(cli, cell_id="intro", source="print(1)", cell_type="code")
    cell = json.loads(path.read_text())["cells"][0]
    assert cell["cell_type"] == "code"
    assert cell["outputs"] == [] and cell["execution_count"] is None


def test_clear_outputs(ws: Path, cli: CliRunner) -> None:
    path = put(ws, notebook())
    edit(cli, cell_index=1, source="pass", clear_outputs=True)
    cell = json.loads(path.read_text())["cells"][1]
    assert cell["outputs"] == [] and cell["execution_count"] is None


def test_inserting_cells_keeps_the_file_in_nbformat_style(ws: Path, cli: CliRunner) -> None:
    data = notebook()
    path = put(ws, data)
    first = edit(cli, mode="insert", cell_index=0, source="import os\nimport sys\n")
    after = edit(cli, mode="insert", cell_id="load", source="## Notes", cell_type="markdown")
    end = edit(cli, mode="insert", source="print('end')")
    assert (first["cell_index"], after["cell_index"], end["cell_index"]) == (0, 3, 6)
    written = json.loads(path.read_text())
    assert [c["cell_type"] for c in written["cells"]] == [
        "code", "markdown", "code", "markdown", "code", "raw", "code"]
    new = written["cells"][0]
    assert new["source"] == ["import os\n", "import sys\n"]
    assert len(new["id"]) == 8 and new["id"] == first["cell_id"]
    assert new["outputs"] == [] and new["execution_count"] is None
    # the file is still exactly what nbformat would write for this content
    assert path.read_text() == nbformat_text(written)


def test_deleting_cells_down_to_none_and_inserting_again(ws: Path, cli: CliRunner) -> None:
    data = notebook()
    path = put(ws, data)
    edit(cli, mode="delete", cell_index=3)  # the last
    edit(cli, mode="delete", cell_id="intro")  # the first
    data["cells"] = data["cells"][1:3]
    assert path.read_text() == nbformat_text(data)
    edit(cli, mode="delete", cell_index=1)
    edit(cli, mode="delete", cell_index=0)
    data["cells"] = []
    assert path.read_text() == nbformat_text(data)
    edit(cli, mode="insert", source="x = 1")
    written = json.loads(path.read_text())
    assert len(written["cells"]) == 1
    assert path.read_text() == nbformat_text(written)


def test_other_bytes_survive_an_unusual_layout(ws: Path, cli: CliRunner) -> None:
    data = notebook()
    # two-space indentation, unsorted keys, CRLF line endings, no final newline
    text = json.dumps(data, indent=2, ensure_ascii=False).replace("\n", "\r\n")
    path = put(ws, data, text=text)
    edit(cli, cell_index=2, source="2/1")
    new = path.read_bytes().decode()
    old_cells = json.loads(text)["cells"]
    before, after = text.split('"1/0"'), new.split('"2/1"')
    assert before == after  # only the one value changed
    assert json.loads(new)["cells"][:2] == old_cells[:2]
    edit(cli, mode="insert", cell_index=1, source="a\nb")
    new = path.read_bytes().decode()
    assert "\r\n" in new and "\n" not in new.replace("\r\n", "")
    assert json.loads(new)["cells"][1]["source"] == ["a\n", "b"]


def test_a_compact_notebook_stays_compact(ws: Path, cli: CliRunner) -> None:
    data = notebook()
    text = json.dumps(data)
    path = put(ws, data, text=text)
    edit(cli, cell_index=0, source="changed")
    new = path.read_text()
    assert "\n" not in new
    assert json.loads(new)["cells"][0]["source"] == ["changed"]
    assert new.startswith(text[:text.index('"source"')])


def test_an_unchanged_cell_is_not_rewritten(ws: Path, cli: CliRunner) -> None:
    path = put(ws, notebook())
    before = path.stat().st_mtime_ns
    result = edit(cli, cell_index=2, source="1/0")
    assert result["changed"] is False
    assert path.stat().st_mtime_ns == before


def test_the_edit_can_be_undone(ws: Path, cli: CliRunner) -> None:
    path = put(ws, notebook())
    original = path.read_bytes()
    edit(cli, mode="delete", cell_index=1)
    assert path.read_bytes() != original
    cli("undo", stdin={"path": "nb.ipynb"}).result
    assert path.read_bytes() == original


@pytest.mark.parametrize("args,code", [
    ({"cell_index": 9, "source": "x"}, "out_of_range"),
    ({"cell_id": "nope", "source": "x"}, "unknown_id"),
    ({"cell_index": 0}, "invalid_arguments"),
    ({"source": "x"}, "invalid_arguments"),
    ({"cell_index": 0, "cell_id": "intro", "source": "x"}, "invalid_arguments"),
    ({"mode": "insert", "cell_index": 5, "source": "x"}, "out_of_range"),
    ({"cell_index": 0, "source": "x", "expected_sha256": "0" * 64}, "stale_file"),
])
def test_failures_leave_the_notebook_untouched(ws: Path, cli: CliRunner, args: dict[str, Any],
                                               code: str) -> None:
    put(ws, notebook())
    before = snapshot(ws)
    call = cli("edit_notebook_cell", stdin={"path": "nb.ipynb", **args})
    assert call.error["code"] == code
    assert snapshot(ws) == before
    if code == "unknown_id":
        assert call.error["details"]["ids"] == ["intro", "load", "boom", "raw1"]


def test_expected_sha256_from_read_file_is_accepted(ws: Path, cli: CliRunner) -> None:
    put(ws, notebook())
    sha = cli("read_file", "--path", "nb.ipynb").result["sha256"]
    assert edit(cli, cell_index=0, source="new", expected_sha256=sha)["changed"] is True


def test_notebooks_without_ids_get_no_ids(ws: Path, cli: CliRunner) -> None:
    cells: list[dict[str, Any]] = [{"cell_type": "code", "execution_count": None,
                                    "metadata": {}, "outputs": [], "source": ["x"]}]
    path = put(ws, notebook(cells, minor=4))
    result = edit(cli, mode="insert", source="y")
    assert result["cell_id"] is None
    assert "id" not in json.loads(path.read_text())["cells"][1]


def test_claude_style_argument_names(ws: Path, cli: CliRunner) -> None:
    path = put(ws, notebook())
    call = cli("notebook_edit", stdin={"notebook_path": "nb.ipynb", "cell_id": "intro",
                                       "new_source": "# Renamed", "edit_mode": "replace"})
    assert call.result["changed"] is True
    assert json.loads(path.read_text())["cells"][0]["source"] == ["# Renamed"]
    assert "replaced markdown cell 0 (id intro)" in cli(
        "edit_notebook_cell", "--path", "nb.ipynb", "--cell-index", "0", "--source", "#",
        *TEXT).out


# ---- hostile notebooks (review of issue 8) -------------------------------------------------------


def test_odd_output_shapes_are_shown_not_crashed_on(ws: Path, cli: CliRunner) -> None:
    cells = [{"cell_type": "code", "execution_count": 1, "id": "a", "metadata": {},
              "outputs": [{"output_type": "error", "ename": "E", "evalue": "v", "traceback": 5},
                          {"output_type": "stream", "name": "stdout", "text": {"odd": 1}},
                          {"output_type": "display_data", "data": {"text/plain": 7}},
                          "not an object"],
              "source": "x"}]
    put(ws, notebook(cells))
    call = cli("read_file", "--path", "nb.ipynb")
    assert call.code == 0, call.json
    assert "E: v" in call.result["content"]


def test_a_deeply_nested_notebook_is_unsupported_format(ws: Path, cli: CliRunner) -> None:
    text = ('{"cells": [], "metadata": {"x": ' + "[" * 100_000 + "]" * 100_000 +
            '}, "nbformat": 4, "nbformat_minor": 5}')
    put(ws, {}, text=text)
    for call in (cli("read_file", "--path", "nb.ipynb"),
                 cli("edit_notebook_cell", stdin={"path": "nb.ipynb", "mode": "insert",
                                                  "source": "x"})):
        assert call.code == 1, call.json
        assert call.error["code"] == "unsupported_format"
    assert (ws / "nb.ipynb").read_text() == text


def test_colliding_cell_ids_are_refused_by_id_but_editable_by_index(ws: Path,
                                                                    cli: CliRunner) -> None:
    cells = [{"cell_type": "markdown", "id": "same", "metadata": {}, "source": "one"},
             {"cell_type": "markdown", "id": "same", "metadata": {}, "source": "two"}]
    path = put(ws, notebook(cells))
    before = path.read_bytes()
    for mode in ("replace", "delete", "insert"):
        call = cli("edit_notebook_cell", stdin={"path": "nb.ipynb", "cell_id": "same",
                                                "mode": mode, "source": "new"})
        assert call.code == 1, call.json
        assert call.error["code"] == "ambiguous_id"
        assert call.error["details"]["cell_indexes"] == [0, 1]
        assert path.read_bytes() == before
    done = cli("edit_notebook_cell", stdin={"path": "nb.ipynb", "cell_index": 1,
                                            "source": "changed"}).result
    assert done["changed"] is True
    assert json.loads(path.read_text())["cells"][1]["source"] == "changed"


@pytest.mark.parametrize("layout", ["indent1-sorted", "indent2", "tab", "compact", "spaced",
                                    "crlf", "bom", "no-final-newline"])
def test_every_edit_on_every_layout_keeps_other_bytes(ws: Path, cli: CliRunner,
                                                      layout: str) -> None:
    data = notebook()
    dumps: dict[str, Callable[[dict[str, Any]], str]] = {"indent1-sorted": nbformat_text,
             "indent2": lambda d: json.dumps(d, indent=2) + "\n",
             "tab": lambda d: json.dumps(d, indent="\t") + "\n",
             "compact": lambda d: json.dumps(d, separators=(",", ":")),
             "spaced": lambda d: json.dumps(d, indent=3).replace("[\n", "[ \n") + "\n\n",
             "crlf": lambda d: (json.dumps(d, indent=1) + "\n").replace("\n", "\r\n"),
             "bom": lambda d: "\ufeff" + json.dumps(d, indent=1) + "\n",
             "no-final-newline": lambda d: json.dumps(d, indent=1)}
    text = dumps[layout](data)
    edits: list[dict[str, Any]] = []
    for index in range(5):
        edits.append({"mode": "insert", "cell_index": index, "source": f"new {index}\nline"})
    for index in range(4):
        edits.append({"mode": "delete", "cell_index": index})
        edits.append({"mode": "replace", "cell_index": index, "source": "ré\nplaced"})
        edits.append({"mode": "replace", "cell_index": index, "source": "as code",
                      "cell_type": "code"})
    for edit in edits:
        path = put(ws, data, text=text)
        call = cli("edit_notebook_cell", stdin={"path": "nb.ipynb", **edit})
        assert call.code == 0, (layout, edit, call.json)
        after = path.read_bytes().decode("utf-8")
        if layout == "bom":
            assert after.startswith("\ufeff")
        parsed = json.loads(after.removeprefix("\ufeff"))
        assert parsed["metadata"] == data["metadata"]
        expected = len(data["cells"]) + (1 if edit["mode"] == "insert" else
                                         -1 if edit["mode"] == "delete" else 0)
        assert len(parsed["cells"]) == expected
        assert after.endswith("\n") == text.endswith("\n")
        if layout == "crlf":
            assert "\n" not in after.replace("\r\n", "")

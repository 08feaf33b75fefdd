"""A listing's JSON written directly from the walk's entries (``entries_json``,
``fastjson.Encoded``) is byte for byte the JSON of their ``Entry`` values as plain values,
whatever their names (control characters, quotes, non-ASCII, lone surrogates from undecodable
names), sizes and link targets; a value holding ``Encoded`` texts is written as the same value
with plain parts, also when the data holds the mark the splice uses; and on the command line,
where the direct path runs, a listing of odd names reads as ``batch`` gives it, which builds
plain values."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import run_inprocess
from zbtools.core.call.fastjson import Encoded, dumps_ascii
from zbtools.core.search.entries import Entry as WalkEntry
from zbtools.toolkit.listing import entries_json, to_entry

# the marks fastjson writes an Encoded part as, the first then the next
MARKS = ["\0zbtools-encoded\0", "\0zbtools-encoded1\0"]

names = st.text(st.characters(codec="utf-8") | st.characters(categories=["Cs"]), max_size=12)
entries = st.builds(
    WalkEntry, names, names, st.sampled_from(["file", "directory", "symlink", "fifo"]),
    st.none() | st.integers(0, 2**63), st.integers(1, 512), st.none() | names)


@settings(max_examples=200, deadline=None)
@given(st.lists(entries, max_size=6))
def test_entries_written_directly_are_their_json(walked: list[WalkEntry]) -> None:
    assert entries_json(walked) == dumps_ascii([to_entry(e).to_json() for e in walked])


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=6)
    | st.sampled_from(MARKS),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(max_size=4) | st.sampled_from(MARKS), children, max_size=4),
    max_leaves=20)


def encode_some(value: Any, pick: list[bool]) -> Any:
    """``value`` with some of its parts given as Encoded text (``pick`` decides, in order)."""
    if pick and pick.pop():
        return Encoded(dumps_ascii(value))
    if isinstance(value, dict):
        return {k: encode_some(v, pick) for k, v in value.items()}
    if isinstance(value, list):
        return [encode_some(v, pick) for v in value]
    return value


@settings(max_examples=300, deadline=None)
@given(json_values, st.lists(st.booleans(), max_size=30))
def test_encoded_parts_are_written_as_the_plain_value(value: Any, pick: list[bool]) -> None:
    assert dumps_ascii(encode_some(value, pick)) == dumps_ascii(value)


def test_a_mark_in_the_data_is_not_taken_for_an_encoded_part() -> None:
    first, second = MARKS
    value = {"a": first, first: [1, Encoded("[2, 3]")], "b": Encoded('{"c": Infinity}'),
             "d": second}
    assert dumps_ascii(value) == dumps_ascii(
        {"a": first, first: [1, [2, 3]], "b": {"c": float("inf")}, "d": second})


def test_the_command_line_listing_reads_as_batch_gives_it(tmp_path: Path) -> None:
    for name in ("plain.py", 'quo"te', "tab\there", "caf\u00e9", "line\u2028sep", "z" * 40):
        (tmp_path / "d").mkdir(exist_ok=True)
        (tmp_path / "d" / name).write_text("x" * len(name))
    (tmp_path / "d" / "link").symlink_to("caf\u00e9")
    argv = ["list_directory", "--path", ".", "--max-depth", "5", "--format", "json"]
    cli = run_inprocess(argv, workspace=tmp_path)
    assert cli.code == 0
    line = cli.out.rstrip("\n")
    assert "\n" not in line and line == dumps_ascii(json.loads(line))
    request = json.dumps({"tool": "list_directory",
                          "arguments": {"path": ".", "max_depth": 5}}) + "\n"
    batch = subprocess.run([sys.executable, "-m", "zbtools", "-w", str(tmp_path), "batch"],
                           input=request, capture_output=True, text=True, check=True)
    assert json.loads(batch.stdout.splitlines()[0])["result"] == json.loads(line)["result"]

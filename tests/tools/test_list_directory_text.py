"""list_directory's text form, which a one-shot call makes without a stat per file (it shows no
sizes), is on any tree the text rendering of the JSON listing of the same call: the same
entries, kinds, link targets, order and skipped counts."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import run_inprocess
from tests.invariants.budget import invariant
from zbtools.core.search.entries import Skipped
from zbtools.toolkit.listing import Entry
from zbtools.tools.list_directory import Result, render

NAMES = st.sampled_from(["a", "b.py", ".hid", "node_modules", "x.log", "Z", "é", "sub"])
# what a tree holds: (kind, path parts); kinds as the walk meets them
ITEMS = st.lists(st.tuples(st.sampled_from(["file", "dir", "link", "fifo"]),
                           st.lists(NAMES, min_size=1, max_size=3)), max_size=14)


def build(root: Path, items: list[tuple[str, list[str]]], ignore: str) -> None:
    (root / "a").mkdir()
    for kind, parts in items:
        path = root.joinpath(*parts)
        if any((p.exists() and not p.is_dir()) or p.is_symlink() for p in path.parents
               if root in p.parents):
            continue  # a parent already made as something else
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists() or path.is_symlink():
            continue
        if kind == "file":
            path.write_text("x" * len(parts))
        elif kind == "dir":
            path.mkdir()
        elif kind == "link":  # to a file, a directory or nothing
            path.symlink_to(root / ("t.txt", "a", "gone")[len(parts) % 3])
        else:
            os.mkfifo(path)
    (root / ".gitignore").write_text(ignore)
    (root / "t.txt").write_text("target")


@invariant(examples=25)
@given(items=ITEMS, ignore=st.sampled_from(["", "*.log\n", "sub/\n", "*\n!*.py\n"]),
       hidden=st.booleans(), depth=st.integers(1, 4))
def test_the_text_listing_is_the_json_listing_drawn(
        tmp_path_factory: Any, items: list[tuple[str, list[str]]], ignore: str,
        hidden: bool, depth: int) -> None:
    root = tmp_path_factory.mktemp("tree")
    build(root, items, ignore)
    argv = ["list_directory", "--max-depth", str(depth), "--include-hidden", str(hidden).lower()]
    env = {"ZBTOOLS_WORKSPACE": str(root)}
    listed = run_inprocess([*argv, "--json"], env=env)
    assert listed.code in (0, 1), listed.err
    result = json.loads(listed.out)["result"]
    text = run_inprocess([*argv, "--format", "text"], env=env)
    assert text.code == listed.code, text.err
    entries = [Entry(**e) for e in result["entries"]]
    drawn = render(Result(path=result["path"], entries=entries, count=len(entries),
                          truncated=result["truncated"], skipped=Skipped(**result["skipped"])))
    assert text.out == drawn

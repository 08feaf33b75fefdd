"""A one-shot walk's second scanner (zbtools/core/search/walk_split.py): on any tree, with any
limit, depth and switches, the walk answers exactly as it does alone (entries, sizes, order,
skipped counts, truncation, notes), also where it takes whole subtrees the child wrote with the
listing's ``render`` (``Walk.written``: the same JSON, the same count); the child is always
reaped and leaves no descriptor; and the command line's listing is the same with it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import REPO
from tests.invariants.budget import invariant
from zbtools.core.files.workspace import Workspace
from zbtools.core.search import walk_split
from zbtools.core.search.entries import Entry, Rendered, Skipped
from zbtools.core.search.walk import Walk
from zbtools.toolkit.listing import entries_json, entries_text

NAMES = st.sampled_from(["a", "b", "c.py", ".h", "node_modules", "x.log", "Z", "é", "sub",
                         "\udcff"])
ITEMS = st.lists(st.tuples(st.sampled_from(["file", "file", "dir", "link", "fifo"]),
                           st.lists(NAMES, min_size=1, max_size=5)), min_size=5, max_size=60)
IGNORES = st.sampled_from(["*.log\n", "sub/\n", "*\n!*/\n!*.py\n", "b\n!c.py\n", "Z\n"])


@pytest.fixture(autouse=True)
def forced(monkeypatch: pytest.MonkeyPatch) -> None:
    """The scanner starts after the first directory, whatever the limit and the threads the
    test runner has."""
    monkeypatch.setattr(walk_split, "SPLIT_AFTER", 1)
    monkeypatch.setattr(walk_split, "SPLIT_LEFT", 0)
    monkeypatch.setattr(walk_split, "may_split", lambda: True)


SKELETON = [("file", [top, mid, name]) for top in ("a", "b", "sub", "Z")
            for mid in ("a", "x.log", "é") for name in ("c.py", "x.log", ".h")]


def build(root: Path, items: list[tuple[str, list[str]]], ignores: list[str]) -> None:
    for kind, parts in [*SKELETON, *items]:
        path = root.joinpath(*parts)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            if path.exists() or path.is_symlink():
                continue
            if kind == "file":
                path.write_text("x" * len(parts) * 7)
            elif kind == "dir":
                path.mkdir()
            elif kind == "link":
                path.symlink_to("..")
            else:
                os.mkfifo(path)
        except OSError:
            continue  # a parent made as a file: that item is left out
    # .gitignore files at the root and in the top directories, the first rules at the root
    for where, text in zip([".", "a", "b", "sub", "Z", "a/a", "b/é"], ignores, strict=False):
        if (root / where).is_dir() and not (root / where).is_symlink():
            (root / where / ".gitignore").write_text(text)


def walked(ws: Path, split: bool, **options: Any) -> tuple[Any, ...]:
    space = Workspace(str(ws))
    try:
        walk = Walk(space, ".", split=split, **options)
        entries = [(e.rel, e.name, e.kind, e.size, e.depth, e.target, e.mtime) for e in walk]
        return (entries, walk.skipped.to_json(), walk.truncated, walk.loops,
                walk.depth_limited, walk.notes())
    finally:
        space.close()


def listed(ws: Path, split: bool, **options: Any) -> tuple[Any, ...]:
    """A listing's JSON as ``list_directory`` writes it: from ``written()`` with the scanner
    (and how many ``Rendered`` items it took), from the plain walk without."""
    space = Workspace(str(ws))
    try:
        walk = Walk(space, ".", split=split, render=entries_text if split else None,
                    **options)
        items: list[Entry | Rendered] = list(walk.written() if split else walk)
        wholes = sum(isinstance(item, Rendered) for item in items)
        count = walk.produced if split else len(items)
        return (entries_json(items), count, walk.skipped.to_json(), walk.truncated, walk.loops,
                walk.depth_limited, walk.notes()), wholes
    finally:
        space.close()


def children() -> bool:
    """Whether this process has a child, running or not reaped."""
    try:
        os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        return False
    return True


def skipped_by_name(rel: str, skip: int) -> bool:
    return bool(skip) and zlib.crc32(rel.encode("utf-8", "surrogateescape")) % skip == 0


def patiently(monkeypatch: pytest.MonkeyPatch, skip: int) -> None:
    """The walk's first look at the pipe waits for the child to finish its whole walk, so the
    walk takes every directory (or whole subtree) it can from the child (racing, a small tree
    is mostly scanned by the walk itself before the child gets there), but for some that it
    scans itself (``skip``: one in so many, by name; 0: none), below or above the child's."""
    drain = walk_split.Ahead.drain
    fill = walk_split.Ahead.fill
    subtree = walk_split.Ahead.subtree

    def some(self: walk_split.Ahead, walk: Walk, frame: Any) -> bool:
        if skipped_by_name(frame.rel, skip):
            self.drain()
            self.scans.pop(frame.rel, None)
        return fill(self, walk, frame)

    def some_whole(self: walk_split.Ahead, walk: Walk, rel: str, left: int) -> Any:
        if skipped_by_name(rel, skip):
            return None
        return subtree(self, walk, rel, left)

    monkeypatch.setattr(walk_split.Ahead, "fill", some)
    monkeypatch.setattr(walk_split.Ahead, "subtree", some_whole)

    def waiting(self: walk_split.Ahead) -> None:
        if self.fd >= 0 and not getattr(self, "waited", False):
            self.waited = True  # type: ignore[attr-defined]
            os.set_blocking(self.fd, True)
            while chunk := os.read(self.fd, 1 << 16):
                self.frames.feed(chunk)
            os.set_blocking(self.fd, False)
        drain(self)

    monkeypatch.setattr(walk_split.Ahead, "drain", waiting)


@invariant(examples=40)
@given(items=ITEMS, ignores=st.lists(IGNORES, max_size=7),
       limit=st.one_of(st.integers(1, 60), st.just(10_000)), depth=st.integers(1, 6),
       hidden=st.booleans(), ignored=st.booleans(), exclude=st.sampled_from([None, [], ["sub"]]),
       patient=st.booleans(), skip=st.sampled_from([0, 2, 3]))
def test_the_walk_answers_the_same_with_a_second_scanner(
        tmp_path_factory: Any, items: list[tuple[str, list[str]]], ignores: list[str],
        limit: int, depth: int, hidden: bool, ignored: bool, exclude: list[str] | None,
        patient: bool, skip: int) -> None:
    options = {"max_depth": depth, "max_entries": limit, "include_hidden": hidden,
               "include_ignored": ignored, "exclude_dirs": exclude}
    alike_with_the_scanner(tmp_path_factory.mktemp("tree"), items, ignores, options, walked,
                           patient=patient, skip=skip)


def alike_with_the_scanner(ws: Path, items: list[tuple[str, list[str]]], ignores: list[str],
                           options: dict[str, Any], answer: Callable[..., Any], *,
                           patient: bool, skip: int, loops: int = 0) -> None:
    """``answer`` on the tree built in ``ws`` is the same with the scanner (racing, or waited
    for with ``skip``, meeting loops where ``loops``) as without; the scanner is reaped and
    leaves no descriptor."""
    build(ws, items, ignores)
    monkeypatch = pytest.MonkeyPatch()
    if patient:
        patiently(monkeypatch, skip)
    if loops:
        seeing_loops(monkeypatch, loops)
    before = set(os.listdir("/proc/self/fd"))
    try:
        assert answer(ws, True, **options) == answer(ws, False, **options)
    finally:
        monkeypatch.undo()
    assert not children()  # the scanner was reaped
    assert set(os.listdir("/proc/self/fd")) <= before  # and left no descriptor


def seeing_loops(monkeypatch: pytest.MonkeyPatch, skip: int) -> None:
    """The child meets some directories (one in so many, by name) as a loop: it cannot send
    the subtrees holding them whole, and the walk, which enters them, lists them itself."""
    scan_ahead = walk_split.scan_ahead

    def looping(walk: Any, top: Any, out: int) -> None:
        open_child = walk._open_child

        def opened(parent: Any, entry: Any) -> Any:
            if skipped_by_name(entry.rel, skip):
                walk.loops += 1
                return None
            return open_child(parent, entry)

        walk._open_child = opened  # this process's (the child's) walk only
        scan_ahead(walk, top, out)

    monkeypatch.setattr(walk_split, "scan_ahead", looping)


@invariant(examples=40)
@given(items=ITEMS, ignores=st.lists(IGNORES, max_size=7),
       limit=st.one_of(st.integers(1, 60), st.just(10_000)), depth=st.integers(1, 6),
       hidden=st.booleans(), ignored=st.booleans(), exclude=st.sampled_from([None, [], ["sub"]]),
       patient=st.booleans(), skip=st.sampled_from([0, 2, 3]), loops=st.sampled_from([0, 3]))
def test_a_listing_of_whole_subtrees_is_the_listing_of_the_walk_alone(
        tmp_path_factory: Any, items: list[tuple[str, list[str]]], ignores: list[str],
        limit: int, depth: int, hidden: bool, ignored: bool, exclude: list[str] | None,
        patient: bool, skip: int, loops: int) -> None:
    options = {"max_depth": depth, "max_entries": limit, "include_hidden": hidden,
               "include_ignored": ignored, "exclude_dirs": exclude}

    def listing(ws: Path, split: bool, **options: Any) -> Any:
        return listed(ws, split, **options)[0]

    alike_with_the_scanner(tmp_path_factory.mktemp("tree"), items, ignores, options, listing,
                           patient=patient, skip=skip, loops=loops)


def test_a_patient_listing_takes_the_subtrees_the_child_wrote(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The invariant above is not kept by never taking one: with the child done first, every
    directory below the start comes whole (60 of them), the listing the same."""
    wide_tree(ws)
    patiently(monkeypatch, 0)
    answer, wholes = listed(ws, True, max_depth=10, max_entries=10_000)
    assert answer == listed(ws, False, max_depth=10, max_entries=10_000)[0]
    assert wholes == 60 and answer[1] == 60 * 4


def test_a_whole_subtree_holding_a_directory_already_walked_is_not_taken() -> None:
    """A subtree is taken only if none of its directories is one the walk has been in (a
    loop through a bind mount: the walk counts it, as it does alone), and only if it fits."""
    ahead = walk_split.Ahead(-1, -1)
    ahead.running = False
    ahead.wholes = {"a": ("a", 3, (0, 0, 1, 0), (1, 10), ["A", ("a/b",), "C"]),
                    "a/b": ("a/b", 1, (0, 0, 0, 0), (1, 11), ["B"])}

    class Seen:
        def __init__(self, visited: set[tuple[int, int]]) -> None:
            self.skipped = Skipped()
            self._visited = visited

    assert ahead.subtree(Seen({(1, 11)}), "a", 10) is None  # type: ignore[arg-type]
    walk = Seen(set())
    assert ahead.subtree(walk, "a", 2) is None  # type: ignore[arg-type]  # 3 entries
    got = ahead.subtree(walk, "a", 3)  # type: ignore[arg-type]
    assert got is not None and (got.texts, got.count) == (["A", "B", "C"], 3)
    assert walk._visited == {(1, 10), (1, 11)} and walk.skipped.hidden == 1


def alive(ahead: walk_split.Ahead) -> bool:
    return ahead.running


def wide_tree(root: Path, dirs: int = 60) -> None:
    for i in range(dirs):
        d = root / f"d{i:02}" / "inner"
        d.mkdir(parents=True)
        (d / "f.txt").write_text("x" * i)
        (d.parent / "g.txt").write_text("y")


def test_a_walk_left_early_stops_and_reaps_its_scanner(ws: Path) -> None:
    wide_tree(ws)
    space = Workspace(str(ws))
    try:
        walk = Walk(space, ".", max_depth=10, split=True)
        it: Iterator[Any] = iter(walk)
        taken = [next(it) for _ in range(8)]
        running = walk._ahead
        assert running is not None and alive(running)  # started after the first directory
        del it  # the consumer stops: the generator is closed
        import gc

        gc.collect()
        assert len(taken) == 8 and not alive(running) and walk._ahead is None
        assert not children()
    finally:
        space.close()


def test_no_scanner_unasked_in_a_session_without_a_stat_or_for_a_short_walk(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from zbtools.core.search.cache import SearchCache

    started: list[bool] = []
    monkeypatch.setattr(walk_split.Ahead, "start", lambda *a: started.append(True))
    wide_tree(ws)
    space = Workspace(str(ws))
    try:
        list(Walk(space, ".", max_depth=10))
        list(Walk(space, ".", max_depth=10, split=True, cache=SearchCache(1 << 20, 0)))
        list(Walk(space, ".", max_depth=10, split=True, with_stat=False))
        monkeypatch.setattr(walk_split, "SPLIT_LEFT", 50)  # more than this walk may give:
        list(Walk(space, ".", max_depth=10, split=True, max_entries=40))
        assert not started
        monkeypatch.setattr(walk_split, "SPLIT_LEFT", 0)
        list(Walk(space, ".", max_depth=10, split=True))
        assert started
    finally:
        space.close()


def test_a_process_with_threads_never_forks(monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    monkeypatch.undo()
    ready = threading.Event()
    done = threading.Event()
    def idle() -> None:
        ready.set()
        done.wait(10)

    other = threading.Thread(target=idle)
    other.start()
    try:
        ready.wait(10)
        assert walk_split.may_split() is False
    finally:
        done.set()
        other.join()


def test_one_search_worker_means_no_scanner(monkeypatch: pytest.MonkeyPatch) -> None:
    """``ZBTOOLS_SEARCH_WORKERS=1`` (or one CPU) keeps a walk to one process, as a search."""
    import threading

    monkeypatch.undo()
    monkeypatch.setattr(threading, "active_count", lambda: 1)  # (the runner's own threads)
    monkeypatch.setenv("ZBTOOLS_SEARCH_WORKERS", "1")
    assert walk_split.may_split() is False
    monkeypatch.setenv("ZBTOOLS_SEARCH_WORKERS", "2")
    assert walk_split.may_split() is True


@pytest.mark.slow  # two real processes
def test_the_command_line_lists_the_same_with_the_scanner(ws: Path) -> None:
    wide_tree(ws)
    (ws / ".gitignore").write_text("d1*/\n")
    code = ("import sys\nfrom zbtools.core.search import walk_split\n"
            "walk_split.SPLIT_AFTER = int(sys.argv.pop(1))\n"
            "from zbtools.entry import main\nmain()\n")
    env = dict(os.environ, PYTHONPATH=str(REPO), ZBTOOLS_WORKSPACE=str(ws))
    argv = ["list_directory", "--max-depth", "5", "--limit", "0", "--json"]
    answers = [subprocess.run([sys.executable, "-c", code, after, *argv], env=env, cwd=ws,
                              capture_output=True, check=True).stdout
               for after in ("1", "1000000")]
    assert answers[0] == answers[1]
    listed = json.loads(answers[0])["result"]
    assert listed["count"] == 60 * 4 - 10 * 4 and listed["skipped"]["ignored"] == 10

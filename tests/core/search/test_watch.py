"""Warm walks replayed from a recording while the change monitor (inotify) reports nothing that
alters them: exactly what a cold walk gives, after any change made by anyone between two calls.

The differential tests apply random changes (in place, same size and mtime put back, renames
over, hard links changed from outside, hidden and temp names, ignore files, directories made
and removed, symlinks) between warm walks and compare each with a cold walk of the same tree.
"""

from __future__ import annotations

import os
import random
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.core.search.test_cache import batch
from zbtools.core.files.workspace import Workspace
from zbtools.core.search.cache import SearchCache
from zbtools.core.search.request import SearchJob, SearchRequest
from zbtools.core.search.tree import PythonEngine, search
from zbtools.core.search.walk import Walk
from zbtools.core.search.watch import ChangeMonitor

pytestmark = [pytest.mark.skipif(ChangeMonitor.open(1) is None,
                                 reason="no inotify here: sessions re-check by stat instead"),
              pytest.mark.slow]  # waits on the change monitor


def watched_cache() -> SearchCache:
    return SearchCache(1 << 24, 10_000)


Watched = tuple[Workspace, SearchCache]


@pytest.fixture
def watched(ws: Path) -> Iterator[Watched]:
    """The workspace and a session cache with its change monitor, closed after the test."""
    workspace = Workspace(str(ws))
    cache = watched_cache()
    yield workspace, cache
    cache.close()
    workspace.close()


def snapshot(walk: Walk, stop: int | None = None) -> tuple[list[tuple[Any, ...]], dict[str, int],
                                                           tuple[Any, ...]]:
    """What a consumer sees: each entry (with fresh stat data), the counts, the flags."""
    seen = []
    try:
        for n, entry in enumerate(walk):
            if stop is not None and n >= stop:
                break
            walk.stat(entry)
            seen.append((entry.rel, entry.kind, entry.size, entry.mtime, entry.target))
    finally:
        walk.close()
    return seen, walk.skipped.to_json(), (walk.loops, walk.depth_limited, walk.truncated)


def both(workspace: Workspace, cache: SearchCache, stop: int | None = None,
         with_stat: bool = False, **switches: Any) -> tuple[Any, Any, bool]:
    warm_walk = Walk(workspace, ".", cache=cache, with_stat=with_stat, **switches)
    warm = snapshot(warm_walk, stop)
    cold = snapshot(Walk(workspace, ".", with_stat=with_stat, **switches), stop)
    return warm, cold, warm_walk.replayed


def grep_both(workspace: Workspace, cache: SearchCache, pattern: str,
              limit: int) -> tuple[Any, Any]:
    def run(c: SearchCache | None) -> Any:
        out = search(SearchJob(workspace, SearchRequest(pattern=pattern, limit=limit), cache=c),
                     [PythonEngine(workers=1)])
        hits = [(f.path, h.line, h.lines) for f in out.files for h in f.hits]
        return hits, out.total, out.truncated, out.skipped.to_json()

    return run(cache), run(None)


def make(ws: Path) -> None:
    for d in ("src", "src/pkg", "docs", "build", ".hidden"):
        (ws / d).mkdir()
    for i in range(6):
        (ws / "src" / f"m{i}.py").write_text(f"def f{i}():\n    return {i}\n")
        (ws / "src" / "pkg" / f"p{i}.py").write_text(f"x = {i}\n")
    (ws / "docs" / "a.md").write_text("# a\n")
    (ws / "build" / "out.o").write_text("bin\n")
    (ws / ".gitignore").write_text("build/\n*.log\n")
    (ws / "note.log").write_text("log\n")
    (ws / ".hidden" / "h.txt").write_text("h\n")


def mutate(ws: Path, rng: random.Random, outside: Path) -> str:
    """One random change (a change that cannot be made here, e.g. over a directory, is none)."""
    try:
        return change(ws, rng, outside)
    except OSError:
        return "none"


def change(ws: Path, rng: random.Random, outside: Path) -> str:
    files = sorted(p for p in ws.rglob("*") if p.is_file() and not p.is_symlink())
    dirs = sorted(p for p in ws.rglob("*") if p.is_dir() and not p.is_symlink())
    kind = rng.choice(["in_place", "append", "create", "hidden", "temp", "delete", "rename_over",
                       "mkdir", "rmdir", "ignore", "symlink", "file_to_dir", "hardlink",
                       "utime_dir", "rename_dir"])
    target = rng.choice(files) if files else ws / "x.txt"
    if kind == "in_place" and files:
        st = target.stat()
        data = target.read_bytes()
        target.write_bytes(bytes(reversed(data)) if data else b"")
        os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
    elif kind == "append" and files:
        with open(target, "a") as fh:
            fh.write("more\n")
    elif kind == "create":
        (rng.choice(dirs or [ws]) / f"new{rng.randrange(1000)}.py").write_text("new = 1\n")
    elif kind == "hidden":
        (rng.choice(dirs or [ws]) / f".h{rng.randrange(1000)}").write_text("h\n")
    elif kind == "temp":  # a writer's temp file that comes and goes between two calls
        tmp = rng.choice(dirs or [ws]) / f".tmp{rng.randrange(1000)}.zbtmp"
        tmp.write_text("t\n")
        tmp.unlink()
    elif kind == "delete" and files:
        target.unlink()
    elif kind == "rename_over" and len(files) > 1:
        other = rng.choice(files)
        if other != target:
            other.replace(target)
    elif kind == "mkdir":
        (rng.choice(dirs or [ws]) / f"d{rng.randrange(1000)}").mkdir(exist_ok=True)
    elif kind == "rmdir" and dirs:
        shutil.rmtree(rng.choice(dirs))
    elif kind == "ignore":
        where = rng.choice(dirs or [ws])
        (where / ".gitignore").write_text(rng.choice(["*.py\n", "m1.py\n", "!m1.py\n", "*.md\n"]))
    elif kind == "symlink":
        link = rng.choice(dirs or [ws]) / f"l{rng.randrange(1000)}"
        if not link.exists() and not link.is_symlink():
            link.symlink_to(rng.choice(["../src", "m0.py", str(outside)]))
    elif kind == "file_to_dir" and files:
        target.unlink()
        target.mkdir()
    elif kind == "hardlink" and files:
        st = target.stat()
        other = outside / f"link{rng.randrange(10**6)}"
        os.link(target, other)
        other.write_text(other.read_text() + "changed from outside\n")
        os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
    elif kind == "utime_dir" and dirs:
        os.utime(rng.choice(dirs), ns=(0, 10**18))
    elif kind == "rename_dir" and dirs:
        rng.choice(dirs).rename(ws / f"moved{rng.randrange(1000)}")
    return kind


@pytest.mark.parametrize("seed", range(24))
def test_a_replayed_walk_equals_a_cold_walk_after_any_change(
        ws: Path, seed: int, watched: Watched) -> None:
    rng = random.Random(seed)
    outside = ws.parent / "outside"
    make(ws)
    workspace, cache = watched
    replays = 0
    for step in range(40):
        choices: list[dict[str, Any]] = [{}, {"include_hidden": True},
                                         {"include_ignored": True}, {"max_depth": 1},
                                         {"max_depth": 9}]
        switches = rng.choice(choices)
        stop = rng.choice([None, None, 3, 7])
        with_stat = rng.random() < 0.3
        for _ in range(2):  # the second one replays when nothing changed
            warm, cold, replayed = both(workspace, cache, stop, with_stat, **switches)
            assert warm == cold, (seed, step, switches, stop)
            replays += replayed
        kind = mutate(ws, rng, outside)
        warm, cold, _ = both(workspace, cache, stop, with_stat, **switches)
        assert warm == cold, (seed, step, kind, switches, stop)
        pattern, limit = rng.choice([("1", 100), ("=", 3), ("def", 100), ("h", 1)])
        warm_grep, cold_grep = grep_both(workspace, cache, pattern, limit)
        assert warm_grep == cold_grep, (seed, step, kind, pattern)
    assert replays > 10  # fewer where a hard-linked ignore file stops recordings


def test_a_repeated_walk_is_replayed_and_a_change_elsewhere_keeps_it(
        ws: Path, watched: Watched) -> None:
    make(ws)
    workspace, cache = watched
    first, cold, replayed = both(workspace, cache, max_depth=9)
    assert first == cold and not replayed
    _, _, replayed = both(workspace, cache, max_depth=9)
    assert replayed
    (ws / "src" / "m1.py").write_text("def f1():\n    return 'a longer body'\n")
    warm, cold, replayed = both(workspace, cache, max_depth=9)
    assert replayed and warm == cold  # patched: size and mtime of m1.py re-read
    (ws / "src" / "brand_new.py").write_text("n = 1\n")
    warm, cold, replayed = both(workspace, cache, max_depth=9)
    assert not replayed and warm == cold  # a new name: walked again
    (ws / "docs" / "late.md").write_text("n = 1\n")
    warm, cold, replayed = both(workspace, cache, max_depth=1)
    assert warm == cold  # docs/ is not entered at depth 1: only its mtime is re-read


def test_a_prefix_is_replayed_and_the_rest_walked(ws: Path, watched: Watched) -> None:
    make(ws)
    workspace, cache = watched
    warm, cold, replayed = both(workspace, cache, stop=4, max_depth=9)
    assert warm == cold and not replayed
    warm, cold, replayed = both(workspace, cache, stop=4, max_depth=9)
    assert warm == cold and replayed
    warm, cold, replayed = both(workspace, cache, max_depth=9)  # past the recorded prefix
    assert replayed and warm == cold and len(warm[0]) > 4
    warm, cold, replayed = both(workspace, cache, max_depth=9)  # now recorded whole
    assert replayed and warm == cold


def test_a_file_changed_in_place_same_second_same_size_is_searched_again(
        ws: Path, watched: Watched) -> None:
    """Plain Python writes between two calls: same size, mtime put back; the grep result
    cache (settled or not) must not answer from the old content."""
    (ws / "a.txt").write_text("alpha TODO\n")
    (ws / "b.txt").write_text("beta\n")
    workspace, cache = watched

    first = search(SearchJob(workspace, SearchRequest(pattern="TODO", limit=100), cache=cache),
                   [PythonEngine(workers=1)])
    assert first.total == 1
    st = os.stat(ws / "a.txt")
    with open(ws / "a.txt", "r+") as fh:
        fh.write("gamma DONE")
    os.utime(ws / "a.txt", ns=(st.st_atime_ns, st.st_mtime_ns))
    again = search(SearchJob(workspace, SearchRequest(pattern="TODO", limit=100), cache=cache),
                   [PythonEngine(workers=1)])
    done = search(SearchJob(workspace, SearchRequest(pattern="DONE", limit=100), cache=cache),
                  [PythonEngine(workers=1)])
    assert (again.total, done.total) == (0, 1)


def test_a_hard_linked_file_changed_through_its_other_link_is_seen(
        ws: Path, watched: Watched) -> None:
    (ws / "a.txt").write_text("one\n")
    other = ws.parent / "outside" / "a-link.txt"
    os.link(ws / "a.txt", other)
    workspace, cache = watched
    both(workspace, cache)
    with open(other, "a") as fh:  # notifies outside/, not the workspace's directory
        fh.write("two, a longer line\n")
    warm, cold, replayed = both(workspace, cache)
    assert replayed and warm == cold
    assert warm[0][0][2] == os.stat(ws / "a.txt").st_size


def test_a_lost_event_voids_every_recording(ws: Path, watched: Watched) -> None:
    make(ws)
    workspace, cache = watched
    both(workspace, cache)
    monitor = cache.change_monitor()
    assert monitor is not None
    monitor.forget()  # what an IN_Q_OVERFLOW does
    warm, cold, replayed = both(workspace, cache)
    assert not replayed and warm == cold


def test_no_watch_capacity_means_no_monitor_and_stat_checks() -> None:
    assert SearchCache(1 << 20, 0).change_monitor() is None
    assert SearchCache(0, 100).change_monitor() is None


def test_in_a_session_a_write_of_our_own_keeps_the_recording_and_is_seen(
        ws: Path, cli: Any) -> None:
    make(ws)
    envelopes = batch(
        cli, ("find_files_glob", {"pattern": "**/*.py"}),
        ("write_file", {"path": "src/m2.py", "content": "changed = 'by zbtools itself'\n"}),
        ("find_files_glob", {"pattern": "**/*.py"}),
        ("list_directory", {"max_depth": 1}),
        ("write_file", {"path": "docs/new.md", "content": "n\n"}),
        ("list_directory", {"max_depth": 1}),
        ("grep_search", {"pattern": "zbtools itself"}))
    sizes = {m["path"]: m["size"] for m in envelopes[2]["result"]["matches"]}
    assert sizes["src/m2.py"] == len("changed = 'by zbtools itself'\n")
    # docs/ is not entered at depth 1: its mtime, moved by the write, is read again
    assert envelopes[5]["result"] == cli("list_directory", stdin={"max_depth": 1}).result
    assert envelopes[2]["result"] == cli("find_files_glob", stdin={"pattern": "**/*.py"}).result
    assert [m["path"] for m in envelopes[6]["result"]["matches"]] == ["src/m2.py"]


TOOL_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("find_files_glob", {"pattern": "**/*.py"}),
    ("find_files_glob", {"pattern": "**/*.py", "limit": 3}),
    ("find_files_glob", {"pattern": "*", "sort": "mtime", "type": "any"}),
    ("find_files_glob", {"pattern": "**/.h*", "include_hidden": True}),
    ("find_files_glob", {"pattern": "src/**", "type": "directory"}),
    ("list_directory", {"max_depth": 9}),
    ("list_directory", {"max_depth": 1, "limit": 4}),
    ("find_files", {"pattern": "p"}),
    ("grep_search", {"pattern": "return"}),
    ("grep_search", {"pattern": "x", "output_mode": "files_with_matches", "head_limit": 2}),
]


@pytest.mark.parametrize("seed", range(12))
def test_a_session_answers_every_listing_as_a_cold_call_after_any_change(
        ws: Path, cli: Any, seed: int) -> None:
    """The session surface itself (``batch``): globs, listings and searches between random
    changes, each compared with a cold command-line call made right after it."""
    import json

    from zbtools.core.call.config import load_limits
    from zbtools.surfaces.batch import Batch

    rng = random.Random(seed)
    make(ws)
    workspace = Workspace(str(ws))
    session = Batch(workspace, load_limits(os.environ, {}), dict(os.environ), None, None)
    try:
        for step in range(25):
            tool, args = rng.choice(TOOL_CALLS)
            for _ in range(2):
                _id, envelope = session.call(json.dumps({"tool": tool, "args": args}).encode())
                cold = cli(tool, stdin=args).result
                warm = envelope["result"]
                warm.pop("engine", None)  # which engine answered is the only difference
                cold.pop("engine", None)
                assert envelope["ok"] and warm == cold, (seed, step, tool)
            mutate(ws, rng, ws.parent / "outside")
    finally:
        session.search_cache.close()
        workspace.close()


def test_a_directory_on_a_file_system_that_changes_without_events_is_never_replayed(
        ws: Path, monkeypatch: pytest.MonkeyPatch, watched: Watched) -> None:
    """A network or FUSE mount can change behind the kernel's back: no watch, no recording."""
    from zbtools.core.search import watch

    monkeypatch.setattr(watch, "mount_types", lambda: {os.stat(ws).st_dev: "nfs4"})
    make(ws)
    workspace, cache = watched
    for _ in range(3):
        warm, cold, replayed = both(workspace, cache, max_depth=9)
        assert warm == cold and not replayed


def test_the_event_log_answers_what_came_after_a_point_and_forgets_on_overflow() -> None:
    monitor = ChangeMonitor(-1, lambda fd, path, mask: -1, 10)
    for n in range(1, 8):
        monitor.seq = n
        monitor.log.append((n, (1, 2, f"f{n}", 0)))
    assert [e[2] for e in monitor.events_since(4) or []] == ["f5", "f6", "f7"]
    assert monitor.events_since(7) == []
    assert [e[2] for e in monitor.events_since(0) or []] == [f"f{n}" for n in range(1, 8)]
    monitor.forget()
    assert monitor.events_since(7) is None and monitor.events_since(monitor.seq) == []


def test_what_the_consumer_counts_into_skipped_is_not_recorded_as_the_walks(
        ws: Path, watched: Watched) -> None:
    """grep counts files it cannot read into the walk's ``skipped``: a replay must add only
    what the walk itself counted, whatever the consumer counted before."""
    make(ws)
    workspace, cache = watched

    def consume(walk: Walk, stop: int | None, counting: bool) -> dict[str, int]:
        try:
            for n, entry in enumerate(walk):
                if counting and entry.kind == "file":
                    walk.skipped.unreadable += 1  # as record() does for an unreadable file
                if stop is not None and n >= stop:
                    break
        finally:
            walk.close()
        return walk.skipped.to_json()

    # a listing records the walk, a search replays it (and counts), and the other way
    for stop, counting in ((None, False), (None, True), (5, True), (None, False),
                           (2, False), (None, True), (None, False)):
        warm_walk = Walk(workspace, ".", max_depth=9, cache=cache)
        warm = consume(warm_walk, stop, counting)
        cold = consume(Walk(workspace, ".", max_depth=9), stop, counting)
        assert warm == cold, (stop, counting, warm_walk.replayed)
    assert warm_walk.replayed


def test_walks_in_parallel_threads_share_recordings_and_answer_as_cold_ones(
        ws: Path, watched: Watched) -> None:
    """mcp runs listing tools in threads over one session cache (each call with its own
    workspace): replays, recordings and patches of the same walk at once still answer what a
    cold walk does."""
    import threading

    workspace, cache = watched
    make(ws)
    cold = {depth: both(workspace, SearchCache(0), max_depth=depth)[1] for depth in (1, 9)}
    failures: list[object] = []

    def run(depth: int) -> None:
        own = Workspace(str(ws))
        try:
            for _ in range(15):
                warm = snapshot(Walk(own, ".", cache=cache, max_depth=depth))
                if warm != cold[depth]:
                    failures.append((depth, warm))
        except Exception as exc:  # reported below: a thread's exception is otherwise lost
            failures.append(exc)
        finally:
            own.close()

    threads = [threading.Thread(target=run, args=(depth,)) for depth in (1, 9, 9, 1, 9)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures, failures[:2]


def test_a_walk_too_big_for_a_quarter_of_the_cache_is_not_recorded(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Its recording would evict the results that make repeats cheap: it is walked again,
    and once known too big, not even recorded."""
    from zbtools.core.search import recording

    made: list[object] = []

    class Counted(recording.Recording):  # type: ignore[type-arg]
        def __init__(self, seq: int, max_entries: int) -> None:
            made.append(self)
            super().__init__(seq, max_entries)

    monkeypatch.setattr(recording, "Recording", Counted)
    make(ws)
    workspace = Workspace(str(ws))
    small = SearchCache(4000, 10_000)  # the tree's recording costs more than 1000 bytes
    try:
        for _ in range(3):
            warm, cold, replayed = both(workspace, small, max_depth=9)
            assert warm == cold and not replayed
        assert len(made) == 1
    finally:
        small.close()
        workspace.close()

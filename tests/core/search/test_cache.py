"""The warm search cache of batch and mcp sessions: the same answers as a cold call, never stale.

Files made by a test are seconds old, and the cache keeps nothing changed in the last two seconds
(file-system clocks tick coarsely); so most tests move the cache's clock ahead (``settle``) to
exercise reuse, and ``test_a_just_written_file_is_never_kept`` runs on the real clock.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CliRunner
from tests.tools.test_grep_engines import CASES, make_tree, needs_rg
from zbtools.core.files.workspace import Workspace
from zbtools.core.search import cache as cache_module
from zbtools.core.search import warm as warm_module
from zbtools.core.search.cache import SearchCache
from zbtools.core.search.engine import Searcher
from zbtools.core.search.request import SearchJob, SearchRequest
from zbtools.core.search.tree import PythonEngine, search
from zbtools.core.search.walk import Walk

SHORT = {"-C": "context", "-B": "before_context", "-A": "after_context"}


@pytest.fixture
def settle(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every file made so far counts as settled: the cache's clock runs 10 s ahead."""
    real = cache_module.now_ns

    def ahead() -> int:
        return real() + 10_000_000_000

    monkeypatch.setattr(cache_module, "now_ns", ahead)
    monkeypatch.setattr(warm_module, "now_ns", ahead)


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files the search engine reads, in order."""
    seen: list[str] = []
    original = Searcher.search_file

    def counting(self: Searcher, dir_fd: int, name: str, limit: int | None = None) -> Any:
        seen.append(name)
        return original(self, dir_fd, name, limit)

    monkeypatch.setattr(Searcher, "search_file", counting)
    return seen


def as_args(flags: tuple[str, ...]) -> dict[str, Any]:
    """``("--pattern", "x", "-C", "2", "--include-hidden")`` -> JSON arguments."""
    args: dict[str, Any] = {}
    i = 0
    while i < len(flags):
        flag = flags[i]
        name = SHORT.get(flag) or flag[2:].replace("-", "_")
        has_value = flag in SHORT or flag == "--pattern" or (
            i + 1 < len(flags) and not flags[i + 1].startswith("-"))
        if not has_value:
            args[name] = True
            i += 1
            continue
        value: Any = flags[i + 1]
        if name in ("context", "before_context", "after_context", "head_limit"):
            value = int(value)
        elif name == "exclude_dirs":
            value = json.loads(value)
        args[name] = value
        i += 2
    return args


def batch(cli: CliRunner, *requests: tuple[str, dict[str, Any]]) -> list[dict[str, Any]]:
    stdin = "".join(json.dumps({"id": i, "tool": tool, "args": args}) + "\n"
                    for i, (tool, args) in enumerate(requests))
    call = cli("batch", stdin=stdin)
    assert call.code == 0, call
    envelopes = [json.loads(line) for line in call.out.splitlines()]
    assert all(e["ok"] for e in envelopes), envelopes
    return envelopes


@pytest.mark.parametrize("engine", ["python", pytest.param("rg", marks=needs_rg)])
@pytest.mark.parametrize("flags", CASES, ids=[" ".join(c) for c in CASES])
def test_a_warm_search_answers_exactly_what_a_cold_call_answers(
        ws: Path, cli: CliRunner, flags: tuple[str, ...], engine: str, settle: None) -> None:
    make_tree(ws)
    args = {**as_args(flags), "engine": engine}
    cold = cli("grep_search", stdin=args).result
    first, second, third = batch(cli, *[("grep_search", args)] * 3)
    assert first["result"] == cold
    assert second["result"] == cold
    assert third["result"] == cold


def test_a_repeated_search_reads_no_file_that_did_not_change(
        ws: Path, cli: CliRunner, settle: None, reads: list[str]) -> None:
    make_tree(ws)
    envelopes = batch(cli, ("grep_search", {"pattern": "TODO"}),
                      ("grep_search", {"pattern": "TODO"}))
    searched = envelopes[0]["result"]["skipped"]
    assert envelopes[1]["result"] == envelopes[0]["result"]
    assert len(reads) == len(set(reads)) > 10, reads  # each file read once: by the first call
    assert searched == envelopes[1]["result"]["skipped"]


def test_a_file_rewritten_by_another_process_between_two_calls_is_seen(
        ws: Path, cli: CliRunner, settle: None) -> None:
    (ws / "a.txt").write_text("alpha TODO\n")
    (ws / "b.txt").write_text("beta\n")
    old = os.stat(ws / "a.txt")
    # Another process rewrites a.txt: same size, and sets its mtime back to what it was.
    rewrite = (f"import os; p = {str(ws / 'a.txt')!r}; import time; time.sleep(0.05); "
               "open(p, 'w').write('gamma DONE\\n'); "
               f"os.utime(p, ns=({old.st_atime_ns}, {old.st_mtime_ns}))")
    envelopes = batch(cli, ("grep_search", {"pattern": "TODO"}),
                      ("run_command", {"command": f"python3 -c \"{rewrite}\""}),
                      ("grep_search", {"pattern": "TODO"}),
                      ("grep_search", {"pattern": "DONE"}))
    assert os.stat(ws / "a.txt").st_size == old.st_size
    assert os.stat(ws / "a.txt").st_mtime_ns == old.st_mtime_ns
    assert [m["path"] for m in envelopes[0]["result"]["matches"]] == ["a.txt"]
    assert envelopes[1]["result"]["exit_code"] == 0, envelopes[1]
    assert envelopes[2]["result"]["matches"] == []
    assert [m["path"] for m in envelopes[3]["result"]["matches"]] == ["a.txt"]


def test_a_just_written_file_is_never_kept(ws: Path, cli: CliRunner) -> None:
    """The real clock: same second, same size, and nothing in the cache to go stale."""
    (ws / "a.txt").write_text("one TODO\n")
    envelopes = batch(cli, ("grep_search", {"pattern": "TODO"}),
                      ("run_command", {"command": "printf 'two DONE\\n' > a.txt"}),
                      ("grep_search", {"pattern": "TODO"}),
                      ("grep_search", {"pattern": "DONE"}))
    assert [m["path"] for m in envelopes[0]["result"]["matches"]] == ["a.txt"]
    assert envelopes[2]["result"]["matches"] == []
    assert [m["line"] for m in envelopes[3]["result"]["matches"]] == [1]


def test_nothing_changed_in_the_last_seconds_is_kept_so_a_same_tick_rewrite_is_read(
        ws: Path, reads: list[str]) -> None:
    """The real clock: a rewrite in the same clock tick could leave size, mtime and ctime as
    they were, so a just-written file or directory is read again on every call."""
    (ws / "a.txt").write_text("one TODO\n")
    workspace = Workspace(str(ws))
    cache = SearchCache(1 << 20)
    try:
        for _ in range(3):
            out = search(SearchJob(workspace, SearchRequest(pattern="TODO", limit=100),
                                   cache=cache), [PythonEngine(workers=1)])
            assert out.total == 1
        assert len(cache) == 0 and cache.hits == 0
        assert reads == ["a.txt"] * 3
    finally:
        workspace.close()


def test_files_and_directories_added_or_removed_between_calls_are_seen(
        ws: Path, cli: CliRunner, settle: None) -> None:
    (ws / "src").mkdir()
    (ws / "src" / "a.py").write_text("x = 1\n")
    envelopes = batch(
        cli, ("find_files_glob", {"pattern": "**/*.py"}),
        ("write_file", {"path": "src/deep/b.py", "content": "y = 2\n"}),
        ("find_files_glob", {"pattern": "**/*.py"}),
        ("list_directory", {"max_depth": 5}),
        ("delete_file", {"path": "src/a.py"}),
        ("find_files_glob", {"pattern": "**/*.py"}),
        ("grep_search", {"pattern": "= "}))
    globbed = [[m["path"] for m in envelopes[i]["result"]["matches"]] for i in (0, 2, 5)]
    assert globbed == [["src/a.py"], ["src/a.py", "src/deep/b.py"], ["src/deep/b.py"]]
    assert [m["path"] for m in envelopes[6]["result"]["matches"]] == ["src/deep/b.py"]


def test_an_ignore_file_edited_in_place_changes_the_next_listing(ws: Path, settle: None) -> None:
    (ws / "keep.txt").write_text("k\n")
    (ws / "drop.log").write_text("d\n")
    (ws / "sub").mkdir()
    (ws / "sub" / "x.log").write_text("x\n")
    (ws / ".gitignore").write_text("*.log\n")
    workspace = Workspace(str(ws))
    cache = SearchCache(1 << 20)

    def listing() -> tuple[list[str], dict[str, int]]:
        walk = Walk(workspace, ".", max_depth=9, cache=cache)
        names = [e.rel for e in walk]
        return names, walk.skipped.to_json()

    try:
        first = listing()
        assert listing() == first
        assert cache.hits >= 2
        before = os.stat(ws / ".gitignore")
        with open(ws / ".gitignore", "r+") as fh:  # in place: same inode, same size, old mtime
            fh.write("*.txt\n")
        os.utime(ws / ".gitignore", ns=(before.st_atime_ns, before.st_mtime_ns))
        names, skipped = listing()
        assert "keep.txt" not in names and "drop.log" in names and "sub/x.log" in names
        assert skipped["ignored"] == 1
        uncached = Walk(workspace, ".", max_depth=9)
        assert (names, skipped) == ([e.rel for e in uncached], uncached.skipped.to_json())
    finally:
        workspace.close()


def test_the_cache_stays_within_its_capacity_and_zero_keeps_nothing(
        ws: Path, settle: None) -> None:
    for d in range(20):
        (ws / f"d{d}").mkdir()
        for f in range(10):
            (ws / f"d{d}" / f"f{f}.txt").write_text(f"line {f} TODO\n" * 5)
    workspace = Workspace(str(ws))
    try:
        for capacity in (0, 4096, 1 << 20):
            cache = SearchCache(capacity)
            for _ in range(2):
                out = search(SearchJob(workspace, SearchRequest(pattern="TODO", limit=10_000),
                                       cache=cache), [PythonEngine(workers=1)])
                assert out.total == 20 * 10 * 5
                assert cache.used <= capacity
            assert (len(cache) == 0) == (capacity == 0)
            if capacity == 1 << 20:
                assert cache.hits > 200
    finally:
        workspace.close()


def test_a_result_cut_at_the_limit_is_not_kept_as_the_whole_file(ws: Path, settle: None) -> None:
    (ws / "a.txt").write_text("TODO\n" * 10)
    workspace = Workspace(str(ws))
    cache = SearchCache(1 << 20)
    try:
        few = search(SearchJob(workspace, SearchRequest(pattern="TODO", limit=3), cache=cache),
                     [PythonEngine(workers=1)])
        many = search(SearchJob(workspace, SearchRequest(pattern="TODO", limit=100),
                                cache=cache), [PythonEngine(workers=1)])
        assert (few.total, few.truncated, many.total, many.truncated) == (3, True, 10, False)
    finally:
        workspace.close()


def test_the_cache_keeps_a_value_only_while_its_check_holds() -> None:
    cache = SearchCache(10_000)
    cache.put("k", (1, 2), "v", 10)
    assert cache.get("k", (1, 2)) == "v"
    assert cache.get("k", (1, 3)) is None  # changed: dropped
    assert cache.get("k", (1, 2)) is None
    assert cache.used == 0
    for i in range(200):  # least recently used go first
        cache.put(i, 0, "x", 100)
    assert cache.used <= 10_000 and cache.get(199, 0) == "x" and cache.get(0, 0) is None


def test_settled_means_older_than_the_settle_time() -> None:
    now = time.time_ns()
    fresh = os.stat_result((0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, now, now, now))
    old_ns = now - cache_module.SETTLE_NS - 1
    old = os.stat_result((0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, old_ns, old_ns, old_ns))
    assert not cache_module.settled(fresh, now)
    assert cache_module.settled(old, now)


def test_the_python_engine_pauses_the_cyclic_collector_while_it_searches_and_resumes_it(
        ws: Path) -> None:
    import gc

    for i in range(5):
        (ws / f"f{i}.txt").write_text("TODO\n")
    workspace = Workspace(str(ws))
    during: list[bool] = []
    try:
        assert gc.isenabled()
        out = search(SearchJob(workspace, SearchRequest(pattern="TODO", limit=100),
                               cache=SearchCache(1 << 20),
                               tick=lambda n: during.append(gc.isenabled())),
                     [PythonEngine(workers=1)])
        assert out.total == 5 and during and not any(during)
        assert gc.isenabled()
        with pytest.raises(RuntimeError):
            search(SearchJob(workspace, SearchRequest(pattern="TODO", limit=100),
                             tick=lambda n: (_ for _ in ()).throw(RuntimeError("cancelled"))),
                   [PythonEngine(workers=1)])
        assert gc.isenabled()
    finally:
        workspace.close()

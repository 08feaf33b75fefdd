"""The two-process search gives the one-process results: same hits, order, limits, counts."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from zbtools.core.files.workspace import Workspace
from zbtools.core.search import helper
from zbtools.core.search import parallel as parsearch
from zbtools.core.search.engine import Searcher
from zbtools.core.search.request import SearchJob, SearchRequest
from zbtools.core.search.tree import PythonEngine, search


@pytest.fixture
def big_tree(ws: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Workspace]:
    monkeypatch.setattr(parsearch, "FORK_AFTER", 5)
    monkeypatch.setattr(parsearch, "RUN_FILES", 3)
    for d in range(12):
        folder = ws / f"pkg{d:02d}" / ("deep" if d % 3 else "")
        folder.mkdir(parents=True, exist_ok=True)
        for f in range(9):
            lines = [f"line {i} of file {f} in {d}" for i in range(30)]
            if (d + f) % 4 == 0:
                lines[7] = "def target(): pass  # TODO"
                lines[20] = "TODO: second"
            (folder / f"f{f}.txt").write_text("\n".join(lines) + "\n")
        (folder / "blob.bin").write_bytes(b"TODO\0binary")
    (ws / ".gitignore").write_text("*.skip\n")
    (ws / "pkg03" / "x.skip").write_text("TODO ignored\n")
    workspace = Workspace(str(ws))
    yield workspace
    workspace.close()


def outcome_of(workspace: Workspace, workers: int, pattern: str = "TODO", *, limit: int = 1000,
               per_file: bool = False, before: int = 0, after: int = 0,
               path: str = ".") -> dict[str, Any]:
    request = SearchRequest(pattern=pattern, before=before, after=after, path=path, limit=limit,
                            per_file=per_file)
    out = search(SearchJob(workspace, request), [PythonEngine(workers=workers)])
    return {"files": [(f.path, f.count, [(h.line, h.lines, h.before, h.after) for h in f.hits])
                      for f in out.files],
            "total": out.total, "searched": out.files_searched, "truncated": out.truncated,
            "timed_out": out.timed_out, "skipped": out.skipped.to_json()}


@pytest.mark.parametrize("limit", [1, 2, 7, 40, 1000])
@pytest.mark.parametrize("per_file", [False, True])
def test_two_processes_find_what_one_finds_in_the_same_order(big_tree: Workspace, limit: int,
                                                             per_file: bool) -> None:
    one = outcome_of(big_tree, 1, limit=limit, per_file=per_file)
    two = outcome_of(big_tree, 2, limit=limit, per_file=per_file)
    assert two == one
    assert one["total"] > 0


def test_context_lines_survive_the_trip_through_the_helper(big_tree: Workspace) -> None:
    one = outcome_of(big_tree, 1, "target", before=2, after=3)
    assert one["files"] and one["files"][0][2][0][2] == ["line 5 of file 0 in 0",
                                                          "line 6 of file 0 in 0"]
    assert outcome_of(big_tree, 2, "target", before=2, after=3) == one


def test_skipped_files_are_counted_the_same(big_tree: Workspace) -> None:
    two = outcome_of(big_tree, 2)
    assert two["skipped"]["binary"] == 12
    assert two["skipped"]["ignored"] == 1
    assert two == outcome_of(big_tree, 1)


def test_a_helper_that_dies_costs_time_not_results(big_tree: Workspace,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    expected = outcome_of(big_tree, 1)
    monkeypatch.setattr(parsearch, "_serve", lambda *args: os._exit(3))
    assert outcome_of(big_tree, 2) == expected


def test_a_helper_that_answers_garbage_costs_time_not_results(
        big_tree: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    expected = outcome_of(big_tree, 1)

    def garbage(root_fd: int, searcher: Searcher, requests: int, results: int) -> None:
        os.read(requests, 100)
        os.write(results, helper.HEADER.pack(5) + b"\xff\xff\xff\xff\xff")

    monkeypatch.setattr(parsearch, "_serve", garbage)
    assert outcome_of(big_tree, 2) == expected


def test_no_helper_is_left_behind(big_tree: Workspace) -> None:
    outcome_of(big_tree, 2, limit=1)
    outcome_of(big_tree, 2)
    with pytest.raises(ChildProcessError):
        os.waitpid(-1, os.WNOHANG)


def test_a_small_tree_is_searched_without_forking(ws: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    (ws / "a.txt").write_text("TODO\n")
    forks: list[int] = []

    def no_fork(self: parsearch.Pool) -> bool:
        forks.append(1)
        return False

    monkeypatch.setattr(parsearch.Pool, "_fork", no_fork)
    workspace = Workspace(str(ws))
    try:
        assert outcome_of(workspace, 2)["total"] == 1
    finally:
        workspace.close()
    assert forks == []


@pytest.mark.parametrize(("raw", "cpus", "expected"), [("1", 8, 1), ("2", 1, 2), ("7", 1, 2),
                                                       ("", 1, 1), ("", 4, 2), ("x", 3, 2)])
def test_worker_count_follows_the_environment_then_the_cpus(
        monkeypatch: pytest.MonkeyPatch, raw: str, cpus: int, expected: int) -> None:
    monkeypatch.setenv("ZBTOOLS_SEARCH_WORKERS", raw)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(cpus)))
    assert helper.worker_count() == expected

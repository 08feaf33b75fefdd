"""The caps of searches and listings (issue: the shell user's zbtools): a file named explicitly is
searched whatever its size, streamed in bounded memory; ``max_filesize`` sets the walks' cap;
``limit: 0`` / ``head_limit: 0`` mean no cap; a total counted before a search stopped says it is
a lower bound. The defaults agents see are unchanged."""

from __future__ import annotations

import os
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import CliRunner
from zbtools.core.search import engine
from zbtools.core.search.engine import MAX_FILE_BYTES, Searcher


def big_log(path: Path, size: int, every: int = 5000) -> int:
    """A text file of about ``size`` bytes with a ``needle`` line every ``every`` lines; the
    number of needle lines."""
    lines = []
    total = count = 0
    i = 0
    while total < size:
        i += 1
        line = f"needle {i}\n" if i % every == 0 else f"filler line {i} padding padding padding\n"
        count += i % every == 0
        total += len(line)
        lines.append(line)
    path.write_text("".join(lines))
    return count


def test_a_named_file_over_the_walk_cap_is_searched(ws: Path, proc: CliRunner) -> None:
    needles = big_log(ws / "big.log", MAX_FILE_BYTES + 2 * 1024 * 1024)
    named = proc("grep_search", "needle", "--path", "big.log", "--output-mode", "count")
    assert named.code == 0
    assert named.result["counts"] == [{"path": "big.log", "count": needles}]
    assert named.result["skipped"]["too_large"] == 0
    # a walk keeps the 10 MiB default: counted as skipped, as before
    walked = proc("grep_search", "needle", "--output-mode", "count")
    assert walked.result["counts"] == [] and walked.result["skipped"]["too_large"] == 1
    # ... unless max_filesize lifts it (rg's spelling of sizes)
    lifted = proc("grep_search", "needle", "--max-filesize", "50M", "--output-mode", "count")
    assert lifted.result["counts"] == [{"path": "big.log", "count": needles}]
    # a max_filesize given applies to a named file too, and says so
    capped = proc("grep_search", "needle", "--path", "big.log", "--max-filesize", "1M")
    assert capped.result["skipped"]["too_large"] == 1 and capped.result["matches"] == []
    assert "max_filesize" in capped.json["warnings"][0]
    # content mode, numbers and context are those of the file read whole
    content = proc("grep_search", "needle", "--path", "big.log", "-C", "1",
                   "--head-limit", "2").result
    first = content["matches"][0]
    assert (first["line"], first["text"]) == (5000, "needle 5000")
    assert first["before"] == ["filler line 4999 padding padding padding"]
    assert first["after"] == ["filler line 5001 padding padding padding"]
    assert content["total_is_lower_bound"] is True


def test_max_filesize_must_be_a_size(ws: Path, proc: CliRunner) -> None:
    (ws / "a.txt").write_text("x\n")
    bad = proc("grep_search", "x", "--max-filesize", "lots")
    assert bad.code == 2 and bad.error["code"] == "invalid_arguments"
    for size in ("1", "2K", "3m", "1GiB", "10MB"):
        assert proc("grep_search", "x", "--max-filesize", size).code == 0


def test_multiline_reads_a_big_file_whole_only_when_allowed(ws: Path, proc: CliRunner) -> None:
    needles = big_log(ws / "big.log", MAX_FILE_BYTES + 1024 * 1024)
    refused = proc("grep_search", "needle", "--path", "big.log", "--multiline")
    assert refused.result["skipped"]["too_large"] == 1
    assert "max_filesize" in refused.json["warnings"][0]
    allowed = proc("grep_search", "needle", "--path", "big.log", "--multiline",
                   "--max-filesize", "20M", "--output-mode", "count")
    assert allowed.result["counts"] == [{"path": "big.log", "count": needles}]


def test_streaming_keeps_memory_bounded(tmp_path: Path) -> None:
    path = tmp_path / "big.log"
    needles = big_log(path, 6 * engine.STREAM_BLOCK)
    searcher = Searcher("needle")
    fd = os.open(path, os.O_RDONLY)
    tracemalloc.start()
    try:
        status, hits = searcher.search_stream(fd)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        os.close(fd)
    assert status == "ok" and len(hits) == needles
    assert peak < 4 * engine.STREAM_BLOCK < path.stat().st_size


LINES = st.lists(st.sampled_from(["", "ab", "xab", "b", "a", "abab", "zz", "ä ab"]),
                 max_size=40)


@settings(max_examples=150, deadline=None)
@given(lines=LINES, before=st.integers(0, 3), after=st.integers(0, 3),
       block=st.integers(1, 12), limit=st.one_of(st.none(), st.integers(1, 5)),
       final_newline=st.booleans(), pattern=st.sampled_from(["ab", "^a", "b$", "a+b?"]))
def test_streamed_hits_are_those_of_the_whole_file(
        tmp_path_factory: pytest.TempPathFactory, lines: list[str], before: int, after: int,
        block: int, limit: int | None, final_newline: bool, pattern: str) -> None:
    text = "\n".join(lines) + ("\n" if final_newline and lines else "")
    path = tmp_path_factory.mktemp("s") / "f.txt"
    path.write_bytes(text.encode("utf-8"))
    searcher = Searcher(pattern, before=before, after=after)
    whole = searcher.search_text(text, limit)
    saved = engine.STREAM_BLOCK
    engine.STREAM_BLOCK = block  # tiny blocks: most lines and contexts cross a boundary
    fd = os.open(path, os.O_RDONLY)
    try:
        status, streamed = searcher.search_stream(fd, limit)
    finally:
        engine.STREAM_BLOCK = saved
        os.close(fd)
    assert status == "ok"
    assert [(h.line, h.lines, h.before, h.after) for h in streamed] == \
        [(h.line, h.lines, h.before, h.after) for h in whole]


@pytest.fixture
def many(ws: Path) -> Path:
    for d in range(12):
        sub = ws / f"d{d:02}"
        sub.mkdir()
        for f in range(100):
            (sub / f"f{f:03}.txt").write_text("hit\nhit\n")
    return ws


def test_zero_means_no_cap(many: Path, proc: CliRunner) -> None:
    default = proc("grep_search", "hit").result
    assert len(default["matches"]) == 200 and default["truncated"] is True
    assert default["total_is_lower_bound"] is True
    everything = proc("grep_search", "hit", "--head-limit", "0").result
    assert len(everything["matches"]) == everything["total_matches"] == 2400
    assert everything["truncated"] is False and everything["total_is_lower_bound"] is False
    files = proc("grep_search", "hit", "--head-limit", "0", "--output-mode", "count").result
    assert files["files_with_matches"] == 1200 and files["total_matches"] == 2400
    assert proc("find_files_glob", "*.txt").result["count"] == 100
    glob = proc("find_files_glob", "*.txt", "--limit", "0").result
    assert glob["count"] == 1200 and glob["truncated"] is False
    by_time = proc("find_files_glob", "*.txt", "--limit", "0", "--sort", "mtime").result
    assert by_time["count"] == 1200
    assert proc("find_files", "f0", "--limit", "0").result["count"] == 1200
    assert proc("list_directory", "--max-depth", "2").result["count"] == 1000
    listing = proc("list_directory", "--max-depth", "2", "--limit", "0").result
    assert listing["count"] == 1212 and listing["truncated"] is False
    # negative values are still refused
    assert proc("list_directory", "--limit", "-1").code == 2


def test_a_complete_search_has_an_exact_total(many: Path, proc: CliRunner) -> None:
    exact = proc("grep_search", "hit", "--path", "d00").result
    assert exact["total_matches"] == 200 and exact["total_is_lower_bound"] is False
    assert exact["truncated"] is False


@pytest.mark.parametrize("engine_name", ["python", "rg", "native"])
def test_a_small_max_filesize_skips_small_files_too_on_every_engine(
        ws: Path, cli: CliRunner, engine_name: str) -> None:
    from zbtools.core.search.ripgrep import find_rg

    if engine_name != "python" and find_rg(os.environ) is None:
        pytest.skip("no rg binary")
    (ws / "small.txt").write_text("needle\n")
    (ws / "medium.txt").write_text("needle\n" + "x" * 200 + "\n")
    call = cli("grep_search", "needle", "--max-filesize", "100", "--engine", engine_name)
    assert [m["path"] for m in call.result["matches"]] == ["small.txt"]
    assert call.result["skipped"]["too_large"] == 1

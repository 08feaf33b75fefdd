"""read_file_range: inclusive 1-based ranges with context (docs/internals/sources.md#zblade), small
and huge files."""

from __future__ import annotations

import functools
import hashlib
import os
from pathlib import Path

import pytest

from tests.conftest import CliRunner

TEXT = ("--format", "text")


def put(ws: Path, name: str, data: bytes | str) -> Path:
    path = ws / name
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def lines_of(first: int, last: int) -> str:
    return "".join(f"line {i}\n" for i in range(first, last + 1))


@pytest.fixture
def ten(ws: Path) -> Path:
    """``a.txt`` with ``line 1`` ... ``line 10``."""
    return put(ws, "a.txt", lines_of(1, 10))


def read(cli: CliRunner, *flags: str, path: str = "a.txt") -> dict[str, object]:
    return cli("read_file_range", "--path", path, *flags).result


# ---------------------------------------------------------------------------------------------
# Arguments


@pytest.mark.parametrize("name", ["path", "file_path", "filepath", "filename"])
def test_every_spelling_of_path_is_accepted(ten: Path, cli: CliRunner, name: str) -> None:
    call = cli("read_file_range", stdin={name: "a.txt", "start_line": 2, "end_line": 2})
    assert call.result["content"] == "line 2\n"


def test_two_spellings_of_path_are_invalid(ten: Path, cli: CliRunner) -> None:
    call = cli("read_file_range", stdin={"path": "a.txt", "file_path": "a.txt"})
    assert call.code == 2
    assert call.error["code"] == "invalid_arguments"


def test_end_line_before_start_line_is_invalid(ten: Path, cli: CliRunner) -> None:
    call = cli("read_file_range", "--path", "a.txt", "--start-line", "5", "--end-line", "4")
    assert call.code == 2
    assert call.error["code"] == "invalid_arguments"
    assert call.error["details"]["problems"][0]["argument"] == "end_line"


@pytest.mark.parametrize(("flag", "value"), [("--start-line", "0"), ("--end-line", "0"),
                                             ("--start-line", "-3"), ("--context-lines", "-1"),
                                             ("--max-bytes", "100")])
def test_line_numbers_below_their_minimum_are_invalid(ten: Path, cli: CliRunner, flag: str,
                                                      value: str) -> None:
    call = cli("read_file_range", "--path", "a.txt", f"{flag}={value}")
    assert call.code == 2
    assert call.error["code"] == "invalid_arguments"
    problem = call.error["details"]["problems"][0]
    assert problem["argument"] == flag[2:].replace("-", "_")


# ---------------------------------------------------------------------------------------------
# Ranges


def test_start_and_end_are_one_based_and_inclusive(ten: Path, cli: CliRunner) -> None:
    result = read(cli, "--start-line", "3", "--end-line", "5")
    assert result["content"] == "line 3\nline 4\nline 5\n"
    assert (result["start_line"], result["end_line"]) == (3, 5)
    assert (result["first_line"], result["last_line"]) == (3, 5)
    assert (result["total_lines"], result["truncated"], result["next_start_line"]) == (10, False,
                                                                                      None)


def test_a_one_line_range_returns_that_line(ten: Path, cli: CliRunner) -> None:
    assert read(cli, "--start-line", "7", "--end-line", "7")["content"] == "line 7\n"


def test_without_start_and_end_the_whole_file_is_returned(ten: Path, cli: CliRunner) -> None:
    data = ten.read_bytes()
    result = read(cli)
    assert result["content"] == lines_of(1, 10)
    assert (result["start_line"], result["end_line"]) == (1, 10)
    assert result["sha256"] == hashlib.sha256(data).hexdigest()
    assert result["size"] == len(data)


def test_without_end_line_the_range_runs_to_the_end(ten: Path, cli: CliRunner) -> None:
    result = read(cli, "--start-line", "8")
    assert result["content"] == lines_of(8, 10)
    assert result["end_line"] == 10


def test_context_lines_are_added_before_and_after(ten: Path, cli: CliRunner) -> None:
    result = read(cli, "--start-line", "4", "--end-line", "5", "--context-lines", "2")
    assert result["content"] == lines_of(2, 7)
    assert (result["start_line"], result["end_line"]) == (4, 5)
    assert (result["first_line"], result["last_line"]) == (2, 7)


def test_context_lines_are_clamped_at_the_start_of_the_file(ten: Path, cli: CliRunner) -> None:
    result = read(cli, "--start-line", "2", "--end-line", "3", "--context-lines", "5")
    assert result["content"] == lines_of(1, 8)
    assert (result["first_line"], result["last_line"]) == (1, 8)


def test_context_lines_are_clamped_at_the_end_of_the_file(ten: Path, cli: CliRunner) -> None:
    call = cli("read_file_range", "--path", "a.txt", "--start-line", "9", "--end-line", "10",
               "--context-lines", "5")
    assert call.result["content"] == lines_of(4, 10)
    assert (call.result["first_line"], call.result["last_line"]) == (4, 10)
    assert call.result["truncated"] is False
    assert call.json["warnings"] == []


def test_the_text_rendering_numbers_lines_from_the_first_context_line(ten: Path,
                                                                      cli: CliRunner) -> None:
    call = cli("read_file_range", *TEXT, "--path", "a.txt", "--start-line", "5",
               "--end-line", "5", "--context-lines", "1")
    assert call.out == "     4\tline 4\n     5\tline 5\n     6\tline 6\n"


def test_an_end_line_past_the_end_is_clamped_with_a_warning(ten: Path, cli: CliRunner) -> None:
    call = cli("read_file_range", "--path", "a.txt", "--start-line", "9", "--end-line", "50")
    assert call.code == 0
    assert call.result["content"] == "line 9\nline 10\n"
    assert (call.result["end_line"], call.result["last_line"]) == (10, 10)
    assert call.result["truncated"] is False
    assert len(call.json["warnings"]) == 1
    assert "end_line 50" in call.json["warnings"][0]


def test_a_start_line_past_the_end_is_out_of_range_with_the_line_count(ten: Path,
                                                                       cli: CliRunner) -> None:
    call = cli("read_file_range", "--path", "a.txt", "--start-line", "11")
    assert call.code == 1
    assert call.error["code"] == "out_of_range"
    assert "10 lines" in call.error["message"]
    assert call.error["details"] == {"total_lines": 10, "start_line": 11}


@pytest.mark.parametrize(("start", "context"), [(12, 3), (12, 20), (20, 3)])
def test_context_does_not_hide_a_start_line_past_the_end(ten: Path, cli: CliRunner,
                                                         start: int, context: int) -> None:
    call = cli("read_file_range", "--path", "a.txt", "--start-line", str(start),
               "--context-lines", str(context))
    assert call.error["code"] == "out_of_range"
    assert call.error["details"] == {"total_lines": 10, "start_line": start}
    assert f"start_line {start} " in call.error["message"]


def test_start_line_one_of_an_empty_file_is_an_empty_range(ws: Path, cli: CliRunner) -> None:
    put(ws, "e.txt", b"")
    result = read(cli, path="e.txt")
    assert (result["content"], result["total_lines"], result["end_line"]) == ("", 0, 0)
    assert cli("read_file_range", *TEXT, "--path", "e.txt").out == "(e.txt is empty)\n"
    call = cli("read_file_range", "--path", "e.txt", "--start-line", "2")
    assert call.error["code"] == "out_of_range"
    assert call.error["details"]["total_lines"] == 0


def test_a_range_over_2000_lines_is_cut_and_says_where_to_continue(ws: Path,
                                                                   cli: CliRunner) -> None:
    put(ws, "a.txt", lines_of(1, 3000))
    result = read(cli, "--start-line", "1", "--end-line", "2500")
    assert result["content"] == lines_of(1, 2000)
    assert (result["end_line"], result["truncated"], result["next_start_line"]) == (2000, True,
                                                                                   2001)
    rest = read(cli, "--start-line", "2001", "--end-line", "2500")
    assert rest["content"] == lines_of(2001, 2500)
    assert rest["truncated"] is False


def test_max_bytes_cuts_a_range_at_a_line_boundary(ws: Path, cli: CliRunner) -> None:
    put(ws, "a.txt", "".join(f"{i:04d} " + "y" * 45 + "\n" for i in range(1, 101)))
    call = cli("read_file_range", "--path", "a.txt", "--start-line", "10", "--end-line", "90",
               "--max-bytes", "600")
    result = call.result
    assert result["truncated"] is True
    assert result["last_line"] == 10 + 600 // 58 - 1
    assert result["next_start_line"] == result["last_line"] + 1
    assert result["content"].endswith("\n")
    assert len(result["content"].splitlines()) == result["last_line"] - 9
    text = cli("read_file_range", *TEXT, "--path", "a.txt", "--start-line", "10",
               "--end-line", "90", "--max-bytes", "600").out
    assert text.endswith(f"continue with start_line={result['next_start_line']}]\n")


def test_a_crlf_range_keeps_its_line_endings_and_renders_without_them(ws: Path,
                                                                      cli: CliRunner) -> None:
    put(ws, "w.txt", b"a\r\nb\r\nc\r\n")
    result = read(cli, "--start-line", "2", "--end-line", "3", path="w.txt")
    assert result["content"] == "b\r\nc\r\n"
    assert result["newline"] == "crlf"
    out = cli("read_file_range", *TEXT, "--path", "w.txt", "--start-line", "2").out
    assert out == "     2\tb\n     3\tc\n"


def test_an_invalid_utf8_range_warns(ws: Path, cli: CliRunner) -> None:
    put(ws, "x.txt", "ü\n".encode() + b"\xff\n")
    call = cli("read_file_range", "--path", "x.txt", "--start-line", "2")
    assert call.result["content"] == "\ufffd\n"
    assert call.result["invalid_utf8"] is True
    assert any("UTF-8" in w for w in call.json["warnings"])


# ---------------------------------------------------------------------------------------------
# Failure modes shared with read_file


def test_the_failure_modes_of_read_file_apply(ws: Path, cli: CliRunner) -> None:
    (ws / "d").mkdir()
    put(ws, "b.bin", b"\x00\x01\x02")
    os.mkfifo(ws / "pipe")
    for path, code in (("nope.txt", "not_found"), ("d", "is_directory"),
                       ("b.bin", "binary_file"), ("pipe", "special_file")):
        call = cli("read_file_range", "--path", path, "--start-line", "1")
        assert (call.code, call.error["code"]) == (1, code)


def test_the_real_process_reads_a_range_as_text(ws: Path, proc: CliRunner) -> None:
    put(ws, "a.txt", lines_of(1, 10))
    call = proc("read_file_range", "--format", "text", "--path", "a.txt", "--start-line", "3",
                "--end-line", "4", "--context-lines", "1")
    assert call.code == 0
    assert call.out == "     2\tline 2\n     3\tline 3\n     4\tline 4\n     5\tline 5\n"


def test_the_real_process_reports_out_of_range_with_exit_1(ws: Path, proc: CliRunner) -> None:
    put(ws, "a.txt", lines_of(1, 3))
    call = proc("read_file_range", stdin={"filepath": "a.txt", "start_line": 9})
    assert call.code == 1
    assert call.error["details"]["total_lines"] == 3


# ---------------------------------------------------------------------------------------------
# Big files (over 8 MiB): streamed, reading stops after the range

BIG_LINES = 1_000_000


@functools.cache
def big_lines() -> list[bytes]:
    return [b"%08d some text %d\n" % (i, i % 97) for i in range(1, BIG_LINES + 1)]


@functools.cache
def big_content() -> bytes:
    """About 24 MB of numbered lines of varying length."""
    return b"".join(big_lines())


def expected(first: int, last: int) -> str:
    return b"".join(big_lines()[first - 1:last]).decode()


@pytest.fixture
def big(ws: Path) -> Path:
    return put(ws, "big.txt", big_content())


def test_a_range_in_the_middle_of_a_big_file_is_exact(big: Path, cli: CliRunner) -> None:
    result = read(cli, "--start-line", "500000", "--end-line", "500199", path="big.txt")
    assert result["content"] == expected(500000, 500199)
    assert (result["first_line"], result["last_line"]) == (500000, 500199)
    assert (result["total_lines"], result["sha256"]) == (None, None)
    assert result["size"] == len(big_content())
    assert result["truncated"] is False


def test_context_lines_in_a_big_file_are_exact(big: Path, cli: CliRunner) -> None:
    result = read(cli, "--start-line", "777777", "--end-line", "777777", "--context-lines", "3",
                  path="big.txt")
    assert result["content"] == expected(777774, 777780)
    assert (result["first_line"], result["last_line"]) == (777774, 777780)


def test_a_range_that_starts_at_a_chunk_boundary_is_exact(big: Path, cli: CliRunner) -> None:
    # the line that straddles the first 1 MiB boundary, and the one after it
    offset, number = 0, 0
    while offset < 1 << 20:
        offset += len(big_lines()[number])
        number += 1
    result = read(cli, "--start-line", str(number), "--end-line", str(number + 1),
                  path="big.txt")
    assert result["content"] == expected(number, number + 1)


def test_a_range_reaching_the_end_of_a_big_file_counts_and_hashes_it(big: Path,
                                                                      cli: CliRunner) -> None:
    result = read(cli, "--start-line", str(BIG_LINES - 4), path="big.txt")
    assert result["content"] == expected(BIG_LINES - 4, BIG_LINES)
    assert result["total_lines"] == BIG_LINES
    assert result["sha256"] == hashlib.sha256(big_content()).hexdigest()


def test_a_range_ending_exactly_at_the_last_line_of_a_big_file_counts_and_hashes_it(
        big: Path, cli: CliRunner) -> None:
    call = cli("read_file_range", "--path", "big.txt", "--start-line", str(BIG_LINES - 2),
               "--end-line", str(BIG_LINES))
    assert call.result["content"] == expected(BIG_LINES - 2, BIG_LINES)
    assert call.result["total_lines"] == BIG_LINES
    assert call.result["sha256"] == hashlib.sha256(big_content()).hexdigest()
    assert call.json["warnings"] == []


def test_an_end_line_past_the_end_of_a_big_file_is_clamped_with_a_warning(
        big: Path, cli: CliRunner) -> None:
    call = cli("read_file_range", "--path", "big.txt", "--start-line", str(BIG_LINES),
               "--end-line", str(BIG_LINES + 10))
    assert call.result["content"] == expected(BIG_LINES, BIG_LINES)
    assert call.result["end_line"] == BIG_LINES
    assert len(call.json["warnings"]) == 1


def test_a_start_line_past_the_end_of_a_big_file_is_out_of_range(big: Path,
                                                                 cli: CliRunner) -> None:
    for start in (BIG_LINES + 1, BIG_LINES + 1000):
        call = cli("read_file_range", "--path", "big.txt", "--start-line", str(start))
        assert call.code == 1
        assert call.error["code"] == "out_of_range"
        assert call.error["details"] == {"total_lines": BIG_LINES, "start_line": start}
        assert f"{BIG_LINES} lines" in call.error["message"]


def test_a_big_range_is_cut_at_max_bytes_and_continues_without_gaps(big: Path,
                                                                    cli: CliRunner) -> None:
    first = read(cli, "--start-line", "300000", "--end-line", "305000", path="big.txt")
    assert first["truncated"] is True
    nxt = first["next_start_line"]
    assert isinstance(nxt, int)
    assert first["content"] == expected(300000, nxt - 1)
    second = read(cli, "--start-line", str(nxt), "--end-line", "305000", path="big.txt")
    assert isinstance(second["content"], str)
    assert second["content"].startswith(expected(nxt, nxt))

"""read_file: pages of numbered lines, every encoding, and the failure modes
(docs/internals/sources.md#zblade, docs/internals/sources.md#claude).

Most calls go through the in-process ``cli`` fixture; a few through ``proc`` (a real
subprocess) check the same contract as users see it, including ``--format text``.
"""

from __future__ import annotations

import codecs
import functools
import hashlib
import os
import re
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import CliRunner
from zbtools.core.files.lines import read_window
from zbtools.core.files.workspace import Workspace

TEXT = ("--format", "text")


def put(ws: Path, name: str, data: bytes | str) -> Path:
    path = ws / name
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def numbered_lines(n: int) -> str:
    return "".join(f"line {i}\n" for i in range(1, n + 1))


def rendered(text: str, first: int = 1) -> str:
    """``cat -n`` rendering of whole lines of text."""
    return "".join(f"{n:6}\t{line}\n" for n, line in enumerate(text.splitlines(), first))


# ---------------------------------------------------------------------------------------------
# The path argument and its aliases (docs/internals/sources.md#zblade: file_path, filepath,
# filename)


@pytest.mark.parametrize("name", ["path", "file_path", "filepath", "filename"])
def test_every_spelling_of_path_is_accepted_as_json(ws: Path, cli: CliRunner, name: str) -> None:
    put(ws, "a.txt", "hello\n")
    call = cli("read_file", stdin={name: "a.txt"})
    assert call.code == 0
    assert call.result["content"] == "hello\n"
    assert call.result["path"] == "a.txt"


@pytest.mark.parametrize("flag", ["--path", "--file_path", "--file-path", "--filepath",
                                  "--filename"])
def test_every_spelling_of_path_is_accepted_as_a_flag(ws: Path, cli: CliRunner,
                                                      flag: str) -> None:
    put(ws, "a.txt", "hello\n")
    assert cli("read_file", flag, "a.txt").result["content"] == "hello\n"


def test_two_spellings_of_path_in_the_json_request_are_invalid(ws: Path, cli: CliRunner) -> None:
    put(ws, "a.txt", "a\n")
    put(ws, "b.txt", "b\n")
    call = cli("read_file", stdin={"filepath": "a.txt", "filename": "b.txt"})
    assert call.code == 2
    assert call.error["code"] == "invalid_arguments"
    assert call.error["details"]["problems"][0]["problem"] == "conflicting_aliases"


def test_two_spellings_of_path_as_flags_are_invalid(ws: Path, cli: CliRunner) -> None:
    put(ws, "a.txt", "a\n")
    call = cli("read_file", "--path", "a.txt", "--filename", "a.txt")
    assert call.code == 2
    assert call.error["code"] == "invalid_arguments"


def test_two_spellings_of_path_in_args_are_invalid(ws: Path, cli: CliRunner) -> None:
    put(ws, "a.txt", "a\n")
    put(ws, "b.txt", "b\n")
    call = cli("read_file", "--args", '{"path": "a.txt", "file_path": "b.txt"}')
    assert call.code == 2, call
    assert call.error["code"] == "invalid_arguments"


def test_a_missing_path_is_invalid_arguments(cli: CliRunner) -> None:
    call = cli("read_file", stdin={})
    assert call.code == 2
    assert call.error["code"] == "invalid_arguments"


# ---------------------------------------------------------------------------------------------
# The result


def test_the_result_describes_the_whole_file(ws: Path, cli: CliRunner) -> None:
    data = b"alpha\nbeta\ngamma\n"
    put(ws, "a.txt", data)
    call = cli("read_file", "--path", "a.txt")
    assert call.json["truncated"] is False
    assert call.json["warnings"] == []
    assert call.result == {
        "path": "a.txt", "content": "alpha\nbeta\ngamma\n", "start_line": 1, "end_line": 3,
        "total_lines": 3, "size": len(data), "sha256": hashlib.sha256(data).hexdigest(),
        "encoding": "utf-8", "newline": "lf", "invalid_utf8": False, "lines_cut": 0,
        "truncated": False, "next_offset": None, "line_hashes": None, "kind": "text",
        # the fields of images, PDFs and notebooks are absent (tests/tools/test_read_media.py)
    }


def test_paths_in_subdirectories_and_absolute_paths_inside_the_workspace_work(
        ws: Path, cli: CliRunner) -> None:
    (ws / "src").mkdir()
    put(ws, "src/m.py", "x = 1\n")
    assert cli("read_file", "--path", "src/m.py").result["path"] == "src/m.py"
    assert cli("read_file", "--path", str(ws / "src/m.py")).result["content"] == "x = 1\n"


def test_the_text_rendering_numbers_lines_like_cat_n(ws: Path, cli: CliRunner) -> None:
    put(ws, "a.txt", "alpha\n\tindented\n\nlast\n")
    call = cli("read_file", *TEXT, "--path", "a.txt")
    assert call.code == 0
    assert call.out == "     1\talpha\n     2\t\tindented\n     3\t\n     4\tlast\n"


# ---------------------------------------------------------------------------------------------
# Paging: offset, limit, the 2000-line default, max_bytes


def test_offset_and_limit_select_a_page_and_say_where_to_continue(ws: Path,
                                                                  cli: CliRunner) -> None:
    put(ws, "a.txt", numbered_lines(10))
    result = cli("read_file", "--path", "a.txt", "--offset", "4", "--limit", "3").result
    assert result["content"] == "line 4\nline 5\nline 6\n"
    assert (result["start_line"], result["end_line"], result["total_lines"]) == (4, 6, 10)
    assert result["truncated"] is True
    assert result["next_offset"] == 7


def test_following_next_offset_reads_every_line_once_without_gaps(ws: Path,
                                                                 cli: CliRunner) -> None:
    content = numbered_lines(23)
    put(ws, "a.txt", content)
    pages: list[str] = []
    offset: int | None = 1
    while offset is not None:
        result = cli("read_file", "--path", "a.txt", "--offset", str(offset),
                     "--limit", "5").result
        assert result["start_line"] == offset
        pages.append(result["content"])
        offset = result["next_offset"]
    assert len(pages) == 5
    assert "".join(pages) == content


def test_the_last_page_is_not_truncated(ws: Path, cli: CliRunner) -> None:
    put(ws, "a.txt", numbered_lines(10))
    result = cli("read_file", "--path", "a.txt", "--offset", "6", "--limit", "5").result
    assert (result["end_line"], result["truncated"], result["next_offset"]) == (10, False, None)


def test_the_text_rendering_of_a_page_says_how_to_continue(ws: Path, cli: CliRunner) -> None:
    put(ws, "a.txt", numbered_lines(10))
    call = cli("read_file", *TEXT, "--path", "a.txt", "--offset", "4", "--limit", "2")
    assert call.out == ("     4\tline 4\n     5\tline 5\n"
                        "[showing lines 4-5 of 10 of a.txt; continue with offset=6]\n")


def test_by_default_2000_lines_are_read(ws: Path, cli: CliRunner) -> None:
    put(ws, "a.txt", numbered_lines(2500))
    result = cli("read_file", "--path", "a.txt").result
    assert (result["start_line"], result["end_line"], result["total_lines"]) == (1, 2000, 2500)
    assert result["content"] == numbered_lines(2000)
    assert result["truncated"] is True
    assert result["next_offset"] == 2001


def test_a_full_default_page_is_shown_whole_in_the_text_rendering(ws: Path,
                                                                  cli: CliRunner) -> None:
    put(ws, "a.txt", numbered_lines(2500))
    out = cli("read_file", *TEXT, "--path", "a.txt").out
    assert out == (rendered(numbered_lines(2000))
                   + "[showing lines 1-2000 of 2500 of a.txt; continue with offset=2001]\n")


def test_a_file_of_exactly_2000_lines_is_read_whole(ws: Path, cli: CliRunner) -> None:
    put(ws, "a.txt", numbered_lines(2000))
    result = cli("read_file", "--path", "a.txt").result
    assert (result["end_line"], result["truncated"], result["next_offset"]) == (2000, False, None)


def test_max_bytes_cuts_the_page_at_a_line_boundary(ws: Path, cli: CliRunner) -> None:
    line = "x" * 49 + "\n"
    put(ws, "a.txt", line * 100)
    result = cli("read_file", "--path", "a.txt", "--max-bytes", "1000").result
    assert result["truncated"] is True
    assert result["content"] == line * result["end_line"]
    assert result["next_offset"] == result["end_line"] + 1
    # the numbered rendering of the page stays within the budget; one more line would not
    assert len(rendered(result["content"])) <= 1000 < len(rendered(line * (result["end_line"]
                                                                           + 1)))


def test_max_bytes_counts_multibyte_characters_as_their_utf8_bytes(ws: Path,
                                                                   cli: CliRunner) -> None:
    line = "€" * 30 + "\n"  # 90 bytes of UTF-8, 30 characters
    put(ws, "a.txt", line * 50)
    result = cli("read_file", "--path", "a.txt", "--max-bytes", "1000").result
    assert result["end_line"] == 1000 // (90 + 8)
    assert result["content"] == line * result["end_line"]


def test_max_bytes_always_returns_at_least_one_line(ws: Path, cli: CliRunner) -> None:
    put(ws, "a.txt", "y" * 1500 + "\nshort\n")
    result = cli("read_file", "--path", "a.txt", "--max-bytes", "256").result
    assert (result["end_line"], result["next_offset"]) == (1, 2)
    assert result["content"] == "y" * 1500 + "\n"


@pytest.mark.parametrize(("flag", "value"), [("--offset", "0"), ("--limit", "0"),
                                             ("--max-bytes", "255"), ("--offset", "x")])
def test_out_of_bounds_paging_arguments_are_invalid(ws: Path, cli: CliRunner, flag: str,
                                                    value: str) -> None:
    put(ws, "a.txt", "a\n")
    call = cli("read_file", "--path", "a.txt", flag, value)
    assert call.code == 2
    assert call.error["code"] == "invalid_arguments"


def test_an_offset_past_the_end_is_out_of_range_with_the_line_count(ws: Path,
                                                                   cli: CliRunner) -> None:
    put(ws, "a.txt", numbered_lines(5))
    call = cli("read_file", "--path", "a.txt", "--offset", "6")
    assert call.code == 1
    assert call.error["code"] == "out_of_range"
    assert call.error["details"]["total_lines"] == 5
    assert "5 lines" in call.error["message"]


def test_an_offset_past_the_end_of_an_empty_file_is_out_of_range(ws: Path,
                                                                 cli: CliRunner) -> None:
    put(ws, "e.txt", b"")
    call = cli("read_file", "--path", "e.txt", "--offset", "2")
    assert call.error["code"] == "out_of_range"
    assert call.error["details"]["total_lines"] == 0


# ---------------------------------------------------------------------------------------------
# Long lines


def test_lines_over_2000_characters_are_cut_with_a_marker_and_counted(ws: Path,
                                                                      cli: CliRunner) -> None:
    put(ws, "a.txt", "short\n" + "z" * 5000 + "\n" + "q" * 2000 + "\n")
    result = cli("read_file", "--path", "a.txt").result
    lines = result["content"].split("\n")
    assert lines[0] == "short"
    assert lines[1] == "z" * 2000 + "… [line cut: 3000 more characters]"
    assert lines[2] == "q" * 2000  # exactly at the limit: shown whole
    assert result["lines_cut"] == 1
    assert result["total_lines"] == 3


def test_the_text_rendering_mentions_lines_shown_cut(ws: Path, cli: CliRunner) -> None:
    put(ws, "a.txt", "z" * 2500 + "\n")
    out = cli("read_file", *TEXT, "--path", "a.txt").out
    assert out.endswith("… [line cut: 500 more characters]\n[1 long line(s) shown cut]\n")


# ---------------------------------------------------------------------------------------------
# Shapes of text: empty, no final newline, CRLF, mixed


def test_an_empty_file_has_no_lines(ws: Path, cli: CliRunner) -> None:
    put(ws, "e.txt", b"")
    result = cli("read_file", "--path", "e.txt").result
    assert result["content"] == ""
    assert (result["start_line"], result["end_line"], result["total_lines"]) == (1, 0, 0)
    assert (result["truncated"], result["next_offset"], result["newline"]) == (False, None,
                                                                                "none")
    assert result["sha256"] == hashlib.sha256(b"").hexdigest()
    assert cli("read_file", *TEXT, "--path", "e.txt").out == "(e.txt is empty)\n"


def test_a_file_without_final_newline_keeps_its_last_line_unterminated(
        ws: Path, cli: CliRunner) -> None:
    put(ws, "a.txt", "one\ntwo")
    result = cli("read_file", "--path", "a.txt").result
    assert result["content"] == "one\ntwo"
    assert result["total_lines"] == 2
    assert cli("read_file", *TEXT, "--path", "a.txt").out == "     1\tone\n     2\ttwo\n"


def test_a_lone_newline_is_one_empty_line(ws: Path, cli: CliRunner) -> None:
    put(ws, "a.txt", "\n")
    result = cli("read_file", "--path", "a.txt").result
    assert (result["content"], result["total_lines"]) == ("\n", 1)


def test_crlf_content_keeps_its_carriage_returns_but_the_rendering_hides_them(
        ws: Path, cli: CliRunner) -> None:
    put(ws, "w.txt", b"first\r\nsecond\r\nthird")
    result = cli("read_file", "--path", "w.txt").result
    assert result["content"] == "first\r\nsecond\r\nthird"
    assert result["newline"] == "crlf"
    assert result["total_lines"] == 3
    out = cli("read_file", *TEXT, "--path", "w.txt").out
    assert "\r" not in out
    assert out == "     1\tfirst\n     2\tsecond\n     3\tthird\n"


def test_a_page_of_a_crlf_file_keeps_its_line_endings(ws: Path, cli: CliRunner) -> None:
    put(ws, "w.txt", "".join(f"l{i}\r\n" for i in range(1, 8)))
    result = cli("read_file", "--path", "w.txt", "--offset", "3", "--limit", "2").result
    assert result["content"] == "l3\r\nl4\r\n"


def test_mixed_newlines_are_reported_and_kept(ws: Path, cli: CliRunner) -> None:
    put(ws, "m.txt", b"unix\nwindows\r\nunix again\n")
    result = cli("read_file", "--path", "m.txt").result
    assert result["newline"] == "mixed"
    assert result["content"] == "unix\nwindows\r\nunix again\n"
    assert result["total_lines"] == 3


# ---------------------------------------------------------------------------------------------
# Encodings


def test_a_utf8_bom_is_reported_and_not_shown(ws: Path, cli: CliRunner) -> None:
    data = codecs.BOM_UTF8 + "héllo\n".encode()
    put(ws, "b.txt", data)
    result = cli("read_file", "--path", "b.txt").result
    assert result["encoding"] == "utf-8-bom"
    assert result["content"] == "héllo\n"
    assert result["size"] == len(data)
    assert result["sha256"] == hashlib.sha256(data).hexdigest()


@pytest.mark.parametrize(("codec", "bom"), [("utf-16-le", codecs.BOM_UTF16_LE),
                                            ("utf-16-be", codecs.BOM_UTF16_BE)])
def test_utf16_files_with_a_bom_are_decoded(ws: Path, cli: CliRunner, codec: str,
                                            bom: bytes) -> None:
    put(ws, "u.txt", bom + "ünïcode\r\nzwei €\r\n".encode(codec))
    result = cli("read_file", "--path", "u.txt").result
    assert result["encoding"] == codec
    assert result["content"] == "ünïcode\r\nzwei €\r\n"
    assert result["newline"] == "crlf"
    assert result["total_lines"] == 2
    assert result["invalid_utf8"] is False


def test_a_latin1_file_is_decoded_through_the_detector(ws: Path, cli: CliRunner) -> None:
    put(ws, "l.txt", "Grüße aus München\nnaïve café\n".encode("latin-1"))
    call = cli("read_file", "--path", "l.txt")
    assert call.result["encoding"] == "cp1252"
    assert call.result["content"] == "Grüße aus München\nnaïve café\n"
    assert call.result["invalid_utf8"] is False
    assert call.json["warnings"] == []


def test_invalid_utf8_is_shown_as_replacement_characters_with_a_warning(
        ws: Path, cli: CliRunner) -> None:
    data = "naïve café\n".encode() + b"bad \xff\xfe byte\n"
    put(ws, "x.txt", data)
    call = cli("read_file", "--path", "x.txt")
    assert call.code == 0
    result = call.result
    assert result["invalid_utf8"] is True
    assert result["encoding"] == "utf-8"
    assert result["content"] == "naïve café\nbad \ufffd\ufffd byte\n"
    assert result["sha256"] == hashlib.sha256(data).hexdigest()
    assert any("not valid UTF-8" in w for w in call.json["warnings"])
    assert (ws / "x.txt").read_bytes() == data  # reading never rewrites


def test_the_text_rendering_shows_the_invalid_utf8_warning(ws: Path, cli: CliRunner) -> None:
    put(ws, "x.txt", "é\n".encode() + b"\xff\n")
    out = cli("read_file", *TEXT, "--path", "x.txt").out
    assert out.startswith("     1\té\n     2\t\ufffd\n")
    assert re.search(r"^warning: the file is not valid UTF-8", out, re.M)


# ---------------------------------------------------------------------------------------------
# Failure modes


def test_a_binary_file_is_refused(ws: Path, cli: CliRunner) -> None:
    put(ws, "b.bin", b"\x7fELF\x02\x01\x01\x00\x00\x00")
    call = cli("read_file", "--path", "b.bin")
    assert call.code == 1
    assert call.error["code"] == "binary_file"


def test_a_fifo_is_refused_without_hanging(ws: Path, cli: CliRunner) -> None:
    os.mkfifo(ws / "pipe")
    call = cli("read_file", "--path", "pipe")
    assert call.code == 1
    assert call.error["code"] == "special_file"
    assert "FIFO" in call.error["message"]


def test_a_fifo_is_refused_by_the_real_process_too(ws: Path, proc: CliRunner) -> None:
    os.mkfifo(ws / "pipe")
    call = proc("read_file", "--path", "pipe", timeout=20)
    assert call.code == 1
    assert call.error["code"] == "special_file"


def test_a_directory_is_refused(ws: Path, cli: CliRunner) -> None:
    (ws / "d").mkdir()
    for path in ("d", "."):
        call = cli("read_file", "--path", path)
        assert call.code == 1
        assert call.error["code"] == "is_directory"


def test_a_missing_file_is_not_found(cli: CliRunner) -> None:
    call = cli("read_file", "--path", "nope.txt")
    assert call.code == 1
    assert call.error["code"] == "not_found"


def test_a_file_outside_the_workspace_is_refused_for_safety(cli: CliRunner) -> None:
    call = cli("read_file", "--path", "../outside/secret.txt")
    assert call.code == 3
    assert call.error["code"] == "outside_workspace"
    assert "top secret" not in call.out


# ---------------------------------------------------------------------------------------------
# The real process and --format text


def test_the_real_process_reads_a_page_as_json(ws: Path, proc: CliRunner) -> None:
    put(ws, "a.txt", numbered_lines(30))
    call = proc("read_file", stdin={"filename": "a.txt", "offset": 11, "limit": 10})
    assert call.code == 0
    assert call.result["content"] == "".join(f"line {i}\n" for i in range(11, 21))
    assert call.result["next_offset"] == 21


def test_the_real_process_renders_crlf_text_without_carriage_returns(ws: Path,
                                                                      proc: CliRunner) -> None:
    put(ws, "w.txt", b"a\r\nb\r\n")
    call = proc("read_file", "--path", "w.txt", "--format", "text")
    assert call.code == 0
    assert call.out == "     1\ta\n     2\tb\n"


def test_the_real_process_renders_errors_as_text_with_their_exit_code(proc: CliRunner) -> None:
    call = proc("read_file", "--path", "missing.txt", "--format", "text")
    assert call.code == 1
    assert call.out.startswith("error[not_found]: missing.txt")
    assert "hint: " in call.out


# ---------------------------------------------------------------------------------------------
# The text-format safety net (docs/configuration.md#limits)


def test_a_configured_max_lines_pages_the_read_instead_of_cutting_it(
        ws: Path, cli: CliRunner) -> None:
    put(ws, "a.txt", numbered_lines(50))
    result = cli("read_file", "--path", "a.txt", "--limit", "50",
                 env={"ZBTOOLS_MAX_LINES": "10"}).result
    assert (result["end_line"], result["next_offset"]) == (10, 11)
    per_call = cli("read_file", "--path", "a.txt", "--max-lines", "20",
                   env={"ZBTOOLS_MAX_LINES": "10"}).result
    assert per_call["end_line"] == 20


def test_a_rendering_over_max_lines_is_cut_and_spilled_whole(
        ws: Path, cli: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    from zbtools.tools import read_file

    put(ws, "a.txt", numbered_lines(50))
    full = cli("read_file", *TEXT, "--path", "a.txt").out
    assert full == rendered(numbered_lines(50))
    # Tools keep within the limits themselves; the text safety net catches a renderer that
    # does not (future tools, or a footer on a page already at the limit).
    monkeypatch.setattr(read_file.TOOL, "render_text", lambda _result: full)
    out = cli("read_file", *TEXT, "--path", "a.txt", "--limit", "5",
              env={"ZBTOOLS_MAX_LINES": "10"}).out
    lines = out.splitlines()
    assert len(lines) <= 10
    notice = next(line for line in lines if line.startswith("[..."))
    head = lines[:lines.index(notice)]
    tail = lines[lines.index(notice) + 1:]
    assert head == full.splitlines()[:len(head)] and head
    assert tail == full.splitlines()[-len(tail):] and tail
    match = re.search(r"full output saved to (\S+) \(read_file reads it\);", notice)
    assert match is not None, notice
    spill = Path(match.group(1))
    assert spill.is_file()
    assert spill.read_text() == full
    assert not spill.is_relative_to(ws)  # state lives outside the workspace
    omitted = int(re.search(r"(\d+) lines", notice).group(1))  # type: ignore[union-attr]
    assert omitted == 50 - len(head) - len(tail)


def test_a_rendering_within_the_limits_is_not_spilled(ws: Path, tmp_path: Path,
                                                      cli: CliRunner) -> None:
    put(ws, "a.txt", numbered_lines(10))
    out = cli("read_file", *TEXT, "--path", "a.txt", env={"ZBTOOLS_MAX_LINES": "10"}).out
    assert out == rendered(numbered_lines(10))
    assert not (tmp_path / "state").exists()


# ---------------------------------------------------------------------------------------------
# Big files (over 8 MiB): streamed in chunks


BIG_LINES = 1_000_000


@functools.cache
def big_content() -> bytes:
    """About 21 MB: ``00000001 xxxxxxxxxxx`` ... one million numbered lines."""
    return b"".join(b"%08d xxxxxxxxxxx\n" % i for i in range(1, BIG_LINES + 1))


def big_line(n: int) -> str:
    return f"{n:08d} xxxxxxxxxxx\n"


def test_a_page_in_the_middle_of_a_big_file_is_exact_but_not_counted(ws: Path,
                                                                     cli: CliRunner) -> None:
    put(ws, "big.txt", big_content())
    result = cli("read_file", "--path", "big.txt", "--offset", "600000", "--limit", "3").result
    assert result["content"] == big_line(600000) + big_line(600001) + big_line(600002)
    assert (result["total_lines"], result["sha256"]) == (None, None)
    assert result["size"] == len(big_content())
    assert (result["truncated"], result["next_offset"]) == (True, 600003)


def test_the_last_page_of_a_big_file_counts_its_lines_and_hashes_it(ws: Path,
                                                                    cli: CliRunner) -> None:
    put(ws, "big.txt", big_content())
    result = cli("read_file", "--path", "big.txt", "--offset", str(BIG_LINES - 1)).result
    assert result["content"] == big_line(BIG_LINES - 1) + big_line(BIG_LINES)
    assert result["total_lines"] == BIG_LINES
    assert result["sha256"] == hashlib.sha256(big_content()).hexdigest()
    assert (result["truncated"], result["next_offset"]) == (False, None)


def test_a_page_cut_by_max_bytes_near_the_end_of_a_big_file_still_counts_its_lines(
        ws: Path, cli: CliRunner) -> None:
    put(ws, "big.txt", big_content())
    result = cli("read_file", "--path", "big.txt", "--offset", str(BIG_LINES - 1500),
                 "--max-bytes", "10000").result
    assert result["truncated"] is True
    assert result["content"] == "".join(big_line(n) for n in range(BIG_LINES - 1500,
                                                                   result["end_line"] + 1))
    assert result["total_lines"] == BIG_LINES
    assert result["sha256"] == hashlib.sha256(big_content()).hexdigest()


def test_max_bytes_counts_the_wider_numbers_of_lines_past_999999(ws: Path,
                                                                 cli: CliRunner) -> None:
    extra = "".join(big_line(n) for n in range(BIG_LINES + 1, BIG_LINES + 2001))
    put(ws, "big.txt", big_content() + extra.encode())
    result = cli("read_file", "--path", "big.txt", "--offset", str(BIG_LINES + 1),
                 "--limit", "500", "--max-bytes", "2000").result
    assert result["truncated"] is True
    shown = cli("read_file", *TEXT, "--path", "big.txt", "--offset", str(BIG_LINES + 1),
                "--limit", "500", "--max-bytes", "2000").out
    page = shown[:shown.index("[showing")]
    assert page == rendered(result["content"], BIG_LINES + 1)
    assert len(page) <= 2000 < len(page) + len(big_line(1)) + 9


def test_an_offset_past_the_end_of_a_big_file_is_out_of_range(ws: Path,
                                                              cli: CliRunner) -> None:
    put(ws, "big.txt", big_content())
    for offset in (BIG_LINES + 1, BIG_LINES + 50):
        call = cli("read_file", "--path", "big.txt", "--offset", str(offset))
        assert call.error["code"] == "out_of_range"
        assert call.error["details"]["total_lines"] == BIG_LINES


def test_an_offset_past_the_end_of_a_big_file_without_final_newline_counts_the_last_line(
        ws: Path, cli: CliRunner) -> None:
    put(ws, "big.txt", big_content() + b"tail")
    call = cli("read_file", "--path", "big.txt", "--offset", str(BIG_LINES + 2))
    assert call.error["details"]["total_lines"] == BIG_LINES + 1
    result = cli("read_file", "--path", "big.txt", "--offset", str(BIG_LINES + 1)).result
    assert (result["content"], result["total_lines"]) == ("tail", BIG_LINES + 1)


def test_a_line_longer_than_the_read_buffer_is_shown_cut_in_a_big_file(
        ws: Path, cli: CliRunner) -> None:
    put(ws, "one.txt", b"w" * (9 << 20) + b"\nnext\n")
    result = cli("read_file", "--path", "one.txt").result
    # the cut line keeps its line ending, as a cut line of a smaller file does
    assert re.fullmatch("w{2000}… \\[line cut: more than \\d+ more characters\\]\n",
                        result["content"])
    assert (result["start_line"], result["end_line"], result["lines_cut"]) == (1, 1, 1)
    assert (result["truncated"], result["next_offset"]) == (True, 2)
    result = cli("read_file", "--path", "one.txt", "--offset", "2").result
    assert (result["content"], result["total_lines"]) == ("next\n", 2)


@pytest.mark.parametrize("ending", [b"\n", b"\r\n", b""])
def test_a_last_line_longer_than_the_read_buffer_is_the_end_of_a_big_file(
        ws: Path, cli: CliRunner, ending: bytes) -> None:
    """Nothing follows the cut line: no next page is offered (offset 2 would be out of
    range), the file's lines are counted and it is hashed, as for a smaller file."""
    data = b"w" * (9 << 20) + ending
    put(ws, "one.txt", data)
    result = cli("read_file", "--path", "one.txt").result
    assert (result["truncated"], result["next_offset"], result["total_lines"]) == \
        (False, None, 1)
    assert result["sha256"] == hashlib.sha256(data).hexdigest()
    assert result["newline"] == {b"\n": "lf", b"\r\n": "crlf", b"": "none"}[ending]
    assert result["content"].endswith("characters]" + ("\n" if ending else ""))


# ---------------------------------------------------------------------------------------------
# Property: consecutive pages reproduce the file


LINE_TEXT = st.text(st.sampled_from("ab é€中😀\t\r"), max_size=12)


@settings(max_examples=150, deadline=None)
@given(lines=st.lists(LINE_TEXT, max_size=25), final_newline=st.booleans(),
       count=st.integers(1, 6), max_bytes=st.integers(1, 120), streamed=st.booleans())
def test_following_pages_reproduces_the_decoded_text(lines: list[str], final_newline: bool,
                                                     count: int, max_bytes: int,
                                                     streamed: bool) -> None:
    text = "\n".join(lines) + ("\n" if final_newline and lines else "")
    with tempfile.TemporaryDirectory() as root:
        Path(root, "f.txt").write_bytes(text.encode())
        workspace = Workspace(root)
        try:
            pages: list[str] = []
            start = 1
            while True:
                with workspace.resolve("f.txt") as res:
                    window = read_window(res, start, count, max_bytes=max_bytes,
                                         max_line_chars=10_000,
                                         full_scan_bytes=0 if streamed else 1 << 23)
                assert window.first == start
                if text:
                    assert window.lines  # every page makes progress
                pages.append(window.content)
                if not window.has_more:
                    break
                start = window.last + 1
            assert "".join(pages) == text
            # the last page reaches the end of the file, so the file is counted and hashed
            assert window.total_lines == text.count("\n") + (not text.endswith("\n")
                                                             and bool(text))
            assert window.sha256 == hashlib.sha256(text.encode()).hexdigest()
        finally:
            workspace.close()


def test_the_spill_file_a_cut_result_names_can_be_read_back(ws: Path, cli: CliRunner) -> None:
    import re

    (ws / "many.txt").write_text("".join(f"line {i}\n" for i in range(6000)))
    cut = cli("grep_search", "--pattern", "line", "--head-limit", "10000", "--format", "text",
              "--engine", "python")
    spill = re.search(r"full output saved to (\S+) \(read_file reads it\)", cut.out)
    assert spill is not None, cut.out[-400:]
    back = cli("read_file", "--path", spill.group(1), "--offset", "5999", "--limit", "2").result
    assert back["content"] == "many.txt:5999:line 5998\nmany.txt:6000:line 5999\n"
    assert back["path"] == spill.group(1)


def test_only_the_spill_folder_is_readable_outside_the_workspace(ws: Path, cli: CliRunner,
                                                                 tmp_path: Path) -> None:
    from zbtools.core.call.context import Context
    from zbtools.core.files.workspace import Workspace

    workspace = Workspace(str(ws))
    try:
        state = Context(workspace, state_root=str(tmp_path / "state")).state_dir
    finally:
        workspace.close()
    (Path(state) / "spill").mkdir(parents=True)
    (Path(state) / "secret.json").write_text("{}")
    (Path(state) / "spill" / "link.txt").symlink_to(Path(state) / "secret.json")
    for path in (f"{state}/secret.json", f"{state}/spill/../secret.json",
                 f"{state}/spill/link.txt", f"{state}/spill"):
        call = cli("read_file", "--path", path)
        assert call.error["code"] in ("outside_workspace", "is_directory"), (path, call)


def test_a_hashed_page_fits_the_byte_limit_in_its_text_rendering(ws: Path, cli: CliRunner) -> None:
    """Each line's hash (":9f3a1c") is counted in max_bytes: the text shows the whole page,
    every line once, and nothing is cut out of its middle."""
    put(ws, "many.txt", b"".join(b"line %014d\n" % i for i in range(1, 3001)))
    result = cli("read_file", "--path", "many.txt", "--hashes").result
    out = cli("read_file", "--path", "many.txt", "--hashes", "--format", "text").out
    shown = [line for line in out.splitlines() if not line.startswith("[")]
    assert len(shown) == result["end_line"] == len(result["line_hashes"])
    assert [int(line.split(":", 1)[0]) for line in shown] == list(range(1, len(shown) + 1))
    assert "omitted" not in out and result["truncated"]
    assert len("".join(line + "\n" for line in shown).encode()) <= 50 * 1024


@pytest.mark.parametrize("data", [b"", b"\xef\xbb\xbf"], ids=["empty", "bom only"])
def test_an_empty_file_read_with_hashes_has_no_line_hash(ws: Path, cli: CliRunner,
                                                        data: bytes) -> None:
    put(ws, "e.txt", data)
    result = cli("read_file", "--path", "e.txt", "--hashes").result
    assert (result["end_line"], result["line_hashes"]) == (0, [])


def test_a_page_the_byte_budget_cut_says_to_raise_max_bytes(ws: Path, cli: CliRunner) -> None:
    """A limit above the line cap whose page stopped at max_bytes first: raising max_lines
    would change nothing, so the warning names max_bytes."""
    put(ws, "wide.txt", "".join("x" * 100 + f"{i:04d}\n" for i in range(3000)).encode())
    call = cli("read_file", "--path", "wide.txt", "--limit", "2500")
    (warning,) = call.json["warnings"]
    returned = call.result["end_line"]
    assert returned < 2000 and f"{returned} lines returned" in warning
    assert "raise max_bytes" in warning and "raise max_lines" not in warning


LINE_BYTES = st.lists(st.sampled_from([b"a", b"b ", b"\xc3\xa9", b"\xff", b"\t", b"\r",
                                       b"x" * 40]), max_size=8).map(b"".join)


def _edit_hashes(data: bytes) -> list[str]:
    """Each line's hash as an edit's anchor check computes it (the engine's file model)."""
    from zbtools.core.editing.matching.filemodel import FileModel
    from zbtools.core.files.decoding import decode
    from zbtools.core.files.hashing import line_hash

    return [line_hash(line) for line in FileModel(decode(data).text).lines]


@settings(max_examples=120, deadline=None)
@given(lines=st.lists(LINE_BYTES, min_size=1, max_size=12), final_newline=st.booleans(),
       count=st.integers(1, 5), max_line_chars=st.sampled_from([3, 10_000]),
       streamed=st.booleans())
def test_line_hashes_are_the_anchors_an_edit_checks(lines: list[bytes], final_newline: bool,
                                                    count: int, max_line_chars: int,
                                                    streamed: bool) -> None:
    """Whatever is shown (U+FFFD for bytes that are not UTF-8, a line cut, a lone CR at the
    end), the hash of each line read is the one apply_edit checks its anchor against."""
    data = b"\n".join(lines) + (b"\n" if final_newline else b"")
    if b"\x00" in data or not data.strip(b"\n"):
        return
    expected = _edit_hashes(data)
    with tempfile.TemporaryDirectory() as root:
        Path(root, "f.txt").write_bytes(data)
        workspace = Workspace(root)
        try:
            start = 1
            while True:
                with workspace.resolve("f.txt") as res:
                    window = read_window(res, start, count, max_bytes=10_000,
                                         max_line_chars=max_line_chars, hashes=True,
                                         full_scan_bytes=0 if streamed else 1 << 23)
                assert window.line_hashes == expected[start - 1:window.last], (start, data)
                if not window.has_more:
                    break
                start = window.last + 1
        finally:
            workspace.close()


def test_an_anchor_from_a_read_holds_for_the_lines_shown_otherwise(ws: Path,
                                                                  cli: CliRunner) -> None:
    put(ws, "inv.txt", b"h\xc3\xa9llo \xff bad\nok\n")
    put(ws, "cr.txt", b"first\nlast\r")
    put(ws, "long.txt", b"y" * 3000 + b"\nz\n")
    for name, line, old in (("inv.txt", 1, "bad"), ("cr.txt", 2, "last"),
                            ("long.txt", 1, "y" * 3000)):
        hashes = cli("read_file", "--path", name, "--hashes").result["line_hashes"]
        cli("apply_edit", stdin={"path": name, "anchor": f"{line}:{hashes[line - 1]}",
                                 "old_text": old, "new_text": "NEW"}).result


def test_a_big_file_in_another_encoding_is_read_in_it(ws: Path, cli: CliRunner) -> None:
    """Over 8 MiB a file is streamed: its encoding is judged on its first MiB, as a smaller
    file's on its content, so cp1252 text is shown as such (not as U+FFFD labelled utf-8)."""
    line = "caf\u00e9 \u2019quoted\u2019 n\u00b0{}\n"
    put(ws, "big.txt", "".join(line.format(i) for i in range(420_000)).encode("cp1252"))
    assert (ws / "big.txt").stat().st_size > 8 << 20
    first = cli("read_file", "--path", "big.txt", "--limit", "2").result
    assert first["content"] == line.format(0) + line.format(1)
    assert (first["encoding"], first["invalid_utf8"]) == ("cp1252", False)
    last = cli("read_file", "--path", "big.txt", "--offset", "420000").result
    assert (last["content"], last["total_lines"]) == (line.format(419_999), 420_000)


def test_a_big_file_with_a_bom_and_a_bad_byte_keeps_its_bom_label(ws: Path,
                                                                  cli: CliRunner) -> None:
    put(ws, "big.txt", b"\xef\xbb\xbf" + b"ok line\n" * 1_200_000 + b"bad \xff here\n")
    last = cli("read_file", "--path", "big.txt", "--offset", "1200001").result
    assert (last["content"], last["encoding"], last["invalid_utf8"]) == \
        ("bad \ufffd here\n", "utf-8-bom", True)

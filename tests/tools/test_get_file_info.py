"""get_file_info: metadata of a file, directory or symlink; never modifies anything."""

from __future__ import annotations

import errno
import json
import os
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CliRunner, snapshot

SEED_FIELDS = {"path", "size", "is_directory", "is_file", "modified", "readonly"}
ISO_UTC = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")


def info(cli: CliRunner, path: str) -> dict[str, Any]:
    call = cli("get_file_info", stdin={"path": path})
    assert call.code == 0, call.json
    return call.result


def test_a_text_file_has_every_seed_field_and_more(ws: Path, cli: CliRunner) -> None:
    path = ws / "src" / "main.rs"
    path.parent.mkdir()
    path.write_text("fn main() {\n}\n")
    path.chmod(0o640)
    os.utime(path, ns=(1_700_000_000_250_000_000, 1_700_000_000_250_000_000))
    result = info(cli, "src/main.rs")
    assert set(result) >= SEED_FIELDS
    assert result == {
        "path": "src/main.rs", "type": "file", "size": 14, "is_directory": False,
        "is_file": True, "is_symlink": False, "symlink_target": None,
        "modified": "2023-11-14T22:13:20.250000Z",
        "accessed": "2023-11-14T22:13:20.250000Z", "created": result["created"],
        "readonly": False, "mode": "0640",
        "line_count": 2, "encoding": "utf-8", "binary": False, "entries": None}


def test_modified_is_iso_8601_utc_ending_in_z_and_matches_the_mtime(
        ws: Path, cli: CliRunner) -> None:
    (ws / "f").write_text("x")
    result = info(cli, "f")
    assert ISO_UTC.match(result["modified"])
    parsed = datetime.strptime(result["modified"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(
        tzinfo=UTC)
    assert abs(parsed.timestamp() - (ws / "f").stat().st_mtime) < 1e-5


def test_modified_rounds_to_the_next_second_instead_of_losing_one(
        ws: Path, cli: CliRunner) -> None:
    (ws / "f").write_text("x")
    os.utime(ws / "f", ns=(1_700_000_000_999_999_700, 1_700_000_000_999_999_700))
    assert info(cli, "f")["modified"] == "2023-11-14T22:13:21.000000Z"


@pytest.mark.parametrize("alias", ["path", "file_path", "filepath", "filename"])
def test_every_path_alias_names_the_file(ws: Path, cli: CliRunner, alias: str) -> None:
    (ws / "f.txt").write_text("x\n")
    assert cli("get_file_info", stdin={alias: "f.txt"}).result["path"] == "f.txt"


def test_flags_args_and_a_real_subprocess_agree(ws: Path, cli: CliRunner,
                                                proc: CliRunner) -> None:
    (ws / "f.txt").write_text("a\nb\n")
    by_flag = cli("get_file_info", "--filename", "f.txt").result
    by_args = cli("get_file_info", "--args", json.dumps({"filepath": "f.txt"})).result
    by_proc = proc("get_file_info", stdin={"path": "f.txt"}).result
    for result in (by_flag, by_args, by_proc):
        result.pop("accessed")  # reading the file for its lines may move its access time
    assert by_flag == by_args == by_proc
    assert by_proc["line_count"] == 2


def test_a_read_only_file_is_readonly(ws: Path, cli: CliRunner) -> None:
    (ws / "ro").write_text("x")
    (ws / "ro").chmod(0o444)
    result = info(cli, "ro")
    assert result["readonly"] is True
    assert result["mode"] == "0444"


@pytest.mark.parametrize(("data", "lines"), [
    (b"", 0), (b"one", 1), (b"one\n", 1), (b"one\ntwo", 2), (b"a\r\nb\r\nc\r\n", 3),
    (b"\n\n\n", 3)])
def test_line_count_counts_a_last_line_without_newline(ws: Path, cli: CliRunner, data: bytes,
                                                        lines: int) -> None:
    (ws / "f").write_bytes(data)
    assert info(cli, "f")["line_count"] == lines


@pytest.mark.parametrize(("data", "encoding"), [
    (b"plain ascii\n", "utf-8"),
    ("naïve ☃\n".encode(), "utf-8"),
    (b"\xef\xbb\xbfwith bom\n", "utf-8-bom"),
    (b"\xff\xfe" + "utf16 text\nline\n".encode("utf-16-le"), "utf-16-le"),
])
def test_the_encoding_of_a_text_file_is_reported(ws: Path, cli: CliRunner, data: bytes,
                                                  encoding: str) -> None:
    (ws / "f").write_bytes(data)
    result = info(cli, "f")
    assert result["encoding"] == encoding
    assert result["binary"] is False


def test_a_utf16_file_counts_decoded_lines(ws: Path, cli: CliRunner) -> None:
    (ws / "f").write_bytes(b"\xff\xfe" + "one\ntwo\nthree".encode("utf-16-le"))
    assert info(cli, "f")["line_count"] == 3


def test_a_binary_file_is_binary_without_lines_or_encoding(ws: Path, cli: CliRunner) -> None:
    (ws / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    result = info(cli, "img.png")
    assert result["binary"] is True
    assert result["line_count"] is None
    assert result["encoding"] is None
    assert result["is_file"] is True
    assert result["size"] == 16


def test_a_directory_reports_its_entries(ws: Path, cli: CliRunner) -> None:
    (ws / "d" / "sub").mkdir(parents=True)
    (ws / "d" / "a").write_text("x")
    (ws / "d" / ".hidden").write_text("x")
    result = info(cli, "d")
    assert set(result) >= SEED_FIELDS
    assert result["type"] == "directory"
    assert result["is_directory"] is True
    assert result["is_file"] is False
    assert result["entries"] == 3
    assert result["line_count"] is None
    assert result["encoding"] is None
    assert result["binary"] is None


@pytest.mark.parametrize("root", [".", "ROOT"])
def test_the_workspace_root_can_be_inspected(ws: Path, cli: CliRunner, root: str) -> None:
    (ws / "a").write_text("x")
    result = info(cli, root.replace("ROOT", str(ws)))
    assert result["path"] == "."
    assert result["entries"] == 1
    assert result["is_directory"] is True


def test_a_symlink_to_a_file_reports_the_link_and_its_target(ws: Path, cli: CliRunner) -> None:
    (ws / "real.txt").write_text("1\n2\n3\n")
    (ws / "link").symlink_to("real.txt")
    result = info(cli, "link")
    assert result["path"] == "link"
    assert result["type"] == "symlink"
    assert result["is_symlink"] is True
    assert result["symlink_target"] == "real.txt"
    assert result["is_file"] is True
    assert result["size"] == 6
    assert result["line_count"] == 3


def test_a_symlink_to_a_directory_reports_its_entries(ws: Path, cli: CliRunner) -> None:
    (ws / "d").mkdir()
    (ws / "d" / "a").write_text("x")
    (ws / "ld").symlink_to("d")
    result = info(cli, "ld")
    assert result["is_symlink"] is True
    assert result["is_directory"] is True
    assert result["entries"] == 1


def test_a_dangling_symlink_inside_is_reported_as_a_link(ws: Path, cli: CliRunner) -> None:
    (ws / "dangling").symlink_to("nowhere")
    result = info(cli, "dangling")
    assert result["is_symlink"] is True
    assert result["symlink_target"] == "nowhere"
    assert result["is_file"] is False
    assert result["is_directory"] is False


def test_a_fifo_is_reported_without_being_opened(ws: Path, cli: CliRunner) -> None:
    os.mkfifo(ws / "pipe")
    result = info(cli, "pipe")
    assert result["type"] == "fifo"
    assert result["is_file"] is False
    assert result["line_count"] is None


def test_a_missing_path_is_not_found(ws: Path, cli: CliRunner) -> None:
    for path in ("nope", "no/such/thing"):
        call = cli("get_file_info", stdin={"path": path})
        assert call.code == 1
        assert call.error["code"] == "not_found"


def test_a_symlink_to_outside_is_refused(ws: Path, cli: CliRunner) -> None:
    (ws / "out").symlink_to(ws.parent / "outside" / "secret.txt")
    for path in ("out", "../outside/secret.txt", str(ws.parent / "outside")):
        call = cli("get_file_info", stdin={"path": path})
        assert call.code == 3
        assert call.error["code"] == "outside_workspace"


def test_an_unreadable_file_still_gets_its_metadata(
        ws: Path, cli: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    (ws / "locked.txt").write_text("secret\n")
    real_open = os.open

    def deny(path: str, flags: int, mode: int = 0o777, *, dir_fd: int | None = None) -> int:
        if path == "locked.txt":
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))
        return real_open(path, flags, mode, dir_fd=dir_fd)

    monkeypatch.setattr(os, "open", deny)
    call = cli("get_file_info", stdin={"path": "locked.txt"})
    monkeypatch.undo()
    assert call.code == 0, call.json
    assert call.result["size"] == 7
    assert call.result["line_count"] is None
    assert call.json["warnings"]


def test_nothing_is_modified(ws: Path, cli: CliRunner) -> None:
    (ws / "d").mkdir()
    (ws / "d" / "f").write_text("x\n")
    (ws / "l").symlink_to("d/f")
    before = snapshot(ws)
    mtimes = {p: os.lstat(ws / p).st_mtime_ns for p in before}
    for path in ("d", "d/f", "l", "."):
        info(cli, path)
    assert snapshot(ws) == before
    assert {p: os.lstat(ws / p).st_mtime_ns for p in before} == mtimes


def test_a_parent_that_cannot_be_searched_is_permission_denied(
        ws: Path, cli: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    (ws / "locked").mkdir()
    (ws / "locked" / "f").write_text("x")
    real_stat = os.stat

    def deny(path: str, *args: Any, **kwargs: Any) -> os.stat_result:
        if path == "f":
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))
        return real_stat(path, *args, **kwargs)

    monkeypatch.setattr(os, "stat", deny)
    call = cli("get_file_info", stdin={"path": "locked/f"})
    monkeypatch.undo()
    assert call.code == 1
    assert call.error["code"] == "permission_denied"


def test_a_symlink_loop_is_reported(ws: Path, cli: CliRunner) -> None:
    (ws / "a").symlink_to("b")
    (ws / "b").symlink_to("a")
    call = cli("get_file_info", stdin={"path": "a"})
    assert call.code == 1
    assert call.error["code"] == "symlink_loop"


def test_access_and_creation_times_are_reported_where_the_platform_has_them(
        ws: Path, cli: CliRunner) -> None:
    import sys

    target = ws / "t.txt"
    target.write_text("x\n")
    os.utime(target, (1_700_000_000.25, 1_600_000_000.5))
    result = cli("get_file_info", "--path", "t.txt").result
    assert result["accessed"] == "2023-11-14T22:13:20.250000Z"
    assert result["modified"] == "2020-09-13T12:26:40.500000Z"
    if sys.platform.startswith("linux"):
        assert result["created"] is None


BIG_TEXT = "".join(f"l\u00e9ne {i} \u2019q\u2019\n" for i in range(700_000))  # over 8 MiB


@pytest.mark.parametrize("encoding,label,prefix", [
    ("cp1252", "cp1252", b""), ("utf-8", "utf-8", b""), ("utf-8", "utf-8-bom", b"\xef\xbb\xbf"),
    ("utf-16-le", "utf-16-le", b"\xff\xfe"), ("utf-16-be", "utf-16-be", b"\xfe\xff")])
def test_a_big_file_is_counted_and_labelled_as_read_file_reads_it(
        ws: Path, cli: CliRunner, encoding: str, label: str, prefix: bytes) -> None:
    """Over 8 MiB (not decoded whole) the encoding is judged on the first MiB, as read_file
    judges it, and a UTF-16 file's lines are counted (they were null)."""
    (ws / "big.txt").write_bytes(prefix + BIG_TEXT.encode(encoding))
    assert (ws / "big.txt").stat().st_size > 8 << 20
    info = cli("get_file_info", stdin={"path": "big.txt"}).result
    assert (info["line_count"], info["encoding"]) == (700_000, label)
    read = cli("read_file", stdin={"path": "big.txt", "limit": 1}).result
    assert read["encoding"] == label and read["content"] == "l\u00e9ne 0 \u2019q\u2019\n"


def test_a_big_file_whose_bom_lies_is_read_as_8_bit_text(ws: Path, cli: CliRunner) -> None:
    """\\xff\\xfe then an odd number of bytes: not UTF-16 after all (it does not decode), so,
    as decode does for a smaller file, it is judged as text without a BOM."""
    (ws / "big.txt").write_bytes(b"\xff\xfe" + BIG_TEXT.encode("cp1252") + b"x")
    info = cli("get_file_info", stdin={"path": "big.txt"}).result
    read = cli("read_file", stdin={"path": "big.txt", "limit": 1}).result
    assert info["encoding"] == read["encoding"] == "cp1252"
    assert info["line_count"] == 700_001  # the last line, "x", has no line break

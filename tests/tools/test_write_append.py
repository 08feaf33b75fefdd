"""write_append: add text at the end of a file, in place, creating it (and parents) if missing."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import stat
from pathlib import Path

import pytest

from tests.conftest import CliRunner, snapshot
from tests.tools._mutate import fail_with, leftovers, ok


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_a_missing_file_is_created_with_its_parents(ws: Path, cli: CliRunner) -> None:
    call = cli("write_append", stdin={"path": "logs/today/out.log", "content": "first\n"})
    assert call.code == 0
    result = call.result
    assert (ws / "logs" / "today" / "out.log").read_bytes() == b"first\n"
    assert result["created"] is True
    assert result["bytes_appended"] == 6
    assert result["size"] == 6
    assert result["sha256"] == sha(b"first\n")
    assert result["encoding"] == "utf-8"
    assert result["parents_created"] == ["logs", "logs/today"]


def test_text_is_appended_exactly_without_adding_newlines(ws: Path, cli: CliRunner) -> None:
    (ws / "f.txt").write_bytes(b"line 1\n")
    result = cli("write_append", stdin={"path": "f.txt", "content": "line 2"}).result
    assert (ws / "f.txt").read_bytes() == b"line 1\nline 2"
    assert result["created"] is False
    assert result["bytes_appended"] == 6
    assert result["size"] == 13
    assert result["sha256"] == sha(b"line 1\nline 2")
    assert result["parents_created"] == []
    assert cli("write_append", stdin={"path": "f.txt", "content": "!"}).json["warnings"]


def test_the_scaffold_then_chunks_pattern_builds_a_file(ws: Path, cli: CliRunner) -> None:
    ok(cli("write_file", stdin={"path": "big.py", "content": ""}))
    for i in range(5):
        ok(cli("write_append", stdin={"path": "big.py", "content": f"x{i} = {i}\n"}))
    assert (ws / "big.py").read_text() == "".join(f"x{i} = {i}\n" for i in range(5))


def test_appending_keeps_the_inode_and_the_mode(ws: Path, cli: CliRunner) -> None:
    path = ws / "run.sh"
    path.write_text("#!/bin/sh\n")
    path.chmod(0o750)
    inode = path.stat().st_ino
    ok(cli("write_append", stdin={"path": "run.sh", "content": "echo hi\n"}))
    assert path.stat().st_ino == inode
    assert stat.S_IMODE(path.stat().st_mode) == 0o750


def test_a_warning_says_the_text_joined_a_last_line_without_newline(
        ws: Path, cli: CliRunner) -> None:
    (ws / "f.txt").write_bytes(b"no newline at end")
    call = cli("write_append", stdin={"path": "f.txt", "content": " continued\n"})
    assert call.code == 0
    assert (ws / "f.txt").read_bytes() == b"no newline at end continued\n"
    assert len(call.json["warnings"]) == 1
    assert "newline" in call.json["warnings"][0]


def test_no_warning_when_the_text_starts_a_new_line_itself(ws: Path, cli: CliRunner) -> None:
    (ws / "f.txt").write_bytes(b"no newline at end")
    call = cli("write_append", stdin={"path": "f.txt", "content": "\nnext\n"})
    assert call.json["warnings"] == []
    (ws / "g.txt").write_bytes(b"")
    assert cli("write_append", stdin={"path": "g.txt", "content": "x"}).json["warnings"] == []


@pytest.mark.parametrize("alias", ["path", "file_path", "filepath", "filename"])
def test_every_path_alias_names_the_file(ws: Path, cli: CliRunner, alias: str) -> None:
    (ws / "f.txt").write_text("a\n")
    ok(cli("write_append", stdin={alias: "f.txt", "content": "b\n"}))
    assert (ws / "f.txt").read_text() == "a\nb\n"


@pytest.mark.parametrize("alias", ["content", "contents", "text", "data"])
def test_every_content_alias_is_the_text(ws: Path, cli: CliRunner, alias: str) -> None:
    (ws / "f.txt").write_text("a\n")
    ok(cli("write_append", stdin={"path": "f.txt", alias: f"{alias}\n"}))
    assert (ws / "f.txt").read_text() == f"a\n{alias}\n"


def test_flags_and_args_work_like_stdin(ws: Path, cli: CliRunner) -> None:
    ok(cli("write_append", "--filepath", "f.txt", "--contents", "one\n"))
    ok(cli("write_append", "--args", json.dumps({"path": "f.txt", "text": "two\n"})))
    assert (ws / "f.txt").read_text() == "one\ntwo\n"


def test_the_real_subprocess_appends(ws: Path, proc: CliRunner) -> None:
    (ws / "f.txt").write_text("a\n")
    call = proc("write_append", stdin={"path": "f.txt", "content": "b\n"})
    assert call.code == 0, call
    assert (ws / "f.txt").read_text() == "a\nb\n"


# --- line endings and encodings --------------------------------------------------------------


def test_bare_lf_becomes_crlf_in_a_crlf_file(ws: Path, cli: CliRunner) -> None:
    (ws / "w.txt").write_bytes(b"one\r\n")
    result = cli("write_append", stdin={"path": "w.txt", "content": "two\nthree\n"}).result
    assert (ws / "w.txt").read_bytes() == b"one\r\ntwo\r\nthree\r\n"
    assert result["bytes_appended"] == 12


def test_newline_as_is_and_lf_keep_bare_lf_in_a_crlf_file(ws: Path, cli: CliRunner) -> None:
    (ws / "w.txt").write_bytes(b"one\r\n")
    ok(cli("write_append", stdin={"path": "w.txt", "content": "two\n", "newline": "as_is"}))
    ok(cli("write_append", stdin={"path": "w.txt", "content": "3\r\n", "newline": "lf"}))
    assert (ws / "w.txt").read_bytes() == b"one\r\ntwo\n3\n"


def test_newline_crlf_converts_for_a_new_file(ws: Path, cli: CliRunner) -> None:
    ok(cli("write_append", stdin={"path": "n.txt", "content": "a\nb\n", "newline": "crlf"}))
    assert (ws / "n.txt").read_bytes() == b"a\r\nb\r\n"


def test_an_lf_file_gets_the_text_unchanged(ws: Path, cli: CliRunner) -> None:
    (ws / "u.txt").write_bytes(b"one\n")
    ok(cli("write_append", stdin={"path": "u.txt", "content": "two\r\n"}))
    assert (ws / "u.txt").read_bytes() == b"one\ntwo\r\n"


def test_the_text_is_encoded_in_the_file_encoding(ws: Path, cli: CliRunner) -> None:
    (ws / "w16.txt").write_bytes(b"\xff\xfe" + "eins\n".encode("utf-16-le"))
    result = cli("write_append", stdin={"path": "w16.txt", "content": "zwei\n"}).result
    assert (ws / "w16.txt").read_bytes() == b"\xff\xfe" + "eins\nzwei\n".encode("utf-16-le")
    assert result["encoding"] == "utf-16-le"
    (ws / "bom.txt").write_bytes(b"\xef\xbb\xbfa\n")
    ok(cli("write_append", stdin={"path": "bom.txt", "content": "✓\n"}))
    assert (ws / "bom.txt").read_bytes() == b"\xef\xbb\xbfa\n" + "✓\n".encode()


def test_a_latin1_file_gets_latin1_bytes(ws: Path, cli: CliRunner) -> None:
    (ws / "fr.txt").write_bytes("Le café est prêt, la crème aussi.\n".encode("latin-1"))
    ok(cli("write_append", stdin={"path": "fr.txt", "content": "Voilà.\n"}))
    assert (ws / "fr.txt").read_bytes() == "Le café est prêt, la crème aussi.\nVoilà.\n".encode(
        "latin-1")


def test_a_character_the_encoding_cannot_hold_appends_nothing(ws: Path, cli: CliRunner) -> None:
    (ws / "fr.txt").write_bytes("Le café est prêt.\n".encode("latin-1"))
    before = snapshot(ws)
    call = cli("write_append", stdin={"path": "fr.txt", "content": "日本\n"})
    assert call.code == 1
    assert call.error["code"] == "encoding_error"
    assert snapshot(ws) == before


# --- refusals --------------------------------------------------------------------------------


def test_a_file_with_several_hard_links_is_refused(ws: Path, cli: CliRunner) -> None:
    (ws / "a.txt").write_text("shared\n")
    os.link(ws / "a.txt", ws / "b.txt")
    before = snapshot(ws)
    call = cli("write_append", stdin={"path": "a.txt", "content": "more\n"})
    assert call.code == 1
    assert call.error["code"] == "hardlink_refused"
    assert "write_file" in call.error["hint"]
    assert snapshot(ws) == before


def test_a_matching_expected_sha256_allows_the_append(ws: Path, cli: CliRunner) -> None:
    (ws / "f.txt").write_bytes(b"v1\n")
    result = cli("write_append", stdin={"path": "f.txt", "content": "v2\n",
                                        "expected_sha256": sha(b"v1\n")}).result
    assert result["sha256"] == sha(b"v1\nv2\n")


def test_a_stale_expected_sha256_appends_nothing(ws: Path, cli: CliRunner) -> None:
    (ws / "f.txt").write_bytes(b"changed\n")
    before = snapshot(ws)
    call = cli("write_append", stdin={"path": "f.txt", "content": "x\n",
                                      "expected_sha256": sha(b"what I read\n")})
    assert call.code == 1
    assert call.error["code"] == "stale_file"
    assert call.error["details"]["current_sha256"] == sha(b"changed\n")
    assert snapshot(ws) == before


def test_expected_sha256_for_a_missing_file_is_stale(ws: Path, cli: CliRunner) -> None:
    call = cli("write_append", stdin={"path": "new/f.txt", "content": "x",
                                      "expected_sha256": sha(b"")})
    assert call.error["code"] == "stale_file"
    assert snapshot(ws) == {}


def test_a_binary_file_is_refused(ws: Path, cli: CliRunner) -> None:
    (ws / "blob.bin").write_bytes(b"\x7fELF\x00\x00\x01")
    before = snapshot(ws)
    call = cli("write_append", stdin={"path": "blob.bin", "content": "text"})
    assert call.code == 1
    assert call.error["code"] == "binary_file"
    assert snapshot(ws) == before


def test_a_directory_is_refused(ws: Path, cli: CliRunner) -> None:
    (ws / "d").mkdir()
    before = snapshot(ws)
    call = cli("write_append", stdin={"path": "d", "content": "x"})
    assert call.error["code"] == "is_directory"
    call = cli("write_append", stdin={"path": ".", "content": "x"})
    assert call.error["code"] == "is_directory"
    assert snapshot(ws) == before


def test_a_fifo_is_refused_without_hanging(ws: Path, cli: CliRunner) -> None:
    os.mkfifo(ws / "pipe")
    before = snapshot(ws)
    call = cli("write_append", stdin={"path": "pipe", "content": "x"})
    assert call.error["code"] == "special_file"
    assert snapshot(ws) == before


def test_a_read_only_file_is_refused_even_for_root(ws: Path, cli: CliRunner) -> None:
    path = ws / "ro.txt"
    path.write_text("frozen\n")
    path.chmod(0o444)
    before = snapshot(ws)
    call = cli("write_append", stdin={"path": "ro.txt", "content": "more\n"})
    assert call.code == 1
    assert call.error["code"] == "permission_denied"
    assert snapshot(ws) == before


def test_a_file_as_a_parent_is_not_a_directory(ws: Path, cli: CliRunner) -> None:
    (ws / "plain").write_text("x")
    before = snapshot(ws)
    call = cli("write_append", stdin={"path": "plain/f.txt", "content": "x"})
    assert call.error["code"] == "not_a_directory"
    assert snapshot(ws) == before


def test_a_full_disk_cuts_a_partial_append_back_off(
        ws: Path, cli: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    (ws / "f.txt").write_bytes(b"start\n")
    before = snapshot(ws)
    real_write = os.write
    calls: list[int] = []

    def short_then_full(fd: int, data: bytes | memoryview) -> int:
        calls.append(len(data))
        if len(calls) == 1:
            return real_write(fd, bytes(data[:3]))  # a short write...
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))  # ...then the disk is full

    monkeypatch.setattr(os, "write", short_then_full)
    call = cli("write_append", stdin={"path": "f.txt", "content": "0123456789"})
    monkeypatch.undo()
    assert call.code == 1
    assert call.error["code"] == "no_space"
    assert snapshot(ws) == before


def test_a_full_disk_while_creating_rolls_back_the_parents(
        ws: Path, cli: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    fail_with(monkeypatch, "link")
    call = cli("write_append", stdin={"path": "a/b/new.txt", "content": "x"})
    assert call.error["code"] == "no_space"
    assert snapshot(ws) == {}


def test_a_symlink_inside_is_followed_and_one_outside_refused(ws: Path, cli: CliRunner) -> None:
    (ws / "real.txt").write_text("a\n")
    (ws / "link.txt").symlink_to("real.txt")
    ok(cli("write_append", stdin={"path": "link.txt", "content": "b\n"}))
    assert (ws / "real.txt").read_text() == "a\nb\n"
    (ws / "out.txt").symlink_to(ws.parent / "outside" / "secret.txt")
    (ws / "planted").symlink_to(ws.parent / "outside" / "planted.txt")
    before = snapshot(ws)
    for name in ("out.txt", "planted", "../outside/secret.txt"):
        call = cli("write_append", stdin={"path": name, "content": "pwned\n"})
        assert call.code == 3
        assert call.error["code"] == "outside_workspace"
    assert (ws.parent / "outside" / "secret.txt").read_text() == "top secret\n"
    assert not (ws.parent / "outside" / "planted.txt").exists()
    assert snapshot(ws) == before
    assert leftovers(ws) == []


def test_missing_arguments_are_reported_together(ws: Path, cli: CliRunner) -> None:
    call = cli("write_append", stdin={"pth": "f.txt"})
    assert call.code == 2
    assert call.error["code"] == "invalid_arguments"
    assert len(call.error["details"]["problems"]) >= 2
    assert snapshot(ws) == {}

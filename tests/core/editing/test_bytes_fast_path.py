"""The exact edit done on the bytes (``cycle._bytes_fast_path``): the paths issue 16 added.

Each test goes through the real ``apply_edit`` entry point and checks the file's bytes, the
result's ``sha256`` and, where it matters, that ``undo`` brings the old bytes back:

* UTF-8 validity is checked chunk by chunk (``decoding.is_utf8``): a character cut by a chunk
  boundary is still valid, a bad byte late in the file still sends the edit to the engine;
* files of 1 MiB or more are hashed (before and after) on another thread while the write
  goes on (``splicehash.digests_beside``);
* the content read is not read again before the write when the file is still that version
  (``Guard(read_stat=...)``): a change made right after the read is still refused.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from tests.conftest import CliRunner
from tests.core.files.test_crash_safety import debris
from zbtools.core.editing import cycle
from zbtools.core.files import decoding, hashing, reading, streaming


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _edit(cli: CliRunner, old: str, new: str, path: str = "f.py") -> dict[str, object]:
    done = cli("apply_edit", stdin={"path": path, "old_text": old, "new_text": new})
    assert done.code == 0, done
    result: dict[str, object] = done.result
    return result


def _edit_table_row(cli: CliRunner, ws: Path, row: int) -> bytes:
    """Write a 120,000-row file (about 2.5 MB), edit row ``row`` through the CLI and check
    the bytes, the reported sha256 and line; the body before the edit."""
    body = b"".join(b"row %d of the table\n" % i for i in range(120_000))
    (ws / "f.py").write_bytes(body)
    old, new = f"row {row} of the table\n", f"row {row} edited\n"
    result = _edit(cli, old, new)
    after = body.replace(old.encode(), new.encode())
    assert (ws / "f.py").read_bytes() == after
    assert result["sha256"] == _sha(after)
    assert result["start_line"] == row + 1
    return body


def test_a_character_cut_by_a_chunk_boundary_is_valid_utf8(cli: CliRunner, ws: Path) -> None:
    head = b"x = 1\n" * (decoding.UTF8_CHECK_CHUNK // 6)
    pad = b"#" * (decoding.UTF8_CHECK_CHUNK - len(head) - 1)
    body = head + pad + "\u20ac\n".encode() + b"y = 2\n" * 100 + b"the unique line\n"
    assert body[decoding.UTF8_CHECK_CHUNK - 1:decoding.UTF8_CHECK_CHUNK + 2] == "\u20ac".encode()
    (ws / "f.py").write_bytes(body)
    result = _edit(cli, "the unique line\n", "the edited line\n")
    after = body.replace(b"the unique line", b"the edited line")
    assert (ws / "f.py").read_bytes() == after
    assert result["matched_with"] == "exact"
    assert result["sha256"] == _sha(after)


@pytest.mark.parametrize("bad_at", [0.1, 0.9])
def test_a_bad_byte_anywhere_leaves_the_edit_to_the_engine(cli: CliRunner, ws: Path,
                                                           bad_at: float) -> None:
    lines = [b"value_%d = %d\n" % (i, i) for i in range(4000)]
    lines[int(len(lines) * bad_at)] = b"caf\xe9 = 1\n"  # Latin-1: not UTF-8
    body = b"".join(lines)
    assert not decoding.is_utf8(body)
    (ws / "f.py").write_bytes(body)
    # The engine reads the file as Windows-1252 and writes the new text so: a splice of the
    # new text's UTF-8 bytes would mix encodings.
    result = _edit(cli, "value_2000 = 2000\n", "value_2000 = '\u00e9'\n")
    assert (ws / "f.py").read_bytes() == body.replace(b"value_2000 = 2000\n",
                                                      b"value_2000 = '\xe9'\n")
    assert result["sha256"] == _sha((ws / "f.py").read_bytes())


@pytest.mark.parametrize("text", ["", "ascii only\n", "caf\u00e9 \u20ac \U0001f600\n" * 5000])
def test_is_utf8_agrees_with_decoding(text: str) -> None:
    data = text.encode()
    assert decoding.is_utf8(data)
    for cut in (1, len(data) // 2 + 1, len(data) - 1):
        if 0 < cut < len(data):
            broken = data[:cut] + b"\xff" + data[cut:]
            assert not decoding.is_utf8(broken)
    assert not decoding.is_utf8(data + "\u20ac".encode()[:2])  # a sequence cut at the end


def test_a_megabyte_file_is_hashed_beside_the_write_and_undone(cli: CliRunner,
                                                                ws: Path) -> None:
    body = _edit_table_row(cli, ws, 60_000)
    assert hashing.FAST_HASH_BYTES <= len(body) < cycle.FAST_PATH_BYTES
    undone = cli("undo", stdin={"path": "f.py"})
    assert undone.code == 0, undone
    assert (ws / "f.py").read_bytes() == body


@pytest.mark.parametrize("size", ["small", "megabyte"])
def test_a_change_right_after_the_read_is_refused(cli: CliRunner, ws: Path,
                                                  monkeypatch: pytest.MonkeyPatch,
                                                  size: str) -> None:
    """The write does not read the file again when it is still the version read; a change
    made between the read and the write (same size, in place) is caught before the rename."""
    rows = 10 if size == "small" else 120_000
    body = b"".join(b"row %d of the table\n" % i for i in range(rows)) + b"unique\n"
    target = ws / "f.py"
    target.write_bytes(body)
    theirs = body.replace(b"row 5 ", b"ROW 5 ")
    read = reading.read_bytes_stat

    def read_then_meddle(*args: object, **kwargs: object) -> object:
        out = read(*args, **kwargs)  # type: ignore[arg-type]
        with open(target, "r+b") as fh:
            fh.write(theirs)
        return out

    monkeypatch.setattr(cycle, "read_bytes_stat", read_then_meddle)
    done = cli("apply_edit", stdin={"path": "f.py", "old_text": "unique\n",
                                    "new_text": "mine\n"})
    assert done.error["code"] == "stale_file", done
    assert target.read_bytes() == theirs
    assert debris(ws) == []


@pytest.mark.parametrize("rows", [120_000, 400_000])  # 1 MiB and more; over 4 MiB
def test_a_big_file_counts_its_lines_during_the_fsync(cli: CliRunner, ws: Path,
                                                      rows: int) -> None:
    """From 1 MiB the line number of the match is counted beside the new file's fsync
    (``streaming.fsync_while``); the report and the diff still carry it."""
    body = b"".join(b"row %d of the table\n" % i for i in range(rows))
    (ws / "f.py").write_bytes(body)
    at = rows * 3 // 4
    result = _edit(cli, f"row {at} of the table\n", f"row {at} edited\n")
    assert (ws / "f.py").read_bytes() == body.replace(b"row %d of the table\n" % at,
                                                      b"row %d edited\n" % at)
    assert (result["start_line"], result["end_line"]) == (at + 1, at + 1)
    assert f"@@ -{at - 2},7 +{at - 2},7 @@" in str(result["diff"])
    assert debris(ws) == []


def test_fsync_while_waits_for_the_work_and_hands_its_error_on(tmp_path: Path) -> None:
    fd = os.open(tmp_path / "f", os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        done: list[int] = []
        streaming.fsync_while(fd, lambda: done.append(1))
        assert done == [1]

        def fail() -> None:
            raise ValueError("the work failed")

        with pytest.raises(ValueError, match="the work failed"):
            streaming.fsync_while(fd, fail)
    finally:
        os.close(fd)


def test_without_threads_a_big_edit_is_done_all_the_same(cli: CliRunner, ws: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A process that may not start a thread (a process or thread limit) hashes and counts
    on its own thread instead."""
    import _thread

    def refuse(*_args: object) -> int:
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(_thread, "start_new_thread", refuse)
    _edit_table_row(cli, ws, 90_000)


def test_a_fuzzy_edit_of_a_megabyte_file_reports_its_sha256_and_is_undone(
        cli: CliRunner, ws: Path) -> None:
    """The full engine on a file of 1 MiB or more (OpenSSL's sha256): the result's sha256 is
    the new bytes', and undo brings the old bytes back."""
    body = b"".join(b"def f%d():\n    return %d\n" % (i, i) for i in range(60_000))
    assert len(body) > hashing.FAST_HASH_BYTES
    (ws / "f.py").write_bytes(body)
    # re-indented old text: the indentation tier, not the bytes fast path
    result = _edit(cli, "def f30000():\n  return 30000\n", "def f30000():\n  return -1\n")
    assert result["matched_with"] == "indentation"
    after = (ws / "f.py").read_bytes()
    assert after == body.replace(b"    return 30000\n", b"    return -1\n")
    assert result["sha256"] == _sha(after)
    assert cli("undo", stdin={"path": "f.py"}).code == 0
    assert (ws / "f.py").read_bytes() == body

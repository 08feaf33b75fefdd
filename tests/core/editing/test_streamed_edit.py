"""A plain exact edit of a file over 16 MiB, done without reading the file whole
(``cycle._streamed_edit``), and the file primitives it is built on.

Such a file's change keeps no undo version and reports no sha256, so the edit never needs
its bytes in memory: old text is found with a chunked scan that stops at a second
occurrence (``streaming.find_twice``), the new version is copied in the kernel around the new
text (``streaming.copy_range``, ``write_parts``, which also hands the written pages to the disk
as it goes), and the line number is counted beside the copy (``count_in_file``).

Most tests shrink the thresholds (``STREAM_BYTES``, ``SCAN_CHUNK``, ``CONTEXT_REACH``,
``WRITEBACK_STEP``) so that small files take every path, boundaries included; one real
subprocess edits a real 17 MB file. The oracle is the in-memory path (the same edit with
streaming turned off): the same bytes on disk and the same result, field by field.
"""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import CliRunner, run_inprocess
from tests.core.files.test_crash_safety import debris
from zbtools.core.editing import cycle
from zbtools.core.editing.matching import requests
from zbtools.core.files import streaming

PROPERTIES = settings(max_examples=150, deadline=None, database=None,
                      suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture
def small(monkeypatch: pytest.MonkeyPatch) -> None:
    """Thresholds small enough for files of a few KB to be streamed, scanned in pieces and
    written back in steps."""
    monkeypatch.setattr(cycle, "STREAM_BYTES", 256)
    monkeypatch.setattr(cycle, "HASH_RESULT_BYTES", 256)
    monkeypatch.setattr(streaming, "SCAN_CHUNK", 64)
    monkeypatch.setattr(cycle, "CONTEXT_REACH", 16)
    monkeypatch.setattr(streaming, "WRITEBACK_STEP", 128)


def _edit(cli: CliRunner, old: str, new: str, **more: object) -> tuple[int, dict[str, Any]]:
    done = cli("apply_edit", stdin={"path": "f.txt", "old_text": old, "new_text": new, **more})
    return done.code, done.json


def _streamed_calls(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Records, per call of the streamed path, whether it did the edit (True) or handed it
    back to the in-memory path (False)."""
    calls: list[bool] = []
    real = cycle._streamed_edit

    def spy(*args: object, **kwargs: object) -> object:
        outcome = real(*args, **kwargs)  # type: ignore[arg-type]
        calls.append(outcome is not None)
        return outcome

    monkeypatch.setattr(cycle, "_streamed_edit", spy)
    return calls


def _lines(n: int, width: int = 30) -> bytes:
    return b"".join(b"line %06d %s\n" % (i, b"x" * (width - 13)) for i in range(n))


# ---------------------------------------------------------------------------------------------
# The primitives


@given(data=st.binary(max_size=300), needle=st.binary(min_size=1, max_size=6),
       start=st.integers(0, 40), chunk=st.integers(1, 50))
@PROPERTIES
def test_find_twice_agrees_with_finding_in_memory(tmp_path: Path, data: bytes, needle: bytes,
                                                  start: int, chunk: int) -> None:
    """First occurrence at or after ``start`` and whether another one starts after it
    (overlapping ones count), whatever the chunk size and wherever the chunks are cut."""
    path = tmp_path / "f"
    path.write_bytes(data)
    first = data.find(needle, start)
    again = first != -1 and data.find(needle, first + 1) != -1
    fd = os.open(path, os.O_RDONLY)
    try:
        old = streaming.SCAN_CHUNK
        streaming.SCAN_CHUNK = chunk
        try:
            assert streaming.find_twice(fd, needle, start) == (first, again)
        finally:
            streaming.SCAN_CHUNK = old
    finally:
        os.close(fd)


def test_find_twice_finds_overlapping_and_straddling_occurrences(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(streaming, "SCAN_CHUNK", 4)
    path = tmp_path / "f"
    fd_cases = [(b"xxxaaa", b"aa", (3, True)),  # overlapping: "aa" at 3 and 4
                (b"xyzab" + b"cab", b"abc", (3, False)),  # straddles the first chunk's end
                (b"abcab" + b"c", b"abc", (0, True)),  # the second straddles a chunk end
                (b"", b"a", (-1, False))]
    for data, needle, expected in fd_cases:
        path.write_bytes(data)
        fd = os.open(path, os.O_RDONLY)
        try:
            assert streaming.find_twice(fd, needle) == expected, data
        finally:
            os.close(fd)


@given(data=st.binary(max_size=300), end=st.integers(0, 320), chunk=st.integers(1, 40))
@PROPERTIES
def test_count_in_file_counts_what_count_counts(tmp_path: Path, data: bytes, end: int,
                                                chunk: int) -> None:
    path = tmp_path / "f"
    path.write_bytes(data)
    fd = os.open(path, os.O_RDONLY)
    old = streaming.SCAN_CHUNK
    streaming.SCAN_CHUNK = chunk
    try:
        assert streaming.count_in_file(fd, b"\n", end) == data.count(b"\n", 0, end)
    finally:
        streaming.SCAN_CHUNK = old
        os.close(fd)


@pytest.mark.parametrize("refusal", [errno.EXDEV, errno.ENOSYS, errno.EOPNOTSUPP, None])
def test_copy_range_falls_back_to_reads_and_writes(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch,
                                                   refusal: int | None) -> None:
    """A kernel or filesystem without ``copy_file_range`` (or one that refuses it here) gets
    the same bytes through ``pread``/``write``."""
    source = bytes(range(256)) * 5000
    (tmp_path / "src").write_bytes(source)
    if refusal is None:
        monkeypatch.delattr(os, "copy_file_range")
    else:
        def refuse(*_args: object) -> int:
            raise OSError(refusal, os.strerror(refusal))

        monkeypatch.setattr(os, "copy_file_range", refuse)
    src = os.open(tmp_path / "src", os.O_RDONLY)
    dst = os.open(tmp_path / "dst", os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        os.write(dst, b"head:")
        streaming.copy_range(src, dst, 1000, len(source) - 2000)
    finally:
        os.close(src)
        os.close(dst)
    assert (tmp_path / "dst").read_bytes() == b"head:" + source[1000:-1000]


def test_copy_range_raises_eof_when_the_source_is_short(tmp_path: Path) -> None:
    (tmp_path / "src").write_bytes(b"0123456789")
    src = os.open(tmp_path / "src", os.O_RDONLY)
    dst = os.open(tmp_path / "dst", os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        with pytest.raises(EOFError):
            streaming.copy_range(src, dst, 4, 10)
    finally:
        os.close(src)
        os.close(dst)


def test_write_parts_hands_each_step_to_the_disk_in_order(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    """A long write hands each full ``WRITEBACK_STEP`` to the disk as soon as it is written
    (only whole steps; the ``fsync`` takes the rest), and the bytes are the parts', in order,
    copied ranges and buffers alike."""
    monkeypatch.setattr(streaming, "WRITEBACK_STEP", 100)
    kicked: list[tuple[int, int]] = []
    monkeypatch.setattr(streaming, "writeback_starter",
                        lambda: lambda _fd, offset, length: kicked.append((offset, length)))
    source = bytes(range(256)) * 4
    (tmp_path / "src").write_bytes(source)
    src = os.open(tmp_path / "src", os.O_RDONLY)
    dst = os.open(tmp_path / "dst", os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        streaming.write_parts(dst, [(0, 250), memoryview(b"NEW" * 20), (300, 724)], src)
    finally:
        os.close(src)
        os.close(dst)
    expected = source[:250] + b"NEW" * 20 + source[300:]
    assert (tmp_path / "dst").read_bytes() == expected
    assert kicked == [(k * 100, 100) for k in range(len(expected) // 100)]


def test_write_parts_leaves_a_short_write_to_the_fsync(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    kicked: list[tuple[int, int]] = []
    monkeypatch.setattr(streaming, "writeback_starter",
                        lambda: lambda _fd, offset, length: kicked.append((offset, length)))
    dst = os.open(tmp_path / "dst", os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        streaming.write_parts(dst, [memoryview(b"small")], None)
    finally:
        os.close(dst)
    assert (tmp_path / "dst").read_bytes() == b"small"
    assert kicked == []


def test_writeback_is_started_through_the_c_library() -> None:
    start = streaming.writeback_starter()
    if start is None:
        pytest.skip("no sync_file_range in this C library")  # pragma: no cover - not Linux
    import tempfile

    with tempfile.TemporaryFile() as fh:
        fh.write(b"x" * 10000)
        fh.flush()
        assert start(fh.fileno(), 0, 10000) == 0


@given(line=st.text(alphabet="0123456789²٣ \t:|│→afx\u2003", max_size=10))
@settings(max_examples=2000, deadline=None, database=None)
def test_the_line_number_prefilter_passes_every_line_the_expression_matches(line: str) -> None:
    """``strip_line_numbers`` compiles its regular expression only for lines of the shape
    ``_numbered_shape`` accepts: it must accept every line the expression matches."""
    if requests._rx("line_number").match(line):
        assert requests._numbered_shape(line)


def test_a_request_of_numbered_data_lines_does_not_import_re() -> None:
    """Lines that start with a number but carry no line-number separator (data, numbered
    text) are not numbered: the expression is not needed for them."""
    assert not requests._numbered_shape("000700000 lorem ipsum dolor sit am")
    assert not requests._numbered_shape("42 is the answer")
    assert requests._numbered_shape("  12\tx = 1")
    assert requests._numbered_shape("12 | x = 1")
    assert requests._numbered_shape("12:abcdef\tx = 1")


# ---------------------------------------------------------------------------------------------
# The edit


@given(lines=st.lists(st.sampled_from(["alpha", "beta", "gamma", "delta delta", "", "é ü",
                                       "x" * 40, "long " * 12]), min_size=1, max_size=60),
       at=st.integers(0, 59), span=st.integers(1, 4), cut=st.integers(0, 3),
       bom=st.booleans(), final_newline=st.booleans(),
       new=st.sampled_from(["", "NEW", "NEW\nLINES\n", "ü"]))
@PROPERTIES
def test_a_streamed_edit_equals_the_in_memory_one(
        cli: CliRunner, ws: Path, monkeypatch: pytest.MonkeyPatch, small: None,
        lines: list[str], at: int, span: int, cut: int, bom: bool, final_newline: bool,
        new: str) -> None:
    """Whatever the file (duplicate lines, a BOM, no final newline, non-ASCII text, context
    lines longer than the first window) and the edit (unique, ambiguous, absent, inside a
    line), the streamed path leaves the bytes and answers the result the in-memory path does;
    when it cannot be sure it hands the edit back."""
    text = "\n".join(lines) + ("\n" if final_newline else "")
    body = (b"\xef\xbb\xbf" if bom else b"") + text.encode()
    at = min(at, len(lines) - 1)
    old = "\n".join(lines[at:at + span])[cut:] + ("\n" if at + span < len(lines) else "")
    if not old.strip():
        old = lines[at] + "?"  # absent
    target = ws / "f.txt"
    outcomes = []
    for streamed in (True, False):
        # (fixtures are set up once for all examples: the threshold is set for each run)
        monkeypatch.setattr(cycle, "STREAM_BYTES", 256 if streamed else 1 << 40)
        target.write_bytes(body + b"\n" * 300)  # over STREAM_BYTES
        code, envelope = _edit(cli, old, new)
        outcomes.append((code, envelope, target.read_bytes()))
    assert outcomes[0] == outcomes[1]
    assert debris(ws) == []


def test_a_unique_edit_is_streamed_and_reports_line_and_diff(
        cli: CliRunner, ws: Path, monkeypatch: pytest.MonkeyPatch, small: None) -> None:
    body = _lines(400)
    (ws / "f.txt").write_bytes(body)
    calls = _streamed_calls(monkeypatch)
    old, new = "line 000300 " + "x" * 17 + "\n", "line 000300 edited\n"
    code, envelope = _edit(cli, old, new)
    assert code == 0 and calls == [True], envelope
    result = envelope["result"]
    assert (ws / "f.txt").read_bytes() == body.replace(old.encode(), new.encode())
    assert (result["matched_with"], result["start_line"], result["end_line"]) == \
        ("exact", 301, 301)
    assert result["sha256"] is None
    assert "@@ -298,7 +298,7 @@" in str(result["diff"])
    assert any("not kept for undo" in w for w in envelope["warnings"])


@pytest.mark.parametrize("old", ["line 00001", "xx\nline", "line 0001", "nowhere at all"])
def test_an_ambiguous_or_absent_edit_is_left_to_the_engine(
        cli: CliRunner, ws: Path, monkeypatch: pytest.MonkeyPatch, small: None,
        old: str) -> None:
    """The engine explains the refusal (``ambiguous_match``, ``no_match``): the streamed path
    only ever does the edits it is sure of."""
    body = _lines(40)
    (ws / "f.txt").write_bytes(body)
    calls = _streamed_calls(monkeypatch)
    code, envelope = _edit(cli, old, "edited")
    assert calls == [False]
    assert code != 0 and envelope["error"]["code"] in (
        "ambiguous_match", "no_match")
    assert (ws / "f.txt").read_bytes() == body


def test_a_dry_run_streams_and_writes_nothing(cli: CliRunner, ws: Path,
                                              monkeypatch: pytest.MonkeyPatch,
                                              small: None) -> None:
    body = _lines(100)
    (ws / "f.txt").write_bytes(body)
    calls = _streamed_calls(monkeypatch)
    code, envelope = _edit(cli, "line 000050", "LINE 000050", dry_run=True)
    assert code == 0 and calls == [True], envelope
    assert (ws / "f.txt").read_bytes() == body
    assert "+LINE 000050" in str(envelope["result"]["diff"])
    assert debris(ws) == []


def test_a_change_during_the_edit_is_refused_and_kept(cli: CliRunner, ws: Path,
                                                      monkeypatch: pytest.MonkeyPatch,
                                                      small: None) -> None:
    """Someone writes the file after the scan: the inode, size and mtime the file was opened
    with no longer hold, the edit is refused and their bytes stay."""
    body = _lines(100)
    target = ws / "f.txt"
    target.write_bytes(body)
    scan = streaming.find_twice
    theirs = body + b"appended by someone else\n"

    def scan_then_meddle(*args: object) -> object:
        found = scan(*args)  # type: ignore[arg-type]
        target.write_bytes(theirs)
        return found

    monkeypatch.setattr(streaming, "find_twice", scan_then_meddle)
    _code, envelope = _edit(cli, "line 000050", "LINE 000050")
    assert envelope["error"]["code"] == "stale_file", envelope
    assert target.read_bytes() == theirs
    assert debris(ws) == []


def test_a_file_cut_short_during_the_copy_is_refused(cli: CliRunner, ws: Path,
                                                     monkeypatch: pytest.MonkeyPatch,
                                                     small: None) -> None:
    body = _lines(100)
    target = ws / "f.txt"
    target.write_bytes(body)
    copy = streaming.copy_range
    cut = [False]

    def copy_after_a_cut(src: int, dst: int, offset: int, length: int) -> None:
        if not cut[0]:
            cut[0] = True
            os.truncate(target, 100)
        copy(src, dst, offset, length)

    monkeypatch.setattr(streaming, "copy_range", copy_after_a_cut)
    _code, envelope = _edit(cli, "line 000050", "LINE 000050")
    assert envelope["error"]["code"] == "stale_file", envelope
    assert target.read_bytes() == body[:100]
    assert debris(ws) == []


@pytest.mark.parametrize("why", ["adds lines", "hard link", "expected_sha256", "read-only"])
def test_edits_the_streamed_path_does_not_take_still_work(
        cli: CliRunner, ws: Path, monkeypatch: pytest.MonkeyPatch, small: None,
        why: str) -> None:
    """New text that adds lines where old text has none (a CRLF file would get CRLF lines),
    a hard-linked file (its inode is kept), a precondition on the content, a read-only file:
    the in-memory path does these as it always did."""
    body = _lines(100)
    target = ws / "f.txt"
    target.write_bytes(body)
    calls = _streamed_calls(monkeypatch)
    old, new = "line 000050", "LINE\n000050"
    more: dict[str, object] = {}
    if why == "hard link":
        os.link(target, ws / "other.txt")
        new = "LINE 000050"
    elif why == "expected_sha256":
        import hashlib

        more["expected_sha256"] = hashlib.sha256(body).hexdigest()
        new = "LINE 000050"
    elif why == "read-only":
        target.chmod(0o444)
        new = "LINE 000050"
    code, envelope = _edit(cli, old, new, **more)
    assert True not in calls
    if why == "read-only":
        assert envelope["error"]["code"] == "permission_denied", envelope
        assert target.read_bytes() == body
        return
    assert code == 0, envelope
    assert target.read_bytes() == body.replace(old.encode(), new.encode())
    if why == "hard link":
        assert (ws / "other.txt").read_bytes() == target.read_bytes()


def test_a_real_17_mb_file_is_edited_in_a_subprocess(proc: CliRunner, ws: Path) -> None:
    """No threshold shrunk: a fresh ``zbtools apply_edit`` process edits a 17 MB file near
    its end, with the line, the diff and the bytes right."""
    rows = 17_000_000 // 31
    body = _lines(rows, width=31)
    assert len(body) > cycle.STREAM_BYTES
    (ws / "f.txt").write_bytes(body)
    at = rows - 10
    old = f"line {at:06d} "
    done = proc("apply_edit", stdin=json.dumps({"path": "f.txt", "old_text": old,
                                                "new_text": f"LINE {at:06d} "}))
    assert done.code == 0, done
    result = done.result
    assert (ws / "f.txt").read_bytes() == body.replace(old.encode(), f"LINE {at:06d} ".encode())
    assert (result["start_line"], result["sha256"]) == (at + 1, None)
    assert f"@@ -{at - 2},7 +{at - 2},7 @@" in result["diff"]
    assert debris(ws) == []


def test_a_streamed_edit_goes_through_batch_too(ws: Path, monkeypatch: pytest.MonkeyPatch,
                                                small: None) -> None:
    body = _lines(100)
    (ws / "f.txt").write_bytes(body)
    calls = _streamed_calls(monkeypatch)
    lines = "".join(json.dumps({"id": k, "tool": "apply_edit", "args": {
        "path": "f.txt", "old_text": f"line {k:06d}", "new_text": f"LINE {k:06d}"}}) + "\n"
        for k in (10, 20))
    done = run_inprocess(["batch"], stdin=lines, workspace=ws)
    assert done.code == 0, done
    answers = [json.loads(line) for line in done.out.splitlines()]
    assert [a["ok"] for a in answers] == [True, True], answers
    assert calls == [True, True]
    assert (ws / "f.txt").read_bytes() == body.replace(b"line 000010", b"LINE 000010").replace(
        b"line 000020", b"LINE 000020")

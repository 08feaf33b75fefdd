from __future__ import annotations

from pathlib import Path

from tests.conftest import CliRunner, snapshot


def test_read_file_returns_the_content_and_its_sha256(ws: Path, cli: CliRunner) -> None:
    (ws / "a.txt").write_text("hello\nworld\n")
    result = cli("read_file", "--path", "a.txt").result
    assert result["content"] == "hello\nworld\n"
    assert result["total_lines"] == 2
    assert len(result["sha256"]) == 64


def test_a_failed_call_leaves_the_workspace_unchanged(ws: Path, cli: CliRunner) -> None:
    (ws / "a.txt").write_text("x\n")
    before = snapshot(ws)
    call = cli("write_file", "--path", "a.txt", "--content", "y", "--overwrite=false")
    assert call.code == 1
    assert call.error["code"] == "already_exists"
    assert snapshot(ws) == before


def test_the_real_subprocess_speaks_the_same_contract(ws: Path, proc: CliRunner) -> None:
    (ws / "a.txt").write_text("hello\n")
    call = proc("read_file", stdin={"path": "a.txt"})
    assert call.code == 0
    assert call.result["content"] == "hello\n"

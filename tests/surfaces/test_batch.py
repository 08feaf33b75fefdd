"""``zbtools batch``: JSON Lines in, one result line per request, in order, with the id."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from tests.conftest import CliRunner
from tests.core.files.test_crash_safety import debris


def lines(out: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.splitlines()]


def jsonl(*requests: Any) -> str:
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in requests)


def test_results_in_order_with_their_ids(ws: Path, cli: CliRunner) -> None:
    (ws / "a.txt").write_text("one\ntwo\n")
    call = cli("batch", stdin=jsonl(
        {"id": 1, "tool": "read_file", "args": {"path": "a.txt"}},
        {"id": "w", "tool": "write_file", "args": {"path": "b.txt", "content": "x\n"}},
        {"id": [3], "tool": "read_file", "args": {"path": "b.txt"}},
        {"tool": "list_dir"}))
    assert call.code == 0
    out = lines(call.out)
    assert [o["id"] for o in out] == [1, "w", [3], None]
    assert [o["ok"] for o in out] == [True, True, True, True]
    assert out[0]["result"]["content"] == "one\ntwo\n"
    assert out[2]["result"]["content"] == "x\n"
    assert out[3]["tool"] == "list_directory"
    assert list(out[0])[:4] == ["id", "zbtools", "tool", "ok"]


def test_with_format_text_each_line_also_carries_the_model_facing_text(ws: Path,
                                                                       cli: CliRunner) -> None:
    (ws / "a.txt").write_text("one\ntwo\n")
    call = cli("batch", "--format", "text", stdin=jsonl(
        {"id": 1, "tool": "read_file", "args": {"path": "a.txt"}},
        {"id": 2, "tool": "read_file", "args": {"path": "missing.txt"}},
        "not json"))
    single = cli("read_file", "--path", "a.txt", "--text").out
    out = lines(call.out)
    assert [o["id"] for o in out] == [1, 2, None]
    assert out[0]["result"]["content"] == "one\ntwo\n"  # still the whole envelope
    assert out[0]["text"] == single
    assert out[1]["text"].startswith("error[not_found]: missing.txt")
    assert "\nhint: " in out[1]["text"]
    assert out[2]["text"].startswith("error[invalid_json]: ")
    assert "text" not in lines(cli("batch", stdin=jsonl(
        {"id": 1, "tool": "read_file", "args": {"path": "a.txt"}})).out)[0]


def test_malformed_lines_yield_error_lines_and_processing_continues(ws: Path,
                                                                   cli: CliRunner) -> None:
    (ws / "a.txt").write_text("one\n")
    ok = {"id": 9, "tool": "read_file", "args": {"path": "a.txt"}}
    call = cli("batch", stdin=jsonl(
        "not json", "[1, 2]", "", "   ", {"id": 1}, {"id": 2, "tool": "nope"},
        {"id": 3, "tool": "read_file", "args": [1]},
        {"id": 4, "tool": "read_file", "args": {"path": "a.txt"}, "extra": 1},
        {"id": 5, "tool": "read_file", "args": {"pth": "a.txt"}},
        {"id": 6, "tool": "read_file", "args": {"path": "missing.txt"}},
        b"\xff\xfe".decode("latin-1"), ok))
    assert call.code == 0
    out = lines(call.out)
    codes = [o["error"]["code"] if not o["ok"] else "ok" for o in out]
    assert codes == ["invalid_json", "invalid_json", "invalid_arguments", "unknown_tool",
                     "invalid_arguments", "invalid_arguments", "invalid_arguments",
                     "not_found", "invalid_json", "ok"]
    assert [o["id"] for o in out] == [None, None, 1, 2, 3, 4, 5, 6, None, 9]


def test_an_unknown_tool_suggests_close_names_as_on_the_command_line(cli: CliRunner) -> None:
    out = lines(cli("batch", stdin=jsonl({"id": 1, "tool": "grep_serch"})).out)[0]
    assert out["error"]["code"] == "unknown_tool"
    assert out["error"]["hint"].startswith("did you mean grep_search")


def test_ids_of_every_json_type_come_back_as_valid_json(ws: Path, cli: CliRunner) -> None:
    (ws / "a.txt").write_text("one\n")
    ids = ['null', 'true', 'false', '0', '-0.0', '1.5e300', '123456789012345678901234567890',
           '"x"', '"\\u00e9\\ud83d\\ude00"', '[]', '{}', '[1, {"a": [null]}]']
    body = "".join('{"id": ' + i + ', "tool": "read_file", "args": {"path": "a.txt"}}\n'
                   for i in ids)
    body += '{"id": 1e400, "tool": "read_file", "args": {"path": "a.txt"}}\n'
    body += '{"id": [-1e999], "tool": "read_file", "args": {"path": "a.txt"}}\n'
    call = cli("batch", stdin=body.encode())
    assert call.code == 0

    def refuse(constant: str) -> None:
        raise AssertionError(f"{constant} is not JSON")

    out = [json.loads(line, parse_constant=refuse) for line in call.out.splitlines()]
    assert [o["id"] for o in out[:len(ids)]] == [json.loads(i) for i in ids]
    assert all(o["ok"] for o in out[:len(ids)])
    for overflow in out[len(ids):]:  # a number no double holds cannot be echoed as JSON
        assert overflow["id"] is None
        assert overflow["error"]["code"] == "invalid_json"
        assert "id" in overflow["error"]["message"] and overflow["error"]["hint"]
    assert len(out) == len(ids) + 2


def test_openai_style_requests(ws: Path, cli: CliRunner) -> None:
    (ws / "a.txt").write_text("one\n")
    call = cli("batch", stdin=jsonl(
        {"id": "call_1", "name": "read_file", "arguments": json.dumps({"path": "a.txt"})},
        {"id": "call_2", "name": "read_file", "arguments": "{bad"}))
    out = lines(call.out)
    assert out[0]["result"]["content"] == "one\n"
    assert out[1]["error"]["code"] == "invalid_json"


def test_the_dialect_applies(ws: Path, cli: CliRunner) -> None:
    (ws / "a.txt").write_text("one\ntwo\nthree\n")
    call = cli("--dialect", "fiz", "batch", stdin=jsonl(
        {"id": 1, "tool": "read", "args": {"path": "a.txt", "offset": 1, "limit": 1}},
        {"id": 2, "tool": "read_file", "args": {"path": "a.txt", "offset": 1, "limit": 1}},
        {"id": 3, "tool": "edit", "args": {"path": "a.txt", "edits": [
            {"oldText": "one", "newText": "1"}, {"oldText": "three", "newText": "3"}]}}))
    out = lines(call.out)
    assert out[0]["tool"] == "read" and out[0]["result"]["content"] == "two\n"
    assert out[0]["result"]["next_offset"] == 2
    assert out[1]["tool"] == "read_file" and out[1]["result"]["content"] == "one\n"
    assert out[2]["ok"], out[2]
    assert (ws / "a.txt").read_text() == "1\ntwo\n3\n"


def test_warnings_and_limits_are_per_call(ws: Path, cli: CliRunner) -> None:
    (ws / "a.txt").write_text("".join(f"{i}\n" for i in range(100)))
    call = cli("batch", stdin=jsonl(
        {"id": 1, "tool": "read_file", "args": {"path": "a.txt", "max_lines": 10}},
        {"id": 2, "tool": "read_file", "args": {"path": "a.txt"}},
        {"id": 3, "tool": "read_file_range", "args": {"path": "a.txt", "end_line": 500}},
        {"id": 4, "tool": "read_file", "args": {"path": "a.txt", "limit": 1}}))
    out = lines(call.out)
    assert out[0]["result"]["end_line"] == 10
    assert out[1]["result"]["end_line"] == 100
    assert out[2]["warnings"] and not out[3]["warnings"]


def test_empty_input_and_arguments(cli: CliRunner) -> None:
    assert cli("batch", stdin="").out == ""
    assert cli("batch", stdin="").code == 0
    assert cli("batch", "extra", stdin="").error["code"] == "usage_error"


def test_an_oversized_line_is_refused_and_the_next_one_runs(ws: Path, cli: CliRunner) -> None:
    (ws / "a.txt").write_text("one\n")
    big = json.dumps({"id": 1, "tool": "write_file", "args": {"path": "b", "content": "x" * 5000}})
    call = cli("batch", stdin=jsonl(big, {"id": 2, "tool": "read_file",
                                          "args": {"path": "a.txt"}}),
               env={"ZBTOOLS_MAX_REQUEST_BYTES": "2048"})
    out = lines(call.out)
    assert out[0]["error"]["code"] == "too_large"
    assert out[1]["id"] == 2 and out[1]["ok"]
    assert not (ws / "b").exists()


def test_batch_in_a_real_process_is_fast(ws: Path, proc: CliRunner) -> None:
    (ws / "a.txt").write_text("".join(f"line {i}\n" for i in range(40)))
    n = 500
    request = jsonl(*({"id": i, "tool": "read_file", "args": {"path": "a.txt"}}
                      for i in range(n)))
    start = time.perf_counter()
    call = proc("batch", stdin=request)
    elapsed = time.perf_counter() - start
    out = lines(call.out)
    assert [o["id"] for o in out] == list(range(n))
    assert all(o["ok"] for o in out)
    assert elapsed < 10, elapsed  # generous: the benchmark measures >= 1000 calls/s


def test_child_processes_do_not_eat_the_batch_input(ws: Path, proc: CliRunner) -> None:
    call = proc("batch", stdin=jsonl(
        {"id": 1, "tool": "run_command", "args": {"command": "cat; echo done"}},
        {"id": 2, "tool": "list_directory"}))
    out = lines(call.out)
    assert out[0]["result"]["stdout"] == "done\n"
    assert out[1]["id"] == 2 and out[1]["ok"]


def _fsyncs(monkeypatch: Any) -> list[str]:
    """Record every os.fsync as "dir", "journal" or "file" (what the fd is)."""
    import os
    import stat

    seen: list[str] = []
    real = os.fsync

    def spy(fd: int) -> None:
        st = os.fstat(fd)
        kind = "dir" if stat.S_ISDIR(st.st_mode) else "file"
        if kind == "file" and os.readlink(f"/proc/self/fd/{fd}").endswith("journal.jsonl"):
            kind = "journal"
        seen.append(kind)
        real(fd)

    monkeypatch.setattr(os, "fsync", spy)
    return seen


def test_consecutive_edits_of_one_file_are_written_once(
        ws: Path, cli: CliRunner, monkeypatch: Any) -> None:
    f = ws / "a.py"
    f.write_text("".join(f"line_{i} = {i}\n" for i in range(40)))
    import zbtools.surfaces.batch as batch_module

    monkeypatch.setattr(batch_module, "GROUP_MAX_SECONDS", 60.0)  # a slow machine: one group
    seen = _fsyncs(monkeypatch)
    edits = [{"id": i, "tool": "apply_edit", "args": {
        "path": "a.py", "old_text": f"line_{i} = {i}\n", "new_text": f"line_{i} = -{i}\n"}}
        for i in range(10)]
    out = lines(cli("batch", stdin=jsonl(*edits)).out)
    assert [o["ok"] for o in out] == [True] * 10
    assert f.read_text().startswith("line_0 = -0\nline_1 = -1\n")
    assert "line_9 = -9\n" in f.read_text()
    # the ten edits read and replace the staged version: one write, fsync-ed before its
    # rename; the directory and the journal once
    assert seen == ["file", "journal", "dir"]
    # every edit is recorded for undo, the newest first
    assert cli("undo", stdin={"path": "a.py"}).result["remaining"] == 9
    assert "line_9 = 9\n" in f.read_text() and "line_8 = -8\n" in f.read_text()
    assert debris(ws) == []


def test_another_tool_commits_the_held_edits_before_it_runs(
        ws: Path, cli: CliRunner, monkeypatch: Any) -> None:
    (ws / "a.py").write_text("x = 1\ny = 2\n")
    seen = _fsyncs(monkeypatch)
    order: list[str] = []
    from zbtools.core.files import staging

    real_commit = staging.SyncGroup.commit

    def commit(self: staging.SyncGroup) -> None:
        order.append(f"commit after {len(seen)} fsyncs")
        real_commit(self)

    monkeypatch.setattr(staging.SyncGroup, "commit", commit)
    out = lines(cli("batch", stdin=jsonl(
        {"id": 1, "tool": "apply_edit", "args": {"path": "a.py", "old_text": "x = 1",
                                                 "new_text": "x = 3"}},
        {"id": 2, "tool": "read_file", "args": {"path": "a.py"}},
        {"id": 3, "tool": "apply_edit", "args": {"path": "a.py", "old_text": "y = 2",
                                                 "new_text": "y = 4"}})).out)
    assert [o["ok"] for o in out] == [True, True, True]
    assert out[1]["result"]["content"] == "x = 3\ny = 2\n"
    # the read's commit wrote the staged edit and made it durable before it ran
    assert seen[:3] == ["file", "journal", "dir"]
    assert order[0] == "commit after 0 fsyncs"
    assert seen.count("file") == 2 and seen.count("dir") == 2
    assert (ws / "a.py").read_text() == "x = 3\ny = 4\n"


def _one_group(monkeypatch: Any) -> None:
    import zbtools.surfaces.batch as batch_module

    monkeypatch.setattr(batch_module, "GROUP_MAX_SECONDS", 60.0)


def test_edits_of_several_files_are_each_written_once_and_read_their_own_versions(
        ws: Path, cli: CliRunner, monkeypatch: Any) -> None:
    _one_group(monkeypatch)
    for name in ("a", "b"):
        (ws / f"{name}.txt").write_text("one\ntwo\nthree\n")
    seen = _fsyncs(monkeypatch)
    out = lines(cli("batch", stdin=jsonl(
        {"id": 1, "tool": "apply_edit", "args": {"path": "a.txt", "old_text": "one",
                                                 "new_text": "ONE"}},
        {"id": 2, "tool": "edit_file", "args": {"path": "b.txt", "old_content": "two",
                                                "new_content": "TWO"}},
        {"id": 3, "tool": "insert_text", "args": {"path": "a.txt", "insert_line": 1,
                                                  "content": "inserted\n"}},
        {"id": 4, "tool": "apply_edit", "args": {"path": "a.txt", "old_text": "ONE",
                                                 "new_text": "1", "dry_run": True}},
        {"id": 5, "tool": "apply_edit", "args": {"path": "b.txt", "old_text": "one\nTWO",
                                                 "new_text": "both"}},
        {"id": 6, "tool": "apply_edit", "args": {"path": "a.txt", "old_text": "absent",
                                                 "new_text": "x"}})).out)
    assert [o["ok"] for o in out] == [True, True, True, True, True, False]
    assert out[5]["error"]["code"] == "no_match"
    assert "+1" in out[3]["result"]["diff"]  # the dry run saw the staged edit
    assert (ws / "a.txt").read_text() == "ONE\ninserted\ntwo\nthree\n"
    assert (ws / "b.txt").read_text() == "both\nthree\n"
    assert seen.count("file") == 2
    assert debris(ws) == []


def test_a_file_changed_by_someone_else_meanwhile_fails_every_call_that_relied_on_it(
        ws: Path, cli: CliRunner, monkeypatch: Any) -> None:
    """The staged version is written only if the file is still the one first read: when it
    is not, nothing is written and every call that wrote or read that version is reported
    with ``stale_file`` (their results were never sent); the other file's edit stands, and
    no undo record is left for what never happened."""
    _one_group(monkeypatch)
    (ws / "a.txt").write_text("one\ntwo\n")
    (ws / "b.txt").write_text("bee\n")
    from zbtools.core.files import staging

    real_stage = staging.SyncGroup.stage
    staged: list[int] = []

    def stage_then_meddle(self: staging.SyncGroup, *args: Any) -> Any:
        outcome = real_stage(self, *args)
        staged.append(1)
        if len(staged) == 2:  # after the second edit of a.txt: someone else writes it
            (ws / "a.txt").write_text("theirs\n")
        return outcome

    monkeypatch.setattr(staging.SyncGroup, "stage", stage_then_meddle)
    out = lines(cli("batch", stdin=jsonl(
        {"id": 1, "tool": "apply_edit", "args": {"path": "a.txt", "old_text": "one",
                                                 "new_text": "ONE"}},
        {"id": 2, "tool": "apply_edit", "args": {"path": "a.txt", "old_text": "two",
                                                 "new_text": "TWO"}},
        {"id": 3, "tool": "apply_edit", "args": {"path": "a.txt", "old_text": "ONE",
                                                 "new_text": "1", "dry_run": True}},
        {"id": 4, "tool": "apply_edit", "args": {"path": "b.txt", "old_text": "bee",
                                                 "new_text": "BEE"}})).out)
    assert [o["ok"] for o in out] == [False, False, False, True]
    assert [o["error"]["code"] for o in out[:3]] == ["stale_file"] * 3
    assert [o["id"] for o in out] == [1, 2, 3, 4]
    assert (ws / "a.txt").read_text() == "theirs\n"
    assert (ws / "b.txt").read_text() == "BEE\n"
    undo = cli("undo", stdin={"path": "a.txt", "dry_run": True})
    assert undo.code != 0 or undo.result["remaining"] == 0
    assert debris(ws) == []


def test_a_patch_and_an_undo_after_staged_edits_see_them_written(
        ws: Path, cli: CliRunner, monkeypatch: Any) -> None:
    _one_group(monkeypatch)
    (ws / "a.txt").write_text("one\ntwo\nthree\n")
    patch = "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n ONE\n-two\n+2\n three\n"
    out = lines(cli("batch", stdin=jsonl(
        {"id": 1, "tool": "apply_edit", "args": {"path": "a.txt", "old_text": "one",
                                                 "new_text": "ONE"}},
        {"id": 2, "tool": "apply_edit", "args": {"patch": patch}},
        {"id": 3, "tool": "apply_edit", "args": {"path": "a.txt", "old_text": "three",
                                                 "new_text": "3"}},
        {"id": 4, "tool": "undo", "args": {"path": "a.txt"}})).out)
    assert [o["ok"] for o in out] == [True, True, True, True], out
    assert (ws / "a.txt").read_text() == "ONE\n2\nthree\n"
    assert debris(ws) == []


def test_a_hard_linked_file_is_never_staged(ws: Path, cli: CliRunner,
                                            monkeypatch: Any) -> None:
    """Its inode is kept (written in place, journaled): every edit is written at once."""
    _one_group(monkeypatch)
    (ws / "a.txt").write_text("one\ntwo\n")
    import os

    os.link(ws / "a.txt", ws / "b.txt")
    out = lines(cli("batch", stdin=jsonl(
        {"id": 1, "tool": "apply_edit", "args": {"path": "a.txt", "old_text": "one",
                                                 "new_text": "ONE"}},
        {"id": 2, "tool": "apply_edit", "args": {"path": "a.txt", "old_text": "two",
                                                 "new_text": "TWO"}})).out)
    assert [o["ok"] for o in out] == [True, True]
    assert (ws / "b.txt").read_text() == "ONE\nTWO\n"
    assert os.stat(ws / "a.txt").st_ino == os.stat(ws / "b.txt").st_ino


def test_a_lone_edit_still_fsyncs_its_directory_at_once(
        ws: Path, cli: CliRunner, monkeypatch: Any) -> None:
    (ws / "a.py").write_text("x = 1\n")
    seen = _fsyncs(monkeypatch)
    cli("apply_edit", stdin={"path": "a.py", "old_text": "x = 1", "new_text": "x = 2"}).result
    assert seen == ["file", "dir", "journal"]

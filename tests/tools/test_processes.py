"""Background processes: bash/run_command background, bash_output, stop_process, list_processes.

Every process is identified by the pids it wrote to a pidfile, or by the supervisor pid in the
job's own meta.json; nothing is ever killed by name.
"""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CliRunner
from tests.tools.test_run_command import alive, pids_in


def start(cli: CliRunner, command: str, running: bool = True, **args: Any) -> str:
    result = cli("bash", stdin={"command": command, "background": True, **args}).result
    assert result["background"] is True
    assert result["status"] == "running" or not running
    job_id = result["id"]
    assert isinstance(job_id, str)
    return job_id


def poll(cli: CliRunner, job_id: str, cursor: int = 0, **args: Any) -> dict[str, Any]:
    return cli("bash_output", stdin={"id": job_id, "cursor": cursor, **args}).result


def meta_of(tmp_path: Path, job_id: str) -> dict[str, Any]:
    found = list((tmp_path / "state").glob(f"*/proc/{job_id}/meta.json"))
    assert len(found) == 1
    value = json.loads(found[0].read_text())
    assert isinstance(value, dict)
    return value


def wait_until(predicate: Any, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.02)


def test_poll_with_cursors_then_stop_leaves_nothing(cli: CliRunner, ws: Path) -> None:
    command = ("echo $$ > pids; sleep 60 & echo $! >> pids; setsid sleep 60 & echo $! >> pids; "
               "for i in 1 2 3; do echo line $i; sleep 0.1; done; wait")
    job_id = start(cli, command)
    first = poll(cli, job_id, wait_ms=3000)
    assert first["running"] is True and first["output"].startswith("line 1\n")
    wait_until(lambda: poll(cli, job_id)["bytes_total"] >= 21)
    rest = poll(cli, job_id, first["next_cursor"])
    assert (first["output"] + rest["output"]) == "line 1\nline 2\nline 3\n"
    assert rest["next_cursor"] == 21 and rest["dropped"] == 0
    assert poll(cli, job_id, 21)["output"] == ""
    listed = cli("list_processes").result
    assert [p["id"] for p in listed["processes"]] == [job_id] and listed["running"] == 1
    pids = pids_in(ws / "pids")
    assert len(pids) == 3 and all(alive(p) for p in pids)
    stopped = cli("stop_process", stdin={"shell_id": job_id, "grace": 1}).result["stopped"]
    assert stopped[0]["was_running"] is True and stopped[0]["status"] == "stopped"
    assert not [p for p in pids if alive(p)]
    again = cli("stop_process", "--id", job_id).result["stopped"][0]
    assert again["was_running"] is False
    assert poll(cli, job_id)["status"] == "stopped"


def test_job_that_ends_reports_exit_code(cli: CliRunner) -> None:
    job_id = start(cli, "echo done; exit 7", running=False)
    wait_until(lambda: poll(cli, job_id)["status"] == "exited")
    out = poll(cli, job_id)
    assert out["exit_code"] == 7 and out["output"] == "done\n" and out["running"] is False


def test_cursor_past_the_end_and_stopping_an_ended_job_are_not_errors(cli: CliRunner) -> None:
    job_id = start(cli, "printf abc; exit 4", running=False)
    wait_until(lambda: poll(cli, job_id)["status"] == "exited")
    call = cli("bash_output", stdin={"id": job_id, "cursor": 10**9})
    result = call.result
    assert result["output"] == "" and result["next_cursor"] == 3 and result["dropped"] == 0
    assert result["more"] is False and "past the end" in call.json["warnings"][0]
    assert poll(cli, job_id, 3, wait_ms=200)["output"] == ""  # an ended job: no wait
    stopped = cli("stop_process", stdin={"id": job_id}).result["stopped"][0]
    assert stopped["was_running"] is False and stopped["status"] == "exited"
    assert stopped["exit_code"] == 4
    bad = cli("bash_output", stdin={"id": job_id, "cursor": -1})
    assert bad.code == 2 and bad.error["code"] == "invalid_arguments"


def test_a_job_survives_the_cli_call_and_its_closed_pipes(proc: CliRunner, cli: CliRunner,
                                                          ws: Path) -> None:
    """Started by a real ``zbtools`` process whose stdout/stderr pipes close when it exits (and
    whose process group is gone): the job keeps running and is still polled and stopped."""
    call = proc("bash", stdin={"command": "echo $$ > pids; while :; do echo tick; sleep 0.1; "
                               "done", "background": True})
    assert call.code == 0, call
    job_id = call.result["id"]
    pid = pids_in(ws / "pids")[0]
    time.sleep(0.3)
    assert alive(pid)
    first = poll(cli, job_id)
    wait_until(lambda: poll(cli, job_id)["bytes_total"] > first["bytes_total"])
    assert poll(cli, job_id)["running"] is True
    cli("stop_process", stdin={"id": job_id, "grace": 0.5})
    assert not alive(pid)


def test_ids_are_validated_tokens(cli: CliRunner) -> None:
    for bad in ("../../etc", "0123456789ab", "ABCDEF012345", "", "x" * 12):
        call = cli("bash_output", stdin={"id": bad})
        assert call.error["code"] == "process_not_found", bad
    assert cli("stop_process", stdin={}).error["code"] == "invalid_arguments"


def test_killing_the_supervisor_kills_the_job(cli: CliRunner, ws: Path, tmp_path: Path) -> None:
    job_id = start(cli, "echo $$ > pids; sleep 60 & echo $! >> pids; wait")
    pids = pids_in(ws / "pids")
    wait_until(lambda: len(pids_in(ws / "pids")) == 2)
    pids = pids_in(ws / "pids")
    meta = meta_of(tmp_path, job_id)
    supervisor = meta["supervisor_pid"]
    with open(f"/proc/{supervisor}/stat", "rb") as fh:  # it is the process we started
        assert int(fh.read().rsplit(b")", 1)[1].split()[19]) == meta["supervisor_start_time"]
    os.kill(supervisor, signal.SIGKILL)
    wait_until(lambda: not alive(pids[0]))  # the command itself: PR_SET_PDEATHSIG
    listed = cli("list_processes").result["processes"]  # notices, kills the rest by token
    assert listed[0]["status"] == "lost"
    wait_until(lambda: not [p for p in pids if alive(p)])


def test_max_lifetime(cli: CliRunner, ws: Path) -> None:
    job_id = cli("bash", stdin={"command": "echo $$ > pids; sleep 60", "background": True},
                 env={"ZBTOOLS_MAX_BACKGROUND": "0.4", "ZBTOOLS_KILL_GRACE": "0.2"}
                 ).result["id"]
    wait_until(lambda: poll(cli, job_id)["status"] == "timed_out")
    assert not alive(pids_in(ws / "pids")[0])


@pytest.mark.slow
def test_on_timeout_background_promotes(cli: CliRunner) -> None:
    started = time.monotonic()
    result = cli("bash", stdin={"command": "echo start; sleep 1; echo end", "timeout_ms": 300,
                                "on_timeout": "background"}).result
    assert time.monotonic() - started < 1.0
    assert result["background"] is True and result["timed_out"] is True
    assert result["stdout"] == "start\n" and result["next_cursor"] == 6
    job_id = result["id"]
    wait_until(lambda: poll(cli, job_id)["status"] == "exited")
    assert poll(cli, job_id, 6)["output"] == "end\n"
    quick = cli("bash", stdin={"command": "echo quick; exit 2", "on_timeout": "background"}
                ).result
    assert quick["background"] is False and quick["exit_code"] == 2
    assert quick["stdout"] == "quick\n" and quick["id"] is None


def test_capped_log_reports_dropped_bytes(cli: CliRunner) -> None:
    result = cli("bash", stdin={"command": "seq 1 30000", "background": True},
                 env={"ZBTOOLS_LOG_CAP": "8192"}).result
    job_id = result["id"]
    wait_until(lambda: poll(cli, job_id)["status"] == "exited")
    out = poll(cli, job_id, 0)
    total = out["bytes_total"]
    assert total == len("".join(f"{i}\n" for i in range(1, 30001)))
    assert out["dropped"] > 0 and out["dropped"] + len(out["output"]) == total
    assert out["output"].endswith("29999\n30000\n") and out["next_cursor"] == total


def test_large_backlog_is_paged(cli: CliRunner) -> None:
    job_id = start(cli, "seq 1 20000", running=False)
    wait_until(lambda: poll(cli, job_id)["status"] == "exited")
    text, cursor, pages = "", 0, 0
    while True:
        page = poll(cli, job_id, cursor, max_bytes=30000)
        text += page["output"]
        cursor = page["next_cursor"]
        pages += 1
        if not page["more"]:
            break
    assert text == "".join(f"{i}\n" for i in range(1, 20001)) and pages >= 4


def test_stop_all(cli: CliRunner, ws: Path) -> None:
    ids = {start(cli, f"echo $$ > pid{i}; sleep 60") for i in range(2)}
    pids = [pids_in(ws / f"pid{i}")[0] for i in range(2)]
    stopped = cli("stop_process", stdin={"all": True, "grace": 0.5}).result["stopped"]
    assert {s["id"] for s in stopped} == ids
    assert not [p for p in pids if alive(p)]
    assert cli("list_processes", "--running-only").result["processes"] == []


@pytest.mark.parametrize("tool", ["bash_output", "stop_process"])
def test_unknown_id(cli: CliRunner, tool: str) -> None:
    assert cli(tool, stdin={"id": "0" * 12}).error["code"] == "process_not_found"


def test_stop_escalates_to_sigkill_for_a_term_ignoring_job(cli: CliRunner, ws: Path) -> None:
    job_id = start(cli, "trap '' TERM; echo $$ > pids; sleep 60 & echo $! >> pids; wait; wait")
    wait_until(lambda: (ws / "pids").exists() and len(pids_in(ws / "pids")) == 2)
    pids = pids_in(ws / "pids")
    started = time.monotonic()
    stopped = cli("stop_process", stdin={"id": job_id, "grace": 0.3}).result["stopped"][0]
    assert time.monotonic() - started < 3
    assert stopped["signal"] == "SIGKILL" and stopped["status"] == "stopped"
    assert not [p for p in pids if alive(p)]


@pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="needs /proc")
def test_background_job_in_the_sandbox(cli: CliRunner, ws: Path, tmp_path: Path) -> None:
    from tests.tools.test_run_command import landlock_abi

    if landlock_abi() < 1:
        pytest.skip("Landlock is not available")
    outside = tmp_path / "outside"
    result = cli("bash", stdin={"command": f"touch in.txt; touch {outside}/escape.txt",
                                "background": True, "sandbox": True}).result
    assert result["sandbox"]["kind"] == "landlock"
    wait_until(lambda: poll(cli, result["id"])["status"] == "exited")
    assert (ws / "in.txt").exists() and not (outside / "escape.txt").exists()

"""Process facts from /proc and safe signalling (threat T16: a recycled PID is never hit).

Every process here is one this test started itself (a ``subprocess.Popen`` it holds), so cleanup
goes through that object; nothing is ever signalled by name.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import CliRunner
from zbtools.core.processes import procfs

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="needs /proc")


@pytest.fixture
def sleeper() -> Iterator[subprocess.Popen[bytes]]:
    proc = subprocess.Popen(["sleep", "30"])
    try:
        yield proc
    finally:
        proc.kill()
        proc.wait()


def test_a_pid_whose_start_time_differs_is_never_signalled(
        sleeper: subprocess.Popen[bytes]) -> None:
    started = procfs.start_time(sleeper.pid)
    assert started is not None
    # the same pid with another start time is another process (the PID was recycled)
    assert procfs.signal_process(sleeper.pid, signal.SIGTERM, started + 1) is False
    assert procfs.is_alive(sleeper.pid, started) and not procfs.is_alive(sleeper.pid, started + 1)
    time.sleep(0.05)
    assert sleeper.poll() is None
    assert procfs.signal_process(sleeper.pid, signal.SIGTERM, started) is True
    assert sleeper.wait(timeout=5) == -signal.SIGTERM


def test_a_vanished_or_reaped_pid_is_not_signalled(sleeper: subprocess.Popen[bytes]) -> None:
    started = procfs.start_time(sleeper.pid)
    sleeper.kill()
    sleeper.wait()
    assert procfs.read_stat(sleeper.pid) is None or not procfs.is_alive(sleeper.pid, started)
    assert procfs.signal_process(sleeper.pid, signal.SIGTERM, started) is False


def test_a_zombie_is_not_alive(sleeper: subprocess.Popen[bytes]) -> None:
    sleeper.kill()
    deadline = time.monotonic() + 5
    while (st := procfs.read_stat(sleeper.pid)) is not None and st.state != "Z":
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert not procfs.is_alive(sleeper.pid, None)


def test_stat_parsing_survives_parentheses_and_spaces_in_the_name(tmp_path: Path) -> None:
    odd = tmp_path / "a) b (c"
    odd.symlink_to("/bin/sleep")
    proc = subprocess.Popen([str(odd), "30"])
    try:
        st = procfs.read_stat(proc.pid)
        assert st is not None and st.ppid == os.getpid() and st.state in "RSD"
        assert st.pgid == os.getpgid(proc.pid)
        assert proc.pid in {d.pid for d in procfs.descendants(os.getpid())}
    finally:
        proc.kill()
        proc.wait()


def test_kill_by_token_kills_only_the_processes_carrying_it() -> None:
    token = os.urandom(6).hex()
    marked = subprocess.Popen(["sleep", "30"], env={**os.environ, procfs.TOKEN_VAR: token})
    other = subprocess.Popen(["sleep", "30"], env={**os.environ, procfs.TOKEN_VAR: "0" * 12})
    try:
        assert procfs.token_pids(token) == [marked.pid]
        assert procfs.kill_by_token(token) == 1
        assert marked.wait(timeout=5) == -signal.SIGKILL
        assert other.poll() is None
    finally:
        for proc in (marked, other):
            proc.kill()
            proc.wait()


def test_stop_process_never_signals_a_recycled_supervisor_pid(
        cli: CliRunner, tmp_path: Path, sleeper: subprocess.Popen[bytes]) -> None:
    """A job's meta names a supervisor pid that now belongs to an unrelated process (``sleeper``,
    with another start time): stop_process must not signal it; the job is noticed as lost and its
    own processes are found by token instead."""
    result = cli("bash", stdin={"command": "sleep 30", "background": True}).result
    job_id = result["id"]
    (meta_path,) = (tmp_path / "state").glob(f"*/proc/{job_id}/meta.json")
    meta = json.loads(meta_path.read_text())
    real_supervisor = (meta["supervisor_pid"], meta["supervisor_start_time"])
    decoy_start = procfs.start_time(sleeper.pid)
    assert decoy_start is not None
    try:
        meta.update(supervisor_pid=sleeper.pid, supervisor_start_time=decoy_start + 1)
        meta_path.write_text(json.dumps(meta))
        stopped = cli("stop_process", stdin={"id": job_id, "grace": 0.2}).result["stopped"][0]
        assert stopped["was_running"] is False and stopped["status"] == "lost"
        time.sleep(0.05)
        assert sleeper.poll() is None  # the unrelated process was never signalled
    finally:
        procfs.signal_process(real_supervisor[0], signal.SIGTERM, real_supervisor[1])
    deadline = time.monotonic() + 5
    while procfs.is_alive(*real_supervisor):
        assert time.monotonic() < deadline, "the job's supervisor did not end"
        time.sleep(0.02)
    assert procfs.token_pids(job_id) == []


def test_signal_names() -> None:
    assert procfs.signal_name(signal.SIGKILL) == "SIGKILL"
    assert procfs.signal_name(200) == "SIG200"

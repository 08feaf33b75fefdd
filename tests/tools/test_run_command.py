"""run_command and bash in the foreground: real processes, pidfiles, never a kill by name.

Process liveness is checked through the pids the commands wrote themselves, with ``/proc``.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import REPO, Call, CliRunner


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            state = fh.read().rsplit(b")", 1)[1].split()[0]
    except OSError:
        return False
    return state != b"Z"


def pids_in(path: Path) -> list[int]:
    """The pids a shell wrote to ``path`` (``echo $$ > path``), once written whole: the
    redirection creates the file before ``echo`` writes to it."""
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().endswith("\n"):
            break
        time.sleep(0.01)
    return [int(x) for x in path.read_text().split()]


def run(cli: CliRunner, command: str, **args: object) -> Call:
    return cli("run_command", stdin={"command": command, **args})


# ---- results -----------------------------------------------------------------------------------

def test_exit_code_stdout_stderr(cli: CliRunner) -> None:
    call = run(cli, "echo out; echo err >&2; exit 3")
    assert call.code == 0
    result = call.result
    assert result["exit_code"] == 3 and result["signal"] is None
    assert result["stdout"] == "out\n" and result["stderr"] == "err\n"
    assert result["stdout_bytes"] == 4 and result["timed_out"] is False
    assert result["sandbox"] == {"kind": "none", "abi": None, "network": "open"}


@pytest.mark.parametrize("command,name", [("kill -TERM $$", "SIGTERM"),
                                          ("kill -KILL $$", "SIGKILL"),
                                          ("kill -SEGV $$", "SIGSEGV")])
def test_signal_names(cli: CliRunner, command: str, name: str) -> None:
    result = run(cli, command).result
    assert result["exit_code"] is None and result["signal"] == name


def test_merge_stderr_interleaves(cli: CliRunner) -> None:
    result = run(cli, "echo a; echo b >&2; echo c", merge_stderr=True).result
    assert result["stdout"] == "a\nb\nc\n" and result["stderr"] == ""


@pytest.mark.parametrize("command", ["cat", "read x; echo got=$x", "head -c 10",
                                     f"{sys.executable} -c 'input()'"])
def test_stdin_readers_return_at_once(cli: CliRunner, command: str) -> None:
    started = time.monotonic()
    result = run(cli, command, timeout=20).result
    assert time.monotonic() - started < 5
    assert result["timed_out"] is False


def test_stdin_text(cli: CliRunner) -> None:
    assert run(cli, "tr a-z A-Z", stdin="hello\n").result["stdout"] == "HELLO\n"


def test_cwd_inside_workspace(cli: CliRunner, ws: Path) -> None:
    (ws / "sub").mkdir()
    result = run(cli, "pwd", cwd="sub").result
    assert result["stdout"].strip() == str((ws / "sub").resolve()) and result["cwd"] == "sub"
    assert run(cli, "pwd", cwd="..").error["code"] == "outside_workspace"
    assert run(cli, "pwd", cwd="missing").error["code"] == "not_found"
    (ws / "f").write_text("x")
    assert run(cli, "pwd", cwd="f").error["code"] == "not_a_directory"


def test_bash_timeout_ms_and_aliases(cli: CliRunner) -> None:
    started = time.monotonic()
    result = cli("bash", stdin={"cmd": "sleep 20", "timeout": 300}).result
    assert result["timed_out"] is True and result["signal"] == "SIGTERM"
    assert time.monotonic() - started < 3
    assert cli("bash", "--command", "echo hi").result["stdout"] == "hi\n"


def test_a_timeout_as_text_says_how_it_ended_and_the_duration_once(cli: CliRunner) -> None:
    out = cli("run_command", "--command", "sleep 20", "--timeout", "0.2", "--text").out
    last = out.splitlines()[-1]
    assert last.startswith("[timed out, ended by SIGTERM; ") and last.endswith(" ms]")
    assert last.count(" ms") == 1


def test_a_bash_timeout_under_a_second_that_fires_warns_that_it_is_in_milliseconds(
        cli: CliRunner) -> None:
    # `timeout: 30` meant as run_command's seconds stops the command after 30 ms.
    call = cli("bash", stdin={"command": "sleep 20", "timeout": 30})
    assert call.result["timed_out"] is True
    assert any("milliseconds" in w and "give 30000" in w for w in call.json[
        "warnings"])
    assert cli("bash", stdin={"command": "echo hi", "timeout": 900}).json["warnings"] == []


# ---- output ------------------------------------------------------------------------------------

def test_undecodable_bytes_and_control_sequences_keep_json_valid(cli: CliRunner) -> None:
    command = r"printf 'a\xff\xfe\x00b \033[31mred\033[0m\n10%%\r50%%\r100%%\n\a\x01\n'"
    call = run(cli, command)
    assert call.out.isascii()
    json.loads(call.out)
    out = call.result["stdout"]
    assert "\ufffd" in out and "\x1b" not in out and "red" in out
    assert "100%\n" in out and "50%" not in out
    raw = run(cli, command, raw=True).result["stdout"]
    assert "\x1b[31m" in raw and "\r" in raw


def test_large_output_is_cut_head_and_tail_with_spill(cli: CliRunner) -> None:
    result = run(cli, "seq 1 100000").result
    assert result["truncated"] is True
    assert result["stdout_bytes"] == len("".join(f"{i}\n" for i in range(1, 100001)))
    out = result["stdout"]
    assert out.startswith("1\n2\n") and out.endswith("99999\n100000\n")
    assert len(out.encode()) <= 51200 and "omitted" in out
    spill = Path(result["full_output"])
    assert spill.read_text().count("\n") > 100000


@pytest.mark.slow
def test_flood_of_500_mb_stays_bounded(ws: Path, tmp_path: Path) -> None:
    """zbtools runs as a child of a fresh interpreter, which reports its children's peak RSS."""
    probe = (
        "import resource, subprocess, sys, time, json\n"
        "t = time.monotonic()\n"
        "p = subprocess.run([sys.executable, '-m', 'zbtools', 'run_command', '--command', "
        "\"head -c 500000000 /dev/zero | tr '\\\\0' 'a'\"], capture_output=True)\n"
        "wall = time.monotonic() - t\n"
        "rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
        "print(json.dumps({'wall': wall, 'rss_kb': rss, 'out': p.stdout.decode()}))\n")
    env = dict(os.environ, PYTHONPATH=str(REPO), ZBTOOLS_WORKSPACE=str(ws))
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, env=env,
                          timeout=60, check=True)
    report = json.loads(done.stdout)
    result = json.loads(report["out"])["result"]
    assert result["stdout_bytes"] == 500_000_000 and result["exit_code"] == 0
    assert result["truncated"] is True and len(result["stdout"]) <= 51200
    assert report["rss_kb"] < 100 * 1024, report["rss_kb"]
    print(f"500 MB flood: {report['wall']:.2f}s, peak child RSS {report['rss_kb'] / 1024:.1f} MB")


# ---- process trees -----------------------------------------------------------------------------

def test_timeout_kills_the_whole_tree_including_setsid_grandchild(cli: CliRunner,
                                                                  ws: Path) -> None:
    command = ("echo $$ > pids; sleep 60 & echo $! >> pids; setsid sleep 60 & echo $! >> pids; "
               "(setsid sh -c 'sleep 60 & echo $! >> pids; wait') & wait")
    started = time.monotonic()
    result = run(cli, command, timeout=0.5).result
    elapsed = time.monotonic() - started
    assert result["timed_out"] is True and result["status"] == "timed_out"
    assert elapsed < 0.5 + 2 + 1.5, elapsed  # timeout + grace + slack
    pids = pids_in(ws / "pids")
    assert len(pids) == 4
    assert not [p for p in pids if alive(p)]


def test_term_ignoring_child_gets_sigkill(cli: CliRunner, ws: Path) -> None:
    command = "trap '' TERM; echo $$ > pids; sleep 60 & echo $! >> pids; wait; wait"
    started = time.monotonic()
    result = cli("run_command", stdin={"command": command, "timeout": 0.3},
                 env={"ZBTOOLS_KILL_GRACE": "0.3"}).result
    assert time.monotonic() - started < 3
    assert result["timed_out"] is True and result["signal"] == "SIGKILL"
    assert not [p for p in pids_in(ws / "pids") if alive(p)]


def test_a_stopped_tree_gets_sigterm_without_waiting_the_grace_period(cli: CliRunner,
                                                                      ws: Path) -> None:
    """A process stopped with SIGSTOP (or ^Z) cannot act on SIGTERM until continued: the
    timeout continues it, so it ends by SIGTERM at once rather than by SIGKILL after the grace."""
    command = "sleep 60 & echo $! > pids; kill -STOP $!; kill -STOP $$"
    started = time.monotonic()
    result = cli("run_command", stdin={"command": command, "timeout": 0.3},
                 env={"ZBTOOLS_KILL_GRACE": "10"}).result
    assert time.monotonic() - started < 3
    assert result["timed_out"] is True and result["signal"] == "SIGTERM"
    assert not [p for p in pids_in(ws / "pids") if alive(p)]


def test_background_leftover_returns_promptly_and_is_stopped(cli: CliRunner, ws: Path) -> None:
    started = time.monotonic()
    call = run(cli, "(sleep 30 & echo $! > pids); echo hi")
    elapsed = time.monotonic() - started
    result = call.result
    assert result["stdout"] == "hi\n" and result["exit_code"] == 0
    assert elapsed < 2.5, elapsed
    assert result["leftovers_killed"] == 1 and call.json["warnings"]
    assert not [p for p in pids_in(ws / "pids") if alive(p)]


def test_bare_form_from_the_issue_returns_promptly(cli: CliRunner) -> None:
    started = time.monotonic()
    assert run(cli, "(sleep 30 &); echo hi").result["stdout"] == "hi\n"
    assert time.monotonic() - started < 2.5


# ---- environment -------------------------------------------------------------------------------

# Values long and odd enough never to occur by chance in the rest of the environment (a short
# "s4" once matched a random temporary directory name).
SECRETS = {"OPENAI_API_KEY": "sk-zq1-secret", "GITHUB_TOKEN": "ghp-zq2-secret",
           "MY_PASSWORD": "pw-zq3-secret", "AWS_SECRET_ACCESS_KEY": "aws-zq4-secret",
           "SSH_AUTH_SOCK": "/tmp/agent.zq5", "DATABASE_URL": "postgres://user:hunter2@db/x",
           "SOME_CREDENTIALS": "cred-zq6-secret"}


def test_secrets_are_not_passed_on(cli: CliRunner) -> None:
    call = cli("run_command", "--command", "env", env={**SECRETS, "HARMLESS": "ok"})
    result = call.result
    out = result["stdout"]
    for name, value in SECRETS.items():
        assert name not in out and value not in out
    assert "HARMLESS=ok" in out and "PAGER=cat" in out and "GIT_TERMINAL_PROMPT=0" in out
    assert set(SECRETS) <= set(result["env_withheld"])


def test_passthrough_and_call_env(cli: CliRunner) -> None:
    call = cli("run_command", stdin={"command": "env", "env": {"EXTRA": "1"}},
               env={**SECRETS, "ZBTOOLS_ENV_PASSTHROUGH": "GITHUB_*,MY_PASSWORD"})
    out = call.result["stdout"]
    assert "GITHUB_TOKEN=ghp-zq2-secret" in out and "MY_PASSWORD=pw-zq3-secret" in out
    assert "EXTRA=1" in out
    assert "OPENAI_API_KEY" not in out


def test_passthrough_from_config(cli: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text('[exec]\nenv_passthrough = ["OPENAI_API_KEY"]\n')
    out = cli("run_command", "--command", "env", env=SECRETS).result["stdout"]
    assert "OPENAI_API_KEY=sk-zq1-secret" in out and "GITHUB_TOKEN" not in out


def test_bad_exec_config_is_a_usage_error(cli: CliRunner) -> None:
    call = cli("run_command", "--command", "true", env={"ZBTOOLS_APPROVAL": "maybe"})
    assert call.error["code"] == "usage_error"


def test_an_infinite_or_fractional_count_setting_is_a_usage_error_not_a_crash(
        cli: CliRunner, ws: Path) -> None:
    for value in ("inf", "1e400", "-inf", "0.5"):
        call = cli("run_command", "--command", "touch ran", env={"ZBTOOLS_LOG_CAP": value})
        assert call.code == 2 and call.error["code"] == "usage_error", value
        assert "ZBTOOLS_LOG_CAP" in call.error["message"]
    assert not (ws / "ran").exists()


def test_an_infinite_config_number_is_a_usage_error(cli: CliRunner, tmp_path: Path) -> None:
    for setting in ("kill_grace = inf", "log_cap = 1" + "0" * 400):
        (tmp_path / "config.toml").write_text(f"[exec]\n{setting}\n")
        call = cli("run_command", "--command", "true")
        assert call.code == 2 and call.error["code"] == "usage_error", setting
        assert setting.split()[0] in call.error["message"]


# ---- policy ------------------------------------------------------------------------------------

def test_guardrail_refuses_with_rule_and_override(cli: CliRunner, ws: Path) -> None:
    # a harmless stand-in that matches the mkfs rule: if it ran, it would only be "not found"
    command = "mkfs.zbtools-standin-not-a-real-tool --help; touch ran"
    call = run(cli, command)
    assert call.code == 3
    error = call.error
    assert error["code"] == "guardrail_refused" and error["details"]["rule"] == "mkfs"
    assert "ZBTOOLS_GUARDRAIL_ALLOW=mkfs" in error["hint"]
    assert not (ws / "ran").exists()
    allowed = cli("run_command", stdin={"command": command},
                  env={"ZBTOOLS_GUARDRAIL_ALLOW": "mkfs"})
    assert allowed.result["exit_code"] == 0 and (ws / "ran").exists()


def test_approval_deny(cli: CliRunner, ws: Path) -> None:
    call = cli("run_command", stdin={"command": "touch ran"}, env={"ZBTOOLS_APPROVAL": "deny"})
    assert call.code == 3 and call.error["code"] == "approval_denied"
    assert not (ws / "ran").exists()


def test_the_approval_flag_overrides_the_configured_policy(cli: CliRunner, ws: Path) -> None:
    denied = cli("--approval", "deny", "run_command", "--command", "touch ran")
    assert denied.code == 3 and denied.error["code"] == "approval_denied"
    assert "--approval allow" in denied.error["hint"]
    assert not (ws / "ran").exists()
    allowed = cli("--approval", "allow", "run_command", "--command", "touch ran",
                  env={"ZBTOOLS_APPROVAL": "deny"})
    assert allowed.result["exit_code"] == 0 and (ws / "ran").exists()
    bad = cli("--approval", "sometimes", "run_command", "--command", "true")
    assert bad.code == 2 and bad.error["code"] == "usage_error"
    assert "allow, confirm or deny" in bad.error["hint"]


def test_the_approval_flag_reaches_batch_calls(ws: Path) -> None:
    from tests.conftest import run_inprocess

    line = json.dumps({"id": 1, "tool": "run_command", "args": {"command": "touch ran"}})
    call = run_inprocess(["--approval", "deny", "batch"], stdin=line + "\n", workspace=ws)
    assert json.loads(call.out)["error"]["code"] == "approval_denied"
    assert not (ws / "ran").exists()


def test_approval_confirm_without_a_terminal_refuses(ws: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(REPO), ZBTOOLS_WORKSPACE=str(ws),
               ZBTOOLS_APPROVAL="confirm")
    done = subprocess.run([sys.executable, "-m", "zbtools", "run_command", "--command",
                           "touch ran"], capture_output=True, env=env, timeout=30,
                          start_new_session=True, stdin=subprocess.DEVNULL, check=False)
    envelope = json.loads(done.stdout)
    assert done.returncode == 3 and envelope["error"]["code"] == "approval_required"
    assert not (ws / "ran").exists()


@pytest.mark.parametrize("args,code,exit_code", [
    ({"command": "pwd", "cwd": "file.txt"}, "not_a_directory", 1),
    ({"command": "pwd", "cwd": "missing"}, "not_found", 1),
    ({"command": "pwd", "cwd": "../.."}, "outside_workspace", 3),
    ({"command": "a\u0000b"}, "invalid_arguments", 2),
    ({"command": "  "}, "invalid_arguments", 2),
    ({"command": "env", "env": {"A=B": "1"}}, "invalid_arguments", 2),
    ({"command": "env", "env": {"": "1"}}, "invalid_arguments", 2),
])
def test_refusals_have_a_code_and_a_hint_and_run_nothing(cli: CliRunner, ws: Path,
                                                         args: dict[str, object], code: str,
                                                         exit_code: int) -> None:
    (ws / "file.txt").write_text("x")
    call = cli("run_command", stdin=args)
    assert call.code == exit_code and call.error["code"] == code
    assert call.error["message"] and call.error["hint"], call.error
    assert sorted(p.name for p in ws.iterdir()) == ["file.txt"]


def test_timeout_above_maximum_is_lowered(cli: CliRunner) -> None:
    call = cli("run_command", stdin={"command": "true", "timeout": 10},
               env={"ZBTOOLS_MAX_TIMEOUT": "5"})
    assert call.result["exit_code"] == 0 and "lowered" in call.json["warnings"][0]


def test_missing_shell_falls_back_and_bad_command_reports(cli: CliRunner) -> None:
    result = cli("run_command", "--command", "echo $0",
                 env={"ZBTOOLS_SHELL": "/nonexistent/shell"}).result
    assert result["stdout"] == "/bin/sh\n"
    assert run(cli, "definitely-not-a-command-zb").result["exit_code"] == 127


# ---- sandbox -----------------------------------------------------------------------------------

def landlock_abi() -> int:
    from zbtools.core.processes.landlock import abi_version

    return abi_version()


needs_landlock = pytest.mark.skipif(landlock_abi() < 1, reason="Landlock is not available")


@needs_landlock
def test_sandbox_confines_writes_to_the_workspace(cli: CliRunner, ws: Path,
                                                  tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    command = (f"echo in > inside.txt; echo $TMPDIR > tmpdir.txt; touch $TMPDIR/t && echo tmp-ok;"
               f" echo out > {outside}/escape.txt; cat {outside}/secret.txt")
    result = run(cli, command, sandbox=True).result
    assert result["sandbox"]["kind"] == "landlock" and result["sandbox"]["abi"] >= 1
    assert (ws / "inside.txt").read_text() == "in\n"
    assert not (outside / "escape.txt").exists()
    assert "tmp-ok" in result["stdout"] and "top secret" not in result["stdout"]
    assert "ermission denied" in result["stderr"]


@pytest.mark.skipif(landlock_abi() < 4, reason="Landlock network rules need ABI 4")
def test_sandbox_can_deny_the_network(cli: CliRunner) -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    probe = (f"{sys.executable} -c 'import socket; socket.create_connection((\"127.0.0.1\", "
             f"{port}), timeout=2); print(\"connected\")'")
    try:
        denied = run(cli, probe, sandbox=True, network="deny").result
        assert denied["sandbox"]["network"] == "denied"
        assert "connected" not in denied["stdout"] and denied["exit_code"] != 0
        allowed = run(cli, probe, sandbox=True).result
        assert "connected" in allowed["stdout"]
    finally:
        server.close()


def test_require_sandbox_fails_closed_without_landlock(cli: CliRunner, ws: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from zbtools.core.processes import landlock

    monkeypatch.setattr(landlock, "abi_version", lambda: 0)
    call = run(cli, "touch ran", require_sandbox=True)
    assert call.code == 3 and call.error["code"] == "sandbox_unavailable"
    assert not (ws / "ran").exists()
    call = cli("run_command", stdin={"command": "touch ran"},
               env={"ZBTOOLS_REQUIRE_SANDBOX": "1"})
    assert call.error["code"] == "sandbox_unavailable" and not (ws / "ran").exists()
    # asked for but not required: runs unconfined, says so
    call = run(cli, "touch ran", sandbox=True)
    assert call.result["sandbox"]["kind"] == "none" and call.json["warnings"]


# ---- the command's size ----------------------------------------------------------------------

LIMIT = 128 * 1024 - 1  # the longest argument Linux passes to bash -c (MAX_ARG_STRLEN - 1)


def test_a_command_of_4_mb_is_refused_at_once_as_too_large_by_run_command_bash_and_batch(
        proc: CliRunner, ws: Path) -> None:
    """One long word once made the guardrail quadratic: 400 KB took 8 s and 4 MB never answered."""
    command = f"touch ran; echo {'a' * 4_000_000}"
    for tool in ("run_command", "bash"):
        started = time.monotonic()
        call = proc(tool, stdin={"command": command}, timeout=30)
        assert time.monotonic() - started < 20, tool
        assert call.code == 2, call.err
        error = call.error
        assert error["code"] == "too_large"
        assert error["details"] == {"bytes": len(command), "limit": LIMIT}
        assert "128 KiB" in error["message"] and "file" in error["hint"]
    line = json.dumps({"id": 7, "tool": "bash", "args": {"command": command}})
    batch = proc("batch", stdin=line + "\n", timeout=30)
    envelope = json.loads(batch.out)
    assert envelope["id"] == 7 and envelope["error"]["code"] == "too_large"
    assert not (ws / "ran").exists()


def test_a_command_of_exactly_the_limit_runs_and_one_byte_more_is_too_large(
        proc: CliRunner, ws: Path) -> None:
    word = "a" * (LIMIT - len("printf %s "))
    ran = proc("run_command", stdin={"command": f"printf %s {word}"}, timeout=30)
    assert ran.code == 0, ran.err
    assert ran.result["exit_code"] == 0 and ran.result["stdout_bytes"] == len(word)
    over = proc("run_command", stdin={"command": f"printf %s {word}a"}, timeout=30)
    assert over.error["code"] == "too_large" and over.error["details"]["bytes"] == LIMIT + 1


def test_the_limit_counts_utf8_bytes_not_characters(proc: CliRunner) -> None:
    command = "echo " + "é" * (LIMIT // 2)  # fewer characters than the limit, more bytes
    call = proc("run_command", stdin={"command": command}, timeout=30)
    assert call.error["code"] == "too_large"
    assert call.error["details"]["bytes"] == len(command.encode("utf-8"))


def test_a_background_command_of_exactly_the_limit_runs(cli: CliRunner, ws: Path) -> None:
    word = "b" * (LIMIT - len("printf %s  > out.txt"))
    started = cli("run_command", stdin={"command": f"printf %s {word} > out.txt",
                                        "background": True})
    job = started.result["id"]
    done = cli("bash_output", stdin={"id": job, "wait_ms": 10000})
    assert done.result["status"] == "exited", done.result
    assert (ws / "out.txt").read_text() == word

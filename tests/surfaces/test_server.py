"""``zbtools serve``: one-shot calls handed to a warm process answer as their own process would.

The invariant: for generated trees (ignore rules, hidden and binary files, nested directories)
and the reading tools' calls, a call handed to the server prints what the same call prints in
its own process (the in-process runner, which is ``entry.run`` as a process runs it), but for
the ``engine`` a search names, with the same exit status; and again after the tree changed
under the server's warm caches (files edited, removed, added, ignore rules changed). The trees
are made, then left to settle past the cache's two seconds, so that the second round meets
cached listings, recordings and results. Then the hand-off's edges: what is declined (edits,
help, a terminal, a busy server, a stranger's identity), its safety (the socket's directory),
and the server's life (status, stop, one server per socket, a caller that vanished).
"""

from __future__ import annotations

import json
import os
import random
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO, run_inprocess
from zbtools.handoff import CALL, DECLINE, encode

SETTLE_SECONDS = 2.2  # past the search cache's SETTLE_NS, so that values are kept


def base_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ZBTOOLS_")}
    env["PYTHONPATH"] = str(REPO)
    env["ZBTOOLS_STATE_DIR"] = str(home / "state")
    config = home / "config.toml"
    config.touch()
    env["ZBTOOLS_CONFIG"] = str(config)
    return env


class Served:
    """A running ``zbtools serve`` on its own socket, and a way to call through it."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.socket = home / "serve.sock"
        self.env = base_env(home)
        self.env["ZBTOOLS_SERVER"] = str(self.socket)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "zbtools", "serve", "--idle", "300"], env=self.env,
            cwd=home, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        self.ready = json.loads(line)

    def call(self, cwd: Path, *argv: str, stdin: bytes = b"", served: bool = True,
             env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
        environment = dict(self.env)
        if not served:
            environment["ZBTOOLS_SERVER"] = "off"
        environment.update(env or {})
        return subprocess.run([sys.executable, "-m", "zbtools", *argv], input=stdin, cwd=cwd,
                              env=environment, capture_output=True, timeout=60, check=False)

    def status(self) -> dict[str, Any]:
        done = self.call(self.home, "serve", "--status")
        value = json.loads(done.stdout)["server"]
        assert isinstance(value, dict), done
        return value

    def stop(self) -> None:
        self.call(self.home, "serve", "--stop")
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    home = tmp_path_factory.mktemp("serve")
    os.chmod(home, 0o700)
    served = Served(home)
    try:
        yield served
    finally:
        served.stop()


# -- the invariant: served answers are the call's own -------------------------------------------

WORDS = ["alpha", "beta", "TODO", "def get_", "Alpha", "gamma delta", "x = 1", "é ü"]
DIRS = ["", "src", "src/lib", "docs", ".hidden", "build", "src/lib/deep"]
NAMES = ["a.py", "b.txt", "c.md", "d.log", ".env", "e.py", "keep.log", "blob.bin"]
IGNORES = ["*.log", "build/", "!keep.log", "docs/*.md", "lib", "*.bin", ".env"]


def make_tree(root: Path, rng: random.Random) -> None:
    root.mkdir()
    for _ in range(rng.randint(3, 14)):
        rel = os.path.join(rng.choice(DIRS), rng.choice(NAMES))
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if rel.endswith(".bin") and rng.random() < 0.7:
            path.write_bytes(b"alpha\x00beta\n" * rng.randint(1, 3))
        else:
            path.write_text("".join(rng.choice(WORDS) + "\n"
                                    for _ in range(rng.randint(0, 6))), encoding="utf-8")
    for where in ("", "src"):
        if rng.random() < 0.6:
            (root / where).mkdir(parents=True, exist_ok=True)
            (root / where / ".gitignore").write_text(
                "".join(r + "\n" for r in rng.sample(IGNORES, rng.randint(1, 3))))


def mutate(root: Path, rng: random.Random) -> None:
    files = sorted(p for p in root.rglob("*") if p.is_file())
    for path in rng.sample(files, min(len(files), rng.randint(1, 3))):
        choice = rng.random()
        if choice < 0.4:
            with path.open("a", encoding="utf-8") as f:
                f.write(rng.choice(WORDS) + "\n")
        elif choice < 0.6:
            path.write_text(rng.choice(WORDS) + "\n", encoding="utf-8")  # maybe the same size
        else:
            path.unlink()
    new = root / rng.choice(DIRS) / rng.choice(NAMES)
    new.parent.mkdir(parents=True, exist_ok=True)
    new.write_text("alpha TODO\n", encoding="utf-8")
    if rng.random() < 0.5:
        (root / ".gitignore").write_text(rng.choice(IGNORES) + "\n")


CALLS: list[list[str]] = [
    ["grep_search", "--pattern", "alpha"],
    ["grep_search", "--pattern", "ALPHA", "-i", "--output-mode", "files_with_matches"],
    ["grep_search", "--pattern", "TODO|beta", "--output-mode", "count"],
    ["grep_search", "--pattern", "get_", "--glob", "*.py", "-C", "1", "--format", "text"],
    ["grep_search", "--pattern", "alpha", "--include-ignored", "--include-hidden"],
    ["grep_search", "--pattern", "a", "--head-limit", "3"],
    ["find_files_glob", "--pattern", "**/*.py"],
    ["find_files_glob", "--pattern", "*.md", "--format", "text"],
    ["list_directory", "--max-depth", "6"],
    ["list_directory", "--max-depth", "6", "--include-hidden", "--format", "text"],
    ["get_workspace_structure"],
    ["read_file", "--path", "src/a.py"],
    ["get_file_info", "--path", "src"],
    ["find_files", "--pattern", "a"],
    ["grep_search", "--pattern", "alpha", "--paths"],
]


def comparable(out: bytes) -> Any:
    """The output as compared: a JSON envelope without the engine a search names."""
    text = out.decode("utf-8", "replace")
    try:
        value = json.loads(text)
    except ValueError:
        return text
    if isinstance(value, dict) and isinstance(value.get("result"), dict):
        value["result"].pop("engine", None)
    return value


def own_process(root: Path, argv: list[str]) -> tuple[int, Any, str]:
    """The call as its own process runs it (``entry.run``, in this process)."""
    cwd = os.getcwd()
    os.chdir(root)
    try:
        done = run_inprocess(argv, env={"ZBTOOLS_SERVER": "off"})
    finally:
        os.chdir(cwd)
    return done.code, comparable(done.out.encode("utf-8")), done.err


def test_served_calls_answer_as_their_own_process_also_after_the_tree_changed(
        server: Served, tmp_path: Path) -> None:
    rng = random.Random(3208)  # fixed: every run checks the same trees (and CI never varies)
    roots = []
    for n in range(6):
        root = tmp_path / f"tree{n}"
        make_tree(root, rng)
        roots.append(root)
    time.sleep(SETTLE_SECONDS)
    compared = 0
    for root in roots:
        for round_ in range(2):
            for argv in CALLS:
                served = server.call(root, *argv)
                code, out, err = own_process(root, argv)
                assert (served.returncode, comparable(served.stdout),
                        served.stderr.decode()) == (code, out, err), (root, round_, argv)
                compared += 1
            if round_ == 0:
                mutate(root, random.Random(f"{root.name}"))
    status = server.status()
    assert status["served"] >= compared  # every call above was served, none ran alone
    assert compared == 6 * 2 * len(CALLS)


def test_arguments_on_stdin_and_a_subdirectory_as_the_working_directory(
        server: Served, tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "n.txt").write_text("one\ntwo\n")
    before = server.status()["served"]
    done = server.call(tmp_path / "sub", "read_file", stdin=b'{"path": "n.txt"}')
    assert done.returncode == 0, done
    assert json.loads(done.stdout)["result"]["content"] == "one\ntwo\n"
    missing = server.call(tmp_path, "read_file", "--path", "nope.txt")
    assert missing.returncode == 1
    assert json.loads(missing.stdout)["error"]["code"] == "not_found"
    quiet = server.call(tmp_path, "grep_search", "--pattern", "zzz", "--exit-status")
    assert quiet.returncode == 1
    assert server.status()["served"] == before + 3


# -- what the server declines (the call then runs in its own process) ---------------------------

def test_edits_help_and_command_words_run_in_their_own_process(server: Served,
                                                                tmp_path: Path) -> None:
    before = server.status()
    done = server.call(tmp_path, "write_file", "--path", "w.txt", "--content", "hi\n")
    assert done.returncode == 0, done
    assert (tmp_path / "w.txt").read_text() == "hi\n"
    helped = server.call(tmp_path, "grep_search", "--help")
    assert helped.returncode == 0 and b"pattern" in helped.stdout
    listed = server.call(tmp_path, "tools", "--format", "json")
    assert listed.returncode == 0
    after = server.status()
    assert after["served"] == before["served"]
    assert after["declined"] >= before["declined"] + 3


def test_a_busy_server_declines_and_the_second_call_runs_alone(server: Served,
                                                               tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("alpha\n")
    env = dict(server.env)
    # the first call's arguments come on a stdin kept open: the server waits on it, busy
    first = subprocess.Popen([sys.executable, "-m", "zbtools", "read_file"], cwd=tmp_path,
                             env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
    assert first.stdin is not None
    deadline = time.monotonic() + 10
    while not server.status()["busy"]:
        assert time.monotonic() < deadline, "the server never took the first call"
        time.sleep(0.05)
    second = server.call(tmp_path, "grep_search", "--pattern", "alpha")
    assert second.returncode == 0, second
    assert json.loads(second.stdout)["result"]["total_matches"] == 1
    out, err = first.communicate(b'{"path": "f.txt"}', timeout=30)
    assert first.returncode == 0, err
    assert json.loads(out)["result"]["content"] == "alpha\n"


def test_a_terminal_keeps_its_call(server: Served, tmp_path: Path) -> None:
    import pty

    (tmp_path / "t.txt").write_text("alpha\n")
    before = server.status()
    master, slave = pty.openpty()
    try:
        done = subprocess.run([sys.executable, "-m", "zbtools", "read_file", "t.txt"],
                              cwd=tmp_path, env=server.env, stdin=subprocess.DEVNULL,
                              stdout=slave, stderr=subprocess.PIPE, timeout=60, check=False)
    finally:
        os.close(slave)
        os.close(master)
    assert done.returncode == 0, done.stderr
    after = server.status()
    assert after["served"] == before["served"]
    assert after["declined"] == before["declined"] + 1  # the second ``--status``: not served


def raw_request(path: Path, ident: str, argv: list[str]) -> bytes:
    """What the server answers a hand-made request (this process's own streams)."""
    fields = [ident.encode(), b"18", b"utf-8", b"strict", b"utf-8", b"backslashreplace",
              str(len(argv)).encode(), *(a.encode() for a in argv)]
    cwd = os.open(".", os.O_RDONLY)
    null = os.open(os.devnull, os.O_RDWR)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(10)
        sock.connect(str(path))
        socket.send_fds(sock, [CALL + encode(fields)], [null, null, null, cwd])
        return sock.recv(1)
    finally:
        sock.close()
        os.close(cwd)
        os.close(null)


def test_another_installation_is_declined(server: Served) -> None:
    assert raw_request(server.socket, "some other zbtools", ["list_directory"]) == DECLINE


# -- safety and life ------------------------------------------------------------------------

def test_a_socket_in_a_directory_others_may_use_is_never_used(tmp_path: Path) -> None:
    home = tmp_path / "open"
    home.mkdir()
    os.chmod(home, 0o755)
    env = base_env(tmp_path)
    env["ZBTOOLS_SERVER"] = str(home / "s.sock")
    refused = subprocess.run([sys.executable, "-m", "zbtools", "serve"], env=env, cwd=tmp_path,
                             capture_output=True, timeout=60, check=False)
    assert refused.returncode == 1
    error = json.loads(refused.stdout)["error"]
    assert error["code"] == "permission_denied" and error["hint"]
    assert not (home / "s.sock").exists()
    # a listener planted there by somebody else is not handed anything
    planted = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    planted.bind(str(home / "s.sock"))
    planted.listen(1)
    planted.settimeout(0.2)
    try:
        (tmp_path / "a.txt").write_text("x\n")
        done = subprocess.run([sys.executable, "-m", "zbtools", "read_file", "a.txt"],
                              env=env, cwd=tmp_path, capture_output=True, timeout=60,
                              check=False)
        assert done.returncode == 0
        with pytest.raises(socket.timeout):
            planted.accept()
    finally:
        planted.close()


def test_one_server_per_socket_status_and_stop(tmp_path: Path) -> None:
    home = tmp_path / "life"
    home.mkdir(mode=0o700)
    first = Served(home)
    try:
        assert first.ready["serving"]["socket"] == str(first.socket)
        second = first.call(home, "serve")
        assert second.returncode == 1
        assert json.loads(second.stdout)["error"]["code"] == "already_exists"
        assert first.status()["pid"] == first.process.pid
        stopped = first.call(home, "serve", "--stop")
        assert json.loads(stopped.stdout)["stopped"] is True
        assert first.process.wait(10) == 0
        assert not first.socket.exists()
        gone = first.call(home, "serve", "--status")
        assert gone.returncode == 1 and json.loads(gone.stdout)["server"] is None
        (home / "a.txt").write_text("x\n")
        alone = first.call(home, "read_file", "a.txt")  # no server: the call runs alone
        assert alone.returncode == 0 and json.loads(alone.stdout)["ok"] is True
    finally:
        first.stop()


def test_a_caller_that_vanishes_leaves_the_server_serving(server: Served,
                                                          tmp_path: Path) -> None:
    (tmp_path / "v.txt").write_text("alpha\n")
    caller = subprocess.Popen([sys.executable, "-m", "zbtools", "read_file"], cwd=tmp_path,
                              env=server.env, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 10
    while not server.status()["busy"]:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    caller.kill()
    caller.wait()
    assert caller.stdin is not None and caller.stdout is not None and caller.stderr is not None
    caller.stdout.close()  # nobody reads the answer any more
    caller.stderr.close()
    caller.stdin.write(b'{"path": "v.txt"}')
    caller.stdin.close()
    deadline = time.monotonic() + 10
    while server.status()["busy"]:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    done = server.call(tmp_path, "read_file", "v.txt")
    assert done.returncode == 0 and json.loads(done.stdout)["result"]["content"] == "alpha\n"


def test_idle_server_ends_by_itself(tmp_path: Path) -> None:
    home = tmp_path / "idle"
    home.mkdir(mode=0o700)
    env = base_env(home)
    env["ZBTOOLS_SERVER"] = str(home / "s.sock")
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "zbtools", "serve", "--idle", "0.3"], env=env,
                          cwd=home, capture_output=True, timeout=30, check=False)
    assert done.returncode == 0, done
    assert time.monotonic() - started < 20
    assert not (home / "s.sock").exists()
    bad = subprocess.run([sys.executable, "-m", "zbtools", "serve", "--idle", "soon"], env=env,
                         cwd=home, capture_output=True, timeout=30, check=False)
    assert bad.returncode == 2
    assert json.loads(bad.stdout)["error"]["code"] == "usage_error"


def test_on_a_terminal_the_server_says_where_it_listens_in_words(tmp_path: Path) -> None:
    import pty

    home = tmp_path / "tty"
    home.mkdir(mode=0o700)
    env = base_env(home)
    env["ZBTOOLS_SERVER"] = str(home / "s.sock")
    master, slave = pty.openpty()
    try:
        done = subprocess.run([sys.executable, "-m", "zbtools", "serve", "--idle", "0.3"],
                              env=env, cwd=home, stdin=subprocess.DEVNULL, stdout=slave,
                              stderr=subprocess.PIPE, timeout=30, check=False)
        shown = os.read(master, 4096).decode()
    finally:
        os.close(slave)
        os.close(master)
    assert done.returncode == 0 and done.stderr == b""
    assert shown.startswith(f"zbtools serve: listening on {home / 's.sock'} (pid ")
    assert "Ctrl-C" in shown and "{" not in shown

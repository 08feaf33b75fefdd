"""Shared fixtures: a workspace, the in-process CLI, a real subprocess, and disk snapshots.

``cli(...)`` runs ``zbtools.entry.run`` in this process (fast, what most tests use);
``proc(...)`` runs ``python -m zbtools`` as a real subprocess (the contract as users see it).
Both return a ``Call`` with the exit code, stdout, stderr and the parsed JSON envelope.
``snapshot(path)`` (``from tests.conftest import snapshot``) records every entry below a directory
(type, mode, bytes, link text) so a test can assert that a failed call left the disk
byte-identical: ``before = snapshot(ws)`` ... ``assert snapshot(ws) == before``.
"""

from __future__ import annotations

import io
import json
import os
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from zbtools.dispatch import Streams
from zbtools.entry import run

REPO = Path(__file__).resolve().parent.parent


class Call:
    def __init__(self, code: int, out: str, err: str) -> None:
        self.code = code
        self.out = out
        self.err = err

    @property
    def json(self) -> dict[str, Any]:
        lines = [line for line in self.out.splitlines() if line.strip()]
        assert len(lines) == 1, f"expected one JSON line on stdout, got {self.out!r}"
        value = json.loads(lines[0])
        assert isinstance(value, dict)
        return value

    @property
    def result(self) -> dict[str, Any]:
        envelope = self.json
        assert envelope["ok"] is True, envelope
        result = envelope["result"]
        assert isinstance(result, dict)
        return result

    @property
    def error(self) -> dict[str, Any]:
        envelope = self.json
        assert envelope["ok"] is False, envelope
        error = envelope["error"]
        assert isinstance(error, dict)
        return error

    def __repr__(self) -> str:
        return f"Call(code={self.code}, out={self.out!r}, err={self.err!r})"


CliRunner = Callable[..., Call]


@pytest.fixture(autouse=True)
def _isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep state and config of every test inside its own temporary directory."""
    monkeypatch.setenv("ZBTOOLS_STATE_DIR", str(tmp_path / "state"))
    config = tmp_path / "config.toml"
    config.touch()  # an explicitly named config file must exist
    monkeypatch.setenv("ZBTOOLS_CONFIG", str(config))
    for var in list(os.environ):
        if var.startswith("ZBTOOLS_") and var not in ("ZBTOOLS_STATE_DIR", "ZBTOOLS_CONFIG"):
            monkeypatch.delenv(var)
    # no subprocess of a test hands its call to a `zbtools serve` the developer runs
    monkeypatch.setenv("ZBTOOLS_SERVER", "off")
    # each test starts as a new process would: no directory counts as swept of debris yet
    # (a deleted temporary directory's inode may come back for the next test's)
    from zbtools.core.files import tempnames

    monkeypatch.setattr(tempnames, "_swept", {})


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """An empty workspace directory, with a sibling ``outside`` directory holding a secret."""
    root = tmp_path / "ws"
    root.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("top secret\n")
    return root


def run_inprocess(argv: list[str], *, stdin: bytes | str | None = None,
                  env: dict[str, str] | None = None, workspace: Path | None = None,
                  stdout_isatty: bool = False) -> Call:
    out, err = io.StringIO(), io.StringIO()
    data = stdin.encode("utf-8") if isinstance(stdin, str) else stdin
    stream = io.BytesIO(data) if data is not None else None
    environment = dict(os.environ)
    if workspace is not None:
        environment["ZBTOOLS_WORKSPACE"] = str(workspace)
    environment.update(env or {})
    streams = Streams(stream, out, err, stdin_isatty=False, stdout_isatty=stdout_isatty)
    code = run(list(argv), streams, environment)
    return Call(code, out.getvalue(), err.getvalue())


@pytest.fixture
def cli(ws: Path) -> CliRunner:
    """Run zbtools in-process with ``ws`` as the workspace: ``cli("read_file", "--path", "a")``."""

    def call(*argv: str, stdin: bytes | str | dict[str, Any] | None = None,
             env: dict[str, str] | None = None) -> Call:
        if isinstance(stdin, dict):
            stdin = json.dumps(stdin)
        return run_inprocess(list(argv), stdin=stdin, env=env, workspace=ws)

    return call


@pytest.fixture
def proc(ws: Path) -> CliRunner:
    """Run ``python -m zbtools`` as a real subprocess in ``ws``."""

    def call(*argv: str, stdin: bytes | str | dict[str, Any] | None = None,
             env: dict[str, str] | None = None, timeout: float = 60) -> Call:
        if isinstance(stdin, dict):
            stdin = json.dumps(stdin)
        data = stdin.encode("utf-8") if isinstance(stdin, str) else stdin
        environment = dict(os.environ)
        environment["PYTHONPATH"] = str(REPO)
        environment.update(env or {})
        completed = subprocess.run(
            [sys.executable, "-m", "zbtools", *argv], input=data if data is not None else b"",
            capture_output=True, cwd=ws, env=environment, timeout=timeout, check=False)
        return Call(completed.returncode, completed.stdout.decode("utf-8", "replace"),
                    completed.stderr.decode("utf-8", "replace"))

    return call


def snapshot(root: Path) -> dict[str, tuple[str, int, bytes]]:
    """Every entry below ``root``: (type, permission bits, content or link text)."""
    out: dict[str, tuple[str, int, bytes]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, root)
            st = os.lstat(path)
            mode = stat.S_IMODE(st.st_mode)
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("link", mode, os.readlink(path).encode())
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = ("dir", mode, b"")
            elif stat.S_ISREG(st.st_mode):
                out[rel] = ("file", mode, Path(path).read_bytes())
            else:
                out[rel] = ("special", mode, b"")
    return out

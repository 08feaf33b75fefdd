"""Every rendering a person can see, on a real pseudo-terminal: each registered tool and each
dialect's, in each result shape (success, each documented error, truncated, with warnings,
empty), in the human format and in the text format at a terminal.

The calls (``tests/human_cases.py``) run in one interpreter whose stdin, stdout and stderr are a
pseudo-terminal, so rich and the text format see a real terminal. Each ends with the exit
status its outcome has in the contract (0, or the status of its error code), prints no
traceback and no ``internal_error``, and sends the terminal nothing it would act on but the
program's own colours: the files, names, commands and pages the cases use carry escape
sequences, C1 and bidi controls, backspaces and carriage returns.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from threading import Thread
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.human_cases import HOSTILE, MARK, cases, populate, terminal_leaks
from tests.surfaces.test_terminal import on_terminal
from zbtools.contract import ERROR_CODES

pytestmark = pytest.mark.slow  # every rendering on a pseudo-terminal

if TYPE_CHECKING:
    from zbtools.contract import ErrorCode

HOSTILE_PAGE = f"<html><head><title>t {HOSTILE}</title></head><body><p>{HOSTILE}</p></body>"


class Site:
    """A page server and a SearXNG stand-in on loopback, both with hostile text."""

    def __init__(self) -> None:
        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_args: Any) -> None:
                pass

            def do_GET(self) -> None:
                url = urlsplit(self.path)
                if url.path == "/page":
                    self.reply(200, "text/html; charset=utf-8", HOSTILE_PAGE.encode())
                elif url.path == "/hostile":
                    self.reply(200, "text/plain; charset=utf-8", f"x {HOSTILE}\n".encode())
                elif url.path == "/search":
                    query = parse_qs(url.query)["q"][0]
                    results = [] if query == "nothing" else [
                        {"title": f"result {i} {HOSTILE}", "url": f"https://e.org/{i}",
                         "content": f"snippet {HOSTILE}", "engine": "x"} for i in range(3)]
                    self.reply(200, "application/json", json.dumps(
                        {"query": query, "results": results, "answers": [],
                         "suggestions": [], "infoboxes": []}).encode())
                else:
                    self.reply(404, "text/plain", b"not here \x1b[2J")

            def reply(self, status: int, ctype: str, body: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.base = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def site() -> Iterator[Site]:
    server = Site()
    yield server
    server.close()


def expected_status(error: ErrorCode | None) -> int:
    return 0 if error is None else ERROR_CODES[error][0]


def test_every_tool_of_the_registry_and_of_each_dialect_has_cases() -> None:
    from zbtools.dialects import get_dialect
    from zbtools.registry import all_tools

    listed = cases("http://x", "http://y")
    outcomes: dict[str, set[bool]] = {}
    for case in listed:
        outcomes.setdefault(case.tool, set()).add(case.error is None)
    tools = {spec.name for spec in all_tools()}
    for dialect in ("claude", "codex", "anthropic", "fiz", "zkit"):
        tools |= {f"{dialect}/{t.name}" for t in get_dialect(dialect, {}).tools()}
    assert tools <= outcomes.keys(), sorted(tools - outcomes.keys())
    # every tool both succeeds and fails in the cases (stop_process --all cannot fail: still
    # listed with its unknown id)
    one_sided = sorted(t for t in tools if outcomes[t] != {True, False})
    assert not one_sided, one_sided
    assert {c.error for c in listed if c.error} <= ERROR_CODES.keys()


@pytest.mark.parametrize("fmt", ["human", "text"])
def test_every_rendering_on_a_terminal_exits_as_the_contract_says_and_shows_no_control(
        ws: Path, tmp_path: Path, site: Site, fmt: str) -> None:
    populate(ws)
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    listed = cases(site.base, site.base)
    plan = tmp_path / "plan.json"
    out = tmp_path / "codes.json"
    plan.write_text(json.dumps({"out": str(out), "calls": [
        [case.label, ["--format", fmt, *case.argv], case.env, case.keep_id]
        for case in listed]}))
    run = on_terminal(ws, str(plan), module="tests.human_cases", columns=120)
    assert run.code == 0, run.raw[-3000:]
    codes = json.loads(out.read_text())
    assert len(codes) == len(listed)
    sections = run.raw.split(b"@@case ")
    assert len(sections) == len(listed) + 2, len(sections)  # the text before, the end
    problems = []
    for index, (case, code) in enumerate(zip(listed, codes, strict=True)):
        shown = sections[index + 1]
        header = MARK.format(index=index, label=case.label).strip("\n")[len("@@case "):]
        assert shown.startswith(header.encode("utf-8", "surrogateescape")), shown[:200]
        name = f"{case.tool} {case.label!r}"
        if code != expected_status(case.error):
            problems.append(f"{name}: exit {code}, expected {expected_status(case.error)}: "
                            f"{shown[:600]!r}")
        if b"Traceback" in shown or b"internal_error" in shown:
            problems.append(f"{name}: {shown[:1500]!r}")
        if case.error is not None and f"error[{case.error}]".encode() not in shown:
            problems.append(f"{name}: no error[{case.error}] shown: {shown[:600]!r}")
        leaks = terminal_leaks(shown.split(b"\n", 1)[1])
        if leaks:
            problems.append(f"{name}: control characters reach the terminal: {leaks[:3]}")
    assert not problems, "\n".join(problems)
    assert b"^[[2J" in run.raw  # the hostile sequences were there, and shown
    assert (ws / "new2.txt").read_bytes() == HOSTILE.encode()  # shown visibly, written as is


class TerminalStream(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_debug_traceback_on_a_terminal_shows_the_control_characters_it_quotes(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from zbtools.dispatch import Streams
    from zbtools.entry import run
    from zbtools.toolspec import ToolSpec

    def broken(*_args: Any, **_kwargs: Any) -> Any:
        raise RuntimeError("a bug quoting \x1b[2J\x1b]0;t\x07")

    monkeypatch.setattr(ToolSpec, "call", broken)
    out, err = io.StringIO(), TerminalStream()
    streams = Streams(None, out, err, stdin_isatty=False, stdout_isatty=False,
                      stderr_isatty=True)
    code = run(["--debug", "read_file", "x"], streams, {**os.environ,
                                                        "ZBTOOLS_WORKSPACE": str(ws)})
    assert code == 4
    assert "Traceback" in err.getvalue() and "a bug quoting ^[[2J^[]0;t^G" in err.getvalue()
    assert "\x1b" not in err.getvalue()
    assert json.loads(out.getvalue())["error"]["code"] == "internal_error"

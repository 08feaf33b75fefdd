"""Every dialect's grep reads ripgrep's pattern syntax as rg does, without a warning.

Claude's ``Grep``, zkit's ``grep`` and fiz's ``grep`` all run grep_search, whose pattern syntax
is ripgrep's (docs/internals/search.md#pattern-syntax; the invariant against ``rg`` is in
tests/invariants/test_rust_regex.py). Here: each dialect's tool on the issue's own examples, in
process; one real subprocess with ``FutureWarning`` turned into an error; one MCP round trip.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CliRunner

TEXT = "The cat\nabc 123\nxyz\nlast\n"
# pattern -> the lines rg -n finds in TEXT
CASES = {r"\x{54}": [1], "[[:^digit:]]": [1, 2, 3, 4], "[a-z&&[^aeiou]]": [1, 2, 3, 4],
         r"last\z": [4], r"[[:digit:]]{3}\z": [2], r"\<ca": [1], r"(?i)t(?-i)HE": []}
CALLS: dict[str, tuple[str, Callable[[str], dict[str, Any]]]] = {  # dialect -> (tool, args)
    "claude": ("Grep", lambda p: {"pattern": p, "path": "f.txt", "output_mode": "content"}),
    "zkit": ("grep", lambda p: {"pattern": p, "path": "f.txt"}),
    "fiz": ("grep", lambda p: {"pattern": p, "dir": ".", "glob": "f.txt"}),
}


def lines(out: dict[str, Any]) -> list[int]:
    assert out["ok"], out
    return [m["line"] for m in out["result"]["matches"]]


@pytest.mark.parametrize("dialect", sorted(CALLS))
def test_each_dialect_reads_ripgrep_syntax(ws: Path, cli: CliRunner, dialect: str) -> None:
    (ws / "f.txt").write_text(TEXT, encoding="utf-8")
    tool, args = CALLS[dialect]
    for pattern, expected in CASES.items():
        call = cli("--dialect", dialect, tool, stdin=args(pattern))
        assert call.err == "", call.err
        assert lines(call.json) == expected, (dialect, pattern)


def test_unsupported_rust_syntax_is_a_regex_error(ws: Path, cli: CliRunner) -> None:
    (ws / "f.txt").write_text(TEXT, encoding="utf-8")
    out = cli("--dialect", "claude", "Grep", stdin={"pattern": "(?-u).", "path": "f.txt"}).json
    assert out["error"]["code"] == "regex_error"
    assert out["error"]["message"] and out["error"]["hint"]


def test_a_real_process_prints_no_future_warning(ws: Path, proc: CliRunner) -> None:
    (ws / "f.txt").write_text(TEXT, encoding="utf-8")
    call = proc("--dialect", "claude", "Grep", stdin={
        "pattern": "[a-z&&[^aeiou]][[:^digit:]]", "path": "f.txt", "output_mode": "content"},
        env={"PYTHONWARNINGS": "error::FutureWarning"})
    assert call.err == ""
    assert lines(call.json) == [1, 2, 3, 4]


@pytest.mark.slow
def test_over_mcp(ws: Path) -> None:
    pytest.importorskip("mcp")
    from mcp import Client

    from tests.surfaces.test_mcp import session, text_of

    (ws / "f.txt").write_text(TEXT, encoding="utf-8")

    async def body(client: Client) -> None:
        result = await client.call_tool("Grep", {"pattern": r"[[:digit:]]{3}\z",
                                                 "path": str(ws / "f.txt"),
                                                 "output_mode": "content"})
        assert result.is_error is False, text_of(result)
        assert "abc 123" in text_of(result) and "last" not in text_of(result)

    session(ws, body, "--dialect", "claude")

"""A session keeps a file's parse against its bytes (docs/internals/code.md#symbol-tools).

In one ``batch`` session, ``outline`` of a file, ``find_symbol`` and ``grep_search
--show-scope`` parse a file once while its bytes stay the same, and parse again on any other
bytes, even bytes of the same size written within the same timestamp tick; every answer equals
the one a fresh process gives.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CliRunner, run_inprocess
from zbtools.core.code import scopes, symbols, tagpool


def _session(ws: Path, requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    stdin = "".join(json.dumps({"id": i, **r}) + "\n" for i, r in enumerate(requests))
    call = run_inprocess(["batch"], stdin=stdin, workspace=ws)
    return [json.loads(line) for line in call.out.splitlines()]


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """How many times each kind of parse ran."""
    counts = {"tags": 0, "symbols": 0, "scopes": 0}

    def counted(kind: str, real: Any) -> Any:
        def run(*args: Any, **kwargs: Any) -> Any:
            counts[kind] += 1
            return real(*args, **kwargs)
        return run

    monkeypatch.setattr(tagpool, "file_tags", counted("tags", tagpool.file_tags))
    monkeypatch.setattr(symbols, "read_symbols", counted("symbols", symbols.read_symbols))
    monkeypatch.setattr(scopes, "scopes_of", counted("scopes", scopes.scopes_of))
    return counts


def test_the_same_bytes_are_parsed_once_per_session(ws: Path, parses: dict[str, int]) -> None:
    (ws / "a.py").write_text("class A:\n    def run(self):\n        return 1\n")
    answers = _session(ws, [
        {"tool": "outline", "args": {"path": "a.py"}},
        {"tool": "outline", "args": {"path": "a.py"}},
        {"tool": "find_symbol", "args": {"symbol": "A.run"}},
        {"tool": "find_symbol", "args": {"symbol": "run", "path": "a.py"}},
        {"tool": "grep_search", "args": {"pattern": "return", "show_scope": True}},
        {"tool": "grep_search", "args": {"pattern": "return", "show_scope": True}},
    ])
    assert all(a["ok"] for a in answers), answers
    assert parses == {"tags": 1, "symbols": 1, "scopes": 1}
    assert answers[0]["result"] == answers[1]["result"]
    assert answers[4]["result"]["matches"][0]["scope"]["qualname"] == "A.run"


def test_other_bytes_of_the_same_size_are_parsed_again(ws: Path, cli: CliRunner,
                                                       parses: dict[str, int]) -> None:
    """Same-size rewrites, all within one timestamp tick as far as the session can tell: each
    answer equals a fresh call's, and a version seen before (same bytes) is reused."""
    rng = random.Random(30)
    names = ["alpha", "bravo", "delta", "gamma"]
    versions = [f"def {a}():\n    pass\n\n\ndef {b}():\n    {a}()\n"
                for a in names for b in names if a != b]
    assert len({len(v) for v in versions}) == 1
    plan = [rng.choice(versions) for _ in range(12)]
    requests: list[dict[str, Any]] = []
    for text in plan:
        requests.append({"tool": "write_file", "args": {"path": "a.py", "content": text}})
        requests.append({"tool": "outline", "args": {"path": "a.py"}})
        requests.append({"tool": "find_symbol", "args": {"symbol": "pass", "path": "a.py"}})
    answers = _session(ws, requests)
    assert parses["tags"] == len(plan) - sum(plan[i] == plan[i - 1] for i in range(1, len(plan)))
    for i, text in enumerate(plan):
        outline = answers[3 * i + 1]["result"]
        (ws / "fresh.py").write_text(text)
        fresh = cli("outline", "--path", "fresh.py").result
        assert outline["definitions"] == fresh["definitions"], i

"""A multiline search finds what ``rg -U`` finds: a match may start on the line where the
previous one ended, and the lines shown are the lines the matches cover (generated texts
against ripgrep's JSON output; the python engine runs every multiline search)."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from tests.conftest import run_inprocess
from tests.invariants.budget import invariant, planted_bug_is_caught
from zbtools.core.search import find_rg

RG = find_rg(os.environ)
pytestmark = pytest.mark.skipif(RG is None, reason="needs rg (the ripgrep wheel brings it)")

PATTERNS = ["foo\\nbar", "o\\nb", "bar\\nfoo", "foo\\n", "\\nbar foo", "r\\n\\n?f"]
TOKENS = ["foo", "bar", " ", "\n", "foo\n", "bar\n", "x", "bar foo\n"]


def rg_lines(path: Path, pattern: str) -> tuple[set[int], set[int]]:
    """(the lines matches start on, every line a match covers), from ``rg -U --json``."""
    assert RG is not None
    done = subprocess.run([RG, "-U", "--json", "--no-config", pattern, str(path)],
                          capture_output=True, text=True, check=False)
    starts: set[int] = set()
    covered: set[int] = set()
    for line in done.stdout.splitlines():
        message = json.loads(line)
        if message["type"] != "match":
            continue
        data = message["data"]
        first, text = data["line_number"], data["lines"]["text"]
        covered.update(range(first, first + text.rstrip("\n").count("\n") + 1))
        for sub in data["submatches"]:
            starts.add(first + text.encode()[:sub["start"]].decode().count("\n"))
    return starts, covered


def zb_lines(root: Path, pattern: str) -> tuple[set[int], set[int]]:
    call = run_inprocess(["grep_search"], workspace=root, stdin=json.dumps(
        {"pattern": pattern, "multiline": True, "path": "t.txt", "head_limit": 0}))
    starts = {m["line"] for m in call.result["matches"]}
    covered = {m["line"] + i for m in call.result["matches"]
               for i in range(m["text"].count("\n") + 1)}
    return starts, covered


def check(text: str, pattern: str) -> None:
    with tempfile.TemporaryDirectory(prefix="zb-multiline-") as tmp:
        root = Path(tmp)
        (root / "t.txt").write_text(text)
        assert zb_lines(root, pattern) == rg_lines(root / "t.txt", pattern), (text, pattern)


def search() -> None:
    @invariant(examples=80)
    @example(text="foo\nbar foo\nbar\n", pattern="foo\\nbar")  # starts where one ended
    @given(text=st.lists(st.sampled_from(TOKENS), max_size=14).map("".join),
           pattern=st.sampled_from(PATTERNS))
    def lines_are_rgs(text: str, pattern: str) -> None:
        check(text, pattern)

    lines_are_rgs()


def test_multiline_matches_cover_rgs_lines() -> None:
    search()


def test_a_match_starting_where_the_previous_ended_is_found(tmp_path: Path) -> None:
    (tmp_path / "t.txt").write_text("foo\nbar foo\nbar\n")
    assert zb_lines(tmp_path, "foo\\nbar") == ({1, 2}, {1, 2, 3})


def test_a_planted_bug_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each search starting on the line after the previous match's last (the rule before)."""
    from zbtools.core.search import engine

    original = engine.Searcher.search_text

    def next_line_only(self: engine.Searcher, text: str, limit: int | None = None
                       ) -> list[engine.Hit]:
        hits = original(self, text, limit)
        kept: list[engine.Hit] = []
        for hit in hits:
            if kept and hit.line < kept[-1].line + len(kept[-1].lines):
                continue
            kept.append(hit)
        return kept

    monkeypatch.setattr(engine.Searcher, "search_text", next_line_only)
    planted_bug_is_caught(search)

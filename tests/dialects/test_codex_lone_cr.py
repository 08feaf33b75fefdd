"""Codex: a lone CR ends a line in a patch, and every other line keeps its ending.

Newer Codex reads a file's lines at LF, CRLF and a lone CR alike, so that in
``one\\r\\ntwo\\rthree\\nfour\\r\\n`` a patch changing ``three`` finds it and keeps every other
line's ending (docs/internals/matching.md#file-model). The case is written from that
description: Codex's scenario of it is not among the vendored ones
(tests/data/codex_scenarios/README.md). The invariant: a file of random lines and endings
(``\\n``, ``\\r\\n``, ``\\r``), one unique line changed by a patch, every other byte the same.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from tests.conftest import CliRunner
from tests.invariants.budget import invariant

MIXED = b"one\r\ntwo\rthree\nfour\r\n"


def envelope(old: str, new: str, context: tuple[str, ...] = ()) -> str:
    body = "".join(f" {line}\n" for line in context[:2]) + f"-{old}\n+{new}\n" + "".join(
        f" {line}\n" for line in context[2:])
    return f"*** Begin Patch\n*** Update File: f.txt\n@@\n{body}*** End Patch\n"


def test_preserves_mixed_line_endings(ws: Path, cli: CliRunner) -> None:
    (ws / "f.txt").write_bytes(MIXED)
    call = cli("--dialect", "codex", "apply_patch", stdin={
        "input": envelope("three", "THREE", ("one", "two", "four"))})
    assert call.code == 0, call
    assert (ws / "f.txt").read_bytes() == b"one\r\ntwo\rTHREE\nfour\r\n"


def test_a_unified_diff_reads_a_lone_cr_the_same_way(ws: Path, cli: CliRunner) -> None:
    (ws / "f.txt").write_bytes(MIXED)
    call = cli("apply_edit", stdin={"patch": "--- a/f.txt\n+++ b/f.txt\n@@ -2,2 +2,2 @@\n"
                                             " two\n-three\n+THREE\n"})
    assert call.code == 0, call
    assert (ws / "f.txt").read_bytes() == b"one\r\ntwo\rTHREE\nfour\r\n"


def test_an_old_text_edit_keeps_a_lone_cr_as_content(ws: Path, cli: CliRunner) -> None:
    """Substrings are not lines: ``two\\rthree`` is one line to an edit, found as it is."""
    (ws / "f.txt").write_bytes(MIXED)
    call = cli("apply_edit", stdin={"path": "f.txt", "old_text": "two\rthree",
                                    "new_text": "two\rTHREE"})
    assert call.code == 0, call
    assert (ws / "f.txt").read_bytes() == b"one\r\ntwo\rTHREE\nfour\r\n"


line = st.text(alphabet="abc xy", min_size=0, max_size=6)
ending = st.sampled_from(["\n", "\r\n", "\r"])


@invariant(examples=60)
@given(lines=st.lists(st.tuples(line, ending), min_size=1, max_size=8), pick=st.integers(0, 7))
def test_every_other_line_keeps_its_ending(ws: Path, cli: CliRunner,
                                           lines: list[tuple[str, str]], pick: int) -> None:
    i = pick % len(lines)
    target = lines[i][0]
    assume(target.strip() and target == target.strip())
    assume([text for text, _ in lines].count(target) == 1)
    original = "".join(text + end for text, end in lines)
    (ws / "f.txt").write_bytes(original.encode())
    call = cli("--dialect", "codex", "apply_patch",
               stdin=json.dumps({"input": envelope(target, "NEW")}))
    assert call.code == 0, call
    expected = "".join(("NEW" if k == i else text) + end for k, (text, end) in enumerate(lines))
    assert (ws / "f.txt").read_bytes() == expected.encode()


def test_over_a_real_subprocess(ws: Path, proc: CliRunner) -> None:
    (ws / "f.txt").write_bytes(MIXED)
    call = proc("--dialect", "codex", "apply_patch", stdin={
        "input": envelope("three", "THREE", ("one", "two", "four"))})
    assert call.code == 0, call
    assert (ws / "f.txt").read_bytes() == b"one\r\ntwo\rTHREE\nfour\r\n"


@pytest.mark.slow
def test_over_mcp(ws: Path) -> None:
    pytest.importorskip("mcp")
    from mcp import Client

    from tests.surfaces.test_mcp import session, text_of

    (ws / "f.txt").write_bytes(MIXED)

    async def body(client: Client) -> None:
        result = await client.call_tool("apply_patch", {"input": envelope("three", "THREE")})
        assert result.is_error is False, text_of(result)

    session(ws, body, "--dialect", "codex")
    assert (ws / "f.txt").read_bytes() == b"one\r\ntwo\rTHREE\nfour\r\n"

"""Errors quote what they were given, cut to a bounded length (``zbtools.contract.clip``).

Every surface builds its errors through ``ToolError``, so an oversized argument (a 5 MB path)
comes back as an error of a few kilobytes from the command line, ``batch`` and MCP alike, with
the head and the tail of what it quotes.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import run_inprocess
from zbtools.contract import QUOTE_LIMIT, ToolError, clip, error_envelope

BIG = 5_000_000
REPLY_MAX = 16_384  # bytes: a few quotes of QUOTE_LIMIT characters, and the envelope


@given(st.text(max_size=300), st.integers(min_value=16, max_value=200))
def test_clip_keeps_short_text_and_cuts_long_text_to_its_ends(text: str, limit: int) -> None:
    cut = clip(text, limit)
    if len(text) <= limit:
        assert cut == text
    else:
        assert len(cut) <= limit + 40  # the note of how much was cut
        head, _, rest = cut.partition("…[")
        count, _, tail = rest.partition(" characters cut]…")
        assert text.startswith(head) and text.endswith(tail)
        assert len(head) + int(count.replace(",", "")) + len(tail) == len(text)


def test_every_string_of_an_error_is_bounded() -> None:
    big = "p" * BIG
    error = ToolError("not_found", f"{big}: no such file", hint=f"try {big}",
                      details={"path": big, "problems": [{"value": big}], "count": 3})
    error.details["later"] = big  # details may grow after the error is made
    sent = json.dumps(error_envelope("read_file", error))
    assert len(sent) < 5 * (QUOTE_LIMIT + 100)  # five strings quote it
    out = error.to_json()
    assert out["message"].endswith(": no such file") and out["details"]["count"] == 3


def test_a_huge_path_gives_a_small_error_on_the_command_line(ws: Path) -> None:
    done = run_inprocess(["read_file"], stdin=json.dumps({"path": "x" * BIG}), workspace=ws)
    assert done.code != 0 and len(done.out.encode()) < REPLY_MAX
    error = json.loads(done.out)["error"]
    assert error["message"].startswith("x" * 100) and "characters cut" in error["message"]


@pytest.mark.slow  # the SDK's client and server, in memory
def test_a_huge_path_gives_a_small_error_through_mcp(ws: Path) -> None:
    from tests.surfaces.mcp_memory import in_memory

    [result] = in_memory(ws, [("read_file", {"path": "x" * BIG})])
    assert result.is_error is True
    assert isinstance(result.structured_content, dict)
    sent = result.model_dump_json(by_alias=True)
    assert len(sent.encode()) < REPLY_MAX, len(sent)

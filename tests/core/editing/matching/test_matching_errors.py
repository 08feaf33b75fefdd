"""zbtools.core.editing.matching.errors: the refusal every part raises."""

from __future__ import annotations

import pytest

from zbtools.core.editing.matching.errors import SNIPPET_CHARS, MatchError
from zbtools.core.editing.matching.filemodel import FileModel
from zbtools.core.editing.matching.ladder import locate
from zbtools.core.editing.matching.requests import Request


def test_a_refusal_reads_as_its_message_and_carries_code_hint_and_details() -> None:
    err = MatchError("no_match", "old_text was not found", hint="read it again",
                     details={"closest": None})
    assert str(err) == "old_text was not found"
    assert (err.code, err.message, err.hint, err.details) == (
        "no_match", "old_text was not found", "read it again", {"closest": None})


def test_refusals_without_details_do_not_share_one_details_dict() -> None:
    first, second = MatchError("no_change", "same"), MatchError("no_change", "same")
    first.details["added"] = True
    assert second.details == {}
    assert second.hint == ""


def test_quoted_file_lines_are_cut_at_snippet_chars() -> None:
    long_line = "x = " + "a" * 300
    model = FileModel(long_line + "\n")
    request = Request(long_line + "\n", "y\n")
    request.anchors = [f"1:{'0' * 12}"]
    with pytest.raises(MatchError) as caught:
        locate(model, request)
    assert caught.value.code == "stale_anchor"
    assert caught.value.details["current_text"] == long_line[:SNIPPET_CHARS]

"""``zbtools prompt``: Zaguán Blade's system-prompt snippet, generated from the registry.

The format is the one of docs/internals/sources.md#zblade.
"""

from __future__ import annotations

import json

import pytest

from tests.conftest import CliRunner
from zbtools.dialects import get_dialect
from zbtools.options import DIALECTS
from zbtools.registry import all_tools


def test_the_canonical_snippet_lists_every_tool_with_its_args(cli: CliRunner) -> None:
    call = cli("prompt")
    assert call.code == 0
    text = call.out
    assert text.startswith("# Available Tools\n\n")
    for spec in all_tools():
        assert f"**{spec.name}** - {spec.summary}" in text
    assert '  Args: {"path": "string", "offset": "integer, optional"' in text
    assert "<tool_call>\n{\"name\": \"tool_name\", \"arguments\": {...}}\n</tool_call>" in text


@pytest.mark.parametrize("dialect", DIALECTS)
def test_every_dialect_has_a_snippet(cli: CliRunner, dialect: str) -> None:
    text = cli("--dialect", dialect, "prompt").out
    for tool in get_dialect(dialect).tools():
        assert f"**{tool.name}** - " in text


def test_named_tools_and_json(cli: CliRunner) -> None:
    text = cli("--dialect", "fiz", "prompt", "read", "edit").out
    assert "**read**" in text and "**edit**" in text and "**bash**" not in text
    assert '"edits": "array of object {oldText: string, newText: string}, optional"' in text
    envelope = json.loads(cli("--json", "--dialect", "claude", "prompt").out)
    assert envelope["ok"] and envelope["result"]["dialect"] == "claude"
    assert "**Read**" in envelope["result"]["prompt"]
    assert cli("prompt", "nope").error["code"] == "unknown_tool"

"""OpenAI Codex's own apply_patch scenarios, run through the ``codex`` dialect's apply_patch.

Each directory of ``tests/data/codex_scenarios/`` (vendored from openai/codex with its licence;
see the README there) is one case: ``input/`` (the tree before), ``patch.txt`` and ``expected/``
(the tree after; for a patch Codex rejects, the input unchanged). Every scenario must leave
exactly the expected tree, or be listed in ``DEPARTURES`` with the reason, which
docs/dialects.md ("Where a dialect departs") documents; a departure must still depart (a fixed
one is taken off the list).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.conftest import run_inprocess

SCENARIOS = Path(__file__).resolve().parents[1] / "data" / "codex_scenarios"

# scenario -> what zbtools does instead (documented in docs/dialects.md)
DEPARTURES: dict[str, str] = {
    "010_move_overwrites_existing_destination":
        "*** Move to: onto an existing file is refused (already_exists)",
    "011_add_overwrites_existing_file":
        "*** Add File: over an existing file is refused (already_exists)",
    "015_failure_after_partial_success_leaves_changes":
        "a patch is all or nothing: nothing is created when a later section fails",
    "016_pure_addition_update_chunk":
        "a hunk of added lines only, with neither context nor @@ scope, is refused "
        "(anchor_required) instead of being appended at the end of the file",
}


def _tree(root: Path) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    if not root.is_dir():
        return out
    for folder, _, files in os.walk(root):
        for name in files:
            path = Path(folder) / name
            out[path.relative_to(root).as_posix()] = path.read_bytes()
    return out


def _names() -> list[str]:
    return sorted(p.name for p in SCENARIOS.iterdir() if (p / "patch.txt").is_file())


def test_every_scenario_is_vendored_with_its_licence() -> None:
    assert (SCENARIOS / "LICENSE").read_text().startswith(" " * 33 + "Apache License")
    assert "openai/codex" in (SCENARIOS / "README.md").read_text()
    assert len(_names()) >= 22
    assert set(DEPARTURES) <= set(_names())


@pytest.mark.parametrize("name", _names())
def test_codex_scenario(name: str, tmp_path: Path) -> None:
    case = SCENARIOS / name
    ws = tmp_path / "ws"
    if (case / "input").is_dir():
        shutil.copytree(case / "input", ws)
    else:
        ws.mkdir()
    patch = (case / "patch.txt").read_text(encoding="utf-8")
    call = run_inprocess(["--dialect", "codex", "apply_patch"],
                         stdin=json.dumps({"input": patch}), workspace=ws)
    expected = _tree(case / "expected")
    got = _tree(ws)
    if name in DEPARTURES:
        assert got != expected, f"{name} now behaves as Codex: take it off DEPARTURES"
        assert got == _tree(case / "input"), (name, call)  # refused, and nothing changed
        assert call.json["ok"] is False
        return
    assert got == expected, (name, call.out)

"""A dialect's promises hold whatever name reaches the engine (docs/dialects.md).

* Create-only writes (zkit ``write``, Anthropic ``create``): for every dialect with the rule and
  every name its lookup resolves (its own tools, every canonical name and alias, and each in
  upper case), a call trying to replace an existing file leaves the file's bytes in place: the
  write, copy and move forms are refused byte-identical; a tool that edits (``edit``,
  ``write_append``...) keeps the old text inside the new, as its documentation says.
* MCP offers and accepts only the dialect's own tools.
* Names fold case, canonical ones too (``Bash`` reaches ``bash``), and a dialect's own tool wins
  over a canonical name spelled the same but for case.

Each promise over ``batch`` in-process (one request per name), once through a real subprocess
and once over an MCP round trip.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CliRunner, run_inprocess
from zbtools.dialects import get_dialect
from zbtools.options import DIALECTS

OLD = b"old text\r\nkeep\n"


def create_only_dialects() -> list[str]:
    return [name for name in DIALECTS
            if any(rule.name == "create_only" for rule in get_dialect(name, {}).rules)]


def every_name(dialect: str) -> list[str]:
    """Every name the dialect's lookup resolves: its own, the canonical ones, each upper too."""
    from zbtools.registry import all_tools

    d = get_dialect(dialect, {})
    names = {n for t in d.tools() for n in (t.name, *t.aliases)}
    names |= {n for spec in all_tools() for n in spec.names}
    names |= {n.upper() for n in names}
    resolved = sorted(n for n in names if d.lookup(n) is not None)
    assert len(resolved) == len(names)
    return resolved


def attempts(target: str, source: str) -> list[dict[str, Any]]:
    """Argument sets that replace ``target`` whole, in each way a tool may spell it."""
    new = "NEW\n"
    add = f"*** Begin Patch\n*** Add File: {target}\n+NEW\n*** End Patch\n"
    diff = f"--- /dev/null\n+++ b/{target}\n@@ -0,0 +1 @@\n+NEW\n"
    return [
        {"path": target, "content": new},
        {"path": target, "content": new, "overwrite": True},
        {"file_path": target, "content": new},
        {"file_path": target, "content": new, "overwrite": True},
        {"absolute_path": target, "content": new},
        {"command": "create", "path": target, "file_text": new},
        {"command": "create", "path": target, "file_text": new, "overwrite": True},
        {"source": source, "destination": target, "overwrite": True},
        {"patch": add}, {"patch": diff}, {"input": add},
    ]


@pytest.mark.parametrize("dialect", create_only_dialects())
def test_no_name_replaces_a_file_in_a_create_only_dialect(ws: Path, cli: CliRunner,
                                                          dialect: str) -> None:
    names = every_name(dialect)
    requests = []
    for i, name in enumerate(names):
        (ws / f"t{i}.txt").write_bytes(OLD)
        (ws / f"s{i}.txt").write_bytes(b"source\n")
        for j, args in enumerate(attempts(f"t{i}.txt", f"s{i}.txt")):
            requests.append({"id": [i, j], "tool": name, "args": args})
    call = cli("--dialect", dialect, "batch",
               stdin="".join(json.dumps(r) + "\n" for r in requests))
    out = [json.loads(line) for line in call.out.splitlines()]
    assert len(out) == len(requests)
    replacing = {"write_file", "copy_file", "move_file"}
    for i, name in enumerate(names):
        data = (ws / f"t{i}.txt").read_bytes()
        tool = get_dialect(dialect, {}).lookup(name)
        assert tool is not None
        if replacing & set(tool.targets) and tool.spec.name != "write_append":
            assert data == OLD, f"{name} replaced t{i}.txt: {data!r}"
        else:  # an editing tool: what it changes keeps the file's text
            assert OLD.replace(b"\r\n", b"\n") in data.replace(b"\r\n", b"\n"), (name, data)
    refusals = [o["error"] for o in out if not o["ok"] and o["error"]["code"] == "already_exists"]
    assert refusals, "no overwrite was even attempted"
    assert any(f"the {dialect} dialect never replaces an existing file" in error["message"]
               for error in refusals)
    for error in refusals:  # never advice the dialect refuses to follow
        assert "overwrite: true" not in error["hint"], error


def test_a_script_with_a_dialect_set_keeps_its_canonical_reads(ws: Path) -> None:
    """A real subprocess with ZBTOOLS_DIALECT=zkit: read_file works, write_file refuses."""
    import subprocess
    import sys

    from tests.conftest import REPO

    (ws / "f.txt").write_bytes(OLD)
    env = dict(os.environ, ZBTOOLS_DIALECT="zkit", PYTHONPATH=str(REPO))

    def zbtools(*argv: str) -> dict[str, Any]:
        done = subprocess.run([sys.executable, "-m", "zbtools", *argv], cwd=ws, env=env,
                              capture_output=True, timeout=30, check=False)
        value: dict[str, Any] = json.loads(done.stdout)
        return value

    assert zbtools("read_file", "--path", "f.txt")["result"]["content"] == "old text\r\nkeep\n"
    refused = zbtools("write_file", "--path", "f.txt", "--content", "NEW", "--overwrite", "true")
    assert refused["error"]["code"] == "already_exists"
    assert "edit" in refused["error"]["hint"]
    assert (ws / "f.txt").read_bytes() == OLD
    assert zbtools("Create_File", "--path", "g.txt", "--content", "new\n")["ok"] is True


def test_canonical_writers_overwrite_where_the_dialect_has_no_such_rule(ws: Path,
                                                                       cli: CliRunner) -> None:
    (ws / "f.txt").write_bytes(OLD)
    assert cli("--dialect", "fiz", "write_file", "--path", "f.txt", "--content", "x").code == 0
    assert (ws / "f.txt").read_bytes() == b"x"


# ---------------------------------------------------------------------------------------------
# Names fold case


def test_canonical_names_are_lower_case_so_folding_is_unambiguous() -> None:
    from zbtools.registry import all_tools

    for spec in all_tools():
        for name in spec.names:
            assert name == name.lower() and "-" not in name, name


@pytest.mark.parametrize("dialect", DIALECTS)
def test_every_name_resolves_the_same_in_any_case(dialect: str) -> None:
    from zbtools.registry import all_tools, fold_name

    d = get_dialect(dialect, {})
    own: dict[str, str] = {}
    for tool in d.tools():
        for name in (tool.name, *tool.aliases):
            # two own names that fold together would make a lookup depend on spelling
            assert own.setdefault(fold_name(name), tool.name) == tool.name, name
            for variant in (name.upper(), name.lower(), name.swapcase()):
                found = d.lookup(variant, own_only=True)
                assert found is not None and found.name == tool.name, (variant, found)
    for spec in all_tools():
        for name in spec.names:
            for variant in (name.upper(), name.title(), name.replace("_", "-")):
                found = d.lookup(variant)
                assert found is not None, variant
                if fold_name(name) in own:  # the dialect's own tool wins (docs/dialects.md)
                    assert found.name == own[fold_name(name)]
                elif d.name == "zblade" or d.lookup(name, own_only=True) is None:
                    assert found.spec.name == spec.name, (variant, found)


def test_case_folded_names_from_the_command_line_and_batch(ws: Path, cli: CliRunner) -> None:
    (ws / "a.txt").write_text("alpha\n")
    assert cli("Bash", "--command", "echo hi").result["stdout"] == "hi\n"
    assert cli("READ_FILE", "--path", "a.txt").result["content"] == "alpha\n"
    assert cli("Read-File", "--path", "a.txt").result["content"] == "alpha\n"
    # the dialect's own tool wins over the canonical alias spelled the same but for case
    fiz = cli("--dialect", "fiz", "READ", "--path", "a.txt", "--offset", "0")
    assert fiz.json["tool"] == "read" and fiz.result["start_line"] == 1
    grep = cli("--dialect", "claude", "grep", stdin={"pattern": "alpha"})
    assert grep.json["tool"] == "Grep" and grep.result["files"] == ["a.txt"]
    out = [json.loads(line) for line in cli("batch", stdin=json.dumps(
        {"tool": "LIST_DIR", "args": {"path": "."}}) + "\n" + json.dumps(
        {"tool": "Read_File", "args": {"path": "a.txt"}}) + "\n").out.splitlines()]
    assert [o["tool"] for o in out] == ["list_directory", "read_file"]
    assert all(o["ok"] for o in out)


def test_case_folded_name_in_a_real_subprocess(ws: Path, proc: CliRunner) -> None:
    (ws / "a.txt").write_text("alpha\n")
    assert proc("READ_FILE", "--path", "a.txt").result["content"] == "alpha\n"


def test_unknown_names_stay_unknown(ws: Path) -> None:
    call = run_inprocess(["Bashh", "--command", "ls"], workspace=ws)
    assert call.error["code"] == "unknown_tool"

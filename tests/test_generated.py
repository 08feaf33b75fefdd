"""Generated files never drift, and every registered tool is complete."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import REPO
from zbtools import devgen, registry
from zbtools.entry import VALUE_OPTIONS

TOOLS = registry.all_tools()


def test_generated_files_are_up_to_date() -> None:
    for path, content in devgen.outputs().items():
        assert Path(path).read_text(encoding="utf-8") == content, (
            f"{path} is stale: run python -m zbtools.devgen")
    assert devgen.main(["--check"]) == 0


def test_the_index_maps_every_name_and_alias_to_its_module() -> None:
    from zbtools.tools._index import NAMES

    assert registry.name_index() == NAMES
    for spec in TOOLS:
        for name in spec.names:
            found = registry.find(name)
            assert found is not None and found.name == spec.name


def test_a_stale_index_costs_time_not_correctness(monkeypatch: pytest.MonkeyPatch) -> None:
    from zbtools.tools import _index

    monkeypatch.setattr(_index, "NAMES", {})
    found = registry.find("create_file")
    assert found is not None and found.name == "write_file"
    assert registry.find("no_such_tool") is None
    assert registry.find("../etc/passwd") is None


@pytest.mark.parametrize("spec", TOOLS, ids=lambda s: s.name)
def test_every_tool_is_documented_and_declared(spec: registry.ToolSpec) -> None:
    assert spec.summary and spec.summary.endswith(".")
    assert "ailure modes" in spec.details, "the docstring must state its failure modes"
    # Tool flags shadow the output switches (--text, --json, --human) after the tool name, but
    # these global options must stay reachable everywhere.
    reserved = {o.lstrip("-").replace("-", "_") for o in VALUE_OPTIONS} | {
        "help", "version", "h", "w", "debug"}
    for name, field in spec.params.fields().items():
        assert field.help, f"{spec.name}.{name} has no help"
        assert field.type is not None
        for spelling in field.names:
            assert spelling not in reserved, (
                f"{spec.name}: parameter {spelling} collides with a global option")
    for name, field in spec.result.fields().items():
        assert field.help, f"{spec.name} result field {name} has no help"


def test_the_readme_documents_every_tool_and_error_code() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    for spec in TOOLS:
        assert f"### `{spec.name}`" in readme
    from zbtools.contract import ERROR_CODES

    for code in ERROR_CODES:
        assert f"`{code}`" in readme


def test_ci_runs_the_readme_test_command_verbatim() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```sh\n(.*?)\n```", readme, flags=re.S)
    quick_start = [b for b in blocks if b.startswith("python3 -m venv")]
    assert len(quick_start) == 2, "the quick start is two commands"
    test_command = quick_start[1]
    assert "pytest" in test_command
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert f'TEST_COMMAND="{test_command}"' in ci
    assert "-eq 5" in ci, "CI must treat pytest's exit code 5 (no tests) as a failure"
    assert "read_file --path README.md" in quick_start[0]

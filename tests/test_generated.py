"""Generated files never drift, and every registered tool is complete."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import REPO, CliRunner
from zbtools import devgen, registry
from zbtools.dispatch import VALUE_OPTIONS
from zbtools.toolspec import ToolSpec

TOOLS = registry.all_tools()


def test_generated_files_are_up_to_date() -> None:
    for path, content in devgen.outputs().items():
        assert Path(path).read_text(encoding="utf-8") == content, (
            f"{path} is stale: run python -m zbtools.devgen")
    assert devgen.main(["--check"]) == 0


def test_the_index_maps_every_name_and_alias_to_its_module() -> None:
    from zbtools.toolindex import NAMES

    assert registry.name_index() == NAMES
    for spec in TOOLS:
        for name in spec.names:
            found = registry.find(name)
            assert found is not None and found.name == spec.name


def test_a_stale_index_costs_time_not_correctness(monkeypatch: pytest.MonkeyPatch) -> None:
    from zbtools import toolindex

    monkeypatch.setattr(toolindex, "NAMES", {})
    found = registry.find("create_file")
    assert found is not None and found.name == "write_file"
    assert registry.find("no_such_tool") is None
    assert registry.find("../etc/passwd") is None


@pytest.mark.parametrize("spec", TOOLS, ids=lambda s: s.name)
def test_every_tool_is_documented_and_declared(spec: ToolSpec) -> None:
    assert spec.summary and spec.summary.endswith(".")
    assert "ailure modes" in spec.details, "the docstring must state its failure modes"
    # Tool flags shadow the output switches (--text, --json, --human) after the tool name, but
    # these global options must stay reachable everywhere. A one-letter flag may shadow a
    # global option's letter after the tool's name (grep_search -w: whole words, as rg), which
    # is warned about when a directory follows it (tests/test_shell_rg_flags.py).
    reserved = {o.lstrip("-").replace("-", "_") for o in VALUE_OPTIONS
                if o.startswith("--")} | {"help", "version", "h", "debug"}
    for name, field in spec.params.fields().items():
        assert field.help, f"{spec.name}.{name} has no help"
        assert field.type is not None
        for spelling in field.names:
            assert spelling not in reserved, (
                f"{spec.name}: parameter {spelling} collides with a global option")
    for name, field in spec.result.fields().items():
        assert field.help, f"{spec.name} result field {name} has no help"


def test_the_docs_document_every_tool_and_error_code() -> None:
    """The tools reference (docs/tools.md) has a section per tool, the contract page
    (docs/contract.md) every error code; the README links both."""
    reference = (REPO / "docs" / "tools.md").read_text(encoding="utf-8")
    for spec in TOOLS:
        assert re.search(rf"^## `{spec.name}`", reference, flags=re.M), spec.name
    from zbtools.contract import ERROR_CODES

    contract = (REPO / "docs" / "contract.md").read_text(encoding="utf-8")
    for code, (status, _meaning) in ERROR_CODES.items():
        assert f"| `{code}` | {status} |" in contract, code
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "(docs/tools.md)" in readme and "(docs/contract.md)" in readme


def test_devgen_refuses_a_page_without_its_markers() -> None:
    page = (REPO / "docs" / "contract.md").read_text(encoding="utf-8")
    assert devgen.render_doc("contract.md", page) == page
    stripped = page.replace("<!-- errors:end -->", "")
    with pytest.raises(ValueError, match=r"docs/contract\.md: missing or misplaced markers"):
        devgen.render_doc("contract.md", stripped)
    assert set(devgen.DOC_BLOCKS) <= {p.name for p in (REPO / "docs").glob("*.md")}
    written = {Path(p).relative_to(REPO).as_posix() for p in devgen.outputs()}
    assert {"docs/tools.md", "docs/contract.md"} <= written
    assert "README.md" not in written, "the README has no generated blocks"


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


# ---- completions, man page, wheel ------------------------------------------------------------


def test_check_reports_drift_and_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    stale = tmp_path / "completions" / "zbtools.bash"
    stale.parent.mkdir()
    stale.write_text("old\n")
    missing = tmp_path / "man" / "zbtools.1"
    monkeypatch.setattr(devgen, "ROOT", str(tmp_path))
    monkeypatch.setattr(devgen, "outputs", lambda: {str(stale): "new\n", str(missing): "page\n"})
    assert devgen.main(["--check"]) == 1
    assert "completions/zbtools.bash" in capsys.readouterr().out
    assert stale.read_text() == "old\n" and not missing.exists()
    assert devgen.main([]) == 0
    assert stale.read_text() == "new\n" and missing.read_text() == "page\n"
    assert devgen.main(["--check"]) == 0


def test_the_man_page_date_is_reproducible(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    page = devgen.render_man()
    assert page == devgen.render_man(), "two renderings differ"
    th = next(line for line in page.splitlines() if line.startswith(".TH "))
    from zbtools import __version__

    assert th == f'.TH "zbtools" "1" "" "zbtools {__version__}" "zbtools manual"'
    assert "Docutils 0." not in page, "the docutils version must not be part of the page"
    dated = devgen.render_man({"SOURCE_DATE_EPOCH": "1700000000"})
    assert '.TH "zbtools" "1" "2023-11-14" ' in dated
    # a packager's SOURCE_DATE_EPOCH is not drift: --check ignores the date of the .TH line
    man = tmp_path / "zbtools.1"
    man.write_text(dated)
    monkeypatch.setattr(devgen, "MAN_PATH", str(man))
    monkeypatch.setattr(devgen, "ROOT", str(tmp_path))
    monkeypatch.setattr(devgen, "outputs", lambda: {str(man): page})
    assert devgen.main(["--check"]) == 0
    man.write_text(dated.replace("read_file", "read_files"))
    assert devgen.main(["--check"]) == 1


@pytest.mark.parametrize("shell,name", sorted(devgen.COMPLETION_FILES.items()))
def test_completion_scripts_come_from_typer(shell: str, name: str) -> None:
    script = (REPO / "completions" / name).read_text(encoding="utf-8")
    assert f"_ZBTOOLS_COMPLETE=complete_{shell}" in script
    assert script == devgen.render_completion(shell)


def _shim(tmp_path: Path) -> Path:
    """A ``zbtools`` on PATH that runs this checkout with this interpreter."""
    import sys

    bindir = tmp_path / "bin"
    bindir.mkdir()
    shim = bindir / "zbtools"
    shim.write_text(f"#!/bin/sh\nPYTHONPATH={str(REPO)!r} exec {sys.executable!r} -m zbtools "
                    '"$@"\n')
    shim.chmod(0o755)
    return bindir


def test_bash_completion_offers_tools_and_flags(tmp_path: Path) -> None:
    import os
    import shutil
    import subprocess

    if shutil.which("bash") is None:
        pytest.skip("no bash")
    script = REPO / "completions" / "zbtools.bash"
    probe = (f"source {str(script)!r}\n"
             "COMP_WORDS=(zbtools read_f); COMP_CWORD=1; _zbtools_completion zbtools\n"
             'printf "%s\\n" "${COMPREPLY[@]}"; echo ---\n'
             "COMP_WORDS=(zbtools read_file --file-p); COMP_CWORD=2; _zbtools_completion zbtools\n"
             'printf "%s\\n" "${COMPREPLY[@]}"\n')
    env = dict(os.environ, PATH=f"{_shim(tmp_path)}:{os.environ.get('PATH', '')}")
    done = subprocess.run(["bash", "--norc", "--noprofile", "-c", probe], env=env,
                          capture_output=True, text=True, timeout=60, check=True)
    tools, flags = done.stdout.split("---\n")
    assert tools.split() == ["read_file", "read_file_range"]
    assert flags.split() == ["--file-path"]


def test_the_wheel_ships_man_page_and_completions(tmp_path: Path) -> None:
    import subprocess
    import sys
    import tomllib
    import zipfile

    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    shared = config["tool"]["hatch"]["build"]["targets"]["wheel"]["shared-data"]
    expected = {
        "man/zbtools.1": "share/man/man1/zbtools.1",
        "completions/zbtools.bash": "share/bash-completion/completions/zbtools",
        "completions/_zbtools": "share/zsh/site-functions/_zbtools",
        "completions/zbtools.fish": "share/fish/vendor_completions.d/zbtools.fish",
    }
    assert shared == expected
    sdist = config["tool"]["hatch"]["build"]["targets"]["sdist"]["include"]
    assert "man" in sdist and "completions" in sdist
    assert "docs" in sdist and "CONTRIBUTING.md" in sdist
    pytest.importorskip("hatchling", reason="the dev extra brings hatchling")
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps",
                           "--no-build-isolation", "--no-index", "-q", "-w", str(tmp_path),
                           str(REPO)], check=False, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    (wheel,) = tmp_path.glob("zbtools-*.whl")
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        data = {n.split(".data/data/", 1)[1]: n for n in names if ".data/data/" in n}
        assert set(data) == set(expected.values())
        for source, target in expected.items():
            assert zf.read(data[target]) == (REPO / source).read_bytes(), target


def test_the_committed_schemas_are_what_the_schema_command_prints(cli: CliRunner) -> None:
    import json as _json

    from zbtools.dialects.definitions import FORMATS
    from zbtools.options import DIALECTS

    folder = REPO / "schemas"
    assert sorted(p.name for p in folder.iterdir()) == sorted(DIALECTS)
    for dialect in DIALECTS:
        assert sorted(p.name for p in (folder / dialect).iterdir()) == sorted(
            f"{fmt}.json" for fmt in FORMATS)
    printed = cli("--dialect", "fiz", "schema", "--format", "openai-strict").out
    assert _json.loads((folder / "fiz" / "openai-strict.json").read_text()) == \
        _json.loads(printed)

"""Adding a tool is one new file under ``zbtools/tools/`` plus ``python -m zbtools.devgen``.

A copy of the package gets a throwaway tool, ``echo_words``, as a single new module; devgen is
run in the copy; then the copy's program is asked, in fresh processes, for the tool through every
surface. Nothing else is edited by hand, and devgen changes exactly the generated files that
CONTRIBUTING.md lists.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

THROWAWAY = '''"""Echo the words given, joined by one space (a throwaway tool of the test suite).

Failure modes: ``invalid_arguments`` (no words).
"""

from __future__ import annotations

from zbtools.core.call.args import Struct, field
from zbtools.toolspec import ToolSpec

TYPE_CHECKING = False
if TYPE_CHECKING:
    from zbtools.core.call.context import Context


class Params(Struct):
    words: list[str] = field(help="The words to echo", aliases=("w",))
    upper: bool = field(default=False, help="Upper-case them")


class Result(Struct):
    text: str = field(help="The words, joined by one space")


def run(params: Params, ctx: Context) -> Result:
    text = " ".join(params.words)
    return Result(text=text.upper() if params.upper else text)


TOOL = ToolSpec(name="echo_words", doc=__doc__, params=Params, result=Result, run=run,
                aliases=("say",), read_only=True, idempotent=True, parallel_safe=True)
'''

# What `python -m zbtools.devgen` rewrites when a canonical tool is added (CONTRIBUTING.md).
GENERATED = ["zbtools/toolindex.py", "man/zbtools.1",
             *(f"schemas/zblade/{fmt}.json"
               for fmt in ("jsonschema", "anthropic", "openai", "openai-strict", "mcp"))]
TOOL_REFERENCE = "docs/tools.md" if (REPO / "docs" / "tools.md").exists() else "README.md"


def digest(root: Path) -> dict[str, str]:
    out = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            out[str(path.relative_to(root))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


@pytest.fixture(scope="module")
def copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("repo")
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in ("zbtools", "man", "completions", "schemas", "docs"):
        if (REPO / name).exists():
            shutil.copytree(REPO / name, root / name, ignore=ignore)
    for name in ("README.md", "CONTRIBUTING.md", "pyproject.toml"):
        if (REPO / name).exists():
            shutil.copy2(REPO / name, root / name)
    return root


def program(root: Path, *argv: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(root), "ZBTOOLS_WORKSPACE": str(root)}
    env.pop("ZBTOOLS_DIALECT", None)
    return subprocess.run([sys.executable, *argv], input=stdin, capture_output=True, text=True,
                          check=False, env=env, cwd=root, timeout=120)


@pytest.fixture(scope="module")
def added(copy: Path) -> tuple[Path, set[str]]:
    """The copy with the tool file added and devgen run: (root, the files devgen changed)."""
    before = digest(copy)
    (copy / "zbtools" / "tools" / "echo_words.py").write_text(THROWAWAY, encoding="utf-8")
    gen = program(copy, "-m", "zbtools.devgen")
    assert gen.returncode == 0, gen.stdout + gen.stderr
    after = digest(copy)
    changed = {p for p in after if before.get(p) != after[p]} - {"zbtools/tools/echo_words.py"}
    return copy, changed


def test_devgen_changes_exactly_the_generated_files(added: tuple[Path, set[str]]) -> None:
    _, changed = added
    assert changed == {*GENERATED, TOOL_REFERENCE}


def test_after_devgen_the_copy_has_no_drift(added: tuple[Path, set[str]]) -> None:
    root, _ = added
    check = program(root, "-m", "zbtools.devgen", "--check")
    assert check.returncode == 0, check.stdout + check.stderr


def test_the_new_tool_runs_by_name_alias_flags_and_stdin(added: tuple[Path, set[str]]) -> None:
    root, _ = added
    by_flags = program(root, "-m", "zbtools", "echo_words", "--words", '["a", "b"]', "--upper")
    assert json.loads(by_flags.stdout)["result"] == {"text": "A B"}, by_flags.stderr
    by_alias = program(root, "-m", "zbtools", "say", stdin='{"w": ["hi"]}')
    envelope = json.loads(by_alias.stdout)
    assert (envelope["tool"], envelope["result"]) == ("echo_words", {"text": "hi"})
    missing = program(root, "-m", "zbtools", "echo_words")
    assert missing.returncode == 2
    assert json.loads(missing.stdout)["error"]["code"] == "invalid_arguments"


def test_the_new_tool_is_listed_described_and_in_the_schemas(
        added: tuple[Path, set[str]]) -> None:
    root, _ = added
    listing = json.loads(program(root, "-m", "zbtools", "tools").stdout)["result"]["tools"]
    entry = next(t for t in listing if t["name"] == "echo_words")
    assert entry["aliases"] == ["say"]
    assert entry["summary"].startswith("Echo the words given")
    schema = json.loads(program(root, "-m", "zbtools", "schema", "--format", "openai",
                                "echo_words").stdout)
    assert schema[0]["function"]["parameters"]["required"] == ["words"]
    helped = program(root, "-m", "zbtools", "echo_words", "--help")
    assert "--words" in helped.stdout and "--upper" in helped.stdout
    assert "echo_words" in (root / TOOL_REFERENCE).read_text(encoding="utf-8")
    assert "echo_words" in (root / "man" / "zbtools.1").read_text(encoding="utf-8")


def test_the_new_tool_is_served_in_a_batch(added: tuple[Path, set[str]]) -> None:
    root, _ = added
    out = program(root, "-m", "zbtools", "batch",
                  stdin='{"id": 7, "tool": "echo_words", "args": {"words": ["x"]}}\n')
    line = json.loads(out.stdout)
    assert (line["id"], line["result"]) == (7, {"text": "x"})

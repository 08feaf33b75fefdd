"""Glob and list results: rg's file sets, and the same answers as rule-by-rule ignore decisions.

On generated trees (files, nested ``.gitignore``/``.ignore``/``.rgignore`` files with generated
rules, a git repository), through the in-process runner:

* ``list_directory`` (every depth) and ``find_files_glob '**/*'`` list exactly the files
  ``rg --files`` lists (rg is the oracle; both leave hidden entries out);
* the whole JSON result of both (entries, matches, ``skipped`` counts) is the same as with the
  walk deciding each entry through ``layers.layered_decision``, the per-rule path the compiled
  matcher of ``dirrules`` replaces.

And ``--format text`` (which skips the stat of each match: ``Context.text_only``) prints the
same paths as the JSON result, through one real process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import REPO, run_inprocess
from tests.search_trees import NAMES, TREE_PIECES, patterns
from zbtools.core.search import dirrules
from zbtools.core.search.layers import Layer, layered_decision
from zbtools.core.search.ripgrep import find_rg

RG = find_rg(os.environ)
IGNORE_NAMES = (".gitignore", ".ignore", ".rgignore")
GIT_ENV = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
           "HOME": tempfile.gettempdir()}


@st.composite
def trees(draw: st.DrawFn) -> tuple[list[str], dict[tuple[str, str], str]]:
    files = draw(st.lists(st.lists(st.sampled_from(NAMES), min_size=1, max_size=3).map("/".join),
                          min_size=1, max_size=14, unique=True))
    dirs = sorted({f.rsplit("/", 1)[0] for f in files if "/" in f} | {""})
    ignores: dict[tuple[str, str], str] = {}
    for _ in range(draw(st.integers(0, 4))):
        where = (draw(st.sampled_from(dirs)), draw(st.sampled_from(IGNORE_NAMES)))
        lines = draw(st.lists(patterns(TREE_PIECES), min_size=1, max_size=5))
        ignores[where] = "\n".join(lines) + "\n"
    return files, ignores


def build(root: Path, files: list[str], ignores: dict[tuple[str, str], str]) -> None:
    for rel in files:
        path = root / rel
        parts = rel.split("/")
        if path.is_dir() or any((root / "/".join(parts[:i])).is_file()
                                for i in range(1, len(parts))):
            continue  # a name used both as a file and a directory: keep the first
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x\n")
    for (d, name), text in ignores.items():
        if (root / d).is_dir():
            (root / d / name).write_text(text)
    subprocess.run(["git", "init", "-q", str(root)], check=True, env=GIT_ENV)


def call(root: Path, *argv: str) -> dict[str, Any]:
    done = run_inprocess(list(argv), workspace=root)
    assert done.code in (0, 1), done.out + done.err
    data: dict[str, Any] = json.loads(done.out)
    assert data["ok"], data
    return data["result"]  # type: ignore[no-any-return]


def listing(root: Path) -> dict[str, Any]:
    return call(root, "list_directory", "--max-depth", "50", "--limit", "0", "--exclude-dirs",
                "[]")


def globbing(root: Path) -> dict[str, Any]:
    return call(root, "find_files_glob", "--pattern", "**/*", "--limit", "0", "--exclude-dirs",
                "[]")


def rg_files(root: Path) -> set[str]:
    assert RG is not None
    out = subprocess.run([RG, "--files", "--no-config", "--no-messages", "-0", "."], cwd=root,
                         capture_output=True, check=False, env=GIT_ENV).stdout
    return {p.decode().removeprefix("./") for p in out.split(b"\0") if p}


def per_rule(layers: tuple[Layer, ...], dir_rel: str) -> dirrules.Pair:
    """The matchers of the per-rule path: ``layered_decision`` for every entry."""
    if not layers:
        return (None, None)
    prefix = "" if dir_rel == "." else dir_rel + "/"
    return (lambda name: layered_decision(layers, prefix + name, name, False),
            lambda name: layered_decision(layers, prefix + name, name, True))


@pytest.mark.slow
@pytest.mark.skipif(RG is None, reason="no rg binary")
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(tree=trees())
def test_glob_and_list_give_rgs_files_and_the_per_rule_answers(
        tree: tuple[list[str], dict[tuple[str, str], str]],
        monkeypatch: pytest.MonkeyPatch) -> None:
    files, ignores = tree
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        build(root, files, ignores)
        listed, globbed = listing(root), globbing(root)
        expected = rg_files(root)
        assert {e["path"] for e in listed["entries"] if e["type"] != "directory"} == expected
        assert {m["path"] for m in globbed["matches"]} == expected
        with monkeypatch.context() as old:
            old.setattr(dirrules.MatcherCache, "matchers_for",
                        lambda self, layers, dir_rel: per_rule(layers, dir_rel))
            assert listing(root) == listed
            assert globbing(root) == globbed


def test_the_text_rendering_lists_the_paths_of_the_json_result(tmp_path: Path) -> None:
    for rel in ("a.py", "b/c.py", "b/d.txt", "b/e/f.py", "g.log"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x\n")
    (tmp_path / ".gitignore").write_text("*.log\n")
    env = {**os.environ, "ZBTOOLS_WORKSPACE": str(tmp_path), "PYTHONPATH": str(REPO)}
    for argv in (["find_files_glob", "--pattern", "**/*.py"], ["find_files", "--pattern", ".py"]):
        result = call(tmp_path, *argv)
        paths = [m["path"] for m in result["matches"]]
        assert all(m["size"] == 2 and m["modified"].endswith("Z") for m in result["matches"])
        text = run_inprocess([*argv, "--format", "text"], workspace=tmp_path).out
        assert [line for line in text.splitlines() if not line.startswith("[")] == paths
    done = subprocess.run([sys.executable, "-m", "zbtools", "find_files_glob", "--pattern",
                           "*.py", "--format", "text"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, check=True)
    assert done.stdout.splitlines()[:3] == ["a.py", "b/c.py", "b/e/f.py"]

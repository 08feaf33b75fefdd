"""grep_search's ``glob`` and find_files_glob's ``exclude`` read globs as ``rg -g`` does: on
generated trees and glob lists the files searched are ``rg --files -g ...``'s, on every
engine; braces expand to a bounded number of globs (core/search/globs.py)."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from tests.conftest import run_inprocess
from tests.invariants.budget import invariant, planted_bug_is_caught
from zbtools.core.search import PathFilter, find_rg

RG = find_rg(os.environ)
pytestmark = pytest.mark.skipif(RG is None, reason="needs rg (the ripgrep wheel brings it)")

DIRS = ["src", "src/lib", "src/lib/deep", "lib", "tests", "x", "src/x", "docs"]
NAMES = ["a.py", "b.ts", "c.tsx", "d.md", "ab.py", "e.txt", "Lib.py"]
INCLUDES = ["*.py", "*.ts", "src/*.ts", "src/**/*.ts", "**/x/*", "*.{ts,tsx}", "a?.py",
            "[ab]*", "src/**", "lib/*.py", "/src/*.tsx", "**/*.md", "*.PY"]
EXCLUDES = ["!lib", "!src/lib/**", "!*.md", "!x", "!src/lib", "!deep/", "!tests/*.py",
            "!**/deep/**", "!b.*"]


def tree(files: list[str]) -> tempfile.TemporaryDirectory[str]:
    tmp = tempfile.TemporaryDirectory(prefix="zb-globs-")
    for rel in files:
        path = Path(tmp.name) / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("needle\n")
    return tmp


def rg_files(root: str, globs: list[str]) -> set[str]:
    assert RG is not None
    args = [RG, "--files", "--no-config", "--no-ignore", "--hidden"]
    for glob in sorted(globs, key=lambda g: g.startswith("!")):  # excludes last: they win
        args += ["-g", glob]
    done = subprocess.run(args, cwd=root, capture_output=True, text=True, check=False)
    assert done.returncode in (0, 1), done.stderr
    return {line.removeprefix("./") for line in done.stdout.splitlines()}


def zb_files(root: str, globs: list[str], engine: str) -> set[str]:
    call = run_inprocess(["grep_search"], workspace=Path(root), stdin=json.dumps({
        "pattern": "needle", "glob": ",".join(globs), "output_mode": "files_with_matches",
        "engine": engine, "include_ignored": True, "include_hidden": True,
        "exclude_dirs": [], "head_limit": 0}))
    return set(call.result["files"])


@st.composite
def cases(draw: st.DrawFn) -> tuple[list[str], list[str]]:
    files = draw(st.lists(st.tuples(st.sampled_from(["", *DIRS]), st.sampled_from(NAMES)),
                          min_size=1, max_size=14, unique=True))
    globs = draw(st.lists(st.sampled_from(INCLUDES), max_size=2, unique=True)) + \
        draw(st.lists(st.sampled_from(EXCLUDES), max_size=2, unique=True))
    return [f"{d}/{n}" if d else n for d, n in files], globs or ["*"]


def check(case: tuple[list[str], list[str]], engine: str) -> None:
    files, globs = case
    with tree(files) as root:
        assert zb_files(root, globs, engine) == rg_files(root, globs), (files, globs)


def search() -> None:
    @invariant(examples=60)
    @example(case=(["src/b.ts", "src/lib/a.ts", "lib/x/c.py"], ["src/**/*.ts", "!lib"]),
             engine="python")
    @given(case=cases(), engine=st.sampled_from(["python", "native"]))
    def files_are_rgs(case: tuple[list[str], list[str]], engine: str) -> None:
        check(case, engine)

    files_are_rgs()


def test_the_files_a_glob_list_selects_are_rgs() -> None:
    search()


def test_a_planted_bug_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """fnmatch's reading (``*`` crossing directories, no pruning below an excluded one)."""
    from fnmatch import fnmatchcase

    def planted(self: PathFilter, rel: str, name: str) -> bool:
        def match(globs: list[str]) -> bool:
            return any(fnmatchcase(rel if "/" in g else name, g.lstrip("/")) for g in globs)
        return not (self.exclude and match(self.exclude)) and \
            (not self.include or match(self.include))

    monkeypatch.setattr(PathFilter, "accepts", planted)
    planted_bug_is_caught(search)


def test_the_documented_example_finds_files_directly_in_the_directory(tmp_path: Path) -> None:
    with tree(["src/b.ts", "src/lib/a.ts", "b.ts"]) as root:
        assert zb_files(root, ["src/**/*.ts"], "python") == {"src/b.ts", "src/lib/a.ts"}
        assert zb_files(root, ["src/*.ts"], "python") == {"src/b.ts"}


@pytest.mark.parametrize("glob", ["{a,b}" * 18, "{" * 300 + "a" + "}" * 300,
                                  ",".join(f"*.{{x{i},y{i}}}" for i in range(501))])
def test_braces_past_the_limit_are_an_argument_error(tmp_path: Path, glob: str) -> None:
    call = run_inprocess(["grep_search"], workspace=tmp_path,
                         stdin=json.dumps({"pattern": "x", "glob": glob}))
    assert (call.code, call.error["code"]) == (2, "invalid_arguments"), call
    assert "glob" in call.error["message"]

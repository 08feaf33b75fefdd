"""The bucketed gitignore matcher agrees with git itself (and with pathspec) on what is ignored."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.search_trees import NAMES, patterns
from zbtools.core.files.workspace import Workspace
from zbtools.core.search.ignore import IgnoreRules, parse_line, translate
from zbtools.core.search.walk import Walk

GIT = shutil.which("git")
GIT_ENV = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
           "HOME": tempfile.gettempdir()}


def decide(text: str, path: str, is_dir: bool = False) -> bool | None:
    return IgnoreRules.parse(text).decide(path, path.rsplit("/", 1)[-1], is_dir)


@pytest.mark.parametrize(("rules", "path", "is_dir", "expected"), [
    ("build", "build", True, True),
    ("build", "build", False, True),
    ("build/", "build", False, None),
    ("build/", "build", True, True),
    ("*.pyc", "x.pyc", False, True),
    ("*.pyc", ".pyc", False, True),
    ("*.pyc", "a/b/x.pyc", False, True),
    ("*.pyc\n!keep.pyc", "keep.pyc", False, False),
    ("!keep.pyc\n*.pyc", "keep.pyc", False, True),
    ("/top", "top", False, True),
    ("/top", "sub/top", False, None),
    ("docs/*.md", "docs/a.md", False, True),
    ("docs/*.md", "x/docs/a.md", False, None),
    ("docs/*.md", "docs/sub/a.md", False, None),
    ("**/logs", "a/b/logs", True, True),
    ("**/logs/x", "a/logs/x", False, True),
    ("**/logs/x", "logs/x", False, True),
    ("a/**/b", "a/b", False, True),
    ("a/**/b", "a/x/y/b", False, True),
    ("a/**", "a/x/y", False, True),
    ("a/**", "a", True, None),
    ("a**b", "axyb", False, True),
    ("a**b", "ax/yb", False, None),
    ("f?o", "foo", False, True),
    ("f?o", "fo", False, None),
    ("[ab].txt", "a.txt", False, True),
    ("[!ab].txt", "a.txt", False, None),
    ("[!ab].txt", "c.txt", False, True),
    ("[a-c]x", "bx", False, True),
    ("[[:digit:]]x", "7x", False, True),
    ("[abc", "[abc", False, None),
    ("\\#hash", "#hash", False, True),
    ("#comment", "#comment", False, None),
    ("\\!bang", "!bang", False, True),
    ("trail   ", "trail", False, True),
    ("trail\\ ", "trail ", False, True),
    ("lit\\*", "lit*", False, True),
    ("lit\\*", "litx", False, None),
    ("x.log\r", "x.log", False, True),
    ("", "x", False, None),
    ("*", "anything", False, True),
    ("**", "a/b", False, True),
])
def test_a_rule_decides_like_git(rules: str, path: str, is_dir: bool,
                                 expected: bool | None) -> None:
    assert decide(rules, path, is_dir) is expected


def test_the_last_matching_line_decides_whatever_bucket_it_lives_in() -> None:
    rules = "x.log\n*.log\n!x.log\nlogs/*.log\n!logs/keep.log\n"
    assert decide(rules, "x.log") is False
    assert decide(rules, "y.log") is True
    assert decide(rules, "logs/keep.log") is False
    assert decide(rules, "logs/other.log") is True


def test_blank_and_comment_lines_make_empty_rules() -> None:
    assert not IgnoreRules.parse("\n# only comments\n   \n")
    assert parse_line("/", 0) is None
    assert parse_line("!", 0) is None


def test_an_unclosed_bracket_translates_to_no_regex() -> None:
    assert translate("[abc") is None
    assert translate("[[:nope:]]") is None


def test_a_thousand_rules_still_cost_one_lookup_per_bucket() -> None:
    lines = [f"name{i}" for i in range(400)] + [f"*.ext{i}" for i in range(400)] + \
        [f"dir{i}/*.tmp" for i in range(200)]
    rules = IgnoreRules.parse("\n".join(lines))
    assert rules.decide("dir150/a.tmp", "a.tmp", False) is True
    assert rules.decide("x/name399", "name399", False) is True
    assert rules.decide("y.ext7", "y.ext7", False) is True
    assert rules.decide("dir150/a.txt", "a.txt", False) is None


# -- differential: the walk lists exactly the files git calls untracked-and-not-ignored ------

@st.composite
def trees(draw: st.DrawFn) -> tuple[list[str], dict[str, str]]:
    files = draw(st.lists(st.lists(st.sampled_from(NAMES), min_size=1, max_size=3).map("/".join),
                          min_size=1, max_size=12, unique=True))
    dirs = sorted({f.rsplit("/", 1)[0] for f in files if "/" in f} | {""})
    ignores: dict[str, str] = {}
    for d in draw(st.lists(st.sampled_from(dirs), max_size=3, unique=True)):
        ignores[d] = "\n".join(draw(st.lists(patterns(), min_size=1, max_size=5))) + "\n"
    return files, ignores


def build(root: Path, files: list[str], ignores: dict[str, str]) -> list[str]:
    made: list[str] = []
    for rel in files:
        path = root / rel
        if any((root / p).is_file() for p in _ancestors(rel)) or path.is_dir():
            continue  # a name used both as a file and a directory: keep the first
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x")
        made.append(rel)
    for d, text in ignores.items():
        target = root / d
        if target.is_dir():
            (target / ".gitignore").write_text(text)
            made.append(f"{d}/.gitignore" if d else ".gitignore")
    return made


def _ancestors(rel: str) -> list[str]:
    parts = rel.split("/")
    return ["/".join(parts[:i]) for i in range(1, len(parts))]


def git_untracked(root: Path) -> set[str]:
    assert GIT is not None
    subprocess.run([GIT, "init", "-q", str(root)], check=True, env=GIT_ENV)
    out = subprocess.run([GIT, "-c", "core.excludesFile=" + os.devnull, "-c", "core.quotePath=off",
                          "ls-files", "-z", "--others", "--exclude-standard"], cwd=root,
                         check=True, capture_output=True, env=GIT_ENV).stdout
    return {p for p in out.decode().split("\0") if p}


def walk_files(root: Path) -> set[str]:
    workspace = Workspace(str(root))
    try:
        walk = Walk(workspace, ".", max_depth=50, include_hidden=True, exclude_dirs=[".git"])
        return {e.rel for e in walk if e.kind == "file"}
    finally:
        workspace.close()


@pytest.mark.slow
@pytest.mark.skipif(GIT is None, reason="git is not installed")
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trees())
def test_the_walk_keeps_exactly_the_files_git_does_not_ignore(
        tree: tuple[list[str], dict[str, str]]) -> None:
    files, ignores = tree
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        build(root, files, ignores)
        ours = walk_files(root)
        assert ours == git_untracked(root), ignores


@settings(max_examples=300, deadline=None)
@given(st.lists(patterns(), min_size=1, max_size=6),
       st.lists(st.sampled_from(NAMES), min_size=1, max_size=3).map("/".join))
def test_a_single_file_is_decided_as_pathspec_decides_it(rules: list[str], path: str) -> None:
    """A second oracle that needs no git. Files only: for a directory pathspec lets ``*`` match
    ``a/`` through its descendants even after ``!a`` (git, and we, re-include it)."""
    pathspec = pytest.importorskip("pathspec")
    spec = pathspec.GitIgnoreSpec.from_lines(rules)
    # pathspec also matches paths below a matched directory; the walk prunes those, so compare
    # only paths whose ancestors no rule decides.
    for ancestor in _ancestors(path):
        if spec.check_file(ancestor + "/").include is not None:
            return
    expected = spec.check_file(path).include
    assert decide("\n".join(rules), path) is expected, (rules, path)


def test_a_negation_re_includes_a_directory_a_star_ignored() -> None:
    assert decide("*\n!a\n", "a", True) is False
    assert decide("*\n!a\n", "b", True) is True

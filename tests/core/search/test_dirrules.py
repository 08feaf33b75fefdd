"""Each directory's compiled ignore matcher decides exactly as the layers decide rule by rule.

The oracle is ``layers.layered_decision`` (itself checked against git and pathspec in
``test_ignore.py``): for generated ignore files of every kind at generated places (the walk's
own, and files above the root as ``OuterRules``), and every name in generated directories
below them, the matcher ``dirrules.MatcherCache`` gives the directory must answer the same,
for files and for directories. One cache serves a directory and then those below it, as in a
walk, so the tables kept for a tuple of layers are checked from every place that shares them.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.search_trees import COMPONENTS, TREE_PIECES, patterns
from zbtools.core.search import dirrules
from zbtools.core.search.dirrules import MatcherCache
from zbtools.core.search.ignore import IgnoreRules, star_match, translate
from zbtools.core.search.layers import Layer, OuterRules, layered_decision

NAMES = [*COMPONENTS, ".gitignore", "x.pyc", "ab.py", "b"]
DIRS = ["a", "b", "ab", ".d", "target"]


@st.composite
def rule_text(draw: st.DrawFn) -> str:
    lines = draw(st.lists(patterns(TREE_PIECES), min_size=0, max_size=7))
    return "\n".join(lines) + "\n"


@st.composite
def layer_sets(draw: st.DrawFn) -> tuple[tuple[Layer, ...], list[str]]:
    """Layers as a walk holds them for a directory (its ancestors' files, in walk order) and
    the directories below to ask about, parents first."""
    depth = draw(st.integers(0, 3))
    chain = draw(st.lists(st.sampled_from(DIRS), min_size=depth + 2, max_size=depth + 2))
    dirs = ["/".join(chain[:i]) or "." for i in range(len(chain) + 1)]
    layers: list[Layer] = []
    if draw(st.booleans()):  # files above the root, as OuterRules see them
        above = draw(st.sampled_from(["r/", "r/s/"]))
        for prefix in draw(st.lists(st.sampled_from(["", "r/", "r/s/"]), max_size=2)):
            if above.startswith(prefix):
                rules = IgnoreRules.parse(draw(rule_text()), draw(st.integers(0, 3)))
                layers.append(("", OuterRules(prefix, rules, above)))
    for i in range(depth + 1):
        prefix = "" if i == 0 else "/".join(chain[:i]) + "/"
        for rank in draw(st.lists(st.integers(0, 3), max_size=2)):
            layers.append((prefix, IgnoreRules.parse(draw(rule_text()), rank)))
    start = draw(st.integers(0, depth))
    return tuple(layers), dirs[start:]


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(layer_sets(), st.sampled_from([0, 2, 32]))
def test_a_directory_matcher_decides_as_the_layers_do(case: tuple[tuple[Layer, ...],
                                                               list[str]], merged: int) -> None:
    """``merged``: the most names and suffixes a layer may have to be merged with others (0:
    every layer its own group, as a big ignore file is)."""
    layers, dirs = case
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(dirrules, "MERGED", merged)
        check_matchers(layers, dirs)


def check_matchers(layers: tuple[Layer, ...], dirs: list[str]) -> None:
    cache = MatcherCache()
    for dir_rel in dirs:
        files, subdirs = cache.matchers_for(layers, dir_rel)
        prefix = "" if dir_rel == "." else dir_rel + "/"
        for name in NAMES:
            for is_dir, rule in ((False, files), (True, subdirs)):
                expected = layered_decision(layers, prefix + name, name, is_dir)
                got = None if rule is None else rule(name)
                assert got is expected, (dir_rel, name, is_dir, layers)


def test_a_rule_of_an_inner_file_of_a_lower_kind_loses() -> None:
    """A root ``.ignore`` (rank 2) beats a deeper ``.gitignore`` (rank 1), whatever the lines."""
    layers: tuple[Layer, ...] = (("", IgnoreRules.parse("*.log\n", 2)),
                                 ("a/", IgnoreRules.parse("!keep.log\n/here.log\n", 1)))
    files, _ = MatcherCache().matchers_for(layers, "a")
    assert files is not None
    assert files("keep.log") is True
    assert files("here.log") is True
    assert files("x.txt") is None


def test_no_rule_no_matcher() -> None:
    empty: tuple[Layer, ...] = (("", IgnoreRules.parse("# nothing\n", 0)),)
    assert MatcherCache().matchers_for(empty, ".") == (None, None)
    dirs_only: tuple[Layer, ...] = (("", IgnoreRules.parse("build/\n", 1)),)
    files, dirs = MatcherCache().matchers_for(dirs_only, ".")
    assert files is None
    assert dirs is not None
    assert dirs("build") is True


@settings(max_examples=500, deadline=None)
@given(st.text("ab*", min_size=1, max_size=7).filter(lambda p: "*" in p),
       st.text("ab", max_size=5))
def test_a_star_glob_matches_a_name_as_its_regex_does(pattern: str, name: str) -> None:
    """``star_match`` (no regex) against the glob's translation, the regex other rules get."""
    import re

    source = translate(pattern)
    assert source is not None
    expected = re.fullmatch(source, name, re.DOTALL) is not None
    assert star_match(name, tuple(pattern.split("*"))) is expected, (pattern, name)


def test_tables_are_kept_for_a_bounded_number_of_ignore_files(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A tree with an ignore file in every directory keeps the tables of a few of them; one
    evicted and asked again is rebuilt, and decides the same."""
    monkeypatch.setattr(dirrules, "KEPT", 2)
    root = IgnoreRules.parse("*.log\n", 1)
    cache = MatcherCache()
    tuples = [(("", root), (f"d{i}/", IgnoreRules.parse(f"!keep{i}.log\n", 1)))
              for i in range(5)]
    for _ in range(2):
        for i, layers in enumerate(tuples):
            files, _ = cache.matchers_for(layers, f"d{i}")
            assert files is not None
            assert files(f"keep{i}.log") is False
            assert files("other.log") is True
    assert len(cache._kept) == 2

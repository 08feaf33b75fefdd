"""Case-insensitive matching is ripgrep's (Unicode's simple case folding) on every engine: the
python engine's regex module folds a few pairs more (Turkish i, three Greek and ligature pairs),
and those are matched as ``rg -i`` matches them, whether the pattern is a regular expression or
fixed text."""

from __future__ import annotations

import functools
import json
import os
import subprocess
import tempfile
from pathlib import Path

import pytest

from tests.conftest import run_inprocess
from zbtools.core.search import find_rg
from zbtools.core.search.rust_syntax import FOLDS_APART

RG = find_rg(os.environ)
pytestmark = pytest.mark.skipif(RG is None, reason="needs rg (the ripgrep wheel brings it)")

# each character that folds apart, the ones it is paired with, and pairs that do fold alike
CHARS = sorted(set(FOLDS_APART) | {"s", "S", "\u017f", "k", "K", "\u212a", "\u00df", "\u1e9e"})
TEXT = "".join(f"<{c}>\n" for c in CHARS)


@functools.cache  # the same file each time: ripgrep's answer is asked once per pattern
def rg_answer(pattern: str, fixed: bool) -> tuple[int, ...]:
    with tempfile.TemporaryDirectory(prefix="zb-fold-") as tmp:
        (Path(tmp) / "f.txt").write_text(TEXT)
        return tuple(rg_lines(Path(tmp), pattern, fixed))


def rg_lines(root: Path, pattern: str, fixed: bool) -> list[int]:
    assert RG is not None
    args = [RG, "-n", "-i", "--no-config", *(["-F"] if fixed else []), "-e", pattern, "f.txt"]
    done = subprocess.run(args, cwd=root, capture_output=True, text=True, check=False)
    return [int(line.split(":", 1)[0]) for line in done.stdout.splitlines()]


# classes: each character alone, ranges over the Latin and Greek letters, a negated class
CLASSES = [f"[{c}]" for c in CHARS] + ["[a-z]", "[A-Z]", "[\u0100-\u017f]", "[^a]",
                                       "[\u0370-\u03ff]", "[\ufb00-\ufb06]", "[hij]"]


def check(root: Path, engine: str, fixed: bool) -> None:
    (root / "f.txt").write_text(TEXT)
    # (the native engine serves a class only through a literal: auto chooses for it)
    classes = [] if fixed or engine == "native" else [f"<{k}>" for k in CLASSES]
    patterns = [f"<{c}>" for c in CHARS] + classes
    for pattern in patterns:
        call = run_inprocess(["grep_search"], workspace=root, stdin=json.dumps(
            {"pattern": pattern, "case_insensitive": True, "fixed_strings": fixed,
             "engine": engine, "path": "f.txt"}))
        got = [m["line"] for m in call.result["matches"]]
        assert got == list(rg_answer(pattern, fixed)), (engine, fixed, pattern)


@pytest.mark.parametrize("fixed", [False, True], ids=["regex", "fixed"])
@pytest.mark.parametrize("engine", ["python", "native", "auto"])
def test_each_character_matches_what_rg_i_matches(tmp_path: Path, engine: str,
                                                  fixed: bool) -> None:
    check(tmp_path, engine, fixed)


@pytest.mark.parametrize("fixed", [False, True], ids=["regex", "fixed"])
def test_a_planted_bug_is_caught(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                 fixed: bool) -> None:
    """The regex module's own folding (no characters set apart) differs from rg's."""
    from zbtools.core.search import rust_syntax

    monkeypatch.setattr(rust_syntax, "folded_apart", lambda c: None)
    monkeypatch.setattr(rust_syntax, "fold_as_rg", lambda cls: cls)
    monkeypatch.setattr(rust_syntax, "FOLDS_APART", {})
    rust_syntax.translate.cache_clear()
    try:
        with pytest.raises(AssertionError):
            check(tmp_path, "python", fixed)
    finally:
        rust_syntax.translate.cache_clear()

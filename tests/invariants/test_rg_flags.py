"""Invariant: grep_search's whole words (``-w``) and per-file cap (``-m``) answer as rg's do.

For patterns in ripgrep's syntax (the generator of ``test_rust_regex``), two generated files,
whole words on or off, a per-file cap or none and every output mode, grep_search's lines (or
counts, or files) on each engine are those of the ``rg`` binary run with the same flags in the
same directory, or the call fails with ``regex_error``: never another answer. Patterns ripgrep
rejects are left out.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import event, example, given
from hypothesis import strategies as st

from tests.conftest import run_inprocess
from tests.invariants.budget import invariant, planted_bug_is_caught
from tests.invariants.test_rust_regex import contents, rust_patterns
from zbtools.core.search import engine as search_engine
from zbtools.core.search.ripgrep import find_rg

RG = find_rg()
pytestmark = pytest.mark.skipif(RG is None, reason="no rg binary (no ripgrep wheel here)")
FLAGS = {"content": [], "count": ["--count"], "files_with_matches": ["--files-with-matches"]}


def rg_answer(root: Path, pattern: str, word: bool, cap: int | None, mode: str
              ) -> list[str] | None:
    """rg's output lines (``path:line`` in content mode), or None if it rejects the pattern."""
    assert RG is not None
    args = [RG, "--no-config", "--line-number", "--color", "never", "--sort", "path",
            *FLAGS[mode]]
    if word:
        args.append("--word-regexp")
    if cap is not None:
        args += ["--max-count", str(cap)]
    done = subprocess.run([*args, "-e", pattern, "."], cwd=root, capture_output=True,
                          check=False)
    if done.returncode == 2:
        return None
    lines = done.stdout.decode().splitlines()
    if mode == "content":
        lines = [":".join(line.split(":", 2)[:2]) for line in lines]
    return [line.removeprefix("./") for line in lines]


def zbtools_answer(root: Path, pattern: str, word: bool, cap: int | None, mode: str,
                   engine: str) -> list[str] | str:
    args: dict[str, Any] = {"pattern": pattern, "engine": engine, "word_regexp": word,
                            "max_count": cap, "output_mode": mode, "head_limit": 0}
    call = run_inprocess(["grep_search"], stdin=json.dumps(args), workspace=root)
    out = json.loads(call.out)
    if not out["ok"]:
        return str(out["error"]["code"])
    result = out["result"]
    if mode == "content":
        return [f"{m['path']}:{m['line']}" for m in result["matches"]]
    if mode == "count":
        return [f"{c['path']}:{c['count']}" for c in result["counts"]]
    return list(result["files"])


def check(root: Path, pattern: str, texts: tuple[str, str], word: bool, cap: int | None,
          mode: str, engine: str) -> None:
    for name, text in zip(("a.txt", "b.txt"), texts, strict=True):
        (root / name).write_text(text, encoding="utf-8")
    expected = rg_answer(root, pattern, word, cap, mode)
    if expected is None:
        event("ripgrep rejects the pattern")
        return
    got = zbtools_answer(root, pattern, word, cap, mode, engine)
    event(f"answer: {got if isinstance(got, str) else 'lines'}")
    if got == "regex_error" or (got == "invalid_arguments" and engine == "rg"):
        return  # (the rg engine refuses what it does not read as the python engine does)
    assert got == expected, (f"{pattern!r} word={word} cap={cap} {mode} {engine} on {texts!r}: "
                             f"rg {expected}, zbtools {got}")


words = st.sampled_from(["foo", "-foo", "foo-", "fo+", "foo|foob", r"\w+", "é", "a-b", "o",
                         "[a-f]+", r"\bfoo", "(?:x|xa)", "a*"])
word_text = st.lists(st.lists(st.sampled_from(["foo", "foo_bar", "-foo", "foob", "xa", "é",
                                               "a-b", " ", "-", "_", "éfoo", "x"]),
                              max_size=6).map("".join), min_size=1, max_size=4).map("\n".join)


@invariant(examples=100)
@given(pattern=st.one_of(words, rust_patterns), texts=st.tuples(st.one_of(word_text, contents),
                                                                   st.one_of(word_text, contents)),
       word=st.booleans(), cap=st.one_of(st.none(), st.integers(0, 3)),
       mode=st.sampled_from(list(FLAGS)), engine=st.sampled_from(["python", "auto", "rg"]))
@example(pattern="-foo", texts=("a -foo b\nx-foo", "foo"), word=True, cap=None, mode="content",
         engine="auto")
@example(pattern="foo", texts=("foo foo_bar\nfoo\nfoo", "foo_bar"), word=True, cap=1,
         mode="count", engine="python")
def test_whole_words_and_caps_read_as_rg_does(tmp_path_factory: pytest.TempPathFactory,
                                              pattern: str, texts: tuple[str, str], word: bool,
                                              cap: int | None, mode: str, engine: str) -> None:
    root = tmp_path_factory.getbasetemp() / "rg_flags"
    root.mkdir(exist_ok=True)
    check(root, pattern, texts, word, cap, mode, engine)


def test_a_planted_word_bug_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """``\\b`` on both sides (the usual guess, and rg's reading before version 14) must fail."""
    monkeypatch.setattr(search_engine, "WORD_BEFORE", r"\b(?:")
    monkeypatch.setattr(search_engine, "WORD_AFTER", r")\b")
    planted_bug_is_caught(test_whole_words_and_caps_read_as_rg_does)

"""Invariant 8, search parity: on generated trees, zbtools gives ripgrep's file sets and counts.

The ``rg`` binary (the ``ripgrep`` wheel's, found as the product finds it) is the oracle. Each
generated tree (``tests/search_trees.py``: nested ``.gitignore``/``.ignore``/``.rgignore`` files
with negations, anchors, ``dir/`` rules, ``**`` and classes; a repository's
``.git/info/exclude``; hidden entries; symlinks; odd names; big files; binary files with a NUL
byte early or late) is searched with random switches, and must give:

* ``find_files_glob '*'``, ``list_directory`` and ``find_files E``: the regular files
  ``rg --files`` lists (those with an ``e`` in their name, in any case, for the last);
* ``grep_search`` in count mode, on every engine (``python`` in one process and with its forked
  helper, ``rg``, ``native``, ``auto``, and a ``batch`` session's warm walk and cache, asked
  twice): ``rg --count``'s files and counts, an exact total (``total_is_lower_bound`` false,
  nothing ``too_large``); in content mode, ``rg --line-number``'s lines.

The thresholds that make a file "big" (read whole up to 10 MiB, streamed above) are lowered for
the search (``small_thresholds``), so the streaming path runs on files of a few hundred bytes;
``test_a_real_big_file_is_searched_as_rg_does`` keeps one file over the real threshold.

The oracle encodes where zbtools differs from ripgrep on purpose, as the search documentation
states it (docs/search.md, "Where zbtools differs from ripgrep"): the default excluded directories
(given to rg as ``--glob '!name/'`` overrides, as the native engine does); ``.gitignore`` files
read outside a repository too (``--no-require-git``); no ignore file above the workspace root
outside a repository, nor git's global excludes (``--no-ignore-parent``,
``--no-ignore-global``); POSIX classes in ignore files read as git reads them (the generator
writes none: ``tests/core/search/test_ignore.py`` checks them against git); a file is binary
only for a NUL byte in its first 8 KiB, so a file whose first NUL comes later is searched whole
as text (ripgrep leaves it out: its counts are ``rg --text``'s). UTF-16 files, ``multiline`` and
zbtools' temporary names are not generated.
"""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import Phase, event, example, given
from hypothesis import strategies as st

from tests.conftest import run_inprocess
from tests.invariants.budget import invariant, invariant_settings, planted_bug_is_caught
from tests.search_trees import Tree, trees
from zbtools.core.search import cache as cache_module
from zbtools.core.search import engine, parallel
from zbtools.core.search import warm as warm_module
from zbtools.core.search.entries import DEFAULT_EXCLUDED_DIRS
from zbtools.core.search.ripgrep import find_rg

RG = find_rg(os.environ)
pytestmark = [pytest.mark.skipif(RG is None, reason="no rg binary (no ripgrep wheel here)"),
              pytest.mark.slow]  # searches of generated inputs: not in the fast loop

BIG = 600  # a "big" file exceeds this many bytes; the thresholds below make that streamed
PATTERNS = [("needle", False), ("ne+dle", False), ("^needle", False), ("needle$", False),
            ("NEEDLE", True), ("caf\u00e9 n", False)]
ENGINES = ["python", "rg", "native", "auto"]


class Switches:
    """The walk switches of one search, as zbtools arguments and as rg flags."""

    def __init__(self, include_hidden: bool, include_ignored: bool, default_excludes: bool,
                 pattern: str, ignore_case: bool) -> None:
        self.include_hidden = include_hidden
        self.include_ignored = include_ignored
        self.default_excludes = default_excludes
        self.pattern = pattern
        self.ignore_case = ignore_case

    def args(self) -> dict[str, Any]:
        out: dict[str, Any] = {"include_hidden": self.include_hidden,
                               "include_ignored": self.include_ignored}
        if not self.default_excludes:
            out["exclude_dirs"] = []
        return out

    def rg_walk(self, tree: Tree) -> list[str]:
        flags = ["--no-config", "--no-ignore-parent", "--no-ignore-global"]
        if not tree.repository:
            flags.append("--no-require-git")  # zbtools reads .gitignore outside a repository
        if self.include_hidden:
            flags.append("--hidden")
        if self.include_ignored:
            flags.append("--no-ignore")
        if self.default_excludes:
            for name in DEFAULT_EXCLUDED_DIRS:
                flags += ["--glob", f"!{name}/"]
        return flags

    def __repr__(self) -> str:
        return (f"Switches(hidden={self.include_hidden}, ignored={self.include_ignored}, "
                f"default_excludes={self.default_excludes}, pattern={self.pattern!r}, "
                f"i={self.ignore_case})")


switches = st.tuples(st.booleans(), st.integers(0, 3).map(lambda n: n == 0), st.booleans(),
                     st.sampled_from(PATTERNS)).map(
    lambda t: Switches(t[0], t[1], t[2], t[3][0], t[3][1]))


# -- the oracle ---------------------------------------------------------------------------------

def rg(root: Path, *args: str) -> bytes:
    assert RG is not None
    done = subprocess.run([RG, *args], cwd=root, capture_output=True, stdin=subprocess.DEVNULL,
                          check=False)
    assert done.returncode in (0, 1), done.stderr
    assert done.stderr == b"", done.stderr  # no file rg could not read, no loop
    return done.stdout


def rel_of(raw: bytes) -> str:
    path = os.fsdecode(raw)
    return path[2:] if path.startswith("./") else path


def rg_files(root: Path, tree: Tree, how: Switches) -> set[str]:
    out = rg(root, *how.rg_walk(tree), "--files", "--null", ".")
    return {rel_of(p) for p in out.split(b"\0") if p}


def rg_search_flags(how: Switches) -> list[str]:
    return [*(["--ignore-case"] if how.ignore_case else []), "--regexp", how.pattern]


def rg_counts(root: Path, tree: Tree, how: Switches, files: set[str]) -> dict[str, int]:
    """Matching lines per file, as zbtools counts them: rg's, and ``rg --text``'s for the
    files whose only NUL bytes come after the first 8 KiB (binary to rg, text to zbtools)."""
    out = rg(root, *how.rg_walk(tree), "--count", "--null", *rg_search_flags(how), ".")
    counts = {rel_of(p): int(n) for p, n in re.findall(rb"([^\0]*)\0(\d+)\n", out)}
    late = sorted(f for f in tree.late_nul() if f in files)
    if late:
        out = rg(root, "--no-config", "--text", "--count", "--null", "--with-filename",
                 *rg_search_flags(how), "--", *late)
        counts.update((rel_of(p), int(n)) for p, n in re.findall(rb"([^\0]*)\0(\d+)\n", out))
    return counts


def rg_lines(root: Path, tree: Tree, how: Switches, files: set[str]) -> list[tuple[str, int]]:
    """(file, line number) of every matching line, sorted (from rg's JSON messages: a path
    may hold a newline)."""

    def matches(out: bytes) -> list[tuple[str, int]]:
        found = []
        for line in out.splitlines():
            message = json.loads(line)
            if message["type"] == "match":
                path = message["data"]["path"]
                raw = path["text"].encode() if "text" in path else \
                    base64.b64decode(path["bytes"])
                found.append((rel_of(raw), message["data"]["line_number"]))
        return found

    found = matches(rg(root, *how.rg_walk(tree), "--json", *rg_search_flags(how), "."))
    late = sorted(f for f in tree.late_nul() if f in files)
    if late:
        found += matches(rg(root, "--no-config", "--text", "--json", *rg_search_flags(how),
                            "--", *late))
    return sorted(found)


# -- zbtools ------------------------------------------------------------------------------------

def zb(root: Path, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    call = run_inprocess([tool], stdin=json.dumps(args), workspace=root)
    assert call.code == 0, call
    result: dict[str, Any] = call.result
    return result


def counts_of(result: dict[str, Any]) -> dict[str, int]:
    assert result["total_is_lower_bound"] is False, result
    assert result["skipped"]["too_large"] == result["skipped"]["unreadable"] == 0, result
    counts = {c["path"]: c["count"] for c in result["counts"]}
    assert result["total_matches"] == sum(counts.values())
    return counts


def batch(root: Path, lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    text = "".join(json.dumps(line) + "\n" for line in lines)
    call = run_inprocess(["batch"], stdin=text, workspace=root)
    assert call.code == 0, call
    out = [json.loads(line) for line in call.out.splitlines()]
    assert all(o["ok"] for o in out), out
    return [o["result"] for o in out]


@contextmanager
def small_thresholds() -> Iterator[None]:
    """Files over a few hundred bytes take the big-file paths (read past the first buffer,
    streamed in blocks of a few lines); the forked helper starts after the first file; the
    session cache takes every file as settled (its clock runs ahead)."""
    saved = (engine.READ_BUFFER, engine.WHOLE_FILE_BYTES, engine.STREAM_BLOCK,
             parallel.FORK_AFTER, cache_module.now_ns)
    real_now = cache_module.now_ns

    def ahead() -> int:
        return real_now() + 10_000_000_000

    engine.READ_BUFFER, engine.WHOLE_FILE_BYTES, engine.STREAM_BLOCK = 128, BIG // 2, 50
    parallel.FORK_AFTER = 1
    cache_module.now_ns = ahead
    setattr(warm_module, "now_ns", ahead)  # noqa: B010 (imported there by name)
    try:
        yield
    finally:
        (engine.READ_BUFFER, engine.WHOLE_FILE_BYTES, engine.STREAM_BLOCK,
         parallel.FORK_AFTER, cache_module.now_ns) = saved
        setattr(warm_module, "now_ns", real_now)  # noqa: B010


def check_parity(tree: Tree, how: Switches) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        root.mkdir()
        tree.build(root)
        files = rg_files(root, tree, how)
        expected = rg_counts(root, tree, how, files)
        walk = how.args()
        with small_thresholds():
            glob = zb(root, "find_files_glob", {"pattern": "*", "limit": 0, **walk})
            assert {m["path"] for m in glob["matches"] if m["type"] == "file"} == files
            listing = zb(root, "list_directory", {"max_depth": 100, "limit": 0, **walk})
            assert {e["path"] for e in listing["entries"] if e["type"] == "file"} == files
            named = zb(root, "find_files", {"pattern": "E", "limit": 0, **walk})
            assert {m["path"] for m in named["matches"] if m["type"] == "file"} == \
                {f for f in files if "e" in f.rpartition("/")[2].lower()}
            search = {"pattern": how.pattern, "case_insensitive": how.ignore_case,
                      "output_mode": "count", "head_limit": 0, **walk}
            for name in ENGINES:
                got = zb(root, "grep_search", {**search, "engine": name})
                assert counts_of(got) == expected, (name, got["engine"])
                event(f"engine {name} ran as {got['engine']}")
            os.environ["ZBTOOLS_SEARCH_WORKERS"] = "1"  # one process: no forked helper
            try:
                got = zb(root, "grep_search", {**search, "engine": "python"})
            finally:
                del os.environ["ZBTOOLS_SEARCH_WORKERS"]
            assert counts_of(got) == expected, "python, one process"
            cold, warm = batch(root, [{"tool": "grep_search", "args": search}] * 2)
            assert counts_of(cold) == counts_of(warm) == expected, "batch"
            content = zb(root, "grep_search", {**search, "output_mode": "content",
                                               "engine": "python"})
        lines = sorted((m["path"], m["line"]) for m in content["matches"])
        assert lines == rg_lines(root, tree, how, files)


PLAIN = Switches(False, False, True, "needle", False)


@invariant(examples=25)
@given(tree=trees(big=BIG), how=switches)
# found on the way; each once gave another file set than rg's:
# a root .ignore rule beats a deeper .gitignore negation (the innermost file decided)
@example(tree=Tree(files={"sub/d.log": b"needle\n", ".ignore": b"*.log\n",
                          "sub/.gitignore": b"!d.log\n", "sub/e.log": b"needle\n"}), how=PLAIN)
# .rgignore files are read, over .ignore ones (they were not read at all)
@example(tree=Tree(files={"a.txt": b"needle\n", "b.txt": b"needle\n", ".rgignore": b"a.txt\n",
                          ".ignore": b"!a.txt\nb.txt\n"}), how=PLAIN)
# hidden entries re-included by a negation are searched (they stayed hidden)
@example(tree=Tree(files={".env": b"needle\n", ".d/x.txt": b"needle\n", ".h": b"needle\n",
                          ".gitignore": b"!.env\n!.d/\n"}), how=PLAIN)
# a NUL byte at 7 KiB of a streamed file: binary, as read whole (the stream probed its first
# block only, smaller than 8 KiB under the lowered thresholds)
@example(tree=Tree(files={"a": b"needle\n" + b"x" * 7000 + b"\0" + b"needle\n" * 100,
                          "b": b"needle\n" + b"x" * 9000 + b"\0" + b"needle\n" * 100}),
         how=PLAIN)
# a hidden directory re-included by "!*": find_files_glob's "*" matched no path through it
@example(tree=Tree(files={".h/caf\u00e9": b"needle\n", ".h/b": b"needle\n",
                          ".gitignore": b"!*\n"}), how=PLAIN)
# the report's big file, at the lowered thresholds: every engine searches it
@example(tree=Tree(files={"big.log": (b"filler line padding\n" * 49 + b"needle\n") * 4}),
         how=PLAIN)
def test_every_engine_gives_rgs_file_set_and_counts(tree: Tree, how: Switches) -> None:
    check_parity(tree, how)


def test_a_real_big_file_is_searched_as_rg_does() -> None:
    """One file over the real whole-read threshold (10 MiB), streamed by the python engine and
    read by ripgrep, next to a small one: the same counts on every engine."""
    line = b"filler line padding padding padding padding\n"
    big = (line * 4999 + b"needle here\n") * (engine.WHOLE_FILE_BYTES // (5000 * len(line)) + 1)
    tree = Tree(files={"logs/big.log": big, "a.txt": b"needle\n", ".gitignore": b"*.tmp\n"})
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        tree.build(root)
        how = Switches(False, False, True, "needle", False)
        expected = rg_counts(root, tree, how, rg_files(root, tree, how))
        assert expected["logs/big.log"] == big.count(b"needle")
        search = {"pattern": "needle", "output_mode": "count", "head_limit": 0}
        for name in ENGINES:
            assert counts_of(zb(root, "grep_search", {**search, "engine": name})) == expected


@invariant_settings(examples=60, database=None, phases=[Phase.generate])
@given(tree=trees(big=BIG), how=switches)
def search_once(tree: Tree, how: Switches) -> None:
    """The invariant's search for a mutation check: no shrinking, the failure is enough."""
    check_parity(tree, how)


def test_a_planted_bug_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two bugs zbtools had or could have: big files skipped silently (the report's), and
    negations in ignore files read as plain rules. The same search, small budget, must fail
    on each."""
    big_path = engine.Searcher._search_big

    def skips_big(self: engine.Searcher, fd: int, limit: int | None,
                  cap: int | None) -> tuple[str, list[engine.Hit]]:
        if os.fstat(fd).st_size > engine.WHOLE_FILE_BYTES:
            return "too_large", []  # the old default cap, and no lower bound
        return big_path(self, fd, limit, cap)

    with monkeypatch.context() as planted:
        planted.setattr(engine.Searcher, "_search_big", skips_big)
        planted_bug_is_caught(search_once)

    from zbtools.core.search.ignore import IgnoreRules, Rule

    init = IgnoreRules.__init__

    def no_negations(self: IgnoreRules, rules: list[Rule], rank: int = 1) -> None:
        init(self, rules, rank)
        self.negated = [False] * len(rules)  # "!keep.log" read as "keep.log"

    with monkeypatch.context() as planted:
        planted.setattr(IgnoreRules, "__init__", no_negations)
        planted_bug_is_caught(search_once)


@invariant(examples=25)
@given(tree=trees(big=BIG), how=switches, limit=st.sampled_from([1, 2, 3, 7]),
       mode=st.sampled_from(["content", "files_with_matches", "count"]))
# the limit reached by the last match, no cut: the file after it is searched, not counted
# (ripgrep's count of files searched said 2)
@example(tree=Tree(files={"a": b"needle", "b": b""}), how=PLAIN, limit=1, mode="content")
def test_a_native_search_cut_at_its_limit_answers_as_the_python_engine(
        tree: Tree, how: Switches, limit: int, mode: str) -> None:
    """Cut at ``head_limit``, the native engine (ripgrep searches every file; the files before
    the cut that hold no match are the python walk's) gives the python engine's answer: the
    same matches, files searched, skipped counts and truncation."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        root.mkdir()
        tree.build(root)
        search = {"pattern": how.pattern, "case_insensitive": how.ignore_case,
                  "output_mode": mode, "head_limit": limit, **how.args()}
        python = zb(root, "grep_search", {**search, "engine": "python"})
        native = zb(root, "grep_search", {**search, "engine": "native"})
    assert python.pop("engine") == "python"
    ran = native.pop("engine")
    event(f"ran as {ran}, {'cut' if native.get('truncated') else 'whole'}")
    assert native == python


def anchored_above(tree: Tree, start: str) -> bool:
    """Whether an ignore file above ``start`` holds a rule with a slash before its end: ripgrep
    given ``start`` does not apply such a rule below it, where zbtools applies it as git does
    (docs/search.md, "Where zbtools differs from ripgrep")."""
    for rel, data in tree.files.items():
        holder, _, name = rel.rpartition("/")
        if rel == ".git/info/exclude":
            holder = ""
        elif name not in (".gitignore", ".ignore", ".rgignore"):
            continue
        if holder == start or (holder and not start.startswith(holder + "/")):
            continue  # the start's own file, or one that does not hold the start
        for line in data.decode("utf-8", "replace").splitlines():
            rule = line.strip().removeprefix("!")
            if rule and not rule.startswith("#") and "/" in rule.rstrip("/"):
                return True
    return False


@invariant(examples=25)
@given(tree=trees(big=BIG), how=switches, pick=st.integers(0, 10_000))
# an ignored directory named explicitly: its entries were judged by its own rules only, so a
# root "*.log" rule no longer left out build/b.log
@example(tree=Tree(files={".gitignore": b"build/\n*.log\n", "build/a.txt": b"needle\n",
                          "build/b.log": b"needle\n", "build/sub/c.log": b"needle\n"}),
         how=PLAIN, pick=0)
def test_a_start_named_explicitly_gives_what_rg_gives_below_it(
        tree: Tree, how: Switches, pick: int) -> None:
    """A directory given as the path (ignored, hidden or excluded by the walk from the root,
    or not) is listed and searched, its entries judged by every rule that applies there (the
    workspace's ignore files above it too), as ``rg --files DIR`` judges them."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        root.mkdir()
        tree.build(root)
        dirs = sorted({str(p.relative_to(root)) for p in root.rglob("*")
                       if p.is_dir() and not p.is_symlink()
                       and ".git" not in p.relative_to(root).parts})
        if not dirs:
            return
        start = dirs[pick % len(dirs)]
        if anchored_above(tree, start):
            event("a rule with a slash above the start: rg, given it, does not apply it")
            return
        # the workspace's ignore files above the start apply (rg reads them as "parents"; the
        # temporary directory has none above the workspace)
        flags = [f for f in how.rg_walk(tree) if f != "--no-ignore-parent"]
        out = rg(root, *flags, "--files", "--null", "--", start)
        expected = {rel_of(p) for p in out.split(b"\0") if p}
        walk = how.args()
        listing = zb(root, "list_directory", {"path": start, "max_depth": 100, "limit": 0,
                                              **walk})
        assert {e["path"] for e in listing["entries"] if e["type"] == "file"} == expected
        glob = zb(root, "find_files_glob", {"pattern": "**/*", "path": start, "limit": 0,
                                            **walk})
        assert {m["path"] for m in glob["matches"] if m["type"] == "file"} == expected
        search = {"pattern": "", "path": start, "output_mode": "count", "head_limit": 0, **walk}
        counted = zb(root, "grep_search", {**search, "engine": "python"})
        assert {c["path"] for c in counted["counts"]} <= expected
        event(f"start {'with' if expected else 'without'} files")

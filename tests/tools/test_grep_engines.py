"""grep_search's engines: rg answers exactly what python answers (files, matches, order, shape)."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CliRunner
from zbtools.core.search import ripgrep as rgsearch
from zbtools.core.search.ripgrep import compatible, find_rg

RG = find_rg(os.environ)
needs_rg = pytest.mark.skipif(RG is None, reason="no rg binary (no ripgrep wheel here)")


def write_files(root: Path, files: dict[str, bytes]) -> None:
    """Each of ``files`` (relative path -> bytes) below ``root``, directories made as needed."""
    for rel, data in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def make_tree(ws: Path) -> None:
    files: dict[str, bytes] = {
        "src/app.py": b"import os\ndef get_x():\n    return 1\n\ndef get_y():  # TODO\n"
                      b"    pass\nclass Boom(ValueError):\n    pass\n",
        "src/util/helpers.py": b"def helper():\n    '''TODO: get_ something'''\n" * 3,
        "src/util/crlf.txt": b"first TODO\r\nsecond\r\nthird TODO\r\n",
        "src/bom.txt": b"\xef\xbb\xbfTODO with a BOM\nplain\n",
        "src/latin1.txt": b"caf\xe9 TODO\nna\xefve\n",
        "src/long.txt": b"x" * 900 + b" TODO " + b"y" * 900 + b"\n",
        "src/noeol.txt": b"one\nTODO at the end",
        "docs/guide.md": b"# Guide\n\nSee get_x and GET_Y.\nTODO write more\n",
        "docs/a-b.md": b"TODO dash\n",
        "docs/a/b.md": b"TODO slash\n",
        "bin/tool.bin": b"TODO\0binary",
        "bin/late-nul.txt": b"TODO early\n" + b"z\n" * 5000 + b"\0 TODO after\n",
        "build/out.log": b"TODO ignored\n",
        ".hidden/secret.txt": b"TODO hidden\n",
        "node_modules/pkg/index.js": b"TODO excluded\n",
        "keep.log": b"TODO kept by negation\n",
        "other.log": b"TODO ignored by pattern\n",
        "empty.txt": b"",
    }
    write_files(ws, files)
    (ws / ".gitignore").write_bytes(b"build/\n*.log\n!keep.log\n")
    (ws / "src" / "util" / ".ignore").write_bytes(b"nothing-here\n")
    for i in range(30):
        (ws / "many" / f"d{i % 4}").mkdir(parents=True, exist_ok=True)
        (ws / "many" / f"d{i % 4}" / f"f{i:02d}.py").write_bytes(
            b"line\n" * (i % 5) + (b"def get_many(): TODO\n" if i % 3 else b"none\n") + b"end\n")


def both(cli: CliRunner, *args: str) -> tuple[dict[str, Any], dict[str, Any]]:
    py = cli("grep_search", *args, "--engine", "python")
    rg = cli("grep_search", *args, "--engine", "rg")
    assert py.code == 0, py
    assert rg.code == 0, rg
    a, b = py.result, rg.result
    assert a.pop("engine") == "python"
    assert b.pop("engine") == "rg"
    return a, b


CASES = [
    ("--pattern", "TODO"),
    ("--pattern", "def get_\\w+"),
    ("--pattern", "^\\s+pass$"),
    ("--pattern", "\\bget_[xy]\\b"),
    ("--pattern", "class \\w+\\(.*Error\\)"),
    ("--pattern", "get_y", "--case-insensitive"),
    ("--pattern", "get_(", "--fixed-strings"),
    ("--pattern", "TODO|Guide"),
    ("--pattern", "caf."),
    ("--pattern", "na.ve"),
    ("--pattern", "^TODO"),
    ("--pattern", "[^a-z ]+"),
    ("--pattern", "\\W{2}"),
    ("--pattern", "TODO", "-C", "2"),
    ("--pattern", "TODO", "-B", "1", "-A", "3"),
    ("--pattern", "TODO", "--head-limit", "1"),
    ("--pattern", "TODO", "--head-limit", "7"),
    ("--pattern", "TODO", "--output-mode", "files_with_matches"),
    ("--pattern", "TODO", "--output-mode", "count"),
    ("--pattern", "TODO", "--output-mode", "count", "--head-limit", "3"),
    ("--pattern", "TODO", "--glob", "*.md"),
    ("--pattern", "TODO", "--type", "py"),
    ("--pattern", "TODO", "--include-hidden"),
    ("--pattern", "TODO", "--include-ignored"),
    ("--pattern", "TODO", "--exclude-dirs", "[]"),
    ("--pattern", "TODO", "--path", "src"),
    ("--pattern", "nothing matches this"),
    ("--pattern", ""),
]


@needs_rg
@pytest.mark.parametrize("args", CASES, ids=[" ".join(c) for c in CASES])
@pytest.mark.parametrize("batch", [512, 3])
def test_rg_gives_exactly_the_python_result(ws: Path, cli: CliRunner, args: tuple[str, ...],
                                            batch: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rgsearch, "BATCH_FILES", batch)
    make_tree(ws)
    python, rg = both(cli, *args)
    assert rg == python


@needs_rg
def test_the_text_output_is_the_same_byte_for_byte(ws: Path, cli: CliRunner) -> None:
    make_tree(ws)
    outs = [cli("grep_search", "--pattern", "TODO", "-C", "1", "--format", "text",
                "--engine", e).out for e in ("python", "rg")]
    assert outs[0] == outs[1]
    assert "src/app.py:5:def get_y():  # TODO" in outs[0]


@needs_rg
def test_auto_uses_rg_only_where_the_pattern_has_no_literal_at_all(ws: Path,
                                                                   cli: CliRunner) -> None:
    make_tree(ws)
    assert cli("grep_search", "--pattern", "\\w+\\(\\)").result["engine"] == "rg"
    assert cli("grep_search", "--pattern", "\\w+\\(\\)", "-i").result["engine"] == "rg"
    # a literal, case-insensitive or not: the python engine was measured as fast or faster
    assert cli("grep_search", "--pattern", "TODO", "-i").result["engine"] == "python"
    assert cli("grep_search", "--pattern", "TODO",
               "--case-insensitive").result["engine"] == "python"
    assert cli("grep_search", "--pattern", "TODO").result["engine"] == "python"
    assert cli("grep_search", "--pattern", "(?<=get_)\\w").result["engine"] == "python"
    assert cli("grep_search", "--pattern", "\\w+", "--multiline").result["engine"] == "python"


def test_auto_without_rg_uses_python(ws: Path, cli: CliRunner) -> None:
    make_tree(ws)
    call = cli("grep_search", "--pattern", "TODO", env={"ZBTOOLS_RG": str(ws / "no-such-rg")})
    assert call.result["engine"] == "python"


def test_engine_rg_without_a_binary_says_how_to_get_one(ws: Path, cli: CliRunner) -> None:
    call = cli("grep_search", "--pattern", "x", "--engine", "rg",
               env={"ZBTOOLS_RG": str(ws / "no-such-rg")})
    assert call.code == 2
    assert call.error["code"] == "invalid_arguments"
    assert "no rg binary found" in call.error["message"]
    assert "ripgrep" in call.error["message"]


@needs_rg
def test_engine_rg_refuses_a_pattern_it_would_read_differently(ws: Path,
                                                               cli: CliRunner) -> None:
    call = cli("grep_search", "--pattern", "(a)\\1", "--engine", "rg")
    assert call.error["code"] == "invalid_arguments"
    assert "engine: auto or python" in call.error["hint"]


def test_a_failing_rg_batch_is_searched_by_python(ws: Path, cli: CliRunner) -> None:
    make_tree(ws)
    fake = ws.parent / "fake-rg"
    fake.write_text("#!/bin/sh\nexit 2\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    python = cli("grep_search", "--pattern", "TODO", "--engine", "python").result
    broken = cli("grep_search", "--pattern", "TODO", "--engine", "rg",
                 env={"ZBTOOLS_RG": str(fake)}).result
    assert broken.pop("engine") == "rg"
    python.pop("engine")
    assert broken == python


@needs_rg
def test_rg_reads_the_vetted_file_not_a_path(ws: Path, cli: CliRunner) -> None:
    """A symlink planted in the tree is never followed: rg gets descriptors, not names."""
    (ws / "in.txt").write_text("TODO inside\n")
    os.symlink(ws.parent / "outside" / "secret.txt", ws / "link.txt")
    call = cli("grep_search", "--pattern", "secret|TODO", "--engine", "rg")
    assert [m["path"] for m in call.result["matches"]] == ["in.txt"]


@pytest.mark.parametrize(("pattern", "fixed", "multiline", "expected"), [
    ("TODO", False, False, True),
    ("def get_\\w+\\(", False, False, True),
    ("^a|b$", False, False, True),
    ("[^a-z0-9_]+x{2,3}?", False, False, True),
    ("(?:ab)+(cd)*", False, False, True),
    ("(?<=a)b", False, False, False),
    ("a(?=b)", False, False, False),
    ("(a)\\1", False, False, False),
    ("(?i)abc", False, False, False),
    ("\\Aabc", False, False, False),
    ("\\p{L}+", False, False, False),
    ("(?P<n>a)(?P=n)", False, False, False),
    ("a++", False, False, False),
    ("(unclosed", False, False, False),
    ("(unclosed", True, False, True),
    ("abc", False, True, False),
])
def test_compatible_accepts_only_syntax_both_engines_read_alike(
        pattern: str, fixed: bool, multiline: bool, expected: bool) -> None:
    assert compatible(pattern, fixed_strings=fixed, multiline=multiline) is expected


@needs_rg
def test_a_small_open_files_limit_shrinks_the_batches(ws: Path, cli: CliRunner) -> None:
    import resource

    make_tree(ws)
    expected = cli("grep_search", "--pattern", "TODO", "--engine", "python").result
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (140, hard))
    try:
        assert rgsearch.batch_size() == 4
        got = cli("grep_search", "--pattern", "TODO", "--engine", "rg").result
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    expected.pop("engine")
    got.pop("engine")
    assert got == expected

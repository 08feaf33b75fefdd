"""outline: a file's definitions per language (in-process and in a real subprocess), a
directory's map (ranking, budget, skipped files), and the index behind it never stale: in a new
process, in batch, with a damaged or foreign cache file (docs/internals/code.md#repository-map)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import REPO, CliRunner, run_inprocess
from tests.core.code.test_symbols import SAMPLES
from zbtools.core.code import index as index_module

TEXT = ("--format", "text")


def make(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def shown(result: dict[str, Any]) -> list[tuple[str, str]]:
    return [(f["path"], d["qualname"]) for f in result["files"] for d in f["definitions"]]


@pytest.fixture
def settle_now(monkeypatch: pytest.MonkeyPatch) -> None:
    """Files just written count as settled, so records are kept (in-process calls only)."""
    monkeypatch.setattr(index_module, "SETTLE_NS", -10**12)


# -- a file ----------------------------------------------------------------------------------


def expected(path: str) -> list[tuple[str, str, int, int]]:
    return SAMPLES[path][1]


def outline_rows(result: dict[str, Any]) -> list[tuple[str, str, int, int]]:
    return [(d["kind"], d["qualname"], d["start_line"], d["end_line"])
            for d in result["definitions"]]


@pytest.mark.parametrize("path", sorted(SAMPLES))
def test_a_file_outline_in_every_language(ws: Path, cli: CliRunner, path: str) -> None:
    (ws / path).write_bytes(SAMPLES[path][0])
    call = cli("outline", "--path", path)
    assert call.code == 0, call.out
    result = call.result
    assert result["kind"] == "file" and result["has_errors"] is False
    assert outline_rows(result) == expected(path)
    assert result["count"] == result["total"] == len(expected(path))
    assert result["truncated"] is False


@pytest.mark.parametrize("path", sorted(SAMPLES))
def test_a_file_outline_in_every_language_through_a_real_subprocess(
        ws: Path, proc: CliRunner, path: str) -> None:
    (ws / path).write_bytes(SAMPLES[path][0])
    call = proc("outline", path)
    assert call.code == 0, call.err
    assert outline_rows(call.result) == expected(path)


def test_a_definition_carries_its_nesting_and_signature(ws: Path, cli: CliRunner) -> None:
    make(ws, {"m.py": "class A(B):\n    @property\n    def size(self) -> int:\n"
                      "        return 1\n"})
    defs = cli("outline", "m.py").result["definitions"]
    assert defs == [
        {"kind": "class", "name": "A", "qualname": "A", "parent": None, "depth": 0,
         "start_line": 1, "end_line": 4, "signature": "class A(B):"},
        {"kind": "method", "name": "size", "qualname": "A.size", "parent": "A", "depth": 1,
         "start_line": 3, "end_line": 4, "signature": "def size(self) -> int:"}]
    text = cli("outline", "m.py", *TEXT).out
    assert text == ("m.py: 2 definitions (python)\n  1-4: class A(B):\n"
                    "    3-4: def size(self) -> int:\n")


def test_a_script_is_known_by_its_shebang_line(ws: Path, cli: CliRunner) -> None:
    make(ws, {"tool": "#!/usr/bin/env python3\ndef main():\n    pass\n"})
    assert outline_rows(cli("outline", "tool").result) == [("function", "main", 2, 3)]


def test_a_file_that_does_not_parse_says_so(ws: Path, cli: CliRunner) -> None:
    make(ws, {"bad.py": "def ok():\n    pass\n\ndef broken(:\n"})
    result = cli("outline", "bad.py").result
    assert result["has_errors"] is True
    assert ("function", "ok", 1, 2) in outline_rows(result)


@pytest.mark.parametrize("name", ["notes.txt", "data.json", "Makefile", "script"])
def test_a_file_in_a_language_without_symbols_is_unsupported(ws: Path, cli: CliRunner,
                                                             name: str) -> None:
    make(ws, {name: "all:\n\techo hi\n"})
    call = cli("outline", name)
    assert call.code == 1
    assert call.error["code"] == "unsupported_language"
    assert "Python" in call.error["hint"]


def test_missing_and_outside_paths_are_refused(ws: Path, cli: CliRunner) -> None:
    assert cli("outline", "nope.py").error["code"] == "not_found"
    assert cli("outline", "../outside/secret.txt").error["code"] == "outside_workspace"


# -- a directory -------------------------------------------------------------------------------


LIB = ("def popular():\n    pass\n\n\ndef rare():\n    pass\n\n\ndef unused():\n    pass\n\n\n"
       "class Box:\n    def open(self):\n        pass\n\n    def close(self):\n        pass\n")


def test_a_directory_map_ranks_by_references_from_other_files(ws: Path, cli: CliRunner) -> None:
    make(ws, {"lib.py": LIB + "\npopular()\n",  # its own use does not count
              "a.py": "from lib import *\npopular()\nrare()\n",
              "b.py": "popular()\nBox().open()\n", "c.py": "popular()\n",
              "notes.md": "# not code\n"})
    result = cli("outline").result
    assert result["kind"] == "directory" and result["path"] == "."
    scores = {d["qualname"]: d["score"] for f in result["files"] for d in f["definitions"]}
    assert scores == {"popular": 3.0, "rare": 1.0, "Box.open": 1.0, "Box": 1.0, "unused": 0.0,
                      "Box.close": 0.0}
    assert result["files"][0]["path"] == "lib.py"
    assert [d["qualname"] for d in result["files"][0]["definitions"]] == \
        ["popular", "rare", "unused", "Box", "Box.open", "Box.close"]  # in file order
    assert result["files_total"] == 1 and result["other_files"] == 1
    assert result["count"] == result["total"] == 6 and result["truncated"] is False


def test_the_map_keeps_to_its_budget_and_says_what_it_left_out(ws: Path, cli: CliRunner) -> None:
    make(ws, {"lib.py": LIB, "a.py": "popular()\nrare()\nBox().open()\n", "b.py": "popular()\n"})
    call = cli("outline", ".", "--max-lines", "3")
    result = call.result
    assert shown(result) == [("lib.py", "popular"), ("lib.py", "rare")]
    assert result["lines"] == 3 and result["truncated"] is True
    assert result["count"] == 2 and result["total"] == 6
    text = cli("outline", ".", "--max-lines", "3", *TEXT).out
    assert text.splitlines() == ["lib.py:", "  1: def popular():", "  5: def rare():",
                                 "[2 of 6 definitions shown, 1 of 1 files; raise max_tokens/"
                                 "max_lines or outline a subdirectory]"]
    tokens = cli("outline", ".", "--max-tokens", "12").result
    assert tokens["tokens"] <= 12 and tokens["truncated"]


def test_a_method_in_the_map_brings_its_class(ws: Path, cli: CliRunner) -> None:
    make(ws, {"lib.py": LIB, "a.py": "x.open()\n"})
    result = cli("outline", "--max-lines", "3").result
    assert shown(result) == [("lib.py", "Box"), ("lib.py", "Box.open")]
    text = cli("outline", "--max-lines", "3", *TEXT).out
    assert text.splitlines()[:3] == ["lib.py:", "  13: class Box:", "    14: def open(self):"]


def test_the_map_skips_what_the_search_tools_skip(ws: Path, cli: CliRunner) -> None:
    make(ws, {"src/a.py": "def a(): pass\n", "build/gen.py": "def gen(): pass\n",
              ".hidden/h.py": "def h(): pass\n", "node_modules/m/i.js": "function m() {}\n",
              ".gitignore": "build/\n"})
    result = cli("outline").result
    assert [f["path"] for f in result["files"]] == ["src/a.py"]
    assert result["skipped"]["ignored"] == 1 and result["skipped"]["hidden"] >= 1
    assert result["skipped"]["excluded_dirs"] == 1
    every = cli("outline", "--include-hidden", "--include-ignored", "--exclude-dirs", "[]")
    assert sorted(f["path"] for f in every.result["files"]) == \
        [".hidden/h.py", "build/gen.py", "node_modules/m/i.js", "src/a.py"]


def test_a_subdirectory_maps_only_its_files(ws: Path, cli: CliRunner) -> None:
    make(ws, {"a/x.py": "def x(): pass\n", "b/y.py": "def y(): pass\n"})
    result = cli("outline", "b").result
    assert result["path"] == "b" and shown(result) == [("b/y.py", "y")]


def test_an_empty_directory_maps_to_nothing(ws: Path, cli: CliRunner) -> None:
    (ws / "empty").mkdir()
    call = cli("outline", "empty", *TEXT)
    assert call.code == 0 and "[no files with definitions in empty]" in call.out


SOURCE_NAMES = st.sampled_from(["alpha", "beta", "gamma", "run", "main", "Thing"])


@st.composite
def python_files(draw: st.DrawFn) -> dict[str, str]:
    files = {}
    for n in range(draw(st.integers(1, 5))):
        lines = []
        for name in draw(st.lists(SOURCE_NAMES, max_size=5)):
            if draw(st.booleans()):
                lines += [f"class {name}:", *(f"    def {m}(self):\n        {m}()"
                                              for m in draw(st.lists(SOURCE_NAMES, max_size=3)))]
                lines.append("    pass")
            else:
                lines += [f"def {name}():", f"    {draw(SOURCE_NAMES)}()"]
            lines += [""] * draw(st.integers(0, 2))
        files[f"p{n % 2}/m{n}.py"] = "\n".join(lines) + "\n"
    return files


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(python_files(), st.integers(1, 40), st.integers(10, 400))
def test_every_definition_in_the_map_is_at_its_line_and_the_budget_holds(
        ws: Path, files: dict[str, str], max_lines: int, max_tokens: int) -> None:
    for old in ws.glob("p*"):
        for f in old.iterdir():
            f.unlink()
    make(ws, files)
    call = run_inprocess(["outline", "--max-lines", str(max_lines), "--max-tokens",
                          str(max_tokens)], workspace=ws)
    result = call.result
    assert result["lines"] <= max_lines and result["tokens"] <= max_tokens
    for entry in result["files"]:
        lines = files[entry["path"]].splitlines()
        for d in entry["definitions"]:
            keyword = "class" if d["kind"] == "class" else "def"
            assert lines[d["start_line"] - 1].strip().startswith(f"{keyword} {d['name']}")


# -- never stale ------------------------------------------------------------------------------


def test_an_edited_file_is_seen_by_the_next_map(ws: Path, cli: CliRunner,
                                                settle_now: None) -> None:
    make(ws, {"a.py": "def before(): pass\n", "b.py": "def other(): pass\n"})
    first = cli("outline").result
    assert first["files_parsed"] == 2 and ("a.py", "before") in shown(first)
    again = cli("outline").result
    assert again["files_parsed"] == 0 and shown(again) == shown(first)
    (ws / "a.py").write_text("def after(): pass\n")
    changed = cli("outline").result
    assert changed["files_parsed"] == 1
    assert ("a.py", "after") in shown(changed) and ("a.py", "before") not in shown(changed)


def test_a_file_rewritten_with_its_size_and_mtime_kept_is_parsed_again(
        ws: Path, cli: CliRunner, settle_now: None) -> None:
    make(ws, {"a.py": "def one(): pass\n"})
    cli("outline")
    st = os.stat(ws / "a.py")
    (ws / "a.py").write_text("def two(): pass\n")
    os.utime(ws / "a.py", ns=(st.st_atime_ns, st.st_mtime_ns))  # only ctime tells
    assert shown(cli("outline").result) == [("a.py", "two")]


def test_deleted_and_new_files_change_the_map(ws: Path, cli: CliRunner,
                                              settle_now: None) -> None:
    make(ws, {"a.py": "def a(): pass\n", "b.py": "def b(): pass\n"})
    cli("outline")
    (ws / "a.py").unlink()
    make(ws, {"c.py": "def c(): pass\n"})
    assert shown(cli("outline").result) == [("b.py", "b"), ("c.py", "c")]


def state_files(tmp: Path) -> list[Path]:
    return sorted((tmp / "state").glob("*/code-*.bin"))


@pytest.mark.parametrize("damage", ["garbage", "truncated", "flipped"])
def test_a_damaged_cache_is_ignored_and_rebuilt(ws: Path, cli: CliRunner, settle_now: None,
                                                damage: str) -> None:
    make(ws, {"a.py": "def a(): pass\n", "b.py": "a()\n"})
    good = cli("outline").result
    paths = state_files(ws.parent)
    assert [p.name for p in paths] == ["code-maps.bin", "code-tags.bin"]
    for path in paths:
        data = path.read_bytes()
        path.write_bytes({"garbage": b"\x00garbage" * 50, "truncated": data[:len(data) // 2],
                          "flipped": data[:-5] + bytes([data[-5] ^ 0xFF]) + data[-4:]}[damage])
    again = cli("outline").result
    assert again["files_parsed"] == 2
    assert again["files"] == good["files"]
    assert cli("outline").result["files_parsed"] == 0  # rewritten whole


def test_a_cache_from_another_workspace_is_not_trusted(ws: Path, cli: CliRunner,
                                                       settle_now: None) -> None:
    make(ws, {"a.py": "def a(): pass\n"})
    cli("outline")
    other = ws.parent / "other"
    make(other, {"a.py": "def different(): pass\n"})
    os.utime(other / "a.py", ns=(os.stat(ws / "a.py").st_atime_ns,
                                 os.stat(ws / "a.py").st_mtime_ns))
    source = state_files(ws.parent)[0].parent
    target = ws.parent / "state" / "copied"
    target.mkdir()
    for path in source.iterdir():
        (target / path.name).write_bytes(path.read_bytes())
    result = run_inprocess(["outline"], workspace=other,
                           env={"ZBTOOLS_STATE_DIR": str(ws.parent / "state")}).result
    assert shown(result) == [("a.py", "different")]


@pytest.mark.slow
def test_a_new_process_reads_the_cache_and_sees_an_edit(ws: Path, proc: CliRunner) -> None:
    make(ws, {"a.py": "def before(): pass\n", "b.py": "before()\n"})
    past = time.time_ns() - 10 * 10**9
    for name in ("a.py", "b.py"):
        os.utime(ws / name, ns=(past, past))
    time.sleep(index_module.SETTLE_NS / 1e9 + 0.1)  # their ctime settles
    first = proc("outline").result
    assert first["files_parsed"] == 2
    assert proc("outline").result["files_parsed"] == 0
    (ws / "a.py").write_text("def after(): pass\n")
    changed = proc("outline").result
    assert changed["files_parsed"] == 1 and shown(changed) == [("a.py", "after")]


def test_a_batch_session_keeps_the_index_and_sees_an_edit(ws: Path) -> None:
    make(ws, {"a.py": "def before(): pass\n", "b.py": "before()\n"})
    env = dict(os.environ, PYTHONPATH=str(REPO))
    child = subprocess.Popen([sys.executable, "-m", "zbtools", "batch"], cwd=ws, env=env,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert child.stdin is not None and child.stdout is not None

    def ask(args: dict[str, Any]) -> dict[str, Any]:
        assert child.stdin is not None and child.stdout is not None
        child.stdin.write(json.dumps({"tool": "outline", "args": args}) + "\n")
        child.stdin.flush()
        answer: dict[str, dict[str, Any]] = json.loads(child.stdout.readline())
        return answer["result"]

    try:
        assert shown(ask({})) == [("a.py", "before")]
        (ws / "a.py").write_text("def after(): pass\n\ndef more(): pass\n")
        assert shown(ask({})) == [("a.py", "after"), ("a.py", "more")]
        assert [d["qualname"] for d in ask({"path": "a.py"})["definitions"]] == ["after", "more"]
        (ws / "a.py").write_text("def last(): pass\n")
        assert [d["qualname"] for d in ask({"path": "a.py"})["definitions"]] == ["last"]
        assert shown(ask({})) == [("a.py", "last")]
    finally:
        child.stdin.close()
        child.wait(timeout=30)

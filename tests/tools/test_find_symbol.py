"""find_symbol: definitions by name or dotted name in every symbol language, their references,
the files it leaves out as grep does, and the hint when nothing matches
(docs/internals/code.md#symbol-tools)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import CliRunner, snapshot
from tests.tools.symbol_samples import SAMPLES, Sample


def put_all(ws: Path) -> None:
    for sample in SAMPLES:
        (ws / sample.path).write_text(sample.source)


@pytest.mark.parametrize("sample", SAMPLES, ids=repr)
def test_a_dotted_name_finds_its_definition(ws: Path, cli: CliRunner, sample: Sample) -> None:
    put_all(ws)
    result = cli("find_symbol", stdin={"symbol": sample.symbol}).result
    found = [d for d in result["definitions"] if d["path"] == sample.path]
    assert len(found) == 1, result
    (d,) = found
    assert (d["qualname"], d["kind"], d["start_line"]) == (sample.symbol, sample.kind,
                                                         sample.start_line)
    assert d["signature"] and d["end_line"] >= d["start_line"] >= d["outer_start_line"]
    assert result["skipped"]["unsupported_language"] == 0


@pytest.mark.parametrize("sample", SAMPLES, ids=repr)
def test_through_a_real_process(ws: Path, proc: CliRunner, sample: Sample) -> None:
    (ws / sample.path).write_text(sample.source)
    name = sample.symbol.rsplit(".", 1)[-1]
    call = proc("find_symbol", name, "--path", sample.path)
    assert call.code == 0, call
    assert [d["qualname"] for d in call.result["definitions"]] == [sample.symbol]


def test_a_name_matches_every_dotted_name_it_ends(ws: Path, cli: CliRunner) -> None:
    (ws / "a.py").write_text("class Outer:\n    class Inner:\n        def run(self):\n"
                             "            pass\n\ndef run():\n    pass\n\ndef rerun():\n    pass\n")
    names = {d["qualname"] for d in
             cli("find_symbol", stdin={"symbol": "run"}).result["definitions"]}
    assert names == {"Outer.Inner.run", "run"}
    for query in ("Inner.run", "Outer.Inner.run", "Outer::Inner::run", "Inner#run"):
        found = cli("find_symbol", stdin={"symbol": query}).result["definitions"]
        assert [d["qualname"] for d in found] == ["Outer.Inner.run"], query
    kinds = cli("find_symbol", stdin={"symbol": "run", "kind": "function"}).result
    assert [d["qualname"] for d in kinds["definitions"]] == ["run"]


def test_references_are_listed_with_their_line(ws: Path, cli: CliRunner) -> None:
    (ws / "a.py").write_text("def helper():\n    pass\n\ndef main():\n    helper()\n"
                             "    x = helper\n")
    (ws / "b.js").write_text("function go() {\n  helper();\n}\n")
    result = cli("find_symbol", stdin={"symbol": "helper", "include_references": True}).result
    assert [d["path"] for d in result["definitions"]] == ["a.py"]
    refs = [(r["path"], r["line"], r["text"]) for r in result["references"]]
    assert refs == [("a.py", 5, "    helper()"), ("b.js", 2, "  helper();")]
    assert result["total_references"] == 2


def test_files_are_left_out_as_grep_leaves_them_out(ws: Path, cli: CliRunner) -> None:
    (ws / ".gitignore").write_text("build/\n")
    (ws / "build").mkdir()
    (ws / "build" / "gen.py").write_text("def run(): pass\n")
    (ws / "node_modules").mkdir()
    (ws / "node_modules" / "x.js").write_text("function run() {}\n")
    (ws / "a.py").write_text("def run(): pass\n")
    (ws / "README.md").write_text("call run to start\n")
    (ws / "tool").write_text("#!/usr/bin/env python3\ndef run():\n    pass\n")
    result = cli("find_symbol", stdin={"symbol": "run"}).result
    assert sorted(d["path"] for d in result["definitions"]) == ["a.py", "tool"]
    assert result["skipped"]["unsupported_language"] == 1  # README.md


def test_a_path_narrows_the_search(ws: Path, cli: CliRunner) -> None:
    (ws / "src").mkdir()
    (ws / "src" / "a.go").write_text("package a\n\nfunc Run() {}\n")
    (ws / "b.go").write_text("package b\n\nfunc Run() {}\n")
    result = cli("find_symbol", stdin={"symbol": "Run", "path": "src"}).result
    assert [d["path"] for d in result["definitions"]] == ["src/a.go"]
    one = cli("find_symbol", stdin={"symbol": "Run", "path": "b.go"}).result
    assert [d["path"] for d in one["definitions"]] == ["b.go"]


def test_nothing_found_is_an_empty_list_with_the_closest_names(ws: Path,
                                                                cli: CliRunner) -> None:
    (ws / "a.py").write_text("class Parser:\n    def parse_user(self):\n        pass\n")
    result = cli("find_symbol", stdin={"symbol": "Parser.parse_usr"}).result
    assert result["definitions"] == [] and result["total"] == 0
    assert result["closest"][0] == "Parser.parse_user"
    assert "Parser.parse_user" in result["hint"]
    typo = cli("find_symbol", stdin={"symbol": "prase_user"}).result
    assert typo["closest"][0] == "Parser.parse_user"
    text = cli("--format", "text", "--exit-status", "find_symbol", "prase_user")
    assert "closest names: Parser.parse_user" in text.out
    assert text.code == 1  # --exit-status: nothing found


def test_a_miss_says_which_files_holding_the_name_do_not_parse(ws: Path,
                                                                cli: CliRunner) -> None:
    (ws / "a.py").write_text("class A:\n    def run(self):\n        return 1\n\n"
                             "    def stop(self):\n        return (\n")
    result = cli("find_symbol", stdin={"symbol": "stop"}).result
    assert result["definitions"] == [] and result["parse_errors"] == ["a.py"]
    assert "a.py hold the name but do not parse cleanly" in result["hint"]


def test_a_file_in_another_language_is_unsupported(ws: Path, cli: CliRunner) -> None:
    (ws / "notes.txt").write_text("run\n")
    before = snapshot(ws)
    call = cli("find_symbol", stdin={"symbol": "run", "path": "notes.txt"})
    assert call.error["code"] == "unsupported_language"
    assert "Python" in call.error["hint"]
    assert snapshot(ws) == before


def test_bad_input_is_a_json_error(ws: Path, cli: CliRunner) -> None:
    assert cli("find_symbol", stdin={"symbol": " . "}).error["code"] == "invalid_arguments"
    assert cli("find_symbol", stdin={"symbol": "x", "path": "nope"}).error["code"] == \
        "not_found"
    assert cli("find_symbol", stdin={"symbol": "x", "kind": "banana"}).error["code"] == \
        "invalid_arguments"


def test_results_are_capped(ws: Path, cli: CliRunner) -> None:
    (ws / "a.py").write_text("".join(f"class C{i}:\n    def run(self): pass\n"
                                     for i in range(5)))
    result = cli("find_symbol", stdin={"symbol": "run", "max_results": 2}).result
    assert (len(result["definitions"]), result["total"], result["truncated"]) == (2, 5, True)

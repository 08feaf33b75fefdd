"""grep_search's show_scope: each match labelled with the innermost definition around it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO, CliRunner
from tests.test_import_budget import loaded_full
from zbtools.core.code import languages as code_languages
from zbtools.core.search.ripgrep import find_rg

RG = find_rg(os.environ)
needs_rg = pytest.mark.skipif(RG is None, reason="no rg binary (no ripgrep wheel here)")
TEXT = ("--format", "text")

# one file per language with symbols: NEEDLE once, inside the definition named
SAMPLES: dict[str, tuple[str, str, tuple[str, str, int]]] = {
    "python": ("box.py", "import os\n\nclass Box:\n    def open(self):\n        return NEEDLE\n",
               ("method", "Box.open", 4)),
    "javascript": ("box.js", "const x = 1;\nclass Box {\n  open() {\n    return NEEDLE;\n  }\n}\n",
                   ("method", "Box.open", 3)),
    "typescript": ("box.ts", "let x: number = 1;\nclass Box {\n  open(): number {\n"
                   "    return NEEDLE;\n  }\n}\n", ("method", "Box.open", 3)),
    "tsx": ("view.tsx", "import React from 'react';\nfunction View() {\n"
            "  return <div>{NEEDLE}</div>;\n}\n", ("function", "View", 2)),
    "go": ("box.go", "package box\n\ntype Box struct{}\n\nfunc (b *Box) Open() int {\n"
           "\treturn NEEDLE\n}\n", ("method", "Box.Open", 5)),
    "rust": ("box.rs", "struct Box;\n\nimpl Box {\n    fn open(&self) -> i32 {\n        NEEDLE\n"
             "    }\n}\n", ("method", "Box.open", 4)),
    "java": ("Box.java", "package box;\n\nclass Box {\n    int open() {\n        return NEEDLE;\n"
             "    }\n}\n", ("method", "Box.open", 4)),
    "c": ("box.c", "#include <stdio.h>\n\nint open_box(void) {\n    return NEEDLE;\n}\n",
          ("function", "open_box", 3)),
    "cpp": ("box.cpp", "#include <cstdio>\n\nclass Box {\npublic:\n    int open() {\n"
            "        return NEEDLE;\n    }\n};\n", ("method", "Box.open", 5)),
    "c_sharp": ("Box.cs", "namespace Shop {\n    class Box {\n        int Open() {\n"
                "            return NEEDLE;\n        }\n    }\n}\n",
                ("method", "Shop.Box.Open", 3)),
    "ruby": ("box.rb", "require 'set'\n\nclass Box\n  def open\n    NEEDLE\n  end\nend\n",
             ("method", "Box.open", 4)),
    "php": ("box.php", "<?php\n\nclass Box {\n    function open() {\n        return NEEDLE;\n"
            "    }\n}\n", ("method", "Box.open", 4)),
    "bash": ("box.sh", "#!/bin/bash\n\nopen_box() {\n    echo NEEDLE\n}\n",
             ("function", "open_box", 3)),
}
NOTES = "NEEDLE in a note\n"


def make_samples(ws: Path) -> None:
    for name, text, _ in SAMPLES.values():
        (ws / name).write_text(text)
    (ws / "notes.md").write_text(NOTES)


def labels(result: dict[str, Any]) -> dict[str, tuple[str, str, int] | None]:
    out: dict[str, tuple[str, str, int] | None] = {}
    for m in result["matches"]:
        scope = m.get("scope")
        out[m["path"]] = None if scope is None else (
            scope["kind"], scope["qualname"], scope["start_line"])
    return out


@pytest.mark.parametrize("language", sorted(SAMPLES))
def test_a_match_is_labelled_with_its_definition_in_every_language(
        ws: Path, cli: CliRunner, language: str) -> None:
    name, text, expected = SAMPLES[language]
    (ws / name).write_text(text)
    result = cli("grep_search", "NEEDLE", "--show-scope", "--engine", "python").result
    assert labels(result) == {name: expected}
    assert result["files_without_scope"] == []
    match = result["matches"][0]
    assert match["line"] <= match["scope"]["end_line"] <= text.count("\n")


def test_every_language_through_a_real_subprocess(ws: Path, proc: CliRunner) -> None:
    make_samples(ws)
    result = proc("grep_search", "NEEDLE", "--show-scope").result
    expected: dict[str, tuple[str, str, int] | None] = {
        name: label for name, _, label in SAMPLES.values()}
    expected["notes.md"] = None
    assert labels(result) == expected
    assert result["files_without_scope"] == ["notes.md"]


def test_a_match_outside_every_definition_has_no_scope(ws: Path, cli: CliRunner) -> None:
    (ws / "a.py").write_text("NEEDLE = 1\n\ndef f():\n    return NEEDLE\n\nprint(NEEDLE)\n")
    result = cli("grep_search", "NEEDLE", "--show-scope").result
    assert [(m["line"], m.get("scope", {}).get("qualname")) for m in result["matches"]] == [
        (1, None), (4, "f"), (6, None)]
    assert result["files_without_scope"] == []


def test_constants_and_fields_are_not_scopes(ws: Path, cli: CliRunner) -> None:
    (ws / "a.py").write_text("TABLE = {\n    'k': NEEDLE,\n}\n")
    (ws / "b.go").write_text("package b\n\ntype T struct {\n\tN int // NEEDLE\n}\n")
    result = cli("grep_search", "NEEDLE", "--show-scope").result
    assert labels(result) == {"a.py": None, "b.go": ("type", "T", 3)}


def test_nesting_gives_the_innermost_and_a_dotted_name(ws: Path, cli: CliRunner) -> None:
    (ws / "a.py").write_text(
        "class Outer:\n"
        "    class Inner:\n"
        "        @staticmethod\n"
        "        def deep(x=NEEDLE):\n"
        "            def local():\n"
        "                return NEEDLE\n"
        "            return local\n"
        "    NEEDLE_ATTR = 1\n")
    got = [(m["line"], m["scope"]["kind"], m["scope"]["qualname"])
           for m in cli("grep_search", "NEEDLE", "--show-scope").result["matches"]]
    assert got == [(4, "method", "Outer.Inner.deep"), (6, "function", "Outer.Inner.deep.local"),
                   (8, "class", "Outer")]


def test_a_decorator_line_belongs_to_the_scope_around_the_definition(
        ws: Path, cli: CliRunner) -> None:
    """As Python's ast counts it: a definition starts at its def line."""
    (ws / "a.py").write_text("class A:\n    @NEEDLE\n    def f(self):\n        pass\n")
    result = cli("grep_search", "NEEDLE", "--show-scope").result
    assert labels(result) == {"a.py": ("class", "A", 1)}


def test_files_without_definitions_get_no_label(ws: Path, cli: CliRunner) -> None:
    (ws / "data.json").write_text('{"k": "NEEDLE"}\n')
    (ws / "notes.txt").write_text(NOTES)
    (ws / "Makefile").write_text("all:\n\techo NEEDLE\n")
    (ws / "tool").write_text("#!/usr/bin/env bash\nrun() {\n  echo NEEDLE\n}\n")
    result = cli("grep_search", "NEEDLE", "--show-scope").result
    assert labels(result) == {"Makefile": None, "data.json": None, "notes.txt": None,
                              "tool": ("function", "run", 2)}
    assert result["files_without_scope"] == ["Makefile", "data.json", "notes.txt"]


def test_a_file_over_the_parse_cap_gets_no_label(ws: Path, cli: CliRunner,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    (ws / "big.py").write_text("def f():\n    return NEEDLE\n" + "# padding\n" * 20)
    (ws / "small.py").write_text("def g():\n    return NEEDLE\n")
    monkeypatch.setattr(code_languages, "MAX_PARSE_BYTES", 100)
    result = cli("grep_search", "NEEDLE", "--show-scope").result
    assert labels(result) == {"big.py": None, "small.py": ("function", "g", 1)}
    assert result["files_without_scope"] == ["big.py"]


def test_without_the_option_the_result_is_as_before(ws: Path, cli: CliRunner) -> None:
    make_samples(ws)
    plain = cli("grep_search", "NEEDLE").result
    assert "files_without_scope" not in plain
    assert not any("scope" in m for m in plain["matches"])
    scoped = cli("grep_search", "NEEDLE", "--show-scope").result
    for m in scoped["matches"]:
        m.pop("scope", None)
    scoped.pop("files_without_scope")
    assert scoped == plain


@pytest.mark.parametrize("mode", ["count", "files_with_matches"])
def test_per_file_modes_ignore_the_option(ws: Path, cli: CliRunner, mode: str) -> None:
    make_samples(ws)
    assert cli("grep_search", "NEEDLE", "--output-mode", mode, "--show-scope").result == \
        cli("grep_search", "NEEDLE", "--output-mode", mode).result


def test_the_text_form_puts_a_header_before_each_definitions_matches(
        ws: Path, cli: CliRunner) -> None:
    (ws / "a.py").write_text("NEEDLE = 0\nclass A:\n    def f(self):\n        NEEDLE(1)\n"
                             "        NEEDLE(2)\n    def g(self):\n        NEEDLE(3)\n"
                             "NEEDLE(4)\n")
    (ws / "b.md").write_text(NOTES)
    out = cli(*TEXT, "grep_search", "NEEDLE", "--show-scope").out
    assert out == ("@@ a.py: top level\n"
                   "a.py:1:NEEDLE = 0\n"
                   "@@ a.py: method A.f (lines 3-5)\n"
                   "a.py:4:        NEEDLE(1)\n"
                   "a.py:5:        NEEDLE(2)\n"
                   "@@ a.py: method A.g (lines 6-7)\n"
                   "a.py:7:        NEEDLE(3)\n"
                   "@@ a.py: top level\n"
                   "a.py:8:NEEDLE(4)\n"
                   "b.md:1:NEEDLE in a note\n")


def test_with_context_the_header_comes_before_the_groups_first_line(
        ws: Path, cli: CliRunner) -> None:
    (ws / "a.py").write_text("def f():\n    x = 1\n    NEEDLE\n\n\n\ndef g():\n    NEEDLE\n")
    out = cli(*TEXT, "grep_search", "NEEDLE", "--show-scope", "-C", "1").out
    assert out == ("@@ a.py: function f (lines 1-3)\n"
                   "a.py-2-    x = 1\n"
                   "a.py:3:    NEEDLE\n"
                   "a.py-4-\n"
                   "--\n"
                   "@@ a.py: function g (lines 7-8)\n"
                   "a.py-7-def g():\n"
                   "a.py:8:    NEEDLE\n")


@pytest.mark.parametrize("flag", ["--paths", "-0"])
def test_paths_are_unaffected(ws: Path, cli: CliRunner, flag: str) -> None:
    make_samples(ws)
    assert cli(flag, "grep_search", "NEEDLE", "--show-scope").out == \
        cli(flag, "grep_search", "NEEDLE").out


@needs_rg
@pytest.mark.parametrize("engine", ["python", "rg", "native"])
def test_every_engine_gives_the_same_labels(ws: Path, cli: CliRunner, engine: str) -> None:
    make_samples(ws)
    result = cli("grep_search", "NEEDLE", "--show-scope", "--engine", engine).result
    assert result["engine"] == engine
    assert labels(result)["box.go"] == ("method", "Box.Open", 5)
    python = cli("grep_search", "NEEDLE", "--show-scope", "--engine", "python").result
    assert result["matches"] == python["matches"]


def test_a_batch_session_labels_the_file_as_it_is_now(ws: Path) -> None:
    """The warm engine's cache holds hits, never parses: an edit between two searches moves
    the label with it."""
    (ws / "a.py").write_text("def first():\n    return NEEDLE\n")
    lines = (
        '{"tool": "grep_search", "args": {"pattern": "NEEDLE", "show_scope": true}}\n'
        '{"tool": "apply_edit", "args": {"path": "a.py", "old_text": "def first():", '
        '"new_text": "class K:\\n  def second(self):"}}\n'
        '{"tool": "grep_search", "args": {"pattern": "NEEDLE", "show_scope": true}}\n')
    done = subprocess.run([sys.executable, "-m", "zbtools", "batch"], input=lines, cwd=ws,
                          capture_output=True, text=True, check=False,
                          env=dict(os.environ, PYTHONPATH=str(REPO)))
    import json

    answers = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    assert [a["ok"] for a in answers] == [True, True, True], done.stdout
    first, last = answers[0]["result"], answers[2]["result"]
    assert first["engine"] == "python" and last["engine"] == "python"
    assert first["matches"][0]["scope"]["qualname"] == "first"
    assert last["matches"][0]["line"] == 3
    assert last["matches"][0]["scope"]["qualname"] == "K.second"


def test_the_option_off_loads_no_parser_and_on_loads_one(ws: Path) -> None:
    (ws / "a.py").write_text("def f():\n    return NEEDLE\n")
    off = loaded_full(["grep_search", "NEEDLE", "--engine", "python"], ws)
    assert not {m for m in off if m.startswith(("tree_sitter", "zbtools.core.code"))}
    on = loaded_full(["grep_search", "NEEDLE", "--engine", "python", "--show-scope"], ws)
    assert {"tree_sitter_python._binding", "zbtools.core.code.scopes"} <= on


def test_two_definitions_on_one_line_give_the_later_one(ws: Path, cli: CliRunner) -> None:
    """One line, one match: the definition a reader meets last before it."""
    (ws / "a.js").write_text("function a() { NEEDLE } function b() { NEEDLE }\n")
    assert labels(cli("grep_search", "NEEDLE", "--show-scope").result) == {
        "a.js": ("function", "b", 1)}

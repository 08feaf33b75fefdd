"""edit_symbol: replace a definition or its body, insert before or after it, by name, in every
symbol language, through the shared write path (undo, dry_run, staleness, protections), and
the refusals that leave the disk as it was (docs/internals/code.md#symbol-tools)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import CliRunner, snapshot
from tests.tools.symbol_samples import BY_LANGUAGE, SAMPLES, Sample
from zbtools.core.code.languages import language_for
from zbtools.core.code.symbols import read_symbols


def put(ws: Path, sample: Sample) -> Path:
    path = ws / sample.path
    path.write_bytes(sample.source.encode())
    return path


def parses(path: Path) -> bool:
    language = language_for(path.name)
    assert language is not None
    return not read_symbols(language, path.read_bytes()).has_errors


def qualnames(path: Path) -> list[str]:
    language = language_for(path.name)
    assert language is not None
    return [d.qualname for d in read_symbols(language, path.read_bytes()).definitions]


@pytest.mark.parametrize("sample", SAMPLES, ids=repr)
def test_replace_a_definition_sent_unindented(ws: Path, cli: CliRunner, sample: Sample) -> None:
    path = put(ws, sample)
    result = cli("edit_symbol", stdin={"symbol": sample.symbol, "new_text": sample.replacement}
                 ).result
    assert path.read_text() == sample.replaced
    assert (result["path"], result["action"], result["changed"]) == (sample.path, "replace", True)
    assert (result["symbol"]["qualname"], result["symbol"]["kind"]) == (sample.symbol.replace(
        "::", "."), sample.kind)
    assert result["diff"].startswith(f"--- a/{sample.path}")
    assert parses(path)


@pytest.mark.parametrize("sample", SAMPLES, ids=repr)
def test_replace_a_body(ws: Path, cli: CliRunner, sample: Sample) -> None:
    path = put(ws, sample)
    cli("edit_symbol", stdin={"symbol": sample.symbol, "path": sample.path,
                              "action": "replace_body", "new_text": sample.body}).result
    assert path.read_text() == sample.body_replaced
    assert parses(path)


@pytest.mark.parametrize("sample", SAMPLES, ids=repr)
@pytest.mark.parametrize("action", ["insert_before", "insert_after"])
def test_insert_a_sibling_before_or_after(ws: Path, cli: CliRunner, sample: Sample,
                                          action: str) -> None:
    path = put(ws, sample)
    cli("edit_symbol", stdin={"symbol": sample.symbol, "action": action,
                              "new_text": sample.extra}).result
    text = path.read_text()
    names = qualnames(path)
    assert sample.extra_name in names, text
    own = names.index(sample.symbol)
    assert names.index(sample.extra_name) == (own - 1 if action == "insert_before" else own + 1)
    assert parses(path), text
    # the original definition is untouched, byte for byte
    original = sample.source
    assert all(line in text for line in original.splitlines())


@pytest.mark.parametrize("sample", SAMPLES, ids=repr)
def test_undo_restores_the_bytes(ws: Path, cli: CliRunner, sample: Sample) -> None:
    path = put(ws, sample)
    cli("edit_symbol", stdin={"symbol": sample.symbol, "new_text": sample.replacement}).result
    undone = cli("undo", stdin={"path": sample.path}).result
    assert undone["tool"] == "edit_symbol"
    assert path.read_bytes() == sample.source.encode()


@pytest.mark.parametrize("sample", SAMPLES, ids=repr)
def test_through_a_real_process(ws: Path, proc: CliRunner, sample: Sample) -> None:
    path = put(ws, sample)
    call = proc("edit_symbol", "--stdin", sample.symbol,
                stdin={"action": "replace_body", "new_text": sample.body})
    assert call.code == 0, call
    assert call.result["symbol"]["start_line"] == sample.start_line
    assert path.read_text() == sample.body_replaced


def test_dry_run_reports_the_diff_and_writes_nothing(ws: Path, cli: CliRunner) -> None:
    sample = BY_LANGUAGE["a.py"]
    put(ws, sample)
    before = snapshot(ws)
    result = cli("edit_symbol", stdin={"symbol": "A.m", "new_text": sample.replacement,
                                       "dry_run": True}).result
    assert result["dry_run"] and "+        return 2" in result["diff"]
    assert snapshot(ws) == before


def test_the_same_text_again_changes_nothing(ws: Path, cli: CliRunner) -> None:
    path = ws / "a.py"
    path.write_text("def f():\n    return 1\n")
    result = cli("edit_symbol", stdin={"symbol": "f", "new_text": "def f():\n    return 1\n"}
                 ).result
    assert result["changed"] is False
    assert path.read_text() == "def f():\n    return 1\n"


def test_a_file_changed_since_the_read_is_refused(ws: Path, cli: CliRunner) -> None:
    path = ws / "a.py"
    path.write_text("def f():\n    return 1\n")
    call = cli("edit_symbol", stdin={"symbol": "f", "new_text": "def f(): pass",
                                     "expected_sha256": "0" * 64})
    assert call.error["code"] == "stale_file"
    assert path.read_text() == "def f():\n    return 1\n"


def test_hard_links_keep_sharing_the_file(ws: Path, cli: CliRunner) -> None:
    path = ws / "a.py"
    path.write_text("def f():\n    return 1\n")
    os.link(path, ws / "b.pyx")
    cli("edit_symbol", stdin={"symbol": "f", "path": "a.py", "action": "replace_body",
                              "new_text": "return 2"}).result
    assert (ws / "b.pyx").read_text() == "def f():\n    return 2\n"


def test_crlf_and_tabs_are_the_file_s(ws: Path, cli: CliRunner) -> None:
    path = ws / "a.py"
    path.write_bytes(b"class A:\r\n\tdef m(self):\r\n\t\treturn 1\r\n")
    cli("edit_symbol", stdin={"symbol": "A.m", "action": "insert_after",
                              "new_text": "def n(self):\n    if x:\n        return 2"}).result
    assert path.read_bytes() == (b"class A:\r\n\tdef m(self):\r\n\t\treturn 1\r\n"
                                 b"\tdef n(self):\r\n\t\tif x:\r\n\t\t\treturn 2\r\n")


def test_a_first_line_sent_bare_with_the_rest_in_the_file_s_columns(
        ws: Path, cli: CliRunner) -> None:
    path = ws / "a.py"
    path.write_text("class A:\n    def m(self):\n        return 1\n")
    cli("edit_symbol", stdin={"symbol": "m", "new_text": "def m(self):\n        return 2"}
        ).result
    assert path.read_text() == "class A:\n    def m(self):\n        return 2\n"


def test_a_one_line_body_grows_below_its_header(ws: Path, cli: CliRunner) -> None:
    path = ws / "a.py"
    path.write_text("class A:\n    def m(self): return 1\n")
    cli("edit_symbol", stdin={"symbol": "A.m", "action": "replace_body",
                              "new_text": "x = 1\nreturn x"}).result
    assert path.read_text() == "class A:\n    def m(self):\n        x = 1\n        return x\n"


def test_empty_text_deletes_the_definition_and_one_gap(ws: Path, cli: CliRunner) -> None:
    path = ws / "a.py"
    path.write_text("import os\n\n\ndef f():\n    pass\n\n\ndef g():\n    pass\n")
    cli("edit_symbol", stdin={"symbol": "f", "new_text": ""}).result
    assert path.read_text() == "import os\n\n\ndef g():\n    pass\n"
    cli("edit_symbol", stdin={"symbol": "g", "new_text": ""}).result
    assert path.read_text() == "import os\n"


def test_line_chooses_among_definitions_of_one_name(ws: Path, cli: CliRunner) -> None:
    path = ws / "a.py"
    source = ("class A:\n    @property\n    def x(self):\n        return 1\n\n    @x.setter\n"
              "    def x(self, v):\n        pass\n")
    path.write_text(source)
    before = snapshot(ws)
    call = cli("edit_symbol", stdin={"symbol": "A.x", "action": "replace_body",
                                     "new_text": "return 2"})
    assert call.error["code"] == "ambiguous_symbol"
    assert "line" in call.error["hint"]
    assert [c["line"] for c in call.error["details"]["candidates"]] == [3, 7]
    assert snapshot(ws) == before
    cli("edit_symbol", stdin={"symbol": "A.x", "line": 3, "action": "replace_body",
                              "new_text": "return 2"}).result
    assert path.read_text() == source.replace("return 1", "return 2")


# ---- refusals leave the disk as it was ---------------------------------------------------


def test_an_unknown_name_is_refused_with_the_closest_names(ws: Path, cli: CliRunner) -> None:
    put(ws, BY_LANGUAGE["a.py"])
    before = snapshot(ws)
    call = cli("edit_symbol", stdin={"symbol": "A.mm", "new_text": "def mm(): pass"})
    assert call.error["code"] == "symbol_not_found"
    assert call.error["details"]["closest"][0] == "A.m"
    assert "A.m" in call.error["hint"]
    assert snapshot(ws) == before


def test_a_name_in_two_files_is_ambiguous(ws: Path, cli: CliRunner) -> None:
    (ws / "a.py").write_text("def run():\n    pass\n")
    (ws / "sub").mkdir()
    (ws / "sub" / "b.go").write_text("package b\n\nfunc run() {}\n")
    before = snapshot(ws)
    call = cli("edit_symbol", stdin={"symbol": "run", "new_text": "def run(): pass"})
    assert call.error["code"] == "ambiguous_symbol"
    listed = {(c["path"], c["line"]) for c in call.error["details"]["candidates"]}
    assert listed == {("a.py", 1), ("sub/b.go", 3)}
    assert "path" in call.error["hint"]
    assert snapshot(ws) == before
    cli("edit_symbol", stdin={"symbol": "run", "path": "sub", "action": "replace_body",
                              "new_text": "return"}).result
    assert (ws / "sub" / "b.go").read_text() == "package b\n\nfunc run() {\n\treturn\n}\n"


@pytest.mark.parametrize("name", ["notes.txt", "data.json", "script"])
def test_a_file_in_another_language_is_unsupported(ws: Path, cli: CliRunner, name: str) -> None:
    (ws / name).write_text("#!/usr/bin/awk -f\nrun\n" if name == "script" else "{\"run\": 1}\n")
    before = snapshot(ws)
    call = cli("edit_symbol", stdin={"symbol": "run", "path": name, "new_text": "x"})
    assert call.error["code"] == "unsupported_language"
    assert snapshot(ws) == before


def test_a_protected_path_is_refused(ws: Path, cli: CliRunner) -> None:
    (ws / ".git").mkdir()
    (ws / ".git" / "hook.py").write_text("def f():\n    pass\n")
    before = snapshot(ws)
    call = cli("edit_symbol", stdin={"symbol": "f", "path": ".git/hook.py", "new_text": "x"})
    assert call.error["code"] == "protected_path"
    assert snapshot(ws) == before


def test_replace_body_of_a_definition_without_one(ws: Path, cli: CliRunner) -> None:
    (ws / "a.ts").write_text("const h = () => 1;\n")
    before = snapshot(ws)
    call = cli("edit_symbol", stdin={"symbol": "h", "action": "replace_body", "new_text": "2"})
    assert call.error["code"] == "invalid_arguments"
    assert snapshot(ws) == before
    empty = cli("edit_symbol", stdin={"symbol": "h", "action": "insert_after", "new_text": ""})
    assert empty.error["code"] == "invalid_arguments"
    assert snapshot(ws) == before


def test_refusals_through_a_real_process(ws: Path, proc: CliRunner) -> None:
    (ws / "a.py").write_text("def run():\n    pass\n")
    before = snapshot(ws)
    call = proc("edit_symbol", "--stdin", "nope", stdin={"new_text": "x"})
    assert call.code != 0 and call.error["code"] == "symbol_not_found"
    assert snapshot(ws) == before


def test_in_a_batch_session_each_call_sees_the_last_edit(ws: Path, cli: CliRunner) -> None:
    import json

    (ws / "a.py").write_text("class A:\n    def old(self):\n        return 1\n")
    (ws / "b.py").write_text("from a import A\n")
    requests = [
        {"id": 1, "tool": "find_symbol", "args": {"symbol": "A.old"}},
        {"id": 2, "tool": "edit_symbol", "args": {"symbol": "A.old", "new_text":
                                                  "def new(self):\n    return 2"}},
        {"id": 3, "tool": "find_symbol", "args": {"symbol": "A.new"}},
        {"id": 4, "tool": "edit_symbol", "args": {"symbol": "A.new", "action": "insert_after",
                                                  "new_text": "def third(self):\n    pass"}},
        {"id": 5, "tool": "find_symbol", "args": {"symbol": "old"}},
    ]
    call = cli("batch", stdin="".join(json.dumps(r) + "\n" for r in requests))
    out = [json.loads(line) for line in call.out.splitlines()]
    assert all(o["ok"] for o in out), out
    assert out[0]["result"]["definitions"][0]["start_line"] == 2
    assert out[2]["result"]["definitions"][0]["qualname"] == "A.new"
    assert out[4]["result"]["definitions"] == []
    assert (ws / "a.py").read_text() == ("class A:\n    def new(self):\n        return 2\n"
                                         "    def third(self):\n        pass\n")


def test_an_exported_arrow_function_is_replaced_whole(ws: Path, cli: CliRunner) -> None:
    path = ws / "a.ts"
    path.write_text("// doc\nexport const h = () => 1;\nexport function g() {}\n")
    cli("edit_symbol", stdin={"symbol": "h", "new_text": "export const h = () => 2;"}).result
    assert path.read_text() == "export const h = () => 2;\nexport function g() {}\n"
    cli("edit_symbol", stdin={"symbol": "g", "action": "insert_before",
                              "new_text": "// g's doc"}).result
    assert path.read_text() == "export const h = () => 2;\n// g's doc\nexport function g() {}\n"


@pytest.mark.parametrize("data,encoded", [
    (b"\xef\xbb\xbfdef f():\n    return 'caf\xc3\xa9'\n", "utf-8-sig"),
    (b"# caf\xe9\ndef f():\n    return 1\n", "cp1252"),
])
def test_a_bom_or_another_encoding_is_kept(ws: Path, cli: CliRunner, data: bytes,
                                           encoded: str) -> None:
    path = ws / "a.py"
    path.write_bytes(data)
    cli("edit_symbol", stdin={"symbol": "f", "action": "replace_body",
                              "new_text": "return 'd\u00e9j\u00e0'"}).result
    text = data.decode(encoded)
    body = text[text.index("return"):].rstrip("\n")
    assert path.read_bytes() == text.replace(body, "return 'd\u00e9j\u00e0'").encode(encoded)

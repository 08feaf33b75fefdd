"""The syntax guard of every writer, through the real entry points (docs/editing.md#syntax-guard).

``check_syntax`` (parameter, ``[files] check_syntax``, ``ZBTOOLS_CHECK_SYNTAX``): ``warn``
writes and reports, ``refuse`` fails with ``syntax_error`` and leaves every byte as it was,
``off`` does not parse. Each writer is checked in-process; each language through a real
subprocess; batch, the config file, a dialect and the import budget too.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CliRunner, snapshot
from tests.core.code.test_syntax import CASES, edited
from tests.surfaces.test_batch import jsonl, lines
from tests.test_import_budget import loaded_full

PY = "def f(x):\n    return x + 1\n"
BROKEN_PY = "def f(x):\n    return (x + 1\n"
EXT = {"python": "py", "javascript": "js", "typescript": "ts", "tsx": "tsx", "go": "go",
       "rust": "rs", "java": "java", "c": "c", "cpp": "cpp", "c_sharp": "cs", "ruby": "rb",
       "php": "php", "bash": "sh", "json": "json", "yaml": "yaml", "toml": "toml",
       "html": "html", "css": "css"}


def edit_args(path: str, old: str, new: str, **extra: Any) -> dict[str, Any]:
    return {"path": path, "old_text": old, "new_text": new, **extra}


def test_warn_writes_and_reports_what_broke(ws: Path, cli: CliRunner) -> None:
    (ws / "a.py").write_text(PY)
    call = cli("apply_edit", stdin=edit_args("a.py", "return x + 1", "return (x + 1"))
    envelope = call.json
    assert call.code == 0 and envelope["ok"], call
    assert (ws / "a.py").read_text() == BROKEN_PY
    [report] = envelope["result"]["syntax"]
    assert report["path"] == "a.py" and report["language"] == "python"
    [problem] = report["introduced"]
    assert problem["line"] == 2 and problem["column"] == 12
    assert problem["message"] == "'(' was never closed"
    assert problem["lines"] == "     1\tdef f(x):\n     2\t    return (x + 1\n"
    [warning] = envelope["warnings"]
    assert "a.py: line 2, column 12: '(' was never closed" in warning
    assert "2\t    return (x + 1" in warning


def test_a_change_that_breaks_nothing_adds_nothing(ws: Path, cli: CliRunner) -> None:
    (ws / "a.py").write_text(PY)
    call = cli("apply_edit", stdin=edit_args("a.py", "x + 1", "x + 2"))
    assert "syntax" not in call.result and call.json["warnings"] == []


def test_refuse_writes_nothing_and_says_how_to_fix(ws: Path, cli: CliRunner) -> None:
    (ws / "a.py").write_text(PY)
    before = snapshot(ws)
    call = cli("apply_edit", stdin=edit_args("a.py", "return x + 1", "return (x + 1",
                                             check_syntax="refuse"))
    error = call.error
    assert call.code == 1 and error["code"] == "syntax_error"
    assert "a.py: line 2, column 12: '(' was never closed" in error["message"]
    assert "line 2 of a.py" in error["hint"]
    assert error["details"]["files"][0]["introduced"][0]["line"] == 2
    assert snapshot(ws) == before
    # a dry run is refused the same way
    dry = cli("apply_edit", stdin=edit_args("a.py", "return x + 1", "return (x + 1",
                                            check_syntax="refuse", dry_run=True))
    assert dry.error["code"] == "syntax_error" and snapshot(ws) == before


def test_off_parses_nothing(ws: Path, cli: CliRunner) -> None:
    (ws / "a.py").write_text(PY)
    call = cli("apply_edit", stdin=edit_args("a.py", "return x + 1", "return (x + 1",
                                             check_syntax="off"))
    assert "syntax" not in call.result and call.json["warnings"] == []


def test_an_unknown_language_is_never_checked(ws: Path, cli: CliRunner) -> None:
    (ws / "notes.txt").write_text("def f(:\n")
    call = cli("write_file", stdin={"path": "notes.txt", "content": "((((\n",
                                    "check_syntax": "refuse"})
    assert call.result["changed"] and "syntax" not in call.result


def test_errors_already_there_are_not_introduced(ws: Path, cli: CliRunner) -> None:
    (ws / "a.py").write_text("x = (\n\n\ny = 1\n")
    call = cli("apply_edit", stdin=edit_args("a.py", "y = 1", "y = 2", check_syntax="refuse"))
    assert call.result["changed"] and "syntax" not in call.result


@pytest.mark.parametrize("tool,args", [
    ("edit_file", {"path": "a.py", "old_content": "x + 1", "new_content": "x +"}),
    ("insert_text", {"path": "a.py", "insert_line": 1, "content": "  )"}),
    ("write_file", {"path": "a.py", "content": "def f(:\n"}),
    ("write_file", {"path": "new/dir/b.py", "content": "def f(:\n"}),
    ("write_append", {"path": "a.py", "content": "def g(:\n"}),
    ("write_append", {"path": "new/c.py", "content": "def g(:\n"}),
    ("edit_symbol", {"symbol": "f", "action": "replace_body", "new_text": "return (x"}),
    ("edit_symbol", {"symbol": "f", "action": "insert_after", "new_text": "def g(:\n    pass"}),
    ("apply_edit", {"path": "a.py", "patches": [{"old_text": "x + 1", "new_text": "x + 2"},
                                                {"old_text": "def f(x):", "new_text": "def f(x:"}
                                                ]}),
])
def test_every_writer_refuses_and_leaves_the_disk_as_it_was(
        ws: Path, cli: CliRunner, tool: str, args: dict[str, Any]) -> None:
    (ws / "a.py").write_text(PY)
    before = snapshot(ws)
    call = cli(tool, stdin={**args, "check_syntax": "refuse"})
    assert call.error["code"] == "syntax_error", call
    assert snapshot(ws) == before  # no file, no parent directory, no byte
    warned = cli(tool, stdin=args)
    assert warned.result["syntax"][0]["introduced"], warned


def test_a_multi_file_patch_is_refused_whole(ws: Path, cli: CliRunner) -> None:
    (ws / "a.py").write_text(PY)
    (ws / "b.js").write_text("let a = 1;\n")
    patch = ("--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,2 @@\n def f(x):\n-    return x + 1\n"
             "+    return x + 2\n--- a/b.js\n+++ b/b.js\n@@ -1 +1 @@\n-let a = 1;\n"
             "+let a = ;\n")
    before = snapshot(ws)
    call = cli("apply_edit", stdin={"patch": patch, "check_syntax": "refuse"})
    assert call.error["code"] == "syntax_error"
    assert [f["path"] for f in call.error["details"]["files"]] == ["b.js"]
    assert snapshot(ws) == before
    warned = cli("apply_edit", stdin={"patch": patch})
    assert [r["path"] for r in warned.result["syntax"]] == ["b.js"]
    assert (ws / "a.py").read_text().endswith("x + 2\n")


def test_the_editor_writers_are_guarded(ws: Path, cli: CliRunner) -> None:
    (ws / "a.py").write_text(PY)
    cli("open_file", stdin={"path": "a.py"})
    cli("select_range", stdin={"start_line": 2, "start_column": 12, "end_line": 2,
                               "end_column": 17})
    before = snapshot(ws)
    call = cli("replace_selection", stdin={"content": "(x + ", "check_syntax": "refuse"})
    assert call.error["code"] == "syntax_error"
    assert snapshot(ws) == before
    done = cli("insert_at_cursor", stdin={"content": "(("})
    assert done.result["syntax"][0]["language"] == "python"


def test_the_setting_from_the_environment_and_the_config_file(
        ws: Path, cli: CliRunner, tmp_path: Path) -> None:
    (ws / "a.py").write_text(PY)
    args = edit_args("a.py", "return x + 1", "return (x + 1")
    assert cli("apply_edit", stdin=args, env={"ZBTOOLS_CHECK_SYNTAX": "refuse"}).error[
        "code"] == "syntax_error"
    config = tmp_path / "strict.toml"
    config.write_text('[files]\ncheck_syntax = "refuse"\n')
    env = {"ZBTOOLS_CONFIG": str(config)}
    assert cli("apply_edit", stdin=args, env=env).error["code"] == "syntax_error"
    # the call's own parameter wins
    assert cli("apply_edit", stdin={**args, "check_syntax": "warn"}, env=env).result["syntax"]
    config.write_text('[files]\ncheck_syntax = "never"\n')
    bad = cli("apply_edit", stdin=args, env=env)
    assert bad.error["code"] == "usage_error" and "check_syntax" in bad.error["message"]


def test_a_bad_parameter_value_is_invalid_arguments(ws: Path, cli: CliRunner) -> None:
    (ws / "a.py").write_text(PY)
    call = cli("apply_edit", stdin=edit_args("a.py", "x", "y", check_syntax="strict"))
    assert call.error["code"] == "invalid_arguments"


def test_another_dialect_warns_and_never_refuses(ws: Path, cli: CliRunner) -> None:
    (ws / "a.py").write_text(PY)
    call = cli("--dialect", "claude", "Edit",
               stdin={"file_path": str(ws / "a.py"), "old_string": "return x + 1",
                      "new_string": "return (x + 1"},
               env={"ZBTOOLS_CHECK_SYNTAX": "refuse"})
    assert call.json["ok"], call
    assert (ws / "a.py").read_text() == BROKEN_PY
    assert any("'(' was never closed" in w for w in call.json["warnings"])
    schema = cli("--dialect", "claude", "schema")
    assert "check_syntax" not in schema.out
    # the canonical tools' schema has it
    assert "check_syntax" in cli("schema").out


def test_batch_checks_each_edit_and_a_refusal_leaves_the_file(ws: Path, cli: CliRunner) -> None:
    body = "".join(f"def f{i}(x):\n    return x + {i}\n\n\n" for i in range(30))
    (ws / "a.py").write_text(body)
    requests = [{"id": i, "tool": "apply_edit",
                 "args": edit_args("a.py", f"x + {i}\n", f"x * {i}\n")} for i in range(5)]
    requests.append({"id": "bad", "tool": "apply_edit",
                     "args": edit_args("a.py", "x + 7\n", "(x + 7\n", check_syntax="refuse")})
    requests.append({"id": "warned", "tool": "apply_edit",
                     "args": edit_args("a.py", "x + 8\n", "x +\n")})
    out = lines(cli("batch", stdin=jsonl(*requests)).out)
    assert [o["ok"] for o in out] == [True] * 5 + [False, True]
    assert out[5]["error"]["code"] == "syntax_error"
    assert out[6]["result"]["syntax"][0]["introduced"][0]["line"] == 34
    text = (ws / "a.py").read_text()
    assert "x * 4" in text and "(x + 7" not in text and "return x +\n" in text


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_language_through_a_real_subprocess(ws: Path, proc: CliRunner, name: str) -> None:
    text, good, bad = CASES[name]
    path = f"f.{EXT[name]}"
    (ws / path).write_text(text)
    before = snapshot(ws)
    refused = proc("apply_edit", "--args", json.dumps(edit_args(path, *bad,
                                                                check_syntax="refuse")))
    assert refused.code == 1 and refused.error["code"] == "syntax_error", refused
    assert snapshot(ws) == before
    assert refused.err == ""
    fine = proc("apply_edit", "--args", json.dumps(edit_args(path, *good)))
    assert "syntax" not in fine.result
    assert (ws / path).read_text() == edited(text, *good)


@pytest.mark.parametrize("path,content,args,tree_sitter", [
    ("a.txt", "x\n", {"old_text": "x", "new_text": "(("}, False),
    ("a.py", PY, {"old_text": "x + 1", "new_text": "(x + 1"}, False),
    ("a.js", "let a = 1;\n", {"old_text": "1;", "new_text": ";", "check_syntax": "off"}, False),
    ("a.js", "let a = 1;\n", {"old_text": "1;", "new_text": ";"}, True),
])
def test_what_a_cold_edit_imports(ws: Path, path: str, content: str, args: dict[str, Any],
                                  tree_sitter: bool) -> None:
    (ws / path).write_text(content)
    modules = loaded_full(["apply_edit", "--args", json.dumps({"path": path, **args})], ws)
    assert any(m.startswith("tree_sitter") for m in modules) == tree_sitter
    if not tree_sitter:
        assert "warnings" not in modules


def test_a_call_outside_a_session_keeps_nothing_for_the_next_edit(
        ws: Path, cli: CliRunner) -> None:
    """A harness running many calls in one Python process must not accumulate the guard's
    parses: only a session (batch, mcp) keeps them (docs/internals/code.md#syntax-guard)."""
    from zbtools.core.code import pychunks, syntax

    pychunks._CACHE.clear()
    syntax._TREES.clear()
    (ws / "a.py").write_text(PY)
    (ws / "b.js").write_text("let a = 1;\n")
    assert cli("apply_edit", stdin=edit_args("a.py", "x + 1", "x + 2")).result["changed"]
    assert cli("apply_edit", stdin=edit_args("b.js", "1", "2")).result["changed"]
    assert not pychunks._CACHE and not syntax._TREES

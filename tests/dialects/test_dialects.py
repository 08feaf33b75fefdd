"""Dialects: each one's documented examples (docs/internals/sources.md) through the real CLI.

The documents are those of zblade, claude, zkit and fiz, plus Anthropic's and Codex's.

The parity table drives ``zbtools --dialect D TOOL`` in-process (``cli``) and, for a sample, as
a real subprocess (``proc``), and checks the files and results. fiz's schemas are compared with
the ones its documentation publishes (tests/data/fiz_tool_schemas.json, copied from fiz's
reference, docs/internals/sources.md#fiz).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO, Call, CliRunner
from zbtools.dialects import DialectTool, get_dialect, invoke
from zbtools.options import DIALECTS
from zbtools.registry import all_tools

SEED_FIZ = json.loads((REPO / "tests" / "data" / "fiz_tool_schemas.json").read_text())
LINES = "".join(f"line {i}\n" for i in range(1, 11))


def put(ws: Path, rel: str, text: str) -> Path:
    path = ws / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


# ---------------------------------------------------------------------------------------------
# The API


def test_every_dialect_loads_and_lists_only_tools_it_can_run() -> None:
    canonical = {s.name for s in all_tools()}
    for name in DIALECTS:
        dialect = get_dialect(name)
        assert dialect.name == name
        tools = dialect.tools()
        assert tools, name
        assert len({t.name for t in tools}) == len(tools)
        for tool in tools:
            assert set(tool.targets) <= canonical, tool
            assert tool.description and tool.spec is not None
            assert isinstance(tool.input_schema(), dict)
        assert not set(dialect.unavailable()) & {t.name for t in tools}


def test_documented_tool_names() -> None:
    def names(d: str) -> list[str]:
        return [t.name for t in get_dialect(d).tools()]

    assert names("claude") == ["Bash", "BashOutput", "KillShell", "Glob", "Grep", "LS", "Read",
                               "Edit", "MultiEdit", "Write", "NotebookEdit", "WebFetch",
                               "WebSearch", "TodoWrite"]
    assert names("fiz") == ["bash", "edit", "find", "grep", "ls", "patch", "read", "task",
                            "write"]
    assert names("zkit")[:15] == [
        "read", "write", "write_append", "edit", "apply_patch", "grep", "glob", "ls", "bash",
        "bash_output", "stop_process", "list_processes", "save_plan", "save_plan_append",
        "update_plan"]
    assert set(names("zkit")) | set(get_dialect("zkit").unavailable()) >= {"web_fetch",
                                                                           "web_search"}
    assert names("anthropic") == ["str_replace_based_edit_tool"]
    assert names("codex") == ["apply_patch", "shell", "update_plan", "view_image"]
    assert names("zblade") == sorted(s.name for s in all_tools())


def test_get_dialect_defaults_and_refuses_unknown_names() -> None:
    assert get_dialect(None, {}).name == "zblade"
    assert get_dialect(None, {"ZBTOOLS_DIALECT": "fiz"}).name == "fiz"
    assert get_dialect("Claude").name == "claude"
    with pytest.raises(Exception) as info:
        get_dialect("aider")
    error: Any = info.value
    assert error.code == "usage_error"
    assert "zblade, claude, zkit, fiz, anthropic, codex, gemini" in error.hint


@pytest.mark.parametrize("dialect", DIALECTS)
def test_canonical_names_and_aliases_still_resolve(dialect: str) -> None:
    d = get_dialect(dialect)
    own = {t.name for t in d.tools()}
    for name in ("read_file", "create_file", "list_dir", "rg", "apply_edit"):
        tool = d.lookup(name)
        assert tool is not None, name
        assert tool.name == name if name in own else tool.identity  # the dialect's name wins
    assert d.lookup("no_such_tool") is None


def test_a_dialect_name_wins_over_a_canonical_alias() -> None:
    find = get_dialect("fiz").lookup("find")
    assert find is not None and find.name == "find" and "dir" in find.params.fields()
    read = get_dialect("claude").lookup("read")  # case-insensitive fallback
    assert read is not None and read.name == "Read"
    assert get_dialect("anthropic").lookup("str_replace_editor") is not None


def test_annotations_follow_the_canonical_tool_unless_the_dialect_differs() -> None:
    zkit = get_dialect("zkit")
    read, write = zkit.lookup("read"), zkit.lookup("write")
    assert read is not None and read.read_only and read.idempotent and not read.destructive
    assert write is not None and not write.read_only and not write.destructive
    editor = get_dialect("anthropic").tools()[0]
    assert editor.destructive and not editor.read_only


def test_to_and_from_canonical() -> None:
    fiz = get_dialect("fiz")
    read = fiz.lookup("read")
    assert read is not None
    assert read.to_canonical({"path": "a", "offset": 0, "limit": 5}) == {
        "path": "a", "offset": 1, "limit": 5}
    assert read.from_canonical({"next_offset": 11, "x": 1}) == {"next_offset": 10, "x": 1}
    edit = fiz.lookup("edit")
    assert edit is not None
    assert edit.to_canonical({"path": "a", "edits": [{"oldText": "x", "newText": "y"}]}) == {
        "path": "a", "patches": [{"old_text": "x", "new_text": "y"}],
        "tiers": ["trailing_whitespace", "indentation"]}
    grep = get_dialect("claude").lookup("Grep")
    assert grep is not None
    assert grep.to_canonical({"pattern": "x", "-A": 2, "-i": True, "-n": True}) == {
        "pattern": "x", "output_mode": "files_with_matches", "after_context": 2,
        "case_insensitive": True, "exclude_dirs": []}
    with pytest.raises(Exception) as info:
        grep.to_canonical({"pattern": "x", "-Z": 1})
    error: Any = info.value
    assert error.code == "invalid_arguments"
    assert "-A" in error.details["problems"][0]["accepted"]


def test_invoke_runs_a_dialect_tool(ws: Path) -> None:
    from zbtools.core.call.context import Context
    from zbtools.core.files.workspace import Workspace

    put(ws, "a.txt", LINES)
    tool = get_dialect("fiz").lookup("read")
    assert isinstance(tool, DialectTool)
    ctx = Context(Workspace(str(ws)))
    try:
        outcome = invoke(tool, {"path": "a.txt", "offset": 3, "limit": 2}, ctx)
    finally:
        ctx.workspace.close()
    assert outcome.payload["content"] == "line 4\nline 5\n"
    assert outcome.payload["next_offset"] == 5
    assert outcome.spec.name == "read_file"


# ---------------------------------------------------------------------------------------------
# Schemas reproduce the documented ones


@pytest.mark.parametrize("name", sorted(SEED_FIZ))
def test_fiz_schemas_reproduce_the_published_ones(name: str) -> None:
    tool = get_dialect("fiz").lookup(name)
    assert tool is not None
    assert tool.description == SEED_FIZ[name]["description"]
    ours, theirs = tool.input_schema(), SEED_FIZ[name]["schema"]

    def covers(mine: Any, published: Any, where: str) -> None:
        if isinstance(published, dict):
            assert isinstance(mine, dict), where
            for key, value in published.items():
                assert key in mine, f"{where}.{key} missing"
                covers(mine[key], value, f"{where}.{key}")
            if "properties" in published:
                assert list(mine["properties"]) == list(published["properties"]), where
        else:
            assert mine == published, where

    covers(ours, theirs, name)
    assert set(ours.get("required", [])) == set(theirs.get("required", []))


def test_claude_and_anthropic_schemas_name_the_documented_parameters() -> None:
    claude = {t.name: t.input_schema() for t in get_dialect("claude").tools()}
    # the seed: "Supports PDFs with page range selection", so pages is documented too
    assert list(claude["Read"]["properties"]) == ["file_path", "offset", "limit", "pages"]
    assert claude["Read"]["required"] == ["file_path"]
    assert list(claude["Edit"]["properties"]) == ["file_path", "old_string", "new_string",
                                                  "replace_all"]
    assert claude["Write"]["required"] == ["file_path", "content"]
    assert claude["Glob"]["required"] == ["pattern"]
    grep = claude["Grep"]["properties"]
    assert {"pattern", "path", "glob", "output_mode", "-A", "-B", "-C", "-i", "type",
            "multiline"} <= set(grep)
    assert grep["output_mode"]["enum"] == ["content", "files_with_matches", "count"]
    editor = get_dialect("anthropic").tools()[0].input_schema()
    assert editor["properties"]["command"]["enum"] == [
        "view", "create", "str_replace", "insert", "undo_edit"]
    assert editor["required"] == ["command", "path"]
    assert editor["properties"]["view_range"] == {**editor["properties"]["view_range"],
                                                  "type": "array",
                                                  "items": {"type": "integer"}}
    codex = {t.name: t.input_schema() for t in get_dialect("codex").tools()}
    assert codex["apply_patch"]["required"] == ["input"]
    assert codex["shell"]["properties"]["command"]["items"] == {"type": "string"}
    assert codex["update_plan"]["properties"]["plan"]["items"]["required"] == ["step",
                                                                                 "status"]


# ---------------------------------------------------------------------------------------------
# The parity table: documented examples through the CLI

Check = Callable[[Path, Call], object]


def content_is(expected: str) -> Check:
    def check(ws: Path, call: Call) -> None:
        assert call.result["content"] == expected

    return check


def file_is(rel: str, expected: str) -> Check:
    def check(ws: Path, call: Call) -> None:
        assert call.code == 0, call
        assert (ws / rel).read_text() == expected

    return check


def error_is(code: str, *, text: str = "") -> Check:
    def check(ws: Path, call: Call) -> None:
        error = call.error
        assert error["code"] == code, error
        assert text in error["message"] + error["hint"]

    return check


def unchanged(rel: str, expected: str) -> Check:
    def check(ws: Path, call: Call) -> None:
        assert (ws / rel).read_text() == expected

    return check


def both(*checks: Check) -> Check:
    def check(ws: Path, call: Call) -> None:
        for c in checks:
            c(ws, call)

    return check


def result_has(**expected: Any) -> Check:
    def check(ws: Path, call: Call) -> None:
        result = call.result
        for key, value in expected.items():
            assert result[key] == value, (key, result[key])

    return check


SRC = "def foo():\n    x = 1\n    return x\n"
# (id, dialect, tool, args, files before, check)
TABLE: list[tuple[str, str, str, dict[str, Any], dict[str, str], Check]] = [
    # zblade (docs/internals/sources.md#zblade): the documented examples, verbatim
    ("zblade-read-file", "zblade", "read_file", {"path": "src/main.rs"},
     {"src/main.rs": "fn main() {}\n"}, content_is("fn main() {}\n")),
    ("zblade-read-file-range", "zblade", "read_file_range",
     {"path": "src/lib.rs", "start_line": 50, "end_line": 100, "context_lines": 3},
     {"src/lib.rs": "".join(f"l{i}\n" for i in range(1, 121))},
     result_has(start_line=50, end_line=100, first_line=47, last_line=103)),
    ("zblade-write-file", "zblade", "write_file",
     {"path": "src/new_module.rs", "content": "pub fn hello() {\n    println!(\"Hello!\");\n}\n"},
     {}, file_is("src/new_module.rs", "pub fn hello() {\n    println!(\"Hello!\");\n}\n")),
    ("zblade-edit-file", "zblade", "edit_file",
     {"path": "src/main.rs", "old_content": "fn old_function()",
      "new_content": "fn new_function()"}, {"src/main.rs": "fn old_function() {}\n"},
     file_is("src/main.rs", "fn new_function() {}\n")),
    ("zblade-apply-edit", "zblade", "apply_edit",
     {"path": "src/lib.rs", "old_text": "let x = 5;", "new_text": "let x = 10;"},
     {"src/lib.rs": "fn f() {\n    let x = 5;\n}\n"},
     file_is("src/lib.rs", "fn f() {\n    let x = 10;\n}\n")),
    ("zblade-apply-edit-patches", "zblade", "apply_edit",
     {"path": "src/lib.rs", "patches": [{"old_text": "fn foo()", "new_text": "fn bar()"},
                                        {"old_text": "let a = 1;", "new_text": "let a = 2;"}]},
     {"src/lib.rs": "fn foo() {\n    let a = 1;\n}\n"},
     file_is("src/lib.rs", "fn bar() {\n    let a = 2;\n}\n")),
    ("zblade-delete-file", "zblade", "delete_file", {"path": "temp/old_file.txt"},
     {"temp/old_file.txt": "x\n"},
     lambda ws, call: not (ws / "temp/old_file.txt").exists() or pytest.fail(str(call))),
    ("zblade-move-file", "zblade", "move_file",
     {"source": "src/old_name.rs", "destination": "src/new_name.rs"},
     {"src/old_name.rs": "x\n"}, file_is("src/new_name.rs", "x\n")),
    ("zblade-copy-file", "zblade", "copy_file",
     {"source": "templates/base.html", "destination": "src/templates/base.html"},
     {"templates/base.html": "<html>\n"},
     both(file_is("src/templates/base.html", "<html>\n"),
          unchanged("templates/base.html", "<html>\n"))),
    ("zblade-get-file-info", "zblade", "get_file_info", {"path": "Cargo.toml"},
     {"Cargo.toml": "[package]\n"},
     result_has(path="Cargo.toml", size=10, is_file=True, is_directory=False)),
    ("zblade-create-directory", "zblade", "create_directory",
     {"path": "src/modules/new_feature"}, {},
     lambda ws, call: (ws / "src/modules/new_feature").is_dir() or pytest.fail(str(call))),
    ("zblade-list-directory", "zblade", "list_directory", {"path": "src", "max_depth": 2},
     {"src/a/b.rs": "", "src/a/c/d.rs": ""},
     lambda ws, call: sorted(e["path"] for e in call.result["entries"]) == [
         "src/a", "src/a/b.rs", "src/a/c"] or pytest.fail(str(call.result))),
    ("zblade-workspace-structure", "zblade", "get_workspace_structure",
     {"path": ".", "depth": 3, "limit": 100}, {"src/a/b.rs": ""},
     lambda ws, call: call.code == 0 or pytest.fail(str(call))),
    ("zblade-find-files", "zblade", "find_files", {"pattern": "test", "path": "src",
                                                   "max_depth": 5},
     {"src/x/my_test.rs": "", "src/main.rs": ""},
     lambda ws, call: [m["path"] for m in call.result["matches"]] == ["src/x/my_test.rs"]
     or pytest.fail(str(call.result))),
    ("zblade-find-files-glob", "zblade", "find_files_glob", {"pattern": "**/*.tsx",
                                                             "path": "src"},
     {"src/a/App.tsx": "", "src/b.ts": ""},
     lambda ws, call: [m["path"] for m in call.result["matches"]] == ["src/a/App.tsx"]
     or pytest.fail(str(call.result))),
    ("zblade-grep-search", "zblade", "grep_search", {"pattern": "fn\\s+main", "path": "src"},
     {"src/main.rs": "fn  main() {}\n", "src/lib.rs": "fn other() {}\n"},
     lambda ws, call: [(m["path"], m["line"]) for m in call.result["matches"]] == [
         ("src/main.rs", 1)] or pytest.fail(str(call.result))),
    ("zblade-codebase-search", "zblade", "codebase_search",
     {"query": "struct.*Config", "file_pattern": "*.rs", "max_results": 20},
     {"src/c.rs": "a\nb\npub struct AppConfig {}\nc\nd\ne\n", "x.toml": "struct Config\n"},
     lambda ws, call: [m["path"] for m in call.result["matches"]] == ["src/c.rs"]
     or pytest.fail(str(call.result))),
    ("zblade-run-command", "zblade", "run_command", {"command": "echo built", "cwd": "."},
     {}, result_has(exit_code=0, stdout="built\n")),
    # fiz (docs/internals/sources.md#fiz)
    ("fiz-read-offset-0", "fiz", "read", {"path": "a.txt", "offset": 0, "limit": 2},
     {"a.txt": LINES}, both(content_is("line 1\nline 2\n"), result_has(next_offset=2))),
    ("fiz-read-offset-5", "fiz", "read", {"path": "a.txt", "offset": 5},
     {"a.txt": LINES}, both(content_is("line 6\nline 7\nline 8\nline 9\nline 10\n"),
                            result_has(start_line=6, next_offset=None))),
    ("fiz-read-negative", "fiz", "read", {"path": "a.txt", "offset": -1}, {"a.txt": LINES},
     error_is("invalid_arguments", text="0-based")),
    ("fiz-read-past-end", "fiz", "read", {"path": "a.txt", "offset": 99}, {"a.txt": LINES},
     error_is("out_of_range", text="between 0 and 9")),
    ("fiz-edit-edits", "fiz", "edit",
     {"path": "m.py", "edits": [{"oldText": "def foo():", "newText": "def bar():"},
                                {"oldText": "    x = 1", "newText": "    x = 2"}]},
     {"m.py": SRC}, file_is("m.py", SRC.replace("foo", "bar").replace("x = 1", "x = 2"))),
    ("fiz-edit-legacy", "fiz", "edit",
     {"path": "m.py", "old_string": "return x", "new_string": "return -x"}, {"m.py": SRC},
     file_is("m.py", SRC.replace("return x", "return -x"))),
    ("fiz-edit-overlap", "fiz", "edit",
     {"path": "m.py", "edits": [{"oldText": "def foo():\n    x = 1", "newText": "a"},
                                {"oldText": "    x = 1", "newText": "b"}]},
     {"m.py": SRC}, error_is("overlapping_edits")),
    ("fiz-edit-both-forms", "fiz", "edit",
     {"path": "m.py", "edits": [{"oldText": "x", "newText": "y"}], "old_string": "a",
      "new_string": "b"}, {"m.py": SRC}, error_is("invalid_arguments", text="not both")),
    ("fiz-edit-unknown-key", "fiz", "edit",
     {"path": "m.py", "edits": [{"old_text": "x", "newText": "y"}]}, {"m.py": SRC},
     error_is("invalid_arguments", text="oldText")),
    ("fiz-patch-replace", "fiz", "patch",
     {"path": "m.py", "search": "x = 1", "content": "x = 10"}, {"m.py": SRC},
     file_is("m.py", SRC.replace("x = 1", "x = 10"))),
    # the seed: search "Will match first occurrence" (exact duplicates only)
    ("fiz-patch-replace-first-occurrence", "fiz", "patch",
     {"path": "t.txt", "search": "a", "content": "b"}, {"t.txt": "a\na\n"},
     file_is("t.txt", "b\na\n")),
    ("fiz-patch-replace-all", "fiz", "patch",
     {"path": "t.txt", "search": "a", "content": "b", "operation": "replace_all"},
     {"t.txt": "a\nc\na\n"}, file_is("t.txt", "b\nc\nb\n")),
    ("fiz-patch-prepend", "fiz", "patch",
     {"path": "t.txt", "content": "# head\n", "operation": "prepend"}, {"t.txt": "body\n"},
     file_is("t.txt", "# head\nbody\n")),
    # append: the text as given, no newline supplied (the seed mentions none)
    ("fiz-patch-append", "fiz", "patch",
     {"path": "t.txt", "content": "tail", "operation": "append"}, {"t.txt": "body\n"},
     file_is("t.txt", "body\ntail")),
    ("fiz-patch-append-missing-file", "fiz", "patch",
     {"path": "nope.txt", "content": "tail", "operation": "append"}, {},
     error_is("not_found")),
    ("fiz-patch-no-search", "fiz", "patch", {"path": "t.txt", "content": "x"},
     {"t.txt": "body\n"}, error_is("invalid_arguments", text="needs search")),
    ("fiz-find", "fiz", "find", {"pattern": "cmd/**/main.go", "dir": "."},
     {"cmd/app/main.go": "package main\n", "main.go": "x\n", "vendor/cmd/x/main.go": "v\n"},
     lambda ws, call: [m["path"] for m in call.result["matches"]] == ["cmd/app/main.go"]
     or pytest.fail(str(call.result))),
    ("fiz-grep", "fiz", "grep",
     {"pattern": "hello", "glob": "*.go", "case_insensitive": True, "dir": "src"},
     {"src/a.go": "Hello\n", "src/b.ts": "hello\n"},
     lambda ws, call: [m["path"] for m in call.result["matches"]] == ["src/a.go"]
     or pytest.fail(str(call.result))),
    ("fiz-ls", "fiz", "ls", {"path": "d"}, {"d/x.txt": "1\n"},
     lambda ws, call: [e["name"] for e in call.result["entries"]] == ["x.txt"]
     or pytest.fail(str(call.result))),
    ("fiz-bash", "fiz", "bash", {"command": "echo hi", "timeout_ms": 10000}, {},
     result_has(exit_code=0, stdout="hi\n")),
    ("fiz-task-create", "fiz", "task", {"operation": "create", "title": "Write tests"}, {},
     lambda ws, call: call.result["task"]["title"] == "Write tests"
     or pytest.fail(str(call.result))),
    ("fiz-write", "fiz", "write", {"path": "new/dir/f.txt", "content": "x\n"}, {},
     file_is("new/dir/f.txt", "x\n")),
    ("fiz-write-overwrites", "fiz", "write", {"path": "f.txt", "content": "new\n"},
     {"f.txt": "old\n"}, file_is("f.txt", "new\n")),
    ("fiz-task-list-by-status", "fiz", "task", {"operation": "list", "status": "pending"},
     {}, result_has(tasks=[], operation="list")),
    ("fiz-task-get-unknown", "fiz", "task", {"operation": "get", "id": "t404"}, {},
     error_is("unknown_id")),
    # claude (docs/internals/sources.md#claude)
    ("claude-read-1-based", "claude", "Read", {"file_path": "a.txt", "offset": 2, "limit": 2},
     {"a.txt": LINES}, content_is("line 2\nline 3\n")),
    ("claude-read-offset-0", "claude", "Read", {"file_path": "a.txt", "offset": 0, "limit": 1},
     {"a.txt": LINES}, content_is("line 1\n")),
    ("claude-write", "claude", "Write", {"file_path": "f.txt", "content": "hello\n"},
     {"f.txt": "old\n"}, file_is("f.txt", "hello\n")),
    ("claude-edit", "claude", "Edit",
     {"file_path": "m.py", "old_string": "x = 1", "new_string": "x = 3"}, {"m.py": SRC},
     file_is("m.py", SRC.replace("x = 1", "x = 3"))),
    ("claude-edit-not-unique", "claude", "Edit",
     {"file_path": "t.txt", "old_string": "a", "new_string": "b"}, {"t.txt": "a\na\n"},
     error_is("ambiguous_match")),
    ("claude-edit-replace-all", "claude", "Edit",
     {"file_path": "t.txt", "old_string": "a", "new_string": "b", "replace_all": True},
     {"t.txt": "a\na\n"}, file_is("t.txt", "b\nb\n")),
    ("claude-glob", "claude", "Glob", {"pattern": "**/*.ts", "path": "src"},
     {"src/a.ts": "1\n", "src/x/b.ts": "2\n", "src/c.js": "3\n"},
     lambda ws, call: sorted(m["path"] for m in call.result["matches"]) == [
         "src/a.ts", "src/x/b.ts"] or pytest.fail(str(call.result))),
    ("claude-grep-default-files", "claude", "Grep", {"pattern": "needle"},
     {"a.txt": "needle\n", "b.txt": "hay\n"},
     result_has(output_mode="files_with_matches", files=["a.txt"])),
    ("claude-grep-content-context", "claude", "Grep",
     {"pattern": "NEEDLE", "output_mode": "content", "-i": True, "-B": 1, "glob": "*.txt"},
     {"a.txt": "before\nneedle\nafter\n"},
     lambda ws, call: call.result["matches"][0]["before"] == ["before"]
     or pytest.fail(str(call.result))),
    # zkit (docs/internals/sources.md#zkit)
    ("zkit-write-refuses-existing", "zkit", "write", {"path": "f.txt", "content": "new\n"},
     {"f.txt": "old\n"}, both(error_is("already_exists", text="edit"),
                              unchanged("f.txt", "old\n"))),
    ("zkit-write-creates", "zkit", "write", {"path": "f.txt", "content": ""}, {},
     file_is("f.txt", "")),
    ("zkit-write-append", "zkit", "write_append", {"path": "f.txt", "content": "b\n"},
     {"f.txt": "a\n"}, file_is("f.txt", "a\nb\n")),
    ("zkit-read-hashes", "zkit", "read", {"path": "a.txt", "limit": 2}, {"a.txt": LINES},
     lambda ws, call: len(call.result["line_hashes"]) == 2 or pytest.fail(str(call.result))),
    ("zkit-edit", "zkit", "edit", {"path": "m.py", "old_string": "x = 1",
                                   "new_string": "x = 5"},
     {"m.py": SRC}, file_is("m.py", SRC.replace("x = 1", "x = 5"))),
    ("zkit-apply-patch", "zkit", "apply_patch",
     {"patch": "--- a/m.py\n+++ b/m.py\n@@ -1,3 +1,3 @@\n def foo():\n-    x = 1\n+    x = 7\n"
               "     return x\n"}, {"m.py": SRC}, file_is("m.py", SRC.replace("1", "7"))),
    ("zkit-ls", "zkit", "ls", {"path": "."}, {"q.txt": "1\n"},
     result_has(count=1)),
    ("zkit-save-plan", "zkit", "save_plan", {"name": "p", "content": "# Plan\n"}, {},
     file_is(".zbtools/plans/p.md", "# Plan\n")),
    ("zkit-update-plan", "zkit", "update_plan",
     {"steps": [{"title": "a", "status": "in_progress"}, {"title": "b"}]}, {},
     lambda ws, call: [s["status"] for s in call.result["steps"]] == ["in_progress",
                                                                       "pending"]
     or pytest.fail(str(call.result))),
    ("zkit-save-plan-append", "zkit", "save_plan_append", {"name": "p", "content": "- b\n"},
     {".zbtools/plans/p.md": "# Plan\n"}, file_is(".zbtools/plans/p.md", "# Plan\n- b\n")),
    ("zkit-save-plan-exists", "zkit", "save_plan", {"name": "p", "content": "x"},
     {".zbtools/plans/p.md": "# Plan\n"},
     both(error_is("already_exists", text="save_plan_append"),
          unchanged(".zbtools/plans/p.md", "# Plan\n"))),
    ("zkit-grep", "zkit", "grep", {"pattern": "TODO", "glob": "*.go"},
     {"a.go": "// TODO\n", "b.md": "TODO\n"},
     lambda ws, call: [m["path"] for m in call.result["matches"]] == ["a.go"]
     or pytest.fail(str(call.result))),
    ("zkit-glob", "zkit", "glob", {"pattern": "**/*.go"}, {"cmd/x/main.go": "", "r.md": ""},
     lambda ws, call: [m["path"] for m in call.result["matches"]] == ["cmd/x/main.go"]
     or pytest.fail(str(call.result))),
    ("zkit-bash", "zkit", "bash", {"command": "echo hi"}, {},
     result_has(exit_code=0, stdout="hi\n")),
    ("zkit-list-processes", "zkit", "list_processes", {}, {},
     lambda ws, call: call.code == 0 or pytest.fail(str(call))),
    # anthropic text editor
    ("anthropic-view", "anthropic", "str_replace_based_edit_tool",
     {"command": "view", "path": "a.txt"}, {"a.txt": LINES}, content_is(LINES)),
    ("anthropic-view-range", "anthropic", "str_replace_based_edit_tool",
     {"command": "view", "path": "a.txt", "view_range": [9, -1]}, {"a.txt": LINES},
     content_is("line 9\nline 10\n")),
    ("anthropic-view-range-closed", "anthropic", "str_replace_based_edit_tool",
     {"command": "view", "path": "a.txt", "view_range": [2, 3]}, {"a.txt": LINES},
     content_is("line 2\nline 3\n")),
    ("anthropic-view-dir", "anthropic", "str_replace_based_edit_tool",
     {"command": "view", "path": "."}, {"d/e/f.txt": "1\n", "d/e/g/h.txt": "2\n"},
     lambda ws, call: [e["path"] for e in call.result["entries"]] == ["d", "d/e"]
     or pytest.fail(str(call.result))),
    ("anthropic-create", "anthropic", "str_replace_based_edit_tool",
     {"command": "create", "path": "n/new.py", "file_text": "print(1)\n"}, {},
     file_is("n/new.py", "print(1)\n")),
    ("anthropic-create-existing", "anthropic", "str_replace_based_edit_tool",
     {"command": "create", "path": "f.txt", "file_text": "x"}, {"f.txt": "old\n"},
     error_is("already_exists")),
    ("anthropic-str-replace", "anthropic", "str_replace_based_edit_tool",
     {"command": "str_replace", "path": "m.py", "old_str": "x = 1", "new_str": "x = 9"},
     {"m.py": SRC}, file_is("m.py", SRC.replace("x = 1", "x = 9"))),
    ("anthropic-str-replace-delete", "anthropic", "str_replace_based_edit_tool",
     {"command": "str_replace", "path": "t.txt", "old_str": "b\n"}, {"t.txt": "a\nb\nc\n"},
     file_is("t.txt", "a\nc\n")),
    ("anthropic-insert-text", "anthropic", "str_replace_based_edit_tool",
     {"command": "insert", "path": "t.txt", "insert_line": 1, "insert_text": "x\n"},
     {"t.txt": "a\nb\n"}, file_is("t.txt", "a\nx\nb\n")),
    ("anthropic-insert-new-str", "anthropic", "str_replace_based_edit_tool",
     {"command": "insert", "path": "t.txt", "insert_line": 0, "new_str": "top"},
     {"t.txt": "a\n"}, file_is("t.txt", "top\na\n")),
    ("anthropic-insert-missing-line", "anthropic", "str_replace_based_edit_tool",
     {"command": "insert", "path": "t.txt", "new_str": "top"}, {"t.txt": "a\n"},
     error_is("invalid_arguments", text="insert_line")),
    ("anthropic-create-without-text", "anthropic", "str_replace_based_edit_tool",
     {"command": "create", "path": "t.txt"}, {}, error_is("invalid_arguments",
                                                          text="file_text")),
    ("anthropic-bad-command", "anthropic", "str_replace_based_edit_tool",
     {"command": "delete", "path": "t.txt"}, {"t.txt": "a\n"},
     error_is("invalid_arguments", text="view")),
    # codex
    ("codex-apply-patch", "codex", "apply_patch",
     {"input": "*** Begin Patch\n*** Add File: pkg/new.py\n+print('hi')\n"
               "*** Update File: m.py\n@@ def foo():\n-    x = 1\n+    x = 2\n*** End Patch\n"},
     {"m.py": SRC}, both(file_is("pkg/new.py", "print('hi')\n"),
                         file_is("m.py", SRC.replace("x = 1", "x = 2")))),
    ("codex-apply-patch-bad", "codex", "apply_patch", {"input": "not a patch"}, {},
     error_is("patch_parse_error")),
    ("codex-shell", "codex", "shell", {"command": ["bash", "-lc", "echo $((1+2))"]}, {},
     result_has(exit_code=0, stdout="3\n")),
    ("codex-shell-argv", "codex", "shell", {"command": ["echo", "a b", "c"], "workdir": "d"},
     {"d/x": ""}, result_has(exit_code=0, stdout="a b c\n")),
    ("codex-update-plan", "codex", "update_plan",
     {"explanation": "start", "plan": [{"step": "read", "status": "completed"},
                                       {"step": "edit", "status": "in_progress"}]}, {},
     lambda ws, call: [s["title"] for s in call.result["steps"]] == ["read", "edit"]
     or pytest.fail(str(call.result))),
]


@pytest.mark.parametrize("dialect,tool,args,files,check", [t[1:] for t in TABLE],
                         ids=[t[0] for t in TABLE])
def test_parity_table(ws: Path, cli: CliRunner, dialect: str, tool: str, args: dict[str, Any],
                      files: dict[str, str], check: Check) -> None:
    for rel, text in files.items():
        put(ws, rel, text)
    call = cli("--dialect", dialect, tool, stdin=args)
    check(ws, call)
    if call.code == 0:
        assert call.json["tool"] == tool


def test_the_seed_001_editor_examples_in_sequence(ws: Path, cli: CliRunner) -> None:
    """open_file, goto_line, replace_selection and insert_at_cursor with Zaguán Blade's examples.

    The examples are those of docs/internals/sources.md#zblade."""
    put(ws, "src/main.rs", "".join(f"// line {i}\n" for i in range(1, 121)))
    opened = cli("open_file", stdin={"path": "src/main.rs", "line": 42}).result
    assert (opened["cursor_line"], opened["cursor_column"]) == (42, 1)
    moved = cli("goto_line", stdin={"line": 100, "column": 15}).result
    assert (moved["cursor_line"], moved["cursor_column"], moved["clamped"]) == (100, 12, True)
    cli("select_range", stdin={"start_line": 100, "start_column": 4, "end_line": 100})
    assert cli("get_selection").result["text"] == "line 100"
    assert cli("replace_selection", stdin={"content": "new replacement text"}).code == 0
    cli("goto_line", stdin={"line": 1})
    assert cli("insert_at_cursor", stdin={"content": "// TODO: implement this\n"}).code == 0
    lines = (ws / "src/main.rs").read_text().splitlines()
    assert lines[0] == "// TODO: implement this" and lines[1] == "// line 1"
    assert lines[100] == "// new replacement text"
    state = cli("get_editor_state").result
    assert (state["active_file"], state["open_files"], state["active_tab_index"]) == (
        "src/main.rs", ["src/main.rs"], 0)
    assert (state["cursor_line"], state["cursor_column"]) == (2, 1)


SUBPROCESS = ["fiz-read-offset-0", "fiz-edit-edits", "zkit-write-refuses-existing",
              "claude-read-1-based", "anthropic-insert-text", "codex-apply-patch"]


@pytest.mark.parametrize("row", [t for t in TABLE if t[0] in SUBPROCESS], ids=SUBPROCESS)
def test_parity_table_in_a_real_process(ws: Path, proc: CliRunner, row: tuple[Any, ...]
                                        ) -> None:
    _id, dialect, tool, args, files, check = row
    for rel, text in files.items():
        put(ws, rel, text)
    check(ws, proc("--dialect", dialect, tool, "--args", json.dumps(args)))


# ---------------------------------------------------------------------------------------------
# The CLI around dialects


def test_flags_use_the_dialect_names(ws: Path, cli: CliRunner) -> None:
    put(ws, "a.txt", LINES)
    assert cli("--dialect", "fiz", "read", "--path", "a.txt", "--offset", "0", "--limit",
               "1").result["content"] == "line 1\n"
    assert cli("--dialect", "claude", "Read", "--file-path", "a.txt", "--offset",
               "3", "--limit", "1").result["content"] == "line 3\n"
    grep = cli("--dialect", "claude", "Grep", "--pattern", "line 5", "--output-mode", "content",
               "-A", "1").result
    assert grep["matches"][0]["after"] == ["line 6"]


def test_the_text_rendering_says_what_the_dialect_json_says(ws: Path, cli: CliRunner) -> None:
    put(ws, "a.txt", LINES)
    call = cli("--dialect", "fiz", "read", "--path", "a.txt", "--offset", "1", "--limit", "1",
               "--format", "text")
    assert "continue with offset=2]" in call.out  # 0-based, as fiz's next_offset
    json_call = cli("--dialect", "fiz", "read", "--path", "a.txt", "--offset", "1", "--limit",
                    "1")
    assert json_call.result["next_offset"] == 2
    canonical = cli("read_file", "--path", "a.txt", "--offset", "2", "--limit", "1",
                    "--format", "text")
    assert "continue with offset=3]" in canonical.out


def test_env_selects_the_dialect_and_the_flag_overrides_it(ws: Path, cli: CliRunner) -> None:
    put(ws, "a.txt", LINES)
    fiz = {"ZBTOOLS_DIALECT": "fiz"}
    assert cli("read", "--path", "a.txt", "--offset", "1", "--limit", "1",
               env=fiz).result["content"] == "line 2\n"
    assert cli("--dialect", "zblade", "read_file", "--path", "a.txt", "--offset", "1",
               "--limit", "1", env=fiz).result["content"] == "line 1\n"
    assert cli("read_file", "--path", "a.txt", "--limit", "1",
               env=fiz).result["content"] == "line 1\n"


def test_canonical_parameters_pass_through_a_dialect_tool(ws: Path, cli: CliRunner) -> None:
    put(ws, "m.py", SRC)
    result = cli("--dialect", "fiz", "edit", stdin={
        "path": "m.py", "edits": [{"oldText": "x = 1", "newText": "x = 2"}],
        "dry_run": True}).result
    assert result["dry_run"] is True and "+    x = 2" in result["diff"]
    assert (ws / "m.py").read_text() == SRC
    stale = cli("--dialect", "claude", "Write", stdin={
        "file_path": "m.py", "content": "x", "expected_sha256": "0" * 64})
    assert stale.error["code"] == "stale_file"


def test_unknown_tools_and_arguments_name_the_dialect(ws: Path, cli: CliRunner) -> None:
    unknown = cli("--dialect", "fiz", "Read", stdin={})
    assert unknown.error["code"] == "invalid_arguments"  # Read -> read (case-insensitive)
    missing = cli("--dialect", "claude", "ExitPlanMode", stdin={"plan": "ls"})
    assert missing.error["code"] == "unknown_tool"
    assert "Read" in missing.error["details"]["tools"]
    bad = cli("--dialect", "fiz", "read", stdin={"path": "a", "offest": 1})
    assert bad.code == 2
    assert "did you mean 'offset'" in bad.error["message"]
    assert cli("--dialect", "nope", "read_file", stdin={}).error["code"] == "usage_error"


def test_text_format_renders_the_canonical_result(ws: Path, cli: CliRunner) -> None:
    put(ws, "a.txt", LINES)
    out = cli("--dialect", "anthropic", "--text", "str_replace_based_edit_tool", stdin={
        "command": "view", "path": "a.txt", "view_range": [2, 2]}).out
    assert out == "     2\tline 2\n"


def test_absolute_paths_inside_the_workspace(ws: Path, cli: CliRunner) -> None:
    put(ws, "a.txt", LINES)
    call = cli("--dialect", "claude", "Read", stdin={"file_path": os.path.join(ws, "a.txt"),
                                                    "limit": 1})
    assert call.result["content"] == "line 1\n"
    outside = cli("--dialect", "claude", "Read", stdin={"file_path": "/etc/passwd"})
    assert outside.error["code"] == "outside_workspace"


@pytest.mark.parametrize(("dialect", "tool", "args", "said", "not_said"), [
    ("claude", "Edit", {"file_path": "a.txt", "old_string": "absent", "new_string": "x"},
     "old_string", "old_text"),
    ("fiz", "edit", {"path": "a.txt", "edits": [{"oldText": "absent", "newText": "x"}]},
     "edits[0]: oldText", "old_text"),
    ("fiz", "patch", {"path": "a.txt", "search": "absent", "content": "x"}, "search was not",
     "old_text"),
    ("anthropic", "str_replace_based_edit_tool",
     {"command": "str_replace", "path": "a.txt", "old_str": "absent", "new_str": "x"},
     "old_str", "old_text"),
])
def test_errors_name_parameters_as_the_dialect_schema_does(
        ws: Path, cli: CliRunner, dialect: str, tool: str, args: dict[str, Any], said: str,
        not_said: str) -> None:
    put(ws, "a.txt", LINES)
    error = cli("--dialect", dialect, tool, stdin=args).error
    assert error["code"] == "no_match"
    text = error["message"] + " " + error["hint"]
    assert said in text and not_said not in text


def test_claude_read_returns_its_2000_lines_whatever_their_size(ws: Path, cli: CliRunner) -> None:
    (ws / "big.txt").write_text("".join(f"line {i} " + "x" * 40 + "\n" for i in range(3000)))
    result = cli("--dialect", "claude", "Read", stdin={"file_path": str(ws / "big.txt")}).result
    assert (result["start_line"], result["end_line"]) == (1, 2000)
    assert result["content"].count("\n") == 2000
    one_off = cli("read_file", "--path", "big.txt").result
    assert one_off["end_line"] < 2000  # the canonical tool keeps the 50 KB budget


def test_claude_read_documents_pages_for_pdfs() -> None:
    schema = get_dialect("claude").lookup("Read")
    assert schema is not None
    assert "pages" in schema.input_schema()["properties"]


def test_fiz_patch_ambiguity_is_explained_in_fiz_terms(ws: Path, cli: CliRunner) -> None:
    """No exact duplicate, two places under another indentation: search "must match exactly
    (including whitespace)", so it is refused, never the first of them, and the hint names
    what fiz's schema offers."""
    text = "def f():\n    x = 1\n    y = 2\n\ndef g():\n    x = 1\n    y = 2\n"
    put(ws, "h.py", text)
    call = cli("--dialect", "fiz", "patch",
               stdin={"path": "h.py", "search": "  x = 1\n  y = 2", "content": "  x = 3"})
    assert call.error["code"] == "no_match"
    for word in ("occurrence", "start_line", "old_text"):
        assert word not in call.error["hint"]
    assert (ws / "h.py").read_text() == text


def test_claude_grep_searches_as_ripgrep_does(ws: Path, cli: CliRunner) -> None:
    put(ws, "target/gen.rs", "needle\n")
    put(ws, "src/a.rs", "needle\n")
    put(ws, ".hidden/h.rs", "needle\n")
    put(ws, "build.log", "needle\n")
    put(ws, ".gitignore", "*.log\n")
    found = cli("--dialect", "claude", "Grep", stdin={"pattern": "needle"}).result
    assert found["files"] == ["src/a.rs", "target/gen.rs"]
    canonical = cli("grep_search", "--pattern", "needle",
                    "--output-mode", "files_with_matches").result
    assert canonical["files"] == ["src/a.rs"]  # zbtools' own default leaves target/ out

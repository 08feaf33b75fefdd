"""The ``gemini`` dialect's twelve tools, each through the in-process command line: one call that
works and one bad call, whose error speaks Gemini's parameter names and leaves the disk as it
was; the older names Gemini CLI used; an invariant of ``replace`` against ``str.replace``; one
real subprocess and one MCP round trip (docs/dialects.md#gemini).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import Call, run_inprocess, snapshot

GEMINI_TOOLS = ["list_directory", "read_file", "write_file", "glob", "grep_search", "replace",
                "run_shell_command", "web_fetch", "google_web_search", "read_many_files",
                "save_memory", "write_todos"]
# canonical tools and parameters the gemini dialect does not have: no hint may name them
FOREIGN = ["old_text", "new_text", "apply_edit", "replace_all", "get_file_info",
           "as_base64", "find_files", "create_directory", "list_dir", "expected_count", "cwd",
           "read_file_range", "max_bytes", "include_hidden", "exclude_dirs", "head_limit"]


def gemini(ws: Path, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    call: Call = run_inprocess(["--json", "--dialect", "gemini", tool], stdin=json.dumps(args),
                               workspace=ws)
    reply: dict[str, Any] = json.loads(call.out)
    return reply


def refused(ws: Path, tool: str, args: dict[str, Any], code: str) -> dict[str, Any]:
    """Call ``tool``, expect ``code``, a hint in Gemini's words, and the disk as it was."""
    before = snapshot(ws)
    reply = gemini(ws, tool, args)
    assert reply["ok"] is False, reply
    error: dict[str, Any] = reply["error"]
    assert error["code"] == code, error
    assert error.get("hint"), error
    words = f"{error['message']} {error['hint']}"
    assert not [w for w in FOREIGN if w in words], error
    assert snapshot(ws) == before
    return error


def test_the_dialect_lists_gemini_cli_tools_in_order() -> None:
    from zbtools.dialects import get_dialect

    dialect = get_dialect("gemini")
    assert [t.name for t in dialect.tools()] == GEMINI_TOOLS
    assert dialect.lookup("search_file_content") is dialect.lookup("grep_search")
    schema = dialect.lookup("replace").input_schema()  # type: ignore[union-attr]
    assert {"file_path", "old_string", "new_string", "allow_multiple", "instruction"} <= set(
        schema["properties"])


def test_list_directory(ws: Path) -> None:
    (ws / "b.txt").write_text("b")
    (ws / "a.log").write_text("a")
    (ws / ".env").write_text("x")
    (ws / "zdir").mkdir()
    reply = gemini(ws, "list_directory", {"dir_path": ".", "ignore": ["*.log"]})
    assert [e["name"] for e in reply["result"]["entries"]] == ["zdir", ".env", "b.txt"]
    assert gemini(ws, "list_directory", {"path": "."})["ok"]  # the older name
    refused(ws, "list_directory", {"dir_path": "b.txt"}, "not_a_directory")
    refused(ws, "list_directory", {"dir_path": ""}, "invalid_arguments")


def test_read_file(ws: Path) -> None:
    (ws / "f.txt").write_text("one\ntwo\nthree\nfour\n")
    reply = gemini(ws, "read_file", {"file_path": "f.txt", "start_line": 2, "end_line": 3})
    assert reply["result"]["content"] == "two\nthree\n"
    older = gemini(ws, "read_file", {"absolute_path": str(ws / "f.txt"), "offset": 1, "limit": 2})
    assert older["result"]["content"] == "two\nthree\n"  # offset was 0-based
    error = refused(ws, "read_file", {"file_path": "f.txt", "start_line": 3, "end_line": 2},
                    "invalid_arguments")
    assert error["message"] == "start_line cannot be greater than end_line"
    (ws / "x.bin").write_bytes(b"\x00\xff\x00")
    refused(ws, "read_file", {"file_path": "x.bin"}, "binary_file")
    (ws / "p.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    image = gemini(ws, "read_file", {"file_path": "p.png"})["result"]
    assert image["mime"] == "image/png"


def test_write_file(ws: Path) -> None:
    reply = gemini(ws, "write_file", {"file_path": "new/dir/a.txt", "content": "hi\n"})
    assert reply["ok"] and (ws / "new/dir/a.txt").read_text() == "hi\n"
    refused(ws, "write_file", {"file_path": "new", "content": "x"}, "is_directory")


def test_glob(ws: Path) -> None:
    (ws / "top.md").write_text("t")
    (ws / "d").mkdir()
    (ws / "d" / "deep.md").write_text("d")
    (ws / "node_modules").mkdir()
    (ws / "node_modules" / "m.md").write_text("m")
    names = [m["path"] for m in gemini(ws, "glob", {"pattern": "*.md"})["result"]["matches"]]
    assert names == ["top.md"]  # no '/': this directory only
    deep = gemini(ws, "glob", {"pattern": "**/*.MD"})["result"]["matches"]
    assert sorted(m["path"] for m in deep) == ["d/deep.md", "top.md"]
    refused(ws, "glob", {"pattern": " "}, "invalid_arguments")


def test_grep_search(ws: Path) -> None:
    (ws / "a.py").write_text("Alpha = 1\nalpha_skip = 2\nALPHA = 3\n")
    (ws / "b.py").write_text("alpha\n")
    reply = gemini(ws, "grep_search", {"pattern": "alpha", "exclude_pattern": "skip",
                                       "max_matches_per_file": 1})
    assert [(m["path"], m["line"]) for m in reply["result"]["matches"]] == [("a.py", 1),
                                                                            ("b.py", 1)]
    names = gemini(ws, "search_file_content", {"pattern": "ALPHA", "case_sensitive": True,
                                               "names_only": True})
    assert names["result"]["files"] == ["a.py"]
    refused(ws, "grep_search", {"pattern": "a", "exclude_pattern": "("}, "regex_error")


def test_replace(ws: Path) -> None:
    (ws / "f.py").write_text("x = 1\ny = 1\n")
    reply = gemini(ws, "replace", {"file_path": "f.py", "instruction": "y is 2",
                                   "old_string": "y = 1", "new_string": "y = 2"})
    assert reply["ok"] and (ws / "f.py").read_text() == "x = 1\ny = 2\n"
    error = refused(ws, "replace", {"file_path": "f.py", "old_string": " = ",
                                    "new_string": " := "}, "ambiguous_match")
    assert error["message"] == "Failed to edit, expected 1 occurrence but found 2."
    assert "allow_multiple" in error["hint"]
    error = refused(ws, "replace", {"file_path": "f.py", "old_string": " = ",
                                    "new_string": " := ", "expected_replacements": 3},
                    "ambiguous_match")
    assert error["message"] == "Failed to edit, expected 3 occurrences but found 2."
    refused(ws, "replace", {"file_path": "f.py", "old_string": "zzz", "new_string": "q"},
            "no_match")
    refused(ws, "replace", {"file_path": "f.py", "old_string": "x", "new_string": "x"},
            "no_change")
    refused(ws, "replace", {"file_path": "f.py", "old_string": "", "new_string": "q"},
            "already_exists")
    refused(ws, "replace", {"file_path": "g.py", "old_string": "a", "new_string": "b"},
            "not_found")
    two = gemini(ws, "replace", {"absolute_path": "f.py", "old_string": " = ",
                                 "new_string": " := ", "expected_replacements": 2})
    assert two["ok"] and (ws / "f.py").read_text() == "x := 1\ny := 2\n"
    made = gemini(ws, "replace", {"file_path": "g.py", "old_string": "", "new_string": "z\r\n"})
    assert made["ok"] and (ws / "g.py").read_bytes() == b"z\r\n"


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text("ab \n", max_size=30), old=st.text("ab", min_size=1, max_size=3),
       new=st.text("abc\n", max_size=4))
def test_replace_agrees_with_str_replace(ws: Path, text: str, old: str, new: str) -> None:
    """Wherever old_string stands exactly, allow_multiple replaces every occurrence as
    str.replace does, and the default replaces a lone one (unless what new_string adds to it
    stands beside it already: the edit looks made); more than one is refused."""
    path = ws / "h.txt"
    path.write_bytes(text.encode())
    count = text.count(old)
    places = sum(text.startswith(old, i) for i in range(len(text)))  # overlapping ones too
    if count == 0 or old == new:
        return
    reply = gemini(ws, "replace", {"file_path": "h.txt", "old_string": old, "new_string": new,
                                   "allow_multiple": True})
    assert reply["ok"], reply
    assert path.read_bytes() == text.replace(old, new).encode()
    path.write_bytes(text.encode())
    single = gemini(ws, "replace", {"file_path": "h.txt", "old_string": old, "new_string": new})
    at = text.find(old)
    made = (new.startswith(old) and text.startswith(new, at)) or (
        new.endswith(old) and text[:at + len(old)].endswith(new))
    if places > 1:  # 'aa' in 'aaa' stands at two places: which one is meant is unclear
        assert single["error"]["code"] == "ambiguous_match"
        assert path.read_bytes() == text.encode()
    elif count == 1 and made and not single["ok"]:  # what new_string adds stands there already
        assert single["error"]["code"] == "no_change" and path.read_bytes() == text.encode()
    else:
        assert single["ok"] and path.read_bytes() == text.replace(old, new).encode()


def test_run_shell_command(ws: Path) -> None:
    (ws / "sub").mkdir()
    reply = gemini(ws, "run_shell_command", {"command": "echo out; echo err >&2; pwd",
                                             "description": "where am I", "dir_path": "sub"})
    result = reply["result"]
    assert result["stdout"].splitlines()[:2] == ["out", "err"]  # one stream, as in Gemini
    assert result["stdout"].rstrip().endswith("/sub")
    older = gemini(ws, "run_shell_command", {"command": "pwd", "directory": "sub"})
    assert older["result"]["stdout"].rstrip().endswith("/sub")
    refused(ws, "run_shell_command", {"command": "  "}, "invalid_arguments")


def test_web_fetch_and_search_translate() -> None:
    from zbtools.dialects import get_dialect

    dialect = get_dialect("gemini")
    fetch = dialect.lookup("web_fetch")
    assert fetch is not None
    prompt = "Summarize https://github.com/o/r/blob/main/src/x.py, please."
    assert fetch.to_canonical({"prompt": prompt}) == {
        "url": "https://raw.githubusercontent.com/o/r/main/src/x.py"}
    search = dialect.lookup("google_web_search")
    assert search is not None and search.to_canonical({"query": "zbtools"}) == {
        "query": "zbtools"}


def test_web_fetch_refuses_a_prompt_without_one_url(ws: Path) -> None:
    error = refused(ws, "web_fetch", {"prompt": "summarize example.com"}, "invalid_arguments")
    assert "http://" in error["message"]
    error = refused(ws, "web_fetch", {"prompt": "compare https://a.example and https://b.example"},
                    "invalid_arguments")
    assert "once per URL" in error["hint"]
    refused(ws, "google_web_search", {}, "invalid_arguments")


def test_read_many_files(ws: Path) -> None:
    (ws / "a.py").write_text("x = 1\n")
    (ws / "docs").mkdir()
    (ws / "docs" / "b.md").write_text("# B\n")
    (ws / "docs" / "c.log").write_text("log\n")
    (ws / "node_modules").mkdir()
    (ws / "node_modules" / "m.py").write_text("m\n")
    reply = gemini(ws, "read_many_files", {"include": ["*.py", "docs/"], "exclude": ["*.log"]})
    result = reply["result"]
    assert result["files"] == ["a.py", "docs/b.md"]
    assert result["content"] == ("--- a.py ---\n\nx = 1\n\n\n--- docs/b.md ---\n\n# B\n\n\n"
                                 "\n--- End of content ---")
    older = gemini(ws, "read_many_files", {"paths": ["**/*.py"], "useDefaultExcludes": False})
    assert older["result"]["files"] == ["a.py", "node_modules/m.py"]
    refused(ws, "read_many_files", {"include": []}, "invalid_arguments")


def test_save_memory(ws: Path) -> None:
    memory = ws / ".zbtools" / "memory" / "GEMINI.md"
    assert gemini(ws, "save_memory", {"fact": "- I prefer tabs"})["ok"]
    reply = gemini(ws, "save_memory", {"fact": "My name is\nAda"})
    assert reply["result"]["message"] == 'Okay, I\'ve remembered that: "My name is Ada"'
    assert memory.read_text() == "## Gemini Added Memories\n- I prefer tabs\n- My name is Ada\n"
    assert gemini(ws, "save_memory", {"fact": "uses uv", "scope": "project"})["ok"]
    assert (ws / ".zbtools" / "memory" / "MEMORY.md").read_text() == "- uses uv\n"
    error = refused(ws, "save_memory", {"fact": "  "}, "invalid_arguments")
    assert error["message"] == 'Parameter "fact" must be a non-empty string.'


@pytest.mark.parametrize(("current", "expected"), [
    ("", "## Gemini Added Memories\n- F\n"),
    ("# Notes", "# Notes\n\n## Gemini Added Memories\n- F\n"),
    ("# Notes\n", "# Notes\n\n## Gemini Added Memories\n- F\n"),
    ("## Gemini Added Memories\n- A\n\n## Other\n- B\n",
     "## Gemini Added Memories\n- A\n- F\n\n## Other\n- B\n"),
])
def test_memory_content_places_the_fact_as_gemini_does(current: str, expected: str) -> None:
    from zbtools.dialects.gemini_composed import memory_content

    assert memory_content(current, "F") == expected


def test_write_todos(ws: Path) -> None:
    reply = gemini(ws, "write_todos", {"todos": [
        {"description": "plan", "status": "completed"},
        {"description": "build", "status": "in_progress"},
        {"description": "ship", "status": "cancelled"}]})
    steps = reply["result"]["steps"]
    assert [(s["title"], s["status"]) for s in steps] == [
        ("plan", "completed"), ("build", "in_progress"), ("ship (cancelled)", "completed")]
    error = refused(ws, "write_todos", {"todos": [
        {"description": "a", "status": "in_progress"},
        {"description": "b", "status": "in_progress"}]}, "invalid_arguments")
    assert 'Only one task can be "in_progress" at a time.' in error["message"]


@pytest.mark.slow
def test_a_real_subprocess_replaces_as_gemini(ws: Path, proc: Any) -> None:
    (ws / "a.txt").write_text("foo foo\n")
    call = proc("--json", "--dialect", "gemini", "replace",
                stdin={"file_path": "a.txt", "old_string": "foo", "new_string": "bar",
                       "allow_multiple": True})
    assert call.code == 0 and json.loads(call.out)["ok"], call.err
    assert (ws / "a.txt").read_text() == "bar bar\n"


@pytest.mark.slow
def test_mcp_lists_exactly_the_gemini_tools(ws: Path) -> None:
    pytest.importorskip("mcp")
    from mcp import Client

    from tests.surfaces.test_mcp import session, text_of

    (ws / "a.txt").write_text("alpha\nbeta\n")

    async def body(client: Client) -> None:
        listing = await client.list_tools()
        assert [t.name for t in listing.tools] == GEMINI_TOOLS
        result = await client.call_tool("replace", {"file_path": "a.txt", "instruction": "b",
                                                    "old_string": "beta", "new_string": "gamma"})
        assert result.is_error is False, text_of(result)
        read = await client.call_tool("read_file", {"file_path": "a.txt", "start_line": 2})
        assert "gamma" in text_of(read)

    session(ws, body, "--dialect", "gemini")


def test_text_renderings_read_as_gemini_answers(ws: Path) -> None:
    (ws / "a.py").write_text("x = 1\n")
    (ws / "i.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    many = run_inprocess(["--text", "--dialect", "gemini", "read_many_files"],
                         stdin=json.dumps({"include": ["*"]}), workspace=ws)
    assert many.out.startswith("--- a.py ---\n\nx = 1\n\n\n\n--- End of content ---\n")
    assert "skipped i.png: asset file (image/pdf/audio) was not explicitly requested" in many.out
    memory = run_inprocess(["--text", "--dialect", "gemini", "save_memory"],
                           stdin=json.dumps({"fact": "tabs"}), workspace=ws)
    assert memory.out == 'Okay, I\'ve remembered that: "tabs"\n'

"""Claude Code's whole tool set in the ``claude`` dialect (docs/internals/sources.md#claude).

Each tool added beside Read, Write, Edit, Glob and Grep is driven through the in-process runner:
a call that works, with the result fields Anthropic's tool reference documents, and a bad call
whose error names Claude's own parameters (never a canonical tool or parameter the dialect
lacks) and leaves the workspace as it was. One real subprocess runs ``Bash``; one MCP round trip
lists the fourteen tools and calls one. MultiEdit's promise (in sequence, all or nothing) is a
hypothesis property with plain ``str.replace`` as the oracle.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import Call, CliRunner, run_inprocess, snapshot
from tests.invariants.budget import invariant
from tests.tools.test_web import Server, page

TOOLS = ["Bash", "BashOutput", "KillShell", "Glob", "Grep", "LS", "Read", "Edit", "MultiEdit",
         "Write", "NotebookEdit", "WebFetch", "WebSearch", "TodoWrite"]
# Names a hint of the claude dialect must never give: canonical tools and parameters it lacks.
FOREIGN = re.compile(r"\b(list_processes|bash_output|stop_process|run_command|read_file|"
                     r"get_file_info|write_append|create_directory|update_plan|get_plan|"
                     r"save_plan|web_fetch|web_search|timeout_ms|old_text|new_text|patches|"
                     r"cell_index|updates|include_hidden|exclude_dirs|find_files|start_line|"
                     r"occurrence|raw: true)\b")


def claude(cli: CliRunner, tool: str, args: dict[str, Any], **kw: Any) -> Call:
    return cli("--dialect", "claude", tool, stdin=args, **kw)


def speaks_claude(error: dict[str, Any]) -> None:
    said = f"{error['message']} {error.get('hint', '')}"
    assert not FOREIGN.search(said), said


def failed(call: Call, code: str) -> dict[str, Any]:
    error = call.error
    assert error["code"] == code, error
    speaks_claude(error)
    return error


def problem_names(error: dict[str, Any]) -> set[str]:
    return {p["argument"] for p in error.get("details", {}).get("problems", [])}


def test_the_dialect_lists_the_fourteen_tools() -> None:
    from zbtools.dialects import get_dialect

    dialect = get_dialect("claude")
    assert [t.name for t in dialect.tools()] == TOOLS
    assert dialect.unavailable() == {}
    assert dialect.lookup("KillBash") is dialect.lookup("KillShell")  # its former name
    assert {t.name for t in dialect.tools() if t.read_only} == {
        "BashOutput", "Glob", "Grep", "LS", "Read", "WebFetch", "WebSearch"}


# -- Bash, BashOutput, KillShell -------------------------------------------------------------


def test_bash_reports_claudes_fields(ws: Path, cli: CliRunner) -> None:
    result = claude(cli, "Bash", {"command": "echo out; echo err >&2; exit 3",
                                  "description": "Print two lines"}).result
    assert result["output"] == "out\nerr\n"
    assert result["exitCode"] == 3 and result["killed"] is False
    assert "shellId" not in result
    assert result["stdout"] == "out\n"  # the canonical fields stay
    slow = claude(cli, "Bash", {"command": "sleep 5", "timeout": 200}).result
    assert slow["killed"] is True
    assert not any("timeout_ms" in w for w in cli("--dialect", "claude", "Bash", stdin={
        "command": "sleep 5", "timeout": 100}).json["warnings"])


def test_bash_refuses_a_timeout_over_ten_minutes(ws: Path, cli: CliRunner) -> None:
    before = snapshot(ws)
    error = failed(claude(cli, "Bash", {"command": "touch made", "timeout": 600_001}),
                   "invalid_arguments")
    assert problem_names(error) == {"timeout"} and "600000" in error["message"]
    assert snapshot(ws) == before


def wait_done(cli: CliRunner, shell: str) -> None:
    for _ in range(200):
        listed = cli("list_processes", stdin={}).result
        states = {p["id"]: p["status"] for p in listed["processes"]}
        if states.get(shell) not in ("starting", "running"):
            return
        time.sleep(0.05)
    raise AssertionError(f"{shell} still running")


def test_bash_output_gives_what_is_new_since_the_last_check(ws: Path, cli: CliRunner) -> None:
    started = claude(cli, "Bash", {"command": "printf 'one\\ntwo\\nthree\\n'; exit 4",
                                   "run_in_background": True}).result
    shell = started["shellId"]
    assert started["background"] is True and started["killed"] is False
    wait_done(cli, shell)
    first = claude(cli, "BashOutput", {"bash_id": shell, "filter": "^t"}).result
    assert first["output"] == "two\nthree\n"  # "one" is dropped for good
    assert first["status"] == "failed" and first["exitCode"] == 4
    again = claude(cli, "BashOutput", {"bash_id": shell}).result
    assert again["output"] == ""  # only what is new since the last check
    ok = claude(cli, "Bash", {"command": "echo done", "run_in_background": True}).result
    wait_done(cli, ok["shellId"])
    done = claude(cli, "BashOutput", {"bash_id": ok["shellId"]}).result
    assert (done["output"], done["status"], done["exitCode"]) == ("done\n", "completed", 0)
    text = cli("--dialect", "claude", "--text", "Bash", stdin={
        "command": "sleep 1", "run_in_background": True}).out
    assert "read more with BashOutput, stop with KillShell" in text
    assert not FOREIGN.search(text)


def test_bash_output_and_kill_shell_errors_speak_claude(ws: Path, cli: CliRunner) -> None:
    before = snapshot(ws)
    bad_filter = claude(cli, "Bash", {"command": "echo x", "run_in_background": True}).result
    error = failed(claude(cli, "BashOutput", {"bash_id": bad_filter["shellId"],
                                              "filter": "(unclosed"}), "regex_error")
    assert error["message"].startswith("filter ")
    for tool, args in (("BashOutput", {"bash_id": "nope"}),
                       ("KillShell", {"shell_id": "0123456789ab"})):
        assert "shellId" in failed(claude(cli, tool, args), "process_not_found")["hint"]
    assert problem_names(failed(claude(cli, "KillShell", {"id": "x"}), "invalid_arguments")) \
        >= {"shell_id"}
    wait_done(cli, bad_filter["shellId"])
    assert snapshot(ws) == before


def test_kill_shell_stops_a_background_shell(ws: Path, cli: CliRunner) -> None:
    shell = claude(cli, "Bash", {"command": "sleep 30", "run_in_background": True}).result[
        "shellId"]
    killed = claude(cli, "KillShell", {"shell_id": shell}).result
    assert killed["shell_id"] == shell and "killed" in killed["message"]
    assert claude(cli, "BashOutput", {"bash_id": shell}).result["status"] == "failed"
    again = cli("--dialect", "claude", "KillBash", stdin={"shell_id": shell}).result
    assert "already ended" in again["message"]


# -- LS ---------------------------------------------------------------------------------------


def test_ls_lists_recursively_without_hidden_entries_and_honours_ignore(
        ws: Path, cli: CliRunner) -> None:
    for rel in ("a.txt", "src/main.py", "src/deep/x.log", "src/__pycache__/m.pyc",
                ".hidden/h.txt", "node_modules/pkg/index.js"):
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text("x\n")
    listed = claude(cli, "LS", {"path": str(ws)}).result
    paths = [e["path"] for e in listed["entries"]]
    assert paths == ["a.txt", "node_modules", "node_modules/pkg", "node_modules/pkg/index.js",
                     "src", "src/deep", "src/deep/x.log", "src/main.py"]
    ignored = claude(cli, "LS", {"path": "src", "ignore": ["deep", "*.py"]}).result
    assert [e["path"] for e in ignored["entries"]] == []
    text = cli("--dialect", "claude", "--text", "LS", stdin={"path": "."}).out
    assert "main.py" in text and not FOREIGN.search(text)


def test_ls_keeps_the_shallowest_thousand_entries(ws: Path, cli: CliRunner) -> None:
    deep = ws / "a" / "b"
    deep.mkdir(parents=True)
    for i in range(1010):
        (deep / f"f{i:04}").touch()
    (ws / "z.txt").touch()
    listed = claude(cli, "LS", {"path": "."}).result
    assert listed["count"] == 1000 and listed["truncated"] is True
    assert {"a", "a/b", "z.txt"} <= {e["path"] for e in listed["entries"]}


def test_ls_errors_speak_claude(ws: Path, cli: CliRunner) -> None:
    (ws / "f.txt").write_text("x\n")
    before = snapshot(ws)
    assert "Read" in failed(claude(cli, "LS", {"path": "f.txt"}), "not_a_directory")["hint"]
    assert problem_names(failed(claude(cli, "LS", {}), "invalid_arguments")) == {"path"}
    assert snapshot(ws) == before


# -- MultiEdit --------------------------------------------------------------------------------


def test_multi_edit_applies_edits_in_sequence(ws: Path, cli: CliRunner) -> None:
    (ws / "m.py").write_text("x = 1\ny = 2\nz = x\n")
    result = claude(cli, "MultiEdit", {"file_path": str(ws / "m.py"), "edits": [
        {"old_string": "x = 1", "new_string": "count = 1"},
        {"old_string": "count = 1\ny", "new_string": "count = 1\nsize"},  # sees edit 0's text
        {"old_string": "x", "new_string": "count", "replace_all": True}]}).result
    assert (ws / "m.py").read_text() == "count = 1\nsize = 2\nz = count\n"
    assert result["edits_applied"] == 3 and result["file_path"] == "m.py"
    assert result["message"] == "Applied 3 edits to m.py"


def test_multi_edit_creates_a_file_from_an_empty_first_old_string(ws: Path,
                                                                   cli: CliRunner) -> None:
    result = claude(cli, "MultiEdit", {"file_path": "pkg/new.py", "edits": [
        {"old_string": "", "new_string": "def f():\n    return 1\n"},
        {"old_string": "return 1", "new_string": "return 2"}]}).result
    assert (ws / "pkg" / "new.py").read_text() == "def f():\n    return 2\n"
    assert result["files"] == [{"path": "pkg/new.py", "action": "created", "edits": 2}]
    assert result["diff"].startswith("--- /dev/null\n+++ b/pkg/new.py\n@@ -0,0 +1,2 @@\n")


def test_multi_edit_fails_as_a_whole_in_claudes_words(ws: Path, cli: CliRunner) -> None:
    (ws / "m.py").write_text("a = 1\nb = 2\n")
    before = snapshot(ws)
    error = failed(claude(cli, "MultiEdit", {"file_path": "m.py", "edits": [
        {"old_string": "a = 1", "new_string": "a = 10"},
        {"old_string": "QQQ", "new_string": "c = 3"}]}), "no_match")
    assert error["message"].startswith("edits[1]: old_string ")
    assert error["details"]["edit"] == 1
    empty = failed(claude(cli, "MultiEdit", {"file_path": "m.py", "edits": [
        {"old_string": "", "new_string": "x"}]}), "no_match")
    assert "old_string" in empty["hint"]
    same = failed(claude(cli, "MultiEdit", {"file_path": "m.py", "edits": [
        {"old_string": "b = 2", "new_string": "b = 2"}]}), "no_change")
    assert "old_string" in same["message"]
    assert problem_names(failed(claude(cli, "MultiEdit", {"file_path": "m.py", "edits": []}),
                                "invalid_arguments")) == {"edits"}
    twice = failed(claude(cli, "MultiEdit", {"file_path": "m.py", "edits": [
        {"old_string": " = ", "new_string": "="}]}), "ambiguous_match")
    assert "replace_all" in twice["hint"]
    gone = failed(claude(cli, "MultiEdit", {"file_path": "gone.py", "edits": [
        {"old_string": "a", "new_string": "b"}]}), "not_found")
    assert "LS" in gone["hint"]
    assert snapshot(ws) == before


WORDS = [f"w{i:02}" for i in range(12)]
FRESH = [f"n{i:02}" for i in range(12)]


@st.composite
def edit_plans(draw: st.DrawFn) -> tuple[str, list[dict[str, Any]], int | None]:
    """A file of distinct words, and edits each meant to replace one place of the text the edits
    before it left (chained edits included); ``bad`` is the index of an edit that cannot apply,
    or None."""
    words = draw(st.lists(st.sampled_from(WORDS), min_size=2, max_size=8, unique=True))
    per_line = draw(st.integers(1, 3))
    lines = [" ".join(words[i:i + per_line]) for i in range(0, len(words), per_line)]
    text = "\n".join(lines) + "\n"
    present, fresh = list(words), list(FRESH)
    edits: list[dict[str, Any]] = []
    for _ in range(draw(st.integers(1, 4))):
        old = draw(st.sampled_from(present))
        new = fresh.pop(0)
        present[present.index(old)] = new
        edits.append({"old_string": old, "new_string": new})
    bad = draw(st.none() | st.integers(0, len(edits) - 1))
    if bad is not None:
        edits[bad] = {"old_string": "QQQQ", "new_string": "ZZZZ"}
    return text, edits, bad


@pytest.mark.slow  # a search of generated inputs: the fast loop leaves it out
@invariant(examples=40)
@given(plan=edit_plans())
def test_multi_edit_is_all_or_nothing_and_matches_sequential_replace(
        plan: tuple[str, list[dict[str, Any]], int | None]) -> None:
    text, edits, bad = plan
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        target = root / "f.txt"
        target.write_bytes(text.encode())
        call = run_inprocess(["--dialect", "claude", "MultiEdit"], workspace=root,
                             stdin=json.dumps({"file_path": "f.txt", "edits": edits}),
                             env={"ZBTOOLS_STATE_DIR": str(root / ".state")})
        if bad is not None:
            assert call.json["ok"] is False
            assert target.read_bytes() == text.encode()
            return
        expected = text
        for edit in edits:  # the oracle: str.replace of a place that stands exactly once
            assert expected.count(edit["old_string"]) == 1
            expected = expected.replace(edit["old_string"], edit["new_string"])
        assert call.result["edits_applied"] == len(edits)
        assert target.read_bytes() == expected.encode()


# -- NotebookEdit -----------------------------------------------------------------------------

NOTEBOOK = {"cells": [
    {"cell_type": "code", "execution_count": None, "id": "c1", "metadata": {}, "outputs": [],
     "source": ["x = 1"]},
    {"cell_type": "markdown", "id": "m1", "metadata": {}, "source": ["# Title"]}],
    "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


def cells(ws: Path) -> list[tuple[str, str]]:
    data = json.loads((ws / "n.ipynb").read_text())
    return [(c["cell_type"], "".join(c["source"])) for c in data["cells"]]


def test_notebook_edit_replaces_inserts_and_deletes(ws: Path, cli: CliRunner) -> None:
    (ws / "n.ipynb").write_text(json.dumps(NOTEBOOK, indent=1) + "\n")
    replaced = claude(cli, "NotebookEdit", {"notebook_path": str(ws / "n.ipynb"),
                                            "cell_id": "c1", "new_source": "x = 2"}).result
    assert (replaced["edit_type"], replaced["cell_id"], replaced["total_cells"]) == (
        "replaced", "c1", 2)
    first = claude(cli, "NotebookEdit", {"notebook_path": "n.ipynb", "new_source": "import os",
                                         "cell_type": "code", "edit_mode": "insert"}).result
    assert first["edit_type"] == "inserted" and first["cell_index"] == 0
    claude(cli, "NotebookEdit", {"notebook_path": "n.ipynb", "cell_id": "c1",
                                 "new_source": "## Note", "cell_type": "markdown",
                                 "edit_mode": "insert"})
    deleted = claude(cli, "NotebookEdit", {"notebook_path": "n.ipynb", "cell_id": "m1",
                                           "new_source": "", "edit_mode": "delete"}).result
    assert deleted["edit_type"] == "deleted" and deleted["total_cells"] == 3
    assert cells(ws) == [("code", "import os"), ("code", "x = 2"), ("markdown", "## Note")]


def test_notebook_edit_errors_speak_claude(ws: Path, cli: CliRunner) -> None:
    (ws / "n.ipynb").write_text(json.dumps(NOTEBOOK, indent=1) + "\n")
    before = snapshot(ws)
    insert = failed(claude(cli, "NotebookEdit", {"notebook_path": "n.ipynb", "new_source": "x",
                                                 "edit_mode": "insert"}), "invalid_arguments")
    assert problem_names(insert) == {"cell_type"}
    replace = failed(claude(cli, "NotebookEdit", {"notebook_path": "n.ipynb",
                                                  "new_source": "x"}), "invalid_arguments")
    assert problem_names(replace) == {"cell_id"}
    unknown = failed(claude(cli, "NotebookEdit", {"notebook_path": "n.ipynb", "cell_id": "zz",
                                                  "new_source": "x"}), "unknown_id")
    assert "Read" in unknown["hint"]
    (ws / "t.txt").write_text("x\n")
    before = snapshot(ws)
    failed(claude(cli, "NotebookEdit", {"notebook_path": "t.txt", "cell_id": "c1",
                                        "new_source": "x"}), "unsupported_format")
    failed(claude(cli, "NotebookEdit", {"notebook_path": "no.ipynb", "cell_id": "c1",
                                        "new_source": "x"}), "not_found")
    assert snapshot(ws) == before


# -- WebFetch, WebSearch ----------------------------------------------------------------------


@pytest.fixture
def site() -> Iterator[Server]:
    server = Server("127.0.0.1", {"/doc": lambda h: h.reply(
        200, "text/html; charset=utf-8", page("Doc", "<h1>Install</h1><p>pip install x</p>"))})
    yield server
    server.close()


def test_web_fetch_returns_the_page_as_its_response(site: Server, ws: Path,
                                                    cli: CliRunner) -> None:
    result = claude(cli, "WebFetch", {"url": f"{site.base}/doc", "prompt": "How to install?"},
                    env={"ZBTOOLS_WEB_ALLOW": "127.0.0.1"}).result
    assert "pip install x" in result["response"] and result["status_code"] == 200
    assert result["url"] == f"{site.base}/doc"


def test_web_fetch_errors_speak_claude(site: Server, ws: Path, cli: CliRunner) -> None:
    missing = failed(claude(cli, "WebFetch", {"url": f"{site.base}/doc"}), "invalid_arguments")
    assert problem_names(missing) == {"prompt"}
    blocked = failed(claude(cli, "WebFetch", {"url": f"{site.base}/doc", "prompt": "p"}),
                     "blocked_address")
    assert "WebFetch" in blocked["hint"]
    assert site.hits == []


@pytest.fixture
def searxng() -> Iterator[Server]:
    def search(h: Any) -> None:
        query = parse_qs(urlsplit(h.path).query)
        hosts = ["docs.python.org", "stackoverflow.com", "python.org", "w3schools.com"] * 6
        results = [{"title": f"R{i}", "url": f"https://{host}/{i}", "content": f"s{i}"}
                   for i, host in enumerate(hosts)]
        h.reply(200, "application/json", json.dumps({
            "query": query["q"][0], "results": results, "answers": [],
            "suggestions": []}).encode())

    server = Server("127.0.0.1", {"/search": search})
    yield server
    server.close()


def test_web_search_filters_by_domain(searxng: Server, ws: Path, cli: CliRunner) -> None:
    env = {"ZBTOOLS_SEARXNG_URL": searxng.base}
    every = claude(cli, "WebSearch", {"query": "python docs"}, env=env).result
    assert every["total_results"] == 10 and every["query"] == "python docs"
    allowed = claude(cli, "WebSearch", {"query": "python docs",
                                        "allowed_domains": ["python.org"]}, env=env).result
    hosts = {urlsplit(r["url"]).hostname for r in allowed["results"]}
    assert hosts == {"docs.python.org", "python.org"} and allowed["total_results"] == 10
    blocked = claude(cli, "WebSearch", {"query": "python docs",
                                        "blocked_domains": ["w3schools.com", "python.org"]},
                     env=env).result
    assert {urlsplit(r["url"]).hostname for r in blocked["results"]} == {"stackoverflow.com"}


def test_web_search_errors_speak_claude(ws: Path, cli: CliRunner) -> None:
    short = failed(claude(cli, "WebSearch", {"query": "a"}), "invalid_arguments")
    assert problem_names(short) == {"query"}
    unset = failed(claude(cli, "WebSearch", {"query": "python"}), "not_configured")
    assert unset["message"].startswith("WebSearch ")


# -- TodoWrite --------------------------------------------------------------------------------


def test_todo_write_sets_the_list_and_counts_it(ws: Path, cli: CliRunner) -> None:
    result = claude(cli, "TodoWrite", {"todos": [
        {"content": "Write tests", "status": "completed", "activeForm": "Writing tests"},
        {"content": "Fix the bug", "status": "in_progress", "activeForm": "Fixing the bug"},
        {"content": "Release", "status": "pending", "activeForm": "Releasing"}]}).result
    assert result["stats"] == {"total": 3, "pending": 1, "in_progress": 1, "completed": 1}
    assert result["message"]
    assert [s["title"] for s in cli("get_plan", stdin={}).result["steps"]] == [
        "Write tests", "Fix the bug", "Release"]
    assert cli("--dialect", "claude", "--text", "TodoWrite", stdin={"todos": []}).out == \
        "no todos\n"


def test_todo_write_errors_speak_claude_and_keep_the_list(ws: Path, cli: CliRunner) -> None:
    claude(cli, "TodoWrite", {"todos": [
        {"content": "One", "status": "in_progress", "activeForm": "Doing one"}]})
    plan = cli("get_plan", stdin={}).result["steps"]
    two = failed(claude(cli, "TodoWrite", {"todos": [
        {"content": "One", "status": "in_progress", "activeForm": "Doing one"},
        {"content": "Two", "status": "in_progress", "activeForm": "Doing two"}]}),
        "invalid_arguments")
    assert "todo" in two["message"] and "TodoWrite" in two["hint"]
    empty = failed(claude(cli, "TodoWrite", {"todos": [
        {"content": " ", "status": "pending", "activeForm": "x"}]}), "invalid_arguments")
    assert empty["message"].startswith("todos[1]: the content")
    no_form = failed(claude(cli, "TodoWrite", {"todos": [{"content": "x", "status": "pending"}]}),
                     "invalid_arguments")
    assert "activeForm" in no_form["message"]
    assert cli("get_plan", stdin={}).result["steps"] == plan


# -- through a real process and over MCP ------------------------------------------------------


def test_bash_in_a_real_process(proc: CliRunner) -> None:
    call = proc("--dialect", "claude", "Bash", stdin={"command": "echo hello; exit 2",
                                                      "timeout": 30_000})
    result = call.result
    assert (result["output"], result["exitCode"], result["killed"]) == ("hello\n", 2, False)


@pytest.mark.slow
def test_the_fourteen_tools_over_mcp(ws: Path) -> None:
    pytest.importorskip("mcp", reason="the mcp package is not installed")
    from mcp import Client

    from tests.surfaces.test_mcp import session, text_of

    (ws / "m.py").write_text("a = 1\nb = 2\n")

    async def body(client: Client) -> None:
        listing = await client.list_tools()
        assert [t.name for t in listing.tools] == TOOLS
        done = await client.call_tool("MultiEdit", {"file_path": str(ws / "m.py"), "edits": [
            {"old_string": "a = 1", "new_string": "a = 10"},
            {"old_string": "a = 10\nb", "new_string": "a = 10\nbeta"}]})
        assert done.is_error is False, text_of(done)
        refused = await client.call_tool("MultiEdit", {"file_path": str(ws / "m.py"), "edits": [
            {"old_string": "beta", "new_string": "b"}, {"old_string": "QQQ", "new_string": "x"}]})
        assert refused.is_error is True and "old_string" in text_of(refused)

    session(ws, body, "--dialect", "claude")
    assert (ws / "m.py").read_text() == "a = 10\nbeta = 2\n"
    assert os.path.exists(ws / "m.py")

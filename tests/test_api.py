"""The Python API (``zbtools.Toolbox``, docs/python.md#python-api): the command line's envelopes
as dicts, a session's warm caches, a dialect's names, errors as envelopes, closing, threads,
the typed package, and the tool-use loop of the docs run as written.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO, CliRunner
from tests.core.search.test_cache import reads, settle  # noqa: F401 (fixtures, used by name)
from tests.tools.test_grep_engines import make_tree
from zbtools import Toolbox, ToolboxError


@pytest.fixture
def tb(ws: Path) -> Iterator[Toolbox]:
    with Toolbox(ws) as toolbox:
        yield toolbox


def tree(ws: Path) -> None:
    (ws / "src").mkdir()
    (ws / "src" / "a.py").write_text("def f():\n    return 1  # TODO\n")
    (ws / "src" / "b.py").write_text("x = 2\n")
    (ws / "notes.md").write_text("# notes\nTODO: more\n")
    (ws / ".gitignore").write_text("build/\n")
    (ws / "build").mkdir()
    (ws / "build" / "out.py").write_text("TODO = 0\n")


CALLS: list[tuple[str, dict[str, Any]]] = [
    ("read_file", {"path": "src/a.py"}),
    ("read_file", {"path": "notes.md", "offset": 2, "limit": 1, "hashes": True}),
    ("grep_search", {"pattern": "TODO"}),
    ("grep_search", {"pattern": "todo", "case_insensitive": True, "output_mode": "count"}),
    ("find_files_glob", {"pattern": "**/*.py"}),
    ("list_directory", {"path": ".", "max_depth": 3}),
    ("get_file_info", {"path": "src/b.py"}),
    ("outline", {"path": "src/a.py"}),
    ("read_file", {"path": "missing.txt"}),  # an error
    ("grep_search", {"pattern": "("}),  # a bad regex
    ("read_file", {}),  # a missing argument
    ("no_such_tool", {}),
]


def comparable(envelope: dict[str, Any]) -> dict[str, Any]:
    """What no two calls share left out: which search engine answered (every engine gives the
    same results, docs/search.md), a file's access time (a read moves it)."""
    result = envelope.get("result")
    if isinstance(result, dict):
        result.pop("engine", None)
        result.pop("accessed", None)
    return envelope


@pytest.mark.parametrize("tool,args", CALLS, ids=[f"{t} {a}" for t, a in CALLS])
def test_a_call_answers_the_envelope_the_command_line_prints(
        ws: Path, cli: CliRunner, tb: Toolbox, tool: str, args: dict[str, Any]) -> None:
    tree(ws)
    cold = comparable(cli(tool, stdin=args).json)
    first = comparable(tb.call(tool, args))
    second = comparable(tb.call(tool, args))  # warm: the same answer
    assert first == cold
    assert second == cold


def test_edits_through_the_api_are_the_command_lines_and_on_disk_when_the_call_returns(
        ws: Path, cli: CliRunner, tb: Toolbox) -> None:
    (ws / "a.txt").write_text("one\ntwo\n")
    (ws / "b.txt").write_text("one\ntwo\n")
    edit = {"old_text": "two", "new_text": "three"}
    cold = json.loads(cli("apply_edit", stdin={"path": "b.txt", **edit}).out.replace("b.txt",
                                                                                    "a.txt"))
    assert comparable(tb.call("apply_edit", {"path": "a.txt", **edit})) == cold
    assert (ws / "a.txt").read_text() == "one\nthree\n"  # written, not held for a group
    assert tb.call("undo", {})["ok"]
    assert (ws / "a.txt").read_text() == "one\ntwo\n"


def test_a_call_answers_what_a_real_process_prints(ws: Path, proc: CliRunner,
                                                   tb: Toolbox) -> None:
    """One real subprocess: the installed program, not the in-process runner."""
    tree(ws)
    args = {"pattern": "TODO", "context": 1}
    assert comparable(tb.call("grep_search", args)) == \
        comparable(proc("grep_search", stdin=args).json)


def test_text_adds_the_rendering_format_text_prints(ws: Path, cli: CliRunner) -> None:
    tree(ws)
    with Toolbox(ws, text=True) as tb:
        for tool, args in [("read_file", {"path": "src/a.py"}), ("read_file", {"path": "x"}),
                           ("grep_search", {"pattern": "TODO"})]:
            envelope = tb.call(tool, args)
            assert envelope["text"] == cli("--format", "text", tool, stdin=args).out
            del envelope["text"]
            assert comparable(envelope) == comparable(cli(tool, stdin=args).json)


@pytest.mark.usefixtures("settle")
def test_a_repeated_search_is_answered_from_the_sessions_cache(
        ws: Path, tb: Toolbox, request: pytest.FixtureRequest) -> None:
    seen: list[str] = request.getfixturevalue("reads")  # the files the engine reads
    make_tree(ws)
    args = {"pattern": "TODO", "engine": "python"}
    first = tb.call("grep_search", args)
    read_once = list(seen)
    second = tb.call("grep_search", args)
    assert first["ok"] and second == first
    assert len(read_once) > 10 and seen == read_once  # the second call read no file


@pytest.mark.usefixtures("settle")
def test_a_change_between_calls_is_seen(ws: Path, tb: Toolbox) -> None:
    tree(ws)
    assert len(tb.call("grep_search", {"pattern": "TODO"})["result"]["matches"]) == 2
    (ws / "src" / "b.py").write_text("y = 3  # TODO\n")
    assert len(tb.call("grep_search", {"pattern": "TODO"})["result"]["matches"]) == 3


def test_a_dialect_answers_by_its_own_names(ws: Path, cli: CliRunner) -> None:
    tree(ws)
    with Toolbox(ws, dialect="claude") as tb:
        assert tb.dialect == "claude"
        assert "Read" in tb.tools() and "read_file" not in tb.tools()
        cases: list[tuple[str, dict[str, Any]]] = [
            ("Read", {"file_path": "src/a.py", "limit": 1}),
            ("Grep", {"pattern": "TODO", "output_mode": "content", "-n": True}),
            ("read", {"file_path": "src/a.py"}),  # names fold as on the command line
            ("Read", {"path": "src/a.py"}),  # the canonical parameter name: refused
            ("Write", {"file_path": "new.txt", "content": "x\n"})]
        for tool, args in cases:
            cold = comparable(cli("--dialect", "claude", tool, stdin=args).json)
            (ws / "new.txt").unlink(missing_ok=True)
            assert comparable(tb.call(tool, args)) == cold, tool
        assert (ws / "new.txt").read_text() == "x\n"
        assert comparable(tb.call("read_file", {})) == comparable(
            cli("--dialect", "claude", "read_file", stdin={}).json)  # not a claude tool
        assert tb.schema("anthropic", ["Read"]) == json.loads(
            cli("--dialect", "claude", "schema", "--format", "anthropic", "Read").out)


def test_the_schema_is_what_the_schema_command_prints(ws: Path, cli: CliRunner,
                                                      tb: Toolbox) -> None:
    for fmt in ("jsonschema", "anthropic", "openai", "openai-strict", "mcp"):
        assert tb.schema(fmt) == json.loads(cli("schema", "--format", fmt).out), fmt
    assert tb.tools() == [d["name"] for d in tb.schema("anthropic")]
    listed = tb.schema("anthropic")
    listed[0]["name"] = "changed"  # the caller's copy
    assert tb.schema("anthropic")[0]["name"] != "changed"
    with pytest.raises(ToolboxError) as bad_format:
        tb.schema("yaml")
    assert bad_format.value.code == "usage_error"
    with pytest.raises(ToolboxError) as bad_tool:
        tb.schema("anthropic", ["nope"])
    assert bad_tool.value.error["code"] == "unknown_tool"


def test_failures_are_envelopes_and_only_programming_errors_raise(ws: Path, tb: Toolbox) -> None:
    tree(ws)
    unknown = tb.call("raed_file", {"path": "src/a.py"})
    assert unknown["ok"] is False and unknown["error"]["code"] == "unknown_tool"
    assert "read_file" in unknown["error"]["hint"]
    bad: list[dict[str, Any]] = [{"path": 5}, {"path": "src/a.py", "nope": 1},
                                 {"path": "src/a.py", "offset": object()}]
    for args in bad:
        envelope = tb.call("read_file", args)
        assert envelope["ok"] is False and envelope["error"]["code"] == "invalid_arguments", args
    assert tb.call("read_file", {"path": "../outside/secret.txt"})["error"]["code"] in (
        "outside_workspace", "not_found")
    with pytest.raises(TypeError, match="name must be a str"):
        tb.call(b"read_file", {})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="args must be a mapping"):
        tb.call("read_file", [("path", "x")])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="keyed by argument names"):
        tb.call("read_file", {1: "x"})  # type: ignore[dict-item]
    assert tb.call("get_plan")["ok"]  # no arguments: None is {}


def test_any_mapping_is_arguments_and_the_callers_objects_are_left_alone(
        ws: Path, tb: Toolbox) -> None:
    tree(ws)

    class Args(Mapping[str, object]):
        def __init__(self, **values: object) -> None:
            self.data = values

        def __getitem__(self, key: str) -> object:
            return self.data[key]

        def __iter__(self) -> Iterator[str]:
            return iter(self.data)

        def __len__(self) -> int:
            return len(self.data)

    args: dict[str, Any] = {"pattern": "TODO"}
    first = tb.call("grep_search", Args(pattern="TODO"))
    assert args == {"pattern": "TODO"}
    expected = json.loads(json.dumps(first))

    def scribble(value: Any) -> None:  # the caller changes every list and dict it was given
        if isinstance(value, dict):
            for key in list(value):
                scribble(value[key])
                value[key] = "scribbled"
        elif isinstance(value, list):
            for item in value:
                scribble(item)
            value.clear()

    scribble(first)
    assert tb.call("grep_search", args) == expected


def test_a_bad_workspace_or_dialect_raises_toolbox_error(ws: Path) -> None:
    with pytest.raises(ToolboxError) as missing:
        Toolbox(ws / "nope")
    assert missing.value.code == "usage_error" and "does not exist" in str(missing.value)
    with pytest.raises(ToolboxError) as dialect:
        Toolbox(ws, dialect="nope")
    assert dialect.value.error["details"]["dialects"]
    assert isinstance(dialect.value, ValueError)
    with pytest.raises(TypeError):
        Toolbox(ws, dialect=3)  # type: ignore[arg-type]


def test_the_environment_is_the_toolboxs_own(ws: Path, tmp_path: Path) -> None:
    (ws / "a.txt").write_text("x\n" * 100)
    other = tmp_path / "other"
    other.mkdir()
    (other / "b.txt").write_text("b\n")
    env = {**os.environ, "ZBTOOLS_MAX_LINES": "10", "ZBTOOLS_WORKSPACE": str(other)}
    with Toolbox(env=env) as tb:  # the workspace from the environment given, not os.environ
        assert tb.workspace == str(other.resolve())
        assert tb.call("read_file", {"path": "b.txt"})["ok"]
    with Toolbox(ws, env=env) as tb:
        assert tb.call("read_file", {"path": "a.txt"})["result"]["end_line"] == 10


def is_closed(toolbox: Toolbox) -> bool:
    return toolbox.closed


def open_fds() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


def test_close_lets_go_of_the_session_and_a_call_after_it_is_an_error(ws: Path) -> None:
    tree(ws)
    before = open_fds()
    tb = Toolbox(ws)
    assert tb.call("grep_search", {"pattern": "TODO"})["ok"]
    assert "closed" not in repr(tb) and not is_closed(tb)
    tb.close()
    tb.close()  # twice: nothing more
    assert is_closed(tb) and "closed" in repr(tb)
    assert open_fds() <= before  # the workspace handle and the change monitor's descriptor
    with pytest.raises(RuntimeError, match="closed"):
        tb.call("read_file", {"path": "src/a.py"})
    with pytest.raises(RuntimeError, match="closed"):
        tb.schema()
    with Toolbox(ws) as again:
        assert again.call("read_file", {"path": "src/a.py"})["ok"]
    assert again.closed


def test_close_waits_for_a_call_running_in_another_thread(
        ws: Path, tb: Toolbox, monkeypatch: pytest.MonkeyPatch) -> None:
    (ws / "a.txt").write_text("a\n")
    started = threading.Event()
    answers: list[dict[str, Any]] = []
    slow = slowed(monkeypatch, started, 0.2)
    worker = threading.Thread(target=lambda: answers.append(tb.call("read_file",
                                                                    {"path": "a.txt"})))
    worker.start()
    assert started.wait(10)
    tb.close()  # waits for the call, then closes
    worker.join()
    assert answers[0]["ok"] and slow["finished"] == 1


def slowed(monkeypatch: pytest.MonkeyPatch, started: threading.Event | None,
           pause: float) -> dict[str, int]:
    """Every tool run takes ``pause`` seconds more; counts how many run at once."""
    from zbtools.dispatch import call_tool as original

    state = {"running": 0, "most": 0, "finished": 0}
    guard = threading.Lock()

    def call_tool(*args: Any, **kwargs: Any) -> Any:
        with guard:
            state["running"] += 1
            state["most"] = max(state["most"], state["running"])
        if started is not None:
            started.set()
        time.sleep(pause)
        try:
            return original(*args, **kwargs)
        finally:
            with guard:
                state["running"] -= 1
                state["finished"] += 1

    monkeypatch.setattr("zbtools.surfaces.batch.call_tool", call_tool)
    return state


def test_calls_from_several_threads_run_one_at_a_time_and_answer_as_in_sequence(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The documented promise (docs/python.md#python-threads): one lock, each call whole; the
    answers are those of the same calls made one after another."""
    tree(ws)
    for i in range(4):
        (ws / f"f{i}.txt").write_text(f"file {i}\nTODO {i}\n")
    work = [[("read_file", {"path": f"f{i}.txt"}), ("grep_search", {"pattern": f"TODO {i}"}),
             ("write_append", {"path": f"f{i}.txt", "content": f"more {i}\n"}),
             ("read_file", {"path": f"f{i}.txt"}), ("find_files_glob", {"pattern": "*.txt"})]
            for i in range(4)]
    with Toolbox(ws) as tb:
        state = slowed(monkeypatch, None, 0.005)
        answers: dict[int, list[dict[str, Any]]] = {}

        def worker(i: int) -> None:
            answers[i] = [tb.call(tool, args) for tool, args in work[i]]

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        monkeypatch.undo()
    assert state["most"] == 1 and state["finished"] == 20
    for i in range(4):  # each thread's own files: their answers do not depend on the order
        (ws / f"f{i}.txt").write_text(f"file {i}\nTODO {i}\n")
    with Toolbox(ws) as tb:
        for i in range(4):
            expected = [tb.call(tool, args) for tool, args in work[i]]
            got = answers[i]
            for answer in (*expected, *got):
                comparable(answer)
                if answer["tool"] == "find_files_glob":  # sees the others' writes: sizes vary
                    answer["result"] = sorted(m["path"] for m in answer["result"]["matches"])
            assert got == expected


def test_importing_the_package_loads_no_api_and_the_package_is_typed() -> None:
    done = subprocess.run([sys.executable, "-I", "-c", "import sys; sys.path.insert(0, "
                           f"{str(REPO)!r}); import zbtools; print(sorted(m for m in "
                           "sys.modules if m.startswith('zbtools')))"],
                          capture_output=True, text=True, timeout=30, check=True)
    assert done.stdout.strip() == "['zbtools']"
    import importlib.resources

    import zbtools

    assert importlib.resources.files(zbtools).joinpath("py.typed").is_file()
    assert zbtools.Toolbox is Toolbox
    with pytest.raises(AttributeError):
        zbtools.Nope


def test_the_wheel_ships_py_typed() -> None:
    """The files the wheel build selects (hatchling's own selection, without building)."""
    builder = pytest.importorskip("hatchling.builders.wheel").WheelBuilder(str(REPO))
    names = {f.distribution_path for f in builder.recurse_included_files()}
    assert {"zbtools/py.typed", "zbtools/api.py", "zbtools/__init__.py"} <= names


# ---- the docs' tool-use loop, run as written ---------------------------------------------------

def docs_loop() -> str:
    """The Python block of the docs' tool-use loop section."""
    page = (REPO / "docs" / "python.md").read_text(encoding="utf-8")
    section = page.split('<a id="python-tool-use-loop"></a>', 1)[1].split("\n### ", 1)[0]
    found = re.search(r"^```python\n(.*?)^```", section, re.M | re.S)
    assert found, "no python block in the tool-use loop section"
    return found.group(1)


def test_the_docs_tool_use_loop_runs(ws: Path) -> None:
    (ws / "hello.py").write_text("print('hello')\n")
    seen: list[list[dict[str, Any]]] = []

    def ask_model(messages: list[dict[str, Any]], tools: list[dict[str, Any]]
                  ) -> dict[str, Any]:
        """A fake model: reads a file, makes one mistake, then answers from what it read."""
        seen.append(tools)
        assert messages[0] == {"role": "user", "content": "what does hello.py print?"}
        if len(messages) == 1:
            return {"role": "assistant", "content": [
                {"type": "text", "text": "Let me look."},
                {"type": "tool_use", "id": "t1", "name": "read_file",
                 "input": {"path": "hello.py"}},
                {"type": "tool_use", "id": "t2", "name": "read_file",
                 "input": {"path": "nope.py"}}]}
        results = messages[-1]["content"]
        assert [r["tool_use_id"] for r in results] == ["t1", "t2"]
        assert "print('hello')" in results[0]["content"] and not results[0]["is_error"]
        assert results[1]["is_error"] and results[1]["content"].startswith("error[not_found]")
        json.dumps(messages)  # everything sent to a model is plain JSON
        return {"role": "assistant", "content": [{"type": "text", "text": "It prints hello."}]}

    namespace: dict[str, Any] = {}
    exec(compile(docs_loop(), "docs/python.md", "exec"), namespace)
    answer = namespace["run_agent"](ask_model, "what does hello.py print?", workspace=str(ws))
    assert answer == "It prints hello."
    tools = seen[0]
    assert all(set(t) == {"name", "description", "input_schema"} for t in tools)
    assert "read_file" in [t["name"] for t in tools]


def test_the_manual_pages_python_example_runs(ws: Path) -> None:
    import textwrap

    from zbtools.devgen import render_man_rst

    page = render_man_rst({})
    block = page.split("The same calls from Python, in the harness's own process:", 1)[1]
    code = textwrap.dedent(block.split("::\n\n", 1)[1].split("\n\n", 1)[0])
    (ws / "a.py").write_text("# TODO\n")
    namespace: dict[str, Any] = {}
    exec(code.replace("/path/to/project", str(ws)), namespace)
    assert namespace["envelope"]["result"]["matches"][0]["path"] == "a.py"
    assert namespace["tools"][0]["input_schema"]

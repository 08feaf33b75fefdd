"""Hints and errors speak the dialect (docs/internals/surfaces.md#dialect-layer).

The invariant: for every tool every dialect lists (whatever tools are added later), calls built
from its own schema that fail in every way a schema allows (a required argument missing, each
argument of the wrong type, missing files, text not found or found twice, a read past the end,
a read cut by the line cap...) produce messages, hints, problem messages, warnings and text
renderings that name no canonical tool or parameter the dialect lacks. The forbidden words are
the registry's tool names, aliases and parameter names minus every word of the dialect's own
schemas (names, properties, enumerated values). Canonical ``edit_file`` speaks its own
parameter names, not ``apply_edit``'s.

And the hint to continue a read is right in each dialect's base: following it from the first
page to the last reads every line once (a property over file lengths and limits).
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import CliRunner, run_inprocess
from zbtools.dialects import get_dialect
from zbtools.options import DIALECTS

PATHS = {"path", "file_path", "absolute_path", "dir", "dir_path", "source", "destination",
         "cwd", "workdir", "notebook_path", "directory"}
TEXT = ["a = 1", "zzz", "", "a = 1\nb = 2\n", "\tb = 2"]
FILES = {"m.py": "a = 1\nb = 2\na = 1\n", "one.py": "def f():\n    return 1\n",
         "big.txt": "".join(f"{i}\n" for i in range(1, 26)), "d/x.txt": "x\n"}
LINE_CAP = "10"  # ZBTOOLS_MAX_LINES: big.txt's 25 lines make a cut read


def string_values(name: str) -> list[Any]:
    if name in PATHS or name.endswith("path"):
        return ["m.py", "missing.txt", "d", "big.txt", "one.py"]
    if name == "command":
        return ["true", "exit 3"]
    if name in ("url",):
        return ["not a url", "http://127.0.0.1:1/"]
    if name in ("pattern", "glob", "query", "search"):
        return ["a = 1", "[", "zzz", "*.py"]
    if name in ("id", "name", "title"):
        return ["nope", "p"]
    return TEXT


def values(name: str, schema: dict[str, Any]) -> list[Any]:
    """Values of the property's type (the interesting ones), from its schema."""
    if "enum" in schema:
        return list(schema["enum"])
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    if kind == "integer":
        return [0, 1, 3, 24, 3000, -1]
    if kind == "number":
        return [0.5, 1]
    if kind == "boolean":
        return [True, False]
    if kind == "array":
        items = schema.get("items", {})
        if items.get("type") == "object":
            return [[], [build(items, random.Random(1))], [build(items, random.Random(2)),
                                                           build(items, random.Random(2))]]
        if items.get("type") == "integer":
            return [[1, 3], [5, -1], [30, 40], [1]]
        return [[], ["true"], ["m.py"]]
    if kind == "object":
        return [{}]
    return string_values(name)


def wrong(schema: dict[str, Any]) -> Any:
    kind = schema.get("type")
    return {"string": 5, "integer": "five", "boolean": "yes", "array": "x",
            "object": 3, "number": "n"}.get(kind if isinstance(kind, str) else "", {"x": 1})


def build(schema: dict[str, Any], rnd: random.Random, *, all_props: bool = False
          ) -> dict[str, Any]:
    props: dict[str, Any] = schema.get("properties", {})
    required = set(schema.get("required", []))
    out = {}
    for name, prop in props.items():
        if name in required or all_props or rnd.random() < 0.4:
            out[name] = rnd.choice(values(name, prop))
    return out


def calls(schema: dict[str, Any], seed: int) -> list[dict[str, Any]]:
    """Argument sets for one tool: none, each property of the wrong type, random ones."""
    rnd = random.Random(seed)
    out: list[dict[str, Any]] = [{}]
    required = set(schema.get("required", []))
    for name, prop in schema.get("properties", {}).items():
        args = build(schema, rnd)
        args[name] = wrong(prop)
        out.append(args)
        if name not in required:  # the required ones and this one: each command's own
            for value in rnd.sample(values(name, prop), min(3, len(values(name, prop)))):
                args = {k: v for k, v in build(schema, rnd).items() if k in required}
                args[name] = value
                out.append(args)
                for key in required:  # a router's command or operation: each of them
                    for choice in schema["properties"][key].get("enum", []):
                        out.append({**args, key: choice})
    if "command" in required and "enum" not in schema["properties"]["command"]:
        return out[:12]  # a shell: each call starts a process; its errors are few
    out += sweep(schema)
    out += [build(schema, rnd) for _ in range(30)]
    return out


def sweep(schema: dict[str, Any]) -> list[dict[str, Any]]:
    """On m.py (its ``a = 1`` twice), each text argument with each text of the pool, under each
    command a router has: the not found, the found twice, the empty."""
    props: dict[str, Any] = schema.get("properties", {})
    required = schema.get("required", [])
    paths = [p for p in props if p in PATHS or p.endswith("path")]
    texts = [p for p, v in props.items() if v.get("type") == "string" and "enum" not in v
             and p not in paths]
    routed = next((p for p in required if "enum" in props[p]), None)
    out = []
    for choice in props[routed]["enum"] if routed else [None]:
        for name in texts:
            for value in TEXT:
                args: dict[str, Any] = {p: "m.py" for p in paths if p in required}
                args.update({p: "b = 2" for p in texts if p in required})
                if routed:
                    args[routed] = choice
                args[name] = value
                out.append(args)
    return out


def dialect_words(dialect: str) -> set[str]:
    """Every word of the dialect's own schemas: tool names, aliases, properties, enum values."""
    words: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "properties" and isinstance(value, dict):
                    words.update(value)
                if key == "enum" and isinstance(value, list):
                    words.update(v for v in value if isinstance(v, str))
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    for tool in get_dialect(dialect, {}).tools():
        words.update((tool.name, *tool.aliases))
        walk(tool.input_schema())
    return words


def forbidden_patterns(dialect: str) -> list[tuple[str, re.Pattern[str]]]:
    from zbtools.registry import all_tools

    canonical: set[str] = set()
    for spec in all_tools():
        canonical.update(spec.names)
        canonical.update(spec.params.fields())
    out = []
    for word in sorted(canonical - dialect_words(dialect)):
        if "_" in word:  # an identifier: a name wherever it stands outside a path
            pattern = rf"(?<![\w./-]){re.escape(word)}(?![\w/-]|\.\w)"
        else:  # a plain word: a name when given a value, or quoted
            pattern = rf"(?<![\w./-]){re.escape(word)}(: |=|\[)|`{re.escape(word)}`"
        out.append((word, re.compile(pattern)))
    return out


def texts(envelope: dict[str, Any]) -> list[str]:
    out = list(envelope.get("warnings", []))
    if not envelope.get("ok"):
        error = envelope["error"]
        out += [error["message"], error["hint"]]
        for problem in error.get("details", {}).get("problems", []):
            out.append(str(problem.get("message", "")))
    elif envelope.get("text"):
        # the notes the rendering ends with, not the file content it shows
        for line in reversed(envelope["text"].splitlines()):
            if line.startswith("warning: "):  # added after the rendering, checked above
                continue
            if not (line.startswith("[") and line.endswith("]")):
                break
            out.append(line)
    return out


def requests(dialect: str) -> list[list[dict[str, Any]]]:
    """Per tool of the dialect, the requests of one batch."""
    out = []
    for n, tool in enumerate(get_dialect(dialect, {}).tools()):
        if tool.category == "web" or tool.spec.name in ("web_fetch", "web_search"):
            continue  # no network in the tests; their errors are the canonical tools' own
        out.append([{"id": [tool.name, m], "tool": tool.name, "args": args}
                    for m, args in enumerate(calls(tool.input_schema(), seed=n))])
    return out


# What the generated calls must have met, where the dialect has a tool that can fail so
EXPECTED = {"claude": {"no_match", "ambiguous_match", "out_of_range", "not_found",
                       "is_directory"},
            "zkit": {"no_match", "ambiguous_match", "out_of_range", "not_found",
                     "already_exists", "process_not_found"},
            # (fiz patch takes the first place search stands: its generated calls meet no
            # ambiguity; its edit's is checked below)
            "fiz": {"no_match", "out_of_range", "not_found"},
            "anthropic": {"no_match", "already_exists", "out_of_range", "not_found"},
            "codex": {"patch_parse_error"}}


@pytest.mark.slow
@pytest.mark.parametrize("dialect", [d for d in DIALECTS if d != "zblade"])
def test_no_error_or_warning_names_what_the_dialect_lacks(tmp_path: Path, dialect: str) -> None:
    patterns = forbidden_patterns(dialect)
    bad = []
    seen_codes = set()
    for n, reqs in enumerate(requests(dialect)):
        ws = tmp_path / f"ws{n}"  # each tool starts from the same files
        for rel, text in FILES.items():
            (ws / rel).parent.mkdir(parents=True, exist_ok=True)
            (ws / rel).write_text(text)
        # HOME too: a tool keeping memory or settings there writes into the test's own folder
        call = run_inprocess(["--dialect", dialect, "--format", "text", "batch"],
                             stdin="".join(json.dumps(r) + "\n" for r in reqs), workspace=ws,
                             env={"ZBTOOLS_MAX_LINES": LINE_CAP, "HOME": str(tmp_path)})
        out = [json.loads(line) for line in call.out.splitlines()]
        assert len(out) == len(reqs)
        for request, envelope in zip(reqs, out, strict=True):
            if not envelope["ok"]:
                seen_codes.add(envelope["error"]["code"])
                assert envelope["error"]["hint"], envelope
            for text in texts(envelope):
                for word, pattern in patterns:
                    if pattern.search(text):
                        bad.append((request["tool"], word, text, request["args"]))
    assert not bad, "\n".join(sorted({repr(b[:3]) for b in bad}))
    assert "invalid_arguments" in seen_codes, seen_codes
    assert EXPECTED.get(dialect, set()) <= seen_codes, EXPECTED[dialect] - seen_codes


def test_edit_file_speaks_its_own_parameter_names(ws: Path, cli: CliRunner) -> None:
    from zbtools.registry import find

    apply_edit, edit_file = find("apply_edit"), find("edit_file")
    assert apply_edit is not None and edit_file is not None
    lacks = set(apply_edit.params.fields()) - set(edit_file.params.fields())
    (ws / "m.py").write_text(FILES["m.py"])
    said = []
    for old in ("a = 1", "zzz", "", "a  =  1", "b = 2"):
        for new in ("b = 2", "a = 1", ""):
            call = cli("edit_file", stdin={"path": "m.py", "old_content": old,
                                           "new_content": new, "dry_run": True})
            if not call.json["ok"]:
                said += texts(call.json)
    assert said
    for text in said:
        for word in lacks:
            pattern = (rf"(?<![\w./-]){word}(?![\w/-])" if "_" in word
                       else rf"(?<![\w./-]){word}(: |=|\[)")
            assert not re.search(pattern, text), (word, text)
    assert any("old_content" in text for text in said)


# ---------------------------------------------------------------------------------------------
# Continuing a read where its hint says


def readers() -> list[tuple[str, str, str]]:
    """(dialect, tool, path parameter) of every tool reading a file page by page by offset."""
    out = []
    for dialect in DIALECTS:
        for tool in get_dialect(dialect, {}).tools():
            schema = tool.input_schema()
            props = schema.get("properties", {})
            paths = [p for p in schema.get("required", []) if "path" in p]
            if tool.targets == ("read_file",) and "offset" in props and "limit" in props \
                    and paths:
                out.append((dialect, tool.name, paths[0]))
    return out


# (Gemini's read_file says start_line, its current parameter, also when called with the older
# offset and limit)
HINTED = re.compile(r"continue with (offset|start_line)=(-?\d+)")


@pytest.mark.parametrize(("dialect", "tool", "path"), readers())
@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.integers(0, 40), limit=st.integers(1, 25))
def test_following_the_read_hint_reads_every_line_once(ws: Path, dialect: str, tool: str,
                                                       path: str, lines: int,
                                                       limit: int) -> None:
    text = "".join(f"line {i}\n" for i in range(lines))
    (ws / "f.txt").write_text(text)
    env = {"ZBTOOLS_MAX_LINES": LINE_CAP}
    args: dict[str, Any] = {path: "f.txt", "limit": limit}
    got = ""
    for _ in range(lines + 2):
        envelope = json.loads(run_inprocess(
            ["--dialect", dialect, "--format", "text", "batch"],
            stdin=json.dumps({"tool": tool, "args": args}) + "\n", workspace=ws,
            env=env).out)
        assert envelope["ok"], envelope
        got += envelope["result"]["content"]
        hinted = {(m.group(1), int(m.group(2))) for t in [*envelope["warnings"], envelope["text"]]
                  for m in HINTED.finditer(t)}
        if not envelope["result"]["truncated"]:
            assert not hinted, envelope
            break
        # the result, its warning and its rendering name one offset: the dialect's own
        assert {n for _, n in hinted} == {envelope["result"]["next_offset"]}, envelope
        assert len(hinted) == 1, envelope
        name, at = hinted.pop()
        args = {path: "f.txt", "limit": limit, "offset": at} if name == "offset" else \
            {path: "f.txt", "start_line": at, "end_line": at + limit - 1}
    assert got == text


def test_anthropic_view_says_how_to_go_on_with_view_range(ws: Path) -> None:
    """Anthropic's view has no offset: its note names view_range, and following it reads on."""
    text = "".join(f"line {i}\n" for i in range(25))
    (ws / "f.txt").write_text(text)
    args: dict[str, Any] = {"command": "view", "path": "f.txt"}
    got = ""
    for _ in range(5):
        call = run_inprocess(["--dialect", "anthropic", "--format", "text",
                              "str_replace_based_edit_tool"], stdin=json.dumps(args),
                             workspace=ws, env={"ZBTOOLS_MAX_LINES": LINE_CAP})
        lines = call.out.splitlines()
        got += "".join(line.split("\t", 1)[1] + "\n" for line in lines if "\t" in line)
        note = lines[-1] if lines[-1].startswith("[") else ""
        found = re.search(r"continue with view_range=\[(\d+), -1\]", note)
        if found is None:
            break
        assert "offset" not in note
        args = {"command": "view", "path": "f.txt", "view_range": [int(found.group(1)), -1]}
    assert got == text


def test_a_hint_keeps_the_advice_the_tool_can_follow() -> None:
    from zbtools.core.call.wording import Wording

    wording = Wording({"old_text": "old_str", "occurrence": None, "get_file_info": None,
                       "max_lines": None, "offset": "offset"}, shifts={"offset": -1})
    assert wording.advice("add context; occurrence: 1 picks the first") == "add context"
    assert wording.advice("resend old_text, or use get_file_info") == "resend old_str"
    assert wording.advice("use get_file_info or read it") == ""
    assert wording.advice("cut (max_lines); continue with offset=11") == \
        "cut; continue with offset=10"
    assert wording.text("see docs/old_text.md and old_text.py") == \
        "see docs/old_text.md and old_text.py"


def test_a_commands_own_output_is_never_reworded(ws: Path, cli: CliRunner) -> None:
    call = cli("--dialect", "fiz", "--format", "text", "bash",
               "--command", "echo '[read_file]'; echo '[]'")
    assert call.out.startswith("[read_file]\n[]\n[exit code 0; ")


def test_a_program_named_in_a_hint_is_not_renamed_as_a_tool(ws: Path, cli: CliRunner) -> None:
    """``ls``, ``bash`` and ``find`` are tools' aliases and also programs and English words:
    a command line in a hint and prose in a message keep them."""
    gemini = cli("--dialect", "gemini", "run_shell_command", stdin={"command": " "}).error
    assert '"ls -la"' in gemini["hint"], gemini
    codex = cli("--dialect", "codex", "shell", stdin={"command": []}).error
    assert '["bash", "-lc", "ls -la"]' in codex["hint"], codex
    (ws / "a.txt").write_text("one\n")
    missing = cli("--dialect", "gemini", "replace", stdin={
        "file_path": "a.txt", "old_string": "two", "new_string": "three"}).error
    assert "could not find" in missing["message"], missing


def test_an_ambiguous_fiz_edit_speaks_fiz(ws: Path, cli: CliRunner) -> None:
    (ws / "a.py").write_text("x = 1\ny = 2\nx = 1\n")
    error = cli("--dialect", "fiz", "edit", stdin={
        "path": "a.py", "edits": [{"oldText": "x = 1", "newText": "x = 3"}]}).error
    assert error["code"] == "ambiguous_match" and error["hint"], error
    assert "oldText" in error["message"]
    for word, pattern in forbidden_patterns("fiz"):
        assert not pattern.search(error["message"] + error["hint"]), (word, error)
    assert (ws / "a.py").read_text() == "x = 1\ny = 2\nx = 1\n"


def test_a_dialects_words_through_a_real_subprocess(ws: Path, proc: CliRunner) -> None:
    """fiz through a real process: the truncated read's closing note names fiz's 0-based
    offset, and a failed edit's error names only fiz's words."""
    (ws / "f.txt").write_text("".join(f"line {i}\n" for i in range(5)))
    read = proc("--dialect", "fiz", "--format", "text", "read", stdin={"path": "f.txt",
                                                                      "limit": 2})
    assert read.out.splitlines()[-1].endswith("continue with offset=2]"), read.out
    edit = proc("--dialect", "fiz", "edit", stdin={
        "path": "f.txt", "edits": [{"oldText": "line 9", "newText": "x"}]})
    error = edit.error
    assert error["code"] == "no_match" and "oldText" in error["message"], error
    for word, pattern in forbidden_patterns("fiz"):
        assert not pattern.search(error["message"] + " " + error["hint"]), (word, error)


def test_a_dialects_words_over_mcp(ws: Path) -> None:
    """The same failed edit through the SDK client: the error content speaks fiz."""
    pytest.importorskip("mcp", reason="the mcp package (a default dependency) is not installed")
    from tests.surfaces.mcp_memory import in_memory

    (ws / "f.txt").write_text("line 0\n")
    [result] = in_memory(ws, [("edit", {"path": "f.txt",
                                        "edits": [{"oldText": "line 9", "newText": "x"}]})],
                         dialect="fiz")
    assert result.is_error and isinstance(result.structured_content, dict)
    error = result.structured_content["error"]
    assert error["code"] == "no_match" and "oldText" in error["message"], error
    for word, pattern in forbidden_patterns("fiz"):
        assert not pattern.search(error["message"] + " " + error["hint"]), (word, error)

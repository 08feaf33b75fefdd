"""Gemini CLI's own tool tests, run through the ``gemini`` dialect.

``tests/data/gemini_cases/cases.json`` (vendored from google-gemini/gemini-cli with its licence;
see the README there) holds the cases of Gemini CLI's tool tests whose expectation is exact: the
files before, the call, and the files after or what the result must say (or the error, which
must leave the disk as it was). Each case must pass, or be listed in ``DEPARTURES`` with the
reason, which docs/dialects.md (section "gemini") documents; a departure must still depart (a
fixed one is taken off the list).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_inprocess

CASES = Path(__file__).resolve().parents[1] / "data" / "gemini_cases"

# case id -> what zbtools does instead (documented in docs/dialects.md#gemini)
DEPARTURES: dict[str, str] = {
    "edit-flexible":
        "an old_string found under other indentation keeps each new line's own relative "
        "indentation; Gemini gives every line the first line's indentation",
    "edit-fuzzy-typo": "no fuzzy (edit-distance) matching: a typo in old_string is a miss",
    "edit-fuzzy-quotes-multiple":
        "single and double quotes are different characters: no fuzzy matching",
    "edit-rebase-fuzzy": "no fuzzy (edit-distance) matching: a typo in old_string is a miss",
    "edit-llm-correction": "no model-based self-correction of a missed old_string",
    "edit-regex-inner-whitespace":
        "whitespace added or removed next to punctuation ('( a' for '(a') is a miss",
    "edit-regex-blank-line":
        "other indentation and other inner whitespace at once is a miss",
    "edit-flexible-blank-line":
        "an old_string found under other indentation gets that indentation added to "
        "new_string, even when new_string already carries it",
    "edit-placeholder-in-literal":
        "a new_string line that reads as an omission placeholder is refused even inside a "
        "string literal",
    "read-binary": "a binary file is refused (binary_file), not answered with a message",
    "many-geminiignore": ".geminiignore is not read: only .gitignore, .ignore and .rgignore",
    "read-geminiignore": ".geminiignore is not read: only .gitignore, .ignore and .rgignore",
    "ls-geminiignore": ".geminiignore is not read: only .gitignore, .ignore and .rgignore",
    "glob-geminiignore": ".geminiignore is not read: only .gitignore, .ignore and .rgignore",
}

# Gemini CLI's error types -> the zbtools error codes that say the same thing
ERRORS: dict[str, set[str]] = {
    "FILE_NOT_FOUND": {"not_found"},
    "ATTEMPT_TO_CREATE_EXISTING_FILE": {"already_exists"},
    "EDIT_NO_OCCURRENCE_FOUND": {"no_match"},
    "EDIT_EXPECTED_OCCURRENCE_MISMATCH": {"ambiguous_match"},
    "EDIT_NO_CHANGE_LLM_JUDGEMENT": {"no_match"},
    "PATH_NOT_IN_WORKSPACE": {"outside_workspace"},
    "INVALID_TOOL_PARAMS": {"invalid_arguments"},
    "TARGET_IS_DIRECTORY": {"is_directory"},
    "PATH_IS_NOT_A_DIRECTORY": {"not_a_directory"},
    "LS_EXECUTION_ERROR": {"not_found"},
}


# case id -> the zbtools code of an error Gemini CLI reports as a parameter problem
CODES: dict[str, set[str]] = {
    "glob-missing-dir": {"not_found"},
    "glob-not-a-dir": {"not_a_directory"},
    "grep-invalid-regex": {"regex_error"},
    "grep-missing-path": {"not_found"},
    "edit-placeholder-rejected": {"placeholder_in_new"},
    "edit-placeholder-extra-rejected": {"placeholder_in_new"},
}


def _cases() -> list[dict[str, Any]]:
    data = json.loads((CASES / "cases.json").read_text(encoding="utf-8"))
    assert isinstance(data, list)
    return data


def _generated(spec: dict[str, Any]) -> bytes:
    if "hex" in spec:
        return bytes.fromhex(str(spec["hex"]))
    if "lines" in spec:
        first = int(spec.get("first", 1))
        return "\n".join(spec["lines"].replace("{n}", str(n))
                         for n in range(first, first + spec["count"])).encode()
    text: str = spec["text"]
    return text.replace("{a*2500}", "a" * 2500).encode()


def _setup(case: dict[str, Any], ws: Path) -> None:
    ws.mkdir()
    for name in case.get("dirs", []):
        (ws / name).mkdir(parents=True)
    for name, text in case.get("files", {}).items():
        (ws / name).parent.mkdir(parents=True, exist_ok=True)
        (ws / name).write_bytes(text.encode("utf-8"))
    for name, spec in case.get("generate", {}).items():
        (ws / name).write_bytes(_generated(spec))
    now = time.time()
    for name, age in case.get("mtimes", {}).items():
        os.utime(ws / name, (now - age, now - age))


def _tree(root: Path) -> dict[str, bytes | None]:
    out: dict[str, bytes | None] = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".zbtools" or folder != str(root)]
        for name in dirs:
            out[(Path(folder) / name).relative_to(root).as_posix() + "/"] = None
        for name in files:
            path = Path(folder) / name
            out[path.relative_to(root).as_posix()] = path.read_bytes()
    memory = root / ".zbtools" / "memory"
    if memory.is_dir():
        for path in memory.iterdir():
            out[path.relative_to(root).as_posix()] = path.read_bytes()
    return out


def _paths(tool: str, result: dict[str, Any]) -> list[str]:
    if tool == "list_directory":
        return [e["name"] for e in result["entries"]]
    if tool == "glob":
        return [m["path"] for m in result["matches"]]
    raise AssertionError(tool)  # pragma: no cover


def _problems(case: dict[str, Any], reply: dict[str, Any], before: dict[str, bytes | None],
              after: dict[str, bytes | None]) -> list[str]:
    """What differs from the case's expectation (empty: the case passes)."""
    expect = case["expect"]
    bad: list[str] = []
    if reply.get("ok") is not expect["ok"]:
        return [f"ok is {reply.get('ok')}: {reply.get('error') or reply.get('result')}"]
    if not expect["ok"]:
        error = reply["error"]
        codes = CODES.get(case["id"]) or ERRORS.get(expect.get("error", ""), set())
        if codes and error["code"] not in codes:
            bad.append(f"error code {error['code']}, expected one of {sorted(codes)}")
        if "message" in expect and expect["message"] not in error["message"]:
            bad.append(f"message {error['message']!r} lacks {expect['message']!r}")
        if after != before:
            bad.append("a refused call changed the disk")
        return bad
    result = reply["result"]
    for name, text in expect.get("files", {}).items():
        if after.get(name) != text.encode("utf-8"):
            bad.append(f"{name} is {after.get(name)!r}, expected {text!r}")
    for name, parts in expect.get("file_contains", {}).items():
        got = (after.get(name) or b"").decode("utf-8")
        bad.extend(f"{name} lacks {p!r}" for p in parts if p not in got)
    if "content" in expect and result.get("content") != expect["content"]:
        bad.append(f"content {result.get('content')!r}, expected {expect['content']!r}")
    for part in expect.get("content_contains", []):
        if part not in result.get("content", ""):
            bad.append(f"content lacks {part!r}")
    for part in expect.get("content_lacks", []):
        if part in result.get("content", ""):
            bad.append(f"content has {part!r}")
    for key in ("total_lines", "truncated"):
        if key in expect and result.get(key) != expect[key]:
            bad.append(f"{key} is {result.get(key)!r}, expected {expect[key]!r}")
    if expect.get("lines_shortened") and not result.get("lines_cut"):
        bad.append("no line was shortened")
    if "inline_data_mime" in expect and result.get("mime") != expect["inline_data_mime"]:
        bad.append(f"mime {result.get('mime')!r}")
    if expect.get("binary_skipped") and result.get("kind") == "text":
        bad.append("a binary file was read as text")
    if "message" in expect and result.get("message") != expect["message"]:
        bad.append(f"message {result.get('message')!r}")
    if "names" in expect or "paths" in expect or "paths_set" in expect:
        listed = _paths(case["tool"], result)
        want: list[str] | None = expect.get("names", expect.get("paths"))
        if want is not None and listed != want:
            bad.append(f"listed {listed}, expected {want}")
        if "paths_set" in expect and sorted(listed) != sorted(expect["paths_set"]):
            bad.append(f"found {sorted(listed)}, expected {sorted(expect['paths_set'])}")
    if case["tool"] in ("grep_search", "read_many_files"):
        bad.extend(_found(expect, result))
    for name, size in expect.get("sizes", {}).items():
        sizes = {e["name"]: e["size"] for e in result["entries"]}
        if sizes.get(name) != size:
            bad.append(f"{name} size {sizes.get(name)}, expected {size}")
    return bad


def _found(expect: dict[str, Any], result: dict[str, Any]) -> list[str]:
    """What a search or a read of many files returned, against the expectation."""
    bad: list[str] = []
    lines = [[m["path"], m["line"], m["text"]] for m in result.get("matches", [])]
    if "matches" in expect and lines != expect["matches"]:
        bad.append(f"matched {lines}, expected {expect['matches']}")
    bad.extend(f"no match {m}" for m in expect.get("matches_include", []) if m not in lines)
    if "read" in expect and result.get("files") != expect["read"]:
        bad.append(f"read {result.get('files')}, expected {expect['read']}")
    inline = [[f["path"], f["mime"], f["data"]] for f in result.get("inline_data", [])]
    if "inline" in expect and inline != expect["inline"]:
        bad.append(f"inline data {inline}, expected {expect['inline']}")
    listed = result.get("skipped")
    skipped = {s["path"]: s["reason"] for s in listed} if isinstance(listed, list) else {}
    for path, reason in expect.get("skipped", {}).items():
        if reason not in skipped.get(path, ""):
            bad.append(f"{path} not skipped for {reason!r}: {skipped}")
    return bad


def run_case(case: dict[str, Any], tmp_path: Path) -> list[str]:
    ws = tmp_path / "ws"
    _setup(case, ws)
    before = _tree(ws)
    call = run_inprocess(["--json", "--dialect", "gemini", case["tool"]],
                         stdin=json.dumps(case["args"]), workspace=ws)
    reply = json.loads(call.out)
    return _problems(case, reply, before, _tree(ws))


def test_cases_are_vendored_with_their_licence() -> None:
    assert (CASES / "LICENSE").read_text().startswith(" " * 33 + "Apache License")
    assert "google-gemini/gemini-cli" in (CASES / "README.md").read_text()
    cases = _cases()
    ids = [c["id"] for c in cases]
    assert len(ids) == len(set(ids)) and len(ids) >= 40
    assert set(DEPARTURES) <= set(ids)
    assert all(c["source"].startswith("packages/core/src/tools/") and c["test"] for c in cases)


@pytest.mark.parametrize("case", _cases(), ids=lambda c: c["id"])
def test_gemini_case(case: dict[str, Any], tmp_path: Path) -> None:
    problems = run_case(case, tmp_path)
    if case["id"] in DEPARTURES:
        assert problems, f"{case['id']} now behaves as Gemini CLI: take it off DEPARTURES"
        return
    assert not problems, (case["id"], case["test"], problems)

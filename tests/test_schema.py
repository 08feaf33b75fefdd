"""Schemas: every tool of every dialect, in every format, is valid JSON Schema draft 2020-12;
OpenAI strict output obeys strict mode; the CLI prints definitions ready for an API call."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped]
import pytest

from tests.conftest import CliRunner
from zbtools.dialects import get_dialect
from zbtools.dialects.definitions import FORMATS, OPEN_WORLD_CATEGORIES, definitions
from zbtools.options import DIALECTS
from zbtools.schema import DRAFT, STRICT_KEYWORDS, strict_schema

META = jsonschema.Draft202012Validator


def every_tool() -> list[tuple[str, str]]:
    return [(d, t.name) for d in DIALECTS for t in get_dialect(d).tools()]


def input_of(definition: dict[str, Any], fmt: str) -> dict[str, Any]:
    if fmt == "jsonschema":
        return definition
    if fmt == "anthropic":
        schema: dict[str, Any] = definition["input_schema"]
    elif fmt == "mcp":
        schema = definition["inputSchema"]
    else:
        schema = definition["function"]["parameters"]
    return schema


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("dialect", DIALECTS)
def test_every_schema_is_valid_draft_2020_12(dialect: str, fmt: str) -> None:
    defs = definitions(get_dialect(dialect), fmt)
    assert defs
    for definition in defs:
        schema = input_of(definition, fmt)
        META.check_schema(schema)
        assert schema["type"] == "object"
        if fmt == "jsonschema":
            assert schema["$schema"] == DRAFT
            assert schema["title"] and schema["description"]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_the_api_shapes(dialect: str) -> None:
    d = get_dialect(dialect)
    for tool, anthropic, openai, mcp in zip(d.tools(), definitions(d, "anthropic"),
                                            definitions(d, "openai"), definitions(d, "mcp"),
                                            strict=True):
        assert set(anthropic) == {"name", "description", "input_schema"}
        assert anthropic["name"] == tool.name
        assert openai["type"] == "function"
        assert set(openai["function"]) == {"name", "description", "parameters"}
        assert set(mcp) == {"name", "description", "inputSchema", "annotations"}
        assert mcp["annotations"] == {"readOnlyHint": tool.read_only,
                                      "destructiveHint": tool.destructive,
                                      "idempotentHint": tool.idempotent,
                                      "openWorldHint": tool.category in OPEN_WORLD_CATEGORIES}
        assert 1 <= len(tool.name) <= 64
        assert all(c.isalnum() or c in "_-" for c in tool.name)


def walk_strict(schema: dict[str, Any], where: str) -> None:
    unsupported = set(schema) - STRICT_KEYWORDS
    assert not unsupported, f"{where}: {unsupported}"
    assert schema.get("type") != "object" or "properties" in schema, where
    if "properties" in schema or schema.get("type") == "object":
        assert schema["additionalProperties"] is False, where
        assert schema["required"] == list(schema["properties"]), where
        for key, sub in schema["properties"].items():
            assert any(k in sub for k in ("type", "anyOf", "enum")), f"{where}.{key}"
            walk_strict(sub, f"{where}.{key}")
    if "items" in schema:
        walk_strict(schema["items"], f"{where}[]")
    for i, sub in enumerate(schema.get("anyOf", [])):
        walk_strict(sub, f"{where}|{i}")


@pytest.mark.parametrize("dialect", DIALECTS)
def test_openai_strict_obeys_strict_mode(dialect: str) -> None:
    for definition in definitions(get_dialect(dialect), "openai-strict"):
        function = definition["function"]
        assert function["strict"] is True
        parameters = function["parameters"]
        assert parameters["type"] == "object" and "anyOf" not in parameters
        walk_strict(parameters, function["name"])


def test_strict_mode_makes_optional_fields_nullable_and_keeps_required_ones() -> None:
    tool = get_dialect("fiz").lookup("read")
    assert tool is not None
    strict = strict_schema(tool.input_schema())
    assert strict["required"] == ["path", "offset", "limit"]
    assert strict["properties"]["path"]["type"] == "string"
    assert strict["properties"]["offset"]["type"] == ["integer", "null"]
    bash = get_dialect("zblade").lookup("bash")
    assert bash is not None
    props = strict_schema(bash.input_schema())["properties"]
    assert "env" not in props  # a free-form map: not expressible in strict mode
    assert props["on_timeout"]["enum"] == ["kill", "background", None]
    assert "default \"kill\"" in props["on_timeout"]["description"]
    read = get_dialect("zblade").lookup("read_file")
    assert read is not None
    assert "minimum 1" in strict_schema(read.input_schema())["properties"]["offset"][
        "description"]


def test_a_strict_mode_call_with_nulls_is_accepted(ws: Path, cli: CliRunner) -> None:
    (ws / "a.txt").write_text("one\ntwo\n")
    tool = get_dialect("fiz").lookup("read")
    assert tool is not None
    strict = strict_schema(tool.input_schema())
    args = {"path": "a.txt", "offset": None, "limit": None}
    jsonschema.validate(args, strict)
    assert cli("--dialect", "fiz", "read", stdin=args).result["content"] == "one\ntwo\n"
    read_file = get_dialect("zblade").lookup("read_file")
    assert read_file is not None
    canonical = strict_schema(read_file.input_schema())
    full: dict[str, Any] = dict.fromkeys(canonical["properties"]) | {"path": "a.txt"}
    jsonschema.validate(full, canonical)
    assert cli("read_file", stdin=full).result["content"] == "one\ntwo\n"


def test_generated_from_the_declarations() -> None:
    zblade = get_dialect("zblade")
    read = zblade.lookup("read_file")
    assert read is not None
    schema = read.input_schema()
    assert "file_path" not in schema["properties"]  # aliases are not properties
    assert schema["required"] == ["path"]
    assert schema["additionalProperties"] is False
    assert schema["properties"]["offset"]["minimum"] == 1
    assert schema["properties"]["hashes"]["default"] is False
    edit = zblade.lookup("apply_edit")
    assert edit is not None
    patches = edit.input_schema()["properties"]["patches"]
    assert patches["type"] == "array"
    assert patches["items"]["required"] == ["old_text", "new_text"]
    assert patches["items"]["additionalProperties"] is False
    grep = zblade.lookup("grep_search")
    assert grep is not None
    mode = grep.input_schema()["properties"]["output_mode"]
    assert mode["enum"] == ["content", "files_with_matches", "count"]
    assert mode["type"] == "string" and mode["default"] == "content"
    bash = zblade.lookup("bash")
    assert bash is not None
    env = bash.input_schema()["properties"]["env"]
    assert env == {"type": "object", "additionalProperties": {"type": "string"},
                   "description": env["description"], "default": {}}


@pytest.mark.parametrize("dialect,tool", every_tool())
def test_documented_minimal_calls_validate(dialect: str, tool: str) -> None:
    """A call with only the required properties, of the right types, fits the schema."""
    found = get_dialect(dialect).lookup(tool)
    assert found is not None
    schema = found.input_schema()
    sample = {"string": "x", "integer": 1, "number": 1.5, "boolean": True, "array": [],
              "object": {}}
    args: dict[str, Any] = {}
    for key in schema.get("required", []):
        prop = schema["properties"][key]
        kind = prop.get("type", "string")
        args[key] = prop["enum"][0] if "enum" in prop else sample[
            kind if isinstance(kind, str) else kind[0]]
    jsonschema.validate(args, schema)


def test_schema_command(cli: CliRunner) -> None:
    call = cli("--dialect", "fiz", "schema", "--format", "openai", "read", "edit")
    assert call.code == 0
    defs = json.loads(call.out)
    assert [d["function"]["name"] for d in defs] == ["read", "edit"]
    every = json.loads(cli("schema").out)
    assert {d["title"] for d in every} >= {"read_file", "apply_edit", "bash"}
    assert json.loads(cli("schema", "--format=anthropic", "create_file").out)[0][
        "name"] == "write_file"
    mcp = json.loads(cli("--dialect", "anthropic", "schema", "--format", "mcp").out)
    assert mcp[0]["name"] == "str_replace_based_edit_tool"
    bad = cli("schema", "--format", "yaml")
    assert bad.code == 2 and bad.error["code"] == "usage_error"
    missing = cli("--dialect", "claude", "schema", "ExitPlanMode")
    assert missing.error["code"] == "unknown_tool"
    assert cli("schema", "--bogus").error["code"] == "usage_error"


def test_schema_command_in_a_real_process(proc: CliRunner) -> None:
    call = proc("schema", "--format", "openai-strict", "--dialect", "claude")
    assert call.code == 0, call
    assert [d["function"]["name"] for d in json.loads(call.out)] == [
        "Bash", "BashOutput", "KillShell", "Glob", "Grep", "LS", "Read", "Edit", "MultiEdit",
        "Write", "NotebookEdit", "WebFetch", "WebSearch", "TodoWrite"]

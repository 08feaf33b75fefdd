"""Start-up guard (docs/internals/performance.md#start-up-budget): the JSON path imports nothing
heavy.

Deterministic, unlike a timing test: a fresh interpreter runs one call and reports which modules
it loaded. Typer, click, rich, pydantic and mcp belong to --help and human output only;
dataclasses, inspect and typing together cost more than a third of the start-up budget, and
json/re/enum another quarter (zbtools.core.call.fastjson drives the C codec directly instead).
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

HEAVY = {"typer", "click", "rich", "pydantic", "mcp", "platformdirs", "charset_normalizer",
         "pathspec", "wcmatch", "regex", "dataclasses", "inspect", "typing", "hashlib",
         "tomllib", "ctypes", "difflib", "secrets", "subprocess", "asyncio", "json", "re",
         "enum", "functools", "collections",
         # optional extras (issue 8): only images, PDFs and the web tools load them
         "PIL", "pypdf", "httpx", "httpcore", "bs4", "markdownify", "certifi", "ipaddress",
         "socket", "base64",
         # importlib itself (the registry uses __import__) and the warnings module it imports
         "importlib", "warnings"}

PROBE = """
import atexit, sys
atexit.register(lambda: None)  # something to run at exit: no quick exit, the report follows
sys.argv = ["zbtools", *sys.argv[1:]]
from zbtools.__main__ import main
try:
    main()
except SystemExit:
    pass
sys.stderr.write("\\nMODULES " + repr(sorted(sys.modules)) + "\\n")
"""


def loaded_modules(argv: list[str], cwd: Path, stdin: bytes = b"") -> set[str]:
    return {name.split(".")[0] for name in loaded_full(argv, cwd, stdin)}


def loaded_full(argv: list[str], cwd: Path, stdin: bytes = b"") -> set[str]:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    done = subprocess.run([sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, "
                           f"{str(REPO)!r}); exec({PROBE!r})", *argv],
                          cwd=cwd, env=env, input=stdin, capture_output=True, timeout=30,
                          check=True)
    line = done.stderr.decode().rsplit("MODULES ", 1)[1]
    return set(ast.literal_eval(line.strip()))


@pytest.mark.parametrize("argv,stdin", [
    (["read_file"], b'{"path": "a.txt"}'),
    (["read_file", "--args", '{"path": "a.txt"}'], b""),
    (["read_file", "--path", "a.txt"], b""),
    (["read_file_range", "--path", "a.txt", "--start-line", "1"], b""),
    (["write_file", "--path", "b.txt", "--content", "x"], b""),
    (["get_file_info", "--path", "a.txt"], b""),
    (["apply_edit", "--path", "a.txt", "--old-text", "hi", "--new-text", "ho"], b""),
    (["read_file", "--path", "missing.txt"], b""),
    (["read_file", "--path", "a.txt", "--pages", "1"], b""),
    (["list_directory"], b"{}"),
    (["get_workspace_structure", "--depth", "3"], b""),
    (["find_files", "--pattern", "a"], b""),
    (["open_file", "--path", "a.txt"], b""),
    (["get_editor_state"], b""),
    (["task", "--operation", "list"], b""),
    (["get_plan"], b""),
])
def test_the_json_path_imports_nothing_heavy(ws: Path, argv: list[str], stdin: bytes) -> None:
    (ws / "a.txt").write_text("hi\n")
    heavy = loaded_modules(argv, ws, stdin) & HEAVY
    assert not heavy, sorted(heavy)


def test_a_canonical_call_loads_no_dialect_and_no_schema(ws: Path) -> None:
    (ws / "a.txt").write_text("hi\n")
    mods = loaded_full(["read_file", "--path", "a.txt"], ws)
    assert not {m for m in mods if m.startswith(("zbtools.dialects", "zbtools.schema",
                                                 "zbtools.surfaces"))}


PATCH = b'{"input": "*** Begin Patch\\n*** Add File: b.txt\\n+x\\n*** End Patch"}'


@pytest.mark.parametrize("argv,stdin,dialect,same_as", [
    (["--dialect", "fiz", "read", "--path", "a.txt", "--offset", "0"], b"", "fiz", None),
    (["--dialect", "claude", "Read"], b'{"file_path": "a.txt"}', "claude", None),
    (["--dialect", "anthropic", "str_replace_based_edit_tool"],
     b'{"command": "view", "path": "a.txt"}', "anthropic", None),
    (["--dialect", "codex", "apply_patch"], PATCH, "codex",
     (["apply_edit"], PATCH.replace(b'"input"', b'"patch"'))),
    (["--dialect", "zkit", "read_file", "--path", "a.txt"], b"", "zkit", None),
])
def test_a_dialect_call_loads_only_its_dialect(
        ws: Path, argv: list[str], stdin: bytes, dialect: str,
        same_as: tuple[list[str], bytes] | None) -> None:
    """Nothing heavy beyond what the canonical call itself needs (a patch parser needs re)."""
    (ws / "a.txt").write_text("hi\n")
    mods = loaded_full(argv, ws, stdin)
    allowed: set[str] = set()
    if same_as is not None:
        (ws / "b.txt").unlink()
        allowed = loaded_modules(same_as[0], ws, same_as[1]) & HEAVY
    heavy = {m.split(".")[0] for m in mods} & HEAVY
    assert heavy <= allowed, sorted(heavy - allowed)
    dialects = {m for m in mods if m.startswith("zbtools.dialects")}
    own = f"zbtools.dialects.{dialect}"  # its module, and those it is split into (claude_web)
    assert {"zbtools.dialects", own} <= dialects, dialects
    assert all(m in ("zbtools.dialects", own) or m.startswith(own + "_") for m in dialects)
    assert "zbtools.schema" not in mods


COLLECTOR_PROBE = """
import gc, sys
import zbtools.dispatch as dispatch
from zbtools.surfaces import batch

def observed(name, run):
    def wrapper(*args, **kwargs):
        sys.stderr.write(f"\\n{name} collector={gc.isenabled()} frozen={gc.get_freeze_count()}\\n")
        return run(*args, **kwargs)
    return wrapper

dispatch.call_tool = observed("tool", dispatch.call_tool)
batch.batch_command = observed("batch", batch.batch_command)
sys.argv = ["zbtools", *sys.argv[1:]]
from zbtools.__main__ import main
try:
    main()
except SystemExit:
    pass
"""


@pytest.mark.parametrize("argv,stdin,stage", [
    (["read_file"], b'{"path": "a.txt"}', "tool"),
    (["batch"], b'{"tool": "read_file", "args": {"path": "a.txt"}}\n', "batch"),
])
def test_a_process_starts_with_the_collector_off_and_runs_with_it_on(
        ws: Path, argv: list[str], stdin: bytes, stage: str) -> None:
    """Start-up runs without cyclic collections (zbtools/__main__.py); what runs after it, a
    tool or a long session, runs with the collector on and start-up's objects frozen."""
    (ws / "a.txt").write_text("hi\n")
    done = subprocess.run([sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, "
                           f"{str(REPO)!r}); exec({COLLECTOR_PROBE!r})", *argv],
                          cwd=ws, input=stdin, capture_output=True, timeout=30, check=True)
    seen = [line.split() for line in done.stderr.decode().splitlines()
            if line.startswith(stage + " ")]
    assert seen, done.stderr.decode()
    _, collector, frozen = seen[0]
    assert collector == "collector=True"
    assert int(frozen.removeprefix("frozen=")) > 1000

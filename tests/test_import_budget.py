"""Start-up guard (PERFORMANCE.md section 9): the JSON path imports nothing heavy.

Deterministic, unlike a timing test: a fresh interpreter runs one call and reports which modules
it loaded. Typer, click, rich, pydantic and mcp belong to --help and human output only;
dataclasses, inspect and typing together cost more than a third of the start-up budget, and
json/re/enum another quarter (zbtools.core.fastjson drives the C codec directly instead).
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
         "enum", "functools", "collections"}

PROBE = """
import sys
sys.argv = ["zbtools", *sys.argv[1:]]
from zbtools.entry import main
try:
    main()
except SystemExit:
    pass
sys.stderr.write("\\nMODULES " + repr(sorted(sys.modules)) + "\\n")
"""


def loaded_modules(argv: list[str], cwd: Path, stdin: bytes = b"") -> set[str]:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    done = subprocess.run([sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, "
                           f"{str(REPO)!r}); exec({PROBE!r})", *argv],
                          cwd=cwd, env=env, input=stdin, capture_output=True, timeout=30,
                          check=True)
    line = done.stderr.decode().rsplit("MODULES ", 1)[1]
    return {name.split(".")[0] for name in ast.literal_eval(line.strip())}


@pytest.mark.parametrize("argv,stdin", [
    (["read_file"], b'{"path": "a.txt"}'),
    (["read_file", "--args", '{"path": "a.txt"}'], b""),
    (["read_file", "--path", "a.txt"], b""),
    (["read_file_range", "--path", "a.txt", "--start-line", "1"], b""),
    (["write_file", "--path", "b.txt", "--content", "x"], b""),
    (["get_file_info", "--path", "a.txt"], b""),
    (["apply_edit", "--path", "a.txt", "--old-text", "hi", "--new-text", "ho"], b""),
    (["read_file", "--path", "missing.txt"], b""),
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

"""Replacing a definition's body by name changes its body's bytes and no other byte, and the
file still parses (docs/internals/code.md#symbol-tools).

A definition is drawn from generated Python source or from a real file of the standard library,
and its body replaced through ``edit_symbol`` (the in-process runner, dotted name and path) by
a few unindented statements. The oracle is Python's own ``ast``, not tree-sitter: the body
runs from the line after the header (the nearest line above the first statement that is not
blank or a comment) to the end of the last statement's line (comment lines below it at the
body's indentation included); before it and after it every byte stays, the new body is its
statements at the first statement's indentation, and the new file parses with the function's
body being the new statements.
"""

from __future__ import annotations

import ast
import json
import shutil
import sysconfig
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import Phase, given
from hypothesis import strategies as st

from tests.conftest import run_inprocess
from tests.invariants.budget import invariant, planted_bug_is_caught

pytestmark = pytest.mark.slow  # searches of generated inputs: the fast loop leaves them out

QUICK: dict[str, Any] = {"phases": (Phase.generate,), "database": None}

STATEMENTS = ["pass", "x = 1", "return x", "y = f(x, 'a b')", "raise ValueError('no')",
              "self.items.append(x)  # keep", "del y", "return"]
NAMES = ["alpha", "beta", "run", "parse", "gamma"]


def stdlib_files() -> list[Path]:
    root = Path(sysconfig.get_paths()["stdlib"])
    files = [p for p in sorted(root.glob("*.py"))
             if 2_000 < p.stat().st_size < 60_000 and b"\r" not in p.read_bytes()]
    return files[::4]


def functions(tree: ast.Module) -> list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """Every function and method with its dotted name, not nested in a function."""
    out: list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]] = []

    def visit(node: ast.AST, scope: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                visit(child, f"{scope}{child.name}.")
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                out.append((scope + child.name, child))

    visit(tree, "")
    return out


@st.composite
def generated(draw: st.DrawFn) -> str:
    """A module of classes and functions, each body one to three statements, blank lines and
    comments between them."""
    parts = []
    for c, cls in enumerate(draw(st.lists(st.sampled_from(NAMES), min_size=0, max_size=2))):
        methods = draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=3, unique=True))
        body = "".join(
            ("    @property\n" if draw(st.booleans()) else "")
            + f"    def {m}(self):\n"
            + ("        # lead\n" if draw(st.booleans()) else "")
            + "".join(f"        {s}\n" for s in draw(st.lists(st.sampled_from(STATEMENTS),
                                                               min_size=1, max_size=3)))
            + "\n" * draw(st.integers(0, 2))
            for m in methods)
        parts.append(f"class {cls.title()}{c}:\n{body}")
    for name in draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=3, unique=True)):
        parts.append(f"# about {name}\ndef {name}(a, b=2):\n    '''Doc.'''\n    return a\n")
    return "\n\n".join(parts)


def body_range(source: str, node: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[int, int]:
    """[start, end) of the body as characters: from the line after the header to the end of
    the last statement, of a comment that ends its line, and of the comment lines below it at
    the body's indentation."""
    lines = source.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    first = node.body[0].lineno - 1  # 0-based line of the first statement
    while first - 1 >= 0 and (not lines[first - 1].strip()
                              or lines[first - 1].lstrip().startswith("#")):
        first -= 1
    last = node.body[-1]
    assert last.end_lineno is not None and last.end_col_offset is not None
    end_line = lines[last.end_lineno - 1]
    # ast counts columns in UTF-8 bytes
    end_col = len(end_line.encode()[:last.end_col_offset].decode())
    if end_line[end_col:].strip().startswith("#"):  # a comment ending the body's last line
        end_col = len(end_line.rstrip("\r\n"))
    end = offsets[last.end_lineno - 1] + end_col
    # comment lines below it at the body's indentation (blank lines between) are the body's
    depth = len(lines[node.body[0].lineno - 1]) - len(lines[node.body[0].lineno - 1].lstrip())
    at = last.end_lineno
    while at < len(lines) and (not lines[at].strip() or lines[at].lstrip().startswith("#")):
        if lines[at].strip():
            if len(lines[at]) - len(lines[at].lstrip()) < depth:
                break
            end = offsets[at] + len(lines[at].rstrip("\r\n"))
        at += 1
    return offsets[first], end


def check(ws: Path, source: str, name: str, statements: list[str]) -> None:
    tree = ast.parse(source)
    node = dict(functions(tree))[name]
    first = node.body[0]
    header_line = source.splitlines()[first.lineno - 1]
    if header_line[:first.col_offset].strip():
        return  # a body on its header's line moves below it: not this invariant's case
    indent = header_line[:len(header_line) - len(header_line.lstrip())]
    path = ws / "m.py"
    path.write_text(source)
    call = run_inprocess(["edit_symbol"], workspace=ws, stdin=json.dumps({
        "symbol": name, "path": "m.py", "line": node.lineno, "action": "replace_body",
        "new_text": "\n".join(statements)}))
    after = path.read_text()
    if call.json["ok"] is False:
        # several definitions of the name start on that line: never in these inputs
        raise AssertionError(call.json)
    start, end = body_range(source, node)
    middle = "".join(f"{indent}{s}\n" for s in statements)[:-1]
    assert after[:start] == source[:start], name
    assert after[start:] == middle + source[end:], name
    new_tree = ast.parse(after)
    new_node = dict(functions(new_tree))[name]
    assert [ast.dump(s) for s in new_node.body] == \
        [ast.dump(s) for s in ast.parse("\n".join(statements)).body]


def search(base: Path, examples: int, **overrides: Any) -> None:
    files = stdlib_files()

    @invariant(examples=examples, **overrides)
    @given(data=st.data(), real=st.booleans(),
           statements=st.lists(st.sampled_from(STATEMENTS), min_size=1, max_size=4))
    def only_the_body_changes(data: st.DataObject, real: bool, statements: list[str]) -> None:
        source = data.draw(st.sampled_from(files)).read_text() if real and files \
            else data.draw(generated())
        candidates = functions(ast.parse(source))
        if not candidates:
            return
        name, _ = data.draw(st.sampled_from(candidates))
        ws = Path(tempfile.mkdtemp(dir=base))
        try:
            check(ws, source, name, statements)
        finally:
            shutil.rmtree(ws, ignore_errors=True)

    only_the_body_changes()


def test_replacing_a_body_changes_only_the_body(tmp_path: Path) -> None:
    search(tmp_path, examples=60)


def test_the_planted_bug_is_caught(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from zbtools.core.editing import bysymbol

    original = bysymbol.SymbolEdit.apply

    def eats_a_byte(self: bysymbol.SymbolEdit, source: bytes) -> bytes:
        result = original(self, source)
        cut = self.start + len(self.replacement)
        return result[:cut] + result[cut + 1:]  # the byte after the body goes too

    monkeypatch.setattr(bysymbol.SymbolEdit, "apply", eats_a_byte)
    failure = planted_bug_is_caught(lambda: search(tmp_path, examples=40, **QUICK))
    assert isinstance(failure, AssertionError), failure

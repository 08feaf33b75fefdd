"""grep_search's show_scope against Python's own parser: on generated Python files, the label of
every match on a line of code is the innermost function or class whose ``ast`` lines
(``lineno`` to ``end_lineno``) hold the line, with ``ast``'s kind, dotted name and start line.

Comment lines are left out of the comparison: ``ast`` does not see them, while a definition's
lines run to its last indented comment (docs/internals/code.md#grep-scopes).
"""

from __future__ import annotations

import ast
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import CliRunner
from tests.invariants.budget import invariant

# a tree of statements: leaves are kinds of simple statement, inner nodes compound ones
Leaf = st.sampled_from(["assign", "multi", "doc", "comment", "blank", "oneliner", "call"])
Tree = st.recursive(
    Leaf,
    lambda inner: st.tuples(st.sampled_from(["def", "async", "decorated", "class", "if"]),
                            st.lists(inner, max_size=4)),
    max_leaves=25)


class Render:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.count = 0

    def name(self, prefix: str) -> str:
        self.count += 1
        return f"{prefix}{self.count}"

    def block(self, nodes: list[object], indent: str) -> None:
        before = len(self.lines)
        for node in nodes:
            self.node(node, indent)
        if not any(line.strip() and not line.strip().startswith("#")
                   for line in self.lines[before:]):
            self.lines.append(f"{indent}pass")

    def node(self, node: object, indent: str) -> None:
        more = indent + "    "
        if isinstance(node, str):
            if node == "assign":
                self.lines.append(f"{indent}{self.name('v')} = NEEDLE")
            elif node == "multi":
                self.lines += [f"{indent}{self.name('v')} = (", f"{more}1,", f"{more}NEEDLE,",
                               f"{indent})"]
            elif node == "doc":  # a string's middle line at column 0: still inside
                self.lines += [f'{indent}"""', "NEEDLE in a string", f'{indent}"""']
            elif node == "comment":
                self.lines.append(f"{indent}# a note")
            elif node == "blank":
                self.lines.append("")
            elif node == "oneliner":
                self.lines.append(f"{indent}def {self.name('o')}(): return NEEDLE")
            else:
                self.lines.append(f"{indent}NEEDLE({self.name('a')})")
            return
        assert isinstance(node, tuple)
        kind, body = node
        if kind == "if":
            self.lines.append(f"{indent}if NEEDLE:")
        elif kind == "class":
            self.lines.append(f"{indent}class {self.name('C')}(NEEDLE):")
        else:
            if kind == "decorated":
                self.lines.append(f"{indent}@NEEDLE")
            word = "async def" if kind == "async" else "def"
            self.lines.append(f"{indent}{word} {self.name('f')}(a=NEEDLE):")
        self.block(body, more)


def oracle(source: str) -> dict[int, tuple[str, str, int] | None]:
    """Each line's innermost function or class by ``ast``: (kind, dotted name, first line)."""
    spans: list[tuple[int, int, tuple[str, str, int]]] = []

    def visit(node: ast.AST, names: list[str], parent: ast.AST | None) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                dotted = [*names, child.name]
                kind = "class" if isinstance(child, ast.ClassDef) else (
                    "method" if isinstance(parent, ast.ClassDef) else "function")
                assert child.end_lineno is not None
                spans.append((child.lineno, child.end_lineno,
                              (kind, ".".join(dotted), child.lineno)))
                visit(child, dotted, child)
            else:
                visit(child, names, parent)

    visit(ast.parse(source), [], None)
    out: dict[int, tuple[str, str, int] | None] = {}
    for number in range(1, source.count("\n") + 2):
        holding = [label for start, end, label in spans if start <= number <= end]
        # nested definitions start later than what holds them
        out[number] = max(holding, key=lambda label: label[2]) if holding else None
    return out


@invariant(examples=60)
@given(st.lists(Tree, min_size=1, max_size=5))
def test_every_label_is_the_innermost_ast_definition(ws: Path, cli: CliRunner,
                                                     trees: list[object]) -> None:
    render = Render()
    render.block(trees, "")
    source = "\n".join(render.lines) + "\n"
    (ws / "gen.py").write_text(source)
    expected = oracle(source)
    result = cli("grep_search", "NEEDLE", "--show-scope", "--engine", "python",
                 "--head-limit", "0").result
    assert result["files_without_scope"] == []
    lines = source.split("\n")
    assert len(result["matches"]) == sum("NEEDLE" in line for line in lines)
    for m in result["matches"]:
        scope = m.get("scope")
        got = None if scope is None else (scope["kind"], scope["qualname"], scope["start_line"])
        assert got == expected[m["line"]], (m["line"], source)

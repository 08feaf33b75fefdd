"""The package's layering, read from its own import statements.

Every ``import`` and ``from ... import`` in every module of ``zbtools`` counts: at module level,
inside functions and under ``if TYPE_CHECKING:`` alike (a type-only import is still a dependency a
reader has to follow). From them:

* no cycle between modules;
* no module imports a ``_private`` name or module of another module;
* every import goes to the importer's own layer or a lower one (``LAYERS``), and packages marked
  independent never import each other (the core subsystems; the surfaces);
* no tool module imports another tool module: what tools share is in ``zbtools.toolkit``;
* ``zbtools.core`` imports none of typer, rich or mcp, and those three appear only in the
  surfaces that own them.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "zbtools"

# Lowest first. A module belongs to the entry with the longest matching prefix; it may import
# modules of its own entry or of any entry with a lower rank. Entries of one rank marked
# independent may not import each other.
LAYERS: list[tuple[int, str, bool]] = [
    (0, "zbtools", False),  # the package itself: the version only
    (0, "zbtools.contract", False),
    (0, "zbtools.options", False),  # the program's own options and command words
    (1, "zbtools.core", False),  # the package docstring only
    (1, "zbtools.core.files", False),
    (2, "zbtools.core.call", False),
    (3, "zbtools.core.state", False),
    (3, "zbtools.core.code", False),  # below editing and search: the syntax guard, grep's scopes
    (4, "zbtools.core.editing", True),
    (4, "zbtools.core.search", True),
    (4, "zbtools.core.processes", True),
    (4, "zbtools.core.web", True),
    (4, "zbtools.core.media", True),
    (5, "zbtools.toolspec", False),
    (5, "zbtools.schema", False),
    (5, "zbtools.textout", False),
    (5, "zbtools.toolkit", False),  # what several tools share: below the tools
    (6, "zbtools.tools", False),
    (7, "zbtools.registry", False),
    (7, "zbtools.toolindex", False),
    (8, "zbtools.dialects", False),
    (9, "zbtools.dispatch", False),
    (10, "zbtools.surfaces", False),  # the package docstring only
    (10, "zbtools.surfaces.cli", True),
    (10, "zbtools.surfaces.human", True),
    (10, "zbtools.surfaces.catalog", True),
    (10, "zbtools.surfaces.batch", True),
    (10, "zbtools.surfaces.mcp_server", True),
    (11, "zbtools.entry", False),
    (11, "zbtools.__main__", False),
    (11, "zbtools.devgen", False),
    (11, "zbtools.api", False),  # the Python API: one batch session held in memory
]
# The package's lazy ``__getattr__`` re-exports the API's names (``from zbtools import
# Toolbox``; its import for type checkers names them): the one edge that goes up, followed only
# on first use of a name, once the package is loaded, so it is left out of the layers and cycles.
FRONT_DOOR = ("zbtools", "zbtools.api")
# third-party packages only these modules may import (and core never)
OWNERS = {"typer": ("zbtools.surfaces.cli", "zbtools.devgen"),
          "rich": ("zbtools.surfaces.human", "zbtools.surfaces.cli"),
          "mcp": ("zbtools.surfaces.mcp_server",)}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules(root: Path = PACKAGE) -> dict[str, Path]:
    return {module_name(p): p for p in sorted(root.rglob("*.py"))}


class Import:
    def __init__(self, importer: str, target: str, name: str | None, line: int) -> None:
        self.importer = importer
        self.target = target  # the module imported (for ``from M import x``: M, or M.x)
        self.name = name  # the name taken (``from M import name``), else None
        self.line = line

    def __repr__(self) -> str:
        what = f"from {self.target} import {self.name}" if self.name else f"import {self.target}"
        return f"{self.importer}:{self.line}: {what}"


def imports(name: str, path: Path, known: set[str]) -> Iterator[Import]:
    """Every import statement of the module, anywhere in it."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(name, alias.name, None, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            for alias in node.names:
                submodule = f"{source}.{alias.name}"
                if submodule in known:  # ``from package import module``
                    yield Import(name, submodule, None, node.lineno)
                else:
                    yield Import(name, source, alias.name, node.lineno)


def graph() -> tuple[dict[str, Path], list[Import]]:
    mods = modules()
    known = set(mods)
    found = [imp for name, path in mods.items() for imp in imports(name, path, known)]
    return mods, found


def layer_of(module: str) -> tuple[int, str, bool]:
    best = max((entry for entry in LAYERS if module == entry[1]
                or module.startswith(entry[1] + ".")), key=lambda e: len(e[1]), default=None)
    assert best is not None, f"{module} is in no layer: add it to LAYERS"
    return best


def internal(found: list[Import]) -> list[Import]:
    return [imp for imp in found
            if (imp.target == "zbtools" or imp.target.startswith("zbtools."))
            and (imp.importer, imp.target) != FRONT_DOOR]


def private(part: str) -> bool:
    return part.startswith("_") and not (part.startswith("__") and part.endswith("__"))


def find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One cycle of the directed graph, as a list of nodes, or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt):], nxt]
            if nxt not in state:
                cycle = visit(nxt)
                if cycle:
                    return cycle
        path.pop()
        state[node] = 2
        return None

    for node in sorted(edges):
        if node not in state:
            cycle = visit(node)
            if cycle:
                return cycle
    return None


# -- the checker itself ---------------------------------------------------------------------------

def test_the_cycle_finder_finds_a_cycle_and_accepts_a_tree() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_imports_are_read_inside_functions_and_type_checking_blocks(tmp_path: Path) -> None:
    source = ("TYPE_CHECKING = False\nif TYPE_CHECKING:\n    from zbtools.entry import run\n"
              "def f():\n    from zbtools.core import call\n    import zbtools.dispatch\n")
    (tmp_path / "m.py").write_text(source)
    found = list(imports("zbtools.x.m", tmp_path / "m.py", {"zbtools.core.call"}))
    assert [(i.target, i.name) for i in found] == [
        ("zbtools.entry", "run"), ("zbtools.core.call", None), ("zbtools.dispatch", None)]


# -- the package ----------------------------------------------------------------------------------

def test_no_module_of_the_package_imports_itself_back_through_a_cycle() -> None:
    mods, found = graph()
    edges: dict[str, set[str]] = {name: set() for name in mods}
    for imp in internal(found):
        target = imp.target if imp.target in mods else None
        if target is None and imp.name is not None and f"{imp.target}.{imp.name}" in mods:
            target = f"{imp.target}.{imp.name}"
        assert target in mods, f"{imp!r}: no such module in the package"
        if target != imp.importer:
            edges[imp.importer].add(target)
    assert find_cycle(edges) is None, " -> ".join(find_cycle(edges) or [])


def test_no_private_name_or_module_is_imported_across_modules() -> None:
    _, found = graph()
    offenders = [imp for imp in internal(found)
                 if any(private(part) for part in imp.target.split("."))
                 or (imp.name is not None and private(imp.name)
                     and imp.target != imp.importer)]
    assert not offenders, offenders


def test_every_import_goes_to_the_same_layer_or_a_lower_one() -> None:
    mods, found = graph()
    for name in mods:
        layer_of(name)  # every module is placed
    upward = []
    sideways = []
    for imp in internal(found):
        rank, owner, _ = layer_of(imp.importer)
        to_rank, to_owner, independent = layer_of(imp.target)
        if to_rank > rank:
            upward.append(imp)
        elif (to_rank == rank and independent and owner != to_owner
              and layer_of(imp.importer)[2]):
            sideways.append(imp)
    assert not (upward or sideways), (f"imports of a higher layer: {upward}; "
                                      f"imports between independent packages: {sideways}")


def test_no_tool_module_imports_another_tool_module() -> None:
    """A tool module declares one tool; what it shares with others is in ``zbtools.toolkit``,
    so that reading, moving or deleting one tool never reaches into another."""
    _, found = graph()
    offenders = [imp for imp in internal(found)
                 if imp.importer.startswith("zbtools.tools.")
                 and (imp.target.startswith("zbtools.tools.")
                      or (imp.target == "zbtools.tools" and imp.name is not None))
                 and imp.target != imp.importer]
    assert not offenders, offenders


@pytest.mark.parametrize("package", sorted(OWNERS))
def test_typer_rich_and_mcp_are_imported_only_by_the_surfaces_that_own_them(
        package: str) -> None:
    _, found = graph()
    users = {imp.importer for imp in found
             if imp.target == package or imp.target.startswith(package + ".")}
    assert users <= set(OWNERS[package]), sorted(users - set(OWNERS[package]))
    assert not {u for u in users if u.startswith("zbtools.core")}


def test_each_core_and_surface_package_says_what_it_owns_and_may_import() -> None:
    for init in [*sorted((PACKAGE / "core").glob("*/__init__.py")),
                 PACKAGE / "core" / "__init__.py", PACKAGE / "surfaces" / "__init__.py"]:
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8")))
        assert doc, f"{init}: no docstring"
        assert "import" in doc, f"{init}: the docstring does not say what it may import"


def test_the_package_inits_of_core_and_surfaces_import_nothing() -> None:
    """``supervisor`` runs under ``python -I -S`` through these packages: they import nothing
    when they run. A core package names its public names' submodules for type checkers only,
    under ``if TYPE_CHECKING:``, and loads them on first use (tests/test_public_surface.py)."""
    _, found = graph()
    for package in ("zbtools", "zbtools.core", "zbtools.surfaces",
                    *(f"zbtools.core.{p.name}" for p in sorted((PACKAGE / "core").iterdir())
                      if (p / "__init__.py").exists())):
        init = PACKAGE.parent.joinpath(*package.split("."), "__init__.py")
        typing_only = {node.lineno for block in ast.parse(init.read_text(encoding="utf-8")).body
                       if isinstance(block, ast.If) and isinstance(block.test, ast.Name)
                       and block.test.id == "TYPE_CHECKING"
                       for node in ast.walk(block) if isinstance(node, ast.ImportFrom)}
        # What runs nothing is allowed: ``__future__``, imports for type checkers only, and in
        # a core package the parent package, loaded already, which holds ``lazy_names``.
        assert not [imp for imp in found if imp.importer == package
                    and imp.target != "__future__" and imp.line not in typing_only
                    and not (imp.target == "zbtools.core" and package.startswith("zbtools.core."))
                    ], package

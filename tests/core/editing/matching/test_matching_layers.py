"""The parts of zbtools.core.editing.matching import each other in one direction only.

The order is the one docs/internals/matching.md#parts states (its table is checked here
too). Every import counts: at module level, inside functions and under ``if TYPE_CHECKING:``.
No part imports another's ``_private`` names, and at module level the parts import only each
other (heavy modules are imported on use).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

PACKAGE = "zbtools.core.editing.matching"
SOURCE = REPO / "zbtools" / "core" / "editing" / "matching"
MAY_IMPORT = {
    "errors": set(),
    "diff": set(),
    "requests": set(),
    "result": set(),
    "linekeys": set(),
    "indentation": set(),
    "lazylines": set(),
    "filemodel": {"linekeys", "indentation", "lazylines"},
    "diagnostics": {"errors", "filemodel", "requests", "diff", "linekeys", "indentation"},
    "candidates": {"errors", "filemodel", "requests", "linekeys", "indentation"},
    "similarity": {"filemodel", "requests", "linekeys", "candidates"},
    "nearmiss": {"errors", "filemodel", "requests", "linekeys", "candidates"},
    "already": {"filemodel", "requests", "linekeys", "candidates", "nearmiss"},
    "ladder": {"errors", "filemodel", "requests", "diagnostics", "linekeys", "indentation",
               "candidates", "similarity", "nearmiss", "already"},
    "elision": {"errors", "filemodel", "requests", "diagnostics", "linekeys", "candidates",
                "nearmiss", "ladder"},
    "reindent": {"filemodel", "indentation"},
    "threeway": {"errors", "filemodel", "requests", "diff", "linekeys", "indentation",
                 "candidates", "reindent"},
    "merge": {"filemodel", "requests", "diff", "linekeys", "indentation", "candidates",
              "reindent", "threeway"},
    "apply": {"errors", "filemodel", "requests", "result", "diagnostics", "candidates", "already",
              "ladder", "elision", "merge"},
}


def imports(path: Path) -> list[tuple[str, list[str]]]:
    """(module, names) of every import in the file, wherever it is."""
    found: list[tuple[str, list[str]]] = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.append((node.module, [alias.name for alias in node.names]))
        elif isinstance(node, ast.Import):
            found += [(alias.name, []) for alias in node.names]
    return found


def test_every_part_of_the_package_is_placed_in_the_order() -> None:
    assert {p.stem for p in SOURCE.glob("*.py")} == {*MAY_IMPORT, "__init__"}


def test_the_internals_page_states_the_same_order() -> None:
    page = (REPO / "docs" / "internals" / "matching.md").read_text(encoding="utf-8")
    section = page.split('<a id="parts"></a>', 1)[1].split("\n## ", 1)[0]
    rows: dict[str, set[str]] = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if line.startswith("| `") and len(cells) == 3:
            imported = set() if cells[2] == "nothing" else set(cells[2].split(", "))
            rows[cells[0].strip("`")] = imported
    assert rows == MAY_IMPORT
    assert list(rows) == list(MAY_IMPORT)


@pytest.mark.parametrize("part", sorted(MAY_IMPORT))
def test_a_part_imports_only_the_parts_below_it_and_no_private_names(part: str) -> None:
    for module, names in imports(SOURCE / f"{part}.py"):
        assert module != PACKAGE, f"{part} imports the package entry"
        if module.startswith(PACKAGE + "."):
            other = module.removeprefix(PACKAGE + ".")
            assert other in MAY_IMPORT[part], f"{part} imports {other}"
            private = [n for n in names if n.startswith("_") and not n.startswith("__")]
            assert not private, f"{part} imports {private} from {other}"


@pytest.mark.parametrize("part", sorted(MAY_IMPORT))
def test_a_part_imports_nothing_heavy_at_module_level(part: str) -> None:
    tree = ast.parse((SOURCE / f"{part}.py").read_text())
    top = [node for node in tree.body if isinstance(node, ast.Import | ast.ImportFrom)]
    modules = {alias.name for node in top if isinstance(node, ast.Import)
               for alias in node.names}
    modules |= {node.module or "" for node in top if isinstance(node, ast.ImportFrom)}
    # _collections_abc: the ABCs ``os`` has loaded at start-up (collections.abc would import
    # the collections package)
    assert all(m.startswith(PACKAGE + ".") or m in {"__future__", "itertools", "_collections_abc"}
               for m in modules), sorted(modules)


def test_importing_the_engine_loads_no_regex_diff_or_fuzzy_library() -> None:
    probe = ("import sys; import zbtools.core.editing.matching; "
             "print(sorted(m for m in ('re', 'regex', 'difflib', 'rapidfuzz', 'unicodedata', "
             "'typing') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, "
                           f"{str(REPO)!r}); {probe}"], capture_output=True, text=True,
                          check=True, timeout=30)
    assert done.stdout.strip() == "[]"

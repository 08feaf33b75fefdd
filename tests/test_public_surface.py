"""Each core package's public names, read from its ``__all__``, and every caller held to them.

A core package (``zbtools/core/<pkg>/``) states below its docstring ``__all__`` and ``_SUBMODULE``
(each public name -> the submodule that defines it); ``zbtools/core/errors.py`` states
``__all__``. A caller outside a package imports a public name from the submodule that defines it
(``from zbtools.core.files.reading import read_bytes``): the import line names the file to open,
and loads only that file. The package's ``__getattr__`` resolves the same names lazily (PEP 562)
for a reader at a prompt; the code itself never imports a name from the package.

* every name a module of ``zbtools`` outside a package takes from it (``from M import x``, or
  ``m.x`` through ``from P import m``) is public and taken from the submodule ``_SUBMODULE``
  names;
* every public name resolves, lazily (but a ``Protocol`` a module defines for type checkers
  only), and is used by some module outside its package;
* ``tests/`` and ``benchmarks/`` may reach ``_private`` names of core only as ``ALLOWED`` says
  why (a test may look at a module's other names: that is what unit tests are for).
"""

from __future__ import annotations

import ast
import functools
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import REPO

PACKAGE = REPO / "zbtools"
SURFACES = [*sorted(p.name for p in (PACKAGE / "core").iterdir() if (p / "__init__.py").exists()),
            "errors"]

# (core module, private name): why tests reach past the surface. Each is patched or called
# directly because no public path reaches the case, or not in a test's time.
ALLOWED: dict[tuple[str, str], str] = {
    ("zbtools.core.call.args", "_number_text"):
        "the reading of a number sent as a string, against its oracle; made lenient: caught",
    ("zbtools.core.code.pychunks", "_CACHE"):
        "what the syntax guard keeps between edits: held only by a session, never by a call",
    ("zbtools.core.code.syntax", "_TREES"):
        "what the syntax guard keeps between edits: held only by a session, never by a call",
    ("zbtools.core.files.tempnames", "_swept"):
        "a test, or a crash test's recovering child, starts as a new process: nothing swept yet",
    ("zbtools.core.files.writerlog", "_folder"):
        "a crash test's recovering child starts with no writer log open, as a new process",
    ("zbtools.core.files.fsops", "_load_renameat2"):
        "a crash test counts renameat2 calls to crash between them",
    ("zbtools.core.files.fsops", "_renameat2"):
        "counted for a crash test; removed, or made to fail with EXDEV: the portable fallback",
    ("zbtools.core.files.staleness", "_kernel_moves_ctime"):
        "the probe of whether the kernel moves ctime on a write, asked directly",
    ("zbtools.core.files.staleness", "_fine_ctime"):
        "the probe's per-filesystem answers forgotten: a filesystem seen for the first time",
    ("zbtools.core.processes.guardrail", "_words"):
        "the shell word splitter on its own; made quadratic or endless: the time cap holds",
    ("zbtools.core.search.engine", "_text"):
        "the bytes-to-text step of a match line, on bytes no file in a test tree holds",
    ("zbtools.core.code.index", "_GRAMMAR_STAMPS"):
        "a grammar upgraded under a kept index: its records must not be trusted",
    ("zbtools.core.search.parallel", "_serve"):
        "the second process dies or answers garbage: the search falls back, loses nothing",
    ("zbtools.core.editing.cycle", "_bytes_fast_path"):
        "spied on or switched off: which path an edit takes, and that both write the same",
    ("zbtools.core.editing.cycle", "_spliced_edit"):
        "spied on or switched off: the spliced write equals the whole write",
    ("zbtools.core.editing.cycle", "_streamed_edit"):
        "spied on: a big file's edit streams, a small one's does not",
    ("zbtools.core.editing.matching.diagnostics", "_similarity"):
        "the similarity score against Levenshtein's, on inputs no edit reaches cheaply",
    ("zbtools.core.editing.matching.ladder", "_on_line_bounds"):
        "the scanned and the indexed candidate sets agree on line bounds",
    ("zbtools.core.editing.matching.requests", "_numbered_shape"):
        "the cheap cat -n prefix test accepts every line the full expression matches",
    ("zbtools.core.editing.matching.requests", "_rx"):
        "the full cat -n expression, the reference for the cheap test",
    ("zbtools.core.editing.matching.nearmiss", "_near_starts"):
        "replaced by the count-everything reference at scale: the answers are the same",
    ("zbtools.core.editing.matching.similarity", "_informative"):
        "replaced by the count-everything reference at scale: the answers are the same",
    ("zbtools.core.editing.matching.merge", "_whole_line_drift"):
        "forced per tier: the answer tells the truth about what was written either way",
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def python_files(root: Path) -> dict[str, Path]:
    return {module_name(p): p for p in sorted(root.rglob("*.py"))
            if "results" not in p.relative_to(REPO).parts}


KNOWN = set(python_files(PACKAGE))


def surface_of(module: str) -> str | None:
    """The core surface a module belongs to (``files``, ..., ``errors``), or None."""
    parts = module.split(".")
    if parts[:2] == ["zbtools", "core"] and len(parts) > 2 and parts[2] in SURFACES:
        return parts[2]
    return None


def uses(name: str, path: Path) -> Iterator[tuple[str, str, int]]:
    """(core module, name, line) for every name the module takes from a core module: imported
    (``from M import x``), read through a module (``m.x``), or patched
    (``monkeypatch.setattr(m, "x", ...)``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    bound: dict[str, str] = {}  # local name -> core module
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("zbtools.core."):
                    yield alias.name, "", node.lineno  # a plain ``import`` of a module: no name
        elif isinstance(node, ast.ImportFrom):
            source = node.module or ""
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            for alias in node.names:
                if f"{source}.{alias.name}" in KNOWN:
                    bound[alias.asname or alias.name] = f"{source}.{alias.name}"
                elif source.startswith("zbtools.core"):
                    yield source, alias.name, node.lineno
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and node.value.id in bound):
            yield bound[node.value.id], node.attr, node.lineno
        elif (isinstance(node, ast.Call) and len(node.args) >= 2
              and isinstance(node.args[0], ast.Name) and node.args[0].id in bound
              and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str)
              and ((isinstance(node.func, ast.Attribute) and node.func.attr == "setattr")
                   or (isinstance(node.func, ast.Name) and node.func.id == "setattr"))):
            yield bound[node.args[0].id], node.args[1].value, node.lineno


def private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def declared(surface: str) -> tuple[list[str], dict[str, str]]:
    """``__all__`` and ``_SUBMODULE`` of a surface, read from its source (nothing imported)."""
    path = (PACKAGE / "core" / "errors.py" if surface == "errors"
            else PACKAGE / "core" / surface / "__init__.py")
    found: dict[str, object] = {}
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, ast.AnnAssign) and node.value is not None else []
        for target in targets:
            if isinstance(target, ast.Name) and target.id in ("__all__", "_SUBMODULE"):
                assert isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None
                found[target.id] = ast.literal_eval(node.value)
    names = found.get("__all__")
    assert isinstance(names, list), f"{path}: no __all__"
    if surface == "errors":
        return names, dict.fromkeys(names, "")
    mapping = found.get("_SUBMODULE")
    assert isinstance(mapping, dict), f"{path}: no _SUBMODULE"
    return names, mapping


def expected_source(surface: str, submodule: str) -> str:
    return ".".join(filter(None, ["zbtools.core", surface, submodule]))


def surface_violations(callers: dict[str, Path]) -> tuple[list[str], set[tuple[str, str]]]:
    """What callers outside a surface take from it that it does not declare, and the
    (surface, name) pairs they use."""
    declarations = {s: declared(s) for s in SURFACES}
    wrong: list[str] = []
    used: set[tuple[str, str]] = set()
    for importer, path in callers.items():
        for source, name, line in uses(importer, path):
            surface = surface_of(source)
            if surface is None or surface_of(importer) == surface:
                continue
            names, mapping = declarations[surface]
            where = f"{importer}:{line}: {name or source} from {source}"
            if name not in names:
                wrong.append(f"{where}: not in {surface}'s __all__")
            elif source != expected_source(surface, mapping[name]):
                wrong.append(f"{where}: import it from "
                             f"{expected_source(surface, mapping[name])}")
            else:
                used.add((surface, name))
    return wrong, used


# -- the checker itself ---------------------------------------------------------------------------

def test_a_planted_use_of_an_undeclared_name_or_the_wrong_module_fails(tmp_path: Path) -> None:
    tool = tmp_path / "planted_surface_probe.py"
    tool.write_text("from zbtools.core.files import reading, fsops\n"
                    "from zbtools.core.files.workspace import read_bytes\n"
                    "from zbtools.core.files.reading import read_bytes as ok\n"
                    "x = reading.read_bytes, reading.CHUNK, fsops.not_a_public_name\n"
                    "from zbtools.core.files import read_bytes as from_the_package\n",
                    encoding="utf-8")
    wrong, _ = surface_violations({"zbtools.tools.planted_surface_probe": tool})
    assert [w.split(": ", 1)[1] for w in wrong] == [
        "read_bytes from zbtools.core.files.workspace: import it from zbtools.core.files.reading",
        "read_bytes from zbtools.core.files: import it from zbtools.core.files.reading",
        "not_a_public_name from zbtools.core.files.fsops: not in files's __all__"]


# -- the package ----------------------------------------------------------------------------------

@functools.cache
def package_violations() -> tuple[list[str], set[tuple[str, str]]]:
    """The package's own uses, parsed once per test process (twelve tests read them)."""
    return surface_violations(python_files(PACKAGE))


def test_every_core_name_used_outside_its_package_is_public_and_taken_from_its_module() -> None:
    wrong, _ = package_violations()
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("surface", SURFACES)
def test_every_public_name_is_mapped_and_used_outside_its_package(surface: str) -> None:
    names, mapping = declared(surface)
    assert len(names) == len(set(names)) and set(names) == set(mapping), surface
    if surface != "errors":  # ``from package import submodule`` must still find the module
        submodules = {p.stem for p in (PACKAGE / "core" / surface).iterdir()}
        assert not submodules & set(names), surface
    _, used = package_violations()
    dead = sorted(name for name in names if (surface, name) not in used)
    assert not dead, f"{surface} exports names no module outside it uses: {dead}"


def test_every_public_name_resolves_lazily_to_its_definition() -> None:
    """In a fresh interpreter: importing a package loads none of its submodules, and each name
    loads its own submodule and is the object that submodule defines."""
    packages = [s for s in SURFACES if s != "errors"]
    probe = f"""
import sys
packages = [__import__("zbtools.core." + surface, fromlist=["_"]) for surface in {packages!r}]
loaded = sorted(m for m in sys.modules if m.startswith(("zbtools.core.", "zbtools.contract")))
assert loaded == ["zbtools.core." + s for s in {packages!r}], loaded
for package in packages:
    name = package.__name__
    for public, sub in package._SUBMODULE.items():
        try:
            value = getattr(package, public)
        except AttributeError:
            missing.append(name + "." + sub + ":" + public)
            continue
        module = sys.modules[name + "." + sub]
        assert value is getattr(module, public), (name, public)
    assert sorted(package.__all__) == sorted(package._SUBMODULE)
    try:
        package.no_such_name
    except AttributeError:
        pass
    else:
        raise AssertionError(name + " resolves an undeclared name")
import zbtools.core.errors as errors
for public in errors.__all__:
    assert callable(getattr(errors, public)), public
print(sorted(missing))
"""
    done = subprocess.run([sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, "
                           f"{str(REPO)!r}); missing = []; exec({probe!r})"],
                          check=False, timeout=60, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert ast.literal_eval(done.stdout.strip()) == sorted(type_only(packages))


def type_only(packages: list[str]) -> set[str]:
    """``module:name`` of public names their module defines only for type checkers (a
    ``Protocol`` under ``if TYPE_CHECKING:``): nothing to load at run time."""
    found = set()
    for surface in packages:
        for name, submodule in declared(surface)[1].items():
            module = expected_source(surface, submodule)
            path = PACKAGE.parent / module.replace(".", "/")
            path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
            for block in ast.parse(path.read_text(encoding="utf-8")).body:
                if (isinstance(block, ast.If) and isinstance(block.test, ast.Name)
                        and block.test.id == "TYPE_CHECKING"
                        and any(isinstance(node, ast.ClassDef | ast.FunctionDef)
                                and node.name == name for node in block.body)):
                    found.add(f"{module}:{name}")
    return found


def test_tests_and_benchmarks_reach_private_core_names_only_as_allowed() -> None:
    reached: set[tuple[str, str]] = set()
    for root in (REPO / "tests", REPO / "benchmarks"):
        for importer, path in python_files(root).items():
            reached |= {(source, name) for source, name, _ in uses(importer, path)
                        if private(name) and surface_of(source) is not None}
    assert reached <= set(ALLOWED), sorted(reached - set(ALLOWED))
    assert not set(ALLOWED) - reached, f"stale: {sorted(set(ALLOWED) - reached)}"

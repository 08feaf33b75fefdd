"""The tool registry: discovery of ``zbtools/tools/*.py``.

A tool is one module under ``zbtools/tools/`` that defines ``TOOL = ToolSpec(...)``
(``zbtools.toolspec``). Looking a tool up by name imports only that module: the generated index
``zbtools/toolindex.py`` maps every name and alias to its module (``python -m zbtools.devgen``
writes it, a test checks it). A name missing from the index (a tool added without regenerating)
is still found: first by module name, then by importing every tool module, so a stale index
costs time, never correctness. Everything that lists tools (CLI help, schemas, docs) uses
``all_tools()``.

Sits above the tools (it imports them by name); the tools themselves import only
``zbtools.toolspec`` and ``zbtools.core``.
"""

from __future__ import annotations

import os
import sys

from zbtools.toolspec import ToolSpec

TOOLS_PACKAGE = "zbtools.tools"
TOOLS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tools")


def _load(module_name: str) -> ToolSpec | None:
    name = f"{TOOLS_PACKAGE}.{module_name}"
    try:
        # __import__, not importlib.import_module: importing importlib (and the warnings module
        # it pulls in) costs about 0.25 ms of every cold call
        __import__(name)
    except ModuleNotFoundError as exc:
        if exc.name == name:
            return None
        raise
    module = sys.modules[name]
    spec = getattr(module, "TOOL", None)
    return spec if isinstance(spec, ToolSpec) else None


def module_names() -> list[str]:
    """Tool modules present on disk (``_``-prefixed helpers excluded)."""
    out = []
    for entry in sorted(os.listdir(TOOLS_DIR)):
        if entry.endswith(".py") and not entry.startswith("_"):
            out.append(entry[:-3])
    return out


def fold_name(name: str) -> str:
    """A tool name as every lookup compares it: case folded, ``-`` as ``_``
    (docs/dialects.md#tool-names)."""
    return name.casefold().replace("-", "_")


def find(name: str) -> ToolSpec | None:
    """The tool called ``name`` (or with that alias), importing as little as possible.

    Names fold case and ``-`` (``Bash``, ``read-file``): every canonical name and alias is lower
    case (a test holds them to it), so no two of them fold together (docs/dialects.md#tool-names).
    """
    if not name or not name.replace("_", "").replace("-", "").isalnum():
        return None
    name = fold_name(name)
    try:
        from zbtools.toolindex import NAMES
    except ImportError:  # pragma: no cover - index not generated yet
        NAMES = {}
    module = NAMES.get(name)
    if module is not None:
        spec = _load(module)
        if spec is not None and name in spec.names:
            return spec
    if os.path.exists(os.path.join(TOOLS_DIR, f"{name}.py")):
        spec = _load(name)
        if spec is not None and name in spec.names:
            return spec
    for spec in all_tools():
        if name in spec.names:
            return spec
    return None


def all_tools() -> list[ToolSpec]:
    """Every registered tool, sorted by name."""
    specs = [s for s in (_load(m) for m in module_names()) if s is not None]
    return sorted(specs, key=lambda s: s.name)


def name_index() -> dict[str, str]:
    """name or alias -> module, as written to ``toolindex.py``."""
    index: dict[str, str] = {}
    for module in module_names():
        spec = _load(module)
        if spec is None:
            continue
        for n in spec.names:
            if n in index:
                raise RuntimeError(f"tool name {n!r} is declared by {index[n]} and {module}")
            index[n] = module
    return dict(sorted(index.items()))

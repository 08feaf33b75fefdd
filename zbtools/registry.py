"""The tool registry: ``ToolSpec`` and discovery of ``zbtools/tools/*.py``.

A tool is one module under ``zbtools/tools/`` that defines ``TOOL = ToolSpec(...)``. Looking a
tool up by name imports only that module: the generated index ``zbtools/tools/_index.py`` maps
every name and alias to its module (``python -m zbtools.devgen`` writes it, a test checks it).
A name missing from the index (a tool added without regenerating) is still found: first by
module name, then by importing every tool module, so a stale index costs time, never
correctness. Everything that lists tools (CLI help, schemas, docs) uses ``all_tools()``.
"""

from __future__ import annotations

import importlib
import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from zbtools.core.args import Struct
    from zbtools.core.context import Context

TOOLS_PACKAGE = "zbtools.tools"
TOOLS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tools")


class ToolSpec:
    """Everything the surfaces need to know about one tool."""

    def __init__(
        self,
        *,
        name: str,
        params: type[Struct],
        result: type[Struct],
        run: Callable[[Any, Context], Struct],
        doc: str | None,
        aliases: tuple[str, ...] = (),
        read_only: bool = False,
        destructive: bool = False,
        idempotent: bool = False,
        parallel_safe: bool = False,
        render_text: Callable[[Any], str] | None = None,
        category: str = "files",
    ) -> None:
        self.name = name
        self.params = params
        self.result = result
        self.run = run
        self.doc = (doc or "").strip()
        self.aliases = aliases
        self.read_only = read_only
        self.destructive = destructive
        self.idempotent = idempotent
        self.parallel_safe = parallel_safe
        self.render_text = render_text
        self.category = category

    @property
    def summary(self) -> str:
        """The first paragraph of the module docstring: what agents see as the description."""
        return " ".join(self.doc.split("\n\n", 1)[0].split())

    @property
    def details(self) -> str:
        parts = self.doc.split("\n\n", 1)
        return parts[1].strip() if len(parts) > 1 else ""

    @property
    def names(self) -> tuple[str, ...]:
        return (self.name, *self.aliases)

    @property
    def changes_files(self) -> bool:
        """Whether a call holds the workspace edit lock (``core.state.EditLock``): every tool
        that is not read-only, but the commands (a build must not keep edits waiting)."""
        return not self.read_only and self.category != "commands"

    def call(self, params: Any, ctx: Context) -> Struct:
        """Run the tool, under the workspace edit lock when it changes files. Every surface
        (command line, batch, MCP, dialects) calls tools through here."""
        if not self.changes_files:
            return self.run(params, ctx)
        from zbtools.core.state import EditLock

        with EditLock(ctx):
            return self.run(params, ctx)


def _load(module_name: str) -> ToolSpec | None:
    try:
        module = importlib.import_module(f"{TOOLS_PACKAGE}.{module_name}")
    except ModuleNotFoundError as exc:
        if exc.name == f"{TOOLS_PACKAGE}.{module_name}":
            return None
        raise
    spec = getattr(module, "TOOL", None)
    return spec if isinstance(spec, ToolSpec) else None


def module_names() -> list[str]:
    """Tool modules present on disk (``_``-prefixed helpers excluded)."""
    out = []
    for entry in sorted(os.listdir(TOOLS_DIR)):
        if entry.endswith(".py") and not entry.startswith("_"):
            out.append(entry[:-3])
    return out


def find(name: str) -> ToolSpec | None:
    """The tool called ``name`` (or with that alias), importing as little as possible."""
    if not name or not name.replace("_", "").replace("-", "").isalnum():
        return None
    name = name.replace("-", "_")
    try:
        from zbtools.tools._index import NAMES
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
    """name or alias -> module, as written to ``tools/_index.py``."""
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

"""Shared mechanics of the tools, one sub-package per concern.

Layers, lowest first; a package may import the packages below it, never one above or beside it
(``tests/test_layers.py`` enforces this):

1. ``files``: the workspace root and path containment, byte-faithful text I/O, tree operations.
2. ``call``: what every call is made of: argument declarations, settings and limits, the call
   context, JSON, result truncation, optional libraries.
3. ``state``: locked, versioned state files and the edit lock; plans.
4. ``editing``, ``search``, ``processes``, ``web``, ``media``: the subsystems, independent of
   each other.

Nothing in ``core`` imports the tools, the registry, the dialects, the dispatcher or a surface,
nor typer, rich or mcp.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable


def lazy_names(package: str, submodules: dict[str, str],
               namespace: dict[str, object]) -> Callable[[str], object]:
    """A core package's ``__getattr__`` (PEP 562): each public name is looked up in the
    submodule ``submodules`` maps it to, imported on first use and kept in ``namespace``, so
    that the package's ``__init__`` imports nothing when it runs
    (docs/internals/performance.md#start-up-budget). Callers outside the package import a name
    from the submodule it maps to; tests/test_public_surface.py holds them to it."""
    def resolve(name: str) -> object:
        submodule = submodules.get(name)
        if submodule is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value: object = getattr(__import__(f"{package}.{submodule}", fromlist=[name]), name)
        namespace[name] = value
        return value

    return resolve

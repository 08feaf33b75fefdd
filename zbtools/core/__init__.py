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

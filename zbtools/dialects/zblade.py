"""The ``zblade`` dialect: the canonical tools as they are (docs/internals/sources.md#zblade), the
default.

Every registered tool, by its canonical name, with its own parameters (schemas generated from its
``Params`` declaration; aliases are accepted but not listed as separate properties).
"""

from __future__ import annotations

from zbtools.dialects import Dialect, DialectTool


def _tools() -> list[DialectTool]:
    from zbtools.registry import all_tools

    out = []
    for spec in all_tools():
        tool = DialectTool(spec.name, spec.name, aliases=spec.aliases)
        tool._spec = spec
        out.append(tool)
    return out


DIALECT = Dialect("zblade", _tools)

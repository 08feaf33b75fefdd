"""The ``zblade`` dialect: the canonical tools as they are (docs/internals/sources.md#zblade), the
default.

Every registered tool, by its canonical name, with its own parameters (schemas generated from its
``Params`` declaration; aliases are accepted but not listed as separate properties). One
exception to the generated schemas: ``run_command`` lists ``cwd`` as required, as Zaguán Blade's
reference does (``SEED_REQUIRED``), while a call without it still runs in the workspace root
(docs/dialects.md#where-a-dialect-departs-from-its-agents-documentation).
"""

from __future__ import annotations

from zbtools.dialects import Dialect, DialectTool

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# parameters the reference marks required that the canonical tool defaults: a model trained on
# the reference always fills them, and the listing says so; scripts may still leave them out
SEED_REQUIRED = {"run_command": ("cwd",)}


class _SeedTool(DialectTool):
    """A canonical tool whose listed schema requires what the reference requires."""

    def input_schema(self) -> dict[str, Any]:
        schema = super().input_schema()
        props = schema.get("properties", {})
        required = list(schema.get("required", []))
        for name in SEED_REQUIRED.get(self.name, ()):
            if name in props and name not in required:
                required.append(name)
                props[name].pop("default", None)
        schema["required"] = required
        return schema


def _tools() -> list[DialectTool]:
    from zbtools.registry import all_tools

    out = []
    for spec in all_tools():
        kind = _SeedTool if spec.name in SEED_REQUIRED else DialectTool
        tool = kind(spec.name, spec.name, aliases=spec.aliases)
        tool._spec = spec
        out.append(tool)
    return out


class _Zblade(Dialect):
    """Looks a tool up without loading them all, as every dialect does for canonical names,
    but with the listed schema (``_SeedTool``) where the reference requires more."""

    def _wrap(self, tool_name: str) -> DialectTool | None:
        tool = super()._wrap(tool_name)
        if tool is None or isinstance(tool, _SeedTool) or tool.name not in SEED_REQUIRED:
            return tool
        seed = _SeedTool(tool.name, tool.name, aliases=tool.aliases)
        seed._spec = tool.spec
        self._canonical[tool_name] = seed
        return seed


DIALECT = _Zblade("zblade", _tools)

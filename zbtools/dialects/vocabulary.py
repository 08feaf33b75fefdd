"""The words a dialect tool speaks in its errors and warnings.

A canonical tool's error names canonical tools and parameters. Within a dialect, each such name
becomes the dialect's: a canonical tool is named by the dialect tool that runs it (the tool
being called first, then the dialect's documentation order; ``Dialect.names`` and the tool's
``error_names`` may say otherwise), a parameter by the tool's ``renames`` and ``error_names``.
A canonical name that is none of the dialect's words (its tool names and aliases, its parameter
names and the values its schemas enumerate) and has no such translation is one the dialect
lacks: advice naming it is dropped (``zbtools.core.call.wording``). Built once per tool, on its
first error or warning, from the whole registry (its generated index, ``toolindex``), so a
tool added to a dialect or to the registry later is covered without a change here
(docs/internals/surfaces.md#dialect-layer).

* ``wording(tool)``: the tool's ``Wording``.
* ``dialect_words(dialect)``: every word the dialect's own schemas and names use.
* ``canonical_words()``: (canonical tool names and aliases, canonical parameter names).
"""

from __future__ import annotations

from zbtools.core.call.wording import Wording

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    # a Dialect and a DialectTool: zbtools.dialects imports this module, never the reverse
    Dialect = Any
    DialectTool = Any

_CANONICAL: tuple[frozenset[str], frozenset[str]] | None = None
_OWN: dict[str, frozenset[str]] = {}


def canonical_words() -> tuple[frozenset[str], frozenset[str]]:
    """(every canonical tool name and alias, every canonical parameter name)."""
    global _CANONICAL
    if _CANONICAL is None:
        # from the generated index: importing every tool would cost a dialect's first error
        # more than the call itself
        from zbtools.toolindex import NAMES, PARAMS

        _CANONICAL = frozenset(NAMES), PARAMS
    return _CANONICAL


def _schema_words(schema: Any, out: set[str]) -> None:
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key == "properties" and isinstance(value, dict):
                out.update(value)
            elif key == "enum" and isinstance(value, list):
                out.update(v for v in value if isinstance(v, str))
            _schema_words(value, out)
    elif isinstance(schema, list):
        for item in schema:
            _schema_words(item, out)


def dialect_words(dialect: Dialect) -> frozenset[str]:
    """The dialect's tool names and aliases, and every property name and enumerated value of
    its tools' schemas (fiz's ``replace_all`` is an ``operation``, a word fiz speaks)."""
    found = _OWN.get(dialect.name)
    if found is None:
        words: set[str] = set()
        for tool in dialect.tools():
            words.update((tool.name, *tool.aliases))
            for name, spec in tool.params.fields().items():
                words.update((name, *spec.names))
            words.update(tool.wire_names.values())
            _schema_words(tool.input_schema(), words)
        found = _OWN[dialect.name] = frozenset(words)
    return found


def wording(tool: DialectTool) -> Wording:
    """How ``tool`` names the canonical tools and parameters its errors mention."""
    dialect = tool.dialect
    if dialect is None:  # a tool outside any dialect: its own renames only
        return Wording(tool.error_names, tool.shifts, tool.forms)
    tool_names, param_names = canonical_words()
    own = dialect_words(dialect)
    from zbtools.registry import find

    translated: dict[str, str] = {}
    for holder in [tool, *dialect.tools()]:  # the tool being called names its targets first
        for target in holder.targets:
            spec = find(target)
            for name in spec.names if spec is not None else (target,):
                translated.setdefault(name, holder.name)
    translated.update(dialect.names)
    names: dict[str, str | None] = {}
    for word in tool_names:
        # a one-word name (``ls``, ``find``, ``grep``, ``bash``) is also a program's name or an
        # English word (``{"command": "ls -la"}``, "could not find"): renamed only where the
        # dialect says so
        if word not in own and ("_" in word or not word.isalpha() or word in dialect.names):
            names[word] = translated.get(word)
    for word in param_names:
        if word not in own and word not in names:
            names[word] = None
    names.update(tool.error_names)
    return Wording(names, tool.shifts, tool.forms)

"""Definitions by name: which of a file's definitions a name or dotted path names, and the
closest names when none does.

A query is a name (``run``) or a dotted path (``Runner.run``, ``pkg.Outer.Inner.run``); ``::``
and Ruby's ``#`` read as dots. It names a definition whose dotted name (``qualname``) is the
query or ends with ``.`` and the query, so ``run``, ``Runner.run`` and ``Outer.Runner.run`` all
name ``Outer.Runner.run``; an optional kind and a line (any line of the definition, its
decorators and comments included) narrow the choice (docs/internals/code.md#symbol-tools).

Map: ``normalise`` (a query's canonical form), ``last_name`` (what a search for the query looks
for), ``names`` (whether a definition answers a query), ``select`` (a file's definitions that
do), ``closest`` (the names nearest a query that names nothing).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

    from zbtools.core.code.symbols import Definition

CLOSEST = 5


def normalise(query: str) -> str:
    """``C::m``, ``K#m`` and `` A . m `` as ``C.m``, ``K.m``, ``A.m``."""
    text = query.strip().replace("::", ".").replace("#", ".")
    return ".".join(part.strip() for part in text.split(".") if part.strip())


def last_name(query: str) -> str:
    """The definition's own name in a query: what a search of the files looks for."""
    return normalise(query).rsplit(".", 1)[-1]


def names(definition: Definition, query: str) -> bool:
    """Whether ``query`` (normalised) names ``definition``: its dotted name, or a suffix of it
    that starts at a dot."""
    qualname = definition.qualname
    return qualname == query or qualname.endswith("." + query)


def select(definitions: Iterable[Definition], query: str, kind: str | None = None,
           line: int | None = None) -> list[Definition]:
    """The definitions ``query`` names, of ``kind`` when given, and holding ``line`` when
    given (where several hold it, the one that starts on it, else the innermost)."""
    query = normalise(query)
    found = [d for d in definitions
             if names(d, query) and (kind is None or d.kind == kind)]
    if line is None:
        return found
    found = [d for d in found if d.outer_start_line <= line <= d.end_line]
    if len(found) > 1:
        starting = [d for d in found if line in (d.start_line, d.outer_start_line)]
        if starting:
            return starting
        deepest = max(d.depth for d in found)
        return [d for d in found if d.depth == deepest]
    return found


def closest(query: str, definitions: Iterable[Definition], count: int = CLOSEST) -> list[str]:
    """The dotted names nearest ``query`` (a misspelt name, a wrong class, other letter case),
    best first."""
    import difflib

    query = normalise(query)
    qualnames: dict[str, None] = {}
    for d in definitions:
        qualnames.setdefault(d.qualname, None)
    if not qualnames:
        return []
    own = query.rsplit(".", 1)[-1].lower()
    # a dotted query is compared with dotted names, a bare name with the definitions' own names
    dotted = "." in query
    scores: list[tuple[float, str]] = []
    for qualname in qualnames:
        name = qualname.rsplit(".", 1)[-1]
        ratio = difflib.SequenceMatcher(None, query.lower(), qualname.lower()).ratio() \
            if dotted else 0.0
        ratio = max(ratio, difflib.SequenceMatcher(None, own, name.lower()).ratio())
        if ratio >= 0.6:
            scores.append((ratio, qualname))
    scores.sort(key=lambda s: (-s[0], s[1]))
    return [qualname for _, qualname in scores[:count]]

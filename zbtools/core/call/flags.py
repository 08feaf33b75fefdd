"""What the command line needs of a declared field: the word naming its value in ``--help``,
the man page and completions (``value_name``: ``PATH``, ``N``, ``{a|b}``), and a flag's text
turned into the JSON value the field expects (``coerce_flag``). The declarations themselves
and their validation are ``zbtools.core.call.args``'s.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from zbtools.core.call.args import FieldSpec


# (names, placeholder): a string field called (or aliased) one of the names takes that
# placeholder; the first row that matches wins, so a glob called ``pattern`` is a GLOB. These
# rows win over ``text_body`` (a command is a body of text, but a COMMAND), the next ones not.
_BODY_VALUE_NAMES: tuple[tuple[frozenset[str], str], ...] = (
    (frozenset({"url", "uri", "link"}), "URL"),
    (frozenset({"command", "cmd", "script"}), "COMMAND"),
    (frozenset({"patch", "diff"}), "PATCH"),
)
_STR_VALUE_NAMES: tuple[tuple[frozenset[str], str], ...] = (
    (frozenset({"glob", "include", "file_pattern"}), "GLOB"),
    (frozenset({"pattern", "regex"}), "PATTERN"),
    (frozenset({"symbol"}), "NAME"),
    (frozenset({"query", "q"}), "QUERY"),
    (frozenset({"cwd", "workdir"}), "DIR"),
    (frozenset({"path", "source", "destination", "file_path", "src", "dest"}), "PATH"),
    (frozenset({"id"}), "ID"),
    (frozenset({"stdin", "description", "title", "explanation", "anchor", "end_anchor"}),
     "TEXT"),
    (frozenset({"max_filesize"}), "SIZE"),
)


def value_name(spec: FieldSpec) -> str:
    """The placeholder naming a field's value in ``--help``, the man page and completions:
    ``PATH``, ``PATTERN``, ``N``, ``{a|b}`` for a short choice, ``JSON`` for a list or an object, ""
    for a boolean (a switch). ``field(metavar=...)`` overrides it; otherwise it is derived from
    the field's name, aliases and type, here and nowhere else."""
    if spec.metavar:
        return spec.metavar
    assert spec.type is not None
    kind = spec.type.kind
    if kind == "bool":
        return ""
    if kind == "literal":
        listed = "{" + "|".join(str(choice) for choice in spec.type.choices) + "}"
        # a long list would push the help text off the line; the help lists it instead
        return listed if len(listed) <= 40 else spec.name.rsplit("_", 1)[-1].upper()
    if kind == "int":
        return "MS" if spec.name.endswith("_ms") else "N"
    if kind == "float":
        return "SECONDS" if "timeout" in spec.name or spec.name == "grace" else "N"
    if kind != "str":
        return "JSON"
    names = spec.names
    for words, placeholder in _BODY_VALUE_NAMES:
        if any(name in words for name in names):
            return placeholder
    if spec.text_body:
        return "TEXT"
    if spec.name.endswith("_id"):
        return "ID"
    for words, placeholder in _STR_VALUE_NAMES:
        if any(name in words for name in names):
            return placeholder
    return spec.name.rsplit("_", 1)[-1].upper()


_TRUE = {"true", "1", "yes", "on"}
_FALSE = {"false", "0", "no", "off"}


def coerce_flag(spec: FieldSpec, raw: str) -> Any:
    """Turn a flag's text into the JSON value its field expects (validation happens later)."""
    assert spec.type is not None
    kind = spec.type.kind
    if spec.type.nullable and raw in ("null", "none"):
        return None
    if kind == "str":
        return raw
    if kind == "bool":
        low = raw.lower()
        if low in _TRUE:
            return True
        if low in _FALSE:
            return False
        return raw  # reported as wrong_type by validation
    if kind == "int":
        try:
            return int(raw)
        except ValueError:
            return raw
    if kind == "float":
        try:
            return float(raw)
        except ValueError:
            return raw
    if kind == "literal":
        for choice in spec.type.choices:
            if str(choice) == raw:
                return choice
        return raw
    from zbtools.core.call.fastjson import loads_strict

    try:
        return loads_strict(raw)
    except (ValueError, RecursionError):
        if kind == "list" and spec.type.item is not None and spec.type.item.kind == "str":
            return [raw]
        return raw

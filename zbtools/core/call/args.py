"""Declaring, validating and coercing tool arguments
(docs/internals/performance.md#start-up-budget).

A tool declares its parameters as a ``Struct`` subclass with annotated fields
(``path: str = field(aliases=("file_path",), help="File path")``); the same declaration yields
validation, command-line flags, JSON Schema and documentation. Neither ``dataclasses`` nor
pydantic is used: their imports cost more than a cold call can afford. Annotations stay strings
and are parsed once, on first use, by a small parser of the types tools use (``str``, ``int``,
``float``, ``bool``, ``Literal[...]``, ``list[X]``, ``dict[str, X]``, nested ``Struct``,
``X | None``). Validation reports every problem at once in one ``invalid_arguments`` error;
booleans are never integers, and ``null`` for an optional field means its default. A number
written as a string (``"5"``, models send them) is read as the number, with a warning. A
declaration the parser cannot read raises ``TypeError`` at first use, which the test suite
catches for every registered tool.

Map: ``Struct``, ``field``/``FieldSpec``, ``TypeSpec``, ``parse_annotation``; ``validate``,
``invalid_arguments_error``, ``alias_table``, ``did_you_mean``; ``json_type_name``. What the
command line needs of a field (its placeholder in help, a flag's text as a value) is in
``zbtools.core.call.flags``.
"""

from __future__ import annotations

import sys

from zbtools.contract import ToolError

TYPE_CHECKING = False  # typing costs ~3 ms of start-up; mypy treats this name as True
if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Mapping
    from typing import Any, ClassVar, TypeVar, dataclass_transform

    T = TypeVar("T", bound="Struct")
else:

    def dataclass_transform(**_kwargs: object) -> object:
        return lambda cls: cls


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


class FieldSpec:
    """One declared field: its type, default, aliases and documentation."""

    __slots__ = (
        "aliases",
        "annotation",
        "default",
        "default_factory",
        "help",
        "maximum",
        "metavar",
        "minimum",
        "name",
        "omit_null",
        "switches",
        "text_body",
        "type",
    )

    def __init__(
        self,
        *,
        default: Any = MISSING,
        default_factory: Callable[[], Any] | None = None,
        aliases: tuple[str, ...] = (),
        help: str = "",
        minimum: float | None = None,
        maximum: float | None = None,
        text_body: bool = False,
        omit_null: bool = False,
        metavar: str = "",
        switches: Mapping[str, Any] | None = None,
    ) -> None:
        self.name = ""
        # command-line flags that set this field to a value, taking none (``-l``: output_mode
        # files_with_matches, as rg); never JSON spellings
        self.switches: dict[str, Any] = dict(switches or {})
        # the word naming the value in --help and the man page (``PATH``); empty: derived by
        # ``flags.value_name`` from the name and type
        self.metavar = metavar
        # a result field of some kinds of result only: left out of the JSON when it is null
        self.omit_null = omit_null
        # a body of text (file content, old/new text, a patch, a command): as a command-line
        # flag, "-" reads it from stdin and "@PATH" from a file
        self.text_body = text_body
        self.annotation = ""
        self.type: TypeSpec | None = None
        self.default = default
        self.default_factory = default_factory
        self.aliases = aliases
        self.help = help
        self.minimum = minimum
        self.maximum = maximum

    @property
    def required(self) -> bool:
        return self.default is MISSING and self.default_factory is None

    def make_default(self) -> Any:
        if self.default_factory is not None:
            return self.default_factory()
        return self.default

    @property
    def names(self) -> tuple[str, ...]:
        return (self.name, *self.aliases)


def field(
    *,
    default: Any = MISSING,
    default_factory: Callable[[], Any] | None = None,
    aliases: tuple[str, ...] = (),
    help: str = "",
    minimum: float | None = None,
    maximum: float | None = None,
    text_body: bool = False,
    omit_null: bool = False,
    metavar: str = "",
    switches: Mapping[str, Any] | None = None,
) -> Any:
    """Declare a field; typed ``Any`` so that ``path: str = field(...)`` type-checks.

    ``text_body``: the field holds a body of text (file content, a patch, a command), which a
    command-line flag may read from stdin (``-``) or a file (``@PATH``). ``omit_null``: a result
    field that only some kinds of result have (an image's width in a read of text) is left out
    of the JSON when it is null. ``metavar``: the word naming the value in ``--help``
    (``PATH``), when ``flags.value_name`` would derive a worse one. ``switches``: command-line
    flags (a letter, or a word) that set the field to a value and take none, as ``rg -l``
    sets the output mode; JSON arguments never use them."""
    return FieldSpec(
        default=default,
        default_factory=default_factory,
        aliases=aliases,
        help=help,
        minimum=minimum,
        maximum=maximum,
        text_body=text_body,
        omit_null=omit_null,
        metavar=metavar,
        switches=switches,
    )


class TypeSpec:
    """A parsed annotation."""

    __slots__ = ("choices", "item", "kind", "nullable", "struct")

    def __init__(
        self,
        kind: str,
        *,
        nullable: bool = False,
        choices: tuple[Any, ...] = (),
        item: TypeSpec | None = None,
        struct: type[Struct] | None = None,
    ) -> None:
        self.kind = kind  # str int float bool literal list dict struct any
        self.nullable = nullable
        self.choices = choices
        self.item = item
        self.struct = struct

    def describe(self) -> str:
        if self.kind == "literal":
            base = " | ".join(repr(c) for c in self.choices)
        elif self.kind == "list":
            assert self.item is not None
            base = f"list of {self.item.describe()}"
        elif self.kind == "dict":
            assert self.item is not None
            base = f"object of {self.item.describe()}"
        elif self.kind == "struct":
            assert self.struct is not None
            base = "object"
        elif self.kind == "str":
            base = "string"
        elif self.kind == "int":
            base = "integer"
        elif self.kind == "float":
            base = "number"
        elif self.kind == "bool":
            base = "boolean"
        else:
            base = "any"
        return f"{base} or null" if self.nullable else base


def _literal_choices(inner: str) -> list[Any]:
    """``'a', "b", 3`` -> ["a", "b", 3] (no ``re``: a cold call cannot afford its import)."""
    choices: list[Any] = []
    for item in _split_top(inner, ","):
        if len(item) >= 2 and item[0] == item[-1] and item[0] in "'\"":
            choices.append(item[1:-1])
        elif item.lstrip("-").isdigit():
            choices.append(int(item))
        elif item:
            raise TypeError(f"unsupported Literal value {item!r}")
    return choices


def _split_top(text: str, sep: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        elif ch == sep and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return parts


def parse_annotation(text: str, namespace: dict[str, Any]) -> TypeSpec:
    """Parse an annotation string such as ``"list[Patch] | None"``."""
    alternatives = _split_top(text, "|")
    nullable = "None" in alternatives
    rest = [a for a in alternatives if a != "None"]
    if len(rest) != 1:
        raise TypeError(f"unsupported annotation {text!r}: one type plus optional None")
    body = rest[0]
    spec: TypeSpec
    if body in ("str", "int", "float", "bool", "Any"):
        spec = TypeSpec("any" if body == "Any" else body)
    elif body.startswith("Literal[") and body.endswith("]"):
        choices = _literal_choices(body[len("Literal[") : -1])
        if not choices:
            raise TypeError(f"empty Literal in {text!r}")
        spec = TypeSpec("literal", choices=tuple(choices))
    elif body.startswith("list[") and body.endswith("]"):
        spec = TypeSpec("list", item=parse_annotation(body[5:-1], namespace))
    elif body.startswith("dict[") and body.endswith("]"):
        key, value = _split_top(body[5:-1], ",")
        if key != "str":
            raise TypeError(f"dict keys must be str in {text!r}")
        spec = TypeSpec("dict", item=parse_annotation(value, namespace))
    else:
        target = namespace.get(body)
        if not (isinstance(target, type) and issubclass(target, Struct)):
            raise TypeError(f"unsupported annotation {text!r}")
        spec = TypeSpec("struct", struct=target)
    spec.nullable = nullable
    return spec


@dataclass_transform(field_specifiers=(field,), kw_only_default=True)
class Struct:
    """Base of parameter and result declarations.

    Subclasses get keyword construction, ``to_json`` and a field table. Field order is
    declaration order (inherited fields first), which is the order of flags and docs.
    """

    _fields_cache: ClassVar[dict[str, FieldSpec] | None] = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._fields_cache = None

    def __init__(self, **values: Any) -> None:
        specs = type(self).fields()
        if len(values) == len(specs) and values.keys() == specs.keys():
            self.__dict__.update(values)  # every field given: the common case for results
            return
        cls = type(self)
        fill = _INIT_FILLS.get(cls)
        if fill is None:
            fill = _init_fill(cls)
        defaults, factories, required = fill
        own = self.__dict__  # as the common case above: no field is a property
        own.update(defaults)
        for name, factory in factories:
            if name not in values:
                own[name] = factory()
        own.update(values)
        if len(own) != len(specs) or not values.keys() >= required:
            for name in specs:  # the first missing field, in order, before any unknown one
                if name in required and name not in values:
                    raise TypeError(f"{cls.__name__} missing {name}")
            raise TypeError(f"{cls.__name__} got unknown {sorted(values.keys() - specs.keys())}")

    @classmethod
    def fields(cls) -> dict[str, FieldSpec]:
        cached = cls._fields_cache  # each class's own: __init_subclass__ resets it
        if cached is not None:
            return cached
        out: dict[str, FieldSpec] = {}
        # A class's own fields first, then inherited ones (a shared base such as the walk
        # switches comes after a tool's main parameters); a redeclared field keeps its override.
        for klass in cls.__mro__:
            if klass is Struct or not issubclass(klass, Struct):
                continue
            namespace = vars(sys.modules[klass.__module__])
            for name, annotation in klass.__dict__.get("__annotations__", {}).items():
                if name.startswith("_") or str(annotation).startswith("ClassVar") or \
                        name in out:
                    continue
                declared = klass.__dict__.get(name, MISSING)
                if isinstance(declared, FieldSpec):
                    spec = declared
                else:
                    spec = FieldSpec(default=declared)
                spec.name = name
                spec.annotation = str(annotation)
                spec.type = parse_annotation(spec.annotation, namespace)
                out[name] = spec
        cls._fields_cache = out
        return out

    def to_json(self) -> dict[str, Any]:
        values = self.__dict__
        cls = type(self)
        fields = cls.fields()
        omitted = _OMITTED.get(cls)
        if omitted is None:
            omitted = _omitted(cls, fields)
        if omitted is _PLAIN:  # every field a scalar, none omitted: nothing to convert
            if list(values) == _PLAIN_ORDERS[cls]:
                # its own dict holds exactly the fields, in order: a copy is its JSON form, at
                # a quarter of the cost of a rebuild (a listing has thousands)
                return values.copy()
            return {name: values[name] for name in fields}
        scalars = _SCALARS
        # the scalar test inline: results can hold thousands of small Structs
        if not omitted:
            return {name: v if type(v := values[name]) in scalars else _dump(v)
                    for name in fields}
        return {name: v if type(v := values[name]) in scalars else _dump(v)
                for name in fields if values[name] is not None or name not in omitted}

    def __repr__(self) -> str:
        inner = ", ".join(f"{n}={getattr(self, n)!r}" for n in type(self).fields())
        return f"{type(self).__name__}({inner})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Struct) and type(other) is type(self) \
            and self.to_json() == other.to_json()

    __hash__ = None  # type: ignore[assignment]


_OMITTED: dict[type, frozenset[str]] = {}
_PLAIN_ORDERS: dict[type, list[str]] = {}  # a _PLAIN class's field names, in order
# each Struct class's fields as (name, default, default_factory), made once: what __init__
# and validation fill in for a field not given, without a property call per field and call
_INIT_PLANS: dict[type, tuple[tuple[str, Any, Callable[[], Any] | None], ...]] = {}


def _init_plan(cls: type[Struct]) -> tuple[tuple[str, Any, Callable[[], Any] | None], ...]:
    plan = tuple((name, spec.default, spec.default_factory)
                 for name, spec in cls.fields().items())
    _INIT_PLANS[cls] = plan
    return plan


_FIELD_ORDERS: dict[type, dict[str, int]] = {}  # each Struct class's field -> its position


def _field_order(cls: type[Struct]) -> dict[str, int]:
    order = _FIELD_ORDERS.get(cls)
    if order is None:
        order = _FIELD_ORDERS[cls] = {name: i for i, name in enumerate(cls.fields())}
    return order


# the same as __init__ applies it, with two dict updates: the plain defaults, the factories and
# the required names (a result of many fields, most left at their defaults)
_INIT_FILLS: dict[type, tuple[dict[str, Any], tuple[tuple[str, Callable[[], Any]], ...],
                              frozenset[str]]] = {}


def _init_fill(cls: type[Struct]) -> tuple[dict[str, Any],
                                           tuple[tuple[str, Callable[[], Any]], ...],
                                           frozenset[str]]:
    plan = _INIT_PLANS.get(cls) or _init_plan(cls)
    fill = ({name: default for name, default, factory in plan
             if factory is None and default is not MISSING},
            tuple((name, factory) for name, _, factory in plan if factory is not None),
            frozenset(name for name, default, factory in plan
                      if factory is None and default is MISSING))
    _INIT_FILLS[cls] = fill
    return fill


# marks a class whose fields are all scalars, none omitted (a set no field name can make)
_PLAIN: frozenset[str] = frozenset({"\0plain"})
_SCALAR_KINDS = frozenset({"str", "int", "float", "bool", "literal"})


def _omitted(cls: type, fields: dict[str, FieldSpec]) -> frozenset[str]:
    """The ``omit_null`` fields of a Struct class (computed once per class); ``_PLAIN`` itself
    when there are none and every field is declared a scalar (results can hold thousands)."""
    got = _OMITTED.get(cls)
    if got is None:
        got = frozenset(n for n, spec in fields.items() if spec.omit_null)
        if not got and all(spec.type is not None and spec.type.kind in _SCALAR_KINDS
                           for spec in fields.values()):
            got = _PLAIN
            _PLAIN_ORDERS[cls] = list(fields)
        _OMITTED[cls] = got
    return got


_SCALARS = frozenset({str, int, float, bool, type(None)})


def _dump(value: Any) -> Any:
    if type(value) in _SCALARS:  # most values: results can hold thousands of entries
        return value
    if isinstance(value, Struct):
        return value.to_json()
    if isinstance(value, list | tuple):
        return [v if type(v) in _SCALARS else _dump(v) for v in value]
    if isinstance(value, dict):
        return {k: _dump(v) for k, v in value.items()}
    return value


# ---------------------------------------------------------------------------------------------
# Validation


def json_type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


class _Problems:
    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []
        self.notes: list[str] = []  # warnings of a call that goes on (a number read from text)

    def note(self, message: str) -> None:
        self.notes.append(message)

    def add(self, kind: str, where: str, message: str, **extra: Any) -> None:
        self.items.append({"problem": kind, "argument": where, "message": message, **extra})


_JSON_SPACE = " \t\r\n"
_DIGITS = frozenset("0123456789")


def _digits(text: str) -> bool:
    return bool(text) and all(ch in _DIGITS for ch in text)


def _number_text(text: str, kind: str) -> int | float | None:
    """The number a string holds for an ``int`` or ``float`` field, or None.

    Models send ``"5"`` for 5 (docs/shell.md#numbers-written-as-strings). Read, after JSON's
    whitespace around it is stripped: an optional sign and ASCII digits (``"007"`` is 7); for a
    float field also a fraction and an exponent as JSON writes them (``"2.5"``, ``"1e3"``).
    Nothing else: no ``"5.0"`` for an integer, no ``".5"``, hex, ``_`` separators, ``nan`` or
    ``inf``, no digits of other scripts (which ``int`` would take)."""
    body = text.strip(_JSON_SPACE)
    unsigned = body[1:] if body[:1] in ("+", "-") else body
    if _digits(unsigned):
        try:
            return int(body)  # an integer for a float field too, as JSON's 5 is
        except ValueError:  # past Python's limit on digits in a conversion
            return None
    if kind != "float":
        return None
    mantissa, e, exponent = unsigned.lower().partition("e")
    whole, dot, fraction = mantissa.partition(".")
    if not _digits(whole) or (dot and not _digits(fraction)):
        return None
    if e and not _digits(exponent[1:] if exponent[:1] in ("+", "-") else exponent):
        return None
    return float(body)


def _shown(text: str) -> str:
    """A string as a message quotes it: its line breaks and tabs escaped, as JSON writes them
    (a message is one line)."""
    return text.replace("\t", "\\t").replace("\r", "\\r").replace("\n", "\\n")


def _check_value(
    spec: TypeSpec, value: Any, where: str, problems: _Problems, fspec: FieldSpec | None
) -> Any:
    if value is None:
        if spec.nullable:
            return None
        problems.add("wrong_type", where, f"{where} must be {spec.describe()}, got null")
        return None
    kind = spec.kind
    if kind == "any":
        return value
    if kind == "str":
        if type(value) is not str:
            problems.add(
                "wrong_type", where, f"{where} must be a string, got {json_type_name(value)}"
            )
        return value
    if kind == "bool":
        if type(value) is not bool:
            problems.add(
                "wrong_type", where, f"{where} must be true or false, got {json_type_name(value)}"
            )
        return value
    if kind in ("int", "float"):
        ok = type(value) is int or (kind == "float" and type(value) is float)
        if not ok and type(value) is str:
            number = _number_text(value, kind)
            if number is not None:
                problems.note(f"{where}: \"{_shown(value)}\" was a string and was read as the "
                              f"number {number}")
                value, ok = number, True
        if not ok:
            expected = "an integer" if kind == "int" else "a number"
            got = json_type_name(value)
            if type(value) is str:  # what it said: "5.0" is no integer, "five" no number
                got = f"the string \"{_shown(value[:40])}{'...' if len(value) > 40 else ''}\""
            problems.add("wrong_type", where, f"{where} must be {expected}, got {got}")
            return value
        if kind == "float":
            # NaN and infinity pass no range check (a flag's "nan", "inf", "1e400"), and an
            # integer beyond a double crashes the tool's arithmetic: refused here, whatever the
            # source of the arguments.
            try:
                number = float(value)
            except OverflowError:
                number = float("inf")
            if number - number != 0:
                problems.add("out_of_range", where,
                             f"{where} must be a finite number, got {number}")
                return value
        if fspec is not None:
            if fspec.minimum is not None and value < fspec.minimum:
                problems.add(
                    "out_of_range", where, f"{where} must be >= {fspec.minimum:g}, got {value}"
                )
            if fspec.maximum is not None and value > fspec.maximum:
                problems.add(
                    "out_of_range", where, f"{where} must be <= {fspec.maximum:g}, got {value}"
                )
        return value
    if kind == "literal":
        if value not in spec.choices or type(value) is bool:
            choices = ", ".join(repr(c) for c in spec.choices)
            problems.add(
                "invalid_choice", where, f"{where} must be one of {choices}, got {value!r}"
            )
        return value
    if kind == "list":
        if type(value) is not list:
            problems.add(
                "wrong_type", where, f"{where} must be an array, got {json_type_name(value)}"
            )
            return value
        assert spec.item is not None
        return [
            _check_value(spec.item, item, f"{where}[{i}]", problems, None)
            for i, item in enumerate(value)
        ]
    if kind == "dict":
        if type(value) is not dict:
            problems.add(
                "wrong_type", where, f"{where} must be an object, got {json_type_name(value)}"
            )
            return value
        assert spec.item is not None
        return {
            k: _check_value(spec.item, v, f"{where}.{k}", problems, None) for k, v in value.items()
        }
    assert spec.struct is not None
    if type(value) is not dict:
        problems.add(
            "wrong_type", where, f"{where} must be an object, got {json_type_name(value)}"
        )
        return value
    return _build(spec.struct, value, f"{where}.", problems)


def alias_table(cls: type[Struct]) -> dict[str, str]:
    """Map every accepted spelling (name, alias, kebab-case) to the canonical field name
    (built once per class: every call of a tool asks for it, flags and validation alike).
    Callers read it; none may change it."""
    cached: dict[str, str] | None = _ALIASES.get(cls)
    if cached is not None:
        return cached
    table: dict[str, str] = {}
    for name, spec in cls.fields().items():
        for spelling in spec.names:
            table[spelling] = name
            table[spelling.replace("_", "-")] = name
    _ALIASES[cls] = table
    return table


_ALIASES: dict[type[Struct], dict[str, str]] = {}


def _build(cls: type[T], data: dict[str, Any], prefix: str, problems: _Problems) -> T | None:
    specs = cls.fields()
    table = alias_table(cls)
    given: dict[str, tuple[str, Any]] = {}
    for key, value in data.items():
        canonical = table.get(key)
        if canonical is None:
            accepted = sorted({s for spec in specs.values() for s in spec.names})
            problems.add(
                "unknown_argument",
                f"{prefix}{key}",
                f"unknown argument {prefix}{key!s}"
                + did_you_mean(key, list(table)),
                accepted=accepted,
            )
            continue
        if canonical in given:
            other = given[canonical][0]
            problems.add(
                "conflicting_aliases",
                f"{prefix}{canonical}",
                f"{prefix}{other} and {prefix}{key} are two names for the same argument; "
                "give only one",
            )
            continue
        given[canonical] = (key, value)
    fill = _INIT_FILLS.get(cls)
    if fill is None:
        fill = _init_fill(cls)
    defaults, factories, required = fill
    values: dict[str, Any] = dict(defaults)  # a field not given: its default
    for name, factory in factories:
        if name not in given:
            values[name] = factory()
    # Only the fields given need a look, in field order (that of the problems and notes);
    # every field when one is missing, reported in its place.
    if required and not given.keys() >= required:
        names: Collection[str] = specs
    elif len(given) > 1:
        names = sorted(given, key=_field_order(cls).__getitem__)
    else:
        names = given
    for name in names:
        spec = specs[name]
        assert spec.type is not None
        if name in given:
            key, value = given[name]
            if value is None and not spec.type.nullable and not spec.required:
                values[name] = spec.make_default()
                continue
            if value is None and spec.required:
                problems.add(
                    "missing_argument", f"{prefix}{name}", f"{prefix}{name} is required, got null"
                )
                continue
            values[name] = _check_value(spec.type, value, f"{prefix}{key}", problems, spec)
        elif spec.required:
            names_shown = " / ".join(spec.names)
            problems.add(
                "missing_argument",
                f"{prefix}{name}",
                f"missing required argument {prefix}{name}"
                + (f" (accepted names: {names_shown})" if spec.aliases else ""),
            )
    if problems.items:
        return None
    built = object.__new__(cls)  # every field is in values: Struct.__init__'s common case
    built.__dict__.update(values)
    return built


def did_you_mean(key: str, candidates: list[str]) -> str:
    """`` (did you mean 'path'?)`` for the closest candidate, or an empty string."""
    import difflib  # error path only

    close = difflib.get_close_matches(key, candidates, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def validate(cls: type[T], data: Any, earlier: list[dict[str, Any]] | None = None,
             warnings: list[str] | None = None) -> T:
    """Build ``cls`` from a decoded JSON object, or raise one ``invalid_arguments`` error.

    ``earlier`` carries problems already found (e.g. in command-line flags) to report together.
    A number written as a string (``"5"``) is read as the number; ``warnings`` (the call's)
    gets one line for each, naming the argument as ``name: "5"`` so that a dialect's wording
    renames it (docs/internals/surfaces.md#dialect-layer).
    """
    if type(data) is not dict:
        raise ToolError(
            "invalid_arguments",
            f"arguments must be a JSON object, got {json_type_name(data)}",
            hint="send one JSON object such as {\"path\": \"src/main.py\"}",
        )
    problems = _Problems()
    problems.items.extend(earlier or [])
    built = _build(cls, data, "", problems)
    if built is None or problems.items:
        raise invalid_arguments_error(cls, problems.items)
    if warnings is not None:
        warnings.extend(problems.notes)
    return built


def invalid_arguments_error(cls: type[Struct], items: list[dict[str, Any]]) -> ToolError:
    specs = cls.fields()
    accepted = {
        name: {"type": spec.type.describe() if spec.type else "", "aliases": list(spec.aliases),
               "required": spec.required}
        for name, spec in specs.items()
    }
    messages = "; ".join(p["message"] for p in items)
    required = [n for n, s in specs.items() if s.required]
    hint = "fix every listed problem and call again"
    if required:
        hint += f"; required: {', '.join(required)}"
    return ToolError(
        "invalid_arguments",
        f"{len(items)} problem{'s' if len(items) != 1 else ''} with the arguments: {messages}",
        hint=hint,
        details={"problems": items, "accepted": accepted},
    )


# ---------------------------------------------------------------------------------------------

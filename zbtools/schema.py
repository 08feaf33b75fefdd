"""JSON Schema from the parameter declarations, and its strict-mode form.

A tool's parameters are declared once, as a ``Struct`` (``zbtools.core.call.args``); the same
declaration validates a call and, here, becomes the JSON Schema draft 2020-12 that agents see:
canonical names only, ``required``, defaults, bounds, enums and closed nested objects. How
fields map onto keywords, and how strict mode rewrites a schema, is
docs/internals/surfaces.md#schemas; what users get is docs/dialects.md#schemas-and-system-prompts.
May import ``zbtools.core`` only: the dialects are built on it, never the other way round.

* ``struct_schema``: a ``Struct`` as an object schema; ``field_schema``, ``type_schema``: one
  field, one type.
* ``strict_schema``: a schema under OpenAI's structured-outputs strict mode (``ValueError`` for a
  required free-form field, which no tool has); ``STRICT_KEYWORDS``: what that mode supports.
* ``DRAFT``: the ``$schema`` of a standalone document.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from zbtools.core.call.args import FieldSpec, Struct, TypeSpec

DRAFT = "https://json-schema.org/draft/2020-12/schema"
STRICT_KEYWORDS = {"type", "description", "properties", "required", "additionalProperties",
                   "items", "enum", "anyOf", "const"}


def _number(value: float) -> float | int:
    return int(value) if float(value).is_integer() else value


def type_schema(spec: TypeSpec, *, nullable: bool | None = None,
                output: bool = False) -> dict[str, Any]:
    """The schema of one parsed annotation; ``nullable`` overrides the annotation's ``| None``.
    ``output``: of a result (objects open, every ``| None`` admits null)."""
    null = spec.nullable if nullable is None else nullable
    kind = spec.kind
    out: dict[str, Any]
    if kind == "literal":
        choices = list(spec.choices)
        out = {}
        if all(isinstance(c, str) for c in choices):
            out["type"] = ["string", "null"] if null else "string"
        elif all(isinstance(c, int) for c in choices):
            out["type"] = ["integer", "null"] if null else "integer"
        out["enum"] = [*choices, None] if null else choices
        return out
    if kind == "struct":
        assert spec.struct is not None
        obj = struct_schema(spec.struct, closed=not output, output=output)
        return {"anyOf": [obj, {"type": "null"}]} if null else obj
    if kind == "any":
        return {}
    json_type = {"str": "string", "int": "integer", "float": "number", "bool": "boolean",
                 "list": "array", "dict": "object"}[kind]
    out = {"type": [json_type, "null"] if null else json_type}
    if kind == "list":
        assert spec.item is not None
        out["items"] = type_schema(spec.item, output=output)
    elif kind == "dict":
        assert spec.item is not None
        out["additionalProperties"] = type_schema(spec.item, output=output)
    return out


def field_schema(field: FieldSpec, *, output: bool = False) -> dict[str, Any]:
    """One field of a parameter declaration (a ``None`` default means "omit it", so null is
    advertised only where it says more) or, ``output``, of a result (null wherever allowed)."""
    assert field.type is not None
    default = None if field.required else field.make_default()
    advertise_null = field.type.nullable and (output or field.required or default is not None)
    out = type_schema(field.type, nullable=advertise_null, output=output)
    if field.help:
        out = {**out, "description": field.help} if "anyOf" not in out else {
            "description": field.help, **out}
    if not field.required and default is not None:
        out["default"] = default
    if field.minimum is not None:
        out["minimum"] = _number(field.minimum)
    if field.maximum is not None:
        out["maximum"] = _number(field.maximum)
    return out


def struct_schema(cls: type[Struct], *, wire_names: Mapping[str, str] | None = None,
                  closed: bool = True, output: bool = False) -> dict[str, Any]:
    """JSON Schema of a ``Struct`` declaration (without ``$schema``: ready for an API);
    ``output``: of a result, as ``to_json`` gives it (see ``field_schema``)."""
    wire = wire_names or {}
    properties: dict[str, Any] = {}
    required: list[str] = []
    for name, field in cls.fields().items():
        key = wire.get(name, name)
        properties[key] = field_schema(field, output=output)
        if field.required:
            required.append(key)
    out: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        out["required"] = required
    if closed:
        out["additionalProperties"] = False
    return out


# ---------------------------------------------------------------------------------------------
# OpenAI strict mode


def _free_form(schema: Mapping[str, Any]) -> bool:
    """A map or an anything: not expressible in strict mode."""
    if not any(k in schema for k in ("type", "anyOf", "enum", "const")):
        return True
    extra = schema.get("additionalProperties")
    return isinstance(extra, dict)


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    out = dict(schema)
    if "anyOf" in out:
        if {"type": "null"} not in out["anyOf"]:
            out["anyOf"] = [*out["anyOf"], {"type": "null"}]
        return out
    kind = out.get("type")
    if isinstance(kind, str):
        out["type"] = [kind, "null"]
    elif isinstance(kind, list) and "null" not in kind:
        out["type"] = [*kind, "null"]
    if "enum" in out and None not in out["enum"]:
        out["enum"] = [*out["enum"], None]
    return out


def _describe_dropped(schema: dict[str, Any]) -> dict[str, Any]:
    notes = []
    if "default" in schema and "default" not in str(schema.get("description", "")).lower():
        import json

        notes.append(f"default {json.dumps(schema['default'])}")
    if "minimum" in schema:
        notes.append(f"minimum {schema['minimum']}")
    if "maximum" in schema:
        notes.append(f"maximum {schema['maximum']}")
    out = {k: v for k, v in schema.items() if k in STRICT_KEYWORDS}
    if notes:
        text = out.get("description", "")
        out["description"] = (f"{text} ({'; '.join(notes)})" if text
                              else "; ".join(notes).capitalize())
    return out


def strict_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """Rewrite a schema for OpenAI structured outputs' strict mode (see the module docstring)."""
    out = _describe_dropped(dict(schema))
    if "anyOf" in out:
        out["anyOf"] = [strict_schema(s) for s in out["anyOf"]]
    if "items" in out:
        out["items"] = strict_schema(out["items"])
    if "properties" in out:
        required = set(out.get("required", []))
        properties: dict[str, Any] = {}
        for key, sub in out["properties"].items():
            if _free_form(sub):
                if key in required:
                    raise ValueError(f"required property {key!r} is free-form: strict mode "
                                     "cannot express it")
                continue
            converted = strict_schema(sub)
            properties[key] = converted if key in required else _nullable(converted)
        out["properties"] = properties
        out["required"] = list(properties)
        out["additionalProperties"] = False
    elif out.get("type") == "object":
        out["properties"] = {}
        out["required"] = []
        out["additionalProperties"] = False
    return out

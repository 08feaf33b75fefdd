"""Defaults filled in from a per-class table, on every parameter and result class of the
registry: ``Struct.__init__`` with fields left out against the field-by-field rule it replaced
(the same values, default objects and first complaint), and validation, which looks only at the
fields given, against its promises (problems and notes in field order whatever the order of the
arguments, every other field at its default)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zbtools.core.call.args import Struct
from zbtools.registry import all_tools

CLASSES = sorted({cls for spec in all_tools() for cls in (spec.params, spec.result)},
                 key=lambda c: f"{c.__module__}.{c.__qualname__}")


def expected(cls: type[Struct], values: dict[str, Any]) -> dict[str, Any] | str:
    """The rule, field by field: a given value, else the default, else the error message."""
    out: dict[str, Any] = {}
    for name, spec in cls.fields().items():
        if name in values:
            out[name] = values[name]
        elif spec.required:
            return f"{cls.__name__} missing {name}"
        else:
            out[name] = spec.make_default()
    unknown = sorted(set(values) - set(cls.fields()))
    return f"{cls.__name__} got unknown {unknown}" if unknown else out


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_a_struct_built_with_some_fields_is_the_field_by_field_rules(data: Any) -> None:
    cls = data.draw(st.sampled_from(CLASSES))
    names = list(cls.fields())
    chosen = data.draw(st.lists(st.sampled_from(names), unique=True)) if names else []
    values: dict[str, Any] = {name: object() for name in chosen}
    if data.draw(st.booleans()):
        values[data.draw(st.sampled_from(["zz", "unknown_field"]))] = 1
    want = expected(cls, values)
    if isinstance(want, str):
        with pytest.raises(TypeError) as error:
            cls(**values)
        assert str(error.value) == want
        return
    got = vars(cls(**values))
    assert got.keys() == want.keys()
    for name, value in want.items():
        factory = cls.fields()[name].default_factory
        if factory is not None and name not in values:
            assert got[name] == value and got[name] is not value  # a fresh one each time
        else:
            assert got[name] is value


# ---- validation: only the fields given are looked at, in field order ---------------------------

PARAMS = sorted({spec.params for spec in all_tools() if spec.params.fields()},
                key=lambda c: f"{c.__module__}.{c.__qualname__}")
VALUES = st.none() | st.booleans() | st.integers(-3, 10**6) | st.text(max_size=4) | \
    st.lists(st.integers(0, 3), max_size=2) | st.dictionaries(st.text(max_size=2),
                                                              st.integers(0, 3), max_size=1)


def outcome(cls: type[Struct], data: dict[str, Any]) -> tuple[str, Any, list[str]]:
    from zbtools.contract import ToolError
    from zbtools.core.call.args import validate

    warnings: list[str] = []
    try:
        return "ok", vars(validate(cls, data, None, warnings)), warnings
    except ToolError as error:
        return "error", error.to_json(), warnings


@settings(max_examples=400, deadline=None)
@given(data=st.data())
def test_validation_answers_whatever_the_order_of_the_arguments(data: Any) -> None:
    """The problems and notes in field order, each given value checked, the others defaulted:
    the same answer for any order of the same arguments."""
    cls = data.draw(st.sampled_from(PARAMS))
    names = list(cls.fields())
    chosen = data.draw(st.lists(st.sampled_from(names), unique=True, max_size=6))
    args = {name: data.draw(VALUES) for name in chosen}
    shuffled = dict(data.draw(st.permutations(list(args.items()))))
    first = outcome(cls, args)
    assert outcome(cls, shuffled) == first
    if first[0] == "ok":
        got = first[1]
        for name, spec in cls.fields().items():
            if name not in args:
                assert got[name] == spec.make_default()
        return
    order = {name: i for i, name in enumerate(names)}
    places = [order[p["argument"].split(".")[0].split("[")[0]]
              for p in first[1]["details"]["problems"]]
    assert places == sorted(places), first[1]["details"]["problems"]

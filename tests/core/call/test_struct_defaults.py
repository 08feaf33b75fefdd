"""``Struct.__init__`` with fields left out (defaults filled in from a per-class table) against
the field-by-field rule it replaced, on every parameter and result class of the registry: the
same values, the same default objects, the same first complaint."""

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

"""The hot-path JSON codec behaves exactly like the standard library, strictness aside."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zbtools.core.call.fastjson import dumps_ascii, loads_strict


def json_values(*, finite: bool) -> st.SearchStrategy[Any]:
    floats = st.floats(allow_nan=False, allow_infinity=not finite)
    scalars = st.none() | st.booleans() | st.integers() | floats | st.text()
    return st.recursive(
        scalars,
        lambda children: st.lists(children, max_size=5)
        | st.dictionaries(st.text(max_size=8), children, max_size=5),
        max_leaves=30,
    )


values = json_values(finite=False)
strict_values = json_values(finite=True)  # Infinity is not JSON: strict parsing refuses it


@settings(max_examples=300, deadline=None)
@given(values)
def test_dumps_matches_json_dumps_with_ensure_ascii(value: Any) -> None:
    assert dumps_ascii(value) == json.dumps(value, ensure_ascii=True)


@settings(max_examples=300, deadline=None)
@given(strict_values, st.sampled_from(["", " ", "\n", " \t\r\n"]))
def test_loads_matches_json_loads(value: Any, padding: str) -> None:
    text = padding + json.dumps(value, ensure_ascii=False) + padding
    assert loads_strict(text) == json.loads(text)


@pytest.mark.parametrize("text", [
    "", "   ", "{", '{"a": 1} x', '{"a": 1}{}', "NaN", '{"a": Infinity}', '{"a": -Infinity}',
    '{"a": 1, "a": 2}', "[1,]", "{'a': 1}", '"\\x"', '"tab\tinside"',
])
def test_malformed_or_non_strict_json_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        loads_strict(text)


def test_output_is_ascii_and_escapes_line_separators() -> None:
    out = dumps_ascii({"k": "caf\u00e9\u2028\x1b\n"})
    assert out.isascii()
    assert "\n" not in out
    assert json.loads(out) == {"k": "caf\u00e9\u2028\x1b\n"}


@pytest.mark.parametrize("text", ["1e400", "-1e400", "[1.5e309]", '{"a": 9e999}'])
def test_a_number_too_large_for_a_float_is_refused_not_read_as_infinity(text: str) -> None:
    with pytest.raises(ValueError, match="too large"):
        loads_strict(text)


def test_large_but_finite_numbers_and_big_integers_still_parse() -> None:
    assert loads_strict("[1.7e308, 10000000000000000000000000000000000]") == [
        1.7e308, 10**34]


def test_an_out_of_range_limit_setting_says_how_to_fix_it(tmp_path: Any) -> None:
    from zbtools.contract import ToolError
    from zbtools.core.call.config import load_limits

    with pytest.raises(ToolError) as caught:
        load_limits({"ZBTOOLS_MAX_REQUEST_BYTES": "10"}, {})
    assert caught.value.code == "usage_error"
    assert "the default is 16777216" in (caught.value.hint or "")

"""``Paused`` (zbtools/core/call/collector.py): the cyclic collector is off inside, and after
it as it was before, also when the body raises or another ``Paused`` is nested inside."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from zbtools.core.call.collector import Paused


@pytest.fixture(autouse=True)
def collector_restored() -> Iterator[None]:
    was = gc.isenabled()
    yield
    (gc.enable if was else gc.disable)()


@pytest.mark.parametrize("on", [True, False])
def test_the_collector_is_off_inside_and_as_it_was_after(on: bool) -> None:
    (gc.enable if on else gc.disable)()
    with Paused():
        assert not gc.isenabled()
        with Paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer one still holds it
    assert gc.isenabled() is on


def test_an_error_inside_still_puts_it_back() -> None:
    gc.enable()
    with pytest.raises(ValueError), Paused():
        raise ValueError("boom")
    assert gc.isenabled()

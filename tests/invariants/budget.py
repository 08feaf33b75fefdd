"""How long an invariant test searches: a fixed number of inputs in CI, minutes in the long mode.

An ordinary run draws ``examples`` inputs per test (chosen so the invariant tests together take
about two minutes). With ``ZBTOOLS_INVARIANT_MINUTES=N`` in the environment, each invariant test
instead keeps drawing fresh inputs, in rounds of ``examples``, until N minutes have passed; a
failure stops it at once and hypothesis shrinks it as usual. The variable is read once, when the
module is imported (the suite's autouse fixture clears ``ZBTOOLS_*`` variables inside tests, not
before collection).

``invariant(examples=...)`` wraps a ``@given`` test; ``run_for_budget(fn)`` repeats any other
search (a stateful machine, a loop of random operations) the same way.
"""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Callable
from typing import Any, TypeVar

from hypothesis import HealthCheck, settings

MINUTES = float(os.environ.get("ZBTOOLS_INVARIANT_MINUTES", "0") or "0")
LONG = MINUTES > 0

F = TypeVar("F", bound=Callable[..., Any])


def invariant_settings(examples: int, **overrides: Any) -> settings:
    """Hypothesis settings of one invariant test: no deadline (CI machines are noisy)."""
    options: dict[str, Any] = {
        "max_examples": examples,
        "deadline": None,
        "suppress_health_check": [HealthCheck.function_scoped_fixture,
                                  HealthCheck.too_slow, HealthCheck.data_too_large],
    }
    options.update(overrides)
    return settings(**options)


def run_for_budget(round_: Callable[[], None]) -> None:
    """Run ``round_`` once, or in the long mode again and again until the minutes are spent."""
    if not LONG:
        round_()
        return
    end = time.monotonic() + MINUTES * 60
    while True:
        round_()
        if time.monotonic() >= end:
            return


def invariant(examples: int, **overrides: Any) -> Callable[[F], F]:
    """Decorate a ``@given`` test (put it above ``@given``): its settings and its budget."""

    def decorate(test: F) -> F:
        searched = invariant_settings(examples, **overrides)(test)
        if not LONG:
            return searched

        @functools.wraps(searched)
        def repeated(*args: Any, **kwargs: Any) -> None:
            run_for_budget(lambda: searched(*args, **kwargs))

        return repeated  # type: ignore[return-value]

    return decorate


def planted_bug_is_caught(search: Callable[[], None]) -> BaseException:
    """Run ``search`` with a bug planted by the caller; it must fail. Returns what it raised.

    Each invariant module keeps one such mutation check, so a property that cannot fail (an
    oracle that agrees with anything, a generator that never reaches the case) is itself caught.
    """
    try:
        search()
    except Exception as failure:  # hypothesis re-raises the shrunk failure
        return failure
    raise AssertionError("the planted bug went unnoticed: the invariant checks nothing here")

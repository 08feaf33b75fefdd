"""The cyclic garbage collector paused around work that makes objects by the thousand and keeps
them: a search's hits, a result's matches. A collection then would scan them all, again and
again, to free nothing (benchmarks/README.md#figures-behind-the-code).

``Paused()`` is a context manager: the collector is off inside it, and back on after if it
was on before; nested uses keep it off until the outermost ends.
"""

from __future__ import annotations

import gc

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import TracebackType


class Paused:
    """``with Paused(): ...`` runs its body with the cyclic collector off."""

    __slots__ = ("was_on",)

    def __init__(self) -> None:
        self.was_on = False

    def __enter__(self) -> None:
        self.was_on = gc.isenabled()
        if self.was_on:
            gc.disable()

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        if self.was_on:
            gc.enable()

"""The engine's refusal, ``MatchError``, and how much file text a refusal quotes.

Every part refuses by raising ``MatchError`` (``diagnostics.diagnose`` builds and returns one)
with a stable ``code``, a ``message`` written for the model, a ``hint`` saying what to do next
and structured ``details``. The codes: ``no_match``, ``ambiguous_match``, ``ambiguous_scope``,
``stale_anchor``, ``invalid_arguments`` (a malformed anchor), ``edit_conflict`` (the similarity
tier's merge), ``no_change``, ``placeholder_in_new`` and ``overlapping_edits``. Lines quoted in
messages and details are cut at ``SNIPPET_CHARS`` characters.

The bottom of ``matching``: imports nothing (the other parts import it).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

SNIPPET_CHARS = 120


class MatchError(Exception):
    """A refusal with a stable code, a message for the model, a hint and details."""

    def __init__(self, code: str, message: str, hint: str = "",
                 details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.hint = hint
        self.details = details or {}

"""The line keys of tiers T1-T5: what "equal" means for two lines at each tier.

Owns ``TIERS`` (the five whole-text tiers, strictest first) and ``LINE_KEYS``, one key function
per tier: exact, trailing spaces and tabs stripped (``rstrip_key``), both ends stripped
(``strip_key``; the depth is compared apart), inner runs of whitespace collapsed
(``collapse_key``), and typography mapped to ASCII after NFC (``typography_key``, through
``TYPOGRAPHY``: curly quotes, dashes, odd spaces, the ellipsis). Two lines are equal at a tier
when their keys are. Nothing here refuses.

The map::

    TIERS, LINE_KEYS             the tiers, and each one's key
    TYPOGRAPHY                   the characters T5 maps to ASCII (the merge writes them back)
    QUOTES                       the curly quotes the ``quotes`` tier folds
    rstrip_key, strip_key        T2, T3
    collapse_key, typography_key T4, T5

The bottom of ``matching``: imports no other part. ``unicodedata`` is imported on first use.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable


TIERS = ("exact", "trailing_whitespace", "indentation", "inner_whitespace", "typography")


# T5 maps these to ASCII; the merge writes the file's own back into lines the caller left alone.
TYPOGRAPHY = str.maketrans({
    "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u2032": "'",
    "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"', "\u2033": '"',
    "\u00ab": '"', "\u00bb": '"',
    "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-", "\u2015": "-",
    "\u2212": "-",
    "\u00a0": " ", "\u2002": " ", "\u2003": " ", "\u2004": " ", "\u2005": " ", "\u2006": " ",
    "\u2007": " ", "\u2008": " ", "\u2009": " ", "\u200a": " ", "\u202f": " ", "\u205f": " ",
    "\u3000": " ", "\u200b": "", "\ufeff": "",
    "\u2026": "...",
})


# The ``quotes`` tier folds only these four, as Claude Code's Edit does (docs/dialects.md#tiers).
QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})


def rstrip_key(line: str) -> str:
    """T2: trailing spaces and tabs removed."""
    return line.rstrip(" \t")


def strip_key(line: str) -> str:
    """T3: leading and trailing spaces and tabs removed (the depth is compared separately)."""
    return line.strip(" \t")


def collapse_key(line: str) -> str:
    """T4: every run of whitespace one space, none at either end."""
    return " ".join(line.split())


def typography_key(line: str) -> str:
    """T5: the T4 key after NFC and mapping curly quotes, dashes, odd spaces to ASCII."""
    if line.isascii():  # nothing to normalise or map: the inner-whitespace key
        return collapse_key(line)
    import unicodedata

    return collapse_key(unicodedata.normalize("NFC", line).translate(TYPOGRAPHY))


LINE_KEYS: dict[str, Callable[[str], str]] = {
    "exact": lambda line: line,
    "trailing_whitespace": rstrip_key,
    "indentation": strip_key,
    "inner_whitespace": collapse_key,
    "typography": typography_key,
}

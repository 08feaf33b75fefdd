"""JSON for the hot path, straight from CPython's ``_json`` accelerator.

``import json`` pulls in ``re`` (``json.decoder`` imports it, and it imports ``enum``,
``functools`` and the regex compiler): a quarter of a cold call's budget
(benchmarks/README.md#figures-behind-the-code). The C scanner and
encoder that ``json`` itself uses live in ``_json`` and need none of that, so this module drives
them directly with exactly the settings zbtools wants: strict parsing that rejects ``NaN``,
``Infinity`` and duplicate keys, and ASCII-only output (``ensure_ascii``) so that control
characters and U+2028 can never break a line-oriented reader.

Results are identical to ``json.loads``/``json.dumps(ensure_ascii=True)`` (a property test
checks this). An ``Encoded`` value is JSON text made elsewhere (``encode_str`` for its
strings), placed as it is: a list of thousands of flat entries is several times cheaper
written with one f-string each than built as dicts and encoded
(docs/internals/performance.md#direct-json). Where ``_json`` is missing or its interface
differs (another interpreter), the standard ``json`` module is used instead. Error paths may
import ``json.decoder`` (the C scanner raises its ``JSONDecodeError``), which is fine: they are
not the hot path.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

_WHITESPACE = " \t\n\r"


class _ScannerContext:
    """The attributes ``_json.make_scanner`` reads from a ``JSONDecoder``."""

    def __init__(self, object_pairs_hook: Callable[[list[tuple[str, Any]]], Any] | None,
                 parse_constant: Callable[[str], Any]) -> None:
        self.strict = True
        self.object_hook = None
        self.object_pairs_hook = object_pairs_hook
        self.parse_float = _finite_float
        self.parse_int = int
        self.parse_constant = parse_constant
        self.memo: dict[str, str] = {}


def _finite_float(text: str) -> float:
    """A JSON number as a float; one too large for a float (``1e400``) is refused rather than
    read as infinity, which no JSON output could carry back."""
    value = float(text)
    if value - value != 0:  # inf or -inf (NaN cannot come from a JSON number)
        raise ValueError(f"the number {text[:40]} is too large")
    return value


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _refuse_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"duplicate key {key!r}")
        out[key] = value
    return out


class Encoded:
    """JSON text ``dumps_ascii`` places as it is (it must be valid, ASCII-only JSON, written
    with the separators ``", "`` and ``": "``, as ``dumps_ascii`` writes it)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


class _HoldsEncoded(Exception):
    pass


def _refuse_unserializable(value: Any) -> Any:
    if isinstance(value, Encoded):
        raise _HoldsEncoded
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


# what an Encoded value is first written as (then replaced by its text); a string of the data
# that equals it is caught by counting, and another mark is tried
_MARK = "\0zbtools-encoded{}\0"
_MARK_JSON = '"\\u0000zbtools-encoded{}\\u0000"'


def _expanded(value: Any) -> Any:
    """``value`` with each ``Encoded`` parsed back into plain values (other interpreters)."""
    if isinstance(value, Encoded):
        import json

        return json.loads(value.text)  # (Infinity and NaN as dumps_ascii writes them)
    if isinstance(value, dict):
        return {k: _expanded(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_expanded(v) for v in value]
    return value


_scan: Callable[[str, int], tuple[Any, int]] | None = None
_encode: Callable[[Any, int], list[str]] | None = None
try:
    import _json

    _scan = _json.make_scanner(
        _ScannerContext(_refuse_duplicates, _refuse_constant))  # type: ignore[arg-type]
    _encode = _json.make_encoder(None, _refuse_unserializable, _json.encode_basestring_ascii,
                                 None, ": ", ", ", False, False, True)
    encode_str: Callable[[str], str] = _json.encode_basestring_ascii
except (ImportError, AttributeError, TypeError):  # pragma: no cover - other interpreters
    _scan = _encode = None

    def encode_str(text: str) -> str:
        """A string as ``dumps_ascii`` writes it (quotes included)."""
        return dumps_ascii(text)


def loads_strict(text: str) -> Any:
    """Parse one JSON document; ``ValueError`` on malformed text, NaN or duplicate keys."""
    if _scan is None:  # pragma: no cover - other interpreters
        import json

        return json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float,
                          object_pairs_hook=_refuse_duplicates)
    start = len(text) - len(text.lstrip(_WHITESPACE))
    try:
        value, end = _scan(text, start)
    except StopIteration as stop:
        raise ValueError(f"Expecting value: char {stop.value}") from None
    except SystemError:
        # _json reports a syntax error through json.decoder.JSONDecodeError, which it looks up
        # in sys.modules without importing it: on the fast path it is not there yet. Import it
        # (only now, on malformed input) and scan again to get the real error.
        import json.decoder

        value, end = _scan(text, start)
    rest = text[end:]
    if rest.strip(_WHITESPACE):
        raise ValueError(f"Extra data: char {end}")
    return value


def dumps_ascii(value: Any) -> str:
    """``json.dumps(value, ensure_ascii=True)`` (NaN and Infinity written as JavaScript does)."""
    if _encode is None:  # pragma: no cover - other interpreters
        import json

        return json.dumps(_expanded(value), ensure_ascii=True)
    try:
        return "".join(_encode(value, 0))
    except _HoldsEncoded:
        return _dumps_spliced(value)


def _dumps_spliced(value: Any) -> str:
    """``dumps_ascii`` of a value holding ``Encoded`` texts: each written as a mark, then the
    marks replaced by the texts."""
    attempt = 0
    while True:
        texts, pieces = _marked(value, attempt)
        if len(pieces) == len(texts) + 1:
            break
        attempt += 1  # the data holds this mark itself
    out = [pieces[0]]
    for text, piece in zip(texts, pieces[1:], strict=True):
        out += (text, piece)
    return "".join(out)


def _marked(value: Any, attempt: int) -> tuple[list[str], list[str]]:
    """The Encoded texts of ``value`` in order, and its JSON cut at their marks."""
    import _json

    texts: list[str] = []
    marked = _MARK.format(attempt or "")

    def mark(obj: Any) -> Any:
        if isinstance(obj, Encoded):
            texts.append(obj.text)
            return marked
        return _refuse_unserializable(obj)

    encode = _json.make_encoder(None, mark, _json.encode_basestring_ascii, None, ": ", ", ",
                                False, False, True)
    return texts, "".join(encode(value, 0)).split(_MARK_JSON.format(attempt or ""))

"""Bytes to text and back, losslessly: BOMs, the binary rule, encodings and newline styles.

A file's bytes are decoded in ripgrep's order: a BOM (UTF-8, UTF-32 before UTF-16), else a NUL
byte in the first 8 KiB means binary (``binary_file``), else strict UTF-8, else a guess that is
accepted only if it round-trips the bytes exactly, else UTF-8 with ``surrogateescape`` (lossless
for editing; shown with U+FFFD and ``invalid_utf8: true``). There is no guess for bytes that are
mostly well-formed UTF-8 (a UTF-8 file with a few bad bytes); else the guess is Windows-1252
when the bytes read as Western text in it (the common legacy case, which charset-normalizer often
misreads in short files: "café" as Urdu cp1006), else charset-normalizer's best code page.
``Decoded`` keeps what is needed to encode edited text back the same way.

Map: ``decode`` and ``Decoded``; ``sniff_bom``, ``looks_binary``, ``is_utf8``; newline styles
(``newline_style``, ``dominant_newline``, ``apply_newline``).
"""

from __future__ import annotations

import os

from zbtools.contract import ToolError

BINARY_SNIFF_BYTES = 8192

BOMS: tuple[tuple[bytes, str], ...] = (
    (b"\xef\xbb\xbf", "utf-8"),
    (b"\xff\xfe\x00\x00", "utf-32-le"),
    (b"\x00\x00\xfe\xff", "utf-32-be"),
    (b"\xff\xfe", "utf-16-le"),
    (b"\xfe\xff", "utf-16-be"),
)


def sniff_bom(head: bytes) -> tuple[str, bytes] | None:
    for bom, encoding in BOMS:
        if head.startswith(bom):
            return encoding, bom
    return None


def looks_binary(head: bytes) -> bool:
    """ripgrep's rule: binary iff a NUL byte appears (we look at the first 8 KiB)."""
    return head.find(b"\x00", 0, BINARY_SNIFF_BYTES) != -1


def newline_style(data: bytes | str) -> str:
    """``lf``, ``crlf``, ``cr``, ``mixed`` or ``none`` for bytes or text."""
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    crlf = data.count(b"\r\n")
    lf = data.count(b"\n") - crlf
    cr = data.count(b"\r") - crlf
    kinds = [k for k, n in (("crlf", crlf), ("lf", lf), ("cr", cr)) if n]
    if not kinds:
        return "none"
    return kinds[0] if len(kinds) == 1 else "mixed"


def dominant_newline(data: bytes) -> str:
    """The newline new lines should take: the most common style (ties and none: LF)."""
    crlf = data.count(b"\r\n")
    lf = data.count(b"\n") - crlf
    return "\r\n" if crlf > lf else "\n"


class Decoded:
    """Text decoded from bytes, with everything needed to encode it back identically."""

    __slots__ = ("_newline", "_raw", "bom", "encoding", "invalid_utf8", "text")

    def __init__(self, text: str, encoding: str, bom: bytes, newline: str | None,
                 invalid_utf8: bool, raw: bytes | None = None) -> None:
        self.text = text
        self.encoding = encoding  # a Python codec name
        self.bom = bom
        self._newline = newline  # lf crlf cr mixed none; None: from ``raw`` when asked
        self._raw = raw
        self.invalid_utf8 = invalid_utf8  # text holds surrogate escapes of undecodable bytes

    @property
    def newline(self) -> str:
        """``lf``, ``crlf``, ``cr``, ``mixed`` or ``none`` (counted on first use: three passes
        over the file that an edit does not need)."""
        if self._newline is None:
            self._newline = newline_style(self._raw if self._raw is not None else self.text)
        return self._newline

    @property
    def errors(self) -> str:
        return "surrogateescape" if self.invalid_utf8 else "strict"

    def encode(self, text: str, *, with_bom: bool = True) -> bytes:
        """Encode ``text`` the way the original was, or raise ``encoding_error``;
        ``with_bom=False``: a part of the text after its start."""
        try:
            encoded = text.encode(self.encoding, self.errors)
            return self.bom + encoded if with_bom and self.bom else encoded
        except UnicodeEncodeError as exc:
            bad = text[exc.start:exc.end]
            raise ToolError(
                "encoding_error",
                f"the text contains {bad!r}, which the file's encoding {self.encoding} cannot "
                "represent",
                hint="use only characters the file's encoding supports, or convert the file to "
                "UTF-8 first (write_file with the full content)",
                details={"encoding": self.encoding, "character": bad},
            ) from exc

    def display_text(self) -> str:
        """The text for showing: undecodable bytes become U+FFFD."""
        if not self.invalid_utf8:
            return self.text
        return self.text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")

    @property
    def encoding_label(self) -> str:
        return encoding_label(self.encoding, bool(self.bom))


def decode(data: bytes, *, shown: str = "") -> Decoded:
    """Decode file bytes per the module rules; raise ``binary_file`` for binary data."""
    bom = sniff_bom(data[:4])
    if bom is not None:
        encoding, bom_bytes = bom
        body = data[len(bom_bytes):]
        try:
            text = body.decode(encoding)
        except UnicodeDecodeError:
            if encoding == "utf-8":
                text = body.decode("utf-8", "surrogateescape")
                return Decoded(text, "utf-8", bom_bytes, newline_style(text), True)
            # Not valid UTF-16/32 after all: the "BOM" was the start of 8-bit text or binary
            # data (e.g. Latin-1 "\xff\xfe..."); detect it like a file without a BOM.
        else:
            return Decoded(text, encoding, bom_bytes, newline_style(text), False)
    if looks_binary(data):
        raise ToolError("binary_file", f"{shown}: is a binary file (it contains NUL bytes)",
                        hint="text tools do not read binary files; use get_file_info for its "
                        "size and type", details={"path": shown, "size": len(data)})
    try:
        return Decoded(data.decode("utf-8"), "utf-8", b"", None, False, raw=data)
    except UnicodeDecodeError:
        pass
    guess = _guess_encoding(data)
    if guess is not None:
        try:
            text = data.decode(guess)
            if text.encode(guess) == data:
                return Decoded(text, guess, b"", newline_style(text), False)
        except (UnicodeError, LookupError):
            pass
    return Decoded(data.decode("utf-8", "surrogateescape"), "utf-8", b"", newline_style(data),
                   True)


UTF8_CHECK_CHUNK = 16384


def is_utf8(data: bytes) -> bool:
    """Whether ``data`` decodes as strict UTF-8 (exactly when ``data.decode("utf-8")`` would
    succeed), without building the text: ASCII chunks are skipped (``bytes.isascii``), the
    others go through an incremental decoder (which carries a sequence cut at a chunk's end
    over to the next): for source code, which is mostly ASCII, a fraction of the cost of
    decoding it whole (benchmarks/README.md#figures-behind-the-code)."""
    if data.isascii():
        return True
    import codecs  # loaded at start-up by the encodings package

    decoder = codecs.getincrementaldecoder("utf-8")()
    pending = False
    try:
        for at in range(0, len(data), UTF8_CHECK_CHUNK):
            chunk = data[at:at + UTF8_CHECK_CHUNK]
            if pending or not chunk.isascii():
                decoder.decode(chunk)
                pending = bool(decoder.getstate()[0])
        decoder.decode(b"", True)
    except UnicodeDecodeError:
        return False
    return True


def encoding_label(encoding: str, bom: bool = False) -> str:
    """How results name an encoding: ``utf-8``, ``utf-8-bom``, ``cp1252``, ``utf-16-le``."""
    label = encoding.replace("_", "-").lower()
    return f"{label}-bom" if bom and label == "utf-8" else label


SAMPLE_BYTES = 1 << 20  # what the encoding of a file too big to decode whole is judged on


def sample_encoding(fd: int) -> str | None:
    """The encoding of the open file ``fd``, too big to decode whole and without a BOM, judged
    on its first MiB as ``decode`` judges a whole file (``_guess_encoding`` looks at as much):
    None for UTF-8, valid or mostly, else the encoding it most likely is."""
    sample = os.pread(fd, SAMPLE_BYTES, 0)
    if len(sample) == SAMPLE_BYTES:
        sample = trim_partial_utf8(sample)  # a character the MiB cuts is no error
    if is_utf8(sample):
        return None
    return _guess_encoding(sample)


def trim_partial_utf8(data: bytes) -> bytes:
    """``data`` without a UTF-8 sequence cut short at its end."""
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte < 0x80:  # ASCII: nothing is cut
            return data
        if byte >= 0xC0:  # a lead byte: does its sequence fit in what follows?
            need = 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
            return data if back >= need else data[:-back]
    return data


def _guess_encoding(data: bytes) -> str | None:
    """The likely encoding of bytes that are neither UTF-8 nor marked by a BOM, or ``None``."""
    sample = data[:SAMPLE_BYTES]
    import re  # lazy: only non-UTF-8 files get here

    high = len(sample) - len(sample.translate(None, bytes(range(0x80, 0x100))))
    in_utf8 = sum(len(m) for m in re.findall(_UTF8_SEQUENCE, sample))
    if in_utf8 * 2 >= high:
        return None  # mostly well-formed UTF-8: a UTF-8 file with a few bad bytes
    if _reads_as_western(sample):
        return "cp1252"
    try:
        from charset_normalizer import from_bytes  # lazy: ~15 ms, only for non-UTF-8 files
    except ImportError:  # pragma: no cover - declared dependency
        return None
    for match in from_bytes(sample):
        encoding = str(match.encoding)
        # UTF-16/32 without a BOM and without NUL bytes is implausible; ASCII/UTF-8 failed already
        if encoding not in ("ascii", "utf_8") and not encoding.startswith(("utf_16", "utf_32")):
            return encoding
    return None


_UTF8_SEQUENCE = rb"[\xc2-\xdf][\x80-\xbf]|[\xe0-\xef][\x80-\xbf]{2}|[\xf0-\xf4][\x80-\xbf]{3}"

# Non-ASCII punctuation that may stand between two letters in Western text: don't, x·y, a–b.
_INWORD_MARKS = frozenset("\u2019\u2018\u00b7\u2013\u2014")


def _reads_as_western(sample: bytes) -> bool:
    """Whether ``sample`` decodes in Windows-1252 to plausible Western text.

    Single-byte Cyrillic, Greek, Hebrew or Arabic text decoded this way is mostly accented
    letters; Central European code pages and multi-byte CJK encodings put symbols inside words
    (cp1250 "Zażółć" reads "Za¿ó³æ"). Either makes the sample implausible. The letters of the
    first 64 KiB are examined.
    """
    try:
        text = sample.decode("cp1252")
    except UnicodeDecodeError:
        return False
    letters = accented = 0
    previous_letter = False
    mark_after_letter = False
    for char in text[:65536]:
        if char.isalpha():
            letters += 1
            if not char.isascii():
                accented += 1
            if mark_after_letter:
                return False  # a symbol between two letters
            previous_letter = True
            mark_after_letter = False
        else:
            mark_after_letter = (previous_letter and not char.isascii()
                                 and char not in _INWORD_MARKS)
            previous_letter = False
    return accented * 2 <= letters


def apply_newline(text: str, newline: str) -> str:
    """Give text with bare LF line ends the requested style; text already using CR is kept."""
    if newline == "\r\n" and "\r" not in text and "\n" in text:
        return text.replace("\n", "\r\n")
    return text

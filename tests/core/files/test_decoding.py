"""Decoding file bytes into text without losing a byte (docs/contract.md#safety-and-fidelity).

``zbtools.core.files.decoding``: BOM sniffing, the binary rule, newline styles,
``decode`` with its encoding detection, and the promise that an unedited decoded file encodes back
to exactly the bytes it came from.
"""

from __future__ import annotations

import codecs

import pytest
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st

from zbtools.contract import ToolError
from zbtools.core.files.decoding import (
    BINARY_SNIFF_BYTES,
    Decoded,
    decode,
    looks_binary,
    newline_style,
    sniff_bom,
)

# ---------------------------------------------------------------------------------------------
# sniff_bom


@pytest.mark.parametrize(("head", "encoding", "bom"), [
    (codecs.BOM_UTF8 + b"x", "utf-8", codecs.BOM_UTF8),
    (codecs.BOM_UTF16_LE + b"x\x00", "utf-16-le", codecs.BOM_UTF16_LE),
    (codecs.BOM_UTF16_BE + b"\x00x", "utf-16-be", codecs.BOM_UTF16_BE),
    (codecs.BOM_UTF32_LE + b"x\x00\x00\x00", "utf-32-le", codecs.BOM_UTF32_LE),
    (codecs.BOM_UTF32_BE + b"\x00\x00\x00x", "utf-32-be", codecs.BOM_UTF32_BE),
])
def test_sniff_bom_names_the_encoding_and_the_mark(head: bytes, encoding: str, bom: bytes) -> None:
    assert sniff_bom(head) == (encoding, bom)


def test_sniff_bom_prefers_utf32_le_over_the_utf16_le_prefix_it_shares() -> None:
    assert sniff_bom(codecs.BOM_UTF32_LE) == ("utf-32-le", codecs.BOM_UTF32_LE)


@pytest.mark.parametrize("head", [b"", b"plain", b"\xef\xbb", b"\xfe", b"\x00\x00\xfe"])
def test_sniff_bom_finds_nothing_without_a_complete_mark(head: bytes) -> None:
    assert sniff_bom(head) is None


# ---------------------------------------------------------------------------------------------
# looks_binary


def test_a_nul_byte_in_the_first_8_kib_means_binary() -> None:
    assert looks_binary(b"text\x00more")
    assert looks_binary(b"a" * (BINARY_SNIFF_BYTES - 1) + b"\x00")


def test_a_nul_byte_after_the_first_8_kib_does_not_make_a_file_binary() -> None:
    assert not looks_binary(b"a" * BINARY_SNIFF_BYTES + b"\x00")


def test_text_without_nul_is_not_binary() -> None:
    assert not looks_binary("héllo\r\n\t\x1b[0m\x7f".encode())


# ---------------------------------------------------------------------------------------------
# newline_style


@pytest.mark.parametrize(("data", "style"), [
    ("", "none"),
    ("no newline at all", "none"),
    ("a\nb\n", "lf"),
    ("a\r\nb\r\n", "crlf"),
    ("a\rb\r", "cr"),
    ("a\r\nb\n", "mixed"),
    ("a\rb\n", "mixed"),
    ("a\r\nb\r", "mixed"),
    ("a\r\nb", "crlf"),
])
def test_newline_style_classifies_text_and_bytes_alike(data: str, style: str) -> None:
    assert newline_style(data) == style
    assert newline_style(data.encode()) == style


def test_newline_style_accepts_text_holding_surrogate_escapes() -> None:
    text = b"bad \xff\r\n".decode("utf-8", "surrogateescape")
    assert newline_style(text) == "crlf"


# ---------------------------------------------------------------------------------------------
# decode: the encodings


def test_plain_utf8_decodes_strictly_with_no_bom() -> None:
    decoded = decode("héllo wörld\n".encode())
    assert decoded.text == "héllo wörld\n"
    assert decoded.encoding_label == "utf-8"
    assert decoded.bom == b""
    assert decoded.newline == "lf"
    assert decoded.invalid_utf8 is False


def test_utf8_bom_is_kept_apart_from_the_text_and_labelled_utf8_bom() -> None:
    data = codecs.BOM_UTF8 + "café\r\n".encode()
    decoded = decode(data)
    assert decoded.text == "café\r\n"
    assert decoded.encoding_label == "utf-8-bom"
    assert decoded.bom == codecs.BOM_UTF8
    assert decoded.newline == "crlf"
    assert decoded.encode(decoded.text) == data


@pytest.mark.parametrize(("codec", "label"), [
    ("utf-16-le", "utf-16-le"), ("utf-16-be", "utf-16-be"),
    ("utf-32-le", "utf-32-le"), ("utf-32-be", "utf-32-be"),
])
def test_wide_encodings_with_a_bom_decode_and_round_trip(codec: str, label: str) -> None:
    bom = {"utf-16-le": codecs.BOM_UTF16_LE, "utf-16-be": codecs.BOM_UTF16_BE,
           "utf-32-le": codecs.BOM_UTF32_LE, "utf-32-be": codecs.BOM_UTF32_BE}[codec]
    text = "line one €\r\nline two 😀\r\n"
    data = bom + text.encode(codec)
    decoded = decode(data)
    assert decoded.text == text
    assert decoded.encoding_label == label
    assert decoded.newline == "crlf"  # counted in the text, not in the raw wide bytes
    assert decoded.invalid_utf8 is False
    assert decoded.encode(decoded.text) == data


def test_a_utf16_bom_over_bytes_that_are_not_utf16_is_read_as_text_without_a_bom() -> None:
    data = codecs.BOM_UTF16_LE + b"odd"  # Latin-1 "\xff\xfeodd", not UTF-16 at all
    decoded = decode(data, shown="x.txt")
    assert decoded.bom == b""
    assert not decoded.encoding.startswith("utf-16")
    assert decoded.encode(decoded.text) == data


def test_a_utf8_bom_over_invalid_utf8_keeps_both_bom_and_bytes() -> None:
    data = codecs.BOM_UTF8 + b"ok \xff\xfe here\n"
    decoded = decode(data)
    assert decoded.invalid_utf8 is True
    assert decoded.encoding_label == "utf-8-bom"
    assert decoded.display_text() == "ok \ufffd\ufffd here\n"
    assert decoded.encode(decoded.text) == data


def test_nul_bytes_without_a_bom_are_refused_as_binary() -> None:
    with pytest.raises(ToolError) as caught:
        decode(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", shown="img.png")
    assert caught.value.code == "binary_file"
    assert caught.value.details == {"path": "img.png", "size": 16}


def test_latin1_french_text_is_detected_as_cp1252_and_round_trips() -> None:
    text = "Le café est très bon. Voilà, à bientôt, naïve résumé.\nDeuxième: élève, Noël.\n"
    data = text.encode("latin-1")
    decoded = decode(data)
    assert decoded.encoding == "cp1252"
    assert decoded.invalid_utf8 is False
    assert decoded.text == text
    assert decoded.encode(decoded.text) == data


@pytest.mark.parametrize("text", [
    "café\n",  # charset-normalizer alone reads this as Urdu (cp1006)
    "Grüße aus München\n",
    "Ñandú año\n",
    "price: 5€ — “quoted” ‘x’, don’t\n",
])
def test_short_windows_1252_texts_are_read_as_western_text(text: str) -> None:
    data = text.encode("cp1252")
    decoded = decode(data)
    assert (decoded.encoding, decoded.text) == ("cp1252", text)
    assert decoded.encode(decoded.text) == data


@pytest.mark.parametrize(("text", "codec"), [
    ("Привет, как дела? Это тестовый текст на русском языке.\n", "cp1251"),
    ("Zażółć gęślą jaźń, część\n", "cp1250"),
    ("これは日本語のテキストです。\n", "shift_jis"),
])
def test_other_legacy_code_pages_are_not_taken_for_windows_1252(text: str, codec: str) -> None:
    data = text.encode(codec)
    decoded = decode(data)
    assert decoded.encoding != "cp1252"
    assert decoded.encode(decoded.text) == data


def test_invalid_utf8_in_a_utf8_file_is_escaped_not_guessed() -> None:
    data = "naïve café, München\n".encode() + b"stray \xff byte\n"
    decoded = decode(data)
    assert decoded.encoding == "utf-8"
    assert decoded.invalid_utf8 is True
    assert decoded.display_text() == "naïve café, München\nstray \ufffd byte\n"
    assert decoded.encode(decoded.text) == data


def test_editing_an_invalid_utf8_file_keeps_the_undecodable_bytes() -> None:
    data = b"keep \x80\x81 this\nchange me\n"
    decoded = Decoded(data.decode("utf-8", "surrogateescape"), "utf-8", b"", "lf", True)
    edited = decoded.text.replace("change me", "changed")
    assert decoded.encode(edited) == b"keep \x80\x81 this\nchanged\n"


def test_text_the_file_encoding_cannot_hold_is_an_encoding_error() -> None:
    decoded = decode("café\n".encode("cp1252"))
    with pytest.raises(ToolError) as caught:
        decoded.encode("日本\n")
    assert caught.value.code == "encoding_error"
    assert caught.value.details["encoding"] == "cp1252"
    assert caught.value.details["character"] == "日本"


def test_decoding_empty_bytes_gives_empty_utf8_text() -> None:
    decoded = decode(b"")
    assert (decoded.text, decoded.encoding_label, decoded.newline) == ("", "utf-8", "none")
    assert decoded.encode("") == b""


# ---------------------------------------------------------------------------------------------
# Property: write-back of an unedited decoded file is byte-identical

PIECES: list[bytes] = [
    b"a", b"Z", b"0", b" ", b"\t", b"{", b"#", b"\n", b"\r", b"\r\n", b"\n\n",
    "é".encode(), "€".encode(), "中".encode(), "😀".encode(), "\u2028".encode(),
    b"\xe9", b"\xfc", b"\x80", b"\x81", b"\x9d", b"\xff", b"\xfe", b"\xc3", b"\xe2\x82",
    b"\xf0\x9f\x98", b"\xed\xa0\x80", b"\xc0\xaf",
]
BOMS: list[bytes] = [b"", b"", b"", codecs.BOM_UTF8, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(bom=st.sampled_from(BOMS), pieces=st.lists(st.sampled_from(PIECES), max_size=40))
def test_unedited_decoded_bytes_encode_back_identically(bom: bytes, pieces: list[bytes]) -> None:
    data = bom + b"".join(pieces)
    try:
        decoded = decode(data)
    except ToolError as exc:
        assert exc.code == "encoding_error"  # only a BOM over undecodable bytes is refused
        assert bom not in (b"", codecs.BOM_UTF8)
        reject()
    assert decoded.encode(decoded.text) == data
    if decoded.invalid_utf8:
        assert decoded.encoding == "utf-8"
        assert "\ufffd" in decoded.display_text()


TEXT = st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\x00"), max_size=60)


@settings(max_examples=200, deadline=None)
@given(text=TEXT, codec=st.sampled_from(["utf-8", "utf-8-sig", "utf-16", "utf-16-be-bom"]))
def test_text_encoded_in_a_unicode_form_decodes_to_itself(text: str, codec: str) -> None:
    data = (codecs.BOM_UTF16_BE + text.encode("utf-16-be") if codec == "utf-16-be-bom"
            else text.encode(codec))
    decoded = decode(data)
    assert decoded.text == text
    assert decoded.invalid_utf8 is False
    assert decoded.newline == newline_style(text)
    assert decoded.encode(decoded.text) == data


@settings(max_examples=150, deadline=None)
@given(text=st.text(st.characters(min_codepoint=1, max_codepoint=255), max_size=60))
def test_latin1_text_decodes_to_something_that_encodes_back_identically(text: str) -> None:
    data = text.encode("latin-1")
    decoded = decode(data)
    assert decoded.encode(decoded.text) == data

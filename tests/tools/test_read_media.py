"""read_file on images and PDFs (docs/internals/sources.md#claude): fixtures generated here with
Pillow and by hand."""

from __future__ import annotations

import base64
import io
from pathlib import Path

import pytest
from PIL import Image

from tests.conftest import CliRunner

TEXT = ("--format", "text")


def image_bytes(fmt: str, size: tuple[int, int] = (40, 30), mode: str = "RGB") -> bytes:
    buffer = io.BytesIO()
    Image.new(mode, size, (200, 30, 30) if mode == "RGB" else 128).save(buffer, format=fmt)
    return buffer.getvalue()


def noisy_png(size: tuple[int, int]) -> bytes:
    """A PNG that does not compress well (so that byte limits bite)."""
    import os

    image = Image.frombytes("RGB", size, os.urandom(size[0] * size[1] * 3))
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def make_pdf(pages: list[list[str]]) -> bytes:
    """A minimal valid PDF with a Helvetica text layer: one list of lines per page."""
    objects: list[bytes] = []
    kids = " ".join(f"{4 + 2 * i} 0 R" for i in range(len(pages)))
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {len(pages)} >>".encode())
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    for index, lines in enumerate(pages):
        ops = ["BT", "/F1 12 Tf", "14 TL", "72 720 Td"]
        ops += [f"({line}) Tj T*" for line in lines]
        ops.append("ET")
        stream = "\n".join(ops).encode("latin-1")
        objects.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources "
                       f"<< /Font << /F1 3 0 R >> >> /Contents {5 + 2 * index} 0 R >>".encode())
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    out = b"%PDF-1.4\n"
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1, xref)
    return out


def encrypted(pdf: bytes, password: str = "secret") -> bytes:
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(pdf)))
    writer.encrypt(password, algorithm="AES-128")
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


def scanned_pdf() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (200, 100), "white").save(buffer, format="PDF")
    return buffer.getvalue()


# ---- images ------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt,name,mime", [
    ("PNG", "a.png", "image/png"), ("JPEG", "a.jpg", "image/jpeg"),
    ("GIF", "a.gif", "image/gif"), ("WEBP", "a.webp", "image/webp"),
    ("BMP", "a.bmp", "image/bmp"),
])
def test_images_are_returned_as_base64_with_their_dimensions(ws: Path, cli: CliRunner, fmt: str,
                                                             name: str, mime: str) -> None:
    data = image_bytes(fmt)
    (ws / name).write_bytes(data)
    result = cli("read_file", "--path", name).result
    assert result["kind"] == "image"
    assert result["mime"] == mime
    assert (result["width"], result["height"]) == (40, 30)
    assert result["size"] == len(data)
    assert result["downscaled"] is False
    assert base64.b64decode(result["data"]) == data
    assert result["content"] == ""


def test_an_image_is_recognised_by_its_bytes_without_an_extension(ws: Path,
                                                                  cli: CliRunner) -> None:
    (ws / "picture").write_bytes(image_bytes("PNG"))
    assert cli("read_file", "--path", "picture").result["mime"] == "image/png"


def test_the_text_rendering_describes_the_image_and_never_dumps_it(ws: Path,
                                                                   cli: CliRunner) -> None:
    (ws / "a.png").write_bytes(image_bytes("PNG"))
    out = cli("read_file", "--path", "a.png", *TEXT).out
    assert out.startswith("[image a.png: image/png, 40x30 pixels")
    assert len(out) < 200


def test_svg_stays_text(ws: Path, cli: CliRunner) -> None:
    (ws / "a.svg").write_text('<svg xmlns="http://www.w3.org/2000/svg"><rect/></svg>\n')
    result = cli("read_file", "--path", "a.svg").result
    assert result["kind"] == "text"
    assert "<rect/>" in result["content"]


def test_a_huge_image_is_refused_with_a_hint_to_downscale(ws: Path, cli: CliRunner) -> None:
    (ws / "big.png").write_bytes(image_bytes("PNG", (3000, 2000)))
    call = cli("read_file", stdin={"path": "big.png", "max_image_pixels": 1_000_000})
    assert call.code == 2  # too_large is a usage-class error
    assert call.error["code"] == "too_large"
    assert "downscale" in call.error["hint"]
    assert call.error["details"]["width"] == 3000


def test_downscale_returns_a_smaller_copy_within_the_limits(ws: Path, cli: CliRunner) -> None:
    (ws / "big.png").write_bytes(image_bytes("PNG", (3000, 2000)))
    call = cli("read_file", stdin={"path": "big.png", "max_image_pixels": 1_000_000,
                                   "downscale": True})
    result = call.result
    assert result["downscaled"] is True
    assert result["width"] * result["height"] <= 1_000_000
    assert abs(result["width"] / result["height"] - 1.5) < 0.01
    assert (result["original_width"], result["original_height"]) == (3000, 2000)
    copy = Image.open(io.BytesIO(base64.b64decode(result["data"])))
    assert copy.size == (result["width"], result["height"])
    assert any("downscaled" in w for w in call.json["warnings"])


def test_an_image_over_the_byte_limit_is_refused_or_recompressed(ws: Path,
                                                                 cli: CliRunner) -> None:
    data = noisy_png((200, 200))
    (ws / "noise.png").write_bytes(data)
    call = cli("read_file", stdin={"path": "noise.png", "max_image_bytes": 20_000})
    assert call.error["code"] == "too_large"
    result = cli("read_file", stdin={"path": "noise.png", "max_image_bytes": 20_000,
                                     "downscale": True}).result
    assert result["data_bytes"] <= 20_000
    assert len(base64.b64decode(result["data"])) == result["data_bytes"]


def test_include_data_false_gives_metadata_only(ws: Path, cli: CliRunner) -> None:
    (ws / "a.png").write_bytes(image_bytes("PNG"))
    result = cli("read_file", stdin={"path": "a.png", "include_data": False}).result
    assert "data" not in result
    assert result["width"] == 40


def test_a_corrupt_image_is_unsupported_format(ws: Path, cli: CliRunner) -> None:
    (ws / "bad.png").write_bytes(image_bytes("PNG")[:20])
    call = cli("read_file", "--path", "bad.png")
    assert call.error["code"] == "unsupported_format"


def test_other_binary_files_stay_binary_file_with_a_hint(ws: Path, cli: CliRunner) -> None:
    (ws / "blob.bin").write_bytes(b"\x00\x01\x02garbage" * 10)
    call = cli("read_file", "--path", "blob.bin")
    assert call.code == 1
    assert call.error["code"] == "binary_file"
    assert "images" in call.error["hint"]


def test_a_missing_library_gives_the_command_that_installs_it(
        ws: Path, cli: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    (ws / "a.png").write_bytes(image_bytes("PNG"))
    for module in [m for m in sys.modules if m == "PIL" or m.startswith("PIL.")]:
        monkeypatch.delitem(sys.modules, module)
    monkeypatch.setitem(sys.modules, "PIL", None)  # "import PIL" now raises ImportError
    call = cli("read_file", "--path", "a.png")
    assert call.code == 1
    assert call.error["code"] == "missing_dependency"
    assert f"{sys.executable} -m pip install 'pillow>=10'" in call.error["hint"]
    assert "pipx inject zbtools 'pillow>=10'" in call.error["hint"]
    assert call.error["details"]["library"] == "pillow"
    assert call.error["details"]["requirement"] == "pillow>=10"


# ---- PDFs --------------------------------------------------------------------------------------


def test_pdf_text_is_read_page_by_page(ws: Path, cli: CliRunner) -> None:
    (ws / "doc.pdf").write_bytes(make_pdf([["Hello page one"], ["Second page"],
                                           ["Third page"]]))
    result = cli("read_file", "--path", "doc.pdf").result
    assert result["kind"] == "pdf"
    assert result["page_count"] == 3
    assert result["pages"] == [1, 2, 3]
    content = result["content"]
    assert "--- page 1 of 3 ---\nHello page one\n" in content
    assert content.index("Second page") < content.index("Third page")


def test_pdf_page_ranges_select_pages(ws: Path, cli: CliRunner) -> None:
    pages = [[f"Text of page {n}"] for n in range(1, 11)]
    (ws / "doc.pdf").write_bytes(make_pdf(pages))
    result = cli("read_file", stdin={"path": "doc.pdf", "pages": "2-4,8"}).result
    assert result["pages"] == [2, 3, 4, 8]
    assert "Text of page 8" in result["content"]
    assert "Text of page 5" not in result["content"]
    assert cli("read_file", stdin={"path": "doc.pdf", "pages": "9-"}).result["pages"] == [9, 10]


@pytest.mark.parametrize("spec,code", [("12", "out_of_range"), ("3-1", "invalid_arguments"),
                                       ("x", "invalid_arguments"), ("0", "invalid_arguments")])
def test_bad_page_ranges_are_clear_errors(ws: Path, cli: CliRunner, spec: str,
                                          code: str) -> None:
    (ws / "doc.pdf").write_bytes(make_pdf([["a"], ["b"]]))
    call = cli("read_file", stdin={"path": "doc.pdf", "pages": spec})
    assert call.error["code"] == code


def test_a_long_pdf_is_paged_like_text(ws: Path, cli: CliRunner) -> None:
    pages = [[f"page {p} line {n}" for n in range(40)] for p in range(1, 6)]
    (ws / "long.pdf").write_bytes(make_pdf(pages))
    first = cli("read_file", stdin={"path": "long.pdf", "limit": 50}).result
    assert first["truncated"] is True
    assert first["next_offset"] == 51
    rest = cli("read_file", stdin={"path": "long.pdf", "offset": 51}).result
    assert rest["start_line"] == 51
    assert "page 5 line 39" in rest["content"]
    text = cli("read_file", "--path", "long.pdf", "--limit", "3", *TEXT).out
    assert text.startswith("     1\t--- page 1 of 5 ---\n")


def test_an_encrypted_pdf_is_refused_clearly(ws: Path, cli: CliRunner) -> None:
    (ws / "secret.pdf").write_bytes(encrypted(make_pdf([["classified"]])))
    call = cli("read_file", "--path", "secret.pdf")
    assert call.code == 1
    assert call.error["code"] == "encrypted_pdf"


def test_a_pdf_encrypted_with_an_empty_password_is_read(ws: Path, cli: CliRunner) -> None:
    (ws / "open.pdf").write_bytes(encrypted(make_pdf([["readable anyway"]]), password=""))
    assert "readable anyway" in cli("read_file", "--path", "open.pdf").result["content"]


def test_a_scanned_pdf_has_no_text_layer(ws: Path, cli: CliRunner) -> None:
    (ws / "scan.pdf").write_bytes(scanned_pdf())
    call = cli("read_file", "--path", "scan.pdf")
    assert call.error["code"] == "no_text_layer"
    assert "OCR" in call.error["hint"]


def test_a_pdf_without_the_extension_is_recognised_when_binary(ws: Path,
                                                               cli: CliRunner) -> None:
    (ws / "report").write_bytes(make_pdf([["Found by magic"]]) + b"\x00")
    result = cli("read_file", "--path", "report").result
    assert result["kind"] == "pdf"


def test_a_text_file_named_pdf_is_unsupported_unless_raw(ws: Path, cli: CliRunner) -> None:
    (ws / "notes.pdf").write_text("just text\n")
    assert cli("read_file", "--path", "notes.pdf").error["code"] == "unsupported_format"
    raw = cli("read_file", stdin={"path": "notes.pdf", "raw": True}).result
    assert raw["content"] == "just text\n"


def test_a_corrupt_pdf_is_unsupported_format(ws: Path, cli: CliRunner) -> None:
    (ws / "bad.pdf").write_bytes(b"%PDF-1.4\n\x00garbage without objects\n")
    assert cli("read_file", "--path", "bad.pdf").error["code"] == "unsupported_format"


# ---- hostile files (review of issue 8) -----------------------------------------------------------


def png_header_only(width: int, height: int) -> bytes:
    """A PNG whose header claims ``width`` x ``height`` pixels (the pixel data is a stub)."""
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data +
                struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))

    return (b"\x89PNG\r\n\x1a\n" +
            chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)) +
            chunk(b"IDAT", zlib.compress(b"\0" * 16)) + chunk(b"IEND", b""))


def test_a_header_claiming_100000x100000_pixels_is_refused_without_decoding(
        ws: Path, cli: CliRunner) -> None:
    (ws / "bomb.png").write_bytes(png_header_only(100_000, 100_000))
    for args in ({}, {"downscale": True}):
        call = cli("read_file", stdin={"path": "bomb.png", **args})
        assert call.code == 2, call.json
        assert call.error["code"] == "too_large"
        assert call.error["details"]["width"] == 100_000
        assert "<_io" not in call.error["message"]


def test_downscale_never_decodes_a_huge_lossless_image(ws: Path, cli: CliRunner) -> None:
    """Decoding 60 million pixels would take hundreds of MB: refused before decoding."""
    (ws / "huge.png").write_bytes(png_header_only(10_000, 6_000))
    call = cli("read_file", stdin={"path": "huge.png", "downscale": True})
    assert call.error["code"] == "too_large", call.json
    assert "decod" in call.error["message"]


def test_a_large_jpeg_is_downscaled_from_a_reduced_decode(ws: Path, cli: CliRunner) -> None:
    (ws / "photo.jpg").write_bytes(image_bytes("JPEG", (2400, 1600)))
    result = cli("read_file", stdin={"path": "photo.jpg", "max_image_pixels": 100_000,
                                     "downscale": True}).result
    assert result["downscaled"] is True and result["mime"] == "image/jpeg"
    assert result["width"] * result["height"] <= 100_000
    assert (result["original_width"], result["original_height"]) == (2400, 1600)
    assert abs(result["width"] / result["height"] - 1.5) < 0.02


def test_a_corrupt_image_message_names_no_python_object(ws: Path, cli: CliRunner) -> None:
    (ws / "bad.png").write_bytes(image_bytes("PNG")[:20])
    call = cli("read_file", "--path", "bad.png")
    assert call.error["code"] == "unsupported_format"
    assert "<_io" not in call.error["message"] and "0x" not in call.error["message"]


def test_a_pdf_with_an_unknown_stream_filter_is_unsupported_format(ws: Path,
                                                                   cli: CliRunner) -> None:
    pdf = make_pdf([["hello"]])
    length = pdf.index(b"<< /Length ")
    end = pdf.index(b">>", length)
    pdf = pdf[:end] + b"/Filter /NoSuchDecode " + pdf[end:]
    (ws / "odd.pdf").write_bytes(pdf)
    call = cli("read_file", "--path", "odd.pdf")
    assert call.code == 1, call.json
    assert call.error["code"] == "unsupported_format"


# ---------------------------------------------------------------------------------------------
# as_base64: any file's bytes with their MIME type; audio and video never shown as text

MP3_FRAME = bytes([0xFF, 0xFB, 0x90, 0x64]) + bytes(range(1, 256)) * 8  # no ID3 tag, no NUL
WAV = b"RIFF\x24\x00\x00\x00WAVEfmt \x10\x00\x00\x00" + bytes(range(40))


@pytest.mark.parametrize("name,data,mime", [
    ("blob.xyz", b"\x00\x01\x02binary\xff", "application/octet-stream"),
    ("song.mp3", MP3_FRAME, "audio/mpeg"),
    ("beep.wav", WAV, "audio/wav"),
    ("archive.zip", b"PK\x03\x04" + b"\x00" * 30, "application/zip"),
    ("notes.txt", "plain text, caf\u00e9\n".encode(), "text/plain"),
])
def test_as_base64_returns_any_file_whole_with_its_mime_type(
        ws: Path, cli: CliRunner, name: str, data: bytes, mime: str) -> None:
    import base64
    import hashlib

    (ws / name).write_bytes(data)
    result = cli("read_file", stdin={"path": name, "as_base64": True}).result
    assert result["kind"] == "binary" and result["mime"] == mime
    assert base64.b64decode(result["data"]) == data
    assert result["data_bytes"] == result["size"] == len(data)
    assert result["sha256"] == hashlib.sha256(data).hexdigest()
    text = cli("--format", "text", "read_file", stdin={"path": name, "as_base64": True}).out
    assert mime in text and "base64" in text


def test_as_base64_is_bounded_and_never_cut(ws: Path, cli: CliRunner) -> None:
    (ws / "big.bin").write_bytes(b"\x00" * (1024 * 1024 + 1))
    call = cli("read_file", stdin={"path": "big.bin", "as_base64": True})
    assert call.error["code"] == "too_large"
    assert "max_base64_bytes" in call.error["hint"]
    assert call.error["details"]["size"] == 1024 * 1024 + 1
    bigger = cli("read_file", stdin={"path": "big.bin", "as_base64": True,
                                     "max_base64_bytes": 2 * 1024 * 1024})
    assert bigger.result["data_bytes"] == 1024 * 1024 + 1
    small = cli("read_file", stdin={"path": "big.bin", "as_base64": True,
                                    "max_base64_bytes": 10})
    assert small.error["code"] == "too_large"


@pytest.mark.parametrize("name,data", [("song.mp3", MP3_FRAME), ("beep.wav", WAV),
                                       ("clip.mp4", b"\x00\x00\x00\x18ftypisom" + b"x" * 30)])
def test_audio_and_video_are_never_returned_as_text(ws: Path, cli: CliRunner, name: str,
                                                    data: bytes) -> None:
    (ws / name).write_bytes(data)
    call = cli("read_file", "--path", name)
    assert call.error["code"] == "binary_file", call
    assert "as_base64" in call.error["hint"]
    claude = cli("--dialect", "claude", "Read", stdin={"file_path": str(ws / name)})
    assert claude.error["code"] == "binary_file"
    fiz = cli("--dialect", "fiz", "read", stdin={"path": name})
    assert fiz.error["code"] == "binary_file"


def test_a_text_file_with_a_media_extension_is_still_text(ws: Path, cli: CliRunner) -> None:
    (ws / "playlist.mp3").write_text("not really audio\n")
    assert cli("read_file", "--path", "playlist.mp3").result["content"] == "not really audio\n"


def test_the_dialects_pass_as_base64_through(ws: Path, cli: CliRunner) -> None:
    (ws / "blob.bin").write_bytes(b"\x00\x01")
    result = cli("--dialect", "claude", "Read", stdin={"file_path": str(ws / "blob.bin"),
                                                        "as_base64": True}).result
    assert result["kind"] == "binary" and result["data"] == "AAE="

"""Images for read_file: recognise PNG, JPEG, GIF, WebP and BMP, measure, downscale, encode.

Kinds are recognised by their magic bytes (the extension only routes a file here; SVG is XML
text and stays text). Pillow is imported only here, through ``optional.require``; ``Image.open``
reads just the header, so the dimensions of a huge image are known before anything is decoded.

Limits: an image over ``max_pixels`` pixels (default 25 million) or ``max_bytes`` bytes (default
5 MiB, before base64) is refused with ``too_large`` unless ``downscale`` is asked: it is then
resized (aspect kept, first frame of an animation) to fit both, re-encoded as PNG (JPEG stays
JPEG, WebP stays WebP), and the result says so. Decoding is bounded: a JPEG is decoded at a
reduced scale (``draft``, down to 1/8) and only up to ``BOMB_PIXELS``; other formats are decoded
whole, so only up to ``MAX_DECODE_PIXELS`` (40 million pixels, about 160 MB); a header claiming
more (a decompression bomb, e.g. 100000x100000) is refused with ``too_large`` from the header
alone. Failure modes: ``too_large``, ``unsupported_format`` (a corrupt or
truncated image), ``missing_dependency`` (Pillow not installed).
"""

from __future__ import annotations

import threading

from zbtools.contract import ToolError
from zbtools.core.call.optional import require

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

IMAGE_EXTENSIONS = (".png", ".jpg", ".jpeg", ".jpe", ".gif", ".webp", ".bmp", ".dib")
DEFAULT_MAX_PIXELS = 25_000_000
DEFAULT_MAX_BYTES = 5 * 1024 * 1024
_OPEN_LOCK = threading.Lock()  # MAX_IMAGE_PIXELS is process-wide
BOMB_PIXELS = 400_000_000  # JPEG, decoded at 1/8 scale at most: 6 million pixels
MAX_DECODE_PIXELS = 40_000_000  # other formats, decoded whole


def sniff_image(head: bytes) -> str | None:
    """The MIME type of an image format we show, from its first bytes."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    if head.startswith(b"BM") and len(head) >= 26 and head[6:10] == b"\0\0\0\0":
        return "image/bmp"
    return None


class Picture:
    """What read_file reports about an image."""

    def __init__(self, mime: str, width: int, height: int, data: bytes, downscaled: bool,
                 original: tuple[int, int]) -> None:
        self.mime = mime
        self.width = width
        self.height = height
        self.data = data
        self.downscaled = downscaled
        self.original = original


def load_image(raw: bytes, shown: str, *, downscale: bool, max_pixels: int,
               max_bytes: int) -> Picture:

    image_mod: Any = require("PIL.Image", "reading images")
    mime = sniff_image(raw[:32])
    if mime is None:
        raise ToolError("unsupported_format", f"{shown}: is not a PNG, JPEG, GIF, WebP or BMP "
                        "image", hint="read_file shows those image formats; use "
                        "get_file_info for other binary files")
    try:
        image = _open_header(image_mod, raw)
        width, height = image.size
    except (OSError, ValueError, SyntaxError, EOFError) as exc:
        raise ToolError("unsupported_format", f"{shown}: the image cannot be read: "
                        f"{_clean(exc)}", hint="the file may be truncated or corrupt") from exc
    pixels = width * height
    fits = pixels <= max_pixels and len(raw) <= max_bytes
    if fits:
        return Picture(mime, width, height, raw, False, (width, height))
    decodable = BOMB_PIXELS if mime == "image/jpeg" else MAX_DECODE_PIXELS
    if downscale and pixels > decodable:
        raise _too_large(shown, width, height, len(raw), f"{width}x{height} = {pixels} pixels "
                         f"is more than can be decoded safely ({decodable} pixels)")
    if not downscale:
        why = (f"{width}x{height} = {pixels} pixels exceeds max_image_pixels {max_pixels}"
               if pixels > max_pixels else f"{len(raw)} bytes exceeds max_image_bytes "
               f"{max_bytes}")
        raise _too_large(shown, width, height, len(raw), why, can_downscale=pixels <= decodable)
    return _downscale(image, mime, shown, max_pixels, max_bytes)


def _open_header(image_mod: Any, raw: bytes) -> Any:
    """``Image.open`` (which reads only the header) without Pillow's own bomb check: the caller
    checks the size itself, so a bomb is refused with its dimensions, and never decoded."""
    import io
    import warnings

    with _OPEN_LOCK, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        saved = image_mod.MAX_IMAGE_PIXELS
        image_mod.MAX_IMAGE_PIXELS = None
        try:
            return image_mod.open(io.BytesIO(raw))
        finally:
            image_mod.MAX_IMAGE_PIXELS = saved


def _clean(exc: BaseException) -> str:
    """An exception's text without Python object reprs such as ``<_io.BytesIO object at 0x..>``."""
    import re

    return re.sub(r"\s*<[^<>]* at 0x[0-9a-fA-F]+>", "", str(exc)) or type(exc).__name__


def _too_large(shown: str, width: int, height: int, size: int, why: str,
               can_downscale: bool = False) -> ToolError:
    hint = ("pass downscale: true to get a smaller copy (it fits max_image_pixels and "
            "max_image_bytes), or raise those limits" if can_downscale else
            "the image is too large to be decoded safely")
    return ToolError("too_large", f"{shown}: the image is too large to return ({why})",
                     hint=hint, details={"path": shown, "width": width, "height": height,
                                         "size": size})


def _downscale(image: Any, mime: str, shown: str, max_pixels: int, max_bytes: int) -> Picture:
    import io
    import math

    image_mod: Any = require("PIL.Image", "reading images")
    width, height = image.size
    try:
        image.seek(0)
        if mime == "image/jpeg":  # decode at 1/2, 1/4 or 1/8 scale, still at least the target
            scale = math.sqrt(max_pixels / (width * height))
            image.draft("RGB" if image.mode not in ("L", "RGB") else image.mode,
                        (max(1, int(width * scale)), max(1, int(height * scale))))
        image.load()
    except (OSError, ValueError, EOFError, SyntaxError) as exc:
        raise ToolError("unsupported_format", f"{shown}: the image cannot be decoded: "
                        f"{_clean(exc)}", hint="the file may be truncated or corrupt") from exc
    fmt = {"image/jpeg": "JPEG", "image/webp": "WEBP"}.get(mime, "PNG")
    out_mime = {"JPEG": "image/jpeg", "WEBP": "image/webp"}.get(fmt, "image/png")
    if fmt == "JPEG" and image.mode not in ("RGB", "L"):
        image = image.convert("RGB")
    elif fmt == "PNG" and image.mode not in ("1", "L", "LA", "P", "RGB", "RGBA", "I", "I;16"):
        image = image.convert("RGBA")
    decoded_w, decoded_h = image.size  # smaller than width x height after a JPEG draft
    scale = min(1.0, math.sqrt(max_pixels / (decoded_w * decoded_h)))
    for _attempt in range(12):
        size = (max(1, int(decoded_w * scale)), max(1, int(decoded_h * scale)))
        copy = image.resize(size, image_mod.Resampling.LANCZOS)
        buffer = io.BytesIO()
        options: dict[str, Any] = {"quality": 85} if fmt in ("JPEG", "WEBP") else \
            {"optimize": True}
        copy.save(buffer, format=fmt, **options)
        data = buffer.getvalue()
        if len(data) <= max_bytes:
            return Picture(out_mime, size[0], size[1], data, True, (width, height))
        scale *= 0.7
    raise _too_large(shown, width, height, len(data), "no downscaled copy fits max_image_bytes")

"""Product images as bytes (Pillow): recognise, check, clean, re-encode and resize.

An upload is recognised by its content only (JPEG, PNG, WebP, GIF), never by its name or
declared type: anything else is a 415. Its size in pixels (width × height × frames) is
checked from the header before a pixel is decoded, so a decompression bomb is a 400 that
says so. Every image is re-encoded: the EXIF block (GPS position, camera, time), XMP and
comments are dropped, the EXIF orientation is applied to the pixels, and only the colour
profile, transparency and animation timing are kept. Resized widths are made from the
cleaned original, never wider than it.
"""

import hashlib
import io
import struct
import warnings

from PIL import Image, ImageOps, UnidentifiedImageError

from shop.errors import Invalid, Unsupported

CONTENT_TYPES = {"JPEG": "image/jpeg", "PNG": "image/png", "WEBP": "image/webp", "GIF": "image/gif"}
_FORMATS = tuple(CONTENT_TYPES)

# What survives the re-encoding; everything else in ``info`` (exif, xmp, comment, ...) goes.
_KEPT_INFO = ("icc_profile", "transparency", "loop", "duration", "background")

# What Pillow raises for a file of a known format whose content is damaged or truncated.
_BROKEN = (OSError, EOFError, SyntaxError, ValueError, struct.error)
_DAMAGED = "file: the image is damaged or cut short and cannot be read."
_NOT_AN_IMAGE = "file: not an image we accept; send a JPEG, PNG, WebP or GIF file."


def prepare(data: bytes, max_pixels: int) -> dict:
    """The upload ``data`` cleaned and re-encoded: ``{content_type, width, height, bytes,
    sha256, data}``. 415 when it is not an image we take, 400 when too large in pixels or
    broken."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", Image.DecompressionBombWarning)  # our limit decides
        try:
            image = Image.open(io.BytesIO(data), formats=_FORMATS)
        except UnidentifiedImageError:
            raise Unsupported(_NOT_AN_IMAGE) from None
        except Image.DecompressionBombError:
            raise Invalid(_too_many_pixels(None, max_pixels)) from None
        except _BROKEN:  # the format's signature, and then nonsense
            raise Invalid(_DAMAGED) from None
        with image:
            fmt = image.format
            try:
                frames = getattr(image, "n_frames", 1)
            except _BROKEN:
                raise Invalid(_DAMAGED) from None
            width, height = image.size
            pixels = width * height * frames
            if pixels > max_pixels:
                raise Invalid(_too_many_pixels((width, height, frames), max_pixels))
            try:
                image.load()
                out = _encode_original(image, fmt, frames)
            except (*_BROKEN, Image.DecompressionBombError):
                raise Invalid(_DAMAGED) from None
    return out


def resize(data: bytes, width: int) -> dict | None:
    """The stored image ``data`` resized to ``width`` pixels wide (height in proportion),
    in the same format (a GIF's first frame as PNG); None when it is not wider than that."""
    with Image.open(io.BytesIO(data), formats=_FORMATS) as image:
        fmt = image.format
        if image.width <= width:
            return None
        height = max(1, round(image.height * width / image.width))
        if fmt == "JPEG":
            image.draft(image.mode, (width, height))  # decode at 1/2, 1/4 or 1/8: still wider
        image.seek(0)
        frame = image.convert("RGBA") if image.mode in ("P", "LA", "PA") else image.copy()
    small = frame.resize((width, height), Image.Resampling.LANCZOS, reducing_gap=3.0)
    small.info = {k: v for k, v in frame.info.items() if k == "icc_profile"}
    return _encoded(small, "PNG" if fmt == "GIF" else fmt, quality=85)


def _too_many_pixels(size, max_pixels: int) -> str:
    limit = f"the limit is {max_pixels:,} pixels (SHOP_MAX_IMAGE_PIXELS)"
    if size is None:
        return f"file: the image is far too large in pixels (a decompression bomb?); {limit}."
    width, height, frames = size
    shape = f"{width}×{height}" + (f"×{frames} frames" if frames > 1 else "")
    return f"file: the image is {shape} = {width * height * frames:,} pixels; {limit}."


def _encode_original(image: Image.Image, fmt: str, frames: int) -> dict:
    """The opened upload re-encoded in its own format, metadata dropped, orientation applied."""
    if frames > 1:  # an animation: every frame as it is (orientation tags are for photos)
        image.info = {k: v for k, v in image.info.items() if k in _KEPT_INFO}
        return _encoded(image, fmt, quality=90, save_all=True)
    try:
        upright = ImageOps.exif_transpose(image)
    except Exception:  # noqa: BLE001 - an unreadable EXIF block: no orientation to apply
        upright = image.copy()
    upright.info = {k: v for k, v in image.info.items() if k in _KEPT_INFO}
    return _encoded(upright, fmt, quality=90)


def _encoded(image: Image.Image, fmt: str, *, quality: int, save_all: bool = False) -> dict:
    params = {k: image.info[k] for k in ("icc_profile", "loop") if k in image.info}
    if fmt in ("JPEG", "WEBP"):
        params["quality"] = quality
    if fmt == "JPEG" and image.mode not in ("L", "RGB", "CMYK"):
        image = image.convert("RGB")
    if save_all:
        params["save_all"] = True
    buffer = io.BytesIO()
    image.save(buffer, format=fmt, exif=b"", **params)
    data = buffer.getvalue()
    return {
        "content_type": CONTENT_TYPES[fmt],
        "width": image.width,
        "height": image.height,
        "bytes": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
        "data": data,
    }

"""Where an image's bytes live: in its row (the default), or in the folder ``SHOP_IMAGE_DIR``
when the operator names one (docs/catalogue-and-content.md#images says when to).

In the folder, a file is named by the SHA-256 of its bytes (``<dir>/ab/ab12...``): written
once (to a temporary name, then renamed), never changed, shared by equal images, and the
row's ``data`` is NULL. Nothing deletes a file in a request, so a rolled-back upload or a
product deleted with its images never leaves a row without its file; the worker's hourly
``prune`` removes the files no row names any more, once they are an hour old (a file that
an upload is about to name again has its time renewed first).
"""

import os
import secrets
import time
from pathlib import Path

from flask import current_app

from shop import db
from shop.errors import Deferred

GRACE_SECONDS = 3600
_RETRY_AFTER = "60"


def keep(image: dict) -> bytes | None:
    """The value of the row's ``data`` for ``image`` (``{sha256, data}``): its bytes, or
    None once they are in the folder."""
    folder = current_app.config["IMAGE_DIR"]
    if folder is None:
        return image["data"]
    path = _path(folder, image["sha256"])
    try:
        os.utime(path)  # there already (an equal image): fresh again for prune
    except FileNotFoundError:
        path.parent.mkdir(exist_ok=True)
        partial = path.with_name(f"{path.name}.{secrets.token_hex(4)}.partial")
        partial.write_bytes(image["data"])
        partial.replace(path)
    return None


def read(sha256: str, data) -> bytes:
    """The bytes of a row whose ``data`` is given: from the row, or from the folder."""
    if data is not None:
        return bytes(data)
    folder = current_app.config["IMAGE_DIR"]
    if folder is None:
        raise Deferred(_missing("SHOP_IMAGE_DIR is not set on this node"), _retry())
    try:
        return _path(folder, sha256).read_bytes()
    except FileNotFoundError:
        raise Deferred(_missing(f"its file is not in {folder}"), _retry()) from None


def prune() -> int:
    """Job: remove the folder's files that no row names and that are over an hour old;
    answer how many."""
    folder = current_app.config["IMAGE_DIR"]
    if folder is None:
        return 0
    named = {
        row["sha256"]
        for row in db.query(
            "SELECT sha256 FROM product_images WHERE data IS NULL"
            " UNION SELECT sha256 FROM product_image_sizes WHERE data IS NULL"
        )
    }
    cutoff, removed = time.time() - GRACE_SECONDS, 0
    for path in Path(folder).glob("??/*"):
        if path.name in named or path.stat().st_mtime > cutoff:
            continue
        path.unlink(missing_ok=True)
        removed += 1
    return removed


def _path(folder: str, sha256: str) -> Path:
    return Path(folder) / sha256[:2] / sha256


def _missing(why: str) -> str:
    return f"This image is stored in a folder, but {why}. Operators: check SHOP_IMAGE_DIR."


def _retry() -> dict:
    return {"Retry-After": _RETRY_AFTER}

"""Product images through the HTTP API: upload rules (content, size, pixels, metadata),
order, permissions, and the public bytes with their ETag, cache and widths."""

import io
import json
import os
import random
import shutil
import subprocess
import threading
import time

import pytest
from PIL import Image
from werkzeug.test import EnvironBuilder

from tests.catalogue_helpers import Catalogue, image_bytes, upload

GPS_EXIF_MARK = "WhereIWas"  # a maker tag beside the GPS block: searched for in the bytes


def photo_with_gps() -> bytes:
    """A 40×20 JPEG whose EXIF says: rotate 90° (orientation 6), taken at a GPS position."""
    exif = Image.Exif()
    exif[0x0112] = 6
    exif[0x010F] = GPS_EXIF_MARK
    exif[0x8825] = {1: "N", 2: (52.0, 31.0, 12.0), 3: "E", 4: (13.0, 24.0, 0.0)}
    data = image_bytes("JPEG", exif=exif.tobytes())
    assert GPS_EXIF_MARK.encode() in data and b"Exif" in data
    return data


@pytest.fixture
def product(owner_client):
    return Catalogue(owner_client).product()


def test_an_upload_is_cleaned_served_and_embedded_in_the_product(client, owner_client, product):
    response = upload(owner_client, product["id"], photo_with_gps(), "me.jpg", alt="A mug")
    assert response.status_code == 201, response.json
    image = response.json
    assert image["url"] == f"/images/{image['id']}" and image["position"] == 1
    assert (image["width"], image["height"]) == (20, 40)  # the orientation, applied
    assert image["content_type"] == "image/jpeg" and image["alt"] == "A mug"

    served = client.get(image["url"])  # anyone
    assert served.status_code == 200 and served.mimetype == "image/jpeg"
    assert len(served.data) == image["bytes"]
    assert GPS_EXIF_MARK.encode() not in served.data and b"Exif" not in served.data
    with Image.open(io.BytesIO(served.data)) as decoded:
        assert decoded.size == (20, 40) and not decoded.getexif()

    second = upload(owner_client, product["id"], image_bytes("WEBP"), "b.webp").json
    detail = client.get(f"/products/{product['id']}").json
    assert [i["id"] for i in detail["images"]] == [image["id"], second["id"]]
    listed = client.get(f"/products/{product['id']}/images").json["items"]
    assert listed == detail["images"] and second["content_type"] == "image/webp"


def test_content_decides_the_type_not_the_name_or_declared_type(owner_client, product):
    pdf = b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << >>\n%%EOF\n"
    body = {"file": (io.BytesIO(pdf), "x.jpg", "image/jpeg")}
    response = owner_client.post(f"/products/{product['id']}/images", data=body)
    assert response.status_code == 415
    assert "JPEG, PNG, WebP or GIF" in response.json["message"]
    gif = upload(owner_client, product["id"], image_bytes("GIF"), "looks-like.png")
    assert gif.status_code == 201 and gif.json["content_type"] == "image/gif"
    assert len(owner_client.get(f"/products/{product['id']}/images").json["items"]) == 1


def test_an_image_over_the_byte_limit_is_a_413_and_nothing_is_kept(make_app):
    app = make_app(MAX_IMAGE_BYTES=4096)
    owner = _owner(app)
    product_id = Catalogue(owner).product()["id"]
    noisy = Image.frombytes("RGB", (64, 64), random.Random(1).randbytes(64 * 64 * 3))
    buffer = io.BytesIO()
    noisy.save(buffer, "PNG")
    assert 4096 < len(buffer.getvalue()) < 64 * 1024  # within the body's slack: the file check
    for data in (buffer.getvalue(), b"\x89PNG" + bytes(20_000)):  # over twice: not read at all
        response = upload(owner, product_id, data)
        assert response.status_code == 413, response.json
        assert "4,096 bytes (SHOP_MAX_IMAGE_BYTES)" in response.json["message"]
    assert upload(owner, product_id, image_bytes()).status_code == 201  # under it: fine
    # Chunked, with no Content-Length: read whole, so over the limit is a 413 too, not a form
    # cut short without a word.
    assert _chunked_upload(owner, product_id, buffer.getvalue()).status_code == 413
    assert _chunked_upload(owner, product_id, image_bytes()).status_code == 201
    assert len(owner.get(f"/products/{product_id}/images").json["items"]) == 2


def test_a_decompression_bomb_is_refused_before_decoding(owner_client, product):
    bomb = io.BytesIO()
    Image.new("1", (6000, 6000)).save(bomb, "PNG")  # 4 kB of file, 36 megapixels
    response = upload(owner_client, product["id"], bomb.getvalue(), "bomb.png")
    assert response.status_code == 400
    assert "36,000,000 pixels" in response.json["message"]
    assert "SHOP_MAX_IMAGE_PIXELS" in response.json["message"]


def test_bad_forms_are_400s_naming_the_field(owner_client, product):
    path = f"/products/{product['id']}/images"
    assert "multipart/form-data" in owner_client.post(path, json={}).json["message"]
    missing = owner_client.post(path, data={"alt": "x"}, content_type="multipart/form-data")
    assert missing.status_code == 400 and missing.json["message"].startswith("file:")
    extra = owner_client.post(path, data={"file": (io.BytesIO(image_bytes()), "a"), "pos": "1"})
    assert extra.status_code == 400 and extra.json["message"] == "pos: Unknown field."
    empty = upload(owner_client, product["id"], b"")
    assert empty.status_code == 400 and "empty" in empty.json["message"]
    cut = upload(owner_client, product["id"], image_bytes("JPEG", size=(64, 64))[:300])
    assert cut.status_code == 400 and "damaged or cut short" in cut.json["message"]


def test_etag_cache_and_304(app, client, owner_client, product):
    url = upload(owner_client, product["id"]).json["url"]
    first = client.get(url)
    etag = first.headers["ETag"]
    assert etag.startswith('"') and not etag.startswith("W/")
    assert first.headers["Cache-Control"] == "public, max-age=31536000, immutable"
    again = client.get(url, headers={"If-None-Match": etag})
    assert again.status_code == 304 and again.data == b"" and again.headers["ETag"] == etag
    assert client.get(url, headers={"If-None-Match": '"other"'}).status_code == 200
    signed_in = owner_client.get(url)  # a signed-in reader gets the same public answer
    assert signed_in.headers["Cache-Control"] == first.headers["Cache-Control"]
    # ... while a signed-in JSON answer is private (shop/http/hooks.py finish_response) and an
    # anonymous one carries no caching rule of ours
    record = f"/products/{product['id']}"
    staff, anonymous = owner_client.get(record), client.get(record)
    assert staff.status_code == anonymous.status_code == 200
    assert staff.headers["Cache-Control"] == "no-store"
    assert "Cache-Control" not in anonymous.headers
    assert client.get("/images/" + "0" * 24).status_code == 404


def test_widths_are_made_once_kept_and_never_upscaled(app, client, owner_client, product):
    url = upload(owner_client, product["id"], image_bytes("JPEG", size=(400, 200))).json["url"]
    small = client.get(url + "?w=160")
    assert small.status_code == 200 and small.mimetype == "image/jpeg"
    with Image.open(io.BytesIO(small.data)) as decoded:
        assert decoded.size == (160, 80)
    again = client.get(url + "?w=160")
    assert again.data == small.data and again.headers["ETag"] == small.headers["ETag"]
    assert again.headers["ETag"] != client.get(url).headers["ETag"]
    original = client.get(url).data
    assert client.get(url + "?w=640").data == original  # narrower original: as it is
    for bad in ("100", "abc", "0"):
        response = client.get(url + f"?w={bad}")
        assert response.status_code == 400
        assert "160, 320, 640, 1280" in response.json["message"]
    with app.app_context():
        from shop import db

        rows = db.query("SELECT width FROM product_image_sizes")
    assert rows == [{"width": 160}]  # stored once; 640 was not made


def test_an_animation_keeps_its_frames_and_a_width_is_its_first_frame(
    client, owner_client, product
):
    frames = [Image.new("RGB", (400, 100), colour) for colour in ("red", "blue", "lime")]
    buffer = io.BytesIO()
    frames[0].save(buffer, "GIF", save_all=True, append_images=frames[1:], duration=80, loop=0)
    gif = upload(owner_client, product["id"], buffer.getvalue(), "spin.gif").json
    assert gif["content_type"] == "image/gif"
    with Image.open(io.BytesIO(client.get(gif["url"]).data)) as served:
        assert served.n_frames == 3 and served.info["duration"] == 80
    small = client.get(gif["url"] + "?w=160")
    assert small.mimetype == "image/png"
    with Image.open(io.BytesIO(small.data)) as first:
        assert first.size == (160, 40) and first.convert("RGB").getpixel((80, 20)) == (255, 0, 0)
    head = client.head(gif["url"])
    assert head.status_code == 200 and head.headers["ETag"] and head.data == b""


def test_two_first_requests_for_a_width_agree(app, owner_client, product):
    url = upload(owner_client, product["id"], image_bytes("PNG", size=(700, 70))).json["url"]
    results, barrier = [], threading.Barrier(4)

    def fetch():
        reader = app.test_client()
        barrier.wait(timeout=10)
        response = reader.get(url + "?w=320")
        results.append((response.status_code, response.data))

    threads = [threading.Thread(target=fetch) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert len(results) == 4 and {status for status, _ in results} == {200}
    assert len({data for _, data in results}) == 1
    with app.app_context():
        from shop import db

        assert db.value("SELECT COUNT(*) FROM product_image_sizes") == 1


def test_order_alt_and_delete(client, owner_client, product):
    base = f"/products/{product['id']}/images"
    ids = [upload(owner_client, product["id"]).json["id"] for _ in range(3)]
    moved = owner_client.patch(f"{base}/{ids[2]}", json={"position": 1, "alt": "Front"})
    assert moved.status_code == 200 and moved.json["position"] == 1
    assert moved.json["alt"] == "Front"
    order = [i["id"] for i in client.get(base).json["items"]]
    assert order == [ids[2], ids[0], ids[1]]
    last = owner_client.patch(f"{base}/{ids[2]}", json={"position": 250}).json
    assert last["position"] == 3  # past the end is last
    assert owner_client.patch(f"{base}/{ids[0]}", json={"position": 0}).status_code == 400
    assert owner_client.delete(f"{base}/{ids[0]}").status_code == 204
    items = client.get(base).json["items"]
    assert [(i["id"], i["position"]) for i in items] == [(ids[1], 1), (ids[2], 2)]
    assert client.get(f"/images/{ids[0]}").status_code == 404


def test_another_products_image_is_a_404(owner_client, product):
    other = Catalogue(owner_client).product()
    image_id = upload(owner_client, other["id"]).json["id"]
    path = f"/products/{product['id']}/images/{image_id}"
    assert owner_client.patch(path, json={"alt": "x"}).status_code == 404
    assert owner_client.delete(path).status_code == 404
    assert upload(owner_client, "f" * 24).status_code == 404
    assert len(owner_client.get(f"/products/{other['id']}/images").json["items"]) == 1


def test_permissions_follow_the_product(app, client, owner_client, customer_client, make_key):
    catalogue = Catalogue(owner_client)
    hidden = catalogue.product(active=False)
    url = upload(owner_client, hidden["id"]).json["url"]
    path = f"/products/{hidden['id']}/images"
    assert client.get(path).status_code == 404  # an inactive product's list: staff only
    assert make_key("read:product").get(path).status_code == 200
    assert client.get(url).status_code == 200  # the bytes are public
    assert upload(client, hidden["id"]).status_code == 401
    assert upload(customer_client, hidden["id"]).status_code == 403
    assert upload(make_key("read:product"), hidden["id"]).status_code == 403
    assert upload(make_key("write:product"), hidden["id"]).status_code == 201


def test_deleting_the_product_deletes_its_images(client, owner_client, product):
    url = upload(owner_client, product["id"], image_bytes(size=(400, 200))).json["url"]
    assert client.get(url + "?w=160").status_code == 200
    assert owner_client.delete(f"/products/{product['id']}").status_code == 204
    assert client.get(url).status_code == 404


def test_image_changes_are_product_updated_events_and_audited(make_app):
    app = make_app(WEBHOOKS_ALLOW_PRIVATE=True, WEBHOOKS_ALLOW_HTTP=True)
    owner = _owner(app)
    hook = {"url": "http://127.0.0.1:9/hook", "events": ["product.updated"]}
    assert owner.post("/webhooks", json=hook).status_code == 201
    product_id = Catalogue(owner).product()["id"]
    image_id = upload(owner, product_id).json["id"]
    owner.patch(f"/products/{product_id}/images/{image_id}", json={"alt": "Side"})
    owner.delete(f"/products/{product_id}/images/{image_id}")
    with app.app_context():
        from shop import db

        events = db.query("SELECT type, payload FROM webhook_events ORDER BY id")
        audited = db.query("SELECT event FROM audit_log WHERE event LIKE 'product.image%'")
    images = [[i["alt"] for i in json.loads(e["payload"])["data"]["images"]] for e in events]
    assert {e["type"] for e in events} == {"product.updated"}
    assert images == [[""], ["Side"], []]  # each payload shows the images as they became
    assert sorted(a["event"] for a in audited) == [
        "product.image_added",
        "product.image_deleted",
        "product.image_updated",
    ]


def test_a_variant_shows_an_image_of_its_own_product_until_it_is_deleted(
    client, owner_client, product
):
    sizes = {"options": [{"name": "Size", "values": ["S", "M"]}]}
    shirt = Catalogue(owner_client).product(**sizes)
    variant = shirt["variants"][0]["id"]
    path = f"/products/{shirt['id']}/variants/{variant}"
    own = upload(owner_client, shirt["id"]).json["id"]
    foreign = upload(owner_client, product["id"]).json["id"]
    refused = owner_client.patch(path, json={"image_id": foreign})  # another product's
    assert refused.status_code == 400 and refused.json["message"].startswith("image_id:")
    made = owner_client.post(
        f"/products/{shirt['id']}/variants", json={"options": {"Size": "M"}, "image_id": foreign}
    )
    assert made.status_code == 400
    assert owner_client.patch(path, json={"image_id": own}).json["image_id"] == own
    assert owner_client.delete(f"/products/{shirt['id']}/images/{own}").status_code == 204
    shown = client.get(f"/products/{shirt['id']}").json
    assert shown["images"] == [] and shown["variants"][0]["image_id"] is None  # cleared with it
    assert [v["options"] for v in shown["variants"]] == [{"Size": "S"}]  # the 400 made nothing


def test_with_an_image_folder_the_bytes_are_files_and_prune_keeps_what_rows_name(
    make_app, tmp_path
):
    from shop import db
    from shop.catalogue import image_files
    from shop.config import ConfigError, from_environment

    folder = tmp_path / "images"
    with pytest.raises(ConfigError, match="SHOP_IMAGE_DIR"):
        from_environment({"SHOP_IMAGE_DIR": str(folder)})  # no such folder yet
    folder.mkdir()
    app = make_app(IMAGE_DIR=str(folder))
    owner, reader = _owner(app), app.test_client()
    product_id = Catalogue(owner).product()["id"]
    first, twin = (upload(owner, product_id, image_bytes(size=(400, 200))).json for _ in "12")
    original, small = reader.get(first["url"]).data, reader.get(first["url"] + "?w=160").data
    files = sorted((p.read_bytes() for p in folder.glob("??/*")), key=len)
    assert files == [small, original]  # the twins' equal bytes: one file
    with app.app_context():
        assert db.value("SELECT COUNT(*) FROM product_images WHERE data IS NOT NULL") == 0
    assert owner.delete(f"/products/{product_id}/images/{first['id']}").status_code == 204
    long_ago = time.time() - 2 * image_files.GRACE_SECONDS
    for path in folder.glob("??/*"):
        os.utime(path, (long_ago, long_ago))
    fresh = folder / "ab" / ("ab" + "0" * 62)  # an upload whose row is not committed yet
    fresh.parent.mkdir(exist_ok=True)
    fresh.write_bytes(b"soon")
    result = app.test_cli_runner().invoke(args=["jobs", "run", "--once"])  # the worker's
    assert result.exit_code == 0, result.output
    # Gone: the deleted image's width. Kept: the twin's bytes, and the fresh file.
    left = sorted(p.name for p in folder.glob("??/*"))
    assert left == sorted([fresh.name, _sha256_of(app, twin)])
    assert reader.get(twin["url"]).data == original
    elsewhere = make_app(prepare=False).test_client()  # a node without the folder
    refused = elsewhere.get(twin["url"])
    assert refused.status_code == 503 and refused.headers["Retry-After"]
    assert "SHOP_IMAGE_DIR" in refused.json["message"]


def _sha256_of(app, image: dict) -> str:
    from shop import db

    with app.app_context():
        return db.value("SELECT sha256 FROM product_images WHERE id = :id", {"id": image["id"]})


def _chunked_upload(client, product_id: str, data: bytes):
    """An upload sent as a chunked body (as gunicorn hands one over: no Content-Length)."""
    body = {"file": (io.BytesIO(data), "photo.png")}
    environ = EnvironBuilder(path=f"/products/{product_id}/images", method="POST", data=body)
    environ = environ.get_environ()
    del environ["CONTENT_LENGTH"]
    environ.update({"HTTP_TRANSFER_ENCODING": "chunked", "wsgi.input_terminated": True})
    return client.open(environ)


def _owner(app):
    from shop.auth.users import create_user
    from tests.conftest import PASSWORD, login

    with app.app_context():
        create_user("images-owner@example.com", "Owner", PASSWORD, "owner", [])
    owner = app.test_client()
    login(owner, "images-owner@example.com")
    return owner


@pytest.mark.live
@pytest.mark.skipif(shutil.which("curl") is None, reason="the guide's example needs curl")
def test_the_guide_example_gives_a_product_its_photo(tmp_path, database_url, make_key):
    from tests.live import LiveServer
    from tests.ops.test_readme import readme_block

    key = make_key("write:product")
    (tmp_path / "photo.jpg").write_bytes(image_bytes("JPEG", (800, 400)))
    env = {"PATH": "/usr/bin:/bin", "SHOP_KEY": key.secret}
    server = LiveServer({"DATABASE_URL": database_url, "SHOP_RATELIMIT_ENABLED": "0"})
    try:
        env["SHOP_URL"] = server.url
        for folder in (tmp_path, tmp_path, tmp_path / "empty"):  # as pasted, again, no photo
            folder.mkdir(exist_ok=True)
            result = subprocess.run(
                ["bash", "-euo", "pipefail", "-c", readme_block("product-image")],
                cwd=folder,
                env=env,
                capture_output=True,
                text=True,
                timeout=30,
                check=False,
            )
            if folder.name == "empty":
                assert result.returncode != 0 and "No photo.jpg here" in result.stderr
                continue
            assert result.returncode == 0, result.stderr + result.stdout
            lines = result.stdout.splitlines()
            image = json.loads(lines[0])
            assert (image["width"], image["alt"]) == (800, "Our teapot, from the side")
            assert lines[-1] == "304"
            with Image.open(tmp_path / "teapot-320") as small:
                assert small.size == (320, 160)
    finally:
        server.stop()

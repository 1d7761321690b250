-- 0008: product images (issue 25), stored in the database so that every node and
-- `flask db backup` have them. The bytes of an image id never change: `sha256` is the ETag.
-- `product_image_sizes` keeps each resized width made on first request (never recomputed).
-- With SHOP_IMAGE_DIR set, new bytes go to files in that folder instead (`data` NULL).
-- New tables only: the previous release ignores them.

CREATE TABLE IF NOT EXISTS product_images (
    id TEXT PRIMARY KEY,
    product_id TEXT NOT NULL REFERENCES products (id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    alt TEXT NOT NULL DEFAULT '',
    content_type TEXT NOT NULL,
    width INTEGER NOT NULL,
    height INTEGER NOT NULL,
    bytes INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    data BYTEA,  -- NULL: in SHOP_IMAGE_DIR, named by sha256
    created_at TEXT NOT NULL
);

CREATE INDEX IF NOT EXISTS product_images_product ON product_images (product_id, position);

CREATE TABLE IF NOT EXISTS product_image_sizes (
    image_id TEXT NOT NULL REFERENCES product_images (id) ON DELETE CASCADE,
    width INTEGER NOT NULL,
    content_type TEXT NOT NULL,
    height INTEGER NOT NULL,
    bytes INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    data BYTEA,  -- NULL: in SHOP_IMAGE_DIR, named by sha256
    PRIMARY KEY (image_id, width)
);

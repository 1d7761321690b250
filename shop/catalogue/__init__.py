"""The catalogue: products, variants, stock, images, search, import/export."""

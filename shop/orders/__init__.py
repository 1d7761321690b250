"""Orders: their lifecycle, how one reads, shipments and stock put back."""

"""The catalogue as a file: export and import (CSV, JSON Lines)."""

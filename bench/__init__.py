"""The benchmark: ``python -m bench.run`` (or ``./dev bench``); see README.md."""

"""The benchmark: ``python -m bench.run`` (or ``./dev bench``); see docs/performance.md."""

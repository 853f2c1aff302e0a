"""Measurements ``make bench`` does not run, each on its own: ``python -m bench.oneoff.NAME``
(``aurora_roundtrip`` runs in ``.venv-aurora``, by its path)."""

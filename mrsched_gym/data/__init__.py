"""Bundled data files: the traces in ``traces/`` (with their attribution in ``ATTRIBUTION.md``)."""

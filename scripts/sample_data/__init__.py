"""Deterministic generators of the sample data under ``data/``."""

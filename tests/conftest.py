"""Shared test helpers: records built in code, the same every run."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")


def make_receipt(**changes) -> dict:
    """A valid guarded search receipt (engram's shape), with ``changes`` applied."""
    receipt = {
        "schemaVersion": 0,
        "scope": "search",
        "query": "beacon status",
        "activeSpace": "space-a",
        "collection": "space-a-records",
        "requestedSourceClasses": ["status"],
        "allowedSourceClasses": ["status"],
        "kind": "hit",
        "locatorUris": ["qmd://space-a-records/brief.md"],
        "recordIds": ["brief"],
        "exposedResults": [
            {
                "recordId": "brief",
                "sourceUri": "qmd://space-a-records/brief.md",
                "relativePath": "brief.md",
                "sourceClasses": ["status"],
                "score": 0.9,
            }
        ],
        "relevanceThreshold": 0.5,
        "withheld": {"audienceId": "peer", "count": 1},
    }
    receipt.update(changes)
    return receipt

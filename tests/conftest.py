"""Shared test helpers: records built in code, the same every run."""

from __future__ import annotations

import contextlib
import functools
import http.server
import sys
import threading
import warnings
from collections.abc import Iterator
from pathlib import Path

import matplotlib
import pandas as pd
import pytest

matplotlib.use("Agg")


@pytest.fixture(scope="module")
def cluster():
    """A real distributed cluster: a LocalCluster of 2 worker processes, 1 thread each.

    Per module, so that its workers are gone while the other modules run: an
    idle worker still ticks (heartbeats, its memory monitor), and one cluster
    per test process, shared by its modules, took more CPU over the suite
    than the starts it saved.
    """
    from distributed import Client, LocalCluster

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        local = LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        )
        client = Client(local, set_as_default=False)
    yield client
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        client.close()
        local.close()


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


class _Server(http.server.ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        # A client that reads a response's head and hangs up (an existence check) is fine.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


@contextlib.contextmanager
def serve_folder(folder: Path) -> Iterator[str]:
    """A real HTTP server on 127.0.0.1 over ``folder``, in a thread: its base URL, until the end."""
    server = _Server(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def sorted_categories(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` with its categories in one order, unused ones dropped.

    Dask joins the partitions' categories in the order it meets them, and a
    partition's categories are those of its own rows.
    """
    frame = frame.copy()
    for name in frame.columns:
        if isinstance(frame[name].dtype, pd.CategoricalDtype):
            frame[name] = frame[name].cat.remove_unused_categories()
            ordered = sorted(frame[name].cat.categories, key=repr)
            frame[name] = frame[name].cat.reorder_categories(
                pd.Index(ordered, dtype=object, tupleize_cols=False)
            )
    return frame


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


def make_decision(decision_id: str, *, confidence=0.7, keyword_hits=(), **changes) -> dict:
    """A routing decision as the document server logs it, escalated on low confidence."""
    value = {
        "decision_id": decision_id,
        "policy_id": "baseline",
        "inputs": {
            "subject_domain": "legal",
            "content_chars": 5400,
            "deterministic_keyword_hits": list(keyword_hits),
            "self_declared_high_impact": False,
            "self_declared_risk_flags": [],
            "confidence": confidence,
            "evidence_doc_count": 2,
        },
        "decision": {
            "escalate_to_26b": True,
            "escalation_reasons": ["low_confidence"],
            "risk_flags": [],
            "high_impact_task": False,
            "synthesis_directives": [],
            "subject_domain_used": "legal",
            "used_fallback": False,
        },
    }
    value.update(changes)
    return value


def rows_by_path(source, limits=None) -> dict[str, int]:
    """How many rows of ``source`` the columnar path took, and how many the exact path.

    ``limits``: a :class:`~explicit_audit.reading.limits.Limits` to read with.
    """
    from explicit_audit._core.registry import kinds
    from explicit_audit.reading.collect import read_all

    reading = read_all(source, kinds(), progress=False, limits=limits)
    rows = {"columnar": 0, "exact": 0}
    for segments in reading.segments.values():
        for what, segment in segments:
            if what == "part":
                rows["columnar"] += (
                    segment.table.num_rows if hasattr(segment, "table") else len(segment)
                )
            else:
                rows["exact"] += len(segment)
    return rows


def without_columnar(kind):
    """A record kind with its columnar and bulk paths switched off: everything read exactly."""
    import dataclasses

    return dataclasses.replace(kind, fast=None)


def quiet_load(path, **options):
    """``ea.load`` without its RejectedRowsWarning: the test reads ``audit.rejected`` itself."""
    import explicit_audit as ea

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ea.RejectedRowsWarning)
        return ea.load(path, progress=False, **options)


def accounted(audit) -> None:
    """Every value read is either loaded or rejected, per file."""
    sources = audit.sources
    assert (sources.loaded + sources.rejected == sources.values_read).all(), sources


@pytest.fixture
def clean(tmp_path):
    """A folder holding one valid receipt, with no time: every check that looks at it passes."""
    import json

    folder = tmp_path / "clean"
    folder.mkdir()
    (folder / "r.jsonl").write_text(json.dumps(make_receipt()) + "\n", encoding="utf-8")
    return folder


def parameters_notebook(folder):
    """``folder/top.ipynb``: a notebook whose parameters cell declares TOP_N, CUT and LABEL
    besides DATA, and whose next cell prints them."""
    import nbformat
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

    notebook = new_notebook()
    notebook.cells = [
        new_markdown_cell("# Top findings"),
        new_code_cell(
            'DATA = "../data"\nTOP_N = 5\nCUT = 0.5\nLABEL = "all"',
            metadata={"tags": ["parameters"]},
        ),
        new_code_cell('print(f"top {TOP_N} at {CUT} for {LABEL}")'),
    ]
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "top.ipynb"
    nbformat.write(notebook, path)
    return path

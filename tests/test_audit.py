"""ea.load as a whole: accounting per file, order, strict mode, sources."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import make_receipt

import explicit_audit as ea

POLICY_YAML = Path(__file__).parent / "data" / "routing_policy_example.yaml"


def _jsonl(path: Path, values) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(v) + "\n" for v in values))
    return path


def test_rejected_rows_and_strict_mode_follow_file_order(tmp_path):
    _jsonl(tmp_path / "a.jsonl", [make_receipt(), make_receipt(withheld={"count": "3"})])
    (tmp_path / "b.jsonl").write_text(json.dumps(make_receipt()) + "\n{bad\n")
    with pytest.warns(ea.RejectedRowsWarning):
        audit = ea.load(tmp_path, progress=False)
    where = audit.rejected[["source_file", "source_line"]].values
    assert [(Path(f).name, line) for f, line in where] == [("a.jsonl", 2), ("b.jsonl", 2)]
    with pytest.raises(ea.InputError, match=r"a\.jsonl:2: withheld\.count"):
        ea.load(tmp_path, strict=True, progress=False)


def test_a_rejected_policy_file_is_accounted_for(tmp_path):
    shutil.copy(POLICY_YAML, tmp_path / "baseline.yaml")
    shutil.copy(POLICY_YAML, tmp_path / "copy.yaml")  # the same policy_id again
    (tmp_path / "list.yaml").write_text("- a\n")
    with pytest.warns(ea.RejectedRowsWarning):
        audit = ea.load(tmp_path, progress=False)
    assert len(audit.policies) == 1
    sources = audit.sources
    assert (sources.loaded + sources.rejected == sources.values_read).all(), sources
    assert sources["rejected"].sum() == 2


def test_the_same_file_named_twice_is_read_once(tmp_path):
    path = _jsonl(tmp_path / "x.jsonl", [make_receipt()])
    (tmp_path / "sub").mkdir()
    audit = ea.load([path, tmp_path / "sub" / ".." / "x.jsonl"], progress=False)
    assert len(audit.receipts) == 1


def test_ndjson_is_json_lines_and_an_empty_source_list_is_an_error(tmp_path):
    _jsonl(tmp_path / "x.ndjson", [make_receipt(), make_receipt()])
    assert len(ea.load(tmp_path, progress=False).receipts) == 2
    with pytest.raises(ea.AuditError, match="no source given"):
        ea.load([], progress=False)


def test_a_kind_with_no_records_gets_empty_tables_of_its_own_at_each_load(tmp_path):
    import pandas as pd

    from explicit_audit._core.registry import kinds
    from explicit_audit.reading.tables import _build_kind

    path = tmp_path / "receipts.jsonl"
    path.write_text(json.dumps(make_receipt()) + "\n", encoding="utf-8")
    first = ea.load(path, progress=False)
    assert len(first.receipts) == 1 and first.plans.empty and first.decisions.empty
    # A reader's changes to the empty tables of one load ...
    first.plans["mine"] = 1
    first.plans.attrs["mine"] = True
    del first.decisions[first.decisions.columns[0]]
    second = ea.load(path, progress=False)
    # ... reach neither the next load's, which equal tables built anew from no values.
    for kind in kinds():
        if kind.name == "receipts":
            continue
        for name, fresh in _build_kind(kind, [], False, None, True).tables.items():
            shown = getattr(second, name)
            pd.testing.assert_frame_equal(shown, fresh)
            assert shown.attrs == fresh.attrs, name
            assert shown is not getattr(first, name)


def test_an_audit_without_the_decisions_kind_shows_and_sizes_its_tables(tmp_path):
    """No kit module names the decisions kind's policies: without that kind, nothing raises."""
    from explicit_audit._core import registry
    from explicit_audit.report._empty import has_records, missing_tables

    path = _jsonl(tmp_path / "receipts.jsonl", [make_receipt()])
    with registry.replaced([]):  # the registry as it was, in its order, after the block
        registry.unregister("decisions")
        audit = ea.load(path, progress=False)
        shown = repr(audit)
        assert has_records(audit, [["receipts"]])
        assert missing_tables(audit, [["receipts"], ["policies"]]) == ["policies"]
    assert "policies" not in shown and "receipts=1" in shown, shown
    assert repr(ea.load(path, progress=False)).endswith("policies=0, rejected=0)")

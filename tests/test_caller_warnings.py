"""Warnings point at the caller's line, not at a line inside the kit."""

from __future__ import annotations

import inspect
import json
import warnings
from pathlib import Path

from conftest import make_receipt

import explicit_audit as ea

DATA = Path(__file__).resolve().parents[1] / "data"


def _bad_file(tmp_path):
    path = tmp_path / "mixed.jsonl"
    path.write_text(json.dumps(make_receipt()) + "\n{not json\n", encoding="utf-8")
    return path


def _only(caught, category):
    found = [w for w in caught if issubclass(w.category, category)]
    assert len(found) == 1, [str(w.message) for w in caught]
    return found[0]


def test_rejected_rows_warning_names_the_load_line(tmp_path):
    path = _bad_file(tmp_path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        line = inspect.currentframe().f_lineno + 1
        ea.load(path, progress=False)
    found = _only(caught, ea.RejectedRowsWarning)
    assert found.filename == __file__
    assert found.lineno == line


def test_a_per_kind_loader_warns_at_its_caller_too(tmp_path):
    path = _bad_file(tmp_path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        line = inspect.currentframe().f_lineno + 1
        ea.load_receipts(path, progress=False)
    found = _only(caught, ea.RejectedRowsWarning)
    assert (found.filename, found.lineno) == (__file__, line)


def test_a_deprecated_name_warns_at_its_caller():
    plans = ea.load_plans(DATA / "plans" / "arborist_runs.jsonl", progress=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        line = inspect.currentframe().f_lineno + 1
        ea.verify_plans(plans)
    found = _only(caught, DeprecationWarning)
    assert (found.filename, found.lineno) == (__file__, line)


def test_a_helper_of_the_users_own_is_named_not_the_kit(tmp_path):
    path = _bad_file(tmp_path)

    def my_loader():
        return ea.load(path, progress=False)  # the line the warning must name

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        my_loader()
    found = _only(caught, ea.RejectedRowsWarning)
    assert found.filename == __file__
    source = inspect.getsource(my_loader).splitlines()
    first = my_loader.__code__.co_firstlineno
    assert "the line the warning must name" in source[found.lineno - first]

"""Property test: a JSON Lines file cut into partitions anywhere loads as it does whole.

Random valid and damaged files of every record kind (the strategies of
``test_reading_properties``) are loaded with ``engine="dask"`` at random
partition sizes, down to a few bytes, and compared with the in-memory load:
the same rows, index labels, line numbers, rejected rows and accounting.
"""

from __future__ import annotations

import dask
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st
from test_dask import _sorted_categories
from test_reading_properties import SETTINGS, _load, _write, documents

import explicit_audit as ea


@settings(SETTINGS, max_examples=25)
@given(items=documents(), blocksize=st.integers(min_value=16, max_value=4096))
def test_any_partition_size_loads_what_the_whole_file_loads(tmp_path_factory, items, blocksize):
    folder = tmp_path_factory.mktemp("parts")
    path, _ = _write(folder, items, "jsonl")
    memory = _load(path)
    try:
        lazy = ea.load(path, engine="dask", blocksize=blocksize)
        with dask.config.set(scheduler="synchronous"):
            computed = lazy.compute()
    except ea.AuditError:
        raise
    except Exception as exc:  # the property: nothing else escapes
        raise AssertionError(f"{type(exc).__name__} escaped: {exc}") from exc
    for name, table in memory.tables.items():
        pd.testing.assert_frame_equal(
            _sorted_categories(table), _sorted_categories(computed.tables[name]), obj=name
        )
    for name in ("rejected", "sources"):
        pd.testing.assert_frame_equal(
            _sorted_categories(getattr(memory, name)),
            _sorted_categories(getattr(computed, name)),
            obj=name,
        )

"""Property test: a JSON Lines file cut into partitions anywhere loads as it does whole.

Random valid and damaged files of every record kind (the strategies of
``test_reading_properties``) are loaded with ``engine="dask"`` at random
partition sizes, down to a few bytes, and compared with the in-memory load:
the same rows, index labels, line numbers, rejected rows and accounting.
"""

from __future__ import annotations

import dask
import pandas as pd
from conftest import sorted_categories as _sorted_categories
from hypothesis import given, settings
from hypothesis import strategies as st
from test_reading_properties import (
    MANY_FILES,
    SETTINGS,
    _load,
    _write,
    _write_folder,
    documents,
    folders,
)

import explicit_audit as ea


def _assert_same_load(memory, computed) -> None:
    """The in-memory and the computed Dask load: every table, the rejected rows, the sources."""
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
    _assert_same_load(memory, computed)


@MANY_FILES
@given(files=folders(), blocksize=st.integers(min_value=64, max_value=1 << 16))
def test_a_folder_of_small_files_loads_on_dask_as_in_memory(tmp_path_factory, files, blocksize):
    # Small files are packed into partitions (up to blocksize): every layout, names not
    # UTF-8, digit runs and unique keys give the in-memory engine's frames.
    folder = tmp_path_factory.mktemp("many")
    # A logger's time key (``ts``) holding text that is not a time, or a number in one
    # file and text in another, is typed as the whole load types it in every partition.
    _write_folder(folder, files)
    memory = _load(folder)
    lazy = ea.load(folder, engine="dask", blocksize=blocksize, sample_bytes=1 << 20)
    with dask.config.set(scheduler="synchronous"):
        computed = lazy.compute()
    _assert_same_load(memory, computed)

"""Importing the kit makes the system allocator pyarrow's default pool, unless the
environment names one; checked in fresh interpreters, as a user starts them."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from explicit_audit.reading.memory import POOL_ENV

_SHOW = "import pyarrow as pa; {}; print(pa.default_memory_pool().backend_name)"


def _backend(code: str, **env: str) -> str:
    environment = {k: v for k, v in os.environ.items() if k != POOL_ENV} | env
    done = subprocess.run(
        [sys.executable, "-c", _SHOW.format(code)],
        capture_output=True,
        text=True,
        check=True,
        env=environment,
    )
    return done.stdout.strip().splitlines()[-1]


def test_importing_the_kit_makes_the_system_allocator_the_default_pool():
    if _backend("pass") == "system":
        pytest.skip("pyarrow's default pool is the system allocator here already")
    assert _backend("import explicit_audit") == "system"


def test_a_pool_named_in_the_environment_is_left_as_named():
    named = [
        name for name in ("mimalloc", "jemalloc") if _backend("pass", **{POOL_ENV: name}) == name
    ]
    if not named:
        pytest.skip("pyarrow here has neither mimalloc nor jemalloc")
    assert _backend("import explicit_audit", **{POOL_ENV: named[0]}) == named[0]

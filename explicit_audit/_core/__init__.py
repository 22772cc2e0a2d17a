"""The kind contract and what every layer shares: records, shapes, findings, the registry.

It knows no record kind, and reads no file: the reading engine
(:mod:`explicit_audit.reading`) is built on it.

Importing it (which every part of the kit does first) refuses a pandas older
than 3.0 with one clear message: the kit's tables are built on pandas 3's
string dtype and copy-on-write. Tried on pandas 2.2.3: the kit does not
import (``StringDtype(na_value=...)``), and with that line patched 64 of 742
tests of the loaders and checks fail, some with silently different answers
(rejected rows not announced).
"""

import pandas as _pandas

#: The oldest pandas the kit runs on; ``pyproject.toml`` declares the same bound.
PANDAS_REQUIRED = (3, 0)


def _release(version: str) -> tuple[int, ...]:
    numbers = []
    for part in version.split(".")[:2]:
        digits = "".join(ch for ch in part if ch.isdigit()) or "0"
        numbers.append(int(digits))
    return tuple(numbers)


if _release(_pandas.__version__) < PANDAS_REQUIRED:
    raise ImportError(
        f"explicit_audit needs pandas 3.0 or newer; this environment has pandas "
        f"{_pandas.__version__}: pip install 'pandas>=3,<4' (or use an environment of its own)"
    )

"""Load an upstream system's reference code from ``shared/seeds/`` for a baseline.

The reference code is not part of this repository: a benchmark reads it from
the shared folder beside the checkout (``../shared/seeds``, or the folder in
``$EXPLICIT_AUDIT_SEEDS``) and runs it as it is, so the baseline is the
producer's own code, not a restatement of it.
"""

from __future__ import annotations

import os
import sys
import types
from pathlib import Path

__all__ = ["load_seed"]

_DEFAULT = Path(__file__).resolve().parents[1].parent / "shared" / "seeds"


def _seed_folder() -> Path:
    folder = Path(os.environ.get("EXPLICIT_AUDIT_SEEDS", _DEFAULT))
    if not folder.is_dir():
        raise SystemExit(
            f"reference code not found in {folder}: set EXPLICIT_AUDIT_SEEDS to the "
            "shared/seeds folder"
        )
    return folder


def load_seed(prefix: str, name: str, stubs: dict[str, dict] | None = None) -> types.ModuleType:
    """Run one seed file (``<prefix>_*.txt``) as a module and return it.

    Parameters
    ----------
    prefix : str
        The seed's number, e.g. ``"000"``.
    name : str
        The module name to give it.
    stubs : dict, optional
        Modules the seed imports that are not shown in it, as
        ``{"package.module": {"attribute": value}}``.

    Returns
    -------
    module
    """
    (path,) = sorted(_seed_folder().glob(f"{prefix}_*.txt"))
    # The first line names the file in its upstream repository; the code follows.
    source = path.read_text("utf-8").split("\n", 1)[1]
    for module_name, attributes in (stubs or {}).items():
        parts = module_name.split(".")
        for depth in range(1, len(parts) + 1):
            sys.modules.setdefault(
                ".".join(parts[:depth]), types.ModuleType(".".join(parts[:depth]))
            )
        sys.modules[module_name].__dict__.update(attributes)
    module = types.ModuleType(name)
    module.__file__ = str(path)
    sys.modules[name] = module
    exec(compile(source, str(path), "exec"), module.__dict__)
    return module

"""Load an upstream system's reference code from ``shared/seeds/`` for a baseline.

The reference code is not part of this repository: a benchmark reads it from
the folder named by ``--seeds DIR`` on its command line, else by
``$EXPLICIT_AUDIT_SEEDS``, else the shared folder beside the checkout
(``../shared/seeds``), and runs it as it is, so the baseline is the
producer's own code, not a restatement of it. The folder holds one file per
producer, ``NNN_<digest>.txt``, its first line naming the file upstream.
"""

from __future__ import annotations

import os
import sys
import types
from pathlib import Path

__all__ = ["add_seeds_option", "load_seed"]

_DEFAULT = Path(__file__).resolve().parents[1].parent / "shared" / "seeds"
_VARIABLE = "EXPLICIT_AUDIT_SEEDS"


def add_seeds_option(parser) -> None:
    """Declare ``--seeds DIR`` on a benchmark's parser (it is read before the parser runs)."""
    parser.add_argument(
        "--seeds",
        metavar="DIR",
        help=f"folder of the producers' reference code (NNN_*.txt); default: ${_VARIABLE}, "
        f"else {_DEFAULT}",
    )


def _given_folder() -> tuple[Path, str]:
    """The folder asked for, and how it was asked for (for the message when it is wrong)."""
    argv = sys.argv[1:]
    for position, item in enumerate(argv):
        if item == "--seeds" and position + 1 < len(argv):
            return Path(argv[position + 1]), "--seeds"
        if item.startswith("--seeds="):
            return Path(item.split("=", 1)[1]), "--seeds"
    if os.environ.get(_VARIABLE):
        return Path(os.environ[_VARIABLE]), f"${_VARIABLE}"
    return _DEFAULT, "the default (shared/seeds beside the checkout)"


def _seed_folder() -> Path:
    folder, how = _given_folder()
    if not folder.is_dir():
        raise SystemExit(
            f"reference code not found: {folder}, named by {how}, is not a folder. This "
            "benchmark's baseline is the producers' own code, which is not part of the "
            "repository: pass --seeds DIR or set EXPLICIT_AUDIT_SEEDS=DIR to the folder that "
            "holds it (shared/seeds, files NNN_*.txt)"
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
    folder = _seed_folder()
    found = sorted(folder.glob(f"{prefix}_*.txt"))
    if len(found) != 1:
        raise SystemExit(
            f"reference code not found: {folder} holds {len(found)} files {prefix}_*.txt, not one; "
            "pass --seeds DIR or set EXPLICIT_AUDIT_SEEDS=DIR to the shared/seeds folder"
        )
    (path,) = found
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

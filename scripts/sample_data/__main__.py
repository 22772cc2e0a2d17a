"""Write the bundled sample data: ``python -m scripts.sample_data [DATA_DIR]``.

Each record kind has its own generator module here; every one is
deterministic (fixed seeds, no wall clock), so rerunning this rewrites the
same bytes.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import plans, receipts, routing


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m scripts.sample_data",
        description="Write the bundled sample data (deterministic: the same bytes every run).",
    )
    parser.add_argument(
        "data_dir", nargs="?", default="data", metavar="DATA_DIR", help="folder (default: data)"
    )
    data_dir = Path(parser.parse_args(argv).data_dir)
    data_dir.mkdir(parents=True, exist_ok=True)
    for generator in (receipts, plans, routing):
        generator.write(data_dir)
        print(f"wrote {generator.__name__.rsplit('.', 1)[-1]} sample data under {data_dir}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

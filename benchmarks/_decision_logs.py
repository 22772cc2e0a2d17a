"""Decision logs of any length for the benchmarks: the bundled decisions, copied."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def decision_lines(n: int) -> list[str]:
    """``n`` decision lines: the bundled ones, copied with their ids renumbered per copy."""
    bundled = []
    for path in sorted((ROOT / "data/decisions").glob("*.jsonl")):
        bundled.extend(path.read_text("utf-8").splitlines())
    lines = []
    for copy in range(n // len(bundled) + 1):
        lines.extend(line.replace('"d-', f'"d{copy}-', 1) + "\n" for line in bundled)
    return lines[:n]

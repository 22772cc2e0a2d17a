"""The scripts and benchmarks beside the kit: their command lines from any folder."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SEEDS = Path(os.environ.get("EXPLICIT_AUDIT_SEEDS", ROOT.parent / "shared" / "seeds"))


def _run(argv: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if k != "EXPLICIT_AUDIT_SEEDS"}
    environment.update(PYTHONPATH=str(ROOT), **env)
    return subprocess.run(
        [sys.executable, *argv],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=environment,
        timeout=300,
        check=False,
    )


def test_the_panels_benchmark_says_how_to_run_it_from_any_folder(tmp_path):
    finished = _run([str(ROOT / "benchmarks" / "bench_panels.py"), "--help"], tmp_path)
    assert finished.returncode == 0, finished.stderr
    assert "--presses" in finished.stdout and "150 ms" in finished.stdout
    assert list(tmp_path.iterdir()) == []


def test_sample_data_help_writes_nothing(tmp_path):
    finished = _run(["-m", "scripts.sample_data", "--help"], tmp_path)
    assert finished.returncode == 0
    assert finished.stdout.startswith("usage: python -m scripts.sample_data")
    assert list(tmp_path.iterdir()) == []


def test_a_benchmark_without_its_reference_code_says_how_to_name_it(tmp_path):
    bench = str(ROOT / "benchmarks" / "bench_plans.py")
    finished = _run([bench, "--n", "10", "--seeds", str(tmp_path / "none")], tmp_path)
    assert finished.returncode == 1
    assert finished.stderr.startswith(f"reference code not found: {tmp_path / 'none'}, named by")
    assert "--seeds DIR" in finished.stderr and "EXPLICIT_AUDIT_SEEDS" in finished.stderr
    finished = _run([bench, "--n", "10"], tmp_path, EXPLICIT_AUDIT_SEEDS=str(tmp_path))
    assert finished.returncode == 1
    assert f"{tmp_path} holds 0 files 000_*.txt" in finished.stderr


@pytest.mark.skipif(not SEEDS.is_dir(), reason="the reference code (shared/seeds) is not here")
def test_a_benchmark_reads_its_reference_code_from_the_folder_named(tmp_path):
    seeds = tmp_path / "elsewhere"
    seeds.mkdir()
    for path in SEEDS.glob("000_*.txt"):
        (seeds / path.name).write_bytes(path.read_bytes())
    bench = str(ROOT / "benchmarks" / "bench_plans.py")
    finished = _run([bench, "--n", "50", "--repeat", "1", "--seeds", str(seeds)], tmp_path)
    assert finished.returncode == 0, finished.stderr
    # The seed's loop and the kit each reproduced all 50 recorded hashes.
    rows = {line.split()[0]: line.split() for line in finished.stdout.splitlines() if line}
    assert rows["seed"][-1] == "50" and rows["kit"][-1] == "50", finished.stdout
    assert "reproduced" not in finished.stdout


def test_the_scaling_benchmark_measures_each_size_and_says_whether_it_met_its_goal(tmp_path):
    bench = str(ROOT / "benchmarks" / "bench_scaling.py")
    finished = _run([bench, "--sizes", "300,2400", "--repeat", "1", "--data", "inputs"], tmp_path)
    assert finished.returncode == 0, finished.stderr
    lines = finished.stdout.splitlines()
    assert [line.split()[0] for line in lines[1:3]] == ["300", "2,400"]
    assert lines[-2].startswith("time per record, 300 -> 2,400:")
    assert lines[-1] in ("met", "MISSED")
    assert sorted(path.name for path in (tmp_path / "inputs").iterdir()) == [
        "receipts_2400.jsonl",
        "receipts_300.jsonl",
    ]

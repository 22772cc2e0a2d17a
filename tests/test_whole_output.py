"""A command's output arrives whole, whatever interrupts its writing.

Unbuffered (``python -u``, or ``PYTHONUNBUFFERED`` set, as many CI images set it),
Python hands a text to standard output in one ``write(2)``; a pipe's reader that is
slower than the writer leaves the writer waiting inside it. Stopped and continued
there (Ctrl-Z then ``fg``, a debugger or a profiler attaching), the write returns
what it had written, and the rest of the document used to be lost in silence, the
exit status unchanged. Each case runs the real command in its own process, reads
the start of its output, then stops and continues the process while it writes.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: The bundled decisions without their policies: a finding per decision, some 1.4 MB of JSON.
DECISIONS = ROOT / "data" / "decisions"


def _env(unbuffered: bool) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    if unbuffered:
        env["PYTHONUNBUFFERED"] = "1"
    return env


def _run(argv: list[str], env: dict, stops: int, tmp_path: Path) -> tuple[int, bytes]:
    """The command's exit status and output, stopped and continued ``stops`` times while it
    writes; its stderr is kept in a file, so that it never waits on a full pipe there."""
    command = [sys.executable, "-m", "explicit_audit.cli", *argv]
    with open(tmp_path / "stderr", "wb") as stderr:
        process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=stderr, stdin=subprocess.DEVNULL, env=env
        )
        try:
            output = bytearray(process.stdout.read1(4096))  # it writes: the pipe is full behind
            for _ in range(stops):
                process.send_signal(signal.SIGSTOP)
                time.sleep(0.02)
                process.send_signal(signal.SIGCONT)
                output += process.stdout.read1(65536)
            output += process.stdout.read()
        finally:
            process.stdout.close()
            status = process.wait(timeout=120)
    return status, bytes(output)


@pytest.mark.parametrize("unbuffered", [True, False], ids=["unbuffered", "buffered"])
def test_a_document_stopped_and_continued_while_written_arrives_whole(tmp_path, unbuffered):
    argv = ["verify", str(DECISIONS), "--json", "--no-progress"]
    env = _env(unbuffered)
    status, whole = _run(argv, env, 0, tmp_path)
    assert status == 1 and len(whole) > 1_000_000
    stopped_status, stopped = _run(argv, env, 5, tmp_path)
    assert (stopped_status, len(stopped)) == (status, len(whole))
    assert stopped == whole
    assert json.loads(stopped)["exit_status"] == 1

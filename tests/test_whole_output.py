"""A command's output arrives whole, whatever interrupts its writing.

A write to a pipe whose reader is slower than the writer waits inside the
``write(2)``, or, where the pipe was made non-blocking by another process
sharing it, is refused while the pipe is full. Unbuffered (``python -u``, or
``PYTHONUNBUFFERED`` set, as many CI images set it), Python hands a text to
standard output in one ``write(2)``: stopped and continued there (Ctrl-Z then
``fg``, a debugger or a profiler attaching), the write returns what it had
written, and the rest of the document used to be lost in silence, the exit
status unchanged. Buffered, a non-blocking pipe that was full used to end the
command in a traceback. Each case runs the real command in its own process and
reads its output more slowly than it is written.
"""

from __future__ import annotations

import fcntl
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
ARGV = ["verify", str(ROOT / "data" / "decisions"), "--json", "--no-progress"]
MODES = pytest.mark.parametrize("unbuffered", [True, False], ids=["unbuffered", "buffered"])


def _run(tmp_path: Path, unbuffered: bool, *, stops: int = 0, nonblocking: bool = False):
    """The command's exit status, its output and its stderr.

    The output is read 4 KiB at first, then ``stops`` times the process is stopped
    and continued (while it waits to write the rest), then all that is left.
    ``nonblocking``: the pipe is made non-blocking, and the start read late.
    """
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    if unbuffered:
        env["PYTHONUNBUFFERED"] = "1"
    read_end, write_end = os.pipe()
    if nonblocking:
        flags = fcntl.fcntl(write_end, fcntl.F_GETFL)
        fcntl.fcntl(write_end, fcntl.F_SETFL, flags | os.O_NONBLOCK)
    command = [sys.executable, "-m", "explicit_audit.cli", *ARGV]
    with open(tmp_path / "stderr", "wb") as stderr:  # a file: it never waits on stderr
        process = subprocess.Popen(
            command, stdout=write_end, stderr=stderr, stdin=subprocess.DEVNULL, env=env
        )
    os.close(write_end)
    with os.fdopen(read_end, "rb", buffering=0) as reader:
        if nonblocking:
            time.sleep(2)  # the pipe fills, and refuses the rest of the write
        output = bytearray(reader.read(4096))
        for _ in range(stops):
            process.send_signal(signal.SIGSTOP)
            time.sleep(0.02)
            process.send_signal(signal.SIGCONT)
            output += reader.read(65536)
        while chunk := reader.read(65536):
            output += chunk
            if nonblocking:
                time.sleep(0.001)  # slower than the writer: the pipe is full again
    status = process.wait(timeout=120)
    return status, bytes(output), (tmp_path / "stderr").read_text()


@pytest.fixture(scope="module")
def whole(tmp_path_factory) -> tuple[int, bytes]:
    """The command's exit status and output, read with nothing in the way."""
    status, output, stderr = _run(tmp_path_factory.mktemp("whole"), False)
    assert status == 1 and len(output) > 1_000_000 and stderr == ""
    assert json.loads(output)["exit_status"] == 1
    return status, output


@MODES
def test_a_document_stopped_and_continued_while_written_arrives_whole(tmp_path, whole, unbuffered):
    status, output, stderr = _run(tmp_path, unbuffered, stops=5)
    assert (status, len(output), stderr) == (whole[0], len(whole[1]), "")
    assert output == whole[1]


@MODES
def test_a_document_written_to_a_full_non_blocking_pipe_arrives_whole(tmp_path, whole, unbuffered):
    status, output, stderr = _run(tmp_path, unbuffered, nonblocking=True)
    assert (status, len(output), stderr) == (whole[0], len(whole[1]), "")
    assert output == whole[1]

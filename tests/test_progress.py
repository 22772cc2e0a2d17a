"""Progress that tells the truth: a bar over the bytes read, shown where it is wanted.

Each case runs a real process, its standard error a pseudo-terminal (as in a
terminal) or a pipe (as in a log), with the environment of the case.
"""

from __future__ import annotations

import fcntl
import gzip
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest
from tqdm import tqdm

from explicit_audit.reading.content import PIECE_BYTES, FileReader
from explicit_audit.reading.limits import Limits

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from bench_receipts import write_receipts  # noqa: E402

LOAD = (
    "import explicit_audit as ea, sys\n"
    "audit = ea.load(sys.argv[1]{options})\n"
    "print(len(audit.receipts))\n"
)


#: Receipts in :func:`large`: about 22 MB, read in more than one piece
#: (``PIECE_BYTES``) and many reads, each counted on the bar.
RECEIPTS = 20_000


@pytest.fixture(scope="module")
def large(tmp_path_factory) -> Path:
    """A file the bar counts over many reads; the cases set the delay before it shows to 0."""
    path = tmp_path_factory.mktemp("progress") / "receipts.jsonl"
    write_receipts(path, RECEIPTS)
    assert path.stat().st_size > PIECE_BYTES
    return path


def _env(**changes) -> dict:
    """The environment of a case; the bar shows at once (the delay has its own test)."""
    unset = ("CI", "EXPLICIT_AUDIT_PROGRESS", "EXPLICIT_AUDIT_PROGRESS_DELAY")
    env = {k: v for k, v in os.environ.items() if k not in unset}
    env["EXPLICIT_AUDIT_PROGRESS_DELAY"] = "0"
    env.update(changes)
    return env


def _run(command: list[str], *, tty: bool, env: dict) -> tuple[int, str, str]:
    """Run ``command``; its stderr a pseudo-terminal when ``tty``. (status, stdout, stderr)."""
    if not tty:
        done = subprocess.run(
            command, capture_output=True, text=True, env=env, cwd=ROOT, timeout=600
        )
        return done.returncode, done.stdout, done.stderr
    master, slave = pty.openpty()
    # A terminal of 100 columns: a pseudo-terminal starts with none.
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=slave, env=env, cwd=ROOT, text=True
    )
    os.close(slave)
    captured = b""
    while True:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            try:
                data = os.read(master, 65536)
            except OSError:  # the child closed its end
                break
            if not data:
                break
            captured += data
        elif process.poll() is not None:
            break
    os.close(master)
    stdout = process.stdout.read()
    process.stdout.close()
    return process.wait(timeout=600), stdout, captured.decode("utf-8", "replace")


def _load(path: Path, *, tty: bool, options: str = "", **env) -> str:
    script = LOAD.format(options=options)
    status, stdout, stderr = _run(
        [sys.executable, "-c", script, str(path)], tty=tty, env=_env(**env)
    )
    assert status == 0, stderr
    assert int(stdout.split()[-1]) == RECEIPTS
    return stderr


def _size_shown(path: Path) -> str:
    return tqdm.format_sizeof(path.stat().st_size, divisor=1024)


def test_a_terminal_shows_the_bytes_of_one_large_file(large):
    shown = _load(large, tty=True)
    assert "reading" in shown
    # The total is the file's size, and the bar reaches it: bytes, not files.
    assert f"/{_size_shown(large)}" in shown
    assert f"{_size_shown(large)}/{_size_shown(large)}" in shown
    # Then the tables are built, on a bar of their own: the kinds, every one of them built.
    assert "building tables" in shown.split(f"{_size_shown(large)}/{_size_shown(large)}")[-1]
    assert re.search(r"building tables: 100%.*\| (\d+)/\1 kinds \[", shown)


@pytest.mark.parametrize(
    ("tty", "options", "env"),
    [
        pytest.param(True, "", {"CI": "true"}, id="ci"),
        pytest.param(True, "", {"EXPLICIT_AUDIT_PROGRESS": "0"}, id="env-off"),
        pytest.param(True, ", progress=False", {"EXPLICIT_AUDIT_PROGRESS": "1"}, id="call-off"),
        pytest.param(False, "", {}, id="pipe"),
    ],
)
def test_no_bar_where_it_is_not_wanted(large, tty, options, env):
    assert "reading" not in _load(large, tty=tty, options=options, **env)


@pytest.mark.parametrize(
    ("tty", "options", "env"),
    [
        pytest.param(False, ", progress=True", {"CI": "true"}, id="call-on"),
        pytest.param(False, "", {"CI": "true", "EXPLICIT_AUDIT_PROGRESS": "1"}, id="env-on"),
    ],
)
def test_a_bar_where_it_is_asked_for(large, tty, options, env):
    assert f"/{_size_shown(large)}" in _load(large, tty=tty, options=options, **env)


def test_a_quick_load_prints_nothing():
    small = ROOT / "data" / "plans" / "arborist_runs.jsonl"
    script = "import explicit_audit as ea, sys\nprint(len(ea.load(sys.argv[1]).plans))\n"
    env = _env()
    del env["EXPLICIT_AUDIT_PROGRESS_DELAY"]  # the default half second
    status, stdout, stderr = _run([sys.executable, "-c", script, str(small)], tty=True, env=env)
    assert status == 0 and stdout.strip() != "0"
    assert stderr == ""
    # Without the delay the same load draws its bar: the delay is what keeps it quiet.
    status, _, stderr = _run([sys.executable, "-c", script, str(small)], tty=True, env=_env())
    assert status == 0 and f"/{_size_shown(small)}" in stderr


@pytest.mark.parametrize("gzipped", [False, True], ids=["plain", "gzip"])
def test_the_reader_counts_every_byte_of_the_file(tmp_path, gzipped):
    data = (ROOT / "data" / "plans" / "arborist_runs.jsonl").read_bytes() * 20
    path = tmp_path / ("plans.jsonl.gz" if gzipped else "plans.jsonl")
    path.write_bytes(gzip.compress(data) if gzipped else data)
    counted: list[int] = []
    reader = FileReader(path, Limits(), on_bytes=counted.append)
    pieces = sum(len(piece.data) for piece in reader)
    assert pieces == len(data)  # every decompressed byte handed on
    assert sum(counted) == path.stat().st_size  # every stored byte counted, once
    assert len(counted) > 1  # as it goes, not at the end


@pytest.mark.parametrize("gzipped", [False, True], ids=["plain", "gzip"])
def test_a_stream_counts_every_byte_once(tmp_path, gzipped):
    """A file read from a URL or a stream counts its stored bytes as a local file does."""
    import fsspec

    from explicit_audit.reading.remote import RemoteFile, StreamReader

    data = (ROOT / "data" / "plans" / "arborist_runs.jsonl").read_bytes() * 20
    stored = gzip.compress(data) if gzipped else data
    name = "plans.jsonl.gz" if gzipped else "plans.jsonl"
    url = f"memory://{tmp_path.name}/{name}"
    fsspec.filesystem("memory").pipe(url, stored)
    counted: list[int] = []
    reader = StreamReader(
        None, Limits(), name=name, remote=RemoteFile(url, url=url), on_bytes=counted.append
    ).start()
    pieces = sum(len(piece.data) for piece in reader)
    assert pieces == len(data)
    assert sum(counted) == len(stored)  # gzip's head counted once, not at start and again
    assert reader.bytes_read == len(stored)
    fsspec.filesystem("memory").rm(url)


def test_the_command_line_options(large):
    command = [sys.executable, "-m", "explicit_audit.cli", "summary", str(large)]
    status, _, shown = _run([*command, "--progress"], tty=False, env=_env(CI="true"))
    assert status == 0 and f"/{_size_shown(large)}" in shown
    status, _, shown = _run([*command, "--no-progress"], tty=True, env=_env())
    assert status == 0 and "reading" not in shown


def test_dask_computes_show_their_progress_too(large):
    pytest.importorskip("dask")
    script = (
        "import explicit_audit as ea, sys\n"
        "with ea.use_scheduler('synchronous'):\n"
        "    audit = ea.load(sys.argv[1], engine='dask', blocksize=4 << 20)\n"
        "    print(ea.verify_all(audit).checked['receipt_rules'])\n"
    )
    status, stdout, shown = _run([sys.executable, "-c", script, str(large)], tty=True, env=_env())
    assert status == 0, shown
    assert int(stdout.split()[-1]) == RECEIPTS
    assert "100% Completed" in shown  # Dask's own bar, on standard error
    status, _, shown = _run([sys.executable, "-c", script, str(large)], tty=True, env=_env(CI="1"))
    assert status == 0 and "Completed" not in shown


NOTEBOOK_LOAD = """
import os, warnings
os.environ["EXPLICIT_AUDIT_PROGRESS_DELAY"] = "0"
import explicit_audit as ea
audit = ea.load({path!r}, progress=True)
len(audit.receipts)
"""


def test_a_notebook_shows_tqdm_s_widgets(large):
    """In a Jupyter kernel the bars are tqdm's widgets, not text on standard error."""
    nbformat = pytest.importorskip("nbformat")
    from nbclient import NotebookClient

    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(NOTEBOOK_LOAD.format(path=str(large)))]
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    NotebookClient(notebook, timeout=300, kernel_name="python3").execute()
    outputs = notebook.cells[0].outputs
    widgets = [
        o for o in outputs if "application/vnd.jupyter.widget-view+json" in o.get("data", {})
    ]
    shown = [o["data"]["text/plain"] for o in widgets]
    assert any(text.startswith("reading: ") for text in shown), outputs
    assert any(text.startswith("building tables: ") for text in shown), outputs
    assert not any(o.get("name") == "stderr" for o in outputs), outputs
    assert outputs[-1]["data"]["text/plain"] == str(RECEIPTS)

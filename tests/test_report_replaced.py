"""Reports replaced whole: a run's pages are swapped in together, or the previous set stays."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest
from conftest import make_receipt
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from explicit_audit.report._files import (
    STAGING_MARK,
    STAGING_PREFIX,
    staged_reports,
    write_atomically,
)

ROOT = Path(__file__).parent.parent
REPORT_ARGS = ("--out", "out", "--notebooks", "notebooks")
KIT_PAGE = '<html><head><meta name="generator" content="explicit_audit 1.0"></head></html>\n'


def _notebook(title: str, code: str) -> nbformat.NotebookNode:
    nb = new_notebook()
    nb.cells = [
        new_markdown_cell(f"# {title}\n\nWhat this answers."),
        new_code_cell("DATA = 'x'", metadata={"tags": ["parameters"]}),
        new_code_cell(code),
    ]
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    return nb


def _files_below(folder: Path) -> dict[str, bytes]:
    """Every file below ``folder``, by its path relative to it, with its bytes."""
    return {
        str(path.relative_to(folder)): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def _write_receipts(folder: Path, count: int) -> None:
    lines = [json.dumps(make_receipt(query=f"question {n}")) for n in range(count)]
    (folder / "receipts.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def _report(tmp_path: Path, **kwargs) -> subprocess.Popen:
    return subprocess.Popen(
        [*(sys.executable, "-m", "explicit_audit.cli", "report", "records"), *REPORT_ARGS],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        **kwargs,
    )


@contextlib.contextmanager
def _group_ends(process: subprocess.Popen):
    """Whatever the test finds, the process's group is gone and its pipes closed after."""
    try:
        yield process
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        for stream in (process.stdout, process.stderr):
            stream.close()


def test_an_interrupted_report_leaves_the_previous_pages_whole(tmp_path):
    data = tmp_path / "records"
    data.mkdir()
    _write_receipts(data, 2)
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    gate = tmp_path / "hold"
    counted = "import explicit_audit as ea\nprint(len(ea.load(DATA, progress=False).receipts))"
    nbformat.write(_notebook("First", counted), notebooks / "a_first.ipynb")
    held = f"import os, time\nwhile os.path.exists({str(gate)!r}):\n    time.sleep(0.1)"
    nbformat.write(_notebook("Second", held), notebooks / "b_second.ipynb")
    first = _report(tmp_path)
    _out, err = first.communicate(timeout=600)
    assert first.returncode == 0, err.decode()
    out = tmp_path / "out"
    # The user's own files beside the pages, one a folder named as the kit's staging.
    (out / "notes.html").write_text("<html>written by hand</html>\n", encoding="utf-8")
    (out / "summary.txt").write_text("not a page\n", encoding="utf-8")
    mine = out / f"{STAGING_PREFIX}mine"
    mine.mkdir()
    (mine / "draft.html").write_text(KIT_PAGE + "<p>my edits</p>\n", encoding="utf-8")
    previous = _files_below(out)
    assert {"a_first.html", "b_second.html", "index.html"} <= set(previous)

    _write_receipts(data, 3)  # the second run's pages differ from the first's
    gate.touch()
    second = _report(tmp_path, start_new_session=True)
    with _group_ends(second):
        staged = None
        deadline = time.monotonic() + 300
        # Until the run's first page is written: into its staging folder, or (were pages
        # written in place) over the previous one.
        while second.poll() is None and time.monotonic() < deadline:
            pages = [
                p for p in out.glob(f"{STAGING_PREFIX}*/a_first.html") if mine not in p.parents
            ]
            staged = pages[0] if pages else None
            if (
                staged is not None
                or (out / "a_first.html").read_bytes() != previous["a_first.html"]
            ):
                break
            time.sleep(0.05)
        assert second.poll() is None, second.stderr.read().decode()
        assert staged is not None and staged.read_bytes() != previous["a_first.html"]
        os.killpg(second.pid, signal.SIGINT)  # Ctrl-C: the terminal signals the whole group
        returned = second.wait(timeout=120)
        err = second.stderr.read().decode()
    gate.unlink()
    assert returned == 130, err
    assert "Traceback" not in err
    # The previous pages, index and list byte for byte, the user's files, nothing else.
    assert _files_below(out) == previous
    assert sorted(p.name for p in out.iterdir()) == sorted(
        {Path(name).parts[0] for name in previous}
    )


#: Run in a process of its own, whose main thread takes the signal as a user's program's
#: does, with Ctrl-C's default disposition whatever the test run inherited: the swap of
#: three pages is interrupted by SIGINT just after its first move.
SWAP_INTERRUPTED = """
import json, os, signal, sys
from pathlib import Path
from explicit_audit.report import _files
from explicit_audit.report._files import staged_reports, write_atomically

out, page = Path(sys.argv[1]), sys.argv[2]
# Ctrl-C as in a terminal: a job started in the background by a shell inherits SIGINT
# ignored, and a held signal is then delivered to that ignoring disposition.
signal.signal(signal.SIGINT, signal.default_int_handler)
moved = []
real_replace = os.replace

def replace_then_interrupt(source, target):
    real_replace(source, target)
    moved.append(Path(target).name)
    if len(moved) == 1:
        signal.raise_signal(signal.SIGINT)

raised = False
with staged_reports(out) as staging:
    for name in ("a.html", "b.html", "index.html"):
        write_atomically(staging.folder / name, page)
    _files.os.replace = replace_then_interrupt
    try:
        staging.swap_in(["a.html", "b.html", "index.html"])
    except KeyboardInterrupt:
        raised = True
    finally:
        _files.os.replace = real_replace
print(json.dumps({"raised": raised, "moved": moved}))
"""


def test_a_signal_during_the_swap_waits_until_every_page_is_in_place(tmp_path):
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-c", SWAP_INTERRUPTED, str(out), KIT_PAGE],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["raised"], result  # the signal came, once the swap was done
    assert result["moved"][:3] == ["a.html", "b.html", "index.html"]
    assert sorted(p.name for p in out.iterdir()) == [
        ".explicit-audit-pages.json",
        "a.html",
        "b.html",
        "index.html",
    ]


def _ended_pid() -> int:
    """The id of a process that has run and ended."""
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def test_a_killed_runs_staging_folder_goes_and_a_users_folder_stays(tmp_path):
    out = tmp_path / "out"
    gone = f"explicit_audit {_ended_pid()}\n"
    killed = out / f"{STAGING_PREFIX}k1l2"
    killed.mkdir(parents=True)
    (killed / "a.html").write_text(KIT_PAGE, encoding="utf-8")
    (killed / ".b.html.x1.tmp").write_text("<html>cut off", encoding="utf-8")
    (killed / STAGING_MARK).write_text(gone, encoding="utf-8")
    names = ("notes", "pages", "nested", "running", "unmarked")
    users = [out / f"{STAGING_PREFIX}{name}" for name in names]
    for folder, mark in zip(
        users[:4], [gone, gone, gone, f"explicit_audit {os.getpid()}\n"], strict=True
    ):
        folder.mkdir()
        (folder / STAGING_MARK).write_text(mark, encoding="utf-8")
    (users[0] / "notes.txt").write_text("mine\n", encoding="utf-8")
    (users[1] / "a.html").write_text("<html>written by hand</html>\n", encoding="utf-8")
    (users[2] / "inner").mkdir()
    (users[3] / "a.html").write_text(KIT_PAGE, encoding="utf-8")  # a run going on beside
    users[4].mkdir()  # the kit's pages alone, without the mark: not known to be the kit's
    (users[4] / "a.html").write_text(KIT_PAGE, encoding="utf-8")
    with staged_reports(out) as staging:
        assert staging.folder.parent == out
        assert not killed.exists()
    assert sorted(out.iterdir()) == sorted(users)


def test_a_run_that_swaps_nothing_in_leaves_no_folder_it_made(tmp_path):
    out = tmp_path / "new" / "out"
    with pytest.raises(RuntimeError), staged_reports(out) as staging:
        write_atomically(staging.folder / "a.html", KIT_PAGE)
        raise RuntimeError("the run stops here")
    assert not out.exists()
    kept = tmp_path / "kept"
    kept.mkdir()
    with staged_reports(kept):
        pass
    assert kept.is_dir() and list(kept.iterdir()) == []

"""Reports: each notebook executed on the data, written as one self-contained HTML page.

A report is for a reader who never opens a notebook. A run first copies
every input file once into a temporary folder, hashing the bytes as they are
copied (:mod:`~explicit_audit.report.snapshot`), loads that copy once for the
provenance and the verdict, and runs every notebook on the same copy: a log
that grows during the run changes no page. Then, for every notebook:

1. the data path is injected papermill-style: a new cell tagged
   ``injected-parameters``, right after the cell tagged ``parameters``, sets
   the notebook's data-path variable to the path given;
2. the notebook is executed with :mod:`nbclient` in a kernel of the running
   Python environment (as many kernels at once as the process has CPUs,
   ``jobs``), in the copy's working folder, so paths in the output
   read as the user gave them; a notebook whose metadata names the tables it
   reads (``metadata.explicit_audit.tables``) and finds all of them empty is
   not run: its page says there are no records of its kind in the data;
3. widget views (``application/vnd.jupyter.widget-view+json``) are dropped,
   and so are JavaScript outputs; a kit panel's output keeps its static twin
   (``text/html``: its controls' values, table and chart, as displayed), and
   an output left with only a widget's text stand-in goes;
4. :mod:`nbconvert` writes one HTML file: tables and PNG plots embedded, code
   folded away in a ``<details>`` element per cell, HTML outputs cleaned to an
   allowlist of tags (anything else shows as text), no script at all, and a
   Content-Security-Policy that forbids fetching anything, so the page reads
   the same offline;
5. the page opens with the notebook's title, what it is cited by (the data,
   the period its records cover, the kit's version, the command line and
   the report's title, :mod:`~explicit_audit.report._time_range`), the
   verdict of every check (with the exit status ``explicit-audit verify``
   gives on the same data) and the contents; each check the notebook's
   metadata places in a section gets an anchor there, for the index's tile
   (:mod:`~explicit_audit.report._anchors`); it closes with a folded appendix of provenance: the
   input files with their SHA-256, the row counts, the rejected rows, the
   versions of the kit and its libraries, and the hash dialects
   (:mod:`explicit_audit.report.provenance`);
6. the page is written into a fresh folder inside the output folder; once
   every page, the findings and rejected rows as CSV and Parquet
   (:mod:`~explicit_audit.report.downloads`) and the index are there, they
   are moved into place together
   (SIGINT and SIGTERM held for those few renames), and the pages an earlier
   run wrote that this run did not (a notebook since removed) are removed.
   A run stopped before then (Ctrl-C, a full disk) leaves the previous run's
   pages and index as they were (:mod:`~explicit_audit.report._files`).

Steps 3 to 5 are :func:`~explicit_audit.report.page.notebook_html`.

A report carries no wall-clock time: the same data, notebooks and library
versions give the same bytes, so two reports can be compared with ``diff``.
The file's own modification time says when it was written.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import tempfile
import time
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path

import nbformat

from .._core.engine import reads_lazily
from .._version import __version__
from ..errors import RejectedRowsWarning
from ..loading import ENGINES, load_settled
from ..partitioned.scheduler import use_scheduler
from ..reading.names import display_name
from ..reading.options import resolved
from ..verdicts.audit_runs import last_audit, record_audit, since_text
from ..verdicts.verdict import Verdict
from ..verify import verify_all
from ._anchors import anchored_checks
from ._empty import has_records, no_records_notebook, notebook_tables
from ._files import staged_reports, write_atomically
from ._header import About, page_kinds
from ._html import REJECTED_SHOWN
from ._notebook_run import (
    DATA_PARAMETER_NAMES,
    NotebookError,
    NotebookRun,
    ReportError,
    data_parameter,
    execute_notebook,
    execute_notebooks,
    inject_parameters,
    listed_notebooks,
    read_notebook,
    require_engine_parameter,
)
from ._time_range import TimeRange, table_times, time_range
from .downloads import download_files, download_tables
from .index import INDEX_NAME, Page, index_html
from .page import PANEL_NOTE, notebook_html, notebook_title, static_outputs, utf8_page
from .parameters import chosen_parameters
from .provenance import provenance
from .snapshot import take_snapshot
from .whole_text import whole_texts

__all__ = [
    "DATA_PARAMETER_NAMES",
    "PANEL_NOTE",
    "NotebookError",
    "ReportError",
    "data_parameter",
    "default_title",
    "execute_notebook",
    "inject_parameters",
    "no_records_notebook",
    "notebook_html",
    "notebook_tables",
    "static_outputs",
    "write_reports",
]


def default_title(data: str, period: TimeRange) -> str:
    """A report's title when none is given: the data path and the days its records cover.

    A folder's name alone (``data``, ``logs``) does not say which audit a
    reviewer is citing; the path as given and the period do, and neither
    changes between two runs on the same data, so the pages stay
    reproducible.

    Parameters
    ----------
    data : str
        The data path, as given.
    period : TimeRange
        The period its records cover.

    Returns
    -------
    str

    Examples
    --------
    >>> default_title("logs/march", TimeRange(None, None, 0, 12))
    'Audit of logs/march (no timestamps)'
    """
    days = period.days
    return f"Audit of {data}, {days}" if days else f"Audit of {data} (no timestamps)"


def write_reports(
    data: str | os.PathLike,
    out: str | os.PathLike,
    notebooks: str | os.PathLike | Sequence[str | os.PathLike],
    *,
    timeout: int = 300,
    progress=None,
    engine: str = "pandas",
    scheduler: str | None = None,
    persist: bool = False,
    parameters: Mapping[str, object] | None = None,
    verified=None,
    title: str | None = None,
    command: str | None = None,
    state: str | os.PathLike | None = None,
    jobs: int | None = None,
) -> list[Path]:
    """Execute every notebook on ``data`` and write one HTML report each into ``out``.

    Parameters
    ----------
    data : str or path
        The data to run on (file, folder or glob), as :func:`explicit_audit.load` takes it.
    out : str or path
        Folder for the reports (created); each is ``<notebook stem>.html``.
    notebooks : folder, notebook path, or list of paths
        A folder means every ``*.ipynb`` in it, in name order.
    timeout : int, default 300
        Seconds a cell may run.
    progress : callable, optional
        Called with a line of text after each report is written.
    engine : {"pandas", "dask"}, default "pandas"
        ``"dask"`` loads the data as lazy Dask tables, for the verdict and
        the provenance here and in every notebook, which is given the
        parameters ``ENGINE``, ``SCHEDULER`` and ``PERSIST``. The pages say
        what the pandas engine's pages say.
    scheduler : str, optional
        With ``engine="dask"``: where the partitions are computed, here and
        in every notebook's kernel (see :func:`~explicit_audit.use_scheduler`).
    persist : bool, default False
        With ``engine="dask"``: keep the rows in the workers' memory after
        the first read (:meth:`~explicit_audit.Audit.persist`), for data the
        cluster's memory holds.
    parameters : mapping, optional
        ``{name: value}`` for parameters the notebooks declare in their
        parameters cells, injected papermill-style into each notebook that
        declares it (``explicit-audit report -p NAME=VALUE``).
    verified : callable, optional
        Called with the :class:`~explicit_audit.Verification` of ``data`` (the
        verdict every page shows) before any notebook runs: how ``explicit-audit
        report`` exits as ``verify`` does on the same data.
    title : str, optional
        The report's title: the index's heading, and the name each page
        gives the report it belongs to. By default the data path and the
        period its records cover (:func:`default_title`).
    command : str, optional
        The command line that wrote the report, shown under every page's
        title (``explicit-audit report`` gives its own); without it, the
        pages say they were written from Python.
    state : str or path, optional
        An audit state folder (``docs/state.md``): the verdict is that of a
        load from it (only the bytes appended since its last audit read, any
        edit of the bytes it audited a finding), every page says what is new
        since the last audit recorded in it, and this run is recorded in it
        once the pages are in place. ``data`` is named as ``verify --state``
        was given it: relative to the current folder.
    jobs : int, optional
        How many notebooks run at once, each in a kernel of its own; by
        default as many as the CPUs this process may use. The pages are the
        same whatever it is.

    Returns
    -------
    list of Path
        The reports written, in notebook order.

    Raises
    ------
    NotebookError
        When a notebook fails; the reports of the others are written first.
    ReportError
        When there is no notebook, or one has no parameters cell; when a
        parameter given is declared by no notebook, is the data path or an
        engine's, or does not fit a notebook's default; with
        ``engine="dask"``, when one has no ``ENGINE`` parameter.
    AuditError
        When ``data`` cannot be loaded.

    Examples
    --------
    >>> write_reports("data", "reports", "notebooks")  # doctest: +SKIP
    [PosixPath('reports/plan_hashes.html'), ...]
    """
    if state is not None:
        _require_same_names(data)
    paths = listed_notebooks(notebooks)
    if not paths:
        raise ReportError(f"{notebooks}: no notebook (*.ipynb) to report on")
    if engine not in ENGINES:
        raise ReportError(f"engine must be one of {', '.join(ENGINES)}, not {engine!r}")
    lazy = reads_lazily(engine)
    files = {path: read_notebook(path) for path in paths}  # each read once, for the run too
    read = {path.name: notebook for path, (_, notebook) in files.items()}
    if lazy:  # before any work: a notebook that would load in memory is refused
        for path in paths:
            require_engine_parameter(read[path.name], path.name)
    chosen = chosen_parameters(read, parameters or {})
    engine_values = {"ENGINE": engine, "SCHEDULER": scheduler, "PERSIST": persist} if lazy else {}
    with use_scheduler(scheduler) if lazy else contextlib.nullcontext():
        return _write_reports(
            data,
            Path(out),
            files,
            timeout=timeout,
            jobs=jobs,
            progress=progress,
            engine=engine,
            persist=persist,
            parameters={name: {**engine_values, **values} for name, values in chosen.items()},
            verified=verified,
            title=title,
            command=command,
            state=state,
        )


def _write_reports(
    data: str | os.PathLike,
    out_dir: Path,
    files: dict[Path, tuple[bytes, nbformat.NotebookNode]],
    *,
    timeout: int,
    jobs: int | None,
    progress,
    engine: str,
    persist: bool,
    parameters: dict[str, dict[str, object]],
    verified=None,
    title: str | None = None,
    command: str | None = None,
    state: str | os.PathLike | None = None,
) -> list[Path]:
    written: list[Path] = []
    listed: list[Page] = []
    failures: list[str] = []
    with (
        tempfile.TemporaryDirectory(prefix="explicit-audit-report-") as folder,
        staged_reports(out_dir) as staging,
        contextlib.ExitStack() as stack,  # the notebooks still running, stopped first
    ):
        snapshot = take_snapshot(data, folder)
        # The state's path as given, read from inside the copy: made absolute first.
        folder_of_state = None if state is None else os.path.abspath(state)
        settings = resolved({"progress": False, "engine": engine, "state": folder_of_state})
        previous = None
        if state is not None:
            # The copies are known to the state by the files they were copied from.
            # Recorded once the pages are in place: until then the state keeps its edits.
            settings = dataclasses.replace(settings, origins=snapshot.origins, reported_later=True)
            previous = last_audit(state)
        with contextlib.chdir(snapshot.cwd), warnings.catch_warnings():
            # Rejected rows are listed in every report's appendix.
            warnings.simplefilter("ignore", RejectedRowsWarning)
            audit = load_settled(snapshot.data, settings)
            if persist:
                audit = audit.persist()
            # On Dask tables the checks' one pass also computes the accounting.
            verification = verify_all(audit)
            audit = verification.accounting
            if verified is not None:
                verified(verification)
            facts = provenance(audit, data, digests=snapshot.digests)
            shown = facts.rejected.head(REJECTED_SHOWN)
            facts = dataclasses.replace(facts, whole_texts=whole_texts(shown, snapshot.path_of))
            periods = table_times(audit)  # each table read once, for every page's period
            period = time_range(audit, tables=periods)
            downloads = download_files(download_tables(verification, audit))
        title = title if title is not None else default_title(display_name(data), period)
        verdict = None
        if state is not None:
            verdict = Verdict.of(display_name(data), verification, previous=previous)
        cited = About(
            display_name(data),
            period.text,
            __version__,
            command,
            report=title,
            since=None if verdict is None else since_text(verdict, state),
        )
        # A notebook whose tables are all empty is not run: its page says so.
        to_run = [
            path for path, (_, nb) in files.items() if has_records(audit, notebook_tables(nb))
        ]
        runs = [NotebookRun(files[p][1], snapshot.data, p.name, parameters[p.name]) for p in to_run]
        ran = stack.enter_context(
            contextlib.closing(
                execute_notebooks(runs, cwd=snapshot.cwd, timeout=timeout, jobs=jobs)
            )
        )
        for path, (source, notebook) in files.items():
            # As soon as its notebook, and those before it, are done; the others run meanwhile.
            was_run = path in to_run
            executed, seconds = next(ran) if was_run else (None, 0.0)
            start = time.perf_counter()
            if isinstance(executed, NotebookError):
                failures.append(str(executed))
                continue
            if executed is None:
                executed = no_records_notebook(notebook, data, audit)
            tables = tuple(t for group in notebook_tables(notebook) for t in group)
            kinds = sorted(page_kinds(tables)) if tables else None
            page = notebook_html(
                executed,
                facts,
                name=path.name,
                notebook_sha256=hashlib.sha256(source).hexdigest(),
                verification=verification,
                index=INDEX_NAME,
                about=dataclasses.replace(
                    cited,
                    period=(
                        period.text
                        if kinds is None
                        else time_range(audit, kinds, tables=periods).text
                    ),
                    scope=None if kinds is None else tuple(kinds),
                    index=INDEX_NAME,
                ),
                ran=was_run,
            )
            listed.append(
                Page(
                    file=f"{path.stem}.html",
                    title=notebook_title(notebook, path.stem),
                    tables=tables,
                    ran=was_run,
                    checks=anchored_checks(page),
                )
            )
            write_atomically(staging.folder / f"{path.stem}.html", page)
            written.append(out_dir / f"{path.stem}.html")
            if progress is not None:
                took = seconds + time.perf_counter() - start  # its notebook's run, then its page
                progress(f"wrote {written[-1]} ({took:.1f} s)")
        for name, content in downloads.items():
            write_atomically(staging.folder / name, content)
        index_page = index_html(verification, listed, display_name(data), title=title, about=cited)
        write_atomically(staging.folder / INDEX_NAME, utf8_page(index_page))
        if progress is not None:
            progress(
                f"wrote {out_dir / INDEX_NAME}: the verdict, one tile per check, the pages; "
                f"beside it {', '.join(downloads)}"
            )
        removed = staging.swap_in([path.name for path in written] + [*downloads, INDEX_NAME])
    if verdict is not None:
        record_audit(state, verdict)  # the pages are in place: the run is recorded
    for stale in removed:
        if progress is not None:
            progress(f"removed {stale}: no notebook of that name was reported on")
    if failures:
        raise NotebookError("\n\n".join(failures))
    return written


def _require_same_names(data: str | os.PathLike) -> None:
    """The copy names the files as ``data`` does, which an audit state knows them by: a
    relative path (an absolute one is given to the notebooks relative to the current folder).
    """
    if os.path.isabs(os.fspath(data)):
        raise ReportError(
            f"--state: the pages name the files of {display_name(data)} relative to the current "
            "folder, not as an audit state knows them; give DATA relative to the current "
            "folder, as verify --state was given it"
        )

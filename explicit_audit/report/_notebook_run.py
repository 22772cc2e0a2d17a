"""Running notebooks for a report: read once, the data path injected, side by side in kernels.

The data path is injected papermill-style: a new cell tagged
``injected-parameters``, right after the cell tagged ``parameters``, sets the
notebook's data-path variable. The notebook then runs with :mod:`nbclient` in
a kernel of the running Python environment (whatever kernels are installed),
with the inline plot backend and a fixed hash seed, so two runs print the same.
Several notebooks run at once, each in a kernel and a thread of its own
(:func:`execute_notebooks`), and are handed on in their order; the main
thread only waits, so that a signal stops them all.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import copy
import dataclasses
import os
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

import nbformat
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError
from traitlets import default

from ..errors import NotebookError, ReportError
from ..reading.names import display_name
from ..small_files import NOTEBOOK_BOUNDS, read_small_bytes, small_text
from .parameters import DATA_PARAMETER_NAMES, data_parameter, parameter_names, parameters_cell

__all__ = [
    "DATA_PARAMETER_NAMES",
    "NotebookError",
    "NotebookRun",
    "ReportError",
    "data_parameter",
    "execute_notebook",
    "execute_notebooks",
    "inject_parameters",
    "listed_notebooks",
    "parameter_names",
    "read_notebook",
    "require_engine_parameter",
]

_KERNEL_NAME = "explicit-audit-current-env"


class _CurrentEnvironmentSpecs(KernelSpecManager):
    """Resolve one extra kernel name to ipykernel in the running Python."""

    def get_kernel_spec(self, kernel_name):
        if kernel_name == _KERNEL_NAME:
            import ipykernel.kernelspec

            return self.kernel_spec_class(
                resource_dir=ipykernel.kernelspec.RESOURCES,
                **ipykernel.kernelspec.get_kernel_dict(),
            )
        return super().get_kernel_spec(kernel_name)


class _CurrentEnvironmentKernels(AsyncKernelManager):
    """A kernel manager that starts kernels in the running Python, whatever is installed."""

    @default("kernel_spec_manager")
    def _kernel_spec_manager_default(self):
        return _CurrentEnvironmentSpecs(data_dir=self.data_dir)


def inject_parameters(notebook: nbformat.NotebookNode, values: dict[str, object]) -> None:
    """Insert an ``injected-parameters`` cell after the ``parameters`` cell, papermill-style.

    Parameters
    ----------
    notebook : NotebookNode
        Changed in place; an earlier injected cell is replaced.
    values : dict
        ``{variable: value}``; each value is written with ``repr``.

    Raises
    ------
    ReportError
        When no cell is tagged ``parameters``.

    Examples
    --------
    >>> nb = nbformat.v4.new_notebook(cells=[
    ...     nbformat.v4.new_code_cell('DATA = "../data"', metadata={"tags": ["parameters"]})])
    >>> inject_parameters(nb, {"DATA": "data"})
    >>> nb.cells[1].source
    "# Parameters\\nDATA = 'data'\\n"
    """
    notebook.cells = [
        cell
        for cell in notebook.cells
        if "injected-parameters" not in cell.get("metadata", {}).get("tags", [])
    ]
    cell = parameters_cell(notebook)
    if cell is None:
        raise ReportError("the notebook has no cell tagged 'parameters' to inject after")
    source = "# Parameters\n" + "".join(f"{name} = {value!r}\n" for name, value in values.items())
    injected = nbformat.v4.new_code_cell(source, metadata={"tags": ["injected-parameters"]})
    injected["id"] = "injected-parameters"
    notebook.cells.insert(notebook.cells.index(cell) + 1, injected)


def require_engine_parameter(notebook: nbformat.NotebookNode, name: str) -> None:
    """A notebook run for the Dask engine must read ``ENGINE``, or it would load in memory."""
    if "ENGINE" not in parameter_names(notebook):
        raise ReportError(
            f"{name}: its parameters cell sets no ENGINE, so it would load the data in memory; "
            'add ENGINE = "pandas" (and SCHEDULER = None, PERSIST = False) to the cell and pass '
            "engine=ENGINE to ea.load, or report with the pandas engine"
        )


def read_notebook(path: Path) -> tuple[bytes, nbformat.NotebookNode]:
    """A notebook file's bytes (its page cites their SHA-256) and the notebook they hold, or a
    ReportError naming the file when it is not one (not JSON, unreadable)."""
    try:
        data = read_small_bytes(path, max_bytes=NOTEBOOK_BOUNDS["max_bytes"])
        text = small_text(path, data, max_depth=NOTEBOOK_BOUNDS["max_depth"])  # UTF-8, not deep
        return data, nbformat.reads(text, as_version=4)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise ReportError(f"{display_name(path)}: cannot read the notebook ({reason})") from None
    except (ValueError, nbformat.ValidationError) as exc:  # NotJSONError is a ValueError
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ReportError(f"{display_name(path)}: not a notebook ({reason[:200]})") from None


def listed_notebooks(source: str | os.PathLike | Iterable[str | os.PathLike]) -> list[Path]:
    """The notebooks to run: a folder's ``*.ipynb`` in name order (hidden ones left), a path,
    or each path of a list."""
    if isinstance(source, str | os.PathLike):
        path = Path(source)
        if path.is_dir():
            return sorted(p for p in path.glob("*.ipynb") if not p.name.startswith("."))
        return [path]
    return [Path(p) for p in source]


def execute_notebook(
    notebook: str | os.PathLike | nbformat.NotebookNode,
    data: str | os.PathLike | None = None,
    *,
    cwd: str | os.PathLike | None = None,
    timeout: int = 300,
    name: str | None = None,
    parameters: dict[str, object] | None = None,
) -> nbformat.NotebookNode:
    """Execute a notebook in a kernel of the running Python, optionally on other data.

    Parameters
    ----------
    notebook : path or NotebookNode
        A path is read; a node is copied, never changed.
    data : str or path, optional
        Injected as the data-path parameter (see :func:`data_parameter`),
        exactly as given. Without it the notebook runs on its own default.
    cwd : path, optional
        Working directory of the kernel; the current one by default.
    timeout : int, default 300
        Seconds a cell may run.
    name : str, optional
        The notebook's name in error messages; its file name by default.
    parameters : dict, optional
        More ``{variable: value}`` to inject after the data path, such as
        ``{"ENGINE": "dask", "SCHEDULER": "tcp://host:8786"}``.

    Returns
    -------
    NotebookNode
        The executed notebook, outputs filled in.

    Raises
    ------
    NotebookError
        When a cell fails or times out, naming the notebook and the error.
    ReportError
        When ``data`` or ``parameters`` are given and the notebook has no
        parameters cell.

    Examples
    --------
    >>> executed = execute_notebook("notebooks/plan_hashes.ipynb", "data")  # doctest: +SKIP
    """
    run = NotebookRun(notebook, data, name=name, parameters=parameters)
    with contextlib.closing(execute_notebooks([run], cwd=cwd, timeout=timeout, jobs=1)) as ran:
        executed, _ = next(ran)
    if isinstance(executed, NotebookError):
        raise executed
    return executed


@dataclasses.dataclass(frozen=True)
class NotebookRun:
    """One notebook for :func:`execute_notebooks`: what :func:`execute_notebook` takes of it."""

    notebook: str | os.PathLike | nbformat.NotebookNode
    data: str | os.PathLike | None = None
    name: str | None = None
    parameters: dict[str, object] | None = None


def usable_cpus() -> int:
    """How many CPUs this process may run on (its affinity where the system says)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def execute_notebooks(
    runs: Sequence[NotebookRun],
    *,
    cwd: str | os.PathLike | None = None,
    timeout: int = 300,
    jobs: int | None = None,
) -> Iterator[tuple[nbformat.NotebookNode | NotebookError, float]]:
    """Execute notebooks as :func:`execute_notebook` does, up to ``jobs`` at once.

    Each runs in a kernel of its own; a kernel is CPU-bound, so ``jobs``
    defaults to the CPUs this process may use (:func:`usable_cpus`). Closing
    the iterator early (or a signal while it waits) stops the kernels still
    running.

    Yields
    ------
    (NotebookNode or NotebookError, float)
        In the order of ``runs``, each as soon as it and those before it are
        done: the executed notebook, or the error naming it when a cell failed
        or timed out; and the seconds it ran.

    Raises
    ------
    ReportError
        As :func:`execute_notebook`, before any notebook runs.
    """
    jobs = max(1, min(len(runs), usable_cpus() if jobs is None else jobs))
    env = dict(os.environ)
    # The inline backend even when MPLBACKEND is set for headless use; a fixed
    # hash seed so that set order, and so the output, is the same every run.
    env["MPLBACKEND"] = "module://matplotlib_inline.backend_inline"
    env["PYTHONHASHSEED"] = "0"
    with contextlib.ExitStack() as stack:
        started = [_Running.of(run, cwd, timeout, env, stack) for run in runs]
        for running in _in_order(started, jobs):
            yield running.outcome(), running.seconds


#: What a notebook that fails on its own raises: a page of it cannot be written.
_NOTEBOOK_FAILURES = (CellExecutionError, CellTimeoutError, DeadKernelError)


class _Running:
    """One notebook run in a thread of its own; the signals stay the program's.

    Run in the main thread, nbclient takes SIGINT and SIGTERM over for as
    long as a notebook runs: it kills the kernel and carries on, so that the
    program sees a dead kernel, not the signal, and its handlers are gone
    afterwards. Here the main thread waits (:func:`_in_order`), and a signal
    raises in it as anywhere else; the kernels are then stopped
    (:meth:`stop`), and the snapshot and any partial page are removed as the
    program unwinds.
    """

    def __init__(self, node, name: str, data, client: NotebookClient, env: dict, kernel_log):
        self.node, self.name, self.data, self.client = node, name, data, client
        self.env, self.kernel_log = env, kernel_log
        self.failed: list[BaseException] = []
        # The thread's loop and task, once it runs: what stop() cancels.
        self.task: tuple[asyncio.AbstractEventLoop, asyncio.Task] | None = None
        self.thread = threading.Thread(
            target=self._run, name="explicit-audit-notebook", daemon=True
        )
        self.seconds = 0.0
        self.done = False  # ended, and seen to have ended by the main thread

    @classmethod
    def of(cls, run: NotebookRun, cwd, timeout: int, env: dict, stack) -> _Running:
        """The run prepared: its parameters injected, its client made, not started."""
        read_name, node = _read(run.notebook)
        values = {} if run.data is None else {data_parameter(node): str(run.data)}
        values.update(run.parameters or {})
        if values:
            inject_parameters(node, values)
        client = NotebookClient(
            node,
            kernel_name=_KERNEL_NAME,
            kernel_manager_class=_CurrentEnvironmentKernels,
            timeout=timeout,
            startup_timeout=120,
            record_timing=False,
            store_widget_state=False,
            resources={"metadata": {"path": str(cwd or Path.cwd())}},
        )
        log = stack.enter_context(tempfile.TemporaryFile(mode="w+"))
        return cls(node, run.name or read_name, run.data, client, env, log)

    def _run(self) -> None:
        async def execute() -> None:
            self.task = (asyncio.get_running_loop(), asyncio.current_task())
            await self.client.async_execute(env=self.env, stderr=self.kernel_log)

        start = time.perf_counter()
        try:
            # A loop of this thread's own, closed when the notebook is done.
            asyncio.run(execute())
        except BaseException as exc:  # handed to the main thread
            self.failed.append(exc)
        self.seconds = time.perf_counter() - start

    def stop(self) -> None:
        """Stop an interrupted notebook: kill its kernel, end its thread, leave nothing at exit.

        The kernel is killed first, so that nbclient's own clean-up finds it
        dead and does not wait out a shutdown request. The thread's task is
        then cancelled and the thread given :data:`STOP_WAIT_SECONDS` to close
        the kernel's channels. nbclient registers an exit handler of its own
        for as long as a kernel is set up; run at exit in the main thread, on
        a loop that is not the one the kernel's sockets belong to, it can wait
        for ever, so it is unregistered here whatever state the thread was
        left in.
        """
        _kill_kernel(self.client)
        if self.task is not None:
            loop, task = self.task
            with contextlib.suppress(RuntimeError):  # the loop has already closed
                loop.call_soon_threadsafe(task.cancel)
        self.thread.join(STOP_WAIT_SECONDS)
        _kill_kernel(self.client)  # a kernel that was still starting when the signal came
        atexit.unregister(self.client._cleanup_kernel)

    def outcome(self) -> nbformat.NotebookNode | NotebookError:
        """The executed notebook, or the error of a notebook that failed on its own."""
        if not self.failed:
            return self.node
        self.kernel_log.seek(0)
        log = self.kernel_log.read()[-2000:]
        return NotebookError(
            f"{self.name}: the notebook failed while running"
            + (f" on {self.data}" if self.data is not None else "")
            + f":\n{self.failed[0]}"
            + (f"\nkernel log:\n{log}" if log.strip() else "")
        )


def _in_order(started: list[_Running], jobs: int) -> Iterator[_Running]:
    """Run every notebook, ``jobs`` at a time, and hand each on in order once it is done.

    The main thread waits in short waits, so that a signal's handler runs
    between two. A signal, an error that is no notebook's own failure (a bug),
    or the iterator closed early stops the notebooks still running.
    """
    waiting = list(started)
    active: list[_Running] = []
    handed = 0
    try:
        while handed < len(started):
            while waiting and len(active) < jobs:
                active.append(waiting.pop(0))
                active[-1].thread.start()
            for running in list(active):
                running.thread.join(0.1 / len(active))
                if running.thread.is_alive():
                    continue
                active.remove(running)
                running.done = True
                if running.failed and not isinstance(running.failed[0], _NOTEBOOK_FAILURES):
                    raise running.failed[0]
            while handed < len(started) and started[handed].done:
                handed += 1
                yield started[handed - 1]
    except BaseException:  # GeneratorExit too: closed before the last was handed on
        for running in active:
            running.stop()
        raise


#: How long an interrupted run waits for the notebook's thread to close its
#: kernel's channels before the program goes on unwinding.
STOP_WAIT_SECONDS = 10.0


def _kill_kernel(client: NotebookClient) -> None:
    """Kill the notebook's kernel process at once (the program is going away)."""
    process = getattr(getattr(client.km, "provisioner", None), "process", None)
    if process is not None:
        with contextlib.suppress(OSError):
            process.kill()


def _read(notebook) -> tuple[str, nbformat.NotebookNode]:
    if isinstance(notebook, nbformat.NotebookNode):
        return notebook.metadata.get("title", "notebook"), copy.deepcopy(notebook)
    return Path(notebook).name, read_notebook(Path(notebook))[1]

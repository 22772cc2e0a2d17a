"""Running a notebook for a report: its data-path parameter, injected; a kernel of this Python.

The data path is injected papermill-style: a new cell tagged
``injected-parameters``, right after the cell tagged ``parameters``, sets the
notebook's data-path variable. The notebook then runs with :mod:`nbclient` in
a kernel of the running Python environment (whatever kernels are installed),
with the inline plot backend and a fixed hash seed, so two runs print the same.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import copy
import os
import tempfile
import threading
from pathlib import Path

import nbformat
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError
from traitlets import default

from ..errors import NotebookError, ReportError
from ..small_files import NOTEBOOK_BOUNDS, read_small_text
from .parameters import DATA_PARAMETER_NAMES, data_parameter, parameter_names, parameters_cell

__all__ = [
    "DATA_PARAMETER_NAMES",
    "NotebookError",
    "ReportError",
    "data_parameter",
    "execute_notebook",
    "inject_parameters",
    "parameter_names",
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
    read_name, node = _read(notebook)
    name = name or read_name
    values = {} if data is None else {data_parameter(node): str(data)}
    values.update(parameters or {})
    if values:
        inject_parameters(node, values)
    env = dict(os.environ)
    # The inline backend even when MPLBACKEND is set for headless use; a fixed
    # hash seed so that set order, and so the output, is the same every run.
    env["MPLBACKEND"] = "module://matplotlib_inline.backend_inline"
    env["PYTHONHASHSEED"] = "0"
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
    with tempfile.TemporaryFile(mode="w+") as kernel_log:
        try:
            _execute(client, env, kernel_log)
        except (CellExecutionError, CellTimeoutError, DeadKernelError) as exc:
            kernel_log.seek(0)
            log = kernel_log.read()[-2000:]
            raise NotebookError(
                f"{name}: the notebook failed while running"
                + (f" on {data}" if data is not None else "")
                + f":\n{exc}"
                + (f"\nkernel log:\n{log}" if log.strip() else "")
            ) from None
    return node


def _execute(client: NotebookClient, env: dict, kernel_log) -> None:
    """Run the notebook in a thread of its own; the signals stay the program's.

    Run in the main thread, nbclient takes SIGINT and SIGTERM over for as
    long as a notebook runs: it kills the kernel and carries on, so that the
    program sees a dead kernel, not the signal, and its handlers are gone
    afterwards. Here the main thread waits, and a signal raises in it as
    anywhere else; the kernel is then stopped (:func:`_stop`), and the
    snapshot and any partial page are removed as the program unwinds.
    """
    failed: list[BaseException] = []
    running: list[tuple[asyncio.AbstractEventLoop, asyncio.Task]] = []

    async def execute() -> None:
        running.append((asyncio.get_running_loop(), asyncio.current_task()))
        await client.async_execute(env=env, stderr=kernel_log)

    def run() -> None:
        try:
            # A loop of this thread's own, closed when the notebook is done.
            asyncio.run(execute())
        except BaseException as exc:  # handed to the main thread, which raises it
            failed.append(exc)

    worker = threading.Thread(target=run, name="explicit-audit-notebook", daemon=True)
    worker.start()
    try:
        while worker.is_alive():
            worker.join(0.1)  # a short wait: a signal's handler runs between two
    except BaseException:
        _stop(client, worker, running)
        raise
    if failed:
        raise failed[0]


#: How long an interrupted run waits for the notebook's thread to close its
#: kernel's channels before the program goes on unwinding.
STOP_WAIT_SECONDS = 10.0


def _stop(client: NotebookClient, worker: threading.Thread, running: list) -> None:
    """Stop an interrupted notebook: kill its kernel, end its thread, leave nothing at exit.

    The kernel is killed first, so that nbclient's own clean-up finds it dead
    and does not wait out a shutdown request. The thread's task is then
    cancelled and the thread given :data:`STOP_WAIT_SECONDS` to close the
    kernel's channels. nbclient registers an exit handler of its own for as
    long as a kernel is set up; run at exit in the main thread, on a loop that
    is not the one the kernel's sockets belong to, it can wait for ever, so it
    is unregistered here whatever state the thread was left in.
    """
    _kill_kernel(client)
    for loop, task in running:
        with contextlib.suppress(RuntimeError):  # the loop has already closed
            loop.call_soon_threadsafe(task.cancel)
    worker.join(STOP_WAIT_SECONDS)
    _kill_kernel(client)  # a kernel that was still starting when the signal came
    atexit.unregister(client._cleanup_kernel)


def _kill_kernel(client: NotebookClient) -> None:
    """Kill the notebook's kernel process at once (the program is going away)."""
    process = getattr(getattr(client.km, "provisioner", None), "process", None)
    if process is not None:
        with contextlib.suppress(OSError):
            process.kill()


def _read(notebook) -> tuple[str, nbformat.NotebookNode]:
    if isinstance(notebook, nbformat.NotebookNode):
        return notebook.metadata.get("title", "notebook"), copy.deepcopy(notebook)
    path = Path(notebook)
    return path.name, nbformat.reads(read_small_text(path, **NOTEBOOK_BOUNDS), as_version=4)

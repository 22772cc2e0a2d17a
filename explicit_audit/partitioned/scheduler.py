"""Where lazy (Dask) tables are computed: Dask's schedulers on this machine, or a cluster's.

The command line (``--scheduler``), the reports and the notebooks
(``SCHEDULER``) name the scheduler the same way, and all go through
:func:`use_scheduler`.
"""

from __future__ import annotations

from typing import Any

from .._core.extras import require
from ..errors import AuditError

__all__ = ["LOCAL_SCHEDULERS", "use_scheduler"]

#: Dask's own schedulers on this machine; any other name is a distributed scheduler's address.
LOCAL_SCHEDULERS = ("threads", "processes", "synchronous", "sync", "single-threaded")


def use_scheduler(scheduler: str | None = None, *, timeout: str = "3s") -> Any:
    """Compute lazy tables on ``scheduler`` from now on; as a context manager, until its end.

    Parameters
    ----------
    scheduler : str, optional
        ``"threads"`` (the default), ``"processes"`` or ``"synchronous"``:
        Dask's schedulers in this process or this machine. Anything else is
        the address of a running distributed scheduler (``tcp://host:8786``),
        which is connected to and made the default.
    timeout : str, default "3s"
        How long to try to reach a distributed scheduler.

    Returns
    -------
    context manager
        For a local scheduler, the ``dask.config.set`` that chose it (leaving
        the ``with`` block restores the earlier choice); for an address, the
        ``distributed.Client`` (leaving the block closes it).

    Raises
    ------
    AuditError
        When the distributed scheduler cannot be reached, or ``scheduler`` is
        neither a local scheduler's name nor an address a client can use,
        naming it.

    Examples
    --------
    >>> with use_scheduler("synchronous"):
    ...     findings = ea.verify_all(ea.load("data", engine="dask"))  # doctest: +SKIP
    >>> client = use_scheduler("tcp://10.0.0.5:8786")  # doctest: +SKIP
    """
    require("dask", 'Running on Dask\'s schedulers (ea.use_scheduler, engine="dask")')
    import dask

    chosen = scheduler or "threads"
    if chosen in LOCAL_SCHEDULERS:
        return dask.config.set(scheduler=chosen)
    from distributed import Client

    try:
        return Client(chosen, timeout=timeout, set_as_default=True)
    except (OSError, TimeoutError) as exc:
        raise AuditError(
            f"scheduler {chosen}: cannot reach the scheduler ({_first_line(exc)})"
        ) from exc
    except Exception as exc:
        # What distributed raises for an address it cannot use depends on the
        # scheme and the release (ValueError for a missing port or a bad IPv6
        # address, TypeError for tls:// without a security context, ...).
        raise AuditError(
            f"scheduler {chosen!r}: neither one of Dask's schedulers on this machine "
            f"({', '.join(LOCAL_SCHEDULERS)}) nor the address of a scheduler it can "
            f"connect to, such as tcp://host:8786 ({_first_line(exc)})"
        ) from exc


def _first_line(exc: BaseException) -> str:
    """An exception's message on one line, for a one-line error."""
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__

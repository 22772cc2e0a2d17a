"""One run of ``verify``: what it found, narrowed to a window, compared with a baseline.

Every output of ``explicit-audit verify`` (text, ``--json``, ``--format
junit``, ``--format sarif``, and any format registered) is written from one
:class:`Verdict`, so they agree on which findings there are, on the
verdict's state and on the exit status.

The state is one of :data:`STATES`, each with its exit status: the text's
first line, ``--json``'s ``state`` (and its ``clean``, true in the state
``clean`` alone), JUnit's skipped test cases, SARIF's invocation and
``report``'s last line on stderr all say it. It refines
:attr:`Verification.state <explicit_audit.Verification.state>`, whose
``clean`` is clean on what was checked: here ``clean`` is every check
looked at records and found no error.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from types import MappingProxyType

from .._core.findings import ERROR
from .._core.jsonable import json_rows
from .._version import __version__
from ..verify import Verification
from .baseline import Baseline, BaselineComparison, compare_findings
from .exits import ExitStatus
from .window import WindowResult

__all__ = ["STATES", "Verdict"]

#: What a verdict can be: ``state -> (exit status, meaning)``. Under ``--new-only``
#: a verdict in the state ``findings`` whose errors are none of them new exits 0.
STATES = MappingProxyType(
    {
        "clean": (ExitStatus.CLEAN, "every check looked at records and found no error"),
        "clean on what was checked": (
            ExitStatus.CLEAN,
            "no error found, but a check looked at no record (not run)",
        ),
        "findings": (ExitStatus.FOUND, "a check found an error"),
        "missing": (
            ExitStatus.NOTHING_TO_CHECK,
            "no error found, but an expected kind is absent or empty",
        ),
        "nothing to check": (ExitStatus.NOTHING_TO_CHECK, "no check looked at a record"),
    }
)


@dataclass(frozen=True)
class Verdict:
    """What one ``verify`` run found, ready to be written in any format.

    Attributes
    ----------
    data : str
        The data path, as given.
    verification : Verification
        The checks' findings (inside the window, when there is one).
    window : WindowResult, optional
        The window and what it left out.
    baseline : BaselineComparison, optional
        The findings against a previous run's.
    new_only : bool
        Whether only new findings fail the run (``--new-only``).
    """

    data: str
    verification: Verification
    window: WindowResult | None = None
    baseline: BaselineComparison | None = None
    new_only: bool = False

    @classmethod
    def of(
        cls,
        data: str,
        verification: Verification,
        *,
        window: WindowResult | None = None,
        previous: Baseline | None = None,
        new_only: bool = False,
    ) -> Verdict:
        """The verdict of ``verification`` (windowed), compared with ``previous`` if given.

        ``previous`` is what
        :func:`~explicit_audit.verdicts.baseline.read_baseline` reads.
        """
        if window is not None:
            verification = window.verification
        comparison = None
        if previous is not None:
            comparison = compare_findings(
                previous.findings,
                json_rows(verification.findings),
                baseline=previous.file,
                baseline_data=previous.data,
                # A check that looked at no record (not run) resolved none of its findings.
                checks_now=[check for check, count in verification.checked.items() if count],
                window_then=previous.window,
                window_now=None if window is None else window.to_dict(),
            )
        return cls(data, verification, window, comparison, new_only)

    @cached_property
    def findings(self) -> list[dict]:
        """Every finding as plain JSON values, in verdict order."""
        return json_rows(self.verification.findings)

    @cached_property
    def new_positions(self) -> frozenset[int]:
        """Where in :attr:`findings` the new ones are (all of them without a baseline)."""
        if self.baseline is None:
            return frozenset(range(len(self.findings)))
        return frozenset(self.baseline.new_at)

    def is_new(self, position: int) -> bool:
        """Whether the finding at ``position`` is new since the baseline."""
        return position in self.new_positions

    def fails(self, position: int) -> bool:
        """Whether the finding at ``position`` fails the run.

        An error does; a notice never does; under ``new_only`` only a new error does.
        """
        finding = self.findings[position]
        if finding["severity"] != ERROR:
            return False
        return not self.new_only or self.is_new(position)

    @property
    def state(self) -> str:
        """One of :data:`STATES`: ``findings`` (an error, new or not), ``nothing to check``,
        ``missing`` (an expected kind), ``clean on what was checked`` (a check not run)
        or ``clean``."""
        verification = self.verification
        if verification.state != "clean":
            return verification.state
        if verification.missing:
            return "missing"
        if "not run" in verification.statuses.values():
            return "clean on what was checked"
        return "clean"

    @property
    def clean(self) -> bool:
        """Whether every check looked at records and found no error (notices aside), and
        every expected kind was there: the state ``clean``."""
        return self.state == "clean"

    @property
    def status(self) -> int:
        """The exit status: 1 when a finding fails the run; else the state's (:data:`STATES`).

        Without ``new_only`` it is :attr:`Verification.exit_status
        <explicit_audit.Verification.exit_status>` of the (windowed) findings.
        """
        if any(self.fails(position) for position in range(len(self.findings))):
            return int(ExitStatus.FOUND)
        if self.state == "findings":  # --new-only: errors found, none of them new
            # ... as if they were not: an expected kind absent still says so (3).
            missing = self.verification.missing
            return int(STATES["missing"][0] if missing else ExitStatus.CLEAN)
        return int(STATES[self.state][0])

    @property
    def version(self) -> str:
        """The kit's version, as the outputs name it."""
        return __version__

    def baseline_dict(self) -> dict | None:
        """The comparison with the baseline as plain JSON values, or None."""
        if self.baseline is None:
            return None
        return {**self.baseline.to_dict(), "new_only": self.new_only}

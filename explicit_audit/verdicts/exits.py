"""The exit statuses of ``explicit-audit``, each with its meaning, defined once.

The command's ``--help`` (:func:`exit_status_help`) and the table under "Exit
status" in ``docs/howto/verify.md`` (:func:`exit_status_table`) are both written
from :class:`ExitStatus`; ``tests/test_outputs.py`` holds that table to it.
"""

from __future__ import annotations

import signal
import textwrap
from enum import IntEnum

__all__ = ["ExitStatus", "exit_status_help", "exit_status_table"]


class ExitStatus(IntEnum):
    """What ``explicit-audit`` exits with: the same for every command and every output format.

    Examples
    --------
    >>> int(ExitStatus.NOTHING_TO_CHECK), ExitStatus(1).name
    (3, 'FOUND')
    """

    CLEAN = 0
    FOUND = 1
    UNREADABLE = 2
    NOTHING_TO_CHECK = 3
    #: As ``sysexits.h`` names an internal software error (``EX_SOFTWARE``).
    UNEXPECTED = 70
    #: As a shell reports a signal: 128 + its number.
    INTERRUPTED = 128 + signal.SIGINT
    TERMINATED = 128 + signal.SIGTERM

    @property
    def meaning(self) -> str:
        """What the status says, in the docs' words (Markdown code spans)."""
        return _MEANINGS[self]


_MEANINGS = {
    ExitStatus.CLEAN: "done; for `verify` and `report`, no error in what was checked (notices do "
    "not count; with `verify --new-only`, no new error); a check that looked at no record is "
    '"not run", never clean, and `verify --json` says `"clean": true` only when every check ran',
    ExitStatus.FOUND: "something was found: a rejected row, a hash mismatch, a receipt or policy "
    "finding; or, for `report`, a notebook failed (`report --exit-zero` exits 0 for findings "
    "once every page is written)",
    ExitStatus.UNREADABLE: "the input could not be read at all (no readable file matches DATA, "
    "a file the system will not let the kit read, a folder it cannot list), or the command was "
    "used wrongly: nothing was checked",
    ExitStatus.NOTHING_TO_CHECK: "read, but nothing to check: no check looked at a record (files "
    "with no value in them), or a kind named by `verify --expect` is absent or empty",
    ExitStatus.UNEXPECTED: "stopped by an error the kit did not expect (a bug in it or in a "
    "plug-in, or the machine failing under it, such as a Dask worker lost): its traceback on "
    "stderr, then one line naming it, and `verify`'s document says so in the format asked for; "
    "nothing was decided, neither clean nor found",
    ExitStatus.INTERRUPTED: "interrupted (Ctrl-C, SIGINT): one line on stderr, no traceback; "
    "`report` removes its copy of the data and the pages it had begun, leaving the previous run's",
    ExitStatus.TERMINATED: "terminated (SIGTERM): as when interrupted",
}


def exit_status_table() -> str:
    """The docs' table of exit statuses, in Markdown, one row per status.

    Examples
    --------
    >>> exit_status_table().splitlines()[:2]
    ['| status | meaning |', '|---|---|']
    """
    rows = [f"| `{int(status)}` | {status.meaning} |" for status in ExitStatus]
    return "\n".join(["| status | meaning |", "|---|---|", *rows])


def exit_status_help(width: int = 79) -> str:
    """The exit statuses as the command's ``--help`` says them: one paragraph per status.

    Examples
    --------
    >>> print(exit_status_help().splitlines()[0])
    exit status (the same for every command and output format):
    """
    lines = ["exit status (the same for every command and output format):"]
    for status in ExitStatus:
        said = f"{int(status):<5}{status.meaning.replace('`', '')}"
        lines.extend(textwrap.wrap(said, width, initial_indent="  ", subsequent_indent=" " * 7))
    return "\n".join(lines)

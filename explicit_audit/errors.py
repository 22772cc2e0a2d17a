"""The kit's one error hierarchy.

Every error the kit raises on purpose is an :class:`AuditError`. Its message
says what was wrong, where (file, line, field) and what to do next, so a
researcher can act on it without reading a traceback.
"""

from __future__ import annotations

__all__ = ["AuditError", "InputError", "PolicyError"]


class AuditError(Exception):
    """Base class of every error explicit_audit raises on purpose."""


class InputError(AuditError):
    """An input value could not be read or does not fit its record kind.

    Parameters
    ----------
    source_file : str
        The file the value came from.
    source_line : int or None
        The 1-based line on which the value starts, if known.
    reason : str
        What was wrong, naming the field where one is at fault.
    field : str, optional
        The dotted path of the offending field.
    """

    def __init__(
        self,
        source_file: str,
        source_line: int | None,
        reason: str,
        field: str | None = None,
    ) -> None:
        self.source_file = source_file
        self.source_line = source_line
        self.reason = reason
        self.field = field
        where = source_file if source_line is None else f"{source_file}:{source_line}"
        super().__init__(
            f"{where}: {reason}. Fix or remove that input, or load with strict=False "
            "to collect such rows in `audit.rejected`."
        )


class PolicyError(AuditError):
    """A routing policy is malformed: a missing section, a wrong type, an unknown key."""

"""The kit's one error hierarchy.

Every error the kit raises on purpose is an :class:`AuditError`. Its message
says what was wrong, where (file, line, field) and what to do next, so a
researcher can act on it without reading a traceback.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = [
    "AuditError",
    "ExtraColumnsWarning",
    "InputError",
    "MissingExtraError",
    "NotebookError",
    "PolicyError",
    "RecordError",
    "RejectedRowsWarning",
    "ReportError",
    "UnparsedTimeWarning",
    "UnreadableFileError",
]


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
    advice : str, optional
        What to do about it; by default, to fix the input or load with
        ``strict=False``.
    """

    def __init__(
        self,
        source_file: str,
        source_line: int | None,
        reason: str,
        field: str | None = None,
        *,
        advice: str | None = None,
    ) -> None:
        self.source_file = source_file
        self.source_line = source_line
        self.reason = reason
        self.field = field
        where = source_file if source_line is None else f"{source_file}:{source_line}"
        if advice is None:
            advice = (
                "Fix or remove that input, or load with strict=False to collect such rows "
                "in `audit.rejected`."
            )
        super().__init__(f"{where}: {reason}. {advice}")


class RecordError(AuditError):
    """A value does not fit its record kind (or a plan cannot be hashed); names the field.

    What a kind's builder raises for one value, and the loader turns into a
    rejected row naming file and line (:func:`~explicit_audit._core.records.sort_out`).

    Parameters
    ----------
    field : str or None
        Dotted path of the offending field (``"retrieval_plan.top_k"``), if one is.
    reason : str
        What is wrong with it.
    sep : str, default ": "
        Between the field and the reason in the message.
    """

    def __init__(self, field: str | None, reason: str, *, sep: str = ": ") -> None:
        self.field = field
        self.reason = reason
        super().__init__(reason if field is None else f"{field}{sep}{reason}")


class UnreadableFileError(InputError):
    """A file the system would not let the kit read at all: nothing in it could be checked.

    Parameters
    ----------
    source_file : str
        The file (or folder).
    reason : str
        What the system said (``Permission denied``, ``Input/output error``).
    what : str, default "file"
        ``"folder"`` for a folder that cannot be listed.
    also : sequence of str, optional
        Other files or folders that cannot be read either, named after the first.
    """

    def __init__(
        self, source_file: str, reason: str, *, what: str = "file", also: Sequence[str] = ()
    ) -> None:
        self.source_file = source_file
        self.source_line = None
        self.field = None
        verb = "listed" if what == "folder" else "read"
        self.reason = f"the {what} cannot be {verb} ({reason})"
        others = ""
        if also:
            shown = ", ".join(also[:5]) + (f" and {len(also) - 5} more" if len(also) > 5 else "")
            others = f"; nor can {shown}"
        AuditError.__init__(
            self,
            f"{source_file}: {self.reason}{others}; nothing was checked. Make it readable, or "
            "leave it out of the data given.",
        )


class PolicyError(InputError):
    """A routing policy is malformed: a missing section, a wrong type, an unknown key.

    A policy file is input like any other: ``ea.load(..., strict=True)``
    raises this error for a bad policy, and ``except InputError`` catches it
    there as for any other input that does not fit its kind. ``field`` is
    ``key``.

    Parameters
    ----------
    message : str
        The whole message, for an error that names no key or line.
    source_file : str, optional
        The policy file (or ``"<policy>"`` for a mapping).
    source_line : int, optional
        The 1-based line of the offending key, where known.
    key : str, optional
        The dotted policy key at fault.
    reason : str, optional
        What is wrong with it; ``message`` when not given.
    """

    def __init__(
        self,
        message: str,
        *,
        source_file: str | None = None,
        source_line: int | None = None,
        key: str | None = None,
        reason: str | None = None,
    ) -> None:
        super().__init__(
            source_file or "<policy>", source_line, message if reason is None else reason, key
        )
        self.source_file = source_file
        self.key = key
        # A policy's message names the policy key, and says to fix the policy file.
        self.args = (message,)

    @property
    def detail(self) -> str:
        """The key and the reason, without the place: what a rejected row says."""
        return f"policy key {self.key!r}: {self.reason}" if self.key else self.reason

    @classmethod
    def at(
        cls, source_file: str, key: str | None, reason: str, line: int | None = None
    ) -> PolicyError:
        """The error for ``key`` of ``source_file`` (at ``line``, if known)."""
        place = f"{source_file}:{line}" if line else source_file
        what = f"policy key {key!r}: " if key else ""
        return cls(
            f"{place}: {what}{reason}. Fix the policy file and load it again.",
            source_file=source_file,
            source_line=line,
            key=key,
            reason=reason,
        )


class ReportError(AuditError):
    """A notebook cannot be turned into a report: none found, or no parameters cell."""


class NotebookError(ReportError):
    """A notebook failed while running: a cell raised, timed out, or the kernel died."""


class MissingExtraError(AuditError, ModuleNotFoundError):
    """An optional part of the kit is used, but the extra that installs it is not installed.

    Its message is one line naming the ``pip install`` that adds it. It is a
    ``ModuleNotFoundError`` too, so ``except ImportError`` still catches it.

    Parameters
    ----------
    extra : str
        The extra (``report``, ``notebooks``, ``dask``).
    what : str
        What needs it (``'engine="dask"'``, ``explicit-audit report``).
    module : str
        The module that is missing.
    """

    def __init__(self, extra: str, what: str, module: str) -> None:
        self.extra = extra
        self.what = what
        AuditError.__init__(
            self,
            f"{what} needs the kit's {extra!r} extra, which is not installed (no module "
            f"{module!r}): pip install 'explicit_audit[{extra}]'",
        )
        self.name = module


class RejectedRowsWarning(UserWarning):
    """Some input could not be loaded; it is kept in ``Audit.rejected``."""


class ExtraColumnsWarning(UserWarning):
    """More extra (logger) keys than ``max_extra_columns``: the rest are JSON in ``extra_json``."""


class UnparsedTimeWarning(UserWarning):
    """A time column held text that is not a time; the text is kept in ``<column>_unparsed``."""

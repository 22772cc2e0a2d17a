"""The registry of ``verify``'s output formats: what ``--format`` offers.

An output format is declared once, as an :class:`OutputFormat` (its name, a
line for ``--help``, how it writes a verdict and, if it has one, its
document for a run that could not check anything), and registered with one
call::

    from explicit_audit.verdicts import OutputFormat, register_format
    register_format(OutputFormat("toy", "one line per check", write=toy_document))

``explicit-audit verify --format`` reads its choices and its help from here,
and so does the document written when the input cannot be read (exit 2).
The kit's own formats (text, json, junit, sarif) are registered in
:mod:`explicit_audit.verdicts.outputs`, the same way.

A format kept outside the kit is registered from a module that is imported
before the command line is built, found as record kinds are
(:mod:`explicit_audit._core.registry`): a module (or an ``OutputFormat``
object) named by the entry point group ``explicit_audit.formats``, or a
module named by the environment variable ``EXPLICIT_AUDIT_FORMATS``
(comma-separated).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from .._core.registry import import_plugins
from .._version import __version__
from ..errors import AuditError
from .exits import ExitStatus
from .verdict import Verdict

__all__ = [
    "ENTRY_POINT_GROUP",
    "ENVIRONMENT_VARIABLE",
    "Failure",
    "OutputFormat",
    "Rendering",
    "output_format",
    "output_formats",
    "register_format",
    "unregister_format",
]

#: The entry point group whose modules (or OutputFormat objects) register formats.
ENTRY_POINT_GROUP = "explicit_audit.formats"

#: The environment variable naming modules that register formats (comma-separated).
ENVIRONMENT_VARIABLE = "EXPLICIT_AUDIT_FORMATS"


@dataclass(frozen=True)
class Rendering:
    """What a format is given beside the verdict.

    Attributes
    ----------
    provenance : dict
        The files read (names, sizes, SHA-256), rows per table, the versions.
    max_findings : int
        How many findings a listing for people shows per check (``--max-findings``).
    notes : tuple of str
        Lines for people about what was read (entries the listing skipped);
        a format a CI dashboard reads may leave them out.
    """

    provenance: dict = field(default_factory=dict)
    max_findings: int = 20
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Failure:
    """A run that could not check anything (exit 2, or 70), as its document names it.

    Attributes
    ----------
    data : str or None
        The data path as shown, or None when the command line was refused.
    type : str
        What went wrong, as a type name (``UnreadableFileError``, ``UsageError``).
    message : str
        The message stderr shows too.
    file, line, field :
        Where, when known.
    status : int
        The exit status: 2, or 70 for an unexpected error (a bug).
    version : str
        The kit's version.
    """

    data: str | None
    type: str
    message: str
    file: str | None = None
    line: int | None = None
    field: str | None = None
    status: int = ExitStatus.UNREADABLE
    version: str = __version__

    @classmethod
    def of(
        cls,
        exc: BaseException,
        type_name: str,
        data: str | None,
        status: int = ExitStatus.UNREADABLE,
    ) -> Failure:
        """The failure ``exc`` stands for; its file, line and field where it names them."""
        return cls(
            data,
            type_name,
            str(exc),
            file=getattr(exc, "source_file", None),
            line=getattr(exc, "source_line", None),
            field=getattr(exc, "field", None),
            status=status,
        )


@dataclass(frozen=True)
class OutputFormat:
    """One output format of ``explicit-audit verify``.

    Attributes
    ----------
    name : str
        What ``--format`` calls it.
    description : str
        What it writes, in a few words, as ``--help`` lists it.
    write : callable
        ``write(verdict, rendering) -> str``: the whole document, ending
        with a newline, from a :class:`~explicit_audit.verdicts.Verdict` and
        a :class:`Rendering`.
    failed : callable, optional
        ``failed(failure) -> str``: the document of a run that could not
        check anything (a :class:`Failure`); without it, stderr alone says why.
    """

    name: str
    description: str
    write: Callable[[Verdict, Rendering], str]
    failed: Callable[[Failure], str] | None = None


_FORMATS: dict[str, OutputFormat] = {}
_PLUGINS = {"loaded": False}


def register_format(output: OutputFormat) -> OutputFormat:
    """Register an output format, so that ``verify --format NAME`` writes it.

    Parameters
    ----------
    output : OutputFormat
        The format; ``--format`` takes its ``name``, ``--help`` lists its description.

    Returns
    -------
    OutputFormat
        ``output``, so that a module may write ``TOY = register_format(OutputFormat(...))``.

    Raises
    ------
    AuditError
        When another format holds the name (registering the same one again
        changes nothing), or the name could be taken for an option.

    Examples
    --------
    >>> toy = OutputFormat("toy", "the exit status alone", write=lambda v, r: f"{v.status}\\n")
    >>> register_format(toy).name, "toy" in output_formats()
    ('toy', True)
    >>> unregister_format("toy").name
    'toy'
    """
    if not output.name or output.name.startswith("-") or output.name != output.name.strip():
        raise AuditError(f"an output format's name must be a word, not {output.name!r}")
    if _FORMATS.setdefault(output.name, output) is not output:
        raise AuditError(f"an output format named {output.name!r} is already registered")
    return output


def unregister_format(name: str) -> OutputFormat:
    """The format ``name``, taken out of the registry: to register another in its place.

    An :class:`~explicit_audit.AuditError` when no format of that name is registered.
    """
    taken = _FORMATS.pop(name, None)
    if taken is None:
        raise AuditError(f"no output format {name!r} is registered")
    return taken


def output_formats() -> dict[str, OutputFormat]:
    """Every registered format, in registration order (the kit's own first): name -> format."""
    if not _PLUGINS["loaded"]:
        _PLUGINS["loaded"] = True
        for found in import_plugins(ENTRY_POINT_GROUP, ENVIRONMENT_VARIABLE, "output format"):
            if isinstance(found, OutputFormat):
                register_format(found)
    return dict(_FORMATS)


def output_format(name: str) -> OutputFormat:
    """The registered format ``name``; an :class:`~explicit_audit.AuditError` naming the others."""
    formats = output_formats()
    if name not in formats:
        raise AuditError(f"no output format {name!r}; the formats are {', '.join(formats)}")
    return formats[name]

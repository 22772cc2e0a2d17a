"""``report``'s notebook parameters, as papermill takes them, and as the kit always has.

=============================  =======================================================
``-p NAME VALUE``              papermill's form: ``True``, ``False``, ``None``, a whole
                               number or a float are read as such, anything else is
                               the text as written (``'a b'`` keeps its quotes)
``-r NAME VALUE``              papermill's raw form: VALUE is always the text
``-f FILE.yaml``               papermill's parameters file: a YAML mapping of NAME:
                               VALUE (dates stay text, as papermill reads them)
``-p NAME=VALUE``              the kit's first form, kept: VALUE is a Python literal
                               (``'a b'``, ``[1, 2]``) when it is one, else the text
=============================  =======================================================

The precedence is papermill's, whatever the order on the command line: the
files (in the order given), then ``-p`` (either form, the last of a name
winning), then ``-r``.
"""

from __future__ import annotations

import argparse
import math
import os
from collections.abc import Sequence

import yaml

from .._core.yaml_lines import mark_line
from ..errors import AuditError
from ..report.parameters import parse_value
from ..small_files import MAX_SMALL_FILE_BYTES, read_small_text

__all__ = ["papermill_pairs", "parameter_options", "parameters_given", "resolve_type"]

#: ``-p NAME VALUE`` is given to argparse as this option (papermill's long name).
_PAIR = "--parameters"


def parameter_options(report: argparse.ArgumentParser) -> None:
    """Add ``-p`` (both forms), ``-r`` and ``-f`` to ``report``."""
    report.add_argument(
        "-p",
        "--parameter",
        dest="parameter",
        action=_Append,
        default=[],
        metavar="NAME VALUE",
        help="set a parameter the notebooks declare in their parameters cell (repeatable), as "
        "papermill's -p does: True, False, None, a whole number or a float are read as such, "
        "anything else as text. The form NAME=VALUE is read as a Python literal (0.7, 'a b', "
        "[1, 2]) when it is one, else as text",
    )
    report.add_argument(_PAIR, dest="parameter", action=_Append, nargs=2, help=argparse.SUPPRESS)
    report.add_argument(
        "-r",
        "--parameters-raw",
        "--parameters_raw",
        dest="parameter_raw",
        action="append",
        nargs=2,
        default=[],
        metavar=("NAME", "VALUE"),
        help="set a parameter to VALUE as text, whatever it looks like (repeatable; "
        "papermill's -r)",
    )
    report.add_argument(
        "-f",
        "--parameters-file",
        "--parameters_file",
        dest="parameter_file",
        action="append",
        default=[],
        metavar="FILE.yaml",
        help="read parameters from a YAML mapping of NAME: VALUE (repeatable; papermill's -f); "
        "-p and -r override what a file sets",
    )


class _Append(argparse.Action):
    """``-p NAME=VALUE`` and ``-p NAME VALUE`` (given as ``--parameters``) in one list, in order."""

    def __call__(self, parser, namespace, values, option_string=None):
        given = getattr(namespace, self.dest) or []
        if isinstance(values, list):
            name, text = values
            if not name.isidentifier():
                raise argparse.ArgumentError(self, f"{name!r}: NAME must be a Python name")
            given = [*given, (name, resolve_type(text), f"-p {name} {text}")]
        else:
            name, sep, text = values.partition("=")
            if not sep or not name.isidentifier():
                raise argparse.ArgumentError(
                    self, f"{values!r}: write NAME=VALUE or NAME VALUE, NAME a Python name"
                )
            given = [*given, (name, parse_value(text), f"-p {values}")]
        setattr(namespace, self.dest, given)


def papermill_pairs(argv: Sequence[str]) -> list[str]:
    """``argv`` with papermill's ``-p NAME VALUE`` spelled so argparse reads it.

    ``-p`` takes one argument (``NAME=VALUE``) or two (``NAME VALUE``):
    argparse cannot take either, so a ``-p`` of ``report`` whose next
    argument holds no ``=`` becomes ``--parameters NAME VALUE``.
    """
    argv = list(argv)
    if "report" not in argv:
        return argv
    out: list[str] = []
    position = 0
    after_report = False
    while position < len(argv):
        item = argv[position]
        after_report = after_report or item == "report"
        if item == "--":
            return out + argv[position:]
        following = argv[position + 1 : position + 3]
        if after_report and item in ("-p", "--parameter") and len(following) == 2:
            if "=" not in following[0] and not following[0].startswith("-"):
                out += [_PAIR, *following]
                position += 3
                continue
        out.append(item)
        position += 1
    return out


def resolve_type(text: str) -> object:
    """A ``-p NAME VALUE`` value, typed as papermill types it.

    Examples
    --------
    >>> [resolve_type(v) for v in ("True", "None", "12", "007", "0.7", "1e3", "'a b'", "[1]")]
    [True, None, 12, 7, 0.7, 1000.0, "'a b'", '[1]']
    """
    constants = {"True": True, "False": False, "None": None}
    if text in constants:
        return constants[text]
    for number in (int, float):
        try:
            return number(text)
        except ValueError:
            continue
    return text


class _NoDates(yaml.SafeLoader):
    """Safe loading without YAML's timestamps: ``2025-03-04`` stays text, as papermill reads it."""


_NoDates.yaml_implicit_resolvers = {
    first: [(tag, pattern) for tag, pattern in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _read_file(path: str) -> dict[str, object]:
    """The parameters of one ``-f`` file; an error names the file (and the line)."""
    try:
        text = read_small_text(path, max_bytes=MAX_SMALL_FILE_BYTES["parameters"])
    except AuditError:
        raise
    except OSError as exc:
        raise AuditError(f"-f {path}: cannot read the file ({exc.strerror or exc})") from None
    try:
        if any(isinstance(event, yaml.AliasEvent) for event in yaml.parse(text, Loader=_NoDates)):
            raise AuditError(
                f"{path}: aliases (*name) are not read in a parameters file; write the value out"
            )
        found = yaml.load(text, Loader=_NoDates)  # a safe loader: never a Python object
    except yaml.YAMLError as exc:
        line = mark_line(text, getattr(exc, "problem_mark", None))
        where = path if line is None else f"{path}, line {line}"
        problem = str(getattr(exc, "problem", "") or exc).strip()
        raise AuditError(f"{where}: not valid YAML ({problem})") from None
    except RecursionError:
        raise AuditError(f"{path}: nested too deeply to be a parameters file") from None
    if found is None:
        return {}
    if not isinstance(found, dict):
        raise AuditError(
            f"{path}: a parameters file is a mapping of NAME: VALUE, not a {type(found).__name__}"
        )
    for name in found:
        if not isinstance(name, str) or not name.isidentifier():
            raise AuditError(f"{path}: {name!r} is not a Python name, so not a parameter")
    return found


def parameters_given(args: argparse.Namespace) -> dict[str, object]:
    """Every parameter given to ``report``, by papermill's precedence (files, ``-p``, ``-r``)."""
    values: dict[str, object] = {}
    for path in args.parameter_file:
        values.update(_read_file(os.fspath(path)))
    values.update({name: value for name, value, _ in args.parameter})
    for name, text in args.parameter_raw:
        if not name.isidentifier():
            raise AuditError(f"-r {name} {text}: NAME must be a Python name")
        values[name] = text
    for name, value in values.items():
        if isinstance(value, float) and not math.isfinite(value):
            raise AuditError(
                f"{name} = {value}: not a value a notebook can be given; a finite number, or "
                f"text with -r {name} {value}"
            )
    return values

"""A notebook's parameters cell, read without Jupyter: the names it declares, their defaults.

A notebook the kit runs on other data has one code cell tagged
``parameters`` (papermill's convention) that assigns its parameters: the
data path, and whatever else the notebook lets a report change. This module
reads that cell from a notebook as ``nbformat`` gives it or as the plain JSON
of its file, so that copying notebooks (``explicit-audit notebooks``) needs
no Jupyter package.

``report -p NAME=VALUE`` values are read by :func:`parse_value`: a Python
literal (``0.7``, ``12``, ``True``, ``None``, ``"text"``, ``[1, 2]``) is
taken as that value, anything else as the text it is, as papermill's ``-p``
does.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

from ..errors import ReportError

__all__ = [
    "DATA_PARAMETER_NAMES",
    "cell_source",
    "chosen_parameters",
    "data_parameter",
    "declared_parameters",
    "parameter_names",
    "parameters_cell",
    "parse_value",
]

#: Names a parameters cell may give its data path, tried in this order when
#: the cell assigns more than one variable.
DATA_PARAMETER_NAMES = ("DATA", "DATA_PATH", "DATA_DIR", "data", "data_path", "data_dir", "SOURCE")


def cell_source(cell: Mapping) -> str:
    """A cell's source as one string (a file may store it as a list of lines)."""
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def parameters_cell(notebook: Mapping) -> Mapping | None:
    """The first code cell tagged ``parameters``, or None."""
    for cell in notebook.get("cells", []):
        tags = (cell.get("metadata") or {}).get("tags", [])
        if cell.get("cell_type") == "code" and "parameters" in tags:
            return cell
    return None


def _assignments(notebook: Mapping) -> list[tuple[str, ast.expr | None]]:
    cell = parameters_cell(notebook)
    if cell is None:
        raise ReportError(
            "the notebook has no cell tagged 'parameters'; tag the cell that sets the data path "
            "(papermill style) so a report can run it on other data"
        )
    try:
        tree = ast.parse(cell_source(cell))
    except SyntaxError as exc:
        raise ReportError(f"the parameters cell is not valid Python: {exc}") from None
    found: list[tuple[str, ast.expr | None]] = []
    for node in tree.body:
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign):
            targets, value = [node.target], node.value
        else:
            continue
        for target in targets:
            if isinstance(target, ast.Name) and target.id not in dict(found):
                found.append((target.id, value))
    return found


def parameter_names(notebook: Mapping) -> list[str]:
    """The variables the ``parameters`` cell assigns, in order.

    Raises
    ------
    ReportError
        When no cell is tagged ``parameters``, or it is not valid Python.
    """
    return [name for name, _ in _assignments(notebook)]


def declared_parameters(notebook: Mapping) -> dict[str, object]:
    """The parameters the ``parameters`` cell assigns, with their defaults.

    A default that is not a literal (an expression) is given as ``...``.

    Examples
    --------
    >>> cell = {"cell_type": "code", "metadata": {"tags": ["parameters"]},
    ...         "source": ["DATA = '../data'\\n", "TOP_N = 20\\n", "CUT = 0.5 * 2\\n"]}
    >>> declared_parameters({"cells": [cell]})
    {'DATA': '../data', 'TOP_N': 20, 'CUT': Ellipsis}
    """
    declared: dict[str, object] = {}
    for name, value in _assignments(notebook):
        try:
            declared[name] = ast.literal_eval(value) if value is not None else None
        except ValueError:
            declared[name] = ...
    return declared


def data_parameter(notebook: Mapping) -> str:
    """The name of the variable that holds the data path in the ``parameters`` cell.

    Parameters
    ----------
    notebook : NotebookNode or dict

    Returns
    -------
    str
        The only variable the cell assigns, or else the first of
        :data:`DATA_PARAMETER_NAMES` it assigns.

    Raises
    ------
    ReportError
        When no cell is tagged ``parameters``, or its data path cannot be told.

    Examples
    --------
    >>> cell = {"cell_type": "code", "metadata": {"tags": ["parameters"]},
    ...         "source": ['DATA = "../data"\\n', 'ENGINE = "pandas"']}
    >>> data_parameter({"cells": [cell]})
    'DATA'
    """
    names = parameter_names(notebook)
    if len(names) == 1:
        return names[0]
    for name in DATA_PARAMETER_NAMES:
        if name in names:
            return name
    raise ReportError(
        f"the parameters cell assigns {names or 'nothing'}; name the data path one of "
        f"{', '.join(DATA_PARAMETER_NAMES)}"
    )


def parse_value(text: str) -> object:
    """A ``-p NAME=VALUE`` value: a Python literal when it is one, else the text.

    Examples
    --------
    >>> [parse_value(v) for v in ("0.7", "12", "True", "None", "'a b'", "[1, 2]", "legal", "007")]
    [0.7, 12, True, None, 'a b', [1, 2], 'legal', '007']
    """
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return text


#: Parameters a report sets itself: the data path (the ``DATA`` argument) and the engine's.
_SET_BY_THE_REPORT = {"ENGINE": "--engine", "SCHEDULER": "--scheduler", "PERSIST": "--persist"}


def chosen_parameters(
    notebooks: Mapping[str, Mapping], values: Mapping[str, object]
) -> dict[str, dict[str, object]]:
    """``report -p`` values, checked against what each notebook declares; per notebook, its own.

    Parameters
    ----------
    notebooks : mapping
        ``{name: notebook}``, the notebooks to report on.
    values : mapping
        ``{parameter: value}`` as given (see :func:`parse_value`).

    Returns
    -------
    dict
        ``{name: {parameter: value}}``: each notebook gets the values of the
        parameters it declares.

    Raises
    ------
    ReportError
        For a parameter no notebook declares, one the report sets itself (the
        data path, ``ENGINE``, ``SCHEDULER``, ``PERSIST``), or a value of another
        type than a notebook's default (a number where text is expected, say).

    Examples
    --------
    >>> cell = {"cell_type": "code", "metadata": {"tags": ["parameters"]},
    ...         "source": 'DATA = "../data"\\nTOP_N = 20'}
    >>> chosen_parameters({"a.ipynb": {"cells": [cell]}}, {"TOP_N": 5})
    {'a.ipynb': {'TOP_N': 5}}
    """
    declared = {name: declared_parameters(notebook) for name, notebook in notebooks.items()}
    data_names = {data_parameter(notebook) for notebook in notebooks.values()}
    everything = sorted(
        {p for found in declared.values() for p in found} - data_names - set(_SET_BY_THE_REPORT)
    )
    for parameter, value in values.items():
        if parameter in data_names:
            raise ReportError(
                f"-p {parameter}: the data path is the report's DATA argument, not a parameter"
            )
        if parameter in _SET_BY_THE_REPORT:
            raise ReportError(
                f"-p {parameter}: set by the report itself; use {_SET_BY_THE_REPORT[parameter]}"
            )
        owners = [name for name, found in declared.items() if parameter in found]
        if not owners:
            raise ReportError(
                f"-p {parameter}: no notebook declares it in its parameters cell; the notebooks "
                f"declare {', '.join(everything) or 'no other parameter'}"
            )
        for name in owners:
            default = declared[name][parameter]
            if not _fits(value, default):
                raise ReportError(
                    f"-p {parameter}={value!r}: {name} declares it as {type(default).__name__} "
                    f"({parameter} = {default!r}), not {type(value).__name__}"
                )
    return {
        name: {p: v for p, v in values.items() if p in found} for name, found in declared.items()
    }


def _fits(value: object, default: object) -> bool:
    """Whether ``value`` may stand where ``default`` stands (None and expressions take anything)."""
    if default is None or default is ... or value is None:
        return True
    if isinstance(default, bool) or isinstance(value, bool):
        return isinstance(value, bool) and isinstance(default, bool)
    if isinstance(default, float):
        return isinstance(value, int | float)
    return isinstance(value, type(default))

"""Lines of YAML text as an editor counts them, not as PyYAML's marks do.

PyYAML and libyaml read YAML 1.1, whose line breaks include NEL (U+0085),
the line separator (U+2028) and the paragraph separator (U+2029): a mark's
``line`` counts them. YAML 1.2 dropped them ("treated as non-break
characters"), and an editor, ``grep -n`` and ``sed -n`` do not end a line
there either. So a policy whose description holds a line separator would
have every later error named one line too far on. The line is counted
again here, a line ending at ``\\r\\n``, ``\\r`` or ``\\n`` as in YAML 1.2 and
in Python's universal newlines. It is counted from the mark's line, not its
``index``: libyaml's index leaves out a byte order mark, PyYAML's does not.
"""

from __future__ import annotations

import itertools
import re
from typing import Any

__all__ = ["mark_line", "text_line"]

#: A line break of YAML 1.2: CR LF, CR or LF.
_BREAK = re.compile(r"\r\n?|\n")
#: A line break of YAML 1.1, as both readers count them: those and NEL, LS and PS.
_BREAK_1_1 = re.compile(r"\r\n?|[\n\x85\u2028\u2029]")


def mark_line(text: str, mark: Any) -> int | None:
    """The 1-based line of a PyYAML mark in ``text``, breaks counted as YAML 1.2 counts them.

    Parameters
    ----------
    text : str
        The text the mark was made in, as given to the YAML reader.
    mark : yaml.Mark or None
        A node's ``start_mark`` or an error's ``problem_mark``.

    Returns
    -------
    int or None
        None when there is no mark.

    Examples
    --------
    >>> import yaml
    >>> text = 'a: "x\\u2028y"\\nb: [1\\n'
    >>> try:
    ...     yaml.safe_load(text)
    ... except yaml.YAMLError as exc:
    ...     exc.problem_mark.line + 1, mark_line(text, exc.problem_mark)
    (4, 3)
    """
    if mark is None:
        return None
    # A YAML 1.1 line holds no break of either version: the breaks before it say it all.
    breaks = itertools.islice(_BREAK_1_1.finditer(text), mark.line)
    return 1 + sum(match[0] in ("\r\n", "\r", "\n") for match in breaks)


def text_line(text: str, line: int) -> str | None:
    """Line ``line`` (1-based) of ``text``, lines cut as :func:`mark_line` counts them.

    Examples
    --------
    >>> text_line("a\\u2028b\\r\\nc", 2)
    'c'
    >>> text_line("a\\n", 2) is None  # a last break ends a line, it starts none
    True
    """
    lines = _BREAK.split(text)
    if lines[-1] == "":
        lines.pop()
    return lines[line - 1] if 1 <= line <= len(lines) else None

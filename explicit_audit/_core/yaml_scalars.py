"""Plain YAML scalars that a YAML 1.1 reader and a YAML 1.2 reader read as other values.

PyYAML reads YAML 1.1: ``yes``, ``on`` and ``off`` are booleans, ``06000``
is 3072 (octal), ``1:30`` is 90 (base 60), ``6_000`` is 6000 and
``2026-01-01`` is a date. A YAML 1.2 reader (its core schema: ruamel.yaml,
Go's yaml.v3, JavaScript's yaml) reads ``06000`` as 6000 and the others as
text; ``1e3``, text to PyYAML, is 1000.0 to it. Such a
file holds two documents, one per reader, as a JSON object that names a key
twice does: the kit reads neither, and says where and what each reader reads.
Quoted and explicitly tagged scalars read alike; so do the numbers and
booleans ``yaml.safe_dump`` writes.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator
from typing import Any

import yaml

__all__ = ["read_by_yaml_1_2", "two_readings"]

#: The YAML 1.2 core schema's plain scalars (its section 10.3.2), in its order: a
#: pattern and how it reads, one alternation matched once.
_CORE: dict[str, tuple[str, Callable[[str], Any]]] = {
    "null": (r"~|null|Null|NULL|", lambda text: None),
    "true": (r"true|True|TRUE", lambda text: True),
    "false": (r"false|False|FALSE", lambda text: False),
    "decimal": (r"[-+]?[0-9]+", lambda text: int(text, 10)),
    "octal": (r"0o[0-7]+", lambda text: int(text[2:], 8)),
    "hexadecimal": (r"0x[0-9a-fA-F]+", lambda text: int(text[2:], 16)),
    "number": (r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?", float),
    "infinity": (r"[-+]?\.(?:inf|Inf|INF)", lambda text: float(text.replace(".", ""))),
    "nan": (r"\.(?:nan|NaN|NAN)", lambda text: math.nan),
}
_CORE_PATTERN = re.compile(
    "|".join(f"(?P<{name}>{pattern})" for name, (pattern, _) in _CORE.items())
)

_STR = "tag:yaml.org,2002:str"

#: Tags YAML 1.1 gives keys, not values; every reader that merges keys reads ``<<`` alike.
_KEY_TAGS = {"tag:yaml.org,2002:merge", "tag:yaml.org,2002:value"}


def read_by_yaml_1_2(text: str) -> Any:
    """What a YAML 1.2 reader (core schema) reads the plain scalar ``text`` as.

    Examples
    --------
    >>> read_by_yaml_1_2("06000"), read_by_yaml_1_2("yes"), read_by_yaml_1_2("1e3")
    (6000, 'yes', 1000.0)
    """
    found = _CORE_PATTERN.fullmatch(text)
    return text if found is None else _CORE[found.lastgroup][1](text)


def _same(one: Any, other: Any) -> bool:
    if type(one) is not type(other):
        return False
    if isinstance(one, float) and math.isnan(one):
        return math.isnan(other)
    return one == other


def _scalars(root: yaml.Node) -> Iterator[tuple[yaml.Node, str]]:
    """Every scalar node below ``root``, in document order, with the dotted path it stands at
    (a key at its own); an alias's node where it stands first."""
    stack = [(root, "")]
    seen: set[int] = set()
    while stack:
        node, path = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.ScalarNode):
            yield node, path
        elif isinstance(node, yaml.SequenceNode):
            items = reversed(list(enumerate(node.value)))
            stack.extend((item, f"{path}[{i}]") for i, item in items)
        elif isinstance(node, yaml.MappingNode):
            for key, value in reversed(node.value):
                name = key.value if isinstance(key, yaml.ScalarNode) else "?"
                where = f"{path}.{name}" if path else name
                stack.extend([(value, where), (key, where)])


def two_readings(loader: yaml.BaseLoader, root: yaml.Node) -> tuple[yaml.Node, str, str] | None:
    """The first plain scalar that YAML 1.1 (``loader``) and YAML 1.2 read as other values.

    Parameters
    ----------
    loader : yaml.SafeLoader or yaml.CSafeLoader
        The loader that composed ``root``: its resolver and constructors are
        YAML 1.1's.
    root : yaml.Node
        The composed document.

    Returns
    -------
    tuple or None
        ``(node, path, says)``: the scalar, its dotted path and what each
        reader reads it as; None when every plain scalar reads alike.

    Examples
    --------
    >>> import yaml
    >>> loader = yaml.SafeLoader("cap: 06000\\nname: '06000'\\n")
    >>> node, path, says = two_readings(loader, loader.get_single_node())
    >>> path, says
    ('cap', '06000 is 3072 to a YAML 1.1 reader (PyYAML) and 6000 to a YAML 1.2 reader')
    """
    for node, path in _scalars(root):
        if node.style not in (None, "") or node.tag in _KEY_TAGS:  # libyaml: "" for plain
            continue  # quoted or a block scalar: text to both
        try:
            new = read_by_yaml_1_2(node.value)
            if node.tag == _STR and type(new) is str:
                continue  # text to both: most scalars, a key or a name
            if loader.resolve(yaml.ScalarNode, node.value, (True, False)) != node.tag:
                continue  # explicitly tagged: one value to both
            old = loader.yaml_constructors[node.tag](loader, node)
        except (yaml.YAMLError, ValueError, OverflowError):
            continue  # not a value to one of them: the reading says so
        if not _same(old, new):
            says = (
                f"{node.value} is {old!r} to a YAML 1.1 reader (PyYAML) and {new!r} to a "
                "YAML 1.2 reader"
            )
            return node, path, says
    return None

"""Reading and checking policy YAML: safe loading, the schema check, and error lines.

:func:`check_policy` checks a parsed policy against the layout documented in
:mod:`explicit_audit.decisions.policy` and returns it normalised (optional keys filled
in); every problem is a :class:`~explicit_audit.PolicyError` naming the source
and the dotted key. :func:`read_policy_yaml` parses a file with
``yaml.safe_load`` and returns a function that adds the YAML line of a key to
such an error.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from .._core.columns import INT64_MAX
from .._core.describe import yaml_type
from .._core.surrogates import lone_surrogate
from .._core.yaml_lines import mark_line
from .._core.yaml_scalars import two_readings
from ..errors import PolicyError
from ..reading.names import display_name
from ..small_files import MAX_SMALL_FILE_BYTES, read_small_text
from .shape import POLICY_SHAPES

__all__ = ["MAX_ALIAS_NODES", "check_policy", "read_policy_yaml"]


def _keys(fields) -> dict[str, bool]:
    return {field.name: field.required for field in fields}


# Every level's keys, and which are required, as the policy's shape declares them.
(_POLICY,) = POLICY_SHAPES
_TOP_KEYS = _keys(_POLICY.fields)
_ESCALATION_KEYS = _keys(_POLICY.field("escalation").fields)
_DOMAIN_KEYS = _keys(_POLICY.field("subject_domains").items.fields)
_FALLBACK_KEYS = _keys(_POLICY.field("fallback_domain").fields)
_FLAG_KEYS = _keys(_POLICY.field("risk_flags").items.fields)


def _mapping(value: Any, where: str, key: str, spec: dict[str, bool]) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise PolicyError.at(where, key or None, f"expected a mapping, got {yaml_type(value)}")
    for name in value:
        if not isinstance(name, str):
            raise PolicyError.at(where, key or None, f"key {name!r} is not a string")
        if name not in spec:
            known = ", ".join(spec)
            path = f"{key}.{name}" if key else name
            raise PolicyError.at(where, path, f"unknown key (known keys here: {known})")
    for name, required in spec.items():
        if required and name not in value:
            path = f"{key}.{name}" if key else name
            raise PolicyError.at(where, path, "is missing")
    return value


def _any_names(value: Any) -> dict[str, bool]:
    """The spec of a map whose keys are names: each of its keys, none required."""
    return dict.fromkeys(value, False) if isinstance(value, dict) else {}


def _bool(value: Any, where: str, key: str) -> bool:
    if type(value) is not bool:
        raise PolicyError.at(where, key, f"expected true or false, got {yaml_type(value)}")
    return value


def _count(value: Any, where: str, key: str) -> int:
    if type(value) is not int:
        raise PolicyError.at(where, key, f"expected a whole number, got {yaml_type(value)}")
    if not 0 <= value <= INT64_MAX:
        raise PolicyError.at(where, key, f"must be between 0 and 2**63-1, got {value}")
    return value


def _threshold(value: Any, where: str, key: str) -> float:
    if type(value) not in (int, float):
        raise PolicyError.at(where, key, f"expected a number in [0, 1], got {yaml_type(value)}")
    if not (0 <= value <= 1 and math.isfinite(value)):  # a huge int: no float()
        raise PolicyError.at(where, key, f"must lie in [0, 1], got {value}")
    return float(value)


def _text(value: Any, where: str, key: str, *, empty_ok: bool) -> str:
    if not isinstance(value, str):
        raise PolicyError.at(where, key, f"expected a string, got {yaml_type(value)}")
    if not value and not empty_ok:
        raise PolicyError.at(where, key, "must not be empty")
    return value


def _flags(value: Any, where: str, key: str) -> list[str]:
    if value is None:
        value = []
    if not isinstance(value, list):
        raise PolicyError.at(where, key, f"expected a list of flag names, got {yaml_type(value)}")
    for index, flag in enumerate(value):
        _text(flag, where, f"{key}[{index}]", empty_ok=False)
    return list(value)


def _domain(value: Any, where: str, key: str, spec: dict[str, bool]) -> dict[str, Any]:
    value = _mapping(value, where, key, spec)
    out: dict[str, Any] = {}
    if "name" in spec:
        out["name"] = _text(value["name"], where, f"{key}.name", empty_ok=False)
    out["high_impact"] = _bool(value["high_impact"], where, f"{key}.high_impact")
    flags_key = f"{key}.default_risk_flags"
    out["default_risk_flags"] = _flags(value.get("default_risk_flags"), where, flags_key)
    return out


def _lone_surrogate(data: Any) -> str | None:
    """Where the policy holds a lone surrogate, if anywhere.

    Encoding the whole document as UTF-8 is one pass in C; only a document
    that fails it is walked to name the key.
    """
    try:
        json.dumps(data, ensure_ascii=False, default=str).encode("utf-8")
    except UnicodeEncodeError:
        return lone_surrogate(data)
    except (TypeError, ValueError):  # keys JSON cannot write: walk the document
        return lone_surrogate(data)
    return None


def check_policy(data: Any, where: str) -> dict[str, Any]:
    """Check a parsed policy and return it normalised.

    Parameters
    ----------
    data : Any
        The parsed YAML (or a dict built in code).
    where : str
        The source, for messages.

    Returns
    -------
    dict
        The policy with ``default_risk_flags`` and ``synthesis_directive``
        always present (``[]`` and ``None`` when left out).

    Raises
    ------
    PolicyError
    """
    if data is None:
        raise PolicyError.at(where, None, "the file is empty; expected a policy mapping")
    surrogate = _lone_surrogate(data)
    if surrogate is not None:
        # YAML's "\ud800" escape writes one; the policy's hash (its rules as
        # UTF-8) and every table that names a domain or flag cannot hold it.
        raise PolicyError.at(
            where,
            surrogate.encode("utf-8", "backslashreplace").decode("utf-8"),
            "holds a lone surrogate (an unpaired \\uD800-\\uDFFF), which is not text",
        )
    top = _mapping(data, where, "", _TOP_KEYS)
    out: dict[str, Any] = {}
    if "policy_id" in top:
        out["policy_id"] = _text(top["policy_id"], where, "policy_id", empty_ok=False)
    if "description" in top:
        out["description"] = _text(top["description"], where, "description", empty_ok=True)
    escalation = _mapping(top["escalation"], where, "escalation", _ESCALATION_KEYS)
    out["escalation"] = {
        name: _count(escalation[name], where, f"escalation.{name}")
        for name in ("context_char_cap_4b", "escalate_on_multi_doc_count")
    }
    out["escalation"]["confidence_threshold"] = _threshold(
        escalation["confidence_threshold"], where, "escalation.confidence_threshold"
    )
    domains = top["subject_domains"]
    if domains is None:
        domains = {}
    _mapping(domains, where, "subject_domains", _any_names(domains))
    out["subject_domains"] = {
        name: _domain(spec, where, f"subject_domains.{name}", _DOMAIN_KEYS)
        for name, spec in domains.items()
    }
    out["fallback_domain"] = _domain(
        top["fallback_domain"], where, "fallback_domain", _FALLBACK_KEYS
    )
    flags = top["risk_flags"]
    if flags is None:
        flags = {}
    _mapping(flags, where, "risk_flags", _any_names(flags))
    out["risk_flags"] = {}
    for name, spec in flags.items():
        key = f"risk_flags.{name}"
        spec = _mapping(spec, where, key, _FLAG_KEYS)
        directive = spec.get("synthesis_directive")
        if directive is not None:
            _text(directive, where, f"{key}.synthesis_directive", empty_ok=True)
        out["risk_flags"][name] = {
            "requires_26b": _bool(spec["requires_26b"], where, f"{key}.requires_26b"),
            "synthesis_directive": directive or None,
        }
    return out


def _key_line(text: str, node: yaml.Node | None, key: str | None) -> int | None:
    """The 1-based line of a dotted key in the YAML tree composed from ``text`` (its closest
    known parent)."""
    if node is None or not key:
        return None
    line = None
    for part in key.replace("[", ".[").split("."):
        if part.startswith("[") and isinstance(node, yaml.SequenceNode):
            index = int(part[1:-1])
            if index >= len(node.value):
                break
            node = node.value[index]
            line = mark_line(text, node.start_mark)
            continue
        if not isinstance(node, yaml.MappingNode):
            break
        match = next((pair for pair in node.value if pair[0].value == part), None)
        if match is None:
            break
        line = mark_line(text, match[0].start_mark)
        node = match[1]
    return line


#: How many nodes aliases may add to a policy, counted as if each alias were a
#: copy of what it names: past it, reading the document would take time and
#: memory exponential in its size (nested merge keys, "billion laughs").
MAX_ALIAS_NODES = 100_000


class _StrictSafeLoader(yaml.SafeLoader):
    """Safe loading that also refuses a key written twice in one mapping.

    Plain safe loading keeps the last of two equal keys, so a policy that
    says ``policy_id`` twice would silently be the second. Everything else
    reads as ``yaml.safe_load`` reads it, merge keys (``<<: *base``)
    included: a key a mapping writes itself overrides the same key merged
    into it, as YAML defines, and is not a duplicate.
    """


_MERGE_TAG = "tag:yaml.org,2002:merge"


def _refuse_duplicates(loader: _StrictSafeLoader, node: yaml.MappingNode) -> None:
    """Refuse a key written twice among the keys ``node`` writes itself.

    The mappings merged into it (``<<: *base`` or ``<<: [*a, *b]``) are
    checked the same way, each on its own.
    """
    seen: set = set()
    # A source merged in several places (an alias) is checked once.
    checked = loader.__dict__.setdefault("_checked_sources", set())
    for key_node, value_node in node.value:
        if key_node.tag == _MERGE_TAG:
            merged = value_node.value if isinstance(value_node, yaml.SequenceNode) else [value_node]
            for source in merged:
                if isinstance(source, yaml.MappingNode) and id(source) not in checked:
                    checked.add(id(source))
                    _refuse_duplicates(loader, source)
            key = "<<"  # two merge keys in one mapping are a duplicate too
        else:
            key = loader.construct_object(key_node, deep=True)
        try:
            duplicate = key in seen
        except TypeError:  # an unhashable key: the constructor says so
            return
        if duplicate:
            raise yaml.constructor.ConstructorError(
                "while reading a mapping",
                node.start_mark,
                f"found the key {key!r} twice",
                key_node.start_mark,
            )
        seen.add(key)


def _mapping_without_duplicates(loader: _StrictSafeLoader, node: yaml.MappingNode, deep=False):
    _refuse_duplicates(loader, node)
    # SafeLoader's own mapping constructor: merge keys flattened as safe_load does.
    return loader.construct_mapping(node, deep=deep)


_StrictSafeLoader.add_constructor(
    yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping_without_duplicates
)

if getattr(yaml, "__with_libyaml__", False):

    class _FastStrictSafeLoader(yaml.CSafeLoader):
        """:class:`_StrictSafeLoader` on libyaml's parser: many times faster on a large policy."""

    _FastStrictSafeLoader.add_constructor(
        yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping_without_duplicates
    )
    _FAST_LOADER: type = _FastStrictSafeLoader
else:  # pragma: no cover - PyYAML built without libyaml
    _FAST_LOADER = _StrictSafeLoader


def _parse(text: str, where: str, loader_class: type) -> Any:
    """The document of ``text``, composed first and built only when its aliases are bounded.

    Composing is linear (an alias is a reference to a node already composed);
    building is not, when aliases nest (see :func:`_bound_aliases`).
    """
    loader = loader_class(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        if "*" in text:  # no alias without a "*"
            _bound_aliases(node, where)
        found = two_readings(loader, node)
        if found is not None:
            scalar, key, says = found
            reason = f"{says}: quote it if it is text, or write it as both read it"
            raise PolicyError.at(where, key, reason, mark_line(text, scalar.start_mark))
        return loader.construct_document(node)
    finally:
        loader.dispose()


def _bound_aliases(root: yaml.Node, where: str) -> None:
    """Refuse a document whose aliases expand it past :data:`MAX_ALIAS_NODES` nodes.

    The expanded size is counted once per node (an alias is the node it names),
    so the count is linear in the composed document, however large the
    expansion it finds.

    Raises
    ------
    PolicyError
    """
    expanded: dict[int, int] = {}
    # Depth-first, children before their parent, without recursion.
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, ready = stack.pop()
        if id(node) in expanded:
            continue
        if isinstance(node, yaml.MappingNode):
            children = [child for pair in node.value for child in pair]
        elif isinstance(node, yaml.SequenceNode):
            children = list(node.value)
        else:
            children = []
        if ready:
            expanded[id(node)] = 1 + sum(expanded[id(child)] for child in children)
            continue
        stack.append((node, True))
        stack.extend((child, False) for child in children if id(child) not in expanded)
    added = expanded[id(root)] - len(expanded)
    if added > MAX_ALIAS_NODES:
        raise PolicyError.at(
            where,
            None,
            f"its aliases would expand it by {added} nodes, more than the "
            f"{MAX_ALIAS_NODES} a policy may add that way (nested merge keys or aliases)",
        )


def read_policy_yaml(path: Path) -> tuple[Any, Callable[[PolicyError], PolicyError]]:
    """Parse a policy file with safe loading (duplicate keys refused).

    Parameters
    ----------
    path : pathlib.Path

    Returns
    -------
    data : Any
        The parsed document.
    locate : callable
        ``locate(error) -> error``: the same PolicyError with the line of its key.

    Raises
    ------
    PolicyError
        When the file cannot be read or parsed, or uses a Python tag.
    """
    where = display_name(path)
    try:
        text = read_small_text(path, max_bytes=MAX_SMALL_FILE_BYTES["policy"])
    except (OSError, UnicodeDecodeError) as exc:
        raise PolicyError.at(where, None, f"cannot read the file ({exc})") from None
    try:
        # Safe loading: never builds Python objects.
        try:
            data = _parse(text, where, _FAST_LOADER)
        except yaml.YAMLError:
            if _FAST_LOADER is _StrictSafeLoader:
                raise
            # libyaml refuses some documents PyYAML reads (a "\ud800" escape,
            # which the policy check then names by its key) and words its
            # errors differently: PyYAML's parser judges a file libyaml refuses.
            data = _parse(text, where, _StrictSafeLoader)
    except RecursionError:
        raise PolicyError.at(where, None, "is nested too deeply to be a policy") from None
    except yaml.YAMLError as exc:
        line = mark_line(text, getattr(exc, "problem_mark", None))
        problem = str(getattr(exc, "problem", "") or exc)
        if "python/" in problem:
            tag = problem.split("tag", 1)[-1].strip(" '").replace("tag:yaml.org,2002:", "!!")
            reason = (
                f"uses the Python tag {tag!r}; policies are plain YAML, read with safe "
                "loading, which never builds Python objects: remove the tag"
            )
        else:
            reason = f"is not valid YAML ({problem.strip()})"
        raise PolicyError.at(where, None, reason, line) from None

    def locate(error: PolicyError) -> PolicyError:
        key = error.key
        if not key or error.source_line:
            return error
        try:
            tree = yaml.compose(text, Loader=yaml.SafeLoader)
        except (yaml.YAMLError, RecursionError):
            return error
        line = _key_line(text, tree, key)
        return PolicyError.at(where, key, error.reason, line) if line else error

    return data, locate

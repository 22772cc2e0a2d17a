"""explicit_learning's ``request_sha256``: the canonical-JSON SHA-256 of a payload."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..canonical import REQUEST_HASH_DIALECT, canonical_hash
from ..errors import AuditError

__all__ = ["request_hash"]


def request_hash(payload: Mapping[str, Any], dialect: str = REQUEST_HASH_DIALECT) -> str:
    """``request_sha256`` of a compile-request payload.

    Parameters
    ----------
    payload : mapping
        The payload object.
    dialect : str, default "python-utf8"
        A dialect of :data:`explicit_audit.canonical.DIALECTS`; the default is
        the seed's ``_compact_json`` writer (sorted keys, compact, non-ASCII raw).

    Returns
    -------
    str
        64 lowercase hex characters.

    Raises
    ------
    AuditError
        When ``payload`` is not a mapping, holds NaN or Infinity (JSON has no
        such numbers; Python's ``json.dumps`` would write the non-JSON token
        ``NaN``), or cannot be written in ``dialect``.

    Examples
    --------
    >>> import explicit_audit as ea
    >>> ea.request_hash({"question": "몇 개?"}) == ea.request_hash({"question": "몇 개?"},
    ...                                                          "python-ascii")
    False
    """
    if not isinstance(payload, Mapping):
        raise AuditError(
            f"a compile-request payload is an object, not {type(payload).__name__}; pass the "
            "record's 'payload' value"
        )
    return canonical_hash(payload, dialect)

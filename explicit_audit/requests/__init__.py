"""C2 compile requests (explicit_learning): loading, ``request_sha256`` and the §7.1 checks.

The ``requests`` table is documented in :mod:`explicit_audit.requests.loader`.
"""

from __future__ import annotations

from .checks import FORBIDDEN_PAYLOAD_KEYS, check_requests, verify_requests
from .hashing import request_hash
from .kind import KIND
from .loader import load_requests

__all__ = [
    "FORBIDDEN_PAYLOAD_KEYS",
    "KIND",
    "check_requests",
    "load_requests",
    "request_hash",
    "verify_requests",
]

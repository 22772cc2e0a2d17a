"""``python -m explicit_audit``: the ``explicit-audit`` command, for an environment without
its script on ``PATH`` (the same arguments, output and exit status)."""

from __future__ import annotations

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())

"""Where the command's log records go: standard error, as ``-q`` and ``-v`` choose.

The library only logs (to ``explicit_audit`` and its module loggers, with a
:class:`logging.NullHandler`); the command is the application, so it is the
one that adds a handler, for the length of one run, and takes it away after.

=========  ========================================================
``-q``     errors only (and no progress bar unless ``--progress``)
(none)     warnings: what the command did besides its output
``-v``     also what the kit did, step by step (files read, tables built, the cache)
``-vv``    also the kit's details, and the records of the libraries it runs
=========  ========================================================

What a command must say whatever the level (why it exits 2, an interrupt)
is printed, not logged: ``-q`` never hides why a command failed.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import sys
from collections.abc import Iterator

__all__ = ["logging_to_stderr", "verbosity", "verbosity_options"]

_LEVELS = {-1: logging.ERROR, 0: logging.WARNING, 1: logging.INFO}


def verbosity_options(command: argparse.ArgumentParser) -> None:
    """``-q/--quiet`` and ``-v/--verbose`` (repeatable)."""
    group = command.add_mutually_exclusive_group()
    group.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="errors only on standard error: no warnings, no progress bar (unless --progress)",
    )
    group.add_argument(
        "-v",
        "--verbose",
        action="count",
        default=0,
        help="say what the kit does on standard error (files read, tables built, the cache); "
        "-vv adds its details and the records of the libraries it runs",
    )


def verbosity(args: argparse.Namespace) -> int:
    """-1 for ``-q``, 0 by default, 1 for ``-v``, 2 for ``-vv`` or more."""
    if getattr(args, "quiet", False):
        return -1
    return min(getattr(args, "verbose", 0), 2)


@contextlib.contextmanager
def logging_to_stderr(level: int) -> Iterator[None]:
    """Within the block, the kit's records at ``level`` and above go to standard error."""
    logger = logging.getLogger("explicit_audit")
    handler = logging.StreamHandler(sys.stderr)
    detailed = level > 0
    handler.setFormatter(
        logging.Formatter(
            "%(asctime)s %(levelname)s %(name)s: %(message)s" if detailed else "%(message)s"
        )
    )
    before = logger.level, logger.propagate
    logger.setLevel(_LEVELS.get(level, logging.DEBUG))
    logger.addHandler(handler)
    logger.propagate = False  # printed once, here, whatever the root logger does
    root = logging.getLogger()
    root_before = root.level
    if level >= 2:
        # -vv: the libraries the kit runs (nbclient, distributed) speak too.
        root.setLevel(logging.INFO)
        root.addHandler(handler)
    try:
        yield
    finally:
        handler.flush()
        logger.removeHandler(handler)
        logger.setLevel(before[0])
        logger.propagate = before[1]
        if level >= 2:
            root.removeHandler(handler)
            root.setLevel(root_before)

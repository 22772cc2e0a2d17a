"""Wheels of the distributions installed here, so a fresh environment installs offline.

The wheel test installs the kit's wheel into fresh virtual environments with
pip, resolving its declared requirements (and extras) from a folder of
wheels and nothing else (``--no-index --find-links``). That folder is made
from this environment's own installed distributions: each is written back
into a wheel from the files its ``RECORD`` lists, its metadata (name,
version, requirements, entry points, tags) as installed. So the fresh
environment gets exactly the versions the suite runs with, pip's resolver
checks the kit's requirement bounds against them, and nothing that the
kit's metadata does not ask for is installed.
"""

from __future__ import annotations

import base64
import hashlib
import re
import sys
import zipfile
from collections.abc import Iterable
from importlib import metadata
from pathlib import Path

from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

__all__ = ["closure", "repack", "wheelhouse"]

_SKIPPED_META = {"RECORD", "INSTALLER", "REQUESTED", "direct_url.json"}


def _installed() -> dict[str, metadata.Distribution]:
    found = {}
    for dist in metadata.distributions():
        found.setdefault(canonicalize_name(dist.metadata["Name"]), dist)
    return found


def closure(requirements: Iterable[str]) -> list[metadata.Distribution]:
    """The installed distributions that ``requirements`` need, transitively (markers applied)."""
    installed = _installed()
    environment = default_environment()
    wanted: dict[str, set[str]] = {}
    queue = [Requirement(text) for text in requirements]
    while queue:
        requirement = queue.pop()
        name = canonicalize_name(requirement.name)
        extras = set(requirement.extras)
        if name in wanted and extras <= wanted[name]:
            continue
        dist = installed.get(name)
        if dist is None:
            raise LookupError(f"{requirement} is not installed here, so it cannot be repacked")
        wanted.setdefault(name, set()).update(extras)
        for text in dist.requires or []:
            nested = Requirement(text)
            if nested.marker is None:
                queue.append(nested)
                continue
            for extra in ["", *sorted(wanted[name])]:
                if nested.marker.evaluate({**environment, "extra": extra}):
                    queue.append(nested)
                    break
    return [installed[name] for name in sorted(wanted)]


def _tag(dist_info: Path) -> str:
    tags = [
        line.split(":", 1)[1].strip()
        for line in (dist_info / "WHEEL").read_text(encoding="utf-8").splitlines()
        if line.startswith("Tag:")
    ]
    parts = [sorted({tag.split("-")[i] for tag in tags}) for i in range(3)]
    return "-".join(".".join(part) for part in parts)


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def repack(dist: metadata.Distribution, folder: Path) -> Path:
    """Write one installed distribution back into a wheel in ``folder``; its path.

    A wheel of the same file name already there (an earlier run's) is kept.
    """
    dist_info = Path(dist._path)  # a PathDistribution: its .dist-info folder
    site = dist_info.parent
    prefix = Path(sys.prefix).resolve()
    name = re.sub(r"[-_.]+", "_", dist.metadata["Name"])
    data_dir = f"{name}-{dist.version}.data"
    groups = ("console_scripts", "gui_scripts")
    scripts = {entry.name for entry in dist.entry_points if entry.group in groups}
    target = folder / f"{name}-{dist.version}-{_tag(dist_info)}.whl"
    if target.is_file():  # written by an earlier run: the same name, version and tags
        return target
    records = []
    partial = target.with_suffix(".partial")
    with zipfile.ZipFile(partial, "w", compression=zipfile.ZIP_STORED) as wheel:
        for entry in dist.files or []:
            relative = Path(str(entry))
            if "__pycache__" in relative.parts or relative.suffix == ".pyc":
                continue
            if relative.parent == Path(dist_info.name) and relative.name in _SKIPPED_META:
                continue
            path = (site / relative).resolve()
            if not path.is_file():
                continue
            if relative.parts[0] != "..":
                arcname = relative.as_posix()
            else:
                outside = path.relative_to(prefix)
                if outside.parts[0] == "bin":
                    if outside.name in scripts:
                        continue  # pip writes entry points' scripts itself
                    arcname = f"{data_dir}/scripts/{outside.name}"
                else:
                    arcname = f"{data_dir}/data/{outside.as_posix()}"
            data = path.read_bytes()
            if arcname.startswith(f"{data_dir}/scripts/") and data.startswith(b"#!"):
                # A script's first line names this environment's Python; pip fills in the new one.
                data = b"#!python" + data[data.index(b"\n") :]
            wheel.writestr(arcname, data)
            records.append(_record_line(arcname, data))
        record_name = f"{dist_info.name}/RECORD"
        records.append(f"{record_name},,")
        wheel.writestr(record_name, "\n".join(records) + "\n")
    partial.replace(target)  # whole or not at all
    return target


def wheelhouse(requirements: Iterable[str], folder: Path) -> list[Path]:
    """Wheels of every installed distribution ``requirements`` need, written into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    return [repack(dist, folder) for dist in closure(requirements)]

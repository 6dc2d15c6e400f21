"""The version of fastgen: from the installed package's metadata, else from the
``pyproject.toml`` of a source tree (a checkout on ``PYTHONPATH``, not installed)."""

from __future__ import annotations

import re
from pathlib import Path

_UNKNOWN = "0+unknown"


def _from_pyproject(path: Path) -> str | None:
    """``[project] version`` of the pyproject file at ``path`` if it is fastgen's."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return None
    project = re.search(r"^\[project\]\s*$(.*?)(?=^\[|\Z)", text, flags=re.M | re.S)
    if project is None or not re.search(r'^name\s*=\s*"fastgen"\s*$', project.group(1),
                                        flags=re.M):
        return None
    found = re.search(r'^version\s*=\s*"([^"]+)"\s*$', project.group(1), flags=re.M)
    return found.group(1) if found else None


def version() -> str:
    """The version string of this fastgen (``importlib.metadata``, falling back to the
    source tree's ``pyproject.toml``, then ``"0+unknown"``)."""
    from importlib import metadata

    try:
        return metadata.version("fastgen")
    except metadata.PackageNotFoundError:
        pass
    return _from_pyproject(Path(__file__).resolve().parents[1] / "pyproject.toml") or _UNKNOWN

"""``fastgen docs``: build the documentation of a source checkout once, into a cache, and
print (or open) its index page.

The site is rebuilt only when its sources change: the cache directory is named by a
digest of ``docs/``, the package's Python files (the API pages come from their
docstrings) and the files the pages include from ``tests/``.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
import webbrowser
from pathlib import Path

from .errors import CLIError
from .text import say

__all__ = ["docs_source", "cache_root", "source_digest", "build_docs", "run"]

#: environment variable that chooses the cache directory of ``fastgen docs``
DOCS_DIR_ENV = "FASTGEN_DOCS_DIR"

# files outside docs/ and fastgen/ that the pages include (literalinclude)
_INCLUDED = ("tests/test_architecture.py",)


def _checkout_root() -> Path:
    import fastgen

    return Path(fastgen.__file__).resolve().parents[1]


def docs_source() -> Path:
    """The ``docs/`` directory of the checkout this fastgen was imported from."""
    docs = _checkout_root() / "docs"
    if not (docs / "conf.py").is_file():
        raise CLIError(
            f"no documentation sources at {docs}: they come with a source checkout of "
            f"fastgen, not with an installed wheel; clone the repository and "
            f"'pip install -e \".[docs]\"' there")
    return docs


def cache_root() -> Path:
    """Where built sites are kept: ``$FASTGEN_DOCS_DIR``, else ``fastgen/docs`` under
    ``$XDG_CACHE_HOME`` (default ``~/.cache``)."""
    if os.environ.get(DOCS_DIR_ENV):
        return Path(os.environ[DOCS_DIR_ENV])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "fastgen" / "docs"


def _source_files(root: Path):
    for top in ("docs", "fastgen"):
        for path in sorted((root / top).rglob("*")):
            parts = path.relative_to(root).parts
            if path.is_file() and "_build" not in parts and "__pycache__" not in parts \
                    and (top == "docs" or path.suffix == ".py"):
                yield path
    for name in _INCLUDED:
        if (root / name).is_file():
            yield root / name


def source_digest() -> str:
    """A digest of every file the site is built from, and of the Sphinx version."""
    root = _checkout_root()
    h = hashlib.sha256()
    try:
        from importlib.metadata import version

        h.update(version("sphinx").encode())
    except Exception:  # noqa: BLE001 - not installed: build_docs says so
        pass
    for path in _source_files(root):
        h.update(str(path.relative_to(root)).encode() + b"\0")
        h.update(path.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def build_docs(out: Path, *, strict: bool = False) -> None:
    """Build the HTML site into ``out`` (replaced whole when the build succeeds).

    ``strict`` turns Sphinx warnings into errors, as the tests build the site."""
    missing = [m for m in ("sphinx", "numpydoc") if importlib.util.find_spec(m) is None]
    if missing:
        raise CLIError(f"building the documentation needs {' and '.join(missing)}: "
                       f"pip install -e \".[docs]\" (the test extra has them too)")
    docs = docs_source()
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".build-", dir=out.parent))
    cmd = [sys.executable, "-m", "sphinx", "-b", "html", "-q"]
    if strict:
        cmd += ["-W", "--keep-going"]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(docs.parent),
                                                    env.get("PYTHONPATH", "")) if p)
    res = subprocess.run(cmd + [str(docs), str(tmp)], capture_output=True, text=True,
                         env=env, cwd=docs.parent)
    if res.returncode != 0:
        shutil.rmtree(tmp, ignore_errors=True)
        tail = "\n".join((res.stdout + res.stderr).strip().splitlines()[-40:])
        raise CLIError(f"sphinx failed (exit status {res.returncode}):\n{tail}")
    if out.exists():
        shutil.rmtree(out, ignore_errors=True)
    try:
        os.replace(tmp, out)
    except OSError:  # another process put the same build there first
        shutil.rmtree(tmp, ignore_errors=True)


def run(args) -> int:
    """The ``fastgen docs`` command: build if needed, print the index page's path."""
    root = Path(args.dir) if args.dir else cache_root()
    out = root / source_digest()
    index = out / "index.html"
    if args.rebuild or not index.is_file():
        say(f"fastgen: building the documentation into {out} (once; later runs reuse "
            f"it until the sources change)", sys.stderr)
        build_docs(out, strict=args.strict)
        for old in root.iterdir():  # builds of older sources (named by their digest)
            if old.is_dir() and old != out and re.fullmatch(r"[0-9a-f]{16}", old.name):
                shutil.rmtree(old, ignore_errors=True)
    else:
        say(f"fastgen: the documentation in {out} is up to date", sys.stderr)
    say(index, sys.stdout)
    if args.open:
        webbrowser.open(index.as_uri())
    return 0

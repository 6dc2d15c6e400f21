"""``fastgen.__version__`` and ``fastgen --version`` come from the package metadata, with
the source tree's pyproject.toml as the fallback."""

import importlib.metadata
import re
import subprocess
import sys
from pathlib import Path

import pytest

import fastgen
from fastgen import _version

ROOT = Path(__file__).resolve().parents[1]


def _pyproject_version():
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    return re.search(r'^version = "([^"]+)"', text, flags=re.M).group(1)


def test_version_is_the_metadata_version():
    assert fastgen.__version__ == importlib.metadata.version("fastgen") == _pyproject_version()


@pytest.mark.parametrize("installed", ["9.8.7", "0.2.0.dev3+g1234abc", "1.0rc1"])
def test_version_follows_the_metadata(monkeypatch, installed):
    """Whatever version the installed metadata says is the one reported (no copy of the
    number in the code to drift from it)."""
    monkeypatch.setattr(importlib.metadata, "version",
                        lambda name: installed if name == "fastgen" else "?")
    monkeypatch.delitem(vars(fastgen), "__version__", raising=False)
    assert _version.version() == installed
    assert fastgen.__version__ == installed
    monkeypatch.delitem(vars(fastgen), "__version__")  # read afresh by the next test


@pytest.mark.parametrize("text, expected", [
    ('[project]\nname = "fastgen"\nversion = "1.2.3"\n', "1.2.3"),
    ('[build-system]\nrequires = []\n\n[project]\nname = "fastgen"\nversion = "0.4"\n'
     '[tool.x]\nversion = "9"\n', "0.4"),
    ('[project]\nname = "other"\nversion = "1.2.3"\n', "0+unknown"),
    ('[tool.x]\nversion = "1.2.3"\n[project]\nname = "fastgen"\n', "0+unknown"),
    (None, "0+unknown"),
])
def test_source_tree_fallback(monkeypatch, tmp_path, text, expected):
    """Without installed metadata (a checkout on PYTHONPATH), the version is the source
    tree's ``[project] version``, and "0+unknown" when there is none."""
    def missing(name):
        raise importlib.metadata.PackageNotFoundError(name)

    pkg = tmp_path / "fastgen"
    pkg.mkdir()
    if text is not None:
        (tmp_path / "pyproject.toml").write_text(text, encoding="utf-8")
    monkeypatch.setattr(importlib.metadata, "version", missing)
    monkeypatch.setattr(_version, "__file__", str(pkg / "_version.py"))
    assert _version.version() == expected


@pytest.mark.parametrize("argv", [["-m", "fastgen", "--version"],
                                  ["-m", "fastgen", "fit", "--version"]])
def test_cli_version(argv):
    res = subprocess.run([sys.executable, *argv], capture_output=True, text=True, timeout=900)
    if argv[-2] == "fit":  # only the top-level parser knows --version
        assert res.returncode == 2
        return
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == f"fastgen {importlib.metadata.version('fastgen')}"


def test_import_does_not_read_the_metadata():
    """``import fastgen`` stays cheap: the version is read on first access."""
    code = ("import sys, fastgen; a = 'importlib.metadata' in sys.modules; "
            "v = fastgen.__version__; print(a, v)")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=900)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["False", _pyproject_version()]

"""``reference.require``: a missing reference package skips its test, except under
``CI=true``, where it fails the run (the test extra installs every reference)."""

import os
import pathlib
import subprocess
import sys

import pytest

PROBE = '''
from reference import require

missing = require("{module}")


def test_compares_with_the_reference():
    assert missing is not None
'''


@pytest.mark.parametrize("ci,outcome", [("", "1 skipped"), ("false", "1 skipped"),
                                        ("true", "1 error")])
def test_a_missing_reference_skips_only_outside_ci(tmp_path, ci, outcome):
    (tmp_path / "test_probe.py").write_text(PROBE.format(module="no_such_reference_41"))
    env = dict(os.environ, CI=ci,
               PYTHONPATH=os.pathsep.join([str(pathlib.Path(__file__).parent),
                                           os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
         "-p", "no:randomly", "test_probe.py"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert outcome in proc.stdout, proc.stdout[-2000:]
    if ci == "true":
        assert proc.returncode != 0 and "CI=true" in proc.stdout


def test_a_present_reference_is_the_module():
    from reference import require

    assert require("numpy") is sys.modules["numpy"]
    assert require("numpy", minversion="1.0") is sys.modules["numpy"]

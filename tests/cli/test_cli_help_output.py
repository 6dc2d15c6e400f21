"""--help and --version write to standard output like every command: a write that
fails (a full disk) is an error with exit status 2, not a silent success."""

import os
import subprocess
import sys

import pytest

CASES = [["--help"], ["--version"], ["curve", "--help"], ["fit", "--help"],
         ["compile", "--help"]]


@pytest.mark.parametrize("args", CASES, ids=" ".join)
def test_help_reaches_stdout(args):
    res = subprocess.run([sys.executable, "-m", "fastgen", *args], capture_output=True,
                         text=True, timeout=600)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() and not res.stderr


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
@pytest.mark.parametrize("args", CASES, ids=" ".join)
def test_help_to_a_full_disk_fails(args):
    with open("/dev/full", "w") as full:
        res = subprocess.run([sys.executable, "-m", "fastgen", *args], stdout=full,
                             stderr=subprocess.PIPE, text=True, timeout=600)
    assert res.returncode == 2
    assert res.stderr.strip().splitlines() == [
        "fastgen: error: cannot write to standard output: No space left on device"]

"""``fastgen compile`` leaves nothing to compile: after it fills an empty cache, every
public function of every family (float64 and float32, dense and CSR), sent to the
kernels whatever the data's size, compiles no kernel in a fresh process.  Its progress
lines, on stderr that is not a terminal, say when each family starts and finishes.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import fastgen
from fastgen._compile import DTYPES, FAMILIES

ROOT = str(Path(fastgen.__file__).resolve().parent.parent)
PUBLIC_CALLS = Path(__file__).resolve().parent / "data" / "public_calls.py"


def _env(cache, **extra):
    env = {k: v for k, v in os.environ.items()
           if k not in ("NUMBA_CACHE_DIR", "PYTHONPATH", "FASTGEN_SMALL_VALUES")}
    env.update(NUMBA_CACHE_DIR=str(cache), PYTHONPATH=ROOT, **extra)
    return env


@pytest.mark.slow
def test_nothing_left_to_compile_after_fastgen_compile(tmp_path):
    cache = tmp_path / "numba-cache"
    cache.mkdir()
    res = subprocess.run([sys.executable, "-W", "error", "-m", "fastgen", "compile"],
                         env=_env(cache), cwd=ROOT, capture_output=True, text=True,
                         timeout=3600)
    assert res.returncode == 0, res.stderr[-3000:]
    lines = res.stderr.splitlines()
    for family in FAMILIES:
        for dtype in DTYPES:
            started = [s for s in lines if s.endswith(f"] {family} {dtype}: started")
                       or s.endswith(f": {family} {dtype}: started")]
            # "N kernels compiled", or "all cached" (kernels another family compiled)
            finished = [s for s in lines if f"] {family} {dtype}: " in s
                        and ("compiled" in s or "all cached" in s)]
            assert len(started) == 1 and len(finished) == 1, res.stderr
    # every public call, on the kernels' path (FASTGEN_SMALL_VALUES=0), in a fresh process
    run = subprocess.run([sys.executable, "-W", "error", str(PUBLIC_CALLS)],
                         env=_env(cache, FASTGEN_SMALL_VALUES="0"), cwd=ROOT,
                         capture_output=True, text=True, timeout=3600)
    assert run.returncode == 0, run.stderr[-3000:]
    assert json.loads(run.stdout.strip().splitlines()[-1]) == []

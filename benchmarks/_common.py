"""Shared helpers for the benchmarks: seeded data, warm timing, fresh-process probes.

Used by ``compare.py`` (the side-by-side report), the asv suites (``bench_*.py``) and
the pytest-benchmark file, so that all three time the same data the same way.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

__all__ = [
    "make_data",
    "median_seconds",
    "startup_probe",
    "cold_startup_probe",
    "STARTUP_SCRIPT",
]


def make_data(n, d, K, *, seed=0, per_class_scale=True, dtype=np.float64):
    """Gaussian classes with different means (and scales), labels 0..K-1 as int64.

    x_i = μ_{y_i} + s_{y_i}·z_i with z_i ~ N(0, I), μ_k ~ N(0, 2²I), s_k ~ U(0.5, 2).
    Built in place (no (n, d) temporaries beyond X itself).
    """
    rng = np.random.default_rng(seed)
    y = rng.integers(0, K, size=n)
    centers = rng.normal(scale=2.0, size=(K, d))
    scales = rng.uniform(0.5, 2.0, size=K) if per_class_scale else np.ones(K)
    X = np.empty((n, d), dtype=np.float64)
    rng.standard_normal(out=X)
    step = 1 << 16
    for s in range(0, n, step):
        e = min(n, s + step)
        X[s:e] *= scales[y[s:e], None]
        X[s:e] += centers[y[s:e]]
    if dtype != np.float64:
        X = X.astype(dtype)
    return X, y


def median_seconds(fn, repeats=5, warmup=1, clock=time.perf_counter):
    """Call ``fn`` ``warmup`` times untimed (JIT compile / cache load), then ``repeats``
    times; return (median seconds, list of all timings).  ``clock``: wall time, or
    ``time.process_time`` for this process's CPU time (robust to other load)."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        t0 = clock()
        fn()
        times.append(clock() - t0)
    return statistics.median(times), times


# A first call in a fresh interpreter: import, fit and predict on tiny data.  Prints
# the in-process phase timings as JSON; the caller measures the wall time around it.
STARTUP_SCRIPT = r"""
import time
t0 = time.perf_counter()
import json, numpy as np
t_np = time.perf_counter()
import fastgen
t_imp = time.perf_counter()
rng = np.random.default_rng(0)
X = rng.standard_normal((200, 4)); y = np.repeat(np.arange(3), 67)[:200]
X += y[:, None]
covs = COVS
t = {}
for cov in covs:
    a = time.perf_counter()
    p = fastgen.fit_gda(X, y, cov)
    b = time.perf_counter()
    P = fastgen.predict_proba(p, X)
    fastgen.predict(p, X)
    c = time.perf_counter()
    t[cov] = [b - a, c - b]
import numba
print(json.dumps({"import_numpy": t_np - t0, "import_fastgen": t_imp - t_np,
                  "fit_predict": t, "total_in_process": time.perf_counter() - t0,
                  "fastgen_file": fastgen.__file__,
                  "numba_cache_dir": numba.config.CACHE_DIR}))
"""


def _script(covs):
    return STARTUP_SCRIPT.replace("COVS", repr(tuple(covs)))


def _run_python(code, env=None, cwd=None, timeout=900):
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=timeout)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"subprocess failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    return wall, proc.stdout


def startup_probe(covs=("pooled",), repeats=5):
    """Wall seconds of a fresh ``python -c`` that imports fastgen and fits + predicts
    on tiny data, with the cache as it is (one untimed run first fills it).

    Returns (median wall seconds, all walls, in-process phases of the last run,
    median wall of ``python -c "import numpy, scipy.linalg"`` for reference).
    """
    code = _script(covs)
    _run_python(code)  # fill the cache if it is not already
    walls, info = [], None
    for _ in range(repeats):
        w, out = _run_python(code)
        walls.append(w)
        info = json.loads(out.strip().splitlines()[-1])
    base = [_run_python("import numpy, scipy.linalg")[0] for _ in range(repeats)]
    return statistics.median(walls), walls, info, statistics.median(base)


def _count_cache_files(root):
    root = Path(root)
    return sum(1 for _ in root.rglob("*.nbi")) if root.exists() else 0


def cold_startup_probe(covs=("pooled",)):
    """First call with an empty numba cache: the package is copied (without any
    ``__pycache__``) to a temporary directory that goes first on PYTHONPATH, and
    NUMBA_CACHE_DIR points to an empty temporary directory too.  Both are counted:
    numba uses NUMBA_CACHE_DIR when it is set (measured with numba 0.68), else the
    ``__pycache__`` beside the source when writable, else the user cache directory.

    Verifies the run was really cold (no index files before, the copy was the one
    imported, index files after), then runs again on the now-filled cache.

    Returns a dict: cold wall seconds, warm-after-cold wall seconds, the in-process
    phases of both, where the cache files were written and how many.
    """
    import fastgen

    src = Path(fastgen.__file__).resolve().parent
    tmp = Path(tempfile.mkdtemp(prefix="fastgen-cold-"))
    try:
        pkg = tmp / "pkg"
        shutil.copytree(src, pkg / "fastgen",
                        ignore=shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc",
                                                      "*.pyc"))
        cache = tmp / "numba-cache"
        cache.mkdir()
        before = _count_cache_files(pkg) + _count_cache_files(cache)
        env = dict(os.environ, PYTHONPATH=str(pkg), NUMBA_CACHE_DIR=str(cache))
        code = _script(covs)
        cold_wall, out = _run_python(code, env=env, cwd=str(tmp))
        cold = json.loads(out.strip().splitlines()[-1])
        after_src, after_dir = _count_cache_files(pkg), _count_cache_files(cache)
        warm_wall, out = _run_python(code, env=env, cwd=str(tmp))
        warm = json.loads(out.strip().splitlines()[-1])
        imported_copy = Path(cold["fastgen_file"]).resolve().is_relative_to(pkg)
        return {
            "cold_wall_s": cold_wall,
            "warm_after_cold_wall_s": warm_wall,
            "cold_phases": cold,
            "warm_phases": warm,
            "index_files_before": before,
            "index_files_beside_source": after_src,
            "index_files_in_numba_cache_dir": after_dir,
            "imported_copy": imported_copy,
            "really_cold": before == 0 and imported_copy and (after_src + after_dir) > 0,
        }
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# Peak extra resident memory of one fit, in a fresh interpreter.  X is built in place,
# the library is warmed up on tiny data first (so compilation and cache loading are not
# counted), then the high-water mark is reset (Linux: /proc/self/clear_refs) and read
# again after the fit.
MEMORY_SCRIPT = r"""
import json, sys
sys.path.insert(0, BENCH_DIR)
import numpy as np
from _common import make_data

which, n, d, K, cov = WHICH, N, D, K_, COV

def status():
    out = {}
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(("VmHWM", "VmRSS")):
                k, v = line.split(":")
                out[k] = int(v.split()[0]) * 1024
    return out

def reset_hwm():
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False

Xs, ys = make_data(max(2000, 4 * d * K), d, K, seed=1)
if which == "fastgen":
    import fastgen
    fit = lambda X, y: fastgen.fit_gda(X, y, cov)
else:
    from sklearn.discriminant_analysis import (LinearDiscriminantAnalysis as LDA,
                                               QuadraticDiscriminantAnalysis as QDA)
    if cov == "pooled":
        fit = lambda X, y: LDA(solver="lsqr").fit(X, y)
    else:
        fit = lambda X, y: QDA().fit(X, y)
fit(Xs, ys)
X, y = make_data(n, d, K, seed=0)
reset_ok = reset_hwm()
s0 = status()
fit(X, y)
s1 = status()
base = max(s0["VmHWM"], s0["VmRSS"])
print(json.dumps({"x_bytes": X.nbytes, "y_bytes": y.nbytes, "rss_before": s0["VmRSS"],
                  "hwm_before": s0["VmHWM"], "hwm_after": s1["VmHWM"],
                  "extra_bytes": s1["VmHWM"] - base, "hwm_reset": reset_ok}))
"""


def peak_memory_probe(which, n, d, K, covariance="pooled", timeout=900):
    """Peak extra RSS (bytes) of one fit on an (n, d) float64 X, measured in a fresh
    process; ``which`` is "fastgen" or "sklearn" (LDA lsqr for pooled, QDA otherwise).
    Returns the probe's dict (``extra_bytes``, ``x_bytes``, ...)."""
    code = (MEMORY_SCRIPT.replace("BENCH_DIR", repr(str(Path(__file__).resolve().parent)))
            .replace("WHICH", repr(which)).replace("K_", str(int(K)))
            .replace("N,", f"{int(n)},").replace("D,", f"{int(d)},")
            .replace("COV", repr(covariance)))
    # A fixed mmap threshold: every allocation of 128 KiB or more is its own mapping,
    # so a freed temporary is returned at once and a new one shows in the RSS.
    env = dict(os.environ, MALLOC_MMAP_THRESHOLD_="131072")
    _, out = _run_python(code, env=env, timeout=timeout)
    return json.loads(out.strip().splitlines()[-1])


#: Seconds to wait before each timed call of :func:`interleaved_medians` (``compare.py
#: --settle``).  0 by default.  A BLAS call leaves OpenBLAS's threads spinning for a while
#: after it returns, and they take cores from whatever runs next: measured on 2 cores,
#: fastgen's W4 predict_proba took 69 ms after its own call and 103 ms right after numpy's
#: ``X @ W``.  A pause lets each call start on a settled machine.
SETTLE_S = 0.0

#: How :data:`SETTLE_S` is waited (``--settle-mode``): ``"sleep"`` (time.sleep) or
#: ``"busy"`` (the calling thread spins in Python).  Both let the other library's BLAS
#: threads stop spinning.  A sleeping process also lets its cores go idle, and the call
#: after the pause then starts slow: measured on 2 cores (W15's Firth fit + inference),
#: 62 ms back to back, 79-84 ms after a 0.5 s sleep, 63 ms after 0.3 s of busy waiting;
#: right after numpy's 1500 × 1500 product 109 ms, after the product and 0.3 s of busy
#: waiting 63 ms, after the product and a 0.5 s sleep 80 ms.  ``"busy"`` times each call
#: as it runs inside a program that was doing something else just before: no leftover
#: threads of the other library, no idle cores.
SETTLE_MODE = "sleep"


def add_settle_arguments(parser):
    """``--settle`` and ``--settle-mode`` on an argparse parser (see :func:`apply_settle`)."""
    parser.add_argument("--settle", type=float, default=0.0, metavar="SECONDS",
                        help="wait before each timed call, so that one library's spinning "
                             "BLAS threads do not slow the next call (default 0)")
    parser.add_argument("--settle-mode", choices=("sleep", "busy"), default="sleep",
                        help="sleep through the wait, or spin in Python (busy: the cores "
                             "stay awake; see benchmarks/_common.py SETTLE_MODE)")


def apply_settle(parser, args):
    """Set :data:`SETTLE_S` and :data:`SETTLE_MODE` from :func:`add_settle_arguments`'s
    options (an argparse error for a negative wait)."""
    global SETTLE_S, SETTLE_MODE
    if args.settle < 0:
        parser.error("--settle must be ≥ 0")
    SETTLE_S = args.settle
    SETTLE_MODE = args.settle_mode


def settle():
    """Wait :data:`SETTLE_S` seconds as :data:`SETTLE_MODE` says (no-op at 0)."""
    if SETTLE_S <= 0:
        return
    if SETTLE_MODE == "busy":
        end = time.perf_counter() + SETTLE_S
        while time.perf_counter() < end:
            pass
    else:
        time.sleep(SETTLE_S)


def interleaved_medians(fns, repeats=5, warmup=1, clock=time.perf_counter):
    """Time several callables in alternating rounds (a, b, c, a, b, c, ...) after
    ``warmup`` untimed calls each, so that load from other processes on a shared
    machine hits them alike (with :data:`SETTLE_S` seconds of pause before each timed
    call).  ``clock``: wall time, or ``time.process_time`` for this process's CPU time.
    Returns [(median seconds, all timings), ...] in order."""
    for fn in fns:
        for _ in range(warmup):
            fn()
    times = [[] for _ in fns]
    for _ in range(repeats):
        for i, fn in enumerate(fns):
            settle()
            t0 = clock()
            fn()
            times[i].append(clock() - t0)
    return [(statistics.median(t), t) for t in times]

"""Warm timings of the workloads W1-W9 and W13-W16 in this process, as JSON:
run it alternately against two trees to compare them side by side on the same machine.

Usage::

    PYTHONPATH=/path/to/old/tree python benchmarks/side_by_side.py --repeats 3 > old.json
    python benchmarks/side_by_side.py --repeats 3 > new.json
    # on a loaded machine: single-threaded CPU time
    NUMBA_NUM_THREADS=1 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 \
        python benchmarks/side_by_side.py --cpu > new_cpu.json

Each workload builds its seeded data, makes one untimed call (compilation and cache
loading excluded), then reports the median of ``--repeats`` timed calls, with the
iterations of the fit.  Sizes are the design card's (``--scale`` divides n).
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np


def _binary(n, d, seed=1):
    """compare_logistic's binary data (this script runs standalone against any tree)."""
    from compare_logistic import binary_data

    return binary_data(n, d, seed)


def _multinomial(n, d, K, seed=2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    W = rng.normal(size=(d, K)) / np.sqrt(d)
    y = np.argmax(X @ W + rng.gumbel(size=(n, K)), axis=1)
    return X, y


def _median(fn, repeats):
    """Median seconds of ``fn`` after one untimed call: wall-clock, or CPU time of
    this process with ``--cpu`` (robust to other load; run it single-threaded)."""
    fn()
    clock = time.process_time if CPU else time.perf_counter
    times = []
    for _ in range(repeats):
        t = clock()
        out = fn()
        times.append(clock() - t)
    return float(np.median(times)), out


CPU = False


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--only", default="W8,W9,W13,W14,W15,W16",
                    help="comma-separated ids of W1-W9, W13-W16")
    ap.add_argument("--cpu", action="store_true",
                    help="CPU time of the process instead of wall-clock time (set "
                         "NUMBA_NUM_THREADS=1 and OMP_NUM_THREADS=1 for a fair count)")
    args = ap.parse_args(argv)
    global CPU
    CPU = args.cpu
    import fastgen

    only = set(args.only.split(","))
    s = args.scale
    rows = {}

    def fit_and_infer(X, y, **kw):
        m = fastgen.fit_logistic(X, y, **kw)
        return m, fastgen.logistic_inference(m, X, y)

    if only & {"W1", "W4"}:
        X, y = _multinomial(int(1e6 / s), 16, 10, seed=7)
        if "W1" in only:
            t, _ = _median(lambda: fastgen.fit_gda(X, y, "pooled"), args.repeats)
            rows["W1 pooled GDA fit n=1e6 d=16 K=10"] = (t,)
        if "W4" in only:
            g = fastgen.fit_gda(X, y, "pooled")
            t, _ = _median(lambda: fastgen.predict_proba(g, X), args.repeats)
            rows["W4 pooled GDA predict_proba n=1e6 d=16 K=10"] = (t,)
    if only & {"W2", "W3"}:
        X, y = _multinomial(int(2e5 / s), 128, 10, seed=8)
        if "W2" in only:
            t, _ = _median(lambda: fastgen.fit_gda(X, y, "per_class"), args.repeats)
            rows["W2 per-class GDA fit n=2e5 d=128 K=10"] = (t,)
        if "W3" in only:
            g = fastgen.fit_gda(X, y, "per_class")
            t, _ = _median(lambda: fastgen.predict_proba(g, X), args.repeats)
            rows["W3 per-class GDA predict_proba n=2e5 d=128 K=10"] = (t,)
    if "W5" in only:
        X, y = _multinomial(int(1e6 / s), 16, 10, seed=9)
        t, g = _median(lambda: fastgen.fit_gaussian_nb(X, y), args.repeats)
        rows["W5 Gaussian NB fit n=1e6 d=16 K=10"] = (t,)
        t, _ = _median(lambda: fastgen.predict_proba(g, X), args.repeats)
        rows["W5 Gaussian NB predict_proba"] = (t,)
    if only & {"W6", "W7"}:
        import scipy.sparse as sp

        rng = np.random.default_rng(10)
        n, d, K = int(2e5 / s), 100_000, 20
        nnz = 100  # per row
        indptr = np.arange(0, n * nnz + 1, nnz)
        indices = np.sort(rng.integers(0, d, size=(n, nnz)), axis=1).ravel()
        C = sp.csr_matrix((rng.integers(1, 4, n * nnz).astype(np.float64), indices,
                           indptr), shape=(n, d))
        C.sum_duplicates()
        yc = rng.integers(0, K, n)
        fits = {"W6": ("multinomial NB", fastgen.fit_multinomial_nb, {}),
                "W7": ("Bernoulli NB", fastgen.fit_bernoulli_nb, {"binarize": 0.0})}
        for wid in sorted(only & set(fits)):
            name, fit, kw = fits[wid]
            t, m = _median(lambda fit=fit, kw=kw: fit(C, yc, **kw), args.repeats)
            rows[f"{wid} {name} CSR fit n=2e5 d=1e5 nnz=2e7"] = (t,)
            t, _ = _median(lambda m=m: fastgen.predict_proba(m, C), args.repeats)
            rows[f"{wid} {name} CSR predict_proba"] = (t,)
    if "W8" in only:
        X, y = _binary(int(2e5 / s), 64)
        t, m = _median(lambda: fastgen.fit_logistic(X, y, l2=1.0), args.repeats)
        rows["W8 binary n=2e5 d=64 l2=1"] = (t, m.n_iter)
        t, m = _median(lambda: fastgen.fit_logistic(X, y), args.repeats)
        rows["W8 binary n=2e5 d=64 l2=0"] = (t, m.n_iter)
    if "W9" in only:
        X, y = _multinomial(int(2e5 / s), 64, 10)
        t, m = _median(lambda: fastgen.fit_logistic(X, y, l2=1.0), args.repeats)
        rows["W9 multinomial n=2e5 d=64 K=10 l2=1"] = (t, m.n_iter, m.n_hessp)
    if "W13" in only:
        X, y = _binary(int(1e6 / s), 64, seed=3)
        t, (m, _) = _median(lambda: fit_and_infer(X, y), args.repeats)
        rows["W13 binary n=1e6 d=64 fit+inference"] = (t, m.n_iter)
    if "W14" in only:
        X, y = _multinomial(int(2e5 / s), 16, 5, seed=4)
        t, (m, _) = _median(lambda: fit_and_infer(X, y), args.repeats)
        rows["W14 multinomial n=2e5 d=16 K=5 fit+inference"] = (t, m.n_iter)
    if "W15" in only:
        X, y = _binary(int(1e5 / s), 32, seed=5)
        t, (m, _) = _median(lambda: fit_and_infer(X, y, penalty="firth"), args.repeats)
        rows["W15 Firth n=1e5 d=32 fit+inference"] = (t, m.n_iter)
    if "W16" in only:
        X, y = _multinomial(int(1e5 / s), 32, 5, seed=6)
        t, (m, _) = _median(lambda: fit_and_infer(X, y, penalty="firth"), args.repeats)
        rows["W16 multinomial Firth n=1e5 d=32 K=5 fit+inference"] = (t, m.n_iter)
    json.dump({"fastgen": fastgen.__file__, "rows": rows}, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()

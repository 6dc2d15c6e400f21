"""Measure fastgen's thread scaling and write a CSV (workload,threads,seconds).

Each thread count runs in its own process with ``NUMBA_NUM_THREADS`` set (numba fixes
its pool size at start-up), on the same data (fixed seeds); each time is the median of
``--repeats`` warm calls after one untimed call (compilation excluded).

    python docs/gallery/measure_thread_scaling.py --threads 1,2 -o thread_scaling.csv
    python docs/gallery/plot_thread_scaling.py thread_scaling.csv

``benchmarks/compare.py --threads`` measures the full workloads; any CSV with the
columns workload,threads,seconds can be plotted.
"""

import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def _workloads():
    import numpy as np
    import scipy.sparse as sp

    import fastgen

    rng = np.random.default_rng(0)
    out = {}

    n, d, K = 1_000_000, 16, 10
    y = rng.integers(0, K, n)
    X = rng.normal(size=(n, d)) + y[:, None] * 0.1
    p = fastgen.fit_gda(X, y)
    out["W1 pooled GDA fit n=1e6 d=16 K=10"] = lambda: fastgen.fit_gda(X, y)
    out["W4 pooled predict_proba n=1e6 d=16 K=10"] = lambda: fastgen.predict_proba(p, X)
    out["W5 Gaussian NB fit n=1e6 d=16 K=10"] = lambda: fastgen.fit_gaussian_nb(X, y)

    n2, d2 = 100_000, 128
    y2 = rng.integers(0, K, n2)
    X2 = rng.normal(size=(n2, d2)) + y2[:, None] * 0.05
    q = fastgen.fit_gda(X2, y2, "per_class")
    out["W2 per-class GDA fit n=1e5 d=128 K=10"] = lambda: fastgen.fit_gda(X2, y2, "per_class")
    out["W3 per-class predict_proba n=1e5 d=128 K=10"] = lambda: fastgen.predict_proba(q, X2)

    n3, d3, K3 = 100_000, 50_000, 20
    per_row = 50
    cols = rng.integers(0, d3, size=n3 * per_row)
    C = sp.csr_matrix((rng.integers(1, 4, size=n3 * per_row).astype(np.float64), cols,
                       np.arange(0, n3 * per_row + 1, per_row)), shape=(n3, d3))
    y3 = rng.integers(0, K3, n3)
    out["W6 multinomial NB fit CSR n=1e5 d=5e4 nnz=5e6"] = (
        lambda: fastgen.fit_multinomial_nb(C, y3))

    n4, d4 = 200_000, 64
    X4 = rng.normal(size=(n4, d4))
    y4 = (X4[:, :4].sum(axis=1) + rng.normal(size=n4) > 0).astype(int)
    out["W8 binary logistic fit n=2e5 d=64"] = lambda: fastgen.fit_logistic(X4, y4, l2=1.0)
    return out


def _seconds(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def _child(repeats):
    results = {}
    for name, fn in _workloads().items():
        fn()  # untimed: compile or cache load
        results[name] = statistics.median(_seconds(fn) for _ in range(repeats))
    print(json.dumps(results))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("-o", "--output", default=os.path.join(HERE, "thread_scaling.csv"))
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        return _child(args.repeats)
    rows = []
    for t in [int(s) for s in args.threads.split(",")]:
        env = dict(os.environ, NUMBA_NUM_THREADS=str(t))
        res = subprocess.run([sys.executable, __file__, "--child", "--repeats",
                              str(args.repeats)], env=env, check=True, capture_output=True,
                             text=True)
        for name, sec in json.loads(res.stdout.strip().splitlines()[-1]).items():
            rows.append((name, t, sec))
            print(f"{t:3d} threads  {sec:9.4f} s  {name}", flush=True)
    with open(args.output, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["workload", "threads", "seconds"])
        for name, t, sec in sorted(rows, key=lambda r: (r[0], r[1])):
            w.writerow([name, t, f"{sec:.6g}"])
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()

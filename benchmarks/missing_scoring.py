"""Cost of scoring with missing features against the complete-data pass.

predict_proba of n rows (d features, K classes) with ``nan_policy="marginalize"`` and a
fraction of the entries missing at random, against predict_proba of the same rows
complete, for every covariance kind of fit_gda and Gaussian naive Bayes (medians of
interleaved repeats, ``benchmarks._common.interleaved_medians``).  The issue's target:
at most 3× the complete-data predict_proba at d = 16, n = 1e6, K = 10, 10 % missing.

    python -m benchmarks.missing_scoring [--n 1000000] [--d 16] [--K 10]
                                         [--missing 0.1] [--repeats 5] [--cpu]

``--cpu`` times this process's CPU time instead of wall time (steadier on a shared
machine; run it with NUMBA_NUM_THREADS=1 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import fastgen

from ._common import interleaved_medians, make_data


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--d", type=int, default=16)
    ap.add_argument("--K", type=int, default=10)
    ap.add_argument("--missing", type=float, default=0.1)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--cpu", action="store_true", help="CPU time instead of wall time")
    args = ap.parse_args(argv)
    X, y = make_data(args.n, args.d, args.K, seed=0)
    Xm = X.copy()
    Xm[np.random.default_rng(1).random(X.shape) < args.missing] = np.nan
    incomplete = float(np.isnan(Xm).any(axis=1).mean())
    models = {f"gda {k}": fastgen.fit_gda(X, y, k)
              for k in ("pooled", "per_class", "diagonal", "pooled_diagonal")}
    models["gaussian_nb"] = fastgen.fit_gaussian_nb(X, y)
    clock = time.process_time if args.cpu else time.perf_counter
    print(f"n={args.n} d={args.d} K={args.K}, {args.missing:.0%} of entries missing "
          f"({incomplete:.1%} of rows incomplete), medians of {args.repeats} "
          f"({'CPU' if args.cpu else 'wall'} time)\n")
    print("| model | complete predict_proba (s) | marginalize (s) | ratio |")
    print("|---|---:|---:|---:|")
    for name, p in models.items():
        (full, _), (marg, _) = interleaved_medians(
            [lambda p=p: fastgen.predict_proba(p, X),
             lambda p=p: fastgen.predict_proba(p, Xm, nan_policy="marginalize")],
            args.repeats, clock=clock)
        print(f"| {name} | {full:.4f} | {marg:.4f} | {marg / full:.2f}× |", flush=True)


if __name__ == "__main__":
    main()

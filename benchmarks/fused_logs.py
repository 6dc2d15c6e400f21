"""The multinomial and Bernoulli CSR fits with their log tables taken in the counting
pass (fused) against counts first and the model's log pass after (separate): CPU
seconds, single-threaded, medians, on the W6/W7 data and short Zipf documents.

Usage::

    NUMBA_NUM_THREADS=1 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 \\
        python benchmarks/fused_logs.py [--repeats 15]

Runs against the tree on ``sys.path``: "fit" is the public fit as that tree does it;
"separate" counts with the count kernel alone and takes the model's tables from the
counts (:func:`fastgen.nb_from_counts`'s route, without its checks).
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import scipy.sparse as sp
from _common import median_seconds


def _w6(seed=10, n=200_000, d=100_000, K=20, per_row=100):
    rng = np.random.default_rng(seed)
    indptr = np.arange(0, n * per_row + 1, per_row)
    indices = np.sort(rng.integers(0, d, size=(n, per_row)), axis=1).ravel()
    C = sp.csr_matrix((rng.integers(1, 4, n * per_row).astype(np.float64), indices,
                       indptr), shape=(n, d))
    C.sum_duplicates()
    return C, rng.integers(0, K, n)


def _zipf(seed=0, n=200_000, d=100_000, K=20, draws=10):
    rng = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, d + 1) ** 1.1
    cdf = np.cumsum(p)
    cdf /= cdf[-1]
    cols = np.searchsorted(cdf, rng.random((n, draws)))
    rows = np.repeat(np.arange(n), draws)
    C = sp.csr_matrix((np.ones(n * draws), (rows, cols.ravel())), shape=(n, d))
    C.sum_duplicates()
    C.data[:] = 1.0
    return C, rng.integers(0, K, n)


def _separate(C, y, model):
    from fastgen.naive_bayes import bernoulli, discrete
    from fastgen.stats.feature_counts import discrete_counts, fit_inputs

    X, classes, codes, w = fit_inputs(C, y, None, allow_sparse=True, csr_counts=True)
    binarize = 0.0 if model == "bernoulli" else None
    cc, fc = discrete_counts(X, codes, w, classes.shape[0], model, binarize=binarize)
    if model == "multinomial":
        return discrete.multinomial_params(classes, cc, fc, 1.0, True, None, X.dtype)
    return bernoulli.bernoulli_params(classes, cc, fc, 1.0, 0.0, True, None, X.dtype)


def main():
    import fastgen

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=15)
    args = ap.parse_args()
    out = {}
    for name, (C, y) in (("W6 data", _w6()), ("Zipf 1.1, 10 draws", _zipf())):
        for model, fit, kw in (("multinomial", fastgen.fit_multinomial_nb, {}),
                               ("bernoulli", fastgen.fit_bernoulli_nb, {"binarize": 0.0})):
            a = fit(C, y, **kw)
            b = _separate(C, y, model)
            assert a.feature_log_prob.tobytes() == b.feature_log_prob.tobytes()
            for _ in range(2):  # alternated
                for how, fn in (("fit", lambda C=C, y=y, fit=fit, kw=kw: fit(C, y, **kw)),
                                ("separate", lambda C=C, y=y, model=model:
                                 _separate(C, y, model))):
                    key = f"{name} | {model} | {how}"
                    t, _ = median_seconds(fn, args.repeats, clock=time.process_time)
                    out.setdefault(key, []).append(t)
    print(json.dumps({k: [round(1e3 * t, 2) for t in v] for k, v in out.items()}, indent=1))


if __name__ == "__main__":
    main()

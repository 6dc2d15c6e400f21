"""Side-by-side timings of fastgen's logistic regression against its peers (W8, W9, CSR).

``run(repeats, quick)`` returns rows in ``benchmarks/compare.py``'s dict format;
``run_tuples(repeats, sizes)`` returns rows ``(workload, fastgen_s, peer_s, ratio, floor_s)``:
medians over ``repeats`` timed runs after one warm-up (so JIT compilation is excluded;
the compile/first-call time is reported in its own row), ``ratio = peer / fastgen``
(> 1: fastgen is faster; for "per iteration" rows the peer is the floor, one weighted
Gram ``X.T @ (w[:, None] * X)``, and ratio = fastgen / floor).  ``floor_s`` is one
weighted Gram on the same X.

Run standalone: ``python benchmarks/compare_logistic.py [--repeats 3] [--small]``.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
import warnings

import numpy as np
import scipy.sparse as sp

DEFAULT_SIZES = {
    "W8_n": 200_000, "W8_d": (64, 256),
    "W9_n": 200_000, "W9_d": 64, "W9_K": 10, "W9_sm_n": 20_000,
    "CSR_n": 200_000, "CSR_d": 100_000, "CSR_nnz_row": 100,
}
SMALL_SIZES = {
    "W8_n": 20_000, "W8_d": (16, 64),
    "W9_n": 20_000, "W9_d": 16, "W9_K": 5, "W9_sm_n": 5_000,
    "CSR_n": 20_000, "CSR_d": 10_000, "CSR_nnz_row": 50,
}
TOL = 1e-8
# The row groups ``run`` can be limited to; "logistic" is the fresh-process first-fit row
# (its workload name starts with that word).
WORKLOADS = ("logistic", "W8", "W9", "CSR")


def _median(fn, repeats):
    fn()  # warm-up
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return float(np.median(ts))


def binary_data(n, d, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    beta = rng.normal(size=d) / np.sqrt(d)
    y = (rng.random(n) < 1 / (1 + np.exp(-(X @ beta)))).astype(np.int64)
    return X, y


def multinomial_data(n, d, K, seed=1):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    W = rng.normal(size=(d, K)) / np.sqrt(d)
    eta = X @ W
    P = np.exp(eta - eta.max(axis=1, keepdims=True))
    P /= P.sum(axis=1, keepdims=True)
    y = (P.cumsum(axis=1) > rng.random((n, 1))).argmax(axis=1)
    return X, y


def csr_data(n, d, nnz_row, seed=2):
    rng = np.random.default_rng(seed)
    nnz = n * nnz_row
    indptr = np.arange(0, nnz + 1, nnz_row, dtype=np.int64)
    # Zipf-like column popularity, as in text
    cols = np.minimum((rng.pareto(1.1, nnz) * 10).astype(np.int64), d - 1)
    X = sp.csr_matrix((rng.poisson(1.0, nnz) + 1.0, cols, indptr), shape=(n, d))
    X.sum_duplicates()
    beta = rng.normal(size=d) * 0.1
    eta = X @ beta
    eta -= eta.mean()
    y = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(np.int64)
    return X, y


def weighted_gram(X, w):
    return X.T @ (w[:, None] * X)


def _compile_time():
    """First fit in a fresh process with an empty cache dir would be the cold compile;
    here: a fresh process with the normal cache (warm cache load + first call)."""
    code = ("import time;t=time.perf_counter();import numpy as np, fastgen;"
            "X=np.random.default_rng(0).normal(size=(500,4));y=(X[:,0]>0).astype(int);"
            "fastgen.fit_logistic(X,y,l2=1.0);"
            "y3=np.arange(500)%3;fastgen.fit_logistic(X,y3,l2=1.0);"
            "print(time.perf_counter()-t)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    try:
        return float(out.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        return float("nan")


def run(repeats: int = 5, quick: bool = False, only=WORKLOADS):
    """Rows in ``benchmarks/compare.py``'s format (dicts), with the issue's targets, for
    the row groups of :data:`WORKLOADS` named in ``only``."""
    rows = []
    for name, fast, peer_s, ratio, floor in run_tuples(
            repeats, SMALL_SIZES if quick else None, only=only):
        row = {"workload": name, "fastgen_s": fast, "peer": None, "peer_s": None,
               "floor_s": None, "target": "report", "met": None, "note": ""}
        if "per Newton iteration" in name:
            row.update(floor_s=floor, floor="one weighted Gram X.T @ (w[:, None] * X)",
                       target="≤1.3× floor", met=None if quick else fast <= 1.3 * floor)
        elif "sklearn" in name and not np.isnan(peer_s):
            target = 5.0 if name.startswith("W9") else 1.5
            row.update(peer="sklearn LogisticRegression", peer_s=peer_s,
                       target=f"≥{target:g}× sklearn" if not name.startswith("CSR")
                       else "report",
                       met=None if quick or name.startswith("CSR") else ratio >= target)
        elif "statsmodels" in name and not np.isnan(peer_s):
            row.update(peer="statsmodels", peer_s=peer_s,
                       target="≥5× statsmodels" if name.startswith("W8") else "report",
                       met=None if quick or not name.startswith("W8") else ratio >= 5.0)
        else:
            row["note"] = "fresh process, warm cache: import + two small fits"
        if quick:
            row["note"] = (row["note"] + " (quick sizes: target not judged)").strip()
        rows.append(row)
    return rows


def run_tuples(repeats=3, sizes=None, verbose=False, only=WORKLOADS):
    """Time the logistic workloads named in ``only`` (of :data:`WORKLOADS`); return rows
    (workload, fastgen, peer, ratio, floor).

    With ``verbose`` each row is printed as soon as it is measured.
    """
    from sklearn.linear_model import LogisticRegression

    import fastgen

    s = dict(DEFAULT_SIZES)
    s.update(sizes or {})
    only = {w.upper() for w in only}
    unknown = only - {w.upper() for w in WORKLOADS}
    if unknown:
        raise ValueError(f"unknown workloads {sorted(unknown)}; known: {WORKLOADS}")
    rows = _Rows(verbose)
    if "LOGISTIC" in only:
        rows.append(("logistic first fit in fresh process (import + cache load + 2 fits)",
                     _compile_time(), float("nan"), float("nan"), float("nan")))

    def sk_fit(X, y, **kw):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return LogisticRegression(solver="newton-cholesky", C=1.0, tol=TOL,
                                      max_iter=100, **kw).fit(X, y)

    for d in s["W8_d"] if "W8" in only else ():
        n = s["W8_n"]
        X, y = binary_data(n, d)
        w = np.random.default_rng(3).uniform(0.1, 0.25, n)
        floor = _median(lambda X=X, w=w: weighted_gram(X, w), repeats)
        p = fastgen.fit_logistic(X, y, l2=1.0, tol=TOL)
        fit = _median(lambda X=X, y=y: fastgen.fit_logistic(X, y, l2=1.0, tol=TOL), repeats)
        per_iter = fit / max(p.n_iter + 1, 1)  # n_iter steps + the final check pass
        rows.append((f"W8 binary n={n} d={d}: time per Newton iteration vs weighted Gram",
                     per_iter, floor, per_iter / floor, floor))
        skt = _median(lambda X=X, y=y: sk_fit(X, y), repeats)
        rows.append((f"W8 binary n={n} d={d}: fit vs sklearn newton-cholesky "
                     f"({p.n_iter} iterations)", fit, skt, skt / fit, floor))
        smt = _statsmodels_newton("Logit", X, y, repeats)
        fit0 = _median(lambda X=X, y=y: fastgen.fit_logistic(X, y, tol=TOL), repeats)
        rows.append((f"W8 binary n={n} d={d}: fit (l2=0) vs statsmodels Logit newton",
                     fit0, smt, smt / fit0, floor))

    if "W9" in only:
        _w9(s, repeats, sk_fit, rows)
    if "CSR" in only:
        _csr(s, repeats, rows)
    return list(rows)


def _w9(s, repeats, sk_fit, rows):
    import fastgen

    n, d, K = s["W9_n"], s["W9_d"], s["W9_K"]
    X, y = multinomial_data(n, d, K)
    p = fastgen.fit_logistic(X, y, l2=1.0, tol=TOL)
    fit = _median(lambda: fastgen.fit_logistic(X, y, l2=1.0, tol=TOL), repeats)
    skt = _median(lambda: sk_fit(X, y), max(1, repeats // 2))
    rows.append((f"W9 multinomial n={n} d={d} K={K}: fit vs sklearn newton-cholesky "
                 f"({p.n_iter} Newton its, {p.n_hessp} Hv, {p.solver})", fit, skt, skt / fit,
                 float("nan")))
    m = s["W9_sm_n"]
    Xs, ys = X[:m], y[:m]
    fs = _median(lambda: fastgen.fit_logistic(Xs, ys, tol=TOL), repeats)
    sm_t = _statsmodels_newton("MNLogit", Xs, ys, 1)
    rows.append((f"W9 multinomial n={m} d={d} K={K} (l2=0): fit vs statsmodels MNLogit newton",
                 fs, sm_t, sm_t / fs, float("nan")))


def _csr(s, repeats, rows):
    from sklearn.linear_model import LogisticRegression

    import fastgen

    n, d = s["CSR_n"], s["CSR_d"]
    X, y = csr_data(n, d, s["CSR_nnz_row"])
    p = fastgen.fit_logistic(X, y, l2=1.0, tol=1e-6)
    fit = _median(lambda: fastgen.fit_logistic(X, y, l2=1.0, tol=1e-6), repeats)

    def sk_csr():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            LogisticRegression(solver="newton-cg", C=1.0, tol=1e-6, max_iter=100).fit(X, y)

    skt = _median(sk_csr, max(1, repeats // 2))
    rows.append((f"CSR binary n={n} d={d} nnz={X.nnz}: fit vs sklearn newton-cg "
                 f"({p.solver}, {p.n_iter} its, {p.n_hessp} Hv)", fit, skt, skt / fit,
                 float("nan")))


class _Rows(list):
    def __init__(self, verbose):
        super().__init__()
        self.verbose = verbose

    def append(self, row):
        super().append(row)
        if self.verbose:
            print(format_rows([row]).splitlines()[1], flush=True)


def _statsmodels_newton(model, X, y, repeats):
    """Median seconds of statsmodels' ``model`` ("Logit" or "MNLogit") fitted by Newton
    with an intercept column, at the tolerance and iteration cap fastgen is given."""
    import statsmodels.api as sm

    Xc = sm.add_constant(X)
    cls = getattr(sm, model)

    def f():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cls(y, Xc).fit(method="newton", tol=TOL, maxiter=100, disp=0)

    return _median(f, repeats)


def format_rows(rows):
    lines = [f"{'workload':<96} {'fastgen s':>10} {'peer s':>10} {'ratio':>7} {'floor s':>9}"]
    for name, a, b, r, fl in rows:
        lines.append(f"{name:<96} {a:>10.4f} {b:>10.4f} {r:>7.2f} {fl:>9.4f}")
    return "\n".join(lines)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--small", action="store_true")
    ap.add_argument("--only", default=",".join(WORKLOADS), metavar="W8,W9,...",
                    help=f"run only these row groups (of {','.join(WORKLOADS)})")
    args = ap.parse_args()
    only = tuple(w.strip() for w in args.only.split(",") if w.strip())
    if not only or {w.upper() for w in only} - {w.upper() for w in WORKLOADS}:
        ap.error(f"--only takes a comma-separated subset of {','.join(WORKLOADS)}")
    rows = run_tuples(args.repeats, SMALL_SIZES if args.small else None, verbose=True,
                      only=only)
    print(format_rows(rows))

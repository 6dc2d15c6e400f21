"""Naive Bayes side by side with scikit-learn: workloads W5, W6, W7 (and complement,
categorical without a target).

``run(repeats, sizes)`` returns rows ``(workload, fastgen_median_s, sklearn_median_s,
ratio)`` with ratio = sklearn / fastgen (above 1: fastgen is faster).  Each function is
called once before timing (JIT compilation excluded); the compile time of that first
call is reported in rows of its own with no peer.  ``benchmarks/compare.py`` imports
:func:`run`; ``python benchmarks/compare_nb.py [--repeats N] [--small]`` prints the
table on its own.

Targets (reported, not asserted): W5 fit ≥ 20×, predict_proba ≥ 40×; W6 fit ≥ 8×,
predict_proba ≥ 3×; W7 fit and predict ≥ 5×.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import scipy.sparse as sp

SIZES = {
    # n, d, K for W5; n, d, K, stored values per row for W6/W7
    "full": {"W5": (1_000_000, 16, 10), "W6": (200_000, 100_000, 20, 100)},
    "small": {"W5": (100_000, 16, 10), "W6": (20_000, 10_000, 20, 100)},
}

TARGETS = {
    "W5 GaussianNB fit": 20.0,
    "W5 GaussianNB predict_proba": 40.0,
    "W6 MultinomialNB fit (CSR)": 8.0,
    "W6 MultinomialNB predict_proba (CSR)": 3.0,
    "W7 BernoulliNB fit (CSR)": 5.0,
    "W7 BernoulliNB predict (CSR)": 5.0,
}


def make_gaussian(n, d, K, seed=0):
    """Dense float64 data: K Gaussian classes with distinct means and scales."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, K, n)
    centers = rng.normal(scale=3.0, size=(K, d))
    scales = rng.uniform(0.5, 2.0, size=(K, d))
    X = centers[y] + scales[y] * rng.standard_normal((n, d))
    return np.ascontiguousarray(X), y


def make_counts(n, d, K, stored_per_row, seed=0):
    """CSR integer counts with about ``stored_per_row`` stored values per row.

    Each row draws 1.55 × stored_per_row columns from a Zipf-like (1/rank^1.1) column
    distribution, shifted per class; repeated columns are summed into counts (at
    d = 100 000 about a third of the draws repeat, leaving ~stored_per_row distinct
    columns)."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, K, n)
    per_row = int(round(1.55 * stored_per_row))
    p = 1.0 / np.arange(1, d + 1) ** 1.1
    cdf = np.cumsum(p)
    cdf /= cdf[-1]
    cols = np.searchsorted(cdf, rng.random(n * per_row)).astype(np.int64)
    shift = (np.repeat(y, per_row) * (d // (7 * K) + 1)) % d
    cols = (cols + shift) % d
    rows = np.repeat(np.arange(n), per_row)
    X = sp.csr_matrix((np.ones(n * per_row), (rows, cols)), shape=(n, d))
    X.sum_duplicates()
    X.indices = X.indices.astype(np.int32)
    X.indptr = X.indptr.astype(np.int32)
    return X, y


def _median_time(fn, repeats):
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def _first_call(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def run(repeats: int = 5, sizes: str = "full"):
    """Time fastgen against scikit-learn on W5–W7.

    Parameters
    ----------
    repeats : int
        Timed calls per function (the median is reported), after one warm-up call.
    sizes : {"full", "small"}
        "full" are the issue's sizes; "small" a tenth of the rows for a quick check.

    Returns
    -------
    list of (str, float, float | None, float | None)
        (workload, fastgen median s, scikit-learn median s, sklearn/fastgen ratio).
        Compile rows carry the first call's time and no peer.
    """
    import fastgen as fg
    from sklearn import naive_bayes as sknb

    cfg = SIZES[sizes]
    rows = []

    def pair(name, fast, slow):
        compile_s = _first_call(fast)
        _first_call(slow)
        tf = _median_time(fast, repeats)
        ts = _median_time(slow, repeats)
        rows.append((f"{name} [first call, incl. compile]", compile_s, None, None))
        rows.append((name, tf, ts, ts / tf))

    n, d, K = cfg["W5"]
    X, y = make_gaussian(n, d, K)
    pg = fg.fit_gaussian_nb(X, y)
    sg = sknb.GaussianNB().fit(X, y)
    pair("W5 GaussianNB fit", lambda: fg.fit_gaussian_nb(X, y),
         lambda: sknb.GaussianNB().fit(X, y))
    pair("W5 GaussianNB predict_proba", lambda: fg.predict_proba(pg, X),
         lambda: sg.predict_proba(X))
    del X

    n, d, K, per_row = cfg["W6"]
    Xs, y = make_counts(n, d, K, per_row)
    pm = fg.fit_multinomial_nb(Xs, y)
    sm = sknb.MultinomialNB().fit(Xs, y)
    pair("W6 MultinomialNB fit (CSR)", lambda: fg.fit_multinomial_nb(Xs, y),
         lambda: sknb.MultinomialNB().fit(Xs, y))
    pair("W6 MultinomialNB predict_proba (CSR)", lambda: fg.predict_proba(pm, Xs),
         lambda: sm.predict_proba(Xs))

    pb = fg.fit_bernoulli_nb(Xs, y)
    sb = sknb.BernoulliNB().fit(Xs, y)
    pair("W7 BernoulliNB fit (CSR)", lambda: fg.fit_bernoulli_nb(Xs, y),
         lambda: sknb.BernoulliNB().fit(Xs, y))
    pair("W7 BernoulliNB predict (CSR)", lambda: fg.predict(pb, Xs),
         lambda: sb.predict(Xs))
    pair("W7 BernoulliNB predict_proba (CSR)", lambda: fg.predict_proba(pb, Xs),
         lambda: sb.predict_proba(Xs))

    pc = fg.fit_complement_nb(Xs, y)
    sc = sknb.ComplementNB().fit(Xs, y)
    pair("ComplementNB fit (CSR)", lambda: fg.fit_complement_nb(Xs, y),
         lambda: sknb.ComplementNB().fit(Xs, y))
    pair("ComplementNB predict_proba (CSR)", lambda: fg.predict_proba(pc, Xs),
         lambda: sc.predict_proba(Xs))
    del Xs

    # Categorical: scikit-learn needs dense integer codes; 20 features, 8 categories.
    rng = np.random.default_rng(1)
    n5 = cfg["W5"][0] // 4
    Xc = rng.integers(0, 8, size=(n5, 20))
    yc = (Xc[:, 0] + rng.integers(0, 3, n5)) % 5
    Xcf = Xc.astype(np.float64)
    pk = fg.fit_categorical_nb(Xcf, yc)
    sk = sknb.CategoricalNB().fit(Xc, yc)
    pair("CategoricalNB fit", lambda: fg.fit_categorical_nb(Xcf, yc),
         lambda: sknb.CategoricalNB().fit(Xc, yc))
    pair("CategoricalNB predict_proba", lambda: fg.predict_proba(pk, Xcf),
         lambda: sk.predict_proba(Xc))
    return rows


def format_table(rows):
    lines = [f"{'workload':<52}{'fastgen s':>11}{'sklearn s':>11}{'ratio':>9}{'target':>8}"]
    for name, tf, ts, ratio in rows:
        target = TARGETS.get(name)
        lines.append(
            f"{name:<52}{tf:>11.4f}"
            + (f"{ts:>11.4f}{ratio:>8.1f}x" if ts is not None else f"{'':>11}{'':>9}")
            + (f"{target:>7.0f}x" if target else "")
        )
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--small", action="store_true", help="a tenth of the rows")
    args = parser.parse_args(argv)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rows = run(args.repeats, "small" if args.small else "full")
    print(format_table(rows))


if __name__ == "__main__":
    main()

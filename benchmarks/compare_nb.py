"""Naive Bayes side by side with scikit-learn: workloads W5, W6, W7 (and complement,
categorical without a target).

``run(repeats, quick)`` returns rows in the format of ``benchmarks/compare.py`` (which
imports it), each with ``ratio`` = sklearn seconds / fastgen seconds (above 1: fastgen
is faster).  Each function is called once before timing (JIT compilation excluded);
compile times are measured separately, in a fresh process with an empty numba cache.
``python benchmarks/compare_nb.py [--repeats N] [--quick]`` prints the table alone.

Targets (reported, not asserted): W5 fit ≥ 20×, predict_proba ≥ 40×; W6 fit ≥ 8×,
predict_proba ≥ 3×; W7 fit and predict ≥ 5×.
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
import scipy.sparse as sp

try:  # imported as benchmarks.compare_nb, or run as a script / by compare.py's fallback
    from . import _common
except ImportError:
    import _common
interleaved_medians = _common.interleaved_medians

WORKLOADS = ("W5", "W6", "W7", "NB-C", "NB-K", "NB-JIT")

SIZES = {
    # n, d, K for W5; n, d, K, stored values per row for W6/W7
    "full": {"W5": (1_000_000, 16, 10), "W6": (200_000, 100_000, 20, 100)},
    "small": {"W5": (100_000, 16, 10), "W6": (20_000, 10_000, 20, 100)},
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


_COMPILE_SCRIPT = r"""
import json, time, numpy as np, scipy.sparse as sp
t0 = time.perf_counter(); import fastgen as fg; t_import = time.perf_counter() - t0
rng = np.random.default_rng(0)
X = rng.normal(size=(200, 4)); y = np.arange(200) % 3
C = sp.random(200, 50, density=0.1, format="csr", random_state=0) * 5
C.data = np.floor(C.data) + 1
out = {"import": t_import}
def first(name, f):
    t0 = time.perf_counter(); f(); out[name] = time.perf_counter() - t0
first("gaussian fit", lambda: fg.fit_gaussian_nb(X, y))
g = fg.fit_gaussian_nb(X, y)
first("gaussian predict_proba", lambda: fg.predict_proba(g, X))
first("multinomial fit (CSR)", lambda: fg.fit_multinomial_nb(C, y))
m = fg.fit_multinomial_nb(C, y)
first("multinomial predict_proba (CSR)", lambda: fg.predict_proba(m, C))
first("bernoulli fit + predict (CSR)",
      lambda: fg.predict(fg.fit_bernoulli_nb(C, y), C))
print(json.dumps(out))
"""


def compile_times():
    """First-call seconds of each kernel in a fresh process with an empty numba cache
    (so compilation is included), as a dict name -> seconds."""
    import json
    import os
    import subprocess
    import sys
    import tempfile

    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        res = subprocess.run([sys.executable, "-c", _COMPILE_SCRIPT], env=env,
                             capture_output=True, text=True, timeout=600, check=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


def _row(workload, fast, peer_name, peer, target=None, note=""):
    ratio = peer[0] / fast[0]
    return {
        "workload": workload,
        "fastgen_s": fast[0],
        "peer": peer_name,
        "peer_s": peer[0],
        "floor_s": None,
        "target": f"≥{target:g}× sklearn" if target else "report only",
        "met": (ratio >= target) if target else None,
        "note": note,
        "ratio": ratio,
        "fastgen_times": fast[1],
        "peer_times": peer[1],
    }


def run(repeats: int = 5, quick: bool = False, compile: bool = True, only=WORKLOADS):
    """Time fastgen against scikit-learn on W5–W7, complement and categorical NB.

    Parameters
    ----------
    repeats : int
        Timed calls per function (medians reported), after one untimed warm-up call
        each; fastgen and scikit-learn calls alternate.
    quick : bool
        A tenth of the rows (a smoke run); the targets are judged on full sizes.
    compile : bool
        Also report first-call (compile) seconds from a fresh process with an empty
        numba cache, as rows with no peer.
    only : sequence of str
        The workloads to run, from :data:`WORKLOADS` (``NB-JIT``: the compile rows,
        also only with ``compile``).

    Returns
    -------
    list of dict
        Rows in the format of ``benchmarks/compare.py`` (workload, fastgen_s, peer,
        peer_s, floor_s, target, met, note, plus ``ratio`` = peer_s / fastgen_s and
        every timing).
    """
    from sklearn import naive_bayes as sknb

    import fastgen as fg

    cfg = SIZES["small" if quick else "full"]
    rows = []
    size_note = " (quick sizes: target not judged)" if quick else ""

    def pair(wid, what, fast, slow, peer_name, target=None, note=""):
        f, s = interleaved_medians([fast, slow], repeats)
        row = _row(f"{wid} {what}", f, peer_name, s, None if quick else target,
                   note + size_note)
        rows.append(row)

    def fit_and_score(wid, fit, sk_class, dims, data, fit_target, scores, peer_data=None):
        """Time ``fit`` against ``sk_class().fit``, then each (score, target) of
        ``scores``: ``fastgen.<score>`` of that fit against the estimator's method.
        scikit-learn gets ``peer_data`` where it needs another encoding of ``data``."""
        X, y = data
        Xp, yp = data if peer_data is None else peer_data
        name = sk_class.__name__
        pair(wid, f"{name} fit {dims}", lambda: fit(X, y), lambda: sk_class().fit(Xp, yp),
             f"sklearn {name}.fit", fit_target)
        p = fit(X, y)
        est = sk_class().fit(Xp, yp)
        for score, target in scores:
            fg_score, sk_score = getattr(fg, score), getattr(est, score)
            pair(wid, f"{name} {score} {dims}", lambda f=fg_score: f(p, X),
                 lambda f=sk_score: f(Xp), f"sklearn {name}.{score}", target)

    only = {w.upper() for w in only}
    unknown = only - set(WORKLOADS)
    if unknown:
        raise ValueError(f"unknown workloads {sorted(unknown)}; known: {WORKLOADS}")

    if "W5" in only:
        n, d, K = cfg["W5"]
        X, y = make_gaussian(n, d, K)
        fit_and_score("W5", fg.fit_gaussian_nb, sknb.GaussianNB, f"n={n:.0e} d={d} K={K}",
                      (X, y), 20, [("predict_proba", 40)])

    if only & {"W6", "W7", "NB-C"}:  # one count matrix for the three
        n, d, K, per_row = cfg["W6"]
        Xs, y = make_counts(n, d, K, per_row)
        dims = f"CSR n={n // 1000}k d={d // 1000}k K={K} nnz={Xs.nnz / 1e6:.1f}M"
    if "W6" in only:
        fit_and_score("W6", fg.fit_multinomial_nb, sknb.MultinomialNB, dims, (Xs, y), 8,
                      [("predict_proba", 3)])
    if "W7" in only:
        fit_and_score("W7", fg.fit_bernoulli_nb, sknb.BernoulliNB, dims, (Xs, y), 5,
                      [("predict", 5), ("predict_proba", None)])
    if "NB-C" in only:
        fit_and_score("NB-C", fg.fit_complement_nb, sknb.ComplementNB, dims, (Xs, y), None,
                      [("predict_proba", None)])

    if "NB-K" in only:
        # Categorical: scikit-learn needs dense integer codes; 20 features, 8 categories.
        rng = np.random.default_rng(1)
        n5 = cfg["W5"][0] // 4
        Xc = rng.integers(0, 8, size=(n5, 20))
        yc = (Xc[:, 0] + rng.integers(0, 3, n5)) % 5
        fit_and_score("NB-K", fg.fit_categorical_nb, sknb.CategoricalNB,
                      f"n={n5 // 1000}k d=20 K=5, 8 categories", (Xc.astype(np.float64), yc),
                      None, [("predict_proba", None)], peer_data=(Xc, yc))

    if compile and "NB-JIT" in only:
        for name, sec in compile_times().items():
            rows.append({
                "workload": f"NB-JIT first call: {name}", "fastgen_s": sec, "peer": None,
                "peer_s": None, "floor_s": None, "target": "report only", "met": None,
                "note": "fresh process, empty numba cache: compile included (excluded "
                        "from every timing above)",
            })
    return rows


def format_table(rows):
    lines = [f"{'workload':<72}{'fastgen s':>11}{'sklearn s':>11}{'ratio':>9}  target"]
    for r in rows:
        peer = r["peer_s"]
        ratio = f"{peer / r['fastgen_s']:>8.1f}x" if peer else f"{'':>9}"
        peer_s = f"{peer:>11.4f}" if peer else f"{'':>11}"
        met = {True: " (met)", False: " (NOT met)", None: ""}[r["met"]]
        lines.append(f"{r['workload']:<72}{r['fastgen_s']:>11.4f}{peer_s}{ratio}  "
                     f"{r['target']}{met}")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="a tenth of the rows")
    parser.add_argument("--no-compile", action="store_true",
                        help="skip the fresh-process compile-time probe")
    parser.add_argument("--only", default=",".join(WORKLOADS), metavar="W5,W7,...",
                        help=f"run only these workloads (of {','.join(WORKLOADS)})")
    _common.add_settle_arguments(parser)
    args = parser.parse_args(argv)
    _common.apply_settle(parser, args)
    only = tuple(w.strip().upper() for w in args.only.split(",") if w.strip())
    if not only or set(only) - set(WORKLOADS):
        parser.error(f"--only takes a comma-separated subset of {','.join(WORKLOADS)}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rows = run(args.repeats, args.quick, compile=not args.no_compile, only=only)
    print(format_table(rows))


if __name__ == "__main__":
    main()

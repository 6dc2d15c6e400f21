"""Every fit and score of the generative models and logistic regression, saved bit for
bit, to compare two trees of fastgen after a restructure that must not change a result.

Usage::

    PYTHONPATH=/path/to/old/tree python benchmarks/bitwise_seams.py save old.npz
    python benchmarks/bitwise_seams.py save new.npz
    python benchmarks/bitwise_seams.py compare old.npz new.npz [--ulp FIELD ...]

``save`` fits each model on seeded data in several input forms (dense float64 and
float32, CSR with int32 and int64 indices, sample weights) and stores every array
field of the params and the four scores of held-out rows.  ``compare`` lists each
entry that is not bitwise equal; an entry whose name contains one of the ``--ulp``
names may instead differ by at most one unit in the last place (fields computed by
another logarithm, listed in benchmarks/NOTES.md), and the largest difference in ulps
is printed for them.  Exit status 1 on any other difference.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys

import numpy as np
import scipy.sparse as sp


def _data(seed=0, n=3000, d=40, K=4):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, K, n)
    centres = rng.normal(size=(K, d)) * 2.0
    Xg = centres[y] + rng.normal(size=(n, d)) + 30.0
    lam = np.exp(centres[y] / 3.0)
    Xc = rng.poisson(lam * (rng.random((n, d)) < 0.3))
    Xc = Xc.astype(np.float64)
    Xcat = np.minimum(rng.poisson(np.abs(centres[y]) + 0.5), 7).astype(np.float64)
    w = rng.uniform(0.2, 3.0, n)
    Xl = rng.normal(size=(n, 8)) * [1.0, 2.0, 0.5, 1.0, 3.0, 1.0, 1.0, 0.2]
    Xl[rng.random((n, 8)) < 0.3] = 0.0  # CSR keeps the zeros implicit
    yl = np.argmax(Xl @ rng.normal(size=(8, K)) * 0.5 + rng.gumbel(size=(n, K)), axis=1)
    return Xg, Xc, Xcat, y, w, Xl, yl


def _forms(X, sparse):
    yield "f64", X
    yield "f32", X.astype(np.float32)
    if sparse:
        M = sp.csr_matrix(X)
        yield "csr32", M
        M64 = M.copy()
        M64.indptr = M64.indptr.astype(np.int64)
        M64.indices = M64.indices.astype(np.int64)
        yield "csr64", M64


def _record(out, name, params, Xt):
    import fastgen

    for f in dataclasses.fields(params):
        v = getattr(params, f.name)
        if isinstance(v, np.ndarray):
            out[f"{name}.{f.name}"] = v
        elif isinstance(v, (float, int, np.floating, np.integer)) and not isinstance(v, bool):
            out[f"{name}.{f.name}"] = np.array(v)
    for fn in ("joint_log_likelihood", "predict_log_proba", "predict_proba", "predict"):
        out[f"{name}.{fn}"] = np.asarray(getattr(fastgen, fn)(params, Xt))


def _infer(out, name, X, y, w):
    """The inference of an unpenalised fit: nonrobust, HC1 and cluster covariances."""
    import fastgen

    params = fastgen.fit_logistic(X, y, sample_weight=w)

    groups = np.arange(X.shape[0]) % 37
    for cov, kw in (("nonrobust", {}), ("HC1", {}), ("cluster", {"groups": groups})):
        r = fastgen.logistic_inference(params, X, y, sample_weight=w, cov_type=cov, **kw)
        for field in ("cov_params", "bse", "llf", "llnull"):
            v = getattr(r, field)
            out[f"{name}.inference.{cov}.{field}"] = np.asarray(v() if callable(v) else v)


def save(path):
    import warnings

    import fastgen

    warnings.simplefilter("ignore")
    out = {}
    Xg, Xc, Xcat, y, w, Xl, yl = _data()
    split = 2500
    for wname, wt in (("", None), ("w", w[:split])):
        for cov in ("pooled", "per_class", "diagonal", "pooled_diagonal"):
            for form, X in _forms(Xg, False):
                p = fastgen.fit_gda(X[:split], y[:split], cov, sample_weight=wt)
                _record(out, f"gda.{cov}.{form}{wname}", p, X[split:])
        for form, X in _forms(Xg, False):
            p = fastgen.fit_gaussian_nb(X[:split], y[:split], sample_weight=wt)
            _record(out, f"gnb.{form}{wname}", p, X[split:])
        for form, X in _forms(Xc, True):
            for model, fit in (("mnb", fastgen.fit_multinomial_nb),
                               ("bnb", fastgen.fit_bernoulli_nb),
                               ("cnb", fastgen.fit_complement_nb)):
                p = fit(X[:split], y[:split], sample_weight=wt)
                _record(out, f"{model}.{form}{wname}", p, X[split:])
            p = fastgen.fit_bernoulli_nb(X[:split], y[:split], binarize=1.5,
                                         sample_weight=wt)
            _record(out, f"bnb_t.{form}{wname}", p, X[split:])
        for form, X in _forms(Xcat, True):
            p = fastgen.fit_categorical_nb(X[:split], y[:split], sample_weight=wt,
                                           min_categories=9)
            _record(out, f"catnb.{form}{wname}", p, X[split:])
        for form, X in _forms(Xl, True):
            yb = (yl[:split] % 2)
            p = fastgen.fit_logistic(X[:split], yb, sample_weight=wt, l2=0.1)
            _record(out, f"logit.{form}{wname}", p, X[split:])
            _infer(out, f"logit.{form}{wname}", X[:split], yb, wt)
            p = fastgen.fit_logistic(X[:split], yl[:split], sample_weight=wt, l2=0.1)
            _record(out, f"mlogit.{form}{wname}", p, X[split:])
            _infer(out, f"mlogit.{form}{wname}", X[:split], yl[:split], wt)
    np.savez(path, **out)
    print(f"{len(out)} arrays saved to {path}")


def _ulps(a, b):
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    both = np.isfinite(a) & np.isfinite(b)
    if not np.array_equal(np.isfinite(a), np.isfinite(b)) or not np.array_equal(
            a[~both], b[~both]):
        return np.inf
    if not both.any():
        return 0.0
    spacing = np.spacing(np.maximum(np.abs(a[both]), np.abs(b[both])))
    return float(np.max(np.abs(a[both] - b[both]) / spacing))


def compare(old, new, ulp_fields):
    a, b = np.load(old), np.load(new)
    bad = 0
    for key in sorted(set(a.files) | set(b.files)):
        if key not in a.files or key not in b.files:
            print(f"only in one file: {key}")
            bad += 1
            continue
        x, z = a[key], b[key]
        if x.dtype == z.dtype and x.shape == z.shape and (
                x.tobytes() == z.tobytes() if x.dtype.kind == "f" else np.array_equal(x, z)):
            continue
        if any(f in key for f in ulp_fields) and x.shape == z.shape and x.dtype.kind == "f":
            u = _ulps(x, z)
            print(f"{key}: {u:.2f} ulp")
            if u > 1.0:
                bad += 1
            continue
        print(f"DIFFERENT: {key}")
        bad += 1
    print(f"{len(a.files)} entries compared, {bad} differences")
    return bad


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("save")
    s.add_argument("path")
    c = sub.add_parser("compare")
    c.add_argument("old")
    c.add_argument("new")
    c.add_argument("--ulp", nargs="*", default=[])
    args = ap.parse_args(argv)
    if args.cmd == "save":
        save(args.path)
        return 0
    return 1 if compare(args.old, args.new, args.ulp) else 0


if __name__ == "__main__":
    sys.exit(main())

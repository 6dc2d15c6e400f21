"""Marginal scoring (``nan_policy="marginalize"``) on its two paths: numpy for small X,
the pattern kernels (fastgen.kernels.missing) above; both against scipy's Gaussian
density of the observed block, also where the full covariance is ill-conditioned and
the observed block is not (where the precision route alone lost digits); small X
compiles nothing."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from reference import make_blobs
from scipy.stats import multivariate_normal

import fastgen
from fastgen import _small

KINDS = ("pooled", "per_class", "diagonal", "pooled_diagonal")
SCORERS = (fastgen.joint_log_likelihood, fastgen.predict_log_proba, fastgen.predict_proba,
           fastgen.predict)
SCRIPT = Path(__file__).resolve().parent / "data" / "marginal_calls.py"


def _mask(n, d, rate, seed):
    rng = np.random.default_rng(seed)
    M = rng.random((n, d)) < rate
    M[0] = True   # every feature missing
    M[1] = False  # complete
    M[2] = True
    M[2, d - 1] = False  # one observed feature
    return M


def _with_nan(X, M):
    A = np.array(X, dtype=float)
    A[M] = np.nan
    return A


def _scipy_jll(p, A):
    """log π_k + log N(x_o; μ_k,o, Σ_k,oo) by scipy.stats.multivariate_normal."""
    cov = p.covariance.astype(np.float64)
    K = p.n_classes
    out = np.empty((A.shape[0], K))
    with np.errstate(divide="ignore"):
        log_prior = np.log(p.priors.astype(np.float64))
    for i, x in enumerate(A):
        o = ~np.isnan(x)
        for k in range(K):
            S = {"pooled": cov, "per_class": cov[k] if cov.ndim == 3 else cov,
                 "diagonal": np.diag(cov[k]) if cov.ndim == 2 else None,
                 "pooled_diagonal": np.diag(cov) if cov.ndim == 1 else None
                 }[p.covariance_type]
            lp = log_prior[k]
            if o.any():
                lp += _logpdf(x[o], p.means[k, o].astype(np.float64), S[np.ix_(o, o)])
            out[i, k] = lp
    return out


def _logpdf(x, mean, cov):
    """scipy's Gaussian log-density; where scipy calls cov singular (it cuts the
    eigenvalues below ~1e-10 of the largest), the two-pass Cholesky formula."""
    try:
        return multivariate_normal(mean, cov).logpdf(x)
    except np.linalg.LinAlgError:
        L = np.linalg.cholesky(cov)
        z = np.linalg.solve(L, x - mean)
        return -0.5 * (z @ z) - np.sum(np.log(np.diag(L))) - 0.5 * x.size * np.log(2 * np.pi)


def _rel_err(a, b):
    """Largest |a − b| relative to max(1, |b|), entrywise (finite entries)."""
    fin = np.isfinite(b)
    assert np.array_equal(np.isfinite(a), fin)
    return float(np.max(np.abs(a[fin] - b[fin]) / np.maximum(1.0, np.abs(b[fin])),
                        initial=0.0))


def _paths(monkeypatch, fn):
    """fn() down the numpy path, then down the kernels' path."""
    monkeypatch.setattr(_small, "SMALL_VALUES", 1 << 62)
    a = fn()
    monkeypatch.setattr(_small, "SMALL_VALUES", -1)
    b = fn()
    monkeypatch.undo()
    return a, b


def _agree(a, b, tol=1e-12):
    """a and b agree to ``tol`` relative to the largest entry (labels exactly)."""
    if a.dtype.kind not in "fc":
        np.testing.assert_array_equal(a, b)
        return
    fin = np.isfinite(b)
    np.testing.assert_array_equal(np.isfinite(a), fin)
    scale = float(np.max(np.abs(b[fin]), initial=1.0))
    np.testing.assert_allclose(a[fin], b[fin], rtol=0, atol=tol * scale)


# ------------------------------------------------------------------ the two paths


def _models(d=6, seed=0):
    X, y = make_blobs(900, d, 4, seed=seed)
    fits = [(kind, fastgen.fit_gda(X, y, kind)) for kind in KINDS]
    fits.append(("gaussian_nb", fastgen.fit_gaussian_nb(X, y)))
    return X, fits


@pytest.mark.parametrize("rate", [0.1, 0.45])
@pytest.mark.parametrize("shift", [0.0, 1e4])
def test_numpy_and_kernel_paths_agree(monkeypatch, rate, shift):
    X, fits = _models()
    X = X + shift
    A = _with_nan(X, _mask(*X.shape, rate, 1))
    for name, p in fits:
        p = p if shift == 0.0 else (fastgen.fit_gda(X, np.arange(900) % 4, name)
                                    if name != "gaussian_nb"
                                    else fastgen.fit_gaussian_nb(X, np.arange(900) % 4))
        for f in SCORERS:
            a, b = _paths(monkeypatch, lambda f=f, p=p: f(p, A, nan_policy="marginalize"))
            assert a.dtype == b.dtype and a.shape == b.shape, name
            _agree(a, b)


def test_float32_paths_agree(monkeypatch):
    X, y = make_blobs(600, 5, 3, seed=3)
    A = _with_nan(X, _mask(600, 5, 0.3, 4)).astype(np.float32)
    for kind in KINDS:
        p = fastgen.fit_gda(X.astype(np.float32), y, kind)
        a, b = _paths(monkeypatch,
                      lambda p=p: fastgen.predict_proba(p, A, nan_policy="marginalize"))
        assert a.dtype == b.dtype == np.float32
        _agree(a, b, tol=8 * np.finfo(np.float32).eps)


@pytest.mark.parametrize("kind", KINDS)
def test_both_sides_of_the_threshold(monkeypatch, kind):
    # n·d at the threshold: numpy (no kernel reached); one row more: the kernels
    from fastgen.kernels import missing as kernels
    from fastgen.kernels import patterns

    X, y = make_blobs(400, 5, 3, seed=5)
    p = fastgen.fit_gda(X, y, kind)
    A = _with_nan(X, _mask(400, 5, 0.25, 6))
    monkeypatch.setattr(_small, "SMALL_VALUES", 300 * 5)
    small = fastgen.predict_log_proba(p, A[:300], nan_policy="marginalize")
    large = fastgen.predict_log_proba(p, A[:301], nan_policy="marginalize")
    _agree(small, large[:300])
    _agree(large, _scipy_lp(p, A[:301]), tol=1e-10)

    def refuse(*args, **kwargs):
        raise AssertionError("small X reached a marginal kernel")

    for name in ("pooled_pattern_scores", "class_pattern_scores",
                 "diagonal_marginal_scores"):
        monkeypatch.setattr(kernels, name, refuse)
    monkeypatch.setattr(patterns, "nan_keys", refuse)
    fastgen.predict_log_proba(p, A[:300], nan_policy="marginalize")
    with pytest.raises(AssertionError, match="reached a marginal kernel"):
        fastgen.predict_log_proba(p, A[:301], nan_policy="marginalize")


def _scipy_lp(p, A):
    jll = _scipy_jll(p, A)
    top = jll.max(axis=1, keepdims=True)
    return jll - (top + np.log(np.exp(jll - top).sum(axis=1, keepdims=True)))


def test_small_marginal_scoring_compiles_nothing(tmp_path):
    """Every family's marginal scoring on small data in a fresh process with an empty
    numba cache compiles no kernel; the same script sent to the kernels compiles the
    marginal kernels (the check sees them)."""
    def run(**extra):
        env = {k: v for k, v in os.environ.items() if k != "FASTGEN_SMALL_VALUES"}
        env.update(NUMBA_CACHE_DIR=str(tmp_path / "cache"), **extra)
        res = subprocess.run([sys.executable, "-W", "error", str(SCRIPT)], env=env,
                             capture_output=True, text=True, timeout=900)
        assert res.returncode == 0, res.stderr[-3000:]
        return json.loads(res.stdout.strip().splitlines()[-1])

    assert run() == []
    compiled = run(FASTGEN_SMALL_VALUES="0")
    for name in ("pooled_pattern_scores", "class_pattern_scores", "diagonal_marginal_scores"):
        assert f"fastgen.kernels.missing.{name}" in compiled


# ------------------------------------------------------------------ against scipy


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("path", ["numpy", "kernels"])
@pytest.mark.parametrize("offset,scale", [(0.0, 1.0), (1e5, 1.0), (0.0, 1e-4)])
def test_well_conditioned_against_scipy(monkeypatch, kind, path, offset, scale):
    X, y = make_blobs(600, 7, 3, seed=7)
    X = X * scale + offset
    p = fastgen.fit_gda(X, y, kind)
    A = _with_nan(X[:200], _mask(200, 7, 0.3, 8))
    monkeypatch.setattr(_small, "SMALL_VALUES", (1 << 62) if path == "numpy" else -1)
    jll = fastgen.joint_log_likelihood(p, A, nan_policy="marginalize")
    assert _rel_err(jll, _scipy_jll(p, A)) < 1e-10


def _collinear(eps, seed=11):
    """Data whose columns 0 and 1 differ by eps·noise: the full covariance has
    condition number ~1/eps², any block without one of the two is well-conditioned."""
    X, y = make_blobs(3000, 5, 3, seed=seed)
    X[:, 1] = X[:, 0] + eps * np.random.default_rng(seed).standard_normal(3000)
    return X, y


@pytest.mark.parametrize("kind", ["pooled", "per_class"])
@pytest.mark.parametrize("eps", [5e-5, 5e-7])
@pytest.mark.parametrize("path", ["numpy", "kernels"])
def test_ill_conditioned_full_covariance(monkeypatch, kind, eps, path):
    # condition numbers ~4e8 and ~4e12 (the precision route alone lost 2e-7 and 6e-3
    # relative): rows missing one of the collinear pair have a well-conditioned
    # observed block and match scipy to 1e-10; rows observing both match it to
    # ~ u·cond(Σ_oo), the accuracy of any method on that block
    X, y = _collinear(eps)
    p = fastgen.fit_gda(X, y, kind, tol=0.0)
    covs = p.covariance if kind == "per_class" else p.covariance[None]
    assert min(np.linalg.cond(c) for c in covs) > 1e8
    T = X[:300].copy()
    M = _mask(300, 5, 0.25, 12)
    M[3:150, 1] = True   # column 1 missing, column 0 observed
    M[3:150, 0] = False
    A = _with_nan(T, M)
    monkeypatch.setattr(_small, "SMALL_VALUES", (1 << 62) if path == "numpy" else -1)
    jll = fastgen.joint_log_likelihood(p, A, nan_policy="marginalize")
    ref = _scipy_jll(p, A)
    apart = M[:, 0] != M[:, 1]  # one of the pair missing: Σ_oo well-conditioned
    assert _rel_err(jll[apart], ref[apart]) < 1e-10
    both = ~M[:, 0] & ~M[:, 1]
    cond = max(np.linalg.cond(c) for c in covs)
    assert _rel_err(jll[both], ref[both]) < 1e-14 * cond
    proba = fastgen.predict_proba(p, A, nan_policy="marginalize")
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-12)


def test_many_patterns_and_features_against_scipy(monkeypatch):
    # d beyond the key table (20) and beyond the bit keys (62): sorted keys, then
    # missing_patterns; per-class and pooled
    for d in (24, 64):
        X, y = make_blobs(1500, d, 2, seed=d)
        A = _with_nan(X[:60], _mask(60, d, 0.2, d + 1))
        for kind in ("pooled", "per_class"):
            p = fastgen.fit_gda(X, y, kind, reg=1e-2)
            monkeypatch.setattr(_small, "SMALL_VALUES", -1)
            kern = fastgen.joint_log_likelihood(p, A, nan_policy="marginalize")
            monkeypatch.undo()
            assert _rel_err(kern, _scipy_jll(p, A)) < 1e-10


def test_internal_entry_points_keep_their_signatures():
    # the EM and the sklearn adapters call these: complete rows included, float64
    from fastgen.gda.marginal import marginal_joint_log_likelihood
    from fastgen.naive_bayes.marginal import marginal_joint_log_likelihood as nb_marginal

    X, y = make_blobs(300, 4, 3, seed=20)
    A = _with_nan(X, _mask(300, 4, 0.3, 21))
    M = np.isnan(A)
    for kind in KINDS:
        p = fastgen.fit_gda(X, y, kind)
        for relative in (False, True):
            jll = marginal_joint_log_likelihood(p, A, M, relative=relative)
            assert jll.dtype == np.float64 and jll.shape == (300, 3)
            if not relative:
                assert _rel_err(jll, _scipy_jll(p, A)) < 1e-10
    g = fastgen.fit_gaussian_nb(X, y)
    jll = nb_marginal(g, A, M)
    np.testing.assert_allclose(
        jll, fastgen.joint_log_likelihood(g, A, nan_policy="marginalize"), rtol=1e-13)
    C = sp.csr_matrix(np.floor(np.exp(X)))
    assert nb_marginal(fastgen.fit_multinomial_nb(C, y), C, None).shape == (300, 3)


def test_route_thresholds_are_the_same_on_both_paths():
    from fastgen.gda import marginal
    from fastgen.kernels import missing

    assert marginal.PRECISION_SAFE == missing.PRECISION_SAFE
    assert marginal.PRECISION_LIMIT == missing.PRECISION_LIMIT

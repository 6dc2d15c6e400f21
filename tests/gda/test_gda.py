"""Gaussian discriminant analysis: fit_gda, scoring, linear_discriminant, lda_transform.

Oracles: the plain-numpy formulas in ``reference.py``, scipy.stats, and scikit-learn
(>= 1.9, pinned in the ``test`` extra).  From 1.9 on, scikit-learn's LDA (svd solver)
and QDA use maximum-likelihood covariances (÷n, ÷n_k), which is fastgen's default
``unbiased=False``; the lsqr LDA solver and GaussianNB always did.
"""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import reference as ref
import scipy.stats
import sklearn
from hypothesis import example, given
from hypothesis import strategies as st
from reference import make_blobs, rel_err
from sklearn.covariance import ledoit_wolf, oas
from sklearn.discriminant_analysis import (
    LinearDiscriminantAnalysis,
    QuadraticDiscriminantAnalysis,
)
from sklearn.naive_bayes import GaussianNB

import fastgen

COV_TYPES = ("pooled", "per_class", "diagonal", "pooled_diagonal")
RTOL = 1e-10  # float64 agreement with scikit-learn and the reference formulas

SKLEARN_VERSION = tuple(int(p) for p in sklearn.__version__.split(".")[:2])


def test_sklearn_version_matches_the_covariance_convention():
    # scikit-learn < 1.9 divides by n_k - 1 in QDA / LDA-svd: the comparisons below
    # would then need unbiased=True.
    assert SKLEARN_VERSION >= (1, 9)


def _ref_cov(r, covariance):
    """The reference covariance of each model, as the (K, d, d) or (d, d) matrix."""
    if covariance == "pooled":
        return r["pooled"]
    if covariance == "per_class":
        return r["per_class"]
    if covariance == "diagonal":
        return np.stack([np.diag(v) for v in r["diagonal"]])
    return np.diag(r["pooled_diagonal"])


def _as_full(params):
    """The fitted covariance as (d, d) shared or (K, d, d)."""
    c = params.covariance.astype(np.float64)
    if params.covariance_type == "diagonal":
        return np.stack([np.diag(v) for v in c])
    if params.covariance_type == "pooled_diagonal":
        return np.diag(c)
    return c


# --------------------------------------------------------------------------------------
# against the seed formulas
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("covariance", COV_TYPES)
@pytest.mark.parametrize("d", [5, 40])  # both sides of the loop/BLAS switches (24, 32)
def test_fit_matches_mle_formulas(covariance, d):
    # n > 2·8192: several row groups are merged; classes > 4096 rows: several blocks.
    X, y = make_blobs(17_000, d, 3, seed=d)
    r = ref.mle(X, y)
    p = fastgen.fit_gda(X, y, covariance, var_smoothing=0)
    assert p.covariance_type == covariance
    np.testing.assert_array_equal(p.classes, [0, 1, 2])
    np.testing.assert_array_equal(p.n_per_class, r["counts"])
    assert rel_err(p.priors, r["priors"]) <= RTOL
    assert rel_err(p.means, r["means"]) <= RTOL
    expected = {"pooled": r["pooled"], "per_class": r["per_class"],
                "diagonal": r["diagonal"], "pooled_diagonal": r["pooled_diagonal"]}
    assert p.covariance.shape == expected[covariance].shape
    assert rel_err(p.covariance, expected[covariance]) <= RTOL
    full = _as_full(p)
    full_k = full if full.ndim == 3 else np.broadcast_to(full, (3, d, d))
    # cholesky: lower factors of the covariance; log_det = log|Σ_k|
    L = p.cholesky if covariance in ("pooled", "per_class") else None
    if L is not None:
        Lk = L if L.ndim == 3 else L[None]
        assert np.all(np.triu(Lk, 1) == 0)
        assert rel_err(Lk @ np.swapaxes(Lk, 1, 2), full_k[: Lk.shape[0]]) <= RTOL
    else:
        assert rel_err(p.cholesky ** 2, p.covariance) <= RTOL
    assert rel_err(p.log_det, [np.linalg.slogdet(c)[1] for c in full_k]) <= RTOL
    # scoring vs slogdet/solve on a sample of rows
    Xs = X[:300]
    jll = ref.joint_log_likelihood(Xs, r["priors"], r["means"], _ref_cov(r, covariance))
    assert rel_err(fastgen.joint_log_likelihood(p, Xs), jll) <= RTOL
    lpost = ref.log_posterior(jll)
    np.testing.assert_allclose(fastgen.predict_log_proba(p, Xs), lpost, rtol=0,
                               atol=RTOL * max(1.0, np.max(np.abs(jll))))
    np.testing.assert_allclose(fastgen.predict_proba(p, Xs), np.exp(lpost), rtol=0,
                               atol=RTOL)
    np.testing.assert_array_equal(fastgen.predict(p, Xs), np.argmax(jll, axis=1))


@pytest.mark.parametrize("covariance", COV_TYPES)
def test_joint_log_likelihood_vs_scipy(covariance, blobs3):
    X, y = blobs3
    p = fastgen.fit_gda(X, y, covariance)
    rng = np.random.default_rng(3)
    Xt = np.vstack([X[:20], rng.normal(scale=6.0, size=(20, X.shape[1]))])
    cov = _as_full(p)
    expected = np.empty((Xt.shape[0], 3))
    for k in range(3):
        ck = cov[k] if cov.ndim == 3 else cov
        expected[:, k] = (scipy.stats.multivariate_normal.logpdf(Xt, p.means[k], ck)
                          + np.log(p.priors[k]))
    assert rel_err(fastgen.joint_log_likelihood(p, Xt), expected) <= RTOL


@pytest.mark.parametrize("covariance", COV_TYPES)
def test_log_proba_far_from_data_is_finite_and_exact(covariance, blobs3):
    # posteriors that underflow to 0 in predict_proba must still be exact in log space
    X, y = blobs3
    p = fastgen.fit_gda(X, y, covariance)
    Xt = 4 * np.array([[40.0, -40.0, 40.0, 25.0], [-60.0, 10.0, 0.0, 30.0]])
    jll = fastgen.joint_log_likelihood(p, Xt)
    lp = fastgen.predict_log_proba(p, Xt)
    assert np.all(np.isfinite(lp))
    expected = ref.log_posterior(jll)
    assert np.min(expected) < -745  # exp underflows: log(predict_proba) would be -inf
    np.testing.assert_allclose(lp, expected, rtol=1e-12)
    proba = fastgen.predict_proba(p, Xt)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-15)
    assert np.all(np.isfinite(proba))


@pytest.mark.parametrize("covariance", COV_TYPES)
def test_unbiased_divides_by_n_minus_one_or_n_minus_K(covariance, blobs3):
    X, y = blobs3
    r = ref.mle(X, y)
    W, K = r["counts"], 3
    S = r["scatter"]
    expected = {
        "pooled": S.sum(0) / (W.sum() - K),
        "per_class": S / (W - 1)[:, None, None],
        "diagonal": np.einsum("kjj->kj", S) / (W - 1)[:, None],
        "pooled_diagonal": np.diag(S.sum(0)) / (W.sum() - K),
    }[covariance]
    p = fastgen.fit_gda(X, y, covariance, unbiased=True, var_smoothing=0)
    assert rel_err(p.covariance, expected) <= RTOL
    assert rel_err(p.means, r["means"]) <= RTOL


@pytest.mark.parametrize("covariance", COV_TYPES)
def test_user_priors(covariance, blobs3):
    X, y = blobs3
    pri = np.array([0.5, 0.2, 0.3])
    p = fastgen.fit_gda(X, y, covariance, priors=pri)
    p0 = fastgen.fit_gda(X, y, covariance)
    np.testing.assert_allclose(p.priors, pri, rtol=1e-15)
    np.testing.assert_array_equal(p.means, p0.means)
    np.testing.assert_array_equal(p.covariance, p0.covariance)
    jll0 = fastgen.joint_log_likelihood(p0, X)
    expected = jll0 - np.log(p0.priors) + np.log(pri)
    assert rel_err(fastgen.joint_log_likelihood(p, X), expected) <= RTOL
    np.testing.assert_allclose(fastgen.predict_proba(p, X),
                               np.exp(ref.log_posterior(expected)), rtol=0, atol=RTOL)
    if covariance in ("pooled", "pooled_diagonal"):
        W, b = fastgen.linear_discriminant(p)
        Wr, br = ref.linear_discriminant(pri, p.means, _as_full(p))
        assert rel_err(W, Wr) <= RTOL and rel_err(b, br) <= RTOL


def test_zero_prior_gives_zero_posterior(blobs3):
    X, y = blobs3
    p = fastgen.fit_gda(X, y, priors=[0.0, 0.5, 0.5])
    proba = fastgen.predict_proba(p, X)
    assert np.all(proba[:, 0] == 0)
    assert np.all(fastgen.predict_log_proba(p, X)[:, 0] == -np.inf)
    assert not np.any(fastgen.predict(p, X) == 0)


@pytest.mark.parametrize("covariance", COV_TYPES)
def test_float_shrinkage_matches_formula(covariance, blobs3):
    X, y = blobs3
    a = 0.3
    r = ref.mle(X, y)
    p = fastgen.fit_gda(X, y, covariance, shrinkage=a, var_smoothing=0)
    if covariance == "pooled":
        expected = ref.shrink(r["pooled"], a)
    elif covariance == "per_class":
        expected = np.stack([ref.shrink(c, a) for c in r["per_class"]])
    elif covariance == "diagonal":  # variances shrunk toward their mean
        expected = (1 - a) * r["diagonal"] + a * r["diagonal"].mean(1, keepdims=True)
    else:
        v = r["pooled_diagonal"]
        expected = (1 - a) * v + a * v.mean()
    assert rel_err(p.covariance, expected) <= RTOL


@pytest.mark.parametrize("covariance", COV_TYPES)
def test_reg_matches_formula(covariance, blobs3):
    # shrinkage first, then Σ ← (1 − reg)Σ + reg·I
    X, y = blobs3
    r = ref.mle(X, y)
    p = fastgen.fit_gda(X, y, covariance, reg=0.25, shrinkage=0.1, var_smoothing=0)
    d = X.shape[1]
    S = r[covariance]
    if covariance == "pooled":
        expected = 0.75 * ref.shrink(S, 0.1) + 0.25 * np.eye(d)
    elif covariance == "per_class":
        expected = np.stack([0.75 * ref.shrink(c, 0.1) + 0.25 * np.eye(d) for c in S])
    else:
        expected = 0.75 * (0.9 * S + 0.1 * S.mean(axis=-1, keepdims=True)) + 0.25
    assert rel_err(p.covariance, expected) <= RTOL


def test_reg_rescues_a_one_sample_class(blobs3):
    X, y = blobs3
    y = y.copy()
    y[0] = 7  # class 7 has a single row
    p = fastgen.fit_gda(X, y, "per_class", reg=0.5)
    np.testing.assert_allclose(p.covariance[-1], 0.5 * np.eye(X.shape[1]), rtol=0, atol=0)
    np.testing.assert_array_equal(p.means[-1], X[0])
    assert np.all(np.isfinite(fastgen.predict_log_proba(p, X)))


@pytest.mark.parametrize("method", ["ledoit-wolf", "oas"])
@pytest.mark.parametrize("covariance", ["pooled", "per_class"])
@pytest.mark.parametrize("d", [4, 30])
def test_ledoit_wolf_and_oas_vs_sklearn(method, covariance, d):
    """The estimated shrinkage is scikit-learn's estimator applied to the within-class
    standardised rows Z/s (pooled s for the pooled model, each class's own s per class),
    rescaled: Σ = D·((1 − a)R + a·I)·D, the target diag(Σ)."""
    X, y = make_blobs(240, d, 3, seed=7)
    X = X * np.logspace(-3, 3, d)  # units that differ by 1e6
    p = fastgen.fit_gda(X, y, covariance, shrinkage=method)
    r = ref.mle(X, y)
    Z = X - r["means"][y]
    sk = {"ledoit-wolf": ledoit_wolf, "oas": oas}[method]
    ours = {"ledoit-wolf": ref.ledoit_wolf_intensity, "oas": ref.oas_intensity}[method]
    groups = [Z] if covariance == "pooled" else [Z[y == k] for k in range(3)]
    for k, Zk in enumerate(groups):
        s = np.sqrt(np.mean(Zk * Zk, axis=0))
        cov, a = sk(Zk / s, assume_centered=True)
        assert 0 < a < 1
        assert abs(ours(Zk / s) - a) <= RTOL * a
        got = p.covariance if covariance == "pooled" else p.covariance[k]
        assert rel_err(got, s[:, None] * cov * s[None, :]) <= RTOL
        assert rel_err(np.diag(got), s * s) <= RTOL  # the variances are not shrunk


# --------------------------------------------------------------------------------------
# against scikit-learn
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("K", [2, 3, 5])
def test_lda_lsqr_parity(K):
    X, y = make_blobs(60 * K, 4, K, seed=K)
    sk = LinearDiscriminantAnalysis(solver="lsqr", store_covariance=True).fit(X, y)
    p = fastgen.fit_gda(X, y, "pooled")
    assert rel_err(p.means, sk.means_) <= RTOL
    assert rel_err(p.covariance, sk.covariance_) <= RTOL
    assert rel_err(p.priors, sk.priors_) <= RTOL
    W, b = fastgen.linear_discriminant(p)
    assert W.shape == (4, K) and b.shape == (K,)
    if K == 2:  # scikit-learn keeps the difference of the two discriminants
        assert rel_err(W[:, 1] - W[:, 0], sk.coef_[0]) <= RTOL
        assert rel_err(b[1] - b[0], sk.intercept_) <= RTOL
    else:
        assert rel_err(W.T, sk.coef_) <= RTOL
        assert rel_err(b, sk.intercept_) <= RTOL
    Wr, br = ref.linear_discriminant(p.priors, p.means, p.covariance)
    assert rel_err(W, Wr) <= RTOL and rel_err(b, br) <= RTOL
    Xt = np.vstack([X, np.random.default_rng(0).normal(scale=5, size=(40, 4))])
    np.testing.assert_allclose(fastgen.predict_proba(p, Xt), sk.predict_proba(Xt),
                               rtol=0, atol=RTOL)
    np.testing.assert_array_equal(fastgen.predict(p, Xt), sk.predict(Xt))
    # the linear discriminant reproduces the posteriors
    np.testing.assert_allclose(np.exp(ref.log_posterior(Xt @ W + b)),
                               fastgen.predict_proba(p, Xt), rtol=0, atol=RTOL)


@pytest.mark.parametrize("K,d,n_components,priors", [
    (3, 4, None, None), (4, 5, None, None), (4, 5, 1, None), (5, 3, 2, None),
    (2, 3, None, None), (3, 4, None, [0.2, 0.5, 0.3]),
])
def test_lda_svd_transform_parity(K, d, n_components, priors):
    X, y = make_blobs(50 * K, d, K, seed=10 + K)
    sk = LinearDiscriminantAnalysis(solver="svd", n_components=n_components,
                                    priors=priors).fit(X, y)
    p = fastgen.fit_gda(X, y, "pooled", priors=priors)
    T = fastgen.lda_transform(p, X, n_components=n_components)
    Ts = sk.transform(X)
    assert T.shape == Ts.shape == (X.shape[0], n_components or min(K - 1, d))
    signs = np.sign(np.sum(T * Ts, axis=0))
    assert rel_err(T * signs, Ts) <= RTOL
    # the directions whiten the pooled within-class covariance
    np.testing.assert_allclose(
        np.cov(fastgen.lda_transform(p, X - p.means[y] + p.means[0], n_components).T,
               bias=True).reshape(T.shape[1], T.shape[1]),
        np.eye(T.shape[1]), atol=1e-10)


@pytest.mark.parametrize("reg", [0.0, 0.3])
def test_qda_parity(reg):
    X, y = make_blobs(240, 4, 3, seed=21)
    sk = QuadraticDiscriminantAnalysis(store_covariance=True, reg_param=reg).fit(X, y)
    p = fastgen.fit_gda(X, y, "per_class", reg=reg)
    assert rel_err(p.means, sk.means_) <= RTOL
    for k in range(3):
        assert rel_err(p.covariance[k], sk.covariance_[k]) <= RTOL
    Xt = np.vstack([X, np.random.default_rng(1).normal(scale=4, size=(40, 4))])
    np.testing.assert_allclose(fastgen.predict_proba(p, Xt), sk.predict_proba(Xt),
                               rtol=0, atol=RTOL)
    np.testing.assert_array_equal(fastgen.predict(p, Xt), sk.predict(Xt))


def test_gaussian_nb_parity():
    X, y = make_blobs(200, 6, 4, seed=5)
    sk = GaussianNB(var_smoothing=0.0).fit(X, y)
    p = fastgen.fit_gda(X, y, "diagonal", var_smoothing=0)
    assert rel_err(p.means, sk.theta_) <= RTOL
    assert rel_err(p.covariance, sk.var_) <= RTOL
    assert rel_err(p.priors, sk.class_prior_) <= RTOL
    Xt = np.vstack([X, np.random.default_rng(2).normal(scale=5, size=(40, 6))])
    np.testing.assert_allclose(fastgen.predict_proba(p, Xt), sk.predict_proba(Xt),
                               rtol=0, atol=RTOL)
    assert rel_err(fastgen.predict_log_proba(p, X), sk.predict_log_proba(X)) <= RTOL


def test_pooled_diagonal_is_naive_bayes_with_shared_variances(blobs3):
    X, y = blobs3
    r = ref.mle(X, y)
    p = fastgen.fit_gda(X, y, "pooled_diagonal", var_smoothing=0)
    v = np.diag(r["pooled"])
    assert rel_err(p.covariance, v) <= RTOL
    assert rel_err(p.log_det, np.full(3, np.sum(np.log(v)))) <= RTOL
    W, b = fastgen.linear_discriminant(p)
    Wr = r["means"].T / v[:, None]
    br = -0.5 * np.sum(r["means"] ** 2 / v, axis=1) + np.log(r["priors"])
    assert rel_err(W, Wr) <= RTOL and rel_err(b, br) <= RTOL
    np.testing.assert_allclose(fastgen.predict_proba(p, X),
                               np.exp(ref.log_posterior(X @ Wr + br)), rtol=0, atol=RTOL)
    # the boundary is linear: equals the GaussianNB posterior with tied variances
    jll = ref.joint_log_likelihood(X, r["priors"], r["means"], np.diag(v))
    assert rel_err(fastgen.joint_log_likelihood(p, X), jll) <= RTOL


# --------------------------------------------------------------------------------------
# properties
# --------------------------------------------------------------------------------------
def _log_det_terms(p):
    """(K, d) the terms 2·log L_jj whose sum per class is log|Σ_k|."""
    L = p.cholesky.astype(np.float64)
    diag = np.diagonal(L, axis1=-2, axis2=-1) if p.covariance_type in (
        "pooled", "per_class") else L
    return np.broadcast_to(2.0 * np.log(diag), (p.n_classes, p.n_features_in))


def _assert_params_close(a, b, rtol):
    np.testing.assert_array_equal(a.classes, b.classes)
    assert a.covariance_type == b.covariance_type
    for f in ("priors", "means", "covariance", "cholesky", "n_per_class"):
        assert rel_err(getattr(a, f), getattr(b, f)) <= rtol, f
    # log|Σ| = Σ_j 2·log L_jj can be ~0 while its terms are not: each term carries an
    # absolute error of about 2·(relative error of L_jj), so the error of the sum scales
    # with the number and size of the terms summed, not with the sum
    scale = np.abs(_log_det_terms(b)).sum(axis=1) + 2 * b.n_features_in
    assert np.all(np.abs(a.log_det - b.log_det) <= rtol * scale), "log_det"


def _assert_params_identical(a, b):
    np.testing.assert_array_equal(a.classes, b.classes)
    assert a.covariance_type == b.covariance_type
    for f in ("priors", "means", "covariance", "cholesky", "log_det", "n_per_class"):
        x, z = getattr(a, f), getattr(b, f)
        assert x.dtype == z.dtype and x.shape == z.shape and x.tobytes() == z.tobytes(), f


@given(reps=st.lists(st.integers(0, 4), min_size=40, max_size=40),
       covariance=st.sampled_from(COV_TYPES))
# failures found before log_det's tolerance was scaled to its terms (log|Σ| ≈ −4e-5, 7e-4)
@example(reps=[3, 1, 1, 3, 4, 1, 2, 1, 4, 3, 1, 3, 3, 4, 4, 3, 0, 3, 1, 3, 4, 0, 3, 3, 2, 2,
               0, 1, 2, 1, 2, 0, 4, 1, 0, 1, 2, 2, 4, 0], covariance="pooled_diagonal")
@example(reps=[4, 3, 1, 4, 1, 4, 2, 4, 3, 3, 1, 2, 1, 1, 3, 0, 4, 2, 4, 4, 0, 4, 4, 0, 4, 3,
               1, 1, 0, 1, 4, 3, 4, 2, 4, 0, 3, 3, 2, 0], covariance="pooled_diagonal")
def test_integer_weights_equal_repeated_rows(reps, covariance):
    X, y = make_blobs(40, 3, 2, seed=4)
    reps = np.array(reps)
    for k in range(2):  # every class keeps d + 2 distinct rows: covariances stay regular
        idx = np.flatnonzero(y == k)[:5]
        reps[idx] = np.maximum(reps[idx], 1)
    p_w = fastgen.fit_gda(X, y, covariance, sample_weight=reps)
    p_r = fastgen.fit_gda(np.repeat(X, reps, axis=0), np.repeat(y, reps), covariance)
    _assert_params_close(p_w, p_r, 1e-12)


@pytest.mark.parametrize("covariance", COV_TYPES)
def test_weights_scale_invariance(covariance):
    # the MLE depends on the weights only through their ratios
    X, y = make_blobs(24, 3, 3, seed=8)
    p1 = fastgen.fit_gda(X, y, covariance, sample_weight=np.full(24, 1.0))
    p2 = fastgen.fit_gda(X, y, covariance, sample_weight=np.full(24, 0.1))
    for f in ("priors", "means", "covariance", "log_det"):
        assert rel_err(getattr(p2, f), getattr(p1, f)) <= 1e-12, f
    np.testing.assert_allclose(p2.n_per_class, 0.1 * p1.n_per_class, rtol=1e-12)


def test_zero_weight_rows_are_ignored(blobs3):
    X, y = blobs3
    w = np.ones(len(y))
    w[::3] = 0.0
    for covariance in COV_TYPES:
        a = fastgen.fit_gda(X, y, covariance, sample_weight=w)
        b = fastgen.fit_gda(X[w > 0], y[w > 0], covariance)
        _assert_params_close(a, b, 1e-12)


def test_many_classes_pooled():
    K, d, n = 2000, 20, 20_000
    rng = np.random.default_rng(11)
    y = np.arange(n) % K
    rng.shuffle(y)
    centres = 10 * rng.standard_normal((K, d))
    X = centres[y] + rng.standard_normal((n, d))
    p = fastgen.fit_gda(X, y, "pooled")
    cnt = np.bincount(y, minlength=K).astype(float)
    means = np.zeros((K, d))
    np.add.at(means, y, X)
    means /= cnt[:, None]
    Z = X - means[y]
    cov = Z.T @ Z / n
    assert p.covariance.shape == (d, d)
    assert rel_err(p.means, means) <= RTOL
    assert rel_err(p.covariance, cov) <= RTOL
    Xt = X[:50]
    jll = ref.joint_log_likelihood(Xt, cnt / n, means, cov)
    assert rel_err(fastgen.joint_log_likelihood(p, Xt), jll) <= RTOL
    np.testing.assert_allclose(fastgen.predict_log_proba(p, Xt), ref.log_posterior(jll),
                               rtol=0, atol=1e-9)


@pytest.mark.parametrize("covariance", ["pooled", "per_class", "diagonal"])
@pytest.mark.parametrize("d", [3, 30])
def test_extreme_offset(covariance, d):
    # |mean|/std = 1e8: the Gram trick X'X - n·m·mᵀ would be hundreds of times wrong
    X, y = make_blobs(17_000, d, 3, seed=30 + d, offset=1e8, correlated=False)
    assert np.min(np.abs(X)) > 0.9e8
    r = ref.mle(X, y)
    p = fastgen.fit_gda(X, y, covariance, var_smoothing=0)
    assert rel_err(p.means, r["means"]) <= 1e-15
    assert rel_err(p.covariance, r[covariance]) <= 1e-8
    # scoring centres first: still exact to working precision
    Xt = X[:200]
    jll = ref.joint_log_likelihood(Xt, r["priors"], r["means"], _ref_cov(r, covariance))
    assert rel_err(fastgen.joint_log_likelihood(p, Xt), jll) <= 1e-8


@pytest.mark.parametrize("covariance", COV_TYPES)
def test_float32_in_float32_out(covariance):
    X, y = make_blobs(3000, 6, 3, seed=9, dtype=np.float32)
    eps = np.finfo(np.float32).eps
    p32 = fastgen.fit_gda(X, y, covariance)
    p64 = fastgen.fit_gda(X.astype(np.float64), y, covariance)
    for f in ("priors", "means", "covariance", "cholesky", "log_det", "n_per_class"):
        assert getattr(p32, f).dtype == np.float32, f
        # moments are accumulated in float64, then rounded once
        assert rel_err(getattr(p32, f), getattr(p64, f)) <= 4 * eps, f
    Xt = X[:500]
    jll32 = fastgen.joint_log_likelihood(p32, Xt)
    lp32 = fastgen.predict_log_proba(p32, Xt)
    pr32 = fastgen.predict_proba(p32, Xt)
    for out in (jll32, lp32, pr32):
        assert out.dtype == np.float32
    tol = 64 * eps  # a few ulps per term of a d-term quadratic form
    jll64 = fastgen.joint_log_likelihood(p64, Xt.astype(np.float64))
    assert rel_err(jll32, jll64) <= tol
    np.testing.assert_allclose(pr32, fastgen.predict_proba(p64, Xt), rtol=0,
                               atol=tol * np.max(np.abs(jll64)))
    # float64 X scored with float32 params computes in float32
    assert fastgen.predict_proba(p32, Xt.astype(np.float64)).dtype == np.float32
    if covariance in ("pooled", "pooled_diagonal"):
        W, b = fastgen.linear_discriminant(p32)
        assert W.dtype == b.dtype == np.float32
        W64, b64 = fastgen.linear_discriminant(p64)
        assert rel_err(W, W64) <= tol and rel_err(b, b64) <= tol
        T = fastgen.lda_transform(p32, Xt)
        assert T.dtype == np.float32
        assert rel_err(np.abs(T), np.abs(fastgen.lda_transform(p64, Xt))) <= tol


def test_one_class_is_a_density_estimate(blobs3):
    # fitting one class is allowed (a Gaussian density); posteriors are trivially 1
    X, _ = blobs3
    y = np.full(len(X), "only")
    p = fastgen.fit_gda(X, y, "per_class")
    np.testing.assert_array_equal(p.classes, ["only"])
    np.testing.assert_array_equal(fastgen.predict_proba(p, X), 1.0)
    np.testing.assert_array_equal(fastgen.predict_log_proba(p, X), 0.0)
    np.testing.assert_array_equal(fastgen.predict(p, X), y)
    jll = fastgen.joint_log_likelihood(p, X)[:, 0]
    expected = scipy.stats.multivariate_normal.logpdf(X, X.mean(0), np.cov(X.T, bias=True))
    assert rel_err(jll, expected) <= RTOL
    with pytest.raises(ValueError, match="n_components"):
        fastgen.lda_transform(fastgen.fit_gda(X, y, "pooled"), X)


def test_linear_discriminant_binary_logistic_form(blobs2):
    X, y = blobs2
    p = fastgen.fit_gda(X, y, "pooled")
    W, b = fastgen.linear_discriminant(p)
    z = X @ (W[:, 1] - W[:, 0]) + b[1] - b[0]
    np.testing.assert_allclose(fastgen.predict_proba(p, X)[:, 1], 1 / (1 + np.exp(-z)),
                               rtol=0, atol=RTOL)


# --------------------------------------------------------------------------------------
# valid but unusual inputs give the canonical result
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("covariance", ["pooled", "per_class"])
def test_matrix_zoo_same_result(dense_zoo, covariance, blobs3):
    # float32/float64, C/F order, read-only: bitwise the result of the C-ordered array
    X, y = blobs3
    Xz = dense_zoo(X)
    Xc = dense_zoo.canonical(X)
    base = fastgen.fit_gda(Xc, y, covariance)
    got = fastgen.fit_gda(Xz, y, covariance)
    assert got.means.dtype == dense_zoo.dtype
    _assert_params_identical(got, base)
    assert fastgen.predict_proba(got, Xz).tobytes() == fastgen.predict_proba(base, Xc).tobytes()
    assert Xz.flags.writeable is not dense_zoo.readonly
    np.testing.assert_array_equal(Xz, Xc)  # untouched


@pytest.mark.parametrize("layout", ["strided", "list"])
def test_input_layouts_same_result(layout, blobs3):
    X, y = blobs3
    Xz = np.repeat(X, 2, axis=1)[:, ::2] if layout == "strided" else X.tolist()
    base = fastgen.fit_gda(X, y, "pooled")
    got = fastgen.fit_gda(Xz, y, "pooled")
    _assert_params_identical(got, base)
    assert fastgen.predict_proba(got, Xz).tobytes() == fastgen.predict_proba(base, X).tobytes()


def test_memmap_readonly(tmp_path, blobs3):
    X, y = blobs3
    path = tmp_path / "X.dat"
    mm = np.memmap(path, dtype=np.float64, mode="w+", shape=X.shape)
    mm[:] = X
    mm.flush()
    del mm
    Xm = np.memmap(path, dtype=np.float64, mode="r", shape=X.shape)
    base = fastgen.fit_gda(X, y, "pooled")
    got = fastgen.fit_gda(Xm, y, "pooled")
    _assert_params_identical(got, base)
    assert fastgen.predict_proba(got, Xm).tobytes() == fastgen.predict_proba(base, X).tobytes()
    del Xm


@pytest.mark.parametrize("covariance", COV_TYPES)
def test_int_and_bool_X(covariance):
    rng = np.random.default_rng(6)
    y = np.arange(90) % 3
    Xi = rng.integers(-5, 6, size=(90, 3)) + 3 * y[:, None]
    base = fastgen.fit_gda(Xi.astype(np.float64), y, covariance)
    _assert_params_identical(fastgen.fit_gda(Xi, y, covariance), base)
    _assert_params_identical(fastgen.fit_gda(Xi.astype(np.int32), y, covariance), base)
    assert fastgen.predict_proba(base, Xi).tobytes() == \
        fastgen.predict_proba(base, Xi.astype(np.float64)).tobytes()
    Xb = rng.random((90, 3)) < 0.5
    Xb[y == 0, 0] = rng.random(30) < 0.1
    if covariance in ("pooled", "pooled_diagonal"):
        _assert_params_identical(fastgen.fit_gda(Xb, y, covariance, reg=0.01),
                                 fastgen.fit_gda(Xb.astype(float), y, covariance, reg=0.01))


@pytest.mark.parametrize("labels", [
    np.array([10, 20, 30]),
    np.array([-7, 0, 1_000_000_000_000]),
    np.array(["ant", "bee", "cat"]),
    np.array([0.5, 1.5, 2.5]),
    np.array([False, True]),
    np.array(["ant", "bee", "cat"], dtype=object),
    np.array([3, 1, 2], dtype=object),
], ids=["int", "int-wide", "str", "float", "bool", "object-str", "object-int"])
def test_label_types(labels, blobs3):
    X, y = blobs3
    K = labels.shape[0]
    y = y % K
    labels = np.sort(labels)
    base = fastgen.fit_gda(X, y)
    p = fastgen.fit_gda(X, labels[y])
    np.testing.assert_array_equal(p.classes, np.sort(labels))
    assert p.classes.dtype != object  # params hold no object arrays (npz without pickle)
    for f in ("priors", "means", "covariance", "cholesky", "log_det", "n_per_class"):
        assert getattr(p, f).tobytes() == getattr(base, f).tobytes()
    np.testing.assert_array_equal(fastgen.predict(p, X), labels[fastgen.predict(base, X)])
    # labels as a Python list and as a column vector
    _assert_params_identical(fastgen.fit_gda(X, list(labels[y])), p)
    _assert_params_identical(fastgen.fit_gda(X, labels[y][:, None]), p)


def test_caller_arrays_unchanged_by_fit_and_score(blobs3):
    X, y = blobs3
    X, y = X.copy(), y.copy()
    w = np.linspace(0.5, 2, len(y))
    before = [a.tobytes() for a in (X, y, w)]
    for covariance in COV_TYPES:
        p = fastgen.fit_gda(X, y, covariance, sample_weight=w)
        fastgen.predict_proba(p, X)
        fastgen.predict_log_proba(p, X)
        fastgen.joint_log_likelihood(p, X)
    assert [a.tobytes() for a in (X, y, w)] == before


def test_float32_params_reject_float64_values_out_of_range():
    X, y = make_blobs(60, 3, 3, seed=1, dtype=np.float32)
    p = fastgen.fit_gda(X, y)
    Xt = np.ones((2, 3))
    Xt[1, 2] = 1e39
    with pytest.raises(ValueError, match=r"row 1, column 2.*float32"):
        fastgen.predict_proba(p, Xt)


def test_params_are_frozen(blobs3):
    X, y = blobs3
    p = fastgen.fit_gda(X, y)
    with pytest.raises(AttributeError):
        p.means = p.means * 2


# --------------------------------------------------------------------------------------
# thread-count determinism (fresh processes)
# --------------------------------------------------------------------------------------
_DETERMINISM_SCRIPT = textwrap.dedent("""
    import hashlib, json, sys
    import numpy as np
    import fastgen
    sys.path.insert(0, sys.argv[1])
    from reference import make_blobs
    out = {}
    for d in (6, 40):
        X, y = make_blobs(20_000, d, 4, seed=d)   # 3 row groups; 2 blocks per class
        w = np.linspace(0.5, 1.5, len(y))
        for cov in ("pooled", "per_class", "diagonal"):
            p = fastgen.fit_gda(X, y, cov, sample_weight=w if d == 6 else None)
            h = hashlib.sha256()
            for f in ("priors", "means", "covariance", "cholesky", "log_det"):
                h.update(getattr(p, f).tobytes())
            h.update(fastgen.predict_proba(p, X).tobytes())
            h.update(fastgen.joint_log_likelihood(p, X).tobytes())
            out[f"{cov}-{d}"] = h.hexdigest()
    print(json.dumps(out))
""")


def test_results_do_not_depend_on_thread_count():
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # tests/
    root = os.path.dirname(here)
    digests = []
    for threads in ("1", "2"):
        env = dict(os.environ, NUMBA_NUM_THREADS=threads, PYTHONPATH=root)
        res = subprocess.run([sys.executable, "-c", _DETERMINISM_SCRIPT, here], env=env,
                             capture_output=True, text=True, timeout=900, cwd=root)
        assert res.returncode == 0, res.stderr
        digests.append(json.loads(res.stdout.strip().splitlines()[-1]))
    assert digests[0] == digests[1]
    assert len(digests[0]) == 6


# --------------------------------------------------------------------------------------
# scoring detects non-finite X through the scores (no separate scan of X)
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("covariance", COV_TYPES)
@pytest.mark.parametrize("score", [fastgen.predict, fastgen.predict_proba,
                                   fastgen.predict_log_proba, fastgen.joint_log_likelihood])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_scoring_names_the_nonfinite_entry(covariance, score, bad):
    X, y = make_blobs(400, 5, 3, seed=4)
    p = fastgen.fit_gda(X, y, covariance, priors=[0.5, 0.5, 0.0])  # a zero prior: -inf
    Xt = X.copy()
    Xt[137, 3] = bad
    before = Xt.tobytes()
    what = "NaN" if np.isnan(bad) else "infinity"
    with pytest.raises(ValueError, match=f"X contains {what} at row 137, column 3"):
        score(p, Xt)
    assert Xt.tobytes() == before
    assert np.all(np.isfinite(fastgen.predict_log_proba(p, X)[:, :2]))


@pytest.mark.parametrize("d,K", [(1, 2), (3, 7), (16, 10), (30, 3), (64, 5)])
def test_pooled_posteriors_by_tiles_equal_the_two_pass_path(d, K):
    """The pooled posteriors in one pass by transposed tiles (d ≤ LINEAR_TILE_MAX_D;
    both tile sizes, several work items, a short last tile) against the BLAS scores
    normalised by finish_all_rows, and against scikit-learn."""
    from fastgen.gda.scoring import raw_scores
    from fastgen.kernels import tiles
    from fastgen.kernels.special import MODE_LOG_PROBA, MODE_PROBA, finish_all_rows

    assert d <= tiles.LINEAR_TILE_MAX_D
    rng = np.random.default_rng(d * 100 + K)
    n = 2 * 8192 + 77
    y = np.arange(n) % K
    X = rng.normal(size=(n, d)) + 1.5 * rng.normal(size=(K, d))[y] + 40.0
    m = fastgen.fit_gda(X, y)
    X0 = X.copy()
    for mode, public in ((MODE_PROBA, fastgen.predict_proba),
                         (MODE_LOG_PROBA, fastgen.predict_log_proba)):
        got = public(m, X)
        two = raw_scores(m, X, mode)
        assert finish_all_rows(two, mode) == 0
        np.testing.assert_allclose(got, two, rtol=1e-12, atol=1e-13)
    np.testing.assert_array_equal(X, X0)
    sk = LinearDiscriminantAnalysis(solver="lsqr").fit(X, y)
    np.testing.assert_allclose(fastgen.predict_proba(m, X), sk.predict_proba(X), atol=1e-9)

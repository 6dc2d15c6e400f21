"""Likelihood-ratio p-values and profile intervals under column offsets and units.

Under an offset c the user's intercept is the log-odds at x = 0, far from the data, so
its test differs from the one at c = 0; the slopes' are the same numbers.  Every
intercept result is checked against an independent plain-numpy transcription: the
constrained maximum of l* = l + pw·log det I (pw = 0: the ordinary likelihood, ½:
Firth's) with the user's intercept fixed, found by Fisher scoring (Newton's method for
pw = 0) on the columns centred by the reference's own means, with the constraint
b_c − Σ_j m_j β_j = v held by the KKT system.  A p-value must agree with the
reference's, and at each returned bound v the reference's statistic must equal the
χ² quantile.  Tolerances: a few parts in 1e6 of the statistic, plus float64's
resolution of the offset over the spread (eps·c/s), which is all the data still hold.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.special
import scipy.stats

import fastgen

EPS = np.finfo(np.float64).eps
CRIT = scipy.stats.chi2.isf(0.05, 1)


def _binary_lstar(Z, y, w, theta, pw):
    """l*, its modified score and the information at θ on the design Z."""
    eta = Z @ theta
    pi = scipy.special.expit(eta)
    u = w * pi * scipy.special.expit(-eta)
    info = Z.T @ (u[:, None] * Z)
    llf = float(np.sum(w * (y * eta - np.logaddexp(0.0, eta))))
    resid = w * (y - pi)
    if pw > 0.0:
        h = u * np.einsum("ij,ij->i", Z @ np.linalg.inv(info), Z)
        resid = resid + 2.0 * pw * h * (0.5 - pi)
        llf += pw * np.linalg.slogdet(info)[1]
    return llf, Z.T @ resid, info


def _multinomial_l(Z, Y, w, theta):
    """The softmax log-likelihood (class 0 the reference), score and information at θ
    (K−1 equations of Z's columns, flattened per equation)."""
    m = Y.shape[1] - 1
    p = Z.shape[1]
    B = theta.reshape(m, p)
    eta = np.column_stack([np.zeros(Z.shape[0]), Z @ B.T])
    lse = scipy.special.logsumexp(eta, axis=1)
    P = np.exp(eta - lse[:, None])[:, 1:]
    llf = float(np.sum(w * (np.sum(Y * eta, axis=1) - lse)))
    score = ((w[:, None] * (Y[:, 1:] - P)).T @ Z).ravel()
    info = np.zeros((m * p, m * p))
    for k in range(m):
        for q in range(m):
            c = w * (P[:, k] * (k == q) - P[:, k] * P[:, q])
            info[k * p:(k + 1) * p, q * p:(q + 1) * p] = Z.T @ (c[:, None] * Z)
    return llf, score, info


def _reference(evaluate, q, a=None, v=0.0):
    """max of the objective (``evaluate(θ) -> (value, score, information)``) over θ,
    with aᵀθ = v when ``a`` is given: Fisher scoring with step halving, the KKT system
    keeping the constraint; the value at the end."""
    theta = np.zeros(q)
    if a is not None:
        theta = a * (v / float(a @ a))
    val, U, info = evaluate(theta)
    for _ in range(500):
        if a is None:
            step = np.linalg.solve(info, U)
        else:
            an = a / np.linalg.norm(a)
            K = np.block([[info, an[:, None]], [an[None, :], np.zeros((1, 1))]])
            step = np.linalg.solve(K, np.r_[U, 0.0])[:q]
        dec = 0.5 * float(U @ step)
        if dec < 1e-20 * max(1.0, abs(val)):
            break
        t = 1.0
        while True:
            new = evaluate(theta + t * step)
            if new[0] >= val - 1e-13 * abs(val) or t < 1e-8:
                break
            t *= 0.5
        theta = theta + t * step
        val, U, info = new
    return val


def _centred(Xo, w):
    m = np.average(Xo, axis=0, weights=w)
    return m, np.column_stack([Xo - m, np.ones(Xo.shape[0])])


def _binary_reference(Xo, y, w, pw):
    """``(l*max, l*_prof)``: the maximum, and the profile of the user's intercept."""
    m, Z = _centred(Xo, w)
    q = Z.shape[1]

    def ev(t):
        return _binary_lstar(Z, y, w, t, pw)

    a = np.r_[-m, 1.0]
    return _reference(ev, q), lambda v: _reference(ev, q, a, v)


def _data(seed, n=160, d=2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    eta = X @ np.linspace(0.8, -0.5, d) - 0.7
    y = (rng.random(n) < scipy.special.expit(eta)).astype(np.int64)
    return X, y


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no bound may fail, no fit stop unconverged
        return fn(*args, **kwargs)


def _fit_and_infer(Xo, y, w, penalty, csr):
    Xin = sp.csr_matrix(Xo) if csr else Xo
    kw = {} if penalty is None else {"penalty": penalty}
    mdl = fastgen.fit_logistic(Xin, y, sample_weight=w, **kw)
    res = fastgen.logistic_inference(mdl, Xin, y, sample_weight=w, ci="profile")
    return mdl, res


def _check_intercept(res, lmax, prof, c, s):
    """The intercept's LR p-value and both profile bounds against the reference."""
    slack = 1e-5 + 64 * EPS * abs(c) / s * CRIT
    stat0 = 2.0 * (lmax - prof(0.0))
    p_ref = scipy.stats.chi2.sf(stat0, 1)
    # the p-value through the statistic (p is flat where the statistic is large)
    stat_fg = scipy.stats.chi2.isf(res.lr_pvalues[0], 1)
    assert res.lr_pvalues[0] > 0.0
    assert abs(stat_fg - stat0) <= slack * max(1.0, stat0), (res.lr_pvalues[0], p_ref)
    lo, hi = res.profile_ci[0]
    assert np.isfinite(lo) and np.isfinite(hi) and lo < res.params[0] < hi
    for v in (lo, hi):
        assert abs(2.0 * (lmax - prof(v)) - CRIT) <= slack * CRIT


OFFSETS = [0.0, 1e2, 1e3, 1e4, 1e6, 1e8]


@pytest.mark.parametrize("penalty", [None, "firth"])
@pytest.mark.parametrize("scale", [1.0, 1e-3, 250.0])
@pytest.mark.parametrize("csr,weighted", [(False, False), (True, False), (False, True)])
def test_binary_intercept_tests_against_reference(penalty, scale, csr, weighted):
    """Plain and Firth, units, CSR and weights: every offset's intercept p-value and
    bounds are the reference's, and the slopes' tests and intervals (in the columns'
    units) do not move with the offset."""
    X, y = _data(seed=int(scale * 7) % 13 + 3 * csr + weighted)
    n = X.shape[0]
    w = (np.random.default_rng(5).integers(1, 4, size=n).astype(np.float64)
         if weighted else None)
    wr = np.ones(n) if w is None else w
    pw = 0.5 if penalty == "firth" else 0.0
    base = None
    for c in OFFSETS:
        Xo = X * scale + c
        if c and EPS * c / scale > 1e-7:
            continue  # float64 no longer holds the columns to the tests' tolerance
        _, res = _quiet(_fit_and_infer, Xo, y, w, penalty, csr)
        lmax, prof = _binary_reference(Xo, y.astype(np.float64), wr, pw)
        _check_intercept(res, lmax, prof, c, scale)
        if base is None:
            base = res
        else:
            tol = 1e-6 + 1e3 * EPS * c / scale
            np.testing.assert_allclose(res.lr_pvalues[1:], base.lr_pvalues[1:],
                                       rtol=tol, atol=1e-12)
            np.testing.assert_allclose(res.profile_ci[1:], base.profile_ci[1:], rtol=tol)


def test_offset_1e8_unit_spread():
    """At an offset of 1e8 over a spread of 1 float64 still holds the columns to about
    1e-8: the intercept's test and bounds are found (no 'values too large', no 0.0),
    and agree with the reference to that resolution."""
    X, y = _data(seed=0, n=100)
    Xo = X + 1e8
    for penalty, pw in ((None, 0.0), ("firth", 0.5)):
        _, res = _quiet(_fit_and_infer, Xo, y, None, penalty, False)
        lmax, prof = _binary_reference(Xo, y.astype(np.float64), np.ones(100), pw)
        _check_intercept(res, lmax, prof, 1e8, 1.0)


def test_the_reported_example():
    """The data of the report: at 1e3 and 1e8 no error; at every offset the intercept's
    LR p-value is near the Wald one (a regular likelihood), never 0."""
    rng = np.random.default_rng(0)
    n = 100
    X = rng.normal(size=(n, 2))
    y = (rng.random(n) < 1 / (1 + np.exp(-(0.8 * X[:, 0] - 0.5 * X[:, 1] - 1.0)))
         ).astype(int)
    slopes = None
    for c in (0.0, 1e3, 1e4, 1e6, 1e8):
        m = fastgen.fit_logistic(X + c, y)
        r = _quiet(fastgen.logistic_inference, m, X + c, y, ci="profile")
        lmax, prof = _binary_reference(X + c, y.astype(np.float64), np.ones(n), 0.0)
        _check_intercept(r, lmax, prof, c, 1.0)
        if c:
            assert 0.5 < r.lr_pvalues[0] / r.pvalues[0] < 2.0
        if slopes is None:
            slopes = r.lr_pvalues[1:]
        np.testing.assert_allclose(r.lr_pvalues[1:], slopes, rtol=1e-6)


@pytest.mark.parametrize("c", [0.0, 1e3, 1e6])
@pytest.mark.parametrize("csr", [False, True])
def test_multinomial_intercepts_against_reference(c, csr):
    """Every equation's intercept (user's coordinates) against the softmax reference;
    slopes the same across offsets (checked against the c = 0 fit)."""
    rng = np.random.default_rng(11)
    n, K = 240, 3
    X = rng.normal(size=(n, 2))
    y = np.argmax(X @ np.array([[0.0, 1.0, -0.6], [0.0, -0.4, 0.9]])
                  + np.array([0.0, -0.3, 0.2]) + rng.gumbel(size=(n, K)), axis=1)
    w = rng.integers(1, 3, size=n).astype(np.float64)
    Xo = X + c
    _, res = _quiet(lambda: _fit_and_infer(Xo, y, w, None, csr))
    m, Z = _centred(Xo, w)
    Y = np.eye(K)[y]
    p = Z.shape[1]
    q = (K - 1) * p

    def ev(t):
        return _multinomial_l(Z, Y, w, t)

    lmax = _reference(ev, q)
    slack = 1e-5 + 64 * EPS * c * CRIT
    for k in range(K - 1):
        a = np.zeros(q)
        a[k * p:(k + 1) * p] = np.r_[-m, 1.0]

        def prof(v, a=a):
            return _reference(ev, q, a, v)

        stat0 = 2.0 * (lmax - prof(0.0))
        stat_fg = scipy.stats.chi2.isf(res.lr_pvalues[0, k], 1)
        assert abs(stat_fg - stat0) <= slack * max(1.0, stat0)
        for v in res.profile_ci[0, k]:
            assert np.isfinite(v)
            assert abs(2.0 * (lmax - prof(v)) - CRIT) <= slack * CRIT
    _, base = _quiet(_fit_and_infer, X, y, w, None, csr)
    np.testing.assert_allclose(res.lr_pvalues[1:], base.lr_pvalues[1:], rtol=1e-6,
                               atol=1e-12)
    np.testing.assert_allclose(res.profile_ci[1:], base.profile_ci[1:], rtol=1e-6)


@pytest.mark.parametrize("c", [1e3, 1e6, 1e8])
def test_profile_never_claims_values_too_large(c):
    """Data whose centred version is fine: ci='profile' answers for every penalty with
    LR tests, and the fits it cannot test (ridge) are refused for being penalised."""
    X, y = _data(seed=4, n=120, d=3)
    Xo = X + c
    for kw in ({}, {"penalty": "firth"}, {"penalty": "firth", "correction": "flic"},
               {"penalty": "firth", "correction": "flac"}):
        mdl = fastgen.fit_logistic(Xo, y, **kw)
        res = _quiet(fastgen.logistic_inference, mdl, Xo, y, ci="profile")
        assert np.all(np.isfinite(res.profile_ci)) and np.all(res.lr_pvalues[1:] > 0.0)
        if kw.get("correction") != "flic":
            # (FLIC's intercept test is logistf's: the slopes held at their values,
            # under which an intercept at x = 0, far from the data, is rightly 0)
            assert res.lr_pvalues[0] > 0.0
    ridge = fastgen.fit_logistic(Xo, y, l2=1.0)
    with pytest.raises(ValueError, match="l2=1"):
        fastgen.logistic_inference(ridge, Xo, y, ci="profile")


def _multinomial_lstar(Z, Y, w, theta):
    """Firth's l* = l + ½ log det I for the softmax model, its modified score
    (l's score + ½ tr(I⁻¹ ∂I/∂θ)) and I, transcribed from the definitions."""
    llf, score, info = _multinomial_l(Z, Y, w, theta)
    m = Y.shape[1] - 1
    n, p = Z.shape
    eta = np.column_stack([np.zeros(n), Z @ theta.reshape(m, p).T])
    P = scipy.special.softmax(eta, axis=1)[:, 1:]
    V = np.linalg.inv(info)
    # G_i[k, q] = z_iᵀ V_kq z_i
    G = np.einsum("ia,kaqb,ib->ikq", Z, V.reshape(m, p, m, p), Z)
    eye = np.eye(m)
    grad = np.zeros((m, p))
    for ell in range(m):
        dP = P * (eye[ell][None, :] - P[:, ell:ell + 1])  # ∂P_k/∂η_ell, (n, m)
        # ∂A_kq/∂η_ell with A = diag P − PPᵀ
        dA = (np.einsum("ik,kq->ikq", dP, eye) - dP[:, :, None] * P[:, None, :]
              - P[:, :, None] * dP[:, None, :])
        t = np.einsum("ikq,iqk->i", dA, G)
        grad[ell] = (w * t) @ Z
    return (llf + 0.5 * np.linalg.slogdet(info)[1], score + 0.5 * grad.ravel(), info)


@pytest.mark.parametrize("c", [0.0, 1e2, 1e4])
def test_multinomial_firth_intercepts_against_reference(c):
    """Multinomial Firth: each equation's intercept p-value and bounds against the
    softmax transcription of l*."""
    rng = np.random.default_rng(3)
    n, K = 200, 3
    X = rng.normal(size=(n, 2))
    y = np.argmax(X @ np.array([[0.0, 0.9, -0.5], [0.0, -0.3, 0.8]])
                  + rng.gumbel(size=(n, K)), axis=1)
    w = np.ones(n)
    Xo = X + c
    _, res = _quiet(_fit_and_infer, Xo, y, None, "firth", False)
    m, Z = _centred(Xo, w)
    Y = np.eye(K)[y]
    p = Z.shape[1]
    q = (K - 1) * p

    def ev(t):
        return _multinomial_lstar(Z, Y, w, t)

    lmax = _reference(ev, q)
    slack = 1e-5 + 64 * EPS * c * CRIT
    for k in range(K - 1):
        a = np.zeros(q)
        a[k * p:(k + 1) * p] = np.r_[-m, 1.0]
        stat0 = 2.0 * (lmax - _reference(ev, q, a, 0.0))
        stat_fg = scipy.stats.chi2.isf(res.lr_pvalues[0, k], 1)
        assert abs(stat_fg - stat0) <= slack * max(1.0, stat0)
        for v in res.profile_ci[0, k]:
            assert abs(2.0 * (lmax - _reference(ev, q, a, v)) - CRIT) <= slack * CRIT


@pytest.mark.parametrize("c", [0.0, 1e3, 1e6])
def test_flac_intercept_against_reference(c):
    """FLAC's intervals are the ordinary profile on Firth's augmented data (logistf):
    its intercept's p-value and bounds against the reference on the augmented data
    built here from the reference's own Firth fit."""
    X, y = _data(seed=9, n=120)
    n = X.shape[0]
    Xo = X + c
    mdl = fastgen.fit_logistic(Xo, y, penalty="firth", correction="flac")
    res = _quiet(fastgen.logistic_inference, mdl, Xo, y, ci="profile")
    # the reference's Firth fit and its hat values h_i
    w = np.ones(n)
    _, Z = _centred(Xo, w)
    yf = y.astype(np.float64)
    q = Z.shape[1]
    theta = np.zeros(q)
    for _ in range(200):
        _, U, info = _binary_lstar(Z, yf, w, theta, 0.5)
        step = np.linalg.solve(info, U)
        theta = theta + step
        if np.max(np.abs(step)) < 1e-14:
            break
    eta = Z @ theta
    u = scipy.special.expit(eta) * scipy.special.expit(-eta)
    h = u * np.einsum("ij,ij->i", Z @ np.linalg.inv(info), Z)
    Xa = np.column_stack([np.vstack([Xo, Xo, Xo]), np.r_[np.zeros(n), np.ones(2 * n)]])
    ya = np.r_[yf, np.ones(n), np.zeros(n)]
    wa = np.r_[w, 0.5 * h, 0.5 * h]
    lmax, prof = _binary_reference(Xa, ya, wa, 0.0)
    _check_intercept(res, lmax, prof, c, 1.0)


@pytest.mark.parametrize("penalty,pw", [(None, 0.0), ("firth", 0.5)])
@pytest.mark.parametrize("seed", [15, 21])
def test_one_column_far_from_zero_in_small_units(penalty, pw, seed):
    """One column at 1e6 with a spread of 1e-3 (offset/spread 1e9, float64 still
    holds it to about 2e-7 of its spread) beside centred ones: the intercept's test
    and bounds are the reference's."""
    rng = np.random.default_rng(seed)
    n = 200
    X = rng.normal(size=(n, 3))
    y = (rng.random(n) < scipy.special.expit(X @ [0.6, -0.8, 0.4] + 0.3)).astype(int)
    Xo = X * np.array([1e-3, 1.0, 1.0]) + np.array([1e6, 0.0, 0.0])
    _, res = _quiet(_fit_and_infer, Xo, y, None, penalty, False)
    lmax, prof = _binary_reference(Xo, y.astype(np.float64), np.ones(n), pw)
    _check_intercept(res, lmax, prof, 1e6, 1e-3)


@pytest.mark.parametrize("c", [0.0, 10.0, 1e2])
def test_the_reference_is_statsmodels_where_statsmodels_is_accurate(c):
    """The transcription's maximum, and its maximum with the user's intercept fixed at
    0 (a fit without a constant), are statsmodels' Logit log-likelihoods (up to the
    offsets where statsmodels' fit without a constant, conditioned like
    (offset/spread)², still converges to its tolerance)."""
    sm = pytest.importorskip("statsmodels.api")
    X, y = _data(seed=2, n=150)
    Xo = X + c
    yf = y.astype(np.float64)
    lmax, prof = _binary_reference(Xo, yf, np.ones(y.shape[0]), 0.0)
    full = sm.Logit(yf, sm.add_constant(Xo, has_constant="add")).fit(
        method="newton", disp=0, tol=1e-12, maxiter=200)
    zero = sm.Logit(yf, Xo).fit(method="newton", disp=0, tol=1e-12, maxiter=200)
    assert lmax == pytest.approx(full.llf, rel=1e-10)
    assert prof(0.0) == pytest.approx(zero.llf, rel=1e-10)

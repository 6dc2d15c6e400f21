"""The logistic engine's construction: the centred frame (offsets and units), the
convergence certificate, options checked once for every penalty.

Families, not examples: offsets and units per column together, weights, CSR, binary
and multinomial, plain, ridge, Firth, FLIC and FLAC, fits and inference; rare events
against a long-double optimum; every stopping path against an exact Newton step.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import example, given
from hypothesis import strategies as st
from reference import require
from reference_logistic import binary_objective, multinomial_objective

import fastgen

EPS = np.finfo(np.float64).eps


def _data(K, seed, n=240, d=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X -= X.mean(axis=0)
    W = rng.normal(size=(d, K)) * 0.8
    y = np.argmax(X @ W + rng.gumbel(size=(n, K)), axis=1)
    w = rng.integers(1, 4, n).astype(np.float64)
    return X, y, w


def _quiet_fit(X, y, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return fastgen.fit_logistic(X, y, **kw)


KINDS = {
    "plain": {},
    "ridge": dict(l2=0.7),
    "firth": dict(penalty="firth"),
    "flic": dict(penalty="firth", correction="flic"),
    "flac": dict(penalty="firth", correction="flac"),
}


# ---------------------------------------------------------------- offsets and units


@given(seed=st.integers(0, 2**16), K=st.sampled_from([2, 3]),
       kind=st.sampled_from(sorted(KINDS)),
       offsets=st.lists(st.integers(-9, 9), min_size=3, max_size=3),
       scales=st.lists(st.integers(-4, 4), min_size=3, max_size=3),
       weighted=st.booleans(), csr=st.booleans())
@example(seed=0, K=2, kind="firth", offsets=[3, 5, 0], scales=[0, 0, 0], weighted=False,
         csr=False)
@example(seed=1, K=2, kind="plain", offsets=[8, 8, 8], scales=[0, 0, 0], weighted=False,
         csr=False)
@example(seed=2, K=3, kind="ridge", offsets=[6, -6, 9], scales=[3, -3, 0], weighted=True,
         csr=True)
def test_offsets_and_units_leave_the_answer(seed, K, kind, offsets, scales, weighted,
                                            csr):
    """fit(X·s + c) gives fit(X)'s probabilities, to a few hundred ulps of the offsets
    over the columns' spreads (the rounding of X·s + c itself), converged, without a
    warning; slopes scale by 1/s (ridge: the penalty is in the user's units, so only
    offsets are compared there)."""
    if K > 2 and kind in ("flic", "flac"):
        kind = "firth"
    kw = dict(KINDS[kind])
    X, y, w = _data(K, seed)
    if weighted:
        kw["sample_weight"] = w
    s = 10.0 ** np.array(scales, dtype=np.float64)
    if kind == "ridge":
        s = np.ones(3)
    c = np.sign(offsets) * 10.0 ** np.abs(np.array(offsets, dtype=np.float64))
    c[np.array(offsets) == 0] = 0.0
    conv = sp.csr_matrix if csr else np.asarray
    Xt = X * s + c
    ref = _quiet_fit(conv(X), y, **kw)
    fit = _quiet_fit(conv(Xt), y, **kw)
    assert ref.converged and fit.converged
    # the input's own rounding: each x·s + c is off by ≤ ulp(c)/2, i.e. by
    # |c|/(s·σ)·ε/2 of the column's spread
    rel = float(np.max(np.abs(c) / (s * X.std(axis=0)))) * EPS
    atol = 1e-11 + 300 * rel
    P0 = fastgen.predict_proba(ref, conv(X))
    np.testing.assert_allclose(fastgen.predict_proba(fit, conv(Xt)), P0, rtol=0, atol=atol)
    scale = float(np.max(np.abs(ref.coef))) + 1.0
    np.testing.assert_allclose(fit.coef * s, ref.coef, rtol=0, atol=scale * atol * 10)


@pytest.mark.parametrize("kind", ["plain", "firth", "flic", "flac"])
@pytest.mark.parametrize("csr", [False, True])
@pytest.mark.parametrize("c", [1e3, 1e6, 1e9])
def test_inference_does_not_depend_on_offsets(kind, csr, c):
    """Standard errors and z of the slopes equal the centred data's; the intercept's
    are those of the shifted model (statsmodels on the same shifted data agrees)."""
    X, y, _ = _data(2, seed=7)
    conv = sp.csr_matrix if csr else np.asarray
    kw = KINDS[kind]
    r0 = fastgen.logistic_inference(_quiet_fit(conv(X), y, **kw), conv(X), y)
    r = fastgen.logistic_inference(_quiet_fit(conv(X + c), y, **kw), conv(X + c), y)
    tol = 1e-9 + 300 * c / X.std(axis=0).min() * EPS
    np.testing.assert_allclose(r.bse[1:], r0.bse[1:], rtol=tol)
    np.testing.assert_allclose(r.tvalues[1:], r0.tvalues[1:], rtol=tol, atol=tol)
    if kind == "plain":  # every error, the intercept's too, against the optimum
        b, se = _longdouble_optimum(X + c, y)
        np.testing.assert_allclose(r.bse, se, rtol=tol)
        np.testing.assert_allclose(r.params, b, rtol=0, atol=tol * se.max())


def test_offsets_give_no_false_warning():
    """A year, a price and a postcode beside the intercept: no collinearity or
    separation warning, converged, the centred fit's probabilities."""
    X, y, _ = _data(2, seed=3, n=300)
    for c in (1e3, 1e6, 1e8, 1e12):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            m = fastgen.fit_logistic(X + c, y)
            mf = fastgen.fit_logistic(X + c, y, penalty="firth")
        assert m.converged and mf.converged


def test_multinomial_offsets_and_csr_with_weights():
    X, y, w = _data(4, seed=11, n=400, d=4)
    c = np.array([2019.0, 1e6, -3e4, 0.0])
    for conv in (np.asarray, sp.csr_matrix):
        for kw in ({}, dict(l2=0.5), dict(penalty="firth")):
            ref = _quiet_fit(conv(X), y, sample_weight=w, **kw)
            fit = _quiet_fit(conv(X + c), y, sample_weight=w, **kw)
            np.testing.assert_allclose(fastgen.predict_proba(fit, conv(X + c)),
                                       fastgen.predict_proba(ref, conv(X)), atol=1e-8)


def test_dask_fit_centres_as_the_in_memory_fit():
    da = require("dask.array")
    X, y, _ = _data(2, seed=4)
    Xc = X + np.array([1e7, 0.0, 2019.0])
    m = fastgen.fit_logistic(Xc, y)
    from fastgen import dask as fgdask

    md = fgdask.fit_logistic(da.from_array(Xc, chunks=(60, 3)),
                                   da.from_array(y, chunks=60))
    assert md.converged
    np.testing.assert_allclose(md.coef, m.coef, rtol=1e-9)
    np.testing.assert_allclose(md.intercept, m.intercept, rtol=1e-9)


# ---------------------------------------------------------------- an independent optimum


def _longdouble_optimum(X, y, w=None, l2=0.0):
    """The (penalised) optimum by Newton's method on standardised columns, each
    gradient accumulated in long double: (beta (intercept first), se), in the user's
    coordinates.  Constant columns (zero spread) get β = 0, their ridge optimum."""
    n, d = X.shape
    w = np.ones(n) if w is None else np.asarray(w, dtype=np.float64)
    mu = np.average(X, axis=0, weights=w)
    sd = np.sqrt(np.average((X - mu) ** 2, axis=0, weights=w))
    live = sd > 0
    Z = (X[:, live] - mu[live]) / sd[live]
    Zt = np.column_stack([np.ones(n), Z])
    pen = np.r_[0.0, l2 / sd[live] ** 2]  # the penalty in the user's units
    ZL, yl, wl = Zt.astype(np.longdouble), y.astype(np.longdouble), w.astype(np.longdouble)
    b = np.zeros(Zt.shape[1])
    for _ in range(100):
        eta = ZL @ b.astype(np.longdouble)
        pi = 1 / (1 + np.exp(-eta))
        g = (ZL.T @ (wl * (yl - pi))).astype(np.float64) - pen * b
        H = Zt.T @ ((w * (pi * (1 - pi)).astype(np.float64))[:, None] * Zt) + np.diag(pen)
        step = np.linalg.solve(H, g)
        b = b + step
        if np.max(np.abs(step) * np.sqrt(np.diag(H))) < 1e-15:
            break
    # back to the user's coordinates: β_j = b_j / s_j, b0 = b_0 − Σ β_j m_j
    T = np.zeros((d + 1, Zt.shape[1]))
    T[0, 0] = 1.0
    idx = np.flatnonzero(live)
    T[1 + idx, 1 + np.arange(idx.size)] = 1.0 / sd[live]
    T[0, 1:] = -mu[live] / sd[live]
    beta = T @ b
    cov = T @ np.linalg.inv(H) @ T.T
    return beta, np.sqrt(np.diag(cov))


@pytest.mark.parametrize("events", [1, 10, 100])
def test_rare_events_reach_the_optimum(events):
    """One to a hundred events in 1e5 rows: coefficients within 1e-8 standard errors
    of a long-double optimum, standard errors to 1e-8 relative (the old rule divided
    the gradient by Σw and stopped 1e-4 of a standard error away)."""
    rng = np.random.default_rng(events)
    n = 100_000
    X = rng.normal(size=(n, 3))
    y = np.zeros(n, dtype=int)
    central = np.argsort(np.abs(X).max(axis=1))[:events * 50]  # no separation
    y[rng.choice(central, events, replace=False)] = 1
    m = _quiet_fit(X, y)
    r = fastgen.logistic_inference(m, X, y)
    b, se = _longdouble_optimum(X, y)
    got = np.r_[m.intercept, m.coef[0]]
    assert np.all(np.abs(got - b) <= 1e-8 * se)
    np.testing.assert_allclose(r.bse, se, rtol=1e-8)


@pytest.mark.parametrize("offset", [0.0, 1e4])
def test_weighted_fit_reaches_the_optimum(offset):
    X, y, w = _data(2, seed=21, n=500)
    X = X + offset
    m = _quiet_fit(X, y, sample_weight=w)
    r = fastgen.logistic_inference(m, X, y, sample_weight=w)
    b, se = _longdouble_optimum(X, y, w)
    got = np.r_[m.intercept, m.coef[0]]
    assert np.all(np.abs(got - b) <= 1e-8 * se)
    np.testing.assert_allclose(r.bse, se, rtol=1e-8)


def test_ridge_on_real_data_with_constant_columns_and_wide_scales():
    """Breast cancer with 21 events, columns from 0.03 to 2e7 in spread, flags and 15
    constant columns: the ridge optimum of an independent solver, to tol."""
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    y = 1 - y
    rows = np.r_[np.flatnonzero(y == 0), np.flatnonzero(y == 1)[:21]]
    X, y = X[rows], y[rows]
    n = X.shape[0]
    consts = np.tile([0.0, 1.0, 2019.0, 1e7, 0.5], 3)[None, :] * np.ones((n, 1))
    flags = (X[:, 20:25] > np.median(X[:, 20:25], axis=0)).astype(float)
    X = np.column_stack([X[:, :10] * 1e6, X[:, 10:20] * 0.03, flags, consts,
                         X[:, 25:] * 2e4])
    m = _quiet_fit(X, y, l2=1.0, tol=1e-8)
    assert m.converged
    b, _ = _longdouble_optimum(X, y, l2=1.0)

    def objective(coef, icpt):
        eta = X @ coef + icpt
        return float(np.sum(np.logaddexp(0, eta) - y * eta) + 0.5 * coef @ coef)

    f_ref = objective(b[1:], b[0])
    assert objective(m.coef[0], m.intercept[0]) <= f_ref + 1e-8
    np.testing.assert_array_equal(m.coef[0][25:40], 0.0)  # the constant columns


# ---------------------------------------------------------------- the certificate


def _exact_decrement(X, y, m, l2=0.0, w=None):
    """½gᵀH⁻¹g of the penalised objective at m's coefficients, in plain numpy on the
    centred columns (the frame-free quantity the certificate bounds)."""
    X = np.asarray(X.todense() if sp.issparse(X) else X, dtype=np.float64)
    mu = X.mean(axis=0)
    Xc = X - mu
    coef = np.asarray(m.coef, dtype=np.float64)
    icpt = np.asarray(m.intercept, dtype=np.float64) + coef @ mu
    if m.classes.shape[0] == 2:
        beta = np.r_[coef[0], icpt]
        _, g, H = binary_objective(Xc, y, beta, l2=l2, w=w)
        return 0.5 * float(g @ np.linalg.solve(H, g))
    B = np.column_stack([coef, icpt])
    codes = np.searchsorted(m.classes, y)
    _, G, H = multinomial_objective(Xc, codes, B, l2=l2, w=w)
    g = G.ravel()
    # the multinomial objective is flat along B_k + v for all k: solve on the
    # reference layout (class 0 fixed)
    keep = np.arange(B.size)[B.shape[1]:]
    return 0.5 * float(g[keep] @ np.linalg.solve(H[np.ix_(keep, keep)], g[keep]))


@pytest.mark.parametrize("K", [2, 3])
@pytest.mark.parametrize("solver", ["explicit", "newton-cg"])
@pytest.mark.parametrize("tol", [1e-4, 1e-8])
@pytest.mark.parametrize("l2", [0.0, 0.3])
def test_converged_means_no_newton_step_gains_tol(monkeypatch, K, solver, tol, l2):
    """At every converged return, an exact Newton step would gain ≤ tol (in fact far
    less: the certifying step was taken)."""
    from fastgen.logistic import objectives

    if solver == "newton-cg":
        monkeypatch.setattr(objectives, "BINARY_EXPLICIT_MAX_P", 0)
        monkeypatch.setattr(objectives, "MULTINOMIAL_EXPLICIT_MAX", 0)
    X, y, _ = _data(K, seed=K + 40, n=3000, d=5)
    X = X + np.array([1e5, 0, 0, 0, -2e3])
    m = _quiet_fit(X, y, tol=tol, l2=l2)
    assert m.converged
    assert _exact_decrement(X, y, m, l2=l2) <= tol * 1e-3


def test_unconverged_paths_say_so():
    X, y, _ = _data(2, seed=5)
    with pytest.warns(fastgen.ConvergenceWarning, match="max_iter=1"):
        m = fastgen.fit_logistic(X, y, max_iter=1)
    assert not m.converged
    with pytest.warns(fastgen.ConvergenceWarning):
        m = fastgen.fit_logistic(X, y, max_iter=0)
    assert not m.converged


def test_irls_step_converged_is_the_certificate():
    X, y, _ = _data(2, seed=6)
    m = _quiet_fit(X, y)
    p = fastgen.irls_step(m, X, y)
    assert p.converged
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fastgen.ConvergenceWarning)
        first = fastgen.fit_logistic(X, y, max_iter=1)
    assert not fastgen.irls_step(first, X, y).converged


# ---------------------------------------------------------------- options, once


BAD_OPTIONS = [
    (dict(max_iter=-3), "max_iter"),
    (dict(max_iter="ten"), "max_iter"),
    (dict(max_iter=2.5), "max_iter"),
    (dict(tol=float("nan")), "tol"),
    (dict(tol=-1.0), "tol"),
    (dict(tol=0.0), "tol"),
    (dict(fit_intercept="yes"), "fit_intercept"),
    (dict(init=(np.full((1, 3), np.nan), np.zeros(1))), "init"),
    (dict(init=(np.zeros((2, 3)), np.zeros(2))), "init"),
    (dict(init="zeros"), "init"),
]


@pytest.mark.parametrize("penalty", [None, "firth", "flic", "flac"])
@pytest.mark.parametrize("bad,name", BAD_OPTIONS)
def test_every_penalty_checks_every_option(penalty, bad, name):
    X, y, _ = _data(2, seed=8, n=60)
    kw = {} if penalty is None else dict(penalty="firth")
    if penalty in ("flic", "flac"):
        kw["correction"] = penalty
    X0, y0 = X.copy(), y.copy()
    with pytest.raises(ValueError, match=name):
        fastgen.fit_logistic(X, y, **kw, **bad)
    np.testing.assert_array_equal(X, X0)
    np.testing.assert_array_equal(y, y0)


@pytest.mark.parametrize("penalty", [None, "firth"])
def test_init_of_other_classes_is_refused(penalty):
    X, y, _ = _data(2, seed=9, n=60)
    other = fastgen.fit_logistic(X, np.where(y == 1, "b", "a"))
    kw = {} if penalty is None else dict(penalty="firth")
    with pytest.raises(ValueError, match="classes"):
        fastgen.fit_logistic(X, y, init=other, **kw)


def test_init_is_a_start_in_the_users_coordinates():
    """A warm start from the fit itself (offset columns) converges at once to the
    same estimate, for the plain and the Firth fit."""
    X, y, _ = _data(2, seed=10)
    X = X + np.array([1e6, 0.0, 50.0])
    for kw in ({}, dict(penalty="firth")):
        m = _quiet_fit(X, y, **kw)
        again = _quiet_fit(X, y, init=m, **kw)
        np.testing.assert_allclose(again.coef, m.coef, rtol=1e-9)
        np.testing.assert_allclose(again.intercept, m.intercept, rtol=1e-9)
        assert again.n_iter <= 2


# ---------------------------------------------------------------- diagnostics


@pytest.mark.parametrize("c", [0.0, 1e4, 1e6, 1e8, 1e12])
def test_diagnostics_do_not_depend_on_offsets(c):
    """detect_separation and collinear_columns answer for the data, not the offset:
    no false rank loss or separation at 1e6-1e12, the same directions when separated."""
    from fastgen.logistic import collinear_columns

    X, y, _ = _data(2, seed=12, n=300)
    assert not fastgen.detect_separation(X + c, y).separated
    assert collinear_columns(X + c).full_rank
    ys = (X[:, 0] > 0).astype(int)
    ref = fastgen.detect_separation(X, ys)
    got = fastgen.detect_separation(X + c, ys)
    assert got.separated and got.complete == ref.complete
    np.testing.assert_array_equal(got.coef_direction, ref.coef_direction)


def test_rank_messages_name_the_users_columns():
    """A dependent column among offset columns, and a constant one: the fit's warning,
    collinear_columns and inference's error give the combination in X's own columns,
    intercept term included."""
    from fastgen.logistic import collinear_columns

    X, y, _ = _data(2, seed=13, n=300)
    Xo = X + 1e6
    X4 = np.column_stack([Xo, Xo[:, 0] + Xo[:, 1] + 2019.0, np.full(300, 7.0)])
    col = collinear_columns(X4)
    assert col.dependent == (3, 4)
    a, b = col.combinations
    assert a[0] == pytest.approx(1) and a[1] == pytest.approx(1)
    assert a[5] == pytest.approx(2019.0, rel=1e-6)  # x4 = x1 + x2 + 2019·1
    assert b == {5: pytest.approx(7.0)}  # x5 = 7·1
    with pytest.warns(fastgen.CollinearityWarning, match=r"'x5' \(X\[:, 4\]\) = 7·'intercept'"):
        m = fastgen.fit_logistic(X4, y)
    assert m.converged
    with pytest.raises(np.linalg.LinAlgError, match=r"'x5' \(X\[:, 4\]\) = 7·'intercept'"):
        fastgen.logistic_inference(m, X4, y)


@pytest.mark.parametrize("n,events", [(500, None), (5000, 5), (20000, 3)])
def test_firth_reaches_the_optimum(n, events):
    """Firth's estimate within 1e-8 standard errors of firthmodels' at gtol 1e-14,
    ordinary data and rare events alike (Fisher-scoring steps certify by their rate)."""
    firthmodels = require("firthmodels")
    rng = np.random.default_rng(n)
    X = rng.normal(size=(n, 3))
    if events is None:
        y = (X[:, 0] + rng.logistic(size=n) > 0).astype(int)
    else:
        y = np.zeros(n, dtype=int)
        y[rng.choice(n, events, replace=False)] = 1
    m = _quiet_fit(X, y, penalty="firth")
    r = fastgen.logistic_inference(m, X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f = firthmodels.FirthLogisticRegression(backend="numpy", gtol=1e-14, xtol=1e-14,
                                                max_iter=500).fit(X, y)
    ref = np.r_[f.intercept_, f.coef_]
    assert np.all(np.abs(np.r_[m.intercept, m.coef[0]] - ref) <= 1e-8 * r.bse)


def test_one_event_in_a_million():
    rng = np.random.default_rng(6)
    n = 1_000_000
    X = rng.normal(size=(n, 2))
    y = np.zeros(n, dtype=int)
    y[int(np.argmin(np.abs(X).max(axis=1)))] = 1  # the most central row: no separation
    m = _quiet_fit(X, y)
    r = fastgen.logistic_inference(m, X, y)
    b, se = _longdouble_optimum(X, y)
    assert np.all(np.abs(np.r_[m.intercept, m.coef[0]] - b) <= 1e-8 * se)
    np.testing.assert_allclose(r.bse, se, rtol=1e-8)


@pytest.mark.parametrize("kind", ["plain", "firth"])
def test_profile_intervals_do_not_depend_on_offsets(kind):
    """The slopes' profile intervals and likelihood-ratio p-values of X + c equal X's."""
    X, y, _ = _data(2, seed=14, n=150)
    c = np.array([1e4, 0.0, 2019.0])
    kw = KINDS[kind]
    r0 = fastgen.logistic_inference(_quiet_fit(X, y, **kw), X, y, ci="profile")
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        r = fastgen.logistic_inference(_quiet_fit(X + c, y, **kw), X + c, y, ci="profile")
    # only the intercept's profile, taken in the user's coordinates where the offset
    # columns are nearly parallel to it, may fail to find a bound (it says so)
    assert all("const:" in str(w.message) and "x1" not in str(w.message) for w in rec)
    np.testing.assert_allclose(r.profile_ci[1:], r0.profile_ci[1:], rtol=1e-7)
    np.testing.assert_allclose(r.lr_pvalues[1:], r0.lr_pvalues[1:], rtol=1e-6, atol=1e-12)


# ---------------------------------------------------------------- starts far away


def test_flac_with_rare_events_is_the_augmented_optimum():
    """n = 30000 with about 1 % events: the first Newton step of the augmented fit
    overshot to saturated pseudo-rows, and FLAC returned a wrong model as converged.
    Now: the augmented maximum likelihood (statsmodels GLM on the same augmented
    data), and the mean probability equals the event rate."""
    sm = require("statsmodels.api")
    n = 30000
    rng = np.random.default_rng(1)
    X = rng.normal(size=(n, 2))
    y = (rng.random(n) < 0.01 * np.exp(X[:, 0]) / np.exp(0.5)).astype(int)
    flac = _quiet_fit(X, y, penalty="firth", correction="flac")
    firth = _quiet_fit(X, y, penalty="firth")
    assert flac.converged
    A = np.c_[np.ones(n), X]
    b = np.r_[firth.intercept, firth.coef.ravel()]
    p = 1 / (1 + np.exp(-A @ b))
    W = p * (1 - p)
    h = W * np.einsum("ij,jk,ik->i", A, np.linalg.inv((A * W[:, None]).T @ A), A)
    Aa = np.r_[np.c_[A, np.zeros(n)], np.c_[A, np.ones(n)], np.c_[A, np.ones(n)]]
    ref = sm.GLM(np.r_[y, y, 1 - y], Aa, family=sm.families.Binomial(),
                 freq_weights=np.r_[np.ones(n), h / 2, h / 2]).fit(tol=1e-12)
    np.testing.assert_allclose(np.r_[flac.intercept, flac.coef[0]], ref.params[:3],
                               rtol=1e-7)
    assert fastgen.predict_proba(flac, X)[:, 1].mean() == pytest.approx(y.mean(), rel=1e-9)


@pytest.mark.parametrize("shift", [-40.0, -800.0])
@pytest.mark.parametrize("l2", [0.0, 0.1])
def test_a_far_warm_start_still_reaches_the_optimum(shift, l2):
    """A start whose probabilities are all ~0: its Newton step is astronomically long;
    the search along it, cut to a few units per column, gets there."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(3000, 2))
    y = (rng.random(3000) < 1 / (1 + np.exp(-(X[:, 0] - 1)))).astype(int)
    ref = _quiet_fit(X, y, l2=l2)
    m = _quiet_fit(X, y, l2=l2, init=(np.array([1.0, 0.0]), np.array([shift])))
    assert m.converged
    np.testing.assert_allclose(m.coef, ref.coef, rtol=1e-7)


def test_firth_replaces_a_start_where_its_penalty_is_undefined():
    """log det I is undefined (−∞) where every probability is 0 or 1: such a start is
    worse than the default one, which replaces it."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 2))
    y = (X[:, 0] + rng.logistic(size=300) > 0).astype(int)
    ref = fastgen.fit_logistic(X, y, penalty="firth")
    m = fastgen.fit_logistic(X, y, penalty="firth", init=(np.array([1.0, 0.0]),
                                                           np.array([-800.0])))
    assert m.converged
    np.testing.assert_allclose(m.coef, ref.coef, rtol=1e-8)
    np.testing.assert_allclose(m.intercept, ref.intercept, rtol=1e-8, atol=1e-10)


def test_profile_at_an_extreme_offset_keeps_the_slopes():
    """Offset 1e6 over a spread of 1e-3: the intercept's profile (in the user's
    coordinates) is found without a warning (checked against a reference in
    test_lr_offsets.py); the slopes' intervals stand."""
    X, y, _ = _data(2, seed=15, n=200)
    kw = KINDS["firth"]
    r0 = fastgen.logistic_inference(_quiet_fit(X, y, **kw), X, y, ci="profile")
    Xo = X * 1e-3 + np.array([1e6, 0.0, 0.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = fastgen.logistic_inference(_quiet_fit(Xo, y, **kw), Xo, y, ci="profile")
    lo, hi = r.profile_ci[0]
    assert lo < r.params[0] < hi
    np.testing.assert_allclose(r.profile_ci[1:] * 1e-3, r0.profile_ci[1:], rtol=1e-6)


def test_dask_inference_centres_as_the_in_memory_inference():
    da = require("dask.array")
    from fastgen import dask as fgdask

    X, y, w = _data(2, seed=16, n=400)
    X = X + np.array([1e6, 0.0, 2019.0])
    m = _quiet_fit(X, y, sample_weight=w)
    r = fastgen.logistic_inference(m, X, y, sample_weight=w, cov_type="HC0")
    rd = fgdask.logistic_inference(m, da.from_array(X, chunks=(100, 3)), y,
                                   sample_weight=w, cov_type="HC0")
    np.testing.assert_allclose(np.asarray(rd.bse), np.asarray(r.bse), rtol=1e-10)
    np.testing.assert_allclose(np.asarray(rd.params), np.asarray(r.params), rtol=1e-12)

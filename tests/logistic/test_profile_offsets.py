"""Firth profile intervals of the user's intercept under column offsets.

The intercept of the user's coordinates is profiled there (its constraint fixes the
user's b, not the centred frame's), but l* is evaluated on the centred data
(``firth_profile.UserFrame``).  A plain-numpy transcription of Firth's l* checks each
returned bound v independently: the constrained maximum of l* with the user's
intercept fixed at v, found by scipy's optimiser, must lie χ²₁(0.95)/2 below the
maximum, and the likelihood-ratio p-value must be that of b = 0.
"""

import warnings

import numpy as np
import pytest
import scipy.optimize
import scipy.special
import scipy.stats

import fastgen


def _lstar(X, y, beta, b):
    """Firth's l* = l + ½ log det I at slopes ``beta`` and user intercept ``b``, on
    the columns centred by their means (the same function: a shift of the columns is a
    change of coordinates of determinant 1)."""
    m = X.mean(axis=0)
    Z = np.column_stack([X - m, np.ones(X.shape[0])])
    eta = Z @ np.r_[beta, b + m @ beta]
    llf = float(np.sum(y * eta - np.logaddexp(0.0, eta)))
    pi = scipy.special.expit(eta)
    info = Z.T @ ((pi * (1.0 - pi))[:, None] * Z)
    return llf + 0.5 * np.linalg.slogdet(info)[1]


def _profile(X, y, v, beta, b):
    """max l* with the user's intercept fixed at v, over the centred intercept b_c and
    the slopes but the one of the largest mean, k, which the constraint
    b_c − Σ_j m_j β_j = v then gives: β_k = (b_c − v − Σ_{j≠k} m_j β_j)/m_k (its
    derivatives are O(1), where those in the user's coordinates are O(offset)).
    Starts from the fit (slopes ``beta``, user intercept ``b``)."""
    m = X.mean(axis=0)
    k = int(np.argmax(np.abs(m)))
    rest = np.delete(np.arange(m.size), k)

    def full(t):
        bc, br = t[0], t[1:]
        out = np.empty(m.size)
        out[rest] = br
        out[k] = (bc - v - m[rest] @ br) / m[k]
        return out

    def neg(t):
        bet = full(t)
        return -_lstar(X, y, bet, v)

    t0 = np.r_[b + m @ beta, beta[rest]]
    with np.errstate(all="ignore"):  # the optimiser's trial points may saturate rows
        res = scipy.optimize.minimize(neg, t0, method="BFGS",
                                      options={"gtol": 1e-9, "xrtol": 1e-14})
    return -res.fun


def _data(seed, n=300):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = (X @ [1.0, -0.5, 0.3] + 0.4 + rng.logistic(size=n) > 0).astype(np.int64)
    return X, y


@pytest.mark.parametrize("offset,scale", [(1e2, 1.0), (1e4, 1.0), (1e6, 1.0),
                                          (1e4, 1e-2), (-3e5, 10.0)])
def test_intercept_profile_under_offsets_is_the_profile(offset, scale):
    X, y = _data(seed=int(abs(offset)) % 97)
    Xo = X * scale + offset
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no bound may fail, no fit stop unconverged
        m = fastgen.fit_logistic(Xo, y, penalty="firth")
        r = fastgen.logistic_inference(m, Xo, y, ci="profile")
    lo, hi = r.profile_ci[0]
    assert np.isfinite(lo) and np.isfinite(hi) and lo < m.intercept[0] < hi
    beta = m.coef[0].astype(np.float64)
    # the maximum: the fit's point, polished by the optimiser on the transcription
    with np.errstate(all="ignore"):
        top = scipy.optimize.minimize(
            lambda t: -_lstar(Xo, y, t[:-1], t[-1]), np.r_[beta, m.intercept[0]],
            method="BFGS", options={"gtol": 1e-10, "xrtol": 1e-14})
    lmax = -top.fun
    crit = scipy.stats.chi2.isf(0.05, 1)
    b = float(m.intercept[0])
    for v in (lo, hi):
        stat = 2.0 * (lmax - _profile(Xo, y, v, beta, b))
        assert abs(stat - crit) <= 1e-5 * crit
    stat0 = 2.0 * (lmax - _profile(Xo, y, 0.0, beta, b))
    np.testing.assert_allclose(r.lr_pvalues[0], scipy.stats.chi2.sf(stat0, 1),
                               rtol=1e-4)


@pytest.mark.parametrize("offset", [1e2, 1e3])
def test_multinomial_intercept_profile_under_offsets(offset):
    """Every equation's intercept interval is found (no bound is reported missing),
    and the intervals of the user's intercepts move with the offset as
    b = b_c − offset·Σ_j β_j does: their ends divided by the offset agree across
    offsets to the slopes' uncertainty."""
    rng = np.random.default_rng(1)
    n, K = 400, 3
    X = rng.normal(size=(n, 2))
    y = np.argmax(X @ rng.normal(size=(2, K)) + rng.gumbel(size=(n, K)), axis=1)
    ends = []
    for c in (offset, 10 * offset):
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            m = fastgen.fit_logistic(X + c, y, penalty="firth")
            r = fastgen.logistic_inference(m, X + c, y, ci="profile")
        assert not any("bound" in str(w.message) for w in rec)
        ci = r.profile_ci[0]  # (K − 1, 2): the intercepts
        assert np.all(np.isfinite(ci)) and np.all(ci[:, 0] < ci[:, 1])
        ends.append(ci / c)
    np.testing.assert_allclose(ends[1], ends[0], rtol=0.05)

"""A start (``init``) far from the optimum: the fit recovers from it instead of creeping
by capped steps, and a fit that does stop short says why (the start, or a tol below
float64's reach) instead of always advising a larger max_iter.

The family: plain, ridge, Firth; binary and multinomial; dense, CSR and weighted rows;
starts off by 1e2 … 1e6 in the intercept, a model fitted before a column offset
changed.  Answers are checked against statsmodels (plain fits) and against the fit
from the default start.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import fastgen
from tests.reference import require


def _data(K, seed=9, n=2000, c=0.0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    if K == 2:
        y = (rng.random(n) < 1 / (1 + np.exp(-(X @ [1.0, -0.5, 0.2])))).astype(np.int64)
    else:
        B = np.array([[0.8, -0.4, 0.0], [0.1, 0.6, -0.7], [-0.5, 0.2, 0.4]])
        y = np.argmax(X @ B + rng.gumbel(size=(n, 3)), axis=1).astype(np.int64)
    w = rng.integers(1, 4, size=n).astype(np.float64)
    return X + c, y, w


def _fit(*args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return fastgen.fit_logistic(*args, **kw)


def _far(model, shift):
    """``model``'s coefficients with the intercept of its last class moved by shift."""
    icpt = np.array(model.intercept, dtype=np.float64)
    icpt[-1] += shift
    return np.array(model.coef, dtype=np.float64), icpt


FITS = {"plain": {}, "ridge": {"l2": 1.0}, "firth": {"penalty": "firth"}}


@pytest.mark.parametrize("layout", ["dense", "csr", "weighted"])
@pytest.mark.parametrize("K", [2, 3])
@pytest.mark.parametrize("fit", ["plain", "ridge", "firth"])
@pytest.mark.parametrize("shift", [1e2, 1e4, 1e6, -1e6])
def test_far_intercept_start_recovers(shift, fit, K, layout):
    X, y, w = _data(K)
    w = w if layout == "weighted" else None
    Xf = sp.csr_matrix(X) if layout == "csr" else X
    ref = _fit(Xf, y, sample_weight=w, **FITS[fit])
    # Firth's penalty is undefined where every probability is 0 or 1 (|shift| ≥ 1e4):
    # such a start is worse than the default one and gives way to it
    m = _fit(Xf, y, sample_weight=w, init=_far(ref, shift), **FITS[fit])
    assert m.converged
    assert m.n_iter <= ref.n_iter + 3  # from the default start, not by creeping
    np.testing.assert_allclose(m.coef, ref.coef, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(m.intercept, ref.intercept, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("K", [2, 3])
@pytest.mark.parametrize("c", [1e3, 1e6])
def test_start_fitted_before_a_column_offset_recovers(c, K):
    """A warm start from the model of the uncentred data, given data moved by c: its
    probabilities are all 0 or 1 (η off by about c·β)."""
    require("statsmodels")
    import statsmodels.api as smapi

    X, y, _ = _data(K)
    base = _fit(X, y)
    Xc = X + c
    m = _fit(Xc, y, init=base)
    assert m.converged
    # statsmodels on the data before the offset (it does not converge on X + 1e6): the
    # same slopes, and the intercept of the centred frame b + c·Σβ
    Z = smapi.add_constant(X, prepend=False)
    coef = np.asarray(m.coef, dtype=np.float64)
    icpt_c = np.asarray(m.intercept, dtype=np.float64) + c * coef.sum(axis=1)
    if K == 2:
        res = smapi.Logit(y, Z).fit(disp=0, method="newton", tol=1e-12, maxiter=100)
        got, want, se = np.r_[coef.ravel(), icpt_c], res.params, res.bse
    else:
        res = smapi.MNLogit(y, Z).fit(disp=0, method="newton", tol=1e-12, maxiter=100)
        got = np.column_stack([coef - coef[0], icpt_c - icpt_c[0]])[1:].T  # (p, K-1)
        want, se = np.asarray(res.params), np.asarray(res.bse)
    assert np.all(np.abs(got - want) <= 1e-6 * se + 1e-12 * c)


def test_start_better_than_the_default_is_kept():
    """A warm start near the optimum is used (it converges in fewer steps), so the
    fallback never costs a warm start its head start."""
    X, y, _ = _data(2)
    ref = _fit(X, y)
    near = (np.array(ref.coef) * 1.01, np.array(ref.intercept))
    m = _fit(X, y, init=near)
    assert m.converged and m.n_iter < ref.n_iter
    np.testing.assert_allclose(m.coef, ref.coef, rtol=1e-7)


@pytest.mark.parametrize("fit", ["plain", "firth"])
@pytest.mark.parametrize("K", [2, 3])
def test_short_stop_from_init_names_the_start(fit, K):
    X, y, _ = _data(K)
    ref = _fit(X, y, **FITS[fit])
    start = (np.array(ref.coef) * 0.5, np.array(ref.intercept))  # better than the default
    with pytest.warns(fastgen.ConvergenceWarning, match=r"the start \(init\) may be far "
                                                        r"from the optimum: fit without init"):
        m = fastgen.fit_logistic(X, y, init=start, max_iter=1, **FITS[fit])
    assert not m.converged
    with pytest.warns(fastgen.ConvergenceWarning, match=r"; increase max_iter\.$"):
        fastgen.fit_logistic(X, y, max_iter=1, **FITS[fit])


@pytest.mark.parametrize("layout", ["dense", "csr", "weighted"])
@pytest.mark.parametrize("K", [2, 3])
def test_unreachable_tol_is_named_as_such(K, layout):
    X, y, w = _data(K)
    w = w if layout == "weighted" else None
    Xf = sp.csr_matrix(X) if layout == "csr" else X
    with pytest.warns(fastgen.ConvergenceWarning,
                      match="tol is below the precision float64 gives the objective"):
        m = fastgen.fit_logistic(Xf, y, sample_weight=w, tol=1e-300, max_iter=30)
    assert not m.converged
    ref = _fit(Xf, y, sample_weight=w)
    np.testing.assert_allclose(m.coef, ref.coef, rtol=1e-9, atol=1e-12)

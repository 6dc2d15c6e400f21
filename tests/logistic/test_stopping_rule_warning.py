"""A fit that stops short reports the quantity its stopping rule compares, and the bound
it compared it with: the Newton decrement (½gᵀH⁻¹g, Firth's ½U*ᵀI⁻¹U*), not
max|score|/Σw.

Checked two ways: against an independent computation of the decrement at the point
returned (statsmodels' score and Hessian; a numpy transcription of Firth's modified
score), and by the rule itself: the same fit with tol just above the reported value
converges there, just below it does not.  The family: plain and Firth, binary and
multinomial, dense, CSR and weights (also weights whose mean is below 1, where the
bound is tol times the mean weight).
"""

import re
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import expit

import fastgen
from tests.reference import require


def _data(K, seed=1, n=300):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    if K == 2:
        y = (rng.random(n) < expit(X @ [1.0, 0.5, 0.0] - 1.0)).astype(np.int64)
    else:
        y = rng.integers(0, K, size=n)
    return X, y


def _reported(rec):
    text = next(str(r.message) for r in rec
                if isinstance(r.message, fastgen.ConvergenceWarning))
    m = re.search(r"stopping rule: (.*?) = ([0-9.e+-]+) > (.*?)\);", text)
    assert m, text
    return m.group(1), float(m.group(2)), m.group(3), text


def _firth_decrement(X, y, beta):
    """½U*ᵀI⁻¹U* of binary Firth at beta (coef, intercept last), plain numpy."""
    Z = np.c_[X, np.ones(X.shape[0])]
    pi = expit(Z @ beta)
    v = pi * (1 - pi)
    info = (Z * v[:, None]).T @ Z
    h = np.einsum("ij,jk,ik->i", Z, np.linalg.inv(info), Z) * v
    U = Z.T @ (y - pi + h * (0.5 - pi))
    return 0.5 * float(U @ np.linalg.solve(info, U))


@pytest.mark.parametrize("layout", ["dense", "csr"])
def test_firth_reports_its_decrement_at_the_start(layout):
    X, y = _data(2)
    Xf = sp.csr_matrix(X) if layout == "csr" else X
    with pytest.warns(fastgen.ConvergenceWarning) as rec:
        m = fastgen.fit_logistic(Xf, y, penalty="firth", max_iter=0)
    what, dec, bound, text = _reported(rec)
    assert "max|modified score|" not in text
    assert bound == "tol = 1e-08"
    beta = np.r_[np.asarray(m.coef, dtype=np.float64).ravel(), m.intercept]
    np.testing.assert_allclose(dec, _firth_decrement(X, y, beta), rtol=6e-3)
    # the rule itself: a tol just above the value reported certifies that point
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ok = fastgen.fit_logistic(Xf, y, penalty="firth", max_iter=0, tol=dec * 1.01)
    assert ok.converged
    with pytest.warns(fastgen.ConvergenceWarning):
        assert not fastgen.fit_logistic(Xf, y, penalty="firth", max_iter=0,
                                        tol=dec * 0.99).converged


@pytest.mark.parametrize("K", [2, 3])
@pytest.mark.parametrize("max_iter", [0, 1, 2])
def test_firth_rule_and_report_agree(max_iter, K):
    X, y = _data(K)
    with pytest.warns(fastgen.ConvergenceWarning) as rec:
        fastgen.fit_logistic(X, y, penalty="firth", max_iter=max_iter)
    what, dec, bound, _ = _reported(rec)
    assert what.startswith("Newton decrement")
    assert dec > 1e-8
    if "scaled" not in what:  # a decrement of its own: the rule at tol just above it
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert fastgen.fit_logistic(X, y, penalty="firth", max_iter=max_iter,
                                        tol=dec * 1.01).converged


@pytest.mark.parametrize("fit", [{}, {"penalty": "firth"}])
@pytest.mark.parametrize("K", [2, 3])
def test_the_bound_is_tol_times_a_mean_weight_below_one(K, fit):
    X, y = _data(K)
    w = np.full(y.shape[0], 0.01)
    with pytest.warns(fastgen.ConvergenceWarning) as rec:
        fastgen.fit_logistic(X, y, sample_weight=w, max_iter=0, **fit)
    _, dec, bound, _ = _reported(rec)
    assert bound.startswith("tol·(mean weight) = 1e-10, tol = 1e-08"), bound


@pytest.mark.parametrize("K", [2, 3])
@pytest.mark.parametrize("max_iter", [0, 1])
def test_plain_fit_reports_the_decrement_statsmodels_computes(max_iter, K):
    require("statsmodels")
    import statsmodels.api as smapi

    X, y = _data(K)
    with pytest.warns(fastgen.ConvergenceWarning) as rec:
        m = fastgen.fit_logistic(X, y, max_iter=max_iter)
    _, dec, bound, _ = _reported(rec)
    assert bound == "tol = 1e-08"
    Z = smapi.add_constant(X, prepend=True)
    coef = np.asarray(m.coef, dtype=np.float64)
    icpt = np.asarray(m.intercept, dtype=np.float64)
    if K == 2:
        model, params = smapi.Logit(y, Z), np.r_[icpt, coef.ravel()]
    else:
        model = smapi.MNLogit(y, Z)
        params = np.column_stack([icpt - icpt[0], coef - coef[0]])[1:].T
    g = np.ravel(model.score(params), order="F")
    want = -0.5 * float(g @ np.linalg.solve(model.hessian(params), g))
    np.testing.assert_allclose(dec, want, rtol=6e-3)  # printed to 3 digits

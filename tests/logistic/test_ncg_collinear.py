"""Multinomial Newton-CG on rank-deficient designs (K·p above the explicit limit).

The unpenalised Newton-CG fit must decide the design's rank as the explicit solvers do
(the rule of the collinearity warning, on the design Gram it already forms for its
preconditioner) and solve on the identified columns: it converges, warns
:class:`fastgen.CollinearityWarning` naming the same dependent columns in the same
words as the explicit fit of the same data, and reaches the same optimum, checked
against the explicit-Hessian fit and statsmodels' MNLogit on the identified columns
(integer weights as repeated rows) to 1e-8 standard errors, with either of Newton-CG's
preconditioners (block Jacobi, the Böhning bound).  Designs of full rank take
exactly the path they took before.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import fastgen
from fastgen.logistic import objectives

statsmodels_api = pytest.importorskip("statsmodels.api")


def _design(family, K, seed, n=2000, d=12, offset=0.0):
    """``(X, y, dependent)``: a design of ``family`` with K classes and the indices (in
    X's columns) of the columns that the rule, taking the intercept first, names."""
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, d))
    E = Z @ rng.normal(size=(d, K)) * 0.5 + rng.normal(size=K)
    y = np.argmax(E + rng.gumbel(size=(n, K)), axis=1)
    D = np.eye(4)[rng.integers(0, 4, n)]
    Z[:, 2] += offset  # a column far from zero (the centred frame's case)
    if family == "onehot_sum":  # full one-hot block (= intercept) and x1 + x2
        X, dep = np.c_[Z, D, Z[:, 0] + Z[:, 1]], [d + 3, d + 4]
    elif family == "onehot_const":  # full one-hot block and a user constant column
        X, dep = np.c_[Z, D, np.ones(n)], [d + 3, d + 4]
    elif family == "sum_dup":  # x1 + x2 and a duplicate of x4
        X, dep = np.c_[Z, Z[:, 0] + Z[:, 1], Z[:, 3]], [d, d + 1]
    else:
        raise AssertionError(family)
    return X, y, dep


def _fit(X, y, w, explicit, monkeypatch):
    """fastgen's fit and its warnings; ``explicit`` lifts the explicit-Hessian limit."""
    with monkeypatch.context() as m:
        if explicit:
            m.setattr(objectives, "MULTINOMIAL_EXPLICIT_MAX", 10 ** 9)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            params = fastgen.fit_logistic(X, y, sample_weight=w)
    return params, caught


def _statsmodels(X, y, w, kept):
    """MNLogit on the identified columns (constant first), integer weights as repeated
    rows: ``(coef (K−1, kept), intercept (K−1,), their standard errors)``.  Fitted on
    the columns centred on their means m (exactly the same model), the intercept mapped
    back as b = b_c − Σ m_j β_j, its standard error bounded by sd(b_c) + Σ|m_j|·sd(β_j)."""
    reps = np.ones(X.shape[0], dtype=np.int64) if w is None else w.astype(np.int64)
    Xs = np.repeat(np.asarray(X)[:, kept], reps, axis=0)
    m = Xs.mean(axis=0)
    ys = np.repeat(y, reps)
    res = statsmodels_api.MNLogit(
        ys, statsmodels_api.add_constant(Xs - m, has_constant="add")).fit(
        method="newton", maxiter=100, tol=1e-13, disp=0)
    params, bse = np.asarray(res.params).T, np.asarray(res.bse).T
    coef, se = params[:, 1:], bse[:, 1:]
    return coef, params[:, 0] - coef @ m, se, bse[:, 0] + se @ np.abs(m)


def _proba(fit, X):
    E = X @ fit.coef.T + fit.intercept
    P = np.exp(E - E.max(axis=1, keepdims=True))
    return P / P.sum(axis=1, keepdims=True)


CASES = [(fam, var, K) for i, (fam, var) in enumerate(
    [(f, v) for f in ("onehot_sum", "onehot_const", "sum_dup")
     for v in ("dense", "csr", "weighted", "offset", "bohning")])
    for K in ((5, 6, 7, 8, 9, 10)[i % 6],)]


@pytest.mark.parametrize("family,variant,K", CASES)
def test_newton_cg_names_the_columns_and_reaches_the_optimum(family, variant, K,
                                                             monkeypatch):
    X, y, dep = _design(family, K, seed=K + len(family),
                        offset=1e3 if variant == "offset" else 0.0)
    n, d = X.shape
    w = (np.random.default_rng(K).integers(1, 4, n).astype(np.float64)
         if variant == "weighted" else None)
    Xin = sp.csr_matrix(X) if variant == "csr" else X
    X_before = X.copy()
    if variant == "bohning":  # the Böhning preconditioner instead of block Jacobi
        monkeypatch.setattr(objectives, "BLOCK_PRECOND_MAX_P", 0)

    cg, cg_warn = _fit(Xin, y, w, False, monkeypatch)
    assert cg.solver == "newton-cg" and K * (d + 1) > objectives.MULTINOMIAL_EXPLICIT_MAX
    assert cg.converged and cg.n_iter <= 15
    assert [c.category for c in cg_warn] == [fastgen.CollinearityWarning]
    msg = str(cg_warn[0].message)
    assert f"rank {d + 1 - len(dep)} of {d + 1} columns" in msg
    for j in dep:
        assert f"'x{j + 1}' (X[:, {j}]) = " in msg
    assert np.array_equal(X, X_before)  # the caller's X is untouched

    ex, ex_warn = _fit(Xin, y, w, True, monkeypatch)
    assert ex.solver == "newton-cholesky" and ex.converged
    # the same rule on the same design: the same columns, in the same words
    assert [str(c.message) for c in ex_warn] == [msg]

    # a dependent column's coefficient keeps its start on both paths
    assert np.all(cg.coef[:, dep] == 0.0) and np.all(ex.coef[:, dep] == 0.0)
    kept = np.setdiff1d(np.arange(d), dep)
    coef, icpt, se, se_icpt = _statsmodels(X, y, w, kept)
    for fit in (cg, ex):
        assert fit.parametrization == "reference"
        assert np.all(fit.coef[0] == 0.0)
        assert np.all(np.abs(fit.coef[1:, kept] - coef) <= 1e-8 * se)
        assert np.all(np.abs(fit.intercept[1:] - icpt) <= 1e-8 * se_icpt)
    assert np.all(np.abs(cg.coef[1:, kept] - ex.coef[1:, kept]) <= 1e-8 * se)
    P_cg, P_ex = _proba(cg, X), _proba(ex, X)
    assert np.max(np.abs(P_cg - P_ex)) <= 1e-9


@pytest.mark.parametrize("csr", [False, True])
def test_ridge_keeps_every_column(csr, monkeypatch):
    """A ridge fit is unique on any design: Newton-CG solves on every column, with no
    collinearity warning, and agrees with the explicit fit."""
    X, y, dep = _design("onehot_sum", 7, seed=3)
    Xin = sp.csr_matrix(X) if csr else X
    fits = []
    for explicit in (False, True):
        with monkeypatch.context() as m:
            if explicit:
                m.setattr(objectives, "MULTINOMIAL_EXPLICIT_MAX", 10 ** 9)
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                fits.append(fastgen.fit_logistic(Xin, y, l2=1.0))
    cg, ex = fits
    assert cg.solver == "newton-cg" and ex.solver == "newton-cholesky"
    assert cg.converged and ex.converged
    assert np.all(cg.coef[:, dep] != 0.0)
    np.testing.assert_allclose(cg.coef, ex.coef, rtol=0, atol=1e-7)


@pytest.mark.parametrize("csr", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
def test_full_rank_fits_take_the_same_path(csr, weighted, monkeypatch):
    """On a design of full rank no column is dropped, and the fit is bitwise the one
    with the rank check switched off."""
    rng = np.random.default_rng(11 + 2 * csr + weighted)
    n, d, K = 3000, 12, 7
    X = rng.normal(size=(n, d))
    y = np.argmax(X @ rng.normal(size=(d, K)) * 0.5 + rng.gumbel(size=(n, K)), axis=1)
    w = rng.integers(1, 4, n).astype(np.float64) if weighted else None
    Xin = sp.csr_matrix(X) if csr else X
    seen = []
    real = objectives.identified_columns

    def spy(G, data, l2):
        out = real(G, data, l2)
        seen.append(out)
        return out

    with monkeypatch.context() as m:
        m.setattr(objectives, "identified_columns", spy)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            a = fastgen.fit_logistic(Xin, y, sample_weight=w)
    assert seen == [None]
    with monkeypatch.context() as m:
        m.setattr(objectives, "identified_columns", lambda G, data, l2: None)
        b = fastgen.fit_logistic(Xin, y, sample_weight=w)
    assert a.solver == b.solver == "newton-cg" and a.converged
    assert np.array_equal(a.coef, b.coef) and np.array_equal(a.intercept, b.intercept)
    assert a.n_iter == b.n_iter and a.n_hessp == b.n_hessp

"""A Firth start worse than the default one gives way to it, also where the penalty
log det I is undefined there (every probability 0 or 1): binary, multinomial, FLIC,
FLAC, dense, CSR and weighted, and the scikit-learn estimator's warm start."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import softmax

import fastgen
from fastgen.sklearn import FirthLogisticRegression


def _data(K, seed=3, n=150, d=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    B = rng.normal(size=(K, d))
    y = np.array([rng.choice(K, p=softmax(r)) for r in X @ B.T])
    return X, y, rng.uniform(0.5, 2.0, size=n)


KINDS = [(2, None), (2, "flic"), (2, "flac"), (3, None)]


@pytest.mark.parametrize("layout", ["dense", "csr", "weighted"])
@pytest.mark.parametrize("K,correction", KINDS)
@pytest.mark.parametrize("factor", [30.0, 1e4])
def test_far_firth_start_is_replaced_by_the_default(factor, K, correction, layout):
    X, y, w = _data(K)
    w = w if layout == "weighted" else None
    Xf = sp.csr_matrix(X) if layout == "csr" else X
    kw = dict(penalty="firth", correction=correction, sample_weight=w)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ref = fastgen.fit_logistic(Xf, y, **kw)
        # far starts: l* below the default start's (1e4: probabilities 0 or 1)
        far = (factor * ref.coef, factor * ref.intercept)
        m = fastgen.fit_logistic(Xf, y, init=far, **kw)
    assert m.converged
    np.testing.assert_allclose(m.coef, ref.coef, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(m.intercept, ref.intercept, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(fastgen.predict_proba(m, Xf), fastgen.predict_proba(ref, Xf),
                               rtol=0, atol=1e-9)


def test_good_firth_start_is_kept():
    """A start at the estimate is kept (it converges at once), not replaced."""
    X, y, _ = _data(2)
    ref = fastgen.fit_logistic(X, y, penalty="firth")
    m = fastgen.fit_logistic(X, y, penalty="firth", init=(ref.coef, ref.intercept))
    assert m.converged and m.n_iter <= 2
    np.testing.assert_allclose(m.coef, ref.coef, rtol=1e-9)


@pytest.mark.parametrize("scale", [1e-4, 1e4])
def test_sklearn_firth_warm_start_on_rescaled_data(scale):
    X, y, _ = _data(2, seed=8)
    est = FirthLogisticRegression(warm_start=True).fit(X, y)
    fresh = FirthLogisticRegression().fit(X * scale, y)
    before = (X * scale).copy()
    Xs = X * scale
    est.fit(Xs, y)
    assert np.array_equal(Xs, before)
    np.testing.assert_allclose(est.coef_, fresh.coef_, rtol=1e-7)
    np.testing.assert_allclose(est.predict_proba(Xs), fresh.predict_proba(Xs), atol=1e-9)

"""The coefficient rows docs/guide/logistic.rst describes: K rows for K > 2 classes;
with l2 = 0 row 0 and intercept 0 are zero and the others are statsmodels' MNLogit
log-odds against classes[0]; with l2 > 0 the rows sum to zero."""

import numpy as np
import pytest
from scipy.special import softmax

import fastgen


def _data(K, seed=6, n=400, d=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    B = rng.normal(size=(K, d))
    return X, np.array([rng.choice(K, p=softmax(r)) for r in X @ B.T])


@pytest.mark.parametrize("K", [3, 4])
def test_reference_rows_match_mnlogit(K):
    sm = pytest.importorskip("statsmodels.api")
    X, y = _data(K)
    p = fastgen.fit_logistic(X, y)
    assert p.parametrization == "reference" and p.coef.shape == (K, X.shape[1])
    assert p.intercept.shape == (K,)
    assert not np.any(p.coef[0]) and p.intercept[0] == 0.0
    ref = sm.MNLogit(y, sm.add_constant(X)).fit(disp=0, method="newton", tol=1e-12)
    np.testing.assert_allclose(p.intercept[1:], ref.params[0], rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(p.coef[1:], ref.params[1:].T, rtol=1e-6, atol=1e-8)


def test_symmetric_rows_sum_to_zero():
    X, y = _data(3)
    p = fastgen.fit_logistic(X, y, l2=1.0)
    assert p.parametrization == "symmetric" and p.coef.shape == (3, X.shape[1])
    np.testing.assert_allclose(p.coef.sum(axis=0), 0.0, atol=1e-12)

"""logistic_inference where every fitted probability is 0 or 1 at the model's
coefficients (data other than the fitted ones): a ValueError that says so, before any
rank analysis (the information is zero, which a rank check would blame on the design),
for binary and multinomial, dense, CSR, weighted, Firth and Dask."""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import softmax

import fastgen

MSG = "every fitted probability is 0 or 1"


def _data(K, seed=4, n=200, d=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    B = rng.normal(size=(K, d))
    y = np.array([rng.choice(K, p=softmax(r)) for r in X @ B.T])
    return X, y, rng.uniform(0.5, 2.0, size=n)


def _saturating(K, X, y, w, **kw):
    """A model fitted on X, and other X on which it puts every probability at 0 or 1
    while [1, X_other] has full rank (checked against numpy)."""
    m = fastgen.fit_logistic(X, y, sample_weight=w, **kw)
    Xo = X + 1e4 * np.sign(m.coef[-1])  # η moves by ~1e4·Σ|β_j|: saturated
    P = fastgen.predict_proba(m, Xo)
    assert np.all((P == 0.0) | (P == 1.0))
    assert np.linalg.matrix_rank(np.c_[np.ones(len(y)), Xo]) == X.shape[1] + 1
    return m, Xo


@pytest.mark.parametrize("layout", ["dense", "csr", "weighted"])
@pytest.mark.parametrize("K", [2, 3])
@pytest.mark.parametrize("penalty", [None, "firth"])
def test_saturated_other_data_says_so(K, layout, penalty):
    X, y, w = _data(K)
    w = w if layout == "weighted" else None
    m, Xo = _saturating(K, X, y, w, penalty=penalty)
    before = Xo.copy()
    Xf = sp.csr_matrix(Xo) if layout == "csr" else Xo
    with pytest.raises(ValueError, match=MSG) as info:
        fastgen.logistic_inference(m, Xf, y, sample_weight=w)
    assert "rank" not in str(info.value)
    assert np.array_equal(Xo, before)


def test_fitted_data_still_infer():
    X, y, _ = _data(2)
    m = fastgen.fit_logistic(X, y)
    r = fastgen.logistic_inference(m, X, y)
    assert np.all(np.isfinite(r.bse))


def test_dask_saturated_other_data_says_so():
    da = pytest.importorskip("dask.array")
    from fastgen import dask as fdask

    X, y, _ = _data(2)
    m, Xo = _saturating(2, X, y, None)
    with pytest.raises(ValueError, match=MSG):
        fdask.logistic_inference(m, da.from_array(Xo, chunks=(50, 3)),
                                 da.from_array(y, chunks=50))

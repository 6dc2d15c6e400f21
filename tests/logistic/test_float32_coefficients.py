"""Logistic fits on float32 X hold float64 coefficients and intercepts.

At a column offset m the intercept of the user's coordinates is b = b_c − Σ m_j β_j, of
order m·|β|; rounded to float32 it moved every fitted log-odds by up to an ulp of |b|
(probabilities off by 1e-3 to 1e-1 at offsets of 2019 to 1e5).  The fit on float32 X
must be the fit on the same values in float64: checked against a centred float64
Newton written here and against statsmodels (slopes' standard errors, which centring
does not change), at offsets and scales, binary and multinomial, dense and CSR,
weighted, Firth; scoring keeps X float32 and leaves it untouched.
"""

import dataclasses
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import expit, softmax

import fastgen
from fastgen.sklearn import FirthLogisticRegression, LogisticRegression

OFFSETS = [0.0, 2019.0, 1e4, 1e5, 1e6]


def _data(seed, K, offset, scale, n=300, d=3):
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, d))
    B = rng.normal(size=(K, d))
    y = np.array([rng.choice(K, p=softmax(r)) for r in Z @ B.T])
    w = rng.uniform(0.5, 2.0, size=n)
    return (Z * scale + offset).astype(np.float32), y, w


def _newton64(X, y, K, w):
    """Probabilities (n, K) of the unpenalised MLE on float64 X, by plain Newton steps
    on columns centred in float64 (reference layout for K > 2)."""
    X = np.asarray(X.toarray() if hasattr(X, "toarray") else X, dtype=np.float64)
    n, d = X.shape
    w = np.ones(n) if w is None else w
    Z = np.hstack([X - (w @ X) / w.sum(), np.ones((n, 1))])
    p = d + 1
    m = K - 1
    B = np.zeros((m, p))
    Y = np.eye(K)[y][:, 1:]
    for _ in range(60):
        P = softmax(np.hstack([np.zeros((n, 1)), Z @ B.T]), axis=1)[:, 1:]
        g = ((w[:, None] * (P - Y)).T @ Z).ravel()
        H = np.zeros((m * p, m * p))
        for k in range(m):
            for j in range(m):
                c = w * P[:, k] * ((k == j) - P[:, j])
                H[k * p:(k + 1) * p, j * p:(j + 1) * p] = (Z * c[:, None]).T @ Z
        step = np.linalg.solve(H, g)
        B -= step.reshape(m, p)
        if np.max(np.abs(step)) < 1e-13:
            break
    eta = np.hstack([np.zeros((n, 1)), Z @ B.T])
    return softmax(eta, axis=1)


def _wrap(layout):
    return sp.csr_matrix if layout == "csr" else (lambda a: a)


@pytest.mark.parametrize("layout", ["dense", "csr", "weighted"])
@pytest.mark.parametrize("K", [2, 3])
@pytest.mark.parametrize("offset,scale", [(c, 1.0) for c in OFFSETS] + [(1e4, 1e-2),
                                                                        (2019.0, 1e3)])
def test_float32_fit_is_the_fit_of_the_same_values(offset, scale, K, layout):
    X32, y, w = _data(int(offset) % 97 + K, K, offset, scale)
    w = w if layout == "weighted" else None
    wrap = _wrap(layout)
    before = X32.copy()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m32 = fastgen.fit_logistic(wrap(X32), y, sample_weight=w)
        m64 = fastgen.fit_logistic(wrap(X32.astype(np.float64)), y, sample_weight=w)
        assert m32.coef.dtype == np.float64 and m32.intercept.dtype == np.float64
        p32 = fastgen.predict_proba(m32, wrap(X32))
        assert p32.dtype == np.float64
        np.testing.assert_allclose(p32, _newton64(X32, y, K, w), rtol=0, atol=1e-6)
        np.testing.assert_allclose(p32, fastgen.predict_proba(m64, X32.astype(np.float64)),
                                   rtol=0, atol=1e-6)
        # the mean fitted probability is the weighted event rate (the score's intercept row)
        ww = np.ones(len(y)) if w is None else w
        np.testing.assert_allclose(ww @ p32 / ww.sum(), np.bincount(y, ww, K) / ww.sum(),
                                   rtol=0, atol=1e-8)
        r32 = fastgen.logistic_inference(m32, wrap(X32), y, sample_weight=w)
        r64 = fastgen.logistic_inference(m64, wrap(X32.astype(np.float64)), y,
                                         sample_weight=w)
    np.testing.assert_allclose(np.asarray(r32.bse), np.asarray(r64.bse), rtol=1e-4)
    assert np.array_equal(X32, before)


@pytest.mark.parametrize("offset", [2019.0, 1e5])
def test_float32_slopes_bse_match_statsmodels(offset):
    sm = pytest.importorskip("statsmodels.api")
    X32, y, _ = _data(5, 2, offset, 1.0)
    m32 = fastgen.fit_logistic(X32, y)
    r32 = fastgen.logistic_inference(m32, X32, y)
    X = X32.astype(np.float64)
    ref = sm.Logit(y, sm.add_constant(X - X.mean(axis=0))).fit(disp=0, tol=1e-12)
    np.testing.assert_allclose(np.asarray(r32.bse)[1:], ref.bse[1:], rtol=1e-4)
    np.testing.assert_allclose(np.asarray(r32.params)[1:], ref.params[1:], rtol=1e-6)


@pytest.mark.parametrize("correction", [None, "flic", "flac"])
@pytest.mark.parametrize("offset", [0.0, 1e4, 1e6])
def test_float32_firth_is_the_fit_of_the_same_values(offset, correction):
    X32, y, w = _data(11, 2, offset, 1.0, n=120)
    m32 = fastgen.fit_logistic(X32, y, penalty="firth", correction=correction)
    m64 = fastgen.fit_logistic(X32.astype(np.float64), y, penalty="firth",
                               correction=correction)
    assert m32.coef.dtype == np.float64 and m32.intercept.dtype == np.float64
    np.testing.assert_allclose(fastgen.predict_proba(m32, X32),
                               fastgen.predict_proba(m64, X32.astype(np.float64)),
                               rtol=0, atol=1e-6)
    r32 = fastgen.logistic_inference(m32, X32, y)
    r64 = fastgen.logistic_inference(m64, X32.astype(np.float64), y)
    np.testing.assert_allclose(np.asarray(r32.bse), np.asarray(r64.bse), rtol=1e-4)


def test_float32_multinomial_firth():
    X32, y, _ = _data(13, 3, 1e5, 1.0, n=150)
    m32 = fastgen.fit_logistic(X32, y, penalty="firth")
    m64 = fastgen.fit_logistic(X32.astype(np.float64), y, penalty="firth")
    np.testing.assert_allclose(fastgen.predict_proba(m32, X32),
                               fastgen.predict_proba(m64, X32.astype(np.float64)),
                               rtol=0, atol=1e-6)


def test_wrong_optimum_is_not_excused_as_float32_rounding():
    """Coefficients rounded to float32 at an offset are not the estimate: warned (the
    float32 rounding of the intercept, ~ulp(1e6·|β|), is many standard errors here)."""
    X32, y, _ = _data(3, 2, 1e6, 0.05)
    m = fastgen.fit_logistic(X32, y)
    rounded = dataclasses.replace(m, intercept=m.intercept.astype(np.float32))
    assert rounded.intercept.dtype == np.float64  # float32 given: converted
    assert rounded.intercept[0] != m.intercept[0]
    with pytest.warns(fastgen.ConvergenceWarning, match="not the estimate"):
        fastgen.logistic_inference(rounded, X32, y)


@pytest.mark.parametrize("K,l2", [(2, 0.0), (3, 0.0), (3, 1.0)])
def test_old_float32_file_loads(tmp_path, K, l2):
    """A file of float32 coefficients (written before they were float64) loads, its
    consistency checks allowing float32's rounding (a symmetric fit's rows sum to zero
    to float32's rounding only)."""
    X32, y, _ = _data(7, K, 0.0, 1.0)
    m = fastgen.fit_logistic(X32, y, l2=l2)
    path = fastgen.save_params(tmp_path / "m", m)
    with np.load(path, allow_pickle=False) as f:
        fields = {k: f[k] for k in f.files}
    for k in fields:
        if k in ("coef", "intercept"):
            fields[k] = fields[k].astype(np.float32)
    assert any(v.dtype == np.float32 for v in fields.values())
    old = tmp_path / "old.npz"
    np.savez(old, **fields)
    back = fastgen.load_params(old)
    assert back.coef.dtype == np.float64 and back.intercept.dtype == np.float64
    np.testing.assert_array_equal(back.coef, m.coef.astype(np.float32))
    np.testing.assert_allclose(fastgen.predict_proba(back, X32),
                               fastgen.predict_proba(m, X32), atol=1e-5)
    again = fastgen.load_params(fastgen.save_params(tmp_path / "again", m))
    np.testing.assert_array_equal(again.coef, m.coef)
    np.testing.assert_array_equal(again.intercept, m.intercept)


@pytest.mark.parametrize("est", [LogisticRegression(C=np.inf),
                                 FirthLogisticRegression()])
def test_sklearn_float32_offsets(est):
    X32, y, _ = _data(17, 2, 1e5, 1.0)
    a = est.__class__(**est.get_params()).fit(X32, y)
    b = est.__class__(**est.get_params()).fit(X32.astype(np.float64), y)
    assert a.coef_.dtype == np.float64
    np.testing.assert_allclose(a.predict_proba(X32), b.predict_proba(X32.astype(np.float64)),
                               rtol=0, atol=1e-6)


def test_scoring_blocks_match_expit():
    """More rows than one cast block: η of float32 X equals float64 X's exactly."""
    from fastgen.logistic.scoring import _CAST_ROWS

    X32, y, _ = _data(19, 2, 1e4, 1.0, n=2 * _CAST_ROWS + 17)
    m = fastgen.fit_logistic(X32, y)
    X = X32.astype(np.float64)
    want = expit(X @ m.coef[0] + m.intercept[0])
    np.testing.assert_array_equal(fastgen.predict_proba(m, X32)[:, 1],
                                  fastgen.predict_proba(m, X)[:, 1])
    np.testing.assert_allclose(fastgen.predict_proba(m, X32)[:, 1], want, rtol=1e-13)


@pytest.mark.parametrize("K", [2, 3])
def test_dask_float32_offsets(K):
    da = pytest.importorskip("dask.array")
    from fastgen import dask as fdask

    X32, y, _ = _data(23, K, 1e5, 1.0)
    m = fdask.fit_logistic(da.from_array(X32, chunks=(100, 3)), da.from_array(y, chunks=100))
    assert m.coef.dtype == np.float64 and m.intercept.dtype == np.float64
    np.testing.assert_allclose(fastgen.predict_proba(m, X32), _newton64(X32, y, K, None),
                               rtol=0, atol=1e-6)
    p = fdask.predict_proba(m, da.from_array(X32, chunks=(100, 3))).compute()
    np.testing.assert_allclose(p, fastgen.predict_proba(m, X32), rtol=0, atol=1e-15)

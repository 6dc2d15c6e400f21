"""Inference of a model fitted on float32 X, with and without column offsets.

A float32 X and a float32 model hold values that float64 represents exactly, so the
inference of the float32 fit must be the inference of the same coefficients on the same
values in float64: every field equal to rounding.  This holds with an offset (a column
whose mean exceeds its spread, where the inference works in the centred frame), for
plain ML, Firth, FLIC and FLAC, binary and multinomial, dense and CSR, frequency
weights, profile intervals and the scikit-learn adapter's ``summary``; X is left
untouched.
"""

import dataclasses
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import fastgen

OFFSETS = [0.0, 10.0, 1e3, 1e5]
FITS = {"plain": {}, "firth": {"penalty": "firth"},
        "flic": {"penalty": "firth", "correction": "flic"},
        "flac": {"penalty": "firth", "correction": "flac"}}


def _data(seed, K, c, n=500):
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, 3))
    if K == 2:
        y = (Z @ [1.0, -0.5, 0.3] + 0.2 + rng.logistic(size=n) > 0).astype(np.int64)
    else:
        B = np.array([[0.8, -0.4, 0.0], [0.1, 0.6, -0.7], [-0.5, 0.2, 0.4]])
        y = np.argmax(Z @ B + rng.gumbel(size=(n, 3)), axis=1).astype(np.int64)
    w = rng.integers(1, 4, size=n).astype(np.float64)
    return (Z * 2.0 + c).astype(np.float32), y, w


def _as64(model):
    return dataclasses.replace(model, coef=model.coef.astype(np.float64),
                               intercept=model.intercept.astype(np.float64))


def _same(r32, r64, rtol):
    for name in ("params", "bse", "tvalues", "cov_params"):
        a = np.asarray(getattr(r32, name), dtype=np.float64)
        b = np.asarray(getattr(r64, name), dtype=np.float64)
        assert np.all(np.isfinite(a[np.isfinite(b)])), name
        np.testing.assert_allclose(a, b, rtol=rtol, atol=0, err_msg=name)
    np.testing.assert_allclose(r32.llf, r64.llf, rtol=rtol)


@pytest.mark.parametrize("layout", ["dense", "csr", "weighted"])
@pytest.mark.parametrize("K,fit", [(2, f) for f in FITS] + [(3, "plain"), (3, "firth")])
@pytest.mark.parametrize("c", OFFSETS)
def test_float32_inference_is_that_of_the_same_values(c, K, fit, layout):
    X32, y, w = _data(int(c) % 89 + K, K, c)
    before = X32.copy()
    w = w if layout == "weighted" else None
    wrap = sp.csr_matrix if layout == "csr" else (lambda a: a)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = fastgen.fit_logistic(wrap(X32), y, sample_weight=w, **FITS[fit])
        assert model.coef.dtype == np.float64 and model.intercept.dtype == np.float64
        r32 = fastgen.logistic_inference(model, wrap(X32), y, sample_weight=w)
        r64 = fastgen.logistic_inference(_as64(model), wrap(X32.astype(np.float64)), y,
                                         sample_weight=w)
    assert np.array_equal(X32, before)
    # FLIC and FLAC refit (Firth, the augmented data) on X's dtype: the fits' tolerance
    _same(r32, r64, 1e-12 if fit in ("plain", "firth") else 1e-6)
    if fit != "flic":  # FLIC defines no covariance between intercept and slopes
        rows = X32[:20].astype(np.float64)
        np.testing.assert_allclose(r32.get_prediction(rows).se,
                                   r64.get_prediction(rows).se, rtol=1e-6)


@pytest.mark.parametrize("fit", ["plain", "firth"])
@pytest.mark.parametrize("c", [10.0, 1e3])
def test_float32_profile_intervals(c, fit):
    X32, y, _ = _data(5, 2, c)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = fastgen.fit_logistic(X32, y, **FITS[fit])
        r32 = fastgen.logistic_inference(model, X32, y, ci="profile")
        r64 = fastgen.logistic_inference(_as64(model), X32.astype(np.float64), y,
                                         ci="profile")
    assert np.all(np.isfinite(r32.profile_ci))
    np.testing.assert_allclose(r32.profile_ci, r64.profile_ci, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(r32.lr_pvalues, r64.lr_pvalues, rtol=1e-6, atol=1e-12)


@pytest.mark.parametrize("c", [0.0, 10.0, 1e3])
def test_float32_estimator_summary(c):
    from fastgen.sklearn import LogisticRegression

    X32, y, _ = _data(7, 2, c)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = LogisticRegression(C=np.inf).fit(X32, y)
        text = str(est.summary())
        ref = fastgen.logistic_inference(_as64(est.params_), X32.astype(np.float64), y)
    assert "Logit Regression Results" in text
    np.testing.assert_allclose(np.asarray(est.inference_.bse), np.asarray(ref.bse),
                               rtol=1e-12)

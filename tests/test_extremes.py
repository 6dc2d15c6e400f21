"""Extreme magnitudes: features near 1e±150, log-likelihoods far below −1e5.

Where the model is defined in floating point, fits and posteriors must be finite and
correct; where it is not (squares or 1/σ² overflow), the fit must raise a clear
``ValueError`` rather than return inf or NaN.  pytest turns every RuntimeWarning into an
error, so these tests also prove no overflow warning escapes.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from reference import make_blobs

import fastgen

GDA_TYPES = ("pooled", "per_class", "diagonal", "pooled_diagonal")
EPS = np.finfo(np.float64).eps


@pytest.fixture(scope="module")
def blobs():
    return make_blobs(90, 3, 3, seed=11)


def _gaussian_fits(X, y):
    out = {c: fastgen.fit_gda(X, y, c) for c in GDA_TYPES}
    out["gaussian-nb"] = fastgen.fit_gaussian_nb(X, y)
    return out


def _assert_posteriors_ok(p, X, y=None):
    lp = fastgen.predict_log_proba(p, X)
    pr = fastgen.predict_proba(p, X)
    assert np.all(np.isfinite(lp)) or np.all(lp[np.isfinite(lp)] <= 0)
    assert not np.any(np.isnan(lp)) and not np.any(np.isnan(pr))
    assert np.all(lp <= 0)
    np.testing.assert_allclose(pr.sum(axis=1), 1.0, atol=8 * EPS)
    if y is not None:
        np.testing.assert_array_equal(fastgen.predict(p, X), p.classes[np.argmax(lp, 1)])
    return lp, pr


@pytest.mark.parametrize("scale", [1e-150, 1e-100, 1e100, 1e150])
def test_gaussian_models_scale_equivariant(blobs, scale):
    """X·s gives means·s, covariances·s², log|Σ| + 2d·log s, and the same posteriors."""
    X, y = blobs
    d = X.shape[1]
    ref = _gaussian_fits(X, y)
    got = _gaussian_fits(X * scale, y)
    for name, p in got.items():
        q = ref[name]
        np.testing.assert_allclose(p.means / scale, q.means, rtol=1e-12, atol=1e-12,
                                   err_msg=name)
        cov = p.covariance if name != "gaussian-nb" else p.variances
        cq = q.covariance if name != "gaussian-nb" else q.variances
        assert np.all(np.isfinite(cov)), name
        np.testing.assert_allclose(cov / scale**2, cq, rtol=1e-10, err_msg=name)
        if name != "gaussian-nb":
            shift = 2 * d * np.log(scale)  # log|s²Σ| = log|Σ| + 2d·log s
            np.testing.assert_allclose(p.log_det, q.log_det + shift, rtol=1e-12,
                                       atol=1e-9 * abs(shift))
        lp, pr = _assert_posteriors_ok(p, X * scale, y)
        np.testing.assert_allclose(pr, fastgen.predict_proba(q, X), atol=1e-9, err_msg=name)
        jll = fastgen.joint_log_likelihood(p, X * scale)
        assert np.all(np.isfinite(jll))


@pytest.mark.parametrize("covariance", GDA_TYPES)
def test_gda_overflowing_squares_raise(blobs, covariance):
    X, y = blobs
    with pytest.raises(ValueError, match=r"squares overflow float64; rescale"):
        fastgen.fit_gda(X * 1e160, y, covariance)


def test_gaussian_nb_overflowing_squares_raise(blobs):
    X, y = blobs
    with pytest.raises(ValueError, match=r"squares overflow float64; rescale"):
        fastgen.fit_gaussian_nb(X * 1e160, y)
    with pytest.raises(ValueError, match=r"squares overflow float64"):
        fastgen.class_moments(X * 1e160, y, kind="diagonal")


@pytest.mark.parametrize("covariance", ["diagonal", "pooled_diagonal"])
def test_gda_variance_underflow_raises(blobs, covariance):
    """At 1e-160 variances are ~1e-320 (subnormal, a few significant bits): no model
    is representable, full covariances included (their posteriors were off by 7e-4);
    tests/gda/test_gda_scale.py has the grid of scales."""
    X, y = blobs
    with pytest.raises(fastgen.SingularCovarianceError, match=r"too small for float64"):
        fastgen.fit_gda(X * 1e-160, y, covariance)
    with pytest.raises(ValueError, match=r"too small for float64"):
        fastgen.fit_gaussian_nb(X * 1e-160, y)
    with pytest.raises(fastgen.SingularCovarianceError, match=r"rescale the features"):
        fastgen.fit_gda(X * 1e-160, y, "per_class")


@pytest.mark.parametrize("scale", [1e-30, 1e25])
def test_float32_out_of_range_raises(blobs, scale):
    """float32 params cannot hold the covariance of float32 data scaled this far."""
    X, y = blobs
    X32 = (X * scale).astype(np.float32)
    for cov in GDA_TYPES:
        with pytest.raises(ValueError, match=r"float32"):
            fastgen.fit_gda(X32, y, cov)
    with pytest.raises(ValueError, match=r"float32"):
        fastgen.fit_gaussian_nb(X32, y)


# ------------------------------------------------------------------ far from every class


def _far_points(X, factor):
    """Points |x| ≈ factor·spread away from every class: log-likelihoods ≪ −1e5."""
    rng = np.random.default_rng(3)
    return X[:6] + factor * rng.standard_normal((6, X.shape[1]))


@pytest.mark.parametrize("factor", [1e4, 1e6, 1e9])
def test_far_points_gaussian(blobs, factor):
    X, y = blobs
    Xf = _far_points(X, factor)
    for name, p in _gaussian_fits(X, y).items():
        jll = fastgen.joint_log_likelihood(p, Xf)
        assert np.all(np.isfinite(jll)) and np.all(jll < -1e5), name
        lp, pr = _assert_posteriors_ok(p, Xf, y)
        assert np.all(np.isfinite(lp)), name
        # the predicted class has posterior ≥ 1/K
        assert np.all(pr.max(axis=1) >= 1 / 3 - 1e-12)


def test_far_points_posteriors_match_direct_log_sum_exp(blobs):
    """Posteriors of far points equal the jll normalised in long double."""
    X, y = blobs
    Xf = _far_points(X, 1e6)
    for name, p in _gaussian_fits(X, y).items():
        jll = fastgen.joint_log_likelihood(p, Xf).astype(np.longdouble)
        m = jll.max(axis=1, keepdims=True)
        want = jll - m - np.log(np.exp(jll - m).sum(axis=1, keepdims=True))
        lp = fastgen.predict_log_proba(p, Xf)
        # the jll is ~1e13 here: absolute rounding of the jll is what bounds the error
        tol = 64 * EPS * float(np.abs(jll).max())
        np.testing.assert_allclose(lp, want.astype(np.float64), rtol=0, atol=tol,
                                   err_msg=name)


def test_far_points_count_models():
    rng = np.random.default_rng(5)
    C = rng.poisson(1.0, size=(60, 5)).astype(float)
    y = np.arange(60) % 3
    Cf = np.full((4, 5), 1e7)  # counts in the millions: jll ≈ −1e8
    Cf[1, 0] = 0.0
    for fit in (fastgen.fit_multinomial_nb, fastgen.fit_complement_nb):
        p = fit(C, y)
        for Z in (Cf, sp.csr_matrix(Cf)):
            jll = fastgen.joint_log_likelihood(p, Z)
            assert np.all(np.isfinite(jll))
            lp, pr = _assert_posteriors_ok(p, Z)
            assert np.all(np.isfinite(lp))
    p = fastgen.fit_bernoulli_nb(np.minimum(C, 1), y, binarize=None, alpha=1e-8)
    _assert_posteriors_ok(p, np.ones((3, 5)))


def test_far_points_logistic():
    rng = np.random.default_rng(7)
    X = rng.standard_normal((120, 3))
    y3 = np.digitize(X[:, 0] + rng.standard_normal(120), [-0.5, 0.5])
    for yy in (y3 > 0, y3):
        p = fastgen.fit_logistic(X, yy, l2=1.0)
        Xf = np.array([[1e12, -1e12, 3e11], [-1e15, 0.0, 0.0], [0.0, 0.0, 1e300]])
        jll = fastgen.joint_log_likelihood(p, Xf)
        assert np.all(np.isfinite(jll))
        lp, pr = _assert_posteriors_ok(p, Xf)
        assert not np.any(np.isnan(lp))
        # a saturated row is one-hot; log-probabilities may reach −inf only for the losers
        np.testing.assert_array_equal(np.argmax(lp, 1), np.argmax(jll, 1))


# ------------------------------------------------------------------- logistic extremes


@pytest.mark.parametrize("scale", [1e-150, 1e-20])
def test_logistic_tiny_features(scale):
    """Unpenalised binary logistic regression is scale-equivariant: coef·s is constant."""
    rng = np.random.default_rng(9)
    X = rng.standard_normal((150, 2))
    y = (X[:, 0] + rng.standard_normal(150) > 0).astype(int)
    ref = fastgen.fit_logistic(X, y)
    p = fastgen.fit_logistic(X * scale, y)
    np.testing.assert_allclose(p.coef * scale, ref.coef, rtol=1e-6)
    np.testing.assert_allclose(p.intercept, ref.intercept, rtol=1e-6, atol=1e-9)
    _, pr = _assert_posteriors_ok(p, X * scale)
    np.testing.assert_allclose(pr, fastgen.predict_proba(ref, X), atol=1e-8)


@pytest.mark.parametrize("scale", [1e100, 1e150])
def test_logistic_huge_features_warn_not_nan(scale):
    """The stopping rule max|∇f|/Σw ≤ tol is in the features' units: at 1e150 it cannot be
    met.  The fit must say so (ConvergenceWarning), never emit a RuntimeWarning or NaN."""
    rng = np.random.default_rng(9)
    X = rng.standard_normal((150, 2))
    y = (X[:, 0] + rng.standard_normal(150) > 0).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        try:
            p = fastgen.fit_logistic(X * scale, y, l2=1.0, max_iter=20)
        except np.linalg.LinAlgError as exc:  # a clear failure is acceptable too
            assert "Hessian" in str(exc)
            return
        except fastgen.ConvergenceWarning as w:
            assert "max|gradient|" in str(w) or "separable" in str(w)
            return
    assert np.all(np.isfinite(p.coef)) and np.all(np.isfinite(p.intercept))
    _assert_posteriors_ok(p, X * scale)

"""unbiased=True with NaN in X: rows with every feature missing change only the class
weights and priors; the correction of the EM kinds is W'/(W' − K) or W'_k/(W'_k − 1)
over the rows with an observed value; without NaN the fit is the complete-data fit."""

import numpy as np
import pytest

import fastgen

KINDS = ["pooled", "per_class", "diagonal", "pooled_diagonal"]
FIELDS = ["means", "covariance", "cholesky", "log_det"]


def _data(seed, n=120, d=4, K=3):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % K
    A = rng.normal(size=(d, d))
    X = rng.normal(size=(n, d)) @ A + 3.0 * y[:, None] + 100.0 * seed
    w = rng.uniform(0.2, 3.0, n)
    return X, y, w, rng


def _with_nan(X, rng, frac=0.2):
    X = X.copy()
    X[rng.random(X.shape) < frac] = np.nan
    X[np.isnan(X).all(axis=1), 0] = 1.0  # keep every original row observed somewhere
    return X


def _close(a, b, rtol):
    for f in FIELDS:  # log|Σ| near 0: its error is absolute (a sum of logs)
        np.testing.assert_allclose(getattr(b, f), getattr(a, f), rtol=rtol,
                                   atol=10 * rtol if f == "log_det" else 0, err_msg=f)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_all_nan_rows_change_only_priors_unbiased(kind, weighted, seed):
    X, y, w, rng = _data(seed)
    X = _with_nan(X, rng)
    extra = np.full((15, X.shape[1]), np.nan)
    ye = rng.integers(0, 3, 15)
    we = rng.uniform(0.5, 2.0, 15)
    Xa, ya, wa = np.r_[X, extra], np.r_[y, ye], np.r_[w, we]
    kw = dict(nan_policy="marginalize", unbiased=True)
    a = fastgen.fit_gda(X, y, kind, sample_weight=w if weighted else None, **kw)
    b = fastgen.fit_gda(Xa, ya, kind, sample_weight=wa if weighted else None, **kw)
    _close(a, b, rtol=1e-14)  # a few ulps: W − 1 multiplied in, then divided out
    add = np.bincount(ye, weights=we if weighted else None, minlength=3)
    np.testing.assert_allclose(b.n_per_class, a.n_per_class + add, rtol=1e-15)


@pytest.mark.parametrize("kind", ["pooled", "per_class"])
@pytest.mark.parametrize("weighted", [False, True])
def test_em_unbiased_is_ml_times_observed_factor(kind, weighted):
    """Reference: the maximum-likelihood EM estimate times W'/(W' − K) or
    W'_k/(W'_k − 1), W' the weight of the rows with an observed value."""
    X, y, w, rng = _data(3)
    X = _with_nan(X, rng)
    X = np.r_[X, np.full((10, X.shape[1]), np.nan)]
    y = np.r_[y, np.zeros(10, int)]
    w = np.r_[w, np.full(10, 4.0)] if weighted else None
    ml = fastgen.fit_gda(X, y, kind, sample_weight=w, nan_policy="marginalize")
    ub = fastgen.fit_gda(X, y, kind, sample_weight=w, nan_policy="marginalize",
                         unbiased=True)
    seen = ~np.isnan(X).all(axis=1)
    ww = np.ones(len(y)) if w is None else w
    Wk = np.bincount(y[seen], weights=ww[seen], minlength=3)
    if kind == "pooled":
        ref = ml.covariance * Wk.sum() / (Wk.sum() - 3)
    else:
        ref = ml.covariance * (Wk / (Wk - 1.0))[:, None, None]
    np.testing.assert_allclose(ub.covariance, ref, rtol=1e-13)
    np.testing.assert_allclose(ub.means, ml.means, rtol=1e-15)
    np.testing.assert_array_equal(ub.priors, ml.priors)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("weighted", [False, True])
def test_no_nan_is_complete_unbiased_fit_bitwise(kind, weighted):
    X, y, w, _ = _data(4)
    sw = w if weighted else None
    a = fastgen.fit_gda(X, y, kind, sample_weight=sw, unbiased=True)
    b = fastgen.fit_gda(X, y, kind, sample_weight=sw, unbiased=True,
                        nan_policy="marginalize")
    for f in FIELDS + ["priors", "n_per_class"]:
        np.testing.assert_array_equal(getattr(b, f), getattr(a, f), err_msg=f)


def test_unbiased_per_class_needs_two_observed_rows():
    X, y, _, _ = _data(5, n=30)
    X[y == 1] = np.nan
    X[np.flatnonzero(y == 1)[0]] = 1.0  # one observed row of class 1
    with pytest.raises(fastgen.SingularCovarianceError, match="class 1"):
        fastgen.fit_gda(X, y, "per_class", nan_policy="marginalize", unbiased=True)

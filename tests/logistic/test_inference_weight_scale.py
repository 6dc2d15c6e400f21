"""logistic_inference reads sample_weight as frequency weights (statsmodels'
freq_weights): weights that sum to fewer than one per row warn, saying so and how to pass
relative weights, and a weight sum not above the number of parameters (df_resid <= 0)
is a ValueError rather than a table."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import fastgen


def _data(seed=0, n=300, K=2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3)) * [1.0, 10.0, 0.1]
    eta = X @ [0.8, -0.05, 3.0]
    y = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(int)
    if K == 3:
        y = np.where(rng.random(n) < 0.3, 2, y)
    return X, y, rng.uniform(0.1, 1.0, n)


@pytest.mark.parametrize("form", ["dense", "csr"])
@pytest.mark.parametrize("K", [2, 3])
def test_small_weights_warn_and_match_statsmodels_freq_weights(form, K):
    sm = pytest.importorskip("statsmodels.api")
    X, y, w = _data(1, K=K)
    m = fastgen.fit_logistic(X, y, sample_weight=w)
    Xi = sp.csr_matrix(X) if form == "csr" else X
    with pytest.warns(UserWarning, match=r"frequency weights.*w \* n / w\.sum\(\)"):
        r = fastgen.logistic_inference(m, Xi, y, sample_weight=w)
    assert r.nobs == pytest.approx(w.sum(), rel=1e-12)
    if K == 2:  # the reference: statsmodels' GLM with freq_weights
        ref = sm.GLM(y, sm.add_constant(X), family=sm.families.Binomial(),
                     freq_weights=w).fit(tol=1e-12)
        np.testing.assert_allclose(np.asarray(r.bse), ref.bse, rtol=1e-6)
        assert r.df_resid == pytest.approx(ref.df_resid, rel=1e-12)


@pytest.mark.parametrize("scale", [1e-3, 1e-2])
@pytest.mark.parametrize("method", ["newton", "firth"])
@pytest.mark.parametrize("form", ["dense", "csr"])
def test_weight_sum_below_parameters_raises(scale, method, form):
    X, y, w = _data(2)
    w = w * scale  # Σw ≈ 0.16 or 1.6, below the 4 parameters
    m = fastgen.fit_logistic(X, y, sample_weight=w,
                             penalty="firth" if method == "firth" else None)
    Xi = sp.csr_matrix(X) if form == "csr" else X
    w0 = w.copy()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match=r"df_resid = -?[0-9.]+ <= 0.*frequency "
                                             r"weights.*w \* n / w\.sum\(\)"):
            fastgen.logistic_inference(m, Xi, y, sample_weight=w)
    np.testing.assert_array_equal(w, w0)


def test_rescaled_weights_give_the_rescaled_table_without_warning():
    X, y, w = _data(3)
    m = fastgen.fit_logistic(X, y, sample_weight=w * 1e-3)
    rel = w * len(w) / w.sum()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = fastgen.logistic_inference(m, X, y, sample_weight=rel)
    assert r.nobs == pytest.approx(len(w), rel=1e-12)
    assert r.df_resid == pytest.approx(len(w) - 4, rel=1e-12)


@pytest.mark.parametrize("weights", ["zero_one", "integer", "none"])
def test_frequency_weights_do_not_warn(weights):
    X, y, _ = _data(4)
    rng = np.random.default_rng(0)
    w = {"zero_one": (rng.random(len(y)) < 0.7).astype(float),
         "integer": rng.integers(1, 4, len(y)).astype(float), "none": None}[weights]
    m = fastgen.fit_logistic(X, y, sample_weight=w)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = fastgen.logistic_inference(m, X, y, sample_weight=w)
    assert r.df_resid > 0


def test_sklearn_summary_says_why():
    import fastgen.sklearn as fs

    X, y, w = _data(5)
    est = fs.LogisticRegression(C=np.inf).fit(X, y, sample_weight=w * 1e-3)
    with pytest.raises(ValueError, match="frequency weights"):
        est.summary()

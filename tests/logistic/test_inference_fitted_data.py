"""``logistic_inference`` checks that it is given the data the model was fitted on: the
score of the (penalised) log-likelihood at the model's coefficients must be zero to
within the fit's tolerance, read as the Newton decrement ½gᵀI⁻¹g.

The family: the right data at column offsets up to 1e8 and units 1e-8 … 1e8 (no false
alarm), dense, CSR and weighted rows, plain and Firth fits, binary and multinomial; and
data that are not the fit's (weights forgotten, a subset of the rows, other labels,
other rows), whose decrement is checked against statsmodels' score and Hessian.
"""

import re
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from reference_newton import binary_score

import fastgen
from tests.reference import require

NOT_ESTIMATE = "the model's coefficients are not the estimate for the data given"


def _data(K, seed=17, n=600, c=0.0, s=1.0):
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, 3))
    if K == 2:
        y = (rng.random(n) < 1 / (1 + np.exp(-(Z @ [1.0, -0.5, 0.2])))).astype(np.int64)
    else:
        B = np.array([[0.8, -0.4, 0.0], [0.1, 0.6, -0.7], [-0.5, 0.2, 0.4]])
        y = np.argmax(Z @ B + rng.gumbel(size=(n, 3)), axis=1).astype(np.int64)
    w = rng.integers(1, 5, size=n).astype(np.float64)
    return (Z * 2.0 + c) * s, y, w


FITS = {"plain": {}, "firth": {"penalty": "firth"}}


@pytest.mark.parametrize("layout", ["dense", "csr", "weighted"])
@pytest.mark.parametrize("fit", ["plain", "firth"])
@pytest.mark.parametrize("K", [2, 3])
@pytest.mark.parametrize("c,s", [(0.0, 1.0), (1e4, 1.0), (1e8, 1.0), (1e8, 1e-8),
                                 (1e8, 1e8), (0.0, 1e-8), (0.0, 1e8), (1e4, 1e-8)])
def test_the_fitted_data_raise_no_alarm(c, s, K, fit, layout):
    X, y, w = _data(K, c=c, s=s)
    w = w if layout == "weighted" else None
    Xf = sp.csr_matrix(X) if layout == "csr" else X
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = fastgen.fit_logistic(Xf, y, sample_weight=w, **FITS[fit])
        r = fastgen.logistic_inference(m, Xf, y, sample_weight=w)
    assert np.all(np.isfinite(np.asarray(r.bse)))
    if K == 2 and fit == "plain":
        # the score at the model, from a long-double oracle, is zero to the fit's
        # tolerance: ½gᵀI⁻¹g well below what the check allows
        g = binary_score(X, y, m.coef, m.intercept, w)
        cov = np.asarray(r.cov_params)  # statsmodels' layout: const first
        gs = np.r_[g[-1], g[:-1]]
        assert 0.5 * float(gs @ cov @ gs) < 1e-6


def _decrement(message):
    return float(re.search(r"½gᵀI⁻¹g = ([0-9.e+-]+)", message).group(1))


def _statsmodels_decrement(X, y, params_const_first, w=None, K=2):
    """½gᵀI⁻¹g at the given coefficients by statsmodels (frequency weights as repeated
    rows, statsmodels' Logit and MNLogit take none)."""
    import statsmodels.api as smapi

    if w is not None:
        rep = w.astype(np.int64)
        X, y = np.repeat(X, rep, axis=0), np.repeat(y, rep)
    Z = smapi.add_constant(X, prepend=True)
    model = smapi.Logit(y, Z) if K == 2 else smapi.MNLogit(y, Z)
    g = np.ravel(model.score(params_const_first), order="F")
    H = model.hessian(params_const_first)
    return -0.5 * float(g @ np.linalg.solve(H, g))


def _params(m, K):
    """The model in statsmodels' layout: const first; (p, K−1) for MNLogit."""
    coef = np.asarray(m.coef, dtype=np.float64)
    icpt = np.asarray(m.intercept, dtype=np.float64)
    if K == 2:
        return np.r_[icpt, coef.ravel()]
    B = np.column_stack([icpt - icpt[0], coef - coef[0]])[1:]
    return B.T


@pytest.mark.parametrize("layout", ["dense", "csr"])
@pytest.mark.parametrize("K", [2, 3])
@pytest.mark.parametrize("wrong", ["weights forgotten", "half the rows", "other labels",
                                   "other rows", "weights added"])
def test_other_data_are_named(wrong, K, layout):
    require("statsmodels")
    X, y, w = _data(K)
    fitted_w = w if wrong == "weights forgotten" else None
    m = fastgen.fit_logistic(X, y, sample_weight=fitted_w)
    Xg, yg, wg = X, y, None
    if wrong == "half the rows":
        Xg, yg = X[::2], y[::2]
    elif wrong == "other labels":
        yg = np.random.default_rng(3).permutation(y)
    elif wrong == "other rows":
        Xg, yg, _ = _data(K, seed=99)
    elif wrong == "weights added":
        wg = w
    conv = sp.csr_matrix if layout == "csr" else np.asarray
    with pytest.warns(fastgen.ConvergenceWarning, match=NOT_ESTIMATE) as rec:
        fastgen.logistic_inference(m, conv(Xg), yg, sample_weight=wg)
    msg = next(str(r.message) for r in rec if NOT_ESTIMATE in str(r.message))
    want = _statsmodels_decrement(Xg, yg, _params(m, K), wg, K)
    np.testing.assert_allclose(_decrement(msg), want, rtol=1e-2)
    assert "pass the X, y and sample_weight the model was fitted on" in msg


@pytest.mark.parametrize("K", [2, 3])
def test_firth_on_other_data_is_named(K):
    X, y, w = _data(K)
    m = fastgen.fit_logistic(X, y, penalty="firth")
    with pytest.warns(fastgen.ConvergenceWarning, match=NOT_ESTIMATE + ".*penalised"):
        fastgen.logistic_inference(m, X[::2], y[::2])
    with pytest.warns(fastgen.ConvergenceWarning, match=NOT_ESTIMATE):
        fastgen.logistic_inference(m, X, y, sample_weight=w)


def test_an_unconverged_fit_is_named_with_its_cause():
    X, y, _ = _data(2)
    with pytest.warns(fastgen.ConvergenceWarning, match="did not converge"):
        m = fastgen.fit_logistic(X, y, max_iter=1)
    with pytest.warns(fastgen.ConvergenceWarning, match=NOT_ESTIMATE + ".*the fit did not "
                                                        "converge"):
        fastgen.logistic_inference(m, X, y)


@pytest.mark.parametrize("c", [0.0, 1e8])
def test_dask_inference_checks_the_data_too(c):
    da = require("dask.array")
    import fastgen.dask as fd

    X, y, w = _data(2, c=c)
    m = fastgen.fit_logistic(X, y, sample_weight=w)
    Xd = da.from_array(X, chunks=(150, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fd.logistic_inference(m, Xd, y, sample_weight=w)
    with pytest.warns(fastgen.ConvergenceWarning, match=NOT_ESTIMATE):
        fd.logistic_inference(m, Xd, y)  # the weights forgotten


@pytest.mark.parametrize("layout", ["dense", "csr", "weighted"])
@pytest.mark.parametrize("correction", ["flic", "flac"])
@pytest.mark.parametrize("c", [0.0, 1e4, 1e8])
def test_flic_and_flac_check_the_data_too(c, correction, layout):
    """FLIC and FLAC inference refits (logistf's conventions); the model given must be
    that refit's estimate: no alarm on the fitted data, a warning on half the rows."""
    X, y, w = _data(2, c=c)
    w = w if layout == "weighted" else None
    conv = sp.csr_matrix if layout == "csr" else np.asarray
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = fastgen.fit_logistic(conv(X), y, sample_weight=w, penalty="firth",
                                 correction=correction)
        fastgen.logistic_inference(m, conv(X), y, sample_weight=w)
    with pytest.warns(fastgen.ConvergenceWarning, match=NOT_ESTIMATE):
        fastgen.logistic_inference(m, conv(X[::2]), y[::2],
                                   sample_weight=None if w is None else w[::2])

"""Predictions, marginal effects and contrasts through the intercept under column offsets.

A shift of the columns by c changes the user's intercept only; a predicted
probability, its standard error and interval, a marginal effect and its standard
error, and a contrast such as ``const + x·β`` (a linear predictor) are the same
numbers on X + c as on X.  Each is compared with the same quantity of the fit on the
exactly unshifted data (``Xo − c``, exact in float64 for these spreads), to a few ulps
of the offset over the column's spread (float64's resolution of the data), and with
statsmodels on the unshifted data (where its Newton fit converges), across offsets and
units, binary and multinomial, dense, CSR and frequency weights, plain ML, Firth and
FLAC.  No standard error may be NaN and no warning may be raised (warnings are errors).
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.special

import fastgen

sm = pytest.importorskip("statsmodels.api")

#: (offset c, spread s) of every column: X = Z·s + c.
CASES = [(0.0, 1.0), (1e3, 1.0), (1e6, 1.0), (1e8, 1.0), (1e4, 1e-2), (-1e6, 1e3),
         (3e7, 10.0)]
EPS = np.finfo(np.float64).eps


def _tol(c, s):
    """A few ulps of the offset over the spread (the data's own resolution), over a
    floor for the fits' agreement at the optimum."""
    return 1e-11 + 64.0 * EPS * abs(c) / s


def _data(seed, n=400, K=2):
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, 3))
    if K == 2:
        y = (Z @ [1.0, -0.5, 0.3] + 0.2 + rng.logistic(size=n) > 0).astype(np.int64)
    else:
        B = np.array([[0.8, -0.4, 0.0], [0.1, 0.6, -0.7], [-0.5, 0.2, 0.4]])
        y = np.argmax(Z @ B + rng.gumbel(size=(n, 3)), axis=1).astype(np.int64)
    w = rng.integers(1, 4, size=n).astype(np.float64)
    return Z, y, w


def _infer(X, y, w=None, csr=False, **fit):
    Xin = sp.csr_matrix(X) if csr else X
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = fastgen.fit_logistic(Xin, y, sample_weight=w, **fit)
        return fastgen.logistic_inference(model, Xin, y, sample_weight=w)


def _shifted(seed, c, s, K):
    Z, y, w = _data(seed, K=K)
    Xo = Z * s + c
    Xr = Xo - c  # exact: the unshifted data of the same rows
    assert np.array_equal(Xr + c, Xo)
    return Xo, Xr, y, w


def _contrast_rows(X, m, p):
    """One contrast per (row, equation): the linear predictor ``const + x·β_k``,
    through the intercept (as a matrix on the coefficients in cov_params' order)."""
    rows = []
    for x in X:
        for k in range(m):
            r = np.zeros(m * p)
            r[k * p] = 1.0
            r[k * p + 1:(k + 1) * p] = x
            rows.append(r)
    return np.array(rows)


def _close(a, b, tol, what):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    assert np.all(np.isfinite(a)), f"{what}: non-finite values"
    err = np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-300))
    assert err <= tol, f"{what}: relative error {err:.2e} > {tol:.2e}"


def _check_invariant(ro, rr, Xo, Xr, tol, margins=True):
    """Every offset-free quantity of ``ro`` (fit on Xo) equals ``rr``'s (on Xr)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        po, pr = ro.get_prediction(Xo[:60]), rr.get_prediction(Xr[:60])
        _close(po.predicted, pr.predicted, tol, "predicted")
        _close(po.se, pr.se, tol, "prediction se")
        _close(po.conf_int(), pr.conf_int(), tol, "prediction interval")
        p = Xo.shape[1] + 1
        m = np.asarray(ro.params).reshape(p, -1).shape[1]
        to = ro.t_test(_contrast_rows(Xo[:20], m, p))
        tr = rr.t_test(_contrast_rows(Xr[:20], m, p))
        # the effect is a linear predictor: an absolute error of the data's resolution
        assert np.max(np.abs(to.effect - tr.effect)) <= tol * max(1.0, np.abs(tr.effect).max())
        _close(to.sd, tr.sd, tol, "contrast sd")
        if margins:
            for at in ("overall", "mean"):
                mo, mr = ro.get_margeff(at=at), rr.get_margeff(at=at)
                _close(mo.margeff, mr.margeff, tol, f"margeff at {at}")
                _close(mo.margeff_se, mr.margeff_se, tol, f"margeff se at {at}")


@pytest.mark.parametrize("K", [2, 3])
@pytest.mark.parametrize("c,s", CASES)
def test_dense_invariant_to_offsets(c, s, K):
    Xo, Xr, y, _ = _shifted(11, c, s, K)
    _check_invariant(_infer(Xo, y), _infer(Xr, y), Xo, Xr, _tol(c, s))


@pytest.mark.parametrize("K", [2, 3])
@pytest.mark.parametrize("c,s", [(1e3, 1.0), (1e6, 1.0), (1e8, 1.0), (1e4, 1e-2)])
def test_weighted_invariant_to_offsets(c, s, K):
    Xo, Xr, y, w = _shifted(12, c, s, K)
    _check_invariant(_infer(Xo, y, w), _infer(Xr, y, w), Xo, Xr, _tol(c, s))


@pytest.mark.parametrize("K", [2, 3])
@pytest.mark.parametrize("c,s", [(1e3, 1.0), (1e6, 1.0), (1e8, 1.0), (-1e6, 1e3)])
def test_csr_invariant_to_offsets(c, s, K):
    # marginal effects need the fitted data dense; predictions and contrasts take rows
    Xo, Xr, y, _ = _shifted(13, c, s, K)
    ro, rr = _infer(Xo, y, csr=True), _infer(Xr, y, csr=True)
    _check_invariant(ro, rr, Xo, Xr, _tol(c, s), margins=False)
    # and the CSR fit's forms are the dense fit's
    _check_invariant(ro, _infer(Xr, y), Xo, Xr, _tol(c, s), margins=False)


@pytest.mark.parametrize("fit", [dict(penalty="firth"),
                                 dict(penalty="firth", correction="flac")])
@pytest.mark.parametrize("c,s", [(1e3, 1.0), (1e6, 1.0), (1e8, 1.0)])
def test_firth_and_flac_invariant_to_offsets(c, s, fit):
    Xo, Xr, y, _ = _shifted(14, c, s, 2)
    _check_invariant(_infer(Xo, y, **fit), _infer(Xr, y, **fit), Xo, Xr, _tol(c, s))


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("c,s", CASES)
def test_binary_matches_statsmodels(c, s, weighted):
    """statsmodels' Logit on the unshifted data (weights: the rows repeated)."""
    Xo, Xr, y, w = _shifted(15, c, s, 2)
    r = _infer(Xo, y, w if weighted else None)
    rep = np.repeat(np.arange(y.shape[0]), w.astype(int)) if weighted else slice(None)
    ref = sm.Logit(y[rep], sm.add_constant(Xr[rep])).fit(disp=0, method="newton",
                                                          tol=1e-14, maxiter=100)
    assert ref.mle_retvals["converged"]
    tol = 1e-8 + _tol(c, s)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fr = r.get_prediction(Xo[:60]).summary_frame()
        rf = ref.get_prediction(sm.add_constant(Xr[:60], has_constant="add")).summary_frame()
        for col in ("predicted", "se", "ci_lower", "ci_upper"):
            _close(fr[col].to_numpy(), rf[col].to_numpy(), tol, f"prediction {col}")
        R = _contrast_rows(Xo[:20], 1, 4)
        to, tr = r.t_test(R), ref.t_test(_contrast_rows(Xr[:20], 1, 4))
        _close(to.sd, np.ravel(tr.sd), tol, "contrast sd")
        for at in ("overall", "mean"):
            mo = r.get_margeff(at=at)
            mr = ref.get_margeff(at=at)  # weighted: at the mean of the repeated rows
            _close(mo.margeff, mr.margeff, tol, f"margeff at {at}")
            _close(mo.margeff_se, mr.margeff_se, tol, f"margeff se at {at}")


def _mnl_prediction_se(params, cov, X):
    """Plain-numpy delta method for MNLogit's probabilities: dP_k/dβ_j = P_k([k=j] −
    P_j) x̃ (j = 1 … K−1), se_k² = Σ_jl a_kj a_kl x̃ᵀ Σ_jl x̃, with statsmodels' params
    (p, K−1) and cov_params (equation by equation)."""
    Xt = np.column_stack([np.ones(X.shape[0]), X])
    p, m = params.shape
    eta = np.column_stack([np.zeros(X.shape[0]), Xt @ params])
    P = scipy.special.softmax(eta, axis=1)
    se = np.empty_like(P)
    for i in range(X.shape[0]):
        for k in range(m + 1):
            g = np.zeros(m * p)
            for j in range(m):
                a = P[i, k] * ((k == j + 1) - P[i, j + 1])
                g[j * p:(j + 1) * p] = a * Xt[i]
            se[i, k] = np.sqrt(g @ cov @ g)
    return P, se


@pytest.mark.parametrize("c,s", CASES)
def test_multinomial_matches_statsmodels(c, s):
    Xo, Xr, y, _ = _shifted(16, c, s, 3)
    r = _infer(Xo, y)
    ref = sm.MNLogit(y, sm.add_constant(Xr)).fit(disp=0, method="newton", tol=1e-14,
                                                 maxiter=100)
    assert ref.mle_retvals["converged"]
    tol = 1e-8 + _tol(c, s)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pr = r.get_prediction(Xo[:40])
        P, se = _mnl_prediction_se(np.asarray(ref.params), np.asarray(ref.cov_params()),
                                   Xr[:40])
        _close(pr.predicted, P, tol, "multinomial predicted")
        _close(pr.se, se, tol, "multinomial prediction se")
        for at in ("overall", "mean"):
            mo, mr = r.get_margeff(at=at), ref.get_margeff(at=at)
            _close(mo.margeff, mr.margeff, tol, f"multinomial margeff at {at}")
            _close(mo.margeff_se, mr.margeff_se, tol, f"multinomial margeff se at {at}")


def test_frame_record_follows_the_covariance():
    """The centred covariance serves only the ``cov_params`` it was recorded with: a
    result whose covariance is replaced uses the new one."""
    import dataclasses

    Xo, _, y, _ = _shifted(17, 1e3, 1.0, 2)
    r = _infer(Xo, y)
    assert "centred_cov" in r.extra
    doubled = dataclasses.replace(r, cov_params=4.0 * np.asarray(r.cov_params))
    a, b = r.get_prediction(Xo[:10]).se, doubled.get_prediction(Xo[:10]).se
    _close(b, 2.0 * a, 1e-9, "se under a replaced covariance")


@pytest.mark.parametrize("K", [2, 3])
@pytest.mark.parametrize("c,s", [(1e3, 1.0), (1e8, 1.0), (1e4, 1e-2)])
def test_dask_result_invariant_to_offsets(c, s, K):
    """fastgen.dask's inference keeps the centred covariance too (predictions and
    contrasts of new rows; it holds no data for marginal effects)."""
    da = pytest.importorskip("dask.array")
    import fastgen.dask

    Xo, Xr, y, _ = _shifted(18, c, s, K)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = fastgen.fit_logistic(Xo, y)
        rd = fastgen.dask.logistic_inference(model, da.from_array(Xo, chunks=(100, 3)),
                                             da.from_array(y, chunks=100))
    _check_invariant(rd, _infer(Xr, y), Xo, Xr, _tol(c, s), margins=False)

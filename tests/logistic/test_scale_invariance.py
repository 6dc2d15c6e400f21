"""Logistic regression whatever the units of X (issue 29, §1, §6, §9).

An unpenalised fit (and Firth's) is invariant to the units of each column: X·diag(c)
gives coefficients coef/c, the same probabilities and the same iterations, on every
solver path (explicit Hessian, Newton-CG, CSR, weights), for every c where float64
holds the fit's sums; where it does not, the fit raises a ``ValueError`` that names
the column and says to rescale.  Scoring raises the same kind of error where the
linear predictor overflows, and extreme weights are named as such.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st
from scipy.special import softmax

import fastgen
from fastgen.logistic import objectives

FACTORS = [1e-150, 1e-100, 1e-30, 1e-10, 1e-3, 1e3, 1e10, 1e30, 1e100, 1e150]


def _data(K, seed=0, n=300, d=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) + np.r_[0.0, 2.0, np.zeros(d - 2)]
    B = rng.normal(size=(K, d))
    y = np.argmax(X @ B.T + rng.gumbel(size=(n, K)), axis=1)
    return X, y, rng.uniform(0.2, 3.0, n)


@pytest.fixture(params=["explicit", "newton-cg"])
def solver(request, monkeypatch):
    if request.param == "newton-cg":
        monkeypatch.setattr(objectives, "BINARY_EXPLICIT_MAX_P", 0)
        monkeypatch.setattr(objectives, "MULTINOMIAL_EXPLICIT_MAX", 0)
    return request.param


def _rms_gradient(X, y, w, p):
    """max_j |∂loss/∂β_j| / (rms_j·Σw) at p's coefficients, in numpy (reference-class
    or binary layout; the intercept's column has rms 1)."""
    Xt = np.column_stack([X, np.ones(len(y))])
    B = np.column_stack([p.coef, p.intercept]).astype(np.float64)
    if B.shape[0] == 1:
        B = np.vstack([np.zeros_like(B), B])
    P = softmax(Xt @ B.T, axis=1)
    G = (w[:, None] * (P - np.eye(B.shape[0])[y])).T @ Xt
    rms = np.sqrt((w @ Xt**2) / w.sum())
    return float(np.max(np.abs(G / rms))) / w.sum()


@pytest.mark.parametrize("K", [2, 3])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("csr", [False, True])
def test_unpenalised_fit_does_not_depend_on_units(solver, K, weighted, csr):
    """Uniform and per-column factors from 1e-150 to 1e150: coef·c and the probabilities
    equal the unit fit's to 1e-8, in the same iterations, converged."""
    X, y, w = _data(K, seed=K)
    kw = dict(sample_weight=w) if weighted else {}
    conv = sp.csr_matrix if csr else np.asarray
    ref = fastgen.fit_logistic(conv(X), y, **kw)
    P0 = fastgen.predict_proba(ref, conv(X))
    assert ref.converged
    assert _rms_gradient(X, y, w if weighted else np.ones(len(y)), ref) <= 1e-8
    for c in FACTORS:
        cols = [np.full(3, c)] + ([c * np.array([1.0, 1e3, 1e-3])]
                                  if 1e-140 < c < 1e140 else [])
        for cs in cols:
            p = fastgen.fit_logistic(conv(X * cs), y, **kw)
            assert p.converged and p.n_iter == ref.n_iter, (c, cs)
            np.testing.assert_allclose(p.coef * cs, ref.coef, rtol=1e-8,
                                       atol=1e-8 * np.abs(ref.coef).max(), err_msg=str(cs))
            np.testing.assert_allclose(p.intercept, ref.intercept, rtol=1e-8, atol=1e-8)
            np.testing.assert_allclose(fastgen.predict_proba(p, conv(X * cs)), P0,
                                       rtol=0, atol=1e-8, err_msg=str(cs))


@given(seed=st.integers(0, 2**16), K=st.sampled_from([2, 4]),
       exps=st.lists(st.integers(-150, 150), min_size=4, max_size=4),
       weighted=st.booleans(), csr=st.booleans())
def test_units_property(seed, K, exps, weighted, csr):
    """Any power of ten per column in [1e-150, 1e150]: the same probabilities and
    iterations as the unit fit, coefficients divided by the factors."""
    X, y, w = _data(K, seed=seed, n=200, d=4)
    X = X / np.sqrt((X**2).mean(axis=0))  # unit root-mean-square: 10^e is the scale
    kw = dict(sample_weight=w) if weighted else {}
    conv = sp.csr_matrix if csr else np.asarray
    cs = 10.0 ** np.array(exps, dtype=np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fastgen.ConvergenceWarning)  # separated draws
        ref = fastgen.fit_logistic(conv(X), y, **kw)
        p = fastgen.fit_logistic(conv(X * cs), y, **kw)
    assert (p.converged, p.n_iter) == (ref.converged, ref.n_iter)
    if ref.converged:
        np.testing.assert_allclose(p.coef * cs, ref.coef, rtol=1e-7,
                                   atol=1e-8 * np.abs(ref.coef).max())
        np.testing.assert_allclose(fastgen.predict_proba(p, conv(X * cs)),
                                   fastgen.predict_proba(ref, conv(X)), rtol=0, atol=1e-8)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("csr", [False, True])
def test_firth_does_not_depend_on_units(weighted, csr):
    X, y, w = _data(2, seed=5)
    kw = dict(sample_weight=w) if weighted else {}
    conv = sp.csr_matrix if csr else np.asarray
    ref = fastgen.fit_logistic(conv(X), y, penalty="firth", **kw)
    P0 = fastgen.predict_proba(ref, conv(X))
    for c in FACTORS:
        cs = np.full(3, c) if not 1e-140 < c < 1e140 else c * np.array([1.0, 1e3, 1e-3])
        p = fastgen.fit_logistic(conv(X * cs), y, penalty="firth", **kw)
        # (not n_iter: where the fit tries several starts that reach the same maximum,
        # rounding decides which run is returned)
        assert p.converged, c
        np.testing.assert_allclose(p.coef * cs, ref.coef, rtol=1e-8, err_msg=str(c))
        np.testing.assert_allclose(fastgen.predict_proba(p, conv(X * cs)), P0, rtol=0,
                                   atol=1e-8, err_msg=str(c))


@pytest.mark.parametrize("K", [2, 3])
@pytest.mark.parametrize("csr", [False, True])
@pytest.mark.parametrize("factor, word", [(1e-160, "small"), (1e-200, "small"),
                                          (1e160, "large"), ("1e308", "large")])
def test_scale_beyond_float64_raises_naming_the_column(solver, K, csr, factor, word):
    X, y, _ = _data(K, seed=1)
    if factor == "1e308":
        X[5, 1] = 1e308  # one value
    else:
        X[:, 1] *= factor
    conv = sp.csr_matrix if csr else np.asarray
    with pytest.raises(ValueError, match=rf"X has values too {word} for float64 products: "
                                         rf"in column 1 .*; rescale the features"):
        fastgen.fit_logistic(conv(X), y)
    if K == 2:
        with pytest.raises(ValueError, match=rf"too {word} for float64 .* column 1"):
            fastgen.fit_logistic(conv(X), y, penalty="firth")


def _multinomial_scales():
    """Breast cancer's ten "mean" features, raw (root-mean-squares from 0.06 to 740) and
    standardised, with y the tertiles of 'worst concave points'."""
    from sklearn.datasets import load_breast_cancer

    X, _ = load_breast_cancer(return_X_y=True)
    y = np.digitize(X[:, 27], np.quantile(X[:, 27], [1 / 3, 2 / 3]))
    Z = X[:, :10]
    return Z, (Z - Z.mean(axis=0)) / Z.std(axis=0), y


def test_multinomial_newton_cg_steps_do_not_depend_on_scale(monkeypatch):
    """Newton-CG on raw features takes the steps it takes on standardised ones (within
    one), converges, and agrees with scikit-learn's unpenalised newton-cholesky fit."""
    from sklearn.linear_model import LogisticRegression

    monkeypatch.setattr(objectives, "MULTINOMIAL_EXPLICIT_MAX", 0)
    Z, Zs, y = _multinomial_scales()
    raw = fastgen.fit_logistic(Z, y, tol=1e-10)
    std = fastgen.fit_logistic(Zs, y, tol=1e-10)
    assert raw.solver == std.solver == "newton-cg"
    assert raw.converged and std.converged
    assert abs(raw.n_iter - std.n_iter) <= 1
    assert raw.n_hessp <= 1.25 * std.n_hessp
    sk = LogisticRegression(C=np.inf, solver="newton-cholesky", tol=1e-12,
                            max_iter=200).fit(Zs, y)
    ref = sk.coef_ - sk.coef_[0]  # scikit-learn's symmetric form against class 0
    for p, A, units in ((raw, Z, Z.std(axis=0)), (std, Zs, 1.0)):
        np.testing.assert_allclose(p.coef * units, ref, rtol=0,
                                   atol=1e-7 * np.abs(ref).max())
        np.testing.assert_allclose(fastgen.predict_proba(p, A), sk.predict_proba(Zs),
                                   rtol=0, atol=1e-8)


# ------------------------------------------------------------------ §6: scoring


def _score_fns(p):
    return {"predict": fastgen.predict, "predict_proba": fastgen.predict_proba,
            "predict_log_proba": fastgen.predict_log_proba,
            "joint_log_likelihood": fastgen.joint_log_likelihood,
            "decision_function": p.decision_function}


@pytest.mark.parametrize("K", [2, 3])
@pytest.mark.parametrize("csr", [False, True])
@pytest.mark.parametrize("row", [[1e308, 1e308, 1e308], [-1e308, 1e308, -1e308],
                                 [1e308, 0.0, 0.0], [-1e308, 0.0, 0.0]])
def test_overflowing_linear_predictor_raises(K, csr, row):
    X, y, _ = _data(K, seed=3)
    p = fastgen.fit_logistic(X * 0.05, y)  # coefficients ≥ 2 in size: x·coef overflows
    assert np.all(np.abs(p.coef[1:] if K > 2 else p.coef) > 2)  # coef[0] = 0: reference
    Z = np.vstack([X[:3], row])
    conv = sp.csr_matrix if csr else np.asarray
    for name, f in _score_fns(p).items():
        A = conv(Z)
        if name == "decision_function":
            A = fastgen._validation.check_X(A, allow_sparse=True)
        with pytest.raises(ValueError, match=r"linear predictor X·coefᵀ \+ intercept "
                                             r"overflows float64 at row 3 .*; rescale"):
            f(p, A) if name != "decision_function" else f(A)


@pytest.mark.parametrize("csr", [False, True])
def test_one_class_score_overflowing_below_a_finite_maximum_raises(csr):
    """η = (0, −∞, 0): the tiled posteriors would give (½, 0, ½) from a −∞ they do not
    flag; every path raises instead."""
    p = fastgen.fit_logistic(*_data(3, seed=4)[:2])
    p = p.__class__(**{**{f: getattr(p, f) for f in p.__dataclass_fields__},
                       "coef": np.array([[0.0, 0, 0], [-4.0, 0, 0], [0.0, 0, 0]]),
                       "intercept": np.zeros(3)})
    Z = np.array([[0.5, 0.0, 0.0], [1e308, 0.0, 0.0]])
    conv = sp.csr_matrix if csr else np.asarray
    for name in ("predict", "predict_proba", "predict_log_proba", "joint_log_likelihood"):
        with pytest.raises(ValueError, match=r"overflows float64 at row 1"):
            getattr(fastgen, name)(p, conv(Z))
    np.testing.assert_allclose(fastgen.predict_proba(p, conv(Z[:1])),
                               softmax([[0.0, -2.0, 0.0]], axis=1), rtol=1e-14)


# ------------------------------------------------------------------ §9: extreme weights


def _fits(X, y, w):
    return {
        "fit_logistic": lambda: fastgen.fit_logistic(X, y, sample_weight=w),
        "fit_logistic(csr)": lambda: fastgen.fit_logistic(sp.csr_matrix(X), y,
                                                          sample_weight=w),
        "firth": lambda: fastgen.fit_logistic(X, y, penalty="firth", sample_weight=w),
        "fit_gda": lambda: fastgen.fit_gda(X, y, sample_weight=w),
        "fit_gaussian_nb": lambda: fastgen.fit_gaussian_nb(X, y, sample_weight=w),
        "class_moments": lambda: fastgen.class_moments(X, y, sample_weight=w),
        "fit_multinomial_nb": lambda: fastgen.fit_multinomial_nb(np.abs(X), y,
                                                                 sample_weight=w),
        "fit_bernoulli_nb": lambda: fastgen.fit_bernoulli_nb(X, y, sample_weight=w),
    }


@pytest.mark.parametrize("weights, match", [
    ("two 1e308", r"sample_weight is too large for float64: its sum overflows"),
    ("all 1e308", r"sample_weight is too large for float64: its sum overflows"),
    ("all 1e-320", r"sample_weight is too small for float64"),
    ("all 1e-300", r"sample_weight is too small for float64"),
])
def test_extreme_weights_are_named(weights, match):
    X, y, _ = _data(2, seed=6)
    n = len(y)
    w = {"two 1e308": np.r_[1e308, 1e308, np.ones(n - 2)], "all 1e308": np.full(n, 1e308),
         "all 1e-320": np.full(n, 1e-320), "all 1e-300": np.full(n, 1e-300)}[weights]
    for fit in _fits(X, y, w).values():
        with pytest.raises(ValueError, match=match):
            fit()


def test_weighted_squares_that_overflow_name_the_weights():
    X, y, _ = _data(2, seed=7)
    X = 100 * X
    w = np.ones(len(y))
    w[:3] = 1e306  # the sum is finite; w·x² is not
    for name, fit in _fits(X, y, w).items():
        if name.startswith(("fit_multinomial", "fit_bernoulli")):
            continue  # no squares
        with pytest.raises(ValueError, match=r"sample_weight") as e:
            fit()
        assert "rescale" in str(e.value), name


def test_tiny_weights_that_float64_holds_fit_as_unit_weights():
    """Weights of 1e-280 (or one subnormal weight among ones) are legal and give the
    unit-weight fit: only the weights' ratios matter to the unpenalised estimate."""
    X, y, _ = _data(3, seed=8)
    ref = fastgen.fit_logistic(X, y)
    p = fastgen.fit_logistic(X, y, sample_weight=np.full(len(y), 1e-280))
    np.testing.assert_allclose(p.coef, ref.coef, rtol=1e-8)
    w = np.ones(len(y))
    w[0] = 1e-320
    p = fastgen.fit_logistic(X, y, sample_weight=w)
    np.testing.assert_allclose(p.coef, fastgen.fit_logistic(X[1:], y[1:]).coef, rtol=1e-8)

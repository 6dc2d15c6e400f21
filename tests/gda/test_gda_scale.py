"""The units of a feature never decide whether a GDA fit succeeds, nor, for the
unit-free options, what it predicts (issue 29, items 1, 7 and 9).

* Covariances are factored through their correlation matrix: rescaling a column by any
  c for which float64 holds the squares (1e-150 … 1e150) gives the same posteriors
  with reg=0 and with the estimated shrinkages ("ledoit-wolf", "oas"), pooled and per
  class, weighted or not; ``reg`` and a float ``shrinkage`` are defined in the data's
  units (scikit-learn's definitions) and may change the predictions, but a fit never
  fails only because of the units.
* Estimated shrinkage shrinks the within-class correlation matrix toward I (target
  diag(Σ)) with the intensity of scikit-learn's estimator on the within-class
  standardised rows (the idea of scikit-learn's LDA ``shrinkage="auto"``).
* Features whose squares underflow float64 raise a "rescale the features" error.

References: scikit-learn 1.9's QuadraticDiscriminantAnalysis and
LinearDiscriminantAnalysis (maximum-likelihood covariances), ``sklearn.covariance``'s
``ledoit_wolf`` and ``oas``, and numpy transcriptions in ``reference.py``.
"""

import re

import numpy as np
import pytest
import reference as ref
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.covariance import ledoit_wolf, oas
from sklearn.datasets import load_wine
from sklearn.discriminant_analysis import (
    LinearDiscriminantAnalysis,
    QuadraticDiscriminantAnalysis,
)
from sklearn.model_selection import StratifiedKFold

import fastgen
from fastgen import SingularCovarianceError

EPS = np.finfo(np.float64).eps
SETTINGS = settings()  # the profile's (tests/conftest.py): derandomized by default

# options whose model does not depend on the units of the features
INVARIANT = [
    ("pooled", {}),
    ("per_class", {}),
    ("pooled", {"shrinkage": "ledoit-wolf"}),
    ("pooled", {"shrinkage": "oas"}),
    ("per_class", {"shrinkage": "ledoit-wolf"}),
    ("per_class", {"shrinkage": "oas"}),
    ("diagonal", {"var_smoothing": 0.0}),
    ("pooled_diagonal", {"var_smoothing": 0.0}),
]
# options defined in the data's units: the fit must still succeed
UNIT_BOUND = [
    ("pooled", {"reg": 0.1}),
    ("per_class", {"reg": 0.1}),
    ("pooled", {"shrinkage": 0.2}),
    ("per_class", {"shrinkage": 0.2, "reg": 0.05}),
    ("diagonal", {}),
    ("pooled_diagonal", {"reg": 0.1}),
]
# column factors whose squares float64 holds for data of order 1 to 100
FACTORS = [10.0 ** e for e in (-150, -120, -80, -40, -10, -3, 3, 10, 40, 80, 120, 150)]


def _correlated(seed, d, K, per=25):
    """K Gaussian classes with correlated features and rows of order 1."""
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(K), per)
    rng.shuffle(y)
    A = rng.standard_normal((d, d)) + 2.0 * np.eye(d)
    X = 2.0 * rng.standard_normal((K, d))[y] + rng.standard_normal((y.size, d)) @ A
    return X, y, rng


def _counts(seed=0, n=400):
    """Count data whose five columns range from 1 to about 1e9 (issue 29, item 1)."""
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.4, "positive", "negative")
    level = np.exp(rng.normal(0.0, 1.0, (n, 1)))
    scales = np.array([1.0, 30.0, 3e3, 4e5, 7e7])
    effect = 1.0 + (y == "positive")[:, None] * np.array([0.5, 0.2, 0.3, 0.1, 0.4])
    return rng.poisson(level * scales * effect).astype(np.float64) + 1.0, y


# --------------------------------------------------------------------------------------
# item 1: the units never decide whether a fit succeeds
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("reg", [0.0, 0.1, 0.5])
def test_count_data_per_class_matches_sklearn_qda(reg):
    X, y = _counts()
    assert X.max() / X.min() > 1e8
    p = fastgen.fit_gda(X, y, "per_class", reg=reg)
    sk = QuadraticDiscriminantAnalysis(reg_param=reg).fit(X, y)
    np.testing.assert_allclose(fastgen.predict_proba(p, X), sk.predict_proba(X),
                               rtol=0, atol=1e-9)
    np.testing.assert_array_equal(fastgen.predict(p, X), sk.predict(X))


def test_count_data_pooled_matches_sklearn_lda():
    X, y = _counts(1)
    p = fastgen.fit_gda(X, y, "pooled")
    assert p.rank == X.shape[1]
    sk = LinearDiscriminantAnalysis().fit(X, y)
    np.testing.assert_allclose(fastgen.predict_proba(p, X), sk.predict_proba(X),
                               rtol=0, atol=1e-9)


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), d=st.integers(2, 4), K=st.integers(2, 3),
       option=st.sampled_from(INVARIANT), factor=st.sampled_from(FACTORS),
       weighted=st.booleans(), data=st.data())
def test_rescaling_a_column_keeps_the_posteriors(seed, d, K, option, factor, weighted,
                                                 data):
    covariance, kw = option
    X, y, rng = _correlated(seed, d, K)
    j = data.draw(st.integers(0, d - 1), label="column")
    w = rng.uniform(0.2, 3.0, y.size) if weighted else None
    Xs = X.copy()
    Xs[:, j] *= factor
    p = fastgen.fit_gda(X, y, covariance, sample_weight=w, **kw)
    q = fastgen.fit_gda(Xs, y, covariance, sample_weight=w, **kw)
    # rounding only: a relative error of order d·ε per entry of the moments and
    # factors, times the condition number of the standardised covariance (small here)
    np.testing.assert_allclose(fastgen.predict_proba(q, Xs), fastgen.predict_proba(p, X),
                               rtol=0, atol=1e4 * EPS)
    scale = np.ones(d)
    scale[j] = factor
    np.testing.assert_allclose(q.means, p.means * scale, rtol=1e4 * EPS)


@pytest.mark.parametrize("covariance, kw", UNIT_BOUND)
@pytest.mark.parametrize("factor", [1e-150, 1e-40, 1e-8, 1e8, 1e40, 1e150])
def test_unit_bound_options_fit_at_any_scale(covariance, kw, factor):
    """reg and a float shrinkage are in the data's units, so the model may change with
    them; the fit itself must succeed and give proper posteriors."""
    X, y, _ = _correlated(3, 4, 3)
    for j in range(X.shape[1]):
        Xs = X.copy()
        Xs[:, j] *= factor
        p = fastgen.fit_gda(Xs, y, covariance, **kw)
        proba = fastgen.predict_proba(p, Xs)
        assert np.all(np.isfinite(proba))
        np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=0, atol=1e-12)


@pytest.mark.parametrize("eps", [0.0, 1e-14, 1e-12])
@pytest.mark.parametrize("unit", [1e-6, 1.0, 1e6])
@pytest.mark.parametrize("tol", [1e-4, 1e-10, 0.0])
@pytest.mark.parametrize("reg", [0.0, 1e-30])
def test_per_class_error_is_consistent(eps, unit, tol, reg):
    """Class 2 of wine made (nearly) collinear, the collinear column in any units: the
    error names class 2, never reports full rank while calling the covariance singular,
    and the reg it suggests makes the fit succeed."""
    X, y = load_wine(return_X_y=True)
    X = X.copy()
    rng = np.random.default_rng(0)
    m = y == 2
    X[m, 4] = 2.0 * X[m, 0] * (1.0 + eps * rng.standard_normal(m.sum()))
    X[:, 4] *= unit
    d = X.shape[1]
    with pytest.raises(SingularCovarianceError) as info:
        fastgen.fit_gda(X, y, "per_class", reg=reg, tol=tol)
    msg = str(info.value)
    assert "class 2" in msg and "class 0" not in msg, msg
    rank = re.search(r"rank (\d+) of (\d+)", msg)  # the rule decides: always a rank
    assert rank and int(rank.group(1)) < d == int(rank.group(2)), msg
    if reg:
        assert f"reg={reg:g} is not enough" in msg, msg
    suggest = float(re.search(r"reg=([0-9.e+-]+) makes the fit succeed", msg).group(1))
    assert reg < suggest < 1
    p = fastgen.fit_gda(X, y, "per_class", reg=suggest, tol=tol)
    assert np.all(np.isfinite(fastgen.predict_log_proba(p, X)))


# --------------------------------------------------------------------------------------
# item 7: estimated shrinkage does not depend on the units
# --------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def wine():
    return load_wine(return_X_y=True)


@pytest.mark.parametrize("method", ["ledoit-wolf", "oas"])
def test_estimated_shrinkage_on_raw_wine_is_as_good_as_sklearn_auto(wine, method):
    X, y = wine
    cv = StratifiedKFold(5, shuffle=True, random_state=0)
    ours, theirs = [], []
    for train, test in cv.split(X, y):
        p = fastgen.fit_gda(X[train], y[train], shrinkage=method)
        ours.append(np.mean(fastgen.predict(p, X[test]) == y[test]))
        sk = LinearDiscriminantAnalysis(solver="lsqr", shrinkage="auto")
        theirs.append(sk.fit(X[train], y[train]).score(X[test], y[test]))
    assert np.mean(theirs) > 0.98
    assert np.mean(ours) >= np.mean(theirs) - 0.01


@pytest.mark.parametrize("covariance", ["pooled", "per_class"])
@pytest.mark.parametrize("method", ["ledoit-wolf", "oas"])
@pytest.mark.parametrize("factor", [1e-3, 1e3])
def test_estimated_shrinkage_ignores_the_units_of_any_wine_feature(wine, covariance,
                                                                   method, factor):
    X, y = wine
    p = fastgen.fit_gda(X, y, covariance, shrinkage=method)
    P = fastgen.predict_proba(p, X)
    for j in range(X.shape[1]):
        Xs = X.copy()
        Xs[:, j] *= factor
        q = fastgen.fit_gda(Xs, y, covariance, shrinkage=method)
        np.testing.assert_allclose(fastgen.predict_proba(q, Xs), P, rtol=0, atol=1e-10)
        np.testing.assert_array_equal(fastgen.predict(q, Xs), fastgen.predict(p, X))


def _standardised_groups(X, y, covariance):
    """Within-class centred rows divided by the within-class standard deviations: all
    rows by the pooled ones, or each class by its own."""
    classes = np.unique(y)
    Z = X - np.stack([X[y == c].mean(axis=0) for c in classes])[np.searchsorted(classes, y)]
    groups = [Z] if covariance == "pooled" else [Z[y == c] for c in classes]
    return [(G, np.sqrt(np.mean(G * G, axis=0))) for G in groups]


@pytest.mark.parametrize("covariance", ["pooled", "per_class"])
@pytest.mark.parametrize("method", ["ledoit-wolf", "oas"])
def test_estimated_shrinkage_equals_sklearn_on_standardised_wine(wine, covariance, method):
    """Σ = D·((1 − a)R + a·I)·D, a and R those of scikit-learn's estimator on the
    within-class standardised rows (as its LDA shrinkage="auto" standardises)."""
    X, y = wine
    p = fastgen.fit_gda(X, y, covariance, shrinkage=method)
    sk = {"ledoit-wolf": ledoit_wolf, "oas": oas}[method]
    transcription = {"ledoit-wolf": ref.ledoit_wolf_intensity,
                     "oas": ref.oas_intensity}[method]
    for k, (G, s) in enumerate(_standardised_groups(X, y, covariance)):
        shrunk, a = sk(G / s, assume_centered=True)
        assert 0 < a < 1
        assert abs(transcription(G / s) - a) <= 1e-10 * a
        got = p.covariance if covariance == "pooled" else p.covariance[k]
        expected = s[:, None] * shrunk * s[None, :]
        assert np.max(np.abs(got - expected) / np.sqrt(np.outer(s * s, s * s))) <= 1e-10


@pytest.mark.parametrize("covariance", ["pooled", "per_class"])
def test_ledoit_wolf_weights_are_repeated_rows(wine, covariance):
    X, y = wine
    w = np.random.default_rng(5).integers(1, 4, y.size)
    p = fastgen.fit_gda(X, y, covariance, shrinkage="ledoit-wolf", sample_weight=w)
    q = fastgen.fit_gda(np.repeat(X, w, axis=0), np.repeat(y, w), covariance,
                        shrinkage="ledoit-wolf")
    assert ref.rel_err(p.covariance, q.covariance) <= 1e-10


def test_estimated_shrinkage_leaves_constant_features_out(wine):
    """A feature constant within every class has no correlation to shrink: the
    intensity is that of the other features, and the pooled model drops it."""
    X, y = wine
    Xc = np.column_stack([X, np.choose(y, [1.0, 2.0, 3.0])])
    for method in ("ledoit-wolf", "oas"):
        p = fastgen.fit_gda(X, y, shrinkage=method)
        q = fastgen.fit_gda(Xc, y, shrinkage=method)
        assert q.rank == X.shape[1]
        assert ref.rel_err(q.covariance[:-1, :-1], p.covariance) <= 1e-12
        assert np.all(q.covariance[-1] == 0)


# --------------------------------------------------------------------------------------
# item 9: values whose squares underflow raise "rescale", not "constant"
# --------------------------------------------------------------------------------------
TINY_SCALES = [1e-158, 1e-160, 1e-170, 1e-200, 1e-250, 1e-300, 1e-310, 1e-320]
GDA_TYPES = ("pooled", "per_class", "diagonal", "pooled_diagonal")


@pytest.mark.parametrize("scale", TINY_SCALES)
def test_underflowing_squares_raise_rescale(scale):
    X, y, _ = _correlated(4, 3, 3)
    Xs = X * scale
    for covariance in GDA_TYPES:
        for kw in ({}, {"shrinkage": "oas"} if covariance in ("pooled", "per_class") else {}):
            with pytest.raises(SingularCovarianceError, match=r"rescale the features"):
                fastgen.fit_gda(Xs, y, covariance, **kw)
    with pytest.raises(ValueError, match=r"rescale the features"):
        fastgen.fit_gaussian_nb(Xs, y)


def test_subnormal_values_raise_rescale():
    rng = np.random.default_rng(2)
    y = np.repeat(np.arange(2), 20)
    X = rng.integers(1, 1000, (40, 3)) * np.finfo(np.float64).smallest_subnormal
    assert np.all(np.abs(X) < np.finfo(np.float64).tiny)
    for covariance in GDA_TYPES:
        with pytest.raises(SingularCovarianceError, match=r"rescale the features"):
            fastgen.fit_gda(X, y, covariance)
    with pytest.raises(ValueError, match=r"rescale the features"):
        fastgen.fit_gaussian_nb(X, y)


@pytest.mark.parametrize("scale", [1e-170, 1e-300])
def test_one_underflowing_column(scale):
    """One tiny column: the unit-free models cannot be computed (rescale); a reg or a
    variance floor set by the other features swamps the lost part, and the fit is the
    one for a constant column, exactly."""
    X, y, _ = _correlated(6, 3, 3)
    Xs = X.copy()
    Xs[:, 1] *= scale
    for covariance in ("pooled", "per_class"):
        with pytest.raises(SingularCovarianceError, match=r"feature 1 .*rescale"):
            fastgen.fit_gda(Xs, y, covariance)
        with pytest.raises(SingularCovarianceError, match=r"feature 1 .*rescale"):
            fastgen.fit_gda(Xs, y, covariance, shrinkage="ledoit-wolf")
    Xz = X.copy()
    Xz[:, 1] = 0.0
    for covariance, kw in [("per_class", {"reg": 0.1}), ("diagonal", {}),
                           ("pooled_diagonal", {})]:
        p = fastgen.fit_gda(Xs, y, covariance, **kw)
        q = fastgen.fit_gda(Xz, y, covariance, **kw)
        np.testing.assert_allclose(fastgen.predict_proba(p, Xs),
                                   fastgen.predict_proba(q, Xz), rtol=0, atol=1e-12)
    np.testing.assert_allclose(
        fastgen.predict_proba(fastgen.fit_gaussian_nb(Xs, y), Xs),
        fastgen.predict_proba(fastgen.fit_gaussian_nb(Xz, y), Xz), rtol=0, atol=1e-12)


def test_constant_features_still_say_constant():
    """Exactly constant features (zero, or ordinary values) keep their own messages."""
    X = np.repeat(np.arange(3.0)[:, None], 4, axis=0) * np.ones((1, 2))
    y = np.repeat(np.arange(3), 4)
    with pytest.raises(SingularCovarianceError, match=r"every feature is constant within"):
        fastgen.fit_gda(X, y)
    with pytest.raises(SingularCovarianceError, match=r"zero variance"):
        fastgen.fit_gda(np.zeros((12, 2)), y, "diagonal")

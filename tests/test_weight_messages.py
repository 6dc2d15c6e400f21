"""Where the sample weight, not the data, is what is missing (NaN in sample_weight,
values present only in rows of weight 0, weights on unlabelled rows), the message
names the weight argument and the caller's index, and says what to do; the caller's
arrays are left untouched."""

import hashlib

import dask.array as da
import numpy as np
import pytest
import scipy.sparse as sp

import fastgen
import fastgen.dask as fdask
from fastgen.sklearn import BernoulliNB, CategoricalNB, GaussianNB, MultinomialNB


def _digest(a):
    a = a.toarray() if sp.issparse(a) else np.asarray(a)
    return hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()


def _data(seed=0, n=60, d=3, frac=0.2):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 3
    X = rng.normal(size=(n, d)) + y[:, None]
    C = np.minimum(rng.poisson(1.0, size=(n, d)), 3).astype(float)
    Xm, Cm = X.copy(), C.copy()
    Xm[rng.random(X.shape) < frac] = np.nan
    Cm[rng.random(C.shape) < frac] = np.nan
    return X, Xm, C, Cm, y


def _fits():
    """name -> fit(w) for every family that takes sample_weight, with NaN in X where
    the family fits it."""
    X, Xm, C, Cm, y = _data()
    mz = {"nan_policy": "marginalize"}
    return {
        **{f"gda-{k}": (lambda w, k=k: fastgen.fit_gda(Xm, y, k, sample_weight=w, **mz))
           for k in ("pooled", "per_class", "diagonal", "pooled_diagonal")},
        "gaussian_nb": lambda w: fastgen.fit_gaussian_nb(Xm, y, sample_weight=w, **mz),
        "bernoulli_nb": lambda w: fastgen.fit_bernoulli_nb(Cm, y, sample_weight=w, **mz),
        "bernoulli_nb_csr": lambda w: fastgen.fit_bernoulli_nb(sp.csr_matrix(Cm), y,
                                                               sample_weight=w, **mz),
        "categorical_nb": lambda w: fastgen.fit_categorical_nb(Cm, y, sample_weight=w, **mz),
        "multinomial_nb": lambda w: fastgen.fit_multinomial_nb(C, y, sample_weight=w),
        "complement_nb": lambda w: fastgen.fit_complement_nb(C, y, sample_weight=w),
        "logistic": lambda w: fastgen.fit_logistic(X, y == 1, sample_weight=w),
        "gda-unlabeled": lambda w: fastgen.fit_gda(Xm, y, "pooled", sample_weight=w,
                                                   unlabeled=Xm[:10], **mz),
        "sk-gaussian_nb": lambda w: GaussianNB(nan_policy="marginalize").fit(
            Xm, y, sample_weight=w),
        "sk-bernoulli_nb": lambda w: BernoulliNB(nan_policy="marginalize").fit(
            Cm, y, sample_weight=w),
        "sk-gaussian_nb-partial": lambda w: GaussianNB().partial_fit(
            X, y, classes=[0, 1, 2], sample_weight=w),
    }


@pytest.mark.parametrize("name", sorted(_fits()))
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("at", [0, 17, 59])
@pytest.mark.parametrize("form", ["array", "list"])
def test_non_finite_weight_is_named_with_what_to_do(name, bad, at, form):
    w = np.linspace(0.5, 2.0, 60)
    w[at] = bad
    before = _digest(w)
    weights = w.tolist() if form == "list" else w
    with pytest.raises(ValueError) as info:
        _fits()[name](weights)
    msg = str(info.value)
    assert f"sample_weight contains a non-finite value at index {at} ({bad})" in msg
    assert "cannot be missing" in msg and "finite weight >= 0" in msg
    assert _digest(w) == before


@pytest.mark.parametrize("fit", ["gda", "gaussian_nb", "multinomial_nb", "bernoulli_nb"])
@pytest.mark.parametrize("at", [3, 33, 59])
@pytest.mark.parametrize("chunks", [20, 7])
def test_dask_names_the_weight_at_its_row_of_x(fit, at, chunks):
    """Each block checks its weights; the message names the row of X, not of the block
    (Gaussian naive Bayes used to say the weights were zero everywhere)."""
    X, _, C, _, y = _data()
    w = np.ones(60)
    w[at] = np.nan
    A = da.from_array(C if fit in ("multinomial_nb", "bernoulli_nb") else X, chunks=chunks)
    yd, wd = da.from_array(y, chunks=chunks), da.from_array(w, chunks=chunks)
    call = {"gda": lambda: fdask.fit_gda(A, yd, "pooled", sample_weight=wd),
            "gaussian_nb": lambda: fdask.fit_gaussian_nb(A, yd, sample_weight=wd),
            "multinomial_nb": lambda: fdask.fit_multinomial_nb(A, yd, sample_weight=wd),
            "bernoulli_nb": lambda: fdask.fit_bernoulli_nb(A, yd, sample_weight=wd)}[fit]
    with pytest.raises(ValueError, match=rf"sample_weight contains a non-finite value at "
                                         rf"index {at} \(nan\): a row's weight cannot be "
                                         rf"missing"):
        call()


def _zero_on(rows, n=60):
    w = np.ones(n)
    w[rows] = 0.0
    return w


_MISSING_FITS = {
    **{f"gda-{k}": (lambda X, y, w, k=k: fastgen.fit_gda(X, y, k, sample_weight=w,
                                                        nan_policy="marginalize"))
       for k in ("pooled", "per_class", "diagonal", "pooled_diagonal")},
    "gaussian_nb": lambda X, y, w: fastgen.fit_gaussian_nb(X, y, sample_weight=w,
                                                           nan_policy="marginalize"),
    "bernoulli_nb": lambda X, y, w: fastgen.fit_bernoulli_nb(X, y, sample_weight=w,
                                                             nan_policy="marginalize"),
    "bernoulli_nb_csr": lambda X, y, w: fastgen.fit_bernoulli_nb(
        sp.csr_matrix(X), y, sample_weight=w, nan_policy="marginalize"),
    "categorical_nb": lambda X, y, w: fastgen.fit_categorical_nb(X, y, sample_weight=w,
                                                                 nan_policy="marginalize"),
    "categorical_nb_csr": lambda X, y, w: fastgen.fit_categorical_nb(
        sp.csr_matrix(X), y, sample_weight=w, nan_policy="marginalize"),
    "sk-gaussian_nb": lambda X, y, w: GaussianNB(nan_policy="marginalize").fit(
        X, y, sample_weight=w),
    "sk-categorical_nb": lambda X, y, w: CategoricalNB(nan_policy="marginalize").fit(
        X, y, sample_weight=w),
}


def _for(name):
    X, Xm, C, Cm, y = _data(seed=4)
    return (Xm if ("gda" in name or "gaussian" in name) else Cm), y


@pytest.mark.parametrize("name", sorted(_MISSING_FITS))
@pytest.mark.parametrize("k,j", [(0, 1), (2, 0)])
def test_values_only_in_rows_of_weight_zero_name_the_weight(name, k, j):
    X, y = _for(name)
    # the rows of class k that observe feature j weigh 0; other rows of class k weigh 1
    obs = (y == k) & ~np.isnan(X[:, j])
    w = _zero_on(obs)
    before = (_digest(X), _digest(w))
    with pytest.raises(ValueError) as info:
        _MISSING_FITS[name](X, y, w)
    msg = str(info.value)
    assert "sample_weight 0" in msg and "positive sample_weight" in msg
    assert "every" not in msg or "NaN" not in msg
    assert (_digest(X), _digest(w)) == before
    # the advice works: weight on one of those rows (on all of them where the class's
    # own covariance needs them)
    w[np.flatnonzero(obs)[:None if name == "gda-per_class" else 1]] = 1.0
    _MISSING_FITS[name](X, y, w)


@pytest.mark.parametrize("name", sorted(_MISSING_FITS))
def test_column_observed_only_in_rows_of_weight_zero_names_the_weight(name):
    X, y = _for(name)
    w = _zero_on(~np.isnan(X[:, 1]))
    with pytest.raises(ValueError, match=r"column 1 of X is observed only in rows of "
                                         r"sample_weight 0"):
        _MISSING_FITS[name](X, y, w)


@pytest.mark.parametrize("name", sorted(_MISSING_FITS))
def test_truly_missing_values_still_say_nan(name):
    X, y = _for(name)
    X = X.copy()
    X[y == 1, 2] = np.nan
    with pytest.raises(ValueError, match=r"\(every such entry is NaN\)"):
        _MISSING_FITS[name](X, y, None)


@pytest.mark.parametrize("name", ["gda-pooled", "gda-diagonal", "gaussian_nb",
                                  "bernoulli_nb", "categorical_nb"])
def test_a_class_of_weight_zero_is_named_as_such_with_nan(name):
    """A class all of whose rows weigh 0 gets the zero-weight class message, not a
    message about missing values."""
    X, y = _for(name)
    with pytest.raises(ValueError, match=r"class 0 has zero total weight \(sample_weight "
                                         r"is 0 on all its rows\)"):
        _MISSING_FITS[name](X, y, _zero_on(y == 0))


@pytest.mark.parametrize("est", [GaussianNB, BernoulliNB, MultinomialNB])
@pytest.mark.parametrize("value", [2.0, 0.0, np.nan])
def test_sklearn_weight_of_an_unlabelled_row_names_its_index(est, value):
    _, _, C, _, y = _data(seed=6)
    semi = y.copy()
    semi[[5, 40, 41]] = -1
    w = np.ones(60)
    w[40] = value
    before = _digest(w)
    with pytest.raises(ValueError) as info:
        est(unlabeled_label=-1).fit(C, semi, sample_weight=w)
    msg = str(info.value)
    assert "index 40" in msg
    if np.isnan(value):
        assert "cannot be missing" in msg
    else:
        assert "an unlabeled row (y == -1)" in msg and "unlabeled_weight" in msg
    assert _digest(w) == before


def test_sklearn_nan_weight_of_a_labelled_row_after_unlabelled_ones_names_its_index():
    _, _, C, _, y = _data(seed=7)
    semi = y.copy()
    semi[:10] = -1
    w = np.ones(60)
    w[20] = np.nan
    with pytest.raises(ValueError, match=r"at index 20 \(nan\)"):
        GaussianNB(unlabeled_label=-1).fit(C, semi, sample_weight=w)

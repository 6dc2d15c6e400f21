"""Labelled rows with every feature missing (``nan_policy="marginalize"``): their label
tells the class priors and nothing else, so adding them changes the class weights and
priors only, and no other fitted number, in every model that fits NaN.

References: the fit without those rows, and plain numpy for the class weights and the
variance floor (var_smoothing times the largest variance of the observed entries).
"""

import dataclasses

import numpy as np
import pytest
import scipy.sparse as sp

import fastgen

# the fields that count or weigh the classes (every labelled row), and the EM record
_CLASS_WEIGHTS = {"n_per_class", "class_count"}
_PRIORS = {"priors", "class_log_prior"}
_HISTORY = {"log_likelihood_history"}


def _gaussian_data(seed, scale, offset, n=240, d=4, frac=0.2):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    X = (rng.normal(size=(n, d)) + 1.5 * y[:, None]) * scale + offset
    X[:, 1] += 0.6 * X[:, 0]
    X[rng.random(X.shape) < frac] = np.nan
    return X, y


def _count_data(seed, n=240, d=5, frac=0.2):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    X = np.minimum(rng.poisson(0.6 + 0.7 * y[:, None], size=(n, d)), 3).astype(float)
    X[rng.random(X.shape) < frac] = np.nan
    return X, y


def _with_empty_rows(X, y, labels, w=None, w_new=None):
    """X and y with rows of NaN labelled ``labels`` appended (and their weights)."""
    m = len(labels)
    X2 = np.vstack([X, np.full((m, X.shape[1]), np.nan, dtype=X.dtype)])
    y2 = np.concatenate([y, labels])
    w2 = None if w is None else np.concatenate([w, w_new])
    return X2, y2, w2


def _assert_unchanged(a, b, rtol, skip=()):
    """Every field of params ``a`` and ``b`` equal, except the fields in ``skip``: float
    arrays bitwise (``rtol`` 0) or to ``rtol`` relative to the field's largest entry
    (at least 1 for the log-scale fields, whose rounding is absolute), others exactly."""
    for f in dataclasses.fields(a):
        if f.name in skip:
            continue
        va, vb = getattr(a, f.name), getattr(b, f.name)
        if isinstance(va, np.ndarray) and va.dtype.kind == "f":
            if rtol == 0:
                np.testing.assert_array_equal(va, vb, err_msg=f.name)
            else:
                scale = np.max(np.abs(va), initial=0.0)
                if "log" in f.name:
                    scale = max(scale, 1.0)
                assert va.shape == vb.shape, f.name
                err = np.max(np.abs(va - vb), initial=0.0)
                assert err <= rtol * scale, (f.name, err, scale)
        elif isinstance(va, np.ndarray):
            np.testing.assert_array_equal(va, vb, err_msg=f.name)
        elif isinstance(va, float):
            assert abs(va - vb) <= rtol * abs(va), f.name
        else:
            assert va == vb, f.name


def _class_weights(y, w, classes):
    w = np.ones(len(y)) if w is None else w
    return np.array([w[y == c].sum() for c in classes])


def _fits(model):
    """fit(X, y, sample_weight, fixed priors or None) for one model kind."""
    if model in ("pooled", "per_class", "diagonal", "pooled_diagonal"):
        return lambda X, y, w, pri: fastgen.fit_gda(
            X, y, model, nan_policy="marginalize", sample_weight=w, priors=pri)
    if model == "gaussian_nb":
        return lambda X, y, w, pri: fastgen.fit_gaussian_nb(
            X, y, nan_policy="marginalize", sample_weight=w, priors=pri,
            var_smoothing=1e-3)
    if model.startswith("bernoulli"):
        def fit(X, y, w, pri):
            A = sp.csr_matrix(X) if model.endswith("csr") else X
            return fastgen.fit_bernoulli_nb(A, y, nan_policy="marginalize",
                                            sample_weight=w, class_prior=pri, binarize=1.5)
        return fit
    if model.startswith("categorical"):
        def fit(X, y, w, pri):
            A = sp.csr_matrix(X) if model.endswith("csr") else X
            return fastgen.fit_categorical_nb(A, y, nan_policy="marginalize",
                                              sample_weight=w)
        return fit
    raise AssertionError(model)


_GAUSSIAN = ["pooled", "per_class", "diagonal", "pooled_diagonal", "gaussian_nb"]
_COUNTS = ["bernoulli", "bernoulli_csr", "categorical", "categorical_csr"]
_DATA = [(0, 1.0, 0.0), (1, 1e-3, 5.0), (2, 1e4, -1e5), (3, 1.0, 1e6)]


def _data(model, seed, scale, offset):
    if model in _GAUSSIAN:
        return _gaussian_data(seed, scale, offset)
    return _count_data(seed)


@pytest.mark.parametrize("model", _GAUSSIAN + _COUNTS)
@pytest.mark.parametrize("seed,scale,offset", _DATA)
def test_rows_in_proportion_change_only_the_class_weights(model, seed, scale, offset):
    """As many empty rows as rows, with the same labels: the class weights double
    exactly, so the priors stay (to 1e-15) and every other number is the same bit for
    bit."""
    X, y = _data(model, seed, scale, offset)
    fit = _fits(model)
    a = fit(X, y, None, None)
    X2, y2, _ = _with_empty_rows(X, y, y)
    b = fit(X2, y2, None, None)
    _assert_unchanged(a, b, 0, skip=_CLASS_WEIGHTS | _PRIORS | _HISTORY)
    # log π_k = log N_k − log N (naive Bayes) is log 2N_k − log 2N to the last bit
    _assert_unchanged(a, b, 1e-15, skip={f.name for f in dataclasses.fields(a)} - _PRIORS)
    counts = "n_per_class" if hasattr(a, "n_per_class") else "class_count"
    np.testing.assert_array_equal(getattr(b, counts), 2 * getattr(a, counts))
    np.testing.assert_array_equal(getattr(b, counts),
                                  _class_weights(y2, None, a.classes))
    if a.n_iter is not None:  # the EM of the full covariances: the same iterations
        assert (a.n_iter, a.converged) == (b.n_iter, b.converged)
        # the history is the observed-data log-likelihood: the new rows add
        # Σ log π_{y_i} (their features add nothing), a constant
        shift = np.sum(np.log(a.priors.astype(np.float64))[np.searchsorted(a.classes, y)])
        np.testing.assert_allclose(b.log_likelihood_history,
                                   a.log_likelihood_history + shift, rtol=1e-13)


@pytest.mark.parametrize("model", _GAUSSIAN + ["bernoulli", "bernoulli_csr"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("seed,scale,offset", _DATA[:3])
def test_any_rows_with_fixed_priors_change_nothing_but_the_counts(model, weighted, seed,
                                                                   scale, offset):
    """Empty rows of any labels and weights, the priors given: every number but the
    class weights agrees to 1e-15 (the class weights enter only as W_k·(S/N)/W_k)."""
    X, y = _data(model, seed, scale, offset)
    rng = np.random.default_rng(seed + 100)
    w = rng.random(len(y)) + 0.5 if weighted else None
    labels = rng.integers(0, 3, 37)
    w_new = rng.random(37) * 3 if weighted else None
    pri = np.array([0.2, 0.5, 0.3])
    fit = _fits(model)
    a = fit(X, y, w, pri)
    X2, y2, w2 = _with_empty_rows(X, y, labels, w, w_new)
    b = fit(X2, y2, w2, pri)
    _assert_unchanged(a, b, 1e-15, skip=_CLASS_WEIGHTS | _HISTORY)
    counts = getattr(b, "n_per_class" if hasattr(b, "n_per_class") else "class_count")
    np.testing.assert_allclose(counts, _class_weights(y2, w2, a.classes), rtol=1e-13)
    if a.n_iter is not None:
        assert (a.n_iter, a.converged) == (b.n_iter, b.converged)


@pytest.mark.parametrize("model", _GAUSSIAN + _COUNTS)
def test_rows_of_new_weights_and_labels_keep_the_features_fit(model):
    """Empty rows with labels out of proportion: priors follow all the labels (numpy
    reference), every feature estimate stays to 1e-15."""
    X, y = _data(model, 5, 2.0, 3.0)
    labels = np.zeros(50, dtype=y.dtype)
    fit = _fits(model)
    a = fit(X, y, None, None)
    X2, y2, _ = _with_empty_rows(X, y, labels)
    b = fit(X2, y2, None, None)
    _assert_unchanged(a, b, 1e-15, skip=_CLASS_WEIGHTS | _PRIORS | _HISTORY)
    counts = _class_weights(y2, None, a.classes)
    priors = np.exp(b.class_log_prior) if hasattr(b, "class_log_prior") else b.priors
    np.testing.assert_allclose(priors, counts / counts.sum(), rtol=1e-14)


@pytest.mark.parametrize("seed,scale,offset", _DATA)
@pytest.mark.parametrize("var_smoothing", [1e-9, 1e-3, 0.5])
def test_one_variance_floor_for_the_diagonal_models(seed, scale, offset, var_smoothing):
    """Unweighted, fit_gda's diagonal kinds and fit_gaussian_nb take the floor from the
    same statistics: var_smoothing · max_j of the variance of feature j's observed
    entries (numpy's nanvar), and agree with each other bit for bit."""
    X, y = _gaussian_data(seed, scale, offset)
    eps = var_smoothing * np.nanvar(X, axis=0).max()
    gnb = fastgen.fit_gaussian_nb(X, y, nan_policy="marginalize",
                                  var_smoothing=var_smoothing)
    gda = fastgen.fit_gda(X, y, "diagonal", nan_policy="marginalize",
                          var_smoothing=var_smoothing)
    # merged from class moments, as without NaN: |offset|/spread·ε of relative error
    np.testing.assert_allclose(gnb.epsilon, eps, rtol=1e-13 * (1.0 + abs(offset) / scale))
    np.testing.assert_array_equal(gda.covariance, gnb.variances)
    np.testing.assert_array_equal(gda.means, gnb.means)
    # the floor is the one added: the available-case variances plus ε
    var = np.array([np.nanvar(X[y == k], axis=0) for k in range(3)])
    np.testing.assert_allclose(gda.covariance, var + eps, rtol=1e-9)
    pooled = fastgen.fit_gda(X, y, "pooled_diagonal", nan_policy="marginalize",
                             var_smoothing=var_smoothing)
    D = X - gda.means[y]
    shared = np.nansum(D * D, axis=0) / np.sum(~np.isnan(X), axis=0)
    np.testing.assert_allclose(pooled.covariance, shared + eps, rtol=1e-9)


def test_weighted_floors_follow_each_models_rule():
    """With weights, fit_gda's floor is the weighted variance of the observed entries
    and fit_gaussian_nb's the unweighted one (scikit-learn's rule, as without NaN);
    rows without values move neither."""
    X, y = _gaussian_data(7, 3.0, 10.0)
    w = np.random.default_rng(7).random(len(y)) * 2 + 0.1
    o = ~np.isnan(X)
    W = np.where(o, w[:, None], 0.0)
    mean = np.nansum(W * np.nan_to_num(X), axis=0) / W.sum(axis=0)
    wvar = np.nansum(W * np.nan_to_num(X - mean) ** 2, axis=0) / W.sum(axis=0)
    for extra in (0, 25):
        X2, y2, w2 = _with_empty_rows(X, y, np.arange(extra) % 3, w, np.full(extra, 4.0))
        gda = fastgen.fit_gda(X2, y2, "diagonal", nan_policy="marginalize",
                              sample_weight=w2, var_smoothing=0.1)
        gnb = fastgen.fit_gaussian_nb(X2, y2, nan_policy="marginalize", sample_weight=w2,
                                      var_smoothing=0.1)
        num = np.array([np.nansum(W[y == k] * np.nan_to_num(X[y == k] - gda.means[k]) ** 2,
                                  axis=0) for k in range(3)])
        var = num / np.array([W[y == k].sum(axis=0) for k in range(3)])
        np.testing.assert_allclose(gda.covariance, var + 0.1 * wvar.max(), rtol=1e-11)
        np.testing.assert_allclose(gnb.epsilon, 0.1 * np.nanvar(X, axis=0).max(),
                                   rtol=1e-12)


def _unlabelled(model, seed):
    rng = np.random.default_rng(seed + 200)
    if model in _GAUSSIAN:
        U = rng.normal(size=(150, 4)) + 1.5 * rng.integers(0, 3, 150)[:, None]
    else:
        U = np.minimum(rng.poisson(1.0, size=(150, 5)), 3).astype(float)
    U[rng.random(U.shape) < 0.2] = np.nan
    return U


@pytest.mark.parametrize("model", _GAUSSIAN + ["bernoulli", "bernoulli_csr"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("seed", [0, 1])
def test_with_unlabelled_rows_and_fixed_priors_they_change_nothing(model, weighted, seed):
    """EM over unlabelled rows with the priors given: labelled rows without values
    leave every number but the class weights as it was, to 1e-15 (EM leaves them out
    of its E-steps and of its stopping rule's weight, so it takes the same steps)."""
    X, y = _data(model, seed, 1.0, 0.0)
    rng = np.random.default_rng(seed + 300)
    w = rng.random(len(y)) + 0.5 if weighted else None
    labels = rng.integers(0, 3, 30)
    w_new = rng.random(30) * 3 if weighted else None
    X2, y2, w2 = _with_empty_rows(X, y, labels, w, w_new)
    U = _unlabelled(model, seed)
    pri = np.array([0.2, 0.5, 0.3])
    em = {"unlabeled": U, "em_tol": 1e-10, "em_max_iter": 500}
    if model in ("pooled", "per_class", "diagonal", "pooled_diagonal"):
        def fit(X, y, w):
            return fastgen.fit_gda(X, y, model, nan_policy="marginalize", sample_weight=w,
                                   priors=pri, **em)
    elif model == "gaussian_nb":
        def fit(X, y, w):
            return fastgen.fit_gaussian_nb(X, y, nan_policy="marginalize", sample_weight=w,
                                           priors=pri, **em)
    else:
        def fit(X, y, w):
            A = sp.csr_matrix(X) if model.endswith("csr") else X
            U_ = sp.csr_matrix(U) if model.endswith("csr") else U
            return fastgen.fit_bernoulli_nb(A, y, nan_policy="marginalize", sample_weight=w,
                                            class_prior=pri, binarize=1.5,
                                            **{**em, "unlabeled": U_})
    a, b = fit(X, y, w), fit(X2, y2, w2)
    assert (a.n_iter, a.converged) == (b.n_iter, b.converged)
    _assert_unchanged(a, b, 1e-14, skip=_CLASS_WEIGHTS | _HISTORY)

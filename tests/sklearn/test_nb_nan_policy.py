"""The naive Bayes estimators with ``nan_policy="marginalize"``: scikit-learn's
estimator checks with the ``allow_nan`` tag, the same answers as the functional API,
and clear refusals where NaN cannot go (partial_fit, multinomial fits, a bad policy)."""

import numpy as np
import pytest

sklearn = pytest.importorskip("sklearn")

from sklearn.base import clone  # noqa: E402
from sklearn.datasets import load_breast_cancer, load_digits  # noqa: E402
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

import fastgen  # noqa: E402
from fastgen import sklearn as fs  # noqa: E402

ESTIMATORS = [fs.GaussianNB(nan_policy="marginalize"),
              fs.BernoulliNB(nan_policy="marginalize"),
              fs.MultinomialNB(nan_policy="marginalize"),
              fs.CategoricalNB(nan_policy="marginalize")]


def _expected_failed_checks(estimator):
    out = dict(fs.expected_failed_checks(estimator) or {})
    if isinstance(estimator, fs.MultinomialNB):
        why = ("the check fits data with NaN; MultinomialNB scores NaN (the allow_nan "
               "tag) but refuses to fit it, since a missing count's expectation depends "
               "on the row's unobserved total")
        out["check_estimators_pickle"] = why
        out["check_estimators_pickle(readonly_memmap=True)"] = why
    return out


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=_expected_failed_checks)
def test_estimator_checks(estimator, check):
    check(estimator)


def _holes(X, rate, seed):
    X = np.array(X, dtype=np.float64)
    X[np.random.default_rng(seed).random(X.shape) < rate] = np.nan
    return X


def _data(model, seed):
    """A real data set of the model's kind, with 10 % of its entries missing."""
    if model == "gaussian":
        X, y = load_breast_cancer(return_X_y=True)
    else:
        X, y = load_digits(return_X_y=True)
        if model == "bernoulli":
            X = (X > 7).astype(np.float64)
        elif model == "categorical":
            X = np.minimum(X // 4, 3)
    return _holes(X, 0.1, seed), y


FITS = {
    "gaussian": (fs.GaussianNB, fastgen.fit_gaussian_nb),
    "bernoulli": (fs.BernoulliNB, lambda X, y, **k: fastgen.fit_bernoulli_nb(
        X, y, binarize=0.0, **k)),
    "categorical": (fs.CategoricalNB, fastgen.fit_categorical_nb),
}


@pytest.mark.parametrize("model", list(FITS))
@pytest.mark.parametrize("weighted", [False, True])
def test_fit_and_scores_are_the_functional_api(model, weighted):
    est_cls, fit = FITS[model]
    X, y = _data(model, 1)
    w = np.random.default_rng(2).uniform(0.5, 2.0, y.shape[0]) if weighted else None
    X_before = X.copy()
    est = est_cls(nan_policy="marginalize").fit(X, y, sample_weight=w)
    np.testing.assert_array_equal(X, X_before)
    p = fit(X, y, sample_weight=w, nan_policy="marginalize")
    assert est.params_ == p
    for name in ("predict", "predict_proba", "predict_log_proba"):
        np.testing.assert_array_equal(getattr(est, name)(X),
                                      getattr(fastgen, name)(p, X, nan_policy="marginalize"))
    np.testing.assert_array_equal(est.predict_joint_log_proba(X),
                                  fastgen.joint_log_likelihood(p, X, nan_policy="marginalize"))


@pytest.mark.parametrize("model", list(FITS))
def test_complete_data_is_todays_fit(model):
    est_cls, _ = FITS[model]
    X, y = _data(model, 3)
    X = np.nan_to_num(X, nan=0.0)
    a = est_cls(nan_policy="marginalize").fit(X, y)
    b = est_cls().fit(X, y)
    assert a.params_ == b.params_
    # complete data keeps partial_fit: batches add up to fit
    c = est_cls(nan_policy="marginalize")
    c.partial_fit(X[:300], y[:300], classes=np.unique(y)).partial_fit(X[300:], y[300:])
    for name in ("class_count_", "feature_log_prob_", "theta_", "var_"):
        if hasattr(b, name):
            np.testing.assert_allclose(np.concatenate(getattr(c, name), axis=None),
                                       np.concatenate(getattr(b, name), axis=None),
                                       rtol=1e-10)


def test_multinomial_scores_missing_counts_but_does_not_fit_them():
    X, y = load_digits(return_X_y=True)
    est = fs.MultinomialNB(nan_policy="marginalize").fit(X, y)
    Xm = _holes(X, 0.1, 4)
    np.testing.assert_array_equal(
        est.predict_proba(Xm), fastgen.predict_proba(est.params_, Xm, nan_policy="marginalize"))
    with pytest.raises(ValueError, match="multinomial naive Bayes is not fitted with missing"):
        fs.MultinomialNB(nan_policy="marginalize").fit(Xm, y)


@pytest.mark.parametrize("model", list(FITS))
def test_partial_fit_refuses_nan(model):
    est_cls, _ = FITS[model]
    X, y = _data(model, 5)
    with pytest.raises(ValueError, match="partial_fit cannot take missing values"):
        est_cls(nan_policy="marginalize").partial_fit(X, y, classes=np.unique(y))
    est = est_cls(nan_policy="marginalize").fit(X, y)
    with pytest.raises(ValueError, match="fitted with missing values"):
        est.partial_fit(np.nan_to_num(X[:10]), y[:10])


@pytest.mark.parametrize("est", [fs.GaussianNB, fs.BernoulliNB, fs.MultinomialNB,
                                 fs.CategoricalNB])
def test_policy_is_checked_and_tags_follow_it(est):
    X, y = load_digits(return_X_y=True)
    with pytest.raises(ValueError, match="nan_policy must be"):
        est(nan_policy="drop").fit(X, y)
    assert est(nan_policy="marginalize").__sklearn_tags__().input_tags.allow_nan
    assert not clone(est(nan_policy="marginalize")).set_params(
        nan_policy="raise").__sklearn_tags__().input_tags.allow_nan
    with pytest.raises(ValueError, match="NaN"):
        est().fit(_holes(X, 0.1, 6), y)

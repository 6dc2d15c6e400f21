"""Every scikit-learn estimator checks sample_weight first, with the functional API's
message (a NaN weight is named as such, not as a class without weight), and leaves the
caller's weights untouched."""

import inspect

import numpy as np
import pytest

import fastgen
import fastgen.sklearn as fs

COUNT_MODELS = {"BernoulliNB", "MultinomialNB", "ComplementNB", "CategoricalNB"}
ESTIMATORS = [n for n in fs.__all__ if inspect.isclass(getattr(fs, n))
              and "sample_weight" in inspect.signature(getattr(fs, n).fit).parameters]


def _data(name, n=60, seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 3
    if name in COUNT_MODELS:
        X = rng.integers(0, 2 if name == "BernoulliNB" else 4, (n, 4)).astype(float)
    else:
        X = rng.normal(size=(n, 4)) + y[:, None]
    return X, y


def _functional_message(w):
    with pytest.raises(ValueError) as exc:
        fastgen.fit_logistic(np.zeros((w.shape[0], 1)), np.arange(w.shape[0]) % 2,
                             sample_weight=w)
    return str(exc.value)


def test_every_weighted_estimator_is_listed():
    assert {"GaussianNB", "LogisticRegression", "FirthLogisticRegression",
            "LogisticRegressionIRLS"} <= set(ESTIMATORS)


@pytest.mark.parametrize("name", ESTIMATORS)
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf, -1.0])
@pytest.mark.parametrize("where", [0, 5, 59])
def test_bad_weight_named_first(name, bad, where):
    X, y = _data(name)
    w = np.ones(len(y))
    w[where] = bad
    w0 = w.copy()
    expected = _functional_message(w)
    assert f"index {where}" in expected
    with pytest.raises(ValueError) as exc:
        getattr(fs, name)().fit(X, y, sample_weight=w)
    assert str(exc.value) == expected
    np.testing.assert_array_equal(w, w0)


@pytest.mark.parametrize("name", ["LogisticRegression", "FirthLogisticRegression"])
def test_bad_weight_named_with_class_weight(name):
    """class_weight multiplies the weights: a NaN is still named as the caller's."""
    X, y = _data(name)
    w = np.ones(len(y))
    w[7] = np.nan
    with pytest.raises(ValueError, match=r"non-finite value at index 7 \(nan\)"):
        getattr(fs, name)(class_weight="balanced").fit(X, y, sample_weight=w)


@pytest.mark.parametrize("name", ["LogisticRegression", "FirthLogisticRegression"])
def test_wrong_weight_shape_named(name):
    X, y = _data(name)
    with pytest.raises(ValueError, match=r"sample_weight must have shape \(60,\)"):
        getattr(fs, name)(class_weight="balanced").fit(X, y, sample_weight=np.ones(59))


@pytest.mark.parametrize("name", ["LogisticRegression", "FirthLogisticRegression"])
def test_zero_weight_class_still_named(name):
    X, y = _data(name)
    w = np.where(y == 1, 0.0, 1.0)
    with pytest.raises(ValueError, match="class 1 has zero total weight"):
        getattr(fs, name)().fit(X, y, sample_weight=w)


@pytest.mark.parametrize("name", [n for n in ESTIMATORS
                                  if hasattr(getattr(fs, n), "partial_fit")])
def test_partial_fit_bad_weight(name):
    X, y = _data(name)
    w = np.ones(len(y))
    w[3] = np.nan
    with pytest.raises(ValueError, match=r"non-finite value at index 3 \(nan\)"):
        getattr(fs, name)().partial_fit(X, y, classes=[0, 1, 2], sample_weight=w)

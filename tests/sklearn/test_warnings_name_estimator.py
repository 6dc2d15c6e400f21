"""The scikit-learn logistic estimators' warnings name the estimator, not the model
layer's function (fit_logistic, logistic_inference)."""

import warnings

import numpy as np
import pytest

import fastgen.sklearn as fs


def _data(K=2, n=200, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3)) * [1.0, 100.0, 0.01]
    y = (X[:, 0] + rng.normal(size=n) > 0).astype(int)
    if K == 3:
        y[rng.random(n) < 0.3] = 2
    return X, y


def _messages(est, X, y):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(X, y)
    return [str(w.message) for w in caught]


@pytest.mark.parametrize("K", [2, 3])
@pytest.mark.parametrize("C", [1.0, np.inf])
@pytest.mark.parametrize("cls", [fs.LogisticRegression, fs.LogisticRegressionIRLS])
def test_logistic_regression_warnings_name_it(K, C, cls):
    X, y = _data(K)
    msgs = _messages(cls(C=C, max_iter=1), X, y)
    assert any(m.startswith("LogisticRegression did not converge in max_iter=1")
               for m in msgs), msgs
    assert not any("fit_logistic" in m or "logistic_inference" in m for m in msgs), msgs


def test_firth_warnings_name_it():
    X, y = _data()
    msgs = _messages(fs.FirthLogisticRegression(max_iter=1), X, y)
    assert any(m.startswith("FirthLogisticRegression") and "did not converge" in m
               for m in msgs), msgs
    assert not any("fit_logistic" in m or "logistic_inference" in m for m in msgs), msgs


def test_warning_points_at_the_caller():
    X, y = _data()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fs.LogisticRegression(C=np.inf, max_iter=1).fit(X, y)
    assert caught and all(w.filename == __file__ for w in caught), \
        [(w.filename, str(w.message)[:60]) for w in caught]

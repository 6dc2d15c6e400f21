"""Firth inference on the data of the fit spares the modified score's extra pass (the
pass reads the fit's own log-likelihood), and on other data still computes it and
warns that the coefficients are not the estimate for those data."""

import warnings

import numpy as np
import pytest

import fastgen
from fastgen.logistic.inference import api
from fastgen.logistic.params import ConvergenceWarning


def _data(n, d, K, offset, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.argmax(0.6 * X[:, :K] + rng.gumbel(size=(n, K)), axis=1) if K > 2 else (
        (X[:, 0] + rng.logistic(size=n) > 0).astype(int))
    return X + offset, y, rng.uniform(0.5, 2.0, n)


@pytest.fixture
def calls(monkeypatch):
    seen = []
    orig = api.firth_score

    def spy(*args, **kwargs):
        seen.append(1)
        return orig(*args, **kwargs)

    monkeypatch.setattr(api, "firth_score", spy)
    return seen


@pytest.mark.parametrize("K", [2, 3])
@pytest.mark.parametrize("offset", [0.0, 1e3, 1e6])
@pytest.mark.parametrize("weighted", [False, True])
def test_fitted_data_need_no_modified_score(calls, K, offset, weighted):
    X, y, w = _data(600, 4, K, offset)
    kw = {"sample_weight": w} if weighted else {}
    model = fastgen.fit_logistic(X, y, penalty="firth", **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        fastgen.logistic_inference(model, X, y, **kw)
    assert calls == []


@pytest.mark.parametrize("K", [2, 3])
def test_other_data_are_still_checked(calls, K):
    X, y, w = _data(600, 4, K, 0.0)
    model = fastgen.fit_logistic(X, y, penalty="firth")
    for Xo, yo, kw in ((X[:400], y[:400], {}), (X, y, {"sample_weight": w}),
                       (X, np.roll(y, 1), {})):
        calls.clear()
        with pytest.warns(ConvergenceWarning, match="fitted on"):
            fastgen.logistic_inference(model, Xo, yo, **kw)
        assert calls == [1]


def test_unconverged_fit_is_still_checked(calls):
    X, y, _ = _data(600, 4, 2, 0.0)
    with pytest.warns(ConvergenceWarning):
        model = fastgen.fit_logistic(X, y, penalty="firth", max_iter=1)
    with pytest.warns(ConvergenceWarning):
        fastgen.logistic_inference(model, X, y)
    assert calls == [1]

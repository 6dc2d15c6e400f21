"""Every warning fastgen raises names the caller's line, not a line inside fastgen."""

import warnings

import numpy as np
import pytest
from reference import make_blobs, require

import fastgen
from fastgen.kernels import _cache

HERE = __file__


def _caught(call, category):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    mine = [w for w in caught if issubclass(w.category, category)]
    assert mine, [str(w.message) for w in caught]
    return mine


def _counts():
    rng = np.random.default_rng(2)
    return rng.poisson(1.0, size=(40, 4)).astype(np.float64), rng.integers(0, 2, size=40)


@pytest.mark.parametrize("fit", [fastgen.fit_multinomial_nb, fastgen.fit_bernoulli_nb,
                                  fastgen.fit_complement_nb, fastgen.fit_categorical_nb])
def test_alpha_clipped_points_at_the_caller(fit):
    X, y = _counts()
    for w in _caught(lambda: fit(X, y, alpha=0.0), fastgen.AlphaClippedWarning):
        assert w.filename == HERE, w.filename


def test_alpha_clipped_through_the_streaming_builder_points_at_the_caller():
    X, y = _counts()
    c = fastgen.nb_counts(X, y, model="multinomial")
    for w in _caught(lambda: fastgen.nb_from_counts(c, alpha=0.0),
                     fastgen.AlphaClippedWarning):
        assert w.filename == HERE, w.filename


def test_sklearn_adapter_warnings_point_at_the_caller():
    require("sklearn")
    from sklearn.exceptions import ConvergenceWarning

    from fastgen.sklearn import LinearDiscriminantAnalysis, LogisticRegressionIRLS, MultinomialNB

    X, y = _counts()
    # scikit-learn's alpha check (force_alpha=False) and its clipping warning
    for w in _caught(lambda: MultinomialNB(alpha=0.0, force_alpha=False).fit(X, y),
                     UserWarning):
        assert w.filename == HERE, w.filename
    Xb, yb = make_blobs(60, 3, 3, seed=1)
    for w in _caught(lambda: LinearDiscriminantAnalysis(priors=[0.5, 0.5, 0.5]).fit(Xb, yb),
                     UserWarning):
        assert w.filename == HERE, w.filename
    for w in _caught(lambda: LogisticRegressionIRLS(max_iter=1).fit(Xb, yb), ConvergenceWarning):
        assert w.filename == HERE, w.filename


def test_runtime_setup_warning_points_at_the_caller(monkeypatch):
    monkeypatch.setattr(_cache, "_PATCHED", False)
    monkeypatch.setattr(_cache, "_unsupported_reason", lambda *a: "numba 0.0 is untested")
    caught = _caught(_cache.tolerate_corrupt_cache, fastgen.RuntimeSetupWarning)
    assert [w.filename for w in caught] == [HERE]

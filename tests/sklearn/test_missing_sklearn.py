"""The discriminant analysis estimators with ``nan_policy="marginalize"``: scikit-learn's
estimator checks with the ``allow_nan`` tag, and the same answers as the functional API
(fastgen.fit_gda and the scoring functions with the same nan_policy)."""

import warnings

import numpy as np
import pytest

sklearn = pytest.importorskip("sklearn")

from sklearn.base import clone  # noqa: E402
from sklearn.datasets import load_wine  # noqa: E402
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

import fastgen  # noqa: E402
from fastgen import sklearn as fs  # noqa: E402

ESTIMATORS = [fs.LinearDiscriminantAnalysis(nan_policy="marginalize"),
              fs.QuadraticDiscriminantAnalysis(nan_policy="marginalize")]


# scikit-learn's checks put NaN into a few rows of tiny data sets, where some pairs of
# features are never observed together: fastgen says so, rightly
@pytest.mark.filterwarnings("ignore:features .* are never observed together:UserWarning")
def _expected_failed_checks(estimator):
    out = dict(fs.expected_failed_checks(estimator) or {})
    if isinstance(estimator, fs.LinearDiscriminantAnalysis):
        out["check_estimators_pickle"] = (
            "the check transforms data with NaN; transform refuses NaN, since a "
            "projection has no marginal over missing features (scores do)")
    return out


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=_expected_failed_checks)
def test_estimator_checks(estimator, check):
    check(estimator)


def _wine_with_nan(rate, seed):
    X, y = load_wine(return_X_y=True)
    Xm = X.copy()
    Xm[np.random.default_rng(seed).random(X.shape) < rate] = np.nan
    return Xm, y


def test_tags_follow_nan_policy():
    for est in ESTIMATORS:
        assert est.__sklearn_tags__().input_tags.allow_nan
        assert not clone(est).set_params(nan_policy="raise").__sklearn_tags__().input_tags.allow_nan


def test_lda_is_the_functional_api():
    Xm, y = _wine_with_nan(0.15, 1)
    est = fs.LinearDiscriminantAnalysis(nan_policy="marginalize").fit(Xm, y)
    p = fastgen.fit_gda(Xm, y, "pooled", nan_policy="marginalize")
    assert est.params_ == p
    for name in ("predict", "predict_proba", "predict_log_proba"):
        np.testing.assert_array_equal(getattr(est, name)(Xm),
                                      getattr(fastgen, name)(p, Xm, nan_policy="marginalize"))


def test_qda_is_the_functional_api_with_reg_applied_once():
    Xm, y = _wine_with_nan(0.1, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fastgen.ConvergenceWarning)
        est = fs.QuadraticDiscriminantAnalysis(nan_policy="marginalize",
                                               reg_param=0.05).fit(Xm, y)
        p = fastgen.fit_gda(Xm, y, "per_class", reg=0.05, tol=0.0, nan_policy="marginalize")
    np.testing.assert_allclose(est.params_.covariance, p.covariance, rtol=1e-10, atol=1e-12)
    assert est.params_.n_iter == p.n_iter
    np.testing.assert_allclose(est.predict_proba(Xm),
                               fastgen.predict_proba(p, Xm, nan_policy="marginalize"),
                               rtol=1e-8, atol=1e-12)


def test_default_refuses_nan_and_bad_policy_is_an_error():
    Xm, y = _wine_with_nan(0.1, 3)
    for est in (fs.LinearDiscriminantAnalysis(), fs.QuadraticDiscriminantAnalysis()):
        with pytest.raises(ValueError, match="NaN"):
            est.fit(Xm, y)
        with pytest.raises(ValueError, match="nan_policy must be"):
            clone(est).set_params(nan_policy="drop").fit(np.nan_to_num(Xm), y)


def test_solvers_without_em_refuse_nan():
    Xm, y = _wine_with_nan(0.1, 4)
    with pytest.raises(ValueError, match="solver='svd'"):
        fs.LinearDiscriminantAnalysis(solver="lsqr", shrinkage="auto",
                                      nan_policy="marginalize").fit(Xm, y)


def test_decision_function_of_complete_rows_is_unchanged():
    X, y = load_wine(return_X_y=True)
    for Xs, ys in ((X, y), (X[y < 2], y[y < 2])):
        a = fs.LinearDiscriminantAnalysis().fit(Xs, ys)
        b = fs.LinearDiscriminantAnalysis(nan_policy="marginalize").fit(Xs, ys)
        np.testing.assert_array_equal(a.decision_function(Xs), b.decision_function(Xs))
        Xm = Xs.copy()
        Xm[::3, 2] = np.nan
        dec = b.decision_function(Xm)
        lp = b.predict_log_proba(Xm)
        want = lp[:, 1] - lp[:, 0] if lp.shape[1] == 2 else lp
        np.testing.assert_allclose(dec[::3], want[::3], rtol=1e-12)
        np.testing.assert_array_equal(dec[1::3], a.decision_function(Xs)[1::3])

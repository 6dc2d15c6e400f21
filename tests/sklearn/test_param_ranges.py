"""An out-of-range hyper-parameter of any scikit-learn estimator is a ValueError at fit
(and partial_fit) naming it, before any work; scikit-learn's ranges are the reference."""

import numpy as np
import pytest

import fastgen.sklearn as fs

COUNT = {"BernoulliNB", "MultinomialNB", "ComplementNB", "CategoricalNB"}


def _data(name, n=60):
    rng = np.random.default_rng(1)
    y = np.arange(n) % 3
    if name in COUNT:
        return rng.integers(0, 2, (n, 4)).astype(float), y
    return rng.normal(size=(n, 4)) + y[:, None], y


CASES = [
    ("QuadraticDiscriminantAnalysis", {"reg_param": -1}, "reg_param must be >= 0"),
    ("QuadraticDiscriminantAnalysis", {"reg_param": 2}, "reg_param must be <= 1"),
    ("QuadraticDiscriminantAnalysis", {"reg_param": 1.0000001}, "reg_param must be <= 1"),
    ("QuadraticDiscriminantAnalysis", {"reg_param": np.nan}, "reg_param must be finite"),
    ("QuadraticDiscriminantAnalysis", {"reg_param": "big"}, "reg_param must be a real"),
    ("QuadraticDiscriminantAnalysis", {"tol": -1e-9}, "tol must be >= 0"),
    ("LinearDiscriminantAnalysis", {"tol": np.inf}, "tol must be finite"),
    ("LinearDiscriminantAnalysis", {"n_components": 0}, "n_components must be None or"),
    ("LinearDiscriminantAnalysis", {"n_components": 1.5}, "n_components must be None or"),
    ("LinearDiscriminantAnalysis", {"store_covariance": "yes"},
     "store_covariance must be True or False"),
    ("LogisticRegression", {"warm_start": 1}, "warm_start must be True or False"),
    ("LogisticRegression", {"tol": -1}, "tol must be >= 0"),
    ("FirthLogisticRegression", {"fit_intercept": "no"},
     "fit_intercept must be True or False"),
    ("MultinomialNB", {"force_alpha": "x"}, "force_alpha must be True or False"),
    ("GaussianNB", {"unlabeled_weight": -0.5}, "unlabeled_weight must be >= 0"),
    ("GaussianNB", {"em_max_iter": -1}, "em_max_iter must be an integer >= 0"),
    ("CategoricalNB", {"em_max_iter": 2.5}, "em_max_iter must be an integer >= 0"),
    ("QuadraticDiscriminantAnalysis", {"unlabeled_weight": np.nan},
     "unlabeled_weight must be finite"),
]


@pytest.mark.parametrize("name,params,match", CASES)
def test_out_of_range_raises_at_fit(name, params, match):
    X, y = _data(name)
    X0 = X.copy()
    est = getattr(fs, name)(**params)  # constructing never checks (scikit-learn's rule)
    with pytest.raises(ValueError, match=f"{name}: {match}"):
        est.fit(X, y)
    np.testing.assert_array_equal(X, X0)
    assert not hasattr(est, "classes_")


@pytest.mark.parametrize("name,params,match",
                         [c for c in CASES if hasattr(getattr(fs, c[0]), "partial_fit")])
def test_out_of_range_raises_at_partial_fit(name, params, match):
    X, y = _data(name)
    with pytest.raises(ValueError, match=match):
        getattr(fs, name)(**params).partial_fit(X, y, classes=[0, 1, 2])


@pytest.mark.parametrize("param,bad", [("reg_param", -1), ("reg_param", 2),
                                       ("tol", -1.0)])
def test_scikit_learn_rejects_the_same(param, bad):
    """The reference: scikit-learn's QDA rejects these values too."""
    from sklearn.discriminant_analysis import QuadraticDiscriminantAnalysis

    X, y = _data("QuadraticDiscriminantAnalysis")
    with pytest.raises(ValueError):
        QuadraticDiscriminantAnalysis(**{param: bad}).fit(X, y)


@pytest.mark.parametrize("name,params", [
    ("QuadraticDiscriminantAnalysis", {"reg_param": 0.0}),
    ("QuadraticDiscriminantAnalysis", {"reg_param": 1.0}),
    ("QuadraticDiscriminantAnalysis", {"reg_param": np.float32(0.5)}),
    ("LinearDiscriminantAnalysis", {"tol": 0.0, "n_components": np.int64(1)}),
    ("LogisticRegression", {"warm_start": np.True_, "max_iter": 0}),
    ("GaussianNB", {"unlabeled_weight": 0.0, "em_max_iter": 0}),
])
def test_edges_of_the_ranges_fit(name, params):
    import warnings

    X, y = _data(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # max_iter=0 warns that it did not converge
        getattr(fs, name)(**params).fit(X, y)

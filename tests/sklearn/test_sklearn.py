"""scikit-learn estimators: estimator checks, parity with scikit-learn >= 1.9, composition.

Parity is checked against scikit-learn 1.9, whose LDA/QDA use maximum-likelihood (÷ n)
covariances like fastgen's default (``unbiased=False``).
"""

import pickle
import subprocess
import sys
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from reference import require

sklearn = require("sklearn", minversion="1.9")  # parity with 1.9's ML covariances

from sklearn import discriminant_analysis as sk_da  # noqa: E402
from sklearn import naive_bayes as sk_nb  # noqa: E402
from sklearn.base import clone  # noqa: E402
from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.model_selection import GridSearchCV, cross_val_score  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

import fastgen  # noqa: E402
from fastgen import sklearn as fs  # noqa: E402

ESTIMATORS = [
    fs.LinearDiscriminantAnalysis(),
    fs.QuadraticDiscriminantAnalysis(),
    fs.GaussianNB(),
    fs.BernoulliNB(),
    fs.MultinomialNB(),
    fs.ComplementNB(),
    fs.CategoricalNB(),
    fs.LogisticRegression(),
    fs.FirthLogisticRegression(),
]

RTOL = 1e-10


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=fs.expected_failed_checks)
def test_estimator_checks(estimator, check):
    check(estimator)


def test_expected_failures_have_reasons():
    for est in ESTIMATORS:
        for name, reason in fs.expected_failed_checks(est).items():
            assert name.startswith("check_") and len(reason) > 20


# ------------------------------------------------------------------------------ data


def _gaussian(n=300, d=4, K=3, seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % K
    A = rng.normal(size=(d, d))
    X = rng.normal(size=(n, d)) @ A + 2.0 * rng.normal(size=(K, d))[y]
    return X, y


def _counts(n=200, d=12, K=3, seed=1):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % K
    rates = rng.uniform(0.2, 3.0, size=(K, d))
    return rng.poisson(rates[y]).astype(np.float64), y


def _categories(n=200, d=5, K=3, seed=2):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % K
    X = np.minimum(rng.poisson(1.0 + y[:, None], size=(n, d)), 5).astype(np.float64)
    return X, y


def _close(a, b, rtol=RTOL, atol=0.0):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=atol)


# --------------------------------------------------------------------------- parity


@pytest.mark.parametrize("solver,shrinkage", [("svd", None), ("lsqr", None), ("lsqr", 0.3),
                                              ("eigen", 0.1)])
@pytest.mark.parametrize("K", [2, 3])
def test_lda_matches_sklearn(solver, shrinkage, K):
    X, y = _gaussian(K=K)
    ours = fs.LinearDiscriminantAnalysis(solver=solver, shrinkage=shrinkage,
                                         store_covariance=True).fit(X, y)
    ref = sk_da.LinearDiscriminantAnalysis(solver=solver, shrinkage=shrinkage,
                                           store_covariance=True).fit(X, y)
    for name in ("classes_", "priors_", "means_", "covariance_", "coef_", "intercept_"):
        _close(getattr(ours, name), getattr(ref, name), atol=1e-12)
    _close(ours.predict_proba(X), ref.predict_proba(X), atol=1e-14)
    _close(ours.decision_function(X), ref.decision_function(X), atol=1e-9)
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))
    if solver == "svd":
        _close(ours.xbar_, ref.xbar_)
        # transform: equal up to the sign of each column
        A, B = ours.transform(X), ref.transform(X)
        _close(np.abs(A), np.abs(B), rtol=1e-9)


def test_lda_transform_on_rank_deficient_data():
    """Six classes in a within-class rank of two (collinear and constant columns): the
    svd solver keeps scikit-learn's two directions, and lsqr's transform (which
    scikit-learn lacks) gives the same two columns instead of an error."""
    rng = np.random.default_rng(0)
    y = rng.integers(0, 6, 600)
    base = rng.normal(size=(600, 2)) + np.c_[y, y % 2]
    X = np.c_[base, base @ rng.normal(size=(2, 6)), np.full(600, 2.0)]
    ref = sk_da.LinearDiscriminantAnalysis().fit(X, y).transform(X)
    svd = fs.LinearDiscriminantAnalysis().fit(X, y).transform(X)
    lsqr = fs.LinearDiscriminantAnalysis(solver="lsqr").fit(X, y).transform(X)
    assert ref.shape == svd.shape == lsqr.shape == (600, 2)
    _close(np.abs(svd), np.abs(ref), rtol=1e-7)
    _close(np.abs(lsqr), np.abs(ref), rtol=1e-7)


def test_lda_priors_and_auto_shrinkage():
    X, y = _gaussian()
    pri = np.array([0.2, 0.3, 0.5])
    ours = fs.LinearDiscriminantAnalysis(priors=pri).fit(X, y)
    ref = sk_da.LinearDiscriminantAnalysis(priors=pri).fit(X, y)
    _close(ours.predict_proba(X), ref.predict_proba(X), atol=1e-14)
    with pytest.warns(UserWarning, match="Renormalizing"):
        fs.LinearDiscriminantAnalysis(priors=[1.0, 1.0, 2.0]).fit(X, y)
    # "auto" is scikit-learn's per-class standardised Ledoit-Wolf, not fastgen's pooled one
    ours = fs.LinearDiscriminantAnalysis(solver="lsqr", shrinkage="auto").fit(X, y)
    ref = sk_da.LinearDiscriminantAnalysis(solver="lsqr", shrinkage="auto").fit(X, y)
    _close(ours.predict_proba(X), ref.predict_proba(X), rtol=0, atol=1e-10)
    direct = fastgen.fit_gda(X, y, "pooled", shrinkage="ledoit-wolf")
    assert not np.allclose(ours.covariance_, direct.covariance, rtol=1e-6)


@pytest.mark.parametrize("reg_param", [0.0, 0.3])
@pytest.mark.parametrize("K", [2, 3])
def test_qda_matches_sklearn(reg_param, K):
    X, y = _gaussian(K=K)
    ours = fs.QuadraticDiscriminantAnalysis(reg_param=reg_param, store_covariance=True).fit(X, y)
    ref = sk_da.QuadraticDiscriminantAnalysis(reg_param=reg_param,
                                              store_covariance=True).fit(X, y)
    _close(ours.means_, ref.means_)
    _close(ours.priors_, ref.priors_)
    _close(ours.covariance_, np.asarray(ref.covariance_), atol=1e-12)
    _close(ours.predict_proba(X), ref.predict_proba(X), atol=1e-13)
    _close(ours.predict_log_proba(X), ref.predict_log_proba(X), rtol=1e-9, atol=1e-10)
    _close(ours.decision_function(X), ref.decision_function(X), rtol=1e-9, atol=1e-9)
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))


def test_gaussian_nb_matches_sklearn():
    X, y = _gaussian()
    w = np.random.default_rng(3).uniform(0.5, 2.0, size=y.shape[0])
    for kw in ({}, {"priors": [0.5, 0.25, 0.25]}, {"var_smoothing": 1e-3}):
        ours = fs.GaussianNB(**kw).fit(X, y, sample_weight=w)
        ref = sk_nb.GaussianNB(**kw).fit(X, y, sample_weight=w)
        for name in ("theta_", "var_", "class_count_", "class_prior_", "epsilon_"):
            _close(getattr(ours, name), getattr(ref, name))
        _close(ours.predict_proba(X), ref.predict_proba(X), atol=1e-14)
        _close(ours.predict_log_proba(X), ref.predict_log_proba(X), rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("name,kw", [
    ("BernoulliNB", {}),
    ("BernoulliNB", {"binarize": 1.5, "alpha": 0.5, "fit_prior": False}),
    ("MultinomialNB", {}),
    ("MultinomialNB", {"alpha": 0.1, "class_prior": [0.2, 0.3, 0.5]}),
    ("ComplementNB", {}),
    ("ComplementNB", {"norm": True, "alpha": 0.5}),
])
def test_discrete_nb_matches_sklearn(name, kw, sparse):
    X, y = _counts()
    w = np.random.default_rng(4).uniform(0.5, 2.0, size=y.shape[0])
    Xf = sp.csr_matrix(X) if sparse else X
    ours = getattr(fs, name)(**kw).fit(Xf, y, sample_weight=w)
    ref = getattr(sk_nb, name)(**kw).fit(Xf, y, sample_weight=w)
    for attr in ("class_count_", "feature_count_", "class_log_prior_", "feature_log_prob_"):
        _close(getattr(ours, attr), getattr(ref, attr))
    if name == "ComplementNB":
        _close(ours.feature_all_, ref.feature_all_)
    _close(ours.predict_proba(Xf), ref.predict_proba(Xf), atol=1e-14)
    np.testing.assert_array_equal(ours.predict(Xf), ref.predict(Xf))


@pytest.mark.parametrize("kw", [{}, {"alpha": 0.5, "min_categories": 7},
                                {"fit_prior": False}])
def test_categorical_nb_matches_sklearn(kw):
    X, y = _categories()
    ours = fs.CategoricalNB(**kw).fit(X, y)
    ref = sk_nb.CategoricalNB(**kw).fit(X, y)
    _close(ours.n_categories_, ref.n_categories_)
    _close(ours.class_log_prior_, ref.class_log_prior_)
    for a, b in zip(ours.category_count_, ref.category_count_, strict=True):
        _close(a, b)
    for a, b in zip(ours.feature_log_prob_, ref.feature_log_prob_, strict=True):
        _close(a, b)
    _close(ours.predict_proba(X), ref.predict_proba(X), atol=1e-14)


@pytest.mark.parametrize("K", [2, 3])
@pytest.mark.parametrize("sparse", [False, True])
def test_logistic_matches_sklearn(K, sparse):
    X, y = _gaussian(K=K)
    X = StandardScaler().fit_transform(X)
    Xf = sp.csr_matrix(X) if sparse else X
    ours = fs.LogisticRegressionIRLS(C=0.5, tol=1e-12).fit(Xf, y)
    ref = LogisticRegression(C=0.5, tol=1e-12, solver="newton-cholesky",
                             max_iter=200).fit(Xf, y)
    _close(ours.coef_, ref.coef_, rtol=1e-9)
    _close(ours.intercept_, ref.intercept_, rtol=1e-9, atol=1e-12)
    _close(ours.predict_proba(Xf), ref.predict_proba(Xf), rtol=1e-10, atol=1e-13)
    _close(ours.decision_function(Xf), ref.decision_function(Xf), rtol=1e-9, atol=1e-11)
    assert ours.n_iter_.shape == (1,) and ours.n_iter_[0] >= 1


def test_logistic_options():
    rng = np.random.default_rng(6)
    X = rng.normal(size=(300, 3))
    y = (X @ np.array([1.0, -0.5, 0.2]) + rng.logistic(size=300) > 0).astype(int)
    w = np.where(y == 1, 3.0, 1.0)
    a = fs.LogisticRegressionIRLS(class_weight={0: 1.0, 1: 3.0}, tol=1e-12).fit(X, y)
    b = fs.LogisticRegressionIRLS(tol=1e-12).fit(X, y, sample_weight=w)
    _close(a.coef_, b.coef_, rtol=1e-12)
    # C = inf and penalty=None both mean l2 = 0
    c = fs.LogisticRegressionIRLS(C=np.inf, tol=1e-12).fit(X, y)
    with pytest.warns(FutureWarning, match="'penalty' was deprecated"):
        d = fs.LogisticRegressionIRLS(penalty=None, tol=1e-12).fit(X, y)
    assert c.params_.l2 == d.params_.l2 == 0.0
    _close(c.coef_, d.coef_, rtol=1e-12)
    # fastgen's ConvergenceWarning surfaces as scikit-learn's
    with pytest.warns(ConvergenceWarning):
        fs.LogisticRegressionIRLS(max_iter=1, tol=1e-14).fit(X, y)


# ------------------------------------------------------------------------ partial_fit


def _chunks(n, k=3):
    return np.array_split(np.arange(n), k)


@pytest.mark.parametrize("name", ["GaussianNB", "BernoulliNB", "MultinomialNB",
                                  "ComplementNB", "CategoricalNB"])
def test_partial_fit_equals_fit(name):
    if name == "GaussianNB":
        X, y = _gaussian(n=240)
    elif name == "CategoricalNB":
        X, y = _categories(n=240)
    else:
        X, y = _counts(n=240)
    # order rows so that the first batch lacks class 2 and (categorical) high categories
    order = np.lexsort((X.max(axis=1), y == 2))
    X, y = X[order], y[order]
    w = np.random.default_rng(5).uniform(0.5, 2.0, size=y.shape[0])
    full = getattr(fs, name)().fit(X, y, sample_weight=w)
    inc = getattr(fs, name)()
    for i, idx in enumerate(_chunks(y.shape[0])):
        inc.partial_fit(X[idx], y[idx], classes=np.unique(y) if i == 0 else None,
                        sample_weight=w[idx])
    np.testing.assert_array_equal(inc.classes_, full.classes_)
    _close(inc.predict_proba(X), full.predict_proba(X), rtol=1e-10, atol=1e-14)
    if name == "GaussianNB":
        _close(inc.var_, full.var_, rtol=1e-10)
        _close(inc.epsilon_, full.epsilon_, rtol=1e-10)
    elif name == "CategoricalNB":
        _close(inc.n_categories_, full.n_categories_)
    else:
        _close(inc.feature_count_, full.feature_count_)


def test_partial_fit_errors_and_unseen_class():
    X, y = _counts()
    with pytest.raises(ValueError, match="classes must be passed"):
        fs.MultinomialNB().partial_fit(X, y)
    clf = fs.MultinomialNB().partial_fit(X, y, classes=[0, 1, 2, 3])
    assert clf.class_count_[3] == 0 and clf.predict_proba(X).shape == (X.shape[0], 4)
    ref = sk_nb.MultinomialNB().partial_fit(X, y, classes=[0, 1, 2, 3])
    _close(clf.feature_log_prob_, ref.feature_log_prob_)
    with pytest.raises(ValueError, match="do not exist in the initial classes"):
        clf.partial_fit(X, np.full(y.shape[0], 9))
    g = fs.GaussianNB().partial_fit(*_gaussian(), classes=[0, 1, 2, 3])
    assert g.class_prior_[3] == 0


# ----------------------------------------------------------------------- composition


def test_pipeline_gridsearch_cross_val_clone_pickle():
    X, y = _gaussian()
    pipe = make_pipeline(StandardScaler(), fs.QuadraticDiscriminantAnalysis())
    grid = GridSearchCV(pipe, {"quadraticdiscriminantanalysis__reg_param": [0.0, 0.5]},
                        cv=3).fit(X, y)
    assert grid.best_params_["quadraticdiscriminantanalysis__reg_param"] in (0.0, 0.5)
    scores = cross_val_score(fs.LinearDiscriminantAnalysis(), X, y, cv=3)
    assert scores.shape == (3,) and np.all(scores > 0.5)
    for est in ESTIMATORS:
        c = clone(est)
        assert c.get_params() == est.get_params() and not hasattr(c, "params_")
    for est in (fs.GaussianNB(), fs.LinearDiscriminantAnalysis(n_components=1),
                fs.LogisticRegressionIRLS()):
        fitted = est.fit(X, y)
        back = pickle.loads(pickle.dumps(fitted))
        np.testing.assert_array_equal(back.predict_proba(X), fitted.predict_proba(X))
    # transform in a pipeline, and params_ round-trips through fastgen's npz io
    Z = make_pipeline(fs.LinearDiscriminantAnalysis(n_components=2)).fit_transform(X, y)
    assert Z.shape == (X.shape[0], 2)


def test_params_save_load(tmp_path):
    X, y = _gaussian()
    clf = fs.QuadraticDiscriminantAnalysis().fit(X, y)
    fastgen.save_params(tmp_path / "qda.npz", clf.params_)
    back = fastgen.load_params(tmp_path / "qda.npz")
    np.testing.assert_array_equal(fastgen.predict_proba(back, X), clf.predict_proba(X))


def test_string_labels_and_feature_names():
    pd = require("pandas")
    X, y = _gaussian()
    labels = np.array(["ant", "bee", "cat"])[y]
    df = pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])])
    clf = fs.GaussianNB().fit(df, labels)
    assert list(clf.feature_names_in_) == list(df.columns)
    assert set(clf.predict(df)) <= {"ant", "bee", "cat"}


def test_import_fastgen_does_not_import_sklearn():
    code = "import sys, fastgen; sys.exit(1 if 'sklearn' in sys.modules else 0)"
    subprocess.run([sys.executable, "-c", code], check=True)


# ------------------------------------------------- drop-in surface (scikit-learn 1.9)


def _real(name):
    from sklearn import datasets

    return getattr(datasets, f"load_{name}")(return_X_y=True)


@pytest.mark.parametrize("name", ["wine", "breast_cancer"])
@pytest.mark.parametrize("solver", ["lsqr", "eigen"])
def test_lda_auto_shrinkage_matches_sklearn(name, solver):
    # scikit-learn's "auto": Ledoit-Wolf per class on standardised features, rescaled,
    # summed weighted by the priors; fastgen's pooled Ledoit-Wolf is another estimator
    X, y = _real(name)
    ours = fs.LinearDiscriminantAnalysis(solver=solver, shrinkage="auto").fit(X, y)
    ref = sk_da.LinearDiscriminantAnalysis(solver=solver, shrinkage="auto").fit(X, y)
    _close(ours.covariance_, ref.covariance_, rtol=1e-10, atol=1e-12 * np.abs(
        ref.covariance_).max())
    # scikit-learn's eigen solver is the accurate reference: its lsqr solver
    # (scipy.linalg.lstsq) loses digits on breast cancer's covariance (condition number
    # 1.5e11): 4.3e-8 from a solve on the correlation scale, where fastgen and the eigen
    # solver are within 1.2e-13
    exact = sk_da.LinearDiscriminantAnalysis(solver="eigen", shrinkage="auto").fit(X, y)
    _close(ours.predict_proba(X), exact.predict_proba(X), rtol=0, atol=1e-8)
    _close(ours.predict_proba(X), ref.predict_proba(X), rtol=0, atol=1e-7)
    acc = cross_val_score(fs.LinearDiscriminantAnalysis(solver="lsqr", shrinkage="auto"),
                          X, y, cv=5).mean()
    acc_ref = cross_val_score(sk_da.LinearDiscriminantAnalysis(solver="lsqr",
                                                               shrinkage="auto"),
                              X, y, cv=5).mean()
    assert acc == acc_ref


def test_lda_auto_shrinkage_with_priors_and_estimator():
    from sklearn.covariance import OAS

    X, y = _real("wine")
    priors = np.array([0.2, 0.5, 0.3])
    for kw in ({"shrinkage": "auto"}, {"covariance_estimator": OAS()}, {}):
        ours = fs.LinearDiscriminantAnalysis(solver="lsqr", priors=priors, **kw).fit(X, y)
        ref = sk_da.LinearDiscriminantAnalysis(solver="lsqr", priors=priors, **kw).fit(X, y)
        _close(ours.predict_proba(X), ref.predict_proba(X), rtol=0, atol=1e-8)


@pytest.mark.parametrize("K", [2, 3, 4])
def test_lda_svd_and_eigen_attributes_match_sklearn(K):
    X, y = _gaussian(n=400, d=5, K=K, seed=K)
    for solver in ("svd", "eigen"):
        ours = fs.LinearDiscriminantAnalysis(solver=solver).fit(X, y)
        ref = sk_da.LinearDiscriminantAnalysis(solver=solver).fit(X, y)
        _close(ours.explained_variance_ratio_, ref.explained_variance_ratio_, rtol=1e-9)
        assert ours.scalings_.shape == ref.scalings_.shape
        # the directions with a zero between-class eigenvalue (eigen: columns from K on)
        # are any basis of their space
        c = min(K - 1, X.shape[1])
        _close(np.abs(ours.scalings_[:, :c]), np.abs(ref.scalings_[:, :c]), rtol=1e-8,
               atol=1e-10 * np.abs(ref.scalings_).max())
        _close(ours.coef_, ref.coef_, rtol=1e-8, atol=1e-10)
        _close(ours.intercept_, ref.intercept_, rtol=1e-8, atol=1e-10)
    # the eigen transform is X·scalings_ (not centred), exactly scikit-learn's
    ours = fs.LinearDiscriminantAnalysis(solver="eigen").fit(X, y)
    ref = sk_da.LinearDiscriminantAnalysis(solver="eigen").fit(X, y)
    T, R = ours.transform(X), ref.transform(X)
    signs = np.sign(np.sum(T * R, axis=0))
    _close(T * signs, R, rtol=1e-8, atol=1e-10 * np.abs(R).max())


def test_lda_covariance_estimator_and_errors():
    from sklearn.covariance import LedoitWolf, ShrunkCovariance

    X, y = _gaussian()
    a = fs.LinearDiscriminantAnalysis(solver="lsqr", shrinkage=0.3).fit(X, y)
    shrunk = ShrunkCovariance(shrinkage=0.3)
    b = fs.LinearDiscriminantAnalysis(solver="lsqr", covariance_estimator=shrunk).fit(X, y)
    _close(a.covariance_, b.covariance_, rtol=1e-12)
    ref = sk_da.LinearDiscriminantAnalysis(solver="eigen",
                                           covariance_estimator=LedoitWolf()).fit(X, y)
    ours = fs.LinearDiscriminantAnalysis(solver="eigen",
                                         covariance_estimator=LedoitWolf()).fit(X, y)
    _close(ours.predict_proba(X), ref.predict_proba(X), rtol=0, atol=1e-10)
    with pytest.raises(ValueError, match="not supported with svd"):
        fs.LinearDiscriminantAnalysis(covariance_estimator=LedoitWolf()).fit(X, y)
    with pytest.raises(ValueError, match="Only one of the two can be set"):
        fs.LinearDiscriminantAnalysis(solver="lsqr", shrinkage=0.1,
                                      covariance_estimator=LedoitWolf()).fit(X, y)
    with pytest.raises(ValueError, match="number of samples must be more"):
        fs.LinearDiscriminantAnalysis().fit([[0.5, 0.6], [0.6, 0.5]], ["a", "b"])


def test_qda_rotations_scalings_and_errors():
    X, y = _gaussian(n=300, d=3, K=3)
    for solver, kw in (("svd", {"reg_param": 0.1}), ("eigen", {"shrinkage": 0.2}),
                       ("eigen", {"shrinkage": "auto"})):
        ours = fs.QuadraticDiscriminantAnalysis(solver=solver, **kw).fit(X, y)
        ref = sk_da.QuadraticDiscriminantAnalysis(solver=solver, **kw).fit(X, y)
        for k in range(3):
            _close(ours.scalings_[k], ref.scalings_[k], rtol=1e-9)
            _close(np.abs(ours.rotations_[k]), np.abs(ref.rotations_[k]), rtol=1e-7,
                   atol=1e-9)
        _close(ours.predict_proba(X), ref.predict_proba(X), rtol=0, atol=1e-10)
    Xc = np.c_[X, np.ones(len(X))]
    with pytest.raises(np.linalg.LinAlgError, match="not full rank.*reg_param"):
        fs.QuadraticDiscriminantAnalysis().fit(Xc, y)
    with pytest.raises(np.linalg.LinAlgError, match="When using `solver='svd'`"):
        fs.QuadraticDiscriminantAnalysis(reg_param=0.3).fit(X[:9], [0] * 7 + [1] * 2)
    with pytest.raises(ValueError, match="y has only 1 sample in class b"):
        fs.QuadraticDiscriminantAnalysis().fit(X[:4], ["a", "a", "a", "b"])
    with pytest.raises(NotImplementedError):
        fs.QuadraticDiscriminantAnalysis(shrinkage=0.1).fit(X, y)


@pytest.mark.parametrize("cls", ["GaussianNB", "BernoulliNB", "MultinomialNB",
                                 "ComplementNB", "CategoricalNB"])
def test_nb_joint_log_proba_and_partial_fit_classes(cls):
    X, y = _categories()
    ours = getattr(fs, cls)().fit(X, y)
    ref = getattr(sk_nb, cls)().fit(X, y)
    _close(ours.predict_joint_log_proba(X), ref.predict_joint_log_proba(X), rtol=1e-10)
    est = getattr(fs, cls)().partial_fit(X, y, classes=[0, 1, 2])
    with pytest.raises(ValueError, match="is not the same as on last call to partial_fit"):
        est.partial_fit(X, y, classes=np.arange(4))
    est.partial_fit(X, y, classes=[2, 1, 0])  # the same set is fine


def test_nb_alpha_options_and_prior_messages():
    X, y = _counts()
    alpha = np.linspace(0.5, 2.0, X.shape[1])
    ours = fs.MultinomialNB(alpha=alpha).fit(X, y)
    ref = sk_nb.MultinomialNB(alpha=alpha).fit(X, y)
    _close(ours.feature_log_prob_, ref.feature_log_prob_, rtol=1e-12)
    _close(ours.feature_count_, ref.feature_count_, rtol=0)
    _close(ours.predict_proba(X), ref.predict_proba(X), rtol=1e-10)
    with pytest.raises(ValueError, match="should contains `n_features`"):
        fs.MultinomialNB(alpha=alpha[:3]).fit(X, y)
    with pytest.warns(UserWarning, match="alpha too small"):
        fs.BernoulliNB(alpha=0.0, force_alpha=False).fit(X, y)
    with pytest.raises(ValueError, match="Number of priors must match number of classes"):
        fs.MultinomialNB(class_prior=[0.5, 0.5]).fit(X, y)
    with pytest.raises(ValueError, match="The sum of the priors should be 1"):
        fs.GaussianNB(priors=[0.5, 0.5, 0.5]).fit(X, y)
    with pytest.raises(ValueError, match="Priors must be non-negative"):
        fs.GaussianNB(priors=[-0.5, 1.0, 0.5]).fit(X, y)
    with pytest.raises(ValueError, match="'min_categories' should have shape"):
        fs.CategoricalNB(min_categories=[[3, 2], [2, 4]]).fit(X[:, :2], y)


def test_logistic_regression_sklearn_signature():
    import inspect

    ours = inspect.signature(fs.LogisticRegression).parameters
    ref = inspect.signature(LogisticRegression).parameters
    assert list(ours) == list(ref)
    assert all(ours[k].default == ref[k].default for k in ref)
    assert fs.LogisticRegressionIRLS is fs.LogisticRegression
    X, y = _gaussian(K=2)
    with pytest.warns(FutureWarning, match="'n_jobs' has no effect"):
        fs.LogisticRegression(n_jobs=2).fit(X, y)
    with pytest.raises(ValueError, match="L2 penalty"):
        fs.LogisticRegression(l1_ratio=0.5).fit(X, y)


def test_logistic_regression_warm_start():
    X, y = _gaussian(K=3)
    X = StandardScaler().fit_transform(X)
    cold = fs.LogisticRegression(tol=1e-10).fit(X, y)
    est = fs.LogisticRegression(tol=1e-10, warm_start=True).fit(X, y)
    est.fit(X, y)
    assert est.n_iter_[0] < cold.n_iter_[0]
    _close(est.coef_, cold.coef_, rtol=1e-7, atol=1e-9)


_HAS_RANK = "rank" in {f.name for f in __import__("dataclasses").fields(fastgen.GDAParams)}


@pytest.mark.skipif(not _HAS_RANK, reason="needs fit_gda's rank-deficient pooled fit "
                                          "(GDAParams.rank)")
def test_lda_svd_on_rank_deficient_digits():
    # digits has constant pixels: the svd solver works in the range of the within-class
    # scatter, as scikit-learn's
    X, y = _real("digits")
    ours = fs.LinearDiscriminantAnalysis().fit(X, y)
    ref = sk_da.LinearDiscriminantAnalysis().fit(X, y)
    assert np.mean(ours.predict(X) == ref.predict(X)) >= 0.995
    _close(ours.explained_variance_ratio_, ref.explained_variance_ratio_, rtol=1e-6)
    assert ours.scalings_.shape == ref.scalings_.shape
    _close(ours.decision_function(X), ref.decision_function(X), rtol=1e-6, atol=1e-6)
    T, R = ours.transform(X), ref.transform(X)
    _close(np.abs(T), np.abs(R), rtol=1e-6, atol=1e-8 * np.abs(R).max())


# --------------------------------------------------------------------------------------
# issue 42: the LDA adapter's tol reaches every method; QDA keeps scikit-learn's rule
# --------------------------------------------------------------------------------------
def _near_collinear(K, seed=0):
    rng = np.random.default_rng(seed)
    n = 300
    X = rng.normal(size=(n, 4))
    y = rng.integers(0, K, n)
    X[:, :2] += y[:, None]
    X[:, 3] = X[:, 2] + 3e-3 * rng.normal(size=n)  # correlation eigenvalue ≈ 5e-6
    return X, y


@pytest.mark.parametrize("K", [2, 3])
@pytest.mark.parametrize("tol", [1e-4, 1e-2, 0.5])
@pytest.mark.parametrize("solver", ["svd", "lsqr", "eigen"])
def test_lda_tol_reaches_every_method(solver, tol, K):
    # tol=1e-2 drops the near-collinear direction (s ≈ 2e-3 < tol); tol=0.5 also drops
    # a between-class direction (s_b ≤ tol·s_1); lsqr and eigen ignore tol
    X, y = _near_collinear(K)
    kw = {"solver": solver, "tol": tol}
    ours = fs.LinearDiscriminantAnalysis(**kw).fit(X, y)
    ref = sk_da.LinearDiscriminantAnalysis(**kw).fit(X, y)
    for method in ("decision_function", "predict_proba", "predict_log_proba"):
        np.testing.assert_allclose(getattr(ours, method)(X), getattr(ref, method)(X),
                                   rtol=0, atol=1e-8, err_msg=method)
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))
    if solver != "lsqr":
        np.testing.assert_allclose(np.abs(ours.transform(X)), np.abs(ref.transform(X)),
                                   rtol=0, atol=1e-6)
    if solver == "svd":  # params_ follows the same rule as scalings_
        assert ours.params_.rank == (3 if tol >= 1e-2 else 4)


def test_qda_adapter_keeps_the_absolute_tol():
    # features in large units: an eigenvalue of Σ_k far above scikit-learn's absolute
    # tol, while the correlation matrix's is below fastgen's tol²: the adapter fits
    # where scikit-learn fits, with the same posteriors
    rng = np.random.default_rng(3)
    n = 600
    X = rng.normal(size=(n, 3))
    y = np.arange(n) % 2
    X[:, 2] = X[:, 0] + 3e-5 * rng.normal(size=n)  # correlation eigenvalue ≈ 4e-10
    X *= 1e4  # covariance eigenvalue ≈ 4e-2 > tol = 1e-4
    lam_corr = min(np.linalg.eigvalsh(np.corrcoef(X[y == k].T))[0] for k in (0, 1))
    assert lam_corr < 0.1 * 1e-4**2
    ref = sk_da.QuadraticDiscriminantAnalysis().fit(X, y)
    ours = fs.QuadraticDiscriminantAnalysis().fit(X, y)
    # condition number ≈ 2e9: both solutions carry ≈ κ·ε of rounding
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), rtol=0,
                               atol=2e-5)
    with pytest.raises(fastgen.SingularCovarianceError, match="rank 2 of 3"):
        fastgen.fit_gda(X, y, "per_class")  # the functional API's rule


def test_firth_weights_equal_repeated_rows_where_the_fit_exists():
    # the declared estimator checks fit 30 features on 15 rows (Fisher information
    # singular); with more rows than coefficients, integer weights are repeated rows
    rng = np.random.RandomState(42)
    X = rng.rand(60, 4)
    y = rng.randint(0, 3, size=60)
    sw = rng.randint(0, 4, size=60)
    a = fs.FirthLogisticRegression().fit(X, y, sample_weight=sw)
    b = fs.FirthLogisticRegression().fit(X.repeat(sw, axis=0), y.repeat(sw))
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=0, atol=1e-7)
    np.testing.assert_allclose(a.predict_proba(X), b.predict_proba(X), rtol=0, atol=1e-8)
    with pytest.raises(ValueError, match=r"class 0 has zero total weight"):
        fs.FirthLogisticRegression().fit(X, y, sample_weight=(y != 0).astype(float))


@pytest.mark.parametrize("solver", ["lsqr", "eigen"])
def test_lda_lsqr_and_eigen_keep_directions_below_the_svd_tol(solver):
    # lsqr and eigen ignore tol and solve with the whole covariance, as scikit-learn:
    # a direction with correlation eigenvalue ≈ 5e-11 (below tol² of the svd solver)
    # stays; the posteriors then carry ≈ κ·ε of rounding (κ ≈ 2e10)
    rng = np.random.default_rng(0)
    n = 300
    X = rng.normal(size=(n, 4))
    y = rng.integers(0, 3, n)
    X[:, :2] += y[:, None]
    X[:, 3] = X[:, 2] + 1e-5 * rng.normal(size=n)
    ours = fs.LinearDiscriminantAnalysis(solver=solver).fit(X, y)
    ref = sk_da.LinearDiscriminantAnalysis(solver=solver).fit(X, y)
    assert ours.params_.rank == 4
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), rtol=0,
                               atol=1e-5)
    assert fs.LinearDiscriminantAnalysis().fit(X, y).params_.rank == 3  # svd: tol


def test_lda_scores_from_coef_take_frames_without_warnings():
    pd = require("pandas")
    X, y = _near_collinear(3)
    df = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    ours = fs.LinearDiscriminantAnalysis(tol=0.5).fit(df, y)  # drops a between-class dir.
    ref = sk_da.LinearDiscriminantAnalysis(tol=0.5).fit(df, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for method in ("predict_proba", "predict_log_proba", "predict"):
            got, want = getattr(ours, method)(df), getattr(ref, method)(df)
            if method == "predict":
                np.testing.assert_array_equal(got, want)
            else:
                np.testing.assert_allclose(got, want, rtol=0, atol=1e-8)

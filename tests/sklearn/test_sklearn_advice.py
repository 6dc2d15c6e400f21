"""Every message raised or warned through a fastgen.sklearn estimator gives its advice
in that estimator's own parameters (QDA's ``reg_param``, LDA's ``shrinkage``, another
estimator), never in the functional API's (``reg``, ``covariance=``, ``em_tol``,
``unlabeled=``), and the advice works."""

import re
import warnings

import numpy as np
import pytest

import fastgen
from fastgen.sklearn import (
    BernoulliNB,
    GaussianNB,
    LinearDiscriminantAnalysis,
    MultinomialNB,
    QuadraticDiscriminantAnalysis,
)
from fastgen.sklearn.advice import reworded

#: names of the functional API that no estimator has
_FOREIGN = [r"covariance=", r"\breg\b(?!_param)", r"\breg[=>]", r"em_tol", r"unlabeled=",
            r"\bfit_gda\b", r"unbiased="]


def _assert_own_terms(msg):
    for pattern in _FOREIGN:
        assert not re.search(pattern, msg), (pattern, msg)


def _outcome(fit):
    """(error message or None, warning messages) of ``fit()``."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            fit()
            err = None
        except ValueError as exc:
            err = str(exc)
    return err, [str(w.message) for w in caught]


# ------------------------------------------------------------------------ data


def _collapse(m=100_000):
    """Four labelled rows per class and m unlabelled copies of one point near class 0:
    its covariance collapses onto the point."""
    rng = np.random.default_rng(2)
    X = np.r_[rng.normal(0, 1, (4, 2)), rng.normal(6, 1, (4, 2))]
    y = np.r_[np.zeros(4), np.ones(4)]
    U = np.r_[np.tile([[0.3, -0.2]], (m, 1)), rng.normal(6, 1, (20, 2))]
    return np.r_[X, U], np.r_[y, -np.ones(len(U))]


def _holes(seed=0, n=300, frac=0.3, labelled=30):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    X = rng.normal(size=(n, 3)) + y[:, None]
    X[:, 2] += 0.5 * X[:, 0]
    X[rng.random(X.shape) < frac] = np.nan
    semi = y.copy()
    semi[labelled:] = -1
    return X, y, semi


def _few_rows(seed):
    """Six rows per class in five dimensions, 40 % missing: EM cannot estimate a
    per-class covariance (nor, at seed 8 with eight rows, the pooled one)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(12, 5))
    X[rng.random(X.shape) < 0.4] = np.nan
    return X, np.arange(12) % 2


def _collinear(seed=0, n=100):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    X[:, 2] = X[:, 0] + X[:, 1]
    return X, np.arange(n) % 2


# ----------------------------------------------------------------------- QDA


def test_qda_collapse_advice_is_reg_param_or_lda_and_both_work():
    X, y = _collapse()
    err, warned = _outcome(lambda: QuadraticDiscriminantAnalysis(unlabeled_label=-1).fit(X, y))
    assert err is None and len(warned) == 1
    _assert_own_terms(warned[0])
    assert "collapsed" in warned[0]
    assert "reg_param>0" in warned[0] and "LinearDiscriminantAnalysis" in warned[0]
    # the advice works: reg_param, or the shared covariance
    for est in (QuadraticDiscriminantAnalysis(unlabeled_label=-1, reg_param=0.1),
                LinearDiscriminantAnalysis(unlabeled_label=-1)):
        err, warned = _outcome(lambda est=est: est.fit(X, y))
        assert err is None and warned == []
        assert est.params_.converged


@pytest.mark.parametrize("seed", [0, 8])
@pytest.mark.parametrize("reg_param", [0.0, 0.1])
def test_qda_em_failure_advises_other_estimators(seed, reg_param):
    X, y = _few_rows(seed)
    before = X.copy()
    err, _ = _outcome(lambda: QuadraticDiscriminantAnalysis(
        nan_policy="marginalize", reg_param=reg_param).fit(X, y))
    assert err is not None and err.startswith("EM with missing features")
    _assert_own_terms(err)
    assert "LinearDiscriminantAnalysis" in err and "GaussianNB" in err
    np.testing.assert_array_equal(X, before)
    for est in (LinearDiscriminantAnalysis(nan_policy="marginalize"),
                GaussianNB(nan_policy="marginalize")):
        err, _ = _outcome(lambda est=est: est.fit(X, y))
        assert err is None


def test_qda_with_unlabelled_rows_and_holes_speaks_its_terms():
    X, _, semi = _holes()
    for est in (QuadraticDiscriminantAnalysis(nan_policy="marginalize", em_max_iter=1),
                QuadraticDiscriminantAnalysis(nan_policy="marginalize", em_max_iter=1,
                                              unlabeled_label=-1)):
        err, warned = _outcome(lambda est=est: est.fit(X, semi if est.unlabeled_label
                                                        is not None else semi.clip(0)))
        assert err is None and warned
        for w in warned:
            _assert_own_terms(w)
            assert "raise em_max_iter" in w
        # the advice works: more iterations, no warning
        est.set_params(em_max_iter=500)
        err, warned = _outcome(lambda est=est: est.fit(X, semi if est.unlabeled_label
                                                        is not None else semi.clip(0)))
        assert err is None and warned == []


# ----------------------------------------------------------------------- LDA


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_lda_rank_deficient_scores_advise_shrinkage_which_works(seed):
    X, y = _collinear(seed)
    lda = LinearDiscriminantAnalysis(nan_policy="marginalize").fit(X, y)
    Q = X[:6].copy()
    Q[0, 1] = np.nan
    for score in (lda.predict, lda.predict_proba, lda.predict_log_proba,
                  lda.decision_function):
        with pytest.raises(ValueError) as info:
            score(Q)
        msg = str(info.value)
        _assert_own_terms(msg)
        assert "this pooled model cannot score any of them" in msg
        assert "float shrinkage" in msg
    shrunk = LinearDiscriminantAnalysis(nan_policy="marginalize", shrinkage=0.1).fit(X, y)
    np.testing.assert_allclose(shrunk.predict_proba(Q).sum(axis=1), 1.0, rtol=1e-12)


def test_lda_zero_covariance_advises_no_reg():
    X = np.repeat(np.array([[0.0, 1.0], [2.0, 3.0]]), 5, axis=0)
    y = np.repeat([0, 1], 5)
    err, _ = _outcome(lambda: LinearDiscriminantAnalysis().fit(X, y))
    assert err is not None and "covariance is zero" in err
    _assert_own_terms(err)


@pytest.mark.parametrize("seed", [8, 11, 16])
def test_lda_em_failure_advises_gaussian_nb_which_works(seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(8, 5))
    X[rng.random(X.shape) < 0.4] = np.nan
    y = np.arange(8) % 2
    err, _ = _outcome(lambda: LinearDiscriminantAnalysis(nan_policy="marginalize").fit(X, y))
    assert err is not None and "pooled covariance" in err
    _assert_own_terms(err)
    assert "GaussianNB" in err
    err, _ = _outcome(lambda: GaussianNB(nan_policy="marginalize").fit(X, y))
    assert err is None


def test_lda_singular_start_with_unlabelled_rows_speaks_its_terms():
    X, y = _collinear(4, n=200)
    X = X.copy()
    X[np.random.default_rng(4).random(X.shape) < 0.1] = np.nan
    semi = y.copy()
    semi[100:] = -1
    err, _ = _outcome(lambda: LinearDiscriminantAnalysis(
        nan_policy="marginalize", unlabeled_label=-1).fit(X, semi))
    assert err is not None
    _assert_own_terms(err)


def test_lda_em_iterations_bound_the_missing_feature_em_too():
    X, y, _ = _holes(seed=3)
    err, warned = _outcome(lambda: LinearDiscriminantAnalysis(
        nan_policy="marginalize", em_max_iter=1).fit(X, y))
    assert err is None and len(warned) == 1 and "em_max_iter=1 " in warned[0]
    _assert_own_terms(warned[0])
    lda = LinearDiscriminantAnalysis(nan_policy="marginalize", em_max_iter=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lda.fit(X, y)
    assert lda.params_.n_iter == 1
    # and the estimator's EM is the model layer's with the same bound
    ref = fastgen.fit_gda(X, y, "pooled", nan_policy="marginalize", em_max_iter=500)
    lda = LinearDiscriminantAnalysis(nan_policy="marginalize", em_max_iter=500).fit(X, y)
    np.testing.assert_array_equal(lda.params_.covariance, ref.covariance)


# ------------------------------------------------------------------ naive Bayes


def test_gaussian_nb_collapse_advice_is_its_own_and_works():
    X, y = _collapse()
    err, warned = _outcome(lambda: GaussianNB(unlabeled_label=-1).fit(X, y))
    assert err is None and len(warned) == 1
    _assert_own_terms(warned[0])
    assert "unlabeled_weight" in warned[0] and "var_smoothing" in warned[0]
    for est in (GaussianNB(unlabeled_label=-1, unlabeled_weight=0.01),
                GaussianNB(unlabeled_label=-1, var_smoothing=1.0)):
        err, warned = _outcome(lambda est=est: est.fit(X, y))
        assert err is None and warned == []


def test_functional_collapse_advice_names_each_fits_parameters():
    """The functional fits' own advice: fit_gda has reg and covariance, fit_gaussian_nb
    neither (it used to be told to pass them)."""
    X, y = _collapse()
    Xl, yl, U = X[:8], y[:8], X[8:]
    _, gda = _outcome(lambda: fastgen.fit_gda(Xl, yl, "per_class", unlabeled=U))
    assert "pass reg>0" in gda[0] and "covariance='pooled'" in gda[0]
    _, gnb = _outcome(lambda: fastgen.fit_gaussian_nb(Xl, yl, unlabeled=U))
    assert "reg" not in gnb[0].replace("unlabeled", "") and "covariance=" not in gnb[0]
    for kw in ({"unlabeled_weight": 0.01}, {"var_smoothing": 1.0}):
        err, warned = _outcome(lambda kw=kw: fastgen.fit_gaussian_nb(Xl, yl, unlabeled=U,
                                                                     **kw))
        assert err is None and warned == []


@pytest.mark.parametrize("est", [GaussianNB, BernoulliNB, MultinomialNB])
def test_nb_em_iteration_warnings_name_em_max_iter_only(est):
    X, y, semi = _holes(seed=5, frac=0.0)
    X = np.abs(X)
    err, warned = _outcome(lambda: est(unlabeled_label=-1, em_max_iter=1).fit(X, semi))
    assert err is None and warned
    for w in warned:
        _assert_own_terms(w)
        assert "raise em_max_iter" in w


def test_multinomial_nan_in_unlabelled_rows_names_them_as_rows_of_x():
    X = np.r_[np.ones((4, 2)), [[np.nan, 1.0]]]
    err, _ = _outcome(lambda: MultinomialNB(unlabeled_label=-1, nan_policy="marginalize")
                      .fit(X, [0, 1, 0, 1, -1]))
    assert err is not None and "multinomial naive Bayes is not fitted" in err
    _assert_own_terms(err)


# ------------------------------------------------------------- the rewording


def test_reworded_translates_each_estimators_terms():
    qda, lda, gnb = (QuadraticDiscriminantAnalysis(), LinearDiscriminantAnalysis(),
                     GaussianNB(unlabeled_label=-1))
    msg = ("pass reg>0 (Σ ← (1−reg)Σ + reg·I): reg=1e-03 makes the fit succeed, or pass "
           "a float shrinkage, use covariance='pooled', or drop constant features")
    out = reworded(qda, msg)
    assert out == ("pass reg_param>0 (Σ ← (1−reg_param)Σ + reg_param·I): reg_param=1e-03 "
                   "makes the fit succeed, use LinearDiscriminantAnalysis (one covariance "
                   "shared by the classes), or drop constant features")
    assert reworded(lda, "refit with reg>0 (or drop the constant or collinear features) "
                         "to score") == ("refit with a float shrinkage in (0, 1] (or drop "
                                         "the constant or collinear features) to score")
    assert reworded(lda, "use covariance='pooled_diagonal' or 'diagonal', or drop") == (
        "use GaussianNB (variances per class and feature), or drop")
    for est in (qda, lda, gnb):
        assert reworded(est, "raise em_max_iter or em_tol") == "raise em_max_iter"
        assert reworded(est, "nothing to translate here") == "nothing to translate here"
    # an unlabelled row is named as the row of X the estimator was given
    out = reworded(gnb, "unlabeled row 2 has zero probability", np.array([4, 7, 9]))
    assert out == "row 9 of X (an unlabeled row, y == -1) has zero probability"


def test_messages_keep_their_exception_type():
    X, _ = _few_rows(0)
    y = np.arange(12) % 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(fastgen.SingularCovarianceError):
            QuadraticDiscriminantAnalysis(nan_policy="marginalize").fit(X, y)


# ------------------------------------------------------------------ logistic


def _separated(classes):
    X = np.arange(12.0)[:, None]
    y = np.repeat(np.arange(classes), 12 // classes)
    if classes > 2:
        X = np.c_[X, np.random.default_rng(0).normal(size=12)]
    return X, y


@pytest.mark.parametrize("classes", [2, 3])
def test_logistic_separation_advice_names_its_estimators(classes):
    from fastgen.sklearn import FirthLogisticRegression, LogisticRegression

    X, y = _separated(classes)
    lr = LogisticRegression(C=np.inf)
    err, warned = _outcome(lambda: lr.fit(X, y))
    assert err is None and warned
    sep = [w for w in warned if "separation" in w]
    assert sep
    for w in sep:
        assert "FirthLogisticRegression" in w and "a finite C" in w
        assert "penalty='firth'" not in w and "l2 > 0" not in w
    with pytest.raises(ValueError) as info:
        lr.summary()
    assert "FirthLogisticRegression" in str(info.value)
    assert "fit_logistic(" not in str(info.value)
    # the advice works: Firth's fit is finite and has a summary; a finite C is finite
    firth = FirthLogisticRegression().fit(X, y)
    assert np.all(np.isfinite(firth.coef_))
    firth.summary()
    assert np.all(np.isfinite(LogisticRegression(C=1.0).fit(X, y).coef_))


@pytest.mark.parametrize("C", [1.0, 0.25, 1e3])
def test_logistic_summary_of_a_ridge_fit_speaks_in_c(C):
    from fastgen.sklearn import LogisticRegression

    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 2))
    y = (X[:, 0] + rng.normal(size=200) > 0).astype(int)
    lr = LogisticRegression(C=C).fit(X, y)
    with pytest.raises(ValueError) as info:
        lr.summary()
    msg = str(info.value)
    assert f"fitted with C={C:g} (l2 = 1/C)" in msg and "refit with C=np.inf" in msg
    assert "l2=" not in msg.replace("l2 = 1/C", "")
    LogisticRegression(C=np.inf).fit(X, y).summary()  # the advice works


@pytest.mark.parametrize("seed", [2, 8, 9, 16])  # seeds where EM converges (others fail)
def test_qda_reg_param_advice_after_em_works(seed):
    """A class whose EM covariance is singular to the working precision (collinear up
    to 1e-9): QDA advises a reg_param on the data's scale, and that reg_param reaches
    the converged covariance (it used to be left out of the EM fit, so the advice
    failed), giving the model layer's fit with reg."""
    rng = np.random.default_rng(seed)
    y = np.arange(100) % 2
    X = rng.normal(size=(100, 3)) + y[:, None]
    X[y == 1, 2] = X[y == 1, 0] + X[y == 1, 1] + 1e-9 * rng.normal(size=50)
    X[(y == 0) & (rng.random(100) < 0.3), 1] = np.nan
    err, _ = _outcome(lambda: QuadraticDiscriminantAnalysis(nan_policy="marginalize")
                      .fit(X, y))
    assert err is not None
    _assert_own_terms(err)
    r = float(re.search(r"reg_param=([0-9.e+-]+) makes the fit succeed", err).group(1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        qda = QuadraticDiscriminantAnalysis(nan_policy="marginalize", reg_param=r).fit(X, y)
        ref = fastgen.fit_gda(X, y, "per_class", nan_policy="marginalize", reg=r, tol=0.0)
    np.testing.assert_allclose(qda.params_.covariance, ref.covariance, rtol=1e-12,
                               atol=1e-12 * np.abs(ref.covariance).max())
    np.testing.assert_array_equal(qda.params_.means, ref.means)
    assert np.all(np.isfinite(qda.predict_proba(X)))


@pytest.mark.parametrize("K", [2, 3])
def test_separation_advice_of_logistic_regression_is_in_its_own_terms(K):
    """The separation warning of fit and the error of summary() name the estimator's
    own ways out (FirthLogisticRegression, C, summary()), not the functional API's."""
    from fastgen.sklearn import LogisticRegression

    x = np.r_[np.linspace(-3, -1, 20), np.linspace(1, 3, 20)]
    if K == 2:
        X, y = x[:, None], (x > 0).astype(int)
    else:
        X = np.c_[x, np.arange(40.0)]
        y = np.r_[np.zeros(14), np.ones(13), 2 * np.ones(13)].astype(int)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = LogisticRegression(C=np.inf).fit(X, y)
    texts = [str(w.message) for w in caught]
    with pytest.raises(ValueError) as err:
        model.summary()
    texts.append(str(err.value))
    assert any("separa" in t for t in texts[:-1])
    for t in texts:
        for word in ("logistic_inference", "fit_logistic", "penalty=", "l2=", "or l2 >",
                     "pass that", "ci='profile'"):
            assert word not in t, (word, t)
    assert "FirthLogisticRegression" in texts[-1] and "summary()" in texts[-1]

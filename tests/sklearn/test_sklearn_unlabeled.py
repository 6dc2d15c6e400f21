"""The scikit-learn estimators with unlabelled rows: ``unlabeled_label=-1`` marks them in
y, as ``sklearn.semi_supervised`` does; the fit equals the model layer's EM."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone

import fastgen
from fastgen.sklearn import (
    BernoulliNB,
    CategoricalNB,
    ComplementNB,
    GaussianNB,
    LinearDiscriminantAnalysis,
    MultinomialNB,
    QuadraticDiscriminantAnalysis,
)


def _data(seed, counts):
    rng = np.random.default_rng(seed)
    K, d, n = 3, 6, 240
    y = np.repeat(np.arange(K), n // K)
    if counts:
        theta = rng.dirichlet(np.full(d, 0.5), K)
        X = np.array([rng.multinomial(12, theta[k]) for k in y], float)
        X = np.minimum(X, 4)
    else:
        X = rng.normal(0, 1, (n, d)) + 2.0 * rng.normal(0, 1, (K, d))[y]
    labelled = np.zeros(n, bool)
    labelled[np.r_[0:8, 80:88, 160:168]] = True
    return X, y, labelled


CASES = [
    (GaussianNB, fastgen.fit_gaussian_nb, {}, False),
    (BernoulliNB, fastgen.fit_bernoulli_nb, {}, True),
    (MultinomialNB, fastgen.fit_multinomial_nb, {}, True),
    (CategoricalNB, fastgen.fit_categorical_nb, {}, True),
    (LinearDiscriminantAnalysis, lambda X, y, **k: fastgen.fit_gda(X, y, "pooled", **k), {},
     False),
    (QuadraticDiscriminantAnalysis,
     lambda X, y, **k: fastgen.fit_gda(X, y, "per_class", **k), {}, False),
]


@pytest.mark.parametrize("est,fit,options,counts", CASES, ids=lambda c: getattr(
    c, "__name__", ""))
@pytest.mark.parametrize("lam", [1.0, 0.5])
def test_minus_one_marks_unlabelled_rows(est, fit, options, counts, lam):
    X, y, labelled = _data(1, counts)
    y_semi = np.where(labelled, y, -1)
    e = est(unlabeled_label=-1, unlabeled_weight=lam, em_max_iter=1000, **options).fit(
        X, y_semi)
    want = fit(X[labelled], y[labelled], unlabeled=X[~labelled], unlabeled_weight=lam,
               em_max_iter=1000)
    assert want.converged
    assert e.params_ == want
    assert np.array_equal(e.classes_, [0, 1, 2])
    assert e.params_.n_iter >= 1
    np.testing.assert_array_equal(e.predict(X), fastgen.predict(want, X))
    # default: -1 is an ordinary class, as before
    plain = est(**options).fit(X, y_semi)
    assert np.array_equal(plain.classes_, [-1, 0, 1, 2])
    assert plain.params_.n_iter is None
    # and get_params / clone carry the new parameters
    assert clone(e).get_params()["unlabeled_label"] == -1


@pytest.mark.parametrize("est", [MultinomialNB, BernoulliNB])
def test_csr_and_string_labels(est):
    X, y, labelled = _data(2, True)
    names = np.array(["a", "b", "c"])[y]
    y_semi = np.where(labelled, names, "")
    e = est(unlabeled_label="").fit(sp.csr_matrix(X), y_semi)
    dense = est(unlabeled_label="").fit(X, y_semi)
    assert list(e.classes_) == ["a", "b", "c"]
    np.testing.assert_allclose(e.feature_log_prob_, dense.feature_log_prob_, rtol=1e-12)


def test_no_unlabelled_rows_is_the_plain_fit():
    X, y, _ = _data(3, True)
    a = MultinomialNB(unlabeled_label=-1).fit(X, y)
    b = MultinomialNB().fit(X, y)
    assert a.params_ == b.params_


@pytest.mark.parametrize("est", [GaussianNB, MultinomialNB])
def test_refusals(est):
    X, y, labelled = _data(4, True)
    y_semi = np.where(labelled, y, -1)
    with pytest.raises(ValueError, match="partial_fit cannot take unlabeled rows"):
        est(unlabeled_label=-1).partial_fit(X, y_semi, classes=[0, 1, 2])
    with pytest.raises(ValueError, match="every row of y is unlabeled"):
        est(unlabeled_label=-1).fit(X, np.full(y.shape, -1))
    w = np.ones(y.shape[0])
    w[~labelled] = 2.0
    with pytest.raises(ValueError, match="sample_weight of the unlabeled rows"):
        est(unlabeled_label=-1).fit(X, y_semi, sample_weight=w)
    e = est(unlabeled_label=-1).fit(X, y_semi)
    with pytest.raises(ValueError, match="fitted with unlabeled rows"):
        e.partial_fit(X[labelled], y[labelled])


def test_discriminant_solvers_that_refuse():
    X, y, labelled = _data(5, False)
    y_semi = np.where(labelled, y, -1)
    with pytest.raises(ValueError, match="takes unlabeled rows only"):
        LinearDiscriminantAnalysis(solver="eigen", unlabeled_label=-1).fit(X, y_semi)
    with pytest.raises(ValueError, match="takes unlabeled rows only"):
        QuadraticDiscriminantAnalysis(solver="eigen", shrinkage=0.1,
                                      unlabeled_label=-1).fit(X, y_semi)
    lsqr = LinearDiscriminantAnalysis(solver="lsqr", unlabeled_label=-1).fit(X, y_semi)
    assert lsqr.params_ == fastgen.fit_gda(X[labelled], y[labelled],
                                           unlabeled=X[~labelled], tol=0.0)


def test_models_without_em_take_no_unlabeled_label():
    assert "unlabeled_label" not in ComplementNB().get_params()
    from fastgen.sklearn import LogisticRegression

    assert "unlabeled_label" not in LogisticRegression().get_params()

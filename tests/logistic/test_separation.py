"""Separation and collinearity in unpenalised logistic regression.

``detect_separation`` is checked against data whose answer is known by construction
(two clouds, a feature that separates with ties), against statsmodels' perfect-
prediction check, and on real data that are not separated (spector, breast-cancer
subsets).  ``fit_logistic`` must warn (PerfectSeparationWarning, CollinearityWarning)
where the estimate does not exist or is not unique, say nothing otherwise, and report
its warnings at the caller's line.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from reference import require

import fastgen
import fastgen.logistic.api as api
from fastgen.logistic import collinear_columns, detect_separation


def _clouds(n=100, seed=0):
    """The issue's example: two Gaussian clouds at −3 and +3 with sd 0.3."""
    rng = np.random.default_rng(seed)
    X = np.r_[rng.normal(-3, 0.3, (n, 2)), rng.normal(3, 0.3, (n, 2))]
    y = np.r_[np.zeros(n), np.ones(n)]
    return X, y


def _quasi(seed=1):
    """x0 < 0 → class 0, x0 > 0 → class 1, x0 = 0 → either: quasi-complete in x0 only."""
    rng = np.random.default_rng(seed)
    x0 = np.r_[-np.abs(rng.normal(size=40)) - 0.1, np.zeros(40), np.abs(rng.normal(size=40))
               + 0.1]
    X = np.c_[x0, rng.normal(size=120)]
    y = np.r_[np.zeros(40), rng.integers(0, 2, 40), np.ones(40)]
    return X, y


def _spector():
    import statsmodels.api as sm

    d = sm.datasets.spector.load_pandas().data
    return d[["GPA", "TUCE", "PSI"]].to_numpy(), d["GRADE"].to_numpy()


def _cancer(cols):
    from sklearn.datasets import load_breast_cancer

    bc = load_breast_cancer()
    return bc.data[:, cols], bc.target


def _onehot(seed=2, n=300):
    rng = np.random.default_rng(seed)
    g = rng.integers(0, 3, n)
    X = np.eye(3)[g]
    y = (rng.random(n) < 0.3 + 0.2 * g).astype(int)
    return X, y


def _caught(fn):
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        out = fn()
    return out, rec


# --------------------------------------------------------------------------- detect_separation


def test_detect_complete_separation_of_the_clouds():
    X, y = _clouds()
    r = detect_separation(X, y, feature_names=["a", "b"])
    assert r.separated and r.complete and r.kind == "complete"
    # the separating direction: both features push towards class 1
    assert r.coef_direction.tolist() == [[1, 1]]
    assert {"+a", "+b"} <= set(r.infinite_coefficients())
    # certificate: the reported direction separates the data
    b = r.coef_direction[0].astype(float)
    m = (2 * y - 1) * (X @ b + r.intercept_direction[0])
    assert np.all(m > 0)


def test_detect_quasi_complete_separation_names_the_one_feature():
    X, y = _quasi()
    r = detect_separation(X, y)
    assert r.separated and not r.complete and r.kind == "quasi-complete"
    assert r.coef_direction.tolist() == [[1, 0]]
    assert r.intercept_direction.tolist() == [0]
    assert r.infinite_coefficients() == ["+x1"]


@pytest.mark.parametrize("make", [_spector, lambda: _cancer([0, 1]),
                                  lambda: _cancer(list(range(5))),
                                  lambda: _cancer(list(range(10)))],
                         ids=["spector", "cancer2", "cancer5", "cancer10"])
def test_real_data_that_overlap_are_not_separated(make):
    X, y = make()
    r = detect_separation(X, y)
    assert not r.separated and r.kind == "none" and r.optimum == 0.0
    assert not r.coef_direction.any() and r.infinite_coefficients() == []


def test_agrees_with_statsmodels_perfect_prediction_check():
    """statsmodels flags complete separation (perfect prediction) in Logit.fit."""
    import statsmodels.api as sm

    def sm_flags(X, y):
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            try:
                sm.Logit(y, sm.add_constant(X)).fit(disp=0, maxiter=100)
            except Exception as exc:  # PerfectSeparationError in older versions
                return "separation" in type(exc).__name__.lower() or "separation" in str(exc)
        return any("separation" in str(w.message).lower() or "separation" in
                   w.category.__name__.lower() for w in rec)

    for X, y in [_clouds(), _spector(), _cancer(list(range(5)))]:
        r = detect_separation(X, y)
        assert r.complete == sm_flags(X, y)


def test_breast_cancer_all_features_is_completely_separated():
    X, y = _cancer(list(range(30)))
    r = detect_separation(X, y)
    assert r.complete
    # a certificate from the reported signs is not guaranteed; check with the LP's own
    # claim instead: scikit-learn with a huge C classifies the training data perfectly
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    Z = StandardScaler().fit_transform(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = LogisticRegression(C=1e8, max_iter=20000).fit(Z, y)
    assert clf.score(Z, y) == 1.0


def test_dense_and_csr_agree_and_weights_drop_rows():
    X, y = _quasi()
    rd = detect_separation(X, y)
    rs = detect_separation(sp.csr_matrix(X), y)
    assert rs.kind == rd.kind
    np.testing.assert_array_equal(rs.coef_direction, rd.coef_direction)
    # spector overlaps; with weight 0 on every row of one class but a few it does not
    Xs, ys = _spector()
    assert not detect_separation(Xs, ys).separated
    w = np.ones_like(ys, dtype=float)
    w[(ys == 1) & (Xs[:, 0] < 3.5)] = 0.0  # keep only the best GPAs of class 1
    keep = w > 0
    assert detect_separation(Xs, ys, sample_weight=w).separated == \
        detect_separation(Xs[keep], ys[keep]).separated


def test_multinomial_separation():
    rng = np.random.default_rng(3)
    y = rng.integers(0, 3, 300)
    far = rng.normal(size=(300, 3)) + 12 * np.eye(3)[y]
    near = rng.normal(size=(300, 3)) + 0.5 * np.eye(3)[y]
    r = detect_separation(far, y)
    assert r.complete and r.coef_direction.shape == (3, 3)
    assert not r.coef_direction[0].any()  # the reference class
    assert not detect_separation(near, y).separated
    # one class apart from the two others that overlap: quasi-complete for the model
    from sklearn.datasets import load_iris

    iris = load_iris()
    ri = detect_separation(iris.data, iris.target)
    assert ri.separated and not ri.complete


def test_detect_separation_rejects_bad_input():
    X, y = _clouds()
    with pytest.raises(ValueError, match="feature_names"):
        detect_separation(X, y, feature_names=["a"])
    with pytest.raises(ValueError, match="fit_intercept"):
        detect_separation(X, y, fit_intercept="yes")
    with pytest.raises(ValueError, match="class"):
        detect_separation(X, np.zeros_like(y))
    Xc = X.copy()
    detect_separation(X, y)
    np.testing.assert_array_equal(X, Xc)


# --------------------------------------------------------------------------- fit_logistic


def test_issue_example_warns_perfect_separation_and_is_not_converged():
    X, y = _clouds()
    p, rec = _caught(lambda: fastgen.fit_logistic(X, y))
    assert not p.converged
    seps = [w for w in rec if issubclass(w.category, fastgen.PerfectSeparationWarning)]
    assert len(seps) == 1 and "complete separation" in str(seps[0].message)
    assert issubclass(fastgen.PerfectSeparationWarning, fastgen.ConvergenceWarning)
    assert np.all(np.isfinite(p.coef))
    np.testing.assert_array_equal(fastgen.predict(p, X), y)


def test_quasi_complete_fit_warns_and_names_the_feature():
    X, y = _quasi()
    p, rec = _caught(lambda: fastgen.fit_logistic(X, y))
    msgs = [str(w.message) for w in rec
            if issubclass(w.category, fastgen.PerfectSeparationWarning)]
    assert not p.converged and len(msgs) == 1
    assert "quasi-complete" in msgs[0] and "+x1" in msgs[0]


def test_rare_indicator_at_large_n_is_caught():
    """Quasi-complete separation by a feature that is 1 on three rows (all class 1):
    the fit's gradient test is met after a few steps with |η| < 10."""
    rng = np.random.default_rng(4)
    n = 20000
    X = rng.normal(size=(n, 2))
    ind = np.zeros(n)
    ind[:3] = 1.0
    y = (X[:, 0] + rng.logistic(size=n) > 0).astype(int)
    y[:3] = 1
    p, rec = _caught(lambda: fastgen.fit_logistic(np.c_[X, ind], y))
    msgs = [str(w.message) for w in rec
            if issubclass(w.category, fastgen.PerfectSeparationWarning)]
    assert not p.converged and len(msgs) == 1 and "+x3" in msgs[0]


def test_penalised_fits_are_exempt():
    X, y = _clouds()
    p, rec = _caught(lambda: fastgen.fit_logistic(X, y, l2=1.0))
    assert p.converged and rec == []


@pytest.mark.parametrize("make", [_spector, lambda: _cancer(list(range(5)))],
                         ids=["spector", "cancer5"])
def test_ordinary_fits_never_run_the_exact_test(make, monkeypatch):
    def boom(*a, **k):
        raise AssertionError("the separation LP ran on an ordinary fit")

    monkeypatch.setattr(api, "separation_of", boom)
    X, y = make()
    p, rec = _caught(lambda: fastgen.fit_logistic(X, y))
    assert p.converged and rec == []


def test_strong_effects_fit_without_the_exact_test(monkeypatch):
    monkeypatch.setattr(api, "separation_of", lambda *a, **k: pytest.fail("LP ran"))
    rng = np.random.default_rng(5)
    X = rng.normal(size=(3000, 4))
    y = (X @ np.array([6.0, 2.0, 0.0, 0.0]) + rng.logistic(size=3000) > 0).astype(int)
    p, rec = _caught(lambda: fastgen.fit_logistic(X, y))
    assert p.converged and rec == []
    y3 = np.argmax(X[:, :3] * 3 + rng.gumbel(size=(3000, 3)), axis=1)
    p3, rec3 = _caught(lambda: fastgen.fit_logistic(X, y3))
    assert p3.converged and rec3 == []


def test_irls_step_does_not_look_for_separation():
    X, y = _clouds()
    p = fastgen.fit_logistic(X, y, l2=1.0)
    q, rec = _caught(lambda: fastgen.irls_step(p, X, y))
    assert rec == []


# --------------------------------------------------------------------------- collinearity


def _reconstructs(X, col, fit_intercept=True):
    Xt = np.c_[X, np.ones(X.shape[0])] if fit_intercept else X
    for j, comb in zip(col.dependent, col.combinations):
        approx = sum(a * Xt[:, i] for i, a in comb.items()) if comb else 0.0
        np.testing.assert_allclose(Xt[:, j], approx, atol=1e-8)


def test_collinear_columns_of_a_full_one_hot_block():
    X, y = _onehot()
    c = collinear_columns(X, feature_names=["red", "green", "blue"])
    assert c.rank == np.linalg.matrix_rank(np.c_[X, np.ones(len(X))]) == 3
    assert c.dependent == (2,) and not c.full_rank
    _reconstructs(X, c)
    assert "'blue' = 1·'intercept' - 1·'red' - 1·'green'" == c.describe()
    # without the intercept the block has full rank
    assert collinear_columns(X, fit_intercept=False).full_rank
    # CSR gives the same answer
    assert collinear_columns(sp.csr_matrix(X)).dependent == (2,)


def test_collinear_columns_constant_zero_and_sums():
    rng = np.random.default_rng(6)
    A = rng.normal(size=(200, 3))
    X = np.c_[A, A[:, 0] + 2 * A[:, 1], np.full(200, 5.0), np.zeros(200)]
    c = collinear_columns(X)
    assert c.dependent == (3, 4, 5)
    assert c.combinations[2] == {}
    _reconstructs(X, c)
    assert c.rank == np.linalg.matrix_rank(np.c_[X, np.ones(200)])
    assert collinear_columns(A).full_rank


def test_fit_warns_collinearity_naming_dataframe_columns():
    pd = require("pandas")
    X, y = _onehot()
    df = pd.DataFrame(X, columns=["red", "green", "blue"])
    p, rec = _caught(lambda: fastgen.fit_logistic(df, y))
    cw = [w for w in rec if issubclass(w.category, fastgen.CollinearityWarning)]
    assert len(cw) == 1 and len(rec) == 1
    assert "'blue' = 1·'intercept' - 1·'red' - 1·'green'" in str(cw[0].message)
    assert issubclass(fastgen.CollinearityWarning, fastgen.ConvergenceWarning)
    # plain arrays: named by index
    _, rec = _caught(lambda: fastgen.fit_logistic(X, y))
    assert len(rec) == 1 and "'x2'" in str(rec[0].message)
    # dropping a level, or a penalty, makes the estimate unique: no warning
    _, rec = _caught(lambda: fastgen.fit_logistic(X[:, :2], y))
    assert rec == []
    _, rec = _caught(lambda: fastgen.fit_logistic(X, y, l2=0.1))
    assert rec == []


def test_multinomial_fit_warns_collinearity():
    rng = np.random.default_rng(7)
    A = rng.normal(size=(400, 2))
    y = np.argmax(A @ rng.normal(size=(2, 3)) + rng.gumbel(size=(400, 3)), axis=1)
    X = np.c_[A, A[:, 0] - A[:, 1]]
    _, rec = _caught(lambda: fastgen.fit_logistic(X, y))
    assert len(rec) == 1 and issubclass(rec[0].category, fastgen.CollinearityWarning)
    assert "'x2'" in str(rec[0].message)


# --------------------------------------------------------------------------- stacklevel


def test_warnings_point_at_the_callers_line():
    X, y = _clouds()
    _, rec = _caught(lambda: fastgen.fit_logistic(X, y))
    _, rec2 = _caught(lambda: fastgen.fit_logistic(X, y, l2=1.0, max_iter=1))
    _, rec3 = _caught(lambda: fastgen.fit_logistic(*_onehot()))
    for r in (rec, rec2, rec3):
        assert len(r) == 1 and issubclass(r[0].category, fastgen.ConvergenceWarning)
        assert r[0].filename == __file__


def _clouds_k(K, n=40, seed=4):
    rng = np.random.default_rng(seed)
    X = np.concatenate([rng.normal(3.0 * k, 0.3, (n, 2)) for k in range(K)])
    return X, np.repeat(np.arange(K), n)


@pytest.mark.parametrize("K", [2, 3, 4])
def test_separation_advice_fits_the_number_of_classes(K):
    """Firth's penalty is advised for every number of classes (binary Firth, or the
    multinomial bias reduction); with more than two, also merging what separates.  The
    advice works: each fit it names succeeds."""
    X, y = _clouds_k(K)
    with pytest.warns(fastgen.PerfectSeparationWarning) as rec:
        m = fastgen.fit_logistic(X, y)
    fit_msg = str(rec[0].message)
    with pytest.raises(ValueError, match="separation") as exc:
        fastgen.logistic_inference(m, X, y)
    inf_msg = str(exc.value)
    assert "penalty='firth'" in fit_msg and "l2 > 0" in fit_msg
    assert "fit_logistic(X, y, penalty='firth')" in inf_msg
    assert "two classes only" not in fit_msg + inf_msg
    f = fastgen.fit_logistic(X, y, penalty="firth")
    assert f.converged and np.all(np.isfinite(fastgen.logistic_inference(f, X, y).bse))
    if K > 2:
        for msg in (fit_msg, inf_msg):
            assert "merge the classes" in msg
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert fastgen.fit_logistic(X, y, l2=1.0).converged

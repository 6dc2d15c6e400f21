"""Missing features: errors name the user's row, infinities are refused under either
policy, and a class that never observes a feature is refused by every naive Bayes fit
that estimates per class and feature (as the guide says)."""

import numpy as np
import pytest
import scipy.sparse as sp

import fastgen


def _counts(seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, 100)
    return rng.poisson(2, (100, 3)).astype(float), y


@pytest.mark.parametrize("csr", [False, True])
@pytest.mark.parametrize("case", ["multinomial", "categorical", "unseen", "bernoulli"])
def test_scoring_errors_name_the_users_row(case, csr):
    M, y = _counts()
    if case == "multinomial":
        p, T, bad = fastgen.fit_multinomial_nb(M, y), M[:6].copy(), -1.0
    elif case in ("categorical", "unseen"):
        C = np.minimum(M, 3)
        p, T, bad = fastgen.fit_categorical_nb(C, y), C[:6].copy(), (2.5 if case ==
                                                                    "categorical" else 9.0)
    else:
        B = (M > 1).astype(float)
        p, T, bad = fastgen.fit_bernoulli_nb(B, y, binarize=None), B[:6].copy(), 0.5
    T[0, 0] = T[1, 0] = np.nan
    T[4, 2] = bad
    Tin = sp.csr_matrix(T) if csr else T
    with pytest.raises(ValueError, match=r"row 4\b|X\[4,"):
        fastgen.predict(p, Tin, nan_policy="marginalize")


@pytest.mark.parametrize("with_nan", [False, True])
def test_categorical_fit_refuses_infinity_under_marginalize(with_nan):
    rng = np.random.default_rng(1)
    X = rng.integers(0, 3, (20, 2)).astype(float)
    y = rng.integers(0, 2, 20)
    X[4, 1] = np.inf
    if with_nan:
        X[2, 0] = np.nan
    X0 = X.copy()
    with pytest.raises(ValueError, match="infinity at row 4, column 1"):
        fastgen.fit_categorical_nb(X, y, nan_policy="marginalize")
    np.testing.assert_array_equal(X, X0)


@pytest.mark.parametrize("fit,kw", [(fastgen.fit_bernoulli_nb, {"binarize": None}),
                                    (fastgen.fit_categorical_nb, {})])
@pytest.mark.parametrize("csr", [False, True])
def test_unobserved_features_are_refused(fit, kw, csr):
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 60)
    X = rng.integers(0, 2, (60, 3)).astype(float)
    column = X.copy()
    column[:, 1] = np.nan
    in_class = X.copy()
    in_class[y == 1, 2] = np.nan
    for M, match in ((column, "no observed value in column 1"),
                     (in_class, "no row of class 1 observes feature 2")):
        with pytest.raises(ValueError, match=match):
            fit(sp.csr_matrix(M) if csr else M, y, nan_policy="marginalize", **kw)


def test_lda_transform_refuses_nan_under_marginalize():
    from fastgen.sklearn import LinearDiscriminantAnalysis

    rng = np.random.default_rng(2)
    X = rng.normal(size=(80, 3))
    y = rng.integers(0, 3, 80)
    X[5, 1] = np.nan
    lda = LinearDiscriminantAnalysis(nan_policy="marginalize").fit(X, y)
    assert np.all(np.isfinite(lda.predict_proba(X)))
    with pytest.raises(ValueError, match="NaN at row 5, column 1"):
        lda.transform(X)


@pytest.mark.parametrize("value", [np.array("yes"), np.array(7), np.array(0.5)])
def test_a_loaded_bool_must_be_stored_as_a_bool(tmp_path, value):
    import io
    import zipfile

    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 3))
    X[::7, 0] = np.nan
    y = rng.integers(0, 2, 60)
    p = fastgen.fit_gda(X, y, covariance="pooled", nan_policy="marginalize")
    path = tmp_path / "m.npz"
    fastgen.save_params(path, p)
    bad = tmp_path / "bad.npz"
    with zipfile.ZipFile(path) as zin, zipfile.ZipFile(bad, "w") as zout:
        for m in zin.namelist():
            data = zin.read(m)
            if m == "converged.npy":
                buf = io.BytesIO()
                np.save(buf, value)
                data = buf.getvalue()
            zout.writestr(m, data)
    with pytest.raises(fastgen.ParamsFileError, match="converged"):
        fastgen.load_params(bad)


@pytest.mark.parametrize("covariance", ["pooled", "per_class"])
def test_features_never_observed_together_are_named(covariance):
    rng = np.random.default_rng(4)
    X = rng.normal(size=(200, 3))
    y = rng.integers(0, 2, 200)
    X[:100, 0] = np.nan  # feature 0 only in rows 100..199,
    X[100:, 1] = np.nan  # feature 1 only in rows 0..99
    with pytest.warns(UserWarning,
                      match=r"features 0 and 1 \(0-based\) are never observed together"):
        fastgen.fit_gda(X, y, covariance=covariance, nan_policy="marginalize")

"""Edges of incomplete data: λ = 0 with NaN in the unlabelled rows, float32 X beside
float64 unlabelled rows with NaN, unlabelled rows with every feature missing, a
collapse along the observed coordinates, and the em_max_iter=0 message."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import fastgen

KINDS = ("pooled", "per_class", "diagonal", "pooled_diagonal")


def _gauss(seed=0, n=90, m=150, d=3):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 3
    X = rng.normal(size=(n, d)) + 2.0 * y[:, None]
    yu = np.arange(m) % 3
    U = rng.normal(size=(m, d)) + 2.0 * yu[:, None]
    U[rng.random(U.shape) < 0.2] = np.nan
    return X, y, U


def _binary(X, U):
    B = (X > X.mean(axis=0)).astype(np.float64)
    UB = (np.nan_to_num(U) > X.mean(axis=0)).astype(np.float64)
    UB[np.isnan(U)] = np.nan
    return B, UB


def _gda(kind):
    return lambda *a, **k: fastgen.fit_gda(*a, kind, **k)


FITS = {kind: _gda(kind) for kind in KINDS}
FITS["gaussian_nb"] = fastgen.fit_gaussian_nb


@pytest.mark.parametrize("name", [*FITS, "bernoulli", "bernoulli_csr"])
def test_zero_weight_unlabelled_rows_with_nan_give_the_plain_fit(name):
    X, y, U = _gauss(1)
    if name.startswith("bernoulli"):
        X, U = _binary(X, U)
        conv = sp.csr_matrix if name.endswith("csr") else np.asarray
        fit = fastgen.fit_bernoulli_nb
        X, U = conv(X), conv(U)
    else:
        fit = FITS[name]
    U_before = U.copy()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = fit(X, y, nan_policy="marginalize", unlabeled=U, unlabeled_weight=0.0)
    assert got == fit(X, y)
    after, before = (U.data, U_before.data) if sp.issparse(U) else (U, U_before)
    assert np.array_equal(after, before, equal_nan=True)
    with pytest.raises(ValueError, match="unlabeled contains NaN"):
        fit(X, y, unlabeled=U, unlabeled_weight=0.0)  # nan_policy="raise"


@pytest.mark.parametrize("name", list(FITS))
def test_float32_x_with_float64_unlabelled_rows_with_nan(name):
    X, y, U = _gauss(2)
    X32 = X.astype(np.float32)
    a = FITS[name](X32, y, nan_policy="marginalize", unlabeled=U)
    b = FITS[name](X32, y, nan_policy="marginalize", unlabeled=U.astype(np.float32))
    assert a == b and a.dtype == np.float32
    U[3, 1] = np.inf
    with pytest.raises(ValueError, match="unlabeled contains infinity at row 3, column 1"):
        FITS[name](X32, y, nan_policy="marginalize", unlabeled=U)


@pytest.mark.parametrize("name", [*FITS, "bernoulli_csr"])
def test_unlabelled_rows_with_every_feature_missing_change_nothing(name):
    X, y, U = _gauss(3)
    empty = np.full((400, U.shape[1]), np.nan)
    if name == "bernoulli_csr":
        X, U = _binary(X, U)
        X, U, empty = sp.csr_matrix(X), sp.csr_matrix(U), sp.csr_matrix(empty)
        fit, stack = fastgen.fit_bernoulli_nb, sp.vstack
    else:
        fit, stack = FITS[name], np.vstack
    a = fit(X, y, nan_policy="marginalize", unlabeled=U)
    b = fit(X, y, nan_policy="marginalize", unlabeled=stack([empty[:200], U, empty[200:]]))
    assert a.n_iter == b.n_iter and a.converged and b.converged
    np.testing.assert_allclose(fastgen.predict_proba(b, X), fastgen.predict_proba(a, X),
                               rtol=1e-12, atol=1e-15)


def test_collapse_along_the_observed_coordinates_stops_em():
    """Many unlabelled rows piled onto one value of x0, x1 never observed: class 0's
    variance of x0 collapses while the geometric mean over both features does not."""
    rng = np.random.default_rng(2)
    X = np.r_[rng.normal(0, 1, (4, 2)), rng.normal(6, 1, (4, 2))]
    y = np.r_[np.zeros(4), np.ones(4)]
    U = np.r_[np.column_stack([np.full(100000, 0.3), np.full(100000, np.nan)]),
              rng.normal(6, 1, (20, 2))]
    for fit in (FITS["per_class"], FITS["diagonal"], fastgen.fit_gaussian_nb):
        with pytest.warns(fastgen.ConvergenceWarning, match="collapsed"):
            p = fit(X, y, unlabeled=U, nan_policy="marginalize")
        assert p.converged is False


def test_em_max_iter_zero_says_no_gain():
    X, y, U = _gauss(5)
    Xm = X.copy()
    Xm[0, 0] = np.nan
    for call in (lambda: fastgen.fit_gda(X, y, unlabeled=U, em_max_iter=0,
                                         nan_policy="marginalize"),
                 lambda: fastgen.fit_gda(Xm, y, nan_policy="marginalize", em_max_iter=0),
                 lambda: fastgen.fit_gda(X, y, unlabeled=np.nan_to_num(U), em_max_iter=0)):
        with pytest.warns(fastgen.ConvergenceWarning) as info:
            call()
        assert all("nan" not in str(w.message) for w in info)


def test_singular_start_of_the_combined_em_gives_advice_that_applies():
    rng = np.random.default_rng(0)
    n, d = int(rng.integers(20, 80)), 5
    y = rng.integers(0, 3, n)
    X = rng.normal(size=(n, d)) + y[:, None]
    X[rng.random(X.shape) < 0.2] = np.nan
    assert n == 71 and int(rng.integers(6, n // 2)) == 29
    for reg in (0.0, 0.5):
        with pytest.raises(fastgen.SingularCovarianceError,
                           match="apply only after EM, so they cannot help") as info:
            fastgen.fit_gda(X[:29], y[:29], "per_class", unlabeled=X[29:],
                            nan_policy="marginalize", reg=reg)
        assert "pass reg>0" not in str(info.value)
    # the advice works: the pooled covariance fits the same rows
    fastgen.fit_gda(X[:29], y[:29], "pooled", unlabeled=X[29:], nan_policy="marginalize")


def test_dask_em_names_the_unlabelled_rows():
    da = pytest.importorskip("dask.array")
    import fastgen.dask as fd

    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 400)
    X = rng.normal(size=(400, 3))
    U = X.copy()
    U[205, 1] = np.nan
    with pytest.raises(ValueError, match="^unlabeled contains NaN at row 205, column 1"):
        fd.fit_gda(da.from_array(X, chunks=100), da.from_array(y, chunks=100), "pooled",
                   unlabeled=da.from_array(U, chunks=100))

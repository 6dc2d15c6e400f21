"""Dask fits with ``nan_policy="marginalize"``: the models whose statistics are sums of
per-block available-case statistics (diagonal GDA kinds, Gaussian and Bernoulli naive
Bayes) equal the in-memory fit on the same data; the others refuse NaN saying what to
do, whatever the policy."""

import dataclasses

import dask.array as da
import numpy as np
import pytest
import scipy.sparse as sp

import fastgen
import fastgen.dask as fdask


def _gaussian(seed, scale=1.0, offset=0.0, n=300, d=4, frac=0.2, dtype=np.float64):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    X = (rng.normal(size=(n, d)) * np.geomspace(0.1, 10, d) + y[:, None]) * scale + offset
    X[rng.random(X.shape) < frac] = np.nan
    X[5] = np.nan  # a row with no observed value
    return X.astype(dtype), y


def _counts(seed, n=300, d=5, frac=0.2):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    C = np.minimum(rng.poisson(0.7 + 0.5 * y[:, None], size=(n, d)), 3).astype(float)
    C[rng.random(C.shape) < frac] = np.nan
    return C, y


def _weights(seed, n):
    return np.random.default_rng(seed + 50).random(n) * 2 + 0.1


def _assert_close(a, b, rtol):
    """Every field of params a and b equal: float arrays to rtol of the field's largest
    entry (at least 1 for the log-scale ones), the rest exactly."""
    for f in dataclasses.fields(a):
        va, vb = getattr(a, f.name), getattr(b, f.name)
        if isinstance(va, np.ndarray) and va.dtype.kind == "f":
            assert va.dtype == vb.dtype and va.shape == vb.shape, f.name
            scale = max(float(np.max(np.abs(va), initial=0.0)),
                        1.0 if "log" in f.name else 0.0)
            assert np.max(np.abs(va - vb), initial=0.0) <= rtol * scale, f.name
        elif isinstance(va, np.ndarray):
            np.testing.assert_array_equal(va, vb, err_msg=f.name)
        elif isinstance(va, float):
            assert va == pytest.approx(vb, rel=rtol), f.name
        else:
            assert va == vb, f.name


_CHUNKS = [300, 64, 17]


@pytest.mark.parametrize("covariance", ["diagonal", "pooled_diagonal"])
@pytest.mark.parametrize("chunks", _CHUNKS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("seed,scale,offset", [(0, 1.0, 0.0), (1, 1e-3, 7.0),
                                               (2, 1e3, -1e4)])
def test_gda_diagonal_kinds_equal_the_in_memory_fit(covariance, chunks, weighted, seed,
                                                    scale, offset):
    X, y = _gaussian(seed, scale, offset)
    w = _weights(seed, len(y)) if weighted else None
    kw = {"var_smoothing": 1e-3, "priors": [0.2, 0.3, 0.5], "reg": 0.01} if seed == 1 \
        else {}
    ref = fastgen.fit_gda(X, y, covariance, nan_policy="marginalize", sample_weight=w, **kw)
    got = fdask.fit_gda(da.from_array(X, chunks=(chunks, -1)), da.from_array(y, chunks),
                        covariance, nan_policy="marginalize",
                        sample_weight=None if w is None else da.from_array(w, chunks), **kw)
    if chunks == len(y):  # one block: the in-memory statistics, bit for bit
        _assert_close(ref, got, 0.0)
    _assert_close(ref, got, 1e-13)


@pytest.mark.parametrize("chunks", _CHUNKS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_gaussian_nb_equals_the_in_memory_fit(chunks, weighted, dtype):
    X, y = _gaussian(3, 2.0, 40.0, dtype=dtype)
    w = _weights(3, len(y)) if weighted else None
    ref = fastgen.fit_gaussian_nb(X, y, nan_policy="marginalize", sample_weight=w,
                                  var_smoothing=1e-4)
    got = fdask.fit_gaussian_nb(da.from_array(X, chunks=(chunks, -1)),
                                da.from_array(y, chunks), nan_policy="marginalize",
                                sample_weight=None if w is None else
                                da.from_array(w, chunks), var_smoothing=1e-4)
    rtol = 0.0 if chunks == len(y) and not weighted else (
        1e-13 if dtype == np.float64 else 1e-6)
    if chunks == len(y) and weighted:
        rtol = 1e-13 if dtype == np.float64 else 1e-6  # ε: nanvar against merged sums
    _assert_close(ref, got, rtol)
    # the variance floor: var_smoothing times the largest variance of the observed
    # entries (unweighted, as scikit-learn's), from numpy
    eps = 1e-4 * np.nanvar(X.astype(np.float64), axis=0).max()
    assert got.epsilon == pytest.approx(eps, rel=1e-10)


@pytest.mark.parametrize("chunks", _CHUNKS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("csr", [False, True])
@pytest.mark.parametrize("binarize", [1.5, None])
def test_bernoulli_nb_equals_the_in_memory_fit(chunks, weighted, csr, binarize):
    C, y = _counts(4)
    if binarize is None:
        C = np.where(np.isnan(C), np.nan, C > 1).astype(float)
    w = _weights(4, len(y)) if weighted else None
    kw = {"binarize": binarize, "alpha": 0.5}
    ref = fastgen.fit_bernoulli_nb(C, y, nan_policy="marginalize", sample_weight=w, **kw)
    A = da.from_array(C, chunks=(chunks, -1))
    if csr:
        A = A.map_blocks(sp.csr_matrix, dtype=C.dtype)
    got = fdask.fit_bernoulli_nb(A, da.from_array(y, chunks), nan_policy="marginalize",
                                 sample_weight=None if w is None else
                                 da.from_array(w, chunks), **kw)
    _assert_close(ref, got, 0.0 if chunks == len(y) else 1e-13)
    # F_kj and N_kj against plain numpy
    wt = np.ones(len(y)) if w is None else w
    obs = ~np.isnan(C)
    ones = (np.nan_to_num(C) > (0.5 if binarize is None else binarize)) & obs
    for k in range(3):
        rows = y == k
        np.testing.assert_allclose(got.observed_count[k], wt[rows] @ obs[rows], rtol=1e-13)
        np.testing.assert_allclose(got.feature_count[k], wt[rows] @ ones[rows], rtol=1e-13)


@pytest.mark.parametrize("chunks", _CHUNKS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("csr", [False, True])
@pytest.mark.parametrize("min_categories", [None, 6])
def test_categorical_nb_equals_the_in_memory_fit(chunks, weighted, csr, min_categories):
    C, y = _counts(8)
    C[:, 3] = np.where(np.isnan(C[:, 3]), np.nan,
                       np.random.default_rng(8).integers(0, 40, len(y)))  # a wide one
    w = _weights(8, len(y)) if weighted else None
    kw = {"alpha": 0.3, "min_categories": min_categories}
    ref = fastgen.fit_categorical_nb(C, y, nan_policy="marginalize", sample_weight=w, **kw)
    A = da.from_array(C, chunks=(chunks, -1))
    if csr:
        A = A.map_blocks(sp.csr_matrix, dtype=C.dtype)
    got = fdask.fit_categorical_nb(A, da.from_array(y, chunks), nan_policy="marginalize",
                                   sample_weight=None if w is None else
                                   da.from_array(w, chunks), **kw)
    _assert_close(ref, got, 0.0 if chunks == len(y) and not weighted else 1e-13)
    # N_kjc against plain numpy: the observed codes only
    wt = np.ones(len(y)) if w is None else w
    for k in range(3):
        for j in range(C.shape[1]):
            rows = (y == k) & ~np.isnan(C[:, j])
            ref_counts = np.bincount(C[rows, j].astype(int), weights=wt[rows],
                                     minlength=got.n_categories[j])
            lo, hi = got.offsets[j], got.offsets[j + 1]
            np.testing.assert_allclose(got.category_count[k, lo:hi], ref_counts,
                                       rtol=1e-13)


def test_without_nan_marginalize_is_the_complete_data_fit():
    X, y = _gaussian(5, frac=0.0)
    X[5] = 1.0
    Xd, yd = da.from_array(X, chunks=(64, -1)), da.from_array(y, chunks=64)
    for cov in ("diagonal", "pooled_diagonal"):
        _assert_close(fdask.fit_gda(Xd, yd, cov),
                      fdask.fit_gda(Xd, yd, cov, nan_policy="marginalize"), 1e-13)
    _assert_close(fdask.fit_gaussian_nb(Xd, yd),
                  fdask.fit_gaussian_nb(Xd, yd, nan_policy="marginalize"), 1e-13)


def test_errors_match_the_in_memory_fit():
    """No observed value in a column, or in a class, raises as in memory."""
    X, y = _gaussian(6)
    for bad in ("column", "class"):
        Xb = X.copy()
        if bad == "column":
            Xb[:, 2] = np.nan
        else:
            Xb[y == 1, 2] = np.nan
        with pytest.raises(ValueError) as mem:
            fastgen.fit_gaussian_nb(Xb, y, nan_policy="marginalize")
        with pytest.raises(ValueError) as dsk:
            fdask.fit_gaussian_nb(da.from_array(Xb, chunks=(64, -1)),
                                  da.from_array(y, chunks=64), nan_policy="marginalize")
        assert str(mem.value) == str(dsk.value)
    # values present only in rows of weight 0: the weight is named, as in memory
    w = np.ones(len(y))
    w[(y == 0) & ~np.isnan(X[:, 1])] = 0.0
    with pytest.raises(ValueError, match="only in rows of sample_weight 0"):
        fdask.fit_gda(da.from_array(X, chunks=(64, -1)), da.from_array(y, chunks=64),
                      "diagonal", nan_policy="marginalize",
                      sample_weight=da.from_array(w, chunks=64))
    with pytest.raises(ValueError, match="contains inf"):
        Xi = X.copy()
        Xi[3, 0] = np.inf
        fdask.fit_gaussian_nb(da.from_array(Xi, chunks=(64, -1)),
                              da.from_array(y, chunks=64), nan_policy="marginalize")


@pytest.mark.parametrize("call,match", [
    (lambda X, C, y: fdask.fit_gda(X, y, "pooled", nan_policy="marginalize"),
     "needs EM over the blocks; use covariance='diagonal' or 'pooled_diagonal'"),
    (lambda X, C, y: fdask.fit_gda(X, y, "per_class", nan_policy="marginalize"),
     "needs EM over the blocks"),
    (lambda X, C, y: fdask.fit_multinomial_nb(C, y, nan_policy="marginalize"),
     "refuses NaN in memory too"),
    (lambda X, C, y: fdask.fit_gaussian_nb(X, y, nan_policy="marginalize", unlabeled=X),
     "with unlabeled rows is not available on Dask"),
    (lambda X, C, y: fdask.fit_gda(X, y, "pooled"),
     r"at row \d+, column \d+; NaN marks a missing value only with "
     r"nan_policy='marginalize', which on Dask takes covariance='diagonal'"),
    (lambda X, C, y: fdask.fit_gaussian_nb(X, y),
     r"at row \d+, column \d+; NaN marks a missing value only with "
     r"nan_policy='marginalize'$"),
    (lambda X, C, y: fdask.fit_multinomial_nb(C, y),
     "impute or drop the missing values"),
    (lambda X, C, y: fdask.fit_categorical_nb(C, y),
     r"at row \d+, column \d+; NaN marks a missing value only with "
     r"nan_policy='marginalize'$"),
    (lambda X, C, y: fdask.fit_gda(X, y, "diagonal", nan_policy="omit"), "nan_policy"),
])
def test_what_dask_refuses_says_what_to_do(call, match):
    X, y = _gaussian(7)
    C, _ = _counts(7)
    before = (X.copy(), C.copy())
    with pytest.raises(ValueError, match=match):
        call(da.from_array(X, chunks=(64, -1)), da.from_array(C, chunks=(64, -1)),
             da.from_array(y, chunks=64))
    np.testing.assert_array_equal(X, before[0])
    np.testing.assert_array_equal(C, before[1])

"""Malformed sparse input is a ValueError, never a crash or a model.

scipy does not check the three arrays of a CSR matrix after construction (assigning
``X.indices`` or ``X.indptr`` bypasses every check), and neither may the kernels: the
validation layer checks them once, before scipy's own conversions or any kernel reads
them.  Each property builds a valid matrix by hand (int32 or int64 indices,
``csr_matrix`` or ``csr_array``), breaks one thing, and calls every public entry point
that takes CSR X: each must raise a ValueError that names the problem (and, for a
broken row, the first such row).  Naive Bayes CSR scoring leaves the scan of int32
column indices to its kernels, which check each index before use (tested at the end).
"""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import fastgen
import fastgen._validation as validation

SETTINGS = settings()  # the profile's (tests/conftest.py): derandomized by default

_rng = np.random.default_rng(0)
_N, _D = 24, 5
_C = _rng.poisson(1.0, size=(_N, _D)).astype(np.float64)
_C[np.arange(_N), np.arange(_N) % _D] += 1.0  # no empty row
_Y = np.arange(_N) % 3
_Y2 = np.arange(_N) % 2


@pytest.fixture(scope="module")
def models():
    X = sp.csr_matrix(_C)
    return {
        "multinomial": fastgen.fit_multinomial_nb(X, _Y),
        "bernoulli": fastgen.fit_bernoulli_nb(X, _Y),
        "complement": fastgen.fit_complement_nb(X, _Y),
        "categorical": fastgen.fit_categorical_nb(X, _Y),
        "logistic": fastgen.fit_logistic(X, _Y, l2=1.0),
        "logistic2": fastgen.fit_logistic(X, _Y2, penalty="firth"),
    }


def _n_rows(X):
    return X.shape[0]


# every public entry point that takes CSR X: name -> call(X, models)
ENTRY_POINTS = {
    "fit_multinomial_nb": lambda X, m: fastgen.fit_multinomial_nb(X, _Y[:_n_rows(X)]),
    "fit_bernoulli_nb": lambda X, m: fastgen.fit_bernoulli_nb(X, _Y[:_n_rows(X)]),
    "fit_complement_nb": lambda X, m: fastgen.fit_complement_nb(X, _Y[:_n_rows(X)]),
    "fit_categorical_nb": lambda X, m: fastgen.fit_categorical_nb(X, _Y[:_n_rows(X)]),
    "fit_logistic": lambda X, m: fastgen.fit_logistic(X, _Y[:_n_rows(X)], l2=1.0),
    "fit_logistic firth": lambda X, m: fastgen.fit_logistic(X, _Y2[:_n_rows(X)],
                                                            penalty="firth"),
    "irls_step": lambda X, m: fastgen.irls_step(m["logistic"], X, _Y[:_n_rows(X)]),
    "logistic_inference": lambda X, m: fastgen.logistic_inference(m["logistic2"], X,
                                                                  _Y2[:_n_rows(X)]),
    "detect_separation": lambda X, m: fastgen.detect_separation(X, _Y2[:_n_rows(X)]),
    "nb_counts multinomial": lambda X, m: fastgen.nb_counts(X, _Y[:_n_rows(X)]),
    "nb_counts bernoulli": lambda X, m: fastgen.nb_counts(X, _Y[:_n_rows(X)], "bernoulli"),
    "nb_counts complement": lambda X, m: fastgen.nb_counts(X, _Y[:_n_rows(X)],
                                                           "complement"),
    "predict multinomial": lambda X, m: fastgen.predict(m["multinomial"], X),
    "predict_proba multinomial": lambda X, m: fastgen.predict_proba(m["multinomial"], X),
    "predict bernoulli": lambda X, m: fastgen.predict(m["bernoulli"], X),
    "predict_log_proba bernoulli": lambda X, m: fastgen.predict_log_proba(m["bernoulli"], X),
    "joint_log_likelihood complement": lambda X, m: fastgen.joint_log_likelihood(
        m["complement"], X),
    "predict_proba categorical": lambda X, m: fastgen.predict_proba(m["categorical"], X),
    "predict categorical": lambda X, m: fastgen.predict(m["categorical"], X),
    "predict_proba logistic": lambda X, m: fastgen.predict_proba(m["logistic"], X),
    "predict logistic": lambda X, m: fastgen.predict(m["logistic"], X),
}


@st.composite
def valid_csr(draw):
    """(indptr, indices, data, n, d) of a canonical CSR matrix of counts, every row
    non-empty."""
    n = draw(st.integers(2, _N))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    mask = rng.random((n, _D)) < 0.5
    mask[np.arange(n), rng.integers(0, _D, n)] = True
    A = np.where(mask, rng.integers(1, 4, (n, _D)), 0).astype(np.float64)
    X = sp.csr_matrix(A)
    return X.indptr.astype(np.int64), X.indices.astype(np.int64), X.data, n, _D


# How one thing is broken: name -> (break(indptr, indices, data, n, d, draw) returning
# (indptr, indices, data, first broken row or None), message regex).
def _index_too_big(ip, ix, dt, n, d, draw):
    p = draw(st.integers(0, ix.shape[0] - 1))
    ix = ix.copy()
    ix[p] = d + draw(st.integers(0, 2**31 - 1 - d))
    return ip, ix, dt, int(np.searchsorted(ip, p, side="right") - 1)


def _index_negative(ip, ix, dt, n, d, draw):
    p = draw(st.integers(0, ix.shape[0] - 1))
    ix = ix.copy()
    ix[p] = -draw(st.integers(1, 2**31))
    return ip, ix, dt, int(np.searchsorted(ip, p, side="right") - 1)


def _pointer_decreases(ip, ix, dt, n, d, draw):
    r = draw(st.integers(1, n - 1))
    ip = ip.copy()
    ip[r] = ip[r + 1] + draw(st.integers(1, 3))  # row r ends before it starts
    return ip, ix, dt, r


def _pointer_negative(ip, ix, dt, n, d, draw):
    r = draw(st.integers(1, n - 1))
    ip = ip.copy()
    ip[r] = -draw(st.integers(1, 10**6))
    return ip, ix, dt, r - 1


def _pointer_far(ip, ix, dt, n, d, draw):
    r = draw(st.integers(1, n - 1))
    ip = ip.copy()
    ip[r] = ip[-1] + draw(st.integers(1, 10**9))
    return ip, ix, dt, r


def _first_not_zero(ip, ix, dt, n, d, draw):
    ip = ip.copy()
    ip[0] = draw(st.sampled_from([1, -1, 10**6]))
    return ip, ix, dt, None


def _last_past_end(ip, ix, dt, n, d, draw):
    ip = ip.copy()
    ip[-1] = ix.shape[0] + draw(st.integers(1, 10**6))
    return ip, ix, dt, None


def _short_indptr(ip, ix, dt, n, d, draw):
    return ip[:-draw(st.integers(1, n))], ix, dt, None


def _long_indptr(ip, ix, dt, n, d, draw):
    return np.concatenate([ip, np.full(draw(st.integers(1, 3)), ip[-1])]), ix, dt, None


def _short_data(ip, ix, dt, n, d, draw):
    return ip, ix, dt[:-draw(st.integers(1, dt.shape[0]))], None


def _short_indices(ip, ix, dt, n, d, draw):
    return ip, ix[:-draw(st.integers(1, ix.shape[0]))], dt, None


BREAKS = {
    "column index >= n_features": (_index_too_big, r"column index \d+ in row \d+"),
    "negative column index": (_index_negative, r"column index -\d+ in row \d+"),
    "decreasing indptr": (_pointer_decreases, r"decreasing indptr at row \d+"),
    "negative indptr entry": (_pointer_negative, r"decreasing indptr at row \d+"),
    "indptr entry past the end": (_pointer_far, r"decreasing indptr at row \d+"),
    "indptr[0] != 0": (_first_not_zero, r"indptr\[0\] = -?\d+; it must be 0"),
    "indptr[-1] > nnz": (_last_past_end, r"indptr\[-1\] = \d+ but \d+ stored values"),
    "indptr too short": (_short_indptr, r"indptr of length \d+; it must have length"),
    "indptr too long": (_long_indptr, r"indptr of length \d+; it must have length"),
    "data shorter than indices": (_short_data, r"indices but \d+ data values"),
    "indices shorter than data": (_short_indices, r"indices but \d+ data values"),
}


@st.composite
def malformed(draw, kind):
    ip, ix, dt, n, d = draw(valid_csr())
    ip, ix, dt, row = BREAKS[kind][0](ip, ix, dt, n, d, draw)
    index_dtype = draw(st.sampled_from([np.int32, np.int64]))
    cls = draw(st.sampled_from([sp.csr_matrix, sp.csr_array]))
    X = cls(_C[:n])  # valid; its arrays are then replaced without any check
    X.indptr = ip.astype(index_dtype)
    X.indices = ix.astype(index_dtype)
    X.data = dt
    return X, row


def _arrays(X):
    return [a.copy() for a in (X.indptr, X.indices, X.data)]


@pytest.mark.parametrize("kind", list(BREAKS))
@SETTINGS
@given(data=st.data())
def test_malformed_csr_is_a_value_error(kind, data, models):
    """Every entry point raises on the same broken matrix, naming the broken row."""
    X, row = data.draw(malformed(kind))
    before = _arrays(X)
    for entry, call in ENTRY_POINTS.items():
        with pytest.raises(ValueError, match=BREAKS[kind][1]) as info:
            call(X, models)
        if row is not None:
            assert f" row {row}" in str(info.value), entry
    for a, b in zip(before, _arrays(X)):  # the caller's arrays are untouched
        np.testing.assert_array_equal(a, b)


def _check_X_with_kernel(X, kernel):
    """check_X(X), its structure checked by the parallel kernel (``kernel``) or numpy,
    whatever the size of X."""
    import fastgen._validation.sparse as v  # the constants of the structure check

    saved = v.STRUCTURE_KERNEL_NNZ, v._STRUCTURE_PIECE_NNZ
    # the kernel in pieces of one stored value: as many pieces as it allows
    v.STRUCTURE_KERNEL_NNZ = 0 if kernel else 2**62
    v._STRUCTURE_PIECE_NNZ = 1
    try:
        return validation.check_X(X, allow_sparse=True)
    finally:
        v.STRUCTURE_KERNEL_NNZ, v._STRUCTURE_PIECE_NNZ = saved


@pytest.mark.parametrize("kind", list(BREAKS))
@SETTINGS
@given(data=st.data())
def test_kernel_and_numpy_checks_agree(kind, data):
    """The kernel (large matrices) finds what numpy (small ones) finds: run both on the
    same small matrix."""
    X, row = data.draw(malformed(kind))
    with pytest.raises(ValueError) as by_numpy:
        _check_X_with_kernel(X, False)
    with pytest.raises(ValueError) as by_kernel:
        _check_X_with_kernel(X, True)
    assert str(by_kernel.value) == str(by_numpy.value)


@SETTINGS
@given(data=st.data())
def test_every_broken_row_reports_the_first(data):
    """With several rows broken, the message names the first (numpy and kernel)."""
    ip, ix, dt, n, d = data.draw(valid_csr())
    rows = sorted(data.draw(st.sets(st.integers(0, n - 1), min_size=1, max_size=n)))
    ix = ix.copy()
    for r in rows:
        ix[ip[r + 1] - 1] = d + r
    X = sp.csr_matrix((dt, ix, ip), shape=(n, d))
    for kernel in (False, True):
        with pytest.raises(ValueError, match=rf"column index {d + rows[0]} in row "
                                             rf"{rows[0]},"):
            _check_X_with_kernel(X, kernel)


@pytest.mark.parametrize("fmt", ["csc", "coo"])
@pytest.mark.parametrize("bad", ["too big", "negative"])
def test_malformed_csc_and_coo(fmt, bad):
    """CSC and COO input is converted by scipy, which trusts its arrays as well."""
    X = sp.csc_matrix(_C) if fmt == "csc" else sp.coo_matrix(_C)
    value = 10**6 if bad == "too big" else -2
    if fmt == "csc":
        X.indices = X.indices.copy()
        X.indices[3] = value
        match = rf"row index {value} in column 0"
    else:
        X.row = X.row.copy()
        X.row[3] = value
        match = rf"row index {value} at stored value 3"
    with pytest.raises(ValueError, match=match):
        fastgen.fit_multinomial_nb(X, _Y)


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("cls", [sp.csr_matrix, sp.csr_array])
def test_unused_storage_after_indptr_end_is_ignored(index_dtype, cls):
    """scipy allows storage past indptr[-1] (and ignores it): so does fastgen, with the
    same answers as for the trimmed matrix and without touching the caller's arrays."""
    X = cls(_C)
    nnz = X.nnz
    X.indices = np.concatenate([X.indices, [10**6, -1]]).astype(index_dtype)
    X.indptr = X.indptr.astype(index_dtype)
    X.data = np.concatenate([X.data, [np.nan, -5.0]])
    want = fastgen.fit_multinomial_nb(cls(_C), _Y)
    got = fastgen.fit_multinomial_nb(X, _Y)
    np.testing.assert_array_equal(got.feature_count, want.feature_count)
    np.testing.assert_array_equal(fastgen.predict_proba(got, X),
                                  fastgen.predict_proba(want, cls(_C)))
    assert X.indices.shape[0] == nnz + 2


@pytest.mark.parametrize("n_features", [1, 7, 2**20])
def test_valid_matrices_pass_both_checks(n_features):
    """Valid input (empty rows, one column, the largest index) passes both checks."""
    rng = np.random.default_rng(n_features)
    X = sp.random(40, n_features, density=min(1.0, 30 / n_features), format="csr",
                  random_state=rng)
    keep = np.ones(40)
    keep[5] = 0.0
    X = (sp.diags(keep) @ X).tocsr()  # row 5 empty
    X.eliminate_zeros()
    X.indices[-1] = n_features - 1
    X.has_sorted_indices = False
    for kernel in (False, True):
        _check_X_with_kernel(X, kernel)


# ------------------------------------------------ the index check inside the scoring pass
#
# Naive Bayes CSR scoring leaves the scan of the column indices to its kernels, which
# check each index before they read a weight row with it (validation still checks the
# row pointers).  The kernels are called here directly, on matrices whose indices are
# broken where validation would have stopped them.

from fastgen.kernels.sparse import (  # noqa: E402 - the scoring kernels
    csr_linear_argmax,
    csr_linear_argmax_f32,
    csr_linear_scores,
    nnz_balanced_bounds,
)


@st.composite
def broken_indices(draw):
    """(indptr, indices, data, d, broken rows, the valid indices) of a CSR matrix with
    bad column indices in some rows, at any position of a row (first or second of a
    pair of stored values, or the odd last one)."""
    n = draw(st.integers(1, 30))
    d = draw(st.integers(1, 6))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    A = np.where(rng.random((n, d)) < 0.6, rng.integers(0, 4, (n, d)), 0).astype(float)
    A[:, 0] += A.sum(axis=1) == 0  # no empty row
    X = sp.csr_matrix(A)
    X.data[rng.random(X.nnz) < 0.3] = 0.0  # stored zeros: below a binarize threshold
    dtype = draw(st.sampled_from([np.int32, np.int64]))
    valid = X.indices.astype(dtype)
    indices = valid.copy()
    positions = draw(st.sets(st.integers(0, X.nnz - 1), max_size=4))
    info = np.iinfo(np.int32)
    for p in positions:
        indices[p] = draw(st.sampled_from([d, d + 1, d + 1000, -1, -7, info.min, info.max]))
    rows = {int(np.searchsorted(X.indptr, p, side="right") - 1) for p in positions}
    return X.indptr.astype(np.int64), indices, X.data, d, rows, valid


@SETTINGS
@given(case=broken_indices(), K=st.integers(1, 5), binarize=st.booleans())
def test_scoring_kernels_count_rows_with_bad_indices(case, K, binarize):
    """Each linear CSR scoring kernel counts exactly the rows holding a column index
    outside 0..d-1 as bad (and uses none of those indices), and scores every other row
    exactly as on the valid matrix."""
    indptr, indices, data, d, rows, valid = case
    n = indptr.shape[0] - 1
    rng = np.random.default_rng(d * 31 + K)
    W = rng.normal(size=(d, K))
    b = rng.normal(size=K)
    threshold = 0.5 if binarize else 0.0
    bounds = nnz_balanced_bounds(indptr, min(n, 3))
    good = np.array([i not in rows for i in range(n)])

    def scores(ix):
        out = np.empty((n, K))
        return csr_linear_scores(indptr, ix, data, W, b, binarize, threshold, 0, bounds,
                                 out), out

    def argmax(ix):
        labels = np.empty(n, dtype=np.int64)
        return csr_linear_argmax(indptr, ix, data, W, b, binarize, threshold, bounds,
                                 labels), labels

    def argmax_f32(ix):
        labels = np.empty(n, dtype=np.int64)
        wmax, bmax = np.abs(W).max(), np.abs(b).max()
        bad, _ = csr_linear_argmax_f32(indptr, ix, data, W.astype(np.float32), W, b,
                                       binarize, threshold, wmax, bmax, bounds, labels)
        return bad, labels

    for kernel in (scores, argmax, argmax_f32):
        bad, got = kernel(indices)
        want_bad, want = kernel(valid)
        assert want_bad == 0
        assert bad == len(rows), kernel.__name__
        np.testing.assert_array_equal(got[good], want[good])


@pytest.mark.parametrize("kind", [k for k in BREAKS if "index" in k])
@SETTINGS
@given(data=st.data())
def test_validation_leaves_only_int32_csr_indices_to_the_kernel(kind, data):
    """check_X(csr_indices=False) skips the scan of the column indices only for CSR
    input with int32 indices (the array the kernel reads); int64 indices (narrowed to
    int32 later) and CSC input are still scanned, and the row pointers always are."""
    X, _ = data.draw(malformed(kind))
    if X.indices.dtype == np.int32:
        got = validation.check_X(X, allow_sparse=True, csr_indices=False)
        with pytest.raises(ValueError, match=BREAKS[kind][1]):
            validation.check_csr_indices(got)
    else:
        with pytest.raises(ValueError, match=BREAKS[kind][1]):
            validation.check_X(X, allow_sparse=True, csr_indices=False)
    csc = sp.csc_matrix(_C[:4])
    csc.indices = csc.indices.copy()
    csc.indices[0] = -1
    with pytest.raises(ValueError, match=r"row index -1"):
        validation.check_X(csc, allow_sparse=True, csr_indices=False)


@pytest.mark.parametrize("kind", [k for k in BREAKS if "index" not in k])
@SETTINGS
@given(data=st.data())
def test_validation_always_checks_the_row_pointers(kind, data):
    """The row pointers are checked with csr_indices=False too: the kernels trust them."""
    X, _ = data.draw(malformed(kind))
    with pytest.raises(ValueError, match=BREAKS[kind][1]):
        validation.check_X(X, allow_sparse=True, csr_indices=False)

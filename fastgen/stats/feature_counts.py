"""Class and feature counts of the discrete naive Bayes models: one pass over X.

::

    N_k = Σ_{i: y_i=k} w_i,
    N_kj = Σ_{i: y_i=k} w_i x_ij          (multinomial, complement),
    F_kj = Σ_{i: y_i=k} w_i [x_ij > t]     (Bernoulli with binarize=t; x_ij if None).

Dense X goes to :func:`fastgen.kernels.nb.dense_class_counts`, scipy CSR X to
:func:`fastgen.kernels.sparse.csr_class_tables` (which can also run a fit's finish step,
its log tables, in the same pass).  :func:`discrete_counts` is the counting pass of the
Bernoulli, multinomial and complement fits and of :func:`fastgen.nb_counts`.
"""

from __future__ import annotations

import numpy as np

from .._runtime import kernel_module, kernel_threads
from .._small import is_small
from .._validation import (
    check_sample_weight,
    check_scalar,
    check_X,
    check_y,
    csr_arrays,
    is_sparse,
    report_nonfinite,
)
from . import numpy_passes

nb_kernels = kernel_module("nb")
sparse_kernels = kernel_module("sparse")

__all__ = [
    "fit_inputs",
    "weighted_class_count",
    "class_feature_counts",
    "csr_count_split",
    "locate_flat",
    "reject_bad_values",
    "reject_flagged_value",
    "discrete_counts",
    "check_binarize",
    "check_binary_counts",
]

# Work split of the counting reductions: at most _MAX_GROUPS row ranges of at least
# _MIN_GROUP_WORK stored values each, and at most _GROUP_BUFFER_BYTES of (K, d) float64
# partial sums.  These depend on the problem size only, never on the thread count.
_MAX_GROUPS = 8
_MIN_GROUP_WORK = 1 << 17
_GROUP_BUFFER_BYTES = 1 << 26

def fit_inputs(X, y, sample_weight, *, allow_sparse, finite=True, csr_counts=False):
    """Validated (X, classes, codes, w) of a fit; w is empty when no weights were given."""
    # csr_counts: the fit runs csr_class_counts, which checks the stored values on its
    # way (see reject_bad_values), so sparse X is not scanned here
    X = check_X(X, allow_sparse=allow_sparse,
                finite=finite and not (csr_counts and is_sparse(X)))
    classes, codes = check_y(y, X.shape[0])
    w = check_sample_weight(sample_weight, X.shape[0])
    return X, classes, codes, w


def weighted_class_count(codes, w, K):
    """(K,) float64 N_k = Σ_{i: y_i=k} w_i (w_i = 1 when ``w`` is empty)."""
    return np.bincount(codes, weights=w if w.shape[0] else None, minlength=K).astype(
        np.float64
    )


def _n_groups(work, K, d):
    g = min(_MAX_GROUPS, max(1, work // _MIN_GROUP_WORK))
    cap = max(1, _GROUP_BUFFER_BYTES // (8 * K * d))
    return int(min(g, cap))


def _dense_bounds(n, G):
    return np.array([n * g // G for g in range(G + 1)], dtype=np.int64)


def locate_flat(X, flat):
    """(row, column) of flat position ``flat`` (dense: i·d + j; CSR: index into data)."""
    if is_sparse(X):
        row = int(np.searchsorted(X.indptr, flat, side="right") - 1)
        return row, int(X.indices[flat])
    return divmod(int(flat), X.shape[1])


def _value_at(X, flat):
    return X.data[flat] if is_sparse(X) else X.reshape(-1)[flat]


def class_feature_counts(X, codes, w, K, *, binarize=False, threshold=0.0, finish=None):
    """(K, d) float64 weighted feature sums and the flat position of a negative value.

    CSR X with a ``finish`` step (:class:`~fastgen.kernels.sparse.LogRows`) also fills
    the step's tables from the same pass; dense X takes none (the caller finishes from
    the counts).
    """
    d = X.shape[1]
    if is_small(X):  # no compilation for small X (fastgen._small)
        return numpy_passes.class_feature_counts(X, codes, w, K, binarize, threshold, finish)
    if is_sparse(X):
        indptr, indices, data = csr_arrays(X)
        # a fresh table from numpy, which asks for huge pages (arrays numba allocates
        # get 4 KB pages: a page fault per 4 KB on first touch)
        out = np.empty((K, d))
        first = sparse_kernels.csr_class_tables(indptr, indices, data, codes, w, bool(binarize),
                                                float(threshold), csr_count_split(X, K),
                                                sparse_kernels.no_logs() if finish is None
                                                else finish, out)
        return out, first
    n = X.shape[0]
    G = _n_groups(n * d, K, d)
    return nb_kernels.dense_class_counts(X, codes, w, K, bool(binarize), float(threshold),
                                         _dense_bounds(n, G))


def csr_count_split(X, K):
    """The ``split`` of the CSR count kernel for X and K classes (see
    :func:`~fastgen.kernels.sparse.count_plan`): at least one work item per numba
    thread, prefetches sized to X's rows.  None of it changes the counts, so this may
    follow the thread count."""
    col_blocks = max(1, min(X.shape[1], -(-kernel_threads() // K)))
    return sparse_kernels.count_plan(X.nnz, X.shape[0], col_blocks)


def reject_bad_values(X, first, model, *, negative=True):
    """Raise for the value the count kernels flagged at flat position ``first``.

    The CSR kernel flags NaN/inf (not scanned for beforehand) as well as negative
    values: a non-finite stored value is named as :func:`check_X` would name it.
    """
    if first < 0:
        return
    if is_sparse(X):  # dense X was scanned by check_X
        report_nonfinite(X)
    if negative:
        i, j = locate_flat(X, first)
        raise ValueError(
            f"X contains a negative value ({float(_value_at(X, first))!r}) at row {i}, column "
            f"{j} (0-based); {model} naive Bayes needs non-negative feature counts"
        )


def discrete_counts(X, codes, w, K, model, *, binarize=None):
    """Class counts and feature counts of validated input, in one pass over X.

    ::

        N_k = Σ_{i: y_i=k} w_i,
        N_kj = Σ_{i: y_i=k} w_i x_ij          (multinomial, complement),
        F_kj = Σ_{i: y_i=k} w_i [x_ij > t]     (Bernoulli with binarize=t; x_ij if None).

    Parameters
    ----------
    X : ndarray (n, d) or CSR, from :func:`fit_inputs`
        (``csr_counts=True``: the CSR kernel checks the stored values itself).
    codes, w, K
        Class codes, weights (empty: all 1) and number of classes.
    model : {"bernoulli", "multinomial", "complement"}
    binarize : float or None
        Bernoulli threshold (checked by the caller).

    Returns
    -------
    class_count : (K,) float64
    feature_count : (K, d) float64

    Raises
    ------
    ValueError
        NaN/inf among the stored values of CSR X, or (multinomial, complement) a negative
        value, named by row and column.
    """
    if model == "bernoulli":
        fc, bad = class_feature_counts(X, codes, w, K, binarize=binarize is not None,
                                       threshold=binarize if binarize is not None else 0.0)
    else:
        fc, bad = class_feature_counts(X, codes, w, K)
    reject_flagged_value(X, bad, model)
    return weighted_class_count(codes, w, K), fc


def reject_flagged_value(X, first, model):
    """Raise for the value the count kernels flagged (see :func:`reject_bad_values`)."""
    if model == "bernoulli":
        # NaN/inf in CSR X; negative values with binarize=None fail check_binary_counts
        reject_bad_values(X, first, "Bernoulli", negative=False)
    else:
        reject_bad_values(X, first, model)


def check_binarize(binarize, X):
    """The Bernoulli threshold as a float (or None); below 0 is an error for sparse X.

    With None, X must hold only 0 and 1 (:func:`check_binary_values`): any other value
    would make a count negative or larger than its class, and the model's logarithms
    NaN.
    """
    if binarize is not None:
        binarize = check_scalar(binarize, "binarize")
        if is_sparse(X) and binarize < 0:
            raise ValueError(
                f"binarize={binarize} < 0 would turn the implicit zeros of sparse X into "
                f"ones; use binarize >= 0 or pass a dense array"
            )
    else:
        check_binary_values(X)
    return binarize


#: Rows per block of :func:`check_binary_values` on dense X (a bounded temporary).
_BINARY_BLOCK_VALUES = 1 << 18


def check_binary_values(X, name="X"):
    """Raise unless every value of X (dense, or the stored values of CSR) is 0 or 1,
    naming the first other value by row and column (``binarize=None`` means X is
    binary)."""
    def refuse(i, j, v):
        if not np.isfinite(v):
            report_nonfinite(X, name)  # NaN and infinity: the message of every function
        raise ValueError(
            f"binarize=None needs binary features (0 or 1), but {name}[{i}, {j}] = "
            f"{v!r}; pass a binarize threshold (e.g. binarize=0.0: x > 0 counts as 1)")

    if is_sparse(X):
        bad = np.flatnonzero((X.data != 0) & (X.data != 1))
        if bad.size:
            i, j = locate_flat(X, int(bad[0]))
            refuse(i, j, float(X.data[bad[0]]))
        return
    n, d = X.shape
    rows = max(1, _BINARY_BLOCK_VALUES // max(1, d))
    for i0 in range(0, n, rows):
        block = X[i0:i0 + rows]
        bad = np.flatnonzero((block != 0) & (block != 1))
        if bad.size:
            i, j = divmod(int(bad[0]), d)
            refuse(i0 + i, j, float(block[i, j]))


#: Entries of the (K, d) counts per block of :func:`check_binary_counts`.
_CHECK_BLOCK = 1 << 16


def check_binary_counts(cc, fc, alpha):
    """Raise unless N_k − F_kj + α > 0 for all k, j (binarize=None needs binary X).

    Tests (N_k − F_kj) + α block by block of whole class rows, reusing one buffer:
    no (K, d) temporaries, the same floating-point test for every entry."""
    K, d = fc.shape
    rows = max(1, _CHECK_BLOCK // max(1, d))
    buf = np.empty((min(rows, K), d))
    for k0 in range(0, K, rows):
        k1 = min(K, k0 + rows)
        t = buf[:k1 - k0]
        np.subtract(cc[k0:k1, None], fc[k0:k1], out=t)
        t += alpha
        if (t <= 0).any():
            raise ValueError(
                "binarize=None needs binary features (0 or 1), but the feature counts of "
                "X exceed the class counts; pass a binarize threshold"
            )

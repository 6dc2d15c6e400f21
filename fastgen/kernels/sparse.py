"""CSR kernels: a sparse matrix is passed as its three arrays (indptr, indices, data).

The arrays are those of a canonical CSR matrix (sorted column indices, no duplicates);
``indptr`` and ``indices`` may be int32 or int64.  Every kernel reads only the stored
values: implicit zeros cost nothing.  Work is split at row ``bounds`` balanced by the
number of stored values (see :func:`nnz_balanced_bounds`), and reductions write one
buffer per range, merged in a fixed order, so results do not depend on the thread
count.
"""

import numpy as np
from numba import prange

from ._jit import jit, pjit
from .nb import finish_row

__all__ = [
    "nnz_balanced_bounds",
    "csr_class_counts",
    "csr_linear_scores",
    "csr_categorical_counts",
    "csr_categorical_scores",
]


@jit
def nnz_balanced_bounds(indptr, n_blocks):
    """Cut the rows into ``n_blocks`` ranges of about equal cost (stored values + rows).

    Returns ``bounds`` (n_blocks + 1,) int64 with bounds[0] = 0 and bounds[-1] = n;
    range b is rows ``bounds[b]:bounds[b + 1]``.  The cost of a row is its number of
    stored values plus one, so empty rows are spread out too.
    """
    n = indptr.shape[0] - 1
    total = np.int64(indptr[n]) + n
    bounds = np.empty(n_blocks + 1, dtype=np.int64)
    bounds[0] = 0
    i = 0
    for b in range(1, n_blocks):
        target = total * b // n_blocks
        while i < n and np.int64(indptr[i]) + i < target:
            i += 1
        bounds[b] = i
    bounds[n_blocks] = n
    return bounds


@pjit
def csr_class_counts(indptr, indices, data, codes, w, n_features, n_classes, binarize,
                     threshold, bounds):
    """Weighted per-class feature sums F_kj = Σ_{i: y_i=k} w_i v(x_ij) over stored values.

    v(x) = x, or with ``binarize`` v(x) = 1 if x > threshold else 0 (``threshold``
    must be >= 0 so that implicit zeros map to 0).  Each row range of ``bounds`` sums
    into its own (K, d) float64 buffer; the buffers are merged in order, in parallel
    over features.

    Returns
    -------
    counts : (K, d) float64
    first_negative : int
        Position in ``data`` of the first negative stored value, or -1 (only looked
        for without ``binarize``).
    """
    K = n_classes
    d = n_features
    G = bounds.shape[0] - 1
    weighted = w.shape[0] > 0
    buf = np.zeros((G, K, d))
    neg = np.full(G, -1, dtype=np.int64)
    for g in prange(G):
        bg = buf[g]
        for i in range(bounds[g], bounds[g + 1]):
            k = codes[i]
            wi = w[i] if weighted else 1.0
            if binarize:
                for p in range(indptr[i], indptr[i + 1]):
                    if data[p] > threshold:
                        bg[k, indices[p]] += wi
            else:
                for p in range(indptr[i], indptr[i + 1]):
                    v = data[p]
                    if v < 0 and neg[g] < 0:
                        neg[g] = p
                    bg[k, indices[p]] += wi * v
    out = np.empty((K, d))
    CB = 4096
    ncb = (d + CB - 1) // CB
    for cb in prange(ncb):
        j0 = cb * CB
        j1 = min(d, j0 + CB)
        for k in range(K):
            for j in range(j0, j1):
                out[k, j] = buf[0, k, j]
            for g in range(1, G):
                for j in range(j0, j1):
                    out[k, j] += buf[g, k, j]
    first = -1
    for g in range(G):
        if neg[g] >= 0:
            first = neg[g]
            break
    return out, first


@pjit
def csr_linear_scores(indptr, indices, data, weights, bias, binarize, threshold, mode,
                      bounds, out):
    """Scores linear in the stored values: s_ik = b_k + Σ_{j stored in row i} v(x_ij) W_jk.

    v(x) = x, or with ``binarize`` v(x) = 1 if x > threshold else 0.  This is the
    multinomial and complement model (W = log θᵀ) and the Bernoulli model
    (W = (log p − log(1 − p))ᵀ, b_k = log π_k + Σ_j log(1 − p_kj)).  ``weights`` is
    (d, K) C-contiguous so each stored value reads one contiguous row; accumulation
    is in float64 and each row is finished per ``mode`` (see
    :func:`fastgen.kernels.nb.finish_row`).
    """
    K = bias.shape[0]
    G = bounds.shape[0] - 1
    for g in prange(G):
        acc = np.empty(K)
        for i in range(bounds[g], bounds[g + 1]):
            for k in range(K):
                acc[k] = bias[k]
            if binarize:
                for p in range(indptr[i], indptr[i + 1]):
                    if data[p] > threshold:
                        j = indices[p]
                        for k in range(K):
                            acc[k] += weights[j, k]
            else:
                for p in range(indptr[i], indptr[i + 1]):
                    v = np.float64(data[p])
                    j = indices[p]
                    for k in range(K):
                        acc[k] += v * weights[j, k]
            finish_row(acc, out, i, mode)
    return out


@jit
def csr_categorical_counts(indptr, indices, data, codes, w, n_classes, offsets,
                           class_count):
    """Category counts of CSR data whose implicit zeros are category 0.

    Stored values c add w_i to C[k, offsets[j] + c]; the count of category 0 is then
    N_k − Σ_{c ≥ 1} C[k, offsets[j] + c], with ``class_count`` N_k (K,).
    """
    n = indptr.shape[0] - 1
    d = offsets.shape[0] - 1
    weighted = w.shape[0] > 0
    out = np.zeros((n_classes, offsets[d]))
    for i in range(n):
        k = codes[i]
        wi = w[i] if weighted else 1.0
        for p in range(indptr[i], indptr[i + 1]):
            out[k, offsets[indices[p]] + np.int64(data[p])] += wi
    for k in range(n_classes):
        for j in range(d):
            s = 0.0
            for r in range(offsets[j] + 1, offsets[j + 1]):
                s += out[k, r]
            out[k, offsets[j]] = class_count[k] - s
    return out


@pjit
def csr_categorical_scores(indptr, indices, data, table, offsets, base, mode, bounds,
                           out):
    """Categorical scores on CSR data: jll_ik = B_k + Σ_{j stored} (T[o_j + x_ij, k] − T[o_j, k]).

    ``base`` B_k = log π_k + Σ_j T[o_j, k] covers the implicit zeros (category 0);
    ``table`` is (total_categories, K) float64.  Finished per ``mode``.
    """
    K = base.shape[0]
    G = bounds.shape[0] - 1
    for g in prange(G):
        acc = np.empty(K)
        for i in range(bounds[g], bounds[g + 1]):
            for k in range(K):
                acc[k] = base[k]
            for p in range(indptr[i], indptr[i + 1]):
                o = offsets[indices[p]]
                r = o + np.int64(data[p])
                for k in range(K):
                    acc[k] += table[r, k] - table[o, k]
            finish_row(acc, out, i, mode)
    return out

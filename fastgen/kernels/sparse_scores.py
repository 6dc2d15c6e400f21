"""CSR scoring kernels: scores linear in the stored values (multinomial, complement and
Bernoulli naive Bayes), their argmax, and categorical naive Bayes scores.

The arrays are those of a canonical CSR matrix (see :mod:`fastgen.kernels.sparse`),
``indptr`` checked (non-decreasing, from 0 to the number of stored values).  The linear
kernels check each column index before they read a weight row with it, so the caller
need not scan the indices first: a row holding an index outside ``0..d-1`` is counted
as a bad row, like a row holding a NaN/inf, and no read leaves the arrays.  Rows are
split at ``bounds`` balanced by stored values (:func:`fastgen.kernels.sparse.nnz_balanced_bounds`),
so results do not depend on the thread count.
"""

import numpy as np
from numba import prange

from ._jit import jit, pjit
from .memory import prefetch_span
from .special import finish_rows

__all__ = [
    "SCORE_PREFETCH",
    "csr_linear_scores",
    "csr_linear_argmax",
    "csr_linear_argmax_f32",
    "argmax_f32_bound",
    "csr_categorical_scores",
]


#: How many stored values ahead the scoring kernels prefetch weight rows.
SCORE_PREFETCH = 48


@jit(inline="always")
def _linear_row_sum(indptr, indices, data, weights, wflat, nnz, bias, binarize, threshold,
                    i, acc, acc2):
    """acc = b + Σ_{j stored in row i} v(x_ij) W_j· in float64 (W float64 or float32,
    each weight taken exactly).  Returns Σ|v(x_ij)| over the row's terms: NaN if the row
    holds a NaN/inf (see csr_class_counts), a negative value without ``binarize``
    (the counts of the multinomial and complement models; a running minimum, and the
    Bernoulli model's binary X is checked before), or a column index outside 0..d-1 (W is
    (d, K)): each index is checked before its weight row is read, and the row stops at
    the first bad one.  One unsigned comparison per stored value, where a separate scan
    of the indices before scoring read them all once more.

    The stored values go in pairs, the first of each pair summed into ``acc`` and the
    second into ``acc2`` (K scratch), added at the end: each running sum is a K-vector
    in memory, and one sum alone made every stored value wait for the previous one's
    store (benchmarks/NOTES.md).  Any summation tree of
    the m + 1 terms keeps the float64 error within γₘ₊₁·Σ|terms| (the bound of
    :func:`csr_linear_argmax_f32`).
    """
    K = acc.shape[0]
    d = np.uint64(weights.shape[0])  # unsigned: a negative index compares as huge
    for k in range(K):
        acc[k] = bias[k]
        acc2[k] = 0.0
    a = indptr[i]
    e = indptr[i + 1]
    nonfinite = 0.0
    low = 0.0
    mass = 0.0
    p = a
    if binarize:
        while p + 1 < e:
            if p + SCORE_PREFETCH + 1 < nnz:
                prefetch_span(wflat, np.int64(indices[p + SCORE_PREFETCH]) * K, K)
                prefetch_span(wflat, np.int64(indices[p + SCORE_PREFETCH + 1]) * K, K)
            x0 = data[p]
            x1 = data[p + 1]
            j0 = indices[p]
            j1 = indices[p + 1]
            if np.uint64(j0) >= d or np.uint64(j1) >= d:
                return np.nan
            nonfinite += x0 * 0.0 + x1 * 0.0
            if x0 > threshold:
                mass += 1.0
                for k in range(K):
                    acc[k] += np.float64(weights[j0, k])
            if x1 > threshold:
                mass += 1.0
                for k in range(K):
                    acc2[k] += np.float64(weights[j1, k])
            p += 2
        if p < e:
            x = data[p]
            j = indices[p]
            if np.uint64(j) >= d:
                return np.nan
            nonfinite += x * 0.0
            if x > threshold:
                mass += 1.0
                for k in range(K):
                    acc[k] += np.float64(weights[j, k])
    else:
        while p + 1 < e:
            if p + SCORE_PREFETCH + 1 < nnz:
                prefetch_span(wflat, np.int64(indices[p + SCORE_PREFETCH]) * K, K)
                prefetch_span(wflat, np.int64(indices[p + SCORE_PREFETCH + 1]) * K, K)
            v0 = np.float64(data[p])
            v1 = np.float64(data[p + 1])
            nonfinite += v0 * 0.0 + v1 * 0.0
            low = min(low, min(v0, v1))
            mass += abs(v0) + abs(v1)
            j0 = indices[p]
            j1 = indices[p + 1]
            if np.uint64(j0) >= d or np.uint64(j1) >= d:
                return np.nan
            for k in range(K):
                acc[k] += v0 * np.float64(weights[j0, k])
            for k in range(K):
                acc2[k] += v1 * np.float64(weights[j1, k])
            p += 2
        if p < e:
            v = np.float64(data[p])
            nonfinite += v * 0.0
            low = min(low, v)
            mass += abs(v)
            j = indices[p]
            if np.uint64(j) >= d:
                return np.nan
            for k in range(K):
                acc[k] += v * np.float64(weights[j, k])
        if low < 0.0:  # counts: a negative value is as bad as a NaN (a running minimum)
            return np.nan
    for k in range(K):
        acc[k] += acc2[k]
    return mass + nonfinite



@jit(inline="always")
def _linear_row(indptr, indices, data, weights, wflat, nnz, bias, binarize, threshold, i,
                acc, acc2):
    """acc = b + Σ_{j stored in row i} v(x_ij) W_j·; False if the row holds a NaN/inf."""
    mass = _linear_row_sum(indptr, indices, data, weights, wflat, nnz, bias, binarize,
                           threshold, i, acc, acc2)
    return mass == mass



@jit(inline="always")
def _top_two(acc):
    """(index, value) of acc's largest value, the first on ties (as ``np.argmax``), and
    the largest value among the other entries (-inf if there is none; equal to the
    largest on ties).  Branch-free selects, for :func:`csr_linear_argmax_f32`: a running
    maximum with branches takes about ln K data-dependent jumps per row, which short
    rows cannot hide.  :func:`_first_max` keeps the branches, because this loop,
    inlined into the row loop that ``predict_proba`` shares, slows it (numbers in
    ``benchmarks/NOTES.md``)."""
    best = 0
    top = acc[0]
    second = -np.inf
    for k in range(1, acc.shape[0]):
        v = acc[k]
        second = max(second, min(v, top))
        above = v > top
        best = k if above else best
        top = v if above else top
    return best, top, second



@jit(inline="always")
def _first_max(acc):
    """The index of acc's largest value, the first on ties (as ``np.argmax``)."""
    best = 0
    for k in range(1, acc.shape[0]):
        if acc[k] > acc[best]:
            best = k
    return best



@jit
def _rescore_row(indptr, indices, data, weights, wflat, nnz, bias, binarize, threshold,
                 i, acc, acc2):
    """:func:`_linear_row` as a call: the float64 rescoring of a row whose float32
    scores do not prove their argmax is rare, and a second inlined copy of the row
    loop in :func:`csr_linear_argmax_f32` only added to its compilation."""
    return _linear_row(indptr, indices, data, weights, wflat, nnz, bias, binarize,
                       threshold, i, acc, acc2)


@pjit
def _csr_linear_rows(indptr, indices, data, weights, bias, binarize, threshold, mode,
                     bounds, out, labels):
    """The row loop of :func:`csr_linear_scores` and :func:`csr_linear_argmax`: with an
    empty ``labels`` each row's scores go to ``out`` and are finished per ``mode``;
    otherwise only the row's argmax goes to ``labels`` (a branch per row, not per stored
    value, and no (n, K) table).  Returns the number of rows holding a NaN/inf or a
    column index outside ``0..d-1``."""
    K = bias.shape[0]
    G = bounds.shape[0] - 1
    nnz = indptr[indptr.shape[0] - 1]
    wflat = weights.reshape(-1)
    argmax = labels.shape[0] > 0
    bad = np.zeros(G, dtype=np.int64)
    for g in prange(G):
        acc = np.empty(K)
        acc2 = np.empty(K)
        for i in range(bounds[g], bounds[g + 1]):
            if not _linear_row(indptr, indices, data, weights, wflat, nnz, bias, binarize,
                               threshold, i, acc, acc2):
                bad[g] += 1
            if argmax:
                labels[i] = _first_max(acc)
            else:
                for k in range(K):
                    out[i, k] = acc[k]
        if not argmax:
            finish_rows(out, bounds[g], bounds[g + 1], mode)
    return bad.sum()



@jit
def csr_linear_scores(indptr, indices, data, weights, bias, binarize, threshold, mode,
                      bounds, out):
    """Scores linear in the stored values: s_ik = b_k + Σ_{j stored in row i} v(x_ij) W_jk.

    v(x) = x, or with ``binarize`` v(x) = 1 if x > threshold else 0.  This is the
    multinomial and complement model (W = log θᵀ) and the Bernoulli model
    (W = (log p − log(1 − p))ᵀ, b_k = log π_k + Σ_j log(1 − p_kj)).  ``weights`` is
    (d, K) C-contiguous so each stored value reads one contiguous row (prefetched
    ``SCORE_PREFETCH`` stored values ahead); accumulation is in float64 and each row
    is finished per ``mode`` (see :func:`fastgen.kernels.special.finish_rows`).

    Returns the number of rows holding a NaN or infinite stored value, a negative one
    (without ``binarize``), or a column
    index outside ``0..d-1`` (found on the way, so X needs no separate scan of its
    values or indices; a bad index is never used); their scores are not meaningful.
    """
    return _csr_linear_rows(indptr, indices, data, weights, bias, binarize, threshold,
                            mode, bounds, out, np.empty(0, dtype=np.int64))



@jit
def csr_linear_argmax(indptr, indices, data, weights, bias, binarize, threshold, bounds,
                      labels):
    """The class of highest score of :func:`csr_linear_scores` for each row.

    Writes ``labels`` (n,) int64 (the first maximum on ties, as ``np.argmax``) without
    the (n, K) scores.  Returns the number of rows holding a NaN or infinite value or a
    column index outside ``0..d-1``.
    """
    return _csr_linear_rows(indptr, indices, data, weights, bias, binarize, threshold,
                            0, bounds, np.empty((0, bias.shape[0]), dtype=weights.dtype),
                            labels)



@jit
def argmax_f32_bound(weights, bias):
    """(Wmax, bmax) for :func:`csr_linear_argmax_f32`: the largest |W_jk| and |b_k|
    (infinite if any is)."""
    wmax = 0.0
    for j in range(weights.shape[0]):
        for k in range(weights.shape[1]):
            a = abs(weights[j, k])
            if not a <= wmax:
                wmax = a
    bmax = 0.0
    for k in range(bias.shape[0]):
        a = abs(bias[k])
        if not a <= bmax:
            bmax = a
    return wmax, bmax



@pjit
def csr_linear_argmax_f32(indptr, indices, data, weights32, weights, bias, binarize,
                          threshold, wmax, bmax, bounds, labels):
    """:func:`csr_linear_argmax` reading a float32 copy of the weights, with the same
    labels: each row whose float32-weight scores do not prove their argmax is scored
    again from the float64 weights.

    The float32 table halves the bytes fetched per stored value (K = 20: 80 against
    160 bytes, 2 cache lines against 3), which bounds this kernel.  Proof for a row
    with terms v_j: the float32 weights differ from the float64 ones by at most
    2⁻²⁴|W| (+2⁻¹⁵⁰ below float32's normal range), and each float64 sum of the m + 1
    terms (bias included) is off its exact value by at most γ = (m+1)u/(1 − (m+1)u)
    times Σ|terms| (u = 2⁻⁵³), so the two computed scores of a class differ by at most
    E = T(2⁻²⁴ + 2.0001γ) + 2⁻¹⁵⁰Σ|v| with T = bmax + Σ|v|·wmax.  If the best
    float32-weight score beats every other by more than 2E (times 1.01 for the bound's
    own rounding), the float64 scores have the same unique argmax; otherwise (ties,
    near-ties, NaN, a bad index) the row is recomputed.  Returns (rows holding a NaN/inf
    or a column index outside ``0..d-1``, rows recomputed).
    """
    K = bias.shape[0]
    G = bounds.shape[0] - 1
    nnz = indptr[indptr.shape[0] - 1]
    wflat32 = weights32.reshape(-1)
    wflat = weights.reshape(-1)
    bad = np.zeros(G, dtype=np.int64)
    redo = np.zeros(G, dtype=np.int64)
    u = 2.0 ** -53
    for g in prange(G):
        acc = np.empty(K)
        acc2 = np.empty(K)
        for i in range(bounds[g], bounds[g + 1]):
            mass = _linear_row_sum(indptr, indices, data, weights32, wflat32, nnz, bias,
                                   binarize, threshold, i, acc, acc2)
            best, top, second = _top_two(acc)
            m1 = (indptr[i + 1] - indptr[i]) + 1.0
            gamma = m1 * u / (1.0 - m1 * u)
            err = (bmax + mass * wmax) * (2.0 ** -24 + 2.0001 * gamma) + mass * 2.0 ** -150
            if not (top - second > 2.02 * err):
                redo[g] += 1
                if not _rescore_row(indptr, indices, data, weights, wflat, nnz, bias,
                                    binarize, threshold, i, acc, acc2):
                    bad[g] += 1
                best = _first_max(acc)
            labels[i] = best
    return bad.sum(), redo.sum()



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
            for k in range(K):
                out[i, k] = acc[k]
        finish_rows(out, bounds[g], bounds[g + 1], mode)
    return out

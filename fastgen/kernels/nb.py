"""Naive Bayes kernels on dense data: Gaussian statistics and scoring, class-wise
feature counts, categorical counts and scoring.

Every kernel assumes validated input: ``X`` C-contiguous float32/float64, ``codes``
int32 class indices in ``[0, K)``, ``w`` a float64 weight vector or an empty array
meaning "every weight is one".  Statistics are accumulated in float64 whatever the
dtype of ``X``.

Parallel reductions are deterministic: rows are cut into fixed-size blocks (or into
the ranges given by ``bounds``, which the caller computes from the problem size alone),
each work item writes its own slot and the slots are merged serially in a fixed order,
so results are bitwise identical for any number of threads.

Scoring kernels take ``mode``: :data:`MODE_JLL` writes the joint log-likelihood,
:data:`MODE_LOG_PROBA` the log posterior and :data:`MODE_PROBA` the posterior, fused
in the same pass over the rows.
"""

import numpy as np
from numba import prange
from numba.extending import register_jitable

from ._jit import REASSOC, jit, pjit
from .log_rows import LOG_TABLE_SIZE
from .special import (  # noqa: F401 - finish_row re-exported
    MODE_JLL,
    MODE_LOG_PROBA,
    MODE_PROBA,
    ROW_BLOCK,
    finish_row,
    finish_rows,
)

__all__ = [
    "MODE_JLL",
    "MODE_LOG_PROBA",
    "MODE_PROBA",
    "finish_row",
    "gaussian_nb_scores",
    "gaussian_nb_scores_four_classes",
    "gaussian_nb_kernel_for",
    "four_class_sweep_is_faster",
    "FOUR_CLASS_SWEEP_MIN_FEATURES",
    "dense_class_counts",
    "categorical_counts",
    "categorical_scores",
    "LOG_TABLE_SIZE",
    "row_total",
    "log_total",
    "LOG_MEMO_SIZE",
    "log_smoothed_row",
    "log_counts",
    "class_log_totals",
]


@pjit(fastmath=REASSOC)
def gaussian_nb_scores(X, means, inv_var, const, mode, out):
    """Gaussian naive Bayes scores with a direct n·K·d loop (one class per pass over a
    row's features; for d ≥ :data:`FOUR_CLASS_SWEEP_MIN_FEATURES` and K ≥ 4,
    :func:`gaussian_nb_scores_four_classes` is faster).

        jll_ik = c_k − ½ Σ_j (x_ij − μ_kj)² / σ²_kj,
        c_k = log π_k − ½ Σ_j log(2π σ²_kj),

    accumulated in float64 and finished per ``mode`` block by block (see
    :func:`fastgen.kernels.special.finish_rows`).  The sum over features may be
    reassociated (vectorised); every row is still computed the same way whatever the
    thread count.

    Parameters
    ----------
    X : (n, d) float32/float64, C-contiguous
    means, inv_var : (K, d) float64, C-contiguous: μ and 1/σ²
    const : (K,) float64, c_k above
    mode : int
    out : (n, K) output array (float32 or float64), written in place

    Returns
    -------
    int
        The number of rows whose scores hold a NaN or a non-finite maximum: with finite
        parameters only a non-finite (or overflowing) x gives one.
    """
    n, d = X.shape
    K = const.shape[0]
    nb = (n + ROW_BLOCK - 1) // ROW_BLOCK
    bad = 0
    for b in prange(nb):
        r0 = b * ROW_BLOCK
        r1 = min(n, r0 + ROW_BLOCK)
        for i in range(r0, r1):
            for k in range(K):
                s = 0.0
                for j in range(d):
                    t = np.float64(X[i, j]) - means[k, j]
                    s += t * t * inv_var[k, j]
                out[i, k] = const[k] - 0.5 * s
        bad += finish_rows(out, r0, r1, mode)
    return bad


#: From this many features (and four classes) on, :func:`gaussian_nb_scores_four_classes` is the
#: faster of the two Gaussian naive Bayes kernels.
FOUR_CLASS_SWEEP_MIN_FEATURES = 16


@pjit(fastmath=REASSOC)
def gaussian_nb_scores_four_classes(X, means, inv_var, const, mode, out):
    """:func:`gaussian_nb_scores` sweeping four classes per pass over a row's features
    (then two, then one for the rest), so that each x_ij loaded serves four classes and
    four sums run side by side.  The same contract and results up to the order of the
    sums (a few ulps).

    Use it for d ≥ :data:`FOUR_CLASS_SWEEP_MIN_FEATURES` and K ≥ 4, as the Gaussian naive Bayes
    params do: faster than :func:`gaussian_nb_scores` there, slower for d < 16, where
    LLVM vectorises the four sums of a short row poorly.  A separate kernel because one
    kernel holding both loops, chosen by d, was slower on both paths
    (benchmarks/NOTES.md).
    """
    n, d = X.shape
    K = const.shape[0]
    nb = (n + ROW_BLOCK - 1) // ROW_BLOCK
    bad = 0
    for b in prange(nb):
        r0 = b * ROW_BLOCK
        r1 = min(n, r0 + ROW_BLOCK)
        for i in range(r0, r1):
            k = 0
            while k + 3 < K:
                s0 = 0.0
                s1 = 0.0
                s2 = 0.0
                s3 = 0.0
                for j in range(d):
                    x = np.float64(X[i, j])
                    t0 = x - means[k, j]
                    t1 = x - means[k + 1, j]
                    t2 = x - means[k + 2, j]
                    t3 = x - means[k + 3, j]
                    s0 += t0 * t0 * inv_var[k, j]
                    s1 += t1 * t1 * inv_var[k + 1, j]
                    s2 += t2 * t2 * inv_var[k + 2, j]
                    s3 += t3 * t3 * inv_var[k + 3, j]
                out[i, k] = const[k] - 0.5 * s0
                out[i, k + 1] = const[k + 1] - 0.5 * s1
                out[i, k + 2] = const[k + 2] - 0.5 * s2
                out[i, k + 3] = const[k + 3] - 0.5 * s3
                k += 4
            if k + 1 < K:
                s0 = 0.0
                s1 = 0.0
                for j in range(d):
                    x = np.float64(X[i, j])
                    t0 = x - means[k, j]
                    t1 = x - means[k + 1, j]
                    s0 += t0 * t0 * inv_var[k, j]
                    s1 += t1 * t1 * inv_var[k + 1, j]
                out[i, k] = const[k] - 0.5 * s0
                out[i, k + 1] = const[k + 1] - 0.5 * s1
                k += 2
            if k < K:
                s0 = 0.0
                for j in range(d):
                    t0 = np.float64(X[i, j]) - means[k, j]
                    s0 += t0 * t0 * inv_var[k, j]
                out[i, k] = const[k] - 0.5 * s0
        bad += finish_rows(out, r0, r1, mode)
    return bad


@register_jitable
def four_class_sweep_is_faster(d, K):
    """Whether :func:`gaussian_nb_scores_four_classes` is the faster kernel for d features and
    K classes (callable from Python and from numba code alike)."""
    return d >= FOUR_CLASS_SWEEP_MIN_FEATURES and K >= 4


def gaussian_nb_kernel_for(d, K):
    """The faster Gaussian naive Bayes scoring kernel for d features and K classes:
    :func:`gaussian_nb_scores_four_classes` where :func:`four_class_sweep_is_faster`, else
    :func:`gaussian_nb_scores`."""
    if four_class_sweep_is_faster(d, K):
        return gaussian_nb_scores_four_classes
    return gaussian_nb_scores


@pjit
def dense_class_counts(X, codes, w, n_classes, binarize, threshold, bounds):
    """Weighted per-class feature sums F_kj = Σ_{i: y_i=k} w_i v(x_ij).

    v(x) = x, or with ``binarize`` v(x) = 1 if x > threshold else 0.  Rows are split
    at ``bounds`` (G + 1 increasing row indices from 0 to n); each range sums into
    its own (K, d) float64 buffer, merged in order.

    Returns
    -------
    counts : (K, d) float64
    first_negative : int
        Flat index i·d + j of the first negative x_ij, or -1 (only looked for
        without ``binarize``).
    """
    n, d = X.shape
    K = n_classes
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
                for j in range(d):
                    if X[i, j] > threshold:
                        bg[k, j] += wi
            else:
                for j in range(d):
                    v = X[i, j]
                    if v < 0 and neg[g] < 0:
                        neg[g] = i * d + j
                    bg[k, j] += wi * v
    out = np.zeros((K, d))
    for k in range(K):
        for g in range(G):
            for j in range(d):
                out[k, j] += buf[g, k, j]
    first = -1
    for g in range(G):
        if neg[g] >= 0:
            first = neg[g]
            break
    return out, first


@jit
def categorical_counts(X, codes, w, n_classes, offsets):
    """Weighted category counts C[k, offsets[j] + c] = Σ_{i: y_i=k, x_ij=c} w_i.

    ``X`` holds validated category codes (non-negative integers stored as floats)
    and ``offsets`` (d + 1,) int64 the start of each feature's categories.
    """
    n, d = X.shape
    weighted = w.shape[0] > 0
    out = np.zeros((n_classes, offsets[d]))
    for i in range(n):
        k = codes[i]
        wi = w[i] if weighted else 1.0
        for j in range(d):
            out[k, offsets[j] + np.int64(X[i, j])] += wi
    return out


@pjit
def categorical_scores(X, table, offsets, bias, mode, out):
    """Categorical naive Bayes scores jll_ik = b_k + Σ_j T[offsets[j] + x_ij, k].

    ``table`` (total_categories, K) float64 holds log p(x_j = c | y = k) with classes
    contiguous; ``bias`` (K,) the class log priors.  Finished per ``mode``.
    """
    n, d = X.shape
    K = bias.shape[0]
    nb = (n + ROW_BLOCK - 1) // ROW_BLOCK
    for b in prange(nb):
        acc = np.empty(K)
        r0 = b * ROW_BLOCK
        r1 = min(n, r0 + ROW_BLOCK)
        for i in range(r0, r1):
            for k in range(K):
                acc[k] = bias[k]
            for j in range(d):
                r = offsets[j] + np.int64(X[i, j])
                for k in range(K):
                    acc[k] += table[r, k]
            for k in range(K):
                out[i, k] = acc[k]
        finish_rows(out, r0, r1, mode)
    return out


@jit
def row_total(a):
    """Σ_j a_j of a 1-D float64 array, in one fixed order: eight running sums over
    j mod 8, combined pairwise, then the tail.  Every caller gets the same bits for
    the same row (no reassociation by the compiler), so the count kernels and
    :func:`class_log_totals` agree exactly."""
    n = a.shape[0]
    m = n - n % 8
    s0 = s1 = s2 = s3 = s4 = s5 = s6 = s7 = 0.0
    for j in range(0, m, 8):
        s0 += a[j]
        s1 += a[j + 1]
        s2 += a[j + 2]
        s3 += a[j + 3]
        s4 += a[j + 4]
        s5 += a[j + 5]
        s6 += a[j + 6]
        s7 += a[j + 7]
    s = ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))
    for j in range(m, n):
        s += a[j]
    return s


@jit
def log_total(counts_row, add):
    """log(Σ_j counts_j + add), the sum by :func:`row_total`: the multinomial
    normaliser log(Σ_j N_kj + α·d) of one class."""
    return np.log(row_total(counts_row) + add)


#: Smallest counts whose entries :func:`log_smoothed_row` computes once per row.
LOG_MEMO_SIZE = 64


@jit(inline="always")
def _log_entry(v, alpha, table):
    """log(v + α): from ``table`` where v is an integer in [0, T), else ``np.log``."""
    if v >= 0.0 and v < table.shape[0] and np.int64(v) == v:
        return table[np.int64(v)]
    return np.log(v + alpha)


@jit
def log_smoothed_row(counts_row, base, sign, alpha, shift, table, out_row, j0, j1):
    """out_j = log(base + sign·counts_j + α) − shift for j in ``j0:j1`` of one row.

    v = base + sign·counts_j that is an integer in [0, T) reads log(v + α) from
    ``table`` (T,) = log(arange(T) + α), computed by the caller with ``np.log``; other
    values take ``np.log`` here.  The entries of the counts 0 .. LOG_MEMO_SIZE − 1 are
    computed once per call, by the same formula on the same v, and copied: a count
    table is mostly small counts, and the Bernoulli log(N_k − F_kj + α), whose v is
    near N_k, would otherwise take a logarithm for nearly every entry.  A separate
    function (not a ``prange`` body) so that it compiles to the same tight loop
    wherever it is called from."""
    memo = np.empty(LOG_MEMO_SIZE)
    for c in range(LOG_MEMO_SIZE):
        memo[c] = _log_entry(base + sign * np.float64(c), alpha, table) - shift
    for j in range(j0, j1):
        c = counts_row[j]
        if c >= 0.0 and c < LOG_MEMO_SIZE and np.int64(c) == c:
            out_row[j] = memo[np.int64(c)]
        else:
            out_row[j] = _log_entry(base + sign * c, alpha, table) - shift


#: Columns per work item of :func:`log_counts`.
_LOG_BLOCK = 1 << 14


@pjit
def log_counts(counts, base, sign, alpha, shift, table, out):
    """out_kj = log(base_k + sign·counts_kj + α) − shift_k, over a (K, d) table.

    The logarithms of naive Bayes' smoothed counts (multinomial: log(N_kj + α);
    Bernoulli: log(F_kj + α) and log(N_k − F_kj + α)).  Counts of unweighted rows are
    integers, and most are small: a value v = base_k + sign·counts_kj that is an
    integer in [0, T) reads log(v + α) from ``table`` (T,) = log(arange(T) + α), which
    the caller computes with the same logarithm (``np.log``) as any other entry would
    get; other values take ``np.log`` (see :func:`log_smoothed_row`, which the CSR
    count kernel calls too, so both give the same bits).

    Parameters
    ----------
    counts : (K, d) float64, C-contiguous
    base : (K,) float64
    sign : float, 1.0 or -1.0
    alpha : float
    shift : (K,) float64
    table : (T,) float64
    out : (K, d) float64, written in place

    Returns ``out``.
    """
    K, d = counts.shape
    per_row = (d + _LOG_BLOCK - 1) // _LOG_BLOCK
    for item in prange(K * per_row):
        k = item // per_row
        j0 = (item - k * per_row) * _LOG_BLOCK
        log_smoothed_row(counts[k], base[k], sign, alpha, shift[k], table, out[k], j0,
                         min(d, j0 + _LOG_BLOCK))
    return out


@pjit
def class_log_totals(counts, add):
    """(K,) log(Σ_j counts_kj + add) of a (K, d) table, each by :func:`log_total`."""
    K = counts.shape[0]
    out = np.empty(K)
    for k in prange(K):
        out[k] = log_total(counts[k], add)
    return out


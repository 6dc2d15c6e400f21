"""CSR kernels: a sparse matrix is passed as its three arrays (indptr, indices, data).

The arrays are those of a canonical CSR matrix (sorted column indices, no duplicates);
``indptr`` and ``indices`` may be int32 or int64.  Every kernel reads only the stored
values: implicit zeros cost nothing.  This module holds the structure check and the
counting kernels; the scoring kernels are in :mod:`fastgen.kernels.sparse_scores`
(importable from here too).  Scoring splits the rows at ``bounds`` balanced by the
number of stored values (see :func:`nnz_balanced_bounds`); the class counts
cut each class's rows into pieces of about equal numbers of stored values, each
summing into its own vector, merged in a fixed order.  Results therefore do not
depend on the thread count.
"""


import numpy as np
from numba import prange

from ._jit import jit, pjit
from .labels import class_order
from .log_rows import LogRows, log_pair, no_logs, normalised_logs  # noqa: F401 - re-exported
from .memory import prefetch, prefetch_csr_row
from .nb import LOG_MEMO_SIZE, _log_entry, log_smoothed_row, log_total
from .sparse_scores import (  # noqa: F401 - the scoring kernels, importable from here too
    SCORE_PREFETCH,
    argmax_f32_bound,
    csr_categorical_scores,
    csr_linear_argmax,
    csr_linear_argmax_f32,
    csr_linear_scores,
)

__all__ = [
    "LogRows",
    "no_logs",
    "normalised_logs",
    "log_pair",
    "count_rows_ahead",
    "count_plan",
    "values_count_as_one",
    "nnz_balanced_bounds",
    "csr_class_tables",
    "bernoulli_log_rows",
    "csr_class_counts",
    "csr_linear_scores",
    "csr_linear_argmax",
    "csr_linear_argmax_f32",
    "argmax_f32_bound",
    "csr_categorical_counts",
    "csr_categorical_scores",
    "csr_structure",
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
def csr_structure(indptr, indices, n_blocks):
    """Check the row pointers of a compressed sparse matrix of unknown integrity, then
    find the range of its indices.

    ``indptr`` (n + 1,) must satisfy ``indptr[0] == 0 <= indptr[n] <= len(indices)``;
    nothing else is assumed.  Indices are read only once every pointer is known to be
    non-decreasing (so all lie in ``0..indptr[n]``): no read goes outside the arrays.
    Both passes split their range into ``n_blocks`` fixed pieces, run in parallel.

    Returns ``(row, lo, hi)``: ``row`` is the first i with indptr[i + 1] < indptr[i]
    (then ``lo, hi = 0, -1``), or -1 and ``lo, hi`` the minimum and maximum of
    ``indices[:indptr[n]]`` (``2**63 - 1, -1`` when there are none).
    """
    n = indptr.shape[0] - 1
    first = np.full(n_blocks, -1, dtype=np.int64)
    for b in prange(n_blocks):
        for i in range(n * b // n_blocks, n * (b + 1) // n_blocks):
            if indptr[i + 1] < indptr[i]:
                first[b] = i
                break
    for b in range(n_blocks):
        if first[b] >= 0:
            return first[b], np.int64(0), np.int64(-1)
    nnz = np.int64(indptr[n])
    lows = np.full(n_blocks, np.iinfo(np.int64).max, dtype=np.int64)
    highs = np.full(n_blocks, -1, dtype=np.int64)
    for b in prange(n_blocks):
        # unsigned positions: no negative-index wraparound, so the loop vectorises
        lo = np.int64(np.iinfo(np.int64).max)
        hi = np.int64(-1)
        for p in range(np.uint64(nnz * b // n_blocks), np.uint64(nnz * (b + 1) // n_blocks)):
            v = np.int64(indices[p])
            lo = min(lo, v)
            hi = max(hi, v)
        lows[b] = lo
        highs[b] = hi
    return np.int64(-1), lows.min(), highs.max()


# ----------------------------------------------------------------- finish step
#
# What :func:`csr_class_tables` does with a class row of counts once it is complete:
# :class:`~fastgen.kernels.log_rows.LogRows` (imported above; numba-free, so that a
# model builds its step without loading the kernels).


#: Stored values the class-count kernel prefetches ahead, in whole rows (at least
#: ``_MIN_ROWS_AHEAD``, at most ``_MAX_ROWS_AHEAD``); see :func:`count_rows_ahead`.
_VALUES_AHEAD = 160
_MIN_ROWS_AHEAD = 2
_MAX_ROWS_AHEAD = 16


#: From this many stored values per row (on average), :func:`csr_class_tables` first
#: checks whether every value counts as one (:func:`values_count_as_one`), and if so
#: reads only the column indices.
_SCAN_MIN_ROW = 16


@jit
def count_rows_ahead(nnz, n_rows):
    """How many rows ahead :func:`csr_class_tables` prefetches: about
    ``_VALUES_AHEAD`` stored values, so short rows (titles, queries) are fetched
    further ahead in rows than long ones.  Changes the speed only, never the result."""
    mean = max(1.0, nnz / max(1, n_rows))
    return min(_MAX_ROWS_AHEAD, max(_MIN_ROWS_AHEAD, np.int64(round(_VALUES_AHEAD / mean))))


@jit
def count_plan(nnz, n_rows, col_blocks):
    """The ``split`` argument of :func:`csr_class_tables`: (col_blocks, rows ahead,
    whether to scan for values that all count as one: rows of ``_SCAN_MIN_ROW`` values
    or more, where not reading the values saves more than the scan costs)."""
    return (col_blocks, count_rows_ahead(nnz, n_rows),
            nnz >= _SCAN_MIN_ROW * max(1, n_rows))


@jit
def _first_bad(data, a, b, negative):
    for p in range(a, b):
        x = data[p]
        if not (np.abs(x) < np.inf) or (negative and x < 0):
            return p
    return -1


@jit
def _count_class(indptr, indices, data, w, order, r0, r1, row, binarize, threshold, j0,
                 j1, whole, ahead):
    """row[j] += w_i v(x_ij) for the rows ``order[r0:r1]`` (one class, ascending) and,
    unless ``whole``, only the columns ``j0:j1``.  Returns the first stored value of
    those rows that is NaN/inf or (without ``binarize``) negative, or -1."""
    weighted = w.shape[0] > 0
    bad = -1
    for r in range(r0, r1):
        if r + 4 * ahead < r1:  # the row pointers of a later row
            prefetch(indptr, order[r + 4 * ahead])
        if r + ahead < r1:
            prefetch_csr_row(indptr, indices, data, order[r + ahead])
        i = order[r]
        wi = w[i] if weighted else 1.0
        a = indptr[i]
        b = indptr[i + 1]
        # x·0 is ±0 for finite x and NaN otherwise: one running sum finds every
        # NaN/inf, and a running minimum every negative value, at almost no cost
        # (a test-and-branch per value is slower: benchmarks/NOTES.md)
        nonfinite = 0.0
        low = 0.0
        if whole:
            if binarize:
                for p in range(a, b):
                    x = data[p]
                    nonfinite += x * 0.0
                    if x > threshold:
                        row[indices[p]] += wi
            else:
                for p in range(a, b):
                    x = data[p]
                    nonfinite += x * 0.0
                    low = min(low, x)
                    row[indices[p]] += wi * x
        else:
            for p in range(a, b):
                x = data[p]
                nonfinite += x * 0.0
                low = min(low, x)
                j = indices[p]
                if j >= j0 and j < j1:
                    if not binarize:
                        row[j] += wi * x
                    elif x > threshold:
                        row[j] += wi
        if (nonfinite != 0.0 or (low < 0.0 and not binarize)) and bad < 0:
            bad = _first_bad(data, a, b, not binarize)
    return bad


@jit
def _count_class_ones(indptr, indices, w, order, r0, r1, row, j0, j1, whole, ahead):
    """:func:`_count_class` where every stored value counts as one (v(x) = 1: x = 1,
    or x above the threshold): row[j] += w_i, the values themselves not read."""
    weighted = w.shape[0] > 0
    for r in range(r0, r1):
        if r + 4 * ahead < r1:
            prefetch(indptr, order[r + 4 * ahead])
        if r + ahead < r1:
            q = order[r + ahead]
            for t in range(indptr[q], indptr[q + 1], 16):  # 16 int32 indices a line
                prefetch(indices, t)
        i = order[r]
        wi = w[i] if weighted else 1.0
        if whole:
            for p in range(indptr[i], indptr[i + 1]):
                row[indices[p]] += wi
        else:
            for p in range(indptr[i], indptr[i + 1]):
                j = indices[p]
                if j >= j0 and j < j1:
                    row[j] += wi


#: Stored values per piece of the scan of :func:`values_count_as_one` (it stops after
#: the first piece holding a value that does not count as one).
_SCAN_PIECE = 1024

#: The largest finite float64.
_MAX_FINITE = 1.7976931348623157e308


@jit
def _all_within(data, lo, hi, a, b):
    """Whether a <= data[p] <= b for p in ``lo:hi`` (False for a NaN), piece by piece:
    a branch-free running maximum of the misses, which vectorises."""
    for c in range(lo, hi, _SCAN_PIECE):
        miss = 0.0
        for p in range(c, min(hi, c + _SCAN_PIECE)):
            x = data[p]
            miss = max(miss, 0.0 if (x >= a) & (x <= b) else 1.0)
        if miss != 0.0:
            return False
    return True


@pjit
def values_count_as_one(data, nnz, binarize, threshold):
    """Whether v(x) = 1 for each of the first ``nnz`` stored values: x = 1 exactly, or
    with ``binarize`` threshold < x < ∞ (so none is NaN, infinite or negative
    either).  Reads the values in order, in 64 parallel ranges that each stop after
    the first piece of ``_SCAN_PIECE`` values with one that does not count: on count
    data (a 2 among the first values) it costs next to nothing."""
    blocks = 64
    a = np.nextafter(threshold, np.inf) if binarize else 1.0
    b = _MAX_FINITE if binarize else 1.0
    ok = np.ones(blocks, dtype=np.bool_)
    for blk in prange(blocks):
        ok[blk] = _all_within(data, nnz * blk // blocks, nnz * (blk + 1) // blocks, a, b)
    return ok.all()


@jit
def bernoulli_log_rows(counts_row, n_k, alpha, shift, table, out_a, out_b, j0, j1):
    """Both Bernoulli log rows of one class in one pass over its counts, for j in
    ``j0:j1``: out_a_j = log(F_j + α) − shift and out_b_j = log(n_k − F_j + α) − shift.

    The same entries, bit for bit, as :func:`~fastgen.kernels.nb.log_smoothed_row`
    called twice (base 0, sign 1; base n_k, sign −1): the same expressions, the same
    memo of the counts 0 .. LOG_MEMO_SIZE − 1; the counts are read once."""
    memo_a = np.empty(LOG_MEMO_SIZE)
    memo_b = np.empty(LOG_MEMO_SIZE)
    for c in range(LOG_MEMO_SIZE):
        memo_a[c] = _log_entry(0.0 + 1.0 * np.float64(c), alpha, table) - shift
        memo_b[c] = _log_entry(n_k + -1.0 * np.float64(c), alpha, table) - shift
    for j in range(j0, j1):
        c = counts_row[j]
        if c >= 0.0 and c < LOG_MEMO_SIZE and np.int64(c) == c:
            m = np.int64(c)
            out_a[j] = memo_a[m]
            out_b[j] = memo_b[m]
        else:
            out_a[j] = _log_entry(0.0 + 1.0 * c, alpha, table) - shift
            out_b[j] = _log_entry(n_k + -1.0 * c, alpha, table) - shift


@pjit
def csr_class_tables(indptr, indices, data, codes, w, binarize, threshold, split, finish,
                     out):
    """Per-class feature sums F_kj = Σ_{i: y_i=k} w_i v(x_ij) over the stored values,
    and a finish step (the naive Bayes log tables) of each class row as soon as it is
    complete.

    v(x) = x, or with ``binarize`` v(x) = 1 if x > threshold else 0 (``threshold``
    must be >= 0 so that implicit zeros map to 0).  The rows are grouped by class (a
    counting sort, ascending within a class) and each class row of the table is
    written by one work item, which zeroes it, adds its rows' values in that order
    and, with a ``finish`` step, turns it into logarithms while it is in cache: no partial
    tables, no merge.  With ``col_blocks`` > 1 a class row is cut into that many
    column ranges, each its own work item reading all the class's rows (for few
    classes on many threads).  Every entry receives the same additions in the same
    order whatever the split or the thread count, so the result is bitwise the same
    for any of them.  Rows are visited in class order, not storage order, so the
    values of the row ``rows_ahead`` later are prefetched (see
    :func:`count_rows_ahead`).

    The tables are the caller's, written in place: fresh ``np.empty`` arrays from
    numpy, which asks the operating system for huge pages, so that the first writes
    to fresh memory take few page faults (see ``benchmarks/NOTES.md``).

    Parameters
    ----------
    indptr, indices, data : the CSR arrays
    codes : (n,) int32 class codes in [0, K); w : (n,) float64 weights or empty (all 1)
    binarize : bool; threshold : float
    split : (col_blocks, rows_ahead, scan): how the work is done, not what is computed
        (see :func:`count_plan`): column ranges per class row and prefetch distance,
        both >= 1, and whether to look first for values that all count as one
        (:func:`values_count_as_one`: then only the column indices are read)
    finish : :class:`LogRows`
        The step applied to each complete class row, writing its own tables
        (:func:`no_logs`: none, the counts alone).
    out : (K, d) float64, C-contiguous: the counts

    Returns
    -------
    first_bad : int
        Position in ``data`` of a stored value that is NaN or infinite, or (without
        ``binarize``) negative; -1 if there is none.  With several, the lowest of the
        first ones found in each class's rows.  The finish step's tables are not
        meaningful then.
    """
    K, d = out.shape
    col_blocks = max(1, min(split[0], d))
    ahead = split[1]
    nnz = indptr[indptr.shape[0] - 1]
    ones = split[2] and values_count_as_one(data, nnz, binarize, threshold)
    order, start = class_order(codes, K)
    n_items = K * col_blocks
    bad = np.full(n_items, -1, dtype=np.int64)
    whole = col_blocks == 1
    alpha, table = finish.alpha, finish.table
    pair = finish.out_b.shape[0] > 0
    # a normalised table needs each class row complete (all its columns) first
    normalise = finish.normalise and finish.out_a.shape[0] > 0 and not pair
    add = alpha * d
    for it in prange(n_items):
        k = it // col_blocks
        blk = it - k * col_blocks
        j0 = d * blk // col_blocks
        j1 = d * (blk + 1) // col_blocks
        row = out[k]
        row[j0:j1] = 0.0
        if ones:
            _count_class_ones(indptr, indices, w, order, start[k], start[k + 1], row, j0,
                              j1, whole, ahead)
        else:
            bad[it] = _count_class(indptr, indices, data, w, order, start[k],
                                   start[k + 1], row, binarize, threshold, j0, j1, whole,
                                   ahead)
        if pair:
            bernoulli_log_rows(row, finish.base[k], alpha, finish.shift[k], table,
                               finish.out_a[k], finish.out_b[k], j0, j1)
        elif whole and normalise:
            log_smoothed_row(row, 0.0, 1.0, alpha, log_total(row, add), table,
                             finish.out_a[k], 0, d)
    if not whole and normalise:
        totals = np.empty(K)
        for k in prange(K):
            totals[k] = log_total(out[k], add)
        for it in prange(n_items):
            k = it // col_blocks
            blk = it - k * col_blocks
            log_smoothed_row(out[k], 0.0, 1.0, alpha, totals[k], table, finish.out_a[k],
                             d * blk // col_blocks, d * (blk + 1) // col_blocks)
    first = -1
    for it in range(n_items):
        if bad[it] >= 0 and (first < 0 or bad[it] < first):
            first = bad[it]
    return first


@jit
def csr_class_counts(indptr, indices, data, codes, w, n_features, n_classes, binarize,
                     threshold, col_blocks):
    """The counts of :func:`csr_class_tables` alone (no log tables, no caller's
    arrays), the rows of each class prefetched :func:`count_rows_ahead` rows ahead.

    Returns ``(counts (K, d) float64, first_bad)`` as :func:`csr_class_tables` does.
    """
    n = indptr.shape[0] - 1
    out = np.empty((n_classes, n_features))
    first = csr_class_tables(indptr, indices, data, codes, w, binarize, threshold,
                             count_plan(indptr[n], n, col_blocks),
                             LogRows(1.0, False, np.empty(0), np.empty(0), np.empty(0),
                                     np.empty((0, 0)), np.empty((0, 0))), out)
    return out, first


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


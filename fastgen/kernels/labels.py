"""Small O(n) helpers used by validation: label coding and finiteness scans."""

import numpy as np
from numba import prange

from ._jit import jit, pjit

__all__ = ["int_label_codes", "class_order", "first_nonfinite", "nonfinite_block",
           "NONFINITE_SCAN_BLOCK"]

#: Elements per block of the parallel finiteness scan :func:`nonfinite_block` (fixed:
#: the result is the first bad block whatever the thread count); the caller scans the
#: block it returns for the element.
NONFINITE_SCAN_BLOCK = 1 << 16


@jit
def int_label_codes(y, lo, span):
    """Code integer labels without sorting.

    ``y`` is a 1-D integer array with values in ``[lo, lo + span)``.  Returns
    ``present`` (span,) uint8 flags and ``codes`` (n,) int32, the rank of each label
    among the present values (the index into ``np.unique(y)``).
    """
    n = y.shape[0]
    present = np.zeros(span, dtype=np.uint8)
    for i in range(n):
        present[y[i] - lo] = 1
    rank = np.empty(span, dtype=np.int32)
    r = 0
    for v in range(span):
        rank[v] = r
        r += present[v]
    codes = np.empty(n, dtype=np.int32)
    for i in range(n):
        codes[i] = rank[y[i] - lo]
    return present, codes


@jit
def first_nonfinite(a):
    """Index of the first NaN or infinity in a 1-D float array, or -1."""
    for i in range(a.shape[0]):
        v = a[i]
        if not np.isfinite(v):
            return i
    return -1


@pjit
def nonfinite_block(bits, expmask):
    """First block of ``NONFINITE_SCAN_BLOCK`` elements holding a NaN or infinity, or -1.

    ``bits`` is a float array viewed as same-width integers; an element is non-finite
    exactly when all its exponent bits (``expmask``) are set.  The integer OR-reduction
    vectorises, where a float test with an early exit does not.
    """
    n = bits.shape[0]
    nb = (n + NONFINITE_SCAN_BLOCK - 1) // NONFINITE_SCAN_BLOCK
    bad = np.zeros(nb, dtype=np.uint8)
    for b in prange(nb):
        flag = 0
        for i in range(b * NONFINITE_SCAN_BLOCK, min(n, (b + 1) * NONFINITE_SCAN_BLOCK)):
            flag |= (bits[i] & expmask) == expmask
        bad[b] = flag
    for b in range(nb):
        if bad[b]:
            return b
    return -1


@jit
def class_order(codes, K):
    """Stable counting sort of the rows by class, O(n).

    Returns ``order`` (n,) int64, the row indices grouped by class (ascending within a
    class), and ``start`` (K + 1,) int64: class k's rows are
    ``order[start[k]:start[k + 1]]``.
    """
    n = codes.shape[0]
    start = np.zeros(K + 1, dtype=np.int64)
    for i in range(n):
        start[codes[i] + 1] += 1
    for k in range(K):
        start[k + 1] += start[k]
    pos = start[:K].copy()
    order = np.empty(n, dtype=np.int64)
    for i in range(n):
        k = codes[i]
        order[pos[k]] = i
        pos[k] += 1
    return order, start

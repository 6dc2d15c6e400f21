"""Small O(n) helpers used by validation: label coding and finiteness scans."""

import numpy as np

from ._jit import jit

__all__ = ["int_label_codes", "first_nonfinite"]


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

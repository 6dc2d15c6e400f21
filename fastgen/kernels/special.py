"""Log-space helpers shared by every scoring path."""

import numpy as np
from numba import prange

from ._jit import jit, pjit

__all__ = ["logsumexp_rows", "log_normalize_rows", "softmax_rows", "argmax_rows",
           "ROW_BLOCK"]

# Rows per parallel work item in scoring kernels.  Fixed, so that results never depend
# on the thread count.
ROW_BLOCK = 512


@jit(inline="always")
def _row_lse(a, i):
    K = a.shape[1]
    m = -np.inf
    for k in range(K):
        if a[i, k] > m:
            m = a[i, k]
    if m == -np.inf or m == np.inf or np.isnan(m):
        return m
    s = 0.0
    for k in range(K):
        s += np.exp(a[i, k] - m)
    return m + np.log(s)


@pjit
def logsumexp_rows(a):
    """log Σ_k exp(a[i, k]) for each row, using the row maximum.

    A row whose entries are all -inf gives -inf (not NaN).
    """
    n = a.shape[0]
    out = np.empty(n, dtype=a.dtype)
    nb = (n + ROW_BLOCK - 1) // ROW_BLOCK
    for b in prange(nb):
        for i in range(b * ROW_BLOCK, min(n, (b + 1) * ROW_BLOCK)):
            out[i] = _row_lse(a, i)
    return out


@pjit
def log_normalize_rows(a, out):
    """out[i, k] = a[i, k] - log Σ_k exp(a[i, k]); rows of all -inf stay -inf.

    ``out`` may be ``a`` itself (in place).
    """
    n, K = a.shape
    nb = (n + ROW_BLOCK - 1) // ROW_BLOCK
    for b in prange(nb):
        for i in range(b * ROW_BLOCK, min(n, (b + 1) * ROW_BLOCK)):
            lse = _row_lse(a, i)
            if lse == -np.inf:
                for k in range(K):
                    out[i, k] = -np.inf
            else:
                for k in range(K):
                    out[i, k] = a[i, k] - lse
    return out


@pjit
def softmax_rows(a, out):
    """out[i] = exp(a[i] - logsumexp(a[i])); a row of all -inf gives NaN-free zeros.

    ``out`` may be ``a`` itself (in place).
    """
    n, K = a.shape
    nb = (n + ROW_BLOCK - 1) // ROW_BLOCK
    for b in prange(nb):
        for i in range(b * ROW_BLOCK, min(n, (b + 1) * ROW_BLOCK)):
            m = -np.inf
            for k in range(K):
                if a[i, k] > m:
                    m = a[i, k]
            if m == -np.inf:
                for k in range(K):
                    out[i, k] = 0.0
                continue
            s = 0.0
            for k in range(K):
                e = np.exp(a[i, k] - m)
                out[i, k] = e
                s += e
            inv = 1.0 / s
            for k in range(K):
                out[i, k] *= inv
    return out


@jit
def argmax_rows(a):
    """Index of the first maximum of each row (int64)."""
    n, K = a.shape
    out = np.empty(n, dtype=np.int64)
    for i in range(n):
        best = 0
        m = a[i, 0]
        for k in range(1, K):
            if a[i, k] > m:
                m = a[i, k]
                best = k
        out[i] = best
    return out

"""Rows grouped by their pattern of missing features (NaN in X), for the scoring kernels
of :mod:`fastgen.kernels.missing`.

:func:`nan_keys` packs each row's NaN entries into a bit key, :func:`number_keys`
numbers the keys in order of first appearance, :func:`group_rows` orders the rows by
pattern (a counting sort), and :func:`sorted_rows` copies them in that order (reading X
itself in pattern order jumped across it: benchmarks/NOTES.md).
"""

from __future__ import annotations

import numpy as np
from numba import prange

from ._jit import REASSOC, jit, pjit
from .special import ROW_BLOCK

__all__ = ["nan_keys", "number_keys", "group_rows", "sorted_rows", "MAX_KEY_D"]

#: Patterns are told apart by a bit key per row up to this many features.
MAX_KEY_D = 62


@pjit(fastmath=REASSOC)
def nan_keys(X, keys):
    """``keys[i]``: bit j set where X[i, j] is NaN (d ≤ :data:`MAX_KEY_D`).  Returns the
    number of rows holding an infinite entry."""
    n, d = X.shape
    nb = (n + ROW_BLOCK - 1) // ROW_BLOCK
    n_inf = 0
    for b in prange(nb):
        r0 = b * ROW_BLOCK
        r1 = min(n, r0 + ROW_BLOCK)
        for i in range(r0, r1):
            key = 0
            inf = 0
            for j in range(d):  # branch-free, so that it vectorises
                x = X[i, j]
                nan = np.int64(x != x)
                key |= nan << j
                inf += np.int64((x - x) != (x - x)) - nan  # x − x is NaN for ±inf too
            keys[i] = key
            n_inf += 1 if inf > 0 else 0
    return n_inf


@jit
def group_rows(ids, n_patterns):
    """Rows ordered by pattern: (``order`` (n,), ``pos`` (n,), ``starts`` (P + 1,)), the
    rows of pattern p ascending in ``order[starts[p]:starts[p + 1]]`` and row i at
    ``order[pos[i]]`` (a counting sort of the pattern ids ``ids`` (n,) in
    ``[0, n_patterns)``)."""
    n = ids.shape[0]
    starts = np.zeros(n_patterns + 1, dtype=np.intp)
    for i in range(n):
        starts[ids[i] + 1] += 1
    for p in range(n_patterns):
        starts[p + 1] += starts[p]
    fill = starts[:-1].copy()
    order = np.empty(n, dtype=np.intp)
    pos = np.empty(n, dtype=np.intp)
    for i in range(n):
        p = ids[i]
        order[fill[p]] = i
        pos[i] = fill[p]
        fill[p] += 1
    return order, pos, starts


@pjit
def sorted_rows(X, pos, Xs):
    """``Xs[pos[i]] = X[i]`` for every row with ``pos[i] < len(Xs)``: the rows copied in
    pattern order (:func:`group_rows`).  Reads X in its order and writes one stream per
    pattern, where reading X in pattern order would jump across it (benchmarks/NOTES.md)."""
    n, d = X.shape
    m = Xs.shape[0]
    nb = (n + ROW_BLOCK - 1) // ROW_BLOCK
    for b in prange(nb):
        for i in range(b * ROW_BLOCK, min(n, (b + 1) * ROW_BLOCK)):
            p = pos[i]
            if p < m:
                for j in range(d):
                    Xs[p, j] = X[i, j]


@jit
def number_keys(keys, d):
    """Pattern ids of the rows' keys (:func:`nan_keys`) in order of first appearance, by a
    table of the 2^d keys (d ≤ 20): (ids (n,), the keys of the patterns (P,))."""
    n = keys.shape[0]
    table = np.full(1 << d, -1, dtype=np.intp)
    ids = np.empty(n, dtype=np.intp)
    found = np.empty(min(n, 1 << d), dtype=np.int64)
    P = 0
    for i in range(n):
        k = keys[i]
        p = table[k]
        if p < 0:
            p = P
            table[k] = p
            found[p] = k
            P += 1
        ids[i] = p
    return ids, found[:P].copy()

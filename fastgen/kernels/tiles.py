"""Transposed tiles of rows: the building blocks of the kernels whose per-row work is
too narrow to vectorise row by row (a few coefficients per class, a few classes).

A tile holds T rows of X̃ (the intercept's column of ones included when fitted)
transposed, (p, T), so that every per-row step becomes a loop over the tile's rows,
which vectorises.  Used by the multinomial loss/gradient pass and Hessian-vector product
(:mod:`fastgen.kernels.irls`), the tiled information pass
(:mod:`fastgen.kernels.inference`) and the posteriors of linear scores
(:func:`linear_posteriors`: the pooled Gaussian model, multinomial logistic regression).
Gaussian naive Bayes scoring by the same tiles is no faster than its row-wise kernel,
whose d-term sums already vectorise (benchmarks/NOTES.md).
"""

import numpy as np
from numba import prange

from ._jit import REASSOC, jit, pjit
from .special import MODE_LOG_PROBA, exp_nonpos

__all__ = ["XT_TILE_ROWS", "SCORE_TILE_BLOCK", "LINEAR_TILE_MAX_D", "xt_tile_rows",
           "load_tile", "tile_scores", "tile_dots", "finish_tile", "linear_posteriors",
           "serves_linear_posteriors"]

#: Rows per transposed tile for p ≤ 24; half as many above, so that a tile of X̃ stays
#: within L1 (the best of 32, 64 and 128 rows: benchmarks/NOTES.md).
XT_TILE_ROWS = 128

#: Rows per work item of the scoring kernels that go by tiles (each work item takes its
#: tiles' scratch once); a row's result does not depend on it.
SCORE_TILE_BLOCK = 8192


@jit(inline="always")
def xt_tile_rows(p):
    """Rows per transposed tile for p coefficients per class (see ``XT_TILE_ROWS``)."""
    return XT_TILE_ROWS if p <= 24 else XT_TILE_ROWS // 2


@jit(inline="always")
def load_tile(X, w, weighted, fit_intercept, start, rows, Xt, wv):
    """Rows ``start:start+rows`` of X̃ (the intercept's column of ones included when
    fitted) transposed into ``Xt`` (p, T), their weights into ``wv``; the columns of a
    short last tile are zero, with weight 0.  The first step of the kernels that go by
    transposed tiles of rows, where every per-row step becomes a loop over the tile's
    rows (which vectorises; a loop over one row's few entries barely does)."""
    d = X.shape[1]
    p, T = Xt.shape
    for r in range(rows):
        for j in range(d):
            Xt[j, r] = X[start + r, j]
    if fit_intercept:
        for r in range(rows):
            Xt[d, r] = 1.0
    for j in range(p):
        for r in range(rows, T):
            Xt[j, r] = 0.0
    for r in range(rows):
        wv[r] = w[start + r] if weighted else 1.0
    for r in range(rows, T):
        wv[r] = 0.0


@jit(inline="always")
def tile_scores(C, Xt, rows, out):
    """``out[k, r] = Σ_j C[k, j] Xt[j, r]`` for the first ``rows`` columns of a
    transposed tile (:func:`load_tile`): the scores of a (K, p) coefficient table as
    axpys over the rows (the intercept is the tile's row of ones).

    Four coefficients per sweep over the rows: one load and one store of ``out[k]``
    serve four multiply-adds, where one axpy at a time is bound by its loads and
    stores."""
    K, p = C.shape
    for k in range(K):
        for r in range(rows):
            out[k, r] = 0.0
        j = 0
        while j + 4 <= p:
            c0 = C[k, j]
            c1 = C[k, j + 1]
            c2 = C[k, j + 2]
            c3 = C[k, j + 3]
            for r in range(rows):
                out[k, r] += ((c0 * Xt[j, r] + c1 * Xt[j + 1, r])
                              + (c2 * Xt[j + 2, r] + c3 * Xt[j + 3, r]))
            j += 4
        for jj in range(j, p):
            c = C[k, jj]
            for r in range(rows):
                out[k, r] += c * Xt[jj, r]


@jit(inline="always")
def tile_dots(U, Xt, rows, acc):
    """``acc[k, j] += Σ_r U[k, r] Xt[j, r]`` over the first ``rows`` columns of a
    transposed tile: the transpose of :func:`tile_scores`, four coefficients per sweep
    (one load of ``U[k, r]`` for four multiply-adds; four independent sums)."""
    K = U.shape[0]
    p = Xt.shape[0]
    for k in range(K):
        j = 0
        while j + 4 <= p:
            t0 = 0.0
            t1 = 0.0
            t2 = 0.0
            t3 = 0.0
            for r in range(rows):
                u = U[k, r]
                t0 += u * Xt[j, r]
                t1 += u * Xt[j + 1, r]
                t2 += u * Xt[j + 2, r]
                t3 += u * Xt[j + 3, r]
            acc[k, j] += t0
            acc[k, j + 1] += t1
            acc[k, j + 2] += t2
            acc[k, j + 3] += t3
            j += 4
        for jj in range(j, p):
            t = 0.0
            for r in range(rows):
                t += U[k, r] * Xt[jj, r]
            acc[k, jj] += t


@jit(inline="always")
def finish_tile(E, rows, mode, i0, sh, s, out):
    """Write the scores ``E`` (K, T) of rows ``i0:i0+rows`` to ``out`` (n, K) as log
    posteriors (``MODE_LOG_PROBA``) or posteriors (``MODE_PROBA``), as
    :func:`fastgen.kernels.special.finish_rows` finishes them (rows of all −inf give
    −inf or zeros), every step a loop over the tile's rows.  ``sh`` and ``s`` are (T,)
    scratch; ``E`` is overwritten.  Returns the number of rows with a NaN score or a
    non-finite maximum."""
    K = E.shape[0]
    for r in range(rows):
        sh[r] = -np.inf
        s[r] = 0.0  # NaN count first, then the sum of exponentials
    for k in range(K):
        for r in range(rows):
            v = E[k, r]
            sh[r] = max(sh[r], v)
            s[r] += 1.0 if v != v else 0.0
    bad = 0
    for r in range(rows):
        v = sh[r]
        if s[r] > 0.0 or v == np.inf or v == -np.inf:
            bad += 1
        if not v > -np.inf:
            sh[r] = 0.0  # a row of all −inf: exponentials 0 below
        s[r] = 0.0
    for k in range(K):
        for r in range(rows):  # every exponent ≤ 0
            e = exp_nonpos(E[k, r] - sh[r])
            s[r] += e
            if mode != MODE_LOG_PROBA:
                E[k, r] = e
    if mode == MODE_LOG_PROBA:
        for r in range(rows):  # a row of all −inf stays −inf
            s[r] = sh[r] + np.log(s[r]) if s[r] != 0.0 else np.inf
        for r in range(rows):
            for k in range(K):
                out[i0 + r, k] = E[k, r] - s[r]
    else:
        for r in range(rows):  # a row of all −inf gives zeros
            s[r] = 1.0 / s[r] if s[r] != 0.0 else 0.0
        for r in range(rows):
            for k in range(K):
                out[i0 + r, k] = E[k, r] * s[r]
    return bad


#: Largest d for which :func:`linear_posteriors` is used instead of a BLAS product and a
#: second normalising pass: faster up to d = 64, slower at d = 128
#: (benchmarks/NOTES.md).
LINEAR_TILE_MAX_D = 64


def serves_linear_posteriors(X, table_dtype):
    """Whether :func:`linear_posteriors` scores X for a model whose tables are of
    ``table_dtype``: dense C-contiguous float64 X with at most ``LINEAR_TILE_MAX_D``
    columns, float64 tables (the callers' one test before taking the tiled path)."""
    return (isinstance(X, np.ndarray) and X.ndim == 2 and X.dtype == np.float64
            and X.flags.c_contiguous and X.shape[1] <= LINEAR_TILE_MAX_D
            and np.dtype(table_dtype) == np.float64)


@jit(inline="always")
def _linear_tile(X, center, C, b, i0, rows, mode, Xt, E, sh, s, out):
    """Rows ``i0:i0+rows`` of :func:`linear_posteriors`: centred and transposed into
    ``Xt`` (d, T), scores ``E`` (K, T) by :func:`tile_scores` plus ``b``, then finished
    by :func:`finish_tile`."""
    d = X.shape[1]
    K = C.shape[0]
    for r in range(rows):
        for j in range(d):
            Xt[j, r] = X[i0 + r, j] - center[j]
    tile_scores(C, Xt, rows, E)
    for k in range(K):
        bk = b[k]
        for r in range(rows):
            E[k, r] += bk
    return finish_tile(E, rows, mode, i0, sh, s, out)


@pjit(fastmath=REASSOC)
def linear_posteriors(X, center, C, b, mode, out):
    """Posteriors (``MODE_PROBA``) or log posteriors (``MODE_LOG_PROBA``) of linear scores
    η_ik = (x_i − c)ᵀ C_k + b_k, float64, in one pass: the pooled Gaussian model
    (c the data's centre, C = Σ⁻¹(μ_k − c)) and multinomial logistic regression
    (c = 0, C the coefficients), normalised with the row maximum subtracted as
    :func:`fastgen.kernels.special.finish_rows` does.

    Rows go in transposed tiles (``xt_tile_rows(d)`` rows), so the scores, the
    exponentials and the normalisation are loops over a tile's rows, in L1, and the
    output is written once (a BLAS product writes the scores, then a second pass reads
    and rewrites them).  For d ≤ ``LINEAR_TILE_MAX_D``.

    Returns the number of rows with a NaN score or a non-finite maximum (which only a
    non-finite or overflowing x gives).
    """
    n = X.shape[0]
    B = SCORE_TILE_BLOCK
    nb = (n + B - 1) // B
    bad = 0
    # the work of a block lives in a serial helper, not inlined: a small parallel body
    # compiles far faster
    for blk in prange(nb):
        bad += _linear_block(X, center, C, b, mode, blk * B, min(n, (blk + 1) * B), out)
    return bad


@jit(fastmath=REASSOC)
def _linear_block(X, center, C, b, mode, lo, hi, out):
    """Rows ``lo:hi`` of :func:`linear_posteriors`, tile by tile: the number of bad rows
    among them."""
    d = X.shape[1]
    K = C.shape[0]
    T = xt_tile_rows(d)
    Xt = np.empty((d, T))
    E = np.empty((K, T))
    sh = np.empty(T)
    s = np.empty(T)
    bad = 0
    for i0 in range(lo, hi, T):
        bad += _linear_tile(X, center, C, b, i0, min(hi, i0 + T) - i0, mode, Xt, E, sh, s,
                            out)
    return bad

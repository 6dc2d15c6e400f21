"""The tiled multinomial inference pass: one GEMM of the class-pair coefficients
against the products x̃_a x̃_b of a tile of rows, instead of one SYRK per class pair
(faster for few coefficients and many class pairs; :func:`fastgen.kernels.inference.
use_tiles` decides).  Conventions as in :mod:`fastgen.kernels.inference`.
"""

import numpy as np
from numba import prange

from ._jit import REASSOC, jit, pjit
from .irls import pass_layout
from .special import exp_nonpos, sum_slots
from .tiles import load_tile, tile_scores

__all__ = ["INFERENCE_TILE_ROWS", "inference_pass_tiles"]

#: Rows per tile of :func:`inference_pass_tiles`: the best of 32-1024 rows
#: (benchmarks/NOTES.md).
INFERENCE_TILE_ROWS = 256


@jit(inline="always")
def _tile_probabilities(B, Xt, y, start, rows, wv, E, P, Qc, e0, mx):
    """Scores, reference-layout probabilities and log-likelihood of one tile, column
    by column (each loop runs over the tile's rows and vectorises).

    Writes ``E = B X̃ᵀ`` (m, T), ``P`` (m, T), ``Qc[k] = 1 − P_k`` summed from the other
    classes (no cancellation), as :func:`reference_probabilities` does row by row.
    Returns ``(Σ_r w_r log P_{r, y_r}, max |η| over rows of positive weight)``.
    """
    m, T = E.shape
    tile_scores(B, Xt, T, E)
    eta_max = 0.0
    for r in range(T):
        mx[r] = 0.0
    for k in range(m):
        for r in range(T):
            v = E[k, r]
            mx[r] = max(mx[r], v)
            if wv[r] > 0.0:
                eta_max = max(eta_max, abs(v))
    for r in range(T):
        e0[r] = exp_nonpos(-mx[r])
    for k in range(m):
        for r in range(T):
            P[k, r] = exp_nonpos(E[k, r] - mx[r])
    ll = 0.0
    for r in range(T):
        tot = e0[r]
        for k in range(m):
            tot += P[k, r]
        inv = 1.0 / tot
        e0[r] *= inv
        for k in range(m):
            P[k, r] *= inv
        if r < rows:
            yi = y[start + r]
            ll += wv[r] * ((E[yi - 1, r] if yi > 0 else 0.0) - (mx[r] + np.log(tot)))
    for k in range(m):
        for r in range(T):
            Qc[k, r] = e0[r]
        for l in range(m):
            if l != k:
                for r in range(T):
                    Qc[k, r] += P[l, r]
    return ll, eta_max


@jit(inline="always")
def _unvech(acc, row, p, k, l, sign, out):
    """Scatter ``sign · acc[row]`` (the p(p+1)/2 products x̃_a x̃_b, a ≤ b, summed with
    one class pair's coefficients) into the symmetric blocks (k, l) and (l, k) of
    ``out``, index ``k·p + a``."""
    t = 0
    for a in range(p):
        for b in range(a, p):
            v = sign * acc[row, t]
            out[k * p + a, l * p + b] = v
            out[l * p + b, k * p + a] = v
            out[k * p + b, l * p + a] = v
            out[l * p + a, k * p + b] = v
            t += 1


@jit(fastmath=REASSOC)
def _tiles_group(X, y, w, B, fit_intercept, weighted, store_r, want_meat, lo, hi, T,
                 R_out, gr, acc):
    """Rows ``lo:hi`` of :func:`inference_pass_tiles`, into one group's zeroed slots
    ``gr`` (m, p) and ``acc`` (nc, p(p+1)/2).  Returns ``(ll, max |η|)``."""
    m, p = gr.shape
    npair = m * (m + 1) // 2
    nc, nq = acc.shape
    Xt = np.zeros((p, T))
    E = np.zeros((m, T))
    P = np.zeros((m, T))
    Qc = np.zeros((m, T))
    R = np.zeros((m, T))
    e0 = np.zeros(T)
    mx = np.zeros(T)
    wv = np.zeros(T)
    C = np.zeros((nc, T))
    Q = np.zeros((nq, T))
    ll = 0.0
    eta_max = 0.0
    for start in range(lo, hi, T):
        rows = min(hi, start + T) - start
        load_tile(X, w, weighted, fit_intercept, start, rows, Xt, wv)
        lt, et = _tile_probabilities(B, Xt, y, start, rows, wv, E, P, Qc, e0, mx)
        ll += lt
        eta_max = max(eta_max, et)
        for k in range(m):
            for r in range(rows):
                yk = 1.0 if y[start + r] == k + 1 else 0.0
                R[k, r] = wv[r] * (yk - P[k, r])
            for r in range(rows, T):
                R[k, r] = 0.0
            if store_r:
                for r in range(rows):
                    R_out[start + r, k] = R[k, r]
        idx = 0
        for k in range(m):
            for l in range(k, m):
                for r in range(T):
                    C[idx, r] = wv[r] * P[k, r] * (Qc[k, r] if k == l else P[l, r])
                if want_meat:  # w r_k r_l = R_k R_l / w
                    for r in range(T):
                        C[npair + idx, r] = (R[k, r] * R[l, r] / wv[r]
                                             if wv[r] > 0.0 else 0.0)
                idx += 1
        t = 0
        for a in range(p):
            for b in range(a, p):
                for r in range(T):
                    Q[t, r] = Xt[a, r] * Xt[b, r]
                t += 1
        acc += np.dot(C, Q.T)
        gr += np.dot(R, Xt.T)
    return ll, eta_max


@pjit(fastmath=REASSOC)
def inference_pass_tiles(X, y, w, B, fit_intercept, bounds, tile, want_meat, R_out):
    """:func:`inference_pass` for the multinomial case (m ≥ 2) and small p, by tiles.

    Same arguments and results.  Rows go in tiles of ``tile`` rows, transposed so that
    every per-row step is a loop over the tile's rows (which vectorises; loops over one
    row's p or m entries barely do).  Every class-pair block of the information and of
    the meat is a weighted sum of the same products x̃_a x̃_b (a ≤ b), so per tile one
    GEMM of the pair coefficients (npair or 2·npair, T) against the products
    (p(p+1)/2, T) gives all of them: ``w P_k (1 − P_k)`` (diagonal blocks),
    ``w P_k P_l`` (minus the off-diagonal ones) and ``w r_k r_l`` (meat), with no
    square roots; a second GEMM gives the score.  Faster than the per-pair SYRKs for
    small p only (:func:`use_tiles`).  Callers hold BLAS at one thread.
    """
    n, d = X.shape
    m = B.shape[0]
    p, G, weighted = pass_layout(d, fit_intercept, bounds, w)
    mp = m * p
    npair = m * (m + 1) // 2
    nc = 2 * npair if want_meat else npair
    nq = p * (p + 1) // 2
    store_r = R_out.shape[0] > 0
    ll_s = np.zeros(G)
    eta_max_slots = np.zeros(G)
    g_s = np.zeros((G, m, p))
    a_s = np.zeros((G, nc, nq))
    # the per-group work lives in a serial helper, not inlined: a small parallel body
    # compiles far faster
    for gi in prange(G):
        ll, eta_max = _tiles_group(X, y, w, B, fit_intercept, weighted, store_r, want_meat,
                                   bounds[gi], bounds[gi + 1], tile, R_out, g_s[gi], a_s[gi])
        ll_s[gi] = ll
        eta_max_slots[gi] = eta_max
    acc = sum_slots(a_s)
    H = np.zeros((mp, mp))
    M = np.zeros((mp, mp)) if want_meat else np.zeros((1, 1))
    idx = 0
    for k in range(m):
        for l in range(k, m):
            _unvech(acc, idx, p, k, l, 1.0 if k == l else -1.0, H)
            if want_meat:
                _unvech(acc, npair + idx, p, k, l, 1.0, M)
            idx += 1
    return sum_slots(ll_s), sum_slots(g_s).reshape(-1), H, M, eta_max_slots.max()


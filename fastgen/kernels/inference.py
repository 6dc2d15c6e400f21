"""Kernels for inference after a logistic fit: the Hessian at the optimum in the
reference-class layout, sandwich "meat" matrices, cluster score sums, and the
hat-matrix diagonal of Firth's penalised likelihood.

Conventions are those of :mod:`fastgen.kernels.irls`: C-contiguous float32/float64
``X`` (n, d) or CSR as ``(indptr, indices, data, d)``; int32 class codes; a float64
weight vector or an empty one (all ones); float64 coefficients with the intercept, when
fitted, stored last (``x̃ = [x, 1]``, p = d + fit_intercept).  Rows are cut into groups
by ``bounds`` (chosen by the caller from the problem size alone); each group writes its
own slot and the slots are summed in group order, so results do not depend on the
thread count.  Callers hold BLAS at one thread around the dense kernels.

Kept separate on purpose: the dense kernels share the blocked row loop (group → blocks
of ``block`` rows → rows) and the CSR twins repeat their dense kernel's set-up, but the
per-row work differs; a shared driver would take that work as a function argument,
which numba's cache does not support.  The common steps are inline helpers.

Reference-class parametrisation (statsmodels' MNLogit, and binary as its m = 1 case):
``B`` has m rows, one per non-reference class; η_ik = x̃_iᵀB_k, η_i0 = 0 and
``P_ik = exp(η_ik) / (1 + Σ_l exp(η_il))``.  Binary: m = 1 and P_i1 = σ(η_i).
Parameters are indexed equation-major, ``k·p + j``.
"""

import numpy as np
from numba import prange

from ._jit import REASSOC, jit, pjit
from .blas import symmetrize_from_upper, syrk_upper, trmm_lower_rows
from .irls import expit, pass_layout, row_scores
from .irls_sparse import csr_row_dot
from .special import exp_nonpos, sum_slots
from .tiles import load_tile, tile_scores

#: Rows per tile of :func:`inference_pass_tiles` (measured best of 32-1024 at
#: p = 17 and 33, K = 5 and 10).
INFERENCE_TILE_ROWS = 256

__all__ = [
    "firth_packed_products",
    "reference_probabilities",
    "inference_pass",
    "inference_pass_csr",
    "inference_pass_tiles",
    "INFERENCE_TILE_ROWS",
    "use_tiles",
    "cluster_scores",
    "cluster_scores_csr",
    "sigmoid_pair",
    "firth_hat",
    "firth_hat_csr",
]


@jit(inline="always")
def sigmoid_pair(e):
    """``(σ(e), σ(−e), a)`` from one exponential ``a = e^{−|e|} ≤ 1``.

    To the bit the values of ``expit(e)`` and ``expit(−e)``, which take one exponential
    each; ``softplus(±e)`` is ``max(±e, 0) + log1p(a)``, again to the bit.
    """
    a = exp_nonpos(-abs(e))
    big = 1.0 / (1.0 + a)
    small = a / (1.0 + a)
    if e >= 0.0:
        return big, small, a
    return small, big, a


@jit(inline="always")
def reference_probabilities(eta, y, out_p, out_q):
    """Probabilities of the m non-reference classes from η (m,), and the log-likelihood.

    ``out_p[k] = P_k`` and ``out_q[k] = 1 − P_k`` computed as the sum of the other
    classes' probabilities (no cancellation when P_k → 1).  Returns log P_y (y = 0 is the
    reference class).
    """
    m = eta.shape[0]
    if m == 1:
        e = eta[0]
        out_p[0], out_q[0], a = sigmoid_pair(e)
        lg = np.log1p(a)
        if y == 1:
            return -((-e if e < 0.0 else 0.0) + lg)  # −softplus(−e)
        return -((e if e > 0.0 else 0.0) + lg)  # −softplus(e)
    # shifted by mx = max(0, max_k η_k): every exponent is ≤ 0 (exp_nonpos, no libm
    # call), tot ∈ [1, m + 1], and each probability is one division, not one more
    # exponential of η_k − logsumexp
    mx = 0.0
    for k in range(m):
        if eta[k] > mx:
            mx = eta[k]
    e0 = exp_nonpos(-mx)
    tot = e0
    for k in range(m):
        ek = exp_nonpos(eta[k] - mx)
        out_p[k] = ek
        tot += ek
    lse = mx + np.log(tot)
    inv = 1.0 / tot
    p0 = e0 * inv
    for k in range(m):
        out_p[k] *= inv
    for k in range(m):
        q = p0
        for l in range(m):
            if l != k:
                q += out_p[l]
        out_q[k] = q
    if y == 0:
        return -lse
    return eta[y - 1] - lse


@jit(inline="always")
def _binary_block(X, y, w, B, fit_intercept, weighted, store_r, want_meat, want_info,
                  start, stop, eta, pr, qr, Zs, Zm, gr, R_out, ll, em):
    """Rows ``start:stop`` of :func:`inference_pass` for m = 1: log-likelihood, score,
    (``want_info``) the SYRK rows ``√(w P (1 − P)) x̃`` and (``want_meat``) ``√w r x̃``,
    written straight from X in one loop (``eta``, ``pr``, ``qr`` are (1,) scratch).
    Returns the updated ``(ll, em)``."""
    d = X.shape[1]
    for i in range(start, stop):
        row = i - start
        wi = w[i] if weighted else 1.0
        row_scores(X, i, B, fit_intercept, eta)
        e = eta[0]
        if wi > 0.0 and abs(e) > em:
            em = abs(e)
        ll += wi * reference_probabilities(eta, y[i], pr, qr)
        r = qr[0] if y[i] == 1 else -pr[0]
        if store_r:
            R_out[i, 0] = wi * r
        wr = wi * r
        q = np.sqrt(wi * pr[0] * qr[0])
        if want_info:
            for j in range(d):
                x = X[i, j]
                gr[j] += wr * x
                Zs[row, j] = q * x
        else:
            for j in range(d):
                gr[j] += wr * X[i, j]
        if fit_intercept:
            gr[d] += wr
            Zs[row, d] = q
        if want_meat:
            sw = np.sqrt(wi) * r
            for j in range(d):
                Zm[row, j] = sw * X[i, j]
            if fit_intercept:
                Zm[row, d] = sw
    return ll, em


@jit(fastmath=REASSOC)
def _binary_group(X, y, w, B, fit_intercept, weighted, store_r, want_meat, want_info,
                  lo, hi, block, R_out, gr, Hp, Mg):
    """Rows ``lo:hi`` of :func:`inference_pass` for m = 1, into one group's zeroed
    slots ``gr`` (p,), ``Hp`` (1, p, p) and ``Mg``.  Returns ``(ll, max |η|)``."""
    p = gr.shape[0]
    mm = Mg.shape[0]
    Zs = np.zeros((block, p))
    Zm = np.zeros((block if want_meat else 1, mm))
    eta = np.zeros(1)
    pr = np.zeros(1)
    qr = np.zeros(1)
    ll = 0.0
    em = 0.0
    for start in range(lo, hi, block):
        stop = min(hi, start + block)
        rows = stop - start
        # one fused row loop writes the SYRK rows √(w P Q) x̃ straight from X (no copy
        # of the block, no second loop over it)
        ll, em = _binary_block(X, y, w, B, fit_intercept, weighted, store_r,
                               want_meat, want_info, start, stop, eta, pr, qr,
                               Zs, Zm, gr, R_out, ll, em)
        if want_info:
            syrk_upper(Zs, rows, Hp[0])
        if want_meat:
            syrk_upper(Zm, rows, Mg)
    return ll, em


@jit(fastmath=REASSOC)
def _multinomial_group(X, y, w, B, fit_intercept, weighted, store_r, want_meat,
                       want_info, lo, hi, block, R_out, gr, Hp, Mg):
    """Rows ``lo:hi`` of :func:`inference_pass` for m ≥ 2, into one group's zeroed
    slots ``gr`` (m·p,), ``Hp`` (npair, p, p) and ``Mg``.  Returns ``(ll, max |η|)``."""
    d = X.shape[1]
    m = B.shape[0]
    p = d + 1 if fit_intercept else d
    mm = Mg.shape[0]
    Xt = np.zeros((block, p))
    Zs = np.zeros((block, p))
    Zm = np.zeros((block if want_meat else 1, mm))
    Pb = np.zeros((block, m))
    Qb = np.zeros((block, m))
    Wb = np.zeros(block)
    eta = np.zeros(m)
    pr = np.zeros(m)
    qr = np.zeros(m)
    ll = 0.0
    em = 0.0
    for start in range(lo, hi, block):
        stop = min(hi, start + block)
        rows = stop - start
        for i in range(start, stop):
            row = i - start
            wi = w[i] if weighted else 1.0
            for j in range(d):
                Xt[row, j] = X[i, j]
            if fit_intercept:
                Xt[row, d] = 1.0
            row_scores(X, i, B, fit_intercept, eta)
            for k in range(m):
                if wi > 0.0 and abs(eta[k]) > em:
                    em = abs(eta[k])
            ll += wi * reference_probabilities(eta, y[i], pr, qr)
            Wb[row] = wi
            sw = np.sqrt(wi)
            for k in range(m):
                Pb[row, k] = pr[k]
                Qb[row, k] = qr[k]
                r = (1.0 if y[i] == k + 1 else 0.0) - pr[k]
                if store_r:
                    R_out[i, k] = wi * r
                for j in range(p):
                    gr[k * p + j] += wi * r * Xt[row, j]
                if want_meat:
                    for j in range(p):
                        Zm[row, k * p + j] = sw * r * Xt[row, j]
        idx = 0
        for k in range(m if want_info else 0):
            for l in range(k, m):
                if k == l:
                    for row in range(rows):
                        a = np.sqrt(Wb[row] * Pb[row, k] * Qb[row, k])
                        for j in range(p):
                            Zs[row, j] = a * Xt[row, j]
                    syrk_upper(Zs, rows, Hp[idx])
                else:
                    # −w P_k P_l ≤ 0: the block is −SYRK of √(w P_k P_l) x̃, half
                    # the flops of a GEMM (its sign is applied once, at the end)
                    for row in range(rows):
                        a = np.sqrt(Wb[row] * Pb[row, k] * Pb[row, l])
                        for j in range(p):
                            Zs[row, j] = a * Xt[row, j]
                    syrk_upper(Zs, rows, Hp[idx])
                idx += 1
        if want_meat:
            syrk_upper(Zm, rows, Mg)
    return ll, em


@pjit(fastmath=REASSOC)
def inference_pass(X, y, w, B, fit_intercept, bounds, block, want_meat, R_out,
                   want_info=True):
    """Log-likelihood, score, Hessian and (optionally) sandwich meat in one pass over X.

    With P_ik the fitted probabilities (reference layout, see the module docstring),
    residuals r_ik = [y_i = k] − P_ik (k = 1..m) and weights w_i:

    * ``llf = Σ_i w_i log P_{i,y_i}``,
    * score ``g_{k·p+j} = Σ_i w_i r_ik x̃_ij``,
    * negative Hessian (Fisher information)
      ``H_(k,l) = Σ_i w_i (δ_kl P_ik − P_ik P_il) x̃_i x̃_iᵀ``: per block, diagonal blocks by
      SYRK of ``√(w_i P_ik (1 − P_ik)) x̃_i`` (1 − P_ik summed from the other classes, so
      no cancellation as P_ik → 1), off-diagonal blocks (symmetric too) as minus the
      SYRK of ``√(w_i P_ik P_il) x̃_i``;
    * meat ``M = Σ_i w_i (r_i ⊗ x̃_i)(r_i ⊗ x̃_i)ᵀ`` (if ``want_meat``; else 1×1 zero), per
      block the SYRK of ``√w_i (r_i ⊗ x̃_i)``: with integer w this is the meat of the
      rows repeated w_i times.

    If ``R_out`` has n rows it receives ``w_i r_ik`` (for cluster sums).  With
    ``want_info=False`` H is left zero (no SYRK): llf, g and max|η| are the same, bit
    for bit, as with it (the check that data are those of an earlier pass, see
    :mod:`fastgen.logistic.inference`).

    Returns ``(llf, g (m·p,), H (m·p, m·p), M, max_ik |η_ik|)``.
    """
    n, d = X.shape
    m = B.shape[0]
    p, G, weighted = pass_layout(d, fit_intercept, bounds, w)
    mp = m * p
    store_r = R_out.shape[0] > 0
    npair = m * (m + 1) // 2
    mm = mp if want_meat else 1
    ll_s = np.zeros(G)
    em_s = np.zeros(G)
    g_s = np.zeros((G, mp))
    h_s = np.zeros((G, npair, p, p))
    m_s = np.zeros((G, mm, mm))
    # the per-group work lives in serial helpers, not inlined: a small parallel body
    # compiles far faster, and each helper is compiled (and cached) once
    for gi in prange(G):
        if m == 1:
            ll, em = _binary_group(X, y, w, B, fit_intercept, weighted, store_r,
                                   want_meat, want_info, bounds[gi], bounds[gi + 1],
                                   block, R_out, g_s[gi], h_s[gi], m_s[gi])
        else:
            ll, em = _multinomial_group(X, y, w, B, fit_intercept, weighted, store_r,
                                        want_meat, want_info, bounds[gi], bounds[gi + 1],
                                        block, R_out, g_s[gi], h_s[gi], m_s[gi])
        ll_s[gi] = ll
        em_s[gi] = em
    Hp = sum_slots(h_s)
    M = sum_slots(m_s)
    H = np.zeros((mp, mp))
    idx = 0
    for k in range(m):
        for l in range(k, m):
            sign = 1.0 if k == l else -1.0
            for a in range(p):
                for b in range(p):
                    v = sign * (Hp[idx, a, b] if a <= b else Hp[idx, b, a])
                    H[k * p + a, l * p + b] = v
                    H[l * p + b, k * p + a] = v
            idx += 1
    if want_meat:
        symmetrize_from_upper(M)
    return sum_slots(ll_s), sum_slots(g_s), H, M, em_s.max()


def use_tiles(m, p):
    """Whether :func:`inference_pass_tiles` beats :func:`inference_pass` for m
    non-reference classes and p coefficients per class.

    Measured on 2 cores (n = 1e5-2e5): tiles 2.2× faster at p = 17, m = 4 and 2.0× at
    p = 33, m = 9; 1.8× at p = 41, m = 9; even at p = 41-49, m = 4; slower at p = 33,
    m = 2 (1.4×), p = 65, m = 4 (1.3×) and p = 129, m = 2 (3×): forming the p(p+1)/2
    products of each row costs more than the SYRKs save once p is large, the sooner the
    fewer class pairs share them.
    """
    return m >= 2 and (p <= 24 or (m >= 4 and p <= 44))


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
    em = 0.0
    for r in range(T):
        mx[r] = 0.0
    for k in range(m):
        for r in range(T):
            v = E[k, r]
            mx[r] = max(mx[r], v)
            if wv[r] > 0.0:
                em = max(em, abs(v))
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
    return ll, em


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
    em = 0.0
    for start in range(lo, hi, T):
        rows = min(hi, start + T) - start
        load_tile(X, w, weighted, fit_intercept, start, rows, Xt, wv)
        lt, et = _tile_probabilities(B, Xt, y, start, rows, wv, E, P, Qc, e0, mx)
        ll += lt
        em = max(em, et)
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
    return ll, em


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
    T = tile
    ll_s = np.zeros(G)
    em_s = np.zeros(G)
    g_s = np.zeros((G, m, p))
    a_s = np.zeros((G, nc, nq))
    # the per-group work lives in a serial helper, not inlined: a small parallel body
    # compiles far faster
    for gi in prange(G):
        ll, em = _tiles_group(X, y, w, B, fit_intercept, weighted, store_r, want_meat,
                              bounds[gi], bounds[gi + 1], tile, R_out, g_s[gi], a_s[gi])
        ll_s[gi] = ll
        em_s[gi] = em
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
    return sum_slots(ll_s), sum_slots(g_s).reshape(-1), H, M, em_s.max()


@jit
def _csr_group(indptr, indices, data, d, y, w, B, fit_intercept, weighted, store_r,
               want_info, want_meat, lo, hi, R_out, g_out, h_out, m_out):
    """Rows ``lo:hi`` of :func:`inference_pass_csr`, into one group's slots ``g_out``
    (m·p,), ``h_out`` (m·p, m·p) and ``m_out``.  Returns ``(ll, max |η|)``."""
    m = B.shape[0]
    p = d + 1 if fit_intercept else d
    # sums in arrays of its own (they alias nothing), copied to the slots at the end
    gr = np.zeros(g_out.shape[0])
    H = np.zeros((h_out.shape[0], h_out.shape[1]))
    Mg = np.zeros((m_out.shape[0], m_out.shape[1]))
    eta = np.zeros(m)
    pr = np.zeros(m)
    qr = np.zeros(m)
    r = np.zeros(m)
    ll = 0.0
    em = 0.0
    for i in range(lo, hi):
        wi = w[i] if weighted else 1.0
        a0 = indptr[i]
        a1 = indptr[i + 1]
        for k in range(m):
            e = B[k, d] if fit_intercept else 0.0
            for t in range(a0, a1):
                e += data[t] * B[k, indices[t]]
            eta[k] = e
            if wi > 0.0 and abs(e) > em:
                em = abs(e)
        ll += wi * reference_probabilities(eta, y[i], pr, qr)
        for k in range(m):
            r[k] = (1.0 if y[i] == k + 1 else 0.0) - pr[k]
            if store_r:
                R_out[i, k] = wi * r[k]
            for t in range(a0, a1):
                gr[k * p + indices[t]] += wi * r[k] * data[t]
            if fit_intercept:
                gr[k * p + d] += wi * r[k]
        for k in range(m if (want_info or want_meat) else 0):
            for l in range(m):
                c = wi * (pr[k] * qr[k] if k == l else -pr[k] * pr[l])
                cm = wi * r[k] * r[l]
                for t in range(a0, a1):
                    ja = k * p + indices[t]
                    xa = data[t]
                    for u in range(a0, a1):
                        jb = l * p + indices[u]
                        H[ja, jb] += c * xa * data[u]
                        if want_meat:
                            Mg[ja, jb] += cm * xa * data[u]
                    if fit_intercept:
                        H[ja, l * p + d] += c * xa
                        H[l * p + d, ja] += c * xa
                        if want_meat:
                            Mg[ja, l * p + d] += cm * xa
                            Mg[l * p + d, ja] += cm * xa
                if fit_intercept:
                    H[k * p + d, l * p + d] += c
                    if want_meat:
                        Mg[k * p + d, l * p + d] += cm
    for a in range(H.shape[0]):
        g_out[a] = gr[a]
        for b in range(H.shape[1]):
            h_out[a, b] = H[a, b]
    for a in range(Mg.shape[0]):
        for b in range(Mg.shape[1]):
            m_out[a, b] = Mg[a, b]
    return ll, em


@pjit
def inference_pass_csr(indptr, indices, data, d, y, w, B, fit_intercept, bounds,
                       want_meat, R_out, want_info=True):
    """CSR twin of :func:`inference_pass` (per-row outer products over stored values:
    O(nnz_i² · m²) per row; none with ``want_info=False`` and no meat)."""
    m = B.shape[0]
    p, G, weighted = pass_layout(d, fit_intercept, bounds, w)
    mp = m * p
    store_r = R_out.shape[0] > 0
    mm = mp if want_meat else 1
    ll_s = np.zeros(G)
    em_s = np.zeros(G)
    g_s = np.zeros((G, mp))
    h_s = np.zeros((G, mp, mp))
    m_s = np.zeros((G, mm, mm))
    # the per-group work lives in a serial helper, not inlined: a small parallel body
    # compiles far faster
    for gi in prange(G):
        ll, em = _csr_group(indptr, indices, data, d, y, w, B, fit_intercept, weighted,
                            store_r, want_info, want_meat, bounds[gi], bounds[gi + 1],
                            R_out, g_s[gi], h_s[gi], m_s[gi])
        ll_s[gi] = ll
        em_s[gi] = em
    return sum_slots(ll_s), sum_slots(g_s), sum_slots(h_s), sum_slots(m_s), em_s.max()


@jit
def cluster_scores(X, R, groups, n_groups, fit_intercept):
    """Per-cluster score sums ``S[c, k·p + j] = Σ_{i: groups_i = c} R_ik x̃_ij``.

    ``R`` (n, m) holds the weighted residuals ``w_i r_ik`` written by
    :func:`inference_pass`; ``groups`` are int64 codes in [0, n_groups).  Serial: one
    pass of n·m·p multiply-adds (memory-bound), whatever the number of clusters.
    """
    n, d = X.shape
    m = R.shape[1]
    p = d + 1 if fit_intercept else d
    S = np.zeros((n_groups, m * p))
    for i in range(n):
        c = groups[i]
        for k in range(m):
            rk = R[i, k]
            o = k * p
            for j in range(d):
                S[c, o + j] += rk * X[i, j]
            if fit_intercept:
                S[c, o + d] += rk
    return S


@jit
def cluster_scores_csr(indptr, indices, data, d, R, groups, n_groups, fit_intercept):
    """CSR twin of :func:`cluster_scores`."""
    n = indptr.shape[0] - 1
    m = R.shape[1]
    p = d + 1 if fit_intercept else d
    S = np.zeros((n_groups, m * p))
    for i in range(n):
        c = groups[i]
        for k in range(m):
            rk = R[i, k]
            o = k * p
            for t in range(indptr[i], indptr[i + 1]):
                S[c, o + indices[t]] += rk * data[t]
            if fit_intercept:
                S[c, o + d] += rk
    return S


@pjit(fastmath=REASSOC)
def firth_hat(X, w, coef, Linv, fit_intercept, bounds, block, h_out):
    """Hat-matrix diagonal of the weighted fit and Firth's score correction, one pass.

    With π_i = σ(x̃_iᵀβ), s_i = w_i π_i(1 − π_i) and H = L Lᵀ = X̃ᵀ diag(s) X̃ (the caller
    passes ``Linv = L⁻¹``), the leverages of ``diag(√s) X̃ H⁻¹ X̃ᵀ diag(√s)`` are

        h_i = s_i x̃_iᵀ H⁻¹ x̃_i = ‖L⁻¹ (√s_i x̃_i)‖²,

    per block one TRMM of the √s-scaled rows.  Firth's modified score adds
    ``c = Σ_i h_i (½ − π_i) x̃_i`` to the ordinary score ``Σ_i w_i (y_i − π_i) x̃_i``
    (the gradient of ½ log det H).  If ``h_out`` has n entries it receives h.

    Returns ``(c (p,), Σ_i h_i)`` (the trace equals p when H is nonsingular).
    """
    n, d = X.shape
    p, G, weighted = pass_layout(d, fit_intercept, bounds, w)
    store = h_out.shape[0] > 0
    b0 = coef[d] if fit_intercept else 0.0
    c_s = np.zeros((G, p))
    t_s = np.zeros(G)
    for gi in prange(G):
        Z = np.zeros((block, p))
        half = np.zeros(block)
        c = np.zeros(p)
        tr = 0.0
        lo = bounds[gi]
        hi = bounds[gi + 1]
        for start in range(lo, hi, block):
            stop = min(hi, start + block)
            rows = stop - start
            for i in range(start, stop):
                row = i - start
                e = b0
                for j in range(d):
                    e += X[i, j] * coef[j]
                wi = w[i] if weighted else 1.0
                pe, qe, _ = sigmoid_pair(e)
                q = np.sqrt(wi * pe * qe)
                half[row] = 0.5 - pe
                for j in range(d):
                    Z[row, j] = q * X[i, j]
                if fit_intercept:
                    Z[row, d] = q
            trmm_lower_rows(Linv, Z, rows)
            for i in range(start, stop):
                row = i - start
                h = 0.0
                for j in range(p):
                    h += Z[row, j] * Z[row, j]
                if store:
                    h_out[i] = h
                tr += h
                a = h * half[row]
                for j in range(d):
                    c[j] += a * X[i, j]
                if fit_intercept:
                    c[d] += a
        c_s[gi] = c
        t_s[gi] = tr
    return sum_slots(c_s), sum_slots(t_s)


@pjit
def firth_hat_csr(indptr, indices, data, d, w, coef, Linv, fit_intercept, bounds, h_out):
    """CSR twin of :func:`firth_hat`: ``L⁻¹x̃_i = Σ_t x_it L⁻¹[:, j_t]`` (+ the last
    column for the intercept), O(nnz_i · p) per row."""
    # Kept separate on purpose from irls_sparse.binary_loss_grad_hess_csr, whose row
    # start (η_i, w_i) it shares: the solver's pass there, the leverages through L⁻¹ here.
    p, G, weighted = pass_layout(d, fit_intercept, bounds, w)
    store = h_out.shape[0] > 0
    b0 = coef[d] if fit_intercept else 0.0
    LinvT = np.ascontiguousarray(Linv.T)
    c_s = np.zeros((G, p))
    t_s = np.zeros(G)
    for gi in prange(G):
        z = np.zeros(p)
        c = np.zeros(p)
        tr = 0.0
        for i in range(bounds[gi], bounds[gi + 1]):
            a0 = indptr[i]
            a1 = indptr[i + 1]
            e = csr_row_dot(indices, data, a0, a1, coef, b0)
            wi = w[i] if weighted else 1.0
            s = wi * expit(e) * expit(-e)
            for j in range(p):
                z[j] = 0.0
            for t in range(a0, a1):
                jc = indices[t]
                v = data[t]
                for j in range(jc, p):  # L⁻¹ is lower triangular: rows j ≥ jc
                    z[j] += v * LinvT[jc, j]
            if fit_intercept:
                z[d] += LinvT[d, d]
            h = 0.0
            for j in range(p):
                h += z[j] * z[j]
            h *= s
            if store:
                h_out[i] = h
            tr += h
            a = h * (0.5 - expit(e))
            for t in range(a0, a1):
                c[indices[t]] += a * data[t]
            if fit_intercept:
                c[d] += a
        c_s[gi] = c
        t_s[gi] = tr
    return sum_slots(c_s), sum_slots(t_s)


_SQRT2 = 1.4142135623730951


@pjit
def firth_packed_products(ZT, AX, G):
    """``G += P @ AX`` where P's rows are the packed upper triangles of z_i z_iᵀ:
    row o(j, k) = √2·z_ij·z_ik for k > j and z_ij² for k = j (j-major, o(j, j) =
    j·p − j(j − 1)/2), z_i the columns of ``ZT`` (p, rows) and ``AX`` (rows, q).

    The product that dominates Firth's curvature pass
    (:meth:`fastgen.logistic.firth._Penalised.curvature`), p(p + 1)/2 · rows · q
    multiply-adds.  The work goes by pairs of triangle rows j and p − 1 − j (p + 1
    packed rows per pair), each pair building its own block of P and multiplying it
    by BLAS: every row of G is written by one task, in the same order for any thread
    count.  The caller holds BLAS at one thread (numba's ``np.dot`` calls it from
    each task).  Measured on 2 cores, p = 31, 939 rows: 0.82 ms against 1.29 ms for
    building P with numpy and one BLAS product.
    """
    p, rows = ZT.shape
    q = AX.shape[1]
    half = (p + 1) // 2
    for t in prange(half):
        for u in range(2 if p - 1 - t > t else 1):
            j = t + u * (p - 1 - 2 * t)  # t, then p - 1 - t
            m = p - j
            P = np.empty((m, rows))
            for i in range(rows):
                P[0, i] = ZT[j, i] * ZT[j, i]
            for k in range(j + 1, p):
                for i in range(rows):
                    P[k - j, i] = (ZT[j, i] * _SQRT2) * ZT[k, i]
            R = np.dot(P, AX)
            o = j * p - (j * (j - 1)) // 2
            for r in range(m):
                for c in range(q):
                    G[o + r, c] += R[r, c]

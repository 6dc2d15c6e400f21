"""Kernels for inference after a logistic fit: the Hessian at the optimum in the
reference-class layout, sandwich "meat" matrices and cluster score sums (the tiled
multinomial pass in :mod:`.inference_tiles`, Firth's kernels in :mod:`.firth`; all
importable from here).

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

from typing import NamedTuple

import numpy as np
from numba import prange

from ._jit import REASSOC, jit, pjit
from .blas import symmetrize_from_upper, syrk_upper
from .firth import firth_hat, firth_hat_csr, firth_packed_products
from .inference_tiles import INFERENCE_TILE_ROWS, inference_pass_tiles
from .irls import pass_layout, row_scores
from .reference_class import reference_probabilities, sigmoid_pair
from .special import sum_slots

__all__ = [
    "PassData",
    "CsrPassData",
    "PassOptions",
    "GroupSlots",
    "firth_packed_products",
    "reference_probabilities",
    "inference_pass",
    "inference_pass_binary",
    "inference_pass_multinomial",
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


class PassData(NamedTuple):
    """What a dense pass reads: X (n, d), the class codes y, the weights w (empty: all
    ones), the coefficients B (m, p), and ``R_out``, which receives w_i r_ik when it
    has n rows."""

    X: np.ndarray
    y: np.ndarray
    w: np.ndarray
    B: np.ndarray
    R_out: np.ndarray


class CsrPassData(NamedTuple):
    """What a CSR pass reads: :class:`PassData` with X as its CSR arrays and d."""

    indptr: np.ndarray
    indices: np.ndarray
    data: np.ndarray
    d: int
    y: np.ndarray
    w: np.ndarray
    B: np.ndarray
    R_out: np.ndarray


class PassOptions(NamedTuple):
    """What a pass computes: the intercept's column, whether w holds weights, whether
    to store the residuals, form the meat and form the information."""

    fit_intercept: bool
    weighted: bool
    store_r: bool
    want_meat: bool
    want_info: bool


class GroupSlots(NamedTuple):
    """One group's zeroed slots: the score ``g``, the information ``H`` and the meat
    ``M`` (shapes per kernel)."""

    g: np.ndarray
    H: np.ndarray
    M: np.ndarray


@jit(inline="always")
def _binary_block(data, opts, start, stop, eta, pr, qr, Zs, Zm, gr, ll, eta_max):
    """Rows ``start:stop`` of :func:`inference_pass` for m = 1: log-likelihood, score,
    (``want_info``) the SYRK rows ``√(w P (1 − P)) x̃`` and (``want_meat``) ``√w r x̃``,
    written straight from X in one loop (``eta``, ``pr``, ``qr`` are (1,) scratch).
    Returns the updated ``(ll, eta_max)``."""
    X, y, w, B, R_out = data
    fit_intercept, weighted, store_r, want_meat, want_info = opts
    d = X.shape[1]
    for i in range(start, stop):
        row = i - start
        wi = w[i] if weighted else 1.0
        row_scores(X, i, B, fit_intercept, eta)
        e = eta[0]
        if wi > 0.0 and abs(e) > eta_max:
            eta_max = abs(e)
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
            sqrt_w_r = np.sqrt(wi) * r
            for j in range(d):
                Zm[row, j] = sqrt_w_r * X[i, j]
            if fit_intercept:
                Zm[row, d] = sqrt_w_r
    return ll, eta_max


@jit(fastmath=REASSOC)
def _binary_group(data, opts, lo, hi, block, slots):
    """Rows ``lo:hi`` of :func:`inference_pass` for m = 1, into one group's zeroed
    slots: g (p,), H (1, p, p) and M.  Returns ``(ll, max |η|)``."""
    gr, Hp, Mg = slots
    want_meat, want_info = opts.want_meat, opts.want_info
    p = gr.shape[0]
    mm = Mg.shape[0]
    Zs = np.zeros((block, p))
    Zm = np.zeros((block if want_meat else 1, mm))
    eta = np.zeros(1)
    pr = np.zeros(1)
    qr = np.zeros(1)
    ll = 0.0
    eta_max = 0.0
    for start in range(lo, hi, block):
        stop = min(hi, start + block)
        rows = stop - start
        # one fused row loop writes the SYRK rows √(w P Q) x̃ straight from X (no copy
        # of the block, no second loop over it)
        ll, eta_max = _binary_block(data, opts, start, stop, eta, pr, qr, Zs, Zm, gr,
                                    ll, eta_max)
        if want_info:
            syrk_upper(Zs, rows, Hp[0])
        if want_meat:
            syrk_upper(Zm, rows, Mg)
    return ll, eta_max


@jit(fastmath=REASSOC)
def _multinomial_group(data, opts, lo, hi, block, slots):
    """Rows ``lo:hi`` of :func:`inference_pass` for m ≥ 2, into one group's zeroed
    slots: g (m·p,), H (npair, p, p) and M.  Returns ``(ll, max |η|)``."""
    X, y, w, B, R_out = data
    fit_intercept, weighted, store_r, want_meat, want_info = opts
    gr, Hp, Mg = slots
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
    eta_max = 0.0
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
                if wi > 0.0 and abs(eta[k]) > eta_max:
                    eta_max = abs(eta[k])
            ll += wi * reference_probabilities(eta, y[i], pr, qr)
            Wb[row] = wi
            sqrt_w = np.sqrt(wi)
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
                        Zm[row, k * p + j] = sqrt_w * r * Xt[row, j]
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
    return ll, eta_max


@jit(fastmath=REASSOC)
def _finish_pass(ll_s, eta_max_slots, g_s, h_s, m_s, m, p, want_meat):
    """The slots of a dense pass summed in group order: ``(llf, g, H, M, max|η|)``,
    H assembled from its upper SYRK blocks (off-diagonal class pairs negated)."""
    mp = m * p
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
    return sum_slots(ll_s), sum_slots(g_s), H, M, eta_max_slots.max()


# One parallel kernel per case, each calling its serial per-group helper (not inlined: a
# small parallel body compiles far faster, and a call compiles only the helper it needs).


@pjit(fastmath=REASSOC)
def inference_pass_binary(X, y, w, B, fit_intercept, bounds, block, want_meat, R_out,
                          want_info=True):
    """:func:`inference_pass` for m = 1 (``B`` of one row)."""
    d = X.shape[1]
    p, G, weighted = pass_layout(d, fit_intercept, bounds, w)
    store_r = R_out.shape[0] > 0
    mm = p if want_meat else 1
    ll_s = np.zeros(G)
    eta_max_slots = np.zeros(G)
    g_s = np.zeros((G, p))
    h_s = np.zeros((G, 1, p, p))
    m_s = np.zeros((G, mm, mm))
    data = PassData(X, y, w, B, R_out)
    opts = PassOptions(fit_intercept, weighted, store_r, want_meat, want_info)
    for gi in prange(G):
        ll, eta_max = _binary_group(data, opts, bounds[gi], bounds[gi + 1], block,
                                    GroupSlots(g_s[gi], h_s[gi], m_s[gi]))
        ll_s[gi] = ll
        eta_max_slots[gi] = eta_max
    return _finish_pass(ll_s, eta_max_slots, g_s, h_s, m_s, 1, p, want_meat)


@pjit(fastmath=REASSOC)
def inference_pass_multinomial(X, y, w, B, fit_intercept, bounds, block, want_meat,
                               R_out, want_info=True):
    """:func:`inference_pass` for m ≥ 2 (``B`` of m rows)."""
    d = X.shape[1]
    m = B.shape[0]
    p, G, weighted = pass_layout(d, fit_intercept, bounds, w)
    store_r = R_out.shape[0] > 0
    mm = m * p if want_meat else 1
    ll_s = np.zeros(G)
    eta_max_slots = np.zeros(G)
    g_s = np.zeros((G, m * p))
    h_s = np.zeros((G, m * (m + 1) // 2, p, p))
    m_s = np.zeros((G, mm, mm))
    data = PassData(X, y, w, B, R_out)
    opts = PassOptions(fit_intercept, weighted, store_r, want_meat, want_info)
    for gi in prange(G):
        ll, eta_max = _multinomial_group(data, opts, bounds[gi], bounds[gi + 1], block,
                                         GroupSlots(g_s[gi], h_s[gi], m_s[gi]))
        ll_s[gi] = ll
        eta_max_slots[gi] = eta_max
    return _finish_pass(ll_s, eta_max_slots, g_s, h_s, m_s, m, p, want_meat)


@jit
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

    Returns ``(llf, g (m·p,), H (m·p, m·p), M, max_ik |η_ik|)``.  Runs
    :func:`inference_pass_binary` or :func:`inference_pass_multinomial` (a caller that
    knows m calls that one directly, which compiles only it).
    """
    if B.shape[0] == 1:
        return inference_pass_binary(X, y, w, B, fit_intercept, bounds, block, want_meat,
                                     R_out, want_info)
    return inference_pass_multinomial(X, y, w, B, fit_intercept, bounds, block, want_meat,
                                      R_out, want_info)


def use_tiles(m, p):
    """Whether :func:`inference_pass_tiles` beats :func:`inference_pass` for m
    non-reference classes and p coefficients per class.

    Tiles win for small p with several class pairs: forming the p(p+1)/2 products of
    each row costs more than the SYRKs save once p is large, the sooner the fewer class
    pairs share them (the crossover is in benchmarks/NOTES.md).
    """
    return m >= 2 and (p <= 24 or (m >= 4 and p <= 44))


@jit
def _csr_group(csr, opts, lo, hi, slots):
    """Rows ``lo:hi`` of :func:`inference_pass_csr` (``csr`` a :class:`CsrPassData`),
    into one group's slots: g (m·p,), H (m·p, m·p) and M.  Returns ``(ll, max |η|)``."""
    indptr, indices, data, d, y, w, B, R_out = csr
    fit_intercept, weighted, store_r, want_meat, want_info = opts
    g_out, h_out, m_out = slots
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
    eta_max = 0.0
    for i in range(lo, hi):
        wi = w[i] if weighted else 1.0
        a0 = indptr[i]
        a1 = indptr[i + 1]
        for k in range(m):
            e = B[k, d] if fit_intercept else 0.0
            for t in range(a0, a1):
                e += data[t] * B[k, indices[t]]
            eta[k] = e
            if wi > 0.0 and abs(e) > eta_max:
                eta_max = abs(e)
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
    return ll, eta_max


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
    eta_max_slots = np.zeros(G)
    g_s = np.zeros((G, mp))
    h_s = np.zeros((G, mp, mp))
    m_s = np.zeros((G, mm, mm))
    # the per-group work lives in a serial helper, not inlined: a small parallel body
    # compiles far faster
    csr = CsrPassData(indptr, indices, data, d, y, w, B, R_out)
    opts = PassOptions(fit_intercept, weighted, store_r, want_meat, want_info)
    for gi in prange(G):
        ll, eta_max = _csr_group(csr, opts, bounds[gi], bounds[gi + 1],
                                 GroupSlots(g_s[gi], h_s[gi], m_s[gi]))
        ll_s[gi] = ll
        eta_max_slots[gi] = eta_max
    return sum_slots(ll_s), sum_slots(g_s), sum_slots(h_s), sum_slots(m_s), eta_max_slots.max()


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



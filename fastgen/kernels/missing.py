"""Scoring kernels for rows with missing features (NaN in X): one pass over the rows.

A row's NaN entries are its missing features m, the rest o.  Both kernels write the
joint log-likelihoods of the observed features, log π_k + log p(x_o | y=k), and finish
each block of rows per ``mode`` (:func:`fastgen.kernels.special.finish_rows`).  numpy
versions of the same formulas took 9-15× the complete-data scoring (many passes over
the rows and gathers per pattern; benchmarks/NOTES.md), hence one kernel pass.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from ._jit import REASSOC, pjit
from .special import ROW_BLOCK, finish_rows

__all__ = ["diagonal_marginal_scores", "shared_marginal_scores", "class_marginal_scores"]

LOG_2PI = 1.8378770664093453  # log 2π


@pjit(fastmath=REASSOC)
def diagonal_marginal_scores(X, means, inv_var, log_var, bias, mode, out):
    """Diagonal Gaussian scores over the observed features::

        jll_ik = bias_k − ½ Σ_{j: x_ij not NaN} [(x_ij − μ_kj)²/σ²_kj + log 2πσ²_kj].

    X (n, d) float32/float64 C-contiguous; means, inv_var, log_var (K, d) float64 (μ,
    1/σ², log 2πσ²); bias (K,) float64 (log π_k); out (n, K), written in place.
    Returns the number of rows with a NaN or non-finite maximum score.
    """
    n, d = X.shape
    K = bias.shape[0]
    nb = (n + ROW_BLOCK - 1) // ROW_BLOCK
    bad = 0
    for b in prange(nb):
        r0 = b * ROW_BLOCK
        r1 = min(n, r0 + ROW_BLOCK)
        for i in range(r0, r1):
            for k in range(K):
                s = 0.0
                for j in range(d):
                    x = np.float64(X[i, j])
                    if x == x:
                        t = x - means[k, j]
                        s += t * t * inv_var[k, j] + log_var[k, j]
                out[i, k] = bias[k] - 0.5 * s
        bad += finish_rows(out, r0, r1, mode)
    return bad


@pjit(fastmath=REASSOC)
def shared_marginal_scores(X, pattern_of, centre, precision, delta_t, Gt, cdd, idx_ptr,
                           idx, inv_ptr, inv, logdet_mm, bias, quadratic, mode, out):
    """Gaussian scores over the observed features for classes sharing one Σ.

    With z = P_o(x − c) (0 at the missing entries m) and r_k = z − P_oδ_k
    (δ_k = μ_k − c), the quadratic form of the observed block is
    r_kᵀΛr_k − uᵀΛ_mm⁻¹u with u = (Λr_k)_m, so::

        jll_ik = bias_k − ½(zᵀΛz − 2 zᵀΛP_oδ_k + δ_kᵀP_oΛP_oδ_k + log|Λ_mm|
                           + |o|·log 2π) + ½ ‖L_mm⁻¹ u‖²,

    every term from the class tables ``Gt`` (d, K) = [Λδ_1 … Λδ_K], ``delta_t`` (d, K) =
    [δ_1 … δ_K] and ``cdd`` (δ_kᵀΛδ_k) and the few missing entries
    (zᵀΛP_oδ_k = zᵀΛδ_k − (Λz)_mᵀδ_k,m, and so on), so that a row reads only the
    tables of its pattern that have its missing count's size: its
    missing columns ``idx[idx_ptr[p]:idx_ptr[p+1]]``, L_mm⁻¹ row-major in
    ``inv[inv_ptr[p]:...]`` and ``logdet_mm[p]``.  ``bias_k`` = log π_k − ½ log|Σ|.
    Without ``quadratic`` the term −½zᵀΛz, the same for every class, is left out (enough
    for posteriors and labels).  A row with every feature missing gets
    ``bias_k + ½ log|Σ|`` through ``cdd`` and ``logdet_mm`` (the caller sets it
    exactly).  Per row: d·K + s·d + s²·K products (and d² with ``quadratic``).
    """
    n, d = X.shape
    K = bias.shape[0]
    nb = (n + ROW_BLOCK - 1) // ROW_BLOCK
    bad = 0
    for b in prange(nb):
        r0 = b * ROW_BLOCK
        r1 = min(n, r0 + ROW_BLOCK)
        z = np.empty(d)
        u = np.empty((d, K))  # the inner loops run over the classes (contiguous)
        acc = np.empty(K)
        dd = np.empty(K)
        t = np.empty(K)
        for i in range(r0, r1):
            p = pattern_of[i]
            a0 = idx_ptr[p]
            s = idx_ptr[p + 1] - a0
            for j in range(d):
                x = np.float64(X[i, j])
                z[j] = x - centre[j] if x == x else 0.0
            q0 = 0.0
            if quadratic:
                for j in range(d):
                    v = 0.0
                    for m in range(d):
                        v += precision[j, m] * z[m]
                    q0 += z[j] * v
            for k in range(K):
                acc[k] = bias[k]
                dd[k] = cdd[k]
            for j in range(d):
                zj = z[j]
                if zj != 0.0:
                    for k in range(K):
                        acc[k] += zj * Gt[j, k]  # zᵀΛδ_k
            for a in range(s):
                ja = idx[a0 + a]
                v = 0.0
                for m in range(d):
                    v += precision[ja, m] * z[m]  # (Λz)_m
                for k in range(K):
                    t[k] = 0.0
                for c in range(s):
                    jc = idx[a0 + c]
                    lam = precision[ja, jc]
                    for k in range(K):
                        t[k] += lam * delta_t[jc, k]  # (ΛP_mδ_k)_m
                for k in range(K):
                    acc[k] -= v * delta_t[ja, k]
                    u[a, k] = v - Gt[ja, k] + t[k]  # (Λz − Λδ_k + ΛP_mδ_k)_m
                    dd[k] += delta_t[ja, k] * (t[k] - 2.0 * Gt[ja, k])
            const = logdet_mm[p] + (d - s) * LOG_2PI + q0
            for k in range(K):
                acc[k] -= 0.5 * (dd[k] + const)
            c0 = inv_ptr[p]
            for a in range(s):
                for k in range(K):
                    t[k] = 0.0
                for c in range(a + 1):
                    f = inv[c0 + a * s + c]
                    for k in range(K):
                        t[k] += f * u[c, k]
                for k in range(K):
                    acc[k] += 0.5 * t[k] * t[k]
            for k in range(K):
                out[i, k] = acc[k]
        bad += finish_rows(out, r0, r1, mode)
    return bad


@pjit(fastmath=REASSOC)
def class_marginal_scores(X, pattern_of, means, precision, const, idx_ptr, idx, inv_ptr,
                          inv, logdet_mm, mode, out):
    """Gaussian scores over the observed features, one Σ_k per class.

    With r = P_o(x − μ_k) and y = Λ_k r, the quadratic form of the observed block is
    rᵀy − ‖L_mm⁻¹ y_m‖² (the Schur complement of Λ_k,mm), so::

        jll_ik = const_k − ½(rᵀy − ‖L_k,mm⁻¹ y_m‖² + log|Λ_k,mm| + |o|·log 2π),

    const_k = log π_k − ½ log|Σ_k|; ``precision`` (K, d, d), per pattern p its missing
    columns ``idx[idx_ptr[p]:idx_ptr[p+1]]`` and per class L_k,mm⁻¹ row-major in
    ``inv[k, inv_ptr[p]:...]``, log|Λ_k,mm| in ``logdet_mm[k, p]``.  (A row with every
    feature missing gets log π_k up to rounding; the caller sets it exactly.)
    """
    n, d = X.shape
    K = const.shape[0]
    nb = (n + ROW_BLOCK - 1) // ROW_BLOCK
    bad = 0
    for b in prange(nb):
        r0 = b * ROW_BLOCK
        r1 = min(n, r0 + ROW_BLOCK)
        r = np.empty(d)
        y = np.empty(d)
        for i in range(r0, r1):
            p = pattern_of[i]
            a0 = idx_ptr[p]
            s = idx_ptr[p + 1] - a0
            c0 = inv_ptr[p]
            for k in range(K):
                for j in range(d):
                    x = np.float64(X[i, j])
                    r[j] = x - means[k, j] if x == x else 0.0
                q = 0.0
                for j in range(d):
                    t = 0.0
                    for m in range(d):
                        t += precision[k, j, m] * r[m]
                    y[j] = t
                    q += r[j] * t
                for a in range(s):
                    t = 0.0
                    for c in range(a + 1):
                        t += inv[k, c0 + a * s + c] * y[idx[a0 + c]]
                    q -= t * t
                out[i, k] = const[k] - 0.5 * (q + logdet_mm[k, p] + (d - s) * LOG_2PI)
        bad += finish_rows(out, r0, r1, mode)
    return bad

"""Kernels of Firth's penalised likelihood: the hat-matrix diagonal and the score
correction (dense and CSR), and the packed products of its curvature.  Conventions as
in :mod:`fastgen.kernels.inference`.
"""

import numpy as np
from numba import prange

from ._jit import REASSOC, pjit
from .blas import trmm_lower_rows
from .irls import expit, pass_layout
from .irls_sparse import csr_row_dot
from .reference_class import sigmoid_pair
from .special import sum_slots

__all__ = ["firth_hat", "firth_hat_csr", "firth_packed_products"]


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
        for j in range(p):
            c_s[gi, j] = c[j]
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
        for j in range(p):
            c_s[gi, j] = c[j]
        t_s[gi] = tr
    return sum_slots(c_s), sum_slots(t_s)


_SQRT2 = 1.4142135623730951


@pjit
def firth_packed_products(ZT, AX, G):
    """``G += P @ AX`` where P's rows are the packed upper triangles of z_i z_iᵀ:
    row o(j, k) = √2·z_ij·z_ik for k > j and z_ij² for k = j (j-major, o(j, j) =
    j·p − j(j − 1)/2), z_i the columns of ``ZT`` (p, rows) and ``AX`` (rows, q).

    The product that dominates Firth's curvature pass
    (:meth:`fastgen.logistic.firth_objective._Penalised.curvature`), p(p + 1)/2 · rows · q
    multiply-adds.  The work goes by pairs of triangle rows j and p − 1 − j (p + 1
    packed rows per pair), each pair building its own block of P and multiplying it
    by BLAS: every row of G is written by one task, in the same order for any thread
    count.  The caller holds BLAS at one thread (numba's ``np.dot`` calls it from
    each task).  Faster than building P with numpy and one BLAS product
    (benchmarks/NOTES.md).
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

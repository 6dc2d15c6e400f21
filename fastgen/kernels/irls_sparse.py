"""CSR twins of the logistic-regression kernels in :mod:`fastgen.kernels.irls`.

A CSR matrix is passed as its three arrays ``(indptr, indices, data)`` plus the number
of columns ``d``; indices are sorted int32 or int64, data float32 or float64.  Row groups
``bounds`` are chosen by the caller so that each holds about the same number of stored
values (balanced by ``indptr``), from the matrix alone; each group writes its own slot
and slots are summed in group order, so results do not depend on the thread count.

Kept separate on purpose from the dense kernels: each twin repeats its dense kernel's
set-up, per-row steps and slot epilogue with the inner loops over stored values instead
of columns (and no blocked BLAS Gram).  The steps that are the same math are shared
inline helpers (``binary_row``, ``multinomial_row``, :func:`csr_row_dot`, …); one
kernel for both layouts would branch in the innermost loops or take the row step as a
function argument, which numba's cache does not support.
"""

import numpy as np
from numba import prange

from ._jit import jit, pjit
from .irls import _copy_2d, binary_row, expit, multinomial_row, pass_layout
from .special import sum_slots

__all__ = [
    "csr_row_dot",
    "csr_row_scores",
    "csr_add_row",
    "binary_loss_grad_hess_csr",
    "binary_hessp_csr",
    "multinomial_loss_grad_csr",
    "multinomial_hessp_csr",
    "multinomial_hessian_csr",
    "weighted_sq_colsum_csr",
]


@jit(inline="always")
def csr_row_dot(indices, data, a0, a1, v, b0):
    """``b0 + Σ_{a0 ≤ a < a1} data[a] v[indices[a]]``: x̃_iᵀv for the stored values
    ``a0:a1`` of row i (``b0`` is the intercept term, or 0)."""
    s = b0
    for a in range(a0, a1):
        s += data[a] * v[indices[a]]
    return s


@jit(inline="always")
def csr_row_scores(indptr, indices, data, i, T, d, fit_intercept, out):
    """``out[k] = x̃_iᵀ T[:, k]`` for CSR row i against a (p, K) table whose row d holds
    the intercepts (used when ``fit_intercept``)."""
    K = out.shape[0]
    for k in range(K):
        out[k] = T[d, k] if fit_intercept else 0.0
    for a in range(indptr[i], indptr[i + 1]):
        xa = data[a]
        ja = indices[a]
        for k in range(K):
            out[k] += xa * T[ja, k]


@jit(inline="always")
def csr_add_row(acc, c, indptr, indices, data, i, d, fit_intercept):
    """``acc[j, k] += c[k] x̃_ij`` for CSR row i: the rank-one update x̃_i cᵀ of a (p, K)
    accumulator (row d is the intercept's, used when ``fit_intercept``)."""
    K = c.shape[0]
    for a in range(indptr[i], indptr[i + 1]):
        xa = data[a]
        ja = indices[a]
        for k in range(K):
            acc[ja, k] += c[k] * xa
    if fit_intercept:
        for k in range(K):
            acc[d, k] += c[k]


@jit
def _binary_csr_group(indptr, indices, data, d, y, w, coef, fit_intercept, weighted, b0,
                      lo, hi, want_hess, store_s, s_out, grad_out, hess_out):
    """Rows ``lo:hi`` of :func:`binary_loss_grad_hess_csr`: the gradient and (with
    ``want_hess``) the Hessian into one group's zeroed slots.  Returns
    ``(loss, max |η|)``."""
    p = grad_out.shape[0]
    hp = hess_out.shape[0]
    gr = np.zeros(p)
    H = np.zeros((hp, hp))
    ls = 0.0
    eta_max = 0.0
    for i in range(lo, hi):
        a0 = indptr[i]
        a1 = indptr[i + 1]
        eta = csr_row_dot(indices, data, a0, a1, coef, b0)
        wi = w[i] if weighted else 1.0
        if wi > 0.0 and abs(eta) > eta_max:
            eta_max = abs(eta)
        li, r = binary_row(eta, y[i], wi)
        ls += li
        for a in range(a0, a1):
            gr[indices[a]] += r * data[a]
        if fit_intercept:
            gr[d] += r
        if want_hess or store_s:
            s = wi * expit(eta) * expit(-eta)
            if store_s:
                s_out[i] = s
            if want_hess:
                for a in range(a0, a1):
                    ja = indices[a]
                    sa = s * data[a]
                    for c in range(a0, a1):
                        H[ja, indices[c]] += sa * data[c]
                    if fit_intercept:
                        H[ja, d] += sa
                        H[d, ja] += sa
                if fit_intercept:
                    H[d, d] += s
    for j in range(p):
        grad_out[j] = gr[j]
    if want_hess:
        _copy_2d(H, hess_out)
    return ls, eta_max


@pjit
def binary_loss_grad_hess_csr(indptr, indices, data, d, y, w, coef, fit_intercept, bounds,
                              want_hess, s_out):
    """CSR twin of :func:`fastgen.kernels.irls.binary_loss_grad_hess`.

    The Hessian is accumulated from the sparse outer products ``s_i x̃_i x̃_iᵀ`` (nnz_i² work
    per row) into one dense (p, p) slot per group.
    """
    p, G, weighted = pass_layout(d, fit_intercept, bounds, w)
    store_s = s_out.shape[0] > 0
    b0 = coef[d] if fit_intercept else 0.0
    hp = p if want_hess else 1
    loss_s = np.zeros(G)
    eta_max_slots = np.zeros(G)
    grad_s = np.zeros((G, p))
    hess_s = np.zeros((G, hp, hp))
    # the per-group work lives in a serial helper, not inlined: a small parallel body
    # compiles far faster
    for g in prange(G):
        ls, eta_max = _binary_csr_group(indptr, indices, data, d, y, w, coef, fit_intercept,
                                        weighted, b0, bounds[g], bounds[g + 1], want_hess,
                                        store_s, s_out, grad_s[g], hess_s[g])
        loss_s[g] = ls
        eta_max_slots[g] = eta_max
    return sum_slots(loss_s), sum_slots(grad_s), sum_slots(hess_s), eta_max_slots.max()


@pjit
def binary_hessp_csr(indptr, indices, data, d, s, v, fit_intercept, bounds):
    """CSR twin of :func:`fastgen.kernels.irls.binary_hessp`."""
    p = v.shape[0]
    G = bounds.shape[0] - 1
    b0 = v[d] if fit_intercept else 0.0
    out_s = np.zeros((G, p))
    for g in prange(G):
        acc = np.zeros(p)
        for i in range(bounds[g], bounds[g + 1]):
            c = s[i] * csr_row_dot(indices, data, indptr[i], indptr[i + 1], v, b0)
            for a in range(indptr[i], indptr[i + 1]):
                acc[indices[a]] += c * data[a]
            if fit_intercept:
                acc[d] += c
        for j in range(p):
            out_s[g, j] = acc[j]
    return sum_slots(out_s)


@pjit
def multinomial_loss_grad_csr(indptr, indices, data, d, y, w, coef, fit_intercept, bounds,
                              P_out):
    """CSR twin of :func:`fastgen.kernels.irls.multinomial_loss_grad`."""
    K = coef.shape[0]
    p, G, weighted = pass_layout(d, fit_intercept, bounds, w)
    store_p = P_out.shape[0] > 0
    BT = np.ascontiguousarray(coef.T)  # (p, K): row j holds feature j of every class
    loss_s = np.zeros(G)
    eta_max_slots = np.zeros(G)
    grad_s = np.zeros((G, p, K))
    for g in prange(G):
        eta = np.empty(K)
        e = np.empty(K)
        r = np.empty(K)
        gr = np.zeros((p, K))
        ls = 0.0
        eta_max = 0.0
        for i in range(bounds[g], bounds[g + 1]):
            csr_row_scores(indptr, indices, data, i, BT, d, fit_intercept, eta)
            wi = w[i] if weighted else 1.0
            yi = y[i]
            li, inv, spread = multinomial_row(eta, e, wi, yi)
            ls += li
            if wi > 0.0 and spread > eta_max:
                eta_max = spread
            for k in range(K):
                pk = e[k] * inv
                if store_p:
                    P_out[i, k] = pk
                r[k] = wi * (pk - 1.0) if k == yi else wi * pk
            csr_add_row(gr, r, indptr, indices, data, i, d, fit_intercept)
        loss_s[g] = ls
        eta_max_slots[g] = eta_max
        _copy_2d(gr, grad_s[g])
    return sum_slots(loss_s), np.ascontiguousarray(sum_slots(grad_s).T), eta_max_slots.max()


@pjit
def multinomial_hessp_csr(indptr, indices, data, d, w, P, V, fit_intercept, bounds):
    """CSR twin of :func:`fastgen.kernels.irls.multinomial_hessp`."""
    K = V.shape[0]
    p, G, weighted = pass_layout(d, fit_intercept, bounds, w)
    VT = np.ascontiguousarray(V.T)
    out_s = np.zeros((G, p, K))
    for g in prange(G):
        u = np.empty(K)
        c = np.empty(K)
        acc = np.zeros((p, K))
        for i in range(bounds[g], bounds[g + 1]):
            csr_row_scores(indptr, indices, data, i, VT, d, fit_intercept, u)
            pu = 0.0
            for k in range(K):
                pu += P[i, k] * u[k]
            wi = w[i] if weighted else 1.0
            for k in range(K):
                c[k] = wi * P[i, k] * (u[k] - pu)
            csr_add_row(acc, c, indptr, indices, data, i, d, fit_intercept)
        _copy_2d(acc, out_s[g])
    return np.ascontiguousarray(sum_slots(out_s).T)


@pjit
def multinomial_hessian_csr(indptr, indices, data, d, w, P, fit_intercept, bounds):
    """CSR twin of :func:`fastgen.kernels.irls.multinomial_hessian` (sparse outer products)."""
    K = P.shape[1]
    p, G, weighted = pass_layout(d, fit_intercept, bounds, w)
    Kp = K * p
    hess_s = np.zeros((G, Kp, Kp))
    for g in prange(G):
        H = np.zeros((Kp, Kp))
        for i in range(bounds[g], bounds[g + 1]):
            wi = w[i] if weighted else 1.0
            a0 = indptr[i]
            a1 = indptr[i + 1]
            for k in range(K):
                pk = P[i, k]
                for m in range(k, K):
                    ckm = wi * ((pk if m == k else 0.0) - pk * P[i, m])
                    for a in range(a0, a1):
                        ra = k * p + indices[a]
                        ca = ckm * data[a]
                        for c in range(a0, a1):
                            H[ra, m * p + indices[c]] += ca * data[c]
                        if fit_intercept:
                            H[ra, m * p + d] += ca
                            H[k * p + d, m * p + indices[a]] += ca
                    if fit_intercept:
                        H[k * p + d, m * p + d] += ckm
        _copy_2d(H, hess_s[g])
    hess = sum_slots(hess_s)
    # Only blocks (k, m ≥ k) were filled: mirror them.
    for k in range(K):
        for m in range(k + 1, K):
            for a in range(p):
                for c in range(p):
                    hess[m * p + c, k * p + a] = hess[k * p + a, m * p + c]
    return hess


@pjit
def weighted_sq_colsum_csr(indptr, indices, data, d, s, fit_intercept, bounds):
    """CSR twin of :func:`fastgen.kernels.irls.weighted_sq_colsum`."""
    p = d + 1 if fit_intercept else d
    G = bounds.shape[0] - 1
    out_s = np.zeros((G, p))
    for g in prange(G):
        acc = np.zeros(p)
        for i in range(bounds[g], bounds[g + 1]):
            si = s[i]
            for a in range(indptr[i], indptr[i + 1]):
                acc[indices[a]] += si * data[a] * data[a]
            if fit_intercept:
                acc[d] += si
        for j in range(p):
            out_s[g, j] = acc[j]
    return sum_slots(out_s)

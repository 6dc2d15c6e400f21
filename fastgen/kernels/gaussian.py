"""Gaussian scoring kernels: log p(x | y=k) + log p(y=k) without (n, K, d) temporaries.

All kernels work on fixed blocks of ``ROW_BLOCK`` rows (``prange`` over blocks), write
into a caller-provided ``out`` (n, K) of the data's dtype, and accumulate each row's
sums in float64.
"""

import numpy as np
from numba import prange

from ._jit import REASSOC, jit, pjit
from .blas import trmm_lower_rows
from .special import ROW_BLOCK

__all__ = [
    "pooled_scores",
    "per_class_scores",
    "diagonal_scores",
    "LOG_2PI",
]

LOG_2PI = np.log(2.0 * np.pi)

# From this dimension the per-class Mahalanobis product goes through BLAS TRMM on a
# block of rows; below it, hand loops on the triangular factor are faster
# (benchmarks/NOTES.md).
TRMM_MIN_D = 4


@jit(inline="always")
def centred_block(X, b, c, like):
    """Block b of ``ROW_BLOCK`` rows of X, centred on c: ``(r0, Z)`` with
    ``Z[r, j] = X[r0 + r, j] − c[j]``, a new array in ``like``'s dtype."""
    r0 = b * ROW_BLOCK
    m = min(X.shape[0], r0 + ROW_BLOCK) - r0
    Z = np.empty((m, X.shape[1]), dtype=like.dtype)
    centre_rows(X, r0, c, Z)
    return r0, Z


@jit(inline="always")
def centre_rows(X, r0, c, Z):
    """``Z[r, j] = X[r0 + r, j] − c[j]`` for the Z.shape[0] rows of a block (in Z's dtype)."""
    m, d = Z.shape
    for r in range(m):
        for j in range(d):
            Z[r, j] = X[r0 + r, j] - c[j]


@pjit
def pooled_scores(X, center, Wc, bc, Linv, const, out):
    """Linear scores of the pooled (shared-covariance) model.

    out[i, k] = (x_i − c)ᵀ Wc[:, k] + bc[k], with Wc = Σ⁻¹(μ_k − c) and
    bc[k] = −½(μ_k − c)ᵀΣ⁻¹(μ_k − c) + log p_k.  These differ from the joint
    log-likelihood by a term shared by all classes, so they give the posteriors.

    If ``Linv`` (the inverse Cholesky factor, lower, (d, d)) has d rows, the shared term
    −½‖L⁻¹(x − c)‖² + ``const`` is added too, giving log p(x, y=k) exactly; pass an
    empty (0, 0) array to skip it.  Centring on ``c`` first keeps digits when |x| ≫ σ.
    Each block of rows is centred into a buffer and multiplied by BLAS (the caller
    holds BLAS at one thread).
    """
    n, d = X.shape
    K = Wc.shape[1]
    quad = Linv.shape[0] == d
    nb = (n + ROW_BLOCK - 1) // ROW_BLOCK
    for b in prange(nb):
        r0, Z = centred_block(X, b, center, Wc)
        m = Z.shape[0]
        S = np.dot(Z, Wc)  # (m, K) by BLAS; the caller holds BLAS at one thread
        for r in range(m):
            for k in range(K):
                out[r0 + r, k] = S[r, k] + bc[k]
        if quad:
            trmm_lower_rows(Linv, Z, m)  # row r becomes L⁻¹(x_r − c)
            for r in range(m):
                q = 0.0
                for j in range(d):
                    u = np.float64(Z[r, j])
                    q += u * u
                sh = const - 0.5 * q
                for k in range(K):
                    out[r0 + r, k] += sh
    return out


@pjit
def per_class_scores(X, means, Linv, bias, out):
    """Per-class (QDA) joint log-likelihood.

    out[i, k] = −½‖L_k⁻¹(x_i − μ_k)‖² + bias[k], with bias[k] = log p_k − ½log|Σ_k|
    − (d/2)·log 2π and ``Linv`` (K, d, d) the inverse lower Cholesky factors.  The rows
    are centred on each class mean before the product (the expanded form loses digits
    when |x| ≫ σ).  For d ≥ ``TRMM_MIN_D`` each block goes through BLAS TRMM (half the flops of a
    GEMM; the caller holds BLAS at one thread); below, hand loops over the triangle.
    """
    n, d = X.shape
    K = means.shape[0]
    nb = (n + ROW_BLOCK - 1) // ROW_BLOCK
    use_trmm = d >= TRMM_MIN_D
    for b in prange(nb):
        r0 = b * ROW_BLOCK
        r1 = min(n, r0 + ROW_BLOCK)
        m = r1 - r0
        if use_trmm:
            Z = np.empty((m, d), dtype=Linv.dtype)
            for k in range(K):
                centre_rows(X, r0, means[k], Z)
                trmm_lower_rows(Linv[k], Z, m)  # row r becomes L_k⁻¹(x_r − μ_k)
                for r in range(m):
                    q = 0.0
                    for j in range(d):
                        u = np.float64(Z[r, j])
                        q += u * u
                    out[r0 + r, k] = bias[k] - 0.5 * q
        else:
            z = np.empty(d)
            for i in range(r0, r1):
                for k in range(K):
                    for j in range(d):
                        z[j] = np.float64(X[i, j]) - means[k, j]
                    q = 0.0
                    for j in range(d):
                        s = 0.0
                        for l in range(j + 1):
                            s += Linv[k, j, l] * z[l]
                        q += s * s
                    out[i, k] = bias[k] - 0.5 * q
    return out


# Below this dimension per-class scoring multiplies all classes at once (one GEMM of a
# centred block by the stacked factors) instead of one TRMM per class: twice the flops,
# but far better BLAS efficiency on thin matrices (benchmarks/NOTES.md).
STACKED_MAX_D = 64


@pjit(fastmath=REASSOC)
def per_class_scores_stacked(X, center, Wst, A, bias, out):
    """Per-class joint log-likelihood through one GEMM for all classes.

    out[i, k] = −½‖L_k⁻¹(x_i − c) − a_k‖² + bias[k], with ``Wst`` (d, K·d) the stacked
    [L_1⁻ᵀ … L_K⁻ᵀ], a_k = L_k⁻¹(μ_k − c) (``A``, (K, d)) and c the data's mean
    (``center``).  Rows are centred on c first, so |x| ≫ σ keeps its digits; what is
    lost is of the order of eps·‖L_k⁻¹(x − c)‖, negligible unless the classes lie
    millions of standard deviations apart.  The squared norms are summed with
    reassociation allowed (vectorised; the order is fixed at compile time, so results
    still do not depend on the thread count).
    """
    n, d = X.shape
    K = A.shape[0]
    nb = (n + ROW_BLOCK - 1) // ROW_BLOCK
    for b in prange(nb):
        r0, Z = centred_block(X, b, center, Wst)
        m = Z.shape[0]
        U = np.dot(Z, Wst)  # (m, K·d); the caller holds BLAS at one thread
        for r in range(m):
            for k in range(K):
                q = 0.0
                for j in range(d):
                    u = np.float64(U[r, k * d + j]) - A[k, j]
                    q += u * u
                out[r0 + r, k] = bias[k] - 0.5 * q
    return out


@pjit
def diagonal_scores(X, means, inv_var, bias, out):
    """Diagonal-covariance joint log-likelihood by a direct n·K·d loop.

    out[i, k] = −½ Σ_j (x_ij − μ_kj)²·inv_var[k', j] + bias[k], where k' = k when
    ``inv_var`` has K rows and 0 when it has one (variances shared by the classes), and
    bias[k] = log p_k − ½ Σ_j log σ²_k'j − (d/2)·log 2π.
    """
    n, d = X.shape
    K = means.shape[0]
    shared = inv_var.shape[0] == 1
    nb = (n + ROW_BLOCK - 1) // ROW_BLOCK
    for b in prange(nb):
        r0 = b * ROW_BLOCK
        r1 = min(n, r0 + ROW_BLOCK)
        for i in range(r0, r1):
            for k in range(K):
                kv = 0 if shared else k
                q = 0.0
                for j in range(d):
                    z = np.float64(X[i, j]) - means[k, j]
                    q += z * z * inv_var[kv, j]
                out[i, k] = bias[k] - 0.5 * q
    return out


@jit
def inverse_lower(L):
    """Inverse of a lower-triangular matrix by forward substitution (float64)."""
    d = L.shape[0]
    inv = np.zeros((d, d))
    for c in range(d):
        inv[c, c] = 1.0 / L[c, c]
        for r in range(c + 1, d):
            s = 0.0
            for t in range(c, r):
                s += L[r, t] * inv[t, c]
            inv[r, c] = -s / L[r, r]
    return inv

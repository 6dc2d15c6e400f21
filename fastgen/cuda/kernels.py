"""numba.cuda kernels: class moments, Gaussian scoring, row log-sum-exp.

Importing this module imports numba.cuda; :mod:`fastgen.cuda` does so only when a device
array reaches it.  The kernels never validate (the Python layer in
:mod:`fastgen.cuda._api` does, on the device).  Every sum is float64 whatever the dtype
of X; every launch configuration that affects rounding depends on the problem size
only, never on the device or the block size, so results are bitwise identical run to
run and from one GPU to another.

Moments (one read of X).  The rows are cut into B blocks of R consecutive rows (R from
n, K, d alone).  Each class k has one shift s_k, the first row of that class (found by
an atomic minimum of row indices, which is order independent), and every CUDA block
accumulates, for the rows of its range, with z = x − s_{y}::

    W_k = Σ w,   S_k = Σ w z,   M = Σ w z zᵀ  (pooled: one (d, d); per class: one per k;
                                               diagonal: Σ w z², (K, d))

in its own slot of a partial buffer (no atomics on floating-point values).  The rows of
a block pass through shared memory in tiles; a thread owns a set of output entries
(a feature j for S, a pair j ≤ l for M) and sums over the tile's rows in row order.
The B partial slots are then merged pairwise in a fixed binary tree
(:func:`pairwise_level`, slot b += slot b + s for s = 1, 2, 4, ...).  With a common
shift the pairwise update of Chan, Golub & LeVeque reduces to these additions; the
host finishes with μ_k = s_k + S_k/W_k and M2 = M − Σ_k S_k S_kᵀ / W_k, where
|S_k/W_k| = |μ_k − s_k| is of the order of the class spread, not of its mean (the
cancellation that ruins the Gram trick X'X − n·m·mᵀ does not happen).

Scoring.  One thread per row computes the K joint log-likelihoods in float64, writes them
to the output row (in the output's dtype, as the CPU kernels do), then finishes the row
(:func:`finish_row`): nothing (joint log-likelihood), minus the log-sum-exp with the row
maximum (log posteriors), or normalised exponentials (posteriors); a row of all −inf
gives −inf or zeros, never NaN.  Non-finite x are found on the way: the flat index of
the first one is kept by an atomic minimum (again order independent).
"""

import math

import numpy as np
from numba import cuda, float64, int32

from .._runtime import configure_process as _configure_process

_configure_process()  # fastgen's process set-up (a writable cache) before cuda.jit(cache=True)

__all__ = [
    "MODE_JLL",
    "MODE_LOG_PROBA",
    "MODE_PROBA",
    "MODE_PREDICT",
    "KIND_POOLED",
    "KIND_PER_CLASS",
    "KIND_DIAGONAL",
    "SHARED_DOUBLES",
    "TILE_ROWS_MAX",
    "tile_rows",
]

MODE_JLL = 0
MODE_LOG_PROBA = 1
MODE_PROBA = 2
#: argmax of the scores into ``pred`` (the pooled model skips its shared quadratic term)
MODE_PREDICT = 3

KIND_POOLED = 0
KIND_PER_CLASS = 1
KIND_DIAGONAL = 2

#: float64 values of a row tile held in shared memory (32 KiB) and the most rows per tile
SHARED_DOUBLES = 4096
TILE_ROWS_MAX = 256


def tile_rows(d):
    """Rows per shared-memory tile for d features (the kernels use the same formula)."""
    return min(TILE_ROWS_MAX, SHARED_DOUBLES // d)


_jit = cuda.jit(cache=True)
_device = cuda.jit(device=True, cache=True)


# ----------------------------------------------------------------------- helpers


@_jit
def fill_float(a, value):
    """a[...] = value for a 2-D float64 array."""
    i = cuda.grid(1)
    n, m = a.shape
    if i < n * m:
        a[i // m, i % m] = value


@_jit
def to_dtype(X, out, big, flag):
    """out = X (cast); flag[0] = min flat index of a finite |x| > ``big`` (overflow)."""
    i = cuda.grid(1)
    n, d = X.shape
    if i < n * d:
        r = i // d
        j = i - r * d
        x = X[r, j]
        v = float64(x)
        if abs(v) > big and not math.isinf(v):
            cuda.atomic.min(flag, 0, i)
        out[r, j] = x


@_jit
def nonfinite_index(X, flag):
    """flag[0] = min over the flat indices i·d + j of non-finite X[i, j]."""
    i = cuda.grid(1)
    n, d = X.shape
    if i < n * d:
        r = i // d
        j = i - r * d
        x = float64(X[r, j])
        if math.isnan(x) or math.isinf(x):
            cuda.atomic.min(flag, 0, i)


# ----------------------------------------------------------------------- labels


@_jit
def label_range(y, lohi):
    """lohi[0] = min y, lohi[1] = max y (int64 atomics: order independent)."""
    i = cuda.grid(1)
    if i < y.shape[0]:
        v = np.int64(y[i])
        cuda.atomic.min(lohi, 0, v)
        cuda.atomic.max(lohi, 1, v)


@_jit
def label_present(y, lo, present):
    i = cuda.grid(1)
    if i < y.shape[0]:
        present[np.int64(y[i]) - lo] = 1


@_jit
def label_codes(y, lo, remap, codes):
    i = cuda.grid(1)
    if i < y.shape[0]:
        codes[i] = remap[np.int64(y[i]) - lo]


@_jit
def weight_check(w, flags):
    """flags[0] = first non-finite index, flags[1] = first negative index, flags[2] = 1
    if some weight is positive; w is float64."""
    i = cuda.grid(1)
    if i < w.shape[0]:
        v = w[i]
        if math.isnan(v) or math.isinf(v):
            cuda.atomic.min(flags, 0, i)
        elif v < 0:
            cuda.atomic.min(flags, 1, i)
        elif v > 0:
            cuda.atomic.max(flags, 2, 1)


# ----------------------------------------------------------------------- moments


@_jit
def first_rows(codes, first):
    """first[k] = the smallest row index of class k (first must hold n beforehand)."""
    i = cuda.grid(1)
    if i < codes.shape[0]:
        cuda.atomic.min(first, codes[i], i)


@_jit
def gather_shift(X, first, shift):
    """shift[k] = X[first[k]] as float64 (zeros for a class without rows)."""
    t = cuda.grid(1)
    K, d = shift.shape
    if t < K * d:
        k = t // d
        j = t - k * d
        f = first[k]
        shift[k, j] = float64(X[f, j]) if f < X.shape[0] else 0.0


@_jit
def moments_blocks(X, codes, w, weighted, shift, R, kind, pj, pl, Wp, Sp, Mp, bad):
    """Shifted per-block sums of rows [b·R, (b+1)·R) into slot b of the partials.

    Wp (B, K): Σ w;  Sp (B, K·d): Σ w z;  Mp: pooled (B, P) Σ w z_j z_l over the P
    upper-triangle pairs (pj, pl); per class (B, K·P), the same per class; diagonal
    (B, K·d) Σ w z_j².  All slots zeroed beforehand.  bad[0] gets the smallest flat
    index of a non-finite x.
    """
    n, d = X.shape
    b = cuda.blockIdx.x
    t = cuda.threadIdx.x
    T = cuda.blockDim.x
    zs = cuda.shared.array(SHARED_DOUBLES, float64)
    ws = cuda.shared.array(TILE_ROWS_MAX, float64)
    ks = cuda.shared.array(TILE_ROWS_MAX, int32)
    TR = min(TILE_ROWS_MAX, SHARED_DOUBLES // d)
    P = pj.shape[0]
    r0 = b * R
    r1 = min(n, r0 + R)
    for a in range(r0, r1, TR):
        m = min(TR, r1 - a)
        for e in range(t, m, T):
            ks[e] = codes[a + e]
            ws[e] = w[a + e] if weighted else 1.0
        cuda.syncthreads()
        for e in range(t, m * d, T):
            r = e // d
            j = e - r * d
            x = float64(X[a + r, j])
            if math.isnan(x) or math.isinf(x):
                cuda.atomic.min(bad, 0, (a + r) * d + j)
            zs[e] = x - shift[ks[r], j]
        cuda.syncthreads()
        if t == 0:
            for r in range(m):
                Wp[b, ks[r]] += ws[r]
        # S (and the diagonal sums): runs of one class are summed in registers
        for j in range(t, d, T):
            kc = ks[0]
            s = 0.0
            q = 0.0
            for r in range(m):
                k = ks[r]
                if k != kc:
                    Sp[b, kc * d + j] += s
                    if kind == KIND_DIAGONAL:
                        Mp[b, kc * d + j] += q
                    kc = k
                    s = 0.0
                    q = 0.0
                wz = ws[r] * zs[r * d + j]
                s += wz
                q += wz * zs[r * d + j]
            Sp[b, kc * d + j] += s
            if kind == KIND_DIAGONAL:
                Mp[b, kc * d + j] += q
        if kind == KIND_POOLED:
            for p in range(t, P, T):
                j = pj[p]
                l = pl[p]
                acc = 0.0
                for r in range(m):
                    acc += ws[r] * zs[r * d + j] * zs[r * d + l]
                Mp[b, p] += acc
        elif kind == KIND_PER_CLASS:
            for p in range(t, P, T):
                j = pj[p]
                l = pl[p]
                kc = ks[0]
                acc = 0.0
                for r in range(m):
                    k = ks[r]
                    if k != kc:
                        Mp[b, kc * P + p] += acc
                        kc = k
                        acc = 0.0
                    acc += ws[r] * zs[r * d + j] * zs[r * d + l]
                Mp[b, kc * P + p] += acc
        cuda.syncthreads()


@_jit
def pairwise_level(part, stride):
    """One level of the fixed pairwise tree over the B slots (rows) of ``part``:
    part[b] += part[b + stride] for b a multiple of 2·stride."""
    i = cuda.grid(1)
    B, E = part.shape
    pair = i // E
    e = i - pair * E
    b = pair * 2 * stride
    if b + stride < B:
        part[b, e] += part[b + stride, e]


# ----------------------------------------------------------------------- scoring


@_device
def check_row(X, i, bad):
    d = X.shape[1]
    for j in range(d):
        x = float64(X[i, j])
        if math.isnan(x) or math.isinf(x):
            cuda.atomic.min(bad, 0, i * d + j)
            return


@_device
def mahalanobis_sq(X, i, mu, Linv):
    """‖L⁻¹(x_i − μ)‖² for a lower triangular (d, d) ``Linv``, accumulated in float64."""
    d = X.shape[1]
    q = 0.0
    for j in range(d):
        u = 0.0
        for l in range(j + 1):
            u += Linv[j, l] * (float64(X[i, l]) - mu[l])
        q += u * u
    return q


@_device
def finish_row(out, i, mode, pred, bad):
    """Normalise row i of ``out`` per ``mode`` (see the module docstring); record in
    bad[1] the smallest row index whose scores hold a NaN or a non-finite maximum."""
    K = out.shape[1]
    m = -math.inf
    best = 0
    nan = False
    for k in range(K):
        v = float64(out[i, k])
        if v != v:
            nan = True
        if v > m:
            m = v
            best = k
    if nan or math.isinf(m):
        cuda.atomic.min(bad, 1, i)
    if mode == MODE_PREDICT:
        pred[i] = best
        return
    if mode == MODE_JLL:
        return
    if m == -math.inf:
        for k in range(K):
            out[i, k] = -math.inf if mode == MODE_LOG_PROBA else 0.0
        return
    s = 0.0
    for k in range(K):
        s += math.exp(float64(out[i, k]) - m)
    if mode == MODE_LOG_PROBA:
        c = m + math.log(s)
        for k in range(K):
            out[i, k] = float64(out[i, k]) - c
    else:
        inv = 1.0 / s
        for k in range(K):
            out[i, k] = math.exp(float64(out[i, k]) - m) * inv


@_jit
def scores_diagonal(X, means, inv_var, const, mode, out, pred, bad):
    """out[i, k] = const_k − ½ Σ_j (x_ij − μ_kj)²·inv_var_kj, then :func:`finish_row`.

    Gaussian naive Bayes (const_k = log π_k − ½ Σ_j log 2πσ²_kj) and the diagonal and
    pooled-diagonal GDA models (const_k = log p_k − ½(log|Σ_k| + d log 2π)).
    """
    i = cuda.grid(1)
    n, d = X.shape
    if i >= n:
        return
    K = const.shape[0]
    for k in range(K):
        s = 0.0
        for j in range(d):
            t = float64(X[i, j]) - means[k, j]
            s += t * t * inv_var[k, j]
        out[i, k] = const[k] - 0.5 * s
    check_row(X, i, bad)
    finish_row(out, i, mode, pred, bad)


@_jit
def scores_pooled(X, c, Wc, bc, Linv, const, mode, out, pred, bad):
    """Pooled GDA: out[i, k] = (x_i − c)ᵀWc_k + bc_k, plus (joint log-likelihood only)
    the shared term const − ½‖L⁻¹(x_i − c)‖²; Wc = Σ⁻¹(μ_k − c),
    bc_k = −½(μ_k − c)ᵀΣ⁻¹(μ_k − c) + log p_k, const = −½(log|Σ| + d log 2π)."""
    i = cuda.grid(1)
    n, d = X.shape
    if i >= n:
        return
    K = bc.shape[0]
    sh = 0.0
    if mode == MODE_JLL:
        sh = const - 0.5 * mahalanobis_sq(X, i, c, Linv)
    for k in range(K):
        s = 0.0
        for j in range(d):
            s += (float64(X[i, j]) - c[j]) * Wc[j, k]
        out[i, k] = (s + bc[k]) + sh
    check_row(X, i, bad)
    finish_row(out, i, mode, pred, bad)


@_jit
def scores_per_class(X, means, Linv, bias, mode, out, pred, bad):
    """Per-class GDA: out[i, k] = bias_k − ½‖L_k⁻¹(x_i − μ_k)‖²,
    bias_k = log p_k − ½(log|Σ_k| + d log 2π)."""
    i = cuda.grid(1)
    n = X.shape[0]
    if i >= n:
        return
    K = bias.shape[0]
    for k in range(K):
        out[i, k] = bias[k] - 0.5 * mahalanobis_sq(X, i, means[k], Linv[k])
    check_row(X, i, bad)
    finish_row(out, i, mode, pred, bad)


@_jit
def finish_rows(out, mode, pred, bad):
    """:func:`finish_row` on every row of precomputed scores (the stand-alone
    row log-sum-exp / softmax / argmax)."""
    i = cuda.grid(1)
    if i < out.shape[0]:
        finish_row(out, i, mode, pred, bad)

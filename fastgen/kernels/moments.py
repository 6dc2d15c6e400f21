"""Per-class sufficient statistics in one read of X.

Every kernel returns, in float64 whatever the input dtype (float32 data is accumulated
in float64: scatter sums lose digits fast in single precision):

* ``W``     (K,)  total weight (the count when unweighted) of each class,
* ``means`` (K, d) class means,
* a scatter: pooled ``(d, d)`` = Σ_i w_i (x_i − μ_{y_i})(x_i − μ_{y_i})ᵀ, per-class
  ``(K, d, d)``, or diagonal ``(K, d)``.

Numerics.  Rows are split into a fixed number of groups of consecutive rows (the number
depends on n, K and d only, never on the thread count, so results are bitwise identical
for any ``NUMBA_NUM_THREADS``).  Inside a group every class is accumulated around a
shift, the first row of that class in the group, so the raw sums never see a large
mean: with z = x − s, Σw(x−m)(x−m)ᵀ = Σw zzᵀ − SSᵀ/W where S = Σwz and |S/W| is of
the order of the class spread, not of its mean.  Groups are turned into
(W, mean, M2) and merged serially in a fixed order by the pairwise update of Chan,
Golub & LeVeque (1983), weighted as in Schubert & Gertz (2018)::

    W = Wa + Wb,  δ = mb − ma,  m = ma + δ·Wb/W,  M2 = M2a + M2b + δδᵀ·Wa·Wb/W

The pooled kernel never allocates K×d×d: it keeps per-class (W, mean) and one pooled
scatter, and merging two groups adds Σ_k δ_kδ_kᵀ·Wa_k·Wb_k/W_k to it.

``w`` is either the per-row weights (float64, length n) or an empty array for "all
weights one"; ``codes`` are int32 class indices in ``[0, K)``.
"""

import numpy as np
from numba import prange

from ._jit import REASSOC, jit, pjit
from .blas import symmetrize_from_upper, syrk_upper
from .labels import class_order

__all__ = [
    "moments_pooled",
    "moments_diagonal",
    "moments_per_class",
    "merge_pooled",
    "merge_diagonal",
    "merge_per_class",
    "n_row_groups",
    "standardised_fourth_moment",
]

# Rows buffered before a rank-C update of the scatter (hand loop or GEMM).
_CHUNK = 128
# Dimension from which the scatter update goes through BLAS (np.dot) instead of loops.
GEMM_MIN_D = 24
# Target rows per group and the most groups; the memory bound is applied by the caller.
GROUP_ROWS = 8192
MAX_GROUPS = 64
# Rows per block of one class in the per-class kernel: a block's float64 buffer holds
# about 1 MB, between 256 and 4096 rows; depends on d only.  Larger blocks keep SYRK
# near numpy's ``X.T @ X`` speed (benchmarks/NOTES.md).
CLASS_BLOCK_DOUBLES = 131072


@jit
def class_block_rows(d):
    return min(4096, max(256, CLASS_BLOCK_DOUBLES // d))


@jit
def n_row_groups(n, per_group_doubles, budget_doubles):
    """Number of row groups: ⌈n / GROUP_ROWS⌉, at most MAX_GROUPS, and few enough that
    the per-group buffers fit in ``budget_doubles``.  Depends on sizes only."""
    g = (n + GROUP_ROWS - 1) // GROUP_ROWS
    if g > MAX_GROUPS:
        g = MAX_GROUPS
    cap = budget_doubles // max(per_group_doubles, 1)
    if g > cap:
        g = cap
    if g < 1:
        g = 1
    return g


@jit(inline="always")
def _row_weight(w, i):
    if w.shape[0] == 0:
        return 1.0
    return w[i]


@jit(fastmath=REASSOC)
def _gram_t(R, Zt, m):
    """R += Zt[:, :m] · Zt[:, :m]ᵀ (upper triangle; the caller mirrors it) for a
    transposed chunk Zt (d, C) of small d.

    Reassociation is allowed here (and in :func:`_gram_rows`) so the inner dot products
    vectorise, to numpy's ``X.T @ X`` speed (benchmarks/NOTES.md).  It changes
    rounding, never NaN/inf handling, and the
    result is still the same for any thread count.
    """
    d = Zt.shape[0]
    for j in range(d):
        for l in range(j, d):
            s = 0.0
            for i in range(m):
                s += Zt[j, i] * Zt[l, i]
            R[j, l] += s


@jit(fastmath=REASSOC)
def _gram_rows(R, Z, m):
    """R += Z[:m]ᵀ Z[:m] on the upper triangle (the caller mirrors it) for a row-major
    chunk Z (C, d): BLAS SYRK from ``GEMM_MIN_D`` on, rank-1 updates below."""
    d = Z.shape[1]
    if d >= GEMM_MIN_D:
        syrk_upper(Z, m, R)
    else:
        for i in range(m):
            for j in range(d):
                zj = Z[i, j]
                for l in range(j, d):
                    R[j, l] += zj * Z[i, l]


@jit
def _add_outer_rows(M, D, scale, sign):
    """M += sign · Σ_r scale[r] · D[r] D[r]ᵀ  (D rows, scale >= 0)."""
    m, d = D.shape
    if m == 0:
        return
    if d >= GEMM_MIN_D and m >= 4:
        E = np.empty((m, d))
        for r in range(m):
            s = np.sqrt(scale[r])
            for j in range(d):
                E[r, j] = D[r, j] * s
        M += sign * np.dot(E.T, E)
    else:
        for r in range(m):
            s = sign * scale[r]
            for j in range(d):
                a = s * D[r, j]
                for l in range(d):
                    M[j, l] += a * D[r, l]


@jit
def _pooled_group(X, codes, w, K, r0, r1, W, means, M2):
    """Accumulate rows [r0, r1) into (W (K,), means (K, d), M2 (d, d)), all zeroed."""
    d = X.shape[1]
    seen = np.zeros(K, dtype=np.uint8)
    S = np.zeros((K, d))
    # chunk of centred rows: transposed (d, C) for the loop path, row-major (C, d) for
    # BLAS, so that writes stay within a few cache lines either way
    gemm = d >= GEMM_MIN_D
    Zt = np.empty((0 if gemm else d, _CHUNK))
    Z = np.empty((_CHUNK if gemm else 0, d))
    c = 0
    weighted = w.shape[0] > 0
    for i in range(r0, r1):
        k = codes[i]
        wi = _row_weight(w, i)
        if seen[k] == 0:
            seen[k] = 1
            for j in range(d):
                means[k, j] = X[i, j]  # the shift, until finalised below
        if weighted:
            sw = np.sqrt(wi)
            for j in range(d):
                z = X[i, j] - means[k, j]
                S[k, j] += wi * z
                if gemm:
                    Z[c, j] = sw * z
                else:
                    Zt[j, c] = sw * z
        else:
            for j in range(d):
                z = X[i, j] - means[k, j]
                S[k, j] += z
                if gemm:
                    Z[c, j] = z
                else:
                    Zt[j, c] = z
        W[k] += wi
        c += 1
        if c == _CHUNK:
            if gemm:
                _gram_rows(M2, Z, c)
            else:
                _gram_t(M2, Zt, c)
            c = 0
    if c > 0:
        if gemm:
            _gram_rows(M2, Z, c)
        else:
            _gram_t(M2, Zt, c)
    symmetrize_from_upper(M2)
    # M2 = Σ w z zᵀ − Σ_k S_k S_kᵀ / W_k ; mean_k = shift_k + S_k / W_k
    m = 0
    for k in range(K):
        if W[k] > 0:
            m += 1
    D = np.empty((m, d))
    sc = np.empty(m)
    r = 0
    for k in range(K):
        if W[k] > 0:
            inv = 1.0 / W[k]
            for j in range(d):
                D[r, j] = S[k, j] * inv
                means[k, j] += S[k, j] * inv
            sc[r] = W[k]
            r += 1
        else:
            for j in range(d):
                means[k, j] = 0.0
    _add_outer_rows(M2, D, sc, -1.0)


@jit
def merge_pooled(Wa, ma, M2a, Wb, mb, M2b):
    """Merge (Wb, mb, M2b) into (Wa, ma, M2a) in place (pooled scatter).

    M2a += M2b + Σ_k δ_kδ_kᵀ·Wa_k·Wb_k/W_k over classes present in both.
    """
    K, d = ma.shape
    m = 0
    for k in range(K):
        if Wa[k] > 0 and Wb[k] > 0:
            m += 1
    D = np.empty((m, d))
    sc = np.empty(m)
    r = 0
    for k in range(K):
        if Wb[k] <= 0:
            continue
        if Wa[k] <= 0:
            Wa[k] = Wb[k]
            for j in range(d):
                ma[k, j] = mb[k, j]
            continue
        Wt = Wa[k] + Wb[k]
        f = Wb[k] / Wt
        for j in range(d):
            delta = mb[k, j] - ma[k, j]
            D[r, j] = delta
            ma[k, j] += delta * f
        sc[r] = Wa[k] * f
        Wa[k] = Wt
        r += 1
    for j in range(d):
        for l in range(d):
            M2a[j, l] += M2b[j, l]
    _add_outer_rows(M2a, D, sc, 1.0)


@pjit
def moments_pooled(X, codes, w, K, n_groups):
    """Class weights, means and the pooled within-class scatter (d, d) in one read of X.

    ``n_groups`` fixes the work split (see :func:`n_row_groups`); it must not depend on
    the thread count for results to be reproducible.
    """
    n, d = X.shape
    G = n_groups
    Wg = np.zeros((G, K))
    Mg = np.zeros((G, K, d))
    Sg = np.zeros((G, d, d))
    for g in prange(G):
        r0 = (n * g) // G
        r1 = (n * (g + 1)) // G
        _pooled_group(X, codes, w, K, r0, r1, Wg[g], Mg[g], Sg[g])
    W = Wg[0].copy()
    means = Mg[0].copy()
    M2 = Sg[0].copy()
    for g in range(1, G):
        merge_pooled(W, means, M2, Wg[g], Mg[g], Sg[g])
    return W, means, M2


@jit
def _diagonal_group(X, codes, w, K, r0, r1, W, means, M2):
    d = X.shape[1]
    seen = np.zeros(K, dtype=np.uint8)
    S = np.zeros((K, d))
    for i in range(r0, r1):
        k = codes[i]
        wi = _row_weight(w, i)
        if seen[k] == 0:
            seen[k] = 1
            for j in range(d):
                means[k, j] = X[i, j]
        for j in range(d):
            z = X[i, j] - means[k, j]
            wz = wi * z
            S[k, j] += wz
            M2[k, j] += wz * z
        W[k] += wi
    for k in range(K):
        if W[k] > 0:
            inv = 1.0 / W[k]
            for j in range(d):
                mz = S[k, j] * inv
                means[k, j] += mz
                M2[k, j] -= S[k, j] * mz
                if M2[k, j] < 0.0:
                    M2[k, j] = 0.0
        else:
            for j in range(d):
                means[k, j] = 0.0


@jit
def merge_diagonal(Wa, ma, M2a, Wb, mb, M2b):
    """Merge per-class diagonal moments (W, means (K, d), M2 (K, d)) in place."""
    K, d = ma.shape
    for k in range(K):
        if Wb[k] <= 0:
            continue
        if Wa[k] <= 0:
            Wa[k] = Wb[k]
            for j in range(d):
                ma[k, j] = mb[k, j]
                M2a[k, j] = M2b[k, j]
            continue
        Wt = Wa[k] + Wb[k]
        f = Wb[k] / Wt
        c = Wa[k] * f
        for j in range(d):
            delta = mb[k, j] - ma[k, j]
            ma[k, j] += delta * f
            M2a[k, j] += M2b[k, j] + delta * delta * c
        Wa[k] = Wt


@pjit
def moments_diagonal(X, codes, w, K, n_groups):
    """Class weights, means and per-class per-feature scatter (K, d) in one read of X.

    The same driver as :func:`moments_pooled` with the diagonal group and merge
    functions.  The two stay separate kernels on purpose: passing the group function as
    an argument would defeat numba's cache, and one kernel branching on the kind would
    compile both paths whenever either is used.
    """
    n, d = X.shape
    G = n_groups
    Wg = np.zeros((G, K))
    Mg = np.zeros((G, K, d))
    Sg = np.zeros((G, K, d))
    for g in prange(G):
        r0 = (n * g) // G
        r1 = (n * (g + 1)) // G
        _diagonal_group(X, codes, w, K, r0, r1, Wg[g], Mg[g], Sg[g])
    W = Wg[0].copy()
    means = Mg[0].copy()
    M2 = Sg[0].copy()
    for g in range(1, G):
        merge_diagonal(W, means, M2, Wg[g], Mg[g], Sg[g])
    return W, means, M2


@jit
def _block_moments(X, w, order, a, b, mean, M2):
    """Exact (W, mean, M2) of rows order[a:b] of one class.

    Gathers the rows (as float64) shifted by the block's first row z = x − s, scaled by
    √w, in one pass that also sums w·z; one Gram product (SYRK for larger d); then
    M2 = Σ w z zᵀ − W·z̄z̄ᵀ.  The shift is a sample of the class, so |z̄| is of the order
    of the class spread and the correction cancels no more than a few digits' worth of
    rounding in a block of at most 4096 rows (the tests hold data at |mean|/σ = 1e8 to
    1e-8 relative error).
    """
    d = X.shape[1]
    m = b - a
    buf = np.empty((m, d))
    shift = np.empty(d)
    i0 = order[a]
    for j in range(d):
        shift[j] = X[i0, j]
        mean[j] = 0.0
    weighted = w.shape[0] > 0
    Wt = 0.0
    for r in range(m):
        i = order[a + r]
        wi = _row_weight(w, i)
        sw = np.sqrt(wi) if weighted else 1.0
        Wt += wi
        for j in range(d):
            z = X[i, j] - shift[j]
            buf[r, j] = sw * z
            mean[j] += wi * z
    for j in range(d):
        for l in range(d):
            M2[j, l] = 0.0
    if Wt <= 0:
        for j in range(d):
            mean[j] = 0.0
        return 0.0
    for j in range(d):
        mean[j] /= Wt
    _gram_rows(M2, buf, m)
    for j in range(d):
        c = Wt * mean[j]
        for l in range(j, d):
            M2[j, l] -= c * mean[l]
    for j in range(d):
        mean[j] += shift[j]
    symmetrize_from_upper(M2)
    return Wt


@jit
def _merge_one(Wa, ma, M2a, Wb, mb, M2b):
    """Pairwise merge of one class's (W, mean, M2); returns the new W."""
    if Wb <= 0:
        return Wa
    d = ma.shape[0]
    if Wa <= 0:
        for j in range(d):
            ma[j] = mb[j]
            for l in range(d):
                M2a[j, l] = M2b[j, l]
        return Wb
    Wt = Wa + Wb
    f = Wb / Wt
    c = Wa * f
    delta = np.empty(d)
    for j in range(d):
        delta[j] = mb[j] - ma[j]
        ma[j] += delta[j] * f
    for j in range(d):
        for l in range(d):
            M2a[j, l] += M2b[j, l] + c * delta[j] * delta[l]
    return Wt


@pjit
def moments_per_class(X, codes, w, K, max_groups):
    """Class weights, means and per-class scatter (K, d, d) in one read of X.

    Rows are ordered by class with an O(n) counting sort; each class is cut into blocks
    of :func:`class_block_rows` rows that are gathered (as float64), centred on their own mean
    and multiplied out (GEMM for larger d), and the blocks are merged pairwise in a
    fixed order.  At most ``max_groups`` (d, d) partials are alive at once.
    """
    n, d = X.shape
    order, start = class_order(codes, K)
    W = np.zeros(K)
    means = np.zeros((K, d))
    M2 = np.zeros((K, d, d))
    Gm = max(1, max_groups)
    Wg = np.zeros(Gm)
    Mg = np.zeros((Gm, d))
    Sg = np.zeros((Gm, d, d))
    B = class_block_rows(d)
    for k in range(K):
        a0 = start[k]
        nk = start[k + 1] - a0
        if nk == 0:
            continue
        nb = (nk + B - 1) // B
        G = min(nb, Gm)
        for g in prange(G):
            b0 = (nb * g) // G
            b1 = (nb * (g + 1)) // G
            mb = np.empty(d)
            Sb = np.empty((d, d))
            Wg[g] = 0.0
            for bb in range(b0, b1):
                a = a0 + bb * B
                b = min(a0 + nk, a + B)
                Wb = _block_moments(X, w, order, a, b, mb, Sb)
                Wg[g] = _merge_one(Wg[g], Mg[g], Sg[g], Wb, mb, Sb)
        Wk = 0.0
        for g in range(G):
            Wk = _merge_one(Wk, means[k], M2[k], Wg[g], Mg[g], Sg[g])
        W[k] = Wk
    return W, means, M2


@jit
def merge_per_class(Wa, ma, M2a, Wb, mb, M2b):
    """Merge per-class moments (W, means (K, d), M2 (K, d, d)) in place."""
    for k in range(Wa.shape[0]):
        Wa[k] = _merge_one(Wa[k], ma[k], M2a[k], Wb[k], mb[k], M2b[k])


@pjit
def standardised_fourth_moment(X, codes, w, means, inv_sd, n_groups):
    """Per-class Σ_i w_i ‖D_k⁻¹(x_i − μ_k)‖⁴ (K,), k = y_i: the fourth-moment sum of the
    Ledoit-Wolf intensity on within-class standardised data.

    ``inv_sd`` (K, d) holds 1/s_kj, the reciprocal within-class standard deviations
    (the same row for every class when the covariance is pooled; 0 for a constant
    feature, which the standardised data leave out).  The scales come from the moments,
    so this is a second pass over X; it costs O(n·d).
    """
    n, d = X.shape
    K = means.shape[0]
    G = n_groups
    part = np.zeros((G, K))
    for g in prange(G):
        r0 = (n * g) // G
        r1 = (n * (g + 1)) // G
        for i in range(r0, r1):
            k = codes[i]
            s = 0.0
            for j in range(d):
                z = (X[i, j] - means[k, j]) * inv_sd[k, j]
                s += z * z
            part[g, k] += _row_weight(w, i) * s * s
    out = np.zeros(K)
    for g in range(G):
        for k in range(K):
            out[k] += part[g, k]
    return out

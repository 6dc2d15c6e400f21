"""Scoring kernels for rows with missing features (NaN in X).

A row's NaN entries are its missing features m, the rest o; every kernel writes the joint
log-likelihoods of the observed features, log π_k + log p(x_o | y=k), finished per
``mode`` (:mod:`fastgen.kernels.special`).

The full covariances go by missingness pattern, the rows grouped and copied in pattern
order by :mod:`fastgen.kernels.patterns`.  The rows of one
pattern share the factors of Σ_oo, which each work item computes once for its share of
the pattern's rows (O(|m|·|o|·K + |m|³) by the precision Λ = Σ⁻¹, or O(|o|³) directly
where that route would lose digits: :func:`use_precision`), then scores the rows in
transposed tiles of :data:`~fastgen.kernels.tiles.XT_TILE_ROWS` rows, as the
complete-data kernels do (one row at a time did not vectorise).  A row's scores depend
only on its pattern and its values, never on which rows share its tile or work item.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from ._jit import REASSOC, jit, pjit
from .special import MODE_JLL, MODE_LOG_PROBA, ROW_BLOCK, exp_nonpos, finish_rows
from .tiles import SCORE_TILE_BLOCK, XT_TILE_ROWS

__all__ = ["diagonal_marginal_scores", "pooled_pattern_scores", "class_pattern_scores",
           "use_precision", "PRECISION_SAFE", "PRECISION_LIMIT"]

LOG_2PI = 1.8378770664093453  # log 2π

#: A covariance whose largest variance inflation Σ_jj·Λ_jj is at most this takes the
#: precision route for every pattern (its cancellation factor is at most the same).
PRECISION_SAFE = 100.0
#: Otherwise a pattern takes the precision route where (largest variance inflation) ×
#: (its cancellation factor, max over o of Λ_jj / (Σ_oo⁻¹)_jj) is at most this: the
#: relative error of Σ_oo⁻¹ by that route is about that product times the unit
#: roundoff; above it, Σ_oo is factored directly.
PRECISION_LIMIT = 1e4


@pjit(fastmath=REASSOC)
def diagonal_marginal_scores(X, means, inv_var, log_var, bias, mode, skip, complete, out):
    """Diagonal Gaussian scores over the observed features::

        jll_ik = bias_k − ½ Σ_{j: x_ij not NaN} [(x_ij − μ_kj)²/σ²_kj + log 2πσ²_kj],

    finished per ``mode``.  X (n, d) float32/float64 C-contiguous; means, inv_var,
    log_var (K, d) float64 (μ, 1/σ², log 2πσ²); bias (K,) float64 (log π_k); out (n, K).
    ``complete[i]`` is set to 1 for a row without NaN (0 otherwise); with ``skip`` such a
    row is not scored, its row of ``out`` holding placeholders for the caller to
    overwrite.  Returns the number of rows holding an infinite entry.
    """
    n, d = X.shape
    K = bias.shape[0]
    nb = (n + ROW_BLOCK - 1) // ROW_BLOCK
    n_inf = 0
    for b in prange(nb):
        r0 = b * ROW_BLOCK
        r1 = min(n, r0 + ROW_BLOCK)
        for i in range(r0, r1):
            nan = 0
            inf = 0
            for j in range(d):
                x = np.float64(X[i, j])
                if x != x:
                    nan += 1
                elif x - x != 0.0:
                    inf += 1
            n_inf += 1 if inf > 0 else 0
            complete[i] = 1 if nan == 0 else 0
            if nan == 0 and skip:
                for k in range(K):
                    out[i, k] = 0.0
                continue
            for k in range(K):
                s = 0.0
                for j in range(d):
                    x = np.float64(X[i, j])
                    if x == x:
                        t = x - means[k, j]
                        s += t * t * inv_var[k, j] + log_var[k, j]
                out[i, k] = bias[k] - 0.5 * s
        finish_rows(out, r0, r1, mode)
    return n_inf


# ------------------------------------------------------------------ small dense algebra


@jit(inline="always")
def _cholesky(A, m):
    """Lower Cholesky factor of A[:m, :m] in place (upper triangle untouched); returns
    log det A, or NaN where A is not positive definite."""
    logdet = 0.0
    for j in range(m):
        v = A[j, j]
        for l in range(j):
            v -= A[j, l] * A[j, l]
        if not v > 0.0:
            return np.nan
        r = np.sqrt(v)
        A[j, j] = r
        logdet += 2.0 * np.log(r)
        for i in range(j + 1, m):
            t = A[i, j]
            for l in range(j):
                t -= A[i, l] * A[j, l]
            A[i, j] = t / r
    return logdet


@jit(inline="always")
def _invert_lower(L, m, inv):
    """inv[:m, :m] = L[:m, :m]⁻¹ (lower triangular; the upper triangle set to 0)."""
    for c in range(m):
        for i in range(c):
            inv[i, c] = 0.0
        inv[c, c] = 1.0 / L[c, c]
        for i in range(c + 1, m):
            t = 0.0
            for l in range(c, i):
                t += L[i, l] * inv[l, c]
            inv[i, c] = -t / L[i, i]


@jit(inline="always")
def _split(idx, a0, s, d, flag, mis, obs):
    """The missing columns ``mis[:s]`` and observed ``obs[:d − s]`` of a pattern, both
    ascending; returns d − s."""
    for j in range(d):
        flag[j] = 0
    for a in range(s):
        mis[a] = idx[a0 + a]
        flag[idx[a0 + a]] = 1
    no = 0
    for j in range(d):
        if flag[j] == 0:
            obs[no] = j
            no += 1
    return no


@jit(inline="always")
def use_precision(prec, mis, s, obs, no, inflation, Lmm, Minv):
    """The factor of Λ_mm for the precision route, or False where that route would lose
    digits (then nothing usable is left in ``Lmm``/``Minv``).

    Λ_mm = Lmm·Lmmᵀ (Cholesky), ``Minv`` = Lmm⁻¹ (s × s); ``inflation`` is the
    covariance's largest Σ_jj·Λ_jj.  Returns (route ok, log|Λ_mm|).
    """
    for a in range(s):
        for b in range(a + 1):
            Lmm[a, b] = prec[mis[a], mis[b]]
    logdet = _cholesky(Lmm, s)
    if logdet != logdet:
        return False, 0.0
    _invert_lower(Lmm, s, Minv)
    if inflation <= PRECISION_SAFE:
        return True, logdet
    if inflation > PRECISION_LIMIT:
        return False, 0.0
    worst = 1.0
    for t in range(no):  # cancellation: Λ_jj against (Σ_oo⁻¹)_jj = Λ_jj − ‖Lmm⁻¹Λ_mj‖²
        j = obs[t]
        q = prec[j, j]
        for a in range(s):
            v = 0.0
            for b in range(a + 1):
                v += Minv[a, b] * prec[mis[b], j]
            q -= v * v
        if not q > 0.0:
            return False, 0.0
        worst = max(worst, prec[j, j] / q)
    return inflation * worst <= PRECISION_LIMIT, logdet


@jit(inline="always")
def _direct_factor(cov, obs, no, Loo):
    """Loo[:no, :no] = the lower Cholesky factor of Σ_oo; returns log|Σ_oo| (NaN where
    Σ_oo is not positive definite)."""
    for t in range(no):
        for u in range(t + 1):
            Loo[t, u] = cov[obs[t], obs[u]]
    return _cholesky(Loo, no)


@jit(fastmath=REASSOC)
def direct_factor(cov, obs, no, Loo):
    """:func:`_direct_factor` as a call (the rare route, kept out of the kernels' bodies)."""
    return _direct_factor(cov, obs, no, Loo)


# ------------------------------------------------------------------ tiles


@jit(inline="always")
def _gather(Xs, p0, rows, obs, no, centre, Zt):
    """Zt[t, r] = Xs[p0 + r, obs[t]] − centre[obs[t]] for a tile of rows."""
    for r in range(rows):
        for t in range(no):
            Zt[t, r] = np.float64(Xs[p0 + r, obs[t]]) - centre[obs[t]]


@jit(fastmath=REASSOC)
def _direct_quadratic(Zt, rows, no, Loo, Y, q):
    """q[r] += ‖Loo⁻¹z_r‖² by forward substitution (the direct route of
    :func:`_tile_quadratic`; a call, not inlined: the route is rare, and inlining it
    into both pattern kernels doubled their compilation for no speed)."""
    for t in range(no):
        for r in range(rows):
            Y[t, r] = Zt[t, r]
        for u in range(t):
            f = Loo[t, u]
            for r in range(rows):
                Y[t, r] -= f * Y[u, r]
        g = 1.0 / Loo[t, t]
        for r in range(rows):
            y = Y[t, r] * g
            Y[t, r] = y
            q[r] += y * y


@jit(inline="always")
def _tile_quadratic(precise, Zt, rows, obs, no, mis, s, U, Minv, Loo, Y, V, q):
    """q[r] = z_rᵀ Σ_oo⁻¹ z_r for the tile's (observed, centred) rows ``Zt`` (no, T).

    Precision route (``precise``): with U = L⁻¹ (Σ = LLᵀ, so Λ = UᵀU) and z zero at the
    missing entries, y = Uz and q = ‖y‖² − ‖Lmm⁻¹(Uᵀy)_m‖² (the Schur complement);
    d·|o|/2 + |m|·d products per row.  Direct route: q = ‖Loo⁻¹z‖² by forward
    substitution, Loo the Cholesky factor of Σ_oo.
    """
    for r in range(rows):
        q[r] = 0.0
    if precise:
        # four terms per sweep over the rows (one load and store of the row of Y or V
        # for four multiply-adds), as kernels.tiles.tile_scores
        d = U.shape[0]
        first = obs[0] if no > 0 else d
        top = 0  # the observed columns ≤ i: obs[:top]
        for i in range(first, d):
            while top < no and obs[top] <= i:
                top += 1
            for r in range(rows):
                Y[i, r] = 0.0
            t = 0
            while t + 4 <= top:
                u0 = U[i, obs[t]]
                u1 = U[i, obs[t + 1]]
                u2 = U[i, obs[t + 2]]
                u3 = U[i, obs[t + 3]]
                for r in range(rows):
                    Y[i, r] += ((u0 * Zt[t, r] + u1 * Zt[t + 1, r])
                                + (u2 * Zt[t + 2, r] + u3 * Zt[t + 3, r]))
                t += 4
            for tt in range(t, top):
                u = U[i, obs[tt]]
                for r in range(rows):
                    Y[i, r] += u * Zt[tt, r]
            for r in range(rows):
                q[r] += Y[i, r] * Y[i, r]
        for a in range(s):
            ma = mis[a]
            for r in range(rows):
                V[a, r] = 0.0
            i = max(ma, first)
            while i + 4 <= d:
                u0 = U[i, ma]
                u1 = U[i + 1, ma]
                u2 = U[i + 2, ma]
                u3 = U[i + 3, ma]
                for r in range(rows):
                    V[a, r] += ((u0 * Y[i, r] + u1 * Y[i + 1, r])
                                + (u2 * Y[i + 2, r] + u3 * Y[i + 3, r]))
                i += 4
            for ii in range(i, d):
                u = U[ii, ma]
                for r in range(rows):
                    V[a, r] += u * Y[ii, r]
        tmp = Y[0]  # Y is spent: its first row holds each row of Lmm⁻¹V in turn
        for a in range(s - 1, -1, -1):  # V ← Lmm⁻¹V from the bottom row up, in place
            for r in range(rows):
                tmp[r] = 0.0
            for b in range(a + 1):
                f = Minv[a, b]
                for r in range(rows):
                    tmp[r] += f * V[b, r]
            for r in range(rows):
                V[a, r] = tmp[r]
                q[r] -= tmp[r] * tmp[r]
    else:
        _direct_quadratic(Zt, rows, no, Loo, Y, q)


@jit(inline="always")
def _finish_scattered(E, c0, rows, mode, order, p0, sh, s, out):
    """Write the scores ``E[:, c0 + r]`` of a tile's rows to ``out[order[p0 + r]]``,
    finished per ``mode`` as :func:`fastgen.kernels.tiles.finish_tile` finishes them
    (``E`` is overwritten)."""
    K = E.shape[0]
    if mode == MODE_JLL:
        for r in range(rows):
            i = order[p0 + r]
            for k in range(K):
                out[i, k] = E[k, c0 + r]
        return
    for r in range(rows):
        sh[r] = -np.inf
    for k in range(K):
        for r in range(rows):
            sh[r] = max(sh[r], E[k, c0 + r])
    for r in range(rows):
        if not sh[r] > -np.inf:
            sh[r] = 0.0
        s[r] = 0.0
    for k in range(K):
        for r in range(rows):
            e = exp_nonpos(E[k, c0 + r] - sh[r])
            s[r] += e
            if mode != MODE_LOG_PROBA:
                E[k, c0 + r] = e
    if mode == MODE_LOG_PROBA:
        for r in range(rows):
            s[r] = sh[r] + np.log(s[r]) if s[r] != 0.0 else np.inf
        for r in range(rows):
            i = order[p0 + r]
            for k in range(K):
                out[i, k] = E[k, c0 + r] - s[r]
    else:
        for r in range(rows):
            s[r] = 1.0 / s[r] if s[r] != 0.0 else 0.0
        for r in range(rows):
            i = order[p0 + r]
            for k in range(K):
                out[i, k] = E[k, c0 + r] * s[r]


@jit(inline="always")
def _first_segment(starts, a):
    """The pattern whose rows include position ``a`` of the order."""
    lo = 0
    hi = starts.shape[0] - 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if starts[mid] <= a:
            lo = mid
        else:
            hi = mid
    return lo


@jit(fastmath=REASSOC)
def _direct_table(cov, obs, no, delta, Loo, W):
    """W[k, :|o|] = Σ_oo⁻¹δ_k,o from Σ_oo's own factor (the direct route of
    :func:`pooled_pattern_scores`, called, not inlined, as :func:`_direct_quadratic`);
    returns log|Σ_oo|."""
    K = delta.shape[0]
    logdet = _direct_factor(cov, obs, no, Loo)
    for k in range(K):
        for t in range(no):  # Loo⁻¹δ_o, then Loo⁻ᵀ of it
            v = delta[k, obs[t]]
            for u in range(t):
                v -= Loo[t, u] * W[k, u]
            W[k, t] = v / Loo[t, t]
        for t in range(no - 1, -1, -1):
            v = W[k, t]
            for u in range(t + 1, no):
                v -= Loo[u, t] * W[k, u]
            W[k, t] = v / Loo[t, t]
    return logdet


@pjit(fastmath=REASSOC)
def pooled_pattern_scores(Xs, order, starts, idx_ptr, idx, centre, delta, G, prec, U, cov,
                          inflation, log_det, log_prior, quadratic, mode, out):
    """Gaussian scores over the observed features for classes sharing one Σ, of the
    rows ``Xs`` (m, d) in pattern order (:func:`fastgen.kernels.patterns.sorted_rows`):
    pattern p's are ``Xs[starts[p]:starts[p + 1]]``, its missing columns
    ``idx[idx_ptr[p]:idx_ptr[p + 1]]`` (patterns without one are skipped), scored in
    tiles into the rows ``order``
    (:func:`fastgen.kernels.patterns.group_rows`) of ``out``.

    With z = x_o − c_o and δ_k = μ_k − c (``delta`` (K, d)), a pattern's table is
    w_k = Σ_oo⁻¹δ_k,o and b_k = log π_k − ½δ_k,oᵀw_k, so that::

        jll_ik = zᵀw_k + b_k − ½(zᵀΣ_oo⁻¹z + log|Σ_oo| + |o|·log 2π),

    the last term (the same for every class) only with ``quadratic``.  By the precision
    route, w_k = (Λδ̃_k)_o − Λ_omΛ_mm⁻¹(Λδ̃_k)_m with δ̃_k = P_oδ_k, which is
    G_o,k − Λ_omΛ_mm⁻¹G_m,k (``G`` (d, K) = Λδ_k; the δ_m terms cancel), and
    log|Σ_oo| = log|Σ| + log|Λ_mm|: O(|m|·|o|·K + |m|²·K + |m|³) per pattern; by the
    direct route (:func:`use_precision` says which) from the Cholesky
    factor of Σ_oo.  ``prec`` Λ, ``U`` L⁻¹, ``cov`` Σ (d, d) float64.  A row with every
    feature missing gets log π_k exactly.
    """
    d = Xs.shape[1]
    K = log_prior.shape[0]
    n_pos = Xs.shape[0]
    T = XT_TILE_ROWS
    B = SCORE_TILE_BLOCK
    nb = (n_pos + B - 1) // B
    for blk in prange(nb):
        a = blk * B
        b = min(n_pos, a + B)
        flag = np.empty(d, dtype=np.intp)
        mis = np.empty(d, dtype=np.intp)
        obs = np.empty(d, dtype=np.intp)
        Lmm = np.empty((d, d))
        Minv = np.empty((d, d))
        Loo = np.empty((d, d))
        H = np.empty((d, K))
        T1 = np.empty((d, K))
        V2 = np.empty((d, K))
        W = np.empty((K, d))
        bias = np.empty(K)
        Zt = np.empty((d, T))
        Y = np.empty((d, T))
        V = np.empty((d, T))
        E = np.empty((K, T))
        q = np.empty(T)
        sh = np.empty(T)
        sm = np.empty(T)
        p = _first_segment(starts, a)
        while p < starts.shape[0] - 1 and starts[p] < b:
            s = idx_ptr[p + 1] - idx_ptr[p]
            lo = max(a, starts[p])
            hi = min(b, starts[p + 1])
            if s == 0 or hi <= lo:
                p += 1
                continue
            no = _split(idx, idx_ptr[p], s, d, flag, mis, obs)
            precise, logdet_mm = use_precision(prec, mis, s, obs, no, inflation, Lmm, Minv)
            if precise:
                # w_k = G_o,k − Λ_om Λ_mm⁻¹ G_m,k (Λδ̃ = Λδ − Λ_{:,m}δ_m, whose δ_m parts
                # cancel): T1 = Lmm⁻¹G_m, V2 = Lmm⁻ᵀT1
                logdet_oo = log_det + logdet_mm
                for c in range(s):
                    for k in range(K):
                        T1[c, k] = 0.0
                    for e in range(c + 1):
                        f = Minv[c, e]
                        for k in range(K):
                            T1[c, k] += f * G[mis[e], k]
                for c in range(s):
                    for k in range(K):
                        V2[c, k] = 0.0
                    for e in range(c, s):
                        f = Minv[e, c]
                        for k in range(K):
                            V2[c, k] += f * T1[e, k]
                for t in range(no):
                    j = obs[t]
                    for k in range(K):
                        H[t, k] = G[j, k]
                    for c in range(s):
                        lam = prec[j, mis[c]]
                        for k in range(K):
                            H[t, k] -= lam * V2[c, k]
                    for k in range(K):
                        W[k, t] = H[t, k]
            else:
                logdet_oo = _direct_table(cov, obs, no, delta, Loo, W)
            for k in range(K):
                v = 0.0
                for t in range(no):
                    v += delta[k, obs[t]] * W[k, t]
                bias[k] = log_prior[k] - 0.5 * v
            const = -0.5 * (logdet_oo + no * LOG_2PI) if no > 0 else 0.0
            for p0 in range(lo, hi, T):
                rows = min(hi, p0 + T) - p0
                _gather(Xs, p0, rows, obs, no, centre, Zt)
                for k in range(K):  # four terms per sweep, as tiles.tile_scores
                    bk = bias[k]
                    for r in range(rows):
                        E[k, r] = bk
                    t = 0
                    while t + 4 <= no:
                        w0 = W[k, t]
                        w1 = W[k, t + 1]
                        w2 = W[k, t + 2]
                        w3 = W[k, t + 3]
                        for r in range(rows):
                            E[k, r] += ((w0 * Zt[t, r] + w1 * Zt[t + 1, r])
                                        + (w2 * Zt[t + 2, r] + w3 * Zt[t + 3, r]))
                        t += 4
                    for tt in range(t, no):
                        w = W[k, tt]
                        for r in range(rows):
                            E[k, r] += w * Zt[tt, r]
                if quadratic and no > 0:
                    _tile_quadratic(precise, Zt, rows, obs, no, mis, s, U, Minv, Loo, Y,
                                    V, q)
                    for k in range(K):
                        for r in range(rows):
                            E[k, r] += const - 0.5 * q[r]
                _finish_scattered(E, 0, rows, mode, order, p0, sh, sm, out)
            p += 1
    return 0


@pjit(fastmath=REASSOC)
def class_pattern_scores(Xs, order, starts, idx_ptr, idx, means, prec, U, cov, inflation,
                         log_det, log_prior, block, mode, out):
    """Gaussian scores over the observed features, one Σ_k per class, the rows of each
    pattern (as :func:`pooled_pattern_scores` takes them) scored in tiles::

        jll_ik = log π_k − ½((x_o − μ_k,o)ᵀΣ_k,oo⁻¹(x_o − μ_k,o) + log|Σ_k,oo| + |o|·log 2π),

    the quadratic form by :func:`_tile_quadratic` (the precision route with the
    factor of Λ_k,mm, log|Σ_k,oo| = log|Σ_k| + log|Λ_k,mm|, or Σ_k,oo's own factor, per
    pattern and class: :func:`use_precision`).  ``prec`` Λ_k, ``U`` L_k⁻¹, ``cov`` Σ_k
    (K, d, d) float64; ``inflation`` and ``log_det`` (K,).  Each work item takes
    ``block`` positions of the order (a multiple of the tile), gathers its share of a
    pattern's rows once and holds their scores (K, block) until every class is done.
    A row with every feature missing gets log π_k exactly.
    """
    d = Xs.shape[1]
    K = log_prior.shape[0]
    n_pos = Xs.shape[0]
    T = XT_TILE_ROWS
    B = block
    nb = (n_pos + B - 1) // B
    for blk in prange(nb):
        a = blk * B
        b = min(n_pos, a + B)
        flag = np.empty(d, dtype=np.intp)
        mis = np.empty(d, dtype=np.intp)
        obs = np.empty(d, dtype=np.intp)
        Lmm = np.empty((d, d))
        Minv = np.empty((d, d))
        Loo = np.empty((d, d))
        Xb = np.empty((d, B))
        S = np.empty((K, B))
        Zt = np.empty((d, T))
        Y = np.empty((d, T))
        V = np.empty((d, T))
        q = np.empty(T)
        sh = np.empty(T)
        sm = np.empty(T)
        p = _first_segment(starts, a)
        while p < starts.shape[0] - 1 and starts[p] < b:
            s = idx_ptr[p + 1] - idx_ptr[p]
            lo = max(a, starts[p])
            hi = min(b, starts[p + 1])
            if s == 0 or hi <= lo:
                p += 1
                continue
            no = _split(idx, idx_ptr[p], s, d, flag, mis, obs)
            m = hi - lo
            for r in range(m):
                for t in range(no):
                    Xb[t, r] = np.float64(Xs[lo + r, obs[t]])
            for k in range(K):
                if no == 0:
                    for r in range(m):
                        S[k, r] = log_prior[k]
                    continue
                precise, logdet_mm = use_precision(prec[k], mis, s, obs, no, inflation[k],
                                                   Lmm, Minv)
                if precise:
                    logdet_oo = log_det[k] + logdet_mm
                else:
                    logdet_oo = direct_factor(cov[k], obs, no, Loo)
                const = log_prior[k] - 0.5 * (logdet_oo + no * LOG_2PI)
                for c0 in range(0, m, T):
                    rows = min(m, c0 + T) - c0
                    for t in range(no):
                        mu = means[k, obs[t]]
                        for r in range(rows):
                            Zt[t, r] = Xb[t, c0 + r] - mu
                    _tile_quadratic(precise, Zt, rows, obs, no, mis, s, U[k], Minv, Loo,
                                    Y, V, q)
                    for r in range(rows):
                        S[k, c0 + r] = const - 0.5 * q[r]
            for c0 in range(0, m, T):
                rows = min(m, c0 + T) - c0
                _finish_scattered(S, c0, rows, mode, order, lo + c0, sh, sm, out)
            p += 1
    return 0

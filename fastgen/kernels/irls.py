"""Newton / IRLS kernels for logistic regression on dense data.

Every kernel assumes a C-contiguous float32/float64 ``X`` (n, d), int32 class codes,
a float64 sample-weight vector or an empty one (meaning all ones), and float64
coefficients with the intercept, when fitted, stored last: ``coef[:d]`` multiplies
``x`` and ``coef[d]`` is the intercept (``x̃ = [x, 1]``).  Accumulation is in float64.

Work split.  Rows are cut into groups of consecutive rows by ``bounds`` (G + 1 row
offsets, chosen by the caller from the problem size alone, never from the thread
count).  ``prange`` runs over the groups; each group accumulates into its own slot and
the slots are summed serially in group order, so results are bitwise identical for any
``NUMBA_NUM_THREADS``.  Inside a group, rows go in fixed blocks of ``block`` rows; the
weighted Gram of a block is one GEMM of the √s-scaled block with itself.  Callers hold
BLAS at one thread around the kernels that call ``np.dot`` (see ``fastgen._runtime``).
"""

import numpy as np
from numba import prange

from ._jit import REASSOC, jit, pjit
from .blas import symmetrize_from_upper, syrk_upper
from .special import exp_nonpos, softmax_row, sum_slots
from .tiles import load_tile, tile_dots, tile_scores, xt_tile_rows

__all__ = [
    "softplus",
    "expit",
    "binary_loss_grad_hess",
    "binary_hessp",
    "binary_row",
    "multinomial_row",
    "row_scores",
    "multinomial_loss_grad",
    "multinomial_hessp",
    "multinomial_hessian",
    "TILE_ROWS",
    "LOSS_TILE_MAX_P",
    "hessp_by_tiles",
    "weighted_sq_colsum",
    "weighted_gram",
    "pass_layout",
]


@jit(inline="always")
def softplus(t):
    """log(1 + exp(t)) = max(t, 0) + log1p(exp(-|t|)), without overflow.

    The exponential's argument is ≤ 0: :func:`fastgen.kernels.special.exp_nonpos`.
    """
    if t > 0.0:
        return t + np.log1p(exp_nonpos(-t))
    return np.log1p(exp_nonpos(t))


@jit(inline="always")
def expit(t):
    """σ(t) = 1 / (1 + exp(-t)), without overflow (exponent ≤ 0, by ``exp_nonpos``)."""
    if t >= 0.0:
        return 1.0 / (1.0 + exp_nonpos(-t))
    e = exp_nonpos(t)
    return e / (1.0 + e)


@jit(inline="always")
def _copy_2d(src, dst):
    """``dst[:, :] = src`` as plain loops: a slice assignment from an array would
    compile numba's shape-mismatch error (string formatting) into every kernel."""
    for a in range(src.shape[0]):
        for b in range(src.shape[1]):
            dst[a, b] = src[a, b]


@jit(inline="always")
def pass_layout(d, fit_intercept, bounds, w):
    """``(p, G, weighted)`` of a pass over rows: p = d (+1 for the intercept) coefficients
    per class, G row groups from ``bounds`` (G + 1 edges), and whether ``w`` holds
    weights (an empty ``w`` means all 1).  The prologue of every weighted IRLS and
    inference kernel, dense and CSR alike (p equals the width of their coefficient
    tables: the callers build them with the intercept column only when fitted)."""
    return (d + 1 if fit_intercept else d), bounds.shape[0] - 1, w.shape[0] > 0


@jit(inline="always")
def binary_row(eta, yi, wi):
    """One row of the binary loss, shared by the dense and CSR kernels.

    Returns ``(w_i [softplus(η) − y_i η], w_i (σ(η) − y_i))``: the row's loss and the
    coefficient of x̃_i in the gradient, each through an exponent ≤ 0.
    """
    if yi == 1:
        return wi * softplus(-eta), -wi * expit(-eta)  # w (π − 1)
    return wi * softplus(eta), wi * expit(eta)


@jit(inline="always")
def multinomial_row(eta, e, wi, yi):
    """One row of the multinomial loss, shared by the dense and CSR kernels.

    From the scores ``eta`` (K,) writes ``e[k] = exp(η_k − c)`` (via
    :func:`fastgen.kernels.special.softmax_row`) and returns
    ``(w_i (logsumexp_k η_k − η_{y_i}), 1 / Σ_k e[k], max_k η_k − min_k η_k)``, so that
    p_ik = e[k] times the second value.
    """
    mn = eta[0]
    for k in range(1, eta.shape[0]):
        mn = min(mn, eta[k])
    c, se = softmax_row(eta, e)  # c = max_k η_k for finite scores
    return wi * (c + np.log(se) - eta[yi]), 1.0 / se, c - mn


@jit(inline="always")
def row_scores(X, i, C, fit_intercept, out):
    """``out[k] = C[k, d] + Σ_j X[i, j] C[k, j]``: row i's K scores against a (K, p)
    coefficient table (intercept last, if fitted).

    One contiguous dot product per class: under the kernels' reassociation flag each
    vectorises, where a class-inner loop over Cᵀ does not.  Transposed tiles of rows
    are faster only for small p (:func:`hessp_by_tiles`), so the row-wise kernels keep
    these dot products (benchmarks/NOTES.md).
    """
    d = X.shape[1]
    for k in range(out.shape[0]):
        s = C[k, d] if fit_intercept else 0.0
        for j in range(d):
            s += X[i, j] * C[k, j]
        out[k] = s


@jit(fastmath=REASSOC)
def _loss_grad_hess_group(X, y, w, coef, fit_intercept, weighted, b0, lo, hi, block, zb,
                          hp, want_hess, store_s, s_out, grad_out, hess_out):
    """Rows ``lo:hi`` of :func:`binary_loss_grad_hess`: the gradient and (``want_hess``)
    the Hessian's upper triangle into one group's zeroed slots.  Returns
    ``(loss, max |η|)``."""
    d = X.shape[1]
    p = grad_out.shape[0]
    Z = np.zeros((zb, hp))
    gr = np.zeros(p)
    H = np.zeros((hp, hp))
    ls = 0.0
    eta_max = 0.0
    for start in range(lo, hi, block):
        stop = min(hi, start + block)
        for i in range(start, stop):
            eta = b0
            for j in range(d):
                eta += X[i, j] * coef[j]
            wi = w[i] if weighted else 1.0
            if wi > 0.0 and abs(eta) > eta_max:
                eta_max = abs(eta)
            li, r = binary_row(eta, y[i], wi)
            ls += li
            for j in range(d):
                gr[j] += r * X[i, j]
            if fit_intercept:
                gr[d] += r
            if want_hess or store_s:
                s = wi * expit(eta) * expit(-eta)
                if store_s:
                    s_out[i] = s
                if want_hess:
                    q = np.sqrt(s)
                    row = i - start
                    for j in range(d):
                        Z[row, j] = q * X[i, j]
                    if fit_intercept:
                        Z[row, d] = q
        if want_hess:
            # upper triangle by SYRK: half the flops of the GEMM Z.T @ Z
            syrk_upper(Z, stop - start, H)
    for j in range(p):
        grad_out[j] = gr[j]
    if want_hess:
        for a in range(hp):
            for b in range(hp):
                hess_out[a, b] = H[a, b]
    return ls, eta_max


@pjit(fastmath=REASSOC)
def binary_loss_grad_hess(X, y, w, coef, fit_intercept, bounds, block, want_hess, s_out):
    """Loss, gradient and Hessian of binary logistic regression in one pass over X.

    With η_i = x̃_iᵀβ, π_i = σ(η_i) and weights w_i:

    * loss ``f = Σ_i w_i [softplus(η_i) − y_i η_i]`` (the negative log-likelihood),
    * gradient ``g = Σ_i w_i (π_i − y_i) x̃_i``,
    * Hessian ``H = Σ_i w_i π_i (1 − π_i) x̃_i x̃_iᵀ`` (only if ``want_hess``; else a
      1×1 zero), computed per block as ``ZᵀZ`` (BLAS SYRK on the upper triangle) with
      ``Z_i = √(w_i π_i(1−π_i)) x̃_i``.

    ``y`` holds int32 codes 0/1.  If ``s_out`` has n entries it receives
    ``s_i = w_i π_i (1 − π_i)`` (for Hessian-vector products).

    Returns ``(loss, grad (p,), hess (p, p) or (1, 1), max_i |η_i|)``, p = d + fit_intercept.
    """
    n, d = X.shape
    p, G, weighted = pass_layout(d, fit_intercept, bounds, w)
    store_s = s_out.shape[0] > 0
    b0 = coef[d] if fit_intercept else 0.0
    hp = p if want_hess else 1
    zb = block if want_hess else 1
    loss_s = np.zeros(G)
    eta_max_slots = np.zeros(G)
    grad_s = np.zeros((G, p))
    hess_s = np.zeros((G, hp, hp))
    # the per-group work lives in a serial helper, not inlined: a small parallel body
    # compiles far faster
    for g in prange(G):
        ls, eta_max = _loss_grad_hess_group(X, y, w, coef, fit_intercept, weighted, b0,
                                            bounds[g], bounds[g + 1], block, zb, hp,
                                            want_hess, store_s, s_out, grad_s[g],
                                            hess_s[g])
        loss_s[g] = ls
        eta_max_slots[g] = eta_max
    grad = sum_slots(grad_s)
    hess = sum_slots(hess_s)
    if want_hess:
        symmetrize_from_upper(hess)
    return sum_slots(loss_s), grad, hess, eta_max_slots.max()


@pjit(fastmath=REASSOC)
def binary_hessp(X, s, v, fit_intercept, bounds):
    """Hessian-vector product ``Σ_i s_i x̃_i (x̃_iᵀ v)`` (s from :func:`binary_loss_grad_hess`)."""
    n, d = X.shape
    p = v.shape[0]
    G = bounds.shape[0] - 1
    out_s = np.zeros((G, p))
    b0 = v[d] if fit_intercept else 0.0
    for g in prange(G):
        acc = np.zeros(p)
        for i in range(bounds[g], bounds[g + 1]):
            u = b0
            for j in range(d):
                u += X[i, j] * v[j]
            c = s[i] * u
            for j in range(d):
                acc[j] += c * X[i, j]
            if fit_intercept:
                acc[d] += c
        for j in range(p):
            out_s[g, j] = acc[j]
    return sum_slots(out_s)


#: Rows per tile of :func:`multinomial_loss_grad` when it goes row-wise (p > LOSS_TILE_MAX_P).
TILE_ROWS = 64

#: Largest p for which :func:`multinomial_loss_grad` goes by transposed tiles
#: (:mod:`fastgen.kernels.tiles`); :func:`hessp_by_tiles` decides for
#: :func:`multinomial_hessp`.
LOSS_TILE_MAX_P = 65


@jit(inline="always")
def hessp_by_tiles(p, K):
    """Whether :func:`multinomial_hessp` goes by transposed tiles for K classes and p
    coefficients per class: tiles win for small p, up to larger p the more classes
    share each tile (the crossover is in benchmarks/NOTES.md)."""
    return p <= 24 or (K >= 5 and p <= 44) or (K >= 8 and p <= 60)


@jit(inline="always")
def _loss_grad_tile(C, Xt, wv, y, start, rows, E, st, store_p, P_out, gr):
    """Rows ``start:start+rows`` of :func:`multinomial_loss_grad` from their transposed
    tile ``Xt`` and weights ``wv`` (:func:`load_tile`), every step a loop over the rows:
    scores (:func:`tile_scores`), per-row max and min, exponentials and their sums, the
    probabilities (written to ``P_out`` when ``store_p``), then the gradient as
    :func:`tile_dots` of ``w (P − Y)``.  ``E`` is (K, T) and ``st`` (3, T) scratch.
    Returns the tile's loss and its largest score range over rows of positive weight."""
    K = C.shape[0]
    tile_scores(C, Xt, rows, E)
    hi = st[0]
    lo = st[1]
    se = st[2]
    for r in range(rows):
        hi[r] = E[0, r]
        lo[r] = E[0, r]
    for k in range(1, K):
        for r in range(rows):
            hi[r] = max(hi[r], E[k, r])
            lo[r] = min(lo[r], E[k, r])
    ls = 0.0
    eta_max = 0.0
    for r in range(rows):
        wi = wv[r]
        ls += wi * (hi[r] - E[y[start + r], r])
        if wi > 0.0 and hi[r] - lo[r] > eta_max:
            eta_max = hi[r] - lo[r]
        se[r] = 0.0
    for k in range(K):
        for r in range(rows):  # every exponent ≤ 0
            e = exp_nonpos(E[k, r] - hi[r])
            E[k, r] = e
            se[r] += e
    for r in range(rows):
        ls += wv[r] * np.log(se[r])
        se[r] = 1.0 / se[r]
    for k in range(K):
        for r in range(rows):
            E[k, r] *= se[r]
    if store_p:
        for r in range(rows):
            for k in range(K):
                P_out[start + r, k] = E[k, r]
    for r in range(rows):
        E[y[start + r], r] -= 1.0
    for k in range(K):
        for r in range(rows):
            E[k, r] *= wv[r]
    tile_dots(E, Xt, rows, gr)
    return ls, eta_max


@jit(fastmath=REASSOC)
def _loss_grad_group(X, y, w, coef, fit_intercept, weighted, lo, hi, tiles, T, store_p,
                     P_out, grad_out):
    """Rows ``lo:hi`` of :func:`multinomial_loss_grad`: the gradient into one group's
    zeroed slot ``grad_out`` (K, p).  Returns ``(loss, max score range)``."""
    d = X.shape[1]
    K = coef.shape[0]
    p = grad_out.shape[1]
    gr = np.zeros((K, p))
    ls = 0.0
    eta_max = 0.0
    if tiles:
        Xt = np.empty((p, T))
        wv = np.empty(T)
        Et = np.empty((K, T))
        st = np.empty((3, T))
        for start in range(lo, hi, T):
            rows = min(hi, start + T) - start
            load_tile(X, w, weighted, fit_intercept, start, rows, Xt, wv)
            lt, et = _loss_grad_tile(coef, Xt, wv, y, start, rows, Et, st, store_p, P_out,
                                     gr)
            ls += lt
            eta_max = max(eta_max, et)
        _copy_2d(gr, grad_out)
        return ls, eta_max
    E = np.empty((T, K))
    Ef = E.reshape(-1)
    for start in range(lo, hi, T):
        rows = min(T, hi - start)
        for r in range(rows):
            i = start + r
            Er = E[r]
            row_scores(X, i, coef, fit_intercept, Er)
            top = Er[0]
            low = Er[0]
            for k in range(1, K):
                top = max(top, Er[k])
                low = min(low, Er[k])
            wi = w[i] if weighted else 1.0
            ls += wi * (top - Er[y[i]])
            if wi > 0.0 and top - low > eta_max:
                eta_max = top - low
            for k in range(K):
                Er[k] -= top
        for q in range(rows * K):  # every exponent ≤ 0
            Ef[q] = exp_nonpos(Ef[q])
        for r in range(rows):
            i = start + r
            Er = E[r]
            se = 0.0
            for k in range(K):
                se += Er[k]
            wi = w[i] if weighted else 1.0
            ls += wi * np.log(se)
            inv = 1.0 / se
            yi = y[i]
            for k in range(K):
                pk = Er[k] * inv
                if store_p:
                    P_out[i, k] = pk
                rk = wi * (pk - 1.0) if k == yi else wi * pk
                for j in range(d):
                    gr[k, j] += rk * X[i, j]
                if fit_intercept:
                    gr[k, d] += rk
    _copy_2d(gr, grad_out)
    return ls, eta_max


@pjit(fastmath=REASSOC)
def multinomial_loss_grad(X, y, w, coef, fit_intercept, bounds, P_out):
    """Loss and gradient of multinomial (softmax) logistic regression in one pass.

    ``coef`` is (K, p): η_ik = x̃_iᵀβ_k, p_ik = exp(η_ik − logsumexp_k η_ik).

    * loss ``f = Σ_i w_i [logsumexp_k η_ik − η_{i,y_i}]``,
    * gradient ``G_k = Σ_i w_i (p_ik − [y_i = k]) x̃_i``.

    If ``P_out`` is (n, K) it receives the probabilities.  Returns
    ``(loss, G (K, p), max_i (max_k η_ik − min_k η_ik))``.

    For p ≤ ``LOSS_TILE_MAX_P`` rows go in transposed tiles (:func:`_loss_grad_tile`),
    faster there than row-wise tiles.  Otherwise rows go in tiles of
    ``TILE_ROWS``: the scores of a tile are row-wise dot products, then the tile's T·K
    exponentials run as one flat loop, which vectorises (a loop over one row's K classes
    barely does), then each row adds into the gradient (benchmarks/NOTES.md).
    """
    n, d = X.shape
    K = coef.shape[0]
    p, G, weighted = pass_layout(d, fit_intercept, bounds, w)
    tiles = p <= LOSS_TILE_MAX_P
    T = xt_tile_rows(p) if tiles else TILE_ROWS
    store_p = P_out.shape[0] > 0
    loss_s = np.zeros(G)
    eta_max_slots = np.zeros(G)
    grad_s = np.zeros((G, K, p))
    # the per-group work lives in a serial helper, not inlined: a small parallel body
    # compiles far faster
    for g in prange(G):
        ls, eta_max = _loss_grad_group(X, y, w, coef, fit_intercept, weighted, bounds[g],
                                       bounds[g + 1], tiles, T, store_p, P_out, grad_s[g])
        loss_s[g] = ls
        eta_max_slots[g] = eta_max
    return sum_slots(loss_s), sum_slots(grad_s), eta_max_slots.max()


@jit(inline="always")
def _hessp_tile(P, V, start, rows, Xt, wv, U, pu, Pt, acc):
    """Rows ``start:start+rows`` of :func:`multinomial_hessp` from their transposed tile
    ``Xt`` (p, T) and weights ``wv`` (:func:`load_tile`): u_k = X̃ v_k as axpys over
    the rows, then per class one dot product over the rows for each coefficient.  The
    tile's probabilities are transposed into ``Pt`` (K, T) first, so that every
    per-class loop reads contiguous memory."""
    K, p = V.shape
    for r in range(rows):
        for k in range(K):
            Pt[k, r] = P[start + r, k]
    tile_scores(V, Xt, rows, U)
    for r in range(rows):
        pu[r] = 0.0
    for k in range(K):
        for r in range(rows):
            pu[r] += Pt[k, r] * U[k, r]
    for k in range(K):
        for r in range(rows):
            U[k, r] = wv[r] * Pt[k, r] * (U[k, r] - pu[r])
    tile_dots(U, Xt, rows, acc)


@pjit(fastmath=REASSOC)
def multinomial_hessp(X, w, P, V, fit_intercept, bounds):
    """Hessian-vector product of the multinomial loss, one pass over X.

    ``(HV)_k = Σ_i w_i p_ik (u_ik − Σ_l p_il u_il) x̃_i`` with ``u_ik = x̃_iᵀ v_k``; P are the
    probabilities written by :func:`multinomial_loss_grad`.  V and the result are (K, p).

    Where :func:`hessp_by_tiles` says so, rows go in transposed tiles
    (:func:`_hessp_tile`): a row's p entries are too few for its own loops to vectorise
    well, a tile's rows are not.  Elsewhere (large p with few classes) the row-wise
    loop is as fast or faster.
    """
    n, d = X.shape
    K = V.shape[0]
    p, G, weighted = pass_layout(d, fit_intercept, bounds, w)
    tiles = hessp_by_tiles(p, K)
    T = xt_tile_rows(p) if tiles else 1
    out_s = np.zeros((G, K, p))
    for g in prange(G):
        u = np.empty(K)
        acc = np.zeros((K, p))
        Xt = np.empty((p, T))
        wv = np.empty(T)
        U = np.empty((K, T))
        put = np.empty(T)
        Pt = np.empty((K, T))
        if tiles:
            for start in range(bounds[g], bounds[g + 1], T):
                rows = min(bounds[g + 1], start + T) - start
                load_tile(X, w, weighted, fit_intercept, start, rows, Xt, wv)
                _hessp_tile(P, V, start, rows, Xt, wv, U, put, Pt, acc)
            out_s[g] = acc  # a copy loop ran slower here (benchmarks/NOTES.md)
            continue
        for i in range(bounds[g], bounds[g + 1]):
            row_scores(X, i, V, fit_intercept, u)
            pu = 0.0
            for k in range(K):
                pu += P[i, k] * u[k]
            wi = w[i] if weighted else 1.0
            for k in range(K):
                c = wi * P[i, k] * (u[k] - pu)
                for j in range(d):
                    acc[k, j] += c * X[i, j]
                if fit_intercept:
                    acc[k, d] += c
        out_s[g] = acc
    return sum_slots(out_s)


@pjit(fastmath=REASSOC)
def multinomial_hessian(X, w, P, fit_intercept, bounds, block):
    """Explicit multinomial Hessian, (K·p, K·p), index ``k·p + j``.

    ``H = Σ_i w_i (diag(p_i) − p_i p_iᵀ) ⊗ x̃_i x̃_iᵀ``, per block as
    ``blockdiag_k(D_kᵀD_k) − CᵀC`` with ``D_k,i = √(w_i p_ik) x̃_i`` and
    ``C_i = √w_i (p_i ⊗ x̃_i)``: about n·(K·p)² flops, for small K·p.
    """
    n, d = X.shape
    K = P.shape[1]
    p, G, weighted = pass_layout(d, fit_intercept, bounds, w)
    Kp = K * p
    hess_s = np.zeros((G, Kp, Kp))
    for g in prange(G):
        D = np.zeros((K, block, p))
        C = np.zeros((block, Kp))
        H = np.zeros((Kp, Kp))
        lo = bounds[g]
        hi = bounds[g + 1]
        for start in range(lo, hi, block):
            stop = min(hi, start + block)
            for i in range(start, stop):
                row = i - start
                wi = w[i] if weighted else 1.0
                sqrt_w = np.sqrt(wi)
                for k in range(K):
                    pk = P[i, k]
                    a = np.sqrt(wi * pk)
                    c = sqrt_w * pk
                    for j in range(d):
                        D[k, row, j] = a * X[i, j]
                        C[row, k * p + j] = c * X[i, j]
                    if fit_intercept:
                        D[k, row, d] = a
                        C[row, k * p + d] = c
            rows = stop - start  # a short block's products cover its rows only
            Cr = C[:rows]
            H -= np.dot(Cr.T, Cr)
            for k in range(K):
                Dk = D[k, :rows]
                Hk = np.dot(Dk.T, Dk)
                for a in range(p):
                    for b in range(p):
                        H[k * p + a, k * p + b] += Hk[a, b]
        _copy_2d(H, hess_s[g])
    return sum_slots(hess_s)


@pjit(fastmath=REASSOC)
def weighted_gram(X, w, fit_intercept, bounds, block):
    """The weighted design Gram ``X̃ᵀ diag(w) X̃`` (p, p), w empty meaning all ones.

    Per block of ``block`` rows the SYRK of ``√w_i x̃_i``: the Böhning bound of the
    multinomial (and binary) Newton-CG preconditioner needs this matrix alone, without
    the per-row exponentials of :func:`binary_loss_grad_hess` at β = 0.
    """
    n, d = X.shape
    p, G, weighted = pass_layout(d, fit_intercept, bounds, w)
    out_s = np.zeros((G, p, p))
    for g in prange(G):
        Z = np.zeros((block, p))
        H = np.zeros((p, p))
        for start in range(bounds[g], bounds[g + 1], block):
            stop = min(bounds[g + 1], start + block)
            for i in range(start, stop):
                q = np.sqrt(w[i]) if weighted else 1.0
                row = i - start
                for j in range(d):
                    Z[row, j] = q * X[i, j]
                if fit_intercept:
                    Z[row, d] = q
            syrk_upper(Z, stop - start, H)
        _copy_2d(H, out_s[g])
    H = sum_slots(out_s)
    symmetrize_from_upper(H)
    return H


@pjit(fastmath=REASSOC)
def weighted_sq_colsum(X, s, fit_intercept, bounds):
    """``Σ_i s_i x̃_ij²`` per column (the Hessian diagonal, for Jacobi preconditioning)."""
    n, d = X.shape
    p = d + 1 if fit_intercept else d
    G = bounds.shape[0] - 1
    out_s = np.zeros((G, p))
    for g in prange(G):
        acc = np.zeros(p)
        for i in range(bounds[g], bounds[g + 1]):
            si = s[i]
            for j in range(d):
                acc[j] += si * X[i, j] * X[i, j]
            if fit_intercept:
                acc[d] += si
        for j in range(p):
            out_s[g, j] = acc[j]
    return sum_slots(out_s)

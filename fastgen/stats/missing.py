"""Missing features (NaN in X): rows grouped by missingness pattern, and the Gaussian
passes over them.

A Gaussian's observed coordinates o of a row are Gaussian again, N(μ_o, Σ_oo).  The
passes here work with the precision Λ = Σ⁻¹ and update it per pattern instead of
factoring Σ_oo: with r = P_o(x − μ) (the residual, zero at the missing coordinates m),

    (x_o − μ_o)ᵀ Σ_oo⁻¹ (x_o − μ_o) = rᵀΛr − uᵀ Λ_mm⁻¹ u,    u = (Λr)_m,
    log|Σ_oo| = log|Σ| + log|Λ_mm|,
    E[x_m | x_o] = μ_m − Λ_mm⁻¹ u,    Cov[x_m | x_o] = Λ_mm⁻¹

(the Schur complement of Λ_mm).  The bulk of the work is one product of the rows with
Λ, as for complete rows; each pattern factors only its small Λ_mm, once.  The same
pieces give the marginal log-densities that score a row with NaN and the conditional
expectations of an EM step (:func:`conditional_moments`), which takes fractional class
memberships so that a row can belong to several classes.  The available-case
statistics of the models that factorise per feature are in
:mod:`fastgen.stats.available`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse

from .._runtime import kernel_module
from .._validation import check_X
from .._validation.arrays import report_infinite
from ..kernels.modes import MODE_JLL

missing_kernels = kernel_module("missing")
pattern_kernels = kernel_module("patterns")

__all__ = ["MissingPatterns", "missing_patterns", "pattern_factors", "pattern_tables",
           "gaussian_marginal", "RowGroups", "row_groups", "diagonal_marginal_jll",
           "conditional_moments", "precision_of", "LOG_2PI",
           "NAN_POLICIES", "check_nan_policy", "nan_input", "has_nan", "reject_infinite"]

LOG_2PI = float(np.log(2.0 * np.pi))
# rows per block of the per-row corrections: bounds the (rows, s, K) temporaries
_BLOCK = 1 << 16


NAN_POLICIES = ("raise", "marginalize")


def check_nan_policy(nan_policy):
    """``nan_policy`` checked: "raise" (NaN in X is an error) or "marginalize"."""
    if not isinstance(nan_policy, str) or nan_policy not in NAN_POLICIES:
        raise ValueError(f"nan_policy must be 'raise' or 'marginalize'; got {nan_policy!r}")
    return nan_policy


def reject_infinite(X):
    """Raise naming the first infinite entry of validated X (dense or CSR; NaN
    allowed)."""
    report_infinite(X, "X")


def has_nan(X) -> bool:
    """Whether validated X (dense, or the stored values of CSR) holds a NaN."""
    data = X.data if scipy.sparse.issparse(X) else X
    return bool(np.isnan(data).any())


def nan_input(X, nan_policy, *, allow_sparse=False):
    """For a fit: X validated with NaN allowed (infinity refused) when ``nan_policy`` is
    "marginalize" and X holds a NaN, else None (the complete-data fit then runs on X as
    given, unchanged)."""
    if check_nan_policy(nan_policy) != "marginalize":
        return None
    Xv = check_X(X, allow_sparse=allow_sparse, finite=False, missing=True)
    if not has_nan(Xv):
        return None
    reject_infinite(Xv)
    return Xv


@dataclass(frozen=True)
class MissingPatterns:
    """Rows grouped by which features are missing.

    ``missing`` (n, d) bool marks the NaN entries; ``patterns`` (P, d) bool the
    distinct rows of it; ``pattern_of`` (n,) the pattern of each row; ``n_missing`` (P,)
    the number of missing features of each pattern.
    """

    missing: np.ndarray
    patterns: np.ndarray
    pattern_of: np.ndarray
    n_missing: np.ndarray

    def patterns_index(self, s):
        """The patterns with s missing features, in the order of :meth:`groups`."""
        return np.flatnonzero(self.n_missing == s)

    def groups(self):
        """(s, rows, local, idx) for each missing count s ≥ 1 present: ``rows`` the rows
        with s missing features, ``local`` each one's pattern among those with s missing
        (:meth:`patterns_index`), ``idx`` (P_s, s) their missing columns, ascending."""
        out = []
        for s in np.unique(self.n_missing):
            s = int(s)
            if s == 0:
                continue
            pats = self.patterns_index(s)  # numbered by missing count: one range
            idx = np.nonzero(self.patterns[pats])[1].reshape(-1, s)
            rows = np.flatnonzero(self.n_missing[self.pattern_of] == s)
            out.append((s, rows, self.pattern_of[rows] - pats[0], idx))
        return out


#: up to this many features, patterns are told apart by counting their 2^d keys (no sort)
_COUNT_KEYS_MAX_D = 20


def missing_patterns(missing) -> MissingPatterns:
    """Group the rows of the (n, d) bool mask ``missing`` by pattern (bits packed into
    integer keys: counted for d ≤ 20, else sorted); the patterns are numbered by
    missing count."""
    missing = np.ascontiguousarray(missing, dtype=bool)
    n, d = missing.shape
    packed = np.packbits(missing, axis=1)
    width = -(-packed.shape[1] // 8) * 8
    if width != packed.shape[1]:
        packed = np.concatenate([packed, np.zeros((n, width - packed.shape[1]), np.uint8)],
                                axis=1)
    words = np.ascontiguousarray(packed).view(">u8")
    if d <= _COUNT_KEYS_MAX_D:
        keys = (words[:, 0] >> np.uint64(64 - d)).astype(np.intp)
        present = np.flatnonzero(np.bincount(keys, minlength=1 << d))
        number = np.empty(1 << d, dtype=np.intp)
        number[present] = np.arange(present.shape[0])
        inverse = number[keys]
        patterns = ((present[:, None] >> np.arange(d - 1, -1, -1)) & 1).astype(bool)
    else:
        keys = words.view(np.dtype((np.void, 8 * words.shape[1])))[:, 0]
        _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
        patterns = missing[first]
    counts = patterns.sum(axis=1)
    by_count = np.argsort(counts, kind="stable")
    rank = np.empty_like(by_count)
    rank[by_count] = np.arange(by_count.shape[0])
    return MissingPatterns(missing, patterns[by_count],
                           rank[inverse.reshape(-1)].astype(np.intp), counts[by_count])


def pattern_factors(precision, idx):
    """Per pattern of one missing count s: (Lmm⁻¹ (P_s, s, s), log|Λ_mm| (P_s,)) with
    Lmm the lower Cholesky factor of Λ_mm, the precision restricted to the missing
    columns ``idx`` (P_s, s).  Λ_mm of a positive definite Λ is positive definite."""
    Lmm_blocks = precision[idx[:, :, None], idx[:, None, :]]
    Lmm = np.linalg.cholesky(Lmm_blocks)
    logdet = 2.0 * np.log(np.diagonal(Lmm, axis1=1, axis2=2)).sum(axis=1)
    eye = np.broadcast_to(np.eye(idx.shape[1]), Lmm.shape)
    inv = np.linalg.solve(Lmm, eye) if idx.shape[1] > 1 else 1.0 / Lmm
    return inv, logdet


def _residuals(X, missing, mean):
    """P_o(x − μ): the residuals with 0 at the missing entries (float64)."""
    R = np.subtract(X, mean, dtype=np.float64)
    R[missing] = 0.0
    return R


def pattern_tables(precision, pats: MissingPatterns):
    """The factors of every pattern as the row kernels take them: (idx_ptr, idx,
    inv_ptr, inv, log|Λ_mm| (P,)), pattern p's missing columns ``idx[idx_ptr[p]:
    idx_ptr[p + 1]]`` and its L_mm⁻¹ (s × s, row-major) ``inv[inv_ptr[p]:...]``."""
    s_of = pats.n_missing.astype(np.intp)
    idx_ptr = np.zeros(s_of.shape[0] + 1, dtype=np.intp)
    np.cumsum(s_of, out=idx_ptr[1:])
    inv_ptr = np.zeros(s_of.shape[0] + 1, dtype=np.intp)
    np.cumsum(s_of * s_of, out=inv_ptr[1:])
    idx = np.empty(int(idx_ptr[-1]), dtype=np.intp)
    inv = np.empty(int(inv_ptr[-1]))
    logdet = np.zeros(s_of.shape[0])
    for s in np.unique(s_of):
        if s == 0:
            continue
        pats_s = pats.patterns_index(s)  # numbered by missing count: one range
        p0, p1 = int(pats_s[0]), int(pats_s[-1]) + 1
        cols = np.nonzero(pats.patterns[p0:p1])[1].reshape(-1, s)
        f_inv, f_logdet = pattern_factors(precision, cols)
        idx[idx_ptr[p0]:idx_ptr[p1]] = cols.reshape(-1)
        inv[inv_ptr[p0]:inv_ptr[p1]] = f_inv.reshape(-1)
        logdet[p0:p1] = f_logdet
    return idx_ptr, idx, inv_ptr, inv, logdet


def gaussian_marginal(X, pats: MissingPatterns, mean, precision, log_det, *,
                      impute=False):
    """log N(x_o; μ_o, Σ_oo) of every row of X (NaN marks the missing entries), and with
    ``impute`` the conditional means E[x | x_o] (the observed x_o kept) and the
    per-pattern conditional covariances.

    ``precision`` is Λ = Σ⁻¹ (d, d) and ``log_det`` log|Σ|.  Returns (logpdf (n,),
    imputed (n, d) or None, cond_cov) where ``cond_cov`` maps each missing count s to
    (rows, Λ_mm⁻¹ per row's pattern as (P_s, s, s), the pattern of each row, idx).
    A row with every feature missing has log-density 0.
    """
    R = _residuals(X, pats.missing, mean)
    Y = R @ precision
    quad = np.einsum("ij,ij->i", R, Y)
    n_obs = X.shape[1] - pats.n_missing[pats.pattern_of]
    logpdf = -0.5 * (quad + n_obs * LOG_2PI + log_det)
    imputed = np.where(pats.missing, 0.0, X).astype(np.float64) if impute else None
    cond = {}
    for s, rows, local, idx in pats.groups():
        inv, logdet_mm = pattern_factors(precision, idx)
        for at in range(0, rows.shape[0], _BLOCK):
            r = rows[at:at + _BLOCK]
            p = local[at:at + _BLOCK]
            cols = idx[p]
            u = np.take_along_axis(Y[r], cols, axis=1)
            w = np.einsum("nab,nb->na", inv[p], u)
            logpdf[r] += 0.5 * (np.einsum("na,na->n", w, w) - logdet_mm[p])
            if impute:
                shift = np.einsum("nba,nb->na", inv[p], w)  # Λ_mm⁻¹u = Lmm⁻ᵀ Lmm⁻¹ u
                part = imputed[r]
                np.put_along_axis(part, cols, mean[cols] - shift, axis=1)
                imputed[r] = part
        if impute:
            cov_mm = np.einsum("pba,pbc->pac", inv, inv)  # Lmm⁻ᵀ Lmm⁻¹ = Λ_mm⁻¹
            cond[s] = (rows, cov_mm, local, idx)
    every = pats.n_missing[pats.pattern_of] == X.shape[1]
    logpdf[every] = 0.0
    return logpdf, imputed, cond


def precision_of(cov):
    """(Λ = Σ⁻¹, log|Σ|) from a positive definite Σ by Cholesky; LinAlgError if not."""
    import scipy.linalg  # on use: small naive Bayes fits never load it

    L = np.linalg.cholesky(cov)
    Linv = scipy.linalg.solve_triangular(L, np.eye(cov.shape[0]), lower=True)
    return Linv.T @ Linv, 2.0 * float(np.sum(np.log(np.diag(L))))


def conditional_moments(X, pats: MissingPatterns, resp, means, covariances, pooled):
    """One E-step of the Gaussian EM with missing features (Little & Rubin 2002, §8.2)
    and the observed-data log-likelihood of the current parameters.

    ``resp`` (n, K) are the row weights of each class (the sample weight for the
    row's class and 0 elsewhere with known labels; weight times membership otherwise);
    ``means`` (K, d); ``covariances`` (d, d) if ``pooled`` else (K, d, d).  For class k
    with weights r_ik, the expected statistics of the complete data are

        W_k = Σ_i r_ik,   μ'_k = Σ_i r_ik x̂_ik / W_k,
        S_k = Σ_i r_ik [(x̂_ik − μ'_k)(x̂_ik − μ'_k)ᵀ + C_ik],

    x̂_ik = E[x_i | x_io, y=k] and C_ik its conditional covariance (Λ_mm⁻¹ on the
    missing block, 0 elsewhere).  Returns (W (K,), μ' (K, d), S (K, d, d) or the pooled
    sum (d, d), loglik) with loglik = Σ_ik r_ik log N(x_io; μ_k,o, Σ_k,oo), the
    observed-data log-likelihood of x given the class weights (without the priors).
    Raises LinAlgError where a covariance is not positive definite.
    """
    K, d = means.shape
    W = np.zeros(K)
    mu = np.zeros((K, d))
    S = np.zeros((d, d)) if pooled else np.zeros((K, d, d))
    loglik = 0.0
    shared = precision_of(covariances) if pooled else None
    for k in range(K):
        sel = np.flatnonzero(resp[:, k] > 0)
        if sel.size == 0:
            continue
        r = resp[sel, k]
        sub = MissingPatterns(pats.missing[sel], pats.patterns, pats.pattern_of[sel],
                              pats.n_missing)
        prec, log_det = shared if pooled else precision_of(covariances[k])
        logpdf, xhat, cond = gaussian_marginal(X[sel], sub, means[k], prec, log_det,
                                               impute=True)
        loglik += float(r @ logpdf)
        W[k] = r.sum()
        mu[k] = (r @ xhat) / W[k]
        D = xhat - mu[k]
        Sk = (D * r[:, None]).T @ D
        for _s, rows, cov_mm, local, idx in ((s,) + c for s, c in cond.items()):
            wpat = np.bincount(local, weights=r[rows], minlength=idx.shape[0])
            add = np.einsum("p,pac->pac", wpat, cov_mm)
            np.add.at(Sk, (idx[:, :, None], idx[:, None, :]), add)
        if pooled:
            S += Sk
        else:
            S[k] = Sk
    return W, mu, S, loglik


def diagonal_marginal_jll(X, means, variances, log_prior, mode=MODE_JLL,
                          skip_complete=False):
    """Joint log-likelihoods (n, K) float64 of a diagonal Gaussian model with the
    missing features (NaN in X) left out, in one pass
    (:func:`fastgen.kernels.missing.diagonal_marginal_scores`)::

        log π_k − ½ Σ_{j∈o} [log 2πσ²_kj + (x_j − μ_kj)²/σ²_kj],

    finished per ``mode``.  ``variances`` (K, d) or (d,) (shared by the classes).  With
    ``skip_complete``, returns (scores, the complete rows (indices)) and the rows
    without NaN hold placeholders; infinity in X is refused either way.
    """
    K, d = means.shape
    var = np.broadcast_to(np.asarray(variances, dtype=np.float64), (K, d))
    out = np.empty((X.shape[0], K))
    complete = np.empty(X.shape[0], dtype=np.uint8)
    n_inf = missing_kernels.diagonal_marginal_scores(
        X, np.ascontiguousarray(means, dtype=np.float64), np.ascontiguousarray(1.0 / var),
        np.ascontiguousarray(np.log(2.0 * np.pi * var)),
        np.ascontiguousarray(log_prior, dtype=np.float64), mode, bool(skip_complete),
        complete, out)
    if n_inf:
        reject_infinite(X)
    if skip_complete:
        return out, np.flatnonzero(complete)
    return out


@dataclass(frozen=True)
class RowGroups:
    """Rows of X grouped by missingness pattern, as the pattern kernels of
    :mod:`fastgen.kernels.missing` take them.

    ``order`` (n,) the rows, pattern by pattern (ascending within one), and ``pos``
    (n,) the position of each row in it; ``starts`` (P + 1,): pattern p's rows are
    ``order[starts[p]:starts[p + 1]]``; ``idx_ptr`` (P + 1,) and ``idx``: its missing
    columns ``idx[idx_ptr[p]:idx_ptr[p + 1]]``, ascending.  The rows without NaN come
    last (``complete``, ascending, from position ``n_incomplete`` on).
    """

    order: np.ndarray
    pos: np.ndarray
    starts: np.ndarray
    idx_ptr: np.ndarray
    idx: np.ndarray
    complete: np.ndarray
    n_incomplete: int


def row_groups(X):
    """:class:`RowGroups` of validated dense X (NaN marks a missing entry; infinity is
    refused, naming it), or None where X holds no NaN.

    Up to :data:`~fastgen.kernels.patterns.MAX_KEY_D` features a kernel packs each row's
    NaN into a bit key (and finds infinity on the way); up to 20 the keys are numbered
    by a table of all 2^d, beyond by a sort; wider X goes through
    :func:`missing_patterns`.  A counting sort then groups the rows.
    """
    n, d = X.shape
    if d <= pattern_kernels.MAX_KEY_D:
        keys = np.empty(n, dtype=np.int64)
        if pattern_kernels.nan_keys(X, keys):
            reject_infinite(X)
        if d <= _COUNT_KEYS_MAX_D:
            ids, pkeys = pattern_kernels.number_keys(keys, d)
        else:
            pkeys, ids = np.unique(keys, return_inverse=True)
            ids = ids.reshape(-1).astype(np.intp)
        if pkeys.shape[0] == 1 and pkeys[0] == 0:
            return None
        patterns = ((pkeys[:, None] >> np.arange(d, dtype=np.int64)) & 1).astype(bool)
    else:
        reject_infinite(X)
        missing = np.isnan(X)
        if not missing.any():
            return None
        pats = missing_patterns(missing)
        ids, patterns = pats.pattern_of, pats.patterns
    P = patterns.shape[0]
    s_of = patterns.sum(axis=1)
    none = np.flatnonzero(s_of == 0)
    ids = np.ascontiguousarray(ids, dtype=np.intp)
    if none.size and none[0] != P - 1:  # the complete rows' pattern numbered last
        renumber = np.arange(P)
        renumber[none[0]:] -= 1
        renumber[none[0]] = P - 1
        ids = renumber[ids]
        patterns = np.concatenate([np.delete(patterns, none[0], axis=0), patterns[none]])
        s_of = patterns.sum(axis=1)
    order, pos, starts = pattern_kernels.group_rows(ids, P)
    idx_ptr = np.zeros(P + 1, dtype=np.intp)
    np.cumsum(s_of, out=idx_ptr[1:])
    idx = np.nonzero(patterns)[1].astype(np.intp)
    n_incomplete = int(starts[P - 1]) if none.size else n
    return RowGroups(order, pos, starts, idx_ptr, idx, order[n_incomplete:], n_incomplete)

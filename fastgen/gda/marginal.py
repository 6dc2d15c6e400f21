"""Scores of Gaussian discriminant analysis for rows with missing features (NaN).

Each row is scored by the marginal Gaussian of its observed coordinates o::

    jll_k(x) = log π_k + log N(x_o; μ_k,o, Σ_k,oo),

every covariance kind; a row with every feature missing gets log π_k.  The diagonal
kinds leave out the terms of the missing features
(:func:`fastgen.stats.missing.diagonal_marginal_jll`).  The full ones group the rows by
missingness pattern and factor Σ_oo once per pattern (per class for ``per_class``,
shared by the classes for ``pooled``): by the precision Λ = Σ⁻¹ through the Cholesky
factor of its small missing block (the Schur complement Σ_oo⁻¹ = Λ_oo − Λ_omΛ_mm⁻¹Λ_mo,
log|Σ_oo| = log|Σ| + log|Λ_mm|), or, where that route would lose digits to
cancellation (a full Σ far worse conditioned than its observed block), by the Cholesky
factor of Σ_oo itself (:func:`fastgen.kernels.missing.use_precision` decides, from Σ's
largest variance inflation Σ_jj·Λ_jj and the pattern's cancellation factor).

Small X (at most :data:`fastgen._small.SMALL_VALUES` values) is scored by numpy with
the same formulas and the same choice of route, compiling nothing; larger X by the
kernels of :mod:`fastgen.kernels.missing`.  Reads the params' public fields only.
"""

from __future__ import annotations

import numpy as np

from .._scorer import MODE_JLL, derived
from .._small import finish_rows, is_small, numpy_scope
from ..stats.missing import (
    LOG_2PI,
    diagonal_marginal_jll,
    missing_patterns,
    pattern_factors,
    reject_infinite,
    row_groups,
)

__all__ = ["marginal_joint_log_likelihood", "marginal_scores", "diagonal_marginal_scores"]

#: the route thresholds of fastgen.kernels.missing.use_precision, which the numpy path
#: applies the same way (tests/test_missing_paths.py checks they are equal)
PRECISION_SAFE = 100.0
PRECISION_LIMIT = 1e4


def _log_prior(params):
    with np.errstate(divide="ignore"):
        return np.log(params.priors.astype(np.float64))


def _check_rank(params):
    d = params.means.shape[1]
    if params.covariance_type == "pooled" and params.rank < d:
        raise ValueError(
            f"X has rows with NaN, and this pooled model cannot score any of them: it "
            f"has rank {params.rank} < {d} (a singular within-class covariance), so it "
            f"has no density over its {d} features and no marginal density over any "
            f"subset of them (it scores complete rows only, in the rank-{params.rank} "
            f"subspace); refit with reg>0 (or drop the constant or collinear features) "
            f"to score rows with NaN")


def _tables(params):
    """(Σ, Λ, U = L⁻¹, log|Σ|, largest Σ_jj·Λ_jj) of each covariance, float64, stacked
    (K, ...) per class or (1, ...) pooled, from the covariance itself (Σ = LLᵀ)."""
    def make():
        import scipy.linalg  # on use: small naive Bayes fits never load it

        cov = params.covariance.astype(np.float64)
        covs = np.ascontiguousarray(cov[None] if cov.ndim == 2 else cov)
        U = np.empty_like(covs)
        log_det = np.empty(covs.shape[0])
        for k, S in enumerate(covs):
            L = np.linalg.cholesky(S)
            U[k] = scipy.linalg.solve_triangular(L, np.eye(S.shape[0]), lower=True)
            log_det[k] = 2.0 * np.sum(np.log(np.diag(L)))
        prec = np.ascontiguousarray(np.einsum("kij,kil->kjl", U, U))
        inflation = np.max(np.diagonal(covs, axis1=1, axis2=2)
                           * np.diagonal(prec, axis1=1, axis2=2), axis=1)
        return covs, prec, U, log_det, inflation
    return derived(params, "_marginal_tables", make)


def _class_block(K):
    """Positions of the order per work item of the per-class kernel: its (K, block)
    scores stay within ~0.5 MB, a multiple of the tile."""
    from ..kernels.tiles import XT_TILE_ROWS

    return XT_TILE_ROWS * max(1, min(16, (1 << 16) // (K * XT_TILE_ROWS)))


#: the rows grouped and copied in pattern order at a time: the copy stays within
#: 128 MB (and at least this many rows)
_SPAN_MIN_ROWS = 1 << 16


def _kernel_scores(params, X, mode, relative):
    """:func:`marginal_scores` by the pattern kernels.

    Spans of rows at a time are grouped by pattern and their rows with NaN copied in
    pattern order (:func:`fastgen.kernels.patterns.sorted_rows`), so that the kernels
    read them in order; the complete rows come last in the copy, in their order.
    Reading the rows in pattern order in place jumped across X (benchmarks/NOTES.md)."""
    from ..kernels.missing import class_pattern_scores, pooled_pattern_scores
    from ..kernels.patterns import sorted_rows

    n = X.shape[0]
    K, d = params.means.shape
    span = max(_SPAN_MIN_ROWS, (1 << 27) // (8 * d))
    out = None
    parts, complete_x = [], []
    for r0 in range(0, n, span):
        rows = X[r0:r0 + span]
        g = row_groups(rows)
        if g is None:
            parts.append(np.arange(r0, r0 + rows.shape[0]))
            complete_x.append(rows)
            continue
        if out is None:
            _check_rank(params)
            covs, prec, U, log_det, inflation = _tables(params)
            means = np.ascontiguousarray(params.means, dtype=np.float64)
            log_prior = _log_prior(params)
            out = np.empty((n, K))
            c = means.mean(axis=0)
            delta = np.ascontiguousarray(means - c)
            G = np.ascontiguousarray((delta @ prec[0]).T)  # (d, K): Λδ_k (pooled)
        parts.append(g.complete + r0)
        Xs = np.empty_like(rows)
        sorted_rows(rows, g.pos, Xs)
        complete_x.append(Xs[g.n_incomplete:])
        # the kernels compute in float64 whatever X's dtype: float32 rows are widened
        # here, so that the pattern kernels compile once, for float64
        Xs = np.ascontiguousarray(Xs[:g.n_incomplete], dtype=np.float64)
        part = out[r0:r0 + rows.shape[0]]
        if params.covariance_type == "pooled":
            pooled_pattern_scores(Xs, g.order, g.starts, g.idx_ptr, g.idx, c, delta, G,
                                  prec[0], U[0], covs[0], float(inflation[0]),
                                  float(log_det[0]), log_prior, not relative, mode, part)
        else:
            class_pattern_scores(Xs, g.order, g.starts, g.idx_ptr, g.idx, means, prec, U,
                                 covs, inflation, log_det, log_prior, _class_block(K), mode,
                                 part)
    if out is None:
        return None
    if len(parts) == 1:
        return out, parts[0], complete_x[0]
    return out, np.concatenate(parts), np.concatenate(complete_x)


# ------------------------------------------------------------------ numpy (small X)


def _routes(prec, cov, inflation, pats):
    """Per pattern of :func:`missing_patterns`: (precision route?, log|Σ_oo|, the factors
    Lmm⁻¹ of the precision route per missing count), as
    :func:`fastgen.kernels.missing.use_precision` chooses."""
    P = pats.patterns.shape[0]
    precise = pats.n_missing == 0  # complete rows: Λ itself
    logdet_oo = np.zeros(P)
    factors = {}
    for s in np.unique(pats.n_missing):
        s = int(s)
        if s == 0:
            continue
        ps = pats.patterns_index(s)
        idx = np.nonzero(pats.patterns[ps])[1].reshape(-1, s)
        try:
            inv, logdet_mm = pattern_factors(prec, idx)
        except np.linalg.LinAlgError:
            inv, logdet_mm = None, None
        ok = np.full(ps.shape[0], inv is not None and inflation <= PRECISION_LIMIT)
        if inv is not None and PRECISION_SAFE < inflation <= PRECISION_LIMIT:
            B = np.einsum("pab,pbj->paj", inv, prec[idx])  # Lmm⁻¹Λ_m·
            q = np.diag(prec)[None, :] - np.einsum("paj,paj->pj", B, B)
            with np.errstate(divide="ignore", invalid="ignore"):
                ratio = np.where(q > 0, np.diag(prec)[None, :] / q, np.inf)
            ratio[pats.patterns[ps]] = 1.0
            ok &= inflation * np.max(ratio, axis=1, initial=1.0) <= PRECISION_LIMIT
        precise[ps] = ok
        if inv is not None:
            logdet_oo[ps] = np.where(ok, logdet_mm, 0.0)
            factors[s] = (ps, idx, inv)
    return precise, logdet_oo, factors


def _numpy_quadratic(X, pats, mean, cov, prec, log_det, route):
    """(q (n,), log|Σ_oo| (n,)) per row: (x_o − μ_o)ᵀΣ_oo⁻¹(x_o − μ_o) by the route of
    its pattern."""
    precise, logdet_oo, factors = route
    n, d = X.shape
    R = np.where(pats.missing, 0.0, X - mean)
    Y = R @ prec
    q = np.einsum("ij,ij->i", R, Y)
    logdet = np.where(precise, logdet_oo + log_det, 0.0)
    for s, (ps, idx, inv) in factors.items():
        local = np.full(pats.patterns.shape[0], -1)
        local[ps] = np.arange(ps.shape[0])
        rows = np.flatnonzero(pats.n_missing[pats.pattern_of] == s)
        p = local[pats.pattern_of[rows]]
        u = np.take_along_axis(Y[rows], idx[p], axis=1)
        w = np.einsum("nab,nb->na", inv[p], u)
        q[rows] -= np.einsum("na,na->n", w, w)
    for p in np.flatnonzero(~precise & (pats.n_missing > 0)):
        o = ~pats.patterns[p]
        rows = np.flatnonzero(pats.pattern_of == p)
        if not o.any():
            continue
        import scipy.linalg

        L = np.linalg.cholesky(cov[np.ix_(o, o)])
        z = scipy.linalg.solve_triangular(L, R[np.ix_(rows, np.flatnonzero(o))].T,
                                          lower=True)
        q[rows] = np.einsum("ij,ij->j", z, z)
        logdet[p] = 2.0 * np.sum(np.log(np.diag(L)))
    return q, logdet[pats.pattern_of]


def _numpy_scores(params, X, missing, mode):
    """Joint log-likelihoods (n, K) float64 of every row of X by numpy, finished per
    ``mode``."""
    K, d = params.means.shape
    covs, prec, U, log_det, inflation = _tables(params)
    log_prior = _log_prior(params)
    means = params.means.astype(np.float64)
    pats = missing_patterns(missing)
    n_obs = d - pats.n_missing[pats.pattern_of]
    out = np.empty((X.shape[0], K))
    X64 = X.astype(np.float64, copy=False)
    with numpy_scope():
        routes = [_routes(prec[c], covs[c], inflation[c], pats) for c in range(covs.shape[0])]
        for k in range(K):
            c = 0 if covs.shape[0] == 1 else k
            q, logdet = _numpy_quadratic(X64, pats, means[k], covs[c], prec[c], log_det[c],
                                         routes[c])
            out[:, k] = log_prior[k] - 0.5 * (q + logdet + n_obs * LOG_2PI)
        out[n_obs == 0] = log_prior
        if mode != MODE_JLL:
            finish_rows(out, mode)
    return out


def _diagonal_numpy(X, missing, means, variances, log_prior, mode):
    K, d = means.shape
    var = np.broadcast_to(np.asarray(variances, dtype=np.float64), (K, d))
    out = np.empty((X.shape[0], K))
    with numpy_scope():
        for k in range(K):
            t = (X - means[k]) ** 2 / var[k] + np.log(2.0 * np.pi * var[k])
            t[missing] = 0.0
            out[:, k] = log_prior[k] - 0.5 * t.sum(axis=1)
        if mode != MODE_JLL:
            finish_rows(out, mode)
    return out


# ------------------------------------------------------------------ entry points


def diagonal_marginal_scores(X, means, variances, log_prior, mode):
    """:func:`marginal_scores` of a diagonal Gaussian model (``variances`` (K, d), or
    (d,) shared by the classes): numpy for small X, else one kernel pass that skips
    the complete rows."""
    if is_small(X):
        reject_infinite(X)
        missing = np.isnan(X)
        incomplete = missing.any(axis=1)
        if not incomplete.any():
            return None
        out = _diagonal_numpy(X.astype(np.float64, copy=False), missing,
                              np.asarray(means, dtype=np.float64), variances,
                              np.asarray(log_prior, dtype=np.float64), mode)
        return out, np.flatnonzero(~incomplete), None
    out, complete = diagonal_marginal_jll(X, means, variances, log_prior, mode,
                                          skip_complete=True)
    return None if complete.shape[0] == X.shape[0] else (out, complete, None)



def marginal_scores(params, X, mode, relative=False):
    """Scores of validated dense X with NaN (``mode``: ``MODE_JLL``, ``MODE_LOG_PROBA``
    or ``MODE_PROBA``), float64: (scores (n, K), the complete rows (indices), those rows
    of X or None), the complete rows' scores being placeholders for the caller to fill;
    or None where X holds no NaN.
    With ``relative`` the scores may leave out a term shared by the classes (enough for
    posteriors and labels).  Infinity in X is refused, naming its entry."""
    if params.covariance_type in ("diagonal", "pooled_diagonal"):
        return diagonal_marginal_scores(X, params.means, params.covariance,
                                        _log_prior(params), mode)
    if is_small(X):  # numpy: nothing compiles (fastgen._small)
        reject_infinite(X)
        missing = np.isnan(X)
        incomplete = missing.any(axis=1)
        if not incomplete.any():
            return None
        _check_rank(params)
        return _numpy_scores(params, X, missing, mode), np.flatnonzero(~incomplete), None
    return _kernel_scores(params, X, mode, relative)


def marginal_joint_log_likelihood(params, X, missing, relative=False) -> np.ndarray:
    """(n, K) float64 joint log-likelihoods of the rows of validated dense X, whose
    NaN entries (``missing``, (n, d) bool) are integrated out, complete rows included;
    with ``relative``, the pooled model may leave out the terms shared by the classes
    (−½zᵀΛz: posteriors and labels need the scores only up to a constant per row)."""
    res = marginal_scores(params, X, MODE_JLL, relative)
    if res is None:
        return params.scorer.validated(params, X, MODE_JLL).astype(np.float64)
    out, complete, complete_x = res
    if complete.shape[0]:
        out[complete] = params.scorer.validated(
            params, X[complete] if complete_x is None else complete_x, MODE_JLL)
    return out

"""Covariance estimation of Gaussian discriminant analysis: class moments → Σ per kind.

:func:`params_from_moments` turns :class:`~fastgen.stats.ClassMoments` into
:class:`~fastgen.gda.params.GDAParams`: the class weights and priors, then per
covariance model the estimate (÷W or, ``unbiased``, ÷(W − K) / ÷(W_k − 1)), shrinkage
(a float: toward tr Σ/d·I; "ledoit-wolf" / "oas": the correlations toward zero), ``reg``
(toward I), the checks that every variance is representable, and the factors scoring
needs: Cholesky factors tested on the correlation matrix (unit-free), the rank-revealing
factor of a singular pooled Σ, or the advice of a failed per-class fit (the class, its
rank and a ``reg`` that works).
"""

from __future__ import annotations

import numpy as np

from .._validation import check_class_weights
from ..stats.moments import (
    ClassMoments,
    check_floor_finite,
    check_variances_representable,
    total_variance,
    variance_floor,
)
from .params import GDAParams, SingularCovarianceError, within_sd

__all__ = ["params_from_moments", "inverse_within_sd"]


def _label(classes, k):
    return repr(classes[k].item() if hasattr(classes[k], "item") else classes[k])


def _correlation(S):
    """The correlation matrix D⁻¹SD⁻¹, D = diag(√S_jj), of the features with S_jj > 0
    (a feature constant within the classes has no correlation to estimate)."""
    v = np.diag(S)
    keep = v > 0
    s = np.sqrt(v[keep])
    return S[np.ix_(keep, keep)] / s[:, None] / s[None, :]


def _lw_intensity(R, fourth, W):
    """Ledoit-Wolf (2004) shrinkage intensity for R = ZᵀZ/W of centred rows Z.

    μ = tr R/d, δ = ‖R − μI‖²_F/d, β̄ = (Σ w‖z‖⁴/W − ‖R‖²_F)/(W·d), α = min(β̄, δ)/δ.
    """
    d = R.shape[0]
    if d <= 1:
        return 0.0
    mu = np.trace(R) / d
    fro2 = float(np.sum(R * R))
    delta = (fro2 - 2.0 * mu * np.trace(R) + d * mu * mu) / d
    beta = (fourth / W - fro2) / (W * d)
    beta = min(beta, delta)
    return 0.0 if beta == 0 else beta / delta


def _oas_intensity(R, W):
    """Oracle approximating shrinkage (Chen et al. 2010) as scikit-learn computes it."""
    d = R.shape[0]
    if d <= 1:
        return 0.0
    alpha = float(np.mean(R * R))
    mu = np.trace(R) / d
    num = alpha + mu * mu
    den = (W + 1.0) * (alpha - mu * mu / d)
    return 1.0 if den == 0 else min(num / den, 1.0)


def _estimated_intensity(S, W, shrinkage, fourth):
    """The Ledoit-Wolf or OAS intensity of the within-class standardised data.

    S is the maximum-likelihood within-class covariance (M2/W), ``fourth`` the sum
    Σ w‖D⁻¹z‖⁴ of :func:`fastgen.kernels.moments.standardised_fourth_moment`.  The
    intensity is that of ``sklearn.covariance.ledoit_wolf`` (or ``oas``) applied to the
    within-class centred rows divided by their standard deviations (the features with
    a nonzero one), so it does not depend on the units of any feature.
    """
    R = _correlation(S)
    if shrinkage == "ledoit-wolf":
        return _lw_intensity(R, fourth, W)
    return _oas_intensity(R, W)


def inverse_within_sd(W, scatter, kind):
    """(K, d) 1/s_kj: the reciprocal maximum-likelihood within-class standard deviations
    the standardised fourth moments use (the pooled ones repeated per class when
    ``kind`` is "pooled"); 0 where s_kj = 0."""
    K = W.shape[0]
    with np.errstate(divide="ignore", invalid="ignore"):
        if kind == "pooled":
            v = np.broadcast_to(np.diag(scatter) / W.sum(), (K, scatter.shape[0]))
        else:
            v = np.einsum("kjj->kj", scatter) / W[:, None]
        inv = np.where(v > 0, 1.0 / np.sqrt(v), 0.0)
    return np.ascontiguousarray(inv)


def _shrink(S, a):
    """(1 − a)·S + a·(tr S / d)·I for a full matrix; toward the mean for variances."""
    if a == 0:
        return S
    if S.ndim == 1:
        return (1.0 - a) * S + a * S.mean()
    d = S.shape[0]
    out = (1.0 - a) * S
    out[np.diag_indices(d)] += a * np.trace(S) / d
    return out


def _shrink_to_diagonal(S, a):
    """(1 − a)·S + a·diag(S): the correlations shrink toward zero, the variances stay
    (the estimated shrinkage: the correlation matrix shrunk toward I)."""
    if a == 0:
        return S
    out = (1.0 - a) * S
    out[np.diag_indices(S.shape[0])] = np.diag(S)
    return out


def rank_threshold(d, tol):
    """The one rank rule of every covariance kind: an eigenvalue λ of the correlation
    matrix C = D⁻¹ΣD⁻¹ counts when λ > max(tol², d·ε).

    tol² is scikit-learn's svd-solver rule (singular values of the standardised
    within-class data above ``tol``); d·ε, the working precision of an eigenvalue of a
    d×d correlation matrix, only matters when ``tol`` < √(d·ε) ≈ 1e-7.
    """
    return max(tol * tol, d * np.finfo(float).eps)


def _cholesky_checked(S, tol):
    """Lower Cholesky factor of S, computed as L = D·L_C from the factor L_C of the
    correlation matrix C = D⁻¹SD⁻¹, D = diag(√S_jj).

    S is accepted when every eigenvalue of C is above :func:`rank_threshold` (so its
    rank is d), whatever the units of the features.  The eigenvalues decide
    (:func:`_smallest_eigenvalue_above`), not the Cholesky pivots alone: a pivot²
    bounds λ_min only from above, so a class whose correlation matrix has
    λ_min = 2e-16 can factor with every pivot² far above d·ε.
    Raises SingularCovarianceError whose message says why, to be completed by the
    caller.
    """
    d = S.shape[0]
    v = np.diag(S)
    zero = np.flatnonzero(~(v > 0))
    if zero.size:
        raise SingularCovarianceError(
            f"is singular: feature {zero[0]} has zero variance (it is constant)"
        )
    s = np.sqrt(v)
    C = S / s[:, None] / s[None, :]
    if not np.all(np.isfinite(C)):
        raise SingularCovarianceError("is not finite")
    try:
        Lc = np.linalg.cholesky(C)
    except np.linalg.LinAlgError:  # numerically not positive definite: λ_min ≤ 0
        raise SingularCovarianceError("is singular") from None
    if not _smallest_eigenvalue_above(C, Lc, rank_threshold(d, tol)):
        raise SingularCovarianceError("is singular")
    return s[:, None] * Lc


def _smallest_eigenvalue_above(C, Lc, threshold):
    """Whether λ_min(C) > ``threshold``, for C = L_C·L_Cᵀ (Cholesky).

    Two bounds decide most cases without the eigenvalues: λ_min ≤ min_j pivot_j²
    (each pivot² is a Schur complement, at least λ_min), so a pivot at or below the
    threshold refuses; λ_min ≥ 1/tr(C⁻¹) = 1/‖L_C⁻¹‖²_F, so a bound above it accepts
    (a triangular inverse: a quarter of the cost of the eigenvalues).  In between, the
    smallest eigenvalue decides.
    """
    import scipy.linalg  # on use: small naive Bayes fits never load it

    pivots = np.diag(Lc)
    if not (np.all(np.isfinite(Lc)) and float(np.min(pivots)) ** 2 > threshold):
        return False
    Linv = scipy.linalg.solve_triangular(Lc, np.eye(C.shape[0]), lower=True,
                                         check_finite=False)
    if 1.0 / float(np.sum(Linv * Linv)) > threshold:
        return True
    return float(np.linalg.eigvalsh(C)[0]) > threshold


def _correlation_rank(cov, tol):
    """Eigen-pairs of C = D⁻¹ΣD⁻¹ (ascending), the within-class s_j, and the rank
    #{λ_i > max(tol², d·ε)} (:func:`rank_threshold`; scikit-learn's svd-solver rule:
    singular values of the standardised within-class data above tol)."""
    s = within_sd(cov)
    C = cov / s[:, None] / s[None, :]
    lam, Q = np.linalg.eigh(0.5 * (C + C.T))
    return lam, Q, s, int(np.sum(lam > rank_threshold(cov.shape[0], tol)))


def _reduced_pooled(cov, tol):
    """Factor of a singular pooled covariance on the range of the within-class scatter.

    Returns (L, log_det, r): L lower triangular (d, d) of rank r with LLᵀ = Σ_r =
    D·Q_rΛ_rQ_rᵀ·D (the retained part; from the LQ factorisation of D·Q_r·Λ_r^{1/2}) and
    log_det = Σ log λ_i + 2·Σ_{s_j>0} log s_j.
    """
    d = cov.shape[0]
    lam, Q, s, r = _correlation_rank(cov, tol)
    if r == 0:
        raise SingularCovarianceError(
            "the pooled within-class covariance is zero: every feature is constant "
            "within every class, so there is nothing to classify on; pass reg>0 or "
            "check the data"
        )
    # the full-rank test (eigvalsh) refused Σ, so r < d unless eigh rounds the smallest
    # eigenvalue the other way: keep the decision that was taken
    r = min(r, d - 1)
    lam_r, Q_r = lam[d - r:], Q[:, d - r:]
    F = (s[:, None] * Q_r) * np.sqrt(lam_r)  # (d, r), FFᵀ = Σ_r
    R = np.linalg.qr(F.T, mode="r")  # (r, d) upper trapezoidal: F = Rᵀ·(orthogonal)
    sign = np.where(np.diag(R) < 0, -1.0, 1.0)
    L = np.zeros((d, d))
    L[:, :r] = (R * sign[:, None]).T
    has_sd = np.diag(cov) > 0
    log_det = float(np.sum(np.log(lam_r)) + 2.0 * np.sum(np.log(s[has_sd])))
    return L, log_det, r


def _pooled_factor(cov, tol):
    """(L, log_det, rank) of the pooled covariance: Cholesky (of the correlation
    matrix, rescaled) when every eigenvalue of the correlation matrix is above
    :func:`rank_threshold`, else the rank-revealing factor."""
    try:
        L = _cholesky_checked(cov, tol)
    except SingularCovarianceError:
        return _reduced_pooled(cov, tol)
    return L, 2.0 * float(np.sum(np.log(np.diag(L)))), cov.shape[0]


def _suggest_reg(covs, tol, above=0.0):
    """The smallest reg = 10^e above ``above`` for which every (1 − reg)·Σ_k + reg·I
    passes the Cholesky checks, as a float (1.0 at worst: reg = 1 gives I).

    The powers of ten searched start where reg becomes visible next to the smallest
    variance (10·d·ε·min_j Σ_jj); the search bisects them, and the value returned has
    passed the checks.
    """
    d = covs[0].shape[0]
    eye = np.eye(d)
    var = np.concatenate([np.diag(c) for c in covs])
    var = var[var > 0]
    low = 10.0 * d * np.finfo(float).eps * (float(var.min()) if var.size else 1.0)
    lo = max(int(np.floor(np.log10(max(low, above, 1e-300)))), -300)

    def works(e):
        reg = 10.0 ** e
        if reg <= above:
            return False
        try:
            for c in covs:
                _cholesky_checked((1.0 - reg) * c + reg * eye, tol)
        except SingularCovarianceError:
            return False
        return True

    hi = 0  # reg = 1 gives I, which passes
    while lo < hi:
        mid = (lo + hi) // 2
        if works(mid):
            hi = mid
        else:
            lo = mid + 1
    return 1.0 if hi >= 0 or not works(hi) else 10.0 ** hi


def _feature_variances(m):
    """(within, total): the per-feature variances of the data within the classes
    (pooled) and over all rows, from per-class moments ``m``."""
    W = m.counts
    n = float(W.sum())
    within = np.einsum("kjj->j", m.scatter) / n
    mu = (W[:, None] * m.means).sum(axis=0) / n
    return within, within + (W[:, None] * (m.means - mu) ** 2).sum(axis=0) / n


def _reg_target(within, total):
    """(variance, what): the variance a suggested ``reg`` aims at.  A tenth of the
    median positive within-class variance (the classes keep most of their own
    covariance); where no class has any spread (one row per class) reg stands for
    the whole class covariance, so the median positive variance of all rows; 0 if X
    is constant."""
    v = within[within > 0]
    if v.size:
        m = float(np.median(v))
        return 0.1 * m, f"a tenth of the features' median within-class variance, {m:.3g}"
    v = total[total > 0]
    if v.size:
        m = float(np.median(v))
        return m, f"the features' median variance, {m:.3g}, as no class has any spread"
    return 0.0, ""


def _scaled_reg(covs, tol, above, target):
    """The smallest power of ten that makes every class pass (:func:`_suggest_reg`),
    raised to the power of ten nearest ``target`` where that is larger and at most 1.
    Returns (reg, scaled): whether ``target`` set it.

    reg adds reg·I to each Σ_k in X's units: a value that merely passes the checks
    (1e-14 where a class has one row) leaves the class a near-zero variance in the
    directions it does not span, and posteriors of exactly 0 or 1."""
    least = _suggest_reg(covs, tol, above=above)
    if not target > 0:
        return least, False
    scaled = 10.0 ** np.round(np.log10(target))
    if not (least < scaled <= 1.0):
        return least, scaled <= least
    eye = np.eye(covs[0].shape[0])
    try:
        for c in covs:
            _cholesky_checked((1.0 - scaled) * c + scaled * eye, tol)
    except SingularCovarianceError:
        return least, False
    return float(scaled), True


def _reg_advice(base, reg, tol, within, total):
    """The advice on ``reg`` of a failed per-class fit: a value on the data's scale
    (:func:`_reg_target`) that makes every class pass, or, where the features'
    variances are too large for any reg ≤ 1 to be on their scale, the value for the
    standardised features."""
    lead = ("pass reg>0 (Σ ← (1−reg)Σ + reg·I): " if not reg else
            f"reg={reg:g} is not enough: ")
    if reg >= 1:
        return lead + "reg=1e+00 makes the fit succeed"
    target, what = _reg_target(within, total)
    if not target > 0 or np.round(np.log10(target)) <= 0:  # on the scale of reg ≤ 1
        suggest, scaled = _scaled_reg(list(base), tol, reg, target)
        why = f" (about {what})" if scaled else ""
        return lead + f"reg={suggest:.0e} makes the fit succeed{why}"
    # reg ≤ 1 is small next to these variances: advise it for standardised features
    sd = np.sqrt(np.where(total > 0, total, 1.0))
    scaled_base = [b / sd[:, None] / sd[None, :] for b in base]
    suggest, _ = _scaled_reg(scaled_base, tol, reg,
                             _reg_target(within / sd ** 2, total / sd ** 2)[0])
    least = _suggest_reg(list(base), tol, above=reg)
    return (lead + f"reg adds reg·I in X's units, small next to these features' "
            f"variances ({what}): standardise the features (divide each by its "
            f"standard deviation), then reg={suggest:.0e} makes the fit succeed "
            f"(unstandardised, reg={least:.0e} makes the fit succeed, with posteriors "
            f"near 0 or 1)")


def _per_class_failure(failed, classes, cov, base, reg, tol, variances):
    """The message of a per-class fit that failed: the first failing class, why, its
    rank under :func:`rank_threshold` with the smallest eigenvalue of its correlation
    matrix, and a power-of-ten ``reg`` on the data's scale that makes every class
    pass (checked; :func:`_reg_advice`).  ``variances``: :func:`_feature_variances`."""
    k, why = failed[0]
    d = cov.shape[1]
    lam, _, _, rk = _correlation_rank(cov[k], tol)
    thr = rank_threshold(d, tol)
    rule = (f"tol²={tol * tol:.3g}" if tol * tol >= thr else
            f"d·ε={thr:.3g}, the working precision, as tol²={tol * tol:.3g} is below it")
    state = (f"it has rank {min(rk, d - 1)} of {d} (eigenvalues of its correlation "
             f"matrix above {rule}; the smallest is {lam[0]:.3g})")
    others = ("" if len(failed) == 1 else
              f" ({len(failed)} classes fail: "
              f"{', '.join(_label(classes, j) for j, _ in failed)})")
    fix = _reg_advice(base, reg, tol, *variances)
    if why.startswith("is undefined"):  # no spread at all: only reg or pooling help
        other_fixes = "or use covariance='pooled'"
    else:
        other_fixes = ("or pass a float shrinkage, use covariance='pooled', or drop "
                       "constant or collinear features")
    return (f"the per-class covariance of class {_label(classes, k)} {why}{others}: "
            f"{state}; {fix}, {other_fixes}")


def params_from_moments(m: ClassMoments, covariance, priors, reg, shrinkage, unbiased,
                        fourth=None, var_smoothing=1e-9, tol=1e-4,
                        feature_variance=None) -> GDAParams:
    """The GDA params of ``covariance`` from checked options and class moments ``m``:
    priors, covariance estimate, shrinkage, ``reg`` and the factors scoring needs.

    ``fourth`` is the (K,) standardised fourth moment of shrinkage="ledoit-wolf"
    (:meth:`fastgen.stats.ClassRows.standardised_fourth_moment`), else None.
    ``feature_variance`` (d,): Var(x_j) for the diagonal models' floor (default: that
    of ``m``; with NaN, :func:`fastgen.stats.available.observed_variance`)."""
    classes, W, means = m.classes, m.counts, m.means
    K, d = means.shape
    check_class_weights(classes, W)
    Wtot = float(W.sum())
    pri = W / Wtot if priors is None else priors
    rank = d
    if covariance == "pooled":
        cov, chol, log_det, rank = _pooled_estimate(m, unbiased, shrinkage, reg, fourth, tol)
    elif covariance == "per_class":
        cov, chol, log_det = _per_class_estimates(m, unbiased, shrinkage, reg, fourth, tol)
    else:
        cov, chol, log_det = _diagonal_estimates(m, covariance, unbiased, shrinkage, reg,
                                                 var_smoothing, feature_variance)
    dt = np.dtype(m.dtype)
    if dt != np.float64:
        _check_fits_dtype(cov, means, covariance, rank, dt)
    return GDAParams(
        classes=classes,
        priors=np.asarray(pri, dtype=dt),
        means=means.astype(dt),
        covariance=cov.astype(dt),
        cholesky=chol.astype(dt),
        log_det=log_det.astype(dt),
        n_per_class=W.astype(dt),
        covariance_type=covariance,
        rank=rank,
        feature_names=m.feature_names,
    )


def _pooled_estimate(m, unbiased, shrinkage, reg, fourth, tol):
    """(Σ, L, log_det (K,), rank) of the pooled model: M2/W (or ÷(W − K)), shrunk,
    regularised, factored (rank < d when Σ is singular)."""
    W, means = m.counts, m.means
    K, d = means.shape
    Wtot = float(W.sum())
    if m.kind == "pooled":
        M2 = m.scatter
    elif m.kind == "per_class":
        M2 = m.scatter.sum(axis=0)
    denom = Wtot - K if unbiased else Wtot
    if denom <= 0:
        raise SingularCovarianceError(
            f"unbiased pooled covariance needs more samples than classes "
            f"({Wtot:g} samples, {K} classes)"
        )
    if shrinkage in ("ledoit-wolf", "oas"):
        a = _estimated_intensity(M2 / Wtot, Wtot, shrinkage,
                                 None if fourth is None else float(fourth.sum()))
        cov = _shrink_to_diagonal(M2 / denom, a)
    else:
        cov = _shrink(M2 / denom, shrinkage or 0.0)
    if reg:
        cov = (1.0 - reg) * cov + reg * np.eye(d)
    cov = 0.5 * (cov + cov.T)
    check_variances_representable(np.diag(M2) / Wtot, np.max(np.abs(means), axis=0),
                                  np.diag(cov), lambda i: " (pooled)",
                                  SingularCovarianceError)
    chol, ld, rank = _pooled_factor(cov, tol)
    return cov, chol, np.full(K, ld), rank


def _per_class_estimates(m, unbiased, shrinkage, reg, fourth, tol):
    """(Σ_k, L_k, log|Σ_k|) of the per-class model; a class whose Σ_k is not positive
    definite raises with the advice of :func:`_per_class_failure`."""
    classes, W, means = m.classes, m.counts, m.means
    K, d = means.shape
    cov = np.empty((K, d, d))
    base = np.empty((K, d, d))  # before reg, for the suggested reg
    for k in range(K):
        denom = W[k] - 1.0 if unbiased else W[k]
        if denom <= 0 and not reg:
            raise SingularCovarianceError(
                f"class {_label(classes, k)} has total weight {W[k]:g}: its unbiased "
                f"covariance (÷(n_k − 1)) is undefined; pass unbiased=False or reg>0"
            )
        if denom <= 0:
            ck = np.zeros((d, d))
        elif shrinkage in ("ledoit-wolf", "oas"):
            a = _estimated_intensity(m.scatter[k] / W[k], W[k], shrinkage,
                                     None if fourth is None else float(fourth[k]))
            ck = _shrink_to_diagonal(m.scatter[k] / denom, a)
        else:
            ck = _shrink(m.scatter[k] / denom, shrinkage or 0.0)
        base[k] = ck
        if reg:
            ck = (1.0 - reg) * ck + reg * np.eye(d)
        cov[k] = 0.5 * (ck + ck.T)
    diag = np.einsum("kjj->kj", cov)
    check_variances_representable(np.einsum("kjj->kj", m.scatter) / W[:, None],
                                  np.abs(means), diag,
                                  lambda i: f" in class {_label(classes, i[0])}",
                                  SingularCovarianceError)
    chol = np.empty((K, d, d))
    log_det = np.empty(K)
    failed = []
    for k in range(K):
        if not reg and not np.any(m.scatter[k]):
            failed.append((k, f"is undefined: class {_label(classes, k)} has 1 sample "
                              f"or only identical samples"))
            continue
        try:
            chol[k] = _cholesky_checked(cov[k], tol)
        except SingularCovarianceError as exc:
            failed.append((k, str(exc)))
            continue
        log_det[k] = 2.0 * np.sum(np.log(np.diag(chol[k])))
    if failed:
        raise SingularCovarianceError(
            _per_class_failure(failed, classes, cov, base, reg, tol,
                               _feature_variances(m)))
    return cov, chol, log_det


def _diagonal_estimates(m, covariance, unbiased, shrinkage, reg, var_smoothing,
                        feature_variance=None):
    """(σ², σ, log|Σ_k|) of the diagonal models (per-class variances (K, d), or shared
    ones (d,) for "pooled_diagonal"), with the variance floor ε of
    :func:`fastgen.stats.moments.variance_floor` over ``feature_variance``."""
    classes, W, means = m.classes, m.counts, m.means
    K = means.shape[0]
    Wtot = float(W.sum())
    # the variance floor shared with fit_gaussian_nb (scikit-learn's var_smoothing)
    fv = total_variance(m) if feature_variance is None else feature_variance
    eps = variance_floor(var_smoothing, fv) if var_smoothing else 0.0
    if m.kind == "per_class":
        V = np.einsum("kjj->kj", m.scatter).copy()
    elif m.kind == "pooled":
        V = np.diag(m.scatter)[None, :]  # only pooled_diagonal can come from here
    else:
        V = m.scatter
    if covariance == "diagonal":
        denom = (W - 1.0) if unbiased else W
        if np.any(denom <= 0):
            k = int(np.flatnonzero(denom <= 0)[0])
            raise SingularCovarianceError(
                f"class {_label(classes, k)} has {W[k]:g} sample(s): its unbiased "
                f"variance is undefined; pass unbiased=False or reg>0"
            )
        with np.errstate(over="ignore"):
            cov = V / denom[:, None] + eps
        check_floor_finite(cov, var_smoothing, float(np.max(fv)))
        a = shrinkage or 0.0
        if a:
            cov = np.stack([_shrink(row, a) for row in cov])
    else:
        denom = Wtot - K if unbiased else Wtot
        if denom <= 0:
            raise SingularCovarianceError(
                "unbiased pooled variances need more samples than classes"
            )
        with np.errstate(over="ignore"):
            cov = V.sum(axis=0) / denom + eps
        check_floor_finite(cov, var_smoothing, float(np.max(fv)))
        cov = _shrink(cov, shrinkage or 0.0)
    if reg:
        cov = (1.0 - reg) * cov + reg
    if covariance == "diagonal":
        check_variances_representable(V / W[:, None], np.abs(means), cov,
                                      lambda i: f" in class {_label(classes, i[0])}",
                                      SingularCovarianceError)
    else:
        check_variances_representable(V.sum(axis=0) / Wtot,
                                      np.max(np.abs(means), axis=0), cov,
                                      lambda i: " (pooled)", SingularCovarianceError)
    _check_positive_variances(cov, covariance, classes, eps, var_smoothing, m.dtype)
    chol = np.sqrt(cov)
    logv = np.log(cov)
    log_det = logv.sum(axis=-1) if cov.ndim == 2 else np.full(K, logv.sum())
    return cov, chol, log_det


def _check_positive_variances(cov, covariance, classes, eps, var_smoothing, dtype):
    """Raise unless every variance is positive and its reciprocal fits ``dtype``."""
    bad = np.argwhere(~(cov > 0))
    if bad.size:
        fix = ("; pass var_smoothing>0 (the default is 1e-9) or reg>0" if eps == 0
               and not var_smoothing else "; every feature is constant in the "
               "training data: pass reg>0")
        if covariance == "diagonal":
            k, j = bad[0]
            raise SingularCovarianceError(
                f"feature {j} has zero variance in class {_label(classes, k)} and "
                f"var_smoothing={var_smoothing:g} adds nothing{fix}"
            )
        raise SingularCovarianceError(
            f"feature {bad[0][0]} has zero pooled within-class variance and "
            f"var_smoothing={var_smoothing:g} adds nothing{fix}"
        )
    tiny = 1.0 / np.finfo(np.dtype(dtype)).max  # below it 1/σ² overflows
    small = np.argwhere(cov < tiny)
    if small.size:
        where = (f"feature {small[0][-1]} in class {_label(classes, small[0][0])}"
                 if cov.ndim == 2 else f"feature {small[0][0]} (pooled)")
        raise SingularCovarianceError(
            f"the variance of {where} is {float(cov[tuple(small[0])]):.3g}, too small "
            f"for {dtype} (its reciprocal overflows); rescale the features (e.g. "
            f"divide by their standard deviation) or pass reg>0"
        )


def _check_fits_dtype(cov, means, covariance, rank, dt):
    """Raise unless the means and covariance are finite in ``dt`` (float32) and every
    variance of the retained subspace has a reciprocal there."""
    float_info = np.finfo(dt)
    var = np.diagonal(cov, axis1=-2, axis2=-1) if covariance in ("pooled",
                                                                  "per_class") else cov
    if rank < means.shape[1]:
        var = var[var > 0]  # constant features are outside the retained subspace
    big = float_info.max
    if not (np.all(np.abs(cov) <= big) and np.all(np.abs(means) <= big)
            and np.all(var >= 1.0 / big)):
        raise ValueError(
            f"the fitted means or covariance overflow or underflow {dt} (the dtype of "
            f"X); pass X as float64 or rescale the features"
        )

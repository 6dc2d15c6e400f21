"""Gaussian discriminant analysis: pooled (LDA), per-class (QDA) and diagonal models.

Model: y ~ Categorical(φ), x | y=k ~ N(μ_k, Σ_k).  The maximum-likelihood estimates are
φ_k = W_k / W, μ_k = the weighted mean of class k and Σ = (1/W) Σ_i w_i (x_i − μ_{y_i})
(x_i − μ_{y_i})ᵀ (pooled) or the same sum per class divided by W_k (per-class); they
come from one read of X (:func:`fastgen.class_moments`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import scipy.linalg

from . import cuda as _cuda
from ._params import FittedParams, kernel_view, register_params
from ._runtime import blas_single_thread, serial_for_small_inputs
from ._validation import (
    check_feature_names,
    check_finite_result,
    check_n_features,
    check_priors,
    check_sample_weight,
    check_scalar,
    check_X,
    check_y,
    feature_names_of,
)
from .kernels import gaussian as _g
from .kernels import moments as _km
from .kernels.special import MODE_JLL, finish_all_rows
from .kernels.tiles import linear_posteriors, serves_linear_posteriors
from .stats.moments import (
    ClassMoments,
    check_variances_representable,
    moments_arrays,
    total_variance,
    variance_floor,
)

__all__ = [
    "GDAParams",
    "SingularCovarianceError",
    "fit_gda",
    "gda_from_moments",
    "linear_discriminant",
    "lda_transform",
    "COVARIANCE_TYPES",
]

COVARIANCE_TYPES = ("pooled", "per_class", "diagonal", "pooled_diagonal")
# The scatter kind (class_moments(kind=...)) each covariance model is computed from.
SCATTER_FOR = {"pooled": "pooled", "per_class": "per_class", "diagonal": "diagonal",
               "pooled_diagonal": "diagonal"}
# Which stored scatter kinds can produce which covariance model.
_DERIVABLE = {
    "pooled": ("pooled", "pooled_diagonal"),
    "per_class": COVARIANCE_TYPES,
    "diagonal": ("diagonal", "pooled_diagonal"),
}


class SingularCovarianceError(np.linalg.LinAlgError, ValueError):
    """A covariance matrix is not positive definite (it is both a LinAlgError and a
    ValueError, so either ``except`` catches it)."""


@register_params
@dataclass(frozen=True)
class GDAParams(FittedParams):
    """Fitted Gaussian discriminant analysis.

    Attributes
    ----------
    classes : (K,) the class labels
    priors : (K,) p(y=k)
    means : (K, d) μ_k
    covariance : (d, d) pooled, (K, d, d) per_class, (K, d) diagonal, (d,) pooled_diagonal
    cholesky : lower Cholesky factors matching ``covariance`` (square roots of the
        variances for the diagonal models).  For a pooled model of ``rank`` r < d: a
        lower-triangular (d, d) factor L of rank r with LLᵀ = Σ_r, the covariance
        restricted to the r retained directions (see ``rank``).
    log_det : (K,) log|Σ_k| = 2·Σ_j log L_k,jj.  For rank r < d:
        Σ_{i≤r} log λ_i + 2·Σ_{j: s_j>0} log s_j, the log-determinant of Σ on the retained
        subspace (λ_i the retained eigenvalues of the within-class correlation matrix,
        s_j the within-class standard deviations); with r = d both are log|Σ|.
    n_per_class : (K,) total sample weight of each class
    covariance_type : one of "pooled", "per_class", "diagonal", "pooled_diagonal"
    rank : int
        The number of directions the model classifies in: d unless a pooled covariance
        is singular.  Then, as scikit-learn's svd solver, the features are scaled by
        their within-class standard deviations s_j (1 where s_j = 0), and the
        eigenvectors q_i of the resulting correlation matrix C = D⁻¹ΣD⁻¹ with
        eigenvalues λ_i > tol² are kept (tol=1e-4 by default: singular values of the
        standardised within-class data above tol).  Scores use the whitening
        P = Λ_r^{-1/2} Q_rᵀ D⁻¹ (r, d) in place of L⁻¹::

            jll_k(x) = log p_k − ½‖P(x − μ_k)‖² − ½·log_det − (r/2)·log 2π,

        the log-density of the r retained coordinates, not a density on R^d (none
        exists): it is defined up to a constant shared by all classes, so posteriors
        and predictions are those of the rank-r model.
    feature_names : tuple of str or None
        The column names of the data frame the model was fitted on (all str), else
        None; scoring checks X's columns against them (see :mod:`fastgen.scoring`).
    """

    #: scoring detects non-finite X from the scores themselves (see ``_check_rows``)
    checks_finite_scores = True
    _feature_table = "means"

    classes: np.ndarray
    priors: np.ndarray
    means: np.ndarray
    covariance: np.ndarray
    cholesky: np.ndarray
    log_det: np.ndarray
    n_per_class: np.ndarray
    covariance_type: str
    rank: int | None = None  # None: d (full rank), as in files written without it
    feature_names: tuple | None = None

    def _check_fields(self, check):
        """Shapes (K, d) from ``means``, one dtype for every float field, finite
        values, priors summing to one, positive variances and Cholesky diagonals
        (zeros allowed outside the retained subspace of a pooled model of rank < d)."""
        cov_type = check.choice("covariance_type", COVARIANCE_TYPES)
        dt = check.table("means", "finite").dtype
        d = check.d
        if self.rank is None:
            object.__setattr__(self, "rank", d)
        rank = self.rank
        if isinstance(rank, (bool, np.bool_)) or not isinstance(rank, (int, np.integer)) \
                or not 1 <= rank <= d or (rank < d and cov_type != "pooled"):
            check.fail("rank", f"must be an integer in [1, {d}] (below {d} only for a "
                               f"pooled covariance); got {rank!r}")
        object.__setattr__(self, "rank", int(rank))
        check.probabilities("priors", dt)
        shape = {"pooled": ("d", "d"), "per_class": ("K", "d", "d"),
                 "diagonal": ("K", "d"), "pooled_diagonal": ("d",)}[cov_type]
        diagonal = cov_type in ("diagonal", "pooled_diagonal")
        check.array("covariance", shape, dt, "positive" if diagonal else "finite")
        chol = check.array("cholesky", shape, dt, "positive" if diagonal else "finite")
        if not diagonal:
            diag = np.diagonal(chol, axis1=-2, axis2=-1)
            if not (diag.min() > 0 or (self.rank < d and diag.min() >= 0)):
                check.fail("cholesky", "must have a positive diagonal (a lower Cholesky "
                                       "factor of the covariance)")
        check.array("log_det", ("K",), dt, "finite")
        check.array("n_per_class", ("K",), dt, "nonneg")


    # ---- derived scoring tables (computed once per params object, in float64) ----
    @functools.cached_property
    def _log_prior(self):
        with np.errstate(divide="ignore"):
            return np.log(self.priors.astype(np.float64))

    @functools.cached_property
    def _center(self):
        w = self.n_per_class.astype(np.float64)
        return (w @ self.means.astype(np.float64)) / w.sum()

    @functools.cached_property
    def _whitening(self):
        """(P, M): the whitening P with Σ⁻¹ = PᵀP on the retained subspace, and a lower
        triangular (d, d) M with MᵀM = PᵀP for the scoring kernel.

        Full rank: P = M = L⁻¹.  Rank r < d: the r leading singular pairs of
        B = D⁻¹L (= Q_rΛ_r^{1/2} up to a rotation) give P = S_r⁻¹U_rᵀD⁻¹, which is
        Λ_r^{-1/2}Q_rᵀD⁻¹ up to the same rotation (scores do not depend on it); M comes
        from a QR factorisation of P with its columns reversed.
        """
        d = self.n_features_in
        L = self.cholesky.astype(np.float64)
        if self.covariance_type == "pooled_diagonal":
            L = np.diag(L)
        if self.rank == d:
            Linv = scipy.linalg.solve_triangular(L, np.eye(d), lower=True)
            return Linv, Linv
        r = self.rank
        s = _within_sd(self.covariance.astype(np.float64))
        U, S, _ = np.linalg.svd(L / s[:, None])
        P = (U[:, :r] / S[:r]).T / s[None, :]
        R = np.zeros((d, d))
        R[:r] = np.linalg.qr(P[:, ::-1], mode="r")
        return P, np.ascontiguousarray(R[::-1, ::-1])

    @functools.cached_property
    def _pooled_coef_t(self):
        """Wcᵀ (K, d), C-contiguous: the layout of the tiled posteriors."""
        return np.ascontiguousarray(self._pooled_tables[0].T)

    @functools.cached_property
    def _pooled_tables(self):
        """Wc = Σ⁻¹(μ_k − c) (d, K), bc, L⁻¹ and the constant of the shared term
        (with the whitening P of the retained subspace in place of L⁻¹ when
        rank < d)."""
        P, Linv = self._whitening
        D = (self.means.astype(np.float64) - self._center).T  # (d, K)
        A = P @ D
        Wc = P.T @ A
        bc = -0.5 * np.einsum("dk,dk->k", A, A) + self._log_prior
        const = -0.5 * (float(self.log_det[0]) + self.rank * _g.LOG_2PI)
        dt = self.dtype
        return (np.ascontiguousarray(Wc, dtype=dt), bc.astype(dt),
                np.ascontiguousarray(Linv, dtype=dt), const, self._center.astype(dt))

    @functools.cached_property
    def _per_class_tables(self):
        d = self.n_features_in
        eye = np.eye(d)
        Linv = np.stack([scipy.linalg.solve_triangular(Lk, eye, lower=True)
                         for Lk in self.cholesky.astype(np.float64)])
        bias = self._log_prior - 0.5 * (self.log_det.astype(np.float64) + d * _g.LOG_2PI)
        return np.ascontiguousarray(Linv, dtype=self.dtype), bias.astype(self.dtype)

    @functools.cached_property
    def _stacked_tables(self):
        """[L_1⁻ᵀ … L_K⁻ᵀ] (d, K·d) and a_k = L_k⁻¹(μ_k − c) for the stacked kernel."""
        Linv, _ = self._per_class_tables
        Linv = Linv.astype(np.float64)
        K, d = self.means.shape
        c = self._center
        Wst = np.ascontiguousarray(Linv.transpose(2, 0, 1).reshape(d, K * d))
        A = np.einsum("kjl,kl->kj", Linv, self.means.astype(np.float64) - c)
        dt = self.dtype
        return Wst.astype(dt), np.ascontiguousarray(A), c.astype(dt)

    @functools.cached_property
    def _diagonal_tables(self):
        """μ, 1/σ² (K, d) and the constants (K,), float64, as the Gaussian naive Bayes
        kernels take them (the variances of ``pooled_diagonal`` repeated per class)."""
        d = self.n_features_in
        K = self.n_classes
        var = np.broadcast_to(self.covariance.astype(np.float64), (K, d))
        bias = self._log_prior - 0.5 * (self.log_det.astype(np.float64) + d * _g.LOG_2PI)
        return kernel_view(np.ascontiguousarray(self.means, dtype=np.float64),
                           np.ascontiguousarray(1.0 / var),
                           np.ascontiguousarray(bias, dtype=np.float64))

    # ---- scoring on validated X ----
    def _scores(self, X, mode):
        """Joint log-likelihoods (``MODE_JLL``), log posteriors or posteriors.

        The kernels write the scores; a second parallel pass normalises the rows.
        (Fusing the normalisation into the BLAS-based kernels measured twice as slow
        once, n=1e6, d=16, K=10, 47 ms fused against 22 ms in two passes, and the same
        in a later run, 72.6 against 73.2 ms: no reason to fuse.)  The pooled model's
        posteriors on float64 data with d ≤ ``LINEAR_TILE_MAX_D`` go in one pass by
        transposed tiles instead, without BLAS (``linear_posteriors``: 1.2× faster
        at n = 1e6, d = 16, K = 10).
        """
        if (mode != MODE_JLL and self.covariance_type == "pooled"
                and serves_linear_posteriors(X, self.dtype)):
            # one pass by transposed tiles, no BLAS (see kernels.tiles.linear_posteriors)
            _, bc, _, _, c = self._pooled_tables
            s = np.empty((X.shape[0], self.n_classes))
            self._check_rows(X, linear_posteriors(X, c, self._pooled_coef_t, bc, mode, s))
            return s
        if self.covariance_type in ("diagonal", "pooled_diagonal"):
            # the Gaussian naive Bayes kernels: the same scores, finished per mode in
            # the same pass (four classes per sweep from 16 features on)
            from .kernels import nb as _nb  # the naive Bayes kernels only when needed

            means, inv_var, const = self._diagonal_tables
            s = np.empty((X.shape[0], self.n_classes), dtype=self.dtype)
            kernel = _nb.gaussian_nb_kernel_for(X.shape[1], self.n_classes)
            self._check_rows(X, kernel(X, means, inv_var, const, mode, s))
            return s
        s = self._raw_scores(X, mode)
        self._check_rows(X, finish_all_rows(s, mode))
        return s

    @staticmethod
    def _check_rows(X, n_bad):
        """Scoring skips the up-front scan of X (``checks_finite_scores``): a row of
        scores with a NaN or a non-finite maximum can only come from a non-finite or
        overflowing x (every class with a positive prior scores finitely otherwise)."""
        if n_bad:
            check_finite_result(X, np.array([np.nan]))

    def _raw_scores(self, X, mode):
        n = X.shape[0]
        out = np.empty((n, self.n_classes), dtype=self.dtype)
        ct = self.covariance_type
        if ct == "pooled":
            Wc, bc, Linv, const, c = self._pooled_tables
            if mode != MODE_JLL:
                # posteriors need only the linear part (X − c)·W + b: the shared
                # quadratic term cancels
                Linv = np.empty((0, 0), self.dtype)
            with blas_single_thread():
                return _g.pooled_scores(X, c, Wc, bc, Linv, const, out)
        if ct == "per_class":
            Linv, bias = self._per_class_tables
            d = X.shape[1]
            with blas_single_thread(d >= _g.TRMM_MIN_D):
                if _g.TRMM_MIN_D <= d < _g.STACKED_MAX_D:
                    Wst, A, c = self._stacked_tables
                    return _g.per_class_scores_stacked(X, c, Wst, A, bias, out)
                return _g.per_class_scores(X, kernel_view(self.means), Linv, bias, out)
        raise AssertionError(f"no raw scores for covariance_type={ct!r}")

    def _decision_scores(self, X):
        if self.covariance_type != "pooled":
            return self._scores(X, MODE_JLL)
        # any scores with the posteriors' row-wise argmax will do: for the pooled model
        # the linear part alone
        Wc, bc, _, _, c = self._pooled_tables
        out = np.empty((X.shape[0], self.n_classes), dtype=self.dtype)
        with blas_single_thread():
            _g.pooled_scores(X, c, Wc, bc, np.empty((0, 0), self.dtype), 0.0, out)
        self._check_rows(X, finish_all_rows(out, MODE_JLL))
        return out


def _check_covariance_type(covariance):
    if not isinstance(covariance, str) or covariance not in COVARIANCE_TYPES:
        raise ValueError(
            f"covariance must be one of {COVARIANCE_TYPES}; got {covariance!r}"
        )


def _check_shrinkage(shrinkage, covariance):
    if shrinkage is None:
        return None
    if isinstance(shrinkage, str):
        if shrinkage not in ("ledoit-wolf", "oas"):
            raise ValueError(
                f"shrinkage must be None, a float in [0, 1], 'ledoit-wolf' or 'oas'; "
                f"got {shrinkage!r}"
            )
        if covariance not in ("pooled", "per_class"):
            raise ValueError(
                f"shrinkage={shrinkage!r} estimates the intensity for a full covariance; "
                f"with covariance={covariance!r} pass a float shrinkage instead"
            )
        return shrinkage
    return check_scalar(shrinkage, "shrinkage", low=0.0, high=1.0)


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


def _inverse_within_sd(W, scatter, kind):
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


def _cholesky_checked(S):
    """Lower Cholesky factor of S, computed as L = D·L_C from the factor L_C of the
    correlation matrix C = D⁻¹SD⁻¹, D = diag(√S_jj).

    Factoring C makes the test unit-free: S is accepted when C is positive definite
    with every pivot² above d·ε (then every eigenvalue of C is too, so its rank is d),
    whatever the units of the features.  Raises SingularCovarianceError whose message
    says why, to be completed by the caller ("is not positive definite", ...).
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
    try:
        Lc = np.linalg.cholesky(C)
    except np.linalg.LinAlgError:
        raise SingularCovarianceError("is not positive definite") from None
    if not np.all(np.isfinite(Lc)) or np.min(np.diag(Lc)) ** 2 <= d * np.finfo(float).eps:
        raise SingularCovarianceError("is singular to working precision")
    return s[:, None] * Lc


def _within_sd(cov):
    """The within-class standard deviations s_j = √Σ_jj, with 1 where Σ_jj = 0."""
    s = np.sqrt(np.maximum(np.diag(cov), 0.0))
    s[s == 0] = 1.0
    return s


def _correlation_rank(cov, tol):
    """Eigen-pairs of C = D⁻¹ΣD⁻¹ (ascending), the within-class s_j, and the rank
    #{λ_i > tol²} (scikit-learn's svd-solver rule: singular values of the standardised
    within-class data above tol)."""
    s = _within_sd(cov)
    C = cov / s[:, None] / s[None, :]
    lam, Q = np.linalg.eigh(0.5 * (C + C.T))
    return lam, Q, s, int(np.sum(lam > tol * tol))


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
    matrix, rescaled) when it is positive definite, else the rank-revealing factor."""
    try:
        L = _cholesky_checked(cov)
    except SingularCovarianceError:
        return _reduced_pooled(cov, tol)
    return L, 2.0 * float(np.sum(np.log(np.diag(L)))), cov.shape[0]


def _suggest_reg(covs, above=0.0):
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
                _cholesky_checked((1.0 - reg) * c + reg * eye)
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


def _per_class_failure(failed, classes, cov, base, reg, tol):
    """The message of a per-class fit that failed: the first failing class, why, its
    rank (or, when every eigenvalue of its correlation matrix is above tol², how close
    to singular it is), and the smallest power-of-ten ``reg`` that makes every class
    pass (checked)."""
    k, why = failed[0]
    d = cov.shape[1]
    lam, _, _, rk = _correlation_rank(cov[k], tol)
    if rk < d:
        state = (f"it has rank {rk} of {d} (eigenvalues of its correlation matrix above "
                 f"tol²={tol * tol:.3g})")
    else:
        state = (f"the smallest eigenvalue of its correlation matrix, {lam[0]:.3g}, is "
                 f"at the working precision (d·ε = {d * np.finfo(float).eps:.3g})")
    others = ("" if len(failed) == 1 else
              f" ({len(failed)} classes fail: "
              f"{', '.join(_label(classes, j) for j, _ in failed)})")
    suggest = _suggest_reg(list(base), above=reg) if reg < 1 else 1.0
    fix = (f"pass reg>0 (Σ ← (1−reg)Σ + reg·I): reg={suggest:.0e} makes the fit succeed"
           if not reg else
           f"reg={reg:g} is not enough: reg={suggest:.0e} makes the fit succeed")
    if why.startswith("is undefined"):  # no spread at all: only reg or pooling help
        other_fixes = "or use covariance='pooled'"
    else:
        other_fixes = ("or pass a float shrinkage, use covariance='pooled', or drop "
                       "constant or collinear features")
    return (f"the per-class covariance of class {_label(classes, k)} {why}{others}: "
            f"{state}; {fix}, {other_fixes}")


def _finish(m: ClassMoments, covariance, priors, reg, shrinkage, unbiased, fourth=None,
            var_smoothing=1e-9, tol=1e-4):
    """Covariance estimates, shrinkage, regularisation and factors from moments."""
    classes, W, means = m.classes, m.counts, m.means
    K, d = means.shape
    absent = np.flatnonzero(W <= 0)
    if absent.size:
        raise ValueError(
            f"class {_label(classes, absent[0])} has zero total weight; every class needs "
            f"at least one sample with positive weight"
        )
    Wtot = float(W.sum())
    pri = W / Wtot if priors is None else priors
    rank = d
    if covariance == "pooled":
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
        log_det = np.full(K, ld)
    elif covariance == "per_class":
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
                chol[k] = _cholesky_checked(cov[k])
            except SingularCovarianceError as exc:
                failed.append((k, str(exc)))
                continue
            log_det[k] = 2.0 * np.sum(np.log(np.diag(chol[k])))
        if failed:
            raise SingularCovarianceError(
                _per_class_failure(failed, classes, cov, base, reg, tol))
    else:
        # the variance floor shared with fit_gaussian_nb (scikit-learn's var_smoothing)
        eps = variance_floor(var_smoothing, total_variance(m)) if var_smoothing else 0.0
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
            cov = V / denom[:, None] + eps
            a = shrinkage or 0.0
            if a:
                cov = np.stack([_shrink(row, a) for row in cov])
        else:
            denom = Wtot - K if unbiased else Wtot
            if denom <= 0:
                raise SingularCovarianceError(
                    "unbiased pooled variances need more samples than classes"
                )
            cov = _shrink(V.sum(axis=0) / denom + eps, shrinkage or 0.0)
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
        tiny = 1.0 / np.finfo(np.dtype(m.dtype)).max  # below it 1/σ² overflows
        small = np.argwhere(cov < tiny)
        if small.size:
            where = (f"feature {small[0][-1]} in class {_label(classes, small[0][0])}"
                     if cov.ndim == 2 else f"feature {small[0][0]} (pooled)")
            raise SingularCovarianceError(
                f"the variance of {where} is {float(cov[tuple(small[0])]):.3g}, too small "
                f"for {m.dtype} (its reciprocal overflows); rescale the features (e.g. "
                f"divide by their standard deviation) or pass reg>0"
            )
        chol = np.sqrt(cov)
        logv = np.log(cov)
        log_det = logv.sum(axis=-1) if cov.ndim == 2 else np.full(K, logv.sum())
    dt = np.dtype(m.dtype)
    if dt != np.float64:
        fi = np.finfo(dt)
        var = np.diagonal(cov, axis1=-2, axis2=-1) if covariance in ("pooled",
                                                                      "per_class") else cov
        if rank < d:
            var = var[var > 0]  # constant features are outside the retained subspace
        if not (np.all(np.abs(cov) <= fi.max) and np.all(np.abs(means) <= fi.max)
                and np.all(var >= 1.0 / fi.max)):
            raise ValueError(
                f"the fitted means or covariance overflow or underflow {dt} (the dtype of "
                f"X); pass X as float64 or rescale the features"
            )
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


def check_gda_options(covariance, priors, reg, shrinkage, unbiased, K, var_smoothing=1e-9,
                      tol=1e-4):
    """Validate the options of a GDA fit for K classes (``K``: the class labels, or their
    number; ``priors=None`` skips the priors, so that a fit that learns K later can check
    the rest before its pass over X).

    Returns the checked ``(priors, reg, shrinkage)``; raises ValueError naming the option.
    """
    _check_covariance_type(covariance)
    shrinkage = _check_shrinkage(shrinkage, covariance)
    reg = check_scalar(reg, "reg", low=0.0, high=1.0)
    check_scalar(var_smoothing, "var_smoothing", low=0.0)
    check_scalar(tol, "tol", low=0.0)
    if not isinstance(unbiased, (bool, np.bool_)):
        raise ValueError(f"unbiased must be True or False; got {unbiased!r}")
    priors = check_priors(priors, K)
    return priors, reg, shrinkage


@serial_for_small_inputs(0)
def fit_gda(X, y, covariance: str = "pooled", *, priors=None, sample_weight=None,
            reg: float = 0.0, shrinkage=None, unbiased: bool = False,
            var_smoothing: float = 1e-9, tol: float = 1e-4) -> GDAParams:
    """Fit Gaussian discriminant analysis by maximum likelihood.

    Parameters
    ----------
    X : array-like (n, d)
        Training data.  float32 input gives float32 params (the moments are accumulated
        in float64 either way).
    y : array-like (n,)
        Class labels (any sortable hashable type).
    covariance : {"pooled", "per_class", "diagonal", "pooled_diagonal"}
        "pooled": one Σ shared by the classes (LDA; linear boundaries);
        "per_class": Σ_k per class (QDA); "diagonal": per-class variances (Gaussian
        naive Bayes); "pooled_diagonal": variances shared by the classes (naive Bayes
        with a linear boundary).
    priors : array-like (K,), optional
        Class priors p(y=k) in the order of ``params.classes``; default W_k / W.
    sample_weight : array-like (n,), optional
        Non-negative weights (a weight of 2 is the same as repeating the row).
    reg : float in [0, 1]
        Σ ← (1 − reg)·Σ + reg·I after shrinkage (scikit-learn's QDA ``reg_param``).
        Not invariant to the units of the features (I is in the data's units): the
        predictions may change when a feature is rescaled.
    shrinkage : None, float in [0, 1], "ledoit-wolf" or "oas"
        A float a: Σ ← (1 − a)·Σ + a·(tr Σ / d)·I, scikit-learn's definition.  Like
        ``reg`` it depends on the units (a feature in large units dominates tr Σ/d and
        swamps the small-variance ones): standardise the features first, or use an
        estimated shrinkage.  "ledoit-wolf" and "oas" shrink the within-class
        *correlation* matrix toward I, Σ ← (1 − a)·Σ + a·diag(Σ) (the variances stay,
        the correlations shrink), with a estimated on the within-class standardised data
        (x_i − μ_{y_i})/s, s the within-class standard deviations: the intensity of
        ``sklearn.covariance.ledoit_wolf`` (or ``oas``) on those rows, over the features
        with s > 0.  Both are invariant to the units of every feature (the idea of
        scikit-learn's LDA ``shrinkage="auto"``, which standardises each class).  Pooled:
        one intensity for the pooled covariance; per_class: one per class, on that
        class's standardised rows.  Ledoit-Wolf costs one extra O(n·d) pass over X (the
        fourth moments of the standardised rows).
    unbiased : bool
        Divide scatter by W_k − 1 (per class) or W − K (pooled) instead of the MLE's
        W_k or W; scikit-learn before 1.9 did this in QDA and LDA's svd solver.
    var_smoothing : float ≥ 0, default 1e-9
        Diagonal models only: the variance floor ε = var_smoothing · max_j Var(x_j)
        (the variance of each feature over all rows, weighted by ``sample_weight``) is
        added to every variance, as scikit-learn's GaussianNB and
        :func:`fastgen.fit_gaussian_nb` do (:func:`fastgen.moments.variance_floor`).
        0 gives the pure MLE, and an error on a zero variance.
    tol : float ≥ 0, default 1e-4
        Pooled model only, used when Σ is singular (its Cholesky factorisation fails):
        directions of the within-class correlation matrix with eigenvalue ≤ tol² (the
        singular values of the standardised within-class data ≤ tol, scikit-learn's
        svd-solver ``tol``) are dropped and the model classifies in the range of the
        within-class scatter (``params.rank`` < d).  Also sets the rank reported by the
        per-class error.

    Returns
    -------
    GDAParams
        φ_k = W_k / W, μ_k = Σ_{i∈k} w_i x_i / W_k,
        Σ = (1/W)·Σ_i w_i (x_i − μ_{y_i})(x_i − μ_{y_i})ᵀ (pooled MLE),
        with Cholesky factors and log-determinants for scoring.  A singular pooled Σ
        (constant or collinear features) gives a model of ``rank`` r < d, as
        scikit-learn's ``LinearDiscriminantAnalysis()`` (svd solver): the features
        are scaled by their within-class standard deviations, Σ is eigendecomposed
        and only the r directions above ``tol`` are used (see :class:`GDAParams`).
        Full-rank data keep the Cholesky path.

    Raises
    ------
    ValueError
        For invalid input (the message names the argument and the problem).
    SingularCovarianceError
        (a LinAlgError and a ValueError) when a per-class covariance is not positive
        definite (the message names the class, the rank found and a ``reg`` that makes
        the fit succeed), when a diagonal model has a zero variance with
        ``var_smoothing=0``, when every feature is constant within every class, or
        when a feature is so small (below about 1e-154) that the squares of its
        deviations underflow ("rescale the features").  Whether a fit succeeds never
        depends on the units of a feature otherwise: positive definiteness is tested on
        the correlation matrix.
    """
    if _cuda.is_device_array(X):
        return _cuda.fit_gda(X, y, covariance, priors=priors, sample_weight=sample_weight,
                             reg=reg, shrinkage=shrinkage, unbiased=unbiased,
                             var_smoothing=var_smoothing, tol=tol)
    _check_covariance_type(covariance)
    names = feature_names_of(X)
    X = check_X(X, finite=False)  # checked through the moments below: no extra pass
    classes, codes = check_y(y, X.shape[0])
    w = check_sample_weight(sample_weight, X.shape[0])
    priors, reg, shrinkage = check_gda_options(covariance, priors, reg, shrinkage, unbiased,
                                               classes, var_smoothing, tol)
    kind = SCATTER_FOR[covariance]
    W, means, scatter = moments_arrays(X, codes, w, classes.shape[0], kind)
    check_finite_result(X, means, scatter, sample_weight=w)
    m = ClassMoments(classes, W, means, scatter, kind, str(X.dtype), names)
    fourth = None
    if shrinkage == "ledoit-wolf":
        G = _km.n_row_groups(X.shape[0], classes.shape[0], 1 << 20)
        fourth = _km.standardised_fourth_moment(X, codes, w, means,
                                                _inverse_within_sd(W, scatter, kind), G)
    # The small factorisations run with BLAS on one thread: woken BLAS threads keep
    # spinning after the call and slow the next parallel kernel (measured: a per-class
    # fit repeated back to back, n=2e5, d=128, K=10, took 0.12 s instead of 0.08 s).
    with blas_single_thread():
        return _finish(m, covariance, priors, reg, shrinkage, unbiased, fourth,
                       var_smoothing, tol)


def gda_from_moments(moments: ClassMoments, covariance: str = "pooled", *, priors=None,
                     reg: float = 0.0, shrinkage=None, unbiased: bool = False,
                     var_smoothing: float = 1e-9, tol: float = 1e-4) -> GDAParams:
    """Build a GDA model from (possibly merged) class moments.

    Same options as :func:`fit_gda`, except ``shrinkage="ledoit-wolf"``, which needs a
    pass over the data (use :func:`fit_gda`).  Per-class moments give any covariance
    model; pooled moments give "pooled" and "pooled_diagonal"; diagonal moments give
    "diagonal" and "pooled_diagonal".  The variance floor of the diagonal models uses
    the (weighted) total variance implied by the moments
    (:func:`fastgen.moments.total_variance`).
    """
    if not isinstance(moments, ClassMoments):
        raise ValueError(f"moments must be ClassMoments; got {type(moments).__name__}")
    _check_covariance_type(covariance)
    if covariance not in _DERIVABLE[moments.kind]:
        raise ValueError(
            f"moments of kind {moments.kind!r} cannot give covariance={covariance!r}; "
            f"compute class_moments(..., kind={SCATTER_FOR[covariance]!r})"
        )
    if shrinkage == "ledoit-wolf":
        raise ValueError(
            "shrinkage='ledoit-wolf' needs the fourth moments of the data; use fit_gda, "
            "or 'oas' or a float shrinkage with gda_from_moments"
        )
    priors, reg, shrinkage = check_gda_options(covariance, priors, reg, shrinkage, unbiased,
                                               moments.classes, var_smoothing, tol)
    with blas_single_thread():
        return _finish(moments, covariance, priors, reg, shrinkage, unbiased,
                       var_smoothing=var_smoothing, tol=tol)


def _check_gda(params, pooled_only=True):
    if not isinstance(params, GDAParams):
        raise ValueError(f"params must be GDAParams (from fit_gda); got {type(params).__name__}")
    if pooled_only and params.covariance_type not in ("pooled", "pooled_diagonal"):
        raise ValueError(
            f"a linear discriminant exists only for a covariance shared by the classes "
            f"('pooled' or 'pooled_diagonal'); these params are {params.covariance_type!r}"
        )


def linear_discriminant(params: GDAParams):
    """The linear discriminant of a shared-covariance model.

    Returns
    -------
    W : ndarray (d, K)
        w_k = Σ⁻¹μ_k.
    b : ndarray (K,)
        b_k = −½ μ_kᵀΣ⁻¹μ_k + log p_k.

    Then log p(y=k | x) = xᵀw_k + b_k − log Σ_j exp(xᵀw_j + b_j); with two classes
    p(y=1 | x) = σ((w_1 − w_0)ᵀx + b_1 − b_0).  For a model of rank r < d, Σ⁻¹ is
    PᵀP, the inverse on the retained subspace (see :class:`GDAParams`).
    """
    _check_gda(params)
    P, _ = params._whitening
    A = P @ params.means.astype(np.float64).T
    Wm = P.T @ A
    b = -0.5 * np.einsum("dk,dk->k", A, A) + params._log_prior
    return Wm.astype(params.dtype), b.astype(params.dtype)


def lda_transform(params: GDAParams, X, n_components: int | None = None):
    """Project X onto the discriminant directions (scikit-learn's LDA ``transform``).

    With the pooled Σ = LLᵀ and the priors-weighted centre x̄ = Σ_k p_k μ_k, the
    directions are V = L⁻ᵀ·U, where U are the right singular vectors of the
    between-class matrix B with rows √(W·p_k/(K−1))·L⁻¹(μ_k − x̄); they are ordered by
    decreasing singular value and whiten the within-class covariance (Vᵀ Σ V = I).
    The result is (X − x̄)·V[:, :n_components], equal to scikit-learn's up to the sign
    of each column.  For a model of rank r < d, L⁻¹ is replaced by the whitening P of
    the retained subspace (see :class:`GDAParams`), and n_components ≤ min(K − 1, r).

    Parameters
    ----------
    params : GDAParams with covariance "pooled" or "pooled_diagonal"
    X : array-like (n, d)
    n_components : int, optional
        At most min(K − 1, rank) (the default; rank = d unless Σ is singular).
    """
    _check_gda(params)
    check_feature_names(params.feature_names, feature_names_of(X), "GDAParams")
    X = check_X(X, dtype=params.dtype)
    check_n_features(X, params.n_features_in)
    K, d = params.means.shape
    max_c = min(K - 1, params.rank)
    if n_components is None:
        n_components = max_c
    if isinstance(n_components, bool) or not isinstance(n_components, (int, np.integer)) \
            or not 1 <= n_components <= max_c:
        raise ValueError(
            f"n_components must be an integer in [1, {max_c}] (min(n_classes - 1, "
            f"rank of the model)); got {n_components!r}"
        )
    P, _ = params._whitening
    p = params.priors.astype(np.float64)
    mu = params.means.astype(np.float64)
    xbar = p @ mu
    Wt = float(params.n_per_class.astype(np.float64).sum())
    fac = 1.0 / (K - 1) if K > 1 else 1.0
    B = np.sqrt(Wt * p * fac)[:, None] * (P @ (mu - xbar).T).T
    _, s, Vt = np.linalg.svd(B, full_matrices=False)
    V = P.T @ Vt[:n_components].T
    return ((X - xbar.astype(X.dtype)) @ V.astype(X.dtype))

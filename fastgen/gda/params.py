"""The params of Gaussian discriminant analysis and their scoring tables.

:class:`GDAParams` holds the fitted model; its scoring tables (computed once per params
object, in float64, handed over by :meth:`GDAParams.scoring_tables`) serve the scorer
of :mod:`fastgen.gda.scoring`, which takes them to the CPU kernels (in the params'
dtype) or the device kernels of :mod:`fastgen.cuda`.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from .._params import FittedParams, kernel_view, register_params
from .scoring import GAUSSIAN_SCORER, DiagonalTables, PerClassTables, PooledTables

__all__ = ["GDAParams", "SingularCovarianceError", "COVARIANCE_TYPES", "SCATTER_FOR",
           "within_sd"]

#: log 2π, as the Gaussian kernels use it (fastgen.kernels.gaussian.LOG_2PI)
_LOG_2PI = np.log(2.0 * np.pi)

COVARIANCE_TYPES = ("pooled", "per_class", "diagonal", "pooled_diagonal")
# The scatter kind (class_moments(kind=...)) each covariance model is computed from.
SCATTER_FOR = {"pooled": "pooled", "per_class": "per_class", "diagonal": "diagonal",
               "pooled_diagonal": "diagonal"}


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
    n_iter, converged, log_likelihood_history, history_monotone : EM record or None
        An int, a bool, (n_iter + 1,) float64 and a bool:
        the EM record (:meth:`fastgen._params.FieldChecker.em_record`) of a fit by EM:
        missing features (``fit_gda(..., nan_policy="marginalize")`` with a full
        covariance; the observed-data log-likelihood) or ``unlabeled`` rows (the
        labelled log-likelihood plus λ times the unlabelled rows' log marginal
        likelihood): the iterations, whether the last one changed the objective by at
        most ``em_tol`` per unit of row weight, the objective at the start and after
        each iteration, and whether EM guarantees that it never decreases (True
        unless ``reg``, a shrinkage, ``unbiased`` or a variance floor made the
        M-step a regularised estimate).  None for every other fit.
    """

    scorer = GAUSSIAN_SCORER
    _feature_table = "means"
    _records_em = True  # n_iter, converged, log_likelihood_history, history_monotone

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
    n_iter: int | None = None
    converged: bool | None = None
    log_likelihood_history: np.ndarray | None = None
    history_monotone: bool | None = None

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

    def _check_derived(self, check):
        """cholesky and log_det against covariance (see :func:`_check_factors`);
        the pooled log_det is one value for every class."""
        _check_factors(check, self)

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
        import scipy.linalg  # on use: small naive Bayes fits never load it

        d = self.n_features_in
        L = self.cholesky.astype(np.float64)
        if self.covariance_type == "pooled_diagonal":
            L = np.diag(L)
        if self.rank == d:
            Linv = scipy.linalg.solve_triangular(L, np.eye(d), lower=True)
            return Linv, Linv
        r = self.rank
        s = within_sd(self.covariance.astype(np.float64))
        U, S, _ = np.linalg.svd(L / s[:, None])
        P = (U[:, :r] / S[:r]).T / s[None, :]
        R = np.zeros((d, d))
        R[:r] = np.linalg.qr(P[:, ::-1], mode="r")
        return P, np.ascontiguousarray(R[::-1, ::-1])

    @functools.cached_property
    def _pooled_tables64(self):
        """(c, coef, bc, M, const) in float64: the centre c, coef = Σ⁻¹(μ_k − c) (d, K),
        bc_k = −½(μ_k − c)ᵀΣ⁻¹(μ_k − c) + log p_k, the lower triangular M with
        MᵀM = Σ⁻¹ (L⁻¹; on the retained subspace when rank < d, see ``_whitening``) and
        the constant −½(log_det + rank·log 2π) of the shared term."""
        P, M = self._whitening
        c = self._center
        D = (self.means.astype(np.float64) - c).T  # (d, K)
        A = P @ D
        coef = P.T @ A
        bc = -0.5 * np.einsum("dk,dk->k", A, A) + self._log_prior
        const = -0.5 * (float(self.log_det[0]) + self.rank * _LOG_2PI)
        return c, np.ascontiguousarray(coef), bc, np.ascontiguousarray(M), const

    @functools.cached_property
    def _per_class_tables64(self):
        """(L_k⁻¹ (K, d, d), bias (K,)) in float64, bias_k = log p_k − ½(log|Σ_k| +
        d·log 2π)."""
        import scipy.linalg  # on use: small naive Bayes fits never load it

        d = self.n_features_in
        eye = np.eye(d)
        Linv = np.stack([scipy.linalg.solve_triangular(Lk, eye, lower=True)
                         for Lk in self.cholesky.astype(np.float64)])
        bias = self._log_prior - 0.5 * (self.log_det.astype(np.float64)
                                        + d * _LOG_2PI)
        return Linv, bias

    @functools.cached_property
    def _diagonal_tables(self):
        """μ, 1/σ² (K, d) and the constants (K,), float64, as the Gaussian naive Bayes
        kernels take them (the variances of ``pooled_diagonal`` repeated per class)."""
        d = self.n_features_in
        K = self.n_classes
        var = np.broadcast_to(self.covariance.astype(np.float64), (K, d))
        bias = self._log_prior - 0.5 * (self.log_det.astype(np.float64)
                                        + d * _LOG_2PI)
        return kernel_view(np.ascontiguousarray(self.means, dtype=np.float64),
                           np.ascontiguousarray(1.0 / var),
                           np.ascontiguousarray(bias, dtype=np.float64))

    def scoring_tables(self):
        """(kind, tables): the float64 tables of the scoring formula, which the scorer
        (:data:`~fastgen.gda.scoring.GAUSSIAN_SCORER`) takes to the CPU kernels (in the
        params' dtype) or the device kernels of :mod:`fastgen.cuda`: one
        implementation, rank handling included.

        * ``"pooled"``: :class:`~fastgen.gda.scoring.PooledTables` (c, coef, bc, M,
          const), jll_k(x) = (x − c)ᵀcoef_k + bc_k + const − ½‖M(x − c)‖², M lower
          triangular (see :class:`GDAParams` for rank < d);
        * ``"per_class"``: :class:`~fastgen.gda.scoring.PerClassTables` (μ (K, d),
          L⁻¹ (K, d, d), bias (K,), c), jll_k(x) = bias_k − ½‖L_k⁻¹(x − μ_k)‖²;
        * ``"diagonal"`` (also ``pooled_diagonal``):
          :class:`~fastgen.gda.scoring.DiagonalTables` (μ (K, d), 1/σ² (K, d),
          const (K,)), jll_k(x) = const_k − ½ Σ_j (x_j − μ_kj)²/σ²_kj.
        """
        return self._scoring_tables

    @functools.cached_property
    def _scoring_tables(self):
        ct = self.covariance_type
        if ct == "pooled":
            return "pooled", PooledTables(*self._pooled_tables64)
        if ct == "per_class":
            Linv, bias = self._per_class_tables64
            return "per_class", PerClassTables(self.means.astype(np.float64), Linv, bias,
                                               self._center)
        return "diagonal", DiagonalTables(*self._diagonal_tables)


def within_sd(cov):
    """The within-class standard deviations s_j = √Σ_jj, with 1 where Σ_jj = 0."""
    s = np.sqrt(np.maximum(np.diag(cov), 0.0))
    s[s == 0] = 1.0
    return s


def _check_factors(check, p):
    """Fail unless ``p.cholesky`` and ``p.log_det`` are the factor and log-determinant
    of ``p.covariance``, to the rounding of the params' dtype.

    Full covariance: Σ symmetric, L lower triangular with LLᵀ = Σ (compared in
    correlation units, D⁻¹(LLᵀ − Σ)D⁻¹, so the tolerance does not depend on the units;
    then Σ is positive definite, as L has a positive diagonal), log|Σ| = 2Σ log L_jj.
    A pooled model of rank r < d: LLᵀ is the retained part D·Q_rΛ_rQ_rᵀ·D of the
    correlation matrix's r largest eigenvalues, log_det = Σ log λ_i + 2Σ log s_j.
    Diagonal models: L = √σ², log_det = Σ_j log σ²_j.
    """
    eps = float(np.finfo(p.means.dtype).eps)
    d = p.means.shape[1]
    cov = p.covariance.astype(np.float64)
    L = p.cholesky.astype(np.float64)
    ld = p.log_det.astype(np.float64)
    kind = p.covariance_type
    if kind in ("diagonal", "pooled_diagonal"):
        if not np.all(np.abs(L * L - cov) <= 8.0 * eps * cov):
            check.fail("cholesky", "must be the square root of covariance (a damaged or "
                                   "edited file)")
        want = np.broadcast_to(np.log(cov).sum(axis=-1), ld.shape)
        slack = 0.0
    else:
        covs = cov[None] if kind == "pooled" else cov
        Ls = L[None] if kind == "pooled" else L
        want = np.empty(covs.shape[0])
        slack = np.zeros(covs.shape[0])  # log λ of a reduced model: Δλ/λ ≈ d·ε/λ
        tol = 16.0 * (d + 2) * eps
        for k in range(covs.shape[0]):
            S, F = covs[k], Ls[k]
            s = within_sd(S)
            if not np.all(np.abs(S - S.T) <= tol * np.outer(s, s)):
                check.fail("covariance", "must be symmetric (a damaged or edited file)")
            if np.any(np.triu(F, 1)):
                check.fail("cholesky", "must be lower triangular: it has entries above "
                                       "the diagonal (a damaged or edited file)")
            if p.rank == d:
                target = S
                want[k] = 2.0 * np.sum(np.log(np.diag(F)))
            else:
                C = S / s[:, None] / s[None, :]
                lam, Q = np.linalg.eigh(0.5 * (C + C.T))
                lam_r, Q_r = lam[d - p.rank:], Q[:, d - p.rank:]
                if not lam_r[0] > 0:
                    check.fail("covariance", f"must have {p.rank} positive eigenvalues "
                                             f"of its correlation matrix (rank {p.rank})")
                target = (s[:, None] * Q_r * lam_r) @ (Q_r.T * s[None, :])
                want[k] = float(np.sum(np.log(lam_r))
                                + 2.0 * np.sum(np.log(s[np.diag(S) > 0])))
                slack[k] = 16.0 * d * eps * float(np.sum(1.0 / lam_r))
            gap = np.abs(F @ F.T - target) / np.outer(s, s)
            if not np.all(gap <= tol):
                what = ("covariance is not positive definite, or cholesky is not its "
                        "factor" if p.rank == d else "cholesky is not the factor of "
                        "covariance's retained part")
                where = "" if kind == "pooled" else f" (class index {k})"
                check.fail("cholesky", f"does not match covariance{where}: {what}; "
                                       f"D⁻¹(LLᵀ − Σ)D⁻¹ is off by "
                                       f"{float(np.max(gap)):.3g} (a damaged or edited file)")
        if kind == "pooled":
            want, slack = np.full(ld.shape, want[0]), np.full(ld.shape, slack[0])
    bad = ~(np.abs(ld - want) <= 16.0 * eps * (d + np.abs(want)) + slack)
    if np.any(bad):
        k = int(np.flatnonzero(bad)[0])
        check.fail("log_det", f"must be the log-determinant of covariance: entry {k} is "
                              f"{float(ld[k]):.17g} where covariance gives "
                              f"{float(want[k]):.17g} (a damaged or edited file)")

"""From the pass's sums to ``cov_params``: the information in statsmodels' layout, its
rank check, its inverse (Wald), and the robust (HC0/HC1) and cluster sandwiches.

Imports: ``fastgen._runtime``, ``fastgen._warn`` and the sibling modules of
``fastgen.logistic`` only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg

from ..._runtime import blas_single_thread
from ..._warn import warn
from ..diagnostics import COLLINEAR_TOL, ILL_CONDITIONED, collinearity_in_order
from ..params import CollinearityWarning

__all__ = ["StatsmodelsLayout", "statsmodels_layout", "check_full_rank",
           "inverse_information", "warn_ill_conditioned", "sandwich"]


@dataclass(frozen=True)
class StatsmodelsLayout:
    """The permutation from the internal index ``k·p + j`` (intercept last) to
    statsmodels' (intercept first): ``order`` over all q coefficients, ``within`` over
    the p of one equation."""

    order: np.ndarray
    within: np.ndarray


def statsmodels_layout(n_equations, p, fit_intercept) -> StatsmodelsLayout:
    if fit_intercept:
        within = np.concatenate([[p - 1], np.arange(p - 1)])
    else:
        within = np.arange(p)
    order = (np.arange(n_equations)[:, None] * p + within[None, :]).ravel()
    return StatsmodelsLayout(order, within)


def check_full_rank(H, labels, m, p, classes, shift=None, positions=None):
    """Raise naming the collinear columns, by the rank rule of the fits.

    ``H`` is the information matrix in statsmodels' layout (intercept first; m
    equations of p coefficients); ``labels`` name its p columns as the fit's
    messages do (``intercept``, then the features).  The design's columns are checked on
    Σ_k H_kk (the information itself for binary models; for multinomial ones a
    weighted Gram with the design's null space, as the fit checks), by
    :func:`fastgen.logistic.diagnostics.collinearity_in_order` at ``COLLINEAR_TOL``:
    the column named is the later one of a dependent set, as in the fit's
    CollinearityWarning, and under the same name.  A multinomial information can also
    lose rank in one equation only; the full matrix is checked after, per equation.
    ``shift``: the centred frame's (H taken there), so that the combinations name the
    user's columns.  ``positions``: the columns' positions in X where ``labels`` are
    the default names (messages give both, as the fit's do).
    """
    G = sum(H[k * p:(k + 1) * p, k * p:(k + 1) * p] for k in range(m))
    col = collinearity_in_order(G, labels, tol=COLLINEAR_TOL, positions=positions)
    where = ""
    if col.full_rank and m > 1:
        eq = [f"{nm} (y={classes[k + 1]})" for k in range(m) for nm in labels]
        col = collinearity_in_order(H, eq, tol=COLLINEAR_TOL,
                                    positions=None if positions is None else
                                    list(positions) * m)
        where = " of the information matrix"
    if not col.full_rank and shift is not None and not where:
        col = col.in_user_frame(np.r_[0.0, shift], 0)  # the design's columns
    if not col.full_rank:
        raise np.linalg.LinAlgError(
            f"logistic_inference: the design is rank-deficient{where} (rank {col.rank} of "
            f"{col.n_columns} columns, intercept included): {col.describe()}. These "
            f"coefficients are not identified and their standard errors are infinite "
            f"(a column whose 1 - R^2 on the columns before it is below "
            f"{COLLINEAR_TOL ** 2:.0e} counts as dependent, the rule of fit_logistic's "
            f"CollinearityWarning). Drop the named columns and refit"
        )


def inverse_information(H):
    """(H⁻¹, log det H, C, its Cholesky factor L, scales s): H scaled to unit diagonal,
    C = S⁻¹HS⁻¹ = LLᵀ, so H⁻¹ = S⁻¹C⁻¹S⁻¹ whatever the units."""
    q = H.shape[0]
    s = np.sqrt(np.diag(H))
    C = H / s[:, None] / s[None, :]
    with blas_single_thread():
        c = scipy.linalg.cho_factor(C, lower=True, check_finite=False)
        cov = scipy.linalg.cho_solve(c, np.eye(q), check_finite=False)
    cov = cov / s[:, None] / s[None, :]
    logdet = 2.0 * float(np.sum(np.log(np.diag(c[0])))) + 2.0 * float(np.sum(np.log(s)))
    return 0.5 * (cov + cov.T), logdet, C, c[0], s


def warn_ill_conditioned(C, L, cov, s, names):
    """Warn (:class:`CollinearityWarning`) when the unit-diagonal information C = LLᵀ has
    a condition number above ``ILL_CONDITIONED``, naming the columns of its nearly
    null direction (by inverse iteration: the components above a tenth of the largest).

    κ(C) from LAPACK's estimate of ‖C⁻¹‖₁ (``pocon``) and ‖C‖₁: O(q²) beside the
    inversion's O(q³)."""
    q = L.shape[0]
    anorm = float(np.max(np.sum(np.abs(C), axis=0)))
    rcond, info = scipy.linalg.lapack.dpocon(np.asfortranarray(L.T), anorm)  # C = UᵀU
    if info != 0 or rcond <= 0.0:
        rcond = 0.0
    kappa = np.inf if rcond == 0.0 else 1.0 / rcond
    if kappa <= ILL_CONDITIONED:
        return
    Cinv = cov * s[:, None] * s[None, :]  # C⁻¹
    v = Cinv[:, int(np.argmax(np.diag(Cinv)))].copy()
    for _ in range(30):
        v = Cinv @ v
        v /= np.max(np.abs(v))
    involved = [names[j] for j in np.flatnonzero(np.abs(v) >= 0.1)]
    vif = np.diag(Cinv)
    warn(f"logistic_inference: the information matrix is ill-conditioned (condition "
         f"number {kappa:.2g} after scaling to unit diagonal, above {ILL_CONDITIONED:.0e}):"
         f" the columns {involved} are nearly collinear (variance inflation up to "
         f"{float(np.max(vif[np.flatnonzero(np.abs(v) >= 0.1)])):.2g}); their standard "
         f"errors are inflated accordingly and rest on the last digits of the data. "
         f"Drop or combine one of them, or check how they were computed "
         f"(q = {q} coefficients)", CollinearityWarning)


def sandwich(inverse, cov_type, order, meat=None, cluster_scores=None, n_groups=0,
             nobs=0.0):
    """``cov_params`` from the inverse information (statsmodels' layout): the inverse
    itself (nonrobust), ``I⁻¹ M I⁻¹`` (HC0, HC1) or
    ``G/(G−1) · (N−1)/(N−q) · I⁻¹ (Σ_g S_g S_gᵀ) I⁻¹`` (cluster); ``meat`` and
    ``cluster_scores`` in the internal layout, permuted here by ``order``."""
    cov = inverse
    q = inverse.shape[0]
    with blas_single_thread():  # products whose bits do not depend on the thread count
        if cov_type in ("HC0", "HC1"):
            M = meat[np.ix_(order, order)]
            cov = cov @ M @ cov
        elif cov_type == "cluster":
            S = cluster_scores[:, order]
            Sc = S @ cov
            cov = (n_groups / (n_groups - 1.0)) * ((nobs - 1.0) / (nobs - q)) * (Sc.T @ Sc)
    return 0.5 * (cov + cov.T)

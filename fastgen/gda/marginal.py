"""Scores of Gaussian discriminant analysis for rows with missing features (NaN).

Each row is scored by the marginal Gaussian of its observed coordinates o::

    jll_k(x) = log π_k + log N(x_o; μ_k,o, Σ_k,oo),

every covariance kind; a row with every feature missing gets log π_k.  The diagonal
kinds leave out the terms of the missing features
(:func:`fastgen.stats.missing.diagonal_marginal_jll`); the full ones update the
precision per missingness pattern (:func:`fastgen.stats.missing.gaussian_marginal`:
one small factorisation per pattern, per class for ``per_class``, shared by the
classes for ``pooled``).  Reads the params' public fields only.
"""

from __future__ import annotations

import numpy as np

from ..stats.missing import (
    class_gaussian_marginal,
    diagonal_marginal_jll,
    missing_patterns,
    shared_gaussian_marginal,
)

__all__ = ["marginal_joint_log_likelihood"]


def _precision(L):
    """Λ = L⁻ᵀL⁻¹ from a lower Cholesky factor L."""
    import scipy.linalg  # on use: small naive Bayes fits never load it

    Linv = scipy.linalg.solve_triangular(L, np.eye(L.shape[0]), lower=True)
    return Linv.T @ Linv


def marginal_joint_log_likelihood(params, X, missing, relative=False) -> np.ndarray:
    """(n, K) float64 joint log-likelihoods of the rows of validated dense X, whose
    NaN entries (``missing``, (n, d) bool) are integrated out; with ``relative``, the
    pooled model leaves out the terms shared by the classes (−½zᵀΛz: posteriors
    and labels need the scores only up to a constant per row)."""
    K, d = params.means.shape
    with np.errstate(divide="ignore"):
        log_prior = np.log(params.priors.astype(np.float64))
    ct = params.covariance_type
    if ct in ("diagonal", "pooled_diagonal"):
        return diagonal_marginal_jll(X, params.means, params.covariance, log_prior)
    if params.rank < d:
        raise ValueError(
            f"this pooled model has rank {params.rank} < {d} (a singular within-class "
            f"covariance), so the observed features of a row have no marginal density; "
            f"refit with reg>0 (or drop the constant or collinear features) to score rows "
            f"with NaN")
    pats = missing_patterns(missing)
    means = params.means.astype(np.float64)
    chol = params.cholesky.astype(np.float64)
    log_det = params.log_det.astype(np.float64)
    if ct == "pooled":  # one pass over the rows, in their order
        return shared_gaussian_marginal(X, pats, means, _precision(chol), log_det[0],
                                        log_prior, quadratic=not relative)
    precisions = np.stack([_precision(Lk) for Lk in chol])
    return class_gaussian_marginal(X, pats, means, precisions, log_det, log_prior)

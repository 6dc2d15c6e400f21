"""Scores of the Gaussian models (GDA, Gaussian naive Bayes) on small X in numpy.

The formulas of the scoring kernels (:mod:`fastgen.kernels.gaussian`,
``fastgen.kernels.nb.gaussian_nb_scores``) on the params' own float64 tables
(``params.scoring_tables()``), vectorised as scikit-learn scores, one class at a time
(never an (n, K, d) temporary): no compilation for inputs of at most
:data:`fastgen._small.SMALL_VALUES` values.
"""

from __future__ import annotations

import numpy as np

from .._small import MODE_JLL, finish_rows, numpy_scope
from .._validation import check_finite_result

__all__ = ["table_scores", "gaussian_scores"]


def table_scores(kind, tables, X, mode):
    """(n, K) float64 joint log-likelihoods of X from the tables of ``kind``:

    * ``"pooled"`` (c, coef, bc, M, const): (x − c)ᵀcoef_k + bc_k, plus the shared
      const − ½‖M(x − c)‖² for ``MODE_JLL`` only (it cancels in the posteriors);
    * ``"per_class"`` (μ, L⁻¹, bias, …): bias_k − ½‖L_k⁻¹(x − μ_k)‖²;
    * ``"diagonal"`` (μ, 1/σ², const): const_k − ½ Σ_j (x_j − μ_kj)²/σ²_kj.
    """
    X = np.asarray(X, dtype=np.float64)
    with numpy_scope(), np.errstate(over="ignore", invalid="ignore"):
        if kind == "pooled":
            c, coef, bc, M, const = tables
            Z = X - c
            s = Z @ coef + bc
            if mode == MODE_JLL:
                Y = Z @ M.T
                s += (const - 0.5 * np.einsum("ij,ij->i", Y, Y))[:, None]
            return s
        means, scale, bias = tables[:3]
        s = np.empty((X.shape[0], means.shape[0]))
        for k in range(means.shape[0]):
            Z = X - means[k]
            if kind == "per_class":
                Y = Z @ scale[k].T
                s[:, k] = bias[k] - 0.5 * np.einsum("ij,ij->i", Y, Y)
            else:
                s[:, k] = bias[k] - 0.5 * (Z * Z) @ scale[k]
        return s


def gaussian_scores(params, X, mode):
    """Scores of validated small X per ``mode`` for params with Gaussian scoring tables
    (GDA, Gaussian naive Bayes), in the params' dtype.  A row
    with a NaN or a non-finite maximum raises the error of the kernels' path (it can
    only come from a non-finite or overflowing x)."""
    kind, tables = params.scoring_tables()
    s = table_scores(kind, tables, X, mode).astype(params.dtype, copy=False)
    if finish_rows(s, mode):
        check_finite_result(X, np.array([np.nan]))
    return s


def marginal_scores(params, X):
    """(n, K) float64 joint log-likelihoods of small dense X with NaN entries, the
    missing features integrated out, in numpy (the formulas of
    :mod:`fastgen.gda.marginal` and of the diagonal marginal kernel), for GDA params of
    every covariance kind and Gaussian naive Bayes params::

        log π_k + log N(x_o; μ_k,o, Σ_k,oo),

    the full kinds by the precision updated per missingness pattern
    (:func:`fastgen.stats.missing.gaussian_marginal`), the diagonal ones by leaving out
    the terms of the missing features.  A row with every feature missing gets log π_k.
    """
    from ..stats.missing import gaussian_marginal, missing_patterns, precision_of

    missing = np.isnan(X)
    K, d = params.means.shape
    means = params.means.astype(np.float64)
    with np.errstate(divide="ignore"):
        log_prior = (params.class_log_prior.astype(np.float64)
                     if hasattr(params, "class_log_prior")
                     else np.log(params.priors.astype(np.float64)))
    out = np.empty((X.shape[0], K))
    kind = getattr(params, "covariance_type", "diagonal")
    with numpy_scope():
        if kind in ("diagonal", "pooled_diagonal"):
            var = np.broadcast_to(np.asarray(
                params.variances if hasattr(params, "variances") else params.covariance,
                dtype=np.float64), (K, d))
            seen = (~missing).astype(np.float64)
            for k in range(K):
                Z = np.where(missing, 0.0, X - means[k])
                out[:, k] = log_prior[k] - 0.5 * ((Z * Z) @ (1.0 / var[k])
                                                  + seen @ np.log(2.0 * np.pi * var[k]))
            return out
        pats = missing_patterns(missing)
        cov = params.covariance.astype(np.float64)
        shared = precision_of(cov) if kind == "pooled" else None
        for k in range(K):
            prec, log_det = shared if shared is not None else precision_of(cov[k])
            out[:, k] = log_prior[k] + gaussian_marginal(X, pats, means[k], prec,
                                                         log_det)[0]
    return out

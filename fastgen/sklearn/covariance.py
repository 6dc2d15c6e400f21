"""The covariance estimates of scikit-learn's discriminant analysis that fastgen's
estimators build the way scikit-learn does (``shrinkage="auto"``, a
``covariance_estimator``), one per class, and hand to :func:`fastgen.gda_from_moments`
as moments.
"""

from __future__ import annotations

import numbers

import numpy as np

from .. import ClassMoments

__all__ = ["standardised_ledoit_wolf", "group_covariance", "check_shrinkage",
           "check_estimator_and_shrinkage", "class_covariances", "total_covariance",
           "moments_with"]


def standardised_ledoit_wolf(Xc, S):
    """scikit-learn's ``shrinkage="auto"`` covariance of one group.

    The centred rows Xc (n, d) with MLE covariance S are standardised,
    z_i = D⁻¹x_i with D = diag(√S_jj) (1 where S_jj = 0), so that R = D⁻¹SD⁻¹; the
    Ledoit-Wolf (2004) intensity of R is a = min(β̄, δ)/δ with μ = tr R/d,
    δ = ‖R − μI‖²_F/d and β̄ = (Σ_i‖z_i‖⁴/n − ‖R‖²_F)/(n·d); the estimate is
    D·((1 − a)R + aμI)·D.  One feature: a = 0.
    """
    n, d = Xc.shape
    std = np.sqrt(np.diag(S))
    std = np.where(std == 0, 1.0, std)
    R = S / std[:, None] / std[None, :]
    if d == 1:
        return S.copy()
    mu = np.trace(R) / d
    fro2 = float(np.sum(R * R))
    delta = (fro2 - 2.0 * mu * np.trace(R) + d * mu * mu) / d
    q = np.einsum("ij,ij->i", Xc / std, Xc / std)
    beta = (float(q @ q) / n - fro2) / (n * d)
    beta = min(beta, delta)
    a = 0.0 if beta == 0 else beta / delta
    shrunk = (1.0 - a) * R
    shrunk.flat[:: d + 1] += a * mu
    return std[:, None] * shrunk * std[None, :]


def group_covariance(Xg, mean, S, shrinkage, estimator):
    """scikit-learn's ``_cov`` of one group: S (MLE), shrunk S, or the estimator's."""
    if estimator is not None:
        estimator.fit(Xg)
        if not hasattr(estimator, "covariance_"):
            raise ValueError(
                f"{type(estimator).__name__} does not have a covariance_ attribute"
            )
        return np.atleast_2d(np.asarray(estimator.covariance_, dtype=np.float64))
    if shrinkage is None or (isinstance(shrinkage, str) and shrinkage == "empirical"):
        return S
    if isinstance(shrinkage, str) and shrinkage == "auto":
        return standardised_ledoit_wolf(Xg.astype(np.float64) - mean, S)
    d = S.shape[0]
    out = (1.0 - shrinkage) * S
    out.flat[:: d + 1] += shrinkage * np.trace(S) / d
    return out


def check_shrinkage(shrinkage):
    if shrinkage is None or (isinstance(shrinkage, str) and shrinkage == "auto"):
        return
    if isinstance(shrinkage, bool) or not isinstance(shrinkage, numbers.Real) \
            or not 0.0 <= shrinkage <= 1.0:
        raise ValueError(f"shrinkage must be None, 'auto' or a float in [0, 1]; "
                         f"got {shrinkage!r}")


def check_estimator_and_shrinkage(estimator, shrinkage):
    if estimator is not None and shrinkage is not None and shrinkage != 0:
        raise ValueError(
            "covariance_estimator and shrinkage parameters are not None. "
            "Only one of the two can be set."
        )


def class_covariances(X, y, m, shrinkage, estimator):
    """(K, d, d) scikit-learn class covariances from per-class moments ``m``."""
    S = m.scatter / m.counts[:, None, None]
    if shrinkage is None and estimator is None:
        return S
    _, codes = np.unique(y, return_inverse=True)
    return np.stack([
        group_covariance(X[codes == k], m.means[k], S[k], shrinkage, estimator)
        for k in range(m.classes.shape[0])
    ])


def total_covariance(X, shrinkage, estimator):
    """scikit-learn's ``_cov(X, ...)`` of all rows (the eigen solver's total scatter)."""
    X64 = X.astype(np.float64)
    mean = X64.mean(axis=0)
    Xc = X64 - mean
    S = Xc.T @ Xc / X.shape[0]
    return group_covariance(X, mean, S, shrinkage, estimator)


def moments_with(m, covariances, kind):
    """ClassMoments whose fastgen covariance equals ``covariances``.

    kind "pooled": one (d, d) matrix Σ, stored as the scatter Σ·W; "per_class":
    (K, d, d) Σ_k, stored as Σ_k·W_k (fastgen divides by the counts again).
    """
    if kind == "pooled":
        scatter = covariances * m.counts.sum()
    else:
        scatter = covariances * m.counts[:, None, None]
    return ClassMoments(m.classes, m.counts, m.means, scatter, kind, m.dtype)

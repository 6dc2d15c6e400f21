"""The discriminant exports of a shared-covariance GDA model: ``linear_discriminant``
(the coefficients and intercepts of its linear boundary) and ``lda_transform``
(scikit-learn's LDA projection).
"""

from __future__ import annotations

import numpy as np

from .._validation import check_feature_names, check_n_features, check_X, feature_names_of
from .params import GDAParams

__all__ = ["linear_discriminant", "lda_transform"]


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
    coef : ndarray (d, K)
        w_k = Σ⁻¹μ_k.
    intercept : ndarray (K,)
        b_k = −½ μ_kᵀΣ⁻¹μ_k + log p_k.

    Then log p(y=k | x) = xᵀw_k + b_k − log Σ_j exp(xᵀw_j + b_j); with two classes
    p(y=1 | x) = σ((w_1 − w_0)ᵀx + b_1 − b_0).  For a model of rank r < d, Σ⁻¹ is
    PᵀP, the inverse on the retained subspace (see :class:`GDAParams`).
    """
    _check_gda(params)
    P, _ = params._whitening
    A = P @ params.means.astype(np.float64).T
    coef = P.T @ A
    intercept = -0.5 * np.einsum("dk,dk->k", A, A) + params._log_prior
    return coef.astype(params.dtype), intercept.astype(params.dtype)


def lda_transform(params: GDAParams, X, n_components: int | None = None):
    """Project X onto the discriminant directions (scikit-learn's LDA ``transform``).

    With the pooled Σ = LLᵀ and the priors-weighted centre x̄ = Σ_k p_k μ_k, the
    directions are V = L⁻ᵀ·U, where U are the right singular vectors of the
    between-class matrix B with rows √(W·p_k/(K−1))·L⁻¹(μ_k − x̄), W the total weight;
    they are ordered by decreasing singular value and whiten the within-class covariance
    (Vᵀ Σ V = I).  The result is (X − x̄)·V[:, :n_components], equal to scikit-learn's
    up to the sign of each column.  For a model of rank r < d, L⁻¹ is replaced by the whitening P of
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
    total_weight = float(params.n_per_class.astype(np.float64).sum())
    fac = 1.0 / (K - 1) if K > 1 else 1.0
    B = np.sqrt(total_weight * p * fac)[:, None] * (P @ (mu - xbar).T).T
    _, s, Vt = np.linalg.svd(B, full_matrices=False)
    V = P.T @ Vt[:n_components].T
    return ((X - xbar.astype(X.dtype)) @ V.astype(X.dtype))

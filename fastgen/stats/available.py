"""Available-case statistics: each feature over the rows that observe it (NaN marks a
missing value).

For the models whose likelihood factorises over the features (Gaussian, Bernoulli and
categorical naive Bayes, the diagonal Gaussian models) these are the exact
maximum-likelihood statistics when values are missing at random; for the full Gaussian
models they start EM (:func:`pairwise_covariance`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse

from .._validation import check_class_weights

__all__ = ["AvailableCase", "available_case", "available_sums", "check_available",
           "observer", "pairwise_covariance", "class_matrix",
           "filled", "missing_matrix", "binary_counts_observed", "weighted_binary_counts",
           "merge_available", "observed_variance"]


@dataclass(frozen=True)
class AvailableCase:
    """Available-case statistics of each class and feature over the observed entries:
    W_k the class weights (every row), N_kj the weight of the rows of class k that
    observe feature j, μ_kj their mean and S_kj = Σ w_i (x_ij − μ_kj)² their sum of
    squares; ``centred`` (n, d) x_ij − μ_{y_i}j with 0 at the missing entries."""

    counts: np.ndarray
    observed: np.ndarray
    means: np.ndarray
    sumsq: np.ndarray
    centred: np.ndarray


def class_matrix(codes, w, K):
    """The sparse (K, n) matrix of the row weights by class: H @ A sums A by class."""
    n = codes.shape[0]
    weights = w if w.shape[0] else np.ones(n)
    return scipy.sparse.csr_matrix((weights, (codes, np.arange(n))), shape=(K, n))


def available_case(X, missing, codes, w, K, classes) -> AvailableCase:
    """:class:`AvailableCase` of validated dense X (two passes: means, then centred
    squares).  Raises a ValueError naming the feature (and class) with no observed
    value: its distribution cannot be estimated (:func:`check_available`)."""
    H = class_matrix(codes, w, K)
    W = np.asarray(H.sum(axis=1), dtype=np.float64).reshape(-1)
    O = (~missing).astype(np.float64)
    check_available(W, np.asarray(H @ O), classes, observer(X, codes))
    return available_sums(X, missing, codes, w, K)


def available_sums(X, missing, codes, w, K) -> AvailableCase:
    """:class:`AvailableCase` of validated dense X without the checks (μ_kj = S_kj = 0
    where N_kj = 0): one block's statistics, which :func:`merge_available` adds up."""
    H = class_matrix(codes, w, K)
    O = (~missing).astype(np.float64)
    W = np.asarray(H.sum(axis=1), dtype=np.float64).reshape(-1)
    N = np.asarray(H @ O)
    X0 = np.where(missing, 0.0, X).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        means = np.where(N > 0, np.asarray(H @ X0) / N, 0.0)
    D = X0 - means[codes]
    D[missing] = 0.0
    return AvailableCase(W, N, means, np.asarray(H @ (D * D)), D)


def observer(X, codes):
    """``observes(k, j)`` of :func:`check_available` for validated X: whether a row of
    class k (any row where k is None) has a value in column j, whatever its weight."""
    def observes(k, j):
        return _observes(X, None if k is None else np.asarray(codes) == k, j)
    return observes


def check_available(W, N, classes, observes):
    """Raise where the available-case statistics cannot be estimated: a column with no
    observed value (every entry NaN), a class of zero total weight, or a class none of
    whose rows of positive weight observe a feature.  ``W`` (K,) the class weights,
    ``N`` (K, d) the weight of the rows of class k that observe feature j,
    ``observes(k, j)`` whether any row of class k (any row: k None) has a value in
    column j whatever its weight, so that the message says whether the values or their
    weights are missing."""
    for j in np.flatnonzero(~(N.sum(axis=0) > 0)):
        if not observes(None, int(j)):
            raise ValueError(
                f"X has no observed value in column {int(j)} (every entry is NaN): its "
                f"distribution cannot be estimated; drop the column")
    check_class_weights(classes, W)
    bad = np.argwhere(~(N > 0))
    if bad.size:
        k, j = (int(v) for v in bad[0])
        if observes(k, j):  # values there, but only in rows of weight 0
            refuse_unobserved(N, W, classes, observes)
        label = classes[k].item() if hasattr(classes[k], "item") else classes[k]
        raise ValueError(
            f"class {label!r} has no observed value of feature {j} (every such entry is "
            f"NaN): its mean cannot be estimated; drop the feature or the class")


def observed_variance(ac: AvailableCase) -> np.ndarray:
    """(d,) float64: Var(x_j) over the observed entries of each feature, from the
    available-case statistics alone (the law of total variance per feature)::

        N_j = Σ_k N_kj,   μ̄_j = Σ_k N_kj μ_kj / N_j,
        Var(x_j) = (Σ_k S_kj + Σ_k N_kj (μ_kj − μ̄_j)²) / N_j,

    weighted as N_kj is (by the sample weights, or an EM step's memberships).  The
    variance floor of the diagonal Gaussian models with NaN (``var_smoothing`` times
    its largest entry) comes from it, so a row with no observed value, which adds to
    W_k but to no N_kj, S_kj or μ_kj, moves no fitted variance.  Raises ``ValueError``
    if it overflows."""
    N = ac.observed.astype(np.float64)
    Nj = N.sum(axis=0)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        mu = np.sum(N * ac.means, axis=0) / Nj
        v = (ac.sumsq.sum(axis=0) + np.sum(N * (ac.means - mu) ** 2, axis=0)) / Nj
    if not np.all(np.isfinite(v)):
        raise ValueError(
            "the feature variances overflow float64 (X has values near 1e154 or larger); "
            "rescale the features (e.g. divide by their standard deviation)")
    return v


def pairwise_covariance(ac: AvailableCase, codes, w, missing, K, pooled):
    """The pairwise available-case covariances Σ_jl = Σ w_i d_ij d_il / Σ w_i over the
    rows observing both j and l (d the centred values), pooled (d, d) or per class
    (K, d, d); a pair never observed together gets 0.  Not always positive definite:
    where it is not, its diagonal."""
    O = (~missing).astype(np.float64)
    wt = w if w.shape[0] else np.ones(codes.shape[0])
    groups = [np.arange(codes.shape[0])] if pooled else [np.flatnonzero(codes == k)
                                                           for k in range(K)]
    out = []
    for rows in groups:
        D, Ok, wk = ac.centred[rows], O[rows], wt[rows]
        num = (D * wk[:, None]).T @ D
        den = (Ok * wk[:, None]).T @ Ok
        with np.errstate(invalid="ignore", divide="ignore"):
            S = np.where(den > 0, num / den, 0.0)
        S = 0.5 * (S + S.T)
        try:
            np.linalg.cholesky(S)
        except np.linalg.LinAlgError:
            S = np.diag(np.diag(S))
        out.append(S)
    return out[0] if pooled else np.stack(out)


def filled(X, value=0.0):
    """A copy of validated X (dense or CSR) with its NaN entries set to ``value``."""
    if scipy.sparse.issparse(X):
        out = X.copy()
        out.data = np.where(np.isnan(X.data), value, X.data).astype(X.dtype)
        return out
    return np.where(np.isnan(X), value, X).astype(X.dtype)


def missing_matrix(X):
    """The NaN entries of validated X as 1.0 (float64): dense, or CSR for CSR X."""
    if scipy.sparse.issparse(X):
        M = X.copy().astype(np.float64)
        M.data = np.isnan(X.data).astype(np.float64)
        M.eliminate_zeros()
        return M
    return np.isnan(X).astype(np.float64)


def _dense(A):
    return np.asarray(A.toarray() if scipy.sparse.issparse(A) else A, dtype=np.float64)


def binary_counts_observed(X, codes, w, K, binarize):
    """(N_k (K,), F_kj (K, d), N_kj (K, d)) of validated X with NaN entries (dense or
    CSR): the class weights, the weighted counts of the observed entries with value 1
    (x > ``binarize``, or x itself when None) and the weights of the rows of class k
    that observe feature j."""
    return weighted_binary_counts(X, class_matrix(codes, w, K), binarize)


def weighted_binary_counts(X, H, binarize):
    """:func:`binary_counts_observed` with the rows weighted per class by ``H`` (K, n),
    sparse (hard labels) or dense (fractional memberships: an EM step's λ·Rᵀ).  A
    missing entry counts for neither F_kj nor N_kj, whatever the threshold."""
    A = filled(X)
    if binarize is not None:
        if scipy.sparse.issparse(A):
            A.data = (A.data > binarize).astype(np.float64)
        else:
            A = (A > binarize).astype(np.float64)
    M = missing_matrix(X)
    if not scipy.sparse.issparse(A):
        A[M > 0] = 0.0  # filled with 0, a missing entry is above a negative threshold
    elif binarize is not None and binarize < 0:
        raise ValueError(f"binarize={binarize} < 0 would turn the implicit zeros of "
                         f"sparse X into ones; pass a dense array")
    cc = np.asarray(H.sum(axis=1), dtype=np.float64).reshape(-1)
    return cc, _dense(H @ A), cc[:, None] - _dense(H @ M)


def _observes(X, rows, j):
    """Whether any of ``rows`` (a bool mask, or None: every row) of validated X (dense
    or CSR) has an observed (non-NaN) value in column j, whatever its weight."""
    col = X[:, [j]].toarray().ravel() if scipy.sparse.issparse(X) else X[:, j]
    col = col if rows is None else col[rows]
    return bool(np.any(~np.isnan(col)))


def refuse_unobserved(observed, cc, classes, observes=None):
    """Raise naming a feature no row observes, or a class none of whose rows (of
    positive weight) observe a feature: ``observed`` (K, d) the weight of the rows of
    class k that observe feature j, ``cc`` (K,) the class weights, ``classes`` the
    labels.  The feature's estimate for that class would be the prior's alone, not an
    estimate from data.  Given ``observes(k, j)`` (:func:`check_available`), the
    message says whether the values are missing (every entry NaN) or present only in
    rows of sample_weight 0 (the weights, not the data, leave nothing to estimate
    from).  A class of zero total weight is refused first, as every fit refuses it."""
    check_class_weights(classes, cc)
    seen = observed > 0.0
    empty = np.flatnonzero(~seen.any(axis=0))
    if empty.size:
        j = int(empty[0])
        if observes is not None and observes(None, j):
            raise ValueError(
                f"column {j} of X is observed only in rows of sample_weight 0: with no "
                f"weight on its values it cannot be estimated; give some of those rows "
                f"a positive sample_weight, or drop the column")
        raise ValueError(
            f"X has no observed value in column {j} (every entry is NaN): it "
            f"cannot be estimated; drop the column")
    unseen = np.argwhere(~seen & (cc[:, None] > 0.0))
    if unseen.size:
        k, j = (int(v) for v in unseen[0])
        label = classes[k].item() if hasattr(classes[k], "item") else classes[k]
        if observes is not None and observes(k, j):
            raise ValueError(
                f"class {label!r} observes feature {j} only in rows of sample_weight 0: "
                f"with no weight on those values its distribution in that class cannot "
                f"be estimated; give some of those rows a positive sample_weight, or "
                f"drop the feature")
        raise ValueError(
            f"no row of class {label!r} observes feature {j} (every such entry "
            f"is NaN): its distribution in that class cannot be estimated; drop the "
            f"feature or add rows of that class that observe it")


def merge_available(a: AvailableCase, b: AvailableCase) -> AvailableCase:
    """Available-case statistics of the union of two sets of rows, per class and
    feature by the pairwise update (``centred`` None): with N = N_a + N_b and
    δ = μ_b − μ_a, μ = μ_a + δ·N_b/N and S = S_a + S_b + δ²·N_a·N_b/N (where N = 0:
    μ = S = 0); W = W_a + W_b."""
    N = a.observed + b.observed
    delta = b.means - a.means
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(N > 0, b.observed / N, 0.0)
    means = np.where(N > 0, a.means + delta * share, 0.0)
    sumsq = a.sumsq + b.sumsq + delta * delta * a.observed * share
    return AvailableCase(a.counts + b.counts, N, means, sumsq, None)

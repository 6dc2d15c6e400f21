"""Statistics of rows with fractional class memberships: the M-step passes of EM.

Where a fit's statistics take hard labels (row i counts for class y_i with weight w_i),
these take a membership matrix R (n, K) ≥ 0: row i counts for every class k with weight
r_ik (an E-step's posteriors times the weight of the rows, Nigam et al.'s λ).  With
one-hot R they equal the hard-label statistics (to rounding), so a fit's hard counts
of its labelled rows and these merge with :func:`fastgen.merge_moments` or by adding.

The passes are numpy and BLAS (no kernel to compile), in row blocks of bounded size,
with BLAS on one thread: with K columns the products are skinny, and a threaded BLAS
ran them 10× slower here (benchmarks/NOTES.md):

* :func:`soft_moments`: W_k = Σ_i r_ik, μ_k = Σ_i r_ik x_i / W_k and the scatter
  Σ_i r_ik (x_i − μ_k)(x_i − μ_k)ᵀ (per class, pooled over the classes, or its
  diagonal): the rows are shifted by one row of X, the shifted means taken first, then
  every row is centred on its class mean before squaring (two reads of X), so the
  scatter keeps its digits when |μ| ≫ σ (see :mod:`fastgen.kernels.moments`);
* :func:`soft_counts`: N_k = Σ_i r_ik and N_kj = Σ_i r_ik b_ij, b = x (multinomial)
  or [x > t] (Bernoulli), dense or CSR (Rᵀ X);
* :func:`soft_category_counts`: N_kjc = Σ_{i: x_ij = c} r_ik of categorical codes,
  dense or CSR (implicit zeros are category 0).

Rows with missing features (NaN) give the available-case statistics of the models
whose likelihood factorises over the features: each feature over the rows that observe
it, the memberships times the observation indicators o_ij
(:func:`soft_available_moments`, :func:`soft_binary_counts_observed`,
:func:`soft_category_counts_observed`).
"""

from __future__ import annotations

import numpy as np

from .._runtime import blas_single_thread
from .._validation import is_sparse
from .available import AvailableCase, missing_matrix, weighted_binary_counts
from .moments import SCATTER_KINDS, ClassMoments

__all__ = ["soft_moments", "soft_counts", "soft_category_counts", "check_memberships",
           "soft_available_moments", "soft_binary_counts_observed",
           "soft_category_counts_observed"]

#: doubles of one block's temporaries (n_block × d): 8 MB
_BLOCK_DOUBLES = 1 << 20


def check_memberships(R, n, K=None):
    """``R`` as a C-contiguous float64 (n, K) array of finite non-negative entries."""
    R = np.ascontiguousarray(R, dtype=np.float64)
    if R.ndim != 2 or R.shape[0] != n or (K is not None and R.shape[1] != K):
        want = f"({n}, {'K' if K is None else K})"
        raise ValueError(f"memberships must have shape {want}; got {R.shape}")
    if R.size and not (np.all(np.isfinite(R)) and R.min() >= 0):
        raise ValueError("memberships must be finite and non-negative")
    return R


def _row_blocks(n, d):
    step = max(1, _BLOCK_DOUBLES // max(d, 1))
    return [(s, min(n, s + step)) for s in range(0, n, step)]


def soft_moments(X, R, classes, *, kind: str = "pooled", feature_names=None) -> ClassMoments:
    """:class:`ClassMoments` of dense X with memberships R: the expected statistics of EM.

    Parameters
    ----------
    X : ndarray (n, d), C-contiguous float32 or float64, finite (checked by the caller)
    R : array-like (n, K)
        Non-negative memberships (posteriors times row weights); a column summing to
        zero gives a class of zero weight.
    classes : ndarray (K,)
        The labels of R's columns.
    kind : {"pooled", "per_class", "diagonal"}
        Which scatter to keep, as :func:`fastgen.class_moments`.
    feature_names : tuple of str, optional

    Returns
    -------
    ClassMoments
        W_k = Σ_i r_ik, μ_k = Σ_i r_ik x_i / W_k (0 where W_k = 0) and the scatter
        Σ_i r_ik (x_i − μ_k)(x_i − μ_k)ᵀ, per class (K, d, d), summed over the classes
        (d, d) or its diagonal (K, d); float64.
    """
    if kind not in SCATTER_KINDS:
        raise ValueError(f"kind must be one of {SCATTER_KINDS}; got {kind!r}")
    with blas_single_thread():
        return _soft_moments(X, check_memberships(R, X.shape[0]), classes, kind,
                             feature_names)


def _soft_moments(X, R, classes, kind, feature_names):
    n, d = X.shape
    K = R.shape[1]
    W = R.sum(axis=0)
    shift = X[0].astype(np.float64) if n else np.zeros(d)
    blocks = _row_blocks(n, d)
    sums = np.zeros((K, d))
    for s, e in blocks:
        sums += ((X[s:e].astype(np.float64) - shift).T @ R[s:e]).T
    with np.errstate(divide="ignore", invalid="ignore"):
        centred = np.where(W[:, None] > 0, sums / W[:, None], 0.0)  # μ_k − shift
    if kind == "per_class":
        scatter = np.zeros((K, d, d))
    elif kind == "pooled":
        scatter = np.zeros((d, d))
    else:
        scatter = np.zeros((K, d))
    for s, e in blocks:
        Z0 = X[s:e].astype(np.float64) - shift
        for k in range(K):
            r = R[s:e, k]
            if not W[k] > 0:
                continue
            Z = Z0 - centred[k]
            if kind == "diagonal":
                scatter[k] += r @ (Z * Z)
            elif kind == "per_class":
                scatter[k] += (Z * r[:, None]).T @ Z
            else:
                scatter += (Z * r[:, None]).T @ Z
    if kind != "diagonal":  # symmetric to rounding: make it exactly so
        scatter = 0.5 * (scatter + np.swapaxes(scatter, -1, -2))
    means = np.where(W[:, None] > 0, centred + shift, 0.0)
    return ClassMoments(np.asarray(classes), W, means, scatter, kind, str(X.dtype),
                        feature_names)


def soft_counts(X, R, *, binarize=None):
    """(N_k (K,), N_kj (K, d)) float64 of dense or CSR X with memberships R.

    N_k = Σ_i r_ik and N_kj = Σ_i r_ik b_ij, where b_ij = [x_ij > binarize] when
    ``binarize`` is a number (Bernoulli's document frequencies) and x_ij when it is None
    (multinomial counts, or binary X).  X is checked by the caller.
    """
    n, d = X.shape
    R = check_memberships(R, n)
    cc = R.sum(axis=0)
    if is_sparse(X):
        data = X.data if binarize is None else (X.data > binarize).astype(np.float64)
        B = type(X)((data, X.indices, X.indptr), shape=X.shape)
        fc = np.asarray((B.T @ R).T, dtype=np.float64)
        return cc, np.ascontiguousarray(fc)
    fc = np.zeros((R.shape[1], d))
    with blas_single_thread():
        for s, e in _row_blocks(n, d):
            Xb = X[s:e]
            B = (Xb > binarize) if binarize is not None else Xb
            fc += (B.astype(np.float64).T @ R[s:e]).T
    return cc, fc


def soft_category_counts(X, R, offsets):
    """(K, C) float64 N_kjc = Σ_{i: x_ij = c} r_ik for category codes X (dense or CSR,
    checked by the caller: integers in [0, n_categories[j])), the categories of feature
    j in columns ``offsets[j]:offsets[j + 1]``; CSR's implicit zeros are category 0."""
    import scipy.sparse as sp

    n, d = X.shape
    R = check_memberships(R, n)
    C = int(offsets[-1])
    offsets = np.asarray(offsets, dtype=np.int64)
    if is_sparse(X):
        rows = np.repeat(np.arange(n), np.diff(X.indptr))
        cols = offsets[X.indices] + X.data.astype(np.int64)
        onehot = sp.csr_matrix((np.ones(cols.shape[0]), (rows, cols)), shape=(n, C))
        counts = np.asarray((onehot.T @ R).T)
        # category 0 of feature j also holds the rows where x_ij is not stored
        stored = sp.csr_matrix((np.ones(X.indices.shape[0]), X.indices, X.indptr),
                               shape=(n, d))
        counts[:, offsets[:-1]] += R.sum(axis=0)[:, None] - np.asarray((stored.T @ R).T)
        return np.ascontiguousarray(counts)
    counts = np.zeros((R.shape[1], C))
    for s, e in _row_blocks(n, d):
        m = e - s
        cols = (offsets[:-1][None, :] + X[s:e].astype(np.int64)).ravel()
        onehot = sp.csr_matrix((np.ones(m * d), cols, np.arange(0, m * d + 1, d)),
                               shape=(m, C))
        counts += np.asarray((onehot.T @ R[s:e]).T)
    return counts


def soft_available_moments(X, R) -> AvailableCase:
    """Available-case statistics of dense X with NaN entries and memberships R (n, K)
    (:class:`~fastgen.stats.available.AvailableCase`, ``centred`` None), o_ij = 1 where
    x_ij is observed::

        W_k = Σ_i r_ik,   N_kj = Σ_i r_ik o_ij,   μ_kj = Σ_i r_ik o_ij x_ij / N_kj,
        S_kj = Σ_i r_ik o_ij (x_ij − μ_kj)²

    (μ_kj = S_kj = 0 where N_kj = 0).  Each column is shifted by one observed value
    before summing, and the squares are taken about the class means (two reads of X),
    so S keeps its digits when |μ| ≫ σ.  float64.
    """
    n, d = X.shape
    R = check_memberships(R, n)
    K = R.shape[1]
    W = R.sum(axis=0)
    N = np.zeros((K, d))
    sums = np.zeros((K, d))
    sumsq = np.zeros((K, d))
    missing = np.isnan(X)
    seen = ~missing
    first = np.argmax(seen, axis=0)
    shift = np.where(seen.any(axis=0), X[first, np.arange(d)], 0.0).astype(np.float64)
    blocks = _row_blocks(n, d)
    with blas_single_thread():
        for s, e in blocks:
            O = seen[s:e].astype(np.float64)
            Z = np.where(missing[s:e], 0.0, X[s:e] - shift)
            N += R[s:e].T @ O
            sums += R[s:e].T @ Z
        with np.errstate(divide="ignore", invalid="ignore"):
            centred = np.where(N > 0, sums / N, 0.0)  # μ_kj − shift_j
        for s, e in blocks:
            Z = X[s:e] - shift  # NaN stays NaN: masked below
            for k in range(K):
                D = np.where(missing[s:e], 0.0, Z - centred[k])
                sumsq[k] += R[s:e, k] @ (D * D)
    means = np.where(N > 0, centred + shift, 0.0)
    return AvailableCase(W, N, means, sumsq, None)


def soft_binary_counts_observed(X, R, *, binarize=None):
    """(N_k (K,), F_kj (K, d), N_kj (K, d)) float64 of dense or CSR X with NaN entries
    and memberships R: N_k = Σ_i r_ik, F_kj = Σ_i r_ik o_ij b_ij and N_kj = Σ_i r_ik o_ij,
    b_ij = [x_ij > binarize] (x_ij itself when ``binarize`` is None), as
    :func:`fastgen.stats.available.binary_counts_observed` with hard labels."""
    R = check_memberships(R, X.shape[0])
    with blas_single_thread():
        return weighted_binary_counts(X, np.ascontiguousarray(R.T), binarize)


def soft_category_counts_observed(X, R, offsets):
    """(K, C) N_kjc = Σ_{i: x_ij = c} r_ik over the observed entries of category codes X
    (dense or CSR, NaN marking a missing code, otherwise as
    :func:`soft_category_counts`): a missing entry counts for no category."""
    M = missing_matrix(X)
    filled = X.copy()
    if is_sparse(X):
        filled.data = np.where(np.isnan(X.data), 0.0, X.data).astype(X.dtype)
    else:
        filled[np.isnan(X)] = 0.0
    counts = soft_category_counts(filled, R, offsets)  # a missing entry as category 0 ...
    R = check_memberships(R, X.shape[0])
    offsets = np.asarray(offsets, dtype=np.int64)
    counts[:, offsets[:-1]] -= np.asarray((M.T @ R).T)  # ... taken out again
    return counts

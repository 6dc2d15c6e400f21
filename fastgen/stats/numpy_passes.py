"""The statistics' passes over small X in numpy: class moments and count tables.

Each function computes what the kernel of the same name in :mod:`fastgen.kernels`
computes, for inputs the kernels would first have to compile for (see
:mod:`fastgen._small`): the same formulas, vectorised as scikit-learn computes them,
agreeing with the kernels to 1e-12 relative.  Rows are grouped by class with a stable
sort and summed by ``np.add.reduceat`` (one fixed order), products run with BLAS on one
thread: the results do not depend on the thread count.

Moments are two-pass: the class means first, then the scatter of the rows centred on
them, with the means corrected by the mean of the centred rows (the corrected two-pass
algorithm of Chan, Golub & LeVeque), as accurate as the kernels' shifted sums when
|μ| ≫ σ.
"""

from __future__ import annotations

import functools

import numpy as np

from .._small import numpy_scope

__all__ = ["moments_pooled", "moments_diagonal", "moments_per_class",
           "standardised_fourth_moment", "dense_class_counts", "csr_class_counts",
           "categorical_counts", "csr_categorical_counts", "category_counts",
           "class_feature_counts", "log_counts", "class_log_totals", "merge_moments_into"]


def _quiet(func):
    """NaN/inf in X or an overflow make the results non-finite, which the caller
    reports by name (``check_finite_result``), as it does for the kernels: no numpy
    warning on the way."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with np.errstate(over="ignore", invalid="ignore"):
            return func(*args, **kwargs)

    return wrapper


class _ByClass:
    """Rows grouped by class: ``order`` (stable), the classes present and where each
    starts in ``order``; sums over each class by one ``np.add.reduceat``."""

    def __init__(self, codes, K):
        self.K = K
        self.order = np.argsort(codes, kind="stable")
        rows = np.bincount(codes, minlength=K)
        self.present = np.flatnonzero(rows)
        starts = np.concatenate([[0], np.cumsum(rows)[:-1]])
        self.starts = starts[self.present]

    def sums(self, V):
        """(K, …) Σ over each class's rows of ``V`` (rows in the original order);
        zero for absent classes."""
        out = np.zeros((self.K,) + V.shape[1:])
        if self.present.size:
            out[self.present] = np.add.reduceat(V[self.order], self.starts, axis=0)
        return out


def _weights(w, n):
    return w if w.shape[0] else np.ones(n)


def _class_means(X64, codes, wt, K, groups):
    """Weights W (K,), means (K, d) and the centred rows X − μ_{y_i}: the corrected
    two-pass means (the mean of the centred rows added back)."""
    W = np.bincount(codes, weights=wt, minlength=K).astype(np.float64)
    safe = np.where(W > 0, W, 1.0)[:, None]
    means = groups.sums(X64 * wt[:, None]) / safe
    D = X64 - means[codes]
    means += groups.sums(D * wt[:, None]) / safe
    means[W == 0] = 0.0
    return W, means, X64 - means[codes]


def _moments(X, codes, w, K):
    X64 = np.asarray(X, dtype=np.float64)
    wt = _weights(w, X64.shape[0])
    groups = _ByClass(codes, K)
    W, means, D = _class_means(X64, codes, wt, K, groups)
    return wt, groups, W, means, D


@_quiet
def moments_pooled(X, codes, w, K):
    """(W (K,), means (K, d), pooled scatter Σ_i w_i (x_i − μ_{y_i})(x_i − μ_{y_i})ᵀ)."""
    wt, _, W, means, D = _moments(X, codes, w, K)
    R = D * np.sqrt(wt)[:, None]
    with numpy_scope():
        M2 = R.T @ R  # one symmetric product (SYRK): exactly symmetric
    return W, means, M2


@_quiet
def moments_diagonal(X, codes, w, K):
    """(W (K,), means (K, d), per-class sums of squares (K, d))."""
    wt, groups, W, means, D = _moments(X, codes, w, K)
    return W, means, groups.sums(D * D * wt[:, None])


@_quiet
def moments_per_class(X, codes, w, K):
    """(W (K,), means (K, d), per-class scatter (K, d, d))."""
    wt, groups, W, means, D = _moments(X, codes, w, K)
    d = D.shape[1]
    M2 = np.zeros((K, d, d))
    R = D * np.sqrt(wt)[:, None]
    bounds = np.append(groups.starts, codes.shape[0])
    with numpy_scope():
        for k, a, b in zip(groups.present, bounds[:-1], bounds[1:]):
            Rk = R[groups.order[a:b]]
            M2[k] = Rk.T @ Rk
    return W, means, M2


@_quiet
def standardised_fourth_moment(X, codes, w, means, inv_sd):
    """Per-class Σ_i w_i ‖D_k⁻¹(x_i − μ_k)‖⁴ (K,), k = y_i."""
    Z = (np.asarray(X, dtype=np.float64) - means[codes]) * inv_sd[codes]
    s = np.einsum("ij,ij->i", Z, Z)
    wt = _weights(w, Z.shape[0])
    return np.bincount(codes, weights=wt * s * s, minlength=means.shape[0])


def dense_class_counts(X, codes, w, K, binarize, threshold):
    """(K, d) F_kj = Σ_{i: y_i=k} w_i v(x_ij) (v(x) = x, or [x > threshold] with
    ``binarize``) and the flat index of the first negative x_ij (without ``binarize``)
    or -1."""
    V = (X > threshold).astype(np.float64) if binarize else np.asarray(X, np.float64)
    first = -1
    if not binarize:
        neg = np.flatnonzero(X.reshape(-1) < 0)
        first = int(neg[0]) if neg.size else -1
    n, d = V.shape
    wt = _weights(w, n)
    # bincount adds each (class, feature) entry's rows in row order, the order of N_k's
    # own bincount: a feature present in every row of a class gets exactly N_k
    flat = (codes.astype(np.int64) * d)[:, None] + np.arange(d)
    counts = np.bincount(flat.reshape(-1), weights=(V * wt[:, None]).reshape(-1),
                         minlength=K * d).reshape(K, d)
    return counts, first


def csr_class_counts(indptr, indices, data, codes, w, d, K, binarize, threshold):
    """CSR :func:`dense_class_counts` over the stored values (the implicit zeros add
    nothing): (K, d) counts and the position in ``data`` of the first NaN, infinity
    or (without ``binarize``) negative value, or -1."""
    nnz = int(indptr[-1])
    data = data[:nnz]
    bad = ~np.isfinite(data)
    if not binarize:
        bad |= data < 0
    where = np.flatnonzero(bad)
    v = (data > threshold).astype(np.float64) if binarize else data.astype(np.float64)
    rows = np.repeat(np.arange(indptr.shape[0] - 1), np.diff(indptr))
    wt = _weights(w, indptr.shape[0] - 1)
    flat = codes[rows].astype(np.int64) * d + indices[:nnz]
    counts = np.bincount(flat, weights=v * wt[rows], minlength=K * d).reshape(K, d)
    return counts, int(where[0]) if where.size else -1


def categorical_counts(X, codes, w, K, offsets):
    """C[k, offsets[j] + c] = Σ_{i: y_i=k, x_ij=c} w_i over dense category codes."""
    n, d = X.shape
    C = int(offsets[-1])
    slot = offsets[:-1][None, :] + X.astype(np.int64)
    flat = (codes.astype(np.int64) * C)[:, None] + slot
    wt = np.broadcast_to(_weights(w, n)[:, None], (n, d))
    return np.bincount(flat.reshape(-1), weights=wt.reshape(-1),
                       minlength=K * C).reshape(K, C)


def csr_categorical_counts(indptr, indices, data, codes, w, K, offsets, class_count):
    """CSR :func:`categorical_counts` whose implicit zeros are category 0: the stored
    categories are counted, category 0 is N_k minus them."""
    n = indptr.shape[0] - 1
    nnz = int(indptr[-1])
    C = int(offsets[-1])
    rows = np.repeat(np.arange(n), np.diff(indptr))
    slot = offsets[indices[:nnz]] + data[:nnz].astype(np.int64)
    flat = codes[rows].astype(np.int64) * C + slot
    out = np.bincount(flat, weights=_weights(w, n)[rows], minlength=K * C).reshape(K, C)
    starts = offsets[:-1]
    out[:, starts] = 0.0
    stored = np.add.reduceat(out, starts, axis=1) if C else np.zeros((K, 0))
    out[:, starts] = class_count[:, None] - stored
    return out


def category_counts(X, codes, w, K, offsets, class_count):
    """Categorical naive Bayes' (K, total categories) counts of dense or CSR X."""
    if hasattr(X, "indptr"):
        return csr_categorical_counts(X.indptr, X.indices, X.data, codes, w, K, offsets,
                                      class_count)
    return categorical_counts(X, codes, w, K, offsets)


@_quiet
def merge_moments_into(kind, Wa, ma, M2a, Wb, mb, M2b):
    """Merge (Wb, mb, M2b) into (Wa, ma, M2a) in place, as the kernels' ``merge_pooled``
    / ``merge_diagonal`` / ``merge_per_class``: with W = Wa + Wb and δ = mb − ma per
    class, ma += δ·Wb/W and M2 += M2b + δδᵀ·Wa·Wb/W (summed over the classes for the
    pooled scatter); a class absent on one side is taken from the other."""
    take = (Wb > 0) & ~(Wa > 0)
    both = (Wb > 0) & (Wa > 0)
    Wt = Wa + Wb
    f = np.where(both, Wb / np.where(both, Wt, 1.0), 0.0)
    delta = mb - ma
    c = Wa * f
    ma += delta * f[:, None]
    ma[take] = mb[take]
    Wa[:] = np.where(take, Wb, np.where(both, Wt, Wa))
    if kind == "pooled":
        D = delta[both]
        M2a += M2b + (D * c[both][:, None]).T @ D
    elif kind == "diagonal":
        M2a[both] += M2b[both] + delta[both] ** 2 * c[both][:, None]
        M2a[take] = M2b[take]
    else:
        M2a[both] += M2b[both] + c[both][:, None, None] * (
            delta[both][:, :, None] * delta[both][:, None, :])
        M2a[take] = M2b[take]


@_quiet
def log_counts(counts, base, sign, alpha, shift):
    """(K, d) log(base_k + sign·counts_kj + α) − shift_k (the kernel's ``log_counts``);
    log 0 = −∞ without a warning."""
    with np.errstate(divide="ignore"):
        return np.log(base[:, None] + sign * counts + alpha) - shift[:, None]


@_quiet
def class_log_totals(counts, add):
    """(K,) log(Σ_j counts_kj + add)."""
    return np.log(counts.sum(axis=1) + add)


def class_feature_counts(X, codes, w, K, binarize, threshold, finish):
    """:func:`fastgen.stats.feature_counts.class_feature_counts` of small X: (counts,
    first bad position), with the tables of a ``finish`` step
    (:class:`~fastgen.kernels.sparse.LogRows`) filled from the counts."""
    if hasattr(X, "indptr"):
        counts, first = csr_class_counts(X.indptr, X.indices, X.data, codes, w,
                                         X.shape[1], K, binarize, threshold)
    else:
        counts, first = dense_class_counts(X, codes, w, K, binarize, threshold)
    if finish is None or finish.out_a.size == 0:
        return counts, first
    alpha = float(finish.alpha)
    if finish.normalise:
        total = class_log_totals(counts, alpha * counts.shape[1])
        finish.out_a[...] = log_counts(counts, np.zeros(K), 1.0, alpha, total)
    else:
        finish.out_a[...] = log_counts(counts, np.zeros(K), 1.0, alpha, finish.shift)
        finish.out_b[...] = log_counts(counts, finish.base, -1.0, alpha, finish.shift)
    return counts, first

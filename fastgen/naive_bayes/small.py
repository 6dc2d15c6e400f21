"""Scores of the naive Bayes models on small X in numpy (no compilation).

The formulas of the CSR and dense scoring kernels (``csr_linear_scores``,
``categorical_scores``, ``csr_categorical_scores``) on the params' own tables, with the
same checks of X and the same messages, for inputs of at most
:data:`fastgen._small.SMALL_VALUES` values; Gaussian naive Bayes scores as the
Gaussian models do (:func:`fastgen.gda.small.gaussian_scores`).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse

from .._small import MODE_JLL, finish_rows, numpy_scope
from .._validation import check_csr_indices, is_sparse, report_nonfinite
from ..stats.feature_counts import check_binary_values
from .base import LinearNB, _check_scores_overflow, report_negative
from .categorical import CategoricalNBParams, _check_categories

__all__ = ["nb_scores", "linear_jll", "categorical_jll"]


def linear_jll(params, X):
    """(n, K) v(X)·W + b of a linear naive Bayes model (v(x) = [x > threshold] when it
    binarizes, else x), in the params' dtype, after the checks of its kernels: binary
    values, NaN/inf, column indices, negative counts, score overflow."""
    W, b, binarize, threshold = params._form
    if params._binary_input:
        check_binary_values(X)
    if is_sparse(X):
        params._csr_inputs(X, binarize, threshold)  # refuses a threshold below 0
        check_csr_indices(X)
    report_nonfinite(X)
    if params._nonneg_input:
        values = X.data if is_sparse(X) else X
        if values.size and values.min() < 0:
            report_negative(X)
    dt = params.dtype
    if binarize:
        A = X > threshold
        A = A.astype(dt) if not is_sparse(X) else scipy.sparse.csr_matrix(A, dtype=dt)
    else:
        A = X
    with numpy_scope(), np.errstate(over="ignore", invalid="ignore"):
        out = np.asarray(A @ W.astype(dt, copy=False), dtype=dt)
        out += b.astype(dt, copy=False)
    if not params._bounded_scores:
        _check_scores_overflow(out, MODE_JLL, b)
    return out


def categorical_jll(params, X):
    """(n, K) log π_k + Σ_j log p(x_ij | k) of category codes X (CSR: implicit zeros are
    category 0), as one sparse product of X's one-hot rows with the table."""
    _check_categories(X, params.n_categories)
    table = params.feature_log_prob.astype(np.float64).T  # (categories, K)
    offsets = params.offsets
    bias = params.class_log_prior.astype(np.float64)
    n, d = X.shape
    if is_sparse(X):
        nnz = X.indices.shape[0]
        rows = np.repeat(np.arange(n), np.diff(X.indptr))
        zero = offsets[X.indices]
        cols = np.concatenate([zero + X.data.astype(np.int64), zero])
        vals = np.concatenate([np.ones(nnz), -np.ones(nnz)])
        rows = np.concatenate([rows, rows])
        bias = bias + table[offsets[:-1]].sum(axis=0)
    else:
        rows = np.repeat(np.arange(n), d)
        cols = (offsets[:-1][None, :] + X.astype(np.int64)).reshape(-1)
        vals = np.ones(n * d)
    onehot = scipy.sparse.csr_matrix((vals, (rows, cols)), shape=(n, table.shape[0]))
    return (np.asarray(onehot @ table) + bias).astype(params.dtype, copy=False)


def nb_scores(params, X, mode):
    """Scores of validated small X per ``mode`` for the linear and categorical naive
    Bayes models; None for other params."""
    if isinstance(params, LinearNB):
        s = linear_jll(params, X)
    elif isinstance(params, CategoricalNBParams):
        s = categorical_jll(params, X)
    else:
        return None
    finish_rows(s, mode)
    return s

"""Scores of the naive Bayes models on small X in numpy (no compilation).

The formulas of the CSR and dense scoring kernels (``csr_linear_scores``,
``categorical_scores``, ``csr_categorical_scores``) on the params' scoring tables
(:class:`~fastgen.naive_bayes.scoring.LinearTables`,
:class:`~fastgen.naive_bayes.scoring.CategoricalTables`; the linear scorer checks X
and the scores as on the kernels' path), for inputs of at most
:data:`fastgen._small.SMALL_VALUES` values;
Gaussian naive Bayes scores as the Gaussian models do
(:func:`fastgen.gda.small.gaussian_scores`).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse

from .._small import finish_rows, numpy_scope
from .._validation import is_sparse
from ..stats.category_counts import check_categories

__all__ = ["linear_jll", "categorical_jll", "categorical_scores"]


def linear_jll(W, b, binarize, threshold, X, dtype):
    """(n, K) v(X)·W + b of a linear naive Bayes model (v(x) = [x > threshold] when it
    binarizes, else x), in ``dtype``, on X its scorer has checked (binary values,
    NaN/inf, column indices, negative counts); overflow is left to the scorer."""
    if binarize:
        A = X > threshold
        A = A.astype(dtype) if not is_sparse(X) else scipy.sparse.csr_matrix(A, dtype=dtype)
    else:
        A = X
    with numpy_scope(), np.errstate(over="ignore", invalid="ignore"):
        out = np.asarray(A @ W.astype(dtype, copy=False), dtype=dtype)
        out += b.astype(dtype, copy=False)
    return out


def categorical_jll(tables, X, dtype):
    """(n, K) log π_k + Σ_j log p(x_ij | k) of category codes X (CSR: implicit zeros are
    category 0), as one sparse product of X's one-hot rows with the table."""
    table, offsets, bias, n_cat = tables  # table (categories, K)
    check_categories(X, n_cat)
    bias = np.asarray(bias, dtype=np.float64)
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
    with numpy_scope():
        return (np.asarray(onehot @ table) + bias).astype(dtype, copy=False)


def categorical_scores(params, X, mode):
    """Scores of validated small X per ``mode`` for categorical naive Bayes."""
    s = categorical_jll(params.scoring_tables()[1], X, params.dtype)
    finish_rows(s, mode)
    return s

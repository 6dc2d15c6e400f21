"""Category counts of categorical naive Bayes: the checks of the codes, the table
layout, and one counting pass over X.

::

    N_k = Σ_{i: y_i=k} w_i,     N_kjc = Σ_{i: y_i=k, x_ij=c} w_i,

stored flat: feature j's categories 0 … m_j − 1 are the columns
``offsets[j]:offsets[j + 1]`` of a (K, Σ_j m_j) table, ``offsets = [0, cumsum(m)]``.
The widths m_j are the layout: m_j = max(max_i x_ij + 1, min_categories[j]) for one
set of rows (:func:`category_layout`), or fixed by the caller for every chunk of a
stream or a distributed array (:func:`check_categories` then refuses a code past
them).  Dense X goes to :func:`fastgen.kernels.nb.categorical_counts`, scipy CSR X
(implicit zeros are category 0) to :func:`fastgen.kernels.sparse.csr_categorical_counts`.
"""

from __future__ import annotations

import numpy as np

from .._runtime import kernel_module
from .._small import is_small
from .._validation import csr_arrays, is_sparse
from . import numpy_passes
from .feature_counts import locate_flat, weighted_class_count

nb_kernels = kernel_module("nb")
sparse_kernels = kernel_module("sparse")

__all__ = [
    "CATEGORY_FLOOR",
    "CATEGORY_SPREAD",
    "check_categories",
    "check_min_categories",
    "column_max",
    "distinct_codes",
    "category_widths",
    "category_layout",
    "category_offsets",
    "count_categories",
    "widen_categories",
]

#: A feature's table is at most max(CATEGORY_FLOOR, CATEGORY_SPREAD × its distinct codes)
#: categories wide unless ``min_categories`` asks for more: a code past that would
#: widen the table by a stray value (one code of 1e9 would ask for 1e9 columns).
CATEGORY_FLOOR = 1024
CATEGORY_SPREAD = 16


def check_categories(X, n_categories=None, given=False):
    """Raise unless every value of X is a non-negative integer (< n_categories[j]:
    the fitted widths, or with ``given`` the caller's ``n_categories``)."""
    if is_sparse(X):
        vals, cols = X.data, X.indices
    else:
        vals, cols = X.reshape(-1), None
    if vals.size == 0:
        return
    bad = (vals < 0) | (vals != np.floor(vals))
    if n_categories is not None:
        limit = n_categories[cols] if cols is not None else np.tile(n_categories,
                                                                     X.shape[0])
        bad |= vals >= limit
    if not bad.any():
        return
    flat = int(np.argmax(bad))
    i, j = locate_flat(X, flat)
    v = vals[flat]
    if v < 0 or v != np.floor(v):
        kind = "a negative" if v < 0 else "a non-integer"
        raise ValueError(
            f"X contains {kind} category code ({float(v)!r}) at row {i}, column {j} "
            f"(0-based); categorical naive Bayes needs integer codes 0, 1, 2, ... (e.g. "
            f"from an ordinal encoder)"
        )
    code = repr(v.item()) if v != int(v) or abs(v) >= 2.0**53 else str(int(v))
    m = int(n_categories[j])
    if given:
        raise ValueError(
            f"X has category {code} at row {i}, column {j} (0-based), but n_categories gives "
            f"feature {j} {m} categories (0..{m - 1}); pass n_categories covering it")
    raise ValueError(
        f"X has category {code} at row {i}, column {j} (0-based), but feature {j} was fitted with "
        f"{m} categories (0..{m - 1}); refit with min_categories covering it"
    )


def check_min_categories(min_categories, d, name="min_categories"):
    """``min_categories`` (None, an int or d ints ≥ 0) as (d,) int64, or None; errors
    name the argument ``name``."""
    if min_categories is None:
        return None
    m = np.asarray(min_categories)
    if m.dtype.kind not in "iu":
        raise ValueError(f"{name} must be integers; got dtype {m.dtype}")
    if m.ndim == 0:
        m = np.full(d, int(m))
    if m.shape != (d,):
        raise ValueError(
            f"{name} must be an int or have shape ({d},), one per feature; got "
            f"shape {m.shape}"
        )
    if np.any(m < 0):
        raise ValueError(f"{name} must be non-negative")
    return m.astype(np.int64)


def column_max(X):
    """The largest code of each column of checked X (CSR: 0 where nothing is stored)."""
    if is_sparse(X):
        colmax = np.zeros(X.shape[1])
        if X.data.size:
            np.maximum.at(colmax, X.indices, X.data)
        return colmax
    return X.max(axis=0)


def distinct_codes(X, cols):
    """The number of distinct codes in each column ``cols`` of checked X (CSR: the
    implicit zeros are code 0)."""
    if not is_sparse(X):
        S = np.sort(X[:, cols], axis=0)
        return (np.diff(S, axis=0) != 0).sum(axis=0) + 1
    sel = np.flatnonzero(np.isin(X.indices, cols))
    c, v = X.indices[sel], X.data[sel]
    order = np.lexsort((v, c))
    c, v = c[order], v[order]
    new = np.ones(c.shape[0], dtype=bool)
    new[1:] = (c[1:] != c[:-1]) | (v[1:] != v[:-1])
    d = X.shape[1]
    distinct = np.bincount(c[new], minlength=d)[cols]
    stored = np.bincount(c, minlength=d)[cols]
    zero_stored = np.bincount(c[new & (v == 0)], minlength=d)[cols]
    return distinct + ((stored < X.shape[0]) & (zero_stored == 0))


def category_widths(colmax, min_cat, distinct, where):
    """m_j = max(colmax_j + 1, min_cat_j) as (d,) int64, refusing a stray code.

    A feature whose largest code would make its table wider than both
    ``min_cat[j]`` and max(:data:`CATEGORY_FLOOR`, :data:`CATEGORY_SPREAD` × its
    distinct codes) is refused, naming the code and ``where(j, code)`` (" at row i,
    column j (0-based)", or " in column j (0-based)" where the row is not
    known).  ``distinct(cols)``
    gives the number of distinct codes of the columns ``cols``; it is asked only for
    features wider than the floor."""
    floor = np.full(colmax.shape[0], CATEGORY_FLOOR)
    if min_cat is not None:
        floor = np.maximum(floor, min_cat)
    cols = np.flatnonzero(colmax + 1 > floor)
    if cols.size:
        n_distinct = distinct(cols)
        over = colmax[cols] + 1 > np.maximum(floor[cols], CATEGORY_SPREAD * n_distinct)
        if over.any():
            k = int(np.argmax(over))
            j = int(cols[k])
            code = colmax[j]
            width = int(code) + 1
            raise ValueError(
                f"X has category code {int(code)}{where(j, code)}, but feature "
                f"{j} has {int(n_distinct[k])} distinct codes: its table would be {width} "
                f"categories wide. Categorical naive Bayes numbers the categories 0, 1, "
                f"2, ... (e.g. from an ordinal encoder); if feature {j} really has "
                f"{width} categories, pass min_categories of at least {width} for it"
            )
    n_cat = colmax.astype(np.int64) + 1
    if min_cat is not None:
        n_cat = np.maximum(n_cat, min_cat)
    return n_cat


def _row_of(X):
    def where(j, code):
        if is_sparse(X):
            pos = np.flatnonzero((X.indices == j) & (X.data == code))[0]
            i = int(np.searchsorted(X.indptr, pos, side="right") - 1)
        else:
            i = int(np.argmax(X[:, j] == code))
        return f" at row {i}, column {j} (0-based)"
    return where


def category_layout(X, min_cat):
    """The widths m_j of checked X's tables (see :func:`category_widths`), the codes
    checked (:func:`check_categories`)."""
    check_categories(X)
    return category_widths(column_max(X), min_cat, lambda cols: distinct_codes(X, cols),
                           _row_of(X))


def category_offsets(n_cat):
    """[0, cumsum(n_cat)] as (d + 1,) int64: where each feature's categories start."""
    offsets = np.zeros(n_cat.shape[0] + 1, dtype=np.int64)
    np.cumsum(n_cat, out=offsets[1:])
    return offsets


def count_categories(X, codes, w, K, offsets):
    """N_k (K,) and N_kjc (K, offsets[-1]) of checked X in one pass (w empty: all 1)."""
    cc = weighted_class_count(codes, w, K)
    if is_small(X):  # no compilation for small X (fastgen._small)
        return cc, numpy_passes.category_counts(X, codes, w, K, offsets, cc)
    if is_sparse(X):
        indptr, indices, data = csr_arrays(X)
        return cc, sparse_kernels.csr_categorical_counts(indptr, indices, data, codes, w, K,
                                                         offsets, cc)
    return cc, nb_kernels.categorical_counts(X, codes, w, K, offsets)


def widen_categories(counts, n_cat, wider):
    """``counts`` (K, Σ n_cat) laid out for the widths ``wider`` ≥ n_cat: each feature's
    categories at their new offsets, zeros for the categories it did not have."""
    if np.array_equal(n_cat, wider):
        return counts
    old, new = category_offsets(n_cat), category_offsets(wider)
    out = np.zeros((counts.shape[0], int(new[-1])))
    cols = np.arange(int(old[-1])) - np.repeat(old[:-1], n_cat) + np.repeat(new[:-1], n_cat)
    out[:, cols] = counts
    return out

"""The layout of categorical naive Bayes' tables over the blocks of a Dask array: the
number of categories of each feature, as the in-memory fit takes it."""

from __future__ import annotations

import numpy as np

from .._validation import check_X
from ..stats.available import filled
from ..stats.category_counts import (
    category_widths,
    check_categories,
    check_min_categories,
    column_max,
)
from .blocks import map_rows, tree_reduce, validated_with_nan, with_nan_advice

__all__ = ["category_widths_over_blocks"]


def _codes_of(X, missing, min_samples=1):
    """One block of codes validated; with ``missing``, its NaN read as code 0, as the
    in-memory fit lays its tables out over X filled with 0."""
    if missing:
        return filled(validated_with_nan(X))
    return with_nan_advice("categorical", lambda: check_X(X, allow_sparse=True,
                                                          min_samples=min_samples))


def _block_column_max(X, y, w, missing=False):
    """One block's largest code per column, its codes checked (None: no rows)."""
    if X.shape[0] == 0:
        return None
    X = _codes_of(X, missing)
    check_categories(X)
    return column_max(X)


def _block_codes(X, y, w, cols, missing=False):
    """The distinct codes of the columns ``cols`` of one block (CSR: with 0 where a
    row stores nothing in the column)."""
    X = _codes_of(X, missing, min_samples=0)
    if hasattr(X, "indices"):
        out = []
        for j in cols:
            stored = X.data[X.indices == j]
            extra = [0.0] if stored.shape[0] < X.shape[0] else []
            out.append(np.unique(np.concatenate([stored, extra])))
        return out
    return [np.unique(X[:, j]) for j in cols]


def _union_codes(a, b):
    return [np.union1d(u, v) for u, v in zip(a, b, strict=True)]


def category_widths_over_blocks(X, blocks, min_categories, split_every, missing=False):
    """The widths m_j of the categorical tables over all blocks, as the in-memory fit
    takes them: one pass for the largest codes, and a second over the few features
    wider than the floor (their distinct codes) only if there are any (``missing``:
    NaN read as code 0, as in memory)."""
    min_cat = check_min_categories(min_categories, X.shape[1])
    colmax = tree_reduce(map_rows(_block_column_max, X, blocks, missing),
                         np.maximum, split_every).compute()

    def distinct(cols):
        sets = tree_reduce(map_rows(_block_codes, X, blocks, cols, missing), _union_codes,
                           split_every).compute()
        return np.array([s.shape[0] for s in sets])

    return category_widths(colmax, min_cat, distinct, lambda j, code: f" in column {j}")

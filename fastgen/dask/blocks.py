"""Dask arrays as row blocks: the checks of X, y and the weights, the per-block calls
(errors name rows of X, not of the block), the global label set, and the tree
reduction of exact merges that every fit here uses.
"""

from __future__ import annotations

import functools
import math
import numbers
import re

import dask
import dask.array as da
import numpy as np

from .._validation import check_sample_weight, check_X, check_y, weights_of_a_part
from .._validation.rows import retexted, rows_renamed
from ..logistic.centring import column_sums, shift_from_sums
from ..stats.missing import reject_infinite

__all__ = ["SPLIT_EVERY", "as_dask_X", "as_dask_vector", "row_blocks", "row_starts",
           "in_rows", "map_rows", "tree_reduce", "classes_and_counts", "nan_advice",
           "with_nan_advice", "validated_with_nan", "naming_first_nan"]

#: Fan-in of the tree reductions.
SPLIT_EVERY = 8


def as_dask_X(X):
    if not isinstance(X, da.Array):
        raise ValueError(f"X must be a dask.array.Array; got {type(X).__name__} "
                         f"(use fastgen.fit_* for in-memory data)")
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D (n_samples, n_features); got {X.ndim}-D")
    if any(math.isnan(c) for c in X.chunks[0]):
        raise ValueError("X has unknown chunk sizes; call X.compute_chunk_sizes() first")
    if len(X.chunks[1]) > 1:
        X = X.rechunk({1: -1})
    return X


def as_dask_vector(v, X, name):
    """v as a 1-D Dask array with X's row chunks (None stays None)."""
    if v is None:
        return None
    if not isinstance(v, da.Array):
        v = np.asarray(v)
        if v.ndim == 2 and v.shape[1] == 1:
            v = v[:, 0]
        if v.ndim != 1:
            raise ValueError(f"{name} must be 1-D (n_samples,); got shape {v.shape}")
        if v.shape[0] != X.shape[0]:
            raise ValueError(f"{name} has {v.shape[0]} entries but X has {X.shape[0]} rows; "
                             f"they must match")
        return da.from_array(v, chunks=(X.chunks[0],))
    if v.ndim != 1:
        raise ValueError(f"{name} must be 1-D (n_samples,); got {v.ndim}-D")
    if v.shape[0] != X.shape[0]:
        raise ValueError(f"{name} has {v.shape[0]} entries but X has {X.shape[0]} rows; "
                         f"they must match")
    if v.chunks[0] != X.chunks[0]:
        v = v.rechunk((X.chunks[0],))
    return v


def row_blocks(X, y, w):
    """Delayed (X block, y block, w block or None) triples, one per row block."""
    xs = X.to_delayed().ravel()
    ys = y.to_delayed().ravel()
    ws = w.to_delayed().ravel() if w is not None else [None] * len(xs)
    return list(zip(xs, ys, ws, strict=True))


def row_starts(X):
    """The first row of each of X's row blocks, in X's rows."""
    return [int(r) for r in np.concatenate([[0], np.cumsum(X.chunks[0])[:-1]])]


def in_rows(start, fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` on the row block that starts at row ``start`` of X: a
    ValueError naming a row of the block (validation's "X contains NaN at row 3,
    column 1") is raised again naming that row of X (row 103).  The block's weights may
    all be zero (:func:`~fastgen._validation.weights_of_a_part`): the whole's are
    checked by :func:`classes_and_counts`."""
    with rows_renamed(int(start)), weights_of_a_part():
        return fn(*args, **kwargs)


def map_rows(fn, X, blocks, *args):
    """Delayed ``in_rows(start, fn, xb, yb, wb, *args)``, one per row block of X."""
    f = dask.delayed(in_rows, pure=True)
    return [f(start, fn, xb, yb, wb, *args)
            for start, (xb, yb, wb) in zip(row_starts(X), blocks, strict=True)]


def _label_stats(y, w):
    """Per block: its sorted labels and their (weighted) counts."""
    if np.asarray(y).shape[0]:
        check_y(y)  # a missing label is named at its row here, not among the labels
    labels, inverse = np.unique(np.asarray(y), return_inverse=True)
    # the block's weights checked here (its rows may all weigh 0): NaN named at its row
    wts = None if w is None else check_sample_weight(w, np.asarray(y).shape[0])
    return labels, np.bincount(inverse.reshape(-1), weights=wts, minlength=labels.shape[0])


def _merge_label_stats(parts):
    parts = [p for p in parts if p[0].shape[0]]
    labels = parts[0][0]
    for p in parts[1:]:
        labels = np.union1d(labels, p[0])
    counts = np.zeros(labels.shape[0])
    for lab, cnt in parts:
        counts[np.searchsorted(labels, lab)] += cnt
    return labels, counts


def _merge_all(merge, parts):
    """Merge a list of partial statistics in order, skipping empty blocks (None)."""
    acc = None
    for p in parts:
        if p is not None:
            acc = p if acc is None else merge(acc, p)
    return acc


def tree_reduce(parts, merge, split_every=SPLIT_EVERY):
    """Delayed tree reduction of ``parts`` with fan-in ``split_every`` (an integer
    ≥ 2: a fan-in of 1 would never reduce)."""
    if isinstance(split_every, bool) or not isinstance(split_every, numbers.Integral) \
            or split_every < 2:
        raise ValueError(f"split_every must be an integer ≥ 2 (the number of partial "
                         f"results merged at a time); got {split_every!r}")
    combine = dask.delayed(_merge_all, pure=True)
    parts = list(parts)
    while len(parts) > 1:
        parts = [combine(merge, parts[i:i + split_every])
                 for i in range(0, len(parts), split_every)]
    return parts[0]


def classes_and_counts(y, w):
    """Global sorted labels and weighted class counts: one pass over y (and w)."""
    starts = np.concatenate([[0], np.cumsum(y.chunks[0])[:-1]])
    f = dask.delayed(in_rows, pure=True)
    parts = [f(int(start), _label_stats, yb, wb)
             for start, yb, wb in zip(starts, y.to_delayed().ravel(),
                                      w.to_delayed().ravel() if w is not None
                                      else [None] * y.numblocks[0], strict=True)]
    labels, counts = tree_reduce(parts, _merge_label_pair).compute()
    classes, _ = check_y(labels)  # the same validation and label types as in memory
    if w is not None and not np.sum(counts) > 0.0:
        raise ValueError("sample_weight is zero everywhere; at least one sample needs weight")
    return classes, counts


def _merge_label_pair(a, b):
    return _merge_label_stats([a, b])


def _block_column_sums(X, y, w):
    """One block's :func:`fastgen.logistic.centring.column_sums`."""
    X = check_X(X, allow_sparse=True, min_samples=0)
    w = np.empty(0) if w is None else np.asarray(w, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        return column_sums(X, w)


def _add_column_sums(a, b):
    with np.errstate(over="ignore", invalid="ignore"):
        return a[0] + b[0], a[1] + b[1], a[2] + b[2]


def shift_over_blocks(X, blocks, split_every=SPLIT_EVERY):
    """The centred frame's shift of the logistic fits (:func:`fastgen.logistic.centring.
    shift_from_sums`) from one pass over the row blocks, or None."""
    sums = tree_reduce(map_rows(_block_column_sums, X, blocks), _add_column_sums,
                       split_every).compute()
    return shift_from_sums(*sums)


#: what to do about NaN in X under the default nan_policy="raise", per model
_NAN_ADVICE = {
    "factorising": "NaN marks a missing value only with nan_policy='marginalize'",
    "full": ("NaN marks a missing value only with nan_policy='marginalize', which on Dask "
             "takes covariance='diagonal' or 'pooled_diagonal'; for this covariance fit "
             "in memory with fastgen.fit_gda(..., nan_policy='marginalize') (EM), or "
             "impute the missing values"),
    "multinomial": ("impute or drop the missing values (multinomial and complement naive "
                    "Bayes are not fitted with missing counts)"),

}


def nan_advice(model):
    """The advice appended to "X contains NaN" of a Dask fit of ``model`` (a GDA
    covariance kind or a naive Bayes model name)."""
    if model in ("pooled", "per_class"):
        return _NAN_ADVICE["full"]
    if model in ("multinomial", "complement"):
        return _NAN_ADVICE["multinomial"]
    return _NAN_ADVICE["factorising"]


def with_nan_advice(model, fn, *args):
    """``fn(*args)`` (one block's statistics); a "contains NaN" ValueError is raised
    again with :func:`nan_advice` appended."""
    try:
        return fn(*args)
    except ValueError as exc:
        if "contains NaN" not in str(exc) or "nan_policy" in str(exc):
            raise
        raise ValueError(f"{exc}; {nan_advice(model)}") from None


def validated_with_nan(X):
    """One block of X validated with NaN allowed as a missing value (infinity
    refused, naming its row)."""
    X = check_X(X, allow_sparse=True, finite=False, missing=True, min_samples=0)
    reject_infinite(X)
    return X


_NAN_AT = re.compile(r"contains NaN at row (\d+), column (\d+) \(0-based")


def first_nan(X):
    """(row, column) of the first NaN of Dask array X in row order, or None: one more
    pass over X, run only where a block has already found a NaN."""
    missing = da.isnan(X)
    rows = missing.any(axis=1)
    found, r = dask.compute(rows.any(), da.argmax(rows))
    if not found:
        return None
    r = int(r)
    return r, int(np.argmax(np.isnan(np.asarray(X[r].compute()))))


def naming_first_nan(fn):
    """``fn(..., X, ...)`` whose "X contains NaN at row r, column c" error (from
    whichever block ran first) names the first NaN of X (its first 2-D Dask array
    argument) in row order instead."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except ValueError as exc:
            m = _NAN_AT.search(str(exc))
            X = next((a for a in (*args, kwargs.get("X"))
                      if isinstance(a, da.Array) and a.ndim == 2), None)
            if m is None or X is None:
                raise
            try:
                first = first_nan(X)
            except Exception:  # noqa: BLE001 - the block's message stands
                first = None
            if first is None or first[0] >= int(m.group(1)):
                raise
            text = (str(exc)[:m.start()] + f"contains NaN at row {first[0]}, column "
                    f"{first[1]} (0-based" + str(exc)[m.end():])
            raise retexted(exc, text) from None
    return wrapper

"""Categorical naive Bayes on integer category codes: params, fit, params from counts.

Imports the shared core (``_params``, ``_runtime``, ``_validation``, ``kernels``) and
:mod:`fastgen.naive_bayes.base`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from .._params import (
    FittedParams,
    derived_from_checked_input,
    kernel_view,
    log_normalised,
    recomputed,
    register_params,
)
from .._runtime import serial_for_small_inputs
from .._small import is_small
from .._validation import csr_arrays, feature_names_of, is_sparse
from ..kernels.nb import categorical_counts, categorical_scores
from ..kernels.sparse import csr_categorical_counts, csr_categorical_scores
from ..stats import numpy_passes
from .base import (
    check_alpha,
    fit_inputs,
    handed_over,
    locate_flat,
    log_priors,
    score_bounds,
    weighted_class_count,
)

__all__ = ["CategoricalNBParams", "fit_categorical_nb", "categorical_params"]


def _check_categories(X, n_categories=None):
    """Raise unless every value of X is a non-negative integer (< n_categories[j])."""
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
            f"X contains {kind} category code ({float(v)!r}) at row {i}, column {j}; categorical "
            f"naive Bayes needs integer codes 0, 1, 2, ... (e.g. from an ordinal encoder)"
        )
    raise ValueError(
        f"X has category {int(v)} at row {i}, column {j}, but feature {j} was fitted with "
        f"{int(n_categories[j])} categories (0..{int(n_categories[j]) - 1}); refit with "
        f"min_categories covering it"
    )


#: A feature's table is at most max(CATEGORY_FLOOR, CATEGORY_SPREAD × its distinct codes)
#: categories wide unless ``min_categories`` asks for more: a code past that would
#: widen the table by a stray value (one code of 1e9 would ask for 1e9 columns).
CATEGORY_FLOOR = 1024
CATEGORY_SPREAD = 16


def _distinct_codes(X, cols):
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


def _check_table_width(X, colmax, min_cat):
    """Raise where a feature's largest code would make its table far wider than its
    codes need (see :data:`CATEGORY_FLOOR`), naming the column, the code and its row."""
    floor = np.full(colmax.shape[0], CATEGORY_FLOOR)
    if min_cat is not None:
        floor = np.maximum(floor, min_cat)
    cols = np.flatnonzero(colmax + 1 > floor)
    if cols.size == 0:
        return
    distinct = _distinct_codes(X, cols)
    over = colmax[cols] + 1 > np.maximum(floor[cols], CATEGORY_SPREAD * distinct)
    if not over.any():
        return
    k = int(np.argmax(over))
    j = int(cols[k])
    code = colmax[j]
    if is_sparse(X):
        pos = np.flatnonzero((X.indices == j) & (X.data == code))[0]
        i = int(np.searchsorted(X.indptr, pos, side="right") - 1)
    else:
        i = int(np.argmax(X[:, j] == code))
    width = int(code) + 1
    raise ValueError(
        f"X has category code {int(code)} at row {i}, column {j}, but feature {j} has "
        f"{int(distinct[k])} distinct codes: its table would be {width} categories wide. "
        f"Categorical naive Bayes numbers the categories 0, 1, 2, ... (e.g. from an "
        f"ordinal encoder); if feature {j} really has {width} categories, pass "
        f"min_categories of at least {width} for it"
    )


def _check_min_categories(min_categories, d):
    if min_categories is None:
        return None
    m = np.asarray(min_categories)
    if m.dtype.kind not in "iu":
        raise ValueError(f"min_categories must be integers; got dtype {m.dtype}")
    if m.ndim == 0:
        m = np.full(d, int(m))
    if m.shape != (d,):
        raise ValueError(
            f"min_categories must be an int or have shape ({d},), one per feature; got "
            f"shape {m.shape}"
        )
    if np.any(m < 0):
        raise ValueError("min_categories must be non-negative")
    return m.astype(np.int64)


@register_params
@dataclass(frozen=True)
class CategoricalNBParams(FittedParams):
    """Categorical naive Bayes on integer category codes (implicit CSR zeros are category 0).

    The per-feature tables are stored flat: feature j's categories are columns
    ``offsets[j]:offsets[j + 1]`` of ``category_count`` and ``feature_log_prob``.

    Attributes
    ----------
    classes : (K,)
    class_count : (K,) float64 N_k
    category_count : (K, C) float64 N_kjc, C = Σ_j n_categories[j]
    class_log_prior : (K,) float64
    feature_log_prob : (K, C) log p(x_j = c | k) = log(N_kjc + α) − log(N_k' + α·m_j),
        N_k' = Σ_c N_kjc and m_j the number of categories of feature j
    n_categories : (d,) int64
    offsets : (d + 1,) int64
    alpha : float
    feature_names : tuple of str or None
        The column names of the data frame the model was fitted on (all str), else
        None; scoring checks X's columns against them (see :mod:`fastgen.scoring`).
    """

    classes: np.ndarray
    class_count: np.ndarray
    category_count: np.ndarray
    class_log_prior: np.ndarray
    feature_log_prob: np.ndarray
    n_categories: np.ndarray
    offsets: np.ndarray
    alpha: float
    feature_names: tuple | None = None

    accepts_sparse = True
    _feature_table = "feature_log_prob"

    @property
    def n_features_in(self) -> int:
        # feature_log_prob has one column per (feature, category) pair
        return int(self.n_categories.shape[0])

    def _check_fields(self, check):
        """Besides the shapes: n_categories ≥ 1 and offsets = [0, cumsum(n_categories)],
        so that feature j's categories are exactly the columns offsets[j]:offsets[j+1]
        of the (K, C) tables (the scoring kernels index them so)."""
        n_cat = check.array("n_categories", (None,), "int")
        if n_cat.shape[0] < 1 or n_cat.min() < 1:
            check.fail("n_categories", f"must hold a positive integer per feature; got "
                                       f"{n_cat.tolist()}")
        d = n_cat.shape[0]
        offsets = check.array("offsets", (d + 1,), "int")
        if offsets[0] != 0 or np.any(offsets[1:] != np.cumsum(n_cat)):
            check.fail("offsets", f"must be [0, cumsum(n_categories)] = "
                                  f"{[0] + np.cumsum(n_cat).tolist()}; got {offsets.tolist()}")
        C = int(offsets[-1])
        dt = check.array("feature_log_prob", ("K", C), "float", "log").dtype
        check.d = d
        check.array("category_count", ("K", C), "float", "nonneg")
        check.array("class_count", ("K",), "float", "nonneg")
        check.array("class_log_prior", ("K",), "float", "log")
        check.real("alpha", low=0.0)
        return dt

    def _check_derived(self, check):
        """The class log-priors, and each feature's categories per class, are
        distributions; the latter the smoothed estimates of category_count and alpha."""
        log_normalised(check, "class_log_prior", self.class_log_prior, 0, self.dtype)
        for j in range(self.n_categories.shape[0]):
            part = self.feature_log_prob[:, self.offsets[j]:self.offsets[j + 1]]
            log_normalised(check, "feature_log_prob", part, 1, self.dtype)
        want = categorical_params(self.classes, self.class_count, self.category_count,
                                  self.n_categories, self.offsets, self.alpha, True, None,
                                  np.float64)
        recomputed(check, "feature_log_prob", self.feature_log_prob,
                   want.feature_log_prob, self.dtype, "category_count and alpha")

    @cached_property
    def _table(self):
        return kernel_view(np.ascontiguousarray(self.feature_log_prob.T, dtype=np.float64))

    def _scores(self, X, mode):
        _check_categories(X, self.n_categories)
        table = self._table
        offsets = kernel_view(self.offsets)
        bias = self.class_log_prior.astype(np.float64)
        out = np.empty((X.shape[0], bias.shape[0]), dtype=self.dtype)
        if is_sparse(X):
            indptr, indices, data = csr_arrays(X)
            base = bias + table[offsets[:-1]].sum(axis=0)
            return csr_categorical_scores(indptr, indices, data, table, offsets, base,
                                          mode, score_bounds(indptr), out)
        return categorical_scores(X, table, offsets, bias, mode, out)


@serial_for_small_inputs(0)
def fit_categorical_nb(X, y, *, alpha=1.0, min_categories=None, sample_weight=None):
    """Fit categorical naive Bayes.

    Feature j takes categories 0 … m_j − 1 with m_j = max(max_i x_ij + 1,
    min_categories[j]); a code that would make m_j larger than both min_categories[j]
    and max(1024, 16 × the number of distinct codes of feature j) is taken for a stray
    value and refused (pass min_categories if the feature has that many categories).
    Then::

        N_kjc = Σ_{i: y_i=k, x_ij=c} w_i,
        log p(x_j = c | y = k) = log(N_kjc + α) − log(Σ_c N_kjc + α·m_j),
        log π_k = log N_k − log Σ_k N_k.

    CSR input is accepted (scikit-learn documents but rejects it): implicit zeros are
    category 0, and their count is N_k minus the counts of the stored categories.

    Parameters
    ----------
    X : array-like (n, d) or scipy CSR matrix/array
        Non-negative integer category codes (floats holding integers are fine).
    y : array-like (n,)
    alpha : float, default 1.0
    min_categories : int or array-like (d,) of int, optional
        Minimum number of categories per feature, for categories absent in training.
    sample_weight : array-like (n,), optional

    Returns
    -------
    CategoricalNBParams
    """
    names = feature_names_of(X)
    X, classes, codes, w = fit_inputs(X, y, sample_weight, allow_sparse=True)
    alpha = check_alpha(alpha)
    d = X.shape[1]
    min_cat = _check_min_categories(min_categories, d)
    _check_categories(X)
    K = classes.shape[0]
    if is_sparse(X):
        colmax = np.zeros(d)
        if X.data.size:
            np.maximum.at(colmax, X.indices, X.data)
    else:
        colmax = X.max(axis=0)
    _check_table_width(X, colmax, min_cat)
    n_cat = colmax.astype(np.int64) + 1
    if min_cat is not None:
        n_cat = np.maximum(n_cat, min_cat)
    offsets = np.zeros(d + 1, dtype=np.int64)
    np.cumsum(n_cat, out=offsets[1:])
    cc = weighted_class_count(codes, w, K)
    if is_small(X):  # no compilation for small X (fastgen._small)
        counts = numpy_passes.category_counts(X, codes, w, K, offsets, cc)
    elif is_sparse(X):
        indptr, indices, data = csr_arrays(X)
        counts = csr_categorical_counts(indptr, indices, data, codes, w, K, offsets, cc)
    else:
        counts = categorical_counts(X, codes, w, K, offsets)
    # every table here is fresh: the params keep them without copies
    return categorical_params(classes, handed_over(cc), handed_over(counts),
                              handed_over(n_cat), handed_over(offsets), alpha, True, None,
                              X.dtype, names)


def categorical_params(classes, cc, counts, n_cat, offsets, alpha, fit_prior,
                       class_prior, dtype, feature_names=None):
    """:class:`CategoricalNBParams` from checked counts (see :func:`fit_categorical_nb`)."""
    smoothed = counts + alpha
    sums = np.add.reduceat(smoothed, offsets[:-1], axis=1)
    flp = np.log(smoothed) - np.log(np.repeat(sums, n_cat, axis=1))
    with derived_from_checked_input():  # counts checked by the caller: no value scans
        return CategoricalNBParams(
            classes=classes,
            class_count=cc,
            category_count=counts,
            class_log_prior=handed_over(log_priors(cc, fit_prior, class_prior, classes)),
            feature_log_prob=handed_over(flp.astype(dtype, copy=False)),
            n_categories=n_cat,
            offsets=offsets,
            alpha=alpha,
            feature_names=feature_names,
        )

"""Categorical naive Bayes on integer category codes: params, fit, params from counts.

Imports the shared core (``_params``, ``_runtime``, ``_validation``, ``kernels``) and
:mod:`fastgen.naive_bayes.base`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from .._em import check_em_options
from .._params import (
    FittedParams,
    derived_from_checked_input,
    kernel_view,
    log_normalised,
    recomputed,
    register_params,
)
from .._runtime import serial_for_small_inputs
from .._validation import check_class_weights, feature_names_of, is_sparse
from .._validation.names import naming_columns
from ..stats.available import filled, observer, refuse_unobserved
from ..stats.category_counts import (  # the counting pass, shared with fastgen.nb_counts
    category_layout,
    category_offsets,
    check_min_categories,
    count_categories,
)
from ..stats.missing import check_nan_policy, has_nan, reject_infinite
from .base import check_alpha, fit_inputs, handed_over, log_priors, weighted_class_count
from .em import categorical_em, unlabelled_rows
from .scoring import CATEGORICAL_SCORER, CategoricalTables

__all__ = ["CategoricalNBParams", "fit_categorical_nb", "categorical_params"]


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
    n_iter, converged, log_likelihood_history, history_monotone : EM record or None
        The EM record of a fit with ``unlabeled`` rows, None without EM (see
        :meth:`fastgen._params.FieldChecker.em_record`).
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
    n_iter: int | None = None
    converged: bool | None = None
    log_likelihood_history: np.ndarray | None = None
    history_monotone: bool | None = None

    scorer = CATEGORICAL_SCORER
    _feature_table = "feature_log_prob"
    _records_em = True  # n_iter, converged, log_likelihood_history, history_monotone

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

    def scoring_tables(self):
        """("categorical", :class:`~fastgen.naive_bayes.scoring.CategoricalTables`):
        log p(x_j = c | k) as a (Σ_j m_j, K) float64 table, the offsets, the class log
        priors and the numbers of categories, for
        :data:`~fastgen.naive_bayes.scoring.CATEGORICAL_SCORER`."""
        return self._scoring_tables

    @cached_property
    def _scoring_tables(self):
        table = kernel_view(np.ascontiguousarray(self.feature_log_prob.T, dtype=np.float64))
        return "categorical", CategoricalTables(table, kernel_view(self.offsets),
                                                self.class_log_prior.astype(np.float64),
                                                self.n_categories)


@serial_for_small_inputs(0)
@naming_columns()
def fit_categorical_nb(X, y, *, alpha=1.0, min_categories=None, sample_weight=None,
                       nan_policy="raise", unlabeled=None, unlabeled_weight=1.0,
                       em_tol=1e-8, em_max_iter=100):
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
    nan_policy : {"raise", "marginalize"}, default "raise"
        "marginalize": NaN entries (dense, or stored in CSR) are missing values and are
        not counted: each feature's table comes from the rows that observe it (the
        exact maximum likelihood under missing at random; the denominators are already
        Σ_c N_kjc).  A column with no observed value raises.  With ``unlabeled`` rows,
        NaN may be in X, in them, or in both: EM over the observed codes of every row
        (docs/guide/incomplete_data.rst).
    unlabeled : array-like (m, d) or scipy CSR, optional
        Rows without labels (codes): EM from the labelled-only fit
        (:mod:`fastgen.naive_bayes.em`), each M-step adding their expected category
        counts N_kjc (weights λ·r_ik).  A code seen only here widens its feature's
        table as a code of X would.  None, no rows or λ = 0: the fit without EM.
    unlabeled_weight, em_tol, em_max_iter : float, float, int
        λ, EM's stopping rule and its iterations at most, as for :func:`fastgen.fit_gda`.

    Returns
    -------
    CategoricalNBParams
    """
    names = feature_names_of(X)
    em = check_em_options(unlabeled_weight, em_tol, em_max_iter)
    X, classes, codes, w = fit_inputs(X, y, sample_weight, allow_sparse=True,
                                      finite=check_nan_policy(nan_policy) == "raise")
    if w.shape[0]:  # a class whose rows all weigh 0 has nothing to estimate
        check_class_weights(classes, weighted_class_count(codes, w, classes.shape[0]))
    alpha = check_alpha(alpha)
    min_cat = check_min_categories(min_categories, X.shape[1])
    Xnan = None
    marginalize = nan_policy == "marginalize"
    if marginalize:
        reject_infinite(X)  # X was not scanned for non-finite values
        if has_nan(X):
            Xnan, X = X, filled(X)
            _check_observed_columns(Xnan)
    em_rows = unlabelled_rows(X, y, sample_weight, unlabeled, em, names=names,
                              allow_nan=marginalize)
    n_cat = category_layout(X, min_cat)
    if em_rows is not None:
        try:
            U = em_rows.U
            n_cat = np.maximum(n_cat, category_layout(filled(U) if has_nan(U) else U,
                                                      min_cat))
        except ValueError as exc:
            raise ValueError(str(exc).replace("X ", "unlabeled ", 1)) from None
        if Xnan is not None:  # scored with its NaN: the marginal of the observed codes
            em_rows.X = Xnan
    offsets = category_offsets(n_cat)
    if Xnan is None:
        cc, counts = count_categories(X, codes, w, classes.shape[0], offsets)
    else:
        cc = weighted_class_count(codes, w, classes.shape[0])
        counts = observed_category_counts(Xnan, X, codes, w, classes.shape[0], offsets, cc)
        refuse_unobserved(np.add.reduceat(counts, offsets[:-1], axis=1), cc, classes,
                          observer(Xnan, codes))
    # every table here is fresh: the params keep them without copies
    params = categorical_params(classes, handed_over(cc), handed_over(counts),
                                handed_over(n_cat), handed_over(offsets), alpha, True, None,
                                X.dtype, names)
    if em_rows is None:
        return params
    return categorical_em(params, em_rows, lambda c, t: categorical_params(
        classes, c, t, n_cat, offsets, alpha, True, None, X.dtype, names))


def _check_observed_columns(X):
    """Raise naming a column of X (dense or CSR) whose every entry is NaN."""
    if is_sparse(X):
        nan = np.isnan(X.data)
        stored_nan = np.bincount(X.indices[nan], minlength=X.shape[1])
        empty = np.flatnonzero(stored_nan == X.shape[0])
    else:
        empty = np.flatnonzero(np.isnan(X).all(axis=0))
    if empty.size:
        raise ValueError(
            f"X has no observed value in column {empty[0]} (0-based; every entry is NaN): its "
            f"categories cannot be estimated; drop the column")


def observed_category_counts(Xnan, X, codes, w, K, offsets, cc):
    """(K, C) N_kjc over the observed entries of X (``Xnan`` with its NaN, ``X`` the
    same filled with 0): a NaN is not counted; CSR's implicit zeros are category 0."""
    C = int(offsets[-1])
    wt = w if w.shape[0] else np.ones(codes.shape[0])
    if is_sparse(X):
        rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
        keep = ~np.isnan(Xnan.data)
        flat = (codes[rows] * C + offsets[X.indices] + X.data.astype(np.int64))[keep]
        counts = np.bincount(flat, weights=wt[rows][keep], minlength=K * C).reshape(K, C)
        # implicit zeros: the class weight less that of every stored entry (NaN too)
        stored = np.zeros((K, X.shape[1]))
        np.add.at(stored, (codes[rows], X.indices), wt[rows])
        counts[:, offsets[:-1]] += cc[:, None] - stored
        return counts
    keep = ~np.isnan(Xnan)
    flat = codes[:, None] * C + offsets[:-1][None, :] + X.astype(np.int64)
    weights = np.broadcast_to(wt[:, None], X.shape)
    return np.bincount(flat[keep], weights=weights[keep], minlength=K * C).reshape(K, C)


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

"""Dask fits with missing features (``nan_policy="marginalize"``) for the models whose
likelihood factorises over the features: the diagonal kinds of GDA, Gaussian,
Bernoulli and categorical naive Bayes.

Their maximum-likelihood statistics with values missing at random are available-case
sums: per class and feature the weight of the rows that observe it N_kj, their mean
μ_kj and sum of squares S_kj (Gaussian), the weighted count of ones F_kj
(Bernoulli) or of each code N_kjc (categorical).  Each block gives its own, merged
exactly in a tree (the pairwise update of
:func:`fastgen.stats.available.merge_available`, or plain sums), and the client
finishes with the builders of the in-memory fits, so the result equals
``fastgen.fit_*(..., nan_policy="marginalize")`` up to the rounding of the merge order.
The full covariances need EM over the blocks, and the other naive Bayes models refuse
NaN in memory too: they raise, saying what to do.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validation import check_scalar, check_y
from ..gda import check_gda_options
from ..gda.covariance import params_from_moments
from ..gda.em import diagonal_moments
from ..naive_bayes.base import check_alpha
from ..naive_bayes.bernoulli import bernoulli_params
from ..naive_bayes.categorical import categorical_params, observed_category_counts
from ..naive_bayes.gaussian import gaussian_params
from ..stats.available import (
    AvailableCase,
    available_sums,
    binary_counts_observed,
    check_available,
    class_matrix,
    filled,
    merge_available,
    missing_matrix,
    observed_variance,
    refuse_unobserved,
)
from ..stats.category_counts import category_offsets
from ..stats.feature_counts import check_binarize, weighted_class_count
from ..stats.missing import check_nan_policy
from ..stats.moments import ClassMoments
from .blocks import map_rows, row_blocks, tree_reduce, validated_with_nan
from .categories import category_widths_over_blocks

__all__ = ["marginalize_requested", "fit_gda_missing", "fit_gaussian_nb_missing",
           "fit_bernoulli_nb_missing", "fit_categorical_nb_missing"]


def marginalize_requested(nan_policy, model, unlabeled=None):
    """Whether a Dask fit takes NaN as missing values (``nan_policy="marginalize"``);
    raises where ``model`` does not on Dask, saying what to do instead."""
    if check_nan_policy(nan_policy) != "marginalize":
        return False
    if model in ("pooled", "per_class"):
        raise ValueError(
            f"nan_policy='marginalize' is not available on Dask arrays for "
            f"covariance={model!r}: it needs EM over the blocks; use "
            f"covariance='diagonal' or 'pooled_diagonal' (available-case statistics, "
            f"one pass), or fit in memory with fastgen.fit_gda(..., "
            f"nan_policy='marginalize')")
    if model in ("multinomial", "complement"):
        name = {"multinomial": "fit_multinomial_nb", "complement": "fit_complement_nb"}[
            model]
        raise ValueError(
            f"nan_policy='marginalize' is not available for fastgen.dask.{name} "
            f"({name} refuses NaN in memory too: a missing count is not left out feature "
            f"by feature); impute or drop the missing values")
    if unlabeled is not None:
        raise ValueError(
            "nan_policy='marginalize' with unlabeled rows is not available on Dask "
            "arrays (the combined EM runs in memory): fit in memory, or pass complete "
            "rows")
    return True


@dataclass(frozen=True)
class _Block:
    """One block's available-case statistics: ``stats`` (weighted, per class),
    ``seen`` (K, d) the unweighted count of observed entries per class (to tell
    missing values from values of weight 0 in messages), and ``plain`` (unweighted,
    all rows as one group; for Gaussian naive Bayes' variance floor with weights)."""

    stats: object
    seen: np.ndarray
    plain: AvailableCase | None


def _codes(y, classes):
    """The codes of a block's labels among the global ``classes``."""
    labels, inverse = check_y(y)
    return np.searchsorted(classes, labels)[inverse]


def _seen(X, codes, K):
    """(K, d) the unweighted count of observed entries per class of validated X."""
    H = class_matrix(codes, np.empty(0), K)
    HM = H @ missing_matrix(X)
    HM = HM.toarray() if hasattr(HM, "toarray") else np.asarray(HM)
    return np.asarray(H.sum(axis=1), dtype=np.float64).reshape(-1, 1) - HM


def _dtype(X):
    """The dtype the fit keeps: float32 stays float32, anything else is float64."""
    return "float32" if X.dtype == np.float32 else "float64"


def _block_gaussian(X, y, w, classes, plain):
    if X.shape[0] == 0:
        return None
    X = validated_with_nan(X)
    if hasattr(X, "indptr"):
        raise ValueError("X must be dense for the Gaussian models; got CSR blocks")
    codes = _codes(y, classes)
    w = np.empty(0) if w is None else np.asarray(w, dtype=np.float64)
    missing = np.isnan(X)
    K = classes.shape[0]
    ac = available_sums(X, missing, codes, w, K)
    one = available_sums(X, missing, np.zeros(X.shape[0], dtype=np.intp), np.empty(0), 1) \
        if plain else None
    return _Block(_without_rows(ac), _seen(X, codes, K), _without_rows(one))


def _without_rows(a):
    """``a`` without its (n, d) centred values: what a block hands on is O(K·d)."""
    return None if a is None else AvailableCase(a.counts, a.observed, a.means, a.sumsq,
                                                None)


def _merge_gaussian(a, b):
    plain = None if a.plain is None else merge_available(a.plain, b.plain)
    return _Block(merge_available(a.stats, b.stats), a.seen + b.seen, plain)


def _block_bernoulli(X, y, w, classes, binarize):
    if X.shape[0] == 0:
        return None
    X = validated_with_nan(X)
    check_binarize(binarize, filled(X))
    codes = _codes(y, classes)
    w = np.empty(0) if w is None else np.asarray(w, dtype=np.float64)
    K = classes.shape[0]
    return _Block(binary_counts_observed(X, codes, w, K, binarize), _seen(X, codes, K), None)


def _merge_bernoulli(a, b):
    """Two blocks' count statistics (tuples of arrays) and unweighted observed counts,
    summed (Bernoulli's (N_k, F_kj, N_kj), categorical's (N_k, N_kjc))."""
    return _Block(tuple(u + v for u, v in zip(a.stats, b.stats, strict=True)),
                  a.seen + b.seen, None)


def _observes(seen):
    def observes(k, j):
        return bool((seen[:, j].sum() if k is None else seen[k, j]) > 0)
    return observes


def _reduce(X, y, w, classes, block, merge, split_every, *args):
    merged = tree_reduce(map_rows(block, X, row_blocks(X, y, w), classes, *args), merge,
                         split_every).compute()
    if merged is None:
        raise ValueError("X has no rows")
    return merged


def fit_gda_missing(X, y, w, classes, covariance, options, split_every):
    """:func:`fastgen.dask.fit_gda` of a diagonal kind with NaN as missing values."""
    merged = _reduce(X, y, w, classes, _block_gaussian, _merge_gaussian, split_every,
                     False)
    ac = merged.stats
    check_available(ac.counts, ac.observed, classes, _observes(merged.seen))
    priors, reg, shrinkage = check_gda_options(
        covariance, options["priors"], options["reg"], options["shrinkage"],
        options["unbiased"], classes, options["var_smoothing"], options["tol"])
    m = diagonal_moments(ac, covariance, options["unbiased"], classes, _dtype(X), None)
    return params_from_moments(m, covariance, priors, reg, shrinkage, options["unbiased"],
                               var_smoothing=options["var_smoothing"], tol=options["tol"],
                               feature_variance=observed_variance(ac))


def fit_gaussian_nb_missing(X, y, w, classes, priors, var_smoothing, split_every):
    """:func:`fastgen.dask.fit_gaussian_nb` with NaN as missing values: ε from the
    variance of each feature's observed entries (unweighted, as in memory)."""
    merged = _reduce(X, y, w, classes, _block_gaussian, _merge_gaussian, split_every,
                     w is not None)
    ac = merged.stats
    check_available(ac.counts, ac.observed, classes, _observes(merged.seen))
    moments = ClassMoments(classes, ac.counts, ac.means,
                           ac.sumsq * (ac.counts[:, None] / ac.observed), "diagonal",
                           _dtype(X), None)
    floor = observed_variance(merged.plain if w is not None else ac)
    return gaussian_params(moments, priors, var_smoothing, floor)


def fit_bernoulli_nb_missing(X, y, w, classes, options, binarize, split_every):
    """:func:`fastgen.dask.fit_bernoulli_nb` with NaN as missing values: F_kj and N_kj
    over the observed entries (N_kj in N_k's place)."""
    alpha = check_alpha(options["alpha"])
    binarize = None if binarize is None else check_scalar(binarize, "binarize")
    merged = _reduce(X, y, w, classes, _block_bernoulli, _merge_bernoulli, split_every,
                     binarize)
    cc, fc, observed = merged.stats
    refuse_unobserved(observed, cc, classes, _observes(merged.seen))
    return bernoulli_params(classes, cc, fc, alpha, binarize, options["fit_prior"],
                            options["class_prior"], np.dtype(_dtype(X)), None,
                            observed_count=observed)


def _block_categorical(X, y, w, classes, offsets):
    if X.shape[0] == 0:
        return None
    Xnan = validated_with_nan(X)
    codes = _codes(y, classes)
    w = np.empty(0) if w is None else np.asarray(w, dtype=np.float64)
    K = classes.shape[0]
    cc = weighted_class_count(codes, w, K)
    counts = observed_category_counts(Xnan, filled(Xnan), codes, w, K, offsets, cc)
    return _Block((cc, counts), _seen(Xnan, codes, K), None)


def fit_categorical_nb_missing(X, y, w, classes, alpha, min_categories, split_every):
    """:func:`fastgen.dask.fit_categorical_nb` with NaN as missing codes: the tables'
    layout over X with NaN read as 0 (as in memory), then N_kjc over the observed
    entries of every block."""
    alpha = check_alpha(alpha)
    n_cat = category_widths_over_blocks(X, row_blocks(X, y, w), min_categories,
                                        split_every, missing=True)
    offsets = category_offsets(n_cat)
    merged = _reduce(X, y, w, classes, _block_categorical, _merge_bernoulli, split_every,
                     offsets)
    cc, counts = merged.stats
    refuse_unobserved(np.add.reduceat(counts, offsets[:-1], axis=1), cc, classes,
                      _observes(merged.seen))
    return categorical_params(classes, cc, counts, n_cat, offsets, alpha, True, None,
                              np.dtype(_dtype(X)), None)

"""Naive Bayes with unlabelled rows, by EM (Nigam, McCallum, Thrun & Mitchell 2000).

The loop is :mod:`fastgen._em`'s.  The labelled rows enter as the hard counts of the
labelled-only fit (its ``class_count`` and ``feature_count`` / ``category_count``, or
its diagonal class moments); each E-step gives the posteriors r_ik of the unlabelled
rows under the current model, and the M-step adds their expected counts, weighted
λ·r_ik (:mod:`fastgen.stats.soft`), then builds the params with the fit's own α,
priors and variance floor.  With α > 0 the smoothed estimate is the posterior mode
under a Dirichlet(α + 1) prior, so the objective EM raises is the observed-data
log-likelihood plus α Σ log θ (Bernoulli: α Σ (log p + log(1 − p))).

Complement naive Bayes has no generative likelihood, so no E-step: it takes no
unlabelled rows.
"""

from __future__ import annotations

import numpy as np

from .._em import (
    NB_COLLAPSE_ADVICE,
    check_unlabeled,
    collapse_guard,
    marginal_score,
    record_em,
    unlabelled_em,
)
from .._validation import feature_names_of, is_sparse
from ..gda.small import marginal_scores
from ..stats.available import filled, merge_available
from ..stats.feature_counts import check_binary_values, fit_inputs
from ..stats.missing import has_nan
from ..stats.moments import merge_moments
from ..stats.soft import (
    soft_available_moments,
    soft_binary_counts_observed,
    soft_category_counts,
    soft_category_counts_observed,
    soft_counts,
    soft_moments,
)

__all__ = ["EMRows", "unlabelled_rows", "unlabelled_moment_rows", "gaussian_em",
           "discrete_em", "categorical_em", "refuse_unlabeled", "dirichlet_log_prior",
           "gaussian_incomplete_em", "bernoulli_incomplete_em"]


class EMRows:
    """The checked rows of an EM fit: labelled X, its class codes and weights (empty
    for unit weights), the unlabelled rows U, and the EM options."""

    def __init__(self, X, codes, w, U, em):
        self.X, self.codes, self.w, self.U, self.em = X, codes, w, U, em


def unlabelled_rows(X, y, sample_weight, unlabeled, em, *, allow_sparse=True, names=None,
                    allow_nan=False):
    """:class:`EMRows` of a count model's fit, or None when it needs no EM (no
    unlabelled rows, none after the checks, or λ = 0): then the fit is the one without
    them.  X is checked here (again, where the caller checked it: ``names`` are then
    the column names of the caller's X), U against it, before any pass over the data;
    ``allow_nan``: NaN in U marks missing values (``nan_policy="marginalize"``)."""
    if unlabeled is None:
        return None
    if names is None:
        names = feature_names_of(X)
    X, _, codes, w = fit_inputs(X, y, sample_weight, allow_sparse=allow_sparse)
    U = check_unlabeled(unlabeled, X, allow_sparse=allow_sparse, feature_names=names,
                        allow_nan=allow_nan)
    if U is None or not em.weight:
        return None
    return EMRows(X, codes, w, U, em)


def unlabelled_moment_rows(rows, unlabeled, em, *, allow_nan=False):
    """The same for the Gaussian model, whose labelled rows are checked
    :class:`~fastgen.stats.ClassRows` (host X only)."""
    if unlabeled is None:
        return None
    if rows.on_device:
        raise ValueError("unlabeled rows need host X; fit on the host (numpy) arrays")
    U = check_unlabeled(unlabeled, rows.X, feature_names=rows.feature_names,
                        allow_nan=allow_nan)
    if U is None or not em.weight:
        return None
    return EMRows(rows.X, rows.codes, rows.weights, U, em)


def refuse_unlabeled(unlabeled, model):
    """The clear error of a model that takes no unlabelled rows."""
    if unlabeled is not None:
        raise ValueError(
            f"{model} takes no unlabeled rows: it has no generative likelihood p(x | y) "
            f"whose posteriors could label them (EM); use multinomial naive Bayes "
            f"(fit_multinomial_nb) or another generative model with unlabeled=")


def gaussian_em(start, rows, em_rows, build, monotone=False):
    """EM of Gaussian naive Bayes: diagonal class moments of the labelled rows merged
    with the unlabelled rows' soft moments, ``build(moments)`` the params; the
    per-class variances are guarded against collapse
    (:func:`fastgen._em.collapse_guard`); ``monotone``: no variance floor."""
    labelled = rows.moments("diagonal")
    U = em_rows.U
    result = unlabelled_em(
        start, em_rows.X, em_rows.codes, em_rows.w, U, em_rows.em,
        soft_statistics=lambda R: soft_moments(U, R, labelled.classes, kind="diagonal",
                                               feature_names=labelled.feature_names),
        merge=lambda soft: merge_moments(labelled, soft), build=build,
        guard=collapse_guard(start, lambda p: np.log(p.variances.astype(np.float64)).sum(
            axis=1), NB_COLLAPSE_ADVICE), monotone=monotone)
    return record_em(result)


def gaussian_incomplete_em(start, em_rows, labelled, build, monotone=False):
    """EM of Gaussian naive Bayes where the labelled rows or U hold NaN: the labelled
    rows' available-case statistics ``labelled`` merged with U's under the memberships
    λ·r_ik (:func:`fastgen.stats.soft.soft_available_moments`: per feature, the rows
    that observe it), ``build(statistics)`` the params; each row scored by the marginal
    of its observed features; the variances guarded against collapse."""
    U = em_rows.U
    result = unlabelled_em(
        start, em_rows.X, em_rows.codes, em_rows.w, U, em_rows.em,
        soft_statistics=lambda R: soft_available_moments(U, R),
        merge=lambda soft: merge_available(labelled, soft), build=build,
        guard=collapse_guard(start, lambda p: np.log(p.variances.astype(np.float64)).sum(
            axis=1), NB_COLLAPSE_ADVICE), monotone=monotone,
        score=marginal_score(em_rows.X, U, small=marginal_scores))
    return record_em(result)


def bernoulli_incomplete_em(start, em_rows, labelled, build, *, binarize=None):
    """EM of Bernoulli naive Bayes where the labelled rows or U hold NaN: the labelled
    (N_k, F_kj, N_kj) ``labelled`` plus U's under the memberships λ·r_ik, over the
    observed entries (:func:`fastgen.stats.soft.soft_binary_counts_observed`),
    ``build(N_k, F_kj, N_kj)`` the params; each row scored by the marginal of its
    observed features.  ``binarize`` None: U must be 0/1 where observed."""
    U = em_rows.U
    if binarize is None:
        check_binary_values(filled(U), name="unlabeled")
    cc0, fc0, obs0 = labelled
    result = unlabelled_em(
        start, em_rows.X, em_rows.codes, em_rows.w, U, em_rows.em,
        soft_statistics=lambda R: soft_binary_counts_observed(U, R, binarize=binarize),
        merge=lambda soft: (cc0 + soft[0], fc0 + soft[1], obs0 + soft[2]),
        build=lambda counts: build(*counts),
        log_prior=dirichlet_log_prior(start), score=marginal_score(em_rows.X, U))
    return record_em(result)


def dirichlet_log_prior(start):
    """The objective's prior term of the count models like ``start``: α Σ log θ over
    their log tables (Bernoulli: log p and log(1 − p)), the log density (up to a
    constant) of the Dirichlet(α + 1) prior whose posterior mode is the smoothed
    estimate."""
    tables = [t for t in ("feature_log_prob", "neg_feature_log_prob")
              if hasattr(start, t)]
    alpha = start.alpha
    return lambda p: alpha * float(sum(np.sum(getattr(p, t), dtype=np.float64)
                                       for t in tables))


def discrete_em(start, em_rows, build, *, binarize=None, nonneg=False, binary=False):
    """EM of the Bernoulli and multinomial models: N_k and N_kj (F_kj) of the labelled
    rows (``start``'s counts) plus the unlabelled rows' λ·r_ik-weighted counts,
    ``build(N_k, N_kj)`` the params.  ``nonneg``: U must hold counts; ``binary``: U must
    be 0/1 (``binarize=None``); ``binarize``: the Bernoulli threshold."""
    U = em_rows.U
    if nonneg:
        values = U.data if is_sparse(U) else U
        if values.size and values.min() < 0:
            raise ValueError(f"unlabeled contains the negative value {float(values.min()):g}: "
                             f"this model needs non-negative feature counts")
    if binary:
        check_binary_values(U, name="unlabeled")
    elif binarize is not None and is_sparse(U) and binarize < 0:
        raise ValueError(f"binarize={binarize} < 0 would turn the implicit zeros of sparse "
                         f"unlabeled rows into ones; pass a dense array")
    cc0, fc0 = start.class_count, start.feature_count
    result = unlabelled_em(
        start, em_rows.X, em_rows.codes, em_rows.w, U, em_rows.em,
        soft_statistics=lambda R: soft_counts(U, R, binarize=binarize),
        merge=lambda soft: (cc0 + soft[0], fc0 + soft[1]),
        build=lambda counts: build(*counts),
        log_prior=dirichlet_log_prior(start))
    return record_em(result)


def categorical_em(start, em_rows, build):
    """EM of categorical naive Bayes: N_kjc of the labelled rows plus the unlabelled
    rows' λ·r_ik-weighted category counts, ``build(N_k, N_kjc)`` the params.  With NaN
    (missing codes) in the labelled rows ``em_rows.X`` or in U, each row is scored by
    the marginal of its observed features and U's counts skip the missing entries."""
    U = em_rows.U
    cc0, counts0 = start.class_count, start.category_count
    offsets = start.offsets
    incomplete_u = has_nan(U)
    counted = soft_category_counts_observed if incomplete_u else soft_category_counts
    score = None
    if incomplete_u or has_nan(em_rows.X):  # the marginal of the observed features
        score = marginal_score(em_rows.X, U)
    result = unlabelled_em(
        start, em_rows.X, em_rows.codes, em_rows.w, U, em_rows.em,
        soft_statistics=lambda R: (R.sum(axis=0), counted(U, R, offsets)),
        merge=lambda soft: (cc0 + soft[0], counts0 + soft[1]),
        build=lambda counts: build(*counts),
        log_prior=dirichlet_log_prior(start), score=score)
    return record_em(result)

"""EM over unlabelled rows on Dask arrays: one pass over the blocks per iteration.

The loop is the in-memory one (:func:`fastgen._em.run_em`); only the E-step differs:
each iteration is one delayed graph over the row blocks of the labelled X (their
joint log-likelihood under the current params) and of the unlabelled U (their log
marginal likelihood, and their expected statistics under the posteriors: soft class
moments or counts, :mod:`fastgen.stats.soft`), reduced in a tree by the same exact
merges as the fits without EM.  The M-step merges the summed expected statistics with
the labelled statistics, taken once, and builds the params on the client with the
in-memory builders, so the result equals the in-memory EM (to rounding).
"""

from __future__ import annotations

import dataclasses
import functools

import dask.array as da
import numpy as np

from .. import joint_log_likelihood
from .._em import (
    NB_COLLAPSE_ADVICE,
    EMStop,
    check_em_options,
    collapse_guard,
    labelled_log_likelihood,
    log_marginal_and_posteriors,
    maximising_m_step,
    record_em,
    run_em,
)
from ..gda import SingularCovarianceError, gda_from_moments
from ..naive_bayes import nb_from_counts
from ..naive_bayes.em import dirichlet_log_prior
from ..stats import merge_moments
from ..stats.soft import soft_counts, soft_moments
from .blocks import SPLIT_EVERY, as_dask_X, map_rows, row_blocks, tree_reduce

__all__ = ["check_unlabeled_blocks", "gda_em_on_blocks", "nb_em_on_blocks"]


def check_unlabeled_blocks(unlabeled, X, options):
    """The unlabelled rows as a Dask array with X's width, and the checked EM options;
    (None, options) when there are none or λ = 0 (the fit without EM)."""
    em = check_em_options(*options)
    if unlabeled is None:
        return None, em
    if not isinstance(unlabeled, da.Array):
        raise ValueError(f"unlabeled must be a dask.array.Array like X; got "
                         f"{type(unlabeled).__name__}")
    U = as_dask_X(unlabeled)
    if U.shape[1] != X.shape[1]:
        raise ValueError(f"unlabeled has {U.shape[1]} features, but X has {X.shape[1]}")
    if U.shape[0] == 0 or not em.weight:
        return None, em
    return U, em


# ------------------------------------------------------------------ per-block E-step


def _labelled_part(X, y, w, params):
    """(None, Σ w_i jll[i, y_i]) of one labelled block."""
    if X.shape[0] == 0:
        return None
    codes = np.searchsorted(params.classes, np.asarray(y))
    weights = np.empty(0) if w is None else np.asarray(w, dtype=np.float64)
    return None, labelled_log_likelihood(joint_log_likelihood(params, X), codes, weights)


def _unlabelled_part(U, _y, _w, params, weight, statistics):
    """(expected statistics, λ Σ log Σ_k p(x, k)) of one unlabelled block."""
    if U.shape[0] == 0:
        return None
    try:
        jll = joint_log_likelihood(params, U)
    except ValueError as exc:  # scoring names its input X; here it is the unlabelled rows
        msg = str(exc)
        if not msg.startswith("X "):
            raise
        raise ValueError("unlabeled " + msg[2:]) from None
    marginal, R = log_marginal_and_posteriors(jll)
    return statistics(U, weight * R, params), weight * marginal


def _moments_of(U, R, params, kind):
    dense = np.ascontiguousarray(U, dtype=params.dtype)
    return soft_moments(dense, R, params.classes, kind=kind,
                        feature_names=params.feature_names)


def _counts_of(U, R, params, binarize):
    return soft_counts(U, R, binarize=binarize)


def _add_counts(a, b):
    return a[0] + b[0], a[1] + b[1]


def _merge_parts(merge, a, b):
    stats = b[0] if a[0] is None else a[0] if b[0] is None else merge(a[0], b[0])
    return stats, a[1] + b[1]


def _expect(X, blocks, U, params, em, statistics, merge, split_every):
    """One pass over the blocks of X and U: (summed expected statistics, objective)."""
    parts = map_rows(_labelled_part, X, blocks, params)
    parts += map_rows(_unlabelled_part, U, [(ub, None, None) for ub in
                                            U.to_delayed().ravel()],
                      params, em.weight, statistics)
    return tree_reduce(parts, functools.partial(_merge_parts, merge), split_every).compute()


def _loop(start, X, blocks, U, em, statistics, merge, build, log_prior, guard,
          split_every, labelled_weight, monotone=True):
    def expect(params):
        stats, objective = _expect(X, blocks, U, params, em, statistics, merge,
                                   split_every)
        return stats, objective + (log_prior(params) if log_prior else 0.0)

    def maximise(stats):
        params = build(stats)
        if guard is not None:
            guard(params)
        return params

    total = float(labelled_weight) + em.weight * U.shape[0]
    return record_em(run_em(start, expect, maximise, em, total_weight=total,
                            monotone=monotone, dtype=start.dtype))


# ---------------------------------------------------------------------- the families


def gda_em_on_blocks(start, moments, X, y, w, U, em, covariance, options,
                     split_every=SPLIT_EVERY):
    """:func:`fastgen.dask.fit_gda` with unlabelled rows: EM from ``start`` (the fit of
    the labelled ``moments``), ``options`` the keywords of
    :func:`fastgen.gda_from_moments`."""
    def build(soft):
        try:
            return gda_from_moments(merge_moments(moments, soft), covariance, **options)
        except SingularCovarianceError as exc:
            raise EMStop(str(exc)) from None

    guard = None
    if covariance in ("per_class", "diagonal"):
        guard = collapse_guard(start, lambda p: p.log_det)
    statistics = functools.partial(_moments_of, kind=moments.kind)
    return _loop(start, X, row_blocks(X, y, w), U, em, statistics, merge_moments, build,
                 None, guard, split_every, moments.counts.sum(),
                 maximising_m_step(covariance, options["reg"], options["shrinkage"],
                                   options["unbiased"], options["var_smoothing"]))


def nb_em_on_blocks(start, counts, X, y, w, U, em, options, split_every=SPLIT_EVERY):
    """The Dask naive Bayes fits with unlabelled rows: EM from ``start`` (the params of
    the labelled ``counts``, :class:`fastgen.NBCounts`), ``options`` the keywords of
    :func:`fastgen.nb_from_counts`; the objective and guard of the in-memory fits
    (:mod:`fastgen.naive_bayes.em`)."""
    if counts.model == "gaussian":
        statistics = functools.partial(_moments_of, kind="diagonal")

        def build(soft):
            merged = merge_moments(counts.moments, soft)
            return nb_from_counts(dataclasses.replace(
                counts, class_count=merged.counts.copy(), moments=merged,
                feature_moments=None), **options)

        guard = collapse_guard(start, lambda p: np.log(p.variances.astype(
            np.float64)).sum(axis=1), NB_COLLAPSE_ADVICE)
        return _loop(start, X, row_blocks(X, y, w), U, em, statistics, merge_moments,
                     build, None, guard, split_every, counts.class_count.sum(),
                     not options["var_smoothing"])
    binarize = counts.binarize if counts.model == "bernoulli" else None
    statistics = functools.partial(_counts_of, binarize=binarize)

    def build(soft):
        return nb_from_counts(dataclasses.replace(
            counts, class_count=counts.class_count + soft[0],
            feature_count=counts.feature_count + soft[1]), **options)

    return _loop(start, X, row_blocks(X, y, w), U, em, statistics, _add_counts, build,
                 dirichlet_log_prior(start), None, split_every, counts.class_count.sum())


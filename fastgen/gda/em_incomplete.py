"""Gaussian discriminant analysis from unlabelled rows with missing features, by EM.

Both kinds of incomplete data at once (``unlabeled=`` and ``nan_policy="marginalize"``,
NaN in X, in the unlabelled rows U, or both), in the one loop of :mod:`fastgen._em`.
The E-step scores each unlabelled row by the marginal likelihood of its observed
features, r_ik ∝ π_k N(u_o; μ_k,o, Σ_k,oo) (the scoring path of
``nan_policy="marginalize"``); the objective is the observed-data log-likelihood

    ℓ = Σ_labelled w_i [log π_{y_i} + log N(x_io; μ_{y_i},o, Σ_{y_i},oo)]
        + λ Σ_unlabelled log Σ_k π_k N(u_o; μ_k,o, Σ_k,oo),

which EM never lowers.  The M-step:

* diagonal kinds ("diagonal", "pooled_diagonal"): the likelihood factorises over the
  features, so the available-case statistics with fractional memberships are the
  expected statistics: per class and feature, N_kj = Σ_i r_ik o_ij, the mean and the
  sum of squares over the rows that observe j (:func:`fastgen.stats.soft.
  soft_available_moments`), merged with the labelled rows' available-case statistics,
  and built with the fit's own options (priors, ``reg``, shrinkage, variance floor),
  as the EM over complete unlabelled rows does;
* "pooled" and "per_class": the joint EM over the missing labels and the missing
  values (Ghahramani & Jordan 1994): for every row and class k, the weight r_ik (the
  sample weight for the labelled row's class), the conditional mean
  x̂_ik = E[x_i | x_io, y=k] and its conditional covariance C_ik, which is added to the
  second moment (:func:`fastgen.stats.missing.conditional_moments`); the pooled
  covariance shares the scatter of every class.  EM starts from the labelled-only
  maximum-likelihood fit (itself the missing-feature EM of :mod:`fastgen.gda.em`
  where X has NaN) and runs on the maximum-likelihood estimates; ``reg``, a float
  shrinkage and ``unbiased`` apply once, to the converged covariance, as in the
  missing-feature EM.

Per-class covariances (and variances) are guarded against collapse as with complete
unlabelled rows (:func:`fastgen._em.collapse_guard`).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .._em import (
    EMStop,
    collapse_guard,
    log_marginal_and_posteriors,
    marginal_score,
    maximising_m_step,
    record_em,
    run_em,
    unlabelled_em,
)
from .._runtime import blas_single_thread
from .._validation import check_sample_weight, check_y
from ..stats.available import available_case, merge_available, pairwise_covariance
from ..stats.missing import conditional_moments, missing_patterns
from ..stats.moments import ClassMoments, merge_moments
from ..stats.soft import soft_available_moments
from .covariance import params_from_moments
from .em import diagonal_moments, em_gaussian, warn_unidentified
from .params import SingularCovarianceError
from .small import marginal_scores

__all__ = ["fit_gda_incomplete"]


@dataclasses.dataclass(frozen=True)
class _State:
    """The full kinds' EM state: the maximum-likelihood params and the moments they
    were built from (the final params apply ``reg`` and shrinkage to the latter)."""

    params: object
    moments: ClassMoments


def fit_gda_incomplete(X, y, U, covariance, sample_weight, unbiased, var_smoothing, tol,
                       em, names, check_options):
    """:func:`fastgen.fit_gda` of validated X and unlabelled rows U (X's dtype, dense),
    either or both with NaN entries; ``em`` the :class:`~fastgen._em.EMOptions`,
    ``check_options(classes)`` the checked (priors, reg, shrinkage)."""
    classes, codes = check_y(y, X.shape[0])
    w = check_sample_weight(sample_weight, X.shape[0])
    priors, reg, shrinkage = check_options(classes)
    if isinstance(shrinkage, str):
        raise ValueError(
            f"shrinkage={shrinkage!r} with NaN in X or in unlabeled: the estimated "
            f"intensity needs the fourth moments of the complete data, which EM does "
            f"not give; pass a float shrinkage or None")
    K = classes.shape[0]
    missing = np.isnan(X)
    ac = available_case(X, missing, codes, w, K, classes)
    score = marginal_score(X, U, small=marginal_scores)
    dtype = str(X.dtype)
    with blas_single_thread():
        if covariance in ("diagonal", "pooled_diagonal"):
            return _diagonal_em(X, codes, w, U, ac, covariance, classes, priors, reg,
                                shrinkage, unbiased, var_smoothing, tol, em, names, score,
                                dtype)
        return _full_em(X, codes, w, U, ac, missing, covariance, classes, priors, reg,
                        shrinkage, unbiased, tol, em, names, score, dtype)


def _diagonal_em(X, codes, w, U, ac, covariance, classes, priors, reg, shrinkage,
                 unbiased, var_smoothing, tol, em, names, score, dtype):
    """The diagonal kinds: :func:`fastgen._em.unlabelled_em` with available-case
    statistics, each M-step built with the fit's options."""
    def params_of(stats):
        m = diagonal_moments(stats, covariance, unbiased, classes, dtype, names)
        return params_from_moments(m, covariance, priors, reg, shrinkage, unbiased,
                                   var_smoothing=var_smoothing, tol=tol)

    def build(stats):
        try:
            return params_of(stats)
        except SingularCovarianceError as exc:
            raise EMStop(str(exc)) from None

    start = params_of(ac)  # the labelled-only fit
    guard = collapse_guard(start, lambda p: p.log_det) if covariance == "diagonal" else None
    result = unlabelled_em(
        start, X, codes, w, U, em,
        soft_statistics=lambda R: soft_available_moments(U, R),
        merge=lambda soft: merge_available(ac, soft), build=build, guard=guard,
        monotone=maximising_m_step(covariance, reg, shrinkage, unbiased, var_smoothing),
        score=score)
    return record_em(result)


def _moments(classes, W, means, S, covariance, dtype, names):
    return ClassMoments(classes, W, means, S, covariance, dtype, names)


def _full_em(X, codes, w, U, ac, missing, covariance, classes, priors, reg, shrinkage,
             unbiased, tol, em, names, score, dtype):
    """The full kinds: the joint EM over missing labels and missing values, on the
    maximum-likelihood estimates; ``reg``, shrinkage and ``unbiased`` at the end."""
    K, d = ac.means.shape
    pooled = covariance == "pooled"
    missing_u = np.isnan(U)
    warn_unidentified(missing, codes, w, K, pooled, classes, shared=missing_u)
    n = X.shape[0]
    resp = np.zeros((n, K))
    resp[np.arange(n), codes] = w if w.shape[0] else 1.0
    X64 = X.astype(np.float64, copy=False)
    U64 = U.astype(np.float64, copy=False)
    pats_x, pats_u = missing_patterns(missing), missing_patterns(missing_u)

    def mle(m):
        params = params_from_moments(m, covariance, priors, 0.0, None, False, tol=tol)
        if params.rank < d:
            raise SingularCovarianceError(
                f"the pooled covariance is singular (rank {params.rank} < {d}): the "
                f"observed features of a row then have no marginal density; drop the "
                f"constant or collinear features")
        return params

    # the labelled-only maximum-likelihood fit: the missing-feature EM (one iteration
    # where X is complete: its start is then the complete-data estimate)
    start_cov = pairwise_covariance(ac, codes, w, missing, K, pooled)
    lab = em_gaussian(X64, pats_x, resp, ac.means, start_cov, pooled, classes, 0.0,
                      em.tol, em.max_iter)
    scale = lab.counts.sum() if pooled else lab.counts[:, None, None]
    m0 = _moments(classes, lab.counts, lab.means, lab.covariance * scale, covariance,
                  dtype, names)
    start = _State(mle(m0), m0)
    guard = collapse_guard(start.params, lambda p: p.log_det) if not pooled else None
    lam = em.weight

    def expect(state):
        p = state.params
        means = p.means.astype(np.float64)
        cov = p.covariance.astype(np.float64)
        with np.errstate(divide="ignore"):
            log_prior = np.log(p.priors.astype(np.float64))
        W, mu, S, loglik = conditional_moments(X64, pats_x, resp, means, cov, pooled)
        has = W > 0
        objective = loglik + float(W[has] @ log_prior[has])
        marginal, R = log_marginal_and_posteriors(score(p, U))
        objective += lam * marginal
        soft = conditional_moments(U64, pats_u, lam * R, means, cov, pooled)
        return ((W, mu, S), soft[:3]), objective

    def maximise(stats):
        (Wl, mul, Sl), (Wu, muu, Su) = stats
        m = merge_moments(_moments(classes, Wl, mul, Sl, covariance, dtype, names),
                          _moments(classes, Wu, muu, Su, covariance, dtype, names))
        try:
            params = mle(m)
        except SingularCovarianceError as exc:
            raise EMStop(str(exc)) from None
        if guard is not None:
            guard(params)
        return _State(params, m)

    total = (float(w.sum()) if w.shape[0] else n) + lam * U.shape[0]
    result = run_em(start, expect, maximise, em, total_weight=total, monotone=True,
                    dtype=X.dtype)
    final = params_from_moments(result.params.moments, covariance, priors, reg, shrinkage,
                                unbiased, tol=tol)
    return record_em(dataclasses.replace(result, params=final))

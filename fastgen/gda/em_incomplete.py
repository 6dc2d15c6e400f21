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
    observed_weight,
    record_em,
    run_em,
    unlabelled_em,
)
from .._runtime import blas_single_thread
from .._validation import check_sample_weight, check_y
from ..stats.available import (
    available_case,
    merge_available,
    observed_variance,
    pairwise_covariance,
)
from ..stats.missing import conditional_moments, missing_patterns
from ..stats.moments import ClassMoments, merge_moments
from ..stats.soft import soft_available_moments
from .covariance import params_from_moments
from .em import diagonal_moments, em_gaussian, simpler_kinds, warn_unidentified
from .params import SingularCovarianceError
from .small import marginal_scores

__all__ = ["fit_gda_incomplete"]


@dataclasses.dataclass(frozen=True)
class _State:
    """The full kinds' EM state: the maximum-likelihood params and the moments they
    were built from (the final params apply ``reg`` and shrinkage to the latter)."""

    params: object
    moments: ClassMoments


@dataclasses.dataclass(frozen=True)
class _Problem:
    """The checked inputs and options of one fit: labelled rows X (NaN marks a missing
    value, ``missing`` its mask), their class codes and weights (empty: unit), the
    unlabelled rows U, the labelled rows' available-case statistics ``ac``, the fit's
    options, the EM options and the E-step's ``score``."""

    X: np.ndarray
    missing: np.ndarray
    codes: np.ndarray
    w: np.ndarray
    U: np.ndarray
    ac: object
    covariance: str
    classes: np.ndarray
    priors: object
    reg: float
    shrinkage: object
    unbiased: bool
    var_smoothing: float
    tol: float
    em: object
    names: object
    score: object

    @property
    def dtype(self):
        return str(self.X.dtype)

    def moments(self, W, means, S):
        """ClassMoments of this fit's kind (scatter ``S``) for the classes."""
        return ClassMoments(self.classes, W, means, S, self.covariance, self.dtype,
                            self.names)


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
    missing = np.isnan(X)
    ac = available_case(X, missing, codes, w, classes.shape[0], classes)
    fit = _Problem(X, missing, codes, w, U, ac, covariance, classes, priors, reg,
                   shrinkage, unbiased, var_smoothing, tol, em, names,
                   marginal_score(X, U, small=marginal_scores))
    with blas_single_thread():
        if covariance in ("diagonal", "pooled_diagonal"):
            return _diagonal_em(fit)
        return _full_em(fit)


def _diagonal_em(fit: _Problem):
    """The diagonal kinds: :func:`fastgen._em.unlabelled_em` with available-case
    statistics, each M-step built with the fit's options."""
    def params_of(stats):
        m = diagonal_moments(stats, fit.covariance, fit.unbiased, fit.classes, fit.dtype,
                             fit.names)
        return params_from_moments(m, fit.covariance, fit.priors, fit.reg, fit.shrinkage,
                                   fit.unbiased, var_smoothing=fit.var_smoothing,
                                   tol=fit.tol, feature_variance=observed_variance(stats))

    def build(stats):
        try:
            return params_of(stats)
        except SingularCovarianceError as exc:
            raise EMStop(str(exc)) from None

    start = params_of(fit.ac)  # the labelled-only fit
    guard = None
    if fit.covariance == "diagonal":
        guard = collapse_guard(start, lambda p: p.log_det)
    U = fit.U
    result = unlabelled_em(
        start, fit.X, fit.codes, fit.w, U, fit.em,
        soft_statistics=lambda R: soft_available_moments(U, R),
        merge=lambda soft: merge_available(fit.ac, soft), build=build, guard=guard,
        monotone=maximising_m_step(fit.covariance, fit.reg, fit.shrinkage, fit.unbiased,
                                   fit.var_smoothing),
        score=fit.score)
    return record_em(result)


def _full_em(fit: _Problem):
    """The full kinds: the joint EM over missing labels and missing values, on the
    maximum-likelihood estimates; ``reg``, shrinkage and ``unbiased`` at the end."""
    X, U, codes, w, ac, em = fit.X, fit.U, fit.codes, fit.w, fit.ac, fit.em
    K, d = ac.means.shape
    pooled = fit.covariance == "pooled"
    missing_u = np.isnan(U)
    warn_unidentified(fit.missing, codes, w, K, pooled, fit.classes, shared=missing_u)
    n = X.shape[0]
    resp = np.zeros((n, K))
    resp[np.arange(n), codes] = w if w.shape[0] else 1.0
    # a labelled row with no observed value tells its class's prior only: it is left
    # out of the E-steps (which would return the current estimate for it) and its
    # weight, ``empty`` (K,), added to the class weights of every M-step
    seen = ~fit.missing.all(axis=1)
    empty = None
    if not seen.all():
        empty = resp[~seen].sum(axis=0)
        resp, X, missing_x = resp[seen], X[seen], fit.missing[seen]
    else:
        missing_x = fit.missing
    X64 = X.astype(np.float64, copy=False)
    U64 = U.astype(np.float64, copy=False)
    pats_x, pats_u = missing_patterns(missing_x), missing_patterns(missing_u)

    def weighed(m):
        """``m`` with the weight of the labelled rows without values in its class
        weights: the priors count them, the means and covariances (scatter ÷ weight)
        stay."""
        if empty is None:
            return m
        W = m.counts + empty
        scale = W.sum() / m.counts.sum() if pooled else (W / m.counts)[:, None, None]
        return ClassMoments(m.classes, W, m.means, m.scatter * scale, m.kind, m.dtype,
                            m.feature_names)

    def mle(m):
        params = params_from_moments(m, fit.covariance, fit.priors, 0.0, None, False,
                                     tol=fit.tol)
        if params.rank < d:
            raise SingularCovarianceError(
                f"the pooled covariance is singular (rank {params.rank} < {d}): a model "
                f"with it has no marginal density over any subset of the features, "
                f"which EM needs for the rows with NaN and the unlabelled rows; drop "
                f"the constant or collinear features")
        return params

    # the labelled-only maximum-likelihood fit: the missing-feature EM (one iteration
    # where X is complete: its start is then the complete-data estimate)
    start_cov = pairwise_covariance(ac, codes, w, fit.missing, K, pooled)
    lab = em_gaussian(X64, pats_x, resp, ac.means, start_cov, pooled, fit.classes, 0.0,
                      em.tol, em.max_iter)
    scale = lab.counts.sum() if pooled else lab.counts[:, None, None]
    m0 = weighed(fit.moments(lab.counts, lab.means, lab.covariance * scale))
    try:
        start = _State(mle(m0), m0)
    except SingularCovarianceError as exc:
        # reg and shrinkage apply to the converged covariance: they cannot rescue a start
        why = str(exc).split("; pass reg")[0].split("; drop")[0]
        raise SingularCovarianceError(
            f"EM with unlabelled rows and missing features starts from the labelled "
            f"rows' maximum-likelihood fit, which is singular: {why}; reg and shrinkage "
            f"apply only after EM, so they cannot help here: use "
            f"{simpler_kinds(fit.covariance)}, label more rows, or drop "
            f"features") from None
    guard = collapse_guard(start.params, lambda p: p.log_det) if not pooled else None
    lam = em.weight

    def expect(state):
        p = state.params
        means = p.means.astype(np.float64)
        cov = p.covariance.astype(np.float64)
        with np.errstate(divide="ignore"):
            log_prior = np.log(p.priors.astype(np.float64))
        W, mu, S, loglik = conditional_moments(X64, pats_x, resp, means, cov, pooled)
        Wp = W if empty is None else W + empty
        has = Wp > 0
        objective = loglik + float(Wp[has] @ log_prior[has])
        marginal, R = log_marginal_and_posteriors(fit.score(p, U))
        objective += lam * marginal
        soft = conditional_moments(U64, pats_u, lam * R, means, cov, pooled)
        return ((W, mu, S), soft[:3]), objective

    def maximise(stats):
        (Wl, mul, Sl), (Wu, muu, Su) = stats
        m = weighed(merge_moments(fit.moments(Wl, mul, Sl), fit.moments(Wu, muu, Su)))
        try:
            params = mle(m)
        except SingularCovarianceError as exc:
            raise EMStop(str(exc)) from None
        if guard is not None:
            guard(params)
        return _State(params, m)

    total = observed_weight(fit.X.shape[0], fit.missing, w) + lam * U.shape[0]
    result = run_em(start, expect, maximise, em, total_weight=total, monotone=True,
                    dtype=X.dtype)
    final = params_from_moments(result.params.moments, fit.covariance, fit.priors,
                                fit.reg, fit.shrinkage, fit.unbiased, tol=fit.tol)
    return record_em(dataclasses.replace(result, params=final))

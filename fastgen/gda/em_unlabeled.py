"""Gaussian discriminant analysis with unlabelled rows, by EM (:mod:`fastgen._em`).

The labelled rows give their class moments once (hard counts); each E-step gives the
posteriors r_ik of the unlabelled rows under the current model, the M-step merges
their soft moments (:func:`fastgen.stats.soft.soft_moments`, weights λ·r_ik) with the
labelled moments (:func:`fastgen.merge_moments`) and builds the params with the fit's
own options (priors, ``reg``, shrinkage, variance floor, rank rule).

Collapse guard.  With per-class covariances (and per-class variances) the model is a
Gaussian mixture whose likelihood is unbounded: a class whose covariance shrinks onto
a few unlabelled points gains without limit.  The labelled rows bound it from below,
Σ_k ⪰ (W_k^lab / W_k)·Σ_k^lab, since their scatter is part of every M-step's
scatter; that bound weakens as λ·(unlabelled rows) outgrows the labelled rows.  So
the fit stops, keeps the previous iteration and warns (``converged=False``) when an
M-step gives a class whose geometric-mean variance, exp((log|Σ_k|)/d), falls below
:data:`fastgen._em.COLLAPSE_RATIO` times that of the labelled-only fit, or a covariance that is
not positive definite.
"""

from __future__ import annotations

from .._em import EMStop, collapse_guard, maximising_m_step, record_em, unlabelled_em
from ..stats.moments import merge_moments
from ..stats.soft import soft_moments
from .covariance import params_from_moments
from .params import SCATTER_FOR, SingularCovarianceError

__all__ = ["gda_em"]


def gda_em(start, rows, U, covariance, options, em, fourth=None):
    """The EM fit of :func:`fastgen.fit_gda` with unlabelled rows ``U`` (checked dense
    host rows, X's dtype), from the labelled-only params ``start``.

    ``rows`` are the checked labelled rows, ``options`` the checked (priors, reg,
    shrinkage, unbiased, var_smoothing, tol), ``em`` the :class:`~fastgen._em.EMOptions`.
    """
    priors, reg, shrinkage, unbiased, var_smoothing, tol = options
    kind = SCATTER_FOR[covariance]
    labelled = rows.moments(kind)

    def build(m):
        try:
            return params_from_moments(m, covariance, priors, reg, shrinkage, unbiased,
                                       fourth, var_smoothing, tol)
        except SingularCovarianceError as exc:
            raise EMStop(str(exc)) from None

    guard = None
    if covariance in ("per_class", "diagonal"):
        guard = collapse_guard(start, lambda p: p.log_det)
    result = unlabelled_em(
        start, rows.X, rows.codes, rows.weights, U, em,
        soft_statistics=lambda R: soft_moments(U, R, labelled.classes, kind=kind,
                                               feature_names=labelled.feature_names),
        merge=lambda soft: merge_moments(labelled, soft), build=build, guard=guard,
        monotone=maximising_m_step(covariance, reg, shrinkage, unbiased, var_smoothing))
    return record_em(result)

r"""Whether the coefficients given to inference are the estimate for the data given.

Standard errors, tests and intervals describe an estimate: the maximum of the
(penalised) log-likelihood of the data it is computed on.  Given a model fitted on other
rows, other labels or other weights, the pass at the model's coefficients still
returns a full table, for a point that is not the maximum of these data.  The pass
forms the score g (the modified score U* for Firth's fits) and the information I, so
the distance of the coefficients from the optimum of these data costs one small solve:
the Newton decrement

.. math::

    \tfrac12\, g^\top I^{-1} g,

the log-likelihood the optimum is above the point given (to second order), whose
square root times √2 is that distance in standard errors (in the information's
metric).  A fit certifies its decrement ≤ tol (1e-8) and then takes the step that
squares it, and the decrement does not change with the columns' units or offsets, so
the point a fit returns reads about 1e-16 and one taken on other data reads of order
one or more (about q/2 for a random half of the rows).  Beyond
:data:`OPTIMUM_DISTANCE` standard errors, inference warns.

Imports: ``fastgen._warn`` and the sibling modules of ``fastgen.logistic``.
"""

from __future__ import annotations

import numpy as np

from ..._warn import warn
from ..params import ConvergenceWarning

__all__ = ["OPTIMUM_DISTANCE", "optimum_decrement", "check_at_optimum", "firth_score",
           "stored_rounding", "check_same_estimate"]

#: The largest distance, in standard errors (√(2·decrement)), at which the coefficients
#: given to inference count as the estimate for the data given: a tenth of a standard
#: error changes no conclusion a table supports, and it is far above what a converged
#: fit leaves (√(2·1e-8), then squared by its certifying step) and above rounding for
#: any column offset or unit float64 resolves (coefficients are float64 whatever X's
#: dtype; :func:`stored_rounding` bounds theirs).  Forgetting the weights of a fit,
#: dropping a tenth of its rows or fitting other labels moves the optimum by more.
OPTIMUM_DISTANCE = 0.1


def optimum_decrement(score, inverse, order):
    """½ gᵀ I⁻¹ g: ``score`` in the internal layout (flat k·p + j), ``inverse`` the
    inverse information in statsmodels' layout, ``order`` the permutation between
    them."""
    g = np.asarray(score, dtype=np.float64).ravel()[order]
    return max(0.5 * float(g @ (inverse @ g)), 0.0)


def stored_rounding(model, shift):
    """How far the stored coefficients may sit from the optimum by their rounding
    alone, per coefficient of the internal layout (m, p) of the frame the pass is taken
    in: ε of the coefficients' dtype times |β| (twice: the reference layout is a
    difference), and, where the frame is centred by ``shift``, the intercept's share
    of the slopes' rounding, Σ_j |δβ_j·m_j|, and of the user's intercept's own.  The
    coefficients are float64 (:class:`~fastgen.logistic.params.LogisticParams`
    converts float32 ones), so a wrong optimum is never excused as float32 rounding."""
    from .passes import reference_coef

    eps = float(np.finfo(np.asarray(model.coef).dtype).eps)
    E = 2.0 * eps * np.abs(reference_coef(model))
    if shift is not None and model.fit_intercept:
        E[:, -1] += E[:, :-1] @ np.abs(np.asarray(shift, dtype=np.float64))
    return E


def check_at_optimum(score, inverse, order, method, converged, information=None,
                     rounding=None):
    """Warn (:class:`~fastgen.logistic.params.ConvergenceWarning`) when the coefficients
    are more than :data:`OPTIMUM_DISTANCE` standard errors from the optimum of the data
    given (see the module docstring), or, where more, four times the distance the
    stored coefficients' ``rounding`` (:func:`stored_rounding`) allows in the metric of
    the ``information`` (internal layout); ``score`` None skips the check."""
    if score is None:
        return
    dec = optimum_decrement(score, inverse, order)
    dist = float(np.sqrt(2.0 * dec))
    bound = OPTIMUM_DISTANCE
    if rounding is not None and information is not None:
        e = np.abs(np.asarray(rounding, dtype=np.float64)).ravel()
        bound = max(bound, 4.0 * float(np.sqrt(max(e @ (np.abs(information) @ e), 0.0))))
    if not dist > bound:
        return
    which = "penalised log-likelihood l*" if method == "Firth" else "log-likelihood"
    cause = ("the fit did not converge; refit with a larger max_iter" if not converged
             else "pass the X, y and sample_weight the model was fitted on (the same rows, "
                  "labels and weights), or refit on these data")
    warn(f"logistic_inference: the model's coefficients are not the estimate for the "
         f"data given: the score of the {which} there is far from zero (Newton "
         f"decrement ½gᵀI⁻¹g = {dec:.3g}: the coefficients are about {dist:.3g} standard "
         f"errors from the optimum of these data, above {bound:.3g}), so the "
         f"standard errors, tests and intervals describe a point that is not the "
         f"estimate; {cause}", ConvergenceWarning)


def firth_score(data, codes, w, B, sums, n_classes):
    """Firth's modified score U* (flat, internal layout) at the reference-layout B from
    the pass's sums (one more pass, for the leverages), or None where the information
    is singular (the rank check then says so)."""
    from ..firth_multinomial import modified_score_at

    return modified_score_at(data, codes, w, np.ravel(B), sums.loglik,
                             np.ravel(sums.score), sums.information, sums.max_abs_eta,
                             n_classes)


def check_same_estimate(given, refit, cov, method, dtype=np.float64):
    """The check of :func:`check_at_optimum` for the fits whose inference refits on the
    data given (FLIC, FLAC: logistf's conventions): warn where the model's coefficients
    ``given`` are more than :data:`OPTIMUM_DISTANCE` standard errors (in the metric of
    ``cov``, their covariance) from the ``refit`` estimate, or four times the distance
    their rounding in ``dtype`` allows."""
    given = np.asarray(given, dtype=np.float64).ravel()
    delta = given - np.asarray(refit, dtype=np.float64).ravel()
    try:
        info = np.linalg.inv(np.asarray(cov, dtype=np.float64))
    except np.linalg.LinAlgError:
        return
    dist = float(np.sqrt(max(float(delta @ info @ delta), 0.0)))
    e = 2.0 * float(np.finfo(dtype).eps) * np.abs(given)
    bound = max(OPTIMUM_DISTANCE, 4.0 * float(np.sqrt(max(e @ (np.abs(info) @ e), 0.0))))
    if not dist > bound:
        return
    warn(f"logistic_inference: the model's coefficients are not the estimate for the "
         f"data given: the {method} estimate of these data is {dist:.3g} standard errors "
         f"from them (above {bound:.3g}), and the table reports that estimate; pass the "
         f"X, y and sample_weight the model was fitted on (the same rows, labels and "
         f"weights), or refit on these data", ConvergenceWarning)

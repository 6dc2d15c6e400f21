r"""Firth's bias-reduced binary logistic regression: the penalised objective and its
Newton loop.

Firth (1993) maximises the log-likelihood penalised by Jeffreys' invariant prior,

.. math::

    l^*(\beta) = l(\beta) + \tfrac12 \log\det I(\beta),
    \qquad I(\beta) = \tilde X^\top \operatorname{diag}(w\,\pi(1-\pi))\,\tilde X,

whose estimate is finite even when the classes are separated (Heinze & Schemper 2002)
and whose first-order bias is zero.  Its gradient is the modified score

.. math::

    U^*(\beta) = \sum_i \bigl[w_i (y_i - \pi_i) + h_i(\tfrac12 - \pi_i)\bigr]\tilde x_i,

with :math:`h_i` the diagonal of the hat matrix
:math:`W^{1/2}\tilde X I^{-1}\tilde X^\top W^{1/2}`.  Each Newton iteration
:math:`\beta \leftarrow \beta + t\,I^{-1}U^*` (logistf's, with the step capped at 5 and
halved until :math:`l^*` does not decrease) makes two passes over X: one for
:math:`l`, the score and :math:`I` (:func:`fastgen.kernels.inference.inference_pass`),
one for the hat diagonal and the correction
(:func:`fastgen.kernels.inference.firth_hat`).  Where that Fisher-scoring iteration
converges slowly (separated data, on which the penalty carries the optimum), the
Newton matrix becomes l*'s own Hessian (:meth:`_Penalised.curvature`, one more pass).

The objective is :mod:`fastgen.logistic.firth_objective`; where the fit starts (a
subsample fit on large data) and which of several local maxima it returns (l* need not
be concave): :mod:`fastgen.logistic.firth_starts`.

Profile-likelihood intervals and penalised likelihood-ratio tests on this objective:
:mod:`fastgen.logistic.firth_profile`.
"""

from __future__ import annotations

import numpy as np

from .._validation import check_sample_weight, check_X, check_y
from .firth_objective import _Penalised
from .firth_starts import MULTI_START_ETA, _best_of_starts, check_start, subsample_start
from .inference.passes import InferenceData
from .params import LogisticParams
from .penalised import _newton, warn_unconverged

__all__ = ["fit_firth"]


def _initial(init, classes, d, fit_intercept, codes, w):
    p = d + (1 if fit_intercept else 0)
    beta = np.zeros(p)
    if init is None:
        if fit_intercept:
            counts = np.bincount(codes, weights=w if w.shape[0] else None, minlength=2)
            pri = np.clip(counts / counts.sum(), 1e-12, 1.0)
            beta[d] = np.log(pri[1]) - np.log(pri[0])
        return beta
    if isinstance(init, LogisticParams):
        coef, icpt = init.coef, init.intercept
    elif isinstance(init, tuple) and len(init) == 2:
        coef, icpt = init
    else:
        raise ValueError("init must be None, a LogisticParams, or a (coef, intercept) tuple; "
                         f"got {type(init).__name__}")
    coef = np.asarray(coef, dtype=np.float64).reshape(-1)
    icpt = np.asarray(icpt, dtype=np.float64).reshape(-1)
    if coef.shape != (d,) or icpt.shape != (1,):
        raise ValueError(f"init must have coef of shape (1, {d}) and intercept of shape "
                         f"(1,); got {coef.shape} and {icpt.shape}")
    beta[:d] = coef
    if fit_intercept:
        beta[d] = icpt[0]
    return beta


def fit_firth(X, y, *, fit_intercept=True, sample_weight=None, max_iter=100, tol=1e-8,
              init=None) -> LogisticParams:
    r"""Firth's bias-reduced binary logistic regression (see the module docstring).

    Maximises :math:`l(\beta) + \tfrac12\log\det I(\beta)` by Newton steps
    :math:`I^{-1}U^*` with step halving; two passes over X per iteration (three, with
    l*'s exact Hessian in place of I, once these steps shrink slowly: see
    ``penalised._SLOW_RATE``).  Without
    ``init``, a fit on n ≥ ``WARM_START_STRIDE · WARM_START_ROWS_PER_COEF · p`` rows
    starts from the fit on every ``WARM_START_STRIDE``-th row (two full-data
    iterations saved; ``n_iter`` counts the full-data ones).  Reached through
    ``fastgen.fit_logistic(X, y, penalty="firth")``.

    Parameters
    ----------
    X, y, fit_intercept, sample_weight, max_iter, init :
        As for :func:`fastgen.fit_logistic`; y must have two classes.  Weights are
        frequency weights (they enter the information matrix, hence the penalty).
    tol : float, default 1e-8
        Converged when the Newton decrement ½U*ᵀJ⁻¹U* (J the Newton matrix: I, or
        l*'s Hessian once Fisher scoring proves slow) is ≤ tol (times the mean weight
        where it is below 1), in nats of l*; the ConvergenceWarning of a fit that
        stops short reports that decrement and that bound.

    Returns
    -------
    LogisticParams
        ``solver == "firth"``, ``l2 == 0``; ``log_likelihood`` is the unpenalised
        log-likelihood at the estimate and ``objective_history`` the negative penalised
        one.  Pass it to :func:`fastgen.logistic_inference` for standard errors,
        profile intervals and penalised likelihood-ratio tests.
    """
    X = check_X(X, allow_sparse=True)
    classes, codes = check_y(y, X.shape[0], min_classes=2)
    if classes.shape[0] != 2:
        raise ValueError(
            f"fit_firth is the binary fit; y has {classes.shape[0]} classes: call "
            f"fit_logistic(X, y, penalty='firth'), which fits the multinomial one"
        )
    w = check_sample_weight(sample_weight, X.shape[0])
    sw = float(w.sum()) if w.shape[0] else float(X.shape[0])
    data = InferenceData(X, fit_intercept)
    beta0 = _initial(init, classes, data.d, fit_intercept, codes, w)
    c0 = None
    if init is None:
        beta0, c0 = subsample_start(X, codes, w, fit_intercept, beta0, max_iter,
                                    lambda *a: _Penalised(*a, 0.5), 2)
    obj = _Penalised(data, codes, w, 0.5)
    free = np.arange(data.p)
    given = init is not None
    if given:
        beta0, given = check_start(obj, beta0,
                                   _initial(None, classes, data.d, fit_intercept, codes, w))
    run = _newton(obj, beta0, free, max_iter, tol, sw, c0)
    if obj.slow or run[0].emax > MULTI_START_ETA:
        run = _best_of_starts(obj, run, X, codes, w, fit_intercept, beta0, max_iter, tol,
                              sw)
    st, U, converged, n_iter, hist, steps = run[:6]
    if not converged:
        warn_unconverged(run, tol, max_iter, init=given)
    d = data.d
    beta = st.beta
    gh = [float(np.max(np.abs(U))) / sw]
    model = LogisticParams(
        classes=classes, coef=beta[:d].reshape(1, -1).astype(np.float64),
        intercept=np.array([beta[d] if fit_intercept else 0.0], dtype=np.float64),
        parametrization="binary", l2=0.0, fit_intercept=bool(fit_intercept),
        n_iter=int(n_iter), converged=bool(converged), log_likelihood=float(st.llf),
        objective_history=np.asarray(hist, dtype=np.float64),
        grad_norm_history=np.asarray([np.nan] * (len(hist) - 1) + gh, dtype=np.float64),
        step_size_history=np.asarray(steps, dtype=np.float64), solver="firth", n_hessp=0,
    )
    return model

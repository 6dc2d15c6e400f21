"""Where a Firth fit starts, binary or multinomial, and which of several maxima it keeps.

* :func:`subsample_start`: without ``init``, a large fit starts from the fit on every
  ``WARM_START_STRIDE``-th row, and takes about three full-data Newton steps instead of
  five or six.
* :func:`_best_of_starts`: l* need not be concave, and on separated data it can have
  several local maxima; where the first run shows that the penalty shapes l*, the fit
  also starts from zero and from a ridge estimate (:func:`_ridge_start`) and returns the
  highest maximum, with a warning when they differ.
* :func:`check_start`: a caller's ``init`` worse than the default start (l* lower, or
  the penalty undefined there) gives way to it.
"""

from __future__ import annotations

import warnings

import numpy as np

from .._validation import is_sparse
from .._warn import warn
from .inference.passes import InferenceData
from .params import ConvergenceWarning
from .penalised import _newton
from .ridge import ridge_fit

__all__ = ["subsample_start", "check_start", "MULTI_START_ETA", "WARM_START_STRIDE",
           "WARM_START_ROWS_PER_COEF", "RIDGE_START_L2"]

#: A Firth fit without ``init`` on n rows starts from a fit on every
#: ``WARM_START_STRIDE``-th row when that subsample has at least
#: ``WARM_START_ROWS_PER_COEF`` rows per coefficient: Newton converges quadratically
#: from there, so the full-data fit takes about three steps instead of five or six, for
#: about one full pass on the subsample (benchmarks/NOTES.md).  Every k-th row rather
#: than a random draw: deterministic, and spread over the whole data whatever its order.
WARM_START_STRIDE = 20
WARM_START_ROWS_PER_COEF = 100

#: Tolerance of the subsample fit: its estimate is off the full-data one by sampling
#: error (~1e-2 at these sizes) anyway; 1e-3 takes one Newton step fewer on the
#: subsample than 1e-4 and the same full-data steps (benchmarks/NOTES.md).
_WARM_START_TOL = 1e-3


#: l*(β) need not be concave: on separated or nearly separated data the penalty shapes
#: it, and Newton from different starts can stop at different local maxima (standardised
#: breast cancer: l* = -27.40 from zero, -24.92 from the ridge start).  A fit tries the
#: fixed set of starts of :func:`_best_of_starts` and returns the highest maximum when
#: its first run shows that evidence: Fisher scoring converged slowly (``penalised._SLOW_RATE``),
#: or some fitted |η| exceeds this (probabilities within 3e-7 of 0 or 1).  Ordinary
#: fits (max|η| of a few units, fast Fisher scoring) make one run only.
MULTI_START_ETA = 15.0

#: The ridge start: l2 on the columns scaled to unit standard deviation (a N(0, 1)
#: prior on each standardised coefficient).
RIDGE_START_L2 = 1.0


def check_start(obj, beta0, default=None):
    """The start of a fit from the caller's ``init`` ``beta0``: ``(start,
    init_kept)``.

    Where l* at ``beta0`` is below l* at ``default`` (zero slopes, the log prior odds)
    the start is no warm start (Newton's steps from it are capped at ``MAX_STEP``, and a
    start far away creeps): ``default`` is returned instead.  So is a start whose
    Fisher information is singular (its probabilities 0 or 1 to float64), where the
    penalty log det I is −∞: the default start never is.  Without a ``default``, such a
    start raises a ``ValueError``."""
    try:
        at_init = obj.evaluate(np.array(beta0, dtype=np.float64)).lstar
    except np.linalg.LinAlgError:
        at_init = -np.inf  # log det I = −∞: worse than any start where it is defined
    if default is not None:
        if not at_init >= obj.evaluate(np.array(default, dtype=np.float64)).lstar:
            return default, False
    if not at_init > -np.inf:
        raise ValueError(
            "the starting coefficients put the fitted probabilities at 0 or 1 (to "
            "float64), where the Fisher information, hence Firth's penalty log det I, is "
            "undefined; start closer to the data (e.g. from an unpenalised or ridge fit) "
            "or from the default start")
    return beta0, True


def _ridge_start(X, codes, w, fit_intercept):
    """The ridge estimate with ``l2 = RIDGE_START_L2`` on the columns scaled to unit
    (weighted) standard deviation, in X's units; None if that fit fails.

    Finite under separation, and equivariant: rescaling a column of X rescales its
    start by the inverse factor, so the start set does not depend on the units.
    Binary codes give a (p,) vector, more classes the flat reference layout (m·p,)."""
    import scipy.sparse as sp

    n = X.shape[0]
    wv = w if w.shape[0] else np.ones(n)
    sw = float(wv.sum())
    if is_sparse(X):
        mean = np.asarray(X.T @ wv, dtype=np.float64).ravel() / sw
        sq = np.asarray(X.multiply(X).T @ wv, dtype=np.float64).ravel() / sw
    else:
        mean = (wv @ X) / sw
        sq = (wv @ (X * X)) / sw
    sd = np.sqrt(np.maximum(sq - mean * mean, 0.0))
    sd = np.where(sd > 0.0, sd, 1.0)
    Xs = X @ sp.diags(1.0 / sd) if is_sparse(X) else X / sd
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            B = ridge_fit(Xs, codes, w, fit_intercept, RIDGE_START_L2)
    except (ValueError, np.linalg.LinAlgError):
        return None
    d = X.shape[1]
    B = B.reshape(-1, B.shape[-1])
    beta = np.column_stack([B[:, :d] / sd, B[:, d:]])
    beta = beta[0] if B.shape[0] == 1 else (beta[1:] - beta[0]).ravel()
    return beta if np.all(np.isfinite(beta)) else None


def _best_of_starts(obj, first, X, codes, w, fit_intercept, beta0, max_iter, tol, sw):
    """The highest maximum of l* that Newton reaches from the fixed set of starts
    (:data:`MULTI_START_ETA` explains when it is tried), given the run from the
    default start ``first``; warns when the starts reach different maxima.

    The starts, in order: the default one (``beta0``: the caller's ``init``, or zero
    slopes with the intercept at the log prior odds, or the subsample fit from there);
    zero (every coefficient and the intercept, when that differs from ``beta0``); and
    :func:`_ridge_start`.  A run that raises (a singular information on the way) or
    does not converge is left out unless no run converges."""
    p = beta0.shape[0]
    free = np.arange(p)
    runs = [("the default start", first)]
    starts = []
    if np.any(beta0 != 0.0):
        starts.append(("zero", lambda: np.zeros(p)))
    starts.append(("the ridge start", lambda: _ridge_start(X, codes, w, fit_intercept)))
    for label, make in starts:
        b0 = make()
        if b0 is None:
            continue
        try:
            runs.append((label, _newton(obj, b0, free, max_iter, tol, sw)))
        except np.linalg.LinAlgError:
            continue
    good = [r for r in runs if r[1][2]] or runs[:1]
    best = max(good, key=lambda r: r[1][0].lstar)
    top = best[1][0].lstar
    others = [r for r in good if r[1][0].lstar < top - _distinct(top)]
    if others:
        found = "; ".join(f"{label}: {r[0].lstar:.10g}" for label, r in good)
        warn(f"fit_logistic(penalty='firth'): the penalised log-likelihood "
             f"l*(beta) = l(beta) + 0.5 log det I(beta) has several local maxima; Newton "
             f"from the starts tried reached different ones ({found}); the highest "
             f"({top:.10g}, from {best[0]}) is returned. l* is not concave on these "
             f"(separated or nearly separated) data, and a maximum higher still may "
             f"exist", ConvergenceWarning)
    return best[1]


def _distinct(lstar):
    """Two maxima of l* are different when their values differ by more than this."""
    return 1e-8 * max(1.0, abs(lstar))


def subsample_start(X, codes, w, fit_intercept, beta0, max_iter, penalised, n_classes):
    """The Firth estimate on every ``WARM_START_STRIDE``-th row, as a starting point,
    and the subsample's score correction there (``(beta0, None)`` when the data are too
    small, the subsample lacks a class, or its fit fails, e.g. a column constant on the
    subsample); ``penalised(data, codes, w)`` builds the objective (binary or
    multinomial) on the subsample.

    The correction ``c = Σ_i h_i (½ − π_i) x̃_i`` is of order p whatever the number of
    rows (the leverages h_i sum to p), and the subsample's estimates the full data's at
    the same point to its sampling error: good enough for the first full-data Newton
    step, whose error is dominated by the start's distance from the optimum anyway
    (see :func:`_newton`'s ``c0``)."""
    n = X.shape[0]
    p = X.shape[1] + (1 if fit_intercept else 0)  # rows per coefficient of one equation
    k = WARM_START_STRIDE
    if n // k < WARM_START_ROWS_PER_COEF * p:
        return beta0, None
    rows = slice(0, n, k)
    cs = np.ascontiguousarray(codes[rows])
    if np.unique(cs).shape[0] < n_classes:
        return beta0, None
    Xs = X[rows] if is_sparse(X) else np.ascontiguousarray(X[rows])
    ws = np.ascontiguousarray(w[rows]) if w.shape[0] else w
    sws = float(ws.sum()) if ws.shape[0] else float(cs.shape[0])
    obj = penalised(InferenceData(Xs, fit_intercept), cs, ws)
    try:
        st = _newton(obj, beta0, np.arange(beta0.shape[0]), max_iter,
                     _WARM_START_TOL, sws).state
    except np.linalg.LinAlgError:
        return beta0, None
    if not (np.all(np.isfinite(st.beta)) and st.c is not None and np.all(np.isfinite(st.c))):
        return beta0, None
    return st.beta, st.c

"""Expectation-maximisation for the generative fits: one loop, the family's steps.

A generative model p(x, y) = p(y) p(x | y) learns from rows whose label is missing by
EM (Dempster, Laird & Rubin 1977; for naive Bayes on documents, Nigam, McCallum, Thrun
& Mitchell 2000).  Every family plugs in two steps:

* ``expect(params)`` (E-step): the posteriors r_ik = p(y = k | x_i) of the incomplete
  rows under ``params`` (the family's own ``predict_proba``), turned into their
  expected statistics (fractional class counts, :mod:`fastgen.stats.soft`), and the
  objective of ``params``;
* ``maximise(stats)`` (M-step): the family's estimate from its complete-data statistics
  (the labelled rows, hard counts, taken once) merged with the expected ones, with the
  family's own smoothing, priors, ``reg`` and shrinkage, as in the fit without EM.

The objective is the observed-data log-likelihood
ℓ(θ) = Σ_{labelled} w_i log p(x_i, y_i) + λ Σ_{unlabelled} log Σ_k p(x_u, k), plus, for
naive Bayes with ``alpha`` > 0, the log density of the Dirichlet prior whose posterior
mode is the smoothed estimate (α Σ log θ).  For every λ ≥ 0 the E-step bound is tight
and the M-step maximises it, so ℓ never decreases (Jensen's inequality holds with the
weight λ); for λ ≠ 1 it is the λ-weighted objective that rises, not the plain
likelihood of all rows.  Where the M-step is a regularised estimate rather than the
maximiser (``reg``, ``shrinkage``, ``unbiased``, the variance floor ``var_smoothing``)
an iteration can lower ℓ by about the size of the regularisation; the record says so
(``history_monotone=False``), and only a history recorded as monotone is held to never
decreasing (:meth:`fastgen._params.FieldChecker.em_record`).

Stopping rule (shared with the missing-feature EM of :mod:`fastgen.gda.em`): an
iteration that changes ℓ by at most ``em_tol`` per unit of row weight ends the loop.

Unlabelled rows combine with missing features (``nan_policy="marginalize"``: NaN in
X, in the unlabelled rows, or both): the E-step scores each row by the marginal
likelihood of its observed features (the family's ``score``), and the M-step takes the
available-case soft statistics (the models that factorise over the features) or the
conditional moments of the missing values (:mod:`fastgen.gda.em_incomplete`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from ._params import history_slack
from ._runtime import blas_single_thread
from ._scorer import MODE_JLL
from ._small import is_small
from ._validation import (
    check_n_features,
    check_scalar,
    check_X,
    feature_names_of,
    is_sparse,
    report_infinite,
)

__all__ = ["EMOptions", "EMStop", "EMResult", "check_em_options", "check_unlabeled",
           "run_em", "unlabelled_em", "record_em", "history_slack",
           "maximising_m_step",
           "collapse_guard", "COLLAPSE_RATIO", "GDA_COLLAPSE_ADVICE", "NB_COLLAPSE_ADVICE",
           "log_marginal_and_posteriors", "labelled_log_likelihood", "marginal_score",
           "observed_weight", "row_missing",
           "incomplete_unlabeled"]


@dataclass(frozen=True)
class EMOptions:
    """The checked EM options: λ (``unlabeled_weight``), ``em_tol``, ``em_max_iter``."""

    weight: float
    tol: float
    max_iter: int


class EMStop(Exception):
    """Raised by an M-step that refuses its estimate (a collapsing class): the loop
    stops and keeps the previous iteration's params, with ``converged=False``."""


def check_em_options(unlabeled_weight, em_tol, em_max_iter) -> EMOptions:
    """ValueErrors naming the option: λ ≥ 0 finite, em_tol ≥ 0, em_max_iter an int ≥ 0."""
    weight = check_scalar(unlabeled_weight, "unlabeled_weight", low=0.0)
    tol = check_scalar(em_tol, "em_tol", low=0.0)
    if isinstance(em_max_iter, (bool, np.bool_)) or not isinstance(
            em_max_iter, (int, np.integer)) or em_max_iter < 0:
        raise ValueError(f"em_max_iter must be an integer >= 0; got {em_max_iter!r}")
    return EMOptions(weight, tol, int(em_max_iter))


def maximising_m_step(covariance, reg=0.0, shrinkage=None, unbiased=False,
                      var_smoothing=0.0) -> bool:
    """Whether the Gaussian M-step with these options is the maximiser (EM's history
    then never decreases): no ``reg``, no shrinkage, no ``unbiased`` division, and for
    the diagonal kinds (``covariance`` "diagonal", "pooled_diagonal" or "gaussian_nb")
    no variance floor."""
    if reg or unbiased or (shrinkage is not None and (isinstance(shrinkage, str)
                                                      or shrinkage != 0)):
        return False
    return covariance in ("pooled", "per_class") or not var_smoothing


def check_unlabeled(U, X, *, allow_sparse=False, feature_names=None, allow_nan=False):
    """The unlabelled rows checked against the fit's checked X, or None when there are
    none (``U`` None or with no rows): same number of features (and column names, for
    data frames), X's float dtype, finite (with ``allow_nan``, NaN marks a missing value
    and only infinity is refused), dense or CSR where the family takes CSR.
    Messages name ``unlabeled``; the caller's array is never modified."""
    if U is None:
        return None
    names = feature_names_of(U)
    U = check_X(U, name="unlabeled", allow_sparse=allow_sparse, dtype=X.dtype,
                min_samples=0, finite=not allow_nan, missing=allow_nan)
    if allow_nan:
        report_infinite(U, "unlabeled")
    if U.shape[0] == 0:
        return None
    check_n_features(U, X.shape[1], name="unlabeled")
    if names is not None and feature_names is not None and tuple(names) != tuple(
            feature_names):
        raise ValueError(f"unlabeled has the columns {list(names)}, but X has "
                         f"{list(feature_names)}; pass the same columns in the same order")
    return U


def incomplete_unlabeled(X, Xv, unlabeled, em: EMOptions, names, *, allow_sparse=False):
    """The checked unlabelled rows of a fit with ``nan_policy="marginalize"`` whose EM
    meets missing features (NaN in X, whose NaN-allowing validation ``Xv`` is then not
    None, or in the unlabelled rows), else None: the fit is then the one without them
    combined (no unlabelled rows, λ = 0, or no NaN anywhere)."""
    from .stats.missing import has_nan

    if unlabeled is None or not em.weight:
        return None
    ref = Xv if Xv is not None else check_X(X, allow_sparse=allow_sparse)
    U = check_unlabeled(unlabeled, ref, allow_sparse=allow_sparse, feature_names=names,
                        allow_nan=True)
    if U is None or (Xv is None and not has_nan(U)):
        return None
    return _without_empty_rows(U)


def _without_empty_rows(U):
    """U without its rows whose every feature is missing, where other rows remain: such
    a row adds nothing to the likelihood (its posterior is the prior at every
    iteration), but would slow EM towards the same fixed point and loosen the stopping
    rule, whose threshold grows with the rows' weight."""
    d = U.shape[1]
    if is_sparse(U):
        row_of = np.repeat(np.arange(U.shape[0]), np.diff(U.indptr))
        empty = np.bincount(row_of[np.isnan(U.data)], minlength=U.shape[0]) == d
    else:
        empty = np.isnan(U).all(axis=1)
    if not empty.any() or empty.all():
        return U
    return U[np.flatnonzero(~empty)]


def log_marginal_and_posteriors(jll):
    """(Σ_i log Σ_k exp jll_ik, posteriors (n, K)) of joint log-likelihoods (float64),
    by the row maximum (a row whose every class is −∞ raises: no class explains it)."""
    jll = np.asarray(jll, dtype=np.float64)
    top = np.max(jll, axis=1, keepdims=True)
    if jll.size and not np.all(np.isfinite(top)):
        i = int(np.flatnonzero(~np.isfinite(top[:, 0]))[0])
        raise ValueError(f"unlabeled row {i} has zero probability under every class "
                         f"(its joint log-likelihoods are -inf or NaN)")
    P = np.exp(jll - top)
    total = P.sum(axis=1, keepdims=True)
    P /= total
    return float(np.sum(top[:, 0] + np.log(total[:, 0]))), P


def labelled_log_likelihood(jll, codes, w):
    """Σ_i w_i jll[i, y_i]: the complete-data log-likelihood of labelled rows (``w``
    empty: unit weights)."""
    picked = np.asarray(jll, dtype=np.float64)[np.arange(codes.shape[0]), codes]
    if w.shape[0]:
        nz = w > 0  # a zero weight leaves a -inf score out (0·∞)
        return float(np.dot(w[nz], picked[nz]))
    return float(picked.sum())


def marginal_score(*rows, small=None):
    """The E-step's ``score(params, rows)`` of :func:`unlabelled_em` for fits with
    missing features: each of ``rows`` (the validated labelled and unlabelled rows) that
    holds a NaN is scored by the marginal likelihood of each row's observed features
    (the scoring path of ``nan_policy="marginalize"``,
    :func:`fastgen.scoring_missing.score_marginal`; small dense rows by ``small(params,
    rows)``, numpy, where the family has it: nothing compiles, as
    :mod:`fastgen._small`), the others by the params' scorer."""
    from .scoring_missing import score_marginal
    from .stats.missing import has_nan

    incomplete = {id(r): has_nan(r) for r in rows}

    def score(params, r):
        if not incomplete.get(id(r), True):
            return params.scorer.validated(params, r, MODE_JLL)
        if small is not None and not is_sparse(r) and is_small(r):
            return small(params, r)
        return score_marginal(params, r, MODE_JLL)
    return score


@dataclass(frozen=True)
class EMResult:
    """What :func:`run_em` returns: the params, the iterations run, whether the
    objective converged, its history (start and each iteration) and why it stopped
    early (an :class:`EMStop` message), if it did, and whether the M-step maximises
    (the history cannot decrease)."""

    params: object
    n_iter: int
    converged: bool
    history: np.ndarray
    stopped: str | None = None
    monotone: bool = True


def run_em(start, expect, maximise, options: EMOptions, *, total_weight: float,
           monotone: bool = True, dtype=np.float64) -> EMResult:
    """The EM loop: from ``start``, alternate ``maximise(expect(params))`` until an
    iteration changes the objective by at most ``options.tol`` per unit of row weight
    (or ``max_iter``).

    ``expect(params) -> (stats, objective)``; ``maximise(stats) -> params`` (may raise
    :class:`EMStop`).  The loop stops (``converged``) when |ℓ_t − ℓ_{t−1}| ≤ tol·W,
    W = ``total_weight`` (the labelled rows' weight plus λ per unlabelled row): the mean
    gain per row, which, unlike a change relative to |ℓ|, does not depend on the units
    or offsets of the features (ℓ does, by a constant).  The bound is at least 16 ε of
    ``dtype`` times |ℓ_t| (float32 params score in float32).  ``monotone``: whether the
    M-step maximises (then ℓ never decreases; recorded as ``history_monotone``).

    EM cannot lower ℓ in exact arithmetic, but float32 params round every table (and
    their scores round each row), so ℓ_t can fall by about ε₃₂·|ℓ| between iterations
    that barely change the model: a change within :func:`history_slack` is no change,
    and the loop has converged.  A larger fall of a maximising M-step stops the loop
    with the previous params (a warning, ``converged=False``): the recorded history
    never falls by more than the slack, which is what
    :meth:`fastgen._params.FieldChecker.em_record` holds a saved history to.
    """
    params = start
    stats, ll = expect(params)
    history = [ll]
    W = float(total_weight)
    for it in range(1, options.max_iter + 1):
        try:
            new = maximise(stats)
        except EMStop as stop:
            return EMResult(params, it - 1, False, np.array(history), str(stop), monotone)
        new_stats, new_ll = expect(new)
        fall = ll - new_ll
        if monotone and fall > history_slack(max(abs(ll), abs(new_ll)), dtype):
            return EMResult(params, it - 1, False, np.array(history),
                            f"iteration {it} lowered the log-likelihood by {fall:.3g}, "
                            f"more than the rounding of {np.dtype(dtype).name} allows; "
                            f"the params of the iteration before are kept", monotone)
        stats, params = new_stats, new
        history.append(new_ll)
        floor = 16.0 * float(np.finfo(dtype).eps) * abs(new_ll)
        if abs(new_ll - ll) <= max(options.tol * W, floor):
            return EMResult(params, it, True, np.array(history), None, monotone)
        ll = new_ll
    return EMResult(params, options.max_iter, False, np.array(history), None, monotone)


def unlabelled_em(start, X, codes, w, U, options: EMOptions, *, soft_statistics, merge,
                  build, log_prior=None, guard=None, monotone=True, score=None) -> EMResult:
    """EM over unlabelled rows ``U`` for a family given as functions.

    The labelled rows (validated ``X``, class ``codes``, weights ``w``, empty for unit
    weights) enter as hard counts through ``merge``; each E-step scores ``U`` with the
    current params (their joint log-likelihoods, normalised: the family's posteriors
    R) and hands λ·R to ``soft_statistics``; the M-step is
    ``build(merge(soft statistics))``, checked by ``guard(params)`` (which may raise
    :class:`EMStop`).  ``log_prior(params)``, where given, is added to the objective
    (the Dirichlet prior of naive Bayes' smoothing).  ``monotone``: False where
    ``build`` is a regularised estimate rather than the maximiser.  ``score(params,
    rows)``, where given, gives the joint log-likelihoods of ``X`` and ``U`` (rows with
    missing features: the marginal of their observed ones); by default the params'
    scorer's.
    """
    lam = options.weight
    total_weight = observed_weight(X.shape[0], row_missing(X), w) + lam * U.shape[0]

    def expect(params):
        def jll(rows):  # validated host rows: numpy scores where small (fastgen._small)
            if score is not None:
                return score(params, rows)
            return params.scorer.validated(params, rows, MODE_JLL)

        objective = labelled_log_likelihood(jll(X), codes, w)
        marginal, R = log_marginal_and_posteriors(jll(U))
        objective += lam * marginal
        if log_prior is not None:
            objective += log_prior(params)
        return soft_statistics(lam * R), objective

    def maximise(soft):
        params = build(merge(soft))
        if guard is not None:
            guard(params)
        return params

    with blas_single_thread():  # skinny products with K columns (fastgen.stats.soft)
        return run_em(start, expect, maximise, options, total_weight=total_weight,
                      monotone=monotone, dtype=start.dtype)


def row_missing(X):
    """(n, d) bool NaN mask of validated X (dense, or CSR: its stored NaN, as CSR), or
    None where X holds no NaN."""
    if is_sparse(X):
        if not np.isnan(X.data).any():
            return None
        M = X.copy()
        M.data = np.isnan(X.data)
        M.eliminate_zeros()
        return M
    missing = np.isnan(X)
    return missing if missing.any() else None


def observed_weight(n, missing, w) -> float:
    """The weight of the n labelled rows with at least one observed value
    (``missing``: their NaN mask, dense or CSR, or None where none is missing; ``w``
    the weights, empty for ones): the W of EM's stopping rule em_tol·W.  A row with
    every feature missing changes the objective by a constant only, so it must not
    loosen the rule."""
    seen = None
    if missing is not None:
        seen = np.asarray(missing.sum(axis=1)).reshape(-1) < missing.shape[1]
        if seen.all():
            seen = None
    if seen is None:
        return float(w.sum()) if w.shape[0] else float(n)
    return float(w[seen].sum()) if w.shape[0] else float(seen.sum())


#: A per-class (or diagonal) covariance whose geometric-mean variance falls below this
#: fraction of the labelled-only fit's stops EM (a standard deviation of 1 % of it).
COLLAPSE_RATIO = 1e-4


def _class_variances(params):
    """(K, d) float64: each class's variance of each feature (the diagonal of its
    covariance), or None for a model whose classes share them."""
    v = getattr(params, "variances", None)
    if v is None:
        kind = getattr(params, "covariance_type", None)
        if kind == "per_class":
            v = np.diagonal(params.covariance, axis1=1, axis2=2)
        elif kind == "diagonal":
            v = params.covariance
        else:
            return None
    return np.asarray(v, dtype=np.float64)


#: the advice of :func:`collapse_guard` for ``fit_gda``'s per-class kinds
GDA_COLLAPSE_ADVICE = "pass reg>0, a smaller unlabeled_weight, or covariance='pooled'"
#: … and for Gaussian naive Bayes, which has neither ``reg`` nor ``covariance``
NB_COLLAPSE_ADVICE = ("pass a smaller unlabeled_weight, or a var_smoothing large enough "
                      "that its floor (var_smoothing times the largest variance of the "
                      "rows EM weighs) holds the variances up")


def collapse_guard(start, log_det_of, advice=GDA_COLLAPSE_ADVICE):
    """The M-step check of the models with per-class covariances or variances, whose
    likelihood is unbounded with unlabelled rows (a Gaussian mixture): raise
    :class:`EMStop` naming the class whose geometric-mean variance,
    exp(log|Σ_k| / d) with ``log_det_of(params)`` (K,) the log|Σ_k|, or whose variance
    of one feature (a collapse along the coordinates that rows observe, when others are
    missing) fell below :data:`COLLAPSE_RATIO` times that of the labelled-only fit
    ``start``; ``advice`` says what avoids it, in the fit's own parameters."""
    base = np.asarray(log_det_of(start), dtype=np.float64)
    base_var = _class_variances(start)
    d = start.n_features_in
    floor = d * np.log(COLLAPSE_RATIO)

    def stop(k, what, ratio):
        label = start.classes[k]
        label = label.item() if hasattr(label, "item") else label
        raise EMStop(
            f"the covariance of class {label!r} collapsed (its {what} fell to "
            f"{ratio:.3g} of the labelled-only fit's, below {COLLAPSE_RATIO:g}): the "
            f"unlabelled rows pull it onto a few points; {advice}")

    def guard(params):
        drop = np.asarray(log_det_of(params), dtype=np.float64) - base
        bad = np.flatnonzero(drop < floor)
        if bad.size:
            stop(int(bad[0]), "geometric-mean variance", np.exp(drop[bad[0]] / d))
        if base_var is not None:
            with np.errstate(divide="ignore", invalid="ignore"):
                ratio = _class_variances(params) / base_var
            low = np.argwhere(ratio < COLLAPSE_RATIO)
            if low.size:
                k, j = (int(v) for v in low[0])
                stop(k, f"variance of feature {j} (0-based)", ratio[k, j])
    return guard


def record_em(result: EMResult):
    """``result.params`` with its EM record set, and a ConvergenceWarning whenever it
    did not converge: EM stopped early for a reason (:class:`EMStop`) or ran out of
    iterations."""
    if not result.converged:
        from ._warn import warn
        from .logistic.params import ConvergenceWarning

        if result.stopped is not None:
            warn(f"EM stopped after {result.n_iter} iteration(s): {result.stopped}",
                 ConvergenceWarning)
        else:
            last = (f" (the last one changed the log-likelihood by "
                    f"{np.diff(result.history)[-1]:.3g})" if len(result.history) > 1 else "")
            warn(f"EM over the unlabelled rows did not converge in em_max_iter="
                 f"{result.n_iter} iterations{last}; raise em_max_iter or em_tol",
                 ConvergenceWarning)
    history = np.asarray(result.history, dtype=np.float64)
    history.flags.writeable = False
    return dataclasses.replace(result.params, n_iter=result.n_iter, converged=result.converged,
                               log_likelihood_history=history,
                               history_monotone=bool(result.monotone))

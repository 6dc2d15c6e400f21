"""Gaussian discriminant analysis from data with missing features (NaN in X).

* Diagonal kinds ("diagonal", "pooled_diagonal"): the likelihood factorises over the
  features, so the available-case estimates (each feature's mean and variance over the
  rows that observe it) are the exact maximum-likelihood estimates when values are
  missing at random.
* Full kinds ("pooled", "per_class"): EM for the means and covariances (Little & Rubin
  2002, ch. 8), started from the available-case means and the pairwise available-case
  covariances (their diagonal where those are not positive definite).  Each iteration
  is one pass of conditional expectations
  (:func:`fastgen.stats.missing.conditional_moments`) and an M-step; it stops when the
  observed-data log-likelihood rises by at most ``em_tol`` per unit of row weight (a
  rule that, unlike a change relative to |ℓ|, does not depend on the units).

``reg`` and a float ``shrinkage`` apply once, to the converged covariance (EM gives the
maximum-likelihood estimate, as the complete-data fit's moments do); estimated
shrinkage needs fourth moments that EM does not give.  The EM loop takes row weights
per class (``resp``), so that fractional class memberships fit the same loop.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .._validation import check_class_weights, check_sample_weight, check_y
from .._warn import warn
from ..stats.available import available_case, observed_variance, pairwise_covariance
from ..stats.missing import MissingPatterns, conditional_moments, missing_patterns
from ..stats.moments import ClassMoments
from .covariance import params_from_moments
from .params import SingularCovarianceError

__all__ = ["fit_gda_missing", "em_gaussian", "EMResult", "diagonal_moments",
           "warn_unidentified", "simpler_kinds"]


@dataclasses.dataclass(frozen=True)
class EMResult:
    """What :func:`em_gaussian` ends with: the class weights W (K,), means (K, d), the
    maximum-likelihood covariance ((d, d) pooled or (K, d, d)), the number of
    iterations, whether it converged, and the log-likelihood history."""

    counts: np.ndarray
    means: np.ndarray
    covariance: np.ndarray
    n_iter: int
    converged: bool
    history: np.ndarray


def _label(classes, k):
    return repr(classes[k].item() if hasattr(classes[k], "item") else classes[k])


def em_gaussian(X, pats: MissingPatterns, resp, means, covariance, pooled, classes,
                log_prior_total=0.0, em_tol=1e-8, em_max_iter=200) -> EMResult:
    """EM for Gaussian class models with missing features, from (means, covariance).

    ``resp`` (n, K): each row's weight for each class (fixed here: known labels).  The
    history holds ``log_prior_total`` + Σ_ik r_ik log N(x_io; μ_k,o, Σ_k,oo) at the
    start and after each iteration; the loop stops when an iteration raises it by at
    most ``em_tol``·W, W = Σ_ik r_ik (``converged``: the mean gain per row), or after
    ``em_max_iter`` iterations.  The gain of an iteration does not depend on the units
    or offsets of the features (ℓ itself does, by a constant), so neither does the
    stopping rule.
    """
    history = []
    n_iter = 0
    converged = False
    K = means.shape[0]
    while True:
        try:
            W, mu, S, loglik = conditional_moments(X, pats, resp, means, covariance, pooled)
        except np.linalg.LinAlgError:
            # the whole covariance, or only a block of it that a row's pattern needs
            bad = next((k for k in range(K) if not _positive_definite(
                covariance if pooled else covariance[k])), None)
            where = "the pooled covariance" if pooled else \
                f"the covariance of class {_label(classes, bad)}" if bad is not None \
                else _most_singular(covariance, pooled, classes)
            state = "not positive definite" if bad is not None else \
                "numerically singular on the observed features of some rows"
            raise SingularCovarianceError(
                f"EM with missing features: {where} is {state} after "
                f"{n_iter} iteration(s) (too few observed values for its free "
                f"parameters, or constant or collinear features); use "
                f"{simpler_kinds('pooled' if pooled else 'per_class')}, or drop "
                f"features") from None
        history.append(loglik + log_prior_total)
        if len(history) > 1 and history[-1] < history[-2] - 1e-9 * max(
                abs(history[-1]), abs(history[-2]), 1.0):
            # EM cannot lower the likelihood: rounding did, so a covariance is close
            # to singular, where the likelihood is unbounded (too few observed values)
            raise SingularCovarianceError(
                f"EM with missing features: {_most_singular(covariance, pooled, classes)} "
                f"is close to singular after {n_iter} iteration(s), where the likelihood "
                f"is unbounded (too few observed values for its free parameters, or collinear "
                f"features); use "
                f"{simpler_kinds('pooled' if pooled else 'per_class')}, or drop features")
        if len(history) > 1 and history[-1] - history[-2] <= em_tol * W.sum():
            converged = True
            break
        if n_iter >= em_max_iter:
            break
        means = mu
        covariance = S / W.sum() if pooled else S / W[:, None, None]
        n_iter += 1
    return EMResult(W, means, covariance, n_iter, converged, np.array(history))


def _most_singular(covariance, pooled, classes):
    """"the pooled covariance", or "the covariance of class c" for the class whose
    correlation matrix has the smallest eigenvalue."""
    if pooled:
        return "the pooled covariance"

    def smallest(S):
        s = np.sqrt(np.clip(np.diag(S), np.finfo(float).tiny, None))
        return float(np.linalg.eigvalsh(S / s[:, None] / s[None, :])[0])

    k = int(np.argmin([smallest(S) for S in covariance]))
    return f"the covariance of class {_label(classes, k)}"


def simpler_kinds(covariance):
    """The advice for a full covariance that EM cannot estimate: the kinds with fewer
    free parameters than ``covariance``."""
    if covariance == "per_class":
        return "covariance='pooled' or 'diagonal'"
    return "covariance='pooled_diagonal' or 'diagonal'"


def _positive_definite(S):
    try:
        np.linalg.cholesky(S)
    except np.linalg.LinAlgError:
        return False
    return True


def diagonal_moments(ac, covariance, unbiased, classes, dtype, names):
    """Diagonal ClassMoments whose scatter, divided as the complete-data estimate
    divides it (by W_k, W, or W_k − 1, W − K when ``unbiased``), gives the
    available-case variances S_kj / N_kj (per class) or Σ_k S_kj / Σ_k N_kj (shared)."""
    W, N = ac.counts, ac.observed
    K = W.shape[0]
    if covariance == "diagonal":
        have = (W - 1.0 if unbiased else W)[:, None]
        want = N - 1.0 if unbiased else N
    else:
        have = W.sum() - K if unbiased else W.sum()
        want = np.broadcast_to(N.sum(axis=0) - K if unbiased else N.sum(axis=0), N.shape)
    if np.any(want <= 0):
        raise SingularCovarianceError(
            "unbiased variances need more observed values than classes (or than one per "
            "class) for every feature; pass unbiased=False")
    scatter = ac.sumsq * (have / want)
    return ClassMoments(classes, W, ac.means, scatter, "diagonal", dtype, names)


def _unbiased_rescale(W_seen, W, pooled, classes):
    """The factor that makes ``params_from_moments``' unbiased division (by W − K, or
    W_k − 1, of all rows) divide the EM scatter W'·Σ̂ by W' − K (W'_k − 1) instead, W' the
    weight of the rows with an observed value: the rows of EM's sufficient statistics.
    A row with every feature missing adds to W (the priors) and not to W', so it
    changes no covariance; with no NaN this is the complete-data correction."""
    K = W.shape[0]
    if pooled:
        have, want = W.sum() - K, W_seen.sum() - K
        if want <= 0:
            raise SingularCovarianceError(
                f"unbiased pooled covariance needs more rows with an observed value than "
                f"classes ({W_seen.sum():g} such rows, {K} classes); pass unbiased=False")
        return have / want
    want = W_seen - 1.0
    if np.any(want <= 0):
        k = int(np.flatnonzero(want <= 0)[0])
        raise SingularCovarianceError(
            f"class {_label(classes, k)} has total weight {W_seen[k]:g} in rows with an "
            f"observed value: its unbiased covariance (÷(n_k − 1)) is undefined; pass "
            f"unbiased=False")
    return ((W - 1.0) / want)[:, None, None]


def warn_unidentified(missing, codes, w, K, pooled, classes, shared=None):
    """Warn where two features are never observed together (in any row for the pooled
    covariance, in a class's rows for its own): the data say nothing about their
    covariance, and EM keeps whatever its start and the other features imply.
    ``shared``: the NaN mask of rows that may belong to every class (unlabelled rows)."""
    seen = (~missing).astype(np.float64)
    if w.shape[0]:
        seen = seen * (w > 0)[:, None]
    extra = 0.0
    if shared is not None:
        O = (~shared).astype(np.float64)
        extra = O.T @ O
    groups = [slice(None)] if pooled else [codes == k for k in range(K)]
    for k, rows in enumerate(groups):
        S = seen[rows]
        together = S.T @ S + extra
        j, i = np.nonzero(np.triu(together == 0.0, 1))
        if j.size:
            where = "" if pooled else f" in class {_label(classes, k)}"
            warn(f"features {int(j[0])} and {int(i[0])} (0-based) are never observed together"
                 f"{where} ({j.size} such pairs): the data do not identify their "
                 f"covariance, and EM's estimate of it is arbitrary (it follows the "
                 f"start and the other features); scores of rows that observe both "
                 f"depend on it", UserWarning)
            return


def fit_gda_missing(X, y, covariance, sample_weight, shrinkage, unbiased, var_smoothing,
                    tol, em_tol, em_max_iter, names, check_options):
    """:func:`fastgen.fit_gda` of validated X with NaN entries (see the module
    docstring); ``check_options(classes)`` returns the checked (priors, reg,
    shrinkage)."""
    if isinstance(shrinkage, str):
        raise ValueError(
            f"shrinkage={shrinkage!r} with NaN in X: the estimated intensity needs the "
            f"fourth moments of the complete data, which EM does not give; pass a float "
            f"shrinkage or None")
    classes, codes = check_y(y, X.shape[0])
    w = check_sample_weight(sample_weight, X.shape[0])
    priors, reg, shrinkage = check_options(classes)
    K = classes.shape[0]
    missing = np.isnan(X)
    ac = available_case(X, missing, codes, w, K, classes)
    dtype = str(X.dtype)
    if covariance in ("diagonal", "pooled_diagonal"):
        m = diagonal_moments(ac, covariance, unbiased, classes, dtype, names)
        return params_from_moments(m, covariance, priors, reg, shrinkage, unbiased,
                                   var_smoothing=var_smoothing, tol=tol,
                                   feature_variance=observed_variance(ac))
    check_class_weights(classes, ac.counts)
    pooled = covariance == "pooled"
    warn_unidentified(missing, codes, w, K, pooled, classes)
    start = pairwise_covariance(ac, codes, w, missing, K, pooled)
    n = X.shape[0]
    resp = np.zeros((n, K))
    resp[np.arange(n), codes] = w if w.shape[0] else 1.0
    pri = ac.counts / ac.counts.sum() if priors is None else priors
    with np.errstate(divide="ignore"):
        log_prior_total = float(np.sum(ac.counts[pri > 0] * np.log(pri[pri > 0])))
    # a row with no observed value tells the class priors (its label) and nothing of
    # the means or covariances: EM leaves it out, so it neither slows EM (its E-step
    # would return the current estimate) nor loosens the stopping rule (em_tol·W)
    seen = ~missing.all(axis=1)
    rows = slice(None) if seen.all() else np.flatnonzero(seen)
    res = em_gaussian(X[rows].astype(np.float64, copy=False),
                      missing_patterns(missing[rows]), resp[rows], ac.means, start, pooled,
                      classes, log_prior_total, em_tol, em_max_iter)
    if not res.converged:
        from ..logistic.params import ConvergenceWarning

        last = (f" (the last one raised the log-likelihood by "
                f"{np.diff(res.history)[-1]:.3g})" if res.n_iter else "")
        warn(f"EM with missing features did not converge in em_max_iter={em_max_iter} "
             f"iterations{last}; raise em_max_iter or em_tol", ConvergenceWarning)
    W = res.counts
    if not isinstance(rows, slice):  # the class weights of the rows left out, back
        W = W + resp[~seen].sum(axis=0)
    if unbiased:  # ÷(W' − K) or ÷(W'_k − 1), W' the weight of the rows EM used
        S_seen = res.covariance * (res.counts.sum() if pooled
                                             else res.counts[:, None, None])
        scatter = S_seen * _unbiased_rescale(res.counts, W, pooled, classes)
    else:
        scatter = res.covariance * (W.sum() if pooled else W[:, None, None])
    m = ClassMoments(classes, W, res.means, scatter, covariance, dtype, names)
    params = params_from_moments(m, covariance, priors, reg, shrinkage, unbiased, tol=tol)
    return dataclasses.replace(params, n_iter=res.n_iter, converged=res.converged,
                               log_likelihood_history=res.history, history_monotone=True)

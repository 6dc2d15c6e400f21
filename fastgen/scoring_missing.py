"""Scoring with ``nan_policy="marginalize"``: rows with NaN are scored by the marginal
likelihood of their observed features.

X is validated once with NaN allowed (infinity is still an error).  Rows without NaN
go through the params' own scoring, unchanged; rows with NaN go to the family's
marginal scorer (:mod:`fastgen.gda.marginal`, :mod:`fastgen.naive_bayes.marginal`).
GDA and Gaussian naive Bayes on dense X finish those rows per mode themselves and skip
the complete ones (:func:`_score_by_patterns`); the other families' joint
log-likelihoods are normalised here with the same log-sum-exp.  Families without a
generative likelihood refuse NaN with the reason.
"""

from __future__ import annotations

import numpy as np

from ._runtime import kernel_module
from ._scorer import MODE_JLL, MODE_PREDICT
from ._small import finish_rows, is_small, numpy_scope
from ._validation import check_n_features, check_X, is_sparse
from ._validation.rows import rows_renamed
from .cuda import is_device_array
from .stats.missing import NAN_POLICIES, check_nan_policy, reject_infinite

__all__ = ["NAN_POLICIES", "check_nan_policy", "score_marginal"]

special_kernels = kernel_module("special")


def _nan_mask(X):
    """(rows with a NaN (n,) bool, the (n, d) NaN mask of dense X or None for CSR)."""
    if is_sparse(X):
        nan = np.isnan(X.data)
        rows = np.zeros(X.shape[0], dtype=bool)
        if nan.any():
            rows[np.searchsorted(X.indptr, np.flatnonzero(nan), side="right") - 1] = True
        return rows, None
    missing = np.isnan(X)
    return missing.any(axis=1), missing


def _marginal_scorer(params):
    name = type(params).__name__
    if name == "GDAParams":
        from .gda.marginal import marginal_joint_log_likelihood
        return marginal_joint_log_likelihood
    if name in ("GaussianNBParams", "BernoulliNBParams", "MultinomialNBParams",
                "CategoricalNBParams", "ComplementNBParams"):
        from .naive_bayes.marginal import marginal_joint_log_likelihood
        return marginal_joint_log_likelihood
    if name == "LogisticParams":
        raise ValueError(
            "X contains NaN and logistic regression cannot score it: it models p(y | x) "
            "only, with no distribution of x to integrate the missing features out of; "
            "impute the missing values, or use a generative model (fit_gda, naive Bayes)")
    raise ValueError(f"X contains NaN and {name} does not support nan_policy='marginalize'")


def score_marginal(params, X, mode):
    """Scores (``mode``, as :meth:`fastgen._scorer.Scorer.score`) of X, rows with NaN
    integrated out (see the module docstring); ``params`` checked, X not yet validated.

    GDA and Gaussian naive Bayes on dense X: :func:`_score_by_patterns`.  Otherwise,
    where most rows have a NaN, every row is scored by the marginal scorer in place (no
    gather of the incomplete rows) and the complete rows are then overwritten by the
    params' scorer's scores of them; else only the incomplete rows are gathered and
    scored.
    """
    if is_device_array(X):
        raise ValueError("nan_policy='marginalize' is not available for device arrays; "
                         "score host arrays")
    scorer = params.scorer
    X = check_X(X, allow_sparse=scorer.accepts_sparse, dtype=params.dtype, finite=False,
                missing=True)
    check_n_features(X, params.n_features_in)
    fast = None if is_sparse(X) else _pattern_scorer(params)
    if fast is not None:
        return _score_by_patterns(fast, params, X, mode)
    reject_infinite(X)
    incomplete, missing = _nan_mask(X)
    if not incomplete.any():
        return scorer.validated(params, X, mode)
    marginal = _marginal_scorer(params)
    complete = np.flatnonzero(~incomplete)
    in_place = complete.size < X.shape[0] // 2
    rows = slice(None) if in_place else np.flatnonzero(incomplete)
    part, part_missing = (X, missing) if in_place else (
        X[rows], None if missing is None else missing[rows])
    # posteriors need the scores only up to a constant per row
    with rows_renamed(rows):
        jll = marginal(params, part, part_missing, relative=mode != MODE_JLL)
    if mode not in (MODE_JLL, MODE_PREDICT):
        if is_small(X):  # numpy: nothing compiles (fastgen._small)
            with numpy_scope():
                finish_rows(jll, mode)
        else:
            special_kernels.finish_all_rows(jll, mode)
    if mode == MODE_PREDICT:
        out = np.empty(X.shape[0], dtype=params.classes.dtype)
        out[rows] = params.classes[np.argmax(jll, axis=1)]
    elif in_place:
        out = jll.astype(params.dtype, copy=False)
    else:
        out = np.empty((X.shape[0], params.n_classes), dtype=params.dtype)
        out[rows] = jll
    if complete.size:
        with rows_renamed(complete):
            out[complete] = scorer.validated(params, X[complete], mode)
    return out


def _pattern_scorer(params):
    """The scorer of dense X with NaN that finishes the rows itself and skips the
    complete ones (GDA, Gaussian naive Bayes), or None."""
    name = type(params).__name__
    if name == "GDAParams":
        from .gda.marginal import marginal_scores
        return marginal_scores
    if name == "GaussianNBParams":
        from .naive_bayes.marginal import gaussian_marginal_scores
        return gaussian_marginal_scores
    return None


def _score_by_patterns(fast, params, X, mode):
    """Scores of validated dense X by ``fast`` (:func:`_pattern_scorer`): the rows with
    NaN finished per mode by it, the complete rows by the params' own scorer."""
    scorer = params.scorer
    res = fast(params, X, MODE_JLL if mode == MODE_PREDICT else mode,
               relative=mode != MODE_JLL)
    if res is None:  # no NaN
        return scorer.validated(params, X, mode)
    scores, complete, complete_x = res
    if mode == MODE_PREDICT:
        out = params.classes[np.argmax(scores, axis=1)]
    else:
        with np.errstate(over="ignore", invalid="ignore"):  # the complete rows'
            # placeholders (uninitialised), overwritten below
            out = scores.astype(params.dtype, copy=False)
    if complete.size:
        with rows_renamed(complete):
            out[complete] = scorer.validated(
                params, X[complete] if complete_x is None else complete_x, mode)
    return out

"""Bernoulli naive Bayes (McCallum & Nigam 1998): the params, the fit, and the params
from class counts N_k and feature counts F_kj (:func:`bernoulli_params`, also used by
:mod:`fastgen.naive_bayes.from_counts`).

It follows the layout of the count models of :mod:`fastgen.naive_bayes.discrete`, whose
counting pass and smoothed-log helpers it shares.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._em import check_em_options, incomplete_unlabeled
from .._params import (
    log_normalised,
    recomputed,
    register_params,
)
from .._runtime import serial_for_small_inputs
from .._validation import (
    check_sample_weight,
    check_X,
    check_y,
    feature_names_of,
)
from .._validation.names import naming_columns
from ..stats.available import (
    binary_counts_observed,
    filled,
    observer,
    refuse_unobserved,
)
from ..stats.feature_counts import (  # the counting pass, shared with fastgen.nb_counts
    check_binarize,
    check_binary_counts,
    check_binary_values,
)
from ..stats.missing import nan_input
from .base import (
    LinearNB,
    check_alpha,
    check_bool,
    log_allow_zero,
    log_priors,
)
from .discrete import _fit_counts, _log_smoothed, _params_from_counts
from .em import (
    EMRows,
    bernoulli_incomplete_em,
    discrete_em,
    unlabelled_rows,
)

__all__ = ["BernoulliNBParams", "fit_bernoulli_nb", "bernoulli_params"]


@register_params
@dataclass(frozen=True)
class BernoulliNBParams(LinearNB):
    """Bernoulli naive Bayes (McCallum & Nigam 1998) on binary features.

    Attributes
    ----------
    classes : (K,)
    class_count : (K,) float64 N_k
    feature_count : (K, d) float64 F_kj, weighted number of class-k rows with x_j = 1
    class_log_prior : (K,) float64 log π_k
    feature_log_prob : (K, d) log p_kj = log(F_kj + α) − log(N_k + 2α)
    neg_feature_log_prob : (K, d) log(1 − p_kj) = log(N_k − F_kj + α) − log(N_k + 2α)
    alpha : float
    binarize : float or None
        Threshold applied to X at fit and predict time (x > binarize means 1); None
        takes X as already binary.
    feature_names : tuple of str or None
        The column names of the data frame the model was fitted on (all str), else
        None; scoring checks X's columns against them (see :mod:`fastgen.scoring`).
    observed_count : (K, d) float64 or None
        A fit with missing features (``nan_policy="marginalize"``): N_kj, the weight of
        the class-k rows that observe feature j, which takes N_k's place in p_kj and
        log(1 − p_kj).  None: every feature observed in every row (N_kj = N_k).
    n_iter, converged, log_likelihood_history, history_monotone : EM record or None
        The EM record of a fit with ``unlabeled`` rows, None without EM (see
        :meth:`fastgen._params.FieldChecker.em_record`).

    Scores: jll_ik = log π_k + Σ_j log(1 − p_kj) + Σ_{j: x_ij=1} (log p_kj − log(1 − p_kj)),
    the middle sum precomputed per class so that absent features cost nothing.
    """

    classes: np.ndarray
    class_count: np.ndarray
    feature_count: np.ndarray
    class_log_prior: np.ndarray
    feature_log_prob: np.ndarray
    neg_feature_log_prob: np.ndarray
    alpha: float
    binarize: float | None
    feature_names: tuple | None = None
    observed_count: np.ndarray | None = None
    n_iter: int | None = None
    converged: bool | None = None
    log_likelihood_history: np.ndarray | None = None
    history_monotone: bool | None = None

    _records_em = True  # n_iter, converged, log_likelihood_history, history_monotone

    def _check_fields(self, check):
        dt = self._check_counts_and_tables(check)
        check.array("neg_feature_log_prob", ("K", "d"), dt, "log")
        check.real("binarize", optional=True)
        if self.observed_count is not None:
            check.array("observed_count", ("K", "d"), "float", "nonneg")

    @property
    def _binary_input(self):
        return self.binarize is None

    def _check_derived(self, check):
        """p_kj and 1 − p_kj sum to one (log p and log(1 − p) are one table), and both
        are the smoothed estimates of class_count, feature_count and alpha."""
        super()._check_derived(check)
        both = np.stack([self.feature_log_prob, self.neg_feature_log_prob])
        log_normalised(check, "neg_feature_log_prob", both, 0, self.dtype)
        want = bernoulli_params(self.classes, self.class_count, self.feature_count,
                                self.alpha, self.binarize, True, None, np.float64,
                                observed_count=self.observed_count)
        source = "class_count, feature_count and alpha"
        recomputed(check, "feature_log_prob", self.feature_log_prob,
                   want.feature_log_prob, self.dtype, source)
        recomputed(check, "neg_feature_log_prob", self.neg_feature_log_prob,
                   want.neg_feature_log_prob, self.dtype, source)

    def _linear_form(self):
        flp = self.feature_log_prob.astype(np.float64)
        neg = self.neg_feature_log_prob.astype(np.float64)
        W = (flp - neg).T
        b = self.class_log_prior + neg.sum(axis=1)
        binarize = self.binarize is not None
        return W, b, binarize, self.binarize if binarize else 0.0


@serial_for_small_inputs(0)
@naming_columns()
def fit_bernoulli_nb(X, y, *, alpha=1.0, binarize=0.0, fit_prior=True, class_prior=None,
                     sample_weight=None, nan_policy="raise", unlabeled=None,
                     unlabeled_weight=1.0, em_tol=1e-8, em_max_iter=100):
    """Fit Bernoulli naive Bayes.

    With b_ij = [x_ij > binarize] (or x_ij itself when ``binarize`` is None)::

        N_k = Σ_{i: y_i=k} w_i,   F_kj = Σ_{i: y_i=k} w_i b_ij,
        p_kj = (F_kj + α) / (N_k + 2α),
        log(1 − p_kj) = log(N_k − F_kj + α) − log(N_k + 2α),

    the last taken from the counts rather than as log(1 − exp(log p)), which loses
    digits as p → 1.  X is binarized on the fly and never modified.

    Parameters
    ----------
    X : array-like (n, d) or scipy CSR matrix/array
    y : array-like (n,)
    alpha : float, default 1.0
        Additive smoothing: 1 is Laplace, below 1 Lidstone; < 1e-10 is clipped.
    binarize : float or None, default 0.0
        Threshold for binarizing X (must be >= 0 for sparse X); None if X is binary.
    fit_prior : bool, default True
        Learn class priors from the (weighted) class counts; False gives uniform priors.
    class_prior : array-like (K,), optional
        Fixed class priors (non-negative, summing to 1); overrides ``fit_prior``.
    sample_weight : array-like (n,), optional
    nan_policy : {"raise", "marginalize"}, default "raise"
        "marginalize": NaN entries (dense, or stored in CSR) are missing values;
        p_kj = (F_kj + α)/(N_kj + 2α) with N_kj the weight of the class-k rows that
        observe feature j (``observed_count``): the exact maximum likelihood under
        missing at random, as the likelihood factorises over the features.  With
        ``unlabeled`` rows, NaN may be in X, in them, or in both: EM over the observed
        entries of every row (docs/guide/incomplete_data.rst).
    unlabeled : array-like (m, d) or scipy CSR, optional
        Rows without labels: EM from the labelled-only fit (Nigam et al. 2000,
        :mod:`fastgen.naive_bayes.em`); each M-step adds their expected document
        frequencies F_kj (weights λ·r_ik) to the labelled ones.  None, no rows or
        λ = 0: the fit without EM.
    unlabeled_weight, em_tol, em_max_iter : float, float, int
        λ, EM's stopping rule and its iterations at most, as for :func:`fastgen.fit_gda`.

    Returns
    -------
    BernoulliNBParams
    """
    alpha = check_alpha(alpha)
    fit_prior = check_bool(fit_prior, "fit_prior")
    em = check_em_options(unlabeled_weight, em_tol, em_max_iter)
    Xv = nan_input(X, nan_policy, allow_sparse=True)
    U = None if nan_policy != "marginalize" else incomplete_unlabeled(
        X, Xv, unlabeled, em, feature_names_of(X), allow_sparse=True)
    if U is not None:
        return _bernoulli_incomplete(Xv if Xv is not None else check_X(X, allow_sparse=True),
                                     y, U, sample_weight, alpha, binarize, fit_prior,
                                     class_prior, feature_names_of(X), em)
    if Xv is not None:
        return _bernoulli_missing(Xv, y, sample_weight, alpha, binarize, fit_prior,
                                  class_prior, feature_names_of(X))
    em_rows = unlabelled_rows(X, y, sample_weight, unlabeled, em,
                              allow_nan=nan_policy == "marginalize")
    classes, cc, fc, binarize, dtype, names, tables = _fit_counts(
        X, y, sample_weight, "bernoulli", binarize, alpha)
    params = bernoulli_params(classes, cc, fc, alpha, binarize, fit_prior, class_prior,
                              dtype, names, tables)
    if em_rows is None:
        return params
    return discrete_em(params, em_rows, lambda c, f: bernoulli_params(
        classes, c, f, alpha, binarize, fit_prior, class_prior, dtype, names),
        binarize=binarize, binary=binarize is None)


def _bernoulli_missing(X, y, sample_weight, alpha, binarize, fit_prior, class_prior,
                       names):
    """:func:`fit_bernoulli_nb` of validated X with NaN entries: counts over the
    observed entries (F_kj) and the observed weights N_kj."""
    classes, codes = check_y(y, X.shape[0])
    w = check_sample_weight(sample_weight, X.shape[0])
    binarize = check_binarize(binarize, filled(X))
    cc, fc, observed = binary_counts_observed(X, codes, w, classes.shape[0], binarize)
    refuse_unobserved(observed, cc, classes, observer(X, codes))
    return bernoulli_params(classes, cc, fc, alpha, binarize, fit_prior, class_prior,
                            X.dtype, names, observed_count=observed)


def _bernoulli_incomplete(X, y, U, sample_weight, alpha, binarize, fit_prior,
                          class_prior, names, em):
    """:func:`fit_bernoulli_nb` with unlabelled rows U where X or U holds NaN: EM from
    the labelled-only fit over the observed entries (N_kj in N_k's place,
    :func:`fastgen.naive_bayes.em.bernoulli_incomplete_em`)."""
    classes, codes = check_y(y, X.shape[0])
    w = check_sample_weight(sample_weight, X.shape[0])
    binarize = check_binarize(binarize, filled(X))
    if binarize is None:
        check_binary_values(filled(X))
    counts = binary_counts_observed(X, codes, w, classes.shape[0], binarize)
    refuse_unobserved(counts[2], counts[0], classes, observer(X, codes))
    start = bernoulli_params(classes, *counts[:2], alpha, binarize, fit_prior, class_prior,
                             X.dtype, names, observed_count=counts[2])
    return bernoulli_incomplete_em(
        start, EMRows(X, codes, w, U, em), counts,
        lambda c, f, o: bernoulli_params(classes, c, f, alpha, binarize, fit_prior,
                                         class_prior, X.dtype, names, observed_count=o),
        binarize=binarize)


def bernoulli_params(classes, cc, fc, alpha, binarize, fit_prior, class_prior, dtype,
                     feature_names=None, tables=None, observed_count=None):
    """:class:`BernoulliNBParams` from checked counts (see :func:`fit_bernoulli_nb`);
    ``tables``: (log p, log(1 − p)) already computed from these counts, as the CSR
    fit's counting pass gives them; ``observed_count``: the (K, d) N_kj of a fit with
    missing features, in N_k's place."""
    clp = log_priors(cc, fit_prior, class_prior, classes)
    if observed_count is not None:
        N = np.asarray(observed_count, dtype=np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            log_denom = np.log(N + 2.0 * alpha)
            flp = np.log(fc + alpha) - log_denom
            neg = np.log(N - fc + alpha) - log_denom
        if not (np.all(np.isfinite(flp)) and np.all(np.isfinite(neg))):
            raise ValueError("observed_count must be at least feature_count (N_kj ≥ F_kj)")
        return _params_from_counts(BernoulliNBParams, classes, cc, fc, clp, flp, alpha,
                                   dtype, feature_names,
                                   neg_feature_log_prob=neg.astype(dtype, copy=False),
                                   binarize=binarize, observed_count=N)
    if binarize is None:
        check_binary_counts(cc, fc, alpha)
    if tables is not None:
        flp, neg = tables
    else:
        log_denom = log_allow_zero(cc + 2.0 * alpha)
        flp = _log_smoothed(fc, alpha, log_denom)
        # N_k − F_kj first: exact for counts near N_k, where 1 − p_kj would lose digits
        neg = _log_smoothed(fc, alpha, log_denom, base=cc)
    return _params_from_counts(BernoulliNBParams, classes, cc, fc, clp, flp, alpha, dtype,
                               feature_names, neg_feature_log_prob=neg.astype(dtype, copy=False),
                               binarize=binarize)

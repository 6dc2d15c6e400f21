"""Discrete naive Bayes on feature counts: multinomial and complement, and what the
Bernoulli model (:mod:`fastgen.naive_bayes.bernoulli`) shares with them.

Each model is a params dataclass (scored through :class:`~fastgen.naive_bayes.base.LinearNB`:
dense by one GEMM, CSR by the linear kernels), a ``fit_*_nb`` function, and
``*_params``, the params from class counts N_k and feature counts N_kj (or F_kj), used by
the fits and by the validated builders of :mod:`fastgen.naive_bayes.from_counts`.
:func:`~fastgen.stats.feature_counts.discrete_counts` is the one counting pass all of
them (and :func:`fastgen.nb_counts`) share.  The three model sections follow
one layout and are kept separate on purpose: their fields and formulas differ, and what
they share lives in :mod:`fastgen.stats.feature_counts` (counting) and
:mod:`fastgen.naive_bayes.base` (priors, scoring).

Imports the shared core (``_params``, ``_runtime``, ``_validation``) and
:mod:`fastgen.naive_bayes.base`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._em import check_em_options
from .._params import (
    derived_from_checked_input,
    kernel_view,
    log_normalised,
    recomputed,
    register_params,
)
from .._runtime import kernel_module, serial_for_small_inputs
from .._small import small_work
from .._validation import (
    check_class_weights,
    feature_names_of,
    is_sparse,
)
from .._validation.names import naming_columns
from ..kernels.log_rows import LOG_TABLE_SIZE, log_pair, normalised_logs
from ..stats import numpy_passes
from ..stats.feature_counts import (  # the counting pass, shared with fastgen.nb_counts
    check_binarize,
    check_binary_counts,
    class_feature_counts,
    discrete_counts,
    fit_inputs,
    reject_flagged_value,
    weighted_class_count,
)
from ..stats.missing import has_nan, nan_input
from .base import (
    LinearNB,
    check_alpha,
    check_bool,
    handed_over,
    log_allow_zero,
    log_priors,
)
from .em import (
    discrete_em,
    refuse_unlabeled,
    unlabelled_rows,
)

__all__ = [
    "MultinomialNBParams",
    "ComplementNBParams",
    "fit_multinomial_nb",
    "fit_complement_nb",
    "multinomial_params",
    "complement_params",
    "discrete_counts",
    "check_binarize",
    "check_binary_counts",
]

nb_kernels = kernel_module("nb")


def _params_from_counts(cls, classes, cc, fc, clp, flp, alpha, dtype, feature_names,
                        **fields):
    """``cls`` built from the fields the three discrete models share, plus ``fields``.

    The log-probability table is stored in the input's float dtype (``flp`` is a fresh
    float64 array, so the cast copies only when the dtype changes).  The tables made
    here are handed over read-only, so the params keep them without the defensive copy
    of :meth:`~fastgen._params.FittedParams._check_arrays` (two K×d copies per fit);
    ``cc`` and ``fc`` are copied there unless the fit made them.
    """
    fields = {name: handed_over(v) for name, v in fields.items()}
    with derived_from_checked_input():  # counts checked by the caller: no value scans
        return cls(classes=classes, class_count=cc, feature_count=fc,
                   class_log_prior=handed_over(clp),
                   feature_log_prob=handed_over(flp.astype(dtype, copy=False)),
                   alpha=alpha, feature_names=feature_names, **fields)


def _check_counts_overflow(flp, model):
    """Raise where the feature counts or their sums overflowed float64: the
    log-probabilities of finite counts with α > 0 are finite."""
    if not np.all(np.isfinite(flp)):
        k, j = np.argwhere(~np.isfinite(flp))[0]
        raise ValueError(
            f"X has values so large that the {model} feature counts (weighted sums of "
            f"X per class) or their totals overflow float64 (class index {k}, feature "
            f"{j}, both 0-based); rescale the features (e.g. divide each row by its sum) or "
            f"sample_weight")


def _log_table(alpha, n_entries):
    """log(arange(T) + α), T = min(LOG_TABLE_SIZE, n_entries // 8): the logs of small
    integer counts (a table no longer than an eighth of the counts, so small models
    take the logs directly)."""
    return np.log(np.arange(min(LOG_TABLE_SIZE, n_entries // 8), dtype=np.float64) + alpha)


def _log_smoothed(counts, alpha, shift, base=None):
    """log(base_k − counts_kj + α) − shift_k (or log(counts_kj + α) − shift_k without
    ``base``), a fresh (K, d) float64 table; integer counts read a table of logs (see
    :func:`fastgen.kernels.nb.log_counts`)."""
    K = counts.shape[0]
    sign = 1.0 if base is None else -1.0
    base = np.zeros(K) if base is None else np.ascontiguousarray(base, dtype=np.float64)
    out = np.empty(counts.shape)
    if small_work(counts.size):  # a small table: numpy (fastgen._small)
        return numpy_passes.log_counts(counts, base, sign, float(alpha), shift)
    with np.errstate(divide="ignore"):  # log(0) = −∞ where N_k − F_kj + α = 0
        return nb_kernels.log_counts(kernel_view(np.ascontiguousarray(counts, dtype=np.float64)),
                                     kernel_view(base), sign, float(alpha),
                                     np.ascontiguousarray(shift, dtype=np.float64),
                                     _log_table(alpha, counts.size), out)


def _multinomial_log_total(fc, alpha):
    """log(Σ_j N_kj + α·d) per class, the sum in the order the CSR count kernel uses
    (:func:`fastgen.kernels.nb.class_log_totals`), so that a fit and a model built
    from its counts agree bit for bit."""
    if small_work(fc.size):  # a small table: numpy (fastgen._small)
        return numpy_passes.class_log_totals(fc, float(alpha) * fc.shape[1])
    return nb_kernels.class_log_totals(kernel_view(np.ascontiguousarray(fc, dtype=np.float64)),
                                       float(alpha) * fc.shape[1])


def _finish_step(X, model, alpha, cc):
    """The finish step of the CSR count kernel for the fit of ``model`` ("multinomial"
    or "bernoulli"), its tables fresh: the model's log tables from the counting pass,
    by the formulas of :func:`multinomial_params` and :func:`bernoulli_params`
    (log θ_kj = log(N_kj + α) − log(Σ_j N_kj + α·d); log p_kj = log(F_kj + α) −
    log(N_k + 2α) and log(1 − p_kj) = log(N_k − F_kj + α) − log(N_k + 2α))."""
    K, d = cc.shape[0], X.shape[1]
    table = _log_table(alpha, K * d)
    if model == "multinomial":
        return normalised_logs(alpha, table, np.empty((K, d)))
    return log_pair(alpha, log_allow_zero(cc + 2.0 * alpha), cc, table, np.empty((K, d)),
                    np.empty((K, d)))


def _fit_counts(X, y, sample_weight, model, binarize=None, alpha=1.0):
    """How every discrete fit begins: validated input, then its counts in one pass.

    The fits check their scalar options first, so that a bad option fails before the pass
    over X.  Returns the classes, N_k, N_kj (F_kj for Bernoulli), the checked ``binarize``
    threshold (Bernoulli), X's float dtype, X's feature names, and for CSR X the
    model's log tables (multinomial: (log θ,); Bernoulli: (log p, log(1 − p))),
    computed in the counting pass, else None.
    """
    names = feature_names_of(X)
    X, classes, codes, w = fit_inputs(X, y, sample_weight, allow_sparse=True,
                                      csr_counts=True)
    if w.shape[0]:  # a class whose rows all weigh 0 has nothing to estimate
        check_class_weights(classes, weighted_class_count(codes, w, classes.shape[0]))
    if model == "bernoulli":
        binarize = check_binarize(binarize, X)
    K = classes.shape[0]
    if not is_sparse(X) or model == "complement":
        cc, fc = discrete_counts(X, codes, w, K, model, binarize=binarize)
        tables = None
    else:
        cc = weighted_class_count(codes, w, K)
        bernoulli_threshold = model == "bernoulli" and binarize is not None
        finish = _finish_step(X, model, alpha, cc)
        fc, bad = class_feature_counts(
            X, codes, w, K, binarize=bernoulli_threshold,
            threshold=binarize if bernoulli_threshold else 0.0, finish=finish)
        reject_flagged_value(X, bad, model)
        tables = (finish.out_a,) if model == "multinomial" else (finish.out_a, finish.out_b)
    # the counts are this fit's own: the params keep them without a copy
    return classes, handed_over(cc), handed_over(fc), binarize, X.dtype, names, tables


def _refuse_nan(X, nan_policy, why):
    """Raise ``why`` where ``nan_policy`` is "marginalize" and X holds a NaN."""
    if nan_input(X, nan_policy, allow_sparse=True) is not None:
        raise ValueError(why)


# ------------------------------------------------------------------------- multinomial


@register_params
@dataclass(frozen=True)
class MultinomialNBParams(LinearNB):
    """Multinomial naive Bayes on feature counts.

    Attributes
    ----------
    classes : (K,)
    class_count : (K,) float64 N_k
    feature_count : (K, d) float64 N_kj = Σ_{i: y_i=k} w_i x_ij
    class_log_prior : (K,) float64 log π_k
    feature_log_prob : (K, d) log θ_kj = log(N_kj + α) − log(Σ_j N_kj + α·d)
    alpha : float
    feature_names : tuple of str or None
        The column names of the data frame the model was fitted on (all str), else
        None; scoring checks X's columns against them (see :mod:`fastgen.scoring`).
    n_iter, converged, log_likelihood_history, history_monotone : EM record or None
        The EM record of a fit with ``unlabeled`` rows, None without EM (see
        :meth:`fastgen._params.FieldChecker.em_record`).

    Scores: jll_ik = log π_k + Σ_j x_ij log θ_kj.
    """

    classes: np.ndarray
    class_count: np.ndarray
    feature_count: np.ndarray
    class_log_prior: np.ndarray
    feature_log_prob: np.ndarray
    alpha: float
    feature_names: tuple | None = None
    n_iter: int | None = None
    converged: bool | None = None
    log_likelihood_history: np.ndarray | None = None
    history_monotone: bool | None = None

    _nonneg_input = True
    _records_em = True  # n_iter, converged, log_likelihood_history, history_monotone

    def _check_fields(self, check):
        self._check_counts_and_tables(check)

    def _check_derived(self, check):
        """Each class's θ_k is a distribution over the features, the smoothed estimate
        of feature_count and alpha."""
        super()._check_derived(check)
        log_normalised(check, "feature_log_prob", self.feature_log_prob, 1, self.dtype)
        want = multinomial_params(self.classes, self.class_count, self.feature_count,
                                  self.alpha, True, None, np.float64)
        recomputed(check, "feature_log_prob", self.feature_log_prob,
                   want.feature_log_prob, self.dtype, "feature_count and alpha")

    def _linear_form(self):
        return self.feature_log_prob.T, self.class_log_prior, False, 0.0


@serial_for_small_inputs(0)
@naming_columns()
def fit_multinomial_nb(X, y, *, alpha=1.0, fit_prior=True, class_prior=None,
                       sample_weight=None, nan_policy="raise", unlabeled=None,
                       unlabeled_weight=1.0, em_tol=1e-8, em_max_iter=100):
    """Fit multinomial naive Bayes.

    ::

        N_kj = Σ_{i: y_i=k} w_i x_ij,
        log θ_kj = log(N_kj + α) − log(Σ_j N_kj + α·d),
        log π_k = log N_k − log Σ_k N_k   (``fit_prior``), or fixed / uniform.

    The counts take one parallel pass over X: dense X in row ranges whose (K, d)
    buffers are merged in a fixed order; CSR X by class, each class row of the counts
    written by one work item, which also takes that row's logarithms (no buffers, no
    merge, no second pass).  The result does not depend on the thread count.

    Parameters
    ----------
    X : array-like (n, d) or scipy CSR matrix/array
        Non-negative feature counts (a negative value is an error).
    y : array-like (n,)
    alpha : float, default 1.0
        Additive smoothing: 1 is Laplace, below 1 Lidstone; < 1e-10 is clipped.
    fit_prior : bool, default True
    class_prior : array-like (K,), optional
    sample_weight : array-like (n,), optional
    nan_policy : {"raise", "marginalize"}, default "raise"
        With "marginalize" a NaN in X is still refused, with the reason: θ_k is
        normalised across the features, so the likelihood does not factorise per
        feature, and the expected value of a missing count depends on the row's total
        count, which is unobserved.  Scoring with ``nan_policy="marginalize"`` works.
    unlabeled : array-like (m, d) or scipy CSR, optional
        Rows without labels (counts): EM from the labelled-only fit (Nigam et al.
        2000, :mod:`fastgen.naive_bayes.em`); each M-step adds their expected counts
        N_kj (weights λ·r_ik) to the labelled counts.  None, no rows or λ = 0: the
        fit without EM.
    unlabeled_weight, em_tol, em_max_iter : float, float, int
        λ, EM's stopping rule and its iterations at most, as for :func:`fastgen.fit_gda`.

    Returns
    -------
    MultinomialNBParams
    """
    alpha = check_alpha(alpha)
    fit_prior = check_bool(fit_prior, "fit_prior")
    _refuse_nan(X, nan_policy, _MULTINOMIAL_NAN)
    em = check_em_options(unlabeled_weight, em_tol, em_max_iter)
    em_rows = unlabelled_rows(X, y, sample_weight, unlabeled, em,
                              allow_nan=nan_policy == "marginalize")
    if em_rows is not None and has_nan(em_rows.U):  # refused with the reason, as in X
        raise ValueError(_MULTINOMIAL_NAN.replace("X contains", "unlabeled contains", 1))
    classes, cc, fc, _, dtype, names, tables = _fit_counts(X, y, sample_weight,
                                                           "multinomial", alpha=alpha)
    params = multinomial_params(classes, cc, fc, alpha, fit_prior, class_prior, dtype,
                                names, tables)
    if em_rows is None:
        return params
    return discrete_em(params, em_rows, lambda c, f: multinomial_params(
        classes, c, f, alpha, fit_prior, class_prior, dtype, names), nonneg=True)


_MULTINOMIAL_NAN = (
    "X contains NaN and multinomial naive Bayes is not fitted with missing counts: θ_k is "
    "normalised across the features, so a missing count is not left out feature by "
    "feature, and its expected value depends on the row's total count, which is not "
    "observed; drop the rows or impute the counts (scoring with "
    "nan_policy='marginalize' works)")


def multinomial_params(classes, cc, fc, alpha, fit_prior, class_prior, dtype,
                       feature_names=None, tables=None):
    """:class:`MultinomialNBParams` from checked counts (see :func:`fit_multinomial_nb`);
    ``tables``: (log θ,) already computed from these counts, as the CSR fit's counting
    pass gives it."""
    clp = log_priors(cc, fit_prior, class_prior, classes)
    if tables is not None:
        (flp,) = tables
    else:
        # Σ_j (N_kj + α) as Σ_j N_kj + α·d: one pass over the counts, no smoothed copy
        with np.errstate(over="ignore", invalid="ignore"):  # checked below
            flp = _log_smoothed(fc, alpha, _multinomial_log_total(fc, alpha))
    _check_counts_overflow(flp, "multinomial")
    return _params_from_counts(MultinomialNBParams, classes, cc, fc, clp, flp, alpha, dtype,
                               feature_names)


# -------------------------------------------------------------------------- complement


@register_params
@dataclass(frozen=True)
class ComplementNBParams(LinearNB):
    """Complement naive Bayes (Rennie et al. 2003), as scikit-learn scores it.

    Attributes
    ----------
    classes : (K,)
    class_count : (K,) float64
    feature_count : (K, d) float64 N_kj
    feature_all : (d,) float64 Σ_k N_kj
    class_log_prior : (K,) float64, used in the scores only when K = 1
    feature_log_prob : (K, d) weights w_kj: with c_kj = Σ_k' N_k'j − N_kj + α and
        ℓ_kj = log(c_kj / Σ_j c_kj), w_kj = −ℓ_kj, or ℓ_kj / Σ_j ℓ_kj if ``norm``
    alpha : float
    norm : bool
    feature_names : tuple of str or None
        The column names of the data frame the model was fitted on (all str), else
        None; scoring checks X's columns against them (see :mod:`fastgen.scoring`).

    Scores: jll_ik = Σ_j x_ij w_kj (argmax is the prediction).
    """

    classes: np.ndarray
    class_count: np.ndarray
    feature_count: np.ndarray
    feature_all: np.ndarray
    class_log_prior: np.ndarray
    feature_log_prob: np.ndarray
    alpha: float
    norm: bool
    feature_names: tuple | None = None

    _nonneg_input = True

    def _check_fields(self, check):
        self._check_counts_and_tables(check, weights="finite")
        check.array("feature_all", ("d",), "float", "nonneg")
        check.boolean("norm")

    def _check_derived(self, check):
        """feature_all and the weights recomputed from the feature counts, α and norm
        (:func:`complement_params`)."""
        super()._check_derived(check)
        fc = self.feature_count
        eps = float(np.finfo(self.dtype).eps)
        if not np.allclose(self.feature_all, fc.sum(axis=0), rtol=8 * fc.shape[0] * 2.2e-16,
                           atol=0.0):
            check.fail("feature_all", "must be the column sums of feature_count (a "
                                      "damaged or edited file)")
        want = complement_params(self.classes, self.class_count, fc, self.alpha,
                                 self.norm, True, None, np.float64).feature_log_prob
        have = self.feature_log_prob.astype(np.float64)
        scale = float(np.max(np.abs(want), initial=1.0))
        if not np.all(np.abs(have - want) <= 16.0 * eps * (fc.shape[1] + 1) * scale):
            check.fail("feature_log_prob", "must be the complement weights of "
                                           "feature_count, alpha and norm (a damaged or "
                                           "edited file)")

    def _linear_form(self):
        K = self.class_log_prior.shape[0]
        b = self.class_log_prior if K == 1 else np.zeros(K)
        return self.feature_log_prob.T, b, False, 0.0


@serial_for_small_inputs(0)
@naming_columns()
def fit_complement_nb(X, y, *, alpha=1.0, norm=False, sample_weight=None,
                      nan_policy="raise", unlabeled=None):
    """Fit complement naive Bayes.

    ::

        c_kj = Σ_k' N_k'j + α − N_kj,     ℓ_kj = log(c_kj / Σ_j c_kj),
        w_kj = −ℓ_kj,  or with ``norm``  w_kj = ℓ_kj / Σ_j ℓ_kj.

    Class priors are the empirical ones and enter the scores only when there is a
    single class, as in scikit-learn.

    Parameters
    ----------
    X : array-like (n, d) or scipy CSR matrix/array
        Non-negative feature counts.
    y : array-like (n,)
    alpha : float, default 1.0
    norm : bool, default False
        Second normalisation of the weights (Rennie et al. §3.3).
    sample_weight : array-like (n,), optional
    nan_policy : {"raise", "marginalize"}, default "raise"
        NaN is refused either way (with "marginalize", with the reason: the complement
        weights are not the log-probabilities of a generative model, so there is no
        likelihood to leave the missing features out of).
    unlabeled : None
        Refused (a ValueError): complement naive Bayes has no generative likelihood,
        so EM cannot label rows with it.

    Returns
    -------
    ComplementNBParams
    """
    refuse_unlabeled(unlabeled, "complement naive Bayes")
    alpha = check_alpha(alpha)
    norm = check_bool(norm, "norm")
    _refuse_nan(X, nan_policy,
                "X contains NaN and complement naive Bayes cannot be fitted with missing "
                "values: its weights are not the log-probabilities of a generative model, "
                "so there is no likelihood of the observed features; impute the missing "
                "values or use multinomial naive Bayes")
    classes, cc, fc, _, dtype, names, _ = _fit_counts(X, y, sample_weight, "complement")
    return complement_params(classes, cc, fc, alpha, norm, True, None, dtype, names)


def complement_params(classes, cc, fc, alpha, norm, fit_prior, class_prior, dtype,
                      feature_names=None):
    """:class:`ComplementNBParams` from checked counts (see :func:`fit_complement_nb`)."""
    clp = log_priors(cc, fit_prior, class_prior, classes)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):  # checked below
        feature_all = fc.sum(axis=0)
        comp = feature_all + alpha - fc
        logged = np.log(comp / comp.sum(axis=1, keepdims=True))
        flp = logged / logged.sum(axis=1, keepdims=True) if norm else -logged
    _check_counts_overflow(flp, "complement")
    return _params_from_counts(ComplementNBParams, classes, cc, fc, clp, flp, alpha, dtype,
                               feature_names, feature_all=feature_all, norm=norm)

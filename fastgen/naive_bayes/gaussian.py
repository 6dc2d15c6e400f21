"""Gaussian naive Bayes: params, fit and the params from (merged) diagonal class moments.

The fit reads X only through the statistics layer (:func:`fastgen.stats.class_rows`:
host or device X); imports the shared core (``_validation``, ``kernels``) and
:mod:`fastgen.naive_bayes.base`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from .._em import check_em_options, incomplete_unlabeled
from .._params import FittedParams, kernel_view, log_normalised, register_params
from .._runtime import serial_for_small_inputs
from .._validation import (
    check_class_weights,
    check_priors,
    check_sample_weight,
    check_scalar,
    check_X,
    check_y,
    feature_names_of,
)
from .._validation.names import feature_label, naming_columns
from ..cuda import is_device_array
from ..gda.scoring import GAUSSIAN_SCORER, DiagonalTables
from ..stats.available import available_case, observed_variance
from ..stats.missing import nan_input
from ..stats.moments import (
    ClassMoments,
    check_floor_finite,
    check_variances_representable,
    class_rows,
    variance_floor,
)
from .base import log_allow_zero
from .em import EMRows, gaussian_em, gaussian_incomplete_em, unlabelled_moment_rows

__all__ = ["GaussianNBParams", "fit_gaussian_nb", "gaussian_params"]


@register_params
@dataclass(frozen=True)
class GaussianNBParams(FittedParams):
    """Gaussian naive Bayes: x_j | y=k ~ N(μ_kj, σ²_kj), features independent.

    Attributes
    ----------
    classes : (K,) original labels
    class_count : (K,) float64 weighted number of samples per class
    class_log_prior : (K,) log π_k (float64)
    means : (K, d) μ_kj
    variances : (K, d) σ²_kj = (1/N_k) Σ_{i: y_i=k} w_i (x_ij − μ_kj)² + ε
    epsilon : float
        ε = var_smoothing · max_j Var(x_j), the variance of each feature over all rows
        (unweighted), as scikit-learn.
    var_smoothing : float
    feature_names : tuple of str or None
        The column names of the data frame the model was fitted on (all str), else
        None; scoring checks X's columns against them (see :mod:`fastgen.scoring`).
    n_iter, converged, log_likelihood_history, history_monotone : EM record or None
        The EM record of a fit with ``unlabeled`` rows, None without EM (see
        :meth:`fastgen._params.FieldChecker.em_record`).
    """

    scorer = GAUSSIAN_SCORER

    classes: np.ndarray
    class_count: np.ndarray
    class_log_prior: np.ndarray
    means: np.ndarray
    variances: np.ndarray
    epsilon: float
    var_smoothing: float
    feature_names: tuple | None = None
    n_iter: int | None = None
    converged: bool | None = None
    log_likelihood_history: np.ndarray | None = None
    history_monotone: bool | None = None

    _feature_table = "means"
    _records_em = True  # n_iter, converged, log_likelihood_history, history_monotone

    def _check_fields(self, check):
        dt = check.table("means", "finite").dtype
        check.array("variances", ("K", "d"), dt, "positive")
        check.array("class_count", ("K",), "float", "nonneg")
        check.array("class_log_prior", ("K",), "float", "log")
        check.real("epsilon", low=0.0)
        check.real("var_smoothing", low=0.0)

    def _check_derived(self, check):
        """The class log-priors are a distribution, and every variance holds the floor
        ε that was added to it."""
        log_normalised(check, "class_log_prior", self.class_log_prior, 0, self.dtype)
        eps = float(np.finfo(self.dtype).eps)
        if not np.all(self.variances >= self.epsilon * (1.0 - 4.0 * eps)):
            check.fail("variances", f"must all be at least epsilon={self.epsilon:.6g}, the "
                                    f"floor added to them (a damaged or edited file)")

    @cached_property
    def _tables(self):
        var = self.variances.astype(np.float64)
        means = np.ascontiguousarray(self.means, dtype=np.float64)
        const = self.class_log_prior.astype(np.float64) - 0.5 * np.sum(
            np.log(2.0 * np.pi * var), axis=1
        )
        return DiagonalTables(*kernel_view(means, np.ascontiguousarray(1.0 / var), const))

    def scoring_tables(self):
        """("diagonal", :class:`~fastgen.gda.scoring.DiagonalTables` (μ (K, d), 1/σ²
        (K, d), const (K,))) in float64, const_k = log π_k − ½ Σ_j log 2πσ²_kj: the
        tables of the Gaussian scorer (:mod:`fastgen.gda.scoring`), host or device."""
        return "diagonal", self._tables


@serial_for_small_inputs(0)
@naming_columns()
def fit_gaussian_nb(X, y, *, priors=None, var_smoothing=1e-9, sample_weight=None,
                    nan_policy="raise", unlabeled=None, unlabeled_weight=1.0, em_tol=1e-8,
                    em_max_iter=100):
    """Fit Gaussian naive Bayes.

    For each class k and feature j, with weights w_i (1 if not given)::

        N_k = Σ_{i: y_i=k} w_i,     μ_kj = (1/N_k) Σ_{i: y_i=k} w_i x_ij,
        σ²_kj = (1/N_k) Σ_{i: y_i=k} w_i (x_ij − μ_kj)² + ε,
        ε = var_smoothing · max_j Var(x_j)   (unweighted variance over all rows),
        π_k = N_k / Σ_k N_k   unless ``priors`` is given.

    The class moments come from the same one-pass kernel as
    ``fit_gda(covariance="diagonal")`` (shifted sums per group of rows and class,
    merged pairwise: the variances keep their digits when |μ| ≫ σ, and the result is
    the same for any number of threads).  Var(x_j) over all rows follows exactly from
    merging the class moments; with sample weights, scikit-learn's unweighted variance
    takes one more pass.

    Parameters
    ----------
    X : array-like (n, d)
        Dense real data; float32 stays float32.
    y : array-like (n,)
        Class labels.
    priors : array-like (K,), optional
        Class prior probabilities (non-negative, summing to 1).
    var_smoothing : float, default 1e-9
        Fraction of the largest feature variance added to every variance.
    sample_weight : array-like (n,), optional
    nan_policy : {"raise", "marginalize"}, default "raise"
        "marginalize": NaN entries are missing values (missing at random); each
        feature's mean and variance per class come from the rows that observe it (the
        exact maximum likelihood, as the likelihood factorises over the features), and
        ε from the unweighted variance of each feature over its observed entries.  A
        column, or a class of a feature, with no observed value raises.  With
        ``unlabeled`` rows, NaN may be in X, in them, or in both: EM with the
        available-case statistics of every row (docs/guide/incomplete_data.rst).
    unlabeled : array-like (m, d), optional
        Rows without labels: EM from the labelled-only fit
        (:mod:`fastgen.naive_bayes.em`), each M-step merging their soft moments
        (weights λ·r_ik) with the labelled moments; ε is then var_smoothing times the
        largest variance of the rows the M-step sees, and the variances are guarded
        against collapse (:func:`fastgen._em.collapse_guard`).  None, no rows or
        λ = 0: the fit without EM.
    unlabeled_weight, em_tol, em_max_iter : float, float, int
        λ, EM's stopping rule and its iterations at most, as for :func:`fastgen.fit_gda`.

    Returns
    -------
    GaussianNBParams
    """
    em = check_em_options(unlabeled_weight, em_tol, em_max_iter)
    Xv = None if is_device_array(X) else nan_input(X, nan_policy)
    U = None if is_device_array(X) or nan_policy != "marginalize" else \
        incomplete_unlabeled(X, Xv, unlabeled, em, feature_names_of(X))
    if U is not None:
        return _fit_incomplete(Xv if Xv is not None else check_X(X), y, U, priors,
                               var_smoothing, sample_weight, feature_names_of(X), em)
    if Xv is not None:
        return _fit_missing(Xv, y, priors, var_smoothing, sample_weight,
                            feature_names_of(X))
    # X, y and the weights are checked on the host or on the device; NaN/inf in X is
    # found through the moments (it makes them non-finite): no separate pass over X
    rows = class_rows(X, y, sample_weight)
    var_smoothing = check_scalar(var_smoothing, "var_smoothing", low=0.0)
    check_priors(priors, rows.classes)
    em_rows = unlabelled_moment_rows(rows, unlabeled, em,
                                     allow_nan=nan_policy == "marginalize")
    moments = rows.moments("diagonal")
    check_class_weights(rows.classes, moments.counts)
    feature_variance = None  # unweighted: the total variance implied by the moments
    if rows.weighted:
        feature_variance = rows.unweighted_variance()
    params = gaussian_params(moments, priors, var_smoothing, feature_variance)
    if em_rows is None:
        return params
    return gaussian_em(params, rows, em_rows,
                       lambda m: gaussian_params(m, priors, var_smoothing, None),
                       monotone=not var_smoothing)


def _fit_missing(X, y, priors, var_smoothing, sample_weight, names):
    """:func:`fit_gaussian_nb` of validated X with NaN entries: available-case
    moments (:func:`fastgen.stats.available.available_case`)."""
    classes, codes = check_y(y, X.shape[0])
    w = check_sample_weight(sample_weight, X.shape[0])
    var_smoothing = check_scalar(var_smoothing, "var_smoothing", low=0.0)
    check_priors(priors, classes)
    ac = available_case(X, np.isnan(X), codes, w, classes.shape[0], classes)
    check_class_weights(classes, ac.counts)
    # scatter scaled so that scatter / N_k is the available-case S_kj / N_kj
    moments = ClassMoments(classes, ac.counts, ac.means,
                           ac.sumsq * (ac.counts[:, None] / ac.observed), "diagonal",
                           str(X.dtype), names)
    # ε from the variance of each feature's observed entries: unweighted, as without
    # NaN (scikit-learn's rule); without weights the same statistics as fit_gda's
    # diagonal kinds, so both floors agree bit for bit and a row with no observed
    # value moves neither
    feature_variance = np.nanvar(X, axis=0, dtype=np.float64) if w.shape[0] else \
        observed_variance(ac)
    return gaussian_params(moments, priors, var_smoothing, feature_variance)


def _fit_incomplete(X, y, U, priors, var_smoothing, sample_weight, names, em):
    """:func:`fit_gaussian_nb` with unlabelled rows U where X or U holds NaN: EM from
    the labelled-only fit, each M-step the available-case statistics of the labelled
    rows merged with those of U under the memberships λ·r_ik
    (:func:`fastgen.naive_bayes.em.gaussian_incomplete_em`)."""
    classes, codes = check_y(y, X.shape[0])
    w = check_sample_weight(sample_weight, X.shape[0])
    var_smoothing = check_scalar(var_smoothing, "var_smoothing", low=0.0)
    check_priors(priors, classes)
    ac = available_case(X, np.isnan(X), codes, w, classes.shape[0], classes)
    start = fit_gaussian_nb(X, y, priors=priors, var_smoothing=var_smoothing,
                            sample_weight=sample_weight, nan_policy="marginalize")
    if names is not None:
        start = dataclasses.replace(start, feature_names=names)

    def build(stats):
        # scatter scaled so that scatter / N_k is the available-case S_kj / N_kj
        m = ClassMoments(classes, stats.counts, stats.means,
                         stats.sumsq * (stats.counts[:, None] / stats.observed),
                         "diagonal", str(X.dtype), names)
        return gaussian_params(m, priors, var_smoothing, observed_variance(stats))

    return gaussian_incomplete_em(start, EMRows(X, codes, w, U, em), ac, build,
                                  monotone=not var_smoothing)


def gaussian_params(moments, priors, var_smoothing, feature_variance):
    """:class:`GaussianNBParams` from diagonal ``moments`` (``var_smoothing`` checked).

    σ²_kj = S_kj / N_k + ε, ε = var_smoothing · max_j feature_variance_j (by default the
    weighted total variance implied by the moments), π_k = N_k / Σ_k N_k unless
    ``priors``; see :func:`fastgen.naive_bayes.gaussian_nb_from_moments`.
    """
    cc = moments.counts.astype(np.float64)
    K, d = moments.means.shape
    p = check_priors(priors, moments.classes)
    if cc.sum() <= 0:
        raise ValueError("moments have zero total weight; fit at least one sample")
    if feature_variance is None:
        mu = cc @ moments.means / cc.sum()
        with np.errstate(over="ignore"):
            total = moments.scatter.sum(axis=0) + cc @ (moments.means - mu) ** 2
        if not np.all(np.isfinite(total)):
            raise ValueError(
                "the feature variances overflow float64 (X has values near 1e154 or "
                "larger); rescale the features (e.g. divide by their standard deviation)"
            )
        feature_variance = total / cc.sum()
    fv = np.asarray(feature_variance, dtype=np.float64)
    if fv.shape != (d,) or not np.all(np.isfinite(fv)) or np.any(fv < 0):
        raise ValueError(
            f"feature_variance must have shape ({d},) with finite non-negative entries"
        )
    epsilon = variance_floor(var_smoothing, fv)  # the rule shared with fit_gda
    with np.errstate(divide="ignore", invalid="ignore"):
        var = np.where(cc[:, None] > 0, moments.scatter / cc[:, None], 0.0)
    check_variances_representable(var, np.abs(moments.means), var + epsilon,
                                  lambda i: f" in class {moments.classes[i[0]].item()!r}")
    with np.errstate(over="ignore"):
        var += epsilon
    check_floor_finite(var, var_smoothing, float(np.max(fv)))
    if not np.all(var > 0):
        k, j = np.argwhere(~(var > 0))[0]
        raise ValueError(
            f"{feature_label(j, moments.feature_names)} has zero variance in class "
            f"{moments.classes[k].item()!r} and "
            f"var_smoothing={var_smoothing} adds nothing (every feature is constant, as with "
            f"one sample); pass var_smoothing > 0 with non-constant data"
        )
    dt = np.dtype(moments.dtype)
    small = np.argwhere(var < 1.0 / np.finfo(dt).max)  # 1/σ² would overflow
    if small.size:
        k, j = small[0]
        raise ValueError(
            f"the variance of {feature_label(j, moments.feature_names)} in class "
            f"{moments.classes[k].item()!r} is "
            f"{float(var[k, j]):.3g}, too small for {dt} (its reciprocal overflows); "
            f"rescale the features (e.g. divide by their standard deviation)"
        )
    if dt != np.float64 and not (np.all(var <= np.finfo(dt).max)
                                 and np.all(np.abs(moments.means) <= np.finfo(dt).max)):
        raise ValueError(
            f"the fitted means or variances overflow {dt} (the dtype of X); pass X as "
            f"float64 or rescale the features"
        )
    if p is None:
        p = cc / cc.sum()
    # fresh arrays, handed over read-only: the params keep them without a copy
    tables = [cc, log_allow_zero(p), moments.means.astype(dt), var.astype(dt)]
    for a in tables:
        a.flags.writeable = False
    return GaussianNBParams(
        classes=moments.classes,
        class_count=tables[0],
        class_log_prior=tables[1],
        means=tables[2],
        variances=tables[3],
        epsilon=float(epsilon),
        var_smoothing=float(var_smoothing),
        feature_names=moments.feature_names,
    )

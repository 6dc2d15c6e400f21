"""Fits of Gaussian discriminant analysis: option checks, ``fit_gda`` and
``gda_from_moments``.

Model: y ~ Categorical(φ), x | y=k ~ N(μ_k, Σ_k).  The maximum-likelihood estimates are
φ_k = W_k / W, μ_k = the weighted mean of class k and Σ = (1/W) Σ_i w_i (x_i − μ_{y_i})
(x_i − μ_{y_i})ᵀ (pooled) or the same sum per class divided by W_k (per-class).  The
fits read X only through the statistics layer (:func:`fastgen.stats.class_rows`: one
read of host or device X for the moments, a second for Ledoit-Wolf's fourth moments);
:mod:`fastgen.gda.covariance` turns the moments into params.
"""

from __future__ import annotations

import numpy as np

from .._em import check_em_options, check_unlabeled, incomplete_unlabeled
from .._runtime import blas_single_thread, serial_for_small_inputs
from .._validation import check_priors, check_scalar, check_X, feature_names_of
from .._validation.names import naming_columns
from ..cuda import is_device_array
from ..stats.missing import check_nan_policy, nan_input
from ..stats.moments import ClassMoments, class_rows
from .covariance import inverse_within_sd, params_from_moments
from .em_unlabeled import gda_em
from .params import COVARIANCE_TYPES, SCATTER_FOR, GDAParams

__all__ = ["fit_gda", "gda_from_moments", "check_gda_options"]

# Which stored scatter kinds can produce which covariance model.
_DERIVABLE = {
    "pooled": ("pooled", "pooled_diagonal"),
    "per_class": COVARIANCE_TYPES,
    "diagonal": ("diagonal", "pooled_diagonal"),
}


def _check_covariance_type(covariance):
    if not isinstance(covariance, str) or covariance not in COVARIANCE_TYPES:
        raise ValueError(
            f"covariance must be one of {COVARIANCE_TYPES}; got {covariance!r}"
        )


def _check_shrinkage(shrinkage, covariance):
    if shrinkage is None:
        return None
    if isinstance(shrinkage, str):
        if shrinkage not in ("ledoit-wolf", "oas"):
            raise ValueError(
                f"shrinkage must be None, a float in [0, 1], 'ledoit-wolf' or 'oas'; "
                f"got {shrinkage!r}"
            )
        if covariance not in ("pooled", "per_class"):
            raise ValueError(
                f"shrinkage={shrinkage!r} estimates the intensity for a full covariance; "
                f"with covariance={covariance!r} pass a float shrinkage instead"
            )
        return shrinkage
    return check_scalar(shrinkage, "shrinkage", low=0.0, high=1.0)


def check_gda_options(covariance, priors, reg, shrinkage, unbiased, K, var_smoothing=1e-9,
                      tol=1e-4):
    """Validate the options of a GDA fit for K classes (``K``: the class labels, or their
    number; ``priors=None`` skips the priors, so that a fit that learns K later can check
    the rest before its pass over X).

    Returns the checked ``(priors, reg, shrinkage)``; raises ValueError naming the option.
    """
    _check_covariance_type(covariance)
    shrinkage = _check_shrinkage(shrinkage, covariance)
    reg = check_scalar(reg, "reg", low=0.0, high=1.0)
    check_scalar(var_smoothing, "var_smoothing", low=0.0)
    check_scalar(tol, "tol", low=0.0)
    if not isinstance(unbiased, (bool, np.bool_)):
        raise ValueError(f"unbiased must be True or False; got {unbiased!r}")
    priors = check_priors(priors, K)
    return priors, reg, shrinkage


@serial_for_small_inputs(0)
@naming_columns()
def fit_gda(X, y, covariance: str = "pooled", *, priors=None, sample_weight=None,
            reg: float = 0.0, shrinkage=None, unbiased: bool = False,
            var_smoothing: float = 1e-9, tol: float = 1e-4, nan_policy: str = "raise",
            unlabeled=None, unlabeled_weight: float = 1.0, em_tol: float = 1e-8,
            em_max_iter: int = 100) -> GDAParams:
    """Fit Gaussian discriminant analysis by maximum likelihood.

    Parameters
    ----------
    X : array-like (n, d), or a CUDA device array
        Training data.  float32 input gives float32 params (the moments are accumulated
        in float64 either way).  Device X (CuPy, PyTorch, numba) is read on the device
        (:func:`fastgen.class_moments`); ``shrinkage="ledoit-wolf"`` needs host X.
    y : array-like (n,)
        Class labels (any sortable hashable type; host or device).
    covariance : {"pooled", "per_class", "diagonal", "pooled_diagonal"}
        "pooled": one Σ shared by the classes (LDA; linear boundaries);
        "per_class": Σ_k per class (QDA); "diagonal": per-class variances (Gaussian
        naive Bayes); "pooled_diagonal": variances shared by the classes (naive Bayes
        with a linear boundary).
    priors : array-like (K,), optional
        Class priors p(y=k) in the order of ``params.classes``; default W_k / W.
    sample_weight : array-like (n,), optional
        Non-negative weights (a weight of 2 is the same as repeating the row).
    reg : float in [0, 1]
        Σ ← (1 − reg)·Σ + reg·I after shrinkage (scikit-learn's QDA ``reg_param``).
        Not invariant to the units of the features (I is in the data's units): the
        predictions may change when a feature is rescaled.
    shrinkage : None, float in [0, 1], "ledoit-wolf" or "oas"
        A float a: Σ ← (1 − a)·Σ + a·(tr Σ / d)·I, scikit-learn's definition.  Like
        ``reg`` it depends on the units (a feature in large units dominates tr Σ/d and
        swamps the small-variance ones): standardise the features first, or use an
        estimated shrinkage.  "ledoit-wolf" and "oas" shrink the within-class
        *correlation* matrix toward I, Σ ← (1 − a)·Σ + a·diag(Σ) (the variances stay,
        the correlations shrink), with a estimated on the within-class standardised data
        (x_i − μ_{y_i})/s, s the within-class standard deviations: the intensity of
        ``sklearn.covariance.ledoit_wolf`` (or ``oas``) on those rows, over the features
        with s > 0.  Both are invariant to the units of every feature (the idea of
        scikit-learn's LDA ``shrinkage="auto"``, which standardises each class).  Pooled:
        one intensity for the pooled covariance; per_class: one per class, on that
        class's standardised rows.  Ledoit-Wolf costs one extra O(n·d) pass over X (the
        fourth moments of the standardised rows).
    unbiased : bool
        Divide scatter by W_k − 1 (per class) or W − K (pooled) instead of the MLE's
        W_k or W; scikit-learn before 1.9 did this in QDA and LDA's svd solver.
    var_smoothing : float ≥ 0, default 1e-9
        Diagonal models only: the variance floor ε = var_smoothing · max_j Var(x_j)
        (the variance of each feature over all rows, weighted by ``sample_weight``;
        with NaN, over the rows that observe it) is added to every variance, as
        scikit-learn's GaussianNB and :func:`fastgen.fit_gaussian_nb` do
        (:func:`fastgen.stats.variance_floor`).  0 gives the pure MLE, and an error on
        a zero variance.
    tol : float ≥ 0, default 1e-4
        The rank rule of every covariance kind: an eigenvalue of the within-class
        correlation matrix counts when it is above max(tol², d·ε) (the singular values
        of the standardised within-class data above tol, scikit-learn's svd-solver
        ``tol``).  Pooled model: directions at or below it are dropped and the model
        classifies in the range of the within-class scatter (``params.rank`` < d).
        Per-class model: a class with such a direction raises SingularCovarianceError
        naming its rank (since issue 42 also when its Cholesky factorisation would
        succeed: the eigenvalues decide, not the pivots).
    nan_policy : {"raise", "marginalize"}, default "raise"
        "marginalize": NaN entries of host X are missing values (missing at random).
        The diagonal kinds take the available-case estimates (each feature over the
        rows that observe it: the exact MLE); "pooled" and "per_class" run EM from
        them (:mod:`fastgen.gda.em`) and record ``n_iter``, ``converged`` and
        ``log_likelihood_history``; ``reg`` and a float ``shrinkage`` apply to the
        converged covariance, an estimated shrinkage raises.  A column with no observed
        value, or a class with none for some feature, raises; a row with none counts
        toward its class's weight and prior only.  Without NaN the fit is
        the complete-data one.  With ``unlabeled`` rows, NaN may be in X, in them, or
        in both: one EM over the missing labels and values
        (:mod:`fastgen.gda.em_incomplete`; docs/guide/incomplete_data.rst).
    unlabeled : array-like (m, d), optional
        Rows without labels (same features, host X; NaN only with
        ``nan_policy="marginalize"``, a missing value).  The fit is then EM from
        the labelled-only fit (:mod:`fastgen.gda.em_unlabeled`): the E-step takes the
        model's posteriors of these rows, the M-step the moments of the labelled rows
        merged with the rows' soft moments (weights λ·r_ik), built with the options
        above.  None or no rows: the fit without EM, unchanged.
        ``shrinkage="ledoit-wolf"`` is not available with them (its fourth moments
        need hard labels).
    unlabeled_weight : float ≥ 0, default 1
        λ, the weight of every unlabelled row (Nigam et al. 2000); 0 ignores them.
    em_tol : float ≥ 0, default 1e-8
        Both EMs (missing features, unlabelled rows) stop when an iteration changes the
        objective by at most em_tol·W (W the total row weight, λ per unlabelled row:
        the mean gain per row; unlike a change relative to |ℓ| this does not depend on
        the units of the features).
    em_max_iter : int ≥ 0, default 100
        At most this many EM iterations; ``params.n_iter``, ``params.converged`` and
        ``params.log_likelihood_history`` record the run.

    Returns
    -------
    GDAParams
        φ_k = W_k / W, μ_k = Σ_{i∈k} w_i x_i / W_k,
        Σ = (1/W)·Σ_i w_i (x_i − μ_{y_i})(x_i − μ_{y_i})ᵀ (pooled MLE),
        with Cholesky factors and log-determinants for scoring.  A singular pooled Σ
        (constant or collinear features) gives a model of ``rank`` r < d, as
        scikit-learn's ``LinearDiscriminantAnalysis()`` (svd solver): the features
        are scaled by their within-class standard deviations, Σ is eigendecomposed
        and only the r directions above ``tol`` are used (see :class:`GDAParams`).
        Full-rank data keep the Cholesky path.

    Raises
    ------
    ValueError
        For invalid input (the message names the argument and the problem).
    SingularCovarianceError
        (a LinAlgError and a ValueError) when a per-class covariance is not positive
        definite (the message names the class, the rank found and a ``reg`` that makes
        the fit succeed), when a diagonal model has a zero variance with
        ``var_smoothing=0``, when every feature is constant within every class, or
        when a feature is so small (below about 1e-154) that the squares of its
        deviations underflow ("rescale the features").  Whether a fit succeeds never
        depends on the units of a feature otherwise: positive definiteness is tested on
        the correlation matrix.
    """
    _check_covariance_type(covariance)
    check_nan_policy(nan_policy)
    em = check_em_options(unlabeled_weight, em_tol, em_max_iter)
    if nan_policy == "marginalize" and not is_device_array(X):
        names = feature_names_of(X)
        Xv = nan_input(X, nan_policy)
        U = incomplete_unlabeled(X, Xv, unlabeled, em, names)

        def check_options(classes):
            return check_gda_options(covariance, priors, reg, shrinkage, unbiased, classes,
                                     var_smoothing, tol)

        if U is not None:
            from .em_incomplete import fit_gda_incomplete  # only for data with NaN

            return fit_gda_incomplete(Xv if Xv is not None else check_X(X), y, U,
                                      covariance, sample_weight, unbiased, var_smoothing,
                                      tol, em, names, check_options)
        if Xv is not None:
            from .em import fit_gda_missing  # only for data with NaN

            with blas_single_thread():
                return fit_gda_missing(
                    Xv, y, covariance, sample_weight, shrinkage, unbiased, var_smoothing,
                    tol, em.tol, em.max_iter, names, check_options)
    # X, y and the weights checked on the host or on the device; NaN/inf in X is found
    # through the moments below (no extra pass)
    rows = class_rows(X, y, sample_weight)
    priors, reg, shrinkage = check_gda_options(covariance, priors, reg, shrinkage, unbiased,
                                               rows.classes, var_smoothing, tol)
    U = None
    if unlabeled is not None:
        if rows.on_device:
            raise ValueError("unlabeled rows need host X; fit on the host (numpy) arrays")
        # NaN in U under "marginalize" reaches here only with λ = 0 (no EM: U unused)
        U = check_unlabeled(unlabeled, rows.X, feature_names=rows.feature_names,
                            allow_nan=nan_policy == "marginalize")
        if U is not None and shrinkage == "ledoit-wolf" and em.weight:
            raise ValueError(
                "shrinkage='ledoit-wolf' is not available with unlabeled rows (its fourth "
                "moments need hard labels); use shrinkage='oas' or a float")
    if rows.on_device and shrinkage == "ledoit-wolf":
        raise ValueError(
            "shrinkage='ledoit-wolf' is not available for device arrays yet (it needs a "
            "second pass for the fourth moments); use shrinkage='oas' or a float, or fit "
            "on the host"
        )
    kind = SCATTER_FOR[covariance]
    m = rows.moments(kind)
    fourth = None
    if shrinkage == "ledoit-wolf":
        fourth = rows.standardised_fourth_moment(
            m.means, inverse_within_sd(m.counts, m.scatter, kind))
    # The small factorisations run with BLAS on one thread: woken BLAS threads keep
    # spinning after the call and slow the next parallel kernel.
    with blas_single_thread():
        params = params_from_moments(m, covariance, priors, reg, shrinkage, unbiased,
                                     fourth, var_smoothing, tol)
        if U is None or not em.weight:
            return params
        return gda_em(params, rows, U, covariance,
                      (priors, reg, shrinkage, unbiased, var_smoothing, tol), em)


def gda_from_moments(moments: ClassMoments, covariance: str = "pooled", *, priors=None,
                     reg: float = 0.0, shrinkage=None, unbiased: bool = False,
                     var_smoothing: float = 1e-9, tol: float = 1e-4) -> GDAParams:
    """Build a GDA model from (possibly merged) class moments.

    Same options as :func:`fit_gda`, except ``shrinkage="ledoit-wolf"``, which needs a
    pass over the data (use :func:`fit_gda`).  Per-class moments give any covariance
    model; pooled moments give "pooled" and "pooled_diagonal"; diagonal moments give
    "diagonal" and "pooled_diagonal".  The variance floor of the diagonal models uses
    the (weighted) total variance implied by the moments
    (:func:`fastgen.stats.total_variance`).
    """
    if not isinstance(moments, ClassMoments):
        raise ValueError(f"moments must be ClassMoments; got {type(moments).__name__}")
    _check_covariance_type(covariance)
    if covariance not in _DERIVABLE[moments.kind]:
        raise ValueError(
            f"moments of kind {moments.kind!r} cannot give covariance={covariance!r}; "
            f"compute class_moments(..., kind={SCATTER_FOR[covariance]!r})"
        )
    if shrinkage == "ledoit-wolf":
        raise ValueError(
            "shrinkage='ledoit-wolf' needs the fourth moments of the data; use fit_gda, "
            "or 'oas' or a float shrinkage with gda_from_moments"
        )
    priors, reg, shrinkage = check_gda_options(covariance, priors, reg, shrinkage, unbiased,
                                               moments.classes, var_smoothing, tol)
    with blas_single_thread():
        return params_from_moments(moments, covariance, priors, reg, shrinkage, unbiased,
                                   var_smoothing=var_smoothing, tol=tol)

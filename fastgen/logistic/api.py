"""The public functions of logistic regression and the steps they share with other fits.

:func:`fit_logistic`, :func:`irls_step` and :func:`logistic_loss_grad_hess` validate
once, then assemble the pieces: :class:`~fastgen.logistic.data.InMemoryData` → an
objective (``objectives.py``) → :func:`~fastgen.logistic.newton.newton_solve` →
:func:`params_from_result`, the last three in :func:`fit_from_data`.  The assembly steps
(:func:`check_fit_options`, :func:`prior_start`, :class:`ParamsSpec`,
:func:`fit_from_data`) are public so that other fits of the same model
(``fastgen.dask``) run the same solver and finish on their own data.

Imports: the sibling modules of this package, ``fastgen._validation`` and
``fastgen._runtime``.
"""

from __future__ import annotations

import dataclasses
import warnings
from dataclasses import dataclass

import numpy as np

from .._params import attach_feature_names
from .._runtime import serial_for_small_inputs, single_thread_blas_call
from .._validation import (
    check_class_weights,
    check_feature_names,
    check_n_features,
    check_sample_weight,
    check_scalar,
    check_X,
    check_y,
    feature_names_of,
    validated,
)
from .._validation.names import naming_columns
from .._warn import warn
from .centring import centred_frame, to_centred, to_user
from .columns import named_columns
from .data import InMemoryData
from .diagnostics import collinearity_from_gram, separation_of
from .newton import NewtonResult, newton_solve
from .objectives import make_objective
from .params import CollinearityWarning, ConvergenceWarning, LogisticParams
from .starts import better_start

__all__ = ["fit_logistic", "irls_step", "logistic_loss_grad_hess", "FitOptions",
           "check_fit_options", "FitInputs", "prepare_inputs", "prior_start",
           "initial_coefficients", "ParamsSpec", "params_from_result",
           "check_collinearity", "fit_from_data", "check_penalty", "to_user_params"]


# --------------------------------------------------------------------------- assembly


@dataclass(frozen=True)
class FitOptions:
    """The validated options of a logistic fit."""

    l2: float
    fit_intercept: bool
    max_iter: int
    tol: float


def check_fit_options(l2, fit_intercept, max_iter, tol) -> FitOptions:
    """Validate the options: l2 ≥ 0 finite, fit_intercept a bool, max_iter an int ≥ 0,
    tol > 0; a ``ValueError`` naming the argument otherwise."""
    l2 = check_scalar(l2, "l2", low=0.0)
    if not isinstance(fit_intercept, (bool, np.bool_)):
        raise ValueError(f"fit_intercept must be True or False; got {fit_intercept!r}")
    if isinstance(max_iter, (bool, np.bool_)) or not isinstance(max_iter, (int, np.integer)):
        raise ValueError(f"max_iter must be a non-negative integer; got {max_iter!r}")
    if max_iter < 0:
        raise ValueError(f"max_iter must be >= 0; got {max_iter}")
    tol = check_scalar(tol, "tol", low=0.0, low_inclusive=False)
    return FitOptions(l2, bool(fit_intercept), int(max_iter), tol)


@dataclass(frozen=True)
class FitInputs:
    """Validated in-memory inputs: X, the sorted ``classes``, int ``codes`` into them,
    weights ``w`` (empty for unit weights) and their sum ``sum_weights``."""

    X: object
    classes: np.ndarray
    codes: np.ndarray
    w: np.ndarray
    sum_weights: float


def prepare_inputs(X, y, sample_weight) -> FitInputs:
    """Validate X (dense or sparse), y (at least two classes) and the weights; every
    class must carry positive total weight."""
    X = check_X(X, allow_sparse=True)
    classes, codes = check_y(y, X.shape[0], min_classes=2)
    w = check_sample_weight(sample_weight, X.shape[0])
    if w.shape[0]:
        # a class whose rows all have weight 0 is absent from the likelihood: its
        # intercept would run to -inf (the fit would stop at once at a clipped prior)
        check_class_weights(classes, np.bincount(codes, weights=w, minlength=len(classes)),
                            "logistic")
    sum_weights = float(w.sum()) if w.shape[0] else float(X.shape[0])
    return FitInputs(X, classes, codes, w, sum_weights)


def prior_start(counts, d, fit_intercept):
    """The default starting point (K', p): zero coefficients and, with an intercept,
    intercepts at the log prior odds log(π_1/π_0) (binary) or the centred log priors,
    π_k = counts_k / Σ counts (clipped at 1e-12)."""
    K = counts.shape[0]
    B = np.zeros((1 if K == 2 else K, d + (1 if fit_intercept else 0)))
    if fit_intercept:
        pri = np.maximum(counts / counts.sum(), 1e-12)
        if K == 2:
            B[0, d] = np.log(pri[1]) - np.log(pri[0])
        else:
            B[:, d] = np.log(pri) - np.log(pri).mean()
    return B


def initial_coefficients(init, classes, d, fit_intercept, codes, w):
    """Starting point in the internal (centred) layout, shape (K', p): :func:`prior_start`
    when ``init`` is None, else ``init`` (a LogisticParams or (coef, intercept)) checked."""
    K = classes.shape[0]
    if init is None:
        counts = np.bincount(codes, weights=w if w.shape[0] else None, minlength=K)
        return prior_start(counts, d, fit_intercept)
    kk = 1 if K == 2 else K
    B = np.zeros((kk, d + (1 if fit_intercept else 0)))
    if isinstance(init, LogisticParams):
        if not np.array_equal(init.classes, classes):
            raise ValueError(
                f"init was fitted with classes {init.classes.tolist()} but y has classes "
                f"{classes.tolist()}; they must match"
            )
        coef, icpt = init.coef, init.intercept
    elif isinstance(init, tuple) and len(init) == 2:
        coef, icpt = (np.asarray(a, dtype=np.float64) for a in init)
    else:
        raise ValueError(
            "init must be None, a LogisticParams, or a (coef, intercept) tuple; "
            f"got {type(init).__name__}"
        )
    coef = np.asarray(coef, dtype=np.float64)
    icpt = np.asarray(icpt, dtype=np.float64).reshape(-1)
    if kk == 1 and coef.shape == (d,):
        coef = coef.reshape(1, d)
    if coef.shape != (kk, d) or icpt.shape != (kk,):
        raise ValueError(
            f"init must have coef of shape ({kk}, {d}) and intercept of shape ({kk},); "
            f"got {coef.shape} and {icpt.shape}"
        )
    if not (np.all(np.isfinite(coef)) and np.all(np.isfinite(icpt))):
        raise ValueError("init contains NaN or infinity")
    B[:, :d] = coef
    if fit_intercept:
        B[:, d] = icpt
    if kk > 1:
        B -= B.mean(axis=0)
    return B


@dataclass(frozen=True)
class ParamsSpec:
    """What a solution needs besides β to become LogisticParams."""

    classes: np.ndarray
    n_features: int
    fit_intercept: bool
    l2: float
    dtype: np.dtype


def params_from_result(result: NewtonResult, objective, spec: ParamsSpec) -> LogisticParams:
    """LogisticParams from a Newton result: binary as is; multinomial in the symmetric
    (l2 > 0, centred) or reference-class (l2 = 0, ``coef[0] = 0``) parametrisation;
    coefficients cast to ``spec.dtype``."""
    K = spec.classes.shape[0]
    d = spec.n_features
    B = (result.beta.reshape(1, -1) if K == 2 else result.beta).copy()
    if K > 2:
        param = "symmetric" if spec.l2 > 0 else "reference"
        if spec.l2 > 0:
            B -= B.mean(axis=0)
        else:
            B -= B[0]
    else:
        param = "binary"
    coef = np.ascontiguousarray(B[:, :d], dtype=spec.dtype)
    icpt = (B[:, d] if spec.fit_intercept else np.zeros(B.shape[0])).astype(spec.dtype)
    return LogisticParams(
        classes=spec.classes, coef=coef, intercept=icpt, parametrization=param,
        l2=float(spec.l2), fit_intercept=spec.fit_intercept, n_iter=int(result.n_iter),
        converged=bool(result.converged), log_likelihood=float(-result.loss),
        solver=objective.solver, n_hessp=int(objective.nprod), **result.histories(),
    )


def check_collinearity(gram, data, l2, feature_names=None, what="fit_logistic",
                       confirm=True, shift=None):
    """After an unpenalised fit: warn with :class:`CollinearityWarning` naming the
    collinear design columns, and return the
    :class:`~fastgen.logistic.diagnostics.Collinearity` (None when full rank or not
    checked).

    ``gram`` is the objective's ``curvature_gram()`` at the certified point (the
    :class:`~fastgen.logistic.newton.NewtonResult`'s ``gram``): free when the design has
    full rank, since the in-order Cholesky runs on the p × p curvature the solver
    already holds (the Hessian at the solution, or the Böhning Gram).  A Hessian that
    looks rank-deficient is confirmed on the design's own Gram X̃ᵀdiag(w/4)X̃ (one more
    pass over X), since saturated probabilities can drop rows from the Hessian
    (``confirm=False`` trusts the Hessian).  ``shift``: the centred frame's shift of
    ``data`` (:mod:`.centring`), so that the combinations name the user's columns.
    Skipped for penalised fits (unique anyway),
    for unconverged ones, and for binary fits wider than ``BINARY_EXPLICIT_MAX_P`` (no
    p × p matrix is formed there).
    """
    if l2 != 0.0 or gram is None:
        return None
    G, is_design = gram
    if G is None:
        return None
    col = collinearity_from_gram(G, data.d, data.fit_intercept, feature_names=feature_names)
    if col.full_rank:
        return None
    if not is_design and confirm:
        G0 = data.binary(np.zeros(data.p), True, False)[2]
        col = collinearity_from_gram(G0, data.d, data.fit_intercept,
                                     feature_names=feature_names)
        if col.full_rank:
            return None
    if shift is not None:
        col = col.in_user_frame(np.r_[shift, 0.0], data.d)
    warn(f"{what}: the design is rank-deficient (rank {col.rank} of {col.n_columns} "
         f"columns, intercept included): {col.describe()}. The unpenalised estimate is "
         f"not unique: the split of the coefficients among these columns is arbitrary "
         f"and their standard errors are infinite. Drop one column of each combination "
         f"(e.g. one level of a one-hot block) or pass l2 > 0.", CollinearityWarning)
    return col


def _named_singular_information(exc, inp, fit_intercept, names):
    """Firth's singular Fisher information (``exc``) as the error to raise: with the
    collinear design columns named, as :class:`CollinearityWarning` names them, where
    the design's own Gram finds them (:func:`collinear_columns`); else ``exc``."""
    from .collinearity import collinear_columns

    col = collinear_columns(inp.X, fit_intercept=fit_intercept,
                            sample_weight=inp.w if inp.w.shape[0] else None,
                            feature_names=names)
    if col.full_rank:
        return exc
    return np.linalg.LinAlgError(
        f"fit_logistic(penalty='firth'): the Fisher information is singular, as the "
        f"design is rank-deficient (rank {col.rank} of {col.n_columns} columns, "
        f"intercept included): {col.describe()}. Firth's penalty log det I is undefined; "
        f"drop one column of each combination (e.g. one level of a one-hot block)")


def fit_from_data(data, spec: ParamsSpec, beta0, opt: FitOptions, *, sum_weights,
                  separation, explicit=None, feature_names=None, what="fit_logistic",
                  confirm_collinearity=True, shift=None, default_start=None
                  ) -> LogisticParams:
    """The fit of every logistic data source: objective → :func:`newton_solve` from
    ``beta0`` (K', p) → collinearity check (unless stopped by separation) →
    :func:`params_from_result`.

    ``data`` implements :class:`~fastgen.logistic.data.LogisticData` (in memory, or the
    summed blocks of ``fastgen.dask``); ``separation()`` runs the exact separation test
    on the same sample; ``explicit`` as for
    :func:`~fastgen.logistic.objectives.make_objective`; ``feature_names`` and ``what``
    name the columns and the caller in warnings; ``shift`` is the centred frame's, when
    ``data`` is centred (the collinearity warning then names the user's columns);
    ``default_start`` replaces a worse ``init`` (:func:`.starts.better_start`)."""
    K = spec.classes.shape[0]
    beta0, start_given = (beta0, False) if default_start is None else better_start(
        data, opt.l2, K, explicit, beta0, default_start)
    obj = make_objective(data, opt.l2, K, explicit=explicit)
    n = getattr(data, "n", 0)
    result = newton_solve(obj, beta0[0] if K == 2 else beta0, max_iter=opt.max_iter,
                          tol=opt.tol, sum_weights=sum_weights, l2=opt.l2,
                          separation=separation, what=what,
                          mean_weight=sum_weights / n if n else 1.0,
                          start_given=start_given)
    if result.cause != "separation":
        check_collinearity(result.gram, data, opt.l2, feature_names, what=what,
                           confirm=confirm_collinearity, shift=shift)
    return params_from_result(result, obj, spec)


# --------------------------------------------------------------------------- public API


@serial_for_small_inputs(0)
@single_thread_blas_call
@naming_columns()
def fit_logistic(X, y, *, l2=0.0, fit_intercept=True, sample_weight=None, max_iter=100,
                 tol=1e-8, init=None, penalty=None, correction=None,
                 unlabeled=None) -> LogisticParams:
    r"""Fit logistic regression by Newton's method (IRLS).

    Minimises the penalised negative log-likelihood

    .. math::

        f(\beta) = -\sum_i w_i \log p(y_i \mid x_i) + \tfrac{l2}{2}\,\lVert W\rVert_F^2,

    with :math:`p(y=1 \mid x) = \sigma(w^\top x + b)` for two classes and
    :math:`p(y=k \mid x) = \exp(w_k^\top x + b_k) / \sum_l \exp(w_l^\top x + b_l)` for more
    (multinomial).  The intercept is never penalised; ``l2 = 1 / C`` in scikit-learn's
    terms.  Each Newton step solves :math:`H\Delta = -g` with the gradient
    :math:`g = \tilde X^\top W(\pi - y)` and Hessian
    :math:`H = \tilde X^\top \operatorname{diag}(w\,\pi(1-\pi))\tilde X + l2\,I`
    (binary), computed in one fused pass over X, followed by step halving until the
    Armijo condition holds.

    Units and offsets.  The fit works in centred coordinates
    (:mod:`fastgen.logistic.centring`): with an intercept, a column whose mean exceeds
    its spread (a calendar year, a price) is centred on its weighted mean and the
    intercept mapped back exactly at the end, and every solve is taken on the Hessian
    scaled to a unit diagonal.  So the fitted probabilities, ``converged`` and the
    warnings do not depend on the columns' units or offsets, for any column whose
    spread float64 still resolves: multiplying column j by c divides its coefficient
    by c, adding c to it moves only the intercept (by −c·β_j).  Where float64 cannot
    hold the sums of x² in the Hessian (values near 1e154 or beyond, or a column whose
    root-mean-square is below about 4e-152) the fit raises a ``ValueError`` naming the
    column.  A ridge penalty ``l2 > 0`` is applied in the user's units (offsets do not
    change it, units do): it shrinks every coefficient alike, so a feature in small
    units (a large coefficient) is shrunk more than the same feature in large units;
    standardise the features first for a penalty that treats them alike.

    Parameters
    ----------
    X : array-like (n, d) or scipy sparse matrix
        float32 data stays float32 (accumulation is always float64); the coefficients
        and intercepts are float64 whatever X's dtype: the intercept of the user's
        coordinates at a column offset, rounded to float32, would move the fitted
        probabilities by far more than the data's own rounding.
    y : array-like (n,)
        Labels; two distinct values give binary, more give multinomial regression.
    l2 : float, default 0
        Ridge penalty on the coefficients.  With ``l2 = 0`` and more than two classes the
        coefficients are reported against ``classes[0]`` (reference class: its row is
        zero, as in statsmodels' MNLogit); with ``l2 > 0`` in the symmetric
        parametrisation (one row per class, as in scikit-learn).
    fit_intercept : bool, default True
    sample_weight : array-like (n,), optional
        Non-negative weights; a weight of 2 is the same as repeating the row.
    max_iter : int, default 100
        Maximum Newton steps.
    tol : float, default 1e-8
        Converged when an accurate solve shows the Newton decrement ½gᵀH⁻¹g ≤ tol, in
        nats of (penalised) log-likelihood: the objective is then within about tol of
        its minimum, and the coefficients within about √(2·tol) standard errors of the
        optimum before the certifying step, which is then taken (Newton's quadratic
        convergence makes the returned point far closer).  Not divided by Σw, so a
        rare outcome counts as much as a common one; unchanged by the columns' units
        and offsets (see ``fastgen.logistic.newton``).
    init : LogisticParams or (coef, intercept), optional
        Starting point (default: zero coefficients, intercepts at the log prior odds).
        A start where the objective is worse than at the default one is replaced by
        the default (from saturated probabilities Newton's capped steps would creep).
    penalty : None or "firth", default None
        ``"firth"``: Firth's bias-reduced estimate (``l2 = 0``), finite under
        separation: binary (:func:`fastgen.logistic.firth.fit_firth`) or multinomial,
        the maximum of l(β) + ½ log det I(β) as brglm2's ``brmultinom``
        (:func:`fastgen.logistic.firth_multinomial.fit_firth_multinomial`).
    correction : None, "flic" or "flac", default None
        With ``penalty="firth"`` and binary y, Puhr et al.'s (2017) intercept
        correction (FLIC) or added-covariate correction (FLAC), whose mean predicted
        probability equals the event rate; see
        :func:`fastgen.logistic.bias_reduction.fit_flic`.
    unlabeled : None
        Refused (a ValueError): logistic regression models p(y | x) only, so rows
        without labels tell it nothing; the generative fits take them.

    Returns
    -------
    LogisticParams

    Warns
    -----
    PerfectSeparationWarning
        With ``l2 = 0``, if the classes are completely or quasi-completely separated:
        the maximum-likelihood estimate does not exist (Albert & Anderson 1984).
        ``converged`` is False and the warning names the infinite coefficients; the
        returned ones are finite.  Decided by the exact test of
        :func:`fastgen.detect_separation`, run only when the iterations show its
        signature (see ``fastgen.logistic.newton``), so other fits do not pay for it.
    CollinearityWarning
        With ``l2 = 0``, if the design (X and the intercept) is rank-deficient; names the
        collinear columns (by the DataFrame's column names when X has them).  The fit
        still reports ``converged``; see :func:`fastgen.logistic.collinear_columns`.
    ConvergenceWarning
        If max_iter is reached or the line search fails (both warnings above are
        subclasses of it).

    Raises
    ------
    ValueError
        For invalid inputs (the message names the argument), and where float64 cannot
        hold the fit's sums (the message names the column and says to rescale).
    numpy.linalg.LinAlgError
        If the Hessian, scaled to a unit diagonal, is singular even after jitter
        (collinear features with l2 = 0).
    """
    if unlabeled is not None:
        raise ValueError(
            "logistic regression takes no unlabeled rows: it models p(y | x) only, so "
            "rows without labels carry no information for it; use a generative model "
            "(fit_gda, fit_multinomial_nb, ...) with unlabeled=")
    opt = check_fit_options(l2, fit_intercept, max_iter, tol)
    check_penalty(penalty, correction, opt.l2)
    feature_names = names = feature_names_of(X)
    with named_columns(names):  # a column out of float64's range, by its name
        inp = prepare_inputs(X, y, sample_weight)
        d = inp.X.shape[1]
        B0 = initial_coefficients(init, inp.classes, d, opt.fit_intercept, inp.codes, inp.w)
        Xc, shift = centred_frame(inp.X, inp.w, opt.fit_intercept)
        if penalty == "firth":
            from .bias_reduction import fit_bias_reduced

            try:
                with validated(Xc):  # the centred copy of a validated X: finite
                    params = fit_bias_reduced(
                        Xc, inp.classes[inp.codes], correction=correction,
                        fit_intercept=opt.fit_intercept,
                        sample_weight=inp.w if inp.w.shape[0] else None,
                        max_iter=opt.max_iter, tol=opt.tol,
                        init=None if init is None else _centred_init(B0, d, shift))
            except np.linalg.LinAlgError as exc:
                raise _named_singular_information(exc, inp, opt.fit_intercept, names) from None
        else:  # the default start replaces a worse init (starts.better_start)
            default = None if init is None else initial_coefficients(
                None, inp.classes, d, opt.fit_intercept, inp.codes, inp.w)
            for B in (B0, default):  # both fresh arrays, moved into the centred frame
                if B is not None and shift is not None:
                    B[:, d] = to_centred(B[:, :d], B[:, d], shift)
            data = InMemoryData(Xc, inp.codes, inp.w, opt.fit_intercept)

            def separation():
                return separation_of(Xc, inp.codes, inp.w, inp.classes, opt.fit_intercept,
                                     names)

            params = fit_from_data(
                data, ParamsSpec(inp.classes, d, opt.fit_intercept, opt.l2, np.float64), B0,
                opt, sum_weights=inp.sum_weights, separation=separation, feature_names=names,
                shift=shift, default_start=default)
        return attach_feature_names(to_user_params(params, shift, inp.X.dtype), feature_names)


def check_penalty(penalty, correction, l2):
    """``penalty`` None or "firth" (with l2 = 0), ``correction`` only with Firth; a
    ``ValueError`` naming the arguments otherwise."""
    if penalty is None and correction is None:
        return
    if not (isinstance(penalty, str) and penalty == "firth") or l2 != 0:
        raise ValueError(f"penalty must be None or 'firth' (with l2=0), and correction "
                         f"needs penalty='firth'; got penalty={penalty!r}, l2={l2!r}, "
                         f"correction={correction!r}")


def _centred_init(B0, d, shift):
    """A checked start (K', p) as the (coef, intercept) start of a Firth fit in the
    centred frame."""
    coef = B0[:, :d].copy()
    icpt = B0[:, d].copy() if B0.shape[1] > d else np.zeros(B0.shape[0])
    return coef, to_centred(coef, icpt, shift)


def to_user_params(params, shift, dtype=None):
    """``params`` fitted in the centred frame with the intercepts of the user's
    coordinates (:func:`~fastgen.logistic.centring.to_user`), float64 whatever the
    data's ``dtype`` (kept for callers; the intercept b = b_c − Σ m_j β_j rounded to
    float32 would move every log-odds by up to an ulp of the intercept)."""
    if shift is None:
        return params
    coef = np.asarray(params.coef, dtype=np.float64)
    icpt = to_user(coef, params.intercept, shift) if params.fit_intercept \
        else np.asarray(params.intercept, dtype=np.float64)
    return dataclasses.replace(params, coef=np.ascontiguousarray(coef),
                               intercept=np.asarray(icpt, dtype=np.float64))


@serial_for_small_inputs(1)
@single_thread_blas_call
def irls_step(params, X, y, *, l2=0.0, sample_weight=None) -> LogisticParams:
    r"""Take exactly one Newton (IRLS) step from ``params`` on (X, y).

    Uses the explicit Hessian and a Cholesky solve,
    :math:`\beta \leftarrow \beta + t\,\Delta` with :math:`H\Delta = -g` and t the first of
    1, ½, ¼, … satisfying the Armijo condition, for solvers that embed logistic
    regression in a larger loop.  The objective is that of :func:`fit_logistic`.

    Parameters
    ----------
    params : LogisticParams
        The current iterate; its classes must equal those of y, its number of features
        that of X, and its ``fit_intercept`` is kept.
    X, y, l2, sample_weight :
        As for :func:`fit_logistic`.

    Returns
    -------
    LogisticParams
        ``n_iter`` is one more than that of ``params`` (unchanged if the line search
        found no decrease); ``converged`` tells whether the step's Newton decrement
        ½gᵀH⁻¹g was ≤ 1e-8 (the default ``tol`` of :func:`fit_logistic`): the point
        it started from was certified, and the step only brought it closer.
        Histories describe this step only.
    """
    if not isinstance(params, LogisticParams):
        raise ValueError(
            f"params must be a LogisticParams (the result of fit_logistic); "
            f"got {type(params).__name__}"
        )
    opt = check_fit_options(l2, params.fit_intercept, 1, 1e-8)
    check_feature_names(params.feature_names, feature_names_of(X), "LogisticParams")
    inp = prepare_inputs(X, y, sample_weight)
    check_n_features(inp.X, params.n_features_in)
    K = inp.classes.shape[0]
    if not np.array_equal(inp.classes, params.classes):
        raise ValueError(
            f"y has classes {inp.classes.tolist()} but params were fitted with "
            f"{params.classes.tolist()}; they must match"
        )
    d = inp.X.shape[1]
    B0 = initial_coefficients(params, inp.classes, d, opt.fit_intercept, inp.codes, inp.w)
    Xc, shift = centred_frame(inp.X, inp.w, opt.fit_intercept)
    if shift is not None:
        B0[:, d] = to_centred(B0[:, :d], B0[:, d], shift)
    data = InMemoryData(Xc, inp.codes, inp.w, opt.fit_intercept)
    obj = make_objective(data, opt.l2, K, explicit=True)
    with warnings.catch_warnings(), \
            named_columns(params.feature_names or feature_names_of(X)):
        warnings.simplefilter("ignore", ConvergenceWarning)
        result = newton_solve(obj, B0[0] if K == 2 else B0, max_iter=1, tol=-1.0,
                              sum_weights=inp.sum_weights, l2=opt.l2, what="irls_step")
    result = dataclasses.replace(result, n_iter=params.n_iter + result.n_iter,
                                 converged=result.decrement <= 1e-8)
    new = params_from_result(
        result, obj, ParamsSpec(inp.classes, d, opt.fit_intercept, opt.l2, np.float64))
    return attach_feature_names(to_user_params(new, shift, inp.X.dtype),
                                params.feature_names)


def logistic_loss_grad_hess(X, codes, beta, *, n_classes, fit_intercept=True,
                            sample_weight=None, hessian=True):
    r"""Unpenalised loss, gradient and Hessian of one block of rows, for distributed IRLS.

    With X̃ = [X, 1] (the column of ones only if ``fit_intercept``), η = X̃β and weights
    w_i, the block's contribution to the objective of :func:`fit_logistic` before the
    penalty.  Binary (``n_classes == 2``, β of shape (p,), π = σ(η))::

        loss = Σ_i w_i (softplus(η_i) − y_i η_i),   g = X̃ᵀ w(π − y),
        H = X̃ᵀ diag(w π (1 − π)) X̃.

    Multinomial (β of shape (K, p), P = softmax(η) row-wise, Y one-hot)::

        loss = −Σ_i w_i log P_{i,y_i},   G = (w(P − Y))ᵀ X̃  (K, p),
        H_{(k,a),(l,b)} = Σ_i w_i P_ik (δ_kl − P_il) x̃_ia x̃_ib  (K·p, K·p).

    All three are sums over rows, so the values of disjoint blocks add up to those of
    their union; a Newton step needs their sums and the penalty ``l2`` on the client.

    Parameters
    ----------
    X : array-like (n, d) or scipy CSR
    codes : array-like (n,) of int
        Class indices in ``[0, n_classes)`` (positions in the global sorted label set).
    beta : ndarray (p,) or (K, p) float64
        Coefficients with the intercept last, p = d + fit_intercept.
    n_classes : int
    fit_intercept : bool, default True
    sample_weight : array-like (n,), optional
    hessian : bool, default True
        Also return H (else None).

    Returns
    -------
    loss : float
    grad : ndarray (p,) or (K, p)
    hess : ndarray (p, p) or (K·p, K·p), or None
    eta_max : float
        max_i |η_i| (binary) or the largest spread of η across classes (multinomial),
        used to detect separation.
    """
    X = check_X(X, allow_sparse=True)
    n = X.shape[0]
    K = int(n_classes)
    c = np.asarray(codes)
    if c.shape != (n,) or c.dtype.kind not in "iu" or (n and (c.min() < 0 or c.max() >= K)):
        raise ValueError(f"codes must be {n} integers in [0, {K})")
    c = np.ascontiguousarray(c, dtype=np.int32)
    w = check_sample_weight(sample_weight, n)
    data = InMemoryData(X, c, w, bool(fit_intercept))
    beta = np.ascontiguousarray(beta, dtype=np.float64)
    shape = (data.p,) if K == 2 else (K, data.p)
    if beta.shape != shape:
        raise ValueError(f"beta must have shape {shape}; got {beta.shape}")
    if K == 2:
        loss, g, H, eta_max, _ = data.binary(beta, bool(hessian), False)
        return float(loss), g, H, float(eta_max)
    loss, G, eta_max, P = data.multinomial(beta)
    H = data.multinomial_hessian(beta, P) if hessian else None
    return float(loss), G, H, float(eta_max)

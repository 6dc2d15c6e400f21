"""``logistic_inference`` in steps, and the finish it shares with every other source of
the pass's sums (``fastgen.dask.logistic_inference`` sums them over a Dask array's
blocks): check the request → one pass at the estimate (:mod:`.passes`) → separation
check → covariance (:mod:`.covariance`) → tests and likelihoods → results
(:mod:`.results`), with profile intervals on request.

Imports: ``fastgen._validation``, ``fastgen._warn`` and the sibling modules of
``fastgen.logistic`` (``firth`` and ``firth_profile`` on use, for Firth fits).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from ..._validation import (
    check_feature_names,
    check_sample_weight,
    check_X,
    check_y,
    feature_names_of,
)
from ..._validation.names import naming_columns
from ..._warn import warn
from ..centring import centred_frame, centred_params, covariance_to_user
from ..columns import named_columns
from ..feature_labels import default_feature_names
from ..tails import chi2_sf, norm_sf
from .checks import (
    InferenceRequest,
    canonical_cov_type,
    check_information_not_zero,
    check_not_separated,
    check_request,
    group_codes,
    table_row_names,
)
from .covariance import (
    check_full_rank,
    inverse_information,
    sandwich,
    statsmodels_layout,
    warn_ill_conditioned,
)
from .frame import attach
from .optimum import check_at_optimum, firth_score, stored_rounding
from .passes import InferenceData, PassSums, reference_coef
from .results import FitData, LogisticInference, labelled

__all__ = ["logistic_inference", "finish_inference", "InferenceSample", "check_sample",
           "is_dask_array"]


@dataclass(frozen=True)
class InferenceSample:
    """Validated in-memory inputs: X, ``codes`` into the model's classes (int32) and the
    weights ``w`` (empty for unit weights)."""

    X: object
    codes: np.ndarray
    w: np.ndarray


def check_sample(model, X, y, sample_weight) -> InferenceSample:
    """Validate X (of the model's width), y (among the model's classes) and the
    weights."""
    d = model.n_features_in
    K = model.classes.shape[0]
    X = check_X(X, allow_sparse=True)
    if X.shape[1] != d:
        raise ValueError(f"X has {X.shape[1]} features but the model was fitted with {d}")
    classes, codes = check_y(y, X.shape[0], min_classes=1)
    pos = np.searchsorted(model.classes, classes)
    if (np.any(pos >= K) or not np.array_equal(model.classes[np.minimum(pos, K - 1)],
                                               classes)):
        raise ValueError(f"y has classes {classes.tolist()} that the model (classes "
                         f"{model.classes.tolist()}) was not fitted with")
    codes = pos[codes].astype(np.int32)
    w = check_sample_weight(sample_weight, X.shape[0])
    return InferenceSample(X, codes, w)


_FREQUENCY = ("sample_weight are read as frequency weights (statsmodels' freq_weights): "
              "nobs is their sum and the standard errors are those of that many rows; "
              "for relative weights pass w * n / w.sum() (weights that sum to the number "
              "of rows n)")


def warn_relative_weights(w):
    """Warn where the weights look relative: their sum is below the number of rows
    they weigh (a 0/1 weight that leaves rows out does not warn)."""
    if not w.shape[0]:
        return
    pos = w > 0
    n_pos = int(np.count_nonzero(pos))
    total = float(w.sum())
    if n_pos and total < n_pos * (1.0 - 1e-12):
        warn(f"the {n_pos} weighted rows weigh {total:.4g} in all, fewer than one each: "
             f"{_FREQUENCY}", UserWarning)


def check_degrees_of_freedom(nobs, q):
    """ValueError where nobs = Σw is not above the number of parameters q: df_resid
    would be ≤ 0 and the information criteria and Wald tests meaningless."""
    if not nobs > q:
        raise ValueError(
            f"nobs = {nobs:.4g} (the sum of the weights) is not above the {q} estimated "
            f"parameters, so df_resid = {nobs - q:.4g} <= 0: {_FREQUENCY}")


def finish_inference(model, request: InferenceRequest, sums: PassSums, names,
                     confirm_separation, shift=None, modified_score=None,
                     rounding=None) -> LogisticInference:
    """Wald inference from the sums of the passes at the model's estimate: the
    separation check (``confirm_separation()`` runs the exact test on the same sample),
    the covariance of ``request.cov_type``, z, p-values, the null model's likelihood and
    the information criteria; ``names`` label the rows (``const`` first); ``shift``:
    the centred frame's, when the sums were taken there (rank messages then name the
    user's columns).  A warning says when the model's coefficients are not the
    estimate for these data (:mod:`.optimum`: the score, or Firth's
    ``modified_score`` where the caller has it, far from zero beyond what the stored
    coefficients' ``rounding`` allows)."""
    K, m, p, q = request.n_classes, request.n_equations, request.p, request.q
    llf = float(sums.loglik)
    nobs = float(sums.class_counts.sum())
    check_degrees_of_freedom(nobs, q)
    check_not_separated(float(sums.max_abs_eta), request.method, confirm_separation, K,
                        bool(model.converged))
    check_information_not_zero(sums.information, float(sums.max_abs_eta))
    layout = statsmodels_layout(m, p, model.fit_intercept)
    order = layout.order
    H = sums.information[np.ix_(order, order)]
    labels = ["intercept", *names[1:]] if model.fit_intercept else list(names)
    features = labels[1:] if model.fit_intercept else labels
    positions = None  # default names 'x1' …: messages add the position, X[:, 0] …
    if tuple(features) == default_feature_names(len(features)):
        positions = [None] * (len(labels) - len(features)) + list(range(len(features)))
    check_full_rank(H, labels, m, p, model.classes, shift, positions)
    inverse, logdet, C, L, s = inverse_information(H)
    check_at_optimum(sums.score if request.method == "MLE" else modified_score, inverse,
                     order, request.method, bool(model.converged), sums.information,
                     rounding)
    warn_ill_conditioned(C, L, inverse, s,
                         [f"{nm} (y={model.classes[k + 1]})" for k in range(m)
                          for nm in labels] if K > 2 else labels)
    cov = sandwich(inverse, request.cov_type, order, sums.meat, sums.cluster_scores,
                   sums.n_groups, nobs)
    beta = reference_coef(model).ravel()[order]
    bse = np.sqrt(np.diag(cov))
    z = beta / bse
    pv = 2.0 * norm_sf(np.abs(z))
    counts = sums.class_counts
    if request.method == "Firth":
        from ..firth_objective import firth_null_loglik

        llf = llf + 0.5 * logdet
        llnull = firth_null_loglik(counts)
    else:
        pri = counts / nobs
        nz = counts > 0
        llnull = float(np.sum(counts[nz] * np.log(pri[nz])))
    df_model = float((p - 1) * m)
    llr = 2.0 * (llf - llnull)
    llr_p = float(chi2_sf(llr, df_model)) if df_model > 0 else float("nan")

    def shape(a):
        return a.reshape(m, p).T.copy() if K > 2 else a

    return LogisticInference(
        params=shape(beta), bse=shape(bse), tvalues=shape(z), pvalues=shape(pv),
        cov_params=cov, llf=llf, llnull=llnull, llr=llr, llr_pvalue=llr_p,
        aic=-2.0 * llf + 2.0 * q, bic=-2.0 * llf + q * math.log(nobs),
        prsquared=1.0 - llf / llnull if llnull != 0 else float("nan"),
        nobs=nobs, df_model=df_model, df_resid=nobs - q, feature_names=tuple(names),
        classes=model.classes, cov_type=request.cov_type, method=request.method,
        converged=bool(model.converged), ci=request.ci, ci_alpha=float(request.alpha),
        fit_intercept=bool(model.fit_intercept),
        n_groups=sums.n_groups if request.cluster else None,
        extra={"score": sums.score, "max_abs_eta": float(sums.max_abs_eta)},
    )


def with_profile(result, model, request, data, sample, names, shift=None):
    """``result`` with profile-likelihood intervals and likelihood-ratio p-values
    (penalised for Firth fits), refitting on the in-memory ``data``; multinomial ones
    in the layout of ``params``, (p, K−1).

    ``shift``: ``data`` is X centred by it (:mod:`..centring`).  Every constrained fit
    evaluates l* there; the slopes' are taken in the centred frame, the user's
    intercepts' in coordinates where the user's intercept is one of them
    (:func:`~fastgen.logistic.firth_profile.intercept_frame`)."""
    from ..firth_profile import profile_inference

    m, p = request.n_equations, request.p
    layout = statsmodels_layout(m, p, model.fit_intercept)
    back = np.argsort(layout.order)
    cov = result.cov_params
    labels = [names[i] for i in np.argsort(layout.within)]
    if m > 1:
        labels = [f"{nm} (y={model.classes[k + 1]})" for k in range(m) for nm in labels]
    pw = 0.5 if request.method == "Firth" else 0.0
    profile, lrp = profile_inference(
        data, sample.codes, sample.w, reference_coef(model).ravel(), cov[back][:, back],
        request.alpha, pw, names=labels, n_classes=request.n_classes, shift=shift)
    profile, lrp = profile[layout.order], lrp[layout.order]
    if m > 1:
        profile = profile.reshape(m, p, 2).transpose(1, 0, 2).copy()
        lrp = lrp.reshape(m, p).T.copy()
    return dataclasses.replace(result, profile_ci=profile, lr_pvalues=lrp)


@naming_columns(1)
def logistic_inference(model, X, y, *, sample_weight=None, cov_type="nonrobust",
                       groups=None, ci="wald", alpha=0.05,
                       feature_names=None) -> LogisticInference:
    r"""Standard errors, tests and intervals for a fitted logistic regression.

    At the fitted coefficients :math:`\hat\beta` (reference-class layout), with fitted
    probabilities :math:`P_{ik}`, residuals :math:`r_{ik} = [y_i = k] - P_{ik}`, per-row
    scores :math:`s_i = r_i \otimes \tilde x_i` and frequency weights :math:`w_i`:

    .. math::

        I = \sum_i w_i\,(\operatorname{diag}P_i - P_iP_i^\top) \otimes \tilde x_i\tilde x_i^\top,
        \qquad
        M = \sum_i w_i\, s_i s_i^\top,

    ``cov_params`` is :math:`I^{-1}` (``"nonrobust"``), :math:`I^{-1} M I^{-1}` (``"HC0"``
    and ``"HC1"``: statsmodels' discrete models apply no small-sample factor to HC1,
    and neither does fastgen, so that both agree) or
    :math:`\frac{G}{G-1}\frac{N-1}{N-q} I^{-1}(\sum_g S_gS_g^\top)I^{-1}` (``"cluster"``,
    :math:`S_g = \sum_{i\in g} w_i s_i`, as statsmodels), with N the number of
    observations and q the number of coefficients.  Wald statistics
    :math:`z = \hat\beta/\mathrm{se}`, p-values :math:`2\Phi(-|z|)`.

    One pass over X forms the log-likelihood, the score, I and M; cluster sums take one
    more.

    Parameters
    ----------
    model : LogisticParams
        From :func:`fastgen.fit_logistic` with ``l2=0`` (binary or multinomial), or with
        ``penalty="firth"`` (binary).
    X : array-like (n, d) or scipy sparse matrix
        The data the model was fitted on.  For a Dask array call
        :func:`fastgen.dask.logistic_inference` (given one here, this function raises
        a ``TypeError`` saying so).
    y : array-like (n,)
        Labels, among ``model.classes``.
    sample_weight : array-like (n,), optional
        Frequency weights: an integer weight w gives exactly the inference of the row
        repeated w times, and ``nobs`` is their sum.
    cov_type : {"nonrobust", "HC0", "HC1", "cluster"}
        In any case (``"hc0"``), as statsmodels takes them.
    groups : array-like (n,), optional
        Cluster labels, for ``cov_type="cluster"``.
    ci : {"wald", "profile"}
        What :meth:`LogisticInference.conf_int` returns.  ``"profile"`` (binary, in-memory
        data) also computes likelihood-ratio p-values ``lr_pvalues`` by refitting with
        each coefficient fixed at 0; for Firth fits both use the penalised likelihood,
        as logistf.
    alpha : float, default 0.05
        Level of the profile intervals.
    feature_names : sequence of str, optional
        Names of X's columns (default: a DataFrame's columns, else ``x1 … xd``).

    Returns
    -------
    LogisticInference
        With a DataFrame X, ``params``, ``bse``, ``tvalues``, ``pvalues`` and
        ``conf_int()`` are pandas objects indexed by the column names (statsmodels'
        convention; when pandas is installed); with arrays they are arrays.  The
        summary names y by a Series' name.  The result keeps a reference to the
        checked X, y's codes and the weights (not a copy), for
        :meth:`~LogisticInference.get_prediction` and
        :meth:`~LogisticInference.get_margeff`.

    Warns
    -----
    ConvergenceWarning
        When the model's coefficients are not the estimate for the data given: the
        Newton decrement of the score there (Firth's modified score for Firth fits)
        puts them more than ``OPTIMUM_DISTANCE`` (0.1) standard errors from the
        optimum (:mod:`fastgen.logistic.inference.optimum`).

    Raises
    ------
    ValueError
        For a penalised fit (``l2 > 0``); on (quasi-)separated data (pointing to Firth);
        where every fitted probability is 0 or 1 at the model's coefficients (data other
        than the fitted ones, or separation); for more than
        :data:`MAX_INFERENCE_PARAMS` coefficients (stating the memory); for invalid
        inputs.
    numpy.linalg.LinAlgError
        On a collinear design, naming the columns.
    TypeError
        For a Dask array X (pointing to :func:`fastgen.dask.logistic_inference`).
    """
    cov_type = canonical_cov_type(cov_type)
    if is_dask_array(X):
        raise TypeError("logistic_inference takes in-memory X (a numpy array, DataFrame "
                        "or scipy sparse matrix); for a Dask array call "
                        "fastgen.dask.logistic_inference with the same arguments")
    names = feature_names if feature_names is not None else (
        getattr(model, "feature_names", None) or feature_names_of(X))
    with named_columns(None if names is None else list(names)):
        result, sample = _inference_arrays(model, X, y, sample_weight=sample_weight,
                                           cov_type=cov_type, groups=groups, ci=ci,
                                           alpha=alpha, feature_names=feature_names,
                                           want_sample=True)
    warn_relative_weights(sample.w)
    index = getattr(X, "index", None)
    if index is not None and (not hasattr(index, "__len__") or
                              len(index) != np.shape(sample.X)[0]):
        index = None
    result = dataclasses.replace(result, dep_name=dependent_name(y),
                                 fit_data=FitData(model, sample.X, sample.codes, sample.w,
                                                  row_labels=index))
    return labelled(result) if feature_names_of(X) is not None and _has_pandas() else result


def _has_pandas() -> bool:
    """Whether pandas can be imported (a polars frame names columns without it)."""
    try:
        import pandas  # noqa: F401
    except ImportError:  # pragma: no cover - pandas is a test dependency
        return False
    return True


def dependent_name(y) -> str:
    """The name of y for the summary: a pandas Series' (or polars') ``name`` when it is
    a non-empty str, else ``"y"``."""
    name = getattr(y, "name", None)
    return name if isinstance(name, str) and name else "y"


def _inference_arrays(model, X, y, *, sample_weight=None, cov_type="nonrobust",
                      groups=None, ci="wald", alpha=0.05, feature_names=None,
                      want_sample=False):
    """:func:`logistic_inference` with array fields and no data attached; with
    ``want_sample`` also the checked :class:`InferenceSample`."""
    if getattr(model, "solver", None) in ("flic", "flac"):
        from ..bias_reduction import corrected_inference  # logistf's conventions

        result = corrected_inference(model, X, y, infer=_inference_arrays,
                                     sample_weight=sample_weight, cov_type=cov_type,
                                     groups=groups, ci=ci, alpha=alpha,
                                     feature_names=feature_names)
        if want_sample:
            return result, check_sample(model, X, y, sample_weight)
        return result
    request = check_request(model, cov_type, ci, alpha)
    if model.feature_names is not None:
        # a frame scored after an array fit only labels the table: no warning
        check_feature_names(model.feature_names, feature_names_of(X), "LogisticParams")
    names = table_row_names(X, request.n_features, model.fit_intercept,
                        model.feature_names if feature_names is None else feature_names)
    sample = check_sample(model, X, y, sample_weight)
    groups, n_groups = (group_codes(groups, sample.X.shape[0]) if request.cluster
                        else (None, 0))
    # the pass, the rank checks and the covariance in the centred frame, mapped back
    Xc, shift = centred_frame(sample.X, sample.w, model.fit_intercept)
    model_c = centred_params(model, shift)
    data = InferenceData(Xc, model.fit_intercept)
    sums = data.sums(sample.codes, sample.w, reference_coef(model_c), request.n_classes,
                     request.want_meat, groups, n_groups)
    feats = tuple(names[1:] if model.fit_intercept else names)

    def confirm_separation():
        from ..diagnostics import detect_separation

        return detect_separation(Xc, y, fit_intercept=model.fit_intercept,
                                 sample_weight=sample_weight, feature_names=feats)

    modified = None
    if request.method == "Firth" and not _read_as_fitted(model, sums):
        modified = firth_score(data, sample.codes, sample.w, reference_coef(model_c),
                               sums, request.n_classes)
    result = finish_inference(model_c, request, sums, names, confirm_separation, shift,
                              modified, stored_rounding(model, shift))
    if shift is not None:
        result = result_in_user_frame(result, model, request, shift)
    if ci == "profile":
        result = with_profile(result, model, request, data, sample, names, shift)
    return (result, sample) if want_sample else result


def _read_as_fitted(model, sums):
    """Whether the pass reads the converged fit's own log-likelihood at its coefficients
    (to 1e-12 relative; the fit's and the pass's agree to a few ulps): then these are
    the data the model was fitted on, whose optimum the fit certified, and the check of
    the optimum needs no modified score (one more pass over X, the leverages).  Other
    rows, labels or weights change the log-likelihood far beyond that."""
    ll, stored = float(sums.loglik), float(model.log_likelihood)
    return bool(model.converged) and abs(ll - stored) <= 1e-12 * max(1.0, abs(ll))


def result_in_user_frame(result, model, request, shift):
    """``result`` of the centred frame (sums taken with the model's intercepts moved
    there, :func:`~fastgen.logistic.centring.centred_params`) with the intercepts of the
    user's coordinates:
    covariance T·cov·Tᵀ (:func:`~fastgen.logistic.centring.covariance_to_user`), the
    intercepts' estimates, errors and tests, and the score (g_j + m_j·g_const); the
    centred covariance stays on record (:mod:`.frame`) for the quadratic forms of
    predictions, marginal effects and contrasts."""
    K, m, p = request.n_classes, request.n_equations, request.p
    layout = statsmodels_layout(m, p, model.fit_intercept)
    cov = covariance_to_user(result.cov_params, shift, m, p)
    beta = reference_coef(model).ravel()[layout.order]
    bse = np.sqrt(np.diag(cov))
    with np.errstate(divide="ignore", invalid="ignore"):
        z = beta / bse
    pv = 2.0 * norm_sf(np.abs(z))

    def shape(a):
        return a.reshape(m, p).T.copy() if K > 2 else a

    score = np.asarray(result.extra["score"], dtype=np.float64).reshape(m, p).copy()
    score[:, :p - 1] += score[:, p - 1:p] * shift  # reference layout: intercept last
    extra = dict(result.extra, score=score.reshape(result.extra["score"].shape))
    user = dataclasses.replace(result, params=shape(beta), bse=shape(bse),
                               tvalues=shape(z), pvalues=shape(pv), cov_params=cov,
                               extra=extra)
    return attach(user, shift, result.cov_params)


# --------------------------------------------------------------------------- adapters

def is_dask_array(X) -> bool:
    """True for a ``dask.array.Array`` (checked without importing Dask)."""
    return type(X).__module__.split(".")[0] == "dask" and hasattr(X, "chunks")


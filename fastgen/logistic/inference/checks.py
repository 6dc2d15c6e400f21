"""What logistic inference checks before and at the estimate: the request (model, cov_type,
ci, size), the cluster labels, the feature names, and that the MLE exists (separation).

Imports: ``fastgen._warn`` and the sibling modules of ``fastgen.logistic`` only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..._validation import check_y
from ..._warn import warn
from ..diagnostics import default_feature_names, separation_advice
from ..params import ConvergenceWarning, LogisticParams

__all__ = ["MAX_INFERENCE_PARAMS", "SEPARATION_ETA", "COV_TYPES", "InferenceRequest",
           "check_request", "group_codes", "table_row_names", "check_not_separated",
           "check_information_not_zero"]

#: Largest number of coefficients (p·(K−1)) for which inference forms the dense
#: information matrix: 8192² float64 is 512 MiB, and the inverse and the sandwich need
#: two or three such matrices at once.
MAX_INFERENCE_PARAMS = 8192

#: A fitted linear predictor beyond this (|η| > 30: a probability within 1e-13 of 0
#: or 1) after an unpenalised fit means the classes are (quasi-)separated.
SEPARATION_ETA = 30.0

COV_TYPES = ("nonrobust", "HC0", "HC1", "cluster")


@dataclass(frozen=True)
class InferenceRequest:
    """A checked request: the model's kind (``method``: "MLE" or "Firth"), its shape
    (K classes, m = K − 1 equations (1 for binary) of p coefficients, q = m·p) and
    what the covariance needs (``want_meat`` for HC0/HC1, ``cluster``)."""

    method: str
    cov_type: str
    ci: str
    alpha: float
    n_classes: int
    n_equations: int
    n_features: int
    p: int
    q: int

    @property
    def want_meat(self):
        return self.cov_type in ("HC0", "HC1")

    @property
    def cluster(self):
        return self.cov_type == "cluster"


def canonical_cov_type(cov_type):
    """``cov_type`` spelled as :data:`COV_TYPES` spell it, whatever its case
    (statsmodels takes ``"hc0"`` for ``"HC0"``); anything else unchanged."""
    if isinstance(cov_type, str):
        return {c.lower(): c for c in COV_TYPES}.get(cov_type.lower(), cov_type)
    return cov_type


def check_request(model, cov_type, ci, alpha) -> InferenceRequest:
    """Check the model and the options; a ``ValueError`` naming the problem."""
    method = model_kind(model)
    cov_type = canonical_cov_type(cov_type)
    if cov_type not in COV_TYPES:
        raise ValueError(f"cov_type must be one of {COV_TYPES}; got {cov_type!r}")
    if ci not in ("wald", "profile"):
        raise ValueError(f"ci must be 'wald' or 'profile'; got {ci!r}")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1); got {alpha}")
    if method == "Firth" and cov_type != "nonrobust":
        raise ValueError("Firth fits support cov_type='nonrobust' only (the sandwich of a "
                         "penalised estimating equation is not implemented)")
    K = model.classes.shape[0]
    m = 1 if K == 2 else K - 1
    if K > 2 and model.parametrization == "symmetric":  # pragma: no cover - l2 > 0 only
        raise ValueError("multinomial inference needs the reference-class fit (l2=0)")
    d = model.n_features_in
    p = d + (1 if model.fit_intercept else 0)
    q = m * p
    check_size(q)
    return InferenceRequest(method, cov_type, ci, alpha, K, m, d, p, q)


def model_kind(model):
    """``"MLE"`` or ``"Firth"``; a ``ValueError`` for anything else or a ridge fit."""
    if not isinstance(model, LogisticParams):
        raise ValueError(
            f"model must be a LogisticParams (the result of fit_logistic); got "
            f"{type(model).__name__}"
        )
    if model.solver == "firth":
        return "Firth"
    if model.l2 > 0:
        raise ValueError(
            f"the model was fitted with l2={model.l2:g}: Wald standard errors of a ridge "
            f"estimator describe its variance around a biased target, not uncertainty "
            f"about the coefficients, and are not what summary tables mean; refit with "
            f"l2=0 (or penalty='firth' under separation or for small samples)"
        )
    return "MLE"


def check_size(q):
    """Refuse more than :data:`MAX_INFERENCE_PARAMS` coefficients, stating the memory."""
    if q > MAX_INFERENCE_PARAMS:
        gb = 3 * 8.0 * q * q / 1e9
        raise ValueError(
            f"logistic_inference forms the dense {q} x {q} information matrix, its "
            f"inverse and the sandwich: {gb:.3g} GB for {q} coefficients; the limit is "
            f"MAX_INFERENCE_PARAMS = {MAX_INFERENCE_PARAMS} coefficients. Select features "
            f"first (inference on every column of a wide sparse matrix is rarely wanted)"
        )


def table_row_names(X, d, fit_intercept, names):
    """Row names of the table: ``const`` first (with an intercept), then ``names``, X's
    columns (a DataFrame) or ``x1 … xd``."""
    if names is None:
        cols = getattr(X, "columns", None)
        names = ([str(c) for c in cols] if cols is not None
                 else list(default_feature_names(d)))
    names = [str(c) for c in names]
    if len(names) != d:
        raise ValueError(f"feature_names has {len(names)} names for {d} features")
    return (["const"] if fit_intercept else []) + names


def group_codes(groups, n):
    """(codes (n,) int64, number of clusters) of the cluster labels ``groups``."""
    if groups is None:
        raise ValueError("cov_type='cluster' needs groups (one cluster label per row)")
    g = np.asarray(groups)
    if g.ndim != 1 or g.shape[0] != n:
        raise ValueError(f"groups must have shape ({n},), one label per row of X; "
                         f"got {g.shape}")
    # the label rule of y: a NaN, None or NaT is a missing cluster label, refused
    # with its row (not a cluster of its own)
    labels, codes = check_y(groups, n, name="groups")
    if labels.shape[0] < 2:
        raise ValueError("cov_type='cluster' needs at least 2 distinct groups")
    return codes.reshape(-1).astype(np.int64), int(labels.shape[0])


def check_information_not_zero(information, max_abs_eta):
    """Raise a ``ValueError`` where every fitted probability is 0 or 1 (to float64) at
    the model's coefficients: every row's weight π(1 − π) is then zero, so is the
    information, and a rank analysis of it would blame the design for what the
    coefficients do."""
    if np.any(information):
        return
    raise ValueError(
        f"logistic_inference: every fitted probability is 0 or 1 (to float64) at the "
        f"model's coefficients on the data given (|linear predictor| up to "
        f"{max_abs_eta:.3g}), so the Fisher information is zero and no standard error "
        f"exists. These are not the data the model was fitted on (pass the X, y and "
        f"sample_weight of the fit, or refit on these data), or the classes are "
        f"separated (see fastgen.detect_separation)")


def check_not_separated(max_abs_eta, method, confirm, n_classes, converged=True):
    """Raise if the data are separated (the MLE does not exist).

    The largest fitted |linear predictor| is the cheap signal; when it exceeds
    ``SEPARATION_ETA``, or the fit did not converge (a fit stopped by its own
    separation test can end with moderate |η|), ``confirm()`` runs the exact
    linear-programming test (:func:`fastgen.detect_separation` in memory, the same
    programme by passes over the blocks for Dask X), so large but finite effects are
    not refused.  The advice fits the number of classes
    (:func:`fastgen.logistic.diagnostics.separation_advice`).
    """
    if method != "MLE" or (max_abs_eta <= SEPARATION_ETA and converged):
        return
    sep = confirm()
    if sep is None:
        warn(f"logistic_inference: some fitted probabilities are 0 or 1 to 13 digits "
             f"(|linear predictor| up to {max_abs_eta:.3g}) and the exact separation test "
             f"did not finish; if the classes are separated, the standard errors are "
             f"meaningless", ConvergenceWarning)
        return
    if not sep.separated:
        return
    inf = sep.infinite_coefficients(positions=True)
    shown = ", ".join(inf[:10]) + (f", … ({len(inf)} in all)" if len(inf) > 10 else "")
    raise ValueError(
        f"logistic_inference: {sep.kind} separation: the classes are perfectly "
        f"separable (coefficients that run to ±infinity: {shown}; fitted |linear "
        f"predictor| up to {max_abs_eta:.3g}), so the maximum-likelihood estimate does "
        f"not exist and standard errors at the fitted coefficients are meaningless. "
        f"{separation_advice(n_classes, inference=True)}"
    )

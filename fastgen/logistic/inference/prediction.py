"""Predicted probabilities with delta-method standard errors and confidence intervals
(statsmodels' ``get_prediction`` for Logit; MNLogit lacks one).

Binary, with :math:`\\tilde x` the row with its intercept and :math:`\\Sigma` the
``cov_params``: :math:`\\eta = \\tilde x^\\top\\beta`, :math:`p = \\sigma(\\eta)`,
:math:`\\mathrm{se}(p) = p(1-p)\\sqrt{\\tilde x^\\top\\Sigma\\tilde x}` and the interval
:math:`\\sigma(\\eta \\pm z\\sqrt{\\tilde x^\\top\\Sigma\\tilde x})`, formed on the linear
predictor and mapped back, so inside [0, 1].  Multinomial: :math:`P_k` with the
gradient :math:`\\partial P_k/\\partial\\beta_j = P_k([k=j] - P_j)\\tilde x`, and the
interval formed on the log-odds :math:`\\log(P_k/(1-P_k))` alike.  Every form
:math:`\\tilde x^\\top\\Sigma\\tilde x` is taken in the centred frame (:mod:`.frame`),
so column offsets do not cost digits.

Imports: numpy, scipy (pandas on use) and the sibling ``frame`` only.
"""

from __future__ import annotations

import numpy as np
import scipy.special

from ..tails import norm_isf
from .frame import frame_of

__all__ = ["PredictionResults", "get_prediction", "predicted_probabilities", "design_rows"]


class PredictionResults:
    """Predicted probabilities and their uncertainty.

    Attributes
    ----------
    predicted : ndarray (n,) or (n, K)
        ``P(y = classes[1])`` (binary) or every class' probability (multinomial).
    se : ndarray
        Delta-method standard errors of ``predicted``.
    linpred, linpred_se : ndarray
        The scale on which the intervals are formed: the linear predictor (binary) or
        the log-odds of each class (multinomial), and its standard error.
    row_labels : list
        The rows' labels (a DataFrame's index, else 0 … n−1).
    classes : ndarray or None
        The classes of the columns (multinomial).
    """

    def __init__(self, predicted, se, linpred, linpred_se, row_labels, classes=None):
        self.predicted, self.se = predicted, se
        self.linpred, self.linpred_se = linpred, linpred_se
        self.row_labels, self.classes = row_labels, classes

    @property
    def var_pred(self):
        """The variance of ``predicted``, ``se²``."""
        return self.se ** 2

    def conf_int(self, alpha=0.05):
        """Intervals ``σ(linpred ± z_{1−α/2} · linpred_se)``: shape
        ``predicted.shape + (2,)``."""
        if not 0.0 < alpha < 1.0:
            raise ValueError(f"alpha must be in (0, 1); got {alpha}")
        z = norm_isf(alpha / 2)
        return np.stack([scipy.special.expit(self.linpred - z * self.linpred_se),
                         scipy.special.expit(self.linpred + z * self.linpred_se)], axis=-1)

    def summary_frame(self, alpha=0.05):
        """A DataFrame with columns ``predicted, se, ci_lower, ci_upper`` (needs
        pandas): one row per data row (binary), or per (row, class) (multinomial)."""
        import pandas as pd

        ci = self.conf_int(alpha)
        cols = ["predicted", "se", "ci_lower", "ci_upper"]
        if self.predicted.ndim == 1:
            data = np.column_stack([self.predicted, self.se, ci[:, 0], ci[:, 1]])
            return pd.DataFrame(data, index=self.row_labels, columns=cols)
        n, K = self.predicted.shape
        idx = pd.MultiIndex.from_product([list(self.row_labels), list(self.classes)],
                                         names=["row", "class"])
        data = np.column_stack([self.predicted.ravel(), self.se.ravel(),
                                ci[..., 0].ravel(), ci[..., 1].ravel()])
        return pd.DataFrame(data, index=idx, columns=cols)


def check_covariance(res, what):
    """Refuse a ``cov_params`` with undefined entries (FLIC's: logistf gives its
    intercept no covariance with the slopes)."""
    if not np.all(np.isfinite(np.asarray(res.cov_params))):
        raise ValueError(
            f"{what} need the full covariance of the coefficients, and this {res.method} "
            f"fit has none between the intercept and the slopes (logistf's FLIC "
            f"inference); use the Firth fit (fit_logistic(..., penalty='firth')) or FLAC")


def design_rows(res, exog, *, keep_missing=False):
    """(the rows with their intercept column, as float64 (n, p); row labels) of new
    data ``exog`` (through the formula's design when there is one), or of the fitted
    data when ``exog`` is None (labelled by the fitted rows' index: the data's, rows
    with missing values dropped).  ``keep_missing=True`` keeps a formula's rows with
    missing values as rows of NaN (``predict``)."""
    fit_intercept = res.fit_intercept
    labels = None
    if exog is None:
        if res.fit_data is None:
            raise ValueError("this result holds no data (a Dask fit): pass exog, the rows "
                             "to predict")
        X = res.fit_data.X
        if res.design is not None and getattr(res.design, "fit_index", None) is not None:
            labels = list(res.design.fit_index)
        elif getattr(res.fit_data, "row_labels", None) is not None:
            labels = list(res.fit_data.row_labels)
    elif res.design is not None:
        frame = res.design.exog(exog, keep_missing=keep_missing)
        labels = list(frame.index)
        X = frame.to_numpy()
    else:
        cols = getattr(exog, "columns", None)
        feats = list(res.feature_names[1:] if fit_intercept else res.feature_names)
        if cols is not None and res.is_labelled:
            missing = [c for c in feats if c not in [str(c) for c in cols]]
            if missing:
                raise ValueError(f"exog lacks the columns {missing} the model was fitted "
                                 f"with; pass a DataFrame with the columns {feats}")
            exog = exog[feats]
        if hasattr(exog, "index") and hasattr(exog, "to_numpy"):
            labels = list(exog.index)
        X = exog
    if hasattr(X, "tocsr"):
        raise ValueError("predictions and marginal effects need dense data; pass "
                         "exog as a dense array (e.g. X.toarray() for the rows wanted)")
    X = np.asarray(X, dtype=np.float64)
    if X.ndim == 1:
        X = X[None, :]
    d = len(res.feature_names) - (1 if fit_intercept else 0)
    if X.ndim != 2 or X.shape[1] != d:
        raise ValueError(f"exog must have {d} columns, those the model was fitted with "
                         f"(without the intercept); got shape {X.shape}")
    if not (keep_missing and res.design is not None) and not np.all(np.isfinite(X)):
        raise ValueError("exog contains NaN or infinity; drop or fill those rows")
    if fit_intercept:
        X = np.column_stack([np.ones(X.shape[0]), X])
    if labels is None or len(labels) != X.shape[0]:
        labels = list(range(X.shape[0]))
    return X, labels


def probabilities(params, X):
    """P (n,) (binary, ``params`` (p,)) or (n, K) (multinomial, ``params`` (p, K−1),
    the first class the reference); complex inputs pass through (complex steps)."""
    eta = X @ params
    if params.ndim == 1:
        return 1.0 / (1.0 + np.exp(-eta))
    Z = np.column_stack([np.zeros(eta.shape[0], dtype=eta.dtype), eta])
    if Z.dtype.kind != "c":
        Z = Z - np.max(Z, axis=1, keepdims=True)
    e = np.exp(Z)
    return e / e.sum(axis=1, keepdims=True)


def predicted_probabilities(res, exog):
    """The probabilities of :meth:`~fastgen.LogisticInference.predict`: arrays, or for
    new data of a formula fit (as statsmodels) a Series (binary) or a DataFrame
    (multinomial, one column per class) indexed as the data, NaN on rows with a
    missing value (the fitted data: an array, as statsmodels' ``predict()``)."""
    formula = res.design is not None and exog is not None
    X, labels = design_rows(res, exog, keep_missing=formula)
    params = np.asarray(res.params, dtype=np.float64)
    ok = np.isfinite(X).all(axis=1)
    if ok.all():
        P = probabilities(params, X)
    else:
        P = np.full((X.shape[0],) + params.shape[1:2], np.nan)
        if params.ndim == 2:
            P = np.full((X.shape[0], params.shape[1] + 1), np.nan)
        P[ok] = probabilities(params, X[ok])
    if not formula:
        return P
    import pandas as pd

    index = pd.Index(labels)
    if P.ndim == 1:
        return pd.Series(P, index=index)
    return pd.DataFrame(P, index=index, columns=pd.RangeIndex(P.shape[1]))


def get_prediction(res, exog):
    check_covariance(res, "predictions' standard errors")
    X, labels = design_rows(res, exog)
    params = np.asarray(res.params, dtype=np.float64)
    # the forms x̃ᵀΣx̃ in the centred frame: (1, x − m) with its covariance (.frame)
    shift, cov = frame_of(res)
    Xf = X if shift is None else np.column_stack([X[:, 0], X[:, 1:] - shift])
    if params.ndim == 1:
        eta = X @ params
        var = np.einsum("ij,jk,ik->i", Xf, cov, Xf)
        p = scipy.special.expit(eta)
        lse = np.sqrt(var)
        dp = p * scipy.special.expit(-eta)  # p(1 − p) without cancelling at large η
        return PredictionResults(p, dp * lse, eta, lse, labels)
    n, pdim = X.shape
    m = params.shape[1]
    P = probabilities(params, X)
    K = m + 1
    # Q[i, j, l] = x̃_iᵀ Σ_jl x̃_i over the equations j, l of classes 1 … K−1
    Q = np.empty((n, m, m))
    for j in range(m):
        for l in range(m):
            S = cov[j * pdim:(j + 1) * pdim, l * pdim:(l + 1) * pdim]
            Q[:, j, l] = np.einsum("ij,jk,ik->i", Xf, S, Xf)
    se = np.empty((n, K))
    for k in range(K):
        A = -P[:, [k]] * P[:, 1:]  # a_kj = P_k([k = j] − P_j), j = 1 … K−1
        if k > 0:
            A[:, k - 1] += P[:, k]
        se[:, k] = np.sqrt(np.einsum("nj,njl,nl->n", A, Q, A))
    Pc = np.clip(P, np.finfo(float).tiny, 1.0 - np.finfo(float).eps)
    logit = np.log(Pc) - np.log1p(-Pc)
    lse = se / (Pc * (1.0 - Pc))
    return PredictionResults(P, se, logit, lse, labels, classes=res.classes)

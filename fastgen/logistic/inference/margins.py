"""Marginal effects of the regressors on the predicted probabilities, with delta-method
standard errors: statsmodels' ``get_margeff`` for Logit and MNLogit, same options,
same numbers.

The effect of regressor j at a row is :math:`\\partial P/\\partial x_j`: for a binary
model :math:`p(1-p)\\beta_j`; for class k of a multinomial one
:math:`P_k(\\beta_{jk} - \\sum_l P_l\\beta_{jl})` (the reference class' β being 0);
``eyex``, ``dyex``, ``eydx`` scale by x and/or 1/P.  ``dummy`` columns (0/1) take the
discrete change :math:`P(x_j=1) - P(x_j=0)`, ``count`` columns
:math:`(P(x_j+1) - P(x_j-1))/2` (their logs for ``ey…``).  ``at="overall"`` averages
the effects over the rows; ``"mean"``/``"median"``/``"zero"`` evaluate them at one row.
The covariance of the effects is :math:`J\\Sigma J^\\top`, J their Jacobian in the
coefficients, taken by complex steps (exact to rounding) as statsmodels takes it, and
the form in the centred frame (:mod:`.frame`), so column offsets do not cost digits.

Imports: numpy, scipy (pandas on use) and the siblings ``frame`` and ``prediction``
only.
"""

from __future__ import annotations

import numpy as np

from ..tails import norm_isf, norm_sf
from .frame import quadratic_form
from .prediction import check_covariance, design_rows, probabilities

__all__ = ["MarginalEffects", "get_margeff"]

_METHOD_NAMES = {"dydx": "dy/dx", "eyex": "d(lny)/d(lnx)", "dyex": "dy/d(lnx)",
                 "eydx": "d(lny)/dx"}


class MarginalEffects:
    """Marginal effects and their inference, with statsmodels' attribute names.

    Attributes
    ----------
    margeff, margeff_se : ndarray
        Effects and standard errors: (d,) for a binary model, (d, K) for a
        multinomial one (column k: class ``classes[k]``); d the non-constant columns.
    margeff_cov : ndarray
        Their covariance (multinomial: class by class).
    margeff_options : dict
        ``at`` and ``method``.
    names : list of str
        The regressors (the non-constant columns).
    """

    def __init__(self, margeff, se, cov, options, names, classes, dep_name):
        self.margeff, self.margeff_se, self.margeff_cov = margeff, se, cov
        self.margeff_options = options
        self.names, self.classes, self.dep_name = names, classes, dep_name

    @property
    def tvalues(self):
        return self.margeff / self.margeff_se

    @property
    def pvalues(self):
        return 2.0 * norm_sf(np.abs(self.tvalues))

    def conf_int(self, alpha=0.05):
        """``margeff ± z_{1−α/2} · se``: (d, 2) (binary) or (d, 2, K) (multinomial),
        as statsmodels."""
        z = norm_isf(alpha / 2)
        lo, hi = self.margeff - z * self.margeff_se, self.margeff + z * self.margeff_se
        return np.stack([lo, hi], axis=1)

    def summary_frame(self, alpha=0.05):
        """statsmodels' table (needs pandas): columns ``dy/dx`` (or the method's name),
        ``Std. Err.``, ``z``, ``Pr(>|z|)``, ``Conf. Int. Low``, ``Cont. Int. Hi.``
        (statsmodels' spelling); rows the regressors, or (``y=class``, regressor) for
        a multinomial model."""
        import pandas as pd

        cols = [_METHOD_NAMES[self.margeff_options["method"]], "Std. Err.", "z",
                "Pr(>|z|)", "Conf. Int. Low", "Cont. Int. Hi."]
        ci = self.conf_int(alpha)
        if self.margeff.ndim == 2:
            table = np.column_stack([a.ravel("F") for a in (
                self.margeff, self.margeff_se, self.tvalues, self.pvalues, ci[:, 0, :],
                ci[:, 1, :])])
            ynames = [f"{self.dep_name}={_label(c)}" for c in self.classes]
            index = pd.MultiIndex.from_tuples(
                [(yn, xn) for yn in ynames for xn in self.names], names=["endog", "exog"])
        else:
            table = np.column_stack([self.margeff, self.margeff_se, self.tvalues,
                                     self.pvalues, ci])
            index = list(self.names)
        return pd.DataFrame(table, index=index, columns=cols)

    def summary(self, alpha=0.05):
        """statsmodels' marginal-effects table as a
        :class:`~fastgen.logistic.inference.Summary` (``str()`` is the text)."""
        from .summary import Summary, SummaryTable

        a = alpha
        info = SummaryTable("info", "Logit Marginal Effects" if self.margeff.ndim == 1
                            else "MNLogit Marginal Effects",
                            data=[["Dep. Variable:", str(self.dep_name), "Method:",
                                   self.margeff_options["method"]],
                                  ["At:", self.margeff_options["at"], "", ""]])
        header = ["", _METHOD_NAMES[self.margeff_options["method"]], "std err", "z",
                  "P>|z|", f"[{a / 2:.3f}", f"{1 - a / 2:.3f}]"]
        ci = self.conf_int(alpha)

        def rows(k):
            at = (slice(None),) if k is None else (slice(None), k)
            me, se = self.margeff[at], self.margeff_se[at]
            z, p = self.tvalues[at], self.pvalues[at]
            lo, hi = (ci[:, 0], ci[:, 1]) if k is None else (ci[:, 0, k], ci[:, 1, k])
            return [[nm, me[j], se[j], z[j], p[j], lo[j], hi[j]]
                    for j, nm in enumerate(self.names)]

        if self.margeff.ndim == 1:
            blocks = [(None, rows(None))]
        else:
            blocks = [(f"{self.dep_name}={_label(c)}", rows(k))
                      for k, c in enumerate(self.classes)]
        table = SummaryTable("params", header=header, blocks=blocks,
                             data=[r for _, b in blocks for r in b])
        return Summary([info, table])

    def __repr__(self):
        return (f"<MarginalEffects at={self.margeff_options['at']!r} "
                f"method={self.margeff_options['method']!r}: "
                f"{np.array2string(np.asarray(self.margeff), precision=4)}>")


def _label(c):
    if isinstance(c, (float, np.floating)) and float(c).is_integer():
        return str(int(c))
    return str(c)


def _isdummy(X):
    return np.flatnonzero((np.max(X, axis=0) == 1) & (np.min(X, axis=0) == 0)
                          & np.all(X % 1.0 == 0, axis=0))


def _iscount(X):
    cand = (np.all(X % 1.0 == 0, axis=0) & (X.var(0) != 0) & np.all(X >= 0, axis=0))
    dummies = set(_isdummy(X).tolist())
    return np.array([j for j in np.flatnonzero(cand) if j not in dummies], dtype=np.intp)


def _weighted_median(X, w):
    """Per column: the median of the rows repeated w times (for integer weights; a
    weighted median otherwise)."""
    out = np.empty(X.shape[1])
    half = w.sum() / 2.0
    for j in range(X.shape[1]):
        order = np.argsort(X[:, j], kind="stable")
        v, c = X[order, j], np.cumsum(w[order])
        i = int(np.searchsorted(c, half))
        out[j] = 0.5 * (v[i] + v[i + 1]) if c[i] == half and i + 1 < v.shape[0] else v[i]
    return out


def _at_rows(X, at, w, const):
    if at == "overall":
        return X
    if at == "mean":
        return (np.average(X, axis=0, weights=w) if w is not None else X.mean(0))[None, :]
    if at == "median":
        return (_weighted_median(X, w) if w is not None else np.median(X, axis=0))[None, :]
    row = np.zeros((1, X.shape[1]))
    row[0, const] = 1.0
    return row


def _effects(params, X, method, dummy_idx, count_idx):
    """The effects at every row of X: (n, p) (binary) or (n, p·K), class by class
    (multinomial); ``params`` (p,) or (p, K−1), possibly complex."""
    P = probabilities(params, X)
    if params.ndim == 1:
        me = (P * (1.0 - P))[:, None] * params[None, :]
        if "ex" in method:
            me = me * X
        if "ey" in method:
            me = me / P[:, None]
    else:
        B = np.column_stack([np.zeros(params.shape[0], dtype=params.dtype), params])
        mean_b = P @ B.T  # (n, p): Σ_l P_l β_l
        me = P[:, None, :] * (B[None, :, :] - mean_b[:, :, None])  # (n, p, K)
        if "ex" in method:
            me = me * X[:, :, None]
        if "ey" in method:
            me = me / P[:, None, :]
    me = me.copy()

    def change(X0, X1):
        P0, P1 = probabilities(params, X0), probabilities(params, X1)
        if "ey" in method:
            return np.log(P1) - np.log(P0)
        return P1 - P0

    for i in count_idx:
        X0, X1 = X.astype(params.dtype), X.astype(params.dtype)
        X0[:, i] -= 1.0
        X1[:, i] += 1.0
        me[:, i] = change(X0, X1) / 2.0
    for i in dummy_idx:
        X0, X1 = X.astype(params.dtype), X.astype(params.dtype)
        X0[:, i] = 0.0
        X1[:, i] = 1.0
        me[:, i] = change(X0, X1)
    return me.reshape(X.shape[0], -1, order="F")


def get_margeff(res, at="overall", method="dydx", atexog=None, dummy=False, count=False):
    if res.fit_data is None:
        raise ValueError("marginal effects need the fitted data; this result holds none "
                         "(a Dask fit)")
    check_covariance(res, "marginal effects' standard errors")
    at, method = str(at).lower(), str(method).lower()
    if at not in ("overall", "mean", "median", "zero"):
        raise ValueError(f"at must be 'overall', 'mean', 'median' or 'zero'; got {at!r}")
    if method not in _METHOD_NAMES:
        raise ValueError(f"method must be one of {list(_METHOD_NAMES)}; got {method!r}")
    if (dummy or count) and (method in ("dyex", "eyex") or at in ("median", "zero")):
        raise ValueError(f"dummy and count effects are discrete changes: they take "
                         f"method 'dydx' or 'eydx' and at 'overall' or 'mean' (got "
                         f"method={method!r}, at={at!r})")
    X, _ = design_rows(res, None)
    X = X.copy()
    params = np.asarray(res.params, dtype=np.float64)
    fd = res.fit_data
    w = np.asarray(fd.w, dtype=np.float64) if fd.w.shape[0] else None
    effects_idx = X.var(0) != 0
    const = ~effects_idx
    dummy_idx = _isdummy(X) if dummy else np.array([], dtype=np.intp)
    count_idx = _iscount(X) if count else np.array([], dtype=np.intp)
    if atexog is not None:
        if not isinstance(atexog, dict):
            raise ValueError("atexog must be a dict {column index: value}")
        for key, value in atexog.items():
            X[:, int(key)] = value
    Xa = _at_rows(X, at, w, const)

    def mean_effects(b):
        me = _effects(b.reshape(params.shape, order="F"), Xa, method, dummy_idx, count_idx)
        if at == "overall":
            return (np.average(me, axis=0, weights=w) if w is not None
                    else me.mean(0))
        return me[0]

    flat = params.ravel(order="F")
    effects = mean_effects(flat)
    # the Jacobian by complex steps (statsmodels' approx_fprime_cs)
    h = np.finfo(float).eps * np.maximum(np.abs(flat), 0.1)
    jac = np.empty((effects.shape[0], flat.shape[0]))
    for k in range(flat.shape[0]):
        b = flat.astype(complex)
        b[k] += 1j * h[k]
        jac[:, k] = mean_effects(b).imag / h[k]
    mcov = quadratic_form(res, jac)  # J Σ Jᵀ, in the centred frame (.frame)
    se = np.sqrt(np.diag(mcov))
    names = [n for n, keep in zip(res.feature_names, effects_idx) if keep]
    opts = {"at": at, "method": method}
    if params.ndim == 1:
        return MarginalEffects(effects[effects_idx], se[effects_idx],
                               mcov[np.ix_(effects_idx, effects_idx)], opts, names,
                               res.classes, res.dep_name)
    K = params.shape[1] + 1
    idx = np.tile(effects_idx, K)
    d = int(effects_idx.sum())
    return MarginalEffects(effects[idx].reshape(d, K, order="F"),
                           se[idx].reshape(d, K, order="F"), mcov[np.ix_(idx, idx)], opts,
                           names, res.classes, res.dep_name)

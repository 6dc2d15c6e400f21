"""Tests of linear hypotheses ``R β = q`` (Wald z and χ², as statsmodels' ``t_test`` and
``wald_test``) and likelihood-ratio tests between nested fits (penalised, as logistf's
``anova``, for Firth fits).

Constraint strings (``"age = yrs_married"``, ``"x1 + x3 = 0, x2 = 1"``) are parsed by
formulaic's ``LinearConstraints`` in the coefficients' names, as statsmodels parses them
with the formulaic engine.

Imports: numpy, scipy (pandas and formulaic on use) only.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg
import scipy.special
import scipy.stats

__all__ = ["ContrastResults", "LRTestResults", "constraint_matrix", "t_test", "wald_test",
           "lr_test", "firth_restricted_loglik"]


class ContrastResults:
    """The result of :meth:`~fastgen.LogisticInference.t_test` (``effect``, ``sd``,
    ``tvalue``, ``pvalue``, one per constraint) or of
    :meth:`~fastgen.LogisticInference.wald_test` (``statistic``, ``pvalue``,
    ``df_denom``: the χ² degrees of freedom, as statsmodels names them), with
    statsmodels' attribute names.
    """

    def __init__(self, *, effect=None, sd=None, tvalue=None, pvalue=None, q=None,
                 alpha=0.05, statistic=None, df_denom=None, distribution="norm",
                 names=None):
        self.effect, self.sd, self.tvalue, self.pvalue = effect, sd, tvalue, pvalue
        self.q, self.alpha = q, alpha
        self.statistic, self.df_denom, self.distribution = statistic, df_denom, distribution
        self.names = names

    @property
    def df_constraints(self):
        """Number of independent constraints (the χ² degrees of freedom)."""
        return self.df_denom

    def conf_int(self, alpha=None):
        """Intervals for ``effect`` (= Rβ), ``effect ± z_{1−α/2} · sd``: shape (r, 2)."""
        if self.effect is None:
            raise ValueError("a Wald (chi2) test has no intervals; use t_test")
        z = scipy.stats.norm.isf((self.alpha if alpha is None else alpha) / 2)
        return np.column_stack([self.effect - z * self.sd, self.effect + z * self.sd])

    def summary_frame(self, alpha=0.05):
        """statsmodels' table: ``coef, std err, z, P>|z|, Conf. Int. Low,
        Conf. Int. Upp.``, rows ``c0, c1, …`` (needs pandas)."""
        import pandas as pd

        if self.effect is None:
            raise ValueError("a Wald (chi2) test has no table of contrasts; use t_test")
        ci = self.conf_int(alpha)
        return pd.DataFrame(
            np.column_stack([self.effect, self.sd, self.tvalue, self.pvalue, ci]),
            index=[f"c{i}" for i in range(len(self.effect))],
            columns=["coef", "std err", "z", "P>|z|", "Conf. Int. Low", "Conf. Int. Upp."])

    def summary(self, alpha=0.05):
        """The table of a t test (statsmodels' "Test for Constraints") as a
        :class:`~fastgen.logistic.inference.Summary`, or the line of a Wald test."""
        if self.effect is None:
            return repr(self)
        from .summary import Summary, SummaryTable

        ci = self.conf_int(alpha)
        header = ["", "coef", "std err", "z", "P>|z|", f"[{alpha / 2:.3f}",
                  f"{1 - alpha / 2:.3f}]"]
        rows = [[f"c{i}", self.effect[i], self.sd[i], self.tvalue[i], self.pvalue[i],
                 ci[i, 0], ci[i, 1]] for i in range(len(self.effect))]
        return Summary([SummaryTable("params", header=header, blocks=[(None, rows)],
                                     data=rows)])

    def __repr__(self):
        if self.effect is None:
            return (f"<Wald test (chi2): statistic={self.statistic:.6g}, "
                    f"p-value={self.pvalue:.6g}, df={self.df_denom}>")
        return (f"<Test for constraints: effect={np.array2string(self.effect)}, "
                f"z={np.array2string(self.tvalue)}, p={np.array2string(self.pvalue)}>")


def constraint_matrix(res, r_matrix):
    """(R, q) of a constraint: a string in ``res.param_names`` (formulaic's
    ``LinearConstraints``), a list of strings, a matrix R (q = 0) or a pair (R, q)."""
    names = res.param_names
    k = len(names)
    if isinstance(r_matrix, (list, tuple)) and r_matrix and all(
            isinstance(c, str) for c in r_matrix):
        r_matrix = ", ".join(r_matrix)
    if isinstance(r_matrix, str):
        try:
            from formulaic.utils.constraints import LinearConstraints
        except ImportError as exc:
            raise ImportError("constraint strings are parsed by formulaic: pip install "
                              "'fastgen[formula]', or pass the matrix R") from exc
        try:
            lc = LinearConstraints.from_spec(r_matrix, variable_names=list(names))
        except Exception as exc:
            raise ValueError(f"r_matrix: cannot parse the constraints {r_matrix!r} in the "
                             f"coefficients' names {names} ({exc})") from exc
        R = np.asarray(lc.constraint_matrix, dtype=np.float64)
        q = np.asarray(lc.constraint_values, dtype=np.float64).reshape(-1)
    elif isinstance(r_matrix, tuple) and len(r_matrix) == 2:
        R = np.atleast_2d(np.asarray(r_matrix[0], dtype=np.float64))
        q = np.atleast_1d(np.asarray(r_matrix[1], dtype=np.float64)).reshape(-1)
    else:
        R = np.atleast_2d(np.asarray(r_matrix, dtype=np.float64))
        q = np.zeros(R.shape[0])
    if R.ndim != 2 or R.shape[1] != k:
        raise ValueError(f"r_matrix must have one column per coefficient ({k}: {names}); "
                         f"got shape {R.shape}")
    if q.shape[0] != R.shape[0]:
        raise ValueError(f"q must have one value per row of R ({R.shape[0]}); got "
                         f"{q.shape[0]}")
    if not (np.all(np.isfinite(R)) and np.all(np.isfinite(q))):
        raise ValueError("r_matrix: R and q must be finite")
    return R, q


def _contrast(res, r_matrix):
    R, q = constraint_matrix(res, r_matrix)
    beta = res.params_vector
    used = np.any(R != 0, axis=0)  # FLIC's covariance is undefined off the intercept
    Ru = R[:, used]
    V = Ru @ np.asarray(res.cov_params)[np.ix_(used, used)] @ Ru.T
    if not np.all(np.isfinite(V)):
        raise ValueError(
            f"the constraints combine coefficients whose covariance this {res.method} fit "
            f"does not define (logistf's FLIC inference gives the intercept no covariance "
            f"with the slopes); test the intercept alone, or the slopes without it")
    return R, q, R[:, used] @ beta[used], V


def t_test(res, r_matrix, alpha=0.05):
    """One z test per row of ``R β = q``: ``z = (Rβ − q) / √diag(RΣRᵀ)``."""
    R, q, effect, V = _contrast(res, r_matrix)
    sd = np.sqrt(np.diag(V))
    z = (effect - q) / sd
    p = 2.0 * scipy.stats.norm.sf(np.abs(z))
    return ContrastResults(effect=effect, sd=sd, tvalue=z, pvalue=p, q=q, alpha=alpha,
                           distribution="norm")


def wald_test(res, r_matrix):
    """``W = (Rβ − q)ᵀ (RΣRᵀ)⁺ (Rβ − q)`` against χ²(rank(RΣRᵀ)), as statsmodels (a
    pseudo-inverse, so dependent constraints count once)."""
    R, q, effect, V = _contrast(res, r_matrix)
    d = effect - q
    W = float(d @ np.linalg.pinv(V) @ d)
    df = int(np.linalg.matrix_rank(V))
    return ContrastResults(statistic=W, pvalue=float(scipy.stats.chi2.sf(W, df)),
                           df_denom=df, distribution="chi2")


# --------------------------------------------------------------------------- LR tests


class LRTestResults:
    """A likelihood-ratio test: ``statistic`` = 2(llf_full − llf_restricted),
    ``df_diff`` and ``pvalue`` (χ² upper tail); ``method`` says which likelihood."""

    def __init__(self, statistic, df_diff, method):
        self.statistic = float(statistic)
        self.df_diff = int(df_diff)
        self.pvalue = float(scipy.stats.chi2.sf(self.statistic, self.df_diff))
        self.method = method

    def __iter__(self):  # statistic, pvalue, df as statsmodels' compare_lr_test
        return iter((self.statistic, self.pvalue, self.df_diff))

    def __repr__(self):
        return (f"<Likelihood-ratio test ({self.method}): statistic={self.statistic:.6g}, "
                f"df={self.df_diff}, p-value={self.pvalue:.6g}>")


def lr_test(restricted, full):
    """The likelihood-ratio test of ``restricted`` against ``full``, which nests it.

    Maximum likelihood: ``2(llf_full − llf_restricted)`` on ``q_full − q_restricted``
    degrees of freedom.  Firth fits: logistf's ``anova`` (method ``"nested"``): the
    penalised likelihoods are comparable only under one penalty, so the restricted
    model is refitted in the full model's design with the coefficients it lacks fixed
    at 0, maximising ``l(β) + ½ log det I(β)`` with the full design's information
    :math:`I`, and the statistic is twice the difference of the two maxima.  This
    needs the coefficients' names to say which are missing (named columns, or the same
    ``feature_names``), and the full fit's data (an in-memory fit).

    Parameters
    ----------
    restricted, full : LogisticInference
        Fits of the same y on the same rows (equal ``nobs`` and classes), by the same
        method; ``restricted`` has fewer coefficients.

    Returns
    -------
    LRTestResults
        ``statistic``, ``pvalue``, ``df_diff`` (also unpacked in that order).
    """
    for nm, r in (("restricted", restricted), ("full", full)):
        if not (hasattr(r, "param_names") and hasattr(r, "llf")):  # a LogisticInference
            raise ValueError(f"{nm} must be a LogisticInference; got {type(r).__name__}")
    if restricted.method != full.method:
        raise ValueError(f"restricted and full were fitted by different methods "
                         f"({restricted.method} and {full.method}); fit both alike")
    if restricted.nobs != full.nobs or not np.array_equal(restricted.classes, full.classes):
        raise ValueError(f"restricted and full must be fits of the same y on the same rows "
                         f"(nobs {restricted.nobs:g} and {full.nobs:g}, classes "
                         f"{restricted.classes.tolist()} and {full.classes.tolist()})")
    q_r, q_f = len(restricted.param_names), len(full.param_names)
    if q_r >= q_f:
        raise ValueError(f"restricted must have fewer coefficients than full; they have "
                         f"{q_r} and {q_f} (pass the smaller model first)")
    if restricted.method == "MLE":
        return LRTestResults(2.0 * (full.llf - restricted.llf), q_f - q_r, "MLE")
    if restricted.method != "Firth" or full.multinomial:
        raise ValueError(f"lr_test supports maximum-likelihood fits and binary Firth fits "
                         f"(logistf's penalised test); got {full.method}"
                         f"{' (multinomial)' if full.multinomial else ''}")
    names_r, names_f = list(restricted.feature_names), list(full.feature_names)
    missing = [n for n in names_r if n not in names_f]
    if missing:
        raise ValueError(
            f"lr_test for Firth fits refits the restricted model in the full design and "
            f"needs to know which coefficients it lacks, by name; restricted has "
            f"{missing} that full has not (fit both on DataFrames, by formula, or pass "
            f"matching feature_names)")
    if full.fit_data is None:
        raise ValueError("lr_test for Firth fits needs the full fit's data (an in-memory "
                         "fit from fastgen.logistic_inference)")
    free = np.array([n in names_r for n in names_f])
    pl = firth_restricted_loglik(full, free)
    return LRTestResults(2.0 * (full.llf - pl), q_f - q_r, "penalised (Firth, nested)")


def _design(full):
    fd = full.fit_data
    X = fd.X
    if hasattr(X, "tocsr"):
        raise ValueError("lr_test for Firth fits needs dense X")
    X = np.asarray(X, dtype=np.float64)
    if fd.model.fit_intercept:
        X = np.column_stack([np.ones(X.shape[0]), X])
    y = (fd.codes == 1).astype(np.float64)
    w = fd.w if fd.w.shape[0] else np.ones(X.shape[0])
    return X, y, np.asarray(w, dtype=np.float64)


def _penalised(X, y, w, beta):
    eta = X @ beta
    ll = float(np.sum(w * (y * eta - np.logaddexp(0.0, eta))))
    pi = scipy.special.expit(eta)
    W = w * pi * (1.0 - pi)
    info = X.T @ (W[:, None] * X)
    c = scipy.linalg.cho_factor(info, lower=True)
    return ll + float(np.sum(np.log(np.diag(c[0])))), pi, W, info, c


def firth_restricted_loglik(full, free, tol=1e-10, max_iter=200):
    """max of ``l(β) + ½ log det I(β)`` over β with ``β_j = 0`` where ``free`` is False,
    in the full fit's design (logistf's restricted fit): Newton steps on the free
    coefficients' modified score ``U*_f = X_fᵀ(w(y − π) + h(½ − π))`` (h the hat
    values of the full design) with the information ``I_ff``, halved until the
    penalised likelihood does not decrease."""
    X, y, w = _design(full)
    beta = np.where(free, full.params_vector, 0.0)
    pl, pi, W, info, c = _penalised(X, y, w, beta)
    for _ in range(max_iter):
        cov = scipy.linalg.cho_solve(c, np.eye(X.shape[1]))
        h = W * np.einsum("ij,jk,ik->i", X, cov, X)
        U = X.T @ (w * (y - pi) + h * (0.5 - pi))
        Uf = U[free]
        step = np.zeros_like(beta)
        step[free] = np.linalg.solve(info[np.ix_(free, free)], Uf)
        t = 1.0
        for _ in range(60):
            new = beta + t * step
            pl_new, *rest = _penalised(X, y, w, new)
            if pl_new >= pl - 1e-12 * abs(pl):
                break
            t *= 0.5
        beta, pl, (pi, W, info, c) = new, pl_new, rest
        if np.max(np.abs(t * step)) <= tol * (1.0 + np.max(np.abs(beta))):
            break
    return pl

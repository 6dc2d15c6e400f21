"""Tests of linear hypotheses ``R β = q`` (Wald z and χ², as statsmodels' ``t_test`` and
``wald_test``) and likelihood-ratio tests between nested fits (penalised, as logistf's
``anova``, for Firth fits).

Constraint strings (``"age = yrs_married"``, ``"x1 + x3 = 0, x2 = 1"``) are parsed by
``parse_constraints`` in the coefficients' names with patsy's grammar, as
statsmodels parses them (its default engine, patsy): chained ``a = b = 0`` is two
constraints.

Imports: numpy, scipy (pandas on use) and the sibling ``frame`` only.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg
import scipy.special

from ..tails import chi2_sf, norm_isf, norm_sf
from .frame import frame_of, quadratic_form

__all__ = ["ContrastResults", "LRTestResults", "constraint_matrix", "parse_constraints",
           "t_test", "wald_test",
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
        alpha = self.alpha if alpha is None else alpha
        if not 0.0 < alpha < 1.0:
            raise ValueError(f"alpha must be in (0, 1); got {alpha}")
        z = norm_isf(alpha / 2)
        return np.column_stack([self.effect - z * self.sd, self.effect + z * self.sd])

    def summary_frame(self, alpha=None):
        """statsmodels' table: ``coef, std err, z, P>|z|, Conf. Int. Low,
        Conf. Int. Upp.``, rows ``c0, c1, …`` (needs pandas); ``alpha`` defaults to
        the test's (``t_test(..., alpha=)``)."""
        import pandas as pd

        if self.effect is None:
            raise ValueError("a Wald (chi2) test has no table of contrasts; use t_test")
        ci = self.conf_int(alpha)
        return pd.DataFrame(
            np.column_stack([self.effect, self.sd, self.tvalue, self.pvalue, ci]),
            index=[f"c{i}" for i in range(len(self.effect))],
            columns=["coef", "std err", "z", "P>|z|", "Conf. Int. Low", "Conf. Int. Upp."])

    def summary(self, alpha=None):
        """The table of a t test (statsmodels' "Test for Constraints") as a
        :class:`~fastgen.logistic.inference.Summary`, or the line of a Wald test.
        ``alpha`` defaults to the test's (``t_test(..., alpha=)``)."""
        if self.effect is None:
            return repr(self)
        alpha = self.alpha if alpha is None else alpha
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
    """(R, q) of a constraint: a string in ``res.param_names``
    (``parse_constraints``), a list of strings, a matrix R (q = 0) or a pair (R, q)."""
    names = res.param_names
    k = len(names)
    if isinstance(r_matrix, (list, tuple)) and r_matrix and all(
            isinstance(c, str) for c in r_matrix):
        r_matrix = ", ".join(r_matrix)
    if isinstance(r_matrix, str):
        R, q = parse_constraints(r_matrix, list(names))
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


_NUMBER = r"(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"


def parse_constraints(text, names):
    """(R, q) of linear constraints written in the coefficients' ``names``, with
    patsy's grammar (``DesignInfo.linear_constraint``, which statsmodels' ``t_test``
    and ``wald_test`` use): constraints separated by commas; each a linear
    expression (``+ - * /``, parentheses, numbers as ``2``, ``.5``, ``1e-3``, unary
    minus), ``=`` between two sides (an expression alone means ``= 0``), and chained
    ``a = b = c`` meaning ``a = b`` and ``b = c``.  Names are matched first, longest
    first, so they may hold ``[``, ``]``, ``:``, ``.`` and spaces
    (``C(religious)[T.2.0]:rate_marriage``).

    Raises
    ------
    ValueError
        Naming the constraint and what could not be read there.
    """
    import re

    k = len(names)
    ordered = sorted(set(names), key=len, reverse=True)
    index = {n: i for i, n in enumerate(names)}
    pattern = re.compile("|".join(
        [f"(?P<name>{'|'.join(re.escape(n) for n in ordered)})" if ordered else "(?!)",
         f"(?P<num>{_NUMBER})", r"(?P<op>[-+*/(),=])", r"(?P<ws>\s+)"]))
    tokens, pos = [], 0
    while pos < len(text):
        m = pattern.match(text, pos)
        if m is None:
            raise ValueError(f"r_matrix: cannot read the constraints {text!r} at "
                             f"{text[pos:pos + 20]!r} (character {pos}): write them in "
                             f"the coefficients' names {names}, numbers, + - * / ( ) , =")
        if m.lastgroup != "ws":
            tokens.append((m.lastgroup, m.group(0), pos))
        pos = m.end()
    tokens.append(("end", "", len(text)))
    at = [0]

    def fail(what):
        kind, tok, p = tokens[at[0]]
        got = repr(tok) if kind != "end" else "the end"
        raise ValueError(f"r_matrix: in the constraints {text!r}, {what} at character "
                         f"{p} (got {got})")

    def peek():
        return tokens[at[0]]

    def take():
        t = tokens[at[0]]
        at[0] += 1
        return t

    def atom():
        kind, tok, _ = peek()
        if kind == "name":
            take()
            c = np.zeros(k)
            c[index[tok]] = 1.0
            return c, 0.0
        if kind == "num":
            take()
            return np.zeros(k), float(tok)
        if tok == "(":
            take()
            v = expr()
            if peek()[1] != ")":
                fail("expected ')'")
            take()
            return v
        if tok in ("-", "+"):
            take()
            c, d = atom()
            return (-c, -d) if tok == "-" else (c, d)
        fail("expected a coefficient name, a number or '('")

    def product():
        c, d = atom()
        while peek()[1] in ("*", "/"):
            op = take()[1]
            c2, d2 = atom()
            if op == "*":
                if not np.any(c):
                    c, d = d * c2, d * d2
                elif not np.any(c2):
                    c, d = c * d2, d * d2
                else:
                    fail("a product of two coefficients is not linear")
            else:
                if np.any(c2) or d2 == 0:
                    fail("division only by a nonzero number")
                c, d = c / d2, d / d2
        return c, d

    def expr():
        c, d = product()
        while peek()[1] in ("+", "-"):
            op = take()[1]
            c2, d2 = product()
            c, d = (c + c2, d + d2) if op == "+" else (c - c2, d - d2)
        return c, d

    rows, values = [], []

    def constraint():
        sides = [expr()]
        while peek()[1] == "=":
            take()
            sides.append(expr())
        if len(sides) == 1:
            sides.append((np.zeros(k), 0.0))
        for (c1, d1), (c2, d2) in zip(sides[:-1], sides[1:]):
            coefs = c1 - c2
            if not np.any(coefs):
                fail("a constraint without coefficients (no name of " + str(names) + ")")
            rows.append(coefs)
            values.append(d2 - d1)

    constraint()
    while peek()[1] == ",":
        take()
        constraint()
    if peek()[0] != "end":
        fail("expected ',', '=' or the end")
    return np.array(rows, dtype=np.float64).reshape(-1, k), np.array(values, dtype=np.float64)


def _contrast(res, r_matrix):
    R, q = constraint_matrix(res, r_matrix)
    beta = res.params_vector
    used = np.any(R != 0, axis=0)  # FLIC's covariance is undefined off the intercept
    Ru = R[:, used]
    if frame_of(res)[0] is not None:
        V = quadratic_form(res, R)  # RΣRᵀ in the centred frame (.frame)
    else:
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
    p = 2.0 * norm_sf(np.abs(z))
    return ContrastResults(effect=effect, sd=sd, tvalue=z, pvalue=p, q=q, alpha=alpha,
                           distribution="norm")


def wald_test(res, r_matrix):
    """``W = (Rβ − q)ᵀ (RΣRᵀ)⁺ (Rβ − q)`` against χ²(rank(RΣRᵀ)), as statsmodels (a
    pseudo-inverse, so dependent constraints count once)."""
    R, q, effect, V = _contrast(res, r_matrix)
    d = effect - q
    W = float(d @ np.linalg.pinv(V) @ d)
    df = int(np.linalg.matrix_rank(V))
    return ContrastResults(statistic=W, pvalue=float(chi2_sf(W, df)),
                           df_denom=df, distribution="chi2")


# --------------------------------------------------------------------------- LR tests


class LRTestResults:
    """A likelihood-ratio test: ``statistic`` = 2(llf_full − llf_restricted),
    ``df_diff`` and ``pvalue`` (χ² upper tail); ``method`` says which likelihood."""

    def __init__(self, statistic, df_diff, method):
        self.statistic = float(statistic)
        self.df_diff = int(df_diff)
        self.pvalue = float(chi2_sf(self.statistic, self.df_diff))
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

    Raises
    ------
    ValueError
        For fits of different rows (other ``nobs``, y values, weights, row labels, or
        values of a column both have by name); for pairs that are not nested (with
        names: a term of ``restricted`` that ``full`` lacks; with arrays, or any
        maximum-likelihood pair: ``restricted.llf`` above ``full.llf`` beyond
        rounding); for other methods than maximum likelihood and binary Firth.

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
    _same_sample(restricted, full)
    if restricted.method == "MLE":
        named = _named(restricted) and _named(full)
        if named:
            extra = [n for n in restricted.feature_names if n not in full.feature_names]
            if extra:
                raise ValueError(
                    f"lr_test: full does not nest restricted: restricted has the terms "
                    f"{extra} that full lacks; pass a restricted model whose terms are "
                    f"among full's {list(full.feature_names)}")
        slack = 1e-8 * max(1.0, abs(full.llf))
        if restricted.llf > full.llf + slack:
            raise ValueError(
                f"lr_test: full does not nest restricted: its log-likelihood "
                f"{full.llf:.10g} is below restricted's {restricted.llf:.10g} (a nested "
                f"model cannot fit better than the model nesting it); pass the smaller "
                f"of two nested fits first, fitted on the same rows")
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


def _named(res):
    """Whether ``res``'s coefficient names are its columns' (a formula or a
    DataFrame), not the default ``const, x1, …`` of arrays."""
    return getattr(res, "design", None) is not None or bool(getattr(res, "is_labelled",
                                                                    False))


def _same_sample(restricted, full):
    """Refuse fits of different rows: the same y (classes of each row), weights and
    row labels, and equal values in the columns both have by name."""
    fr, ff = getattr(restricted, "fit_data", None), getattr(full, "fit_data", None)
    if fr is None or ff is None:  # Dask fits hold no data: nobs was compared
        return

    def refuse(what):
        raise ValueError(f"lr_test: restricted and full must be fits on the same rows "
                         f"(statsmodels' compare_lr_test assumes it); their {what} "
                         f"differ: fit both on the same data (drop the rows with missing "
                         f"values of either model's variables first)")

    if fr.codes.shape != ff.codes.shape or not np.array_equal(fr.codes, ff.codes):
        refuse("y values")
    if fr.w.shape != ff.w.shape or not np.array_equal(fr.w, ff.w):
        refuse("sample weights")

    def labels(res):
        d = getattr(res, "design", None)
        if d is not None and getattr(d, "fit_index", None) is not None:
            return list(d.fit_index)
        lab = getattr(res.fit_data, "row_labels", None)
        return None if lab is None else list(lab)

    lr, lf = labels(restricted), labels(full)
    if lr is not None and lf is not None and lr != lf:
        refuse("rows (the data's index labels)")
    if not (_named(restricted) and _named(full)):
        return
    if hasattr(fr.X, "tocsr") or hasattr(ff.X, "tocsr"):
        return
    off_r = 1 if restricted.fit_intercept else 0
    off_f = 1 if full.fit_intercept else 0
    pos_f = {n: j - off_f for j, n in enumerate(full.feature_names) if j >= off_f}
    Xr, Xf = np.asarray(fr.X), np.asarray(ff.X)
    for j, n in enumerate(restricted.feature_names[off_r:]):
        if n in pos_f and not np.allclose(Xr[:, j], Xf[:, pos_f[n]], rtol=1e-12,
                                          atol=0.0, equal_nan=True):
            refuse(f"values of the column {n!r}")


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

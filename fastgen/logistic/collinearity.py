"""The rank rule of the fits and of inference: a pivoted (in-order) Cholesky
factorisation of the weighted Gram matrix X̃ᵀWX̃ scaled to unit diagonal (or of the
Hessian at the solution, whose rank is the same while the fitted probabilities are not
saturated), and :func:`collinear_columns`, the check of a design.

Imports: ``fastgen._validation``, ``feature_labels`` and scipy.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from .._validation import check_sample_weight, check_X, is_sparse
from .feature_labels import checked_feature_names, design_column_label

__all__ = ["Collinearity", "collinear_columns", "collinearity_from_gram",
           "collinearity_in_order", "COLLINEAR_TOL", "ILL_CONDITIONED"]

#: The one rank rule of the fits and of inference: a column is collinear with the
#: earlier ones when the norm of its residual after projection on them is at most this
#: fraction of its own norm, in the metric of the matrix checked (the weighted Gram or
#: the information).  On that matrix scaled to unit diagonal (a correlation matrix)
#: this is the in-order Cholesky pivot 1 − R²_j ≤ COLLINEAR_TOL² = 1e-12: the column's
#: variance inflation 1/(1 − R²_j) ≥ 1e12, its standard error inflated a million-fold
#: and decided by the last digits of the data.
COLLINEAR_TOL = 1e-6

#: A full-rank information matrix whose unit-diagonal scaling has a condition number
#: above this makes :func:`fastgen.logistic_inference` warn, naming the columns of the
#: near-dependence: 1 − R² of about 1e-8 or less, standard errors inflated ~1e4-fold and
#: resting on the data's eighth digit (values recorded to a few digits cannot carry it).
ILL_CONDITIONED = 1e8

#: Significant digits of a combination's coefficients written in the user's columns
#: (:meth:`Collinearity.in_user_frame`): those of the rule that drops coefficients
#: below 1e-8 of the largest.
COMBINATION_DIGITS = 8


@dataclass(frozen=True)
class Collinearity:
    """The outcome of :func:`collinear_columns`.

    Design columns are numbered as features 0 … d−1, and d for the intercept.  They are
    taken in the order intercept, then features 0, 1, …; a column is *dependent* when it
    is (to ``tol``) a linear combination of the columns before it that were kept, as R's
    ``lm`` reports aliased coefficients.

    Attributes
    ----------
    rank : int
        Number of independent design columns.
    n_columns : int
        d + fit_intercept.
    dependent : tuple of int
        The dependent columns (indices as above).
    combinations : tuple of dict
        For each dependent column j, ``{i: a_i}`` with ``x̃_j ≈ Σ_i a_i x̃_i`` over kept
        columns i (coefficients below 1e-8 of the largest left out).
    feature_names : tuple of str or None
    """

    rank: int
    n_columns: int
    dependent: tuple
    combinations: tuple
    feature_names: tuple | None
    n_features: int

    @property
    def full_rank(self) -> bool:
        return not self.dependent

    def names(self, j) -> str:
        """Name of design column j ("intercept" for j = d)."""
        return design_column_label(self.feature_names, j, self.n_features)

    def in_user_frame(self, column_shift, intercept) -> Collinearity:
        """These combinations, found on centred columns x_i − m_i, written in the
        user's columns: x_j − m_j = Σ a_i (x_i − m_i) + a_0 gives
        x_j = Σ a_i x_i + (a_0 + m_j − Σ a_i m_i)·1.  ``column_shift`` holds m_i for
        every column index of this check (0 for the intercept), ``intercept`` is the
        intercept's index; None (no column centred) leaves them as they are.

        The a_i come from a factorisation in the centred frame, exact to about
        :data:`COMBINATION_DIGITS` significant digits, and the intercept's term adds
        up their errors times the offsets m_i (1 − 1e-12 times an offset of 1e6 is a
        term of 1e-6).  So the a_i are rounded to those digits first, and the
        intercept's term is kept only where it exceeds that precision of the sum it
        is made of, 10^−digits·(|m_j| + Σ|a_i m_i|): the combination then reads the
        same at every offset.  The intercept's term comes first, as in the centred
        frame's order."""
        if column_shift is None:
            return self
        combos = []
        for j, comb in zip(self.dependent, self.combinations):
            c = {i: _significant(a) for i, a in comb.items() if i != intercept}
            parts = [float(column_shift[j])] + [-a * float(column_shift[i])
                                               for i, a in c.items()]
            total = comb.get(intercept, 0.0) + sum(parts)
            size = sum(abs(v) for v in parts)
            big = max([abs(a) for a in c.values()] + [abs(float(column_shift[j]))])
            out = {}
            if abs(total) > max(10.0 ** -COMBINATION_DIGITS * size, 1e-12 * big):
                out[intercept] = total
            out.update(c)
            combos.append(out)
        return dataclasses.replace(self, combinations=tuple(combos))

    def describe(self) -> str:
        """One line per dependent column: ``'c' = 1·intercept − 1·'a' − 1·'b'``."""
        lines = []
        for j, comb in zip(self.dependent, self.combinations):
            if not comb:
                lines.append(f"{self.names(j)!r} is zero on every row")
                continue
            terms = " ".join(f"{'+' if a >= 0 else '-'} {abs(a):.4g}·{self.names(i)!r}"
                             for i, a in comb.items())
            lines.append(f"{self.names(j)!r} = {terms.lstrip('+ ')}")
        return "; ".join(lines)


def _significant(a, digits=None):
    """``a`` rounded to ``digits`` (default :data:`COMBINATION_DIGITS`) significant
    digits."""
    digits = COMBINATION_DIGITS if digits is None else digits
    if a == 0.0 or not np.isfinite(a):
        return float(a)
    return float(f"{a:.{digits}g}")


def collinearity_from_gram(G, n_features, fit_intercept, *, tol=COLLINEAR_TOL,
                           feature_names=None) -> Collinearity:
    """:class:`Collinearity` from a symmetric PSD (p, p) matrix in fastgen's layout
    (intercept last): a weighted Gram X̃ᵀWX̃ or a Hessian at the solution.

    Taken intercept first, by :func:`_in_order` (the rank rule of ``COLLINEAR_TOL``).
    """
    G = np.asarray(G, dtype=np.float64)
    d = int(n_features)
    order = ([d] if fit_intercept else []) + list(range(d))
    rank, dependent, combos = _in_order(G[np.ix_(order, order)], tol)
    return Collinearity(rank, G.shape[0], tuple(order[j] for j in dependent),
                        tuple({order[i]: a for i, a in c.items()} for c in combos),
                        feature_names, d)


def collinearity_in_order(G, labels, *, tol=COLLINEAR_TOL) -> Collinearity:
    """:class:`Collinearity` of a symmetric PSD (q, q) matrix whose columns are taken in
    their own order and named by ``labels`` (inference's information matrix, intercept
    first): the same rank rule as :func:`collinearity_from_gram`."""
    G = np.asarray(G, dtype=np.float64)
    rank, dependent, combos = _in_order(G, tol)
    q = G.shape[0]
    return Collinearity(rank, q, tuple(dependent), tuple(combos), tuple(labels), q)


def _in_order(G, tol):
    """The rank rule on a PSD matrix, columns in order: ``(rank, dependent, combos)``.

    G is scaled to unit diagonal, C = S⁻¹GS⁻¹, and factorised column by column
    (Cholesky in order); column j is dependent when its pivot ``1 − ‖l_j‖²`` (its
    1 − R² on the kept earlier columns) is ≤ tol², or its diagonal is zero; ``combos``
    gives, for each, ``{i: a_i}`` with column j ≈ Σ a_i column i in G's own units
    (coefficients below 1e-8 of the largest left out).  The plain LAPACK factorisation
    is tried first: when every pivot is above tol², nothing else is computed.
    """
    import scipy.linalg

    p = G.shape[0]
    dg = np.diag(G).copy()
    # a column is zero only when its own diagonal is: unit-free (each column is scaled
    # by its own diagonal), so a column in units of 1e-150 is as alive as one in 1e150
    live = dg >= np.finfo(np.float64).tiny
    s = np.where(live, np.sqrt(np.where(live, dg, 1.0)), 1.0)
    C = G / s[:, None] / s[None, :]
    tol2 = float(tol) ** 2
    if live.all():
        try:
            L = scipy.linalg.cholesky(C, lower=True, check_finite=False)
            if np.all(np.diag(L) ** 2 > tol2):
                return p, [], []
        except np.linalg.LinAlgError:
            pass
    kept, dependent, combos = [], [], []
    L = np.zeros((p, p))
    for j in range(p):
        if not live[j]:
            dependent.append(j)
            combos.append({})
            continue
        r = len(kept)
        lj = (scipy.linalg.solve_triangular(L[:r, :r], C[kept, j], lower=True,
                                            check_finite=False) if r else np.zeros(0))
        piv = 1.0 - float(lj @ lj)
        if piv <= tol2:
            a = (scipy.linalg.solve_triangular(L[:r, :r].T, lj, lower=False,
                                               check_finite=False) if r else np.zeros(0))
            a = a * s[j] / s[kept]  # back to the columns' own units
            big = np.abs(a).max(initial=0.0)
            combos.append({kept[i]: float(a[i]) for i in range(r)
                           if abs(a[i]) > 1e-8 * big})
            dependent.append(j)
            continue
        L[r, :r] = lj
        L[r, r] = np.sqrt(piv)
        kept.append(j)
    return len(kept), dependent, combos


def collinear_columns(X, *, fit_intercept=True, sample_weight=None, feature_names=None,
                      tol=COLLINEAR_TOL) -> Collinearity:
    r"""The columns of the design X̃ = [X, 1] that are linear combinations of others.

    Forms the weighted Gram matrix :math:`G = \tilde X^\top W \tilde X` (rows of weight
    0 drop out), scales it to unit diagonal, :math:`C = S^{-1} G S^{-1}` with
    :math:`S = \operatorname{diag}(G)^{1/2}`, and factorises C column by column in the
    order intercept, x_0, x_1, …: column j is reported when its residual after least
    squares on the kept earlier columns has relative norm ≤ ``tol``, i.e. when the
    Cholesky pivot :math:`1 - \lVert l_j\rVert^2 \le tol^2`.  An all-zero column is
    always reported.  The unpenalised logistic (or any GLM) estimate is unique exactly
    when nothing is reported; the Hessian :math:`\tilde X^\top\operatorname{diag}(w\pi(1-\pi))
    \tilde X` has the same null space while no fitted probability is 0 or 1.

    Parameters
    ----------
    X : array-like (n, d) or scipy sparse matrix
    fit_intercept : bool, default True
    sample_weight : array-like (n,), optional
    feature_names : sequence of str, optional
        Default ``x1 … xd`` (``x{j+1}`` for ``X[:, j]``).
    tol : float, default 1e-6
        Relative residual norm below which a column counts as dependent
        (``COLLINEAR_TOL``, the rule of the fits and of inference).

    Returns
    -------
    Collinearity
        ``dependent`` (indices, the intercept as d), ``combinations``, ``rank`` and
        :meth:`Collinearity.describe`.
    """
    X = check_X(X, allow_sparse=True)
    w = check_sample_weight(sample_weight, X.shape[0])
    if not isinstance(fit_intercept, (bool, np.bool_)):
        raise ValueError(f"fit_intercept must be True or False; got {fit_intercept!r}")
    if not (np.isfinite(tol) and 0 < tol < 1):
        raise ValueError(f"tol must be in (0, 1); got {tol!r}")
    names = checked_feature_names(feature_names, X.shape[1])
    # in the centred frame of the fits (offset columns would otherwise look parallel
    # to the intercept), the combinations written back in X's columns at the end
    from .centring import centred_frame

    X, shift = centred_frame(X, w, bool(fit_intercept))
    wv = w if w.shape[0] else np.ones(X.shape[0])
    if is_sparse(X):
        import scipy.sparse as sp

        Xw = sp.diags(wv) @ X
        G = np.asarray((X.T @ Xw).toarray(), dtype=np.float64)
        colsum = np.asarray(Xw.sum(axis=0), dtype=np.float64).ravel()
    else:
        Xf = np.asarray(X, dtype=np.float64)
        Xw = Xf * wv[:, None]
        G = Xf.T @ Xw
        colsum = Xw.sum(axis=0)
    if fit_intercept:
        d = X.shape[1]
        Gf = np.empty((d + 1, d + 1))
        Gf[:d, :d] = G
        Gf[:d, d] = Gf[d, :d] = colsum
        Gf[d, d] = wv.sum()
        G = Gf
    col = collinearity_from_gram(G, X.shape[1], bool(fit_intercept), tol=tol,
                                 feature_names=names)
    if shift is None:
        return col
    return col.in_user_frame(np.r_[shift, 0.0], X.shape[1])

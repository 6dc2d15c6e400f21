"""What a fit learns about the design's columns at its start: the scales the gradient
test measures them in, whether float64 holds the sums their Hessian is made of, and
which columns are identified.

The scales r_j (:func:`column_scales`) are each column's curvature-weighted
root-mean-square, so CG's residuals and the separation signals are read in the columns'
own units.  A column whose weighted squares overflow float64, or fall below its normal
range, is refused with a ``ValueError`` that names it and says to rescale
(:func:`scale_error`).  An unpenalised fit on a rank-deficient design solves on the
identified columns only (:func:`identified_columns`).

Imports: ``collinearity`` only.
"""

from __future__ import annotations

import contextlib

import numpy as np

from .collinearity import collinearity_from_gram

__all__ = ["scale_error", "ColumnScaleError", "named_columns", "check_curvature_diagonal",
           "column_scales", "identified_columns"]

_TINY = np.finfo(np.float64).tiny

#: A column whose (weighted) mean square is below this, 2^-1006 ≈ 1.5e-303 (root mean
#: square ≈ 3.8e-152), is refused as too small for float64: its squares in the Hessian,
#: once the probabilities weight them, come near the subnormal range, where they lose
#: precision (and the rank checks, relative to the intercept's entry, take the column
#: for zero).
_MIN_MEAN_SQUARE = _TINY * 2.0 ** 16


class ColumnScaleError(ValueError):
    """The ``ValueError`` of :func:`scale_error`: X's column ``column`` (0-based, as
    every message about X's values names it) is out of float64's range for the fit's
    sums.  The fits know the data frame's column names, the kernels do not:
    :meth:`named` adds the name in the parentheses after the index, as the
    validation's messages do (``column 3 ('price'; its largest |x| is 1e+160)``)."""

    def __init__(self, before, column, detail, after, name=None):
        self.before, self.column, self.detail, self.after = before, column, detail, after
        inside = [repr(name)] if name is not None else []
        inside += [detail] if detail else []
        paren = f" ({'; '.join(inside)})" if inside else ""
        super().__init__(f"{before}column {column}{paren}{after}")

    def named(self, names):
        """The same error with the column's name from ``names`` (None: as it is)."""
        if names is None or not 0 <= self.column < len(names):
            return self
        return ColumnScaleError(self.before, self.column, self.detail, self.after,
                                str(names[self.column]))


@contextlib.contextmanager
def named_columns(names):
    """Within it, a :class:`ColumnScaleError` is raised again with the column's name
    from ``names`` (the data frame's, or the model's ``feature_names``; None: as it
    is)."""
    try:
        yield
    except ColumnScaleError as exc:
        if names is None:
            raise
        raise exc.named(names) from None


def scale_error(data, j, overflow, abs_max=None, w=None):
    """The ``ValueError`` for column j of X̃ (j = d: the intercept's column of ones)
    whose weighted sums of squares overflow float64 or fall below its normal range;
    ``abs_max(j)`` (default: ``data.column_abs_max``) and the weights ``w`` (default:
    ``data.w``), where known, go into the message."""
    w = getattr(data, "w", None) if w is None else w
    wmax = float(np.max(w)) if w is not None and w.shape[0] else None
    way = "overflow" if overflow else "underflow below the smallest normal float64 " \
        f"({_TINY:.3g}) and lose their precision"
    if j >= data.d:  # the intercept's column of ones: only the weights are left
        return ValueError(
            f"sample_weight is too {'large' if overflow else 'small'} for float64: its "
            f"sums in the Hessian {way}; rescale sample_weight (e.g. divide it by its "
            f"mean)")
    big = getattr(data, "column_abs_max", None) if abs_max is None else abs_max
    m = big(j) if big is not None else None
    detail = f"its largest |x| is {m:.3g}" if m is not None else ""
    fix = "rescale the features (e.g. divide each by its standard deviation)"
    if wmax is not None and (wmax > 1.0 if overflow else wmax < 1.0):
        detail += f"{', ' if detail else ''}with sample_weight up to {wmax:.3g}"
        fix += " or sample_weight"
    return ColumnScaleError(
        f"X has values too {'large' if overflow else 'small'} for float64 products: in ",
        int(j), detail, f" the weighted sums of x² that make up the Hessian {way}; {fix}")


def check_curvature_diagonal(C, data, abs_max=None, w=None):
    """Raise :func:`scale_error` if the unpenalised curvature diagonal ``C`` (p,) holds a
    non-finite entry."""
    if not np.all(np.isfinite(C)):
        raise scale_error(data, int(np.flatnonzero(~np.isfinite(C))[0]), True, abs_max, w)


def column_scales(C, c0, data, start, abs_max=None, w=None, sum_weights=None):
    """The column scales r_j = √(C_jj / c0) of the gradient test, from the diagonal of a
    curvature Gram C = X̃ᵀ diag(c) X̃ at the start (c ≥ 0 per row) and c0 = Σ c_i (its
    intercept entry), so that r_j is column j's c-weighted root-mean-square: 1 for the
    intercept, about 1 for a standardised feature, c·r_j when the column is multiplied
    by c.  A column of zeros gets r_j = 1.

    Checks that float64 holds the fit's sums at the start (``start``, the
    :class:`Evaluation` there): a non-finite objective, gradient or C_jj, or, for a
    column that is not zero, a C_jj below the normal range or a mean square C_jj / c0
    below ``_MIN_MEAN_SQUARE``, raises :func:`scale_error` (``abs_max``, ``w``: see
    there; a column with C_jj = 0 counts as zero unless ``abs_max`` says otherwise).
    With ``sum_weights`` (Σw), also Σw·C_jj/c0, the design Gram's diagonal Σ w x_j²
    where the start's probabilities are the same on every row, must be finite: a later
    Hessian, or the collinearity check's Gram, may weight the rows more than the start.
    """
    p = C.shape[0]
    g = np.asarray(start.grad).reshape(-1, p)
    check_curvature_diagonal(C, data, abs_max, w)
    if not np.all(np.isfinite(g)):
        j = int(np.flatnonzero(~np.isfinite(g).all(axis=0))[0])
        raise scale_error(data, j, True, abs_max, w)
    if not np.isfinite(start.objective):
        raise ValueError("the objective at the starting point overflows float64: "
                         "rescale the features, or start from smaller coefficients")
    if not (c0 > 0.0 and np.isfinite(c0)):
        raise scale_error(data, data.d, not c0 > 0.0, abs_max, w)
    with np.errstate(over="ignore", under="ignore"):
        ms = C / c0  # the columns' weighted mean squares
    big = getattr(data, "column_abs_max", None) if abs_max is None else abs_max
    for j in np.flatnonzero((C < _TINY) | (ms < _MIN_MEAN_SQUARE)):
        if C[j] > 0.0 or (j < data.d and big is not None and big(int(j)) > 0.0):
            raise scale_error(data, int(j), False, abs_max, w)
    with np.errstate(over="ignore"):
        r = np.sqrt(ms)
        big_sums = ms if sum_weights is None else ms * sum_weights
    if not np.all(np.isfinite(big_sums)):
        j = int(np.flatnonzero(~np.isfinite(big_sums))[0])
        raise scale_error(data, j, True, abs_max, w)
    return np.where(C > 0.0, r, 1.0)


def identified_columns(G, data, l2):
    """The design columns the solves use: None (all of them) when ``l2 > 0`` or the
    design Gram ``G`` (p × p, X̃ᵀWX̃ up to a factor) has full rank by the rank rule of
    :data:`~fastgen.logistic.collinearity.COLLINEAR_TOL`; else the indices of the
    columns kept when they are taken in the order intercept, x_0, x_1, … (the order of
    the collinearity warning).  A dependent column's coefficient keeps its start: the
    estimate is not unique along it, and a solve there would chase rounding."""
    if l2 != 0.0 or G is None:
        return None
    d = data.d
    col = collinearity_from_gram(G, d, data.fit_intercept)
    if col.full_rank:
        return None
    return np.setdiff1d(np.arange(G.shape[0]), np.asarray(col.dependent, dtype=np.int64))

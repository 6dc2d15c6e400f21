r"""Centred coordinates: the frame every logistic fit and inference works in.

With an intercept, the model η = Σ_j β_j x_j + b is the same model as
η = Σ_j β_j (x_j − m_j) + b_c with b_c = b + Σ_j m_j β_j, for any shift m.  The slopes
are the same numbers; only the intercept moves.  In the user's coordinates a column
whose values sit far from zero compared with their spread (a calendar year, a price, a
postcode) is nearly parallel to the intercept's column of ones: the Hessian's
condition number grows like (m_j / s_j)², its entries lose that many digits to
cancellation, and a stopping test or a rank test taken there answers for the offset,
not for the data.  In centred coordinates the same problem is as well conditioned as
the columns' spreads allow, so the answer, the stopping test and every warning no
longer depend on the offsets.

The rule (:func:`column_shift`, read on a fixed subsample of rows for dense X): a
column is centred on its weighted mean m_j when |m_j| exceeds its weighted standard
deviation s_j (a constant column included: it
becomes zero, so a ridge penalty alone pins its coefficient, at 0, exactly where the
penalised optimum in the user's coordinates puts it).  A column with |m_j| ≤ s_j is
left as it is: centring could change the conditioning by at most a factor of two
there, and its results keep their bits.  Without an intercept nothing is centred
(the shift would change the model).

The fit runs on the centred sample; :func:`to_user` maps the coefficients back exactly
(b = b_c − Σ_j m_j β_j, the one sum whose rounding is inherent in the user's
parametrisation), :func:`to_centred` maps a start into the frame, and
:func:`covariance_to_user` maps a covariance of (const, β) to the user's intercept.

A dense X is centred on a float64 copy (only when some column needs it), a CSR X on a
CSR copy whose centred columns are stored densely (a sparse column is centred only
when most of its rows are non-zero: |m| > s needs that).

Imports: ``fastgen._validation`` only.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .._validation import is_sparse

__all__ = ["column_sums", "shift_from_sums", "column_shift", "centred_frame", "centre",
           "to_user", "to_centred", "centred_params",
           "covariance_to_user"]

#: Rows per chunk of the dense moment pass (bounds its float64 temporaries).
_CHUNK_ROWS = 8192

#: Rows of the fixed subsample on which :func:`column_shift` reads its rule.
_RULE_ROWS = 4096


def column_sums(X, w):
    """``(Σw, Σ_i w_i x_i, Σ_i w_i x_i²)`` over the rows of X (dense or CSR; ``w``
    empty or None: unit weights), float64: the sums :func:`shift_from_sums` decides
    from, which add up over blocks of rows.  Overflow gives inf (callers hold the
    floating-point warnings)."""
    n, d = X.shape
    wv = w if w is not None and w.shape[0] else None
    sw = float(wv.sum()) if wv is not None else float(n)
    if is_sparse(X):
        X = sp.csr_matrix(X, dtype=np.float64)
        Xw = X if wv is None else X.multiply(wv[:, None]).tocsr()
        s1 = np.asarray(Xw.sum(axis=0), dtype=np.float64).ravel()
        sq = X.copy()
        sq.data **= 2
        if wv is not None:
            sq = sq.multiply(wv[:, None])
        s2 = np.asarray(sq.sum(axis=0), dtype=np.float64).ravel()
        return sw, s1, s2
    s1 = np.zeros(d)
    s2 = np.zeros(d)
    for r0 in range(0, n, _CHUNK_ROWS):
        B = np.asarray(X[r0:r0 + _CHUNK_ROWS], dtype=np.float64)
        if wv is None:
            s1 += B.sum(axis=0)
            s2 += np.einsum("ij,ij->j", B, B)
        else:
            wc = wv[r0:r0 + _CHUNK_ROWS]
            s1 += wc @ B
            s2 += wc @ (B * B)
    return sw, s1, s2


def shift_from_sums(sw, s1, s2):
    """The shift of :func:`column_shift` from the sums of :func:`column_sums`: the
    weighted mean m_j of every column with m_j² > s_j², i.e. 2·m_j² > E_w[x_j²] (its mean
    exceeds its standard deviation), 0 for the others; None when no column qualifies."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        mean, msq = s1 / sw, s2 / sw
        need = np.isfinite(mean) & np.isfinite(msq) & (2.0 * mean * mean > msq)
    if not np.any(need):
        return None
    return np.where(need, mean, 0.0)


def column_shift(X, w, fit_intercept):
    """The shift m (d,) of the centred frame, or None when no column needs one (see
    :func:`shift_from_sums`); None without an intercept and for an empty X.

    For dense X the rule is read on a fixed subsample (every k-th row, at most
    :data:`_RULE_ROWS` rows: a pass over X for a choice that only affects the
    conditioning would cost as much as a matrix-vector product), and the shift of each
    column it picks is that column's weighted mean over every row."""
    if not fit_intercept or X.shape[0] == 0 or X.shape[1] == 0:
        return None
    with np.errstate(over="ignore", invalid="ignore"):
        if is_sparse(X):
            return shift_from_sums(*column_sums(X, w))
        n = X.shape[0]
        rows = slice(0, n, max(1, -(-n // _RULE_ROWS)))
        wv = w[rows] if w.shape[0] else w
        pick = shift_from_sums(*column_sums(X[rows], wv))
        if pick is None:
            return None
        cols = np.flatnonzero(pick != 0.0)
        Xc = np.asarray(X[:, cols], dtype=np.float64)
        if w.shape[0]:
            mean = (w @ Xc) / float(w.sum())
        else:
            mean = Xc.sum(axis=0) / float(n)
        shift = np.zeros(X.shape[1])
        shift[cols] = mean
        return shift if np.all(np.isfinite(shift)) else None


def centred_frame(X, w, fit_intercept):
    """``(Xc, shift)``: X in the centred frame (:func:`column_shift`, :func:`centre`),
    or X itself and None where no column needs centring."""
    shift = column_shift(X, w, fit_intercept)
    return (X, None) if shift is None else (centre(X, shift), shift)


def centre(X, shift):
    """X − shift as a new array (dense: float64 C order; CSR: the shifted columns stored
    densely, the others as they were).  X itself is never modified."""
    if not is_sparse(X):
        out = np.array(X, dtype=np.float64, order="C")
        out -= shift
        return out
    X = sp.csr_matrix(X)
    n, d = X.shape
    cols = np.flatnonzero(shift != 0.0)
    dense = np.asarray(X[:, cols].toarray(), dtype=np.float64) - shift[cols]
    keep = sp.csr_matrix(X, dtype=np.float64, copy=True)
    mask = np.isin(keep.indices, cols)
    keep.data[mask] = 0.0
    keep.eliminate_zeros()
    rows = np.repeat(np.arange(n), cols.shape[0])
    block = sp.csr_matrix((dense.ravel(), (rows, np.tile(cols, n))), shape=(n, d))
    out = (keep + block).tocsr()
    out.sort_indices()
    return out


def to_user(coef, intercept, shift):
    """Intercepts of the user's coordinates from the centred ones: b = b_c − coef·m,
    for coef (K', d) and intercept (K',)."""
    if shift is None:
        return intercept
    coef = np.asarray(coef, dtype=np.float64)
    return np.asarray(intercept, dtype=np.float64) - coef @ shift


def to_centred(coef, intercept, shift):
    """Intercepts of the centred frame from the user's: b_c = b + coef·m."""
    if shift is None:
        return intercept
    coef = np.asarray(coef, dtype=np.float64)
    return np.asarray(intercept, dtype=np.float64) + coef @ shift


def centred_params(model, shift):
    """``model`` (a :class:`~fastgen.logistic.params.LogisticParams`) with its intercepts
    moved into the centred frame (:func:`to_centred`), or ``model`` itself when
    ``shift`` is None.  The coefficients are float64, as the intercepts."""
    if shift is None:
        return model
    import dataclasses

    coef = np.asarray(model.coef, dtype=np.float64)
    return dataclasses.replace(model, coef=coef,
                               intercept=to_centred(coef, model.intercept, shift))


def covariance_to_user(cov, shift, m, p):
    """The covariance (q, q), q = m·p, of statsmodels' layout (per equation: the
    constant first, then the d slopes) mapped from the centred frame to the user's:
    T·cov·Tᵀ with b = b_c − Σ_j m_j β_j in every equation."""
    q = m * p
    T = np.eye(q)
    for k in range(m):
        T[k * p, k * p + 1:(k + 1) * p] = -shift
    return T @ cov @ T.T

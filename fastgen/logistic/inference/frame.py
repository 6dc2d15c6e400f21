r"""The covariance in the centred frame, for every quadratic form of the inference.

With a column far from zero compared with its spread (offset m_j, spread s_j), the
user's intercept b = b_c − Σ_j m_j β_j has a variance about (m_j/s_j)² times the
others, nearly cancelled by its covariances with the slopes: a form aᵀΣa through the
intercept (a predicted probability's variance at a row x̃ = (1, x), a marginal
effect's, a contrast's) taken in the user's coordinates loses those digits, and turns
negative (a NaN standard error) once (m_j/s_j)² nears 1/ε.  The same form is aᵀTΣ_cTᵀa
with Σ_c the covariance of the centred frame and T the exact map b = b_c − Σ_j m_j β_j,
and Tᵀa = a with the slopes' entries a_j − a_const·m_j (for a row, x_j − m_j): formed so,
it keeps every digit the data have, and it rounds only where the user's coordinates
themselves do (an ulp of the offset over the spread).

:func:`attach` records (shift, Σ_c) on a result whose ``cov_params`` is TΣ_cTᵀ;
:func:`frame_of` hands the pair back, as long as ``cov_params`` is the very array it was
recorded with (else, or with no record, the user's covariance with no shift).

Imports: numpy only.
"""

from __future__ import annotations

import dataclasses

import numpy as np

__all__ = ["CentredCovariance", "attach", "frame_of", "restricted", "to_frame",
           "quadratic_form"]

#: The key of :class:`CentredCovariance` in a result's ``extra``.
KEY = "centred_cov"


@dataclasses.dataclass(frozen=True, eq=False)
class CentredCovariance:
    """``cov`` (q, q): the covariance of the centred frame (statsmodels' layout, per
    equation the constant first); ``shift`` (d,): the columns' shift; ``user``: the
    ``cov_params`` array it maps to (the record holds for that array only)."""

    shift: np.ndarray
    cov: np.ndarray
    user: np.ndarray


def attach(result, shift, cov_centred):
    """``result`` (``cov_params`` already in the user's frame) with the record of its
    centred covariance in ``extra``."""
    rec = CentredCovariance(np.asarray(shift, dtype=np.float64),
                            np.asarray(cov_centred, dtype=np.float64), result.cov_params)
    return dataclasses.replace(result, extra={**result.extra, KEY: rec})


def frame_of(res):
    """``(shift, cov)``: the centred frame's shift and covariance when ``res`` records
    them for its ``cov_params``, else ``(None, cov_params)``."""
    rec = res.extra.get(KEY) if isinstance(res.extra, dict) else None
    if rec is not None and rec.user is res.cov_params and res.fit_intercept:
        return rec.shift, rec.cov
    return None, np.asarray(res.cov_params, dtype=np.float64)


def restricted(res, keep, shift_len):
    """``(shift, cov)`` of the record of ``res`` restricted to the coefficients ``keep``
    (one equation, the constant first) and the first ``shift_len`` columns, for a
    result whose ``cov_params`` becomes ``cov_params[keep, keep]`` (FLAC's drops the
    augmentation's indicator); None when ``res`` has no record or a dropped column was
    shifted (the restriction is then no longer the same exact map)."""
    rec = res.extra.get(KEY) if isinstance(res.extra, dict) else None
    if rec is None or rec.user is not res.cov_params or np.any(rec.shift[shift_len:]):
        return None
    return rec.shift[:shift_len].copy(), rec.cov[np.ix_(keep, keep)].copy()


def to_frame(A, shift, m, p):
    """Rows ``A`` (r, m·p) of linear functionals of the user's coefficients (per
    equation the constant first) as functionals of the centred frame's: ``A·T``, the
    slopes' entries less the constant's times the shift.  ``shift`` None: A itself."""
    if shift is None:
        return A
    A = np.array(A, dtype=np.float64)
    for k in range(m):
        A[:, k * p + 1:(k + 1) * p] -= A[:, k * p:k * p + 1] * shift
    return A


def quadratic_form(res, A):
    """``A Σ Aᵀ`` (r, r) for rows A (r, q) of functionals of ``res.params_vector``,
    formed in the centred frame when ``res`` records one."""
    shift, cov = frame_of(res)
    q = cov.shape[0]
    p = len(res.feature_names)
    B = to_frame(A, shift, q // p, p)
    return B @ cov @ B.T

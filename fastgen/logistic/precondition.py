"""The block-Jacobi preconditioner of multinomial Newton-CG: one factor per class of
the Hessian's diagonal block, read on a fixed row sample
(:meth:`fastgen.logistic.objectives.MultinomialObjective.block_preconditioner` chooses
the rows and when it applies), and its application in the centred frame."""

from __future__ import annotations

import numpy as np
import scipy.linalg

from .._runtime import blas_single_thread

__all__ = ["unit_diagonal", "block_factors", "apply_blocks"]


def unit_diagonal(diag):
    """√diag where positive, else 1: the scaling to a unit diagonal."""
    return np.sqrt(np.where(diag > 0.0, diag, 1.0))


def block_factors(Xs, ws, Ps, pen):
    """``[(c_k, d_k)]``: the Cholesky factor of each class's block
    X_sᵀ diag(w P_k(1 − P_k)) X_s + diag(pen), scaled to a unit diagonal (d_k; jitter
    1e-10 there), for the sample rows Xs (weights ws, probabilities Ps (n_s, K)); None
    where a block does not factorise."""
    factors = []
    with blas_single_thread():
        for k in range(Ps.shape[1]):
            c = ws * Ps[:, k] * (1.0 - Ps[:, k])
            A = (Xs.T * c) @ Xs
            A[np.diag_indices_from(A)] += pen
            d = unit_diagonal(np.diag(A).copy())
            A /= d[:, None]
            A /= d[None, :]
            A[np.diag_indices_from(A)] += 1e-10
            try:
                factors.append((scipy.linalg.cho_factor(A, lower=True,
                                                        check_finite=False), d))
            except (np.linalg.LinAlgError, ValueError):
                return None
    return factors


def apply_blocks(block, R, kept):
    """M⁻¹R in the centred frame: C·M⁻¹·C (C centres over the classes), symmetric and
    definite on centred R, on the identified columns ``kept`` (zero elsewhere)."""
    Rc = (R - R.mean(axis=0))[:, kept]
    Z = np.zeros_like(R)
    for k, (c, d) in enumerate(block):
        Z[k, kept] = scipy.linalg.cho_solve(c, Rc[k] / d, check_finite=False) / d
    return Z - Z.mean(axis=0)

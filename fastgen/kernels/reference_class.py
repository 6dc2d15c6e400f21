"""Probabilities in the reference-class layout, shared by the inference and Firth
kernels (inline helpers).

Reference-class parametrisation (statsmodels' MNLogit, and binary as its m = 1 case):
η_ik = x̃_iᵀB_k for the m non-reference classes, η_i0 = 0 and
``P_ik = exp(η_ik) / (1 + Σ_l exp(η_il))``.  Binary: m = 1 and P_i1 = σ(η_i).
"""

import numpy as np

from ._jit import jit
from .special import exp_nonpos

__all__ = ["sigmoid_pair", "reference_probabilities"]


@jit(inline="always")
def sigmoid_pair(e):
    """``(σ(e), σ(−e), a)`` from one exponential ``a = e^{−|e|} ≤ 1``.

    To the bit the values of ``expit(e)`` and ``expit(−e)``, which take one exponential
    each; ``softplus(±e)`` is ``max(±e, 0) + log1p(a)``, again to the bit.
    """
    a = exp_nonpos(-abs(e))
    big = 1.0 / (1.0 + a)
    small = a / (1.0 + a)
    if e >= 0.0:
        return big, small, a
    return small, big, a


@jit(inline="always")
def reference_probabilities(eta, y, out_p, out_q):
    """Probabilities of the m non-reference classes from η (m,), and the log-likelihood.

    ``out_p[k] = P_k`` and ``out_q[k] = 1 − P_k`` computed as the sum of the other
    classes' probabilities (no cancellation when P_k → 1).  Returns log P_y (y = 0 is the
    reference class).
    """
    m = eta.shape[0]
    if m == 1:
        e = eta[0]
        out_p[0], out_q[0], a = sigmoid_pair(e)
        lg = np.log1p(a)
        if y == 1:
            return -((-e if e < 0.0 else 0.0) + lg)  # −softplus(−e)
        return -((e if e > 0.0 else 0.0) + lg)  # −softplus(e)
    # shifted by mx = max(0, max_k η_k): every exponent is ≤ 0 (exp_nonpos, no libm
    # call), tot ∈ [1, m + 1], and each probability is one division, not one more
    # exponential of η_k − logsumexp
    mx = 0.0
    for k in range(m):
        if eta[k] > mx:
            mx = eta[k]
    e0 = exp_nonpos(-mx)
    tot = e0
    for k in range(m):
        ek = exp_nonpos(eta[k] - mx)
        out_p[k] = ek
        tot += ek
    lse = mx + np.log(tot)
    inv = 1.0 / tot
    p0 = e0 * inv
    for k in range(m):
        out_p[k] *= inv
    for k in range(m):
        q = p0
        for l in range(m):
            if l != k:
                q += out_p[l]
        out_q[k] = q
    if y == 0:
        return -lse
    return eta[y - 1] - lse


"""The linear solves of a Newton step: Cholesky of the Hessian scaled to a unit
diagonal, and preconditioned conjugate gradients on Hessian-vector products.

Both are unit-free: the Cholesky factor is taken of D⁻¹HD⁻¹ (D² = diag H), so whether
it factorises and how much jitter it takes do not depend on the units of the columns;
CG measures its residuals in the columns' own units (``scale``).  The objectives
(``objectives.py``) call them for the Newton direction, and the chord certificate
solves again with a kept factor (:func:`factor_solve`).

Imports: numpy and scipy only.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

__all__ = ["cholesky_factor", "factor_solve", "cholesky_solve", "pcg"]


def cholesky_factor(H, rhs, what):
    """``(factor, x)``: x solving H x = rhs by the Cholesky factor of H scaled to a unit
    diagonal, D⁻¹HD⁻¹ (D² = diag H), with jitter 1e-10·I (then ×100) added to the
    scaled matrix where the factorisation fails or x is not finite; ``factor`` =
    ``(c, D, jitter)`` (``c`` scipy's ``cho_factor``) solves again by
    :func:`factor_solve`.

    The scaled matrix, hence whether it factorises and how much jitter it takes, does
    not depend on the units of the columns (a zero diagonal entry keeps scale 1)."""
    q = H.shape[0]
    dg = np.diag(H)
    D = np.sqrt(np.where((dg > 0.0) & np.isfinite(dg), dg, 1.0))
    Hs = H / D[:, None] / D[None, :]
    jitter = 0.0
    for _ in range(6):
        try:
            A = Hs if jitter == 0.0 else Hs + jitter * np.eye(q)
            factor = (scipy.linalg.cho_factor(A, lower=True, check_finite=False), D,
                      jitter)
            x = factor_solve(factor, rhs)
            if np.all(np.isfinite(x)):
                return factor, x
        except np.linalg.LinAlgError:
            pass
        jitter = 1e-10 if jitter == 0.0 else jitter * 100.0
    raise np.linalg.LinAlgError(
        f"the {what} is singular even with jitter {jitter:.3g} (relative to its "
        f"diagonal): the features are (nearly) collinear or constant; pass l2 > 0"
    )


def factor_solve(factor, rhs):
    """x with H x = rhs, from the ``factor`` of H that :func:`cholesky_factor` gave."""
    c, D, _ = factor
    return scipy.linalg.cho_solve(c, rhs / D, check_finite=False) / D


def cholesky_solve(H, rhs, what):
    """x solving H x = rhs (see :func:`cholesky_factor`)."""
    return cholesky_factor(H, rhs, what)[1]


def pcg(hessp, precond, g, rtol, maxiter, atol=0.0, scale=1.0, x0=None):
    """Preconditioned CG for H x = −g.  Returns (x, ½xᵀHx, number of products).

    Stops when ‖r/scale‖ ≤ rtol·‖g/scale‖ or max|r/scale| ≤ ``atol``, after ``maxiter``
    products, or on non-positive curvature; falls back to the preconditioned
    steepest-descent step if no progress was made.  ``scale`` (broadcastable to g, the
    gradient test's column scales) makes both tests unit-free.  ``x0``: the start (an
    earlier, looser solve of the same system; one more product for its residual).
    """
    gnorm = float(np.linalg.norm(g / scale))
    nprod = 0
    if x0 is None:
        x = np.zeros_like(g)
        r = -g
    else:
        x = np.array(x0, dtype=np.float64)
        r = -g - hessp(x)
        nprod += 1
    if x0 is not None:
        rs = r / scale
        if np.linalg.norm(rs) <= rtol * gnorm or float(np.max(np.abs(rs))) <= atol:
            maxiter = 0  # the start is already that accurate
    z = precond(r)
    dirn = z.copy()
    rz = float(np.vdot(r, z))
    for _ in range(maxiter):
        Hd = hessp(dirn)
        nprod += 1
        dHd = float(np.vdot(dirn, Hd))
        if not dHd > 0.0:
            break
        alpha = rz / dHd
        x += alpha * dirn
        r -= alpha * Hd
        rs = r / scale
        if np.linalg.norm(rs) <= rtol * gnorm or float(np.max(np.abs(rs))) <= atol:
            break
        z = precond(r)
        rz_new = float(np.vdot(r, z))
        dirn *= rz_new / rz
        dirn += z
        rz = rz_new
    fallback = nprod == 0 or not np.any(x)
    if fallback:
        x = precond(-g)  # preconditioned steepest descent as a fallback
    if x0 is not None and not fallback:
        # from a start, the quadratic model's decrease −(gᵀx + ½xᵀHx) = ½(−gᵀx + rᵀx)
        # (Hx = −g − r): a lower bound of ½gᵀH⁻¹g for any x; from zero, rᵀx = 0
        dec = 0.5 * float(-np.vdot(g, x) + np.vdot(r, x))
    else:
        # Hx = −g − r, so ½xᵀHx = ½(−gᵀx − rᵀx)
        dec = 0.5 * float(-np.vdot(g, x) - np.vdot(r, x))
    return x, max(dec, 0.0), nprod
    # Hx = −g − r, so ½xᵀHx = ½(−gᵀx − rᵀx)
    dec = 0.5 * float(-np.vdot(g, x) - np.vdot(r, x)) if r is not None else \
        0.5 * float(-np.vdot(g, x) - np.vdot(-g, x))
    return x, max(dec, 0.0), nprod

"""The ridge estimate of logistic regression by the fit's own steps, for the starting
points of the penalised-likelihood (Firth) fits, which ``fit_logistic`` dispatches to
and so cannot call back.
"""

from __future__ import annotations

import numpy as np

from .._validation import check_X
from .data import InMemoryData
from .newton import newton_solve
from .objectives import make_objective

__all__ = ["ridge_fit"]


def ridge_fit(X, codes, w, fit_intercept, l2, tol=1e-8, with_converged=False):
    """``fit_logistic(X, codes, l2=l2)``'s coefficients, intercept last ((p,) binary,
    (K, p) centred otherwise), from the same steps (the prior start, the objective,
    :func:`~fastgen.logistic.newton.newton_solve`), without going through the public
    function (which dispatches Firth fits here); ``tol`` as fit_logistic's.  With
    ``with_converged``, ``(B, converged)``."""
    X = check_X(X, allow_sparse=True)
    K = int(codes.max()) + 1
    codes = np.ascontiguousarray(codes, dtype=np.int32)
    data = InMemoryData(X, codes, w, fit_intercept)
    counts = np.bincount(codes, weights=w if w.shape[0] else None, minlength=K)
    B0 = np.zeros((1 if K == 2 else K, data.p))
    if fit_intercept:
        pri = np.maximum(counts / counts.sum(), 1e-12)
        if K == 2:
            B0[0, data.d] = np.log(pri[1]) - np.log(pri[0])
        else:
            B0[:, data.d] = np.log(pri) - np.log(pri).mean()
    obj = make_objective(data, l2, K)
    sw = float(w.sum()) if w.shape[0] else float(X.shape[0])
    res = newton_solve(obj, B0[0] if K == 2 else B0, max_iter=100, tol=tol,
                       sum_weights=sw, l2=l2, mean_weight=sw / max(X.shape[0], 1))
    B = np.array(res.beta, dtype=np.float64)
    if K > 2:
        B -= B.mean(axis=0)
    return (B, bool(res.converged)) if with_converged else B

"""Plain-numpy oracles for logistic regression: loss, gradient and Hessian.

Straight transcriptions of the formulas, no fusion and no blocking; slow, for tests.
Parameters are laid out as in the kernels: ``beta = [coef, intercept]`` (binary, length
p = d + fit_intercept) and ``B`` of shape (K, p) (multinomial, row k = class k).
"""

import numpy as np
from scipy.special import expit, logsumexp


def design(X, fit_intercept):
    X = np.asarray(X.todense() if hasattr(X, "todense") else X, dtype=np.float64)
    if fit_intercept:
        return np.hstack([X, np.ones((X.shape[0], 1))])
    return X


def _weights(w, n):
    return np.ones(n) if w is None or len(w) == 0 else np.asarray(w, dtype=np.float64)


def _pen(p, fit_intercept):
    pen = np.ones(p)
    if fit_intercept:
        pen[-1] = 0.0
    return pen


def binary_objective(X, y, beta, *, l2=0.0, w=None, fit_intercept=True):
    """f = Σ w [log(1 + e^η) − y η] + l2/2 ‖coef‖², its gradient and Hessian."""
    Xt = design(X, fit_intercept)
    w = _weights(w, Xt.shape[0])
    y = np.asarray(y, dtype=np.float64)
    eta = Xt @ beta
    pi = expit(eta)
    pen = _pen(Xt.shape[1], fit_intercept)
    f = np.sum(w * (np.logaddexp(0.0, eta) - y * eta)) + 0.5 * l2 * np.sum(pen * beta**2)
    g = Xt.T @ (w * (pi - y)) + l2 * pen * beta
    H = Xt.T @ ((w * pi * (1 - pi))[:, None] * Xt) + np.diag(l2 * pen)
    return f, g, H


def multinomial_objective(X, y, B, *, l2=0.0, w=None, fit_intercept=True):
    """f = Σ w [logsumexp(η) − η_y] + l2/2 ‖coef‖², gradient (K, p), Hessian (Kp, Kp)."""
    Xt = design(X, fit_intercept)
    n, p = Xt.shape
    K = B.shape[0]
    w = _weights(w, n)
    eta = Xt @ B.T
    lse = logsumexp(eta, axis=1)
    P = np.exp(eta - lse[:, None])
    Y = np.zeros((n, K))
    Y[np.arange(n), y] = 1.0
    pen = _pen(p, fit_intercept)
    f = np.sum(w * (lse - eta[np.arange(n), y])) + 0.5 * l2 * np.sum(pen * B**2)
    G = (w[:, None] * (P - Y)).T @ Xt + l2 * pen * B
    H = np.zeros((K * p, K * p))
    for k in range(K):
        for m in range(K):
            c = w * P[:, k] * ((k == m) - P[:, m])
            H[k * p:(k + 1) * p, m * p:(m + 1) * p] = Xt.T @ (c[:, None] * Xt)
    H += np.diag(np.tile(l2 * pen, K))
    return f, G, H


def finite_difference_hessian(grad, x, h=1e-6):
    """Central differences of a gradient function, (q, q)."""
    x = np.asarray(x, dtype=np.float64).ravel()
    q = x.size
    H = np.empty((q, q))
    for j in range(q):
        e = np.zeros(q)
        e[j] = h
        H[:, j] = (np.ravel(grad(x + e)) - np.ravel(grad(x - e))) / (2 * h)
    return H

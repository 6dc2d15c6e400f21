"""A plain-numpy Newton oracle for unpenalised logistic regression, accumulated in long
double on columns centred in long double, so that it resolves data far from the origin
(column offsets up to 1e8) as well as float64 holds the data themselves.

Independent of fastgen: no kernel, no centring rule, no stopping rule of its own beyond
"the step no longer changes anything".
"""

import numpy as np
from scipy.special import expit, softmax

LD = np.longdouble


def _dense(X):
    return np.asarray(X.toarray() if hasattr(X, "toarray") else X, dtype=np.float64)


def binary_mle(X, y, w=None, iters=80):
    """(coef (d,), intercept, log-likelihood) of the binary MLE, by Newton steps whose
    gradient and Hessian are summed in long double on long-double-centred columns."""
    X = _dense(X)
    n, d = X.shape
    w = np.ones(n) if w is None else np.asarray(w, dtype=np.float64)
    Xl = X.astype(LD)
    m = (w.astype(LD) @ Xl) / w.astype(LD).sum()
    Z = np.hstack([Xl - m, np.ones((n, 1), dtype=LD)])
    beta = np.zeros(d + 1, dtype=LD)
    yl = np.asarray(y, dtype=LD)
    for _ in range(iters):
        eta = Z @ beta
        p = expit(eta.astype(np.float64)).astype(LD)
        g = Z.T @ (w * (yl - p))
        H = (Z * (w * p * (1 - p))[:, None]).T @ Z
        step = np.linalg.solve(H.astype(np.float64), g.astype(np.float64)).astype(LD)
        beta = beta + step
        if np.max(np.abs(step.astype(np.float64))) < 1e-15 * (1 + np.max(np.abs(beta))):
            break
    coef = beta[:d]
    icpt = beta[d] - coef @ m
    eta = (Z @ beta).astype(np.float64)
    ll = float(np.sum(w * (np.asarray(y) * eta - np.logaddexp(0.0, eta))))
    return coef.astype(np.float64), float(icpt), ll


def binary_score(X, y, coef, intercept, w=None):
    """The score Σ w (y − π) x̃ (intercept last) at (coef, intercept), in long double on
    long-double-centred columns (then moved to the user's coordinates)."""
    X = _dense(X)
    n, d = X.shape
    w = np.ones(n) if w is None else np.asarray(w, dtype=np.float64)
    Xl = X.astype(LD)
    m = Xl.mean(axis=0)
    coef = np.asarray(coef, dtype=np.float64).reshape(-1).astype(LD)
    bc = LD(float(np.asarray(intercept).reshape(-1)[0])) + coef @ m
    eta = (Xl - m) @ coef + bc
    r = w * (np.asarray(y, dtype=LD) - expit(eta.astype(np.float64)).astype(LD))
    return np.r_[(Xl.T @ r).astype(np.float64), float(r.sum())]


def multinomial_probabilities(X, coef, intercept):
    """Softmax probabilities (n, K) of (coef (K, d), intercept (K,)) on X."""
    X = _dense(X)
    return softmax(X @ np.asarray(coef, dtype=np.float64).T
                   + np.asarray(intercept, dtype=np.float64), axis=1)

"""Plain-numpy oracles for the naive Bayes models: each formula transcribed directly,
on dense float64 data, with loops over classes (slow, obviously right)."""

import numpy as np


def _weights(n, w):
    return np.ones(n) if w is None else np.asarray(w, dtype=np.float64)


def _log_prior(count, prior=None, fit_prior=True):
    K = count.shape[0]
    with np.errstate(divide="ignore"):
        if prior is not None:
            return np.log(np.asarray(prior, dtype=np.float64))
        if fit_prior:
            return np.log(count / count.sum())
    return np.full(K, -np.log(K))


def gaussian_nb(X, codes, K, w=None, var_smoothing=1e-9, priors=None):
    """Two-pass weighted means and variances per class, ε from the unweighted
    per-feature variance of all rows."""
    X = np.asarray(X, dtype=np.float64)
    w = _weights(X.shape[0], w)
    count = np.array([w[codes == k].sum() for k in range(K)])
    means = np.array([np.average(X[codes == k], axis=0, weights=w[codes == k])
                      for k in range(K)])
    var = np.array([np.average((X[codes == k] - means[k]) ** 2, axis=0,
                               weights=w[codes == k]) for k in range(K)])
    eps = var_smoothing * np.max(np.var(X, axis=0))
    return {"class_count": count, "means": means, "variances": var + eps, "epsilon": eps,
            "class_log_prior": _log_prior(count, priors)}


def gaussian_jll(p, X):
    X = np.asarray(X, dtype=np.float64)
    out = np.empty((X.shape[0], p["means"].shape[0]))
    for k in range(out.shape[1]):
        var = p["variances"][k]
        out[:, k] = (p["class_log_prior"][k] - 0.5 * np.sum(np.log(2 * np.pi * var))
                     - 0.5 * np.sum((X - p["means"][k]) ** 2 / var, axis=1))
    return out


def _feature_counts(V, codes, K, w):
    return np.array([(w[codes == k][:, None] * V[codes == k]).sum(axis=0)
                     for k in range(K)])


def multinomial_nb(X, codes, K, w=None, alpha=1.0, fit_prior=True, class_prior=None):
    X = np.asarray(X, dtype=np.float64)
    w = _weights(X.shape[0], w)
    fc = _feature_counts(X, codes, K, w)
    cc = np.array([w[codes == k].sum() for k in range(K)])
    theta = (fc + alpha) / (fc + alpha).sum(axis=1, keepdims=True)
    return {"class_count": cc, "feature_count": fc, "feature_log_prob": np.log(theta),
            "class_log_prior": _log_prior(cc, class_prior, fit_prior)}


def multinomial_jll(p, X):
    return np.asarray(X, dtype=np.float64) @ p["feature_log_prob"].T + p["class_log_prior"]


def bernoulli_nb(X, codes, K, w=None, alpha=1.0, binarize=0.0, fit_prior=True,
                 class_prior=None):
    X = np.asarray(X, dtype=np.float64)
    B = X if binarize is None else (X > binarize).astype(np.float64)
    w = _weights(X.shape[0], w)
    fc = _feature_counts(B, codes, K, w)
    cc = np.array([w[codes == k].sum() for k in range(K)])
    p = (fc + alpha) / (cc[:, None] + 2 * alpha)
    return {"class_count": cc, "feature_count": fc, "feature_log_prob": np.log(p),
            "neg_feature_log_prob": np.log1p(-p),
            "class_log_prior": _log_prior(cc, class_prior, fit_prior), "binarize": binarize}


def bernoulli_jll(p, X):
    X = np.asarray(X, dtype=np.float64)
    B = X if p["binarize"] is None else (X > p["binarize"]).astype(np.float64)
    # Σ_j [b log p + (1 − b) log(1 − p)], literally
    return (B @ p["feature_log_prob"].T + (1 - B) @ p["neg_feature_log_prob"].T
            + p["class_log_prior"])


def complement_nb(X, codes, K, w=None, alpha=1.0, norm=False):
    X = np.asarray(X, dtype=np.float64)
    w = _weights(X.shape[0], w)
    fc = _feature_counts(X, codes, K, w)
    cc = np.array([w[codes == k].sum() for k in range(K)])
    comp = np.array([fc.sum(axis=0) - fc[k] + alpha for k in range(K)])
    logged = np.log(comp / comp.sum(axis=1, keepdims=True))
    W = logged / logged.sum(axis=1, keepdims=True) if norm else -logged
    return {"class_count": cc, "feature_count": fc, "feature_log_prob": W,
            "class_log_prior": _log_prior(cc)}


def complement_jll(p, X):
    jll = np.asarray(X, dtype=np.float64) @ p["feature_log_prob"].T
    if jll.shape[1] == 1:
        jll = jll + p["class_log_prior"]
    return jll


def categorical_nb(X, codes, K, w=None, alpha=1.0, min_categories=None):
    """Per-feature tables as a list of (K, m_j) arrays."""
    X = np.asarray(X, dtype=np.float64).astype(np.int64)
    w = _weights(X.shape[0], w)
    d = X.shape[1]
    m = X.max(axis=0) + 1
    if min_categories is not None:
        m = np.maximum(m, min_categories)
    cc = np.array([w[codes == k].sum() for k in range(K)])
    tables = []
    for j in range(d):
        cnt = np.zeros((K, m[j]))
        for k in range(K):
            for c in range(m[j]):
                cnt[k, c] = w[(codes == k) & (X[:, j] == c)].sum()
        tables.append(np.log((cnt + alpha) / (cnt + alpha).sum(axis=1, keepdims=True)))
    return {"class_count": cc, "tables": tables, "n_categories": m,
            "class_log_prior": _log_prior(cc)}


def categorical_jll(p, X):
    X = np.asarray(X, dtype=np.float64).astype(np.int64)
    out = np.tile(p["class_log_prior"], (X.shape[0], 1))
    for j, T in enumerate(p["tables"]):
        out += T[:, X[:, j]].T
    return out


def softmax(jll):
    m = jll.max(axis=1, keepdims=True)
    e = np.exp(jll - m)
    return e / e.sum(axis=1, keepdims=True)

"""Plain-numpy transcriptions of the formulas fastgen computes: the test oracles.

Nothing here is fast or clever on purpose.  Every function is the textbook formula,
written with two-pass (centre first, then multiply) arithmetic so that it is a trustworthy
reference even for data far from the origin.

GDA maximum-likelihood estimates (weighted; unweighted is w_i = 1):

    W_k = Σ_{i: y_i = k} w_i,      φ_k = W_k / W,      μ_k = Σ_{i∈k} w_i x_i / W_k,
    Σ   = (1/W)   Σ_i   w_i (x_i − μ_{y_i})(x_i − μ_{y_i})ᵀ      (pooled)
    Σ_k = (1/W_k) Σ_{i∈k} w_i (x_i − μ_k)(x_i − μ_k)ᵀ            (per class)
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "make_blobs",
    "mle",
    "two_pass_means",
    "scatter_pooled",
    "scatter_per_class",
    "shrink",
    "ledoit_wolf_intensity",
    "oas_intensity",
    "gaussian_logpdf",
    "joint_log_likelihood",
    "log_posterior",
    "linear_discriminant",
    "rel_err",
    "require",
]


def make_blobs(n, d, K, *, seed=0, offset=0.0, spread=3.0, dtype=np.float64,
               correlated=True):
    """Seeded Gaussian classes: X (n, d), integer labels y (n,) with every class present.

    Class k has mean ``offset + spread·m_k`` (m_k standard normal) and, when
    ``correlated``, its own random covariance A_k A_kᵀ/d + I/2.
    """
    rng = np.random.default_rng(seed)
    y = np.arange(n) % K
    rng.shuffle(y)
    centres = spread * rng.standard_normal((K, d))
    X = np.empty((n, d))
    for k in range(K):
        idx = np.flatnonzero(y == k)
        Z = rng.standard_normal((idx.size, d))
        if correlated:
            A = rng.standard_normal((d, d)) / np.sqrt(d)
            Z = Z @ A.T + 0.7 * rng.standard_normal((idx.size, d))
        X[idx] = centres[k] + Z
    X = offset + X
    return X.astype(dtype), y


def two_pass_means(X, y, K, w=None):
    """Weighted class means with a refinement pass, in np.longdouble."""
    X = np.asarray(X, dtype=np.longdouble)
    w = np.ones(X.shape[0], dtype=np.longdouble) if w is None else np.asarray(
        w, dtype=np.longdouble)
    W = np.zeros(K, dtype=np.longdouble)
    means = np.zeros((K, X.shape[1]), dtype=np.longdouble)
    for k in range(K):
        m = y == k
        W[k] = w[m].sum()
        mu = (w[m, None] * X[m]).sum(axis=0) / W[k]
        mu = mu + (w[m, None] * (X[m] - mu)).sum(axis=0) / W[k]
        means[k] = mu
    return W.astype(np.float64), means


def scatter_per_class(X, y, K, w=None):
    """Σ_{i∈k} w_i (x_i − μ_k)(x_i − μ_k)ᵀ for every class, (K, d, d); two-pass."""
    Xl = np.asarray(X, dtype=np.longdouble)
    _, means = two_pass_means(X, y, K, w)
    w = np.ones(Xl.shape[0]) if w is None else np.asarray(w, dtype=np.float64)
    d = Xl.shape[1]
    out = np.zeros((K, d, d))
    for k in range(K):
        m = y == k
        Z = (Xl[m] - means[k]).astype(np.float64)  # exact-ish: the residuals are small
        out[k] = (Z * w[m, None]).T @ Z
    return out


def scatter_pooled(X, y, K, w=None):
    """Σ_i w_i (x_i − μ_{y_i})(x_i − μ_{y_i})ᵀ, (d, d)."""
    return scatter_per_class(X, y, K, w).sum(axis=0)


def mle(X, y, w=None):
    """The seed formulas.  Returns a dict with classes, counts, priors, means,
    pooled (d, d), per_class (K, d, d), diagonal (K, d), pooled_diagonal (d,)."""
    classes, codes = np.unique(y, return_inverse=True)
    K = classes.shape[0]
    W, means = two_pass_means(X, codes, K, w)
    S = scatter_per_class(X, codes, K, w)
    per_class = S / W[:, None, None]
    pooled = S.sum(axis=0) / W.sum()
    return {
        "classes": classes,
        "codes": codes,
        "counts": W,
        "priors": W / W.sum(),
        "means": means.astype(np.float64),
        "scatter": S,
        "pooled": pooled,
        "per_class": per_class,
        "diagonal": np.einsum("kjj->kj", per_class),
        "pooled_diagonal": np.diag(pooled).copy(),
    }


def shrink(S, a):
    """(1 − a)·S + a·(tr S / d)·I."""
    d = S.shape[0]
    return (1 - a) * S + a * np.trace(S) / d * np.eye(d)


def ledoit_wolf_intensity(Z):
    """Ledoit & Wolf (2004) for centred rows Z (n, d), S = ZᵀZ/n:
    μ = tr S/d, δ = ‖S − μI‖²_F/d, β̄ = (Σ_i‖z_i‖⁴/n − ‖S‖²_F)/(n·d), α = min(β̄, δ)/δ."""
    n, d = Z.shape
    S = Z.T @ Z / n
    mu = np.trace(S) / d
    delta = np.sum((S - mu * np.eye(d)) ** 2) / d
    beta = (np.sum(np.sum(Z * Z, axis=1) ** 2) / n - np.sum(S * S)) / (n * d)
    beta = min(beta, delta)
    return 0.0 if beta == 0 else beta / delta


def oas_intensity(Z):
    """Chen et al. (2010) OAS intensity as scikit-learn writes it, centred rows Z."""
    n, d = Z.shape
    S = Z.T @ Z / n
    alpha = np.mean(S * S)
    mu = np.trace(S) / d
    num = alpha + mu * mu
    den = (n + 1.0) * (alpha - mu * mu / d)
    return 1.0 if den == 0 else min(num / den, 1.0)


def gaussian_logpdf(X, mean, cov):
    """log N(x; μ, Σ) row by row via slogdet and solve."""
    X = np.asarray(X, dtype=np.float64)
    d = X.shape[1]
    Z = X - mean
    sign, logdet = np.linalg.slogdet(cov)
    assert sign > 0
    q = np.einsum("ij,ij->i", Z, np.linalg.solve(cov, Z.T).T)
    return -0.5 * (d * np.log(2 * np.pi) + logdet + q)


def joint_log_likelihood(X, priors, means, covs):
    """(n, K): log N(x; μ_k, Σ_k) + log φ_k; ``covs`` (d, d) shared or (K, d, d)."""
    K = means.shape[0]
    covs = np.asarray(covs, dtype=np.float64)
    if covs.ndim == 2:
        covs = np.broadcast_to(covs, (K,) + covs.shape)
    with np.errstate(divide="ignore"):
        lp = np.log(np.asarray(priors, dtype=np.float64))
    return np.stack([gaussian_logpdf(X, means[k], covs[k]) + lp[k] for k in range(K)],
                    axis=1)


def log_posterior(jll):
    """log p(y=k | x) = jll − logsumexp(jll), with the row maximum subtracted first."""
    m = np.max(jll, axis=1, keepdims=True)
    return jll - (m + np.log(np.sum(np.exp(jll - m), axis=1, keepdims=True)))


def linear_discriminant(priors, means, cov):
    """w_k = Σ⁻¹μ_k (d, K), b_k = −½ μ_kᵀΣ⁻¹μ_k + log φ_k (K,)."""
    Wm = np.linalg.solve(cov, means.T)
    b = -0.5 * np.einsum("dk,kd->k", Wm, means) + np.log(priors)
    return Wm, b


def rel_err(a, b):
    """max|a − b| / max|b|: a norm-wise relative error that ignores tiny entries' noise."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    scale = np.max(np.abs(b))
    return float(np.max(np.abs(a - b)) / (scale if scale > 0 else 1.0))


def assert_params_close(a, b, rtol=1e-12, skip=()):
    """Two params objects of one type agree field by field: arrays to ``rtol`` of their
    largest magnitude (same dtype), integer/str arrays and scalars exactly (floats to
    ``rtol``)."""
    import dataclasses

    import pytest

    assert type(a) is type(b)
    for f in dataclasses.fields(a):
        if f.name in skip:
            continue
        u, v = getattr(a, f.name), getattr(b, f.name)
        if isinstance(u, np.ndarray):
            assert u.dtype == v.dtype, f.name
            if u.dtype.kind == "f":
                scale = max(float(np.nanmax(np.abs(u), initial=0.0)), 1e-300) \
                    if u.size else 1.0
                np.testing.assert_allclose(v, u, rtol=0, atol=rtol * scale, err_msg=f.name)
            else:
                np.testing.assert_array_equal(v, u, err_msg=f.name)
        elif isinstance(u, float):
            assert v == pytest.approx(u, rel=rtol, abs=1e-300), f.name
        else:
            assert u == v, f.name


# ------------------------------------------------------------------ reference packages


def require(module, minversion=None):
    """Import a reference package of the tests (firthmodels, statsmodels, scikit-learn,
    formulaic, pandas, polars, dask), at least ``minversion`` if given.

    Where it is missing, the calling test (or module, when called at import) is skipped,
    as ``pytest.importorskip`` would; under ``CI=true`` it fails instead.  The test
    extra installs every reference, so a skip there means a broken install and a
    comparison that silently did not run."""
    import os

    import pytest

    if os.environ.get("CI", "").strip().lower() not in ("1", "true", "yes"):
        return pytest.importorskip(module, minversion=minversion)
    try:
        return pytest.importorskip(module, minversion=minversion)
    except pytest.skip.Exception as exc:
        pytest.fail(f"CI=true: a reference test needs {module}"
                    f"{f' >= {minversion}' if minversion else ''} ({exc.msg}); install "
                    f"the test extra: pip install -e '.[test]'", pytrace=False)

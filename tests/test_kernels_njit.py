"""The kernels are callable from a user's own ``@numba.njit`` function.

They take validated, C-contiguous arrays: float64 data, int32 codes in [0, K), and the
weights as float64 (an empty array meaning "all ones").
"""

import numpy as np
from numba import njit

import fastgen
import reference as ref
from fastgen.kernels.gaussian import pooled_scores
from fastgen.kernels.moments import moments_pooled
from reference import make_blobs, rel_err


@njit
def _user_lda(X, codes, w, K, n_groups, Xt):
    """A user's pipeline in one njit function: moments, covariance, scores."""
    W, means, M2 = moments_pooled(X, codes, w, K, n_groups)
    d = X.shape[1]
    S = M2 / W.sum()
    L = np.linalg.cholesky(S)
    Linv = np.linalg.inv(L)
    P = Linv.T @ Linv  # Σ⁻¹
    center = np.zeros(d)
    Wc = np.ascontiguousarray(P @ means.T)  # (d, K), centre 0
    bc = np.empty(K)
    logp = np.log(W / W.sum())
    for k in range(K):
        s = 0.0
        for j in range(d):
            s += means[k, j] * Wc[j, k]
        bc[k] = -0.5 * s + logp[k]
    logdet = 2.0 * np.sum(np.log(np.diag(L)))
    const = -0.5 * (logdet + d * np.log(2.0 * np.pi))
    out = np.empty((Xt.shape[0], K))
    pooled_scores(Xt, center, Wc, bc, np.ascontiguousarray(Linv), const, out)
    return W, means, M2, out


def test_user_njit_function_calls_kernels():
    X, y = make_blobs(20_000, 4, 3, seed=1)  # three row groups
    codes = y.astype(np.int32)
    Xt = X[:100].copy()
    for w, n_groups in ((np.empty(0), 3), (np.linspace(0.5, 2.0, len(y)), 1)):
        W, means, M2, jll = _user_lda(X, codes, w, 3, n_groups, Xt)
        r = ref.mle(X, y, None if w.size == 0 else w)
        assert rel_err(W, r["counts"]) <= 1e-13
        assert rel_err(means, r["means"]) <= 1e-10
        assert rel_err(M2, r["scatter"].sum(0)) <= 1e-10
        expected = ref.joint_log_likelihood(Xt, r["priors"], r["means"], r["pooled"])
        assert rel_err(jll, expected) <= 1e-10
    # and the public API agrees with the kernels it wraps
    p = fastgen.fit_gda(X, y)
    assert rel_err(fastgen.joint_log_likelihood(p, Xt),
                   _user_lda(X, codes, np.empty(0), 3, 3, Xt)[3]) <= 1e-10


def test_group_count_does_not_change_the_moments_beyond_rounding():
    X, y = make_blobs(5000, 3, 2, seed=2)
    codes = y.astype(np.int32)
    ref_m = moments_pooled(X, codes, np.empty(0), 2, 1)
    for G in (2, 7, 64):
        m = moments_pooled(X, codes, np.empty(0), 2, G)
        for a, b in zip(m, ref_m):
            assert rel_err(a, b) <= 1e-12

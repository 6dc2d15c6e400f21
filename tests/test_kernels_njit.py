"""The kernels are callable from a user's own ``@numba.njit`` function.

They take validated, C-contiguous arrays: float64 data, int32 codes in [0, K), and the
weights as float64 (an empty array meaning "all ones").
"""

import numpy as np
import pytest
import reference as ref
from numba import njit
from reference import make_blobs, rel_err

import fastgen
from fastgen.kernels.gaussian import pooled_scores
from fastgen.kernels.moments import moments_pooled


@njit
def _user_moments(X, codes, w, K, n_groups):
    """A user's own reduction: moments, then the pooled MLE covariance."""
    W, means, M2 = moments_pooled(X, codes, w, K, n_groups)
    return W, means, M2 / W.sum()


@njit
def _user_scores(Xt, center, Wc, bc, Linv, const):
    out = np.empty((Xt.shape[0], Wc.shape[1]))
    pooled_scores(Xt, center, Wc, bc, Linv, const, out)
    total = 0.0  # the result is an ordinary array inside the user's function
    for i in range(out.shape[0]):
        total += out[i, 0]
    return out, total


def _tables(W, means, S):
    """Σ⁻¹(μ_k − c), −½(μ_k − c)ᵀΣ⁻¹(μ_k − c) + log p_k, L⁻¹ and the constant (c = 0)."""
    d = S.shape[0]
    L = np.linalg.cholesky(S)
    Linv = np.linalg.inv(L)
    Wc = np.ascontiguousarray(np.linalg.solve(S, means.T))
    bc = -0.5 * np.einsum("dk,kd->k", Wc, means) + np.log(W / W.sum())
    const = -0.5 * (2 * np.sum(np.log(np.diag(L))) + d * np.log(2 * np.pi))
    return np.zeros(d), Wc, bc, np.ascontiguousarray(Linv), const


def test_user_njit_function_calls_kernels():
    X, y = make_blobs(20_000, 4, 3, seed=1)  # three row groups
    codes = y.astype(np.int32)
    Xt = X[:100].copy()
    for w, n_groups in ((np.empty(0), 3), (np.linspace(0.5, 2.0, len(y)), 1)):
        W, means, S = _user_moments(X, codes, w, 3, n_groups)
        r = ref.mle(X, y, None if w.size == 0 else w)
        assert rel_err(W, r["counts"]) <= 1e-13
        assert rel_err(means, r["means"]) <= 1e-10
        assert rel_err(S, r["pooled"]) <= 1e-10
        jll, total = _user_scores(Xt, *_tables(W, means, S))
        expected = ref.joint_log_likelihood(Xt, r["priors"], r["means"], r["pooled"])
        assert rel_err(jll, expected) <= 1e-10
        assert total == pytest.approx(expected[:, 0].sum(), rel=1e-10)
    # the public API agrees with the kernels it wraps
    p = fastgen.fit_gda(X, y)
    W, means, S = _user_moments(X, codes, np.empty(0), 3, 3)
    assert rel_err(fastgen.joint_log_likelihood(p, Xt),
                   _user_scores(Xt, *_tables(W, means, S))[0]) <= 1e-10


def test_group_count_does_not_change_the_moments_beyond_rounding():
    X, y = make_blobs(5000, 3, 2, seed=2)
    codes = y.astype(np.int32)
    ref_m = moments_pooled(X, codes, np.empty(0), 2, 1)
    for G in (2, 7, 64):
        m = moments_pooled(X, codes, np.empty(0), 2, G)
        for a, b in zip(m, ref_m):
            assert rel_err(a, b) <= 1e-12

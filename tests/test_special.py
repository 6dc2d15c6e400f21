"""The log-space helpers: the vectorisable exponential and the row finishers."""

import numpy as np
import pytest
from numba import njit

from fastgen.kernels.special import (
    MODE_LOG_PROBA,
    MODE_PROBA,
    exp_nonpos,
    log_normalize_rows,
    softmax_rows,
)


@njit
def _exp_all(x):
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        out[i] = exp_nonpos(x[i])
    return out


def test_exp_nonpos_matches_libm_to_a_few_ulps():
    rng = np.random.default_rng(0)
    x = np.concatenate([
        -rng.exponential(5.0, 20000), -rng.uniform(0, 745, 20000),
        np.linspace(-1e-8, 0, 101), [0.0, -0.0, -1e-300, -0.5 * np.log(2), -np.log(2)],
    ])
    got, ref = _exp_all(x), np.exp(x)
    normal = ref > np.finfo(float).tiny
    assert np.max(np.abs(got[normal] - ref[normal]) / ref[normal]) <= 4 * np.finfo(float).eps
    assert got[x == 0].tolist() == [1.0] * int(np.sum(x == 0))


def test_exp_nonpos_underflow_subnormal_inf_nan():
    x = np.array([-708.5, -720.0, -740.0, -745.0, -745.3, -800.0, -np.inf, np.nan])
    got, ref = _exp_all(x), np.exp(x)
    # subnormal results keep their absolute accuracy (a few units of the smallest subnormal)
    assert np.all(np.abs(got[:4] - ref[:4]) <= 4 * 5e-324 + 4 * np.finfo(float).eps * ref[:4])
    assert got[4:7].tolist() == [0.0, 0.0, 0.0]
    assert np.isnan(got[7])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_row_finishers_against_numpy(dtype):
    rng = np.random.default_rng(1)
    a = (rng.normal(size=(1500, 7)) * 30).astype(dtype)
    a[3] = -np.inf  # a row of all -inf: log posteriors -inf, posteriors 0, never NaN
    a[4, 2] = -np.inf
    m = np.max(a, axis=1, keepdims=True)
    with np.errstate(invalid="ignore"):
        lse = m + np.log(np.sum(np.exp(a.astype(np.float64) - m), axis=1, keepdims=True))
        ref_log = a - lse
    tol = 8 * np.finfo(dtype).eps
    got_log = log_normalize_rows(a.copy())
    got_p = softmax_rows(a.copy())
    assert got_log.dtype == dtype and got_p.dtype == dtype
    assert np.all(got_log[3] == -np.inf) and np.all(got_p[3] == 0)
    ok = np.isfinite(ref_log)
    np.testing.assert_allclose(got_log[ok], ref_log[ok], rtol=tol, atol=tol * 100)
    np.testing.assert_allclose(got_p[ok], np.exp(ref_log[ok]), rtol=tol * 100, atol=tol)
    assert got_log[4, 2] == -np.inf and got_p[4, 2] == 0
    rows = np.delete(np.arange(a.shape[0]), 3)
    np.testing.assert_allclose(got_p[rows].sum(axis=1), 1.0, rtol=tol * 10)
    assert MODE_LOG_PROBA != MODE_PROBA

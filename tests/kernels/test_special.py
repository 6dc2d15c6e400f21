"""The log-space helpers: the vectorisable exponential and the row finishers."""

import numpy as np
import pytest
from numba import njit

from fastgen.kernels.special import (
    EXP_NORMAL_MIN,
    MODE_JLL,
    MODE_LOG_PROBA,
    MODE_PROBA,
    exp_nonpos,
    exp_normal,
    finish_all_rows,
    finish_row,
    log_normalize_rows,
    logsumexp_rows,
    softmax_row,
    softmax_rows,
    sum_slots,
)


@njit
def _exp_all(x, normal=False):
    """exp_nonpos (or, with ``normal``, exp_normal) of every entry."""
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        out[i] = exp_normal(x[i]) if normal else exp_nonpos(x[i])
    return out


def test_exp_normal_is_exp_nonpos_bit_for_bit_on_its_range():
    rng = np.random.default_rng(5)
    x = np.concatenate([-rng.uniform(0, -EXP_NORMAL_MIN, 200000), -rng.exponential(1.0, 20000),
                        [0.0, -0.0, -1e-300, EXP_NORMAL_MIN, -0.5 * np.log(2)]])
    np.testing.assert_array_equal(_exp_all(x, True), _exp_all(x))


@pytest.mark.parametrize("mode", [MODE_LOG_PROBA, MODE_PROBA])
def test_block_finisher_same_bits_with_a_far_class_in_the_block(mode):
    """A block whose rows all have their classes within 708 nats of the row's best takes
    the shorter exponential; one row with a class further down sends the block to the
    general one. The other rows' results are the same either way."""
    rng = np.random.default_rng(6)
    a = rng.normal(size=(512, 6)) * 40
    far = a.copy()
    far[100, 2] = far[100].max() - 800.0  # exp underflows: the general path
    b1, b2 = a.copy(), far.copy()
    finish_all_rows(b1, mode)
    finish_all_rows(b2, mode)
    keep = np.arange(512) != 100
    np.testing.assert_array_equal(b1[keep], b2[keep])
    ref = far[100] - far[100].max()
    ref = ref - np.log(np.sum(np.exp(ref)))
    np.testing.assert_allclose(b2[100], ref if mode == MODE_LOG_PROBA else np.exp(ref),
                               rtol=1e-13, atol=1e-13)


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


def _numpy_exp_nonpos(x):
    """exp_nonpos transcribed in numpy: the reduction and polynomial of
    ``_exp_reduced`` (each operation rounded, as the plain ``@njit`` of ``_exp_all``
    compiles them), then ``np.ldexp``, which scales by 2ⁿ with one rounding."""
    xc = np.maximum(x, -746.0)
    n = np.floor(xc * 1.4426950408889634 + 0.5)
    r = (xc - n * 6.93147180369123816490e-01) - n * 1.90821492927058770002e-10
    r2 = r * r
    r4 = r2 * r2
    s0 = (1.0 / 6.0 + r * (1.0 / 24.0)) + (1.0 / 120.0 + r * (1.0 / 720.0)) * r2
    s1 = ((1.0 / 5040.0 + r * (1.0 / 40320.0))
          + (1.0 / 362880.0 + r * (1.0 / 3628800.0)) * r2)
    s2 = (1.0 / 39916800.0 + r * (1.0 / 479001600.0)) + (1.0 / 6227020800.0) * r2
    q = (s0 + s1 * r4) + s2 * (r4 * r4)
    p = 1.0 + r * (1.0 + r * (0.5 + r * q))
    return np.ldexp(p, n.astype(np.int64))


def test_exp_nonpos_scales_by_two_to_the_n_with_one_rounding():
    """Normal and subnormal results alike are p·2ⁿ rounded once (the bits of
    ``np.ldexp``); NaN stays NaN whatever its payload, −inf and anything below −745.2
    give 0."""
    rng = np.random.default_rng(7)
    x = np.concatenate([-rng.uniform(0, 760, 200000), -rng.uniform(700, 750, 200000),
                        -rng.exponential(1.0, 20000),
                        [0.0, -0.0, -708.0, -708.4, -709.78, -745.13, -745.2, -746.0, -1e300]])
    np.testing.assert_array_equal(_exp_all(x), _numpy_exp_nonpos(x))
    payloads = np.array([0x7FF8000000000000, 0x7FF8000000000FFF, 0xFFF0000000000ABC,
                         0x7FF00000000F0001], dtype=np.uint64).view(np.float64)
    assert np.isnan(_exp_all(payloads)).all()
    assert _exp_all(np.array([-np.inf, -745.3, -1e308])).tolist() == [0.0, 0.0, 0.0]


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
    # each mode of the shared finisher does its own job: log posteriors, posteriors, or
    # the scores left as they are (only the rows holding NaN or ±inf maxima counted)
    for mode, ref in [(MODE_LOG_PROBA, got_log), (MODE_PROBA, got_p), (MODE_JLL, a)]:
        b = a.copy()
        assert finish_all_rows(b, mode) == 1  # row 3: maximum −inf
        np.testing.assert_array_equal(b, ref)


def _rows_zoo():
    rng = np.random.default_rng(4)
    a = rng.normal(size=(40, 5)) * 50
    a[1] = -np.inf
    a[2, :3] = -np.inf
    a[3, 0] = np.inf
    a[4] = [-1e300, -1e300, 1e300, 0.0, 1.0]
    return a


@njit
def _softmax_each_row(a):
    n, K = a.shape
    e = np.empty((n, K))
    c = np.empty(n)
    s = np.empty(n)
    for i in range(n):
        c[i], s[i] = softmax_row(a[i], e[i])
    return c, s, e


@njit
def _finish_each_row(a, mode):
    out = np.empty_like(a)
    for i in range(a.shape[0]):
        finish_row(a[i], out, i, mode)
    return out


def test_softmax_row_is_the_shifted_exponential_sum():
    a = _rows_zoo()
    c, s, e = _softmax_each_row(a)
    finite = np.isfinite(a).any(axis=1) & ~np.isposinf(a).any(axis=1)
    m = np.max(a[finite], axis=1)
    np.testing.assert_array_equal(c[finite], m)
    ref_e = np.exp(a[finite] - m[:, None])
    np.testing.assert_allclose(e[finite], ref_e, rtol=4 * np.finfo(float).eps, atol=0)
    np.testing.assert_allclose(s[finite], ref_e.sum(axis=1), rtol=8 * np.finfo(float).eps)
    assert c[1] == 0.0 and s[1] == 0.0 and np.all(e[1] == 0.0)  # all −inf: lse = −inf
    assert c[3] == np.inf and np.isnan(s[3])  # a +inf entry poisons the sum
    # logsumexp_rows is built on it: c + log s, and +inf kept for a +inf row
    with np.errstate(divide="ignore", invalid="ignore"):
        ref_lse = m + np.log(ref_e.sum(axis=1))
    lse = logsumexp_rows(a)
    np.testing.assert_allclose(lse[finite], ref_lse, rtol=4 * np.finfo(float).eps)
    assert lse[1] == -np.inf and lse[3] == np.inf


@pytest.mark.parametrize("mode", [MODE_JLL, MODE_LOG_PROBA, MODE_PROBA])
def test_finish_row_matches_the_block_finisher(mode):
    a = _rows_zoo()
    a = a[np.isfinite(a).any(axis=1) & ~np.isposinf(a).any(axis=1) | np.isneginf(a).all(axis=1)]
    got = _finish_each_row(a, mode)
    ref = a.copy()
    finish_all_rows(ref, mode)
    np.testing.assert_allclose(got, ref, rtol=4 * np.finfo(float).eps, atol=0)
    assert not np.isnan(got).any()


@pytest.mark.parametrize("shape", [(4,), (3, 4), (5, 2, 3), (1, 6)])
def test_sum_slots_adds_in_slot_order(shape):
    rng = np.random.default_rng(5)
    slots = rng.normal(size=shape) * 10.0 ** rng.integers(-8, 8, size=shape)
    ref = np.zeros(shape[1:])
    for g in range(shape[0]):  # the fixed serial order: bitwise reproducible
        ref = ref + slots[g]
    got = sum_slots(slots)
    assert np.shape(got) == shape[1:]
    np.testing.assert_array_equal(got, ref)

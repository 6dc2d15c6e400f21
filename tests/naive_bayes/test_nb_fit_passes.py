"""Passes of the discrete naive Bayes fits over their (K, d) tables: the Bernoulli log
rows taken in one pass (bit for bit the two separate passes), and the binarize=None
check (N_k − F_kj + α > 0 everywhere: the numpy test's decision, no (K, d) temporaries)."""

import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastgen.kernels.nb import log_smoothed_row
from fastgen.naive_bayes.discrete import check_binary_counts

SETTINGS = settings()  # the profile's (tests/conftest.py): derandomized


def _numpy_says_bad(cc, fc, alpha):
    return bool(np.any(cc[:, None] - fc + alpha <= 0))


def _raises(cc, fc, alpha):
    try:
        check_binary_counts(cc, fc, alpha)
    except ValueError as e:
        assert "binarize=None needs binary features" in str(e)
        return True
    return False


@SETTINGS
@given(K=st.integers(1, 40), d=st.sampled_from([1, 3, 700, 70_000]),
       alpha=st.sampled_from([1e-10, 0.5, 1.0, 3.0]), seed=st.integers(0, 2**31 - 1),
       spot=st.sampled_from(["none", "equal", "over", "last", "tie_alpha"]))
def test_same_decision_as_numpy(K, d, alpha, seed, spot):
    """Blocks of whole class rows (one row per block from d = 65 537, many rows below)
    decide exactly as the numpy expression, including entries at the boundary."""
    rng = np.random.default_rng(seed)
    cc = rng.integers(1, 50, K).astype(np.float64)
    fc = np.floor(rng.random((K, d)) * cc[:, None])
    k, j = rng.integers(K), rng.integers(d)
    if spot == "equal":
        fc[k, j] = cc[k]  # N − F + α = α > 0: fine
    elif spot == "over":
        fc[k, j] = cc[k] + alpha  # exactly 0: bad
    elif spot == "last":
        fc[K - 1, d - 1] = cc[K - 1] + 2 * alpha + 1
    elif spot == "tie_alpha":
        fc[k, j] = np.nextafter(cc[k] + alpha, -np.inf)
    assert _raises(cc, fc, alpha) == _numpy_says_bad(cc, fc, alpha)


@pytest.mark.parametrize("K, d", [(20, 100_000), (20_000, 50), (3, 300_000)])
def test_no_table_sized_temporaries(K, d):
    """Peak memory of the check stays far below one (K, d) float64 table (the numpy
    expression made two table-sized temporaries, a float and a bool one)."""
    cc = np.full(K, 10.0)
    fc = np.ones((K, d))
    tracemalloc.start()
    try:
        check_binary_counts(cc, fc, 1.0)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < max(1 << 20, 8 * d * 1.5), peak


@SETTINGS
@given(seed=st.integers(0, 2**31 - 1), d=st.integers(1, 300),
       alpha=st.sampled_from([1e-10, 0.5, 1.0, 2.5]), n_k=st.sampled_from([0.0, 5.0, 63.0, 1e4]),
       table_size=st.sampled_from([0, 1, 16, 4096]),
       kind=st.sampled_from(["small", "weighted", "large", "odd"]))
def test_bernoulli_log_rows_equal_two_log_passes(seed, d, alpha, n_k, table_size, kind):
    """log p and log(1 − p) of one class row from one pass equal, bit for bit, the two
    passes of ``log_smoothed_row`` (base 0, sign 1; base N_k, sign −1), for integer
    counts inside and outside the memo and the table, fractional (weighted) counts,
    counts above N_k, −0.0 and NaN, on any column range."""
    from fastgen.kernels.sparse import bernoulli_log_rows

    rng = np.random.default_rng(seed)
    if kind == "small":
        row = rng.integers(0, 64, d).astype(np.float64)
    elif kind == "weighted":
        row = np.round(rng.random(d) * 80, 3)
    elif kind == "large":
        row = rng.integers(0, 10_000, d).astype(np.float64)
    else:
        row = rng.choice(np.array([0.0, -0.0, 1.0, 63.0, 64.0, np.nan, 1e300, n_k,
                                   n_k + 1.0]), d)
    table = np.log(np.arange(table_size, dtype=np.float64) + alpha)
    shift = float(np.log(n_k + 2 * alpha))
    j0 = int(rng.integers(0, d))
    j1 = int(rng.integers(j0, d + 1))
    a1, b1 = np.full(d, 7.0), np.full(d, 7.0)
    a2, b2 = np.full(d, 7.0), np.full(d, 7.0)
    with np.errstate(all="ignore"):
        log_smoothed_row(row, 0.0, 1.0, alpha, shift, table, a1, j0, j1)
        log_smoothed_row(row, n_k, -1.0, alpha, shift, table, b1, j0, j1)
        bernoulli_log_rows(row, n_k, alpha, shift, table, a2, b2, j0, j1)
    assert a1.tobytes() == a2.tobytes() and b1.tobytes() == b2.tobytes()

"""fastgen.logistic.tails against scipy.stats (the reference it replaces on the
inference path): the same numbers, bit for bit, and the same types."""

import numpy as np
import pytest
import scipy.stats

from fastgen.logistic.tails import chi2_isf, chi2_sf, norm_isf, norm_sf

X = np.array([-np.inf, -40.0, -3.0, -0.0, 0.0, 1e-300, 1e-8, 0.5, 2.0, 10.0, 38.0, 40.0,
              700.0, np.inf, np.nan])
Q = np.array([0.0, 1e-300, 1e-16, 0.001, 0.025, 0.05, 0.5, 0.95, 0.975, 1.0 - 1e-16, 1.0])


def _same(a, b):
    assert type(a) is type(b)
    np.testing.assert_array_equal(a, b)  # NaN equals NaN here


def test_normal_tails_match_scipy_stats():
    _same(norm_sf(X), scipy.stats.norm.sf(X))
    _same(norm_isf(Q), scipy.stats.norm.isf(Q))
    for x in X:
        _same(norm_sf(x), scipy.stats.norm.sf(x))
    for q in Q:
        _same(norm_isf(q), scipy.stats.norm.isf(q))


@pytest.mark.parametrize("df", [1, 2, 3, 7.5, 40])
def test_chi2_tails_match_scipy_stats(df):
    _same(chi2_sf(X, df), scipy.stats.chi2.sf(X, df))
    _same(chi2_isf(Q, df), scipy.stats.chi2.isf(Q, df))
    for x in X:
        _same(chi2_sf(x, df), scipy.stats.chi2.sf(x, df))
    for q in Q:
        _same(chi2_isf(q, df), scipy.stats.chi2.isf(q, df))

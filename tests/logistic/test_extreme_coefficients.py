"""Coefficients near float64's limits (far starts, the profile's constrained fits at
offsets) give fastgen's warnings only, never numpy's overflow warnings."""

import warnings

import numpy as np
import pytest
from scipy.special import expit

import fastgen


def test_profile_at_an_offset_warns_nothing():
    rng = np.random.default_rng(44)
    n = 3000
    X = rng.normal(size=(n, 2))
    y = np.zeros(n, int)
    y[rng.choice(n, 3, replace=False)] = 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        base = fastgen.logistic_inference(fastgen.fit_logistic(X, y, penalty="firth"), X, y,
                                          ci="profile")
        Xo = X + 1e3
        m = fastgen.fit_logistic(Xo, y, penalty="firth")
        res = fastgen.logistic_inference(m, Xo, y, ci="profile")
    # the slopes' intervals do not depend on the offset
    np.testing.assert_allclose(np.asarray(res.profile_ci)[1:], np.asarray(base.profile_ci)[1:],
                               rtol=1e-8)


@pytest.mark.parametrize("scale", [1e8, 1e100, 1e300])
def test_a_start_near_the_limits_gives_way_to_the_default(scale):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(500, 2))
    y = (rng.random(500) < expit(X @ [1.0, -1.0] - 1.0)).astype(int)
    init = (np.array([[scale, -scale]]), np.array([-scale]))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        m = fastgen.fit_logistic(X, y, init=init, max_iter=20)
    # a start worse than the default one gives way to it (starts.better_start): the
    # fit converges, with no overflow or other warning on the way
    assert m.converged
    assert not caught

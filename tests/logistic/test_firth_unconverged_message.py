"""The ConvergenceWarning of a Firth fit stopped by max_iter reports a distance from the
maximum that matches the real one: where the stopping rule scales Fisher scoring's
decrement for its linear rate (by max(1, ρ²/tol), huge far from the maximum), the
message gives the decrement and the estimated gap in l* besides the scaled value."""

import re
import warnings

import numpy as np
import pytest
from scipy.special import softmax

import fastgen

GAP = re.compile(r"l\* about ([0-9.e+-]+) below its maximum")
RULE = re.compile(r"max\(1, ρ²/tol\) = ([0-9.e+-]+) > tol")


def _data(K, seed, n=80, d=4):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * 3.0
    B = rng.normal(size=(K, d))
    return X, np.array([rng.choice(K, p=softmax(r)) for r in X @ B.T])


def _messages(X, y, max_iter, **kw):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        m = fastgen.fit_logistic(X, y, penalty="firth", max_iter=max_iter, **kw)
    return m, [str(c.message) for c in caught
               if issubclass(c.category, fastgen.ConvergenceWarning)]


@pytest.mark.parametrize("K", [2, 3])
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("max_iter", [1, 2, 3])
def test_reported_gap_matches_the_objective_gap(seed, K, max_iter):
    X, y = _data(K, seed)
    best = fastgen.fit_logistic(X, y, penalty="firth")
    m, msgs = _messages(X, y, max_iter)
    if m.converged:
        return
    assert msgs, "an unconverged fit warns"
    msg = msgs[0]
    gap = float(m.objective_history[-1] - best.objective_history[-1])  # −l* difference
    found = GAP.search(msg)
    if found is None:  # a Newton step's own decrement: of the order of the gap
        dec = float(re.search(r"½U\*ᵀΔ = ([0-9.e+-]+)", msg).group(1))
        assert dec <= 10.0 * max(gap, 1e-12), (msg, gap)
        return
    est = float(found.group(1))
    assert gap / 10.0 <= est <= 10.0 * max(gap, 1e-12), (msg, gap)
    scaled = float(RULE.search(msg).group(1))  # the rule's own reading, as compared
    assert scaled >= est and scaled > 1e-8  # the default tol


def test_the_rate_scaled_reading_is_reported():
    """One step on data where Fisher scoring is slow: the rule's reading is
    rate-scaled, and the message carries the gap beside it."""
    X, y = _data(2, 0)
    _, msgs = _messages(X, y, 1)
    assert msgs and GAP.search(msgs[0]) and RULE.search(msgs[0]), msgs

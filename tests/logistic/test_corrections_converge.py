"""FLIC and FLAC report convergence when their fits converge, and warn when not.

FLIC's intercept refit is the ordinary likelihood (Newton's own decrement certifies
it); a family of small ordinary data sets, where it once ran out of steps at rounding
level and said converged=False without a warning.
"""

import warnings

import numpy as np
import pytest

import fastgen


@pytest.mark.parametrize("correction", ["flic", "flac"])
@pytest.mark.parametrize("offset", [0.0, 1e4])
def test_corrections_converge_on_ordinary_data(correction, offset):
    for seed in range(12):
        rng = np.random.default_rng(seed)
        X = rng.normal(size=(300, 2)) + offset
        y = (rng.random(300) < 0.1).astype(int)
        if y.sum() < 2:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            m = fastgen.fit_logistic(X, y, penalty="firth", correction=correction)
        assert m.converged, seed
        # FLIC/FLAC's intercept makes the mean predicted probability the event rate
        p = fastgen.predict_proba(m, X)[:, 1]
        assert abs(p.mean() - y.mean()) < 1e-10 * max(1.0, offset / 1e3), seed


def test_an_unconverged_refit_warns(monkeypatch):
    from fastgen.logistic import bias_reduction

    rng = np.random.default_rng(3)
    X = rng.normal(size=(200, 2))
    y = (rng.random(200) < 0.3).astype(int)
    monkeypatch.setattr(bias_reduction, "_OFFSET_INTERCEPT_TOL", -1.0)  # never certifies
    with pytest.warns(fastgen.ConvergenceWarning, match="correction='flic'"):
        m = fastgen.fit_logistic(X, y, penalty="firth", correction="flic")
    assert not m.converged

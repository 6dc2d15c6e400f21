"""The chord certificate of the explicit solvers (``Objective.chord``).

Its bound must be an upper bound of the exact Newton decrement ½gᵀH⁻¹g at the point it
certifies (a plain-numpy transcription computes that one), for binary and multinomial
objectives, weights, ridge, offsets and units; and fits that end by it must land where
fits that end by a full Newton step do.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from reference_logistic import binary_objective, multinomial_objective

import fastgen
from fastgen.logistic import objectives
from fastgen.logistic.data import InMemoryData


def _problem(K, seed, n=400, d=4, offset=0.0, scale=1.0, weighted=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * scale + offset
    W = rng.normal(size=(d, K))
    y = np.argmax((X - offset) / scale @ W + rng.gumbel(size=(n, K)), axis=1)
    w = rng.integers(1, 4, n).astype(np.float64) if weighted else np.empty(0)
    return X, y, w


def _exact(X, y, w, point, l2, K):
    """½gᵀH⁻¹g at ``point`` (reference layout for the multinomial: class 0 fixed)."""
    ww = w if w.shape[0] else None
    if K == 2:
        _, g, H = binary_objective(X, y, point, l2=l2, w=ww)
        return 0.5 * float(g @ np.linalg.solve(H, g))
    _, G, H = multinomial_objective(X, y, point, l2=l2, w=ww)
    g = G.ravel()
    keep = np.arange(point.size)[point.shape[1]:]
    return 0.5 * float(g[keep] @ np.linalg.solve(H[np.ix_(keep, keep)], g[keep]))


@pytest.mark.parametrize("K", [2, 3])
@pytest.mark.parametrize("l2", [0.0, 0.5])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("t,csr", [(1.0, False), (0.6, True), (0.05, False)])
def test_the_bound_holds_wherever_a_chord_is_tried(K, l2, weighted, t, csr):
    """From a point, a step of length t along Newton's direction, then the chord: its
    bound is ≥ the exact decrement at the new point, and its step is −H₀⁻¹g."""
    X, y, w = _problem(K, seed=7 * K + int(10 * t) + weighted, weighted=weighted)
    data = InMemoryData(sp.csr_matrix(X) if csr else X, y, w, True)
    obj = objectives.make_objective(data, l2, K, explicit=True)
    start = np.zeros(data.p) if K == 2 else np.zeros((K, data.p))
    ev = obj.evaluate(start, True)
    obj.gradient_scale(float(w.sum()) if weighted else float(X.shape[0]))
    step, _ = obj.step(ev.grad, 1.0)
    point = start + t * step
    ev1 = obj.evaluate(point, False)
    cert = obj.chord(ev1.grad, 1e300)
    exact = _exact(X, y, w, point, l2, K)
    if cert is None:  # the curvature may have moved by 2×: no certificate claimed
        return
    x, dec, bound = cert
    assert bound >= exact * (1 - 1e-9)
    assert dec <= bound
    # the step is the previous point's Newton step for the new gradient
    if K == 2:
        _, _, H0 = binary_objective(X, y, start, l2=l2, w=w if weighted else None)
        np.testing.assert_allclose(x, np.linalg.solve(H0, -ev1.grad), rtol=1e-8,
                                   atol=1e-12 * np.abs(x).max())


@pytest.mark.parametrize("K", [2, 3])
@pytest.mark.parametrize("offset,scale", [(0.0, 1.0), (1e5, 1.0), (-3e3, 1e-4),
                                          (0.0, 1e6)])
@pytest.mark.parametrize("l2", [0.0, 0.3])
def test_fits_ending_by_a_chord_land_where_newton_would(monkeypatch, K, offset, scale,
                                                       l2):
    """The same fit with the chord disabled takes the certifying Newton step instead:
    the two answers agree to 1e-9 standard errors, and both certify."""
    X, y, w = _problem(K, seed=K + 3, n=3000, offset=offset, scale=scale)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # standard errors (of the unpenalised fit) measure the differences
        se = np.asarray(fastgen.logistic_inference(fastgen.fit_logistic(X, y), X, y).bse)
        a = fastgen.fit_logistic(X, y, l2=l2)
        for cls in (objectives.BinaryObjective, objectives.MultinomialObjective):
            monkeypatch.setattr(cls, "chord", lambda self, g, tol: None)
        b = fastgen.fit_logistic(X, y, l2=l2)
    assert a.converged and b.converged
    # the inference layout: (p,) or (p, K − 1), intercept first, class 0 the reference
    pa, pb = (np.r_[np.atleast_1d(m.intercept)[None, :], np.atleast_2d(m.coef).T]
              for m in (a, b))
    if K > 2:
        pa, pb = pa[:, 1:], pb[:, 1:]
    assert np.max(np.abs(pa - pb) / se.reshape(pa.shape)) <= 1e-9

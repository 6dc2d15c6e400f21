"""Tests for fastgen.logistic.newton through its data protocol.

The solver never sees X: any object answering :class:`fastgen.logistic.data.LogisticData`
can be fitted.  Here the plain-numpy oracles of ``reference_logistic.py`` play the data
(no kernels), and the result must equal scikit-learn's (an independent peer) and the
in-memory fit; the named steps are checked on their own.
"""

import warnings

import numpy as np
import pytest
from reference_logistic import binary_objective, multinomial_objective

import fastgen
from fastgen.logistic.api import ParamsSpec, params_from_result, prior_start
from fastgen.logistic.diagnostics import separation_of
from fastgen.logistic.newton import (
    NewtonState,
    is_converged,
    line_search,
    newton_solve,
)
from fastgen.logistic.objectives import make_objective


class OracleData:
    """LogisticData from the numpy oracles: explicit Hessians only, no per-row buffers."""

    supports_hessp = False

    def __init__(self, X, y, w, fit_intercept):
        self.X, self.y, self.w = X, y, w
        self.d = X.shape[1]
        self.fit_intercept = fit_intercept
        self.p = self.d + (1 if fit_intercept else 0)
        self.calls = 0

    def _eta(self, beta):
        Xt = np.hstack([self.X, np.ones((self.X.shape[0], 1))]) if self.fit_intercept \
            else self.X
        return Xt @ np.asarray(beta).T

    def binary(self, beta, hessian, rows):
        self.calls += 1
        f, g, H = binary_objective(self.X, self.y, beta, w=self.w,
                                   fit_intercept=self.fit_intercept)
        return f, g, (H if hessian else None), float(np.max(np.abs(self._eta(beta)))), None

    def multinomial(self, B):
        self.calls += 1
        f, G, _ = multinomial_objective(self.X, self.y, B, w=self.w,
                                        fit_intercept=self.fit_intercept)
        eta = self._eta(B)
        return f, G, float(np.max(eta.max(axis=1) - eta.min(axis=1))), None

    def multinomial_hessian(self, B, P):
        assert P is None  # nothing from an earlier call: the Hessian is at B
        return multinomial_objective(self.X, self.y, B, w=self.w,
                                     fit_intercept=self.fit_intercept)[2]


def _data(K, seed):
    rng = np.random.default_rng(seed)
    n, d = 300, 3
    y = rng.integers(0, K, n)
    X = rng.normal(size=(n, d))
    X[:, : min(d, K)] += 0.7 * np.eye(K)[y][:, : min(d, K)]
    w = rng.uniform(0.5, 2.0, n)
    return X, y, w


@pytest.mark.parametrize("K", [2, 3])
def test_solver_on_protocol_data_matches_sklearn_and_in_memory_fit(K):
    from sklearn.linear_model import LogisticRegression

    X, y, w = _data(K, seed=20 + K)
    l2 = 0.3
    data = OracleData(X, y, w, True)
    obj = make_objective(data, l2, K, explicit=True)
    B0 = prior_start(np.bincount(y, weights=w, minlength=K), data.d, True)
    res = newton_solve(obj, B0[0] if K == 2 else B0, max_iter=50, tol=1e-10,
                       sum_weights=float(w.sum()), l2=l2)
    assert res.converged and res.cause is None and data.calls > 0
    p = params_from_result(res, obj, ParamsSpec(np.arange(K), data.d, True, l2,
                                                np.dtype(np.float64)))
    sk = LogisticRegression(solver="newton-cholesky", C=1 / l2, tol=1e-14, max_iter=200)
    sk.fit(X, y, sample_weight=w)
    np.testing.assert_allclose(p.coef, sk.coef_, rtol=1e-6, atol=1e-9)
    ref = fastgen.fit_logistic(X, y, l2=l2, sample_weight=w, tol=1e-10)
    np.testing.assert_allclose(p.coef, ref.coef, rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(p.intercept, ref.intercept, rtol=1e-8, atol=1e-12)
    assert p.n_iter == ref.n_iter


def test_objective_decreases_and_histories_line_up():
    X, y, w = _data(2, seed=30)
    data = OracleData(X, y, w, True)
    obj = make_objective(data, 0.1, 2, explicit=True)
    res = newton_solve(obj, np.zeros(data.p), max_iter=50, tol=1e-10,
                       sum_weights=float(w.sum()), l2=0.1)
    assert res.converged
    assert res.objective_history.shape == res.grad_norm_history.shape == (res.n_iter + 1,)
    assert res.step_size_history.shape == (res.n_iter,)
    assert np.all(np.diff(res.objective_history) < 0)
    f, g, _ = binary_objective(X, y, res.beta, l2=0.1, w=w)
    assert res.objective_history[-1] == pytest.approx(f, rel=1e-12)
    assert np.max(np.abs(g)) / w.sum() <= 1e-10


def test_max_iter_stops_with_convergence_warning():
    X, y, w = _data(3, seed=31)
    data = OracleData(X, y, w, True)
    obj = make_objective(data, 0.1, 3, explicit=True)
    with pytest.warns(fastgen.ConvergenceWarning, match="max_iter=1"):
        res = newton_solve(obj, np.zeros((3, data.p)), max_iter=1, tol=1e-10,
                           sum_weights=float(w.sum()), l2=0.1)
    assert not res.converged and res.cause == "max_iter" and res.n_iter == 1


def test_line_search_rejects_an_ascent_direction_and_takes_a_descent_one():
    X, y, w = _data(2, seed=32)
    data = OracleData(X, y, w, True)
    obj = make_objective(data, 0.1, 2, explicit=True)
    beta = np.zeros(data.p)
    state = NewtonState(beta, obj.evaluate(beta, True), float(w.sum()))
    g = state.current.grad
    assert line_search(obj, state, g) is None  # f only grows along +g
    acc = line_search(obj, state, -g / np.linalg.norm(g))
    assert acc is not None and acc.evaluation.objective < state.current.objective
    f, _, _ = binary_objective(X, y, acc.beta, l2=0.1, w=w)
    assert acc.evaluation.objective == pytest.approx(f, rel=1e-12)
    assert not is_converged(1.0, 1e-8)


def test_separation_stops_unpenalised_fit_on_protocol_data():
    x = np.linspace(-1, 1, 40)[:, None]
    y = (x[:, 0] > 0).astype(np.int64)
    data = OracleData(x, y, np.ones(40), True)
    obj = make_objective(data, 0.0, 2, explicit=True)
    calls = []

    def separation():
        calls.append(1)
        return separation_of(x, y, np.empty(0), np.array([0, 1]), True)

    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        res = newton_solve(obj, np.zeros(data.p), max_iter=100, tol=1e-8,
                           sum_weights=40.0, l2=0.0, separation=separation)
    assert res.cause == "separation" and not res.converged and len(calls) == 1
    assert res.separation.kind == "complete"
    assert any(issubclass(r.category, fastgen.PerfectSeparationWarning)
               and "separable" in str(r.message) for r in rec)
    assert np.all(np.isfinite(res.beta))


def test_pcg_stops_at_the_absolute_residual():
    """``atol`` bounds max|r| with r = −g − Hx, the residual CG tracks; the stop comes
    after fewer products than a tight relative one."""
    from fastgen.logistic.linsolve import pcg

    rng = np.random.default_rng(0)
    A = rng.normal(size=(60, 40))
    H = A.T @ A + 0.1 * np.eye(40)
    g = rng.normal(size=40)
    tight = pcg(lambda v: H @ v, lambda r: r / np.diag(H), g, 1e-12, 200)
    atol = 1e-3 * float(np.max(np.abs(g)))
    x, dec, nprod = pcg(lambda v: H @ v, lambda r: r / np.diag(H), g, 1e-12, 200, atol)
    assert np.max(np.abs(g + H @ x)) <= atol * (1 + 1e-8)
    assert nprod < tight[2]
    assert dec == pytest.approx(0.5 * x @ H @ x, rel=1e-10)



"""Firth's logistic regression against firthmodels (coefficients, profile intervals,
penalised LR p-values), separated data included; standard errors against a plain-numpy
transcription of (X̃ᵀWX̃)⁻¹; CSR, weights and errors."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import expit

import fastgen

firthmodels = pytest.importorskip("firthmodels")


def rel(a, b):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(np.max(np.abs(a - b)) / np.max(np.abs(b)))


def reference(X, y, w=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f = firthmodels.FirthLogisticRegression(backend="numpy", gtol=1e-12, xtol=1e-12,
                                                max_iter=200).fit(X, y, sample_weight=w)
        ci = f.conf_int(method="pl", tol=1e-10, max_iter=200)
        f.lrt()
    return f, ci


def cases():
    rng = np.random.default_rng(0)
    X1 = rng.normal(size=(60, 3))
    y1 = (X1[:, 0] + rng.normal(size=60) > 0.5).astype(int)
    X2 = np.array([[0.0], [0], [0], [1], [1], [1], [0.5], [0.2]])  # quasi-separated
    y2 = np.array([0, 0, 0, 1, 1, 1, 1, 0])
    X3 = rng.normal(size=(40, 2))  # completely separated
    y3 = (X3[:, 0] > 0).astype(int)
    return [(X1, y1), (X2, y2), (X3, y3)]


@pytest.mark.parametrize("case", range(3))
def test_matches_firthmodels(case):
    X, y = cases()[case]
    m = fastgen.fit_logistic(X, y, penalty="firth")
    assert m.solver == "firth" and m.converged
    res = fastgen.logistic_inference(m, X, y, ci="profile")
    f, ci = reference(X, y)
    perm = np.r_[np.arange(1, X.shape[1] + 1), 0]  # firthmodels: intercept last
    assert rel(np.r_[m.coef[0], m.intercept], np.r_[f.coef_, f.intercept_]) < 1e-6
    assert abs(res.llf - f.loglik_) < 1e-8 * abs(f.loglik_)
    assert rel(res.profile_ci[perm], ci) < 1e-4
    ok = np.isfinite(f.lrt_pvalues_)
    assert np.all(np.abs(res.lr_pvalues[perm][ok] - f.lrt_pvalues_[ok]) < 1e-6)
    assert np.all(np.isfinite(res.params))
    # Wald: inverse Fisher information at the estimate, by numpy
    Xt = np.column_stack([np.ones(len(y)), X])
    p = expit(Xt @ res.params)
    cov = np.linalg.inv((Xt * (p * (1 - p))[:, None]).T @ Xt)
    assert rel(res.bse, np.sqrt(np.diag(cov))) < 1e-8
    assert "Firth" in res.summary()


def test_weights_repeat_rows_and_csr():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(50, 3))
    X[np.abs(X) < 0.4] = 0.0
    y = (X[:, 1] + rng.normal(size=50) > 0).astype(int)
    w = rng.integers(1, 4, 50)
    m = fastgen.fit_logistic(X, y, penalty="firth", sample_weight=w)
    rep = np.repeat(np.arange(50), w)
    mr = fastgen.fit_logistic(X[rep], y[rep], penalty="firth")
    assert rel(m.coef, mr.coef) < 1e-8
    ms = fastgen.fit_logistic(sp.csr_matrix(X), y, penalty="firth", sample_weight=w)
    assert rel(ms.coef, m.coef) < 1e-8
    a = fastgen.logistic_inference(m, X, y, sample_weight=w, ci="profile")
    b = fastgen.logistic_inference(ms, sp.csr_matrix(X), y, sample_weight=w, ci="profile")
    assert rel(b.profile_ci, a.profile_ci) < 1e-8
    f, ci = reference(X, y, w.astype(float))
    assert rel(np.r_[m.coef[0], m.intercept], np.r_[f.coef_, f.intercept_]) < 1e-6


def test_errors():
    X = np.arange(12.0).reshape(6, 2)
    y = np.array([0, 1, 2, 0, 1, 2])
    with pytest.raises(ValueError, match="binary"):
        fastgen.fit_logistic(X, y, penalty="firth")
    with pytest.raises(ValueError, match="penalty"):
        fastgen.fit_logistic(X, y % 2, penalty="lasso")
    with pytest.raises(ValueError, match="penalty"):
        fastgen.fit_logistic(X, y % 2, penalty="firth", l2=1.0)
    m = fastgen.fit_logistic(cases()[0][0], cases()[0][1], penalty="firth")
    with pytest.raises(ValueError, match="nonrobust"):
        fastgen.logistic_inference(m, *cases()[0], cov_type="HC0")


def test_newton_stops_without_wasted_evaluations(monkeypatch):
    """A converged Newton run stops on its own predicted step: no extra point, and no
    step-halving cascade at rounding level (which once made profile intervals cost
    thousands of passes over X)."""
    from fastgen.logistic import firth

    calls = {"evaluate": 0}
    evaluate = firth._Penalised.evaluate

    def counting(self, beta):
        calls["evaluate"] += 1
        return evaluate(self, beta)

    monkeypatch.setattr(firth._Penalised, "evaluate", counting)
    X, y = cases()[0]
    m = fastgen.fit_logistic(X, y, penalty="firth")
    # the start, one point per accepted step and one per halving, and no more
    halvings = int(np.sum(np.round(-np.log2(m.step_size_history))))
    assert calls["evaluate"] == m.n_iter + 1 + halvings
    calls["evaluate"] = 0
    res = fastgen.logistic_inference(m, X, y, ci="profile")
    p = X.shape[1] + 1
    # 2 bounds + 1 LR refit per coefficient, each root search a few constrained Newton
    # runs of under ten steps (about 350 evaluations here; the halving cascade took 28,000)
    assert calls["evaluate"] < 150 * p, calls["evaluate"]
    f, ci = reference(X, y)
    perm = np.r_[np.arange(1, X.shape[1] + 1), 0]
    assert rel(res.profile_ci[perm], ci) < 1e-4

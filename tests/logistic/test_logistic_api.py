"""Tests for fastgen.logistic's public functions: IRLS / Newton logistic regression.

Compared with scikit-learn >= 1.9 (``LogisticRegression(solver="newton-cholesky")``,
whose objective is C·Σ loss + ½‖coef‖², i.e. ours with l2 = 1/C) and statsmodels
(``Logit`` / ``MNLogit``, unpenalised), plus the plain-numpy oracles in
``reference_logistic.py`` and finite differences.
"""


import dataclasses

import numba
import numpy as np
import pytest
import scipy.sparse as sp
from reference_logistic import (
    binary_objective,
    finite_difference_hessian,
    multinomial_objective,
)

import fastgen
from fastgen.kernels import irls as kirls
from fastgen.kernels import irls_sparse as kcsr
from fastgen.kernels import tiles as ktiles
from fastgen.logistic import objectives as lobj

TOL = 1e-10


def _binary_data(n=600, d=5, seed=0, shift=0.3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    beta = rng.normal(size=d)
    y = (rng.random(n) < 1 / (1 + np.exp(-(X @ beta + shift)))).astype(np.int64)
    return X, y


def _multi_data(n=600, d=4, K=4, seed=1):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, K, n)
    X = rng.normal(size=(n, d))
    X[:, : min(d, K)] += 0.8 * np.eye(K)[y][:, : min(d, K)]
    return X, y


def _rel(a, b):
    return np.max(np.abs(np.asarray(a) - np.asarray(b))) / max(np.max(np.abs(b)), 1e-300)


def _sklearn(X, y, l2, fit_intercept=True, sample_weight=None):
    from sklearn.linear_model import LogisticRegression

    m = LogisticRegression(solver="newton-cholesky", C=1.0 / l2, tol=1e-14, max_iter=200,
                           fit_intercept=fit_intercept)
    return m.fit(X, y, sample_weight=sample_weight)


# --------------------------------------------------------------------------- peers


@pytest.mark.parametrize("l2", [1.0, 0.05])
def test_binary_matches_sklearn(l2):
    X, y = _binary_data()
    p = fastgen.fit_logistic(X, y, l2=l2, tol=TOL)
    sk = _sklearn(X, y, l2)
    assert p.converged and p.parametrization == "binary"
    assert _rel(p.coef, sk.coef_) < 1e-6
    assert _rel(p.intercept, sk.intercept_) < 1e-6
    f_sk, _, _ = binary_objective(X, y, np.r_[sk.coef_[0], sk.intercept_], l2=l2)
    assert abs(p.objective_history[-1] - f_sk) <= 1e-9 * abs(f_sk)
    np.testing.assert_allclose(fastgen.predict_proba(p, X), sk.predict_proba(X), rtol=1e-7)
    np.testing.assert_array_equal(fastgen.predict(p, X), sk.predict(X))


def test_binary_matches_statsmodels_logit():
    import statsmodels.api as sm

    X, y = _binary_data(n=500, d=4, seed=3)
    p = fastgen.fit_logistic(X, y, tol=TOL)
    res = sm.Logit(y, sm.add_constant(X)).fit(method="newton", tol=1e-14, maxiter=100, disp=0)
    assert _rel(p.coef[0], res.params[1:]) < 1e-6
    assert abs(p.intercept[0] - res.params[0]) < 1e-6 * max(1.0, abs(res.params[0]))
    assert abs(p.log_likelihood - res.llf) <= 1e-9 * abs(res.llf)


@pytest.mark.parametrize("explicit", [True, False])
def test_multinomial_matches_sklearn(explicit, monkeypatch):
    monkeypatch.setattr(lobj, "MULTINOMIAL_EXPLICIT_MAX", 10**6 if explicit else 0)
    X, y = _multi_data()
    p = fastgen.fit_logistic(X, y, l2=0.5, tol=TOL)
    assert p.solver == ("newton-cholesky" if explicit else "newton-cg")
    assert p.parametrization == "symmetric" and p.converged
    sk = _sklearn(X, y, 0.5)
    assert _rel(p.coef, sk.coef_) < 1e-6
    # the intercepts are determined up to a common shift; compare centred
    ic = sk.intercept_ - sk.intercept_.mean()
    assert _rel(p.intercept, ic) < 1e-6
    np.testing.assert_allclose(fastgen.predict_proba(p, X), sk.predict_proba(X), rtol=1e-7)
    B = np.c_[sk.coef_, ic]
    f_sk, _, _ = multinomial_objective(X, y, B, l2=0.5)
    assert abs(p.objective_history[-1] - f_sk) <= 1e-9 * abs(f_sk)


@pytest.mark.parametrize("explicit", [True, False])
def test_multinomial_matches_statsmodels_mnlogit(explicit, monkeypatch):
    import statsmodels.api as sm

    monkeypatch.setattr(lobj, "MULTINOMIAL_EXPLICIT_MAX", 10**6 if explicit else 0)
    X, y = _multi_data(n=500, d=3, K=3, seed=4)
    p = fastgen.fit_logistic(X, y, tol=TOL)
    assert p.parametrization == "reference" and p.converged
    res = sm.MNLogit(y, sm.add_constant(X)).fit(method="newton", tol=1e-14, maxiter=100,
                                                disp=0)
    params = np.asarray(res.params)  # (p, K-1): constant first
    assert np.all(p.coef[0] == 0) and p.intercept[0] == 0
    assert _rel(p.coef[1:], params[1:].T) < 1e-6
    assert _rel(p.intercept[1:], params[0]) < 1e-6
    assert abs(p.log_likelihood - res.llf) <= 1e-9 * abs(res.llf)


# --------------------------------------------------------------------------- optimality


@pytest.mark.parametrize("K", [2, 4])
def test_gradient_vanishes_at_solution(K):
    X, y = _binary_data(seed=5) if K == 2 else _multi_data(K=K, seed=5)
    w = np.random.default_rng(0).uniform(0.5, 2.0, X.shape[0])
    tol = 1e-8
    p = fastgen.fit_logistic(X, y, l2=0.3, sample_weight=w, tol=tol)
    if K == 2:
        _, g, _ = binary_objective(X, y, np.r_[p.coef[0], p.intercept], l2=0.3, w=w)
    else:
        _, g, _ = multinomial_objective(X, y, np.c_[p.coef, p.intercept], l2=0.3, w=w)
    assert np.max(np.abs(g)) / w.sum() <= tol
    # the certifying step's point is not evaluated: its objective is the model's
    assert np.isnan(p.grad_norm_history[-1]) and p.converged
    assert np.all(np.diff(p.objective_history) <= 1e-12 * abs(p.objective_history[0]))


def test_oracle_hessians_match_finite_differences():
    X, y = _binary_data(n=60, d=3, seed=6)
    beta = np.array([0.3, -0.2, 0.5, 0.1])
    _, _, H = binary_objective(X, y, beta, l2=0.7)
    Hfd = finite_difference_hessian(lambda b: binary_objective(X, y, b, l2=0.7)[1], beta)
    np.testing.assert_allclose(H, Hfd, rtol=1e-6, atol=1e-6)
    Xm, ym = _multi_data(n=60, d=2, K=3, seed=6)
    B = np.random.default_rng(1).normal(size=(3, 3))
    _, _, Hm = multinomial_objective(Xm, ym, B, l2=0.7)
    Hmfd = finite_difference_hessian(
        lambda b: multinomial_objective(Xm, ym, b.reshape(3, 3), l2=0.7)[1], B)
    np.testing.assert_allclose(Hm, Hmfd, rtol=1e-6, atol=1e-6)


def _bounds(n, G=3):
    return np.unique(np.linspace(0, n, G + 1).astype(np.int64))


@pytest.mark.parametrize("sparse_idx", [None, np.int32, np.int64])
def test_kernels_match_oracle(sparse_idx):
    X, y = _binary_data(n=300, d=4, seed=7)
    X[X < -0.5] = 0.0
    w = np.random.default_rng(2).uniform(0.0, 2.0, X.shape[0])
    y32 = y.astype(np.int32)
    beta = np.array([0.4, -0.3, 0.2, 0.1, -0.5])
    f, g, H = binary_objective(X, y, beta, w=w)
    s = np.empty(X.shape[0])
    if sparse_idx is None:
        bounds = np.array([0, 64, 128, 300], dtype=np.int64)
        loss, gk, Hk, _ = kirls.binary_loss_grad_hess(X, y32, w, beta, True, bounds, 64, True, s)
        hv = kirls.binary_hessp(X, s, beta, True, bounds)
    else:
        A = sp.csr_matrix(X)
        csr = (A.indptr.astype(sparse_idx), A.indices.astype(sparse_idx), A.data, 4)
        bounds = _bounds(300)
        loss, gk, Hk, _ = kcsr.binary_loss_grad_hess_csr(*csr, y32, w, beta, True, bounds,
                                                         True, s)
        hv = kcsr.binary_hessp_csr(*csr, s, beta, True, bounds)
    np.testing.assert_allclose(loss, f, rtol=1e-12)
    np.testing.assert_allclose(gk, g, rtol=1e-11, atol=1e-11)
    np.testing.assert_allclose(Hk, H, rtol=1e-11, atol=1e-11)
    np.testing.assert_allclose(hv, H @ beta, rtol=1e-11, atol=1e-11)
    if sparse_idx is np.int64:
        return  # int64 indices: the binary kernels suffice (each index type compiles anew)

    Xm, ym = _multi_data(n=300, d=3, K=3, seed=8)
    Xm[Xm < -0.7] = 0.0
    B = np.random.default_rng(3).normal(size=(3, 4))
    fm, Gm, Hm = multinomial_objective(Xm, ym, B, w=w)
    P = np.empty((300, 3))
    ym32 = ym.astype(np.int32)
    V = np.random.default_rng(4).normal(size=(3, 4))
    if sparse_idx is None:
        bounds = np.array([0, 64, 128, 300], dtype=np.int64)
        lm, Gk, _ = kirls.multinomial_loss_grad(Xm, ym32, w, B, True, bounds, P)
        HVk = kirls.multinomial_hessp(Xm, w, P, V, True, bounds)
        Hk = kirls.multinomial_hessian(Xm, w, P, True, bounds, 64)
    else:
        A = sp.csr_matrix(Xm)
        csr = (A.indptr.astype(sparse_idx), A.indices.astype(sparse_idx), A.data, 3)
        bounds = _bounds(300)
        lm, Gk, _ = kcsr.multinomial_loss_grad_csr(*csr, ym32, w, B, True, bounds, P)
        HVk = kcsr.multinomial_hessp_csr(*csr, w, P, V, True, bounds)
        Hk = kcsr.multinomial_hessian_csr(*csr, w, P, True, bounds)
    np.testing.assert_allclose(lm, fm, rtol=1e-12)
    np.testing.assert_allclose(Gk, Gm, rtol=1e-11, atol=1e-11)
    np.testing.assert_allclose(Hk, Hm, rtol=1e-11, atol=1e-11)
    np.testing.assert_allclose(HVk.ravel(), Hm @ V.ravel(), rtol=1e-10, atol=1e-11)


# --------------------------------------------------------------------------- equivalences


@pytest.mark.parametrize("K", [2, 3])
def test_csr_equals_dense(K):
    X, y = _binary_data(n=400, d=6, seed=9) if K == 2 else _multi_data(n=400, d=6, K=3)
    X = X.copy()
    X[np.abs(X) < 0.6] = 0.0
    pd = fastgen.fit_logistic(X, y, l2=0.2, tol=TOL)
    ps = fastgen.fit_logistic(sp.csr_matrix(X), y, l2=0.2, tol=TOL)
    np.testing.assert_allclose(ps.coef, pd.coef, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(ps.intercept, pd.intercept, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(fastgen.predict_proba(ps, sp.csr_matrix(X)),
                               fastgen.predict_proba(pd, X), rtol=1e-9)


def test_binary_newton_cg_path_matches_cholesky(monkeypatch):
    X, y = _binary_data(n=400, d=6, seed=10)
    X[np.abs(X) < 0.6] = 0.0
    pd = fastgen.fit_logistic(X, y, l2=0.2, tol=TOL)
    monkeypatch.setattr(lobj, "BINARY_EXPLICIT_MAX_P", 1)
    pc = fastgen.fit_logistic(sp.csr_matrix(X), y, l2=0.2, tol=TOL)
    assert pc.solver == "newton-cg" and pc.n_hessp > 0
    np.testing.assert_allclose(pc.coef, pd.coef, rtol=1e-7)


@pytest.mark.parametrize("K", [2, 3])
def test_weights_equal_repeated_rows(K):
    X, y = _binary_data(n=200, d=3, seed=11) if K == 2 else _multi_data(n=200, d=3, K=3)
    reps = np.random.default_rng(5).integers(0, 4, X.shape[0])
    pw = fastgen.fit_logistic(X, y, l2=0.1, sample_weight=reps, tol=TOL)
    pr = fastgen.fit_logistic(np.repeat(X, reps, axis=0), np.repeat(y, reps), l2=0.1, tol=TOL)
    np.testing.assert_allclose(pw.coef, pr.coef, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(pw.intercept, pr.intercept, rtol=1e-8, atol=1e-10)
    assert abs(pw.log_likelihood - pr.log_likelihood) <= 1e-9 * abs(pr.log_likelihood)


@pytest.mark.parametrize("K", [2, 3])
def test_float32_path(K):
    X, y = _binary_data(n=300, d=4, seed=12) if K == 2 else _multi_data(n=300, d=4, K=3)
    X32 = X.astype(np.float32)
    p32 = fastgen.fit_logistic(X32, y, l2=0.5, tol=1e-8)
    p64 = fastgen.fit_logistic(X32.astype(np.float64), y, l2=0.5, tol=1e-8)
    # float64 coefficients whatever X's dtype: the same fit as on the same values
    assert p32.coef.dtype == np.float64 and p32.intercept.dtype == np.float64
    np.testing.assert_allclose(p32.coef, p64.coef, rtol=1e-9, atol=1e-12)
    proba = fastgen.predict_proba(p32, X32)
    assert proba.dtype == np.float64
    np.testing.assert_allclose(proba, fastgen.predict_proba(p64, X32.astype(np.float64)),
                               rtol=0, atol=1e-12)


def test_no_intercept_matches_sklearn():
    X, y = _binary_data(n=300, d=3, seed=13)
    p = fastgen.fit_logistic(X, y, l2=1.0, fit_intercept=False, tol=TOL)
    sk = _sklearn(X, y, 1.0, fit_intercept=False)
    assert _rel(p.coef, sk.coef_) < 1e-6 and p.intercept[0] == 0


def test_deterministic_for_any_thread_count():
    X, y = _multi_data(n=3000, d=5, K=3, seed=14)
    Xb, yb = _binary_data(n=3000, d=5, seed=14)
    saved = numba.get_num_threads()
    out = []
    try:
        for t in (1, min(2, numba.config.NUMBA_NUM_THREADS)):
            numba.set_num_threads(t)
            out.append((fastgen.fit_logistic(X, y, l2=0.1, tol=TOL),
                        fastgen.fit_logistic(Xb, yb, tol=TOL)))
    finally:
        numba.set_num_threads(saved)
    for a, b in zip(out[0], out[1]):
        np.testing.assert_array_equal(a.coef, b.coef)
        np.testing.assert_array_equal(a.intercept, b.intercept)


# --------------------------------------------------------------------------- irls_step, init


def test_irls_step_iterates_to_the_fit():
    X, y = _binary_data(n=300, d=3, seed=15)
    full = fastgen.fit_logistic(X, y, l2=0.5, tol=TOL)
    with pytest.warns(fastgen.ConvergenceWarning, match="max_iter=0"):
        p = fastgen.fit_logistic(X, y, l2=0.5, max_iter=0)
    assert p.n_iter == 0
    for _ in range(full.n_iter + 2):
        p = fastgen.irls_step(p, X, y, l2=0.5)
    assert p.converged
    np.testing.assert_allclose(p.coef, full.coef, rtol=1e-9)
    # one step from the start equals fit_logistic with max_iter=1
    with pytest.warns(fastgen.ConvergenceWarning):
        p0 = fastgen.fit_logistic(X, y, l2=0.5, max_iter=0)
        p1 = fastgen.fit_logistic(X, y, l2=0.5, max_iter=1)
    np.testing.assert_array_equal(fastgen.irls_step(p0, X, y, l2=0.5).coef, p1.coef)


def test_init_warm_start_converges_immediately():
    X, y = _multi_data(n=300, d=3, K=3, seed=16)
    p = fastgen.fit_logistic(X, y, l2=0.2, tol=TOL)
    q = fastgen.fit_logistic(X, y, l2=0.2, tol=TOL, init=p)
    assert q.n_iter <= 1
    np.testing.assert_allclose(q.coef, p.coef, rtol=1e-9, atol=1e-12)


# --------------------------------------------------------------------------- separation


@pytest.mark.parametrize("K", [2, 3])
def test_separable_data_warns_with_finite_coefficients(K):
    rng = np.random.default_rng(17)
    y = np.arange(60) % K
    X = rng.normal(size=(60, 2)) + 10.0 * np.eye(K, 2)[y]
    with pytest.warns(fastgen.ConvergenceWarning, match="separable"):
        p = fastgen.fit_logistic(X, y)
    assert not p.converged
    assert np.all(np.isfinite(p.coef)) and np.all(np.isfinite(p.intercept))
    np.testing.assert_array_equal(fastgen.predict(p, X), y)
    # with a penalty the same data has a unique solution
    assert fastgen.fit_logistic(X, y, l2=1.0).converged


def test_huge_linear_predictors_do_not_overflow():
    X, y = _binary_data(n=100, d=2, seed=18)
    p = fastgen.fit_logistic(X, y, l2=1.0)
    Xbig = X * 1e6
    pr = fastgen.predict_proba(p, Xbig)
    lp = fastgen.predict_log_proba(p, Xbig)
    assert np.all(np.isfinite(pr)) and np.all(lp <= 0) and not np.any(np.isnan(lp))


# --------------------------------------------------------------------------- bad inputs

_BAD = [
    (lambda X, y, w: dict(X=X, y=y[:-1]), "y has"),
    (lambda X, y, w: dict(X=X, y=np.zeros_like(y)), "distinct class"),
    (lambda X, y, w: dict(X=X, y=y, l2=-1.0), "l2 must be >="),
    (lambda X, y, w: dict(X=X, y=y, l2=np.nan), "l2 must be finite"),
    (lambda X, y, w: dict(X=X, y=y, tol=0.0), "tol must be >"),
    (lambda X, y, w: dict(X=X, y=y, max_iter=-1), "max_iter must be >= 0"),
    (lambda X, y, w: dict(X=X, y=y, max_iter=2.5), "max_iter must be a non-negative integer"),
    (lambda X, y, w: dict(X=X, y=y, fit_intercept="yes"), "fit_intercept must be"),
    (lambda X, y, w: dict(X=X, y=y, sample_weight=-w), "sample_weight contains a negative"),
    (lambda X, y, w: dict(X=X, y=y, sample_weight=w[:3]), "sample_weight must have shape"),
    (lambda X, y, w: dict(X=X[:, 0], y=y), "X must be 2-D"),
    (lambda X, y, w: dict(X=np.where(np.arange(X.size).reshape(X.shape) == 7, np.nan, X), y=y),
     "X contains NaN at row 2, column 1"),
    (lambda X, y, w: dict(X=X, y=y, init=(np.zeros((1, 9)), np.zeros(1))), "init must have"),
    (lambda X, y, w: dict(X=X, y=y, init="zeros"), "init must be None"),
]


@pytest.mark.parametrize("make, match", _BAD)
def test_bad_inputs_raise_and_leave_arrays_unchanged(make, match):
    X, y = _binary_data(n=40, d=3, seed=19)
    w = np.ones(40)
    kw = make(X, y, w)
    before = {k: v.copy() for k, v in kw.items() if isinstance(v, np.ndarray)}
    with pytest.raises(ValueError, match=match):
        fastgen.fit_logistic(**kw)
    for k, v in before.items():
        np.testing.assert_array_equal(kw[k], v)


def test_bad_inputs_to_irls_step_and_scoring():
    X, y = _binary_data(n=40, d=3, seed=20)
    p = fastgen.fit_logistic(X, y, l2=1.0)
    Xc = X.copy()
    with pytest.raises(ValueError, match="params must be a LogisticParams"):
        fastgen.irls_step("p", X, y)
    with pytest.raises(ValueError, match="y has classes"):
        fastgen.irls_step(p, X, y + 5)
    with pytest.raises(ValueError, match="X has 2 features, but the model was fitted with 3"):
        fastgen.predict_proba(p, X[:, :2])
    np.testing.assert_array_equal(X, Xc)


# --------------------------------------------------------------------------- io, numba


def test_save_load_round_trip(tmp_path):
    X, y = _multi_data(n=200, d=3, K=3, seed=21)
    labels = np.array(["a", "b", "c"])[y]
    p = fastgen.fit_logistic(X, labels, l2=0.3)
    fastgen.save_params(tmp_path / "m.npz", p)
    q = fastgen.load_params(tmp_path / "m.npz")
    assert isinstance(q, fastgen.LogisticParams)
    for name in ("coef", "intercept", "objective_history", "step_size_history"):
        np.testing.assert_array_equal(getattr(q, name), getattr(p, name))
    assert (q.solver, q.n_iter, q.parametrization) == (p.solver, p.n_iter, p.parametrization)
    np.testing.assert_array_equal(fastgen.predict(q, X), fastgen.predict(p, X))


def test_kernel_callable_from_user_njit():
    X, y = _binary_data(n=100, d=3, seed=22)
    y32 = y.astype(np.int32)

    @numba.njit
    def user_newton(X, y):
        beta = np.zeros(X.shape[1] + 1)
        bounds = np.array([0, X.shape[0]], dtype=np.int64)
        for _ in range(25):
            _, g, H, _ = kirls.binary_loss_grad_hess(X, y, np.empty(0), beta, True, bounds, 64,
                                                     True, np.empty(0))
            beta = beta - np.linalg.solve(H, g)
        return beta

    with fastgen._runtime.blas_single_thread():
        beta = user_newton(X, y32)
    p = fastgen.fit_logistic(X, y, tol=TOL)
    np.testing.assert_allclose(beta[:-1], p.coef[0], rtol=1e-8)


# --------------------------------------------------------------------------- the GDA link


def test_logistic_approaches_lda_discriminant_as_n_grows():
    """Two Gaussians with a shared covariance: the posterior is exactly logistic, so
    both estimators converge to the same (w₁ − w₀, b₁ − b₀) at rate 1/√n."""
    if not hasattr(fastgen, "linear_discriminant"):
        pytest.skip("GDA (fastgen.fit_gda / linear_discriminant) not available")
    rng = np.random.default_rng(23)
    d = 3
    L = np.array([[1.0, 0, 0], [0.5, 1.0, 0], [-0.3, 0.2, 0.8]])
    mu = np.array([[0.0, 0.0, 0.0], [1.0, -0.5, 0.5]])
    errors = []
    for n in (1_000, 100_000):
        y = (rng.random(n) < 0.4).astype(np.int64)
        X = mu[y] + rng.normal(size=(n, d)) @ L.T
        lr = fastgen.fit_logistic(X, y, tol=TOL)
        W, b = fastgen.linear_discriminant(fastgen.fit_gda(X, y, covariance="pooled"))
        target = np.r_[W[:, 1] - W[:, 0], b[1] - b[0]]
        err = np.max(np.abs(np.r_[lr.coef[0], lr.intercept] - target)) / np.max(np.abs(target))
        assert err < 8.0 / np.sqrt(n)
        errors.append(err)
    assert errors[1] < errors[0]


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_multinomial_tiles_of_wide_data_match_oracle(fit_intercept):
    """The dense multinomial loss kernel goes in tiles of rows: partial tiles, wide rows,
    zero weights and no intercept column still give the oracle's loss, gradient,
    probabilities and Hessian-vector product."""
    rng = np.random.default_rng(12)
    n, d, K = 150, 300, 3
    assert n > kirls.TILE_ROWS  # several tiles, the last one partial
    X = rng.normal(size=(n, d)) / np.sqrt(d)
    y = np.arange(n) % K
    w = rng.uniform(0.0, 2.0, n)
    w[::5] = 0.0
    p = d + 1 if fit_intercept else d
    B = rng.normal(size=(K, p))
    V = rng.normal(size=(K, p))
    bounds = np.array([0, 11, n], dtype=np.int64)
    P = np.empty((n, K))
    loss, G, _ = kirls.multinomial_loss_grad(X, y.astype(np.int32), w, B, fit_intercept,
                                             bounds, P)
    HV = kirls.multinomial_hessp(X, w, P, V, fit_intercept, bounds)
    Xt = np.hstack([X, np.ones((n, 1))]) if fit_intercept else X
    eta = Xt @ B.T
    lse = np.log(np.exp(eta - eta.max(1, keepdims=True)).sum(1)) + eta.max(1)
    Pr = np.exp(eta - lse[:, None])
    Y = np.eye(K)[y]
    np.testing.assert_allclose(loss, np.sum(w * (lse - eta[np.arange(n), y])), rtol=1e-12)
    np.testing.assert_allclose(G, ((w[:, None] * (Pr - Y)).T @ Xt), rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(P, Pr, rtol=1e-12, atol=1e-15)
    U = Xt @ V.T
    C = w[:, None] * Pr * (U - (Pr * U).sum(1, keepdims=True))
    np.testing.assert_allclose(HV, C.T @ Xt, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_design_gram_matches_numpy_dense_and_csr(fit_intercept):
    """The Böhning preconditioner's X̃ᵀ diag(w) X̃, dense (its own SYRK kernel) and CSR
    (4x the binary Hessian at 0), weighted and unweighted, against numpy."""
    from fastgen.logistic.data import InMemoryData

    rng = np.random.default_rng(13)
    n, d = 700, 5
    X = rng.normal(size=(n, d))
    X[X < -0.8] = 0.0
    y = (np.arange(n) % 3).astype(np.int32)
    Xt = np.hstack([X, np.ones((n, 1))]) if fit_intercept else X
    for w in (np.empty(0), rng.uniform(0.0, 3.0, n)):
        want = Xt.T @ ((w if w.shape[0] else np.ones(n))[:, None] * Xt)
        for A in (X, sp.csr_matrix(X)):
            got = InMemoryData(A, y, w, fit_intercept).design_gram()
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
            if A is X:  # the dense kernel mirrors its upper triangle
                np.testing.assert_array_equal(got, got.T)


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("d,K", [(1, 4), (3, 4), (4, 4), (6, 4), (16, 4), (27, 5), (33, 5),
                                 (50, 8), (64, 3)])
def test_transposed_tiles_match_numpy(d, K, fit_intercept):
    """The multinomial loss, gradient, probabilities and Hessian-vector product by
    transposed tiles (four coefficients per sweep, so every remainder p mod 4 occurs
    above; both tile sizes; the last case's product goes row by row): partial tiles,
    zero weights, groups that start mid-tile and no intercept column, weighted and
    unweighted, against numpy."""
    rng = np.random.default_rng(d)
    p = d + 1 if fit_intercept else d
    assert p <= kirls.LOSS_TILE_MAX_P
    assert kirls.hessp_by_tiles(p, K) == (d != 64)
    n = 2 * ktiles.XT_TILE_ROWS + 37
    X = rng.normal(size=(n, d))
    y = rng.integers(0, K, n)
    w = rng.uniform(0.0, 2.0, n)
    w[::7] = 0.0
    B = rng.normal(size=(K, p)) / np.sqrt(p)
    V = rng.normal(size=(K, p))
    bounds = np.array([0, 5, ktiles.XT_TILE_ROWS + 3, n], dtype=np.int64)
    Xt = np.hstack([X, np.ones((n, 1))]) if fit_intercept else X
    eta = Xt @ B.T
    lse = np.log(np.exp(eta - eta.max(1, keepdims=True)).sum(1)) + eta.max(1)
    Pr = np.exp(eta - lse[:, None])
    Y = np.eye(K)[y]
    U = Xt @ V.T
    for wk in (w, np.empty(0)):
        we = wk if wk.size else np.ones(n)
        P = np.full((n, K), np.nan)
        loss, G, emax = kirls.multinomial_loss_grad(X, y.astype(np.int32), wk, B,
                                                    fit_intercept, bounds, P)
        np.testing.assert_allclose(loss, np.sum(we * (lse - eta[np.arange(n), y])),
                                   rtol=1e-12)
        np.testing.assert_allclose(G, (we[:, None] * (Pr - Y)).T @ Xt, rtol=1e-11,
                                   atol=1e-11)
        np.testing.assert_allclose(P, Pr, rtol=1e-12, atol=1e-15)
        rng_ = eta.max(1) - eta.min(1)
        assert emax == pytest.approx(rng_[we > 0].max(), rel=1e-12)
        HV = kirls.multinomial_hessp(X, wk, P, V, fit_intercept, bounds)
        C = we[:, None] * Pr * (U - (Pr * U).sum(1, keepdims=True))
        np.testing.assert_allclose(HV, C.T @ Xt, rtol=1e-11, atol=1e-11)


@pytest.mark.parametrize("d", [3, 40, 70])
def test_multinomial_posteriors_by_tiles_match_numpy(d):
    """Multinomial predict_proba / predict_log_proba (by transposed tiles for C-ordered
    float64 X with d ≤ LINEAR_TILE_MAX_D; the BLAS path for d = 70 and for F-ordered X)
    against numpy's softmax of the linear predictor."""
    from scipy.special import log_softmax, softmax

    rng = np.random.default_rng(d)
    n, K = 2 * 8192 + 77, 4
    X = rng.normal(size=(n, d))
    y = rng.integers(0, K, n)
    m = fastgen.fit_logistic(X, y, l2=1.0)
    eta = X @ m.coef.T + m.intercept
    for A in (X, np.asfortranarray(X)):
        np.testing.assert_allclose(fastgen.predict_proba(m, A), softmax(eta, axis=1),
                                   rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(fastgen.predict_log_proba(m, A), log_softmax(eta, axis=1),
                                   rtol=1e-12, atol=1e-13)
    assert (fastgen.predict(m, X) == np.argmax(eta, axis=1)).all()


@pytest.mark.parametrize("K", [2, 3])
@pytest.mark.parametrize("d", [5, 70])  # tiled posteriors (d ≤ 64) and the BLAS path
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
def test_scoring_finds_nonfinite_X_without_a_scan(K, d, sparse, value):
    """Scoring skips the up-front scan of X (``checks_finite_scores``): a NaN or an
    infinity still gets the named error from every scoring function, in a column whose
    coefficients are zero too (0·inf is NaN), and X is left as it was."""
    import scipy.sparse as sps

    rng = np.random.default_rng(7)
    X = rng.normal(size=(300, d))
    y = rng.integers(0, K, 300)
    m = fastgen.fit_logistic(X, y, l2=1.0)
    coef = np.array(m.coef)
    coef[:, 2] = 0.0  # column 2 carries no weight
    m0 = dataclasses.replace(m, coef=coef)
    for model, col in ((m, 1), (m0, 2)):
        bad = X.copy()
        bad[17, col] = value
        Xin = sps.csr_matrix(bad) if sparse else bad
        before = bad.copy()
        what = "NaN" if np.isnan(value) else "infinity"
        for f in (fastgen.predict_proba, fastgen.predict_log_proba, fastgen.predict,
                  fastgen.joint_log_likelihood):
            with pytest.raises(ValueError, match=f"X contains {what} at row 17, column {col}"):
                f(model, Xin)
        np.testing.assert_array_equal(bad, before)


def test_scoring_finite_X_whose_linear_predictor_overflows():
    """Finite X with an overflowing linear predictor raises the 'rescale' error that GDA
    and naive Bayes raise (issue 29 §6; it used to be scored), naming the row."""
    rng = np.random.default_rng(8)
    X = rng.normal(size=(200, 3))
    y = (X[:, 0] > 0).astype(int)
    m = fastgen.fit_logistic(X, y, l2=1.0)
    Xb = X.copy()
    Xb[5, 0] = 1e308 * np.sign(m.coef[0, 0])
    for f in (fastgen.predict_proba, fastgen.predict):
        with pytest.raises(ValueError, match=r"overflows float64 at row 5 .*; rescale"):
            f(m, Xb)

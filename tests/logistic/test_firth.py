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
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        res = fastgen.logistic_inference(m, X, y, ci="profile")
    # on the separated data, fits with one coefficient fixed can reach several maxima
    assert all("several maxima" in str(w.message) for w in rec) and not (case == 0 and rec)
    f, ci = reference(X, y)
    perm = np.r_[np.arange(1, X.shape[1] + 1), 0]  # firthmodels: intercept last
    assert rel(np.r_[m.coef[0], m.intercept], np.r_[f.coef_, f.intercept_]) < 1e-6
    assert abs(res.llf - f.loglik_) < 1e-8 * abs(f.loglik_)
    if case == 2:
        # firthmodels' upper bound of x1 (38.28) is where the constrained maximum it
        # follows crosses the quantile; a higher constrained maximum there puts the
        # statistic at 3.20, and the profile (the highest) crosses at 45.69
        # (tests/logistic/test_firth_optima.py checks the bounds against scipy)
        assert res.profile_ci[1, 1] == pytest.approx(45.6869, abs=1e-3)
        ci[0, 1] = res.profile_ci[1, 1]
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
    with pytest.raises(ValueError, match="binary"):  # multinomial Firth: no correction
        fastgen.fit_logistic(X, y, penalty="firth", correction="flic")
    with pytest.raises(ValueError, match="penalty"):
        fastgen.fit_logistic(X, y % 2, penalty="lasso")
    with pytest.raises(ValueError, match="penalty"):
        fastgen.fit_logistic(X, y % 2, penalty="firth", l2=1.0)
    m = fastgen.fit_logistic(cases()[0][0], cases()[0][1], penalty="firth")
    with pytest.raises(ValueError, match="nonrobust"):
        fastgen.logistic_inference(m, *cases()[0], cov_type="HC0")


def _counting(monkeypatch, method):
    """Count the calls of ``firth._Penalised.<method>`` (in ``calls["n"]``)."""
    from fastgen.logistic import firth

    calls = {"n": 0}
    original = getattr(firth._Penalised, method)

    def counting(self, *args):
        calls["n"] += 1
        return original(self, *args)

    monkeypatch.setattr(firth._Penalised, method, counting)
    return calls


def test_newton_stops_without_wasted_evaluations(monkeypatch):
    """A converged Newton run stops on its own predicted step: no extra point, and no
    step-halving cascade at rounding level (which once made profile intervals cost
    thousands of passes over X)."""
    calls = _counting(monkeypatch, "evaluate")
    X, y = cases()[0]
    m = fastgen.fit_logistic(X, y, penalty="firth")
    # the start, one point per accepted step and one per halving, and no more
    halvings = int(np.sum(np.round(-np.log2(m.step_size_history))))
    assert calls["n"] == m.n_iter + 1 + halvings
    calls["n"] = 0
    res = fastgen.logistic_inference(m, X, y, ci="profile")
    p = X.shape[1] + 1
    # 2 bounds + 1 LR refit per coefficient, each root search a few constrained Newton
    # runs of under ten steps (about 350 evaluations here; the halving cascade took 28,000)
    assert calls["n"] < 150 * p, calls["n"]
    f, ci = reference(X, y)
    perm = np.r_[np.arange(1, X.shape[1] + 1), 0]
    assert rel(res.profile_ci[perm], ci) < 1e-4


def _large_case(n=8000, seed=5):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = (0.8 * X[:, 0] - 0.5 * X[:, 1] + rng.logistic(size=n) > 0.3).astype(int)
    return X, y


def _count_full_passes(monkeypatch, n):
    """Count evaluations over all n rows (the subsample start makes smaller ones)."""
    from fastgen.logistic import firth

    calls = {"full": 0, "sub": 0}
    evaluate = firth._Penalised.evaluate

    def counting(self, beta):
        calls["full" if self.data.n == n else "sub"] += 1
        return evaluate(self, beta)

    monkeypatch.setattr(firth._Penalised, "evaluate", counting)
    return calls


@pytest.mark.parametrize("kind", ["dense", "csr", "weighted", "sorted"])
def test_subsample_start_reaches_the_same_estimate(monkeypatch, kind):
    """Large fits start from the fit on every 20th row: same estimate as the cold start
    (and as firthmodels), in fewer passes over all rows."""
    from fastgen.logistic import firth

    X, y = _large_case()
    w = None
    if kind == "sorted":  # rows sorted by class: the stride still samples both
        order = np.argsort(y, kind="stable")
        X, y = X[order], y[order]
    if kind == "weighted":
        w = np.random.default_rng(1).integers(1, 4, y.shape[0]).astype(float)
    Xf = sp.csr_matrix(X) if kind == "csr" else X
    calls = _count_full_passes(monkeypatch, y.shape[0])
    # tol=1e-12: both estimates at the optimum to rounding, so they must agree closely
    warm = fastgen.fit_logistic(Xf, y, penalty="firth", sample_weight=w, tol=1e-12)
    warm_calls = dict(calls)
    assert warm_calls["sub"] > 0
    monkeypatch.setattr(firth, "WARM_START_STRIDE", 10**9)
    calls["full"] = calls["sub"] = 0
    cold = fastgen.fit_logistic(Xf, y, penalty="firth", sample_weight=w, tol=1e-12)
    assert calls["sub"] == 0
    assert warm.converged and cold.converged
    assert rel(np.r_[warm.coef[0], warm.intercept], np.r_[cold.coef[0], cold.intercept]) < 1e-11
    assert warm_calls["full"] < calls["full"]
    assert warm.n_iter < cold.n_iter
    f, _ = reference(X, y, w)
    assert rel(np.r_[warm.coef[0], warm.intercept], np.r_[f.coef_, f.intercept_]) < 1e-6


def test_subsample_correction_stands_in_for_the_first_hat_pass(monkeypatch):
    """The first full-data Newton step uses the subsample's score correction: at least
    one hat pass fewer than evaluations over all rows, and the same estimate."""
    from fastgen.logistic import firth

    X, y = _large_case()
    n = y.shape[0]
    calls = _count_full_passes(monkeypatch, n)
    hats = {"full": 0}
    modified_score = firth._Penalised.modified_score

    def counting(self, st):
        if self.data.n == n:
            hats["full"] += 1
        return modified_score(self, st)

    monkeypatch.setattr(firth._Penalised, "modified_score", counting)
    m = fastgen.fit_logistic(X, y, penalty="firth", tol=1e-12)
    assert m.converged and calls["sub"] > 0
    # the first step's hat pass is the subsample's (the certifying step's, the
    # certified point's)
    assert hats["full"] <= calls["full"] - 1
    f, _ = reference(X, y)
    assert rel(np.r_[m.coef[0], m.intercept], np.r_[f.coef_, f.intercept_]) < 1e-6


@pytest.mark.parametrize("scale", [1e-3, 1e2, 1e6])
def test_misleading_stand_in_correction_is_recovered(scale):
    """A stand-in correction far from the true one (none is that far in practice) costs
    steps, never the estimate: it never decides convergence, and without ascent the
    exact correction replaces it."""
    from fastgen.logistic import firth
    from fastgen.logistic.inference import InferenceData

    X, y = _large_case(n=3000)
    codes = y.astype(np.int32)
    w = np.empty(0)
    data = InferenceData(X, True)
    beta0 = np.zeros(3)
    free = np.arange(3)
    ref = firth._newton(firth._Penalised(data, codes, w, 0.5), beta0, free, 100, 1e-12,
                        3000.0)
    c0 = scale * np.random.default_rng(3).normal(size=3)
    got = firth._newton(firth._Penalised(data, codes, w, 0.5), beta0, free, 100, 1e-12,
                        3000.0, c0)
    assert ref[2] and got[2]
    assert rel(got[0].beta, ref[0].beta) < 1e-11


def test_subsample_start_falls_back(monkeypatch):
    """A subsample without both classes, or with a constant column, gives the usual
    start (no error, same estimate)."""
    X, y = _large_case()
    n = y.shape[0]
    calls = _count_full_passes(monkeypatch, n)
    # class 1 only off the stride: the subsample has one class
    y1 = np.zeros(n, dtype=int)
    y1[1::7] = 1
    y1[::20] = 0
    m = fastgen.fit_logistic(X, y1, penalty="firth")
    assert calls["sub"] == 0 and m.converged
    # a column zero on every 20th row: its information is singular on the subsample
    Xc = np.column_stack([X, (np.arange(n) % 20 == 3).astype(float)])
    calls["full"] = calls["sub"] = 0
    m = fastgen.fit_logistic(Xc, y, penalty="firth")
    assert calls["sub"] == 1 and m.converged
    f, _ = reference(Xc, y)
    assert rel(np.r_[m.coef[0], m.intercept], np.r_[f.coef_, f.intercept_]) < 1e-6


@pytest.mark.parametrize("kind", ["dense", "csr", "weighted"])
@pytest.mark.usefixtures("kernel_path")  # the spy watches the kernels' InferenceData
def test_firth_params_hold_only_their_fields_and_inference_makes_its_own_pass(
        monkeypatch, kind):
    """A Firth fit's params carry nothing besides their dataclass fields (no record of
    the fit's last pass), and logistic_inference makes one full pass of its own: the
    fit and a fresh copy of it give the same results, bit for bit."""
    import dataclasses

    from fastgen.logistic.inference import InferenceData

    X, y = _large_case(n=6000)
    w = np.random.default_rng(2).integers(1, 4, y.shape[0]).astype(float) \
        if kind == "weighted" else None
    conv = sp.csr_matrix if kind == "csr" else np.asarray
    m = fastgen.fit_logistic(conv(X), y, penalty="firth", sample_weight=w)
    assert set(vars(m)) == {f.name for f in dataclasses.fields(m)}
    seen = []
    inference_pass = InferenceData.inference_pass

    def spy(self, codes, w_, B, want_meat, want_r, want_info=True):
        seen.append(want_info)
        return inference_pass(self, codes, w_, B, want_meat, want_r, want_info)

    monkeypatch.setattr(InferenceData, "inference_pass", spy)
    got = fastgen.logistic_inference(m, conv(X), y, sample_weight=w)
    assert seen == [True]
    ref = fastgen.logistic_inference(dataclasses.replace(m), conv(X), y, sample_weight=w)
    for name in ("params", "bse", "pvalues", "cov_params"):
        np.testing.assert_array_equal(getattr(got, name), getattr(ref, name))
    assert got.llf == ref.llf


def _numpy_modified_score(Xt, y, beta, s):
    """U*(β) by a plain-numpy transcription of the module docstring's formula."""
    eta = Xt @ beta
    pi = expit(eta)
    w = s * pi * expit(-eta)
    info = Xt.T @ (w[:, None] * Xt)
    h = w * np.einsum("ij,ji->i", Xt, np.linalg.solve(info, Xt.T))
    return Xt.T @ (s * (y - pi) + h * (0.5 - pi))


@pytest.mark.parametrize("kind", ["dense", "csr", "weighted", "no_intercept"])
def test_curvature_is_the_hessian_of_the_penalised_loglik(kind):
    """The penalty's own curvature (taken when Fisher scoring converges slowly) is
    −∂U*/∂β: central differences of a plain-numpy U*, away from and near separation."""
    from fastgen._validation import check_y
    from fastgen.logistic import firth
    from fastgen.logistic.inference import InferenceData

    rng = np.random.default_rng(4)
    n, d = 3000, 4  # over one chunk of the pass (p = 5: 3855 rows)
    X = rng.normal(size=(n, d))
    X[np.abs(X) < 0.3] = 0.0
    y = (X[:, 0] - X[:, 2] + rng.logistic(size=n) > 0).astype(int)
    fi = kind != "no_intercept"
    s = rng.integers(1, 4, n).astype(float) if kind == "weighted" else np.ones(n)
    w = s if kind == "weighted" else np.empty(0)
    Xt = np.column_stack([X, np.ones(n)]) if fi else X
    _, codes = check_y(y, n)
    obj = firth._Penalised(InferenceData(sp.csr_matrix(X) if kind == "csr" else X, fi),
                           codes, w, 0.5)
    monkey_chunk = firth._CURVATURE_CHUNK_BYTES
    try:
        firth._CURVATURE_CHUNK_BYTES = 8 * 700 * 25  # several chunks, a short last one
        for scale in (0.3, 4.0):  # π mostly near ½; then most within 0.02 of 0 or 1
            beta = scale * rng.normal(size=Xt.shape[1])
            st = obj.evaluate(beta)
            obj.modified_score(st)
            J = obj.curvature(st)
            h = 1e-5
            num = np.empty_like(J)
            for k in range(beta.shape[0]):
                e = np.zeros_like(beta)
                e[k] = h
                num[:, k] = -(_numpy_modified_score(Xt, y, beta + e, s)
                              - _numpy_modified_score(Xt, y, beta - e, s)) / (2 * h)
            assert rel(J, num) < 1e-7, (scale, rel(J, num))
            assert np.allclose(J, J.T, rtol=1e-12, atol=0)
    finally:
        firth._CURVATURE_CHUNK_BYTES = monkey_chunk


def _standardised(name):
    from sklearn import datasets

    X, y = getattr(datasets, f"load_{name}")(return_X_y=True)
    return (X - X.mean(0)) / X.std(0), (y == 0).astype(int)


@pytest.mark.parametrize("name", ["wine", "breast_cancer"])
def test_separated_real_data_converges(monkeypatch, name):
    """Standardised wine (class 0 against the rest) and breast cancer are separated:
    Fisher scoring alone stopped at max|U*|/Σw = 8.6e-6 and 1.8e-7 after 100 steps.
    With l*'s own Hessian the fit converges in a few steps more than the switch, to
    firthmodels' estimate after its 600 and 64 Fisher-scoring steps on wine.  On breast
    cancer l* has several maxima: the ridge start reaches a higher one (-24.92) than
    zero, where firthmodels stops (-27.40); the fit warns and returns the higher."""
    X, y = _standardised(name)
    used = _counting(monkeypatch, "curvature")
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        m = fastgen.fit_logistic(X, y, penalty="firth")
    assert [("several local maxima" in str(w.message)) for w in rec] == (
        [True] if name == "breast_cancer" else [])
    assert m.converged and m.n_iter <= 25 and used["n"] > 0
    beta = np.r_[m.coef[0], m.intercept]
    U = _numpy_modified_score(np.column_stack([X, np.ones(len(y))]), y, beta,
                              np.ones(len(y)))
    assert np.max(np.abs(U)) / len(y) < 1e-8
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f = firthmodels.FirthLogisticRegression(backend="numpy", gtol=1e-12, xtol=1e-12,
                                                max_iter=2000).fit(X, y)
    if name == "wine":
        assert rel(beta, np.r_[f.coef_, f.intercept_]) < 1e-5
    else:
        assert f.loglik_ == pytest.approx(-27.4044, abs=1e-4)
        assert m.objective_history[-1] == pytest.approx(24.9218, abs=1e-4)


def test_fisher_scoring_needs_no_curvature_on_ordinary_data(monkeypatch):
    """Rows ≫ coefficients and no separation: I is l*'s Hessian but for O(p/n), the
    steps shrink fast and the curvature pass is never made, in the fit or the profile;
    on separated data it is, and the profile's constrained fits then take it from the
    start."""
    used = _counting(monkeypatch, "curvature")
    X, y = _large_case(n=4000)
    m = fastgen.fit_logistic(X, y, penalty="firth")
    fastgen.logistic_inference(m, X, y, ci="profile")
    assert m.converged and used["n"] == 0
    X, y = cases()[2]
    m = fastgen.fit_logistic(X, y, penalty="firth")
    assert m.converged and used["n"] > 0


def test_curvature_that_is_not_negative_definite_falls_back(monkeypatch):
    """Where l* is not concave the Newton matrix is I again: the same estimate."""
    from fastgen.logistic import firth

    X, y = _standardised("wine")
    ref = fastgen.fit_logistic(X, y, penalty="firth")
    monkeypatch.setattr(firth._Penalised, "curvature", lambda self, st: -st.H)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fastgen.ConvergenceWarning)
        m = fastgen.fit_logistic(X, y, penalty="firth", max_iter=3000)
    assert m.n_iter > 100
    assert rel(m.coef, ref.coef) < 1e-5


@pytest.mark.parametrize("p", [1, 2, 3, 6, 7])
def test_packed_products_match_numpy(p):
    """The curvature pass's product G += P @ AX, P's rows the packed upper triangles of
    z_i z_iᵀ (√2 off the diagonal), against a numpy transcription, for odd and even p
    (the kernel pairs triangle rows j and p − 1 − j)."""
    from fastgen.kernels.inference import firth_packed_products

    rng = np.random.default_rng(p)
    rows, q = 37, p + 2
    ZT = rng.normal(size=(p, rows))
    AX = rng.normal(size=(rows, q))
    G0 = rng.normal(size=(p * (p + 1) // 2, q))
    P = np.array([ZT[j] * ZT[k] * (1.0 if k == j else np.sqrt(2.0))
                  for j in range(p) for k in range(j, p)])
    G = G0.copy()
    firth_packed_products(ZT, AX, G)
    np.testing.assert_allclose(G, G0 + P @ AX, rtol=1e-13, atol=1e-13)

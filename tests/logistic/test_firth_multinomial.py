"""Multinomial bias reduction: ``fit_logistic(X, y, penalty="firth")`` for K > 2.

References: values recorded from R's ``brglm2::brmultinom(type = "AS_mean")``
(tests/data/brmultinom/make.R), an independent numpy/scipy maximiser of
l(β) + ½ log det I(β) (its gradient from the trace formula tr(I⁻¹ ∂I/∂β_r), a
derivation independent of fastgen's), and finite differences of l*.
"""

import pathlib
import warnings

import numpy as np
import pytest
import scipy.optimize
import scipy.sparse as sp
import scipy.stats

import fastgen

DATA = pathlib.Path(__file__).resolve().parents[1] / "data" / "brmultinom"


# --------------------------------------------------------------------------- reference


def _design(X, fit_intercept=True):
    return np.column_stack([X, np.ones(X.shape[0])]) if fit_intercept else X


def _probs(beta, Xt, K):
    p = Xt.shape[1]
    B = np.vstack([np.zeros(p), beta.reshape(K - 1, p)])
    eta = Xt @ B.T
    eta -= eta.max(axis=1, keepdims=True)
    logP = eta - np.log(np.exp(eta).sum(axis=1, keepdims=True))
    return logP


def _information(P, Xt, w):
    """I and the per-row (m × m) weights V_i = diag π − ππᵀ (classes 1..K−1)."""
    m = P.shape[1] - 1
    p = Xt.shape[1]
    pi = P[:, 1:]
    I = np.zeros((m * p, m * p))
    for k in range(m):
        for l in range(m):
            c = w * pi[:, k] * ((k == l) - pi[:, l])
            I[k * p:(k + 1) * p, l * p:(l + 1) * p] = (Xt * c[:, None]).T @ Xt
    return I


def lstar(beta, X, y, w, K, fit_intercept=True):
    Xt = _design(X, fit_intercept)
    logP = _probs(beta, Xt, K)
    ll = float(np.sum(w * logP[np.arange(len(y)), y]))
    _, logdet = np.linalg.slogdet(_information(np.exp(logP), Xt, w))
    return ll + 0.5 * logdet


def lstar_grad(beta, X, y, w, K, fit_intercept=True):
    """U + ½ tr(I⁻¹ ∂I/∂β_r), with ∂I/∂β_(l,b) formed explicitly for every r."""
    Xt = _design(X, fit_intercept)
    n, p = Xt.shape
    m = K - 1
    P = np.exp(_probs(beta, Xt, K))
    pi = P[:, 1:]
    Y = np.zeros((n, K))
    Y[np.arange(n), y] = 1.0
    U = ((w[:, None] * (Y[:, 1:] - pi)).T @ Xt).ravel()
    Iinv = np.linalg.inv(_information(P, Xt, w))
    g = np.empty(m * p)
    for l in range(m):
        # dπ_k/dη_l = π_k(δ_kl − π_l)
        dpi = pi * ((np.arange(m) == l)[None, :] - pi[:, [l]])
        for b in range(p):
            dI = np.zeros((m * p, m * p))
            for k in range(m):
                for k2 in range(m):
                    dv = (dpi[:, k] * (k == k2) - dpi[:, k] * pi[:, k2]
                          - pi[:, k] * dpi[:, k2])
                    c = w * dv * Xt[:, b]
                    dI[k * p:(k + 1) * p, k2 * p:(k2 + 1) * p] = (Xt * c[:, None]).T @ Xt
            g[l * p + b] = 0.5 * np.sum(Iinv * dI.T)
    return U + g


def reference_fit(X, y, w, K, fit_intercept=True):
    """Maximise l* from zero: BFGS on the numpy l* and gradient, then a root of the
    gradient (hybr) to full precision."""
    p = X.shape[1] + (1 if fit_intercept else 0)
    args = (X, y, w, K, fit_intercept)
    r = scipy.optimize.minimize(lambda b: -lstar(b, *args), np.zeros((K - 1) * p),
                                jac=lambda b: -lstar_grad(b, *args), method="BFGS",
                                options={"gtol": 1e-9, "maxiter": 2000})
    s = scipy.optimize.root(lambda b: lstar_grad(b, *args), r.x, method="hybr",
                            options={"xtol": 1e-14})
    assert np.max(np.abs(lstar_grad(s.x, *args))) < 1e-8 * max(1.0, float(np.sum(w)))
    return s.x


def _ours(m):
    """Reference-layout coefficients (K−1, p), intercept last, flattened."""
    B = np.column_stack([m.coef, m.intercept]) if m.fit_intercept else m.coef
    assert np.all(B[0] == 0.0)
    return B[1:].ravel()


def rel(a, b):
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b))) / np.max(np.abs(b)))


def _random(seed, K, n=80, d=3, weighted=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * rng.uniform(0.5, 3.0, d)
    W = rng.normal(size=(d, K)) / X.std(axis=0)[:, None]
    eta = X @ W
    P = np.exp(eta - eta.max(axis=1, keepdims=True))
    P /= P.sum(axis=1, keepdims=True)
    y = (P.cumsum(axis=1) < rng.random((n, 1))).sum(axis=1)
    y[:K] = np.arange(K)  # every class present
    w = rng.integers(1, 4, n).astype(float) if weighted else np.ones(n)
    return X, y, w


def _separated(seed, K, n=15):
    """Complete separation: class k where x1 is in its own interval."""
    rng = np.random.default_rng(seed)
    x1 = np.concatenate([rng.uniform(2 * k, 2 * k + 1.5, n) for k in range(K)])
    X = np.column_stack([x1, rng.normal(size=K * n)])
    return X, np.repeat(np.arange(K), n), np.ones(K * n)


def _quasi(seed, K, n=15):
    """Quasi-complete separation: classes 0 and 1 share one point on the boundary."""
    X, y, w = _separated(seed, K, n)
    X[0, 0] = X[n, 0] = 1.75
    return X, y, w


# --------------------------------------------------------------------------- tests


def _read(name):
    d = np.genfromtxt(DATA / f"{name}_data.csv", delimiter=",", names=True)
    X = np.column_stack([d[c] for c in d.dtype.names if c.startswith("x")])
    coef = np.genfromtxt(DATA / f"{name}_coef.csv", delimiter=",", skip_header=1, ndmin=2)
    se = np.genfromtxt(DATA / f"{name}_se.csv", delimiter=",", skip_header=1, ndmin=2)
    # R: intercept first -> fastgen: intercept last
    return X, d["y"].astype(int), d["w"], np.roll(coef, -1, axis=1), np.roll(se, -1, axis=1)


@pytest.mark.parametrize("kind", ["dense", "csr", "float32"])
@pytest.mark.parametrize("name", ["alligators", "separated3", "quasi4"])
def test_matches_brglm2_brmultinom(name, kind):
    """Coefficients and Wald standard errors equal brmultinom(type = "AS_mean")'s to
    1e-6 relative: its published example (alligators), a completely separated and a
    quasi-separated data set with frequency weights, where no ML estimate exists."""
    X, y, w, coef, se = _read(name)
    Xf = sp.csr_matrix(X) if kind == "csr" else X.astype(np.float32) if kind == "float32" \
        else X
    m = fastgen.fit_logistic(Xf, y, penalty="firth", sample_weight=w, tol=1e-10)
    assert m.converged and m.solver == "firth" and m.parametrization == "reference"
    tol = 1e-6 if kind != "float32" else 1e-4
    assert rel(_ours(m), coef.ravel()) < tol
    res = fastgen.logistic_inference(m, Xf, y, sample_weight=w)
    assert res.method == "Firth"
    # statsmodels' layout (p, K−1), intercept first
    assert rel(res.bse.T, np.roll(se, 1, axis=1)) < (1e-6 if kind != "float32" else 1e-3)


def test_separated_data_have_no_ml_estimate_but_a_firth_one():
    """On the separated and quasi-separated sets the unpenalised fit warns of separation;
    the penalised one converges to finite values."""
    for name in ["separated3", "quasi4"]:
        X, y, w, coef, _ = _read(name)
        with pytest.warns(fastgen.PerfectSeparationWarning):
            fastgen.fit_logistic(X, y, sample_weight=w)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            m = fastgen.fit_logistic(X, y, penalty="firth", sample_weight=w)
        assert m.converged and np.all(np.isfinite(m.coef))


CASES = [("random", s, K, wt) for s, K, wt in [(0, 3, False), (1, 4, True), (2, 5, False)]]
CASES += [("separated", 3, 3, False), ("separated", 4, 4, False), ("quasi", 5, 3, False),
          ("quasi", 6, 4, False)]


def _case(kind, seed, K, weighted):
    if kind == "random":
        return _random(seed, K, weighted=weighted)
    return (_separated if kind == "separated" else _quasi)(seed, K)


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("kind,seed,K,weighted", CASES)
def test_matches_an_independent_maximiser(kind, seed, K, weighted, fit_intercept):
    """The estimate equals the numpy/scipy maximiser's to 1e-6 relative, and fastgen's
    penalised log-likelihood (logistic_inference's llf) is l* there."""
    X, y, w = _case(kind, seed, K, weighted)
    m = fastgen.fit_logistic(X, y, penalty="firth", sample_weight=w,
                             fit_intercept=fit_intercept, tol=1e-10)
    assert m.converged
    ref = reference_fit(X, y, w, K, fit_intercept)
    assert rel(_ours(m), ref) < 1e-6
    res = fastgen.logistic_inference(m, X, y, sample_weight=w)
    assert abs(res.llf - lstar(ref, X, y, w, K, fit_intercept)) < 1e-8 * abs(res.llf)


@pytest.mark.parametrize("seed", range(4))
def test_modified_score_is_the_gradient_of_lstar(seed):
    """At random coefficients, the objective's modified score equals the central
    difference of the numpy l* (and l* itself agrees)."""
    from fastgen.logistic.firth_multinomial import MultinomialPenalised
    from fastgen.logistic.inference.passes import InferenceData

    rng = np.random.default_rng(seed)
    K = 3 + seed % 3
    X, y, w = _random(seed, K, n=60, weighted=seed % 2 == 1)
    obj = MultinomialPenalised(InferenceData(X, True), y.astype(np.int32), w, 0.5, K)
    b = rng.normal(size=(K - 1) * (X.shape[1] + 1)) * 0.5
    st = obj.evaluate(b)
    U = obj.modified_score(st)
    assert abs(st.lstar - lstar(b, X, y, w, K)) < 1e-10 * abs(st.lstar)
    h = 1e-5
    num = np.array([(lstar(b + h * e, X, y, w, K) - lstar(b - h * e, X, y, w, K)) / (2 * h)
                    for e in np.eye(b.size)])
    assert np.max(np.abs(num - U)) < 1e-6 * max(1.0, np.max(np.abs(U)))
    assert np.max(np.abs(lstar_grad(b, X, y, w, K) - U)) < 1e-9 * max(1.0, np.max(np.abs(U)))


@pytest.mark.parametrize("K", [3, 4])
def test_weights_repeat_rows_csr_and_scale(K):
    """Integer weights give the fit of repeated rows; CSR the dense fit; rescaling a
    column rescales its coefficients and leaves the probabilities (units)."""
    X, y, w = _random(10 + K, K, weighted=True)
    m = fastgen.fit_logistic(X, y, penalty="firth", sample_weight=w, tol=1e-11)
    rep = np.repeat(np.arange(len(y)), w.astype(int))
    r = fastgen.fit_logistic(X[rep], y[rep], penalty="firth", tol=1e-11)
    c = fastgen.fit_logistic(sp.csr_matrix(X), y, penalty="firth", sample_weight=w,
                             tol=1e-11)
    assert rel(_ours(r), _ours(m)) < 1e-8 and rel(_ours(c), _ours(m)) < 1e-8
    s = np.array([1e-3, 1.0, 1e4])
    ms = fastgen.fit_logistic(X * s, y, penalty="firth", sample_weight=w, tol=1e-11)
    assert np.max(np.abs(fastgen.predict_proba(ms, X * s)
                         - fastgen.predict_proba(m, X))) < 1e-8
    assert rel(ms.coef * s, m.coef) < 1e-7


def test_null_loglik_is_the_penalised_intercept_only_maximum():
    """logistic_inference's llnull for a multinomial Firth fit is l* of the
    intercept-only model at its maximum (closed form π_k = (N_k + ½)/(N + K/2))."""
    X, y, w = _random(3, 4, weighted=True)
    m = fastgen.fit_logistic(X, y, penalty="firth", sample_weight=w)
    res = fastgen.logistic_inference(m, X, y, sample_weight=w)
    Z = np.zeros((len(y), 0))
    ref = reference_fit(Z, y, w, 4)
    assert abs(res.llnull - lstar(ref, Z, y, w, 4)) < 1e-9 * abs(res.llnull)


def _constrained_max(f, grad, beta, j, b):
    """max of f over the coefficients other than j, with β_j = b (scipy BFGS from the
    estimate, then a root of the free gradient)."""
    free = np.delete(np.arange(beta.size), j)

    def full(z):
        v = beta.copy()
        v[free] = z
        v[j] = b
        return v

    r = scipy.optimize.minimize(lambda z: -f(full(z)), beta[free],
                                jac=lambda z: -grad(full(z))[free], method="BFGS",
                                options={"gtol": 1e-10})
    s = scipy.optimize.root(lambda z: grad(full(z))[free], r.x, method="hybr")
    return max(f(full(s.x)), -r.fun)


@pytest.mark.parametrize("kind,seed,K,penalised", [
    ("random", 0, 3, True), ("quasi", 5, 3, True), ("random", 1, 4, True),
    ("random", 0, 3, False), ("random", 1, 4, False)])
def test_profile_bounds_are_where_the_statistic_is_the_quantile(kind, seed, K, penalised):
    """ci='profile' for multinomial fits (penalised for Firth, ordinary for the MLE):
    at every returned bound, 2(l*max − max_{β_j=b} l*) equals χ²₁(0.95) to 1e-6, the
    constrained maximum taken by scipy on the numpy l*; shapes follow ``params``."""
    X, y, w = _case(kind, seed, K, False)
    m = fastgen.fit_logistic(X, y, penalty="firth" if penalised else None, tol=1e-10)
    res = fastgen.logistic_inference(m, X, y, ci="profile")
    ci = res.conf_int()
    assert ci.shape == res.params.shape + (2,) and res.lr_pvalues.shape == res.params.shape

    def f(b):
        if penalised:
            return lstar(b, X, y, w, K)
        logP = _probs(b, _design(X), K)
        return float(np.sum(w * logP[np.arange(len(y)), y]))

    def grad(b):
        if penalised:
            return lstar_grad(b, X, y, w, K)
        Xt = _design(X)
        P = np.exp(_probs(b, Xt, K))
        Y = np.eye(K)[y]
        return ((w[:, None] * (Y - P))[:, 1:].T @ Xt).ravel()

    beta = _ours(m)
    top = f(beta)
    crit = scipy.stats.chi2.isf(0.05, 1)
    p = X.shape[1] + 1
    rng = np.random.default_rng(seed)
    for k in range(K - 1):
        for j in rng.choice(p, 1, replace=False):  # intercept first in res
            internal = k * p + (p - 1 if j == 0 else j - 1)
            for side in range(2):
                b = ci[j, k, side]
                assert np.isfinite(b)
                stat = 2.0 * (top - _constrained_max(f, grad, beta, internal, b))
                assert abs(stat - crit) < 1e-6
def test_corrections_are_binary_only_and_init_is_used():
    from fastgen.logistic.firth import fit_firth

    X, y, w = _random(1, 3)
    with pytest.raises(ValueError, match="binary"):
        fastgen.fit_logistic(X, y, penalty="firth", correction="flac")
    with pytest.raises(ValueError, match="penalty='firth'"):  # the binary fit points on
        fit_firth(X, y)
    m = fastgen.fit_logistic(X, y, penalty="firth", tol=1e-10)
    again = fastgen.fit_logistic(X, y, penalty="firth", init=m, tol=1e-10)
    assert again.n_iter <= 1 and rel(_ours(again), _ours(m)) < 1e-9


# --------------------------------------------------------------------------- adapters


@pytest.mark.parametrize("K,correction", [(2, None), (2, "flic"), (2, "flac"), (3, None)])
def test_sklearn_and_cli_expose_firth(tmp_path, K, correction, capsys):
    """FirthLogisticRegression(correction=...) and ``fastgen fit --model logistic
    --firth [--correction ...]`` give fit_logistic(penalty="firth", ...)'s model, on
    iris (setosa separates: no ML estimate)."""
    from fastgen import cli
    from fastgen.datasets import load_iris
    from fastgen.sklearn import FirthLogisticRegression

    X, y, _ = load_iris()
    y = np.unique(y, return_inverse=True)[1]
    keep = y < K
    X, y = X[keep][:, :2], y[keep]
    ref = fastgen.fit_logistic(X, y, penalty="firth", correction=correction)
    est = FirthLogisticRegression(correction=correction).fit(X, y)
    from sklearn.base import clone

    assert clone(est).get_params() == est.get_params()
    assert np.array_equal(est.coef_, ref.coef) and np.array_equal(est.intercept_,
                                                                    ref.intercept)
    assert est.inference_ is not None and est.summary()
    assert np.allclose(est.predict_proba(X), fastgen.predict_proba(ref, X), rtol=0,
                       atol=1e-15)
    data = tmp_path / "d.csv"
    np.savetxt(data, np.column_stack([X, y]), delimiter=",", header="a,b,t", comments="")
    out = tmp_path / "m.npz"
    args = ["fit", "--model", "logistic", str(data), "--target", "t", "-o", str(out),
            "--firth"] + (["--correction", correction] if correction else [])
    assert cli.main(args) == 0
    got = fastgen.load_params(out)
    assert np.allclose(got.coef, ref.coef, rtol=1e-12, atol=0)
    assert cli.main(args[:-2 if correction else -1] + ["--summary", "--firth"]
                    + (["--correction", correction] if correction else [])) == 0
    assert ("Firth" if correction is None else correction.upper()) in capsys.readouterr().out


def test_adapter_errors(tmp_path, capsys):
    from fastgen import cli
    from fastgen.sklearn import FirthLogisticRegression

    X, y, _ = _random(0, 3)
    with pytest.raises(ValueError, match="binary"):
        FirthLogisticRegression(correction="flic").fit(X, y)
    with pytest.raises(ValueError, match="correction"):
        FirthLogisticRegression(correction="lasso").fit(X, y % 2)
    data = tmp_path / "d.csv"
    np.savetxt(data, np.column_stack([X, y]), delimiter=",", header="a,b,c,t", comments="")
    base = ["fit", "--model", "logistic", str(data), "--target", "t", "-o",
            str(tmp_path / "m")]
    for extra, message in [(["--correction", "flic"], "needs --firth"),
                           (["--firth", "--l2", "1"], "ridge"),
                           (["--firth", "--correction", "flac"], "binary")]:
        assert cli.main(base + extra) == 2
        assert message in capsys.readouterr().err
    assert cli.main(["fit", "--model", "lda", str(data), "--target", "t", "-o",
                     str(tmp_path / "m"), "--firth"]) == 2

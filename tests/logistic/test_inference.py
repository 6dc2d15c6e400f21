"""logistic_inference against statsmodels (Logit, MNLogit) on spector, anes96 and a
weighted synthetic case; CSR and Dask against dense; the clear errors."""

import importlib
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from reference import require

import fastgen

li = importlib.import_module("fastgen.logistic.inference")

sm = require("statsmodels.api")

TOL = 1e-8


def rel(a, b):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300))


@pytest.fixture(scope="module")
def spector():
    d = sm.datasets.spector.load_pandas().data
    return d[["GPA", "TUCE", "PSI"]], d["GRADE"].to_numpy()


@pytest.fixture(scope="module")
def anes():
    d = sm.datasets.anes96.load_pandas().data
    return d[["logpopul", "selfLR", "age", "educ", "income"]].to_numpy(), d["PID"].to_numpy()


def sm_fit(model, cov_type="nonrobust", cov_kwds=None):
    kw = {"cov_type": cov_type}
    if cov_kwds is not None:
        kw["cov_kwds"] = cov_kwds
    return model.fit(disp=0, method="newton", tol=1e-14, maxiter=100, **kw)


def compare(res, ref):
    for name in ["params", "bse", "pvalues", "llf", "aic", "bic", "llnull", "prsquared",
                 "llr", "df_model", "df_resid", "nobs"]:
        assert rel(getattr(res, name), getattr(ref, name)) < TOL, name
    assert rel(res.cov_params, ref.cov_params()) < TOL
    # statsmodels fits the null model iteratively (fastgen: closed form); a p-value of
    # 1e-102 amplifies that difference
    assert rel(res.llr_pvalue, ref.llr_pvalue) < 1e-5


def test_spector_matches_statsmodels(spector):
    X, y = spector
    m = fastgen.fit_logistic(X, y, tol=1e-12)
    res = fastgen.logistic_inference(m, X, y)
    ref = sm_fit(sm.Logit(y, sm.add_constant(X)))
    compare(res, ref)
    assert rel(res.conf_int(), ref.conf_int()) < TOL
    assert rel(res.conf_int(0.1), ref.conf_int(0.1)) < TOL
    assert res.feature_names == ("const", "GPA", "TUCE", "PSI")
    assert res.params.shape == (4,)


@pytest.mark.parametrize("cov_type", ["HC0", "HC1", "cluster"])
def test_spector_robust(spector, cov_type):
    X, y = spector
    groups = np.arange(len(y)) % 5
    m = fastgen.fit_logistic(X, y, tol=1e-12)
    res = fastgen.logistic_inference(m, X, y, cov_type=cov_type, groups=groups)
    kw = {"groups": groups} if cov_type == "cluster" else None
    ref = sm_fit(sm.Logit(y, sm.add_constant(X)), cov_type=cov_type, cov_kwds=kw)
    assert rel(res.cov_params, ref.cov_params()) < TOL
    assert rel(res.bse, ref.bse) < TOL
    assert rel(res.pvalues, ref.pvalues) < TOL


@pytest.mark.parametrize("cov_type", ["nonrobust", "HC0", "cluster"])
def test_anes96_matches_mnlogit(anes, cov_type):
    X, y = anes
    groups = np.arange(len(y)) % 17
    m = fastgen.fit_logistic(X, y, tol=1e-12)
    res = fastgen.logistic_inference(m, X, y, cov_type=cov_type, groups=groups)
    kw = {"groups": groups} if cov_type == "cluster" else None
    ref = sm_fit(sm.MNLogit(y, sm.add_constant(X)), cov_type=cov_type, cov_kwds=kw)
    assert res.params.shape == (6, 6)
    if cov_type == "nonrobust":
        compare(res, ref)
        ci = res.conf_int()
        refci = ref.conf_int()  # (K-1, p, 2)
        assert rel(ci, np.transpose(refci, (1, 0, 2))) < TOL
    else:
        assert rel(res.cov_params, ref.cov_params()) < TOL
        assert rel(res.bse, ref.bse) < TOL


def test_weights_are_frequency_weights():
    rng = np.random.default_rng(3)
    n = 200
    X = rng.normal(size=(n, 3))
    y = (X @ [1.0, -0.5, 0.3] + rng.logistic(size=n) > 0).astype(int)
    w = rng.integers(0, 4, n)
    groups = rng.integers(0, 12, n)
    m = fastgen.fit_logistic(X, y, sample_weight=w, tol=1e-12)
    rep = np.repeat(np.arange(n), w)
    ref_model = sm.Logit(y[rep], sm.add_constant(X[rep]))
    res = fastgen.logistic_inference(m, X, y, sample_weight=w)
    compare(res, sm_fit(ref_model))
    assert res.nobs == w.sum()
    for ct in ["HC0", "cluster"]:
        r = fastgen.logistic_inference(m, X, y, sample_weight=w, cov_type=ct, groups=groups)
        kw = {"groups": groups[rep]} if ct == "cluster" else None
        assert rel(r.cov_params, sm_fit(ref_model, cov_type=ct, cov_kwds=kw).cov_params()) < TOL


def test_csr_equals_dense(anes):
    X, y = anes
    Xs = X.copy()
    Xs[np.abs(Xs) < 2] = 0.0
    m = fastgen.fit_logistic(Xs, y, tol=1e-12)
    groups = np.arange(len(y)) % 7
    for ct in ["nonrobust", "HC0", "cluster"]:
        a = fastgen.logistic_inference(m, Xs, y, cov_type=ct, groups=groups)
        b = fastgen.logistic_inference(m, sp.csr_matrix(Xs), y, cov_type=ct, groups=groups)
        assert rel(b.cov_params, a.cov_params) < 1e-10
        assert abs(a.llf - b.llf) < 1e-9 * abs(a.llf)


def test_dask_equals_dense(spector):
    da = require("dask.array")
    import fastgen.dask
    X, y = spector
    X = X.to_numpy()
    w = np.arange(len(y)) % 3 + 1.0
    m = fastgen.fit_logistic(X, y, sample_weight=w, tol=1e-12)
    groups = np.arange(len(y)) % 4
    for ct in ["nonrobust", "HC1", "cluster"]:
        a = fastgen.logistic_inference(m, X, y, sample_weight=w, cov_type=ct, groups=groups)
        b = fastgen.dask.logistic_inference(m, da.from_array(X, chunks=(10, 3)), y,
                                            sample_weight=w, cov_type=ct, groups=groups)
        assert rel(b.cov_params, a.cov_params) < 1e-10
        assert abs(a.llf - b.llf) < 1e-10 * abs(a.llf)
        assert b.nobs == a.nobs


def test_lr_pvalues_and_profile_mle(spector):
    X, y = spector
    X = X.to_numpy()
    m = fastgen.fit_logistic(X, y, tol=1e-12)
    res = fastgen.logistic_inference(m, X, y, ci="profile")
    full = sm_fit(sm.Logit(y, sm.add_constant(X)))
    Xc = sm.add_constant(X)
    for j in range(1, 4):  # LR test of dropping column j, by statsmodels refits
        sub = sm_fit(sm.Logit(y, np.delete(Xc, j, axis=1)))
        lr = 2 * (full.llf - sub.llf)
        from scipy.stats import chi2
        assert abs(res.lr_pvalues[j] - chi2.sf(lr, 1)) < 1e-7
        # at each profile bound the constrained log-likelihood is llf - chi2/2
        for b in res.profile_ci[j]:
            glm = sm.GLM(y, np.delete(Xc, j, axis=1), family=sm.families.Binomial(),
                         offset=b * Xc[:, j]).fit(tol=1e-14)
            assert abs(glm.llf - (full.llf - chi2.isf(0.05, 1) / 2)) < 1e-6
    with pytest.raises(ValueError, match="alpha=0.05"):
        res.conf_int(0.1)


def test_summary_and_frame(spector, anes):
    X, y = spector
    m = fastgen.fit_logistic(X, y)
    res = fastgen.logistic_inference(m, X, y)
    text = res.summary()
    for word in ["Logit Regression Results", "const", "GPA", "P>|z|", "LL-Null", "nonrobust"]:
        assert word in text
    pd = require("pandas")
    df = res.to_frame()
    assert isinstance(df, pd.DataFrame) and list(df.index) == list(res.feature_names)
    assert np.allclose(df["std err"], res.bse)
    Xa, ya = anes
    r2 = fastgen.logistic_inference(fastgen.fit_logistic(Xa, ya), Xa, ya)
    assert "y=6.0" in r2.summary()
    assert r2.to_frame().shape[0] == 36


def test_errors(spector):
    X, y = spector
    X = X.to_numpy()
    X0 = X.copy()
    m = fastgen.fit_logistic(X, y, l2=1.0)
    with pytest.raises(ValueError, match="l2=1"):
        fastgen.logistic_inference(m, X, y)
    m = fastgen.fit_logistic(X, y)
    with pytest.raises(ValueError, match="cov_type"):
        fastgen.logistic_inference(m, X, y, cov_type="HC3")
    with pytest.raises(ValueError, match="groups"):
        fastgen.logistic_inference(m, X, y, cov_type="cluster")
    with pytest.raises(ValueError, match="features"):
        fastgen.logistic_inference(m, X[:, :2], y)
    with pytest.raises(ValueError, match="LogisticParams"):
        fastgen.logistic_inference("model", X, y)
    assert np.array_equal(X, X0)


def test_collinear_names_columns():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(100, 3))
    X = np.column_stack([X, X[:, 0] + X[:, 1]])
    y = (X[:, 0] + rng.logistic(size=100) > 0).astype(int)
    m = fastgen.fit_logistic(X, y, l2=1e-3)
    with warnings.catch_warnings():  # an unpenalised params object near the optimum
        warnings.simplefilter("ignore", fastgen.ConvergenceWarning)
        m = fastgen.fit_logistic(X, y, init=m, max_iter=0)
    with pytest.raises(np.linalg.LinAlgError, match="rank-deficient.*'c' = "):
        fastgen.logistic_inference(m, X, y, feature_names=["a", "b", "x", "c"])


def test_separation_points_to_firth():
    X = np.array([[0.0], [1.0], [2.0], [3.0], [4.0], [5.0]])
    y = np.array([0, 0, 0, 1, 1, 1])
    with pytest.warns(fastgen.ConvergenceWarning):
        m = fastgen.fit_logistic(X, y)
    with pytest.raises(ValueError, match="firth"):
        fastgen.logistic_inference(m, X, y)


def test_too_many_coefficients(monkeypatch, spector):
    X, y = spector
    m = fastgen.fit_logistic(X.to_numpy(), y)
    monkeypatch.setattr(li.checks, "MAX_INFERENCE_PARAMS", 3)  # where the check reads it
    with pytest.raises(ValueError, match="GB for 4 coefficients"):
        fastgen.logistic_inference(m, X, y)


@pytest.mark.parametrize("n,d,K,fit_intercept,weighted", [
    (1000, 5, 3, True, True),     # four tiles, the last one short; zero weights
    (97, 16, 5, True, False),     # one short tile
    (600, 12, 8, False, True),    # no intercept, many class pairs
])
def test_tiled_information_pass_equals_the_syrk_pass(n, d, K, fit_intercept, weighted):
    """The tiled multinomial pass (one GEMM of pair coefficients against the products
    x̃_a x̃_b) gives the per-pair SYRK pass's log-likelihood, score, information, meat,
    max |η| and weighted residuals, whatever the tiling."""
    from fastgen.kernels import inference as ki

    rng = np.random.default_rng(n + d + K)
    X = rng.normal(size=(n, d)) * rng.uniform(0.5, 3.0, d)
    y = rng.integers(0, K, n).astype(np.int32)
    B = rng.normal(size=(K - 1, d + fit_intercept)) * 0.4
    w = rng.uniform(0.2, 3.0, n) if weighted else np.empty(0)
    if weighted:
        w[::7] = 0.0
    data = li.InferenceData(X, fit_intercept)
    q = (K - 1) * data.p
    bounds = data.bounds(2 * q * q)
    R1, R2 = np.zeros((n, K - 1)), np.zeros((n, K - 1))
    ref = ki.inference_pass(X, y, w, B, fit_intercept, bounds, data.block, True, R1)
    got = ki.inference_pass_tiles(X, y, w, B, fit_intercept, bounds, ki.INFERENCE_TILE_ROWS,
                                   True, R2)
    for a, b in zip(ref, got):
        assert rel(b, a) < 1e-13
    assert rel(R2, R1) < 1e-13
    H = got[2]
    np.testing.assert_array_equal(H, H.T)
    # and a plain-numpy transcription of the information, for one class pair
    Xt = np.c_[X, np.ones(n)] if fit_intercept else X
    eta = np.c_[np.zeros(n), Xt @ B.T]
    P = np.exp(eta - eta.max(1, keepdims=True))
    P /= P.sum(1, keepdims=True)
    ww = w if weighted else np.ones(n)
    p = data.p
    assert rel(H[:p, p:2 * p], -(Xt * (ww * P[:, 1] * P[:, 2])[:, None]).T @ Xt) < 1e-12
    assert rel(H[:p, :p], (Xt * (ww * P[:, 1] * (1 - P[:, 1]))[:, None]).T @ Xt) < 1e-12


# issue 42: a missing cluster label is refused like a missing y, never a cluster of its own
@pytest.mark.parametrize("missing", ["nan-float", "nan-list", "none-object", "nat"])
def test_cluster_groups_refuse_missing_labels(missing):
    rng = np.random.default_rng(42)
    X = rng.normal(size=(60, 2))
    y = (X[:, 0] + rng.normal(size=60) > 0).astype(int)
    m = fastgen.fit_logistic(X, y)
    g = (np.arange(60) % 6).astype(float)
    if missing == "nan-float":
        groups = np.where(np.arange(60) == 7, np.nan, g)
    elif missing == "nan-list":
        groups = [np.nan if i == 7 else v for i, v in enumerate(g)]
    elif missing == "none-object":
        groups = np.array([None if i == 7 else f"g{int(v)}" for i, v in enumerate(g)],
                          dtype=object)
    else:
        groups = np.array([np.datetime64("NaT") if i == 7 else np.datetime64(int(v), "D")
                           for i, v in enumerate(g)])
    with pytest.raises(ValueError, match=r"groups contains (NaN|None|NaT).* at row 7"):
        fastgen.logistic_inference(m, X, y, cov_type="cluster", groups=groups)
    with pytest.raises(ValueError, match=r"y contains NaN .* at row 7"):  # the same rule
        fastgen.fit_logistic(X, np.where(np.arange(60) == 7, np.nan, y))

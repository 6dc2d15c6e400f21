"""fastgen.dask: fits on Dask arrays equal the in-memory fits; lazy scoring."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from reference import assert_params_close, require

da = require("dask.array")
dask = require("dask")

import fastgen  # noqa: E402
import fastgen.dask as fd  # noqa: E402

RTOL = 1e-12


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(11)
    n = 300
    y = rng.integers(0, 3, n)
    X = rng.normal(size=(n, 4)) @ np.diag([1.0, 2.0, 0.5, 3.0]) + 50.0
    X[:, :2] += 1.5 * y[:, None]
    C = rng.poisson(1.0 + y[:, None] * 0.5, size=(n, 6)).astype(np.float64)
    w = rng.random(n) + 0.2
    return X, C, y, w


#: uneven row chunks; chunks of one row; rows sorted by class so chunks miss classes
CHUNKINGS = {
    "uneven": lambda n: (1, 2, 97, n - 100),
    "one_row": lambda n: (1,) * n,
}


def _dask(A, chunks):
    return da.from_array(A, chunks=(chunks, A.shape[1]))


def _cases(data, layout):
    X, C, y, w = data
    if layout == "sorted":  # every chunk of 37 rows sees one or two classes only
        o = np.argsort(y, kind="stable")
        X, C, y, w = X[o], C[o], y[o], w[o]
        return X, C, y, w, (37,) * (len(y) // 37) + ((len(y) % 37,) if len(y) % 37 else ())
    n = len(y) if layout != "one_row" else 40
    return X[:n], C[:n], y[:n], w[:n], CHUNKINGS[layout](n)


LAYOUTS = ["uneven", "one_row", "sorted"]


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("covariance", ["pooled", "per_class", "diagonal", "pooled_diagonal"])
def test_fit_gda(data, layout, covariance):
    X, _, y, w, chunks = _cases(data, layout)
    if layout == "one_row" and covariance == "per_class":
        X, y, w = X[:30], y[:30], w[:30]
        chunks = (1,) * 30
    Xd = _dask(X, chunks)
    yd = da.from_array(y, chunks=7)  # re-chunked to X's rows
    assert_params_close(fastgen.fit_gda(X, y, covariance, reg=1e-3),
                         fd.fit_gda(Xd, yd, covariance, reg=1e-3))
    assert_params_close(fastgen.fit_gda(X, y, covariance, sample_weight=w, shrinkage=0.1),
                         fd.fit_gda(Xd, y, covariance, sample_weight=w, shrinkage=0.1))


@pytest.mark.parametrize("covariance", ["pooled", "diagonal", "pooled_diagonal"])
def test_fit_gda_constant_and_collinear_features(data, covariance):
    """Real-data troubles on Dask: a constant column and a collinear one give the same
    reduced-rank pooled model (same ``tol``) and the same variance floor
    (``var_smoothing``) as the in-memory fit."""
    X, _, y, _, chunks = _cases(data, "uneven")
    Xr = np.column_stack([X, np.full(len(y), 3.0), X[:, 0] - 2.0 * X[:, 1]])
    Xd = _dask(Xr, chunks)
    for kw in ({}, {"tol": 1e-2, "var_smoothing": 1e-3}):
        want = fastgen.fit_gda(Xr, y, covariance, **kw)
        got = fd.fit_gda(Xd, y, covariance, **kw)
        assert got.rank == want.rank
        assert_params_close(want, got)
        np.testing.assert_array_equal(fastgen.predict(want, Xr), fastgen.predict(got, Xr))
    if covariance == "pooled":
        assert want.rank == Xr.shape[1] - 2
    else:  # the floor is what keeps the constant column's variance above zero
        assert np.all(got.covariance > 0)
    with pytest.raises(ValueError, match="var_smoothing"):
        fd.fit_gda(Xd, y, covariance, var_smoothing=-1.0)
    with pytest.raises(ValueError, match="tol"):
        fd.fit_gda(Xd, y, covariance, tol=float("nan"))


@pytest.mark.parametrize("layout", LAYOUTS)
def test_fit_naive_bayes(data, layout):
    X, C, y, w, chunks = _cases(data, layout)
    Xd, Cd = _dask(X, chunks), _dask(C, chunks)
    assert_params_close(fastgen.fit_gaussian_nb(X, y), fd.fit_gaussian_nb(Xd, y))
    assert_params_close(fastgen.fit_gaussian_nb(X, y, sample_weight=w),
                         fd.fit_gaussian_nb(Xd, y, sample_weight=w))
    assert_params_close(fastgen.fit_multinomial_nb(C, y, sample_weight=w, alpha=0.5),
                         fd.fit_multinomial_nb(Cd, y, sample_weight=w, alpha=0.5))
    assert_params_close(fastgen.fit_bernoulli_nb(C, y, binarize=1.0),
                         fd.fit_bernoulli_nb(Cd, da.from_array(y), binarize=1.0))


def _csr_blocks(A, chunks):
    return _dask(A, chunks).map_blocks(sp.csr_matrix, dtype=A.dtype,
                                       meta=sp.csr_matrix((0, 0), dtype=A.dtype))


def test_fit_naive_bayes_csr_blocks(data):
    _, C, y, w, chunks = _cases(data, "sorted")
    Cs = _csr_blocks(C, chunks)
    assert_params_close(fastgen.fit_multinomial_nb(C, y, sample_weight=w),
                         fd.fit_multinomial_nb(Cs, y, sample_weight=w))
    assert_params_close(fastgen.fit_bernoulli_nb(C, y), fd.fit_bernoulli_nb(Cs, y))


# logistic histories are per iteration and equal up to the same rounding
_LR_RTOL = 1e-10


@pytest.mark.parametrize("layout", LAYOUTS)
def test_fit_logistic_binary(data, layout):
    X, _, y, w, chunks = _cases(data, layout)
    yb = np.where(y > 0, "b", "a")
    ref = fastgen.fit_logistic(X - 50.0, yb, l2=0.5, sample_weight=w)
    got = fd.fit_logistic(_dask(X - 50.0, chunks), yb, l2=0.5, sample_weight=w)
    assert got.n_iter == ref.n_iter and got.converged
    assert_params_close(ref, got, rtol=_LR_RTOL)


def test_fit_logistic_multinomial_and_csr(data):
    X, C, y, w, chunks = _cases(data, "sorted")
    ref = fastgen.fit_logistic(X[:, :2] - 50.0, y, l2=1.0)
    got = fd.fit_logistic(_dask(X[:, :2] - 50.0, chunks), y, l2=1.0)
    assert ref.solver == got.solver == "newton-cholesky" and got.n_iter == ref.n_iter
    assert_params_close(ref, got, rtol=_LR_RTOL)
    ref = fastgen.fit_logistic(C, y == 2, l2=1.0)
    got = fd.fit_logistic(_csr_blocks(C, chunks), y == 2, l2=1.0)
    assert_params_close(ref, got, rtol=_LR_RTOL)


def test_scoring_is_lazy_and_equal(data):
    X, C, y, _, chunks = _cases(data, "uneven")
    Xd = _dask(X, chunks)
    for p in (fastgen.fit_gda(X, y, "per_class"), fastgen.fit_gaussian_nb(X, y)):
        for name in ("joint_log_likelihood", "predict_log_proba", "predict_proba"):
            lazy = getattr(fd, name)(p, Xd)
            assert isinstance(lazy, da.Array) and lazy.shape == (len(y), 3)
            # rows are scored block by block: equal to rounding (BLAS blocking)
            np.testing.assert_allclose(lazy.compute(), getattr(fastgen, name)(p, X),
                                       rtol=1e-13, atol=1e-300)
        lab = fd.predict(p, Xd)
        assert isinstance(lab, da.Array)
        np.testing.assert_array_equal(lab.compute(), fastgen.predict(p, X))
    nb = fastgen.fit_multinomial_nb(C, y)
    np.testing.assert_allclose(fd.predict_proba(nb, _csr_blocks(C, chunks)).compute(),
                               fastgen.predict_proba(nb, C), rtol=1e-13, atol=1e-300)


def test_progress_bar_and_column_chunks(data, capsys):
    from dask.diagnostics import ProgressBar

    X, _, y, _, _ = _cases(data, "uneven")
    Xd = da.from_array(X, chunks=(64, 2))  # column chunks are merged
    with ProgressBar(minimum=0):
        got = fd.fit_gda(Xd, y)
    assert "100%" in capsys.readouterr().out
    assert_params_close(fastgen.fit_gda(X, y), got)


def test_bad_inputs(data):
    X, _, y, _, _ = _cases(data, "uneven")
    Xd = da.from_array(X, chunks=50)
    with pytest.raises(ValueError, match="dask.array"):
        fd.fit_gda(X, y)
    with pytest.raises(ValueError, match="y has 299"):
        fd.fit_gda(Xd, y[:-1])
    with pytest.raises(ValueError, match="ledoit-wolf"):
        fd.fit_gda(Xd, y, shrinkage="ledoit-wolf")
    with pytest.raises(ValueError, match="at least 2"):
        fd.fit_logistic(Xd, np.zeros(len(y)))
    with pytest.raises(ValueError, match="features"):
        fd.predict(fastgen.fit_gda(X[:, :2], y), Xd)


def test_local_cluster_with_processes(data):
    """Two worker processes: kernels load from numba's cache, fits equal in memory."""
    distributed = require("distributed")
    X, C, y, w, chunks = _cases(data, "sorted")
    Xd, Cd = _dask(X, chunks), _dask(C, chunks)
    with warnings.catch_warnings():
        # the cluster's own resource tracking may warn about slow startup on busy machines
        warnings.filterwarnings("ignore", message=".*[Cc]reating scratch directories.*")
        # the dashboard on any free port: None falls back to 8787, which another
        # program on the machine may hold (a port warning, an error under -W error)
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                      dashboard_address=":0", silence_logs=40) as cluster, \
                distributed.Client(cluster) as client:
            assert len(client.scheduler_info()["workers"]) == 2
            g = fd.fit_gda(Xd, y, "per_class")
            nb = fd.fit_multinomial_nb(Cd, y, sample_weight=w)
            lr = fd.fit_logistic(Xd - 50.0, y == 1, l2=1.0)
            proba = fd.predict_proba(g, Xd).compute()
    assert_params_close(fastgen.fit_gda(X, y, "per_class"), g)
    assert_params_close(fastgen.fit_multinomial_nb(C, y, sample_weight=w), nb)
    assert_params_close(fastgen.fit_logistic(X - 50.0, y == 1, l2=1.0), lr, rtol=_LR_RTOL)
    np.testing.assert_allclose(proba, fastgen.predict_proba(g, X), rtol=1e-13, atol=1e-300)


def test_from_npy_reads_chunks_from_disk(tmp_path, data):
    X, _, y, _, _ = _cases(data, "uneven")
    path = tmp_path / "X.npy"
    np.save(path, X)
    Xd = fd.from_npy(path, 64)
    assert Xd.chunks[0] == (64, 64, 64, 64, 44)
    np.testing.assert_array_equal(Xd.compute(), X)
    np.testing.assert_array_equal(Xd[10:20, 1:3].compute(), X[10:20, 1:3])
    assert_params_close(fastgen.fit_gda(X, y, "per_class"), fd.fit_gda(Xd, y, "per_class"))


# --------------------------------------------------------------------------- separation


def _separation_cases():
    """(name, X, y, w): separated, quasi-separated and overlapping data, two and three
    classes, zero weights."""
    from sklearn.datasets import load_breast_cancer

    rng = np.random.default_rng(3)
    bc = load_breast_cancer()
    clouds = np.r_[rng.normal(-3, 0.3, (60, 2)), rng.normal(3, 0.3, (60, 2))]
    quasi = np.c_[np.r_[-np.abs(rng.normal(size=30)) - 0.1, np.zeros(30),
                        np.abs(rng.normal(size=30)) + 0.1], rng.normal(size=90)]
    yq = np.r_[np.zeros(30), rng.integers(0, 2, 30), np.ones(30)]
    three = np.r_[rng.normal(-3, 0.3, (40, 2)), rng.normal(0, 0.3, (40, 2)),
                  rng.normal(3, 0.3, (40, 2))]
    over = rng.normal(size=(150, 3))
    yo = rng.integers(0, 3, 150)
    w = np.where(rng.random(90) < 0.2, 0.0, 1.0 + rng.random(90))
    return [
        ("breast cancer 0-3", bc.data[:, :4], bc.target, None),
        ("breast cancer all", bc.data, bc.target, None),
        ("clouds", clouds, np.r_[np.zeros(60), np.ones(60)], None),
        ("quasi", quasi, yq, None),
        ("quasi weighted", quasi, yq, w),
        ("three clouds", three, np.repeat([0, 1, 2], 40), None),
        ("three overlapping", over, yo, None),
    ]


@pytest.mark.parametrize("chunks", [20, 1000])
@pytest.mark.parametrize("case", range(7))
def test_separation_over_blocks_is_the_exact_test(case, chunks):
    """The programme solved by passes over the blocks reaches the in-memory optimum
    and the same decisions, for any chunking (and CSR blocks)."""
    name, X, y, w = _separation_cases()[case]
    ref = fastgen.detect_separation(X, y, sample_weight=w)
    Xd = da.from_array(X, chunks=(chunks, X.shape[1]))
    if case % 2:
        Xd = Xd.map_blocks(sp.csr_matrix, dtype=X.dtype)
    got = fd.separation_over_blocks(Xd, y, w, np.unique(y))
    assert (got.separated, got.complete) == (ref.separated, ref.complete), name
    assert got.optimum == pytest.approx(ref.optimum, rel=1e-6, abs=1e-9)


@pytest.mark.parametrize("chunks", [(50,), (569,)])
def test_inference_on_dask_takes_valid_data_as_not_separated(chunks):
    """Breast cancer's first four features: max|η| = 46 at the estimate, but not
    separated; Dask gives the in-memory (statsmodels') standard errors, as in memory."""
    sm = require("statsmodels.api")
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    X = X[:, :4]
    m = fastgen.fit_logistic(X, y, tol=1e-12)
    Xd = da.from_array(X, chunks=(chunks[0], 4))
    got = fd.logistic_inference(m, Xd, y)
    assert got.extra["max_abs_eta"] > 30
    ref = fastgen.logistic_inference(m, X, y)
    np.testing.assert_allclose(got.bse, ref.bse, rtol=1e-10)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # statsmodels' own convergence warning
        sref = sm.Logit(y, sm.add_constant(X)).fit(disp=0, method="newton", tol=1e-14)
    np.testing.assert_allclose(got.bse, sref.bse, rtol=1e-7)


@pytest.mark.parametrize("case", [2, 3, 5])
def test_inference_on_dask_refuses_separated_data_as_in_memory(case):
    name, X, y, w = _separation_cases()[case]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fastgen.ConvergenceWarning)
        m = fastgen.fit_logistic(X, y, sample_weight=w)
    with pytest.raises(ValueError, match="separation") as mem:
        fastgen.logistic_inference(m, X, y, sample_weight=w)
    with pytest.raises(ValueError, match="separation") as dsk:
        fd.logistic_inference(m, da.from_array(X, chunks=(25, X.shape[1])), y,
                              sample_weight=w)
    assert str(dsk.value) == str(mem.value)


def _inference_case(K, sparse):
    rng = np.random.default_rng(40 + K)
    n, d = 400, 3
    X = rng.normal(size=(n, d))
    eta = X @ rng.normal(size=(d, K)) * 0.7
    y = (eta + rng.gumbel(size=(n, K))).argmax(1)
    w = rng.integers(1, 4, n).astype(float)
    groups = np.arange(n) % 7
    Xd = da.from_array(X, chunks=(90, d))
    if sparse:
        Xd = Xd.map_blocks(sp.csr_matrix, dtype=X.dtype)
    return X, Xd, y, w, groups


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("K", [2, 3])
@pytest.mark.parametrize("cov_type", ["nonrobust", "HC0", "cluster"])
def test_dask_logistic_inference_is_the_in_memory_finish_on_summed_passes(
        cov_type, K, sparse):
    """fastgen.dask.logistic_inference sums the blocks' passes and finishes as in memory:
    the in-memory results to rounding (the sums are associated by block)."""
    X, Xd, y, w, groups = _inference_case(K, sparse)
    m = fastgen.fit_logistic(X, y, sample_weight=w, tol=1e-12)
    ref = fastgen.logistic_inference(m, X, y, sample_weight=w, cov_type=cov_type,
                                     groups=groups)
    got = fd.logistic_inference(m, Xd, y, sample_weight=w, cov_type=cov_type,
                                groups=groups)
    np.testing.assert_allclose(got.cov_params, ref.cov_params, rtol=1e-9, atol=1e-14)
    np.testing.assert_allclose(got.llf, ref.llf, rtol=1e-12)
    assert (got.nobs, got.n_groups, got.feature_names) == (ref.nobs, ref.n_groups,
                                                         ref.feature_names)


@pytest.mark.parametrize("K", [2, 3])
@pytest.mark.usefixtures("kernel_path")  # the in-memory side is the kernels' InMemoryData
def test_dask_fit_and_inference_run_the_in_memory_solver_and_finish(monkeypatch, K):
    """fastgen.dask.fit_logistic runs the Newton loop of fastgen.fit_logistic (through
    logistic.api, on its Dask sample) and fastgen.dask.logistic_inference the finish of
    fastgen.logistic_inference (through logistic.inference), not copies of them."""
    import fastgen.logistic.api as fit_api
    import fastgen.logistic.inference.api as inference_api

    seen = []
    solve, sandwich = fit_api.newton_solve, inference_api.sandwich

    def spy_solve(objective, *args, **kwargs):
        seen.append(("solve", type(objective.data).__name__))
        return solve(objective, *args, **kwargs)

    def spy_sandwich(*args, **kwargs):
        seen.append(("finish", args[1]))
        return sandwich(*args, **kwargs)

    monkeypatch.setattr(fit_api, "newton_solve", spy_solve)
    monkeypatch.setattr(inference_api, "sandwich", spy_sandwich)
    X, Xd, y, w, groups = _inference_case(K, False)
    m = fastgen.fit_logistic(X, y)
    md = fd.fit_logistic(Xd, y)
    fastgen.logistic_inference(m, X, y, cov_type="HC0")
    fd.logistic_inference(md, Xd, y, cov_type="HC0")
    assert seen == [("solve", "InMemoryData"), ("solve", "DaskLogisticData"),
                    ("finish", "HC0"), ("finish", "HC0")]
    assert_params_close(md, m, rtol=1e-8)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("K", [2, 3])
def test_in_memory_inference_refuses_a_dask_array_and_names_the_adapter(K, sparse):
    """fastgen.logistic_inference on a Dask array raises a TypeError naming
    fastgen.dask.logistic_inference, without computing the array (the core never
    routes to an adapter)."""
    X, Xd, y, w, groups = _inference_case(K, sparse)
    m = fastgen.fit_logistic(X, y, sample_weight=w)
    computed = []
    Xd = Xd.map_blocks(lambda b: computed.append(b.shape) or b, dtype=Xd.dtype,
                       meta=Xd._meta)
    with pytest.raises(TypeError, match=r"fastgen\.dask\.logistic_inference"):
        fastgen.logistic_inference(m, Xd, y, sample_weight=w, cov_type="cluster",
                                   groups=groups)
    assert not [shape for shape in computed if shape[0]], computed


# --------------------------------------------------------------------------- rows


def _nan_case(row=1000, col=1, n=2000):
    rng = np.random.default_rng(8)
    X = rng.normal(size=(n, 3))
    y = (X[:, 0] + rng.logistic(size=n) > 0).astype(int)
    Xn = X.copy()
    Xn[row, col] = np.nan
    return X, Xn, y


_ROW_FNS = {
    "fit_gda": lambda X, y, m: fd.fit_gda(X, y),
    "fit_gaussian_nb": lambda X, y, m: fd.fit_gaussian_nb(X, y),
    "fit_multinomial_nb": lambda X, y, m: fd.fit_multinomial_nb(abs(X), y),
    "fit_logistic": lambda X, y, m: fd.fit_logistic(X, y),
    "logistic_inference": lambda X, y, m: fd.logistic_inference(m, X, y),
    "predict_proba": lambda X, y, m: fd.predict_proba(m, X).compute(),
    "predict": lambda X, y, m: fd.predict(m, X).compute(),
}


@pytest.mark.parametrize("row", [0, 299, 1000, 1999])
@pytest.mark.parametrize("fn", list(_ROW_FNS))
def test_errors_name_rows_of_X_not_of_the_chunk(fn, row):
    X, Xn, y = _nan_case(row)
    m = fastgen.fit_logistic(X, y)
    Xd = da.from_array(Xn, chunks=(300, 3))
    with pytest.raises(ValueError, match=rf"X contains NaN at row {row}, column 1\b"):
        _ROW_FNS[fn](Xd, y, m)


def test_missing_label_is_named_at_its_row_of_y():
    X, _, y = _nan_case()
    yf = y.astype(float)
    yf[1000] = np.nan
    Xd = da.from_array(X, chunks=(300, 3))
    with pytest.raises(ValueError, match=r"y contains NaN .*at row 1000\b"):
        fd.fit_gda(Xd, da.from_array(yf, chunks=300))

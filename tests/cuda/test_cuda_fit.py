"""Device fits (numba.cuda kernels, run in the CUDA simulator) against the CPU fits."""

import numpy as np
import pytest
from cuda_helpers import rel_err
from numba import cuda
from reference import make_blobs

import fastgen
import fastgen.cuda._api as api

COVS = ("pooled", "per_class", "diagonal", "pooled_diagonal")
FIELDS = ("priors", "means", "covariance", "cholesky", "log_det", "n_per_class")


@pytest.fixture(scope="module")
def data():
    # |μ|/σ ≈ 1e4 on one feature: the unshifted Gram trick would lose ~8 digits here
    X, y = make_blobs(70, 3, 3, seed=5)
    X[:, 1] += 3e4
    w = np.random.default_rng(0).uniform(0.0, 2.0, X.shape[0])
    return X, y, w


def _assert_params_close(p, q, fields, tol):
    assert type(p) is type(q)
    np.testing.assert_array_equal(p.classes, q.classes)
    for f in fields:
        a, b = getattr(p, f), getattr(q, f)
        assert a.dtype == b.dtype, f
        assert rel_err(a, b) <= tol, (f, rel_err(a, b))


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("cov", COVS)
def test_fit_gda_matches_cpu(data, cov, weighted):
    X, y, w = data
    sw = w if weighted else None
    p = fastgen.fit_gda(cuda.to_device(X), y, cov, sample_weight=sw)
    q = fastgen.fit_gda(X, y, cov, sample_weight=sw)
    assert p.covariance_type == cov
    _assert_params_close(p, q, FIELDS, 1e-12)


def test_fit_gda_options_pass_through(data):
    X, y, _ = data
    kw = dict(priors=[0.2, 0.3, 0.5], reg=0.1, shrinkage="oas", unbiased=True)
    p = fastgen.fit_gda(cuda.to_device(X), y, "per_class", **kw)
    q = fastgen.fit_gda(X, y, "per_class", **kw)
    _assert_params_close(p, q, FIELDS, 1e-12)


def test_float32_accumulates_in_float64(data):
    X, y, _ = data
    X32 = (X - X.mean(axis=0)).astype(np.float32)
    for cov in ("pooled", "per_class"):
        p = fastgen.fit_gda(cuda.to_device(X32), y, cov)
        q = fastgen.fit_gda(X32, y, cov)
        assert p.means.dtype == np.float32
        # both sum in float64 and round once to float32 at the end
        _assert_params_close(p, q, ("means", "covariance", "log_det"),
                             4 * np.finfo(np.float32).eps)


def test_integer_X_becomes_float64():
    rng = np.random.default_rng(3)
    X = rng.integers(-5, 6, (40, 2))
    y = np.arange(40) % 2
    p = fastgen.fit_gda(cuda.to_device(X), y, "diagonal")
    q = fastgen.fit_gda(X, y, "diagonal")
    _assert_params_close(p, q, ("means", "covariance"), 1e-12)


@pytest.mark.parametrize("labels", ["device_int", "device_bool", "host_str",
                                    "device_sparse_int", "device_float"])
def test_labels(data, labels):
    X, y, _ = data
    X, y = X[:40], y[:40] % 2
    host_y = {"device_int": y.astype(np.int16) - 7, "device_bool": y.astype(bool),
              "host_str": np.array(["no", "yes"])[y],
              "device_sparse_int": np.array([-3, 10**9])[y],
              "device_float": y * 0.5}[labels]
    yy = host_y if labels.startswith("host") else cuda.to_device(host_y)
    p = fastgen.fit_gda(cuda.to_device(X), yy, "pooled")
    q = fastgen.fit_gda(X, host_y, "pooled")
    assert p.classes.dtype == q.classes.dtype
    _assert_params_close(p, q, ("means", "covariance"), 1e-12)


def test_device_sample_weight(data):
    X, y, w = data
    p = fastgen.fit_gda(cuda.to_device(X), y, "pooled", sample_weight=cuda.to_device(w))
    q = fastgen.fit_gda(X, y, "pooled", sample_weight=w)
    _assert_params_close(p, q, FIELDS, 1e-12)
    p32 = fastgen.fit_gda(cuda.to_device(X), y, "pooled",
                          sample_weight=cuda.to_device(w.astype(np.float32)))
    q32 = fastgen.fit_gda(X, y, "pooled", sample_weight=w.astype(np.float32))
    _assert_params_close(p32, q32, FIELDS, 1e-12)


@pytest.mark.parametrize("weighted", [False, True])
def test_fit_gaussian_nb_matches_cpu(data, weighted):
    X, y, w = data
    sw = cuda.to_device(w) if weighted else None
    kw = dict(priors=[0.5, 0.25, 0.25], var_smoothing=1e-3)
    p = fastgen.fit_gaussian_nb(cuda.to_device(X), y, sample_weight=sw, **kw)
    q = fastgen.fit_gaussian_nb(X, y, sample_weight=w if weighted else None, **kw)
    _assert_params_close(p, q, ("class_count", "class_log_prior", "means", "variances"),
                         1e-12)
    assert abs(p.epsilon - q.epsilon) <= 1e-12 * q.epsilon


def test_class_moments_match_cpu(data):
    X, y, w = data
    for kind in ("pooled", "per_class", "diagonal"):
        m = fastgen.class_moments(cuda.to_device(X), y, kind=kind, sample_weight=w)
        c = fastgen.class_moments(X, y, kind=kind, sample_weight=w)
        assert m.kind == c.kind and m.dtype == c.dtype
        for f in ("counts", "means", "scatter"):
            assert rel_err(getattr(m, f), getattr(c, f)) <= 1e-12, (kind, f)


def test_bitwise_deterministic(data, monkeypatch):
    """Same bits run to run, and for any block size (the work split and every summation
    order depend on the sizes only); several row blocks merged by the pairwise tree."""
    X, y, w = data
    monkeypatch.setattr(api, "MIN_BLOCK_ROWS", 16)  # 5 row blocks: an uneven tree
    assert -(-X.shape[0] // api.block_rows(X.shape[0], 3, 3, "per_class")) == 5
    Xd = cuda.to_device(X)
    runs = []
    for threads in (8, 8, 3):
        monkeypatch.setattr(api, "THREADS", threads)
        runs.append(api.moments_arrays_device(Xd, cuda.to_device(y.astype(np.int32)),
                                              cuda.to_device(w), 3, "per_class"))
    for r in runs[1:]:
        for a, b in zip(runs[0], r):
            np.testing.assert_array_equal(a, b)
    c = fastgen.class_moments(X, y, kind="per_class", sample_weight=w)
    assert rel_err(runs[0][2], c.scatter) <= 1e-12

"""pytest-benchmark versions of workloads W1–W4 at smaller sizes.

    pytest benchmarks/ --benchmark-only -n 0

Each workload is one ``benchmark.group`` holding fastgen, scikit-learn and the floor
reference, so the group table shows the ratios.  Not part of the default test run
(``testpaths = ["tests"]`` in pyproject.toml).
"""

from functools import partial

import numpy as np
import pytest

import fastgen

from ._common import make_data

sklearn_da = pytest.importorskip("sklearn.discriminant_analysis")

K = 10
ROUNDS = 5


def _run(benchmark, fn):
    # one untimed warm-up call (JIT compile or cache load), then ROUNDS timed calls
    benchmark.pedantic(fn, rounds=ROUNDS, iterations=1, warmup_rounds=1)


@pytest.fixture(scope="module")
def pooled_data():
    return make_data(200_000, 16, K, seed=0)


@pytest.fixture(scope="module")
def per_class_data():
    return make_data(40_000, 128, K, seed=1)


@pytest.fixture(scope="module")
def per_class_small_d_data():
    return make_data(200_000, 16, K, seed=2)


# ---- W1 pooled fit and W2 per-class fit
def _fit(benchmark, data, covariance, which):
    X, y = data
    if which == "fastgen":
        _run(benchmark, lambda: fastgen.fit_gda(X, y, covariance))
    elif which == "sklearn":  # LDA lsqr for pooled, QDA for per-class
        make = (partial(sklearn_da.LinearDiscriminantAnalysis, solver="lsqr")
                if covariance == "pooled" else sklearn_da.QuadraticDiscriminantAnalysis)
        _run(benchmark, lambda: make().fit(X, y))
    else:  # the floor: one Gram X.T @ X
        _run(benchmark, lambda: X.T @ X)


@pytest.mark.benchmark(group="W1 pooled fit n=2e5 d=16 K=10")
@pytest.mark.parametrize("which", ["fastgen", "sklearn", "floor_xtx"])
def test_w1(benchmark, pooled_data, which):
    _fit(benchmark, pooled_data, "pooled", which)


@pytest.mark.benchmark(group="W2 per_class fit n=4e4 d=128 K=10")
@pytest.mark.parametrize("which", ["fastgen", "sklearn", "floor_xtx"])
def test_w2(benchmark, per_class_data, which):
    _fit(benchmark, per_class_data, "per_class", which)


# ---- W3 per-class predict_proba (d=128, and W3b d=16)
def _w3(benchmark, data, which):
    X, y = data
    if which == "fastgen":
        p = fastgen.fit_gda(X, y, "per_class")
        _run(benchmark, lambda: fastgen.predict_proba(p, X))
    elif which == "sklearn":
        est = sklearn_da.QuadraticDiscriminantAnalysis().fit(X, y)
        _run(benchmark, lambda: est.predict_proba(X))
    else:  # the square GEMM whose rate defines the floor: K·t / 2 (see compare.py)
        B = np.ascontiguousarray(np.triu(np.ones((X.shape[1], X.shape[1]))))
        _run(benchmark, lambda: X @ B)


@pytest.mark.benchmark(group="W3 per_class predict_proba n=4e4 d=128 K=10")
@pytest.mark.parametrize("which", ["fastgen", "sklearn", "gemm_(n,d)@(d,d)"])
def test_w3(benchmark, per_class_data, which):
    _w3(benchmark, per_class_data, which)


@pytest.mark.benchmark(group="W3b per_class predict_proba n=2e5 d=16 K=10")
@pytest.mark.parametrize("which", ["fastgen", "sklearn", "gemm_(n,d)@(d,d)"])
def test_w3b(benchmark, per_class_small_d_data, which):
    _w3(benchmark, per_class_small_d_data, which)


# ---- W4 pooled predict_proba
@pytest.mark.benchmark(group="W4 pooled predict_proba n=2e5 d=16 K=10")
@pytest.mark.parametrize("which", ["fastgen", "sklearn", "floor_X@W"])
def test_w4(benchmark, pooled_data, which):
    X, y = pooled_data
    if which == "fastgen":
        p = fastgen.fit_gda(X, y, "pooled")
        _run(benchmark, lambda: fastgen.predict_proba(p, X))
    else:
        est = sklearn_da.LinearDiscriminantAnalysis(solver="lsqr").fit(X, y)
        if which == "sklearn":
            _run(benchmark, lambda: est.predict_proba(X))
        else:
            W = np.ascontiguousarray(est.coef_.T)
            _run(benchmark, lambda: X @ W)

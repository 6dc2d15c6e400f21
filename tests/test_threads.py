"""Thread safety and determinism.

* Kernels release the GIL: four Python threads running fits and scoring at once must get
  results bitwise identical to serial calls.
* Work is split independently of the thread count: every fit and scoring function gives
  bitwise identical results at NUMBA_NUM_THREADS=1 and 2 (checked in subprocesses, on
  inputs large enough, n·d ≥ 1e5, to run the parallel kernels on several blocks).
"""

import dataclasses
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import scipy.sparse as sp

import fastgen

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _leaves(obj, prefix=""):
    """(name, array or scalar) pairs of a result, recursively."""
    if isinstance(obj, np.ndarray):
        yield prefix, obj
    elif isinstance(obj, tuple):
        for i, v in enumerate(obj):
            yield from _leaves(v, f"{prefix}[{i}]")
    elif dataclasses.is_dataclass(obj):
        for f in dataclasses.fields(obj):
            yield from _leaves(getattr(obj, f.name), f"{prefix}.{f.name}")
    else:
        yield prefix, obj


def _assert_bitwise_equal(a, b, what):
    la, lb = dict(_leaves(a)), dict(_leaves(b))
    assert la.keys() == lb.keys(), what
    for k, va in la.items():
        vb = lb[k]
        if isinstance(va, np.ndarray):
            assert va.dtype == vb.dtype and va.shape == vb.shape, (what, k)
            assert va.tobytes() == vb.tobytes(), f"{what}{k} differs"
        else:
            assert va == vb or (va != va and vb != vb), (what, k)


@pytest.fixture(scope="module")
def tasks():
    rng = np.random.default_rng(2024)
    n, d, K = 12_000, 8, 4
    y = rng.integers(0, K, size=n)
    X = rng.standard_normal((n, d)) + y[:, None] * 0.7
    C = sp.random(n, 200, density=0.05, format="csr", random_state=3,
                  data_rvs=lambda k: rng.integers(1, 5, size=k).astype(float))
    Xt = X[:3000] + 0.1
    Ct = C[:3000]
    yb = (y > 1).astype(int)
    pooled = fastgen.fit_gda(X, y)
    qda = fastgen.fit_gda(X, y, "per_class")
    mnb = fastgen.fit_multinomial_nb(C, y)
    logit = fastgen.fit_logistic(X, yb, l2=1.0)
    return {
        "fit_gda-pooled": lambda: fastgen.fit_gda(X, y),
        "fit_gda-per_class": lambda: fastgen.fit_gda(X, y, "per_class"),
        "proba-pooled": lambda: fastgen.predict_proba(pooled, Xt),
        "jll-per_class": lambda: fastgen.joint_log_likelihood(qda, Xt),
        "log-proba-per_class": lambda: fastgen.predict_log_proba(qda, Xt),
        "fit_multinomial_nb-csr": lambda: fastgen.fit_multinomial_nb(C, y),
        "proba-multinomial-csr": lambda: fastgen.predict_proba(mnb, Ct),
        "fit_logistic": lambda: fastgen.fit_logistic(X, yb, l2=1.0),
        "proba-logistic": lambda: fastgen.predict_proba(logit, Xt),
    }


def test_concurrent_python_threads_match_serial(tasks):
    serial = {name: fn() for name, fn in tasks.items()}
    jobs = [name for name in tasks for _ in range(3)]
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda name: (name, tasks[name]()), jobs))
    for name, res in results:
        _assert_bitwise_equal(res, serial[name], name)


# ---------------------------------------------------------------- NUMBA_NUM_THREADS=1, 2

_SCRIPT = r"""
import dataclasses, hashlib, json, sys, warnings
import numpy as np, scipy.sparse as sp
import fastgen
warnings.simplefilter("ignore", fastgen.ConvergenceWarning)  # max_iter=0 below

def leaves(obj):
    if isinstance(obj, np.ndarray):
        yield obj
    elif isinstance(obj, tuple):
        for v in obj:
            yield from leaves(v)
    elif dataclasses.is_dataclass(obj):
        for f in dataclasses.fields(obj):
            yield from leaves(getattr(obj, f.name))
    else:
        yield np.asarray(repr(obj))

def digest(obj):
    h = hashlib.sha256()
    for a in leaves(obj):
        h.update(str((a.dtype, a.shape)).encode())
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()

rng = np.random.default_rng(7)
n, d, K = 20_000, 6, 3                      # n·d = 1.2e5: several work blocks
y = rng.integers(0, K, size=n)
X = rng.standard_normal((n, d)) * 2.0 + y[:, None] + 50.0
X32 = X.astype(np.float32)
C = sp.random(n, 300, density=0.03, format="csr", random_state=5,
              data_rvs=lambda k: rng.integers(1, 4, size=k).astype(float))
Cd = np.floor(np.abs(X[:, :5] - 50.0))      # dense counts / category codes
w = rng.uniform(0.5, 2.0, size=n)
yb = (y > 0).astype(int)
Xt, Ct, Cdt = X[:6000] + 0.3, C[:6000], Cd[:6000]
out = {}

def run(name, fn):
    out[name] = digest(fn())

models = {}
for cov in ("pooled", "per_class", "diagonal", "pooled_diagonal"):
    run(f"fit_gda-{cov}", lambda: fastgen.fit_gda(X, y, cov))
    run(f"fit_gda-{cov}-w", lambda: fastgen.fit_gda(X, y, cov, sample_weight=w))
    run(f"fit_gda-{cov}-f32", lambda: fastgen.fit_gda(X32, y, cov))
    models[f"gda-{cov}"] = (fastgen.fit_gda(X, y, cov), Xt)
run("fit_gda-lw", lambda: fastgen.fit_gda(X, y, shrinkage="ledoit-wolf"))
for kind in ("pooled", "per_class", "diagonal"):
    run(f"class_moments-{kind}", lambda: fastgen.class_moments(X, y, kind=kind))
run("fit_gaussian_nb", lambda: fastgen.fit_gaussian_nb(X, y, sample_weight=w))
models["gaussian-nb"] = (fastgen.fit_gaussian_nb(X, y), Xt)
for name, fit in [("multinomial", fastgen.fit_multinomial_nb),
                  ("bernoulli", fastgen.fit_bernoulli_nb),
                  ("complement", fastgen.fit_complement_nb),
                  ("categorical", fastgen.fit_categorical_nb)]:
    run(f"fit-{name}-csr", lambda: fit(C, y, sample_weight=w))
    run(f"fit-{name}-dense", lambda: fit(Cd, y))
    models[f"{name}-csr"] = (fit(C, y), Ct)
    models[f"{name}-dense"] = (fit(Cd, y), Cdt)
for kind in ("multinomial", "bernoulli", "gaussian"):
    run(f"nb_counts-{kind}", lambda: fastgen.nb_counts(Cd if kind != "gaussian" else X, y, kind))
run("fit_logistic-binary", lambda: fastgen.fit_logistic(X - 50.0, yb, l2=1.0))
run("fit_logistic-multinomial", lambda: fastgen.fit_logistic(X - 50.0, y, l2=1.0))
run("fit_logistic-csr", lambda: fastgen.fit_logistic(C, yb, l2=1.0))
lb = fastgen.fit_logistic(X - 50.0, yb, l2=1.0, max_iter=0)
run("irls_step", lambda: fastgen.irls_step(lb, X - 50.0, yb, l2=1.0))
models["logistic-binary"] = (fastgen.fit_logistic(X - 50.0, yb, l2=1.0), Xt - 50.0)
models["logistic-multinomial"] = (fastgen.fit_logistic(X - 50.0, y, l2=1.0), Xt - 50.0)
models["logistic-csr"] = (fastgen.fit_logistic(C, yb, l2=1.0), Ct)
for name, (p, Z) in models.items():
    for f in (fastgen.joint_log_likelihood, fastgen.predict_log_proba,
              fastgen.predict_proba, fastgen.predict):
        run(f"{f.__name__}-{name}", lambda: f(p, Z))
run("lda_transform", lambda: fastgen.lda_transform(models["gda-pooled"][0], Xt))
json.dump(out, sys.stdout)
"""


def _hashes(n_threads):
    # the kernels' path whatever the data's size (FASTGEN_SMALL_VALUES=0); the numpy
    # path's determinism: tests/test_small_path.py
    env = dict(os.environ, NUMBA_NUM_THREADS=str(n_threads), PYTHONPATH=ROOT,
               FASTGEN_SMALL_VALUES="0")
    res = subprocess.run([sys.executable, "-W", "error", "-c", _SCRIPT], env=env, cwd=ROOT,
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    return json.loads(res.stdout)


def test_bitwise_identical_across_numba_thread_counts():
    one, two = _hashes(1), _hashes(2)
    assert one.keys() == two.keys()
    assert len(one) >= 60
    differ = sorted(k for k in one if one[k] != two[k])
    assert not differ, f"results depend on NUMBA_NUM_THREADS: {differ}"


def test_thread_scopes_nest():
    """``threads_for_work`` leaves numba's thread count alone outside a forked child;
    ``blas_single_thread`` nested in itself keeps BLAS on one thread until the outer
    scope ends."""
    import numba
    from threadpoolctl import threadpool_info

    from fastgen._runtime import blas_single_thread, kernel_threads, threads_for_work

    def blas_threads():
        return {i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"}

    before = numba.get_num_threads()
    with threads_for_work(1), threads_for_work(1 << 40):
        assert kernel_threads() == numba.get_num_threads() == before

    outside = blas_threads()
    with blas_single_thread():
        assert blas_threads() == {1}
        with blas_single_thread():
            assert blas_threads() == {1}
        assert blas_threads() == {1}
    assert blas_threads() == outside

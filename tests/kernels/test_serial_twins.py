"""Serial twins of the parallel kernels (fastgen.kernels._jit.serial_twin).

Inputs below ``SMALL_WORK`` run the twins.  The twins must compute the bits the parallel
kernels compute (same source, same fixed work split), on real data of every family; a
small first use must load no parallel kernel and leave numba's thread pool unstarted.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import fastgen
import fastgen._runtime as runtime
from fastgen.kernels._jit import KernelDispatcher, serial_code, serial_twin

ROOT = Path(__file__).resolve().parents[2]
SERIAL, PARALLEL = 1 << 62, 0


def _datasets():
    from sklearn import datasets

    out = {}
    for name, loader in (("iris", datasets.load_iris), ("wine", datasets.load_wine),
                         ("breast_cancer", datasets.load_breast_cancer)):
        X, y = loader(return_X_y=True)
        out[name] = (np.ascontiguousarray(X), y)
    digits = datasets.load_digits()
    out["digits"] = (digits.data[:700].copy(), digits.target[:700])
    return out


DATA = _datasets()


def _informative(X, k):
    """The k columns of largest spread, standardised (logistic models)."""
    cols = np.argsort(-X.std(axis=0), kind="stable")[:k]
    Z = X[:, cols]
    return np.ascontiguousarray((Z - Z.mean(0)) / Z.std(0))


def _gda(X, y):
    out = {}
    for dtype in (np.float64, np.float32):
        Xd = X.astype(dtype)
        for cov in ("pooled", "per_class", "diagonal"):
            p = fastgen.fit_gda(Xd, y, cov, reg=1e-3)
            out[f"{cov}-{dtype.__name__}-means"] = p.means
            out[f"{cov}-{dtype.__name__}-proba"] = fastgen.predict_proba(p, Xd)
            out[f"{cov}-{dtype.__name__}-jll"] = fastgen.joint_log_likelihood(p, Xd)
            out[f"{cov}-{dtype.__name__}-pred"] = fastgen.predict(p, Xd)
        p = fastgen.fit_gaussian_nb(Xd, y)
        out[f"gnb-{dtype.__name__}"] = fastgen.predict_log_proba(p, Xd)
    return out


def _counts(X, y):
    out = {}
    Xc = np.floor(np.abs(X) * 3.0)
    for model in ("multinomial", "complement", "bernoulli"):
        fit = getattr(fastgen, f"fit_{model}_nb")
        for tag, XX in (("dense", Xc), ("csr", sp.csr_matrix(Xc))):
            p = fit(XX, y)
            out[f"{model}-{tag}-proba"] = fastgen.predict_proba(p, XX)
            out[f"{model}-{tag}-pred"] = fastgen.predict(p, XX)
    Q = np.minimum(Xc, 5.0)
    p = fastgen.fit_categorical_nb(Q, y)
    out["categorical"] = fastgen.predict_proba(p, Q)
    return out


def _logistic(X, y):
    out = {}
    Z = _informative(X, 8)
    y2 = (Z[:, 0] + np.random.default_rng(1).standard_normal(len(y)) > 0).astype(int)
    p = fastgen.fit_logistic(Z[:, :4], y2)
    out["binary"] = p.coef
    out["binary-cov"] = fastgen.logistic_inference(p, Z[:, :4], y2).cov_params
    p = fastgen.fit_logistic(Z, y, l2=1.0)
    out["multinomial"] = p.coef
    out["multinomial-proba"] = fastgen.predict_proba(p, Z)
    p = fastgen.fit_logistic(sp.csr_matrix(np.floor(np.abs(X))), y, l2=1.0)
    out["multinomial-csr"] = p.coef
    p = fastgen.fit_logistic(Z[:, :3], y2, penalty="firth")
    out["firth"] = p.coef
    return out


@pytest.mark.parametrize("family", [_gda, _counts, _logistic], ids=lambda f: f.__name__[1:])
@pytest.mark.parametrize("name", sorted(DATA))
def test_twins_compute_the_parallel_kernels_bits(monkeypatch, family, name):
    X, y = DATA[name]
    monkeypatch.setattr(runtime, "SMALL_WORK", SERIAL)
    serial = family(X, y)
    monkeypatch.setattr(runtime, "SMALL_WORK", PARALLEL)
    parallel = family(X, y)
    assert serial.keys() == parallel.keys()
    differ = [k for k in serial
              if not np.array_equal(serial[k], parallel[k], equal_nan=True)]
    assert not differ, differ


def test_twins_split_work_into_several_groups_the_same_way(monkeypatch):
    # rows enough for several work groups in every moment kernel
    rng = np.random.default_rng(3)
    y = np.arange(20_000) % 4
    X = rng.standard_normal((20_000, 6)) + y[:, None]
    monkeypatch.setattr(runtime, "SMALL_WORK", SERIAL)
    serial = _gda(X, y)
    monkeypatch.setattr(runtime, "SMALL_WORK", PARALLEL)
    parallel = _gda(X, y)
    assert all(np.array_equal(serial[k], parallel[k]) for k in serial)


def test_a_twin_is_its_kernel_without_parallel_under_its_own_name():
    from fastgen.kernels import moments, sparse_scores, special

    twin = serial_twin(moments.moments_pooled)
    assert twin is not moments.moments_pooled and twin is serial_twin(moments.moments_pooled)
    assert twin.py_func.__qualname__ == "moments_pooled_serial"
    assert twin.py_func.__code__ is moments.moments_pooled.py_func.__code__
    assert "parallel" not in twin.targetoptions
    assert moments.moments_pooled.targetoptions["parallel"]
    # a serial kernel is its own twin, unless it calls a parallel kernel: then its twin
    # calls the callee's twin
    assert serial_twin(special.finish_rows) is special.finish_rows
    caller = serial_twin(sparse_scores.csr_linear_scores)
    assert caller is not sparse_scores.csr_linear_scores
    assert (caller.py_func.__globals__["_csr_linear_rows"]
            is serial_twin(sparse_scores._csr_linear_rows))
    assert sparse_scores.__dict__["_csr_linear_rows"] is sparse_scores._csr_linear_rows


def test_serial_code_routes_python_calls_to_the_twin():
    from fastgen.kernels import special

    x = np.random.default_rng(0).standard_normal((50, 4))
    kernel = special.logsumexp_rows
    assert isinstance(kernel, KernelDispatcher)
    want = kernel(x)
    with serial_code():
        got = kernel(x)
    assert np.array_equal(want, got)
    assert serial_twin(kernel).signatures  # the call above ran the twin


_SMALL_USE = r"""
import gc, json, sys
import numpy as np, scipy.sparse as sp
import fastgen as fg
rng = np.random.default_rng(0)
n, d = 500, 5
y3 = np.arange(n) % 3
X = rng.standard_normal((n, d)) + y3[:, None]
y2 = (X[:, 0] + rng.standard_normal(n) > 1.0).astype(np.int64)
C = sp.random(n, 50, density=0.1, format="csr", random_state=0)
C.data = np.floor(C.data * 5.0) + 1.0
Q = sp.csr_matrix(rng.integers(0, 4, size=(n, 8)).astype(np.float64))
for kind in ("pooled", "per_class", "diagonal"):
    p = fg.fit_gda(X, y3, kind); fg.predict_proba(p, X); fg.predict(p, X.astype(np.float32))
p = fg.fit_gaussian_nb(X, y3); fg.predict_proba(p, X)
for fit in (fg.fit_bernoulli_nb, fg.fit_multinomial_nb, fg.fit_complement_nb):
    p = fit(C, y3); fg.predict_proba(p, C); fg.predict(p, C)
p = fg.fit_categorical_nb(Q, y3); fg.predict_proba(p, Q)
Cd = C.toarray()
for fit in (fg.fit_bernoulli_nb, fg.fit_multinomial_nb, fg.fit_complement_nb):
    p = fit(Cd, y3); fg.predict_proba(p, Cd)
for model in ("multinomial", "bernoulli", "gaussian"):
    fg.nb_counts(Cd if model == "gaussian" else C, y3, model)
parts = [fg.class_moments(X[:250], y3[:250]), fg.class_moments(X[250:], y3[250:])]
p = fg.gda_from_moments(fg.merge_moments(*parts)); fg.lda_transform(p, X)
p = fg.fit_gda(X, y3, shrinkage="ledoit-wolf", sample_weight=np.ones(n)); fg.predict(p, X)
p = fg.fit_logistic(C, y3, l2=1.0); fg.predict_proba(p, C)
p = fg.fit_logistic(X, y3); fg.logistic_inference(p, X, y3, cov_type="HC1")
p = fg.fit_logistic(X, y2); fg.logistic_inference(p, X, y2)
p = fg.fit_logistic(X, y3); fg.predict_proba(p, X)
p = fg.fit_logistic(X[:, :2], y2, penalty="firth"); fg.logistic_inference(p, X[:, :2], y2)
from fastgen.kernels._jit import KernelDispatcher
import numba.np.ufunc.parallel as par
loaded = sorted(o.py_func.__qualname__ for o in gc.get_objects()
                if isinstance(o, KernelDispatcher) and o.targetoptions.get("parallel")
                and o.overloads)
print(json.dumps({"parallel_loaded": loaded, "pool_started": bool(par._is_initialized)}))
"""


def test_a_small_first_use_loads_no_parallel_kernel():
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    res = subprocess.run([sys.executable, "-W", "error", "-c", _SMALL_USE], env=env,
                         cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert res.returncode == 0, res.stderr[-3000:]
    out = json.loads(res.stdout.strip().splitlines()[-1])
    assert out == {"parallel_loaded": [], "pool_started": False}


_UNPICKLED = r"""
import pickle, sys
import numpy as np
from fastgen.kernels._jit import serial_code, serial_twin
kernel = pickle.loads(sys.stdin.buffer.read())
X = np.random.default_rng(0).random((50, 3))
codes = (np.arange(50) % 2).astype(np.int32)
with serial_code():
    got = kernel(X, codes, np.empty(0), 2, 1)
twin = serial_twin(kernel)
assert twin.py_func.__qualname__ == "moments_pooled_serial", twin
assert "parallel" not in twin.targetoptions
print(repr(got[1].tolist()))
"""


def test_a_kernel_unpickled_in_another_process_has_a_twin():
    # numba rebuilds a pickled dispatcher from its function in the other process
    # (dask sends kernels that way): the rebuilt one runs serially inside serial_code
    import pickle

    from fastgen.kernels import moments

    res = subprocess.run([sys.executable, "-W", "error", "-c", _UNPICKLED],
                         input=pickle.dumps(moments.moments_pooled), cwd=ROOT,
                         capture_output=True, timeout=600)
    assert res.returncode == 0, res.stderr.decode()[-3000:]
    X = np.random.default_rng(0).random((50, 3))
    codes = (np.arange(50) % 2).astype(np.int32)
    want = moments.moments_pooled(X, codes, np.empty(0), 2, 1)[1]
    assert res.stdout.decode().strip() == repr(want.tolist())


_MODULE = '''
import numpy as np
from numba import prange
from fastgen.kernels._jit import pjit

SCALE = 2.0


@pjit
def scaled(x):
    out = np.empty_like(x)
    for i in prange(x.shape[0]):
        out[i] = SCALE * x[i]
    return out
'''


def test_a_twin_reads_its_module_globals_when_it_compiles(tmp_path, monkeypatch):
    # like any numba function: a twin made while a global was patched (a test's
    # monkeypatch) does not keep the patched value for its later compilations
    import importlib

    (tmp_path / "twin_globals_mod.py").write_text(_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    mod = importlib.import_module("twin_globals_mod")
    with monkeypatch.context() as patch:
        patch.setattr(mod, "SCALE", 3.0)
        twin = serial_twin(mod.scaled)
    x = np.arange(4.0)
    assert np.array_equal(twin(x), 2.0 * x)
    with serial_code():
        assert np.array_equal(mod.scaled(x), 2.0 * x)

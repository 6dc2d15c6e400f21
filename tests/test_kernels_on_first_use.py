"""Kernel modules load on first use (``fastgen._runtime.kernel_module``): a process
whose inputs are all small (the numpy passes, ``fastgen._small``) never imports numba,
llvmlite or scipy.stats; a large input loads the kernels and agrees with the numpy
passes; the kernels stay importable and callable from a user's ``@njit`` code."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]

#: every family's public calls on small inputs (dense and CSR, weights, inference of
#: every covariance type, Firth with profile intervals, FLIC and FLAC, statistics)
_SMALL_CALLS = """
import json, sys, warnings
import numpy as np, scipy.sparse as sp
import fastgen as fg

warnings.simplefilter("ignore")
SCORES = (fg.joint_log_likelihood, fg.predict_log_proba, fg.predict_proba, fg.predict)

def score(p, X):
    for f in SCORES:
        f(p, X)

rng = np.random.default_rng(0)
n, d = 400, 5
y3 = np.arange(n) % 3
w = np.linspace(0.5, 2.0, n)
for dtype in (np.float64, np.float32):
    X = (rng.standard_normal((n, d)) + y3[:, None]).astype(dtype)
    y2 = (X[:, 0] + rng.standard_normal(n) > 1.0).astype(np.int64)
    C = sp.random(n, 40, density=0.1, format="csr", random_state=0, dtype=dtype)
    C.data = np.floor(C.data * 5.0) + 1.0
    Q = rng.integers(0, 4, size=(n, 6)).astype(dtype)
    for cov in ("pooled", "per_class", "diagonal", "pooled_diagonal"):
        score(fg.fit_gda(X, y3, cov), X)
        score(fg.fit_gda(X, y3, cov, sample_weight=w), X)
    for s in (0.2, "ledoit-wolf", "oas"):
        score(fg.fit_gda(X, y3, shrinkage=s), X)
    p = fg.fit_gda(X, y3)
    fg.linear_discriminant(p)
    fg.lda_transform(p, X)
    fg.gda_from_moments(fg.merge_moments(fg.class_moments(X, y3),
                                         fg.class_moments(X[:9], y3[:9])))
    score(fg.fit_gaussian_nb(X, y3, sample_weight=w), X)
    for fit in (fg.fit_bernoulli_nb, fg.fit_multinomial_nb, fg.fit_complement_nb):
        for data in (C, C.toarray()):
            score(fit(data, y3), data)
            score(fit(data, y3, sample_weight=w), data)
    fg.nb_from_counts(fg.nb_counts(C, y3, "multinomial"))
    for data in (Q, sp.csr_matrix(Q)):
        score(fg.fit_categorical_nb(data, y3), data)
    for yy in (y2, y3):
        for data in (X, C):
            p = fg.fit_logistic(data, yy)
            score(p, data)
            score(fg.fit_logistic(data, yy, l2=0.5, sample_weight=w), data)
            for cov in ("nonrobust", "HC0", "HC1"):
                fg.logistic_inference(p, data, yy, cov_type=cov)
            fg.logistic_inference(p, data, yy, cov_type="cluster", groups=np.arange(n) % 7)
        p = fg.fit_logistic(X, yy, penalty="firth")
        score(p, X)
        fg.logistic_inference(p, X, yy, ci="profile" if yy is y2 else "wald")
    for correction in ("flic", "flac"):
        p = fg.fit_logistic(X, y2, penalty="firth", correction=correction)
        score(p, X)
        fg.logistic_inference(p, X, y2)
    fg.detect_separation(X, y2)
    fg.irls_step(fg.fit_logistic(X, y2), X, y2)
print(json.dumps(sorted(m for m in ("numba", "llvmlite", "scipy.stats") if m in sys.modules)))
"""

#: one large input per kind of pass: the kernels load and agree with the numpy passes
_LARGE_CALL = """
import json, sys
import numpy as np
import fastgen as fg
from fastgen import _small

rng = np.random.default_rng(1)
n, d = 30_000, 5  # 150 000 values: above the threshold
y = np.arange(n) % 3
X = rng.standard_normal((n, d)) + y[:, None]
assert not _small.is_small(X)
p = fg.fit_gda(X, y, "per_class")
P = fg.predict_proba(p, X)
loaded = "numba" in sys.modules and "fastgen.kernels.moments" in sys.modules
_small.SMALL_VALUES = 10**9  # the same data on the numpy passes
q = fg.fit_gda(X, y, "per_class")
Q = fg.predict_proba(q, X)
err = max(float(np.max(np.abs(p.covariance - q.covariance)) / np.max(np.abs(q.covariance))),
          float(np.max(np.abs(P - Q))))
print(json.dumps({"loaded": loaded, "err": err}))
"""


def _run(code):
    env = {k: v for k, v in os.environ.items() if k != "FASTGEN_SMALL_VALUES"}
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, cwd=ROOT,
                         capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


#: the naive Bayes families alone: no factorisation, so not even scipy.linalg
_NAIVE_BAYES_CALLS = """
import json, sys
import numpy as np, scipy.sparse as sp
import fastgen as fg

rng = np.random.default_rng(2)
n = 300
y = np.arange(n) % 3
X = rng.standard_normal((n, 4)) + y[:, None]
C = sp.random(n, 30, density=0.2, format="csr", random_state=2)
Q = rng.integers(0, 3, size=(n, 4))
for p, data in ((fg.fit_gaussian_nb(X, y), X), (fg.fit_multinomial_nb(C, y), C),
                (fg.fit_bernoulli_nb(C, y), C), (fg.fit_complement_nb(C.toarray(), y), C),
                (fg.fit_categorical_nb(Q, y), Q)):
    fg.predict_proba(p, data)
    fg.predict(p, data)
print(json.dumps(sorted(m for m in ("numba", "llvmlite", "scipy.stats", "scipy.linalg")
                        if m in sys.modules)))
"""


def test_small_inputs_import_neither_numba_nor_scipy_stats():
    assert _run(_SMALL_CALLS) == []


def test_small_naive_bayes_does_not_import_scipy_linalg():
    assert _run(_NAIVE_BAYES_CALLS) == []


def test_a_large_input_loads_the_kernels():
    out = _run(_LARGE_CALL)
    assert out["loaded"]
    assert out["err"] <= 1e-12


def test_kernel_module_reads_through_to_the_module(monkeypatch):
    from fastgen._runtime import kernel_module
    from fastgen.kernels import labels

    proxy = kernel_module("labels")
    assert proxy.first_nonfinite is labels.first_nonfinite
    assert "loaded" in repr(proxy) and "fastgen.kernels.labels" in repr(proxy)
    # a monkeypatch of the module is seen through the proxy, and one of the proxy
    # shadows the module
    monkeypatch.setattr(labels, "NONFINITE_SCAN_BLOCK", 7)
    assert proxy.NONFINITE_SCAN_BLOCK == 7
    monkeypatch.setattr(proxy, "first_nonfinite", len)
    assert proxy.first_nonfinite is len and labels.first_nonfinite is not len
    with pytest.raises(AttributeError):
        getattr(proxy, "no_such_kernel")  # noqa: B009 - the read is the test


def test_kernel_module_of_a_missing_module_raises_on_use():
    from fastgen._runtime import kernel_module

    proxy = kernel_module("no_such_module")  # nothing happens until an attribute is read
    with pytest.raises(ModuleNotFoundError):
        getattr(proxy, "anything")  # noqa: B009 - the read is the test


def test_kernels_stay_callable_from_user_njit_code():
    numba = pytest.importorskip("numba")
    from fastgen.kernels import labels, special

    @numba.njit
    def first_bad(a):
        return labels.first_nonfinite(a)

    @numba.njit
    def exp_all(x):
        out = np.empty_like(x)
        for i in range(x.shape[0]):
            out[i] = special.exp_nonpos(x[i])
        return out

    a = np.array([0.0, 1.0, np.nan, 2.0])
    assert first_bad(a) == 2
    x = -np.linspace(0.0, 30.0, 7)
    np.testing.assert_allclose(exp_all(x), np.exp(x), rtol=4 * np.finfo(float).eps)
    assert special.MODE_PROBA == 2  # the scoring modes, re-exported


_BLAS_AFTER_LAZY_IMPORT = """
import json, os
import numpy as np
from threadpoolctl import threadpool_info
from fastgen._runtime import blas_single_thread

with blas_single_thread():  # the first scope: scipy.linalg not imported yet
    pass
import scipy.linalg  # its own OpenBLAS, loaded on first use as fastgen loads it

with blas_single_thread():
    inside = {i["filepath"]: i["num_threads"] for i in threadpool_info()
              if i["user_api"] == "blas"}
print(json.dumps(inside))
"""


def test_blas_held_at_one_thread_for_libraries_loaded_later():
    # modules that load a BLAS (scipy.linalg, numba) are imported on first use: the
    # scope must hold the libraries loaded after its first use too
    inside = _run(_BLAS_AFTER_LAZY_IMPORT)
    assert len(inside) >= 2, inside  # numpy's and scipy's OpenBLAS
    assert set(inside.values()) == {1}, inside

"""The two paths of every family: numpy passes for small inputs, compiled kernels for
large ones (fastgen._small).  On the same data, forced down each path, results agree to
1e-12 relative (the contract of docs/guide/processes.rst); small inputs compile nothing;
the numpy path gives the same bits under 1 and 2 BLAS threads.
"""

import dataclasses
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import fastgen
from fastgen import _small

RTOL = 1e-12


def _both(monkeypatch, fn):
    """fn() down the numpy path, then down the kernels' path."""
    monkeypatch.setattr(_small, "SMALL_VALUES", 1 << 62)
    a = fn()
    monkeypatch.setattr(_small, "SMALL_VALUES", -1)
    b = fn()
    return a, b


def _close(a, b, what="result"):
    """a and b agree to RTOL relative to the largest entry of their field."""
    if dataclasses.is_dataclass(a):
        for f in dataclasses.fields(a):
            _close(getattr(a, f.name), getattr(b, f.name), f"{what}.{f.name}")
        return
    if isinstance(a, (tuple, list)):
        assert len(a) == len(b), what
        for i, (x, y) in enumerate(zip(a, b)):
            _close(x, y, f"{what}[{i}]")
        return
    if isinstance(a, np.ndarray) and a.dtype.kind in "fc":
        assert a.shape == b.shape and a.dtype == b.dtype, what
        fa, fb = np.isfinite(a), np.isfinite(b)
        np.testing.assert_array_equal(fa, fb, err_msg=what)
        np.testing.assert_array_equal(a[~fa], b[~fb], err_msg=what)
        scale = float(np.max(np.abs(b[fb]), initial=0.0))
        tol = RTOL * (50.0 if a.dtype == np.float64 else 1e5) * max(scale, 1e-300)
        np.testing.assert_allclose(a[fa], b[fb], rtol=0, atol=tol, err_msg=what)
        return
    if isinstance(a, float):
        assert abs(a - b) <= RTOL * 50 * max(abs(a), abs(b), 1e-300), (what, a, b)
        return
    if isinstance(a, np.ndarray):
        np.testing.assert_array_equal(a, b, err_msg=what)
        return
    assert a == b, what


def _data(seed=0, n=300, d=6, K=3, shift=0.0, scale=1.0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % K
    X = (rng.standard_normal((n, d)) + y[:, None] * 0.7) * scale + shift
    return X, y


def _counts(seed=0, n=300, d=40, K=3):
    rng = np.random.default_rng(seed)
    C = sp.random(n, d, density=0.15, format="csr", random_state=seed)
    C.data = np.floor(C.data * 6.0) + 1.0
    y = (np.arange(n) + rng.integers(0, 2, n)) % K
    return C, y


def _scores(p, X):
    return (fastgen.joint_log_likelihood(p, X), fastgen.predict_log_proba(p, X),
            fastgen.predict_proba(p, X), fastgen.predict(p, X))


WEIGHTS = [None, "w"]


@pytest.mark.parametrize("covariance", ["pooled", "per_class", "diagonal",
                                        "pooled_diagonal"])
@pytest.mark.parametrize("weights", WEIGHTS)
@pytest.mark.parametrize("offset", [0.0, 1e4])
def test_gda_paths_agree(monkeypatch, covariance, weights, offset):
    X, y = _data(1, shift=offset, d=5 if covariance != "per_class" else 40)
    w = np.linspace(0.2, 3.0, X.shape[0]) if weights else None
    a, b = _both(monkeypatch, lambda: (
        p := fastgen.fit_gda(X, y, covariance, sample_weight=w), *_scores(p, X)))
    _close(a, b)


@pytest.mark.parametrize("shrinkage", ["ledoit-wolf", "oas", 0.3])
def test_gda_shrinkage_paths_agree(monkeypatch, shrinkage):
    X, y = _data(2, d=8)
    a, b = _both(monkeypatch, lambda: (
        p := fastgen.fit_gda(X, y, shrinkage=shrinkage), *_scores(p, X)))
    _close(a, b)


def test_gda_float32_paths_agree(monkeypatch):
    X, y = _data(3)
    X32 = X.astype(np.float32)
    a, b = _both(monkeypatch, lambda: (
        p := fastgen.fit_gda(X32, y, "per_class"), *_scores(p, X32)))
    _close(a[0], b[0])  # moments are float64 either way
    np.testing.assert_array_equal(a[-1], b[-1])


@pytest.mark.parametrize("weights", WEIGHTS)
def test_moments_and_merges_agree(monkeypatch, weights):
    X, y = _data(4, d=7, K=4)
    w = np.linspace(0.5, 2.0, X.shape[0]) if weights else None
    for kind in ("pooled", "per_class", "diagonal"):
        def run(kind=kind):
            h = X.shape[0] // 3
            m1 = fastgen.class_moments(X[:h], y[:h], kind=kind,
                                       sample_weight=None if w is None else w[:h])
            m2 = fastgen.class_moments(X[h:], y[h:], kind=kind,
                                       sample_weight=None if w is None else w[h:])
            m3 = fastgen.class_moments(X[:5], y[:5], kind=kind)  # classes missing
            return m1, fastgen.merge_moments(m1, m2), fastgen.merge_moments(m3, m1)
        a, b = _both(monkeypatch, run)
        _close(a, b, kind)


@pytest.mark.parametrize("weights", WEIGHTS)
def test_gaussian_nb_paths_agree(monkeypatch, weights):
    X, y = _data(5, d=20, K=5)
    w = np.linspace(0.5, 2.0, X.shape[0]) if weights else None
    a, b = _both(monkeypatch, lambda: (
        p := fastgen.fit_gaussian_nb(X, y, sample_weight=w), *_scores(p, X)))
    _close(a, b)


@pytest.mark.parametrize("model", ["bernoulli", "multinomial", "complement"])
@pytest.mark.parametrize("fmt", ["dense", "csr", "csr64"])
@pytest.mark.parametrize("weights", WEIGHTS)
def test_discrete_nb_paths_agree(monkeypatch, model, fmt, weights):
    C, y = _counts(6)
    if fmt == "csr64":
        C = C.copy()
        C.indices, C.indptr = C.indices.astype(np.int64), C.indptr.astype(np.int64)
    X = C.toarray() if fmt == "dense" else C
    w = np.linspace(0.5, 2.0, C.shape[0]) if weights else None
    fit = getattr(fastgen, f"fit_{model}_nb")
    kw = {"binarize": 1.5} if model == "bernoulli" else {}
    a, b = _both(monkeypatch, lambda: (
        p := fit(X, y, sample_weight=w, **kw), *_scores(p, X),
        fastgen.nb_counts(X, y, model=model, sample_weight=w, **kw)))
    _close(a, b)


@pytest.mark.parametrize("fmt", ["dense", "csr"])
def test_categorical_nb_paths_agree(monkeypatch, fmt):
    rng = np.random.default_rng(7)
    Q = rng.integers(0, 4, size=(300, 8)).astype(np.float64)
    Q[rng.random(Q.shape) < 0.5] = 0.0
    y = np.arange(300) % 3
    X = sp.csr_matrix(Q) if fmt == "csr" else Q
    w = np.linspace(0.5, 2.0, 300)
    a, b = _both(monkeypatch, lambda: (
        p := fastgen.fit_categorical_nb(X, y, sample_weight=w), *_scores(p, X)))
    _close(a, b)


def _logistic_data(seed, K, fmt):
    rng = np.random.default_rng(seed)
    n, d = 400, 6
    X = rng.standard_normal((n, d)) * np.array([1.0, 10.0, 0.1, 1.0, 3.0, 1.0])
    eta = X @ rng.standard_normal((d, K)) * 0.4
    y = np.argmax(eta + rng.gumbel(size=(n, K)), axis=1)
    if fmt == "csr":
        X[rng.random(X.shape) < 0.6] = 0.0
        X = sp.csr_matrix(X)
    return X, y


@pytest.mark.parametrize("K", [2, 3])
@pytest.mark.parametrize("fmt", ["dense", "csr"])
@pytest.mark.parametrize("weights", WEIGHTS)
def test_logistic_paths_agree(monkeypatch, K, fmt, weights):
    X, y = _logistic_data(8, K, fmt)
    w = np.linspace(0.5, 2.0, X.shape[0]) if weights else None
    groups = np.arange(X.shape[0]) % 7

    def run():
        p = fastgen.fit_logistic(X, y, sample_weight=w)
        out = [p, *_scores(p, X)]
        for cov in ("nonrobust", "HC1", "cluster"):
            r = fastgen.logistic_inference(p, X, y, sample_weight=w, cov_type=cov,
                                           groups=groups if cov == "cluster" else None)
            out += [r.bse, r.cov_params, r.llf, r.llnull]
        return out

    a, b = _both(monkeypatch, run)
    _close(a, b)


@pytest.mark.parametrize("l2", [0.5, 30.0])
def test_ridge_logistic_newton_cg_paths_agree(monkeypatch, l2):
    """Wide enough for Newton-CG (Hessian-vector products) on both paths."""
    rng = np.random.default_rng(9)
    X = rng.standard_normal((300, 150))
    y = (X[:, 0] + rng.standard_normal(300) > 0).astype(int)
    y3 = np.arange(300) % 3
    a, b = _both(monkeypatch, lambda: (fastgen.fit_logistic(X, y, l2=l2),
                                       fastgen.fit_logistic(X, y3, l2=l2)))
    _close(a, b)


@pytest.mark.parametrize("fmt", ["dense", "csr"])
def test_firth_paths_agree(monkeypatch, fmt):
    X, y = _logistic_data(10, 2, fmt)
    w = np.linspace(0.5, 2.0, X.shape[0])

    def run():  # converged far enough that the paths' rounding shows
        p = fastgen.fit_logistic(X, y, penalty="firth", sample_weight=w, tol=1e-12)
        r = fastgen.logistic_inference(p, X, y, sample_weight=w)
        return p.coef, p.intercept, p.log_likelihood, r.bse, r.llf

    a, b = _both(monkeypatch, run)
    _close(a, b)


def test_firth_separated_curvature_paths_agree(monkeypatch):
    """Separated data: Firth takes l*'s Hessian (the curvature pass) on both paths."""
    rng = np.random.default_rng(11)
    X = rng.standard_normal((60, 3))
    y = (X[:, 0] > 0).astype(int)
    a, b = _both(monkeypatch, lambda: (
        p := fastgen.fit_logistic(X, y, penalty="firth", tol=1e-12), p.coef, p.intercept,
        p.log_likelihood)[1:])
    _close(a, b)


def test_threshold_counts_stored_values():
    X = np.zeros((10, 7))
    C = sp.random(1000, 50, density=0.01, format="csr", random_state=0)
    assert _small.values_of(X) == 70
    assert _small.values_of(C) == C.nnz + 1000
    assert _small.is_small(X) and _small.small_work(_small.SMALL_VALUES)
    assert not _small.small_work(_small.SMALL_VALUES + 1)


def _run(code, env_extra, *args):
    env = {k: v for k, v in os.environ.items() if k != "FASTGEN_SMALL_VALUES"}
    env.update(env_extra)
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args], env=env,
                         capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout.strip().splitlines()[-1]


#: every public function of every family on small data (a script)
PUBLIC_CALLS = Path(__file__).resolve().parent / "data" / "public_calls.py"


def test_small_inputs_compile_nothing(tmp_path):
    """Every family's public calls on small data, in a fresh process with an empty
    numba cache: no kernel's cache missed a signature (nothing compiled); the same
    check sees the one kernel a probe compiles."""
    env = {"NUMBA_CACHE_DIR": str(tmp_path)}
    assert json.loads(_run(PUBLIC_CALLS.read_text(), env)) == []
    probe = json.loads(_run(PUBLIC_CALLS.read_text(), env, "--probe"))
    assert probe == ["fastgen.kernels.labels.first_nonfinite"]


_THREADS = """
import hashlib
import numpy as np, scipy.sparse as sp
import fastgen as fg
rng = np.random.default_rng(0)
n, d = 2000, 40
y = np.arange(n) % 3
X = rng.standard_normal((n, d)) + y[:, None] * 0.3
y2 = (X[:, 0] + rng.standard_normal(n) > 0).astype(int)
C = sp.random(n, 40, density=0.2, format="csr", random_state=1)
h = hashlib.sha256()
for cov in ("pooled", "per_class", "diagonal"):
    p = fg.fit_gda(X, y, cov)
    h.update(p.covariance.tobytes()); h.update(fg.predict_log_proba(p, X).tobytes())
p = fg.fit_multinomial_nb(C, y); h.update(fg.predict_proba(p, C).tobytes())
for yy in (y2, y):
    p = fg.fit_logistic(X, yy)
    r = fg.logistic_inference(p, X, yy, cov_type="HC0")
    h.update(p.coef.tobytes()); h.update(r.cov_params.tobytes())
p = fg.fit_logistic(X[:, :5], y2, penalty="firth")
h.update(p.coef.tobytes())
print(h.hexdigest())
"""


def test_numpy_path_bitwise_across_blas_threads():
    """The numpy path gives the same bits with 1 and 2 BLAS threads."""
    assert _small.is_small(np.empty((2000, 40)))
    digests = {_run(_THREADS, {"OPENBLAS_NUM_THREADS": str(t), "OMP_NUM_THREADS": str(t),
                               "MKL_NUM_THREADS": str(t)}) for t in (1, 2)}
    assert len(digests) == 1

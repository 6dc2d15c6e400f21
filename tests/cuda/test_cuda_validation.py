"""Bad device input: the CPU path's messages, the caller's arrays untouched; device
detection without importing CUDA."""

import os
import re
import subprocess
import sys

import numpy as np
import pytest
from cuda_helpers import host
from numba import cuda
from reference import make_blobs

import fastgen
from fastgen.cuda import is_device_array

# The simulator evaluates the kernels with numpy scalars, which warn where a GPU silently
# gives inf or NaN (that the kernels then report): not a warning of fastgen's.
pytestmark = pytest.mark.filterwarnings(
    "ignore:(overflow|invalid value) encountered:RuntimeWarning")


@pytest.fixture(scope="module")
def data():
    return make_blobs(30, 3, 2, seed=4)


def _cpu_message(func, *args, **kw):
    with pytest.raises(ValueError) as e:
        func(*args, **kw)
    return str(e.value)


@pytest.mark.parametrize("value, what", [(np.nan, "NaN"), (np.inf, "infinity")])
@pytest.mark.parametrize("fit", ["gda_pooled", "gda_per_class", "gaussian_nb"])
def test_nonfinite_X_in_fit(data, fit, value, what):
    X, y = data
    X = X.copy()
    X[17, 2] = value
    X[21, 0] = np.nan  # a later one: the first is reported
    Xd = cuda.to_device(X)
    f = {"gda_pooled": lambda A: fastgen.fit_gda(A, y, "pooled"),
         "gda_per_class": lambda A: fastgen.fit_gda(A, y, "per_class"),
         "gaussian_nb": lambda A: fastgen.fit_gaussian_nb(A, y)}[fit]
    msg = f"X contains {what} at row 17, column 2 (0-based)"
    with pytest.raises(ValueError, match=re.escape(msg)):
        f(Xd)
    assert _cpu_message(f, X) == msg
    np.testing.assert_array_equal(host(Xd), X)  # untouched


@pytest.mark.parametrize("fn", ["joint_log_likelihood", "predict_proba", "predict"])
def test_nonfinite_X_in_scoring(data, fn):
    X, y = data
    p = fastgen.fit_gda(X, y, "per_class")
    Xt = X.copy()
    Xt[5, 1] = -np.inf
    with pytest.raises(ValueError, match="X contains infinity at row 5, column 1"):
        getattr(fastgen, fn)(p, cuda.to_device(Xt))


@pytest.mark.parametrize("dtype, covariance, fn, rows, at, value", [
    (np.float64, "pooled", "joint_log_likelihood", 4, (2, 0), 1e200),
    (np.float32, "diagonal", "predict", 6, (3, 1), 1e300),  # overflows the float32 model
], ids=["overflowing_scores", "float32_model_overflow"])
def test_overflowing_scores(data, dtype, covariance, fn, rows, at, value):
    X, y = data
    p = fastgen.fit_gda(X.astype(dtype), y, covariance)
    Xt = X[:rows].copy()
    Xt[at] = value
    msg = _cpu_message(getattr(fastgen, fn), p, Xt)
    with pytest.raises(ValueError) as e:
        getattr(fastgen, fn)(p, cuda.to_device(Xt))
    assert str(e.value) == msg


def test_shape_and_dtype_messages(data):
    X, y = data
    p = fastgen.fit_gda(X, y, "pooled")
    cases = [
        (lambda A: fastgen.fit_gda(A, y), X[:, 0]),
        (lambda A: fastgen.predict(p, A), X[:, :2]),
        (lambda A: fastgen.fit_gda(A, y), X.astype(np.complex128)),
    ]
    for f, A in cases:
        msg = _cpu_message(f, A)
        with pytest.raises(ValueError) as e:
            f(cuda.to_device(np.ascontiguousarray(A)))
        assert str(e.value) == msg


def test_label_and_weight_messages(data):
    X, y = data
    Xd = cuda.to_device(X)
    n = X.shape[0]
    w = np.ones(n)
    bad_w = {"nan": w.copy(), "neg": w.copy(), "zero": np.zeros(n), "short": w[:-1]}
    bad_w["nan"][7] = np.nan
    bad_w["neg"][9] = -0.5
    for name, wb in bad_w.items():
        msg = _cpu_message(fastgen.fit_gda, X, y, sample_weight=wb)
        for ww in (wb, cuda.to_device(wb)):
            with pytest.raises(ValueError) as e:
                fastgen.fit_gda(Xd, y, sample_weight=ww)
            assert str(e.value) == msg, name
    for yb in (y[:-1], y.reshape(2, -1)):
        msg = _cpu_message(fastgen.fit_gda, X, yb)
        with pytest.raises(ValueError) as e:
            fastgen.fit_gda(Xd, cuda.to_device(np.ascontiguousarray(yb)))
        assert str(e.value) == msg


def test_option_messages(data):
    X, y = data
    Xd = cuda.to_device(X)
    for kw in (dict(covariance="full"), dict(reg=2.0), dict(priors=[1.0])):
        msg = _cpu_message(fastgen.fit_gda, X, y, **kw)
        with pytest.raises(ValueError) as e:
            fastgen.fit_gda(Xd, y, **kw)
        assert str(e.value) == msg
    with pytest.raises(ValueError, match="ledoit-wolf.*not available for device arrays"):
        fastgen.fit_gda(Xd, y, shrinkage="ledoit-wolf")
    nb = fastgen.fit_multinomial_nb(np.abs(X), y)
    with pytest.raises(ValueError, match="MultinomialNBParams"):
        fastgen.predict(nb, Xd)


class _Iface:
    def __init__(self, kind=None, cai=False):
        self.kind = kind
        if cai:
            self.__cuda_array_interface__ = {}

    def __dlpack_device__(self):
        return (self.kind, 0)


def test_is_device_array():
    import scipy.sparse

    assert not is_device_array(np.zeros((2, 2)))
    assert not is_device_array([[1.0]])
    assert not is_device_array(None)
    assert not is_device_array(scipy.sparse.csr_matrix(np.eye(2)))
    assert not is_device_array(_Iface(kind=1))  # DLPack on the CPU
    assert not is_device_array(_Iface(kind=3))  # pinned host memory
    assert is_device_array(_Iface(kind=2))  # DLPack CUDA
    assert is_device_array(_Iface(kind=1, cai=True))  # CUDA Array Interface
    assert is_device_array(cuda.to_device(np.zeros(3)))


def test_dlpack_only_array_without_cupy(data):
    if "cupy" in sys.modules or _has_cupy():
        pytest.skip("CuPy is installed: DLPack-only arrays are converted through it")
    X, y = data
    with pytest.raises(ValueError, match="offers DLPack but not __cuda_array_interface__"):
        fastgen.fit_gda(_Iface(kind=2), y)


def _has_cupy():
    import importlib.util

    return importlib.util.find_spec("cupy") is not None


def test_import_fastgen_does_not_import_cuda():
    code = ("import sys, numpy as np, fastgen\n"
            "X = np.random.default_rng(0).normal(size=(20, 3))\n"
            "p = fastgen.fit_gda(X, np.arange(20) % 2)\n"
            "fastgen.predict_proba(p, X)\n"
            "bad = [m for m in sys.modules if m.startswith(('numba.cuda', 'cupy', 'torch'))]\n"
            "assert not bad, bad\n")
    env = dict(os.environ)
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                       text=True, timeout=900)
    assert r.returncode == 0, r.stderr

"""Device scoring (numba.cuda kernels in the CUDA simulator) against the CPU scoring."""

import numpy as np
import pytest
import scipy.special
from cuda_helpers import host, rel_err
from numba import cuda
from reference import make_blobs

import fastgen
import fastgen.cuda._api as api
import fastgen.cuda.kernels as kern


@pytest.fixture(scope="module")
def data():
    X, y = make_blobs(60, 3, 3, seed=9, offset=50.0)
    Xt, _ = make_blobs(45, 3, 3, seed=10, offset=50.0)
    return X, y, Xt


def _models(X, y):
    out = {cov: fastgen.fit_gda(X, y, cov)
           for cov in ("pooled", "per_class", "diagonal", "pooled_diagonal")}
    out["gaussian_nb"] = fastgen.fit_gaussian_nb(X, y, var_smoothing=1e-2)
    return out


@pytest.fixture(scope="module")
def models(data):
    X, y, _ = data
    return _models(X, y)


SCORERS = ("joint_log_likelihood", "predict_log_proba", "predict_proba")


@pytest.mark.parametrize("model", ["pooled", "per_class", "diagonal", "pooled_diagonal",
                                   "gaussian_nb"])
def test_scores_match_cpu(data, models, model):
    _, _, Xt = data
    params = models[model]
    Xd = cuda.to_device(Xt)
    for fn in SCORERS:
        got = getattr(fastgen, fn)(params, Xd)
        assert type(got) is type(Xd)  # the caller's kind: a numba device array here
        want = getattr(fastgen, fn)(params, Xt)
        assert host(got).dtype == want.dtype
        assert rel_err(host(got), want) <= 1e-12, (fn, rel_err(host(got), want))
    labels = fastgen.predict(params, Xd)
    assert isinstance(labels, np.ndarray)  # labels come back to the host
    np.testing.assert_array_equal(labels, fastgen.predict(params, Xt))


def test_string_classes_and_float32(data):
    X, y, Xt = data
    ys = np.array(["a", "b", "c"])[y]
    p = fastgen.fit_gda(X.astype(np.float32), ys, "per_class")
    for Xin in (Xt.astype(np.float32), Xt):  # float64 X is cast to the params' float32
        Xd = cuda.to_device(Xin)
        np.testing.assert_array_equal(fastgen.predict(p, Xd), fastgen.predict(p, Xin))
        got = host(fastgen.predict_proba(p, Xd))
        assert got.dtype == np.float32
        assert rel_err(got, fastgen.predict_proba(p, Xin)) <= 8 * np.finfo(np.float32).eps


def test_device_fit_then_device_score(data):
    X, y, Xt = data
    p = fastgen.fit_gda(cuda.to_device(X), cuda.to_device(y), "pooled")
    q = fastgen.fit_gda(X, y, "pooled")
    got = host(fastgen.predict_log_proba(p, cuda.to_device(Xt)))
    assert rel_err(got, fastgen.predict_log_proba(q, Xt)) <= 1e-12


def _finish(S, mode):
    n, K = S.shape
    out = cuda.to_device(S.copy())
    pred = cuda.device_array(n, dtype=np.int32)
    bad = cuda.to_device(np.array([0, n], dtype=np.int64))
    api._launch(kern.finish_rows, n, out, mode, pred, bad)
    return host(out), host(pred), int(host(bad)[1])


def test_log_sum_exp_rows():
    """Row log-sum-exp with the row maximum: no overflow at 1e3, −inf rows stay −inf
    (posteriors: zeros) and are flagged, the argmax is the first maximum."""
    S = np.array([[1000.0, 1001.0, 999.0],
                  [-1e3, -1e3 - 50.0, -np.inf],
                  [-np.inf, -np.inf, -np.inf],
                  [2.0, 5.0, 5.0]])
    finite = [0, 1, 3]
    lp, _, bad = _finish(S, kern.MODE_LOG_PROBA)
    want = S[finite] - scipy.special.logsumexp(S[finite], axis=1, keepdims=True)
    np.testing.assert_allclose(lp[finite], want, rtol=1e-14, atol=0)
    assert np.all(lp[2] == -np.inf)
    assert bad == 2
    p, _, _ = _finish(S, kern.MODE_PROBA)
    np.testing.assert_allclose(p[finite], scipy.special.softmax(S[finite], axis=1),
                               rtol=1e-14, atol=1e-300)
    np.testing.assert_array_equal(p[2], 0.0)
    _, pred, _ = _finish(S, kern.MODE_PREDICT)
    np.testing.assert_array_equal(pred[finite], [1, 0, 1])

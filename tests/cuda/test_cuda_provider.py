"""fastgen.cuda as a provider: device statistics through fastgen.class_moments, scoring
from the params' own tables (rank handling included)."""

import numpy as np
import pytest
from cuda_helpers import host, rel_err
from numba import cuda
from reference import make_blobs

import fastgen
import fastgen.cuda._api as api

SCORERS = ("joint_log_likelihood", "predict_log_proba", "predict_proba")


def _defective(defect, dtype):
    """Training and test rows whose pooled within-class covariance is singular."""
    X, y = make_blobs(60, 4, 3, seed=3, offset=20.0)
    Xt, _ = make_blobs(30, 4, 3, seed=4, offset=20.0)
    for A in (X, Xt):
        if defect == "constant":
            A[:, 1] = 7.0  # a constant feature: rank d − 1
        elif defect == "collinear":
            A[:, 3] = 2.0 * A[:, 0] - A[:, 2]  # an exact linear combination
            A[:, 1] = -3.0  # and a constant: rank d − 2
    return X.astype(dtype), y, Xt.astype(dtype)


FITS = {
    "pooled": {},
    "per_class": {"reg": 1e-3},  # a constant feature needs reg per class
    "diagonal": {},
    "pooled_diagonal": {},
}


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("defect", ["constant", "collinear"])
@pytest.mark.parametrize("covariance", sorted(FITS))
def test_rank_deficient_models_score_on_the_device_as_on_the_host(covariance, defect,
                                                                     dtype):
    X, y, Xt = _defective(defect, dtype)
    params = fastgen.fit_gda(X, y, covariance, **FITS[covariance])
    if covariance == "pooled":
        assert params.rank < X.shape[1]  # the case the device used to reject
    tol = 1e-12 if dtype == np.float64 else 64 * np.finfo(np.float32).eps
    Xd = cuda.to_device(Xt)
    for fn in SCORERS:
        got = host(getattr(fastgen, fn)(params, Xd))
        want = getattr(fastgen, fn)(params, Xt)
        assert got.dtype == want.dtype
        assert rel_err(got, want) <= tol, (fn, rel_err(got, want))
    np.testing.assert_array_equal(fastgen.predict(params, Xd), fastgen.predict(params, Xt))


def test_device_and_host_share_one_table_implementation():
    """The device scores from params.scoring_tables(): a params object whose tables are
    changed scores differently on the device (no copy of the formula in fastgen.cuda)."""
    X, y, Xt = _defective("constant", np.float64)
    params = fastgen.fit_gda(X, y, "pooled")
    kind, tables = params.scoring_tables()
    assert kind == "pooled" and all(np.asarray(t).dtype == np.float64 for t in tables)
    c, coef, bc, M, const = tables
    np.testing.assert_array_equal(np.triu(M, 1), 0.0)  # lower triangular, as the kernel reads
    # the CPU kernels take the same arrays (in the params' dtype, here float64)
    from fastgen.gda.scoring import _pooled

    host_coef, _, host_M, _, _ = _pooled(params)
    np.testing.assert_array_equal(host_coef, coef)
    np.testing.assert_array_equal(host_M, M)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("kind", ["pooled", "per_class", "diagonal"])
def test_class_moments_of_device_X_runs_on_the_device(kind, weighted, monkeypatch):
    """fastgen.class_moments(device X): the device kernels compute the moments and X is
    never copied to the host (no host validation, no copy of n × d values)."""
    import fastgen.stats.moments as stats_moments

    X, y = make_blobs(50, 3, 3, seed=5, offset=30.0)
    w = np.linspace(0.5, 2.0, X.shape[0]) if weighted else None
    copies = []
    real_host = api._host

    def recording_host(a):
        copies.append(tuple(a.shape))
        return real_host(a)

    def no_host_check(*args, **kwargs):
        raise AssertionError("device X went through the host validation")

    monkeypatch.setattr(api, "_host", recording_host)
    monkeypatch.setattr(stats_moments, "check_X", no_host_check)
    m = fastgen.class_moments(cuda.to_device(X), cuda.to_device(y),
                              kind=kind, sample_weight=w)
    monkeypatch.undo()
    assert copies and X.shape not in copies and (X.size,) not in copies
    c = fastgen.class_moments(X, y, kind=kind, sample_weight=w)
    assert m.kind == c.kind and m.dtype == c.dtype
    for f in ("counts", "means", "scatter"):
        assert rel_err(getattr(m, f), getattr(c, f)) <= 1e-12, (kind, f)


def test_launches_keep_numba_low_occupancy_warning_to_themselves():
    """fastgen picks the grid; numba's low-occupancy warning on small data must not reach
    a caller whose warnings are errors, while any other warning still does."""
    import warnings

    from fastgen.cuda import _api

    class Kernel:
        def __init__(self, message):
            self.message = message

        def __getitem__(self, grid):
            def launch(*args):
                warnings.warn(self.message, RuntimeWarning, stacklevel=2)
            return launch

    grid_warning = ("\x1b[1mGrid size 1 will likely result in GPU under-utilization due "
                    "to low occupancy.\x1b[0m")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _api._launch(Kernel(grid_warning), 10)
        with pytest.raises(RuntimeWarning, match="something else"):
            _api._launch(Kernel("something else"), 10)

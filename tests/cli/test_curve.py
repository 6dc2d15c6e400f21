"""``run_curve`` called directly (no argparse): shapes, nested sets, workers, failures."""

import dataclasses

import numpy as np
import pytest

import fastgen
from fastgen.cli import curve, models
from fastgen.datasets import load_iris

MODELS = ("nb", "lda", "logistic")


@pytest.fixture(scope="module")
def iris():
    X, y, _ = load_iris()
    return X, y


def _run(X, y, **kw):
    opts = dict(models=MODELS, splits=3, sizes=[6, 20, 60], test_size=0.3, seed=4)
    opts.update(kw)
    return curve.run_curve(X, y, **opts)


def test_shapes_and_error_rates(iris):
    X, y = iris
    errors, failures, n_warned = _run(X, y)
    assert errors.shape == (3, len(MODELS), 3)
    assert failures == []
    assert n_warned.shape == (len(MODELS),)
    assert np.all((errors >= 0) & (errors <= 1))
    # the error rates are multiples of 1 / n_test (45 test rows of 150)
    np.testing.assert_allclose(errors * 45, np.round(errors * 45), atol=1e-9)


def test_split_depends_on_seed_and_index_only(iris):
    X, y = iris
    e3 = _run(X, y)[0]
    e2 = _run(X, y, splits=2)[0]
    np.testing.assert_array_equal(e2, e3[:2])
    assert not np.array_equal(_run(X, y, seed=5)[0], e3)


def test_training_sets_are_nested_and_see_every_class(iris, monkeypatch):
    X, y = iris
    ids = np.arange(X.shape[0], dtype=np.float64)
    Xid = np.column_stack([ids + 1000.0, X])  # not 0/1 nor counts: Gaussian NB
    seen = []
    real = models.MODELS["gaussian_nb"]

    def recording_fit(A, b, **options):
        seen.append(np.rint(A[:, 0] - 1000.0).astype(int))
        return real.fit(A, b, **options)

    # raw features, so the first column still names the rows
    spy = dataclasses.replace(real, fit=recording_fit, standardise=False)
    monkeypatch.setitem(models.MODELS, "gaussian_nb", spy)
    sizes = [6, 20, 60, 105]
    curve.run_curve(Xid, y, models=["nb"], splits=2, sizes=sizes, test_size=0.3, seed=1)
    assert len(seen) == 2 * len(sizes)
    for s in range(2):
        sets = seen[s * len(sizes):(s + 1) * len(sizes)]
        assert [len(t) for t in sets] == sizes
        for small, large in zip(sets[:-1], sets[1:]):
            np.testing.assert_array_equal(large[:small.shape[0]], small)  # prefixes
        assert len(set(sets[-1].tolist())) == 105  # the whole pool, each row once
        assert set(y[sets[0]]) == set(y)  # the smallest set holds every class
    assert not np.array_equal(seen[0], seen[len(sizes)])  # splits differ


def test_failed_fits_are_nan_and_reported(iris):
    X, y = iris
    # m = 1 holds a single class: logistic regression needs two
    errors, failures, _ = _run(X, y, models=["logistic", "nb"], splits=2, sizes=[1, 30])
    assert np.all(np.isnan(errors[:, 0, 0]))
    assert np.all(np.isfinite(errors[:, :, 1]))
    mine = [f for f in failures if f[1] == 0]
    assert sorted((s, jm) for s, _, jm, _ in mine) == [(0, 0), (1, 0)]
    assert all(msg.startswith("ValueError: ") for *_, msg in mine)
    mean, se, n_ok = curve.summarise(errors)
    assert np.isnan(mean[0, 0]) and n_ok[0, 0] == 0 and n_ok[0, 1] == 2


def test_jobs_2_equals_jobs_1(iris):
    X, y = iris
    kw = dict(models=["logistic", "lda"], splits=3, sizes=[1, 12, 40])
    one = _run(X, y, jobs=1, **kw)
    two = _run(X, y, jobs=2, **kw)
    np.testing.assert_array_equal(two[0], one[0])  # NaN where both failed
    assert two[1] == one[1]
    np.testing.assert_array_equal(two[2], one[2])


def test_curve_fits_use_the_curve_defaults(iris):
    X, y = iris
    Z, _ = curve.standardise(X, X)
    lda = models.MODELS["lda"].fit_curve(Z, y)
    ref = fastgen.fit_gda(Z, y, "pooled", reg=1e-3)
    np.testing.assert_array_equal(lda.covariance, ref.covariance)
    qda = models.MODELS["qda"].fit_curve(Z, y)
    np.testing.assert_array_equal(
        qda.covariance, fastgen.fit_gda(Z, y, "per_class", reg=1e-2).covariance)
    lr = models.MODELS["logistic"].fit_curve(Z, y)
    assert lr.l2 == 1e-2

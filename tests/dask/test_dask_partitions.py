"""Dask fits do not depend on where the blocks fall: a block whose weights are all zero
is a part of the sample like any other, and a bad fan-in is refused up front."""

import numpy as np
import pytest
from reference import require

da = require("dask.array")

import fastgen  # noqa: E402
import fastgen.dask as fd  # noqa: E402


def _data():
    rng = np.random.default_rng(5)
    n = 160
    X = rng.integers(0, 4, size=(n, 3)).astype(np.float64)
    y = rng.integers(0, 3, n)
    w = rng.integers(1, 4, n).astype(np.float64)
    w[:40] = 0.0  # the whole first block of 40 rows
    return X, y, w


FITS = [
    ("fit_gda", {}), ("fit_gaussian_nb", {}), ("fit_multinomial_nb", {}),
    ("fit_bernoulli_nb", {"binarize": 1.5}), ("fit_categorical_nb", {}),
]


@pytest.mark.parametrize("name,kw", FITS)
def test_a_block_of_zero_weights_is_a_part_of_the_sample(name, kw):
    X, y, w = _data()
    want = getattr(fastgen, name)(X, y, sample_weight=w, **kw)
    got = getattr(fd, name)(da.from_array(X, chunks=(40, 3)), da.from_array(y, chunks=40),
                            sample_weight=da.from_array(w, chunks=40), **kw)
    for field in ("class_log_prior", "means", "feature_log_prob", "var"):
        if hasattr(want, field):
            np.testing.assert_allclose(getattr(got, field), getattr(want, field),
                                       rtol=1e-12, atol=1e-12)


def test_logistic_with_a_block_of_zero_weights():
    X, y, w = _data()
    yb = (y > 0).astype(int)
    want = fastgen.fit_logistic(X, yb, sample_weight=w)
    got = fd.fit_logistic(da.from_array(X, chunks=(40, 3)), da.from_array(yb, chunks=40),
                          sample_weight=da.from_array(w, chunks=40))
    np.testing.assert_allclose(got.coef, want.coef, rtol=1e-9)
    np.testing.assert_allclose(got.intercept, want.intercept, rtol=1e-9)


def test_weights_zero_everywhere_are_still_refused():
    X, y, _ = _data()
    with pytest.raises(ValueError, match="zero everywhere"):
        fd.fit_gaussian_nb(da.from_array(X, chunks=(40, 3)), da.from_array(y, chunks=40),
                           sample_weight=da.zeros(X.shape[0], chunks=40))


@pytest.mark.parametrize("bad", [1, 0, -1, 2.5, True])
def test_split_every_below_two_is_refused(bad):
    X, y, _ = _data()
    with pytest.raises(ValueError, match="split_every"):
        fd.fit_gaussian_nb(da.from_array(X, chunks=(40, 3)), da.from_array(y, chunks=40),
                           split_every=bad)

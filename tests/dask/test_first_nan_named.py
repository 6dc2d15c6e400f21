"""On Dask arrays a NaN in X is named at its first position in row order (as in memory),
whichever block finds one first; the reference is numpy's first NaN of the same X."""

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

import fastgen  # noqa: E402
import fastgen.dask as fd  # noqa: E402


def _data(seed, n=120, d=4):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 3
    X = np.abs(rng.normal(size=(n, d))) + y[:, None]
    return X, y, rng


def _fits(model):
    return {
        "gda_pooled": lambda X, y: fd.fit_gda(X, y, "pooled"),
        "gda_diagonal": lambda X, y: fd.fit_gda(X, y, "diagonal"),
        "gaussian_nb": lambda X, y: fd.fit_gaussian_nb(X, y),
        "multinomial_nb": lambda X, y: fd.fit_multinomial_nb(X, y),
        "logistic": lambda X, y: fd.fit_logistic(X, y),
    }[model]


@pytest.mark.parametrize("model", ["gda_pooled", "gda_diagonal", "gaussian_nb",
                                   "multinomial_nb", "logistic"])
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("chunks", [13, 40, 120])
def test_first_nan_in_row_order(model, seed, chunks):
    X, y, rng = _data(seed)
    X[rng.random(X.shape) < 0.05] = np.nan
    first = int(rng.integers(0, 30))
    X[first, rng.integers(0, 4)] = np.nan  # an early NaN, maybe in the first block
    r, c = np.argwhere(np.isnan(X))[0]
    X0 = X.copy()
    with dask.config.set(scheduler="synchronous"):
        with pytest.raises(ValueError, match=rf"NaN at row {r}, column {c} \(0-based\)"):
            _fits(model)(da.from_array(X, chunks=(chunks, 4)), y)
    np.testing.assert_array_equal(X, X0)
    with pytest.raises(ValueError, match=rf"NaN at row {r}, column {c} \(0-based\)"):
        {"gda_pooled": fastgen.fit_gda, "gda_diagonal": fastgen.fit_gda,
         "gaussian_nb": fastgen.fit_gaussian_nb, "multinomial_nb": fastgen.fit_multinomial_nb,
         "logistic": fastgen.fit_logistic}[model](X, y)


def test_first_rows_all_nan_in_the_first_block():
    X, y, _ = _data(3)
    X[51, 2] = np.nan
    X[:7] = np.nan
    with dask.config.set(scheduler="synchronous"):
        with pytest.raises(ValueError, match=r"NaN at row 0, column 0 \(0-based\)"):
            fd.fit_gda(da.from_array(X, chunks=(50, 4)), y, "pooled")


def test_inference_names_the_first_nan():
    X, _, rng = _data(4)
    y = rng.integers(0, 2, X.shape[0])  # overlapping classes: the estimate exists
    m = fastgen.fit_logistic(X, y)
    X[[90, 10], [1, 3]] = np.nan
    with dask.config.set(scheduler="synchronous"):
        with pytest.raises(ValueError, match=r"NaN at row 10, column 3 \(0-based\)"):
            fd.logistic_inference(m, da.from_array(X, chunks=(25, 4)), y)

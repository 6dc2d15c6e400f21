"""EM that stops at em_max_iter says so: converged=False comes with a
ConvergenceWarning for every family, in memory and on Dask arrays, and a converged
EM warns nothing."""

import warnings

import pytest
from test_unlabeled import FITS, GAUSSIAN, count_data, gaussian_data

import fastgen


def _data(family):
    return gaussian_data(3) if family in GAUSSIAN else count_data(3)


@pytest.mark.parametrize("family", list(FITS))
def test_stopping_at_em_max_iter_warns(family):
    X, y, U, _ = _data(family)
    with pytest.warns(fastgen.ConvergenceWarning, match="em_max_iter=2 "):
        p = FITS[family](X, y, U, em_tol=0.0, em_max_iter=2)
    assert p.converged is False and p.n_iter == 2


@pytest.mark.parametrize("family", list(FITS))
def test_converged_em_is_quiet(family):
    X, y, U, _ = _data(family)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        p = FITS[family](X, y, U, em_max_iter=5000)
    assert p.converged is True


def test_dask_em_at_em_max_iter_warns():
    da = pytest.importorskip("dask.array")
    import fastgen.dask as fd

    X, y, U, _ = gaussian_data(4)
    with pytest.warns(fastgen.ConvergenceWarning, match="did not converge"):
        p = fd.fit_gda(da.from_array(X, chunks=5), y, unlabeled=da.from_array(U, chunks=64),
                       em_tol=0.0, em_max_iter=3)
    assert p.converged is False and p.n_iter == 3

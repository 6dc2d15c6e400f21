"""EM over unlabelled rows on Dask arrays equals the in-memory EM: the same iterations,
the same objective history and params to rounding, for every family with a Dask fit,
dense and CSR blocks, any chunking."""

import numpy as np
import pytest
from test_unlabeled import count_data, gaussian_data

da = pytest.importorskip("dask.array")
sp = pytest.importorskip("scipy.sparse")

import fastgen  # noqa: E402
import fastgen.dask as fd  # noqa: E402


def _same(a, b, fields):
    assert a.n_iter == b.n_iter and a.converged == b.converged
    np.testing.assert_allclose(b.log_likelihood_history, a.log_likelihood_history,
                               rtol=1e-12)
    for f in fields:
        np.testing.assert_allclose(getattr(b, f), getattr(a, f), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("kind", ["pooled", "per_class", "diagonal", "pooled_diagonal"])
@pytest.mark.parametrize("chunks", [(7, 50), (100, 1000)])
def test_gda_em_on_blocks(kind, chunks):
    X, y, U, _ = gaussian_data(1)
    w = np.random.default_rng(3).uniform(0.5, 2.0, y.shape[0])
    opts = {"unlabeled_weight": 0.7, "em_max_iter": 1000}
    a = fastgen.fit_gda(X, y, kind, sample_weight=w, unlabeled=U, **opts)
    b = fd.fit_gda(da.from_array(X, chunks=chunks[0]), y, kind, sample_weight=w,
                   unlabeled=da.from_array(U, chunks=chunks[1]), **opts)
    _same(a, b, ("priors", "means", "covariance"))


def test_gaussian_nb_em_on_blocks():
    X, y, U, _ = gaussian_data(2, d=4)
    a = fastgen.fit_gaussian_nb(X, y, unlabeled=U, em_max_iter=30)
    b = fd.fit_gaussian_nb(da.from_array(X, chunks=5), y,
                           unlabeled=da.from_array(U, chunks=64), em_max_iter=30)
    _same(a, b, ("class_log_prior", "means", "variances"))


@pytest.mark.parametrize("model", ["multinomial", "bernoulli"])
@pytest.mark.parametrize("csr", [False, True])
def test_count_em_on_blocks(model, csr):
    X, y, U, _ = count_data(3)
    fit, dfit = {"multinomial": (fastgen.fit_multinomial_nb, fd.fit_multinomial_nb),
                 "bernoulli": (fastgen.fit_bernoulli_nb, fd.fit_bernoulli_nb)}[model]
    a = fit(X, y, alpha=0.5, unlabeled=U, unlabeled_weight=0.4)
    Ud = da.from_array(U, chunks=(70, U.shape[1]))
    Xd = da.from_array(X, chunks=(5, X.shape[1]))
    if csr:
        Ud = Ud.map_blocks(sp.csr_matrix, dtype=U.dtype)
        Xd = Xd.map_blocks(sp.csr_matrix, dtype=X.dtype)
    b = dfit(Xd, y, alpha=0.5, unlabeled=Ud, unlabeled_weight=0.4)
    _same(a, b, ("class_log_prior", "feature_log_prob", "feature_count"))


def test_no_unlabelled_rows_and_bad_input():
    X, y, U, _ = gaussian_data(4)
    Xd = da.from_array(X, chunks=9)
    plain = fd.fit_gda(Xd, y)
    assert fd.fit_gda(Xd, y, unlabeled=da.from_array(U[:0], chunks=5)) == plain
    assert fd.fit_gda(Xd, y, unlabeled=da.from_array(U, chunks=50),
                      unlabeled_weight=0) == plain
    with pytest.raises(ValueError, match="unlabeled has 2 features"):
        fd.fit_gda(Xd, y, unlabeled=da.from_array(U[:, :2], chunks=50))
    with pytest.raises(ValueError, match="unlabeled_weight must be >= 0"):
        fd.fit_gda(Xd, y, unlabeled=da.from_array(U, chunks=50), unlabeled_weight=-1)
    with pytest.raises(ValueError, match="unlabeled must be a dask.array.Array"):
        fd.fit_gda(Xd, y, unlabeled=U)

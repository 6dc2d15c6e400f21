"""Streaming fits: statistics of chunks merged exactly equal the fit on all rows."""


import numpy as np
import pytest
import scipy.sparse as sp
from reference import assert_params_close

import fastgen
from fastgen.streaming import NBCounts, merge_counts, nb_counts, nb_from_counts


def _chunks(n, m, rng):
    """m non-empty contiguous chunks of uneven sizes."""
    cuts = np.sort(rng.choice(np.arange(1, n), size=m - 1, replace=False)) if m > 1 else []
    return np.split(np.arange(n), cuts)


def _stream(chunks, X, y, w, **kw):
    c = None
    for idx in chunks:
        ci = nb_counts(X[idx], y[idx], sample_weight=None if w is None else w[idx], **kw)
        c = ci if c is None else merge_counts(c, ci)
    return c


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(7)
    n = 400
    y = rng.integers(0, 4, n)
    X = rng.normal(size=(n, 5)) * [1, 2, 3, 4, 5] + 1e3 + y[:, None]
    C = rng.poisson(1.5, size=(n, 9)).astype(np.float64)
    w = rng.random(n) + 0.1
    return X, C, y, w


@pytest.mark.parametrize("m", [1, 2, 100])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("model", ["gaussian", "multinomial", "complement", "bernoulli"])
def test_merged_chunks_equal_fit(data, model, m, weighted):
    X, C, y, w = data
    w = w if weighted else None
    rng = np.random.default_rng(m)
    A = X if model == "gaussian" else C
    kw = {"binarize": 1.0} if model == "bernoulli" else {}
    c = _stream(_chunks(A.shape[0], m, rng), A, y, w, model=model, **kw)
    got = nb_from_counts(c, **({"norm": True} if model == "complement" else {}))
    fit = {
        "gaussian": lambda: fastgen.fit_gaussian_nb(A, y, sample_weight=w),
        "multinomial": lambda: fastgen.fit_multinomial_nb(A, y, sample_weight=w),
        "complement": lambda: fastgen.fit_complement_nb(A, y, norm=True, sample_weight=w),
        "bernoulli": lambda: fastgen.fit_bernoulli_nb(A, y, binarize=1.0, sample_weight=w),
    }[model]()
    assert_params_close(fit, got)


def test_merge_is_order_independent(data):
    X, _, y, _ = data
    rng = np.random.default_rng(3)
    chunks = _chunks(X.shape[0], 100, rng)
    a = nb_from_counts(_stream(chunks, X, y, None, model="gaussian"))
    b = nb_from_counts(_stream(chunks[::-1], X, y, None, model="gaussian"))
    assert_params_close(a, b)


def test_chunks_missing_classes_and_global_classes(data):
    _, C, y, _ = data
    order = np.argsort(y, kind="stable")  # each chunk sees one or two classes
    Cs, ys = C[order], y[order]
    chunks = np.array_split(np.arange(len(ys)), 7)
    c = _stream(chunks, Cs, ys, None, model="multinomial")
    assert_params_close(fastgen.fit_multinomial_nb(C, y), nb_from_counts(c))
    one = nb_counts(Cs[:5], ys[:5], "multinomial", classes=np.arange(4))
    assert one.classes.tolist() == [0, 1, 2, 3]
    assert one.class_count[1:].sum() == 0
    with pytest.raises(ValueError, match="not in classes"):
        nb_counts(Cs[-5:], ys[-5:], "multinomial", classes=np.arange(2))


def test_sparse_chunks(data):
    _, C, y, _ = data
    S = sp.csr_matrix(C)
    chunks = np.array_split(np.arange(C.shape[0]), 13)
    c = None
    for idx in chunks:
        ci = nb_counts(S[idx], y[idx], "bernoulli", binarize=0.0)
        c = ci if c is None else merge_counts(c, ci)
    assert_params_close(fastgen.fit_bernoulli_nb(C, y), nb_from_counts(c))


def test_float32_chunks_give_float32_params(data):
    X, _, y, _ = data
    X32 = X.astype(np.float32)
    c = _stream(np.array_split(np.arange(len(y)), 4), X32, y, None, model="gaussian")
    got = nb_from_counts(c)
    assert got.means.dtype == np.float32
    assert_params_close(fastgen.fit_gaussian_nb(X32, y), got, rtol=1e-6)


@pytest.mark.parametrize("m", [1, 2, 100])
@pytest.mark.parametrize("kind", ["pooled", "per_class"])
def test_gda_moments_stream(data, kind, m):
    """The README recipe: class_moments per chunk, merge_moments, gda_from_moments."""
    X, _, y, _ = data
    rng = np.random.default_rng(m)
    mom = None
    for idx in _chunks(X.shape[0], m, rng):
        mi = fastgen.class_moments(X[idx], y[idx], kind=kind)
        mom = mi if mom is None else fastgen.merge_moments(mom, mi)
    assert_params_close(fastgen.fit_gda(X, y, kind), fastgen.gda_from_moments(mom, kind))


def test_memmap_chunks(tmp_path, data):
    X, _, y, _ = data
    path = tmp_path / "x.npy"
    np.save(path, X)
    mm = np.load(path, mmap_mode="r")
    mom = None
    for s in range(0, len(y), 64):
        mi = fastgen.class_moments(mm[s:s + 64], y[s:s + 64], kind="pooled")
        mom = mi if mom is None else fastgen.merge_moments(mom, mi)
    del mm
    assert_params_close(fastgen.fit_gda(X, y), fastgen.gda_from_moments(mom))


def test_merge_counts_rejects_mismatches(data):
    X, C, y, _ = data
    a = nb_counts(C[:50], y[:50], "multinomial")
    with pytest.raises(ValueError, match="model"):
        merge_counts(a, nb_counts(C[:50], y[:50], "bernoulli"))
    with pytest.raises(ValueError, match="features"):
        merge_counts(a, nb_counts(C[:50, :3], y[:50], "multinomial"))
    with pytest.raises(ValueError, match="binarize"):
        merge_counts(nb_counts(C[:50], y[:50], "bernoulli", binarize=0.0),
                     nb_counts(C[:50], y[:50], "bernoulli", binarize=1.0))
    with pytest.raises(ValueError, match="label types"):
        merge_counts(a, nb_counts(C[:50], y[:50].astype(str), "multinomial"))
    with pytest.raises(ValueError, match="NBCounts"):
        merge_counts(a, "counts")
    with pytest.raises(ValueError, match="model must be"):
        nb_counts(C, y, "poisson")
    with pytest.raises(ValueError, match="model must be"):
        NBCounts("poisson", np.arange(2), np.zeros(2))

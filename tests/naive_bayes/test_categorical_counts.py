"""Categorical naive Bayes through the statistics seam: nb_counts, merge_counts,
nb_from_counts and the Dask fit, against the in-memory fit and a plain-numpy count."""

import hashlib

import numpy as np
import pytest
import scipy.sparse as sp

import fastgen

FORMS = ["dense", "float32", "csr32", "csr64"]


def _form(X, form):
    if form == "float32":
        return X.astype(np.float32)
    if form.startswith("csr"):
        M = sp.csr_matrix(X)
        if form == "csr64":
            M.indptr = M.indptr.astype(np.int64)
            M.indices = M.indices.astype(np.int64)
        return M
    return X


def _codes(seed, n=240, d=5, K=3):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, K, n)
    top = rng.integers(2, 9, d)
    X = np.floor(rng.random((n, d)) * (top + 0.5 * y[:, None])).astype(np.float64)
    X[rng.random((n, d)) < 0.4] = 0.0  # CSR keeps the zeros implicit
    return X, y, rng.uniform(0.3, 2.5, n)


def _numpy_counts(X, y, w, classes, n_cat):
    """N_kjc by a loop over the rows: the definition."""
    offsets = np.concatenate([[0], np.cumsum(n_cat)])
    out = np.zeros((classes.shape[0], int(offsets[-1])))
    for i in range(X.shape[0]):
        k = int(np.searchsorted(classes, y[i]))
        for j in range(X.shape[1]):
            out[k, offsets[j] + int(X[i, j])] += w[i]
    return out


def _digest(a):
    if sp.issparse(a):
        return tuple(_digest(x) for x in (a.data, a.indices, a.indptr))
    return hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("weighted", [False, True])
def test_nb_counts_are_the_counts_of_the_fit(form, weighted):
    X, y, w = _codes(1)
    wt = w if weighted else None
    Xf = _form(X, form)
    before = _digest(Xf)
    c = fastgen.nb_counts(Xf, y, "categorical", sample_weight=wt, min_categories=4)
    assert _digest(Xf) == before
    fit = fastgen.fit_categorical_nb(Xf, y, sample_weight=wt, min_categories=4)
    np.testing.assert_array_equal(c.n_categories, fit.n_categories)
    want = _numpy_counts(X, y, w if weighted else np.ones(len(y)), fit.classes,
                         fit.n_categories)
    np.testing.assert_allclose(c.feature_count, want, rtol=1e-13, atol=1e-12)
    # the fit is nb_from_counts of these counts, bit for bit
    assert fastgen.nb_from_counts(c) == fit
    assert c.dtype == str(fit.dtype)


@pytest.mark.parametrize("form", FORMS)
def test_merged_chunks_equal_the_fit_on_all_rows(form):
    """Chunks whose codes reach different widths (a feature's largest code only in the
    last chunk) and that miss classes merge to the counts of all rows; unit weights
    give integer counts, so the merged model is the fit's bit for bit."""
    X, y, _ = _codes(2)
    X[-1, 0] = 11.0  # feature 0 is widest in the last chunk only
    o = np.argsort(y[:-1], kind="stable")  # chunks of one or two classes
    X = np.vstack([X[:-1][o], X[-1:]])
    y = np.concatenate([y[:-1][o], y[-1:]])
    classes = np.unique(y)
    acc = None
    for lo in range(0, len(y), 70):
        c = fastgen.nb_counts(_form(X[lo:lo + 70], form), y[lo:lo + 70], "categorical",
                              classes=classes)
        acc = c if acc is None else fastgen.merge_counts(acc, c)
    fit = fastgen.fit_categorical_nb(_form(X, form), y)
    np.testing.assert_array_equal(acc.n_categories, fit.n_categories)
    np.testing.assert_array_equal(acc.feature_count, fit.category_count)
    assert fastgen.nb_from_counts(acc, alpha=1.0) == fit
    # merging is symmetric in the layout: either order gives the same table
    a = fastgen.nb_counts(X[:100], y[:100], "categorical")
    b = fastgen.nb_counts(X[100:], y[100:], "categorical")
    ab, ba = fastgen.merge_counts(a, b), fastgen.merge_counts(b, a)
    np.testing.assert_array_equal(ab.feature_count, ba.feature_count)


def test_weighted_merge_equals_fit_to_rounding():
    X, y, w = _codes(3)
    a = fastgen.nb_counts(X[:90], y[:90], "categorical", sample_weight=w[:90])
    b = fastgen.nb_counts(X[90:], y[90:], "categorical", sample_weight=w[90:])
    got = fastgen.nb_from_counts(fastgen.merge_counts(a, b), alpha=0.5)
    want = fastgen.fit_categorical_nb(X, y, sample_weight=w, alpha=0.5)
    np.testing.assert_allclose(got.feature_log_prob, want.feature_log_prob, rtol=1e-13)
    np.testing.assert_allclose(got.class_log_prior, want.class_log_prior, rtol=1e-13)


def test_fixed_widths_and_bad_options():
    X, y, _ = _codes(4)
    n_cat = np.full(X.shape[1], 12)
    c = fastgen.nb_counts(X, y, "categorical", n_categories=n_cat)
    np.testing.assert_array_equal(c.n_categories, n_cat)
    assert c.feature_count.shape == (3, 12 * X.shape[1])
    with pytest.raises(ValueError, match="n_categories gives feature 3 3 categories"):
        fastgen.nb_counts(X, y, "categorical", n_categories=np.full(X.shape[1], 3))
    with pytest.raises(ValueError, match="categorical model only"):
        fastgen.nb_counts(X, y, "multinomial", min_categories=3)
    with pytest.raises(ValueError, match="not both"):
        fastgen.nb_counts(X, y, "categorical", min_categories=3, n_categories=n_cat)
    with pytest.raises(ValueError, match="negative category code"):
        fastgen.nb_counts(-X - 1, y, "categorical")
    with pytest.raises(ValueError, match="cannot merge"):
        fastgen.merge_counts(c, fastgen.nb_counts(X, y, "multinomial"))


# ------------------------------------------------------------------------------ Dask

da = pytest.importorskip("dask.array")


def _dask(A, chunks):
    if sp.issparse(A):
        import dask

        starts = np.concatenate([[0], np.cumsum(chunks)])
        blocks = [da.from_delayed(dask.delayed(A[a:b]), shape=(b - a, A.shape[1]),
                                  dtype=A.dtype, meta=sp.csr_matrix((0, 0), dtype=A.dtype))
                  for a, b in zip(starts[:-1], starts[1:], strict=True)]
        return da.concatenate(blocks, axis=0)
    return da.from_array(A, chunks=(chunks, A.shape[1]))


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("weighted", [False, True])
def test_dask_fit_equals_the_in_memory_fit(form, weighted):
    import fastgen.dask as fd

    X, y, w = _codes(5)
    X[3, 1] = 13.0  # the widest code of feature 1 sits in the first block
    wt = w if weighted else None
    Xf = _form(X, form)
    chunks = (1, 60, 100, 79)
    got = fd.fit_categorical_nb(_dask(Xf, chunks), y, sample_weight=wt, alpha=0.7,
                                min_categories=5)
    want = fastgen.fit_categorical_nb(Xf, y, sample_weight=wt, alpha=0.7, min_categories=5)
    np.testing.assert_array_equal(got.n_categories, want.n_categories)
    if weighted:
        np.testing.assert_allclose(got.category_count, want.category_count, rtol=1e-13,
                                   atol=1e-12)
        np.testing.assert_allclose(got.feature_log_prob, want.feature_log_prob, rtol=1e-13)
    else:
        assert got == want
    np.testing.assert_array_equal(fastgen.predict(got, Xf), fastgen.predict(want, Xf))


def test_dask_fit_refuses_what_the_in_memory_fit_refuses():
    import fastgen.dask as fd

    X, y, _ = _codes(6, n=120)
    X[100, 2] = 5000.0  # a stray code: far wider than the feature's distinct codes
    with pytest.raises(ValueError, match="at row 100, column 2"):
        fastgen.fit_categorical_nb(X, y)
    with pytest.raises(ValueError, match="category code 5000 in column 2.*min_categories"):
        fd.fit_categorical_nb(_dask(X, (50, 70)), y)
    # min_categories covering it: both fit, alike
    got = fd.fit_categorical_nb(_dask(X, (50, 70)), y, min_categories=5001)
    assert got == fastgen.fit_categorical_nb(X, y, min_categories=5001)
    X[7, 0] = 1.5
    with pytest.raises(ValueError, match="non-integer category code.*row 7, column 0"):
        fd.fit_categorical_nb(_dask(X, (50, 70)), y)


def test_sklearn_partial_fit_merges_counts_of_growing_layouts():
    """The scikit-learn adapter streams through nb_counts/merge_counts: batches whose
    codes reach wider tables give the fit on all rows, bit for bit (unit weights)."""
    pytest.importorskip("sklearn")
    from fastgen.sklearn import CategoricalNB

    X, y, _ = _codes(7)
    X[-5:, 2] = [9.0, 10.0, 11.0, 12.0, 13.0]  # feature 2 widens in the last batch
    est = CategoricalNB(min_categories=3)
    for lo in range(0, len(y), 60):
        est.partial_fit(X[lo:lo + 60], y[lo:lo + 60], classes=np.unique(y))
    assert est.params_ == fastgen.fit_categorical_nb(X, y, min_categories=3)
    assert [t.shape[1] for t in est.category_count_] == list(est.params_.n_categories)

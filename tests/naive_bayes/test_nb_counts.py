"""Models from statistics: nb_counts equals the fits' counts, chunks merged exactly equal
the fit on all rows, and the ``*_from_counts`` / ``*_from_moments`` builders."""


import numpy as np
import pytest
import scipy.sparse as sp
from reference import assert_params_close

import fastgen
import fastgen.naive_bayes.bernoulli as nb_bernoulli
import fastgen.naive_bayes.discrete as nb_discrete
from fastgen.naive_bayes import NBCounts, merge_counts, nb_counts, nb_from_counts


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
    """The streaming guide's recipe: class_moments per chunk, merge_moments, gda_from_moments."""
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


# ------------------------------------------------------- nb_counts: counts, no model


def _numpy_counts(X, y, w, binarize=None):
    """Plain-numpy N_k and N_kj (or F_kj = Σ w [x > binarize]) per sorted label."""
    classes, codes = np.unique(y, return_inverse=True)
    w = np.ones(len(y)) if w is None else w
    A = np.asarray(X.todense() if sp.issparse(X) else X, dtype=np.float64)
    if binarize is not None:
        A = (A > binarize).astype(np.float64)
    Y = np.zeros((len(y), classes.shape[0]))
    Y[np.arange(len(y)), codes] = w
    return classes, Y.sum(axis=0), Y.T @ A


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("model,kw", [("multinomial", {}), ("complement", {}),
                                      ("bernoulli", {"binarize": 1.0}),
                                      ("bernoulli", {"binarize": None})])
def test_nb_counts_equal_the_fit_counts(data, sparse, weighted, model, kw):
    """nb_counts runs the fit's count kernels: the same N_k, N_kj bit for bit."""
    _, C, y, w = data
    if kw.get("binarize", 0.0) is None:
        C = np.minimum(C, 1.0)
    A = sp.csr_matrix(C) if sparse else C
    sw = w if weighted else None
    fit = {"multinomial": fastgen.fit_multinomial_nb, "complement": fastgen.fit_complement_nb,
           "bernoulli": fastgen.fit_bernoulli_nb}[model]
    p = fit(A, y, sample_weight=sw, **kw)
    c = nb_counts(A, y, model, sample_weight=sw, **kw)
    assert c.model == model and c.dtype == "float64"
    assert c.binarize == (kw.get("binarize") if model == "bernoulli" else None)
    np.testing.assert_array_equal(c.classes, p.classes)
    np.testing.assert_array_equal(c.class_count, p.class_count)
    np.testing.assert_array_equal(c.feature_count, p.feature_count)
    classes, cc, fc = _numpy_counts(C, y, sw, kw.get("binarize") if model == "bernoulli"
                                    else None)
    np.testing.assert_array_equal(c.classes, classes)
    np.testing.assert_allclose(c.class_count, cc, rtol=1e-13)
    np.testing.assert_allclose(c.feature_count, fc, rtol=1e-13)


def test_nb_counts_builds_no_model(data, monkeypatch):
    """Counting a chunk computes no K x d logarithms: the model builders are not called."""
    _, C, y, _ = data

    def fail(*args, **kwargs):
        raise AssertionError("nb_counts built a model")

    for name in ("multinomial_params", "complement_params"):
        monkeypatch.setattr(nb_discrete, name, fail)
    monkeypatch.setattr(nb_bernoulli, "bernoulli_params", fail)
    for model in ("multinomial", "complement", "bernoulli"):
        c = nb_counts(C, y, model)
        assert c.feature_count.shape == (4, C.shape[1])
    with pytest.raises(AssertionError, match="built a model"):
        fastgen.fit_multinomial_nb(C, y)  # the patch does reach the fits
    with pytest.raises(AssertionError, match="built a model"):
        fastgen.fit_bernoulli_nb(C, y)


def test_nb_counts_rejects_what_the_fits_reject(data):
    _, C, y, _ = data
    bad = C.copy()
    bad[3, 2] = -1.0
    for model in ("multinomial", "complement"):
        with pytest.raises(ValueError, match="negative value .* at row 3, column 2"):
            nb_counts(bad, y, model)
    with pytest.raises(ValueError, match="binarize=None needs binary features"):
        nb_counts(C * 3, y, "bernoulli", binarize=None)
    with pytest.raises(ValueError, match="implicit zeros"):
        nb_counts(sp.csr_matrix(C), y, "bernoulli", binarize=-0.5)
    nan = sp.csr_matrix(C)
    nan.data[5] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        nb_counts(nan, y, "multinomial")


def test_package_reexports_the_statistics_names():
    import fastgen.naive_bayes as nb
    import fastgen.stats as stats

    for name in ("NB_MODELS", "NBCounts", "nb_counts", "merge_counts"):
        assert getattr(stats, name) is getattr(nb, name)
        assert name == "NB_MODELS" or getattr(fastgen, name) is getattr(nb, name)
    assert fastgen.nb_from_counts is nb.nb_from_counts


# ------------------------------------------------- models from accumulated statistics


def _split_fit(fit, X, y, w, **kw):
    h = X.shape[0] // 2
    return fit(X[:h], y[:h], sample_weight=w[:h], **kw), fit(X[h:], y[h:], sample_weight=w[h:],
                                                               **kw)


def test_from_counts_of_two_halves_equals_fit():
    from fastgen.naive_bayes import (
        bernoulli_nb_from_counts,
        categorical_nb_from_counts,
        complement_nb_from_counts,
        multinomial_nb_from_counts,
    )

    rng = np.random.default_rng(11)
    n, d = 120, 6
    y = np.arange(n) % 3
    X = rng.poisson(1.5, size=(n, d)).astype(np.float64)
    w = rng.uniform(0.5, 2.0, size=n)
    cases = [
        (fastgen.fit_multinomial_nb, multinomial_nb_from_counts, {"alpha": 0.5}),
        (fastgen.fit_complement_nb, complement_nb_from_counts, {"norm": True}),
        (fastgen.fit_bernoulli_nb, bernoulli_nb_from_counts, {"binarize": 1.0}),
    ]
    for fit, build, kw in cases:
        a, b = _split_fit(fit, X, y, w, **kw)
        full = fit(X, y, sample_weight=w, **kw)
        rebuilt = build(full.classes, a.class_count + b.class_count,
                        a.feature_count + b.feature_count, **kw)
        np.testing.assert_allclose(rebuilt.feature_log_prob, full.feature_log_prob,
                                   rtol=1e-12)
        np.testing.assert_allclose(rebuilt.class_log_prior, full.class_log_prior, rtol=1e-12)
    Xc = np.minimum(X, 4)
    full = fastgen.fit_categorical_nb(Xc, y, sample_weight=w, min_categories=5)
    a, b = _split_fit(fastgen.fit_categorical_nb, Xc, y, w, min_categories=5)
    rebuilt = categorical_nb_from_counts(full.classes, a.class_count + b.class_count,
                                         a.category_count + b.category_count,
                                         full.n_categories)
    np.testing.assert_allclose(rebuilt.feature_log_prob, full.feature_log_prob, rtol=1e-12)
    uniform = categorical_nb_from_counts(full.classes, full.class_count,
                                         full.category_count, full.n_categories,
                                         fit_prior=False)
    np.testing.assert_allclose(uniform.class_log_prior, np.full(3, -np.log(3)))
    with pytest.raises(ValueError, match="n_categories sums to"):
        categorical_nb_from_counts(full.classes, full.class_count, full.category_count,
                                   full.n_categories[:-1])
    with pytest.raises(ValueError, match="class_count must have shape"):
        multinomial_nb_from_counts(full.classes, np.ones(2), np.ones((3, d)))
    with pytest.raises(ValueError, match="non-negative"):
        multinomial_nb_from_counts(full.classes, np.ones(3), -np.ones((3, d)))


def test_gaussian_nb_from_merged_moments_equals_fit():
    from fastgen.naive_bayes import gaussian_nb_from_moments

    rng = np.random.default_rng(12)
    n = 150
    y = np.arange(n) % 3
    X = rng.normal(size=(n, 4)) * 3.0 + 100.0 + y[:, None]
    h = n // 2
    m = fastgen.merge_moments(fastgen.class_moments(X[:h], y[:h], kind="diagonal"),
                              fastgen.class_moments(X[h:], y[h:], kind="diagonal"))
    for kw in ({}, {"var_smoothing": 1e-2, "priors": [0.5, 0.3, 0.2]}):
        ours = gaussian_nb_from_moments(m, **kw)
        full = fastgen.fit_gaussian_nb(X, y, **kw)
        np.testing.assert_allclose(ours.variances, full.variances, rtol=1e-11)
        np.testing.assert_allclose(ours.means, full.means, rtol=1e-13)
        np.testing.assert_allclose(ours.epsilon, full.epsilon, rtol=1e-11)
        np.testing.assert_allclose(fastgen.predict_proba(ours, X),
                                   fastgen.predict_proba(full, X), rtol=1e-9, atol=1e-13)
    with pytest.raises(ValueError, match="kind 'diagonal'"):
        gaussian_nb_from_moments(fastgen.class_moments(X, y))


def test_log_counts_table_and_direct_paths_agree_with_numpy():
    """Integer counts below the table size read their logs from a table; larger and
    fractional counts take the logarithm directly.  Every entry matches numpy's
    log(base − counts + α) − shift, the Bernoulli complement form included."""
    from fastgen.kernels.nb import LOG_TABLE_SIZE

    rng = np.random.default_rng(5)
    K, d = 3, 12000
    fc = rng.integers(0, 3 * LOG_TABLE_SIZE, size=(K, d)).astype(np.float64)
    fc[:, :300] += rng.uniform(0, 1, size=(K, 300))  # fractional (weighted) counts
    fc[:, 300:310] = 0.0
    fc[:, 310] = LOG_TABLE_SIZE - 1
    fc[:, 311] = LOG_TABLE_SIZE
    shift = rng.normal(size=K)
    assert fc.size // 8 >= LOG_TABLE_SIZE  # the full table is used
    for alpha in (1.0, 0.25, 1e-10):
        got = nb_discrete._log_smoothed(fc, alpha, shift)
        small = nb_discrete._log_smoothed(fc[:, :40], alpha, shift)  # a 15-entry table
        np.testing.assert_allclose(small, got[:, :40], rtol=1e-15, atol=0)
        np.testing.assert_allclose(got, np.log(fc + alpha) - shift[:, None], rtol=1e-15,
                                   atol=0)
        cc = fc.max(axis=1) + 2.0
        got = nb_discrete._log_smoothed(fc, alpha, shift, base=cc)
        want = np.log((cc[:, None] - fc) + alpha) - shift[:, None]
        np.testing.assert_allclose(got, want, rtol=1e-15, atol=0)


def test_fit_tables_are_read_only_and_builders_copy_the_callers_counts():
    """The fit's own count tables go into the params without a copy; counts a caller
    passes to a builder are copied, and the caller's arrays stay writeable."""
    from fastgen.naive_bayes import multinomial_nb_from_counts

    rng = np.random.default_rng(6)
    X = rng.poisson(2.0, size=(60, 5)).astype(np.float64)
    y = np.arange(60) % 3
    for fit in (fastgen.fit_multinomial_nb, fastgen.fit_bernoulli_nb,
                fastgen.fit_complement_nb):
        p = fit(X, y)
        for name in ("class_count", "feature_count", "feature_log_prob"):
            assert not getattr(p, name).flags.writeable, (fit.__name__, name)
    p = fastgen.fit_multinomial_nb(X, y)
    cc, fc = p.class_count.copy(), p.feature_count.copy()
    q = multinomial_nb_from_counts(p.classes, cc, fc)
    assert cc.flags.writeable and fc.flags.writeable
    assert not np.shares_memory(q.feature_count, fc)
    fc[0, 0] += 1.0  # the caller's array changes, the model does not
    np.testing.assert_array_equal(q.feature_count, p.feature_count)

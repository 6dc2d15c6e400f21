"""Naive Bayes: parity with scikit-learn (>= 1.9) and the numpy oracles in
``reference_nb.py``, CSR ≡ dense, the spam example, bad inputs, save/load, float32,
determinism across thread counts and kernels called from a user's ``@njit`` code."""

import hashlib
import warnings
from fractions import Fraction

import numba
import numpy as np
import pytest
import reference_nb as ref
import scipy.sparse as sp
from sklearn import naive_bayes as sknb

import fastgen as fg
from fastgen import sklearn as fs
from fastgen.kernels.sparse import (
    argmax_f32_bound,
    csr_class_counts,
    csr_linear_argmax,
    csr_linear_argmax_f32,
    csr_linear_scores,
    nnz_balanced_bounds,
)

RTOL = 1e-10


def rel_err(a, b):
    a = np.atleast_1d(np.asarray(a, dtype=np.float64))
    b = np.atleast_1d(np.asarray(b, dtype=np.float64))
    assert a.shape == b.shape, (a.shape, b.shape)
    both_inf = np.isinf(a) & np.isinf(b) & (np.sign(a) == np.sign(b))
    err = np.abs(a - b) / np.maximum(np.abs(b), np.finfo(np.float64).tiny)
    err[both_inf] = 0.0
    return float(np.max(err)) if err.size else 0.0


def assert_close(a, b, rtol=RTOL):
    assert rel_err(a, b) <= rtol, rel_err(a, b)


def assert_proba_close(a, b, tol=RTOL):
    # probabilities: relative to the row's scale (entries near 1e-300 carry no digits)
    assert np.max(np.abs(np.asarray(a) - b)) <= tol


# ------------------------------------------------------------------------- data


@pytest.fixture(scope="module")
def gauss():
    rng = np.random.default_rng(0)
    n, d, K = 240, 5, 3
    y = rng.integers(0, K, n)
    X = rng.normal(size=(K, d))[y] * 2 + rng.normal(size=(n, d)) * rng.uniform(0.5, 2, d)
    w = rng.uniform(0.1, 3.0, n)
    return X, y, w


@pytest.fixture(scope="module")
def counts():
    rng = np.random.default_rng(1)
    n, d, K = 200, 30, 3
    y = rng.integers(0, K, n)
    rates = rng.uniform(0.05, 1.5, size=(K, d))
    X = rng.poisson(rates[y]).astype(np.float64)
    X[:, -1] = 0.0  # a feature never seen in training
    w = rng.uniform(0.1, 3.0, n)
    return X, y, w


@pytest.fixture(scope="module")
def cats():
    rng = np.random.default_rng(2)
    n, K = 200, 3
    m = np.array([2, 3, 5, 4])
    y = rng.integers(0, K, n)
    X = np.column_stack([(rng.integers(0, mj, n) + y * (j % 2)) % mj
                         for j, mj in enumerate(m)]).astype(np.float64)
    w = rng.uniform(0.1, 3.0, n)
    return X, y, w


def _codes(y):
    return np.unique(y, return_inverse=True)[1]


# ----------------------------------------------------------------- Gaussian NB


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("priors", [None, [0.2, 0.5, 0.3]])
def test_gaussian_matches_sklearn_and_oracle(gauss, weighted, priors):
    X, y, w = gauss
    sw = w if weighted else None
    p = fg.fit_gaussian_nb(X, y, priors=priors, sample_weight=sw)
    s = sknb.GaussianNB(priors=priors).fit(X, y, sample_weight=sw)
    assert_close(p.means, s.theta_)
    assert_close(p.variances, s.var_)
    assert_close(p.class_count, s.class_count_)
    assert_close(np.exp(p.class_log_prior), s.class_prior_)
    assert_close(p.epsilon, s.epsilon_)
    assert_proba_close(fg.predict_proba(p, X), s.predict_proba(X))
    assert_close(fg.joint_log_likelihood(p, X), s.predict_joint_log_proba(X))
    # log posteriors near 0 come from a cancellation (jll − logsumexp): absolute error
    np.testing.assert_allclose(fg.predict_log_proba(p, X), s.predict_log_proba(X),
                               rtol=RTOL, atol=1e-12)
    np.testing.assert_array_equal(fg.predict(p, X), s.predict(X))
    o = ref.gaussian_nb(X, _codes(y), 3, sw, priors=priors)
    assert_close(p.variances, o["variances"])
    assert_close(fg.joint_log_likelihood(p, X), ref.gaussian_jll(o, X))


def sk_diag(X, y, g):
    """Joint log-likelihoods of a diagonal Gaussian discriminant in numpy (float64)."""
    X = X.astype(np.float64)
    var = np.broadcast_to(np.asarray(g.covariance, np.float64), g.means.shape)
    prior = np.log(np.bincount(np.unique(y, return_inverse=True)[1]) / len(y))
    return np.stack([prior[k] - 0.5 * np.sum(np.log(2 * np.pi * var[k]))
                     - 0.5 * np.sum((X - g.means[k]) ** 2 / var[k], axis=1)
                     for k in range(var.shape[0])], axis=1)


def _softmax(s):
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("d,K", [(16, 4), (17, 7), (24, 10), (20, 5), (15, 6), (16, 3)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.usefixtures("kernel_path")
def test_gaussian_scores_by_four_classes(d, K, dtype, monkeypatch):
    """From 16 features and 4 classes the params score by
    ``gaussian_nb_scores_four_classes``
    (four classes per pass, then two, then one): the numpy oracle's and scikit-learn's
    results, the one-class kernel's to a few ulps, any thread count, NaN found."""
    import fastgen.kernels.nb as nbmod
    from fastgen.kernels import checked
    from fastgen.kernels.nb import (
        FOUR_CLASS_SWEEP_MIN_FEATURES,
        gaussian_nb_scores,
        gaussian_nb_scores_four_classes,
    )

    chosen = []
    choose = nbmod.gaussian_nb_kernel_for

    def spy(d_, K_):
        chosen.append(choose(d_, K_))
        return chosen[-1]

    monkeypatch.setattr(nbmod, "gaussian_nb_kernel_for", spy)
    wide = d >= FOUR_CLASS_SWEEP_MIN_FEATURES and K >= 4
    expected = gaussian_nb_scores_four_classes if wide else gaussian_nb_scores

    rng = np.random.default_rng(d * 100 + K)
    n = 1500  # three row blocks
    y = rng.integers(0, K, n)
    X = (rng.normal(size=(n, d)) * rng.uniform(0.5, 3, d) + y[:, None] * 0.7).astype(dtype)
    p = fg.fit_gaussian_nb(X, y)
    s = sknb.GaussianNB().fit(X.astype(np.float64), y)
    jll = fg.joint_log_likelihood(p, X)
    o = ref.gaussian_nb(X, _codes(y), K)
    np.testing.assert_allclose(jll, ref.gaussian_jll(o, X),
                               rtol=1e-6 if dtype == np.float32 else 1e-12)
    assert_proba_close(fg.predict_proba(p, X), s.predict_proba(X.astype(np.float64)),
                       tol=1e-5 if dtype == np.float32 else RTOL)
    np.testing.assert_array_equal(fg.predict(p, X), s.predict(X.astype(np.float64)))
    assert chosen and all(k is expected for k in chosen)  # the params chose it
    # the diagonal Gaussian discriminant scores by the same kernels
    chosen.clear()
    for cov in ("diagonal", "pooled_diagonal"):
        g = fg.fit_gda(X, y, covariance=cov)
        s2 = sk_diag(X, y, g)
        np.testing.assert_allclose(fg.joint_log_likelihood(g, X), s2,
                                   rtol=1e-6 if dtype == np.float32 else 1e-12)
        np.testing.assert_allclose(fg.predict_proba(g, X), _softmax(s2),
                                   rtol=1e-5 if dtype == np.float32 else 1e-10, atol=1e-12)
    assert len(chosen) == 4 and all(k is expected for k in chosen)

    means, inv_var, const = p.scoring_tables()[1]
    for mode in (0, 1, 2):
        a = np.empty((n, K), dtype)
        b = np.empty((n, K), dtype)
        assert gaussian_nb_scores(X, means, inv_var, const, mode, a) == 0
        assert gaussian_nb_scores_four_classes(X, means, inv_var, const, mode, b) == 0
        np.testing.assert_allclose(b, a, rtol=8 * np.finfo(dtype).eps,
                                   atol=64 * np.finfo(dtype).eps)
        c = np.empty((n, K), dtype)  # the checked kernel picks as the params do
        assert checked.gaussian_nb_scores(X, means, inv_var, const, mode, c) == 0
        np.testing.assert_array_equal(c, b if wide else a)
    default = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = fg.predict_proba(p, X)
    finally:
        numba.set_num_threads(default)
    np.testing.assert_array_equal(one, fg.predict_proba(p, X))
    bad = X.copy()
    bad[700, d - 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        fg.predict_proba(p, bad)


def test_gaussian_keeps_digits_far_from_origin(gauss):
    # |μ|/σ = 1e7: the textbook Σx² − n·μ² formula would lose every digit here
    X, y, _ = gauss
    Xs = X + 1e7
    p = fg.fit_gaussian_nb(Xs, y)
    o = ref.gaussian_nb(Xs, _codes(y), 3)
    assert_close(p.variances, o["variances"], rtol=1e-6)
    assert_close(p.means, o["means"])


def test_gaussian_many_blocks_matches_oracle():
    # several blocks and groups: pairwise merging of block statistics, zero weights
    rng = np.random.default_rng(3)
    n = 9000
    y = rng.integers(0, 4, n)
    X = rng.normal(size=(n, 3)) + y[:, None] * 5.0
    w = rng.uniform(0, 2, n)
    w[::7] = 0.0
    p = fg.fit_gaussian_nb(X, y, sample_weight=w)
    o = ref.gaussian_nb(X, y, 4, w)
    for key in ("means", "variances", "class_count", "class_log_prior"):
        assert_close(getattr(p, key), o[key])


# ------------------------------------------------------------- discrete models


def _sk_discrete(model, kw, X, y, sw):
    cls = {"multinomial": sknb.MultinomialNB, "bernoulli": sknb.BernoulliNB,
           "complement": sknb.ComplementNB, "categorical": sknb.CategoricalNB}[model]
    Xs = X.astype(np.int64) if model == "categorical" else X
    return cls(**kw).fit(Xs, y, sample_weight=sw), Xs


FITTERS = {"multinomial": fg.fit_multinomial_nb, "bernoulli": fg.fit_bernoulli_nb,
           "complement": fg.fit_complement_nb, "categorical": fg.fit_categorical_nb}


def _flp(model, s):
    if model == "categorical":
        return np.concatenate(s.feature_log_prob_, axis=1)
    return s.feature_log_prob_


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("model,kw", [
    ("multinomial", {}),
    ("multinomial", {"alpha": 0.3, "class_prior": [0.5, 0.25, 0.25]}),
    ("multinomial", {"fit_prior": False}),
    ("bernoulli", {}),
    ("bernoulli", {"alpha": 0.5, "binarize": 1.0, "class_prior": [0.2, 0.3, 0.5]}),
    ("complement", {}),
    ("complement", {"norm": True, "alpha": 2.0}),
    ("categorical", {}),
    ("categorical", {"alpha": 0.5, "min_categories": 7}),
])
def test_discrete_matches_sklearn(counts, cats, model, kw, weighted):
    X, y, w = cats if model == "categorical" else counts
    sw = w if weighted else None
    p = FITTERS[model](X, y, sample_weight=sw, **kw)
    s, Xs = _sk_discrete(model, kw, X, y, sw)
    assert_close(p.feature_log_prob, _flp(model, s))
    assert_close(p.class_count, s.class_count_)
    assert_close(p.class_log_prior, s.class_log_prior_)
    if model == "bernoulli":
        assert_close(p.neg_feature_log_prob, np.log1p(-np.exp(s.feature_log_prob_)), 1e-9)
    assert_proba_close(fg.predict_proba(p, X), s.predict_proba(Xs))
    assert_close(fg.joint_log_likelihood(p, X), s.predict_joint_log_proba(Xs))
    np.testing.assert_array_equal(fg.predict(p, X), s.predict(Xs))


@pytest.mark.parametrize("weighted", [False, True])
def test_discrete_match_oracles(counts, cats, weighted):
    X, y, w = counts
    sw = w if weighted else None
    c = _codes(y)
    for fit, oracle, jll in [
        (fg.fit_multinomial_nb, ref.multinomial_nb, ref.multinomial_jll),
        (fg.fit_bernoulli_nb, ref.bernoulli_nb, ref.bernoulli_jll),
        (fg.fit_complement_nb, ref.complement_nb, ref.complement_jll),
    ]:
        p = fit(X, y, sample_weight=sw)
        o = oracle(X, c, 3, sw)
        assert_close(p.feature_log_prob, o["feature_log_prob"])
        assert_close(p.feature_count, o["feature_count"])
        assert_close(fg.joint_log_likelihood(p, X), jll(o, X))
    Xc, yc, wc = cats
    p = fg.fit_categorical_nb(Xc, yc, sample_weight=wc if weighted else None)
    o = ref.categorical_nb(Xc, _codes(yc), 3, wc if weighted else None)
    assert_close(p.feature_log_prob, np.concatenate(o["tables"], axis=1))
    assert_close(fg.joint_log_likelihood(p, Xc), ref.categorical_jll(o, Xc))


def test_bernoulli_negative_log_prob_from_counts():
    # p_kj → 1: log(1 − p) from the counts keeps its digits, log1p(−exp(log p)) does not
    X = np.ones((4000, 2))
    X[0, 1] = 0.0
    y = np.zeros(4000, dtype=int)
    y[:2] = 1
    p = fg.fit_bernoulli_nb(X, y, alpha=1e-3)
    N, F = 3998.0, 3998.0
    expected = np.log(N - F + 1e-3) - np.log(N + 2e-3)
    assert_close(p.neg_feature_log_prob[0, 0], expected, rtol=1e-14)


def test_bernoulli_binarize_none_uses_values(counts):
    X, y, _ = counts
    B = (X > 0).astype(np.float64)
    p = fg.fit_bernoulli_nb(B, y, binarize=None)
    s = sknb.BernoulliNB(binarize=None).fit(B, y)
    assert p.binarize is None
    assert_close(p.feature_log_prob, s.feature_log_prob_)
    assert_proba_close(fg.predict_proba(p, B), s.predict_proba(B))


def test_alpha_zero_warns_and_clips_as_sklearn(counts):
    X, y, _ = counts
    with pytest.warns(fg.AlphaClippedWarning, match="clipping alpha to 1e-10"):
        p = fg.fit_multinomial_nb(X, y, alpha=0)
    assert p.alpha == 1e-10
    with pytest.warns(UserWarning, match="alpha too small"):
        s = sknb.MultinomialNB(alpha=0, force_alpha=False).fit(X, y)
    assert_close(p.feature_log_prob, s.feature_log_prob_)
    assert np.all(np.isfinite(p.feature_log_prob))
    assert issubclass(fg.AlphaClippedWarning, UserWarning)


def test_single_class_complement_uses_prior(counts):
    X, _, _ = counts
    y = np.zeros(X.shape[0], dtype=int)
    p = fg.fit_complement_nb(X, y)
    s = sknb.ComplementNB().fit(X, y)
    assert_close(fg.joint_log_likelihood(p, X), s.predict_joint_log_proba(X))


def test_string_labels(counts):
    X, y, _ = counts
    labels = np.array(["ham", "eggs", "spam"])[y]
    p = fg.fit_multinomial_nb(X, labels)
    np.testing.assert_array_equal(p.classes, ["eggs", "ham", "spam"])
    s = sknb.MultinomialNB().fit(X, labels)
    np.testing.assert_array_equal(fg.predict(p, X), s.predict(X))


# ------------------------------------------------------------------------- CSR


def _csr_variants(X):
    A = sp.csr_matrix(X)
    B = sp.csr_array(X)
    B.indices = B.indices.astype(np.int64)
    B.indptr = B.indptr.astype(np.int64)
    return {"csr_matrix int32": A, "csr_array int64": B}


@pytest.mark.parametrize("model", ["multinomial", "bernoulli", "complement", "categorical"])
def test_csr_equals_dense(counts, cats, model):
    X, y, w = cats if model == "categorical" else counts
    fit = FITTERS[model]
    pd = fit(X, y, sample_weight=w)
    Pd = fg.predict_proba(pd, X)
    Jd = fg.joint_log_likelihood(pd, X)
    for name, Xs in _csr_variants(X).items():
        ps = fit(Xs, y, sample_weight=w)
        assert_close(ps.feature_log_prob, pd.feature_log_prob, rtol=1e-13), name
        assert_close(fg.joint_log_likelihood(ps, Xs), Jd, rtol=1e-12)
        assert_proba_close(fg.predict_proba(ps, Xs), Pd, 1e-12)
        np.testing.assert_allclose(fg.predict_log_proba(ps, Xs), fg.predict_log_proba(pd, X),
                                   rtol=RTOL, atol=1e-12)
        np.testing.assert_array_equal(fg.predict(ps, Xs), fg.predict(pd, X))
        # a model fitted on dense data scores CSR input and vice versa
        assert_close(fg.joint_log_likelihood(pd, Xs), Jd, rtol=1e-12)


@pytest.mark.parametrize("model", ["multinomial", "bernoulli", "complement"])
def test_csr_predict_ties_and_argmax(counts, model):
    # CSR predict takes the argmax inside the scoring kernel: it must agree with the
    # argmax of the scores, first class on ties
    X, y, _ = counts
    K = np.unique(y).shape[0]
    opts = {} if model == "complement" else {"class_prior": np.full(K, 1.0 / K)}
    p = FITTERS[model](X, y, **opts)
    Xt = X.copy()
    Xt[::3] = 0.0
    Xs = sp.csr_matrix(Xt)
    jll = fg.joint_log_likelihood(p, Xs)
    got = fg.predict(p, Xs)
    np.testing.assert_array_equal(got, p.classes[np.argmax(jll, axis=1)])
    np.testing.assert_array_equal(got, fg.predict(p, Xt))
    if model == "multinomial":  # an empty row scores log π_k only: an exact tie
        assert np.all(got[::3] == p.classes[0])


@pytest.mark.parametrize("binarize", [False, True])
def test_float32_argmax_gives_the_float64_labels(binarize):
    """CSR predict reads a float32 copy of the weights and rescores from the float64
    ones every row whose argmax that does not prove: classes apart by less than
    float32 resolves (1e-12, and exact copies) get the float64 kernel's labels, the
    first class on ties; rows far apart need no rescoring."""
    rng = np.random.default_rng(7)
    n, d, K = 3000, 400, 6
    X = sp.random(n, d, density=0.05, format="csr", random_state=rng,
                  data_rvs=lambda m: rng.integers(1, 5, m).astype(float))
    W = np.log(rng.uniform(0.01, 1.0, size=(d, K)))
    W[:, 1] = W[:, 0] + 1e-12  # the same float32 weights; class 1 wins by a hair
    W[:, 3] = W[:, 2]  # an exact tie: class 2 must win
    W[:, 4] = W[:, 5] * (1 + 1e-9)
    b = np.log(np.full(K, 1.0 / K))
    bounds = nnz_balanced_bounds(X.indptr, 7)
    args = (X.indptr, X.indices, X.data)
    ref = np.empty(n, dtype=np.int64)
    csr_linear_argmax(*args, W, b, binarize, 0.5, bounds, ref)
    got = np.full(n, -1, dtype=np.int64)
    wmax, bmax = argmax_f32_bound(W, b)
    bad, redo = csr_linear_argmax_f32(*args, W.astype(np.float32), W, b, binarize, 0.5,
                                      wmax, bmax, bounds, got)
    np.testing.assert_array_equal(got, ref)
    assert bad == 0 and redo > 0
    assert not np.any(np.isin(ref, [0, 3]))  # the hair decides, and ties go first
    # classes far apart (one dominant column): every row is proved in float32
    W2 = W.copy()
    W2[:, 1] += 10.0  # above every other class in every column
    bad, redo = csr_linear_argmax_f32(*args, W2.astype(np.float32), W2, b, binarize, 0.5,
                                      *argmax_f32_bound(W2, b), bounds, got)
    nonempty = np.diff(X.indptr) > 0
    assert redo == np.sum(~nonempty) and np.all(got[nonempty] == 1)
    # a NaN is counted, as by the float64 kernel
    Xn = X.copy()
    Xn.data[5] = np.nan
    bad, _ = csr_linear_argmax_f32(Xn.indptr, Xn.indices, Xn.data, W.astype(np.float32),
                                   W, b, binarize, 0.5, wmax, bmax, bounds, got)
    assert bad == 1


def test_unsorted_and_duplicate_csr_entries(counts):
    X, y, _ = counts
    A = sp.coo_matrix(X)
    # split every stored value in two duplicate entries, in reversed order
    rows = np.concatenate([A.row, A.row])[::-1]
    cols = np.concatenate([A.col, A.col])[::-1]
    vals = np.concatenate([A.data * 0.25, A.data * 0.75])[::-1]
    order = np.argsort(rows, kind="stable")
    indptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=X.shape[0]))])
    M = sp.csr_matrix((vals[order], cols[order], indptr), shape=X.shape)
    assert not M.has_canonical_format
    before = (M.data.copy(), M.indices.copy(), M.indptr.copy())
    for fit in (fg.fit_multinomial_nb, fg.fit_bernoulli_nb, fg.fit_complement_nb):
        p_dense = fit(X, y)
        p = fit(M, y)
        assert_close(p.feature_log_prob, p_dense.feature_log_prob, rtol=1e-13)
        assert_proba_close(fg.predict_proba(p, M), fg.predict_proba(p_dense, X), 1e-12)
    for a, b in zip(before, (M.data, M.indices, M.indptr)):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("chunk", [1, 2, 7, 1 << 20])
def test_csr_count_kernel_pieces(counts, chunk):
    # class rows cut into column ranges (one work item each; more ranges than columns
    # is as many as there are columns) or kept whole
    X, y, w = counts
    X = X.copy()
    X[7, 3] = -1.0
    X[2, 5] = -2.0
    M = sp.csr_matrix(X)
    codes = _codes(y).astype(np.int32)
    fc, neg = csr_class_counts(M.indptr.astype(np.int64), M.indices, M.data, codes, w,
                               X.shape[1], 3, False, 0.0, chunk)
    assert_close(fc, ref.multinomial_nb(X, codes, 3, w)["feature_count"], rtol=1e-13)
    i = int(np.searchsorted(M.indptr, neg, side="right") - 1)
    assert (i, M.indices[neg]) == (2, 5)
    fb, nb = csr_class_counts(M.indptr.astype(np.int64), M.indices, M.data, codes, w,
                              X.shape[1], 3, True, 0.5, chunk)
    assert nb == -1
    assert_close(fb, ref.bernoulli_nb(X, codes, 3, w, binarize=0.5)["feature_count"],
                 rtol=1e-13)


def test_categorical_csr_implicit_zeros_and_stored_zeros(cats):
    X, y, _ = cats
    M = sp.csr_matrix(X)
    # store explicit zeros too: still category 0
    A = sp.coo_matrix(X)
    r, c = np.nonzero(X == 0)
    M2 = sp.coo_matrix((np.append(A.data, np.zeros(5)), (np.append(A.row, r[:5]),
                        np.append(A.col, c[:5]))), shape=X.shape).tocsr()
    assert M2.nnz == M.nnz + 5
    p = fg.fit_categorical_nb(X, y)
    for Ms in (M, M2):
        ps = fg.fit_categorical_nb(Ms, y)
        assert_close(ps.category_count, p.category_count, rtol=1e-14)
        assert_proba_close(fg.predict_proba(ps, Ms), fg.predict_proba(p, X), 1e-12)


def test_empty_rows_and_columns_csr(counts):
    X, y, _ = counts
    X = X.copy()
    X[::5] = 0.0
    p = fg.fit_multinomial_nb(sp.csr_matrix(X), y)
    s = sknb.MultinomialNB().fit(X, y)
    assert_proba_close(fg.predict_proba(p, sp.csr_matrix(X)), s.predict_proba(X))


# -------------------------------------------------------------------- the spam example


def test_spam_example_with_unseen_word():
    # words: buy, cheap, meeting, nips; "nips" appears in no training mail
    X = np.array([[1, 1, 0, 0], [1, 0, 0, 0], [0, 1, 0, 0],   # spam
                  [0, 0, 1, 0], [1, 0, 1, 0]], dtype=float)   # ham
    y = np.array(["spam", "spam", "spam", "ham", "ham"])
    p = fg.fit_bernoulli_nb(X, y, alpha=1.0)
    x = np.array([[1, 0, 0, 1]], dtype=float)  # "buy" and the unseen "nips"
    # Laplace: p = (F + 1) / (N + 2)
    F = Fraction
    spam = F(3, 5) * F(3, 5) * (1 - F(3, 5)) * (1 - F(1, 5)) * F(1, 5)
    ham = F(2, 5) * F(2, 4) * (1 - F(1, 4)) * (1 - F(3, 4)) * F(1, 4)
    expected = spam / (spam + ham)
    assert expected == F(1536, 2161)
    proba = fg.predict_proba(p, x)
    assert np.all(np.isfinite(proba))
    assert list(p.classes) == ["ham", "spam"]
    assert abs(proba[0, 1] - float(expected)) < 1e-15
    proba_csr = fg.predict_proba(fg.fit_bernoulli_nb(sp.csr_matrix(X), y), sp.csr_matrix(x))
    assert abs(proba_csr[0, 1] - float(expected)) < 1e-15
    assert fg.predict(p, x)[0] == "spam"


# ------------------------------------------------------------------ bad inputs


def _digest(obj):
    if obj is None:
        return None
    if sp.issparse(obj):
        return tuple(_digest(a) for a in (obj.data, obj.indices, obj.indptr))
    a = np.asarray(obj)
    return (a.dtype.str, a.shape, hashlib.sha256(np.ascontiguousarray(a).view(np.uint8)
                                                 if a.dtype != object else
                                                 repr(a.tolist()).encode()).hexdigest())


def _bad_cases():
    rng = np.random.default_rng(5)
    C = rng.poisson(1.0, size=(20, 6)).astype(float)
    y = np.arange(20) % 2
    neg = C.copy()
    neg[3, 4] = -2.0
    nan_csr = sp.csr_matrix(C)
    nan_csr.data[5] = np.nan
    cat = rng.integers(0, 3, size=(20, 4)).astype(float)
    frac = cat.copy()
    frac[2, 1] = 1.5
    negcat = cat.copy()
    negcat[4, 2] = -1
    G = rng.normal(size=(20, 3))
    return [
        ("multinomial negative", fg.fit_multinomial_nb, (neg, y), {},
         "negative value .* row 3, column 4"),
        ("multinomial negative CSR", fg.fit_multinomial_nb, (sp.csr_matrix(neg), y), {},
         "negative value .* row 3, column 4"),
        ("complement negative", fg.fit_complement_nb, (neg, y), {}, "negative value"),
        ("NaN in sparse data", fg.fit_multinomial_nb, (nan_csr, y), {}, "NaN at row"),
        ("non-integer category", fg.fit_categorical_nb, (frac, y), {},
         "non-integer category code .* row 2, column 1"),
        ("negative category", fg.fit_categorical_nb, (negcat, y), {},
         "negative category code"),
        ("alpha < 0", fg.fit_multinomial_nb, (C, y), {"alpha": -0.5}, "alpha must be >= 0"),
        ("alpha not a number", fg.fit_bernoulli_nb, (C, y), {"alpha": "one"},
         "alpha must be a real number"),
        ("class_prior not summing to 1", fg.fit_multinomial_nb, (C, y),
         {"class_prior": [0.5, 0.6]}, "class_prior must sum to 1"),
        ("class_prior wrong length", fg.fit_bernoulli_nb, (C, y),
         {"class_prior": [0.2, 0.3, 0.5]}, r"class_prior must have shape \(2,\)"),
        ("priors not summing to 1", fg.fit_gaussian_nb, (G, y), {"priors": [0.3, 0.3]},
         "priors must sum to 1"),
        ("negative priors", fg.fit_gaussian_nb, (G, y), {"priors": [1.5, -0.5]},
         "non-negative"),
        ("var_smoothing < 0", fg.fit_gaussian_nb, (G, y), {"var_smoothing": -1e-9},
         "var_smoothing must be >= 0"),
        ("constant X, no smoothing", fg.fit_gaussian_nb, (np.ones((20, 3)), y),
         {"var_smoothing": 0.0}, "zero variance"),
        ("sparse X for Gaussian NB", fg.fit_gaussian_nb, (sp.csr_matrix(G), y), {},
         "sparse"),
        ("binarize < 0 on sparse", fg.fit_bernoulli_nb, (sp.csr_matrix(C), y),
         {"binarize": -1.0}, "implicit zeros"),
        ("binarize=None on counts", fg.fit_bernoulli_nb, (C * 3, y), {"binarize": None},
         "binary features"),
        ("negative sample_weight", fg.fit_multinomial_nb, (C, y),
         {"sample_weight": np.r_[np.ones(19), -1.0]}, "sample_weight contains a negative"),
        ("y length mismatch", fg.fit_complement_nb, (C, y[:-1]), {}, "19 labels but X has 20"),
        ("fit_prior not bool", fg.fit_multinomial_nb, (C, y), {"fit_prior": "yes"},
         "fit_prior must be True or False"),
        ("norm not bool", fg.fit_complement_nb, (C, y), {"norm": 1}, "norm must be True"),
        ("min_categories non-integer", fg.fit_categorical_nb, (cat, y),
         {"min_categories": 2.5}, "min_categories must be integers"),
        ("min_categories wrong shape", fg.fit_categorical_nb, (cat, y),
         {"min_categories": [3, 3]}, r"min_categories must be an int or have shape \(4,\)"),
        ("X not 2-D", fg.fit_multinomial_nb, (C[:, 0], y), {}, "must be 2-D"),
    ]


@pytest.mark.parametrize("case", _bad_cases(), ids=lambda c: c[0])
def test_bad_inputs_raise_and_leave_inputs_unchanged(case):
    _, fit, args, kwargs, match = case
    before = [_digest(a) for a in args] + [_digest(v) for v in kwargs.values()
                                           if not isinstance(v, (str, float, int))]
    with pytest.raises(ValueError, match=match):
        fit(*args, **kwargs)
    after = [_digest(a) for a in args] + [_digest(v) for v in kwargs.values()
                                          if not isinstance(v, (str, float, int))]
    assert before == after


def _bad_predict_cases():
    rng = np.random.default_rng(6)
    cat = rng.integers(0, 3, size=(20, 4)).astype(float)
    y = np.arange(20) % 2
    pc = fg.fit_categorical_nb(cat, y)
    out_of_range = cat[:3].copy()
    out_of_range[1, 2] = 7
    frac = cat[:3].copy()
    frac[0, 0] = 0.5
    C = rng.poisson(1.0, size=(20, 6)).astype(float)
    pm = fg.fit_multinomial_nb(C, y)
    pg = fg.fit_gaussian_nb(C, y)
    pb = fg.fit_bernoulli_nb(C, y, binarize=-0.5)
    return [
        ("category out of range", pc, out_of_range,
         "category 7 at row 1, column 2 \\(0-based\\), but feature 2 was fitted with 3 categories"),
        ("category out of range CSR", pc, sp.csr_matrix(out_of_range), "fitted with 3"),
        ("non-integer category at predict", pc, frac, "non-integer category"),
        ("n_features mismatch", pm, C[:, :5], "5 features, but the model was fitted with 6"),
        ("n_features mismatch CSR", pm, sp.csr_matrix(C[:, :5]), "fitted with 6"),
        ("sparse X for Gaussian NB", pg, sp.csr_matrix(C), "sparse"),
        ("negative binarize on CSR", pb, sp.csr_matrix(C), "implicit zeros"),
        ("NaN at predict", pm, np.where(C == C.max(), np.nan, C), "NaN at row"),
    ]


@pytest.mark.parametrize("case", _bad_predict_cases(), ids=lambda c: c[0])
@pytest.mark.parametrize("func", [fg.predict_proba, fg.predict])
def test_bad_predict_inputs(case, func):
    _, params, X, match = case
    before = _digest(X)
    with pytest.raises(ValueError, match=match):
        func(params, X)
    assert _digest(X) == before


def test_min_categories_allows_unseen_category(cats):
    X, y, _ = cats
    p = fg.fit_categorical_nb(X, y, min_categories=[3, 4, 6, 5])
    Xn = X[:2].copy()
    Xn[:, 1] = 3  # category 3 of feature 1: never seen in training
    proba = fg.predict_proba(p, Xn)
    assert np.all(np.isfinite(proba))
    s = sknb.CategoricalNB(min_categories=np.array([3, 4, 6, 5])).fit(X.astype(int), y)
    assert_proba_close(proba, s.predict_proba(Xn.astype(int)))


def test_fit_never_modifies_inputs(counts):
    X, y, w = counts
    Xs = sp.csr_matrix(X)
    snap = [_digest(a) for a in (X, y, w, Xs)]
    fg.fit_bernoulli_nb(X, y, sample_weight=w, binarize=0.5)
    fg.fit_bernoulli_nb(Xs, y, sample_weight=w, binarize=0.5)
    fg.fit_multinomial_nb(Xs, y, sample_weight=w)
    assert snap == [_digest(a) for a in (X, y, w, Xs)]


# -------------------------------------------------------------- save / load, dtype


def test_save_load_round_trip(tmp_path, gauss, counts, cats):
    Xg, yg, _ = gauss
    Xc, yc, _ = counts
    Xk, yk, _ = cats
    models = [
        (fg.fit_gaussian_nb(Xg, yg), Xg),
        (fg.fit_bernoulli_nb(Xc, yc), Xc),
        (fg.fit_bernoulli_nb(Xc > 0, yc, binarize=None), Xc > 0),
        (fg.fit_multinomial_nb(Xc, yc), Xc),
        (fg.fit_complement_nb(Xc, yc, norm=True), Xc),
        (fg.fit_categorical_nb(Xk, yk), Xk),
    ]
    for i, (p, X) in enumerate(models):
        path = tmp_path / f"p{i}.npz"
        fg.save_params(path, p)
        q = fg.load_params(path)
        assert type(q) is type(p)
        for f in p.__dataclass_fields__:
            a, b = getattr(p, f), getattr(q, f)
            if isinstance(a, np.ndarray):
                assert a.dtype == b.dtype
                np.testing.assert_array_equal(a, b)
            else:
                assert a == b and type(a) is type(b)
        np.testing.assert_array_equal(fg.predict_proba(q, X), fg.predict_proba(p, X))


def test_float32_stays_float32(gauss, counts):
    Xg, yg, _ = gauss
    p = fg.fit_gaussian_nb(Xg.astype(np.float32), yg)
    p64 = fg.fit_gaussian_nb(Xg, yg)
    assert p.means.dtype == np.float32 and p.variances.dtype == np.float32
    P = fg.predict_proba(p, Xg.astype(np.float32))
    assert P.dtype == np.float32
    eps = np.finfo(np.float32).eps
    assert_close(p.variances, p64.variances, rtol=100 * eps)
    assert np.max(np.abs(P - fg.predict_proba(p64, Xg))) < 1e4 * eps

    Xc, yc, _ = counts
    M = sp.csr_matrix(Xc.astype(np.float32))
    q = fg.fit_multinomial_nb(M, yc)
    q64 = fg.fit_multinomial_nb(Xc, yc)
    assert q.feature_log_prob.dtype == np.float32
    assert q.feature_count.dtype == np.float64  # counts accumulate in float64
    np.testing.assert_array_equal(q.feature_count, q64.feature_count)
    J = fg.joint_log_likelihood(q, M)
    assert J.dtype == np.float32
    assert_close(J, fg.joint_log_likelihood(q64, Xc), rtol=100 * eps)


# --------------------------------------------------- determinism, user @njit kernels


def test_results_do_not_depend_on_thread_count():
    rng = np.random.default_rng(7)
    n = 20000
    y = rng.integers(0, 3, n)
    X = rng.normal(size=(n, 4)) + y[:, None]
    C = sp.random(n, 50, density=0.1, format="csr", random_state=8) * 10
    C.data = np.floor(C.data)
    default = numba.get_num_threads()
    results = []
    try:
        for t in sorted({1, default}):
            numba.set_num_threads(t)
            g = fg.fit_gaussian_nb(X, y)
            m = fg.fit_multinomial_nb(C, y)
            results.append((g.means, g.variances, m.feature_count, fg.predict_proba(g, X),
                            fg.predict_proba(m, C)))
    finally:
        numba.set_num_threads(default)
    for a, b in zip(results[0], results[-1]):
        np.testing.assert_array_equal(a, b)


def test_kernel_callable_from_user_njit(counts):
    X, y, _ = counts
    p = fg.fit_multinomial_nb(X, y)
    W = np.ascontiguousarray(p.feature_log_prob.T)
    b = p.class_log_prior.copy()

    @numba.njit
    def user_predict(indptr, indices, data, W, b):
        bounds = nnz_balanced_bounds(indptr, 4)
        out = np.empty((indptr.shape[0] - 1, b.shape[0]))
        csr_linear_scores(indptr, indices, data, W, b, False, 0.0, 0, bounds, out)
        labels = np.empty(out.shape[0], dtype=np.int64)
        for i in range(out.shape[0]):
            labels[i] = np.argmax(out[i])
        return out, labels

    M = sp.csr_matrix(X)
    jll, labels = user_predict(M.indptr.astype(np.int64), M.indices, M.data, W, b)
    assert_close(jll, fg.joint_log_likelihood(p, X), rtol=1e-12)
    np.testing.assert_array_equal(p.classes[labels], fg.predict(p, X))


def test_all_minus_inf_prior_rows_are_not_nan(counts):
    X, y, _ = counts
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        p = fg.fit_multinomial_nb(X, y, class_prior=[0.0, 0.5, 0.5])
    lp = fg.predict_log_proba(p, sp.csr_matrix(X))
    assert np.all(lp[:, 0] == -np.inf) and not np.any(np.isnan(lp))
    P = fg.predict_proba(p, X)
    assert np.all(P[:, 0] == 0.0)
    assert_close(P.sum(axis=1), np.ones(X.shape[0]), rtol=1e-14)


# --------------------------------------------------------------------------------------
# issue 42: naive Bayes never returns NaN from finite input
# --------------------------------------------------------------------------------------
def _ternary():
    rng = np.random.default_rng(42)
    X = rng.integers(-1, 2, size=(60, 5)).astype(float)
    return X, np.arange(60) % 3


@pytest.mark.parametrize("fmt", [np.asarray, sp.csr_matrix])
def test_bernoulli_binarize_none_refuses_non_binary_values(fmt):
    X, y = _ternary()
    first = np.argwhere((X != 0) & (X != 1))[0]
    where = rf"X\[{first[0]}, {first[1]}\] = -1\.0"
    with pytest.raises(ValueError, match=rf"binarize=None needs binary.*{where}.*binarize"):
        fg.fit_bernoulli_nb(fmt(X), y, binarize=None)
    with pytest.raises(ValueError, match=r"binarize=None needs binary"):
        fg.nb_counts(fmt(X), y, "bernoulli", binarize=None)
    with pytest.raises(ValueError, match=r"binarize=None needs binary"):
        fs.BernoulliNB(binarize=None).fit(fmt(X), y)  # the declared difference
    # a model of binary X refuses non-binary X at scoring, for every scoring function
    B = (X > 0).astype(float)
    p = fg.fit_bernoulli_nb(fmt(B), y, binarize=None)
    for score in (fg.joint_log_likelihood, fg.predict_proba, fg.predict_log_proba,
                  fg.predict):
        with pytest.raises(ValueError, match=r"binarize=None needs binary"):
            score(p, fmt(X))
    # binary X: unchanged, and as scikit-learn
    sk = sknb.BernoulliNB(binarize=None).fit(B, y)
    np.testing.assert_allclose(fg.predict_proba(p, fmt(B)), sk.predict_proba(B), rtol=0,
                               atol=1e-12)


@pytest.mark.parametrize("fmt", [np.asarray, sp.csr_matrix])
@pytest.mark.parametrize("fit", ["fit_multinomial_nb", "fit_complement_nb"])
def test_count_models_refuse_overflowing_counts(fit, fmt):
    rng = np.random.default_rng(1)
    X = rng.integers(0, 5, size=(60, 4)).astype(float)
    X[:, 0] += 1.0  # no empty row
    y = np.arange(60) % 2
    with pytest.raises(ValueError, match=r"overflow float64.*rescale"):
        getattr(fg, fit)(fmt(X * 1e306), y)
    with pytest.raises(ValueError, match=r"overflow float64.*rescale"):
        getattr(fg, fit)(fmt(X), y, sample_weight=np.full(60, 1e306))
    p = getattr(fg, fit)(fmt(X), y)
    for score in (fg.joint_log_likelihood, fg.predict_proba, fg.predict_log_proba,
                  fg.predict):
        with pytest.raises(ValueError, match=r"class scores .* overflow.*rescale"):
            score(p, fmt(np.full((3, 4), 1e308)))
    # large but representable scores are unchanged and finite
    big = X * 1e300
    lp = fg.predict_log_proba(p, fmt(big))
    assert np.all(np.isfinite(lp))
    assert np.array_equal(fg.predict(p, fmt(big)), np.argmax(lp, axis=1))


@pytest.mark.parametrize("fit", [
    lambda X, y, v: fg.fit_gaussian_nb(X, y, var_smoothing=v),
    lambda X, y, v: fg.fit_gda(X, y, "diagonal", var_smoothing=v),
    lambda X, y, v: fg.fit_gda(X, y, "pooled_diagonal", var_smoothing=v),
])
@pytest.mark.parametrize("var_smoothing", [1e299, 1e305])
def test_huge_var_smoothing_is_named(fit, var_smoothing):
    rng = np.random.default_rng(2)
    X = rng.normal(size=(40, 3)) * 1e5
    y = np.arange(40) % 2
    with pytest.raises(ValueError, match=r"var_smoothing=1e\+\d+ is too large"):
        fit(X, y, var_smoothing)


# issue 42b: the count models refuse a negative value at scoring, as their fit does
@pytest.mark.parametrize("fit", [fg.fit_multinomial_nb, fg.fit_complement_nb])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_count_models_refuse_negative_values_at_scoring(fit, dtype):
    rng = np.random.default_rng(7)
    X = rng.poisson(2, (60, 7)).astype(dtype)
    y = rng.integers(0, 3, 60)
    p = fit(X, y)
    # the kernel reads stored values in pairs: a negative first or second of a pair,
    # or the odd last one
    for col in (2, 3, 6):
        Z = X[:8].copy()
        Z[5, col] = -1e-3
        for form in (Z, sp.csr_matrix(Z)):
            before = form.copy()
            for score in (fg.predict, fg.predict_proba,
                          fg.predict_log_proba, fg.joint_log_likelihood):
                with pytest.raises(ValueError,
                                   match=rf"negative value -0.001 at row 5, column {col}"):
                    score(p, form)
            assert (form != before).nnz == 0 if sp.issparse(form) else \
                np.array_equal(form, before)
    # counts still score; so do -0.0 entries (not negative)
    Z = X[:8].copy()
    Z[1, 1] = -0.0
    for form in (Z, sp.csr_matrix(Z)):
        assert fg.predict_proba(p, form).shape == (8, 3)


def test_bernoulli_with_a_threshold_still_scores_negative_values():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(60, 5))
    y = rng.integers(0, 3, 60)
    p = fg.fit_bernoulli_nb(X, y, binarize=0.0)
    assert np.isfinite(fg.predict_proba(p, X)).all()

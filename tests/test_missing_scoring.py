"""Scoring with ``nan_policy="marginalize"``: rows with NaN scored by the marginal
likelihood of their observed features, against plain-numpy transcriptions of the
formulas (one row and one class at a time), for every family and covariance kind.

References (fastgen.scoring_missing, docs/guide/incomplete_data.rst):

* GDA: log π_k + log N(x_o; μ_k,o, Σ_k,oo), Σ_oo the observed block of the covariance;
* Gaussian, Bernoulli, categorical naive Bayes: the complete-data terms of the observed
  features only;
* multinomial: log π_k + Σ_{j∈o} x_j log(θ_kj / Σ_{l∈o} θ_kl);
* every feature missing: log π_k.
"""

import hashlib

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import make_blobs

import fastgen

SETTINGS = settings()
KINDS = ("pooled", "per_class", "diagonal", "pooled_diagonal")
SCORERS = (fastgen.joint_log_likelihood, fastgen.predict_log_proba, fastgen.predict_proba,
           fastgen.predict)


def _mask(n, d, rate, seed):
    """A seeded missing mask with every kind of row: complete, all missing, one
    observed feature, and random ones."""
    rng = np.random.default_rng(seed)
    M = rng.random((n, d)) < rate
    M[0] = True                 # every feature missing
    M[1] = False                # complete
    M[2] = True
    M[2, d - 1] = False         # one observed feature
    return M


def _with_nan(X, M):
    Xm = np.array(X, dtype=float)
    Xm[M] = np.nan
    return Xm


def _cov_of(p, k):
    c = p.covariance.astype(np.float64)
    return {"pooled": lambda: c, "per_class": lambda: c[k],
            "diagonal": lambda: np.diag(c[k]), "pooled_diagonal": lambda: np.diag(c)
            }[p.covariance_type]()


def _gauss_logpdf(x, mean, cov):
    """log N(x; mean, cov), two-pass: residual first, then solve."""
    r = x - mean
    L = np.linalg.cholesky(cov)
    z = np.linalg.solve(L, r)
    return -0.5 * (z @ z) - np.sum(np.log(np.diag(L))) - 0.5 * x.size * np.log(2 * np.pi)


def ref_gda(p, Xm):
    n, K = Xm.shape[0], p.n_classes
    out = np.empty((n, K))
    for i in range(n):
        o = ~np.isnan(Xm[i])
        for k in range(K):
            with np.errstate(divide="ignore"):
                lp = np.log(float(p.priors[k]))
            if o.any():
                S = _cov_of(p, k)[np.ix_(o, o)]
                lp += _gauss_logpdf(Xm[i, o], p.means[k, o].astype(float), S)
            out[i, k] = lp
    return out


def ref_gaussian_nb(p, Xm):
    out = np.empty((Xm.shape[0], p.n_classes))
    for i in range(Xm.shape[0]):
        o = ~np.isnan(Xm[i])
        for k in range(p.n_classes):
            v = p.variances[k, o].astype(float)
            r = Xm[i, o] - p.means[k, o]
            out[i, k] = p.class_log_prior[k] - 0.5 * np.sum(np.log(2 * np.pi * v) + r * r / v)
    return out


def ref_bernoulli(p, Xm):
    out = np.empty((Xm.shape[0], p.n_classes))
    for i in range(Xm.shape[0]):
        o = ~np.isnan(Xm[i])
        b = Xm[i] > p.binarize if p.binarize is not None else Xm[i] == 1
        for k in range(p.n_classes):
            t = np.where(b, p.feature_log_prob[k], p.neg_feature_log_prob[k])
            out[i, k] = p.class_log_prior[k] + np.sum(t[o])
    return out


def ref_multinomial(p, Xm):
    theta = np.exp(p.feature_log_prob.astype(float))
    out = np.empty((Xm.shape[0], p.n_classes))
    for i in range(Xm.shape[0]):
        o = ~np.isnan(Xm[i])
        for k in range(p.n_classes):
            s = p.class_log_prior[k]
            if o.any():
                s += np.sum(Xm[i, o] * np.log(theta[k, o] / theta[k, o].sum()))
            out[i, k] = s
    return out


def ref_categorical(p, Xm):
    out = np.empty((Xm.shape[0], p.n_classes))
    for i in range(Xm.shape[0]):
        for k in range(p.n_classes):
            s = p.class_log_prior[k]
            for j in np.flatnonzero(~np.isnan(Xm[i])):
                s += p.feature_log_prob[k, p.offsets[j] + int(Xm[i, j])]
            out[i, k] = s
    return out


def _close(a, b, tol=1e-10):
    b = np.asarray(b, dtype=float)
    finite = np.isfinite(b)
    assert np.array_equal(np.isfinite(a), finite)
    scale = max(1.0, float(np.max(np.abs(b[finite]))))
    np.testing.assert_allclose(a[finite], b[finite], rtol=tol, atol=tol * scale)


def _check_all_scorers(p, X, ref_jll):
    """joint log-likelihood, log posteriors, posteriors and labels against the
    reference joint log-likelihood."""
    jll = fastgen.joint_log_likelihood(p, X, nan_policy="marginalize")
    _close(jll, ref_jll)
    top = ref_jll.max(axis=1, keepdims=True)
    ref_lp = ref_jll - (top + np.log(np.exp(ref_jll - top).sum(axis=1, keepdims=True)))
    _close(fastgen.predict_log_proba(p, X, nan_policy="marginalize"), ref_lp)
    proba = fastgen.predict_proba(p, X, nan_policy="marginalize")
    _close(proba, np.exp(ref_lp))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-12)
    labels = fastgen.predict(p, X, nan_policy="marginalize")
    margin = np.sort(ref_jll, axis=1)
    clear = margin[:, -1] - margin[:, -2] > 1e-8
    np.testing.assert_array_equal(labels[clear], p.classes[np.argmax(ref_jll, axis=1)][clear])


# ------------------------------------------------------------------ GDA


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("rate", [0.1, 0.4])
def test_gda_marginal_matches_transcription(kind, rate):
    X, y = make_blobs(240, 5, 3, seed=1)
    p = fastgen.fit_gda(X, y, kind)
    Xm = _with_nan(X, _mask(240, 5, rate, seed=2))
    ref = ref_gda(p, Xm)
    _check_all_scorers(p, Xm, ref)
    # a row with every feature missing gets the priors
    np.testing.assert_allclose(fastgen.predict_proba(p, Xm[:1], nan_policy="marginalize")[0],
                               p.priors, rtol=1e-14)


@pytest.mark.parametrize("kind", KINDS)
@SETTINGS
@given(seed=st.integers(0, 10_000), d=st.integers(1, 7), rate=st.floats(0.05, 0.9))
def test_gda_marginal_every_pattern(kind, seed, d, rate):
    # random dimensions and missing rates: many distinct patterns and missing counts
    X, y = make_blobs(60, d, 3, seed=seed)
    p = fastgen.fit_gda(X, y, kind, reg=1e-3)
    Xm = _with_nan(X, _mask(60, d, rate, seed + 1))
    _close(fastgen.joint_log_likelihood(p, Xm, nan_policy="marginalize"), ref_gda(p, Xm))


def test_gda_zero_prior_and_user_priors():
    X, y = make_blobs(150, 4, 3, seed=3)
    p = fastgen.fit_gda(X, y, "per_class", priors=[0.5, 0.5, 0.0])
    Xm = _with_nan(X, _mask(150, 4, 0.3, 4))
    jll = fastgen.joint_log_likelihood(p, Xm, nan_policy="marginalize")
    assert np.all(np.isneginf(jll[:, 2]))
    _close(jll[:, :2], ref_gda(p, Xm)[:, :2])
    proba = fastgen.predict_proba(p, Xm, nan_policy="marginalize")
    assert np.all(proba[:, 2] == 0) and not np.isnan(proba).any()


def test_float32_params_score_in_float32():
    X, y = make_blobs(200, 4, 3, seed=5)
    Xm = _with_nan(X, _mask(200, 4, 0.25, 6))
    for kind in KINDS:
        p32 = fastgen.fit_gda(X.astype(np.float32), y, kind)
        p64 = fastgen.fit_gda(X, y, kind)
        out = fastgen.predict_proba(p32, Xm.astype(np.float32), nan_policy="marginalize")
        assert out.dtype == np.float32
        np.testing.assert_allclose(
            out, fastgen.predict_proba(p64, Xm, nan_policy="marginalize"), atol=1e-4)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("shift,scale", [(1e6, 1.0), (0.0, 1e-6), (-3e5, 1e3)])
def test_gda_posteriors_invariant_to_offsets_and_scales(kind, shift, scale):
    X, y = make_blobs(200, 4, 3, seed=7)
    M = _mask(200, 4, 0.3, 8)
    base = fastgen.predict_proba(fastgen.fit_gda(X, y, kind), _with_nan(X, M),
                                 nan_policy="marginalize")
    Xt = X * scale + shift
    p = fastgen.fit_gda(Xt, y, kind)
    out = fastgen.predict_proba(p, _with_nan(Xt, M), nan_policy="marginalize")
    np.testing.assert_allclose(out, base, atol=1e-7)


# ------------------------------------------------------------------ naive Bayes


def _counts(seed, n=200, d=6, K=3):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % K
    X = rng.poisson(1.0 + 0.8 * y[:, None] * rng.random(d)).astype(float)
    return X, y


@pytest.mark.parametrize("sparse", [False, True])
def test_naive_bayes_marginals_match_transcriptions(sparse):
    X, y = _counts(10)
    M = _mask(*X.shape, 0.25, 11)
    Xm = _with_nan(X, M)
    form = sp.csr_matrix if sparse else np.asarray
    cases = [
        (fastgen.fit_bernoulli_nb(X, y, binarize=1.0), Xm, ref_bernoulli),
        (fastgen.fit_bernoulli_nb((X > 1).astype(float), y, binarize=None),
         _with_nan((X > 1).astype(float), M), ref_bernoulli),
        (fastgen.fit_multinomial_nb(X, y), Xm, ref_multinomial),
        (fastgen.fit_categorical_nb(np.minimum(X, 4), y), _with_nan(np.minimum(X, 4), M),
         ref_categorical),
    ]
    if not sparse:
        cases.append((fastgen.fit_gaussian_nb(X, y), Xm, ref_gaussian_nb))
    for p, data, ref in cases:
        _check_all_scorers(p, form(data), ref(p, data))


def test_csr_index_dtypes_and_stored_zeros():
    X, y = _counts(12)
    Xm = _with_nan(X, _mask(*X.shape, 0.2, 13))
    p = fastgen.fit_multinomial_nb(X, y)
    ref = ref_multinomial(p, Xm)
    for idx in (np.int32, np.int64):
        A = sp.csr_matrix(Xm)
        A.indices = A.indices.astype(idx)
        A.indptr = A.indptr.astype(idx)
        _close(fastgen.joint_log_likelihood(p, A, nan_policy="marginalize"), ref)


def test_multinomial_missing_mass_near_one():
    # most of θ_k on the missing features: the observed sum taken directly
    rng = np.random.default_rng(14)
    y = np.arange(100) % 2
    X = rng.poisson(0.05, size=(100, 8)).astype(float)
    X[:, 0] += rng.poisson(200, size=100)
    p = fastgen.fit_multinomial_nb(X, y)
    M = np.zeros(X.shape, bool)
    M[:, 0] = True
    M[5, :] = True
    Xm = _with_nan(X, M)
    _close(fastgen.joint_log_likelihood(p, Xm, nan_policy="marginalize"),
           ref_multinomial(p, Xm))


# ------------------------------------------------------------------ complete rows


def _every_params():
    X, y = make_blobs(120, 4, 3, seed=20)
    Xc, yc = _counts(21, n=120, d=4)
    out = [(fastgen.fit_gda(X, y, k), X) for k in KINDS]
    out += [(fastgen.fit_gaussian_nb(X, y), X),
            (fastgen.fit_bernoulli_nb(Xc, yc, binarize=1.0), Xc),
            (fastgen.fit_multinomial_nb(Xc, yc), Xc),
            (fastgen.fit_complement_nb(Xc, yc), Xc),
            (fastgen.fit_categorical_nb(np.minimum(Xc, 3), yc), np.minimum(Xc, 3)),
            (fastgen.fit_logistic(X, y, l2=1.0), X)]
    return out


def test_without_nan_the_answers_are_todays_bitwise():
    for p, X in _every_params():
        forms = [X] + ([sp.csr_matrix(X)] if p.accepts_sparse else [])
        for A in forms:
            for f in SCORERS:
                a = f(p, A)
                b = f(p, A, nan_policy="marginalize")
                assert a.dtype == b.dtype
                np.testing.assert_array_equal(a, b)


def test_complete_rows_of_a_mixed_matrix_are_scored_as_today():
    for p, X in _every_params():
        if type(p).__name__ in ("ComplementNBParams", "LogisticParams"):
            continue
        M = _mask(*X.shape, 0.3, 22)
        Xm = _with_nan(X, M)
        complete = ~M.any(axis=1)
        for f in SCORERS:
            out = f(p, Xm, nan_policy="marginalize")
            np.testing.assert_array_equal(out[complete], f(p, X[complete]))


# ------------------------------------------------------------------ bad input


def _digest(a):
    if sp.issparse(a):
        return tuple(hashlib.sha256(np.ascontiguousarray(x).tobytes()).hexdigest()
                     for x in (a.data, a.indices, a.indptr))
    return hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()


@pytest.mark.parametrize("bad", ["Raise", "omit", None, 1, True])
def test_bad_nan_policy(bad):
    X, y = make_blobs(50, 3, 2, seed=30)
    p = fastgen.fit_gda(X, y)
    for f in SCORERS:
        with pytest.raises(ValueError, match="nan_policy must be 'raise' or 'marginalize'"):
            f(p, X, nan_policy=bad)


def test_default_still_refuses_nan():
    X, y = make_blobs(50, 3, 2, seed=31)
    p = fastgen.fit_gda(X, y)
    Xm = X.copy()
    Xm[4, 1] = np.nan
    with pytest.raises(ValueError, match="X contains NaN at row 4, column 1"):
        fastgen.predict(p, Xm)


def test_complement_and_logistic_refuse_nan_and_leave_input_alone():
    X, y = make_blobs(80, 4, 2, seed=32)
    Xc, yc = _counts(33, n=80, d=4)
    cases = [(fastgen.fit_complement_nb(Xc, yc), Xc, "complement naive Bayes cannot"),
             (fastgen.fit_logistic(X, y, l2=1.0), X, "logistic regression cannot")]
    for p, data, msg in cases:
        Xm = _with_nan(data, _mask(*data.shape, 0.2, 34))
        forms = [Xm] + ([sp.csr_matrix(Xm)] if p.accepts_sparse else [])
        for A in forms:
            before = _digest(A)
            for f in SCORERS:
                with pytest.raises(ValueError, match=msg):
                    f(p, A, nan_policy="marginalize")
            assert _digest(A) == before


def test_infinity_is_still_an_error_and_input_untouched():
    X, y = make_blobs(60, 3, 2, seed=35)
    Xc, yc = _counts(36, n=60, d=3)
    for p, data in [(fastgen.fit_gda(X, y, "per_class"), X),
                    (fastgen.fit_multinomial_nb(Xc, yc), Xc)]:
        Xm = _with_nan(data, _mask(*data.shape, 0.2, 37))
        Xm[7, 2] = np.inf
        Xm[7, 0] = np.nan
        before = _digest(Xm)
        with pytest.raises(ValueError, match="X contains infinity at row 7, column 2"):
            fastgen.predict_proba(p, Xm, nan_policy="marginalize")
        assert _digest(Xm) == before


def test_observed_values_are_still_checked():
    Xc, yc = _counts(38, n=60, d=3)
    Xm = _with_nan(Xc, _mask(60, 3, 0.2, 39))
    Xm[9, 1] = -2.0
    with pytest.raises(ValueError, match="negative value"):
        fastgen.predict(fastgen.fit_multinomial_nb(Xc, yc), Xm, nan_policy="marginalize")
    Xk = np.minimum(Xc, 3)
    Xkm = _with_nan(Xk, _mask(60, 3, 0.2, 40))
    Xkm[10, 0] = 2.5
    with pytest.raises(ValueError, match="non-integer category code"):
        fastgen.predict(fastgen.fit_categorical_nb(Xk, yc), Xkm, nan_policy="marginalize")


def test_rank_deficient_pooled_model_refuses_nan():
    X, y = make_blobs(80, 3, 2, seed=41)
    X = np.column_stack([X, X[:, 0] + X[:, 1]])  # collinear: rank 3 of 4
    p = fastgen.fit_gda(X, y)
    assert p.rank < 4
    Xm = X.copy()
    Xm[3, 0] = np.nan
    with pytest.raises(ValueError, match="has rank 3 < 4"):
        fastgen.predict(p, Xm, nan_policy="marginalize")
    np.testing.assert_array_equal(fastgen.predict(p, X, nan_policy="marginalize"),
                                  fastgen.predict(p, X))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.usefixtures("kernel_path")  # the pieces on the kernels' path too
def test_marginal_kernels_score_a_row_the_same_in_any_block(kind):
    # the parallel marginal kernels on the whole X and on small pieces of it (one
    # thread's share, then none): row by row the same arithmetic, so the same bits for
    # the rows with NaN (the complete rows go through the complete-data scoring, whose
    # BLAS blocking depends on the rows)
    X, y = make_blobs(40_000, 6, 4, seed=50)
    p = fastgen.fit_gda(X, y, kind)
    M = _mask(40_000, 6, 0.2, 51)
    Xm = _with_nan(X, M)
    whole = fastgen.joint_log_likelihood(p, Xm, nan_policy="marginalize")
    parts = np.vstack([fastgen.joint_log_likelihood(p, Xm[a:a + 500], nan_policy="marginalize")
                       for a in range(0, 40_000, 500)])
    incomplete = M.any(axis=1)
    np.testing.assert_array_equal(whole[incomplete], parts[incomplete])
    _close(whole[:300], ref_gda(p, Xm[:300]))


@pytest.mark.parametrize("d", [1, 8, 16, 20, 21, 70])
def test_patterns_group_the_rows_exactly(d):
    from fastgen.stats.missing import missing_patterns

    M = np.random.default_rng(d).random((500, d)) < 0.3
    M[:3] = [True] * d, [False] * d, M[0]
    pats = missing_patterns(M)
    np.testing.assert_array_equal(pats.patterns[pats.pattern_of], M)
    assert np.unique(pats.patterns, axis=0).shape[0] == pats.patterns.shape[0]
    assert np.all(np.diff(pats.n_missing) >= 0)


@pytest.mark.parametrize("kind", ["pooled", "per_class"])
def test_many_features_take_the_sorted_patterns(kind):
    X, y = make_blobs(300, 22, 2, seed=60)
    p = fastgen.fit_gda(X, y, kind, reg=1e-2)
    Xm = _with_nan(X[:40], _mask(40, 22, 0.3, 61))
    _close(fastgen.joint_log_likelihood(p, Xm, nan_policy="marginalize"), ref_gda(p, Xm))

"""Fits with ``nan_policy="marginalize"``: available-case estimates of the models whose
likelihood factorises per feature, EM for the full Gaussian covariances, against plain
numpy references (per-class nanmean/nanvar and counts; an EM written row by row with
Σ_oo solves, Little & Rubin 2002 §8.2)."""

import hashlib
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import make_blobs

import fastgen

SETTINGS = settings()


def _mask(n, d, rate, seed):
    rng = np.random.default_rng(seed)
    M = rng.random((n, d)) < rate
    M[0] = True   # a row with every feature missing
    M[1] = False  # a complete row
    return M


def _with_nan(X, M):
    Xm = np.array(X, dtype=float)
    Xm[M] = np.nan
    return Xm


def _digest(a):
    if sp.issparse(a):
        a = a.data
    return hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()


# ------------------------------------------------------------------ references


def ref_available_case(Xm, y, K, w):
    """Per class and feature: weight of the observed rows, their mean and variance."""
    d = Xm.shape[1]
    N, mu, var = np.zeros((K, d)), np.zeros((K, d)), np.zeros((K, d))
    for k in range(K):
        for j in range(d):
            sel = (y == k) & ~np.isnan(Xm[:, j])
            N[k, j] = w[sel].sum()
            mu[k, j] = np.sum(w[sel] * Xm[sel, j]) / N[k, j]
            var[k, j] = np.sum(w[sel] * (Xm[sel, j] - mu[k, j]) ** 2) / N[k, j]
    return N, mu, var


def ref_em(Xm, y, K, w, pooled, iters=4000, tol=1e-13):
    """EM for class Gaussians with missing features, one row at a time."""
    n, d = Xm.shape
    mu = np.array([np.nanmean(Xm[y == k], axis=0) for k in range(K)])
    cov = np.diag(np.nanvar(Xm, axis=0))
    cov = cov if pooled else np.stack([cov] * K)
    for _ in range(iters):
        xhat = np.empty((n, d))
        C = np.zeros((n, d, d))
        for i in range(n):
            k = y[i]
            S = cov if pooled else cov[k]
            o = ~np.isnan(Xm[i])
            m = ~o
            xhat[i] = np.where(o, Xm[i], mu[k])
            if not m.any():
                continue
            if not o.any():
                C[i] = S
                continue
            B = np.linalg.solve(S[np.ix_(o, o)], S[np.ix_(o, m)]).T  # Σ_mo Σ_oo⁻¹
            xhat[i, m] = mu[k, m] + B @ (Xm[i, o] - mu[k, o])
            C[i][np.ix_(m, m)] = S[np.ix_(m, m)] - B @ S[np.ix_(o, m)]
        new_mu = np.array([w[y == k] @ xhat[y == k] / w[y == k].sum() for k in range(K)])
        parts = []
        for k in range(K):
            sel = y == k
            D = xhat[sel] - new_mu[k]
            parts.append((D * w[sel, None]).T @ D + np.einsum("i,iab->ab", w[sel], C[sel]))
        new_cov = (sum(parts) / w.sum() if pooled else
                   np.stack([parts[k] / w[y == k].sum() for k in range(K)]))
        change = max(np.abs(new_mu - mu).max(), np.abs(new_cov - cov).max())
        mu, cov = new_mu, new_cov
        if change < tol:
            break
    return mu, cov


def ref_loglik(Xm, y, w, priors, means, covs, pooled):
    """Σ_i w_i [log π_{y_i} + log N(x_io; μ_o, Σ_oo)]."""
    total = 0.0
    for i in range(Xm.shape[0]):
        k = y[i]
        o = ~np.isnan(Xm[i])
        lp = np.log(priors[k])
        if o.any():
            S = (covs if pooled else covs[k])[np.ix_(o, o)]
            r = Xm[i, o] - means[k, o]
            L = np.linalg.cholesky(S)
            z = np.linalg.solve(L, r)
            lp += -0.5 * z @ z - np.log(np.diag(L)).sum() - 0.5 * o.sum() * np.log(2 * np.pi)
        total += w[i] * lp
    return total


# ------------------------------------------------------------------ available case


@pytest.mark.parametrize("weighted", [False, True])
def test_diagonal_models_are_available_case(weighted):
    X, y = make_blobs(200, 4, 3, seed=1, offset=1e6)
    w = np.random.default_rng(2).random(200) + 0.1 if weighted else np.ones(200)
    Xm = _with_nan(X, _mask(200, 4, 0.3, 3))
    N, mu, var = ref_available_case(Xm, y, 3, w)
    kw = dict(sample_weight=w if weighted else None, nan_policy="marginalize")
    g = fastgen.fit_gaussian_nb(Xm, y, var_smoothing=0.0, **kw)
    np.testing.assert_allclose(g.means, mu, rtol=1e-13)
    np.testing.assert_allclose(g.variances, var, rtol=1e-9)
    d = fastgen.fit_gda(Xm, y, "diagonal", var_smoothing=0.0, **kw)
    np.testing.assert_allclose(d.means, mu, rtol=1e-13)
    np.testing.assert_allclose(d.covariance, var, rtol=1e-9)
    pd = fastgen.fit_gda(Xm, y, "pooled_diagonal", var_smoothing=0.0, **kw)
    np.testing.assert_allclose(pd.covariance, (var * N).sum(0) / N.sum(0), rtol=1e-9)
    W = np.array([w[y == k].sum() for k in range(3)])
    np.testing.assert_allclose(g.class_count, W, rtol=1e-13)
    np.testing.assert_allclose(d.priors, W / W.sum(), rtol=1e-13)
    # the unweighted variance floor over the observed entries
    g2 = fastgen.fit_gaussian_nb(Xm, y, var_smoothing=1e-3, **kw)
    eps = 1e-3 * np.nanvar(Xm, axis=0).max()
    np.testing.assert_allclose(g2.variances, var + eps, rtol=1e-9)


@pytest.mark.parametrize("sparse", [False, True])
def test_bernoulli_and_categorical_count_observed_entries(sparse):
    rng = np.random.default_rng(4)
    y = np.arange(150) % 3
    X = np.minimum(rng.poisson(1 + y[:, None] * 0.5, size=(150, 5)), 3).astype(float)
    M = _mask(150, 5, 0.25, 5)
    Xm = _with_nan(X, M)
    w = rng.random(150) + 0.5
    A = sp.csr_matrix(Xm) if sparse else Xm
    b = fastgen.fit_bernoulli_nb(A, y, binarize=1.0, sample_weight=w, nan_policy="marginalize")
    N = np.array([[w[(y == k) & ~M[:, j]].sum() for j in range(5)] for k in range(3)])
    F = np.array([[w[(y == k) & ~M[:, j] & (X[:, j] > 1)].sum() for j in range(5)]
                  for k in range(3)])
    np.testing.assert_allclose(b.observed_count, N, rtol=1e-13)
    np.testing.assert_allclose(b.feature_count, F, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(np.exp(b.feature_log_prob), (F + 1) / (N + 2), rtol=1e-12)
    np.testing.assert_allclose(np.exp(b.neg_feature_log_prob), (N - F + 1) / (N + 2),
                               rtol=1e-12)
    c = fastgen.fit_categorical_nb(A, y, sample_weight=w, nan_policy="marginalize")
    ref = np.zeros_like(c.category_count)
    for i in range(150):
        for j in np.flatnonzero(~M[i]):
            ref[y[i], c.offsets[j] + int(X[i, j])] += w[i]
    np.testing.assert_allclose(c.category_count, ref, rtol=1e-12, atol=1e-12)
    # scores of the fitted models with NaN: the marginal of the observed features
    proba = fastgen.predict_proba(c, A, nan_policy="marginalize")
    np.testing.assert_allclose(proba[0], np.exp(c.class_log_prior), rtol=1e-12)


def test_binary_bernoulli_without_threshold():
    rng = np.random.default_rng(6)
    y = np.arange(80) % 2
    X = (rng.random((80, 4)) < 0.3 + 0.3 * y[:, None]).astype(float)
    M = _mask(80, 4, 0.2, 7)
    b = fastgen.fit_bernoulli_nb(_with_nan(X, M), y, binarize=None, nan_policy="marginalize")
    N = np.array([[((y == k) & ~M[:, j]).sum() for j in range(4)] for k in range(2)])
    F = np.array([[((y == k) & ~M[:, j] & (X[:, j] == 1)).sum() for j in range(4)]
                  for k in range(2)])
    np.testing.assert_allclose(np.exp(b.feature_log_prob), (F + 1) / (N + 2), rtol=1e-12)
    Xbad = _with_nan(X, M)
    Xbad[3, 1] = 0.5
    with pytest.raises(ValueError, match="binarize=None needs binary features"):
        fastgen.fit_bernoulli_nb(Xbad, y, binarize=None, nan_policy="marginalize")


# ------------------------------------------------------------------ EM


@pytest.mark.parametrize("kind", ["pooled", "per_class"])
@pytest.mark.parametrize("weighted", [False, True])
def test_em_matches_a_row_by_row_numpy_em(kind, weighted):
    X, y = make_blobs(150, 4, 3, seed=8)
    w = np.random.default_rng(9).random(150) + 0.2 if weighted else np.ones(150)
    Xm = _with_nan(X, _mask(150, 4, 0.25, 10))
    p = fastgen.fit_gda(Xm, y, kind, sample_weight=w if weighted else None,
                        nan_policy="marginalize", em_tol=0.0, em_max_iter=3000)
    mu, cov = ref_em(Xm, y, 3, w, kind == "pooled")
    np.testing.assert_allclose(p.means, mu, atol=1e-6)
    np.testing.assert_allclose(p.covariance, cov, atol=1e-6)
    assert p.converged and p.n_iter == p.log_likelihood_history.shape[0] - 1
    # the recorded log-likelihood is that of the returned parameters
    want = ref_loglik(Xm, y, w, p.priors, p.means, p.covariance, kind == "pooled")
    np.testing.assert_allclose(p.log_likelihood_history[-1], want, rtol=1e-10)


@pytest.mark.parametrize("kind", ["pooled", "per_class"])
@SETTINGS
@given(seed=st.integers(0, 10_000), rate=st.floats(0.05, 0.6))
def test_em_log_likelihood_never_decreases(kind, seed, rate):
    X, y = make_blobs(90, 3, 2, seed=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fastgen.ConvergenceWarning)
        p = fastgen.fit_gda(_with_nan(X, _mask(90, 3, rate, seed + 1)), y, kind,
                            nan_policy="marginalize", em_tol=1e-12, em_max_iter=60)
    h = p.log_likelihood_history
    assert h.shape[0] >= 2 and np.all(np.isfinite(h))
    assert np.all(np.diff(h) >= -1e-10 * np.abs(h[-1]))


@pytest.mark.parametrize("kind", ["pooled", "per_class"])
def test_em_follows_offsets_and_scales(kind):
    X, y = make_blobs(120, 3, 2, seed=11)
    M = _mask(120, 3, 0.3, 12)
    base = fastgen.fit_gda(_with_nan(X, M), y, kind, nan_policy="marginalize", em_tol=1e-13)
    for shift, scale in [(1e6, 1.0), (0.0, 1e-6), (-5e4, 1e3)]:
        p = fastgen.fit_gda(_with_nan(X * scale + shift, M), y, kind,
                            nan_policy="marginalize", em_tol=1e-13)
        np.testing.assert_allclose((p.means - shift) / scale, base.means, atol=1e-6)
        np.testing.assert_allclose(p.covariance / scale**2, base.covariance, rtol=1e-6,
                                   atol=1e-8)
        # the stopping rule does not depend on the units: the same iterations
        assert abs(p.n_iter - base.n_iter) <= 1
        np.testing.assert_allclose(np.diff(p.log_likelihood_history),
                                   np.diff(base.log_likelihood_history)[:p.n_iter],
                                   rtol=1e-4, atol=1e-9)


def test_reg_and_float_shrinkage_apply_once_to_the_converged_covariance():
    X, y = make_blobs(120, 4, 3, seed=13)
    Xm = _with_nan(X, _mask(120, 4, 0.2, 14))
    kw = dict(nan_policy="marginalize", em_tol=1e-12)
    for kind in ("pooled", "per_class"):
        plain = fastgen.fit_gda(Xm, y, kind, **kw)
        p = fastgen.fit_gda(Xm, y, kind, reg=0.1, shrinkage=0.2, **kw)
        S = plain.covariance.astype(float)
        d = S.shape[-1]
        shrunk = 0.8 * S + 0.2 * (np.trace(S, axis1=-2, axis2=-1)[..., None, None] / d) * np.eye(d)
        np.testing.assert_allclose(p.covariance, 0.9 * shrunk + 0.1 * np.eye(d), rtol=1e-12)
        np.testing.assert_array_equal(p.log_likelihood_history, plain.log_likelihood_history)


def test_em_record_and_convergence_warning():
    X, y = make_blobs(100, 3, 2, seed=15)
    Xm = _with_nan(X, _mask(100, 3, 0.3, 16))
    with pytest.warns(fastgen.ConvergenceWarning, match="did not converge"):
        p = fastgen.fit_gda(Xm, y, nan_policy="marginalize", em_max_iter=2)
    assert (p.n_iter, p.converged, p.log_likelihood_history.shape) == (2, False, (3,))
    q = fastgen.fit_gda(Xm, y, nan_policy="marginalize")
    assert q.converged and q.n_iter > 2
    assert fastgen.fit_gda(X, y).n_iter is None


# ------------------------------------------------------------------ no NaN: today's fits


def test_without_nan_every_fit_is_todays():
    X, y = make_blobs(100, 4, 3, seed=17)
    rng = np.random.default_rng(18)
    Xc = rng.poisson(1.5, size=(100, 4)).astype(float)
    fits = [(fastgen.fit_gda, X, {"covariance": k}) for k in
            ("pooled", "per_class", "diagonal", "pooled_diagonal")]
    fits += [(fastgen.fit_gaussian_nb, X, {}), (fastgen.fit_bernoulli_nb, Xc, {}),
             (fastgen.fit_multinomial_nb, Xc, {}), (fastgen.fit_complement_nb, Xc, {}),
             (fastgen.fit_categorical_nb, np.minimum(Xc, 3), {})]
    for fit, data, kw in fits:
        forms = [data] + ([sp.csr_matrix(data)] if fit not in (fastgen.fit_gda,
                                                              fastgen.fit_gaussian_nb) else [])
        for A in forms:
            assert fit(A, y, **kw) == fit(A, y, nan_policy="marginalize", **kw)


# ------------------------------------------------------------------ patterns and errors


def test_all_missing_rows_only_count_toward_the_priors():
    X, y = make_blobs(120, 3, 2, seed=19)
    M = _mask(120, 3, 0.2, 20)
    extra = np.full((30, 3), np.nan)
    Xm = np.vstack([_with_nan(X, M), extra])
    ye = np.concatenate([y, np.zeros(30, int)])
    for kind in ("pooled", "per_class", "diagonal"):
        with_rows = fastgen.fit_gda(Xm, ye, kind, nan_policy="marginalize", em_tol=1e-14)
        without = fastgen.fit_gda(_with_nan(X, M), y, kind, nan_policy="marginalize",
                                  em_tol=1e-14)
        np.testing.assert_allclose(with_rows.means, without.means, atol=1e-6)
        assert with_rows.n_per_class[0] == without.n_per_class[0] + 30


@pytest.mark.parametrize("fit,kw", [
    (fastgen.fit_gda, {"covariance": "pooled"}), (fastgen.fit_gda, {"covariance": "diagonal"}),
    (fastgen.fit_gaussian_nb, {}), (fastgen.fit_categorical_nb, {})])
def test_an_all_missing_column_is_a_clear_error(fit, kw):
    X, y = make_blobs(60, 3, 2, seed=21)
    X = np.abs(np.round(X))
    X[:, 1] = np.nan
    before = _digest(X)
    with pytest.raises(ValueError, match="no observed value in column 1"):
        fit(X, y, nan_policy="marginalize", **kw)
    assert _digest(X) == before


def test_a_class_without_a_feature_is_a_clear_error():
    X, y = make_blobs(60, 3, 2, seed=22)
    X[y == 1, 2] = np.nan
    with pytest.raises(ValueError, match="class 1 has no observed value of feature 2"):
        fastgen.fit_gda(X, y, "per_class", nan_policy="marginalize")


@pytest.mark.parametrize("shrinkage", ["ledoit-wolf", "oas"])
def test_estimated_shrinkage_refuses_nan(shrinkage):
    X, y = make_blobs(60, 3, 2, seed=23)
    Xm = _with_nan(X, _mask(60, 3, 0.2, 24))
    with pytest.raises(ValueError, match="fourth moments"):
        fastgen.fit_gda(Xm, y, shrinkage=shrinkage, nan_policy="marginalize")


def test_multinomial_and_complement_refuse_nan_and_leave_input_alone():
    rng = np.random.default_rng(25)
    y = np.arange(60) % 2
    Xc = _with_nan(rng.poisson(2.0, size=(60, 4)), _mask(60, 4, 0.2, 26))
    for A in (Xc, sp.csr_matrix(Xc)):
        before = _digest(A)
        with pytest.raises(ValueError, match="multinomial naive Bayes is not fitted"):
            fastgen.fit_multinomial_nb(A, y, nan_policy="marginalize")
        with pytest.raises(ValueError, match="complement naive Bayes cannot be fitted"):
            fastgen.fit_complement_nb(A, y, nan_policy="marginalize")
        assert _digest(A) == before


@pytest.mark.parametrize("kw,msg", [
    ({"nan_policy": "omit"}, "nan_policy must be"),
    ({"nan_policy": None}, "nan_policy must be"),
    ({"nan_policy": "marginalize", "em_tol": -1.0}, "em_tol"),
    ({"nan_policy": "marginalize", "em_max_iter": -1}, "em_max_iter"),
    ({"nan_policy": "marginalize", "em_max_iter": 2.5}, "em_max_iter"),
])
def test_bad_options(kw, msg):
    X, y = make_blobs(60, 3, 2, seed=27)
    Xm = _with_nan(X, _mask(60, 3, 0.2, 28))
    before = _digest(Xm)
    with pytest.raises(ValueError, match=msg):
        fastgen.fit_gda(Xm, y, **kw)
    assert _digest(Xm) == before


def test_infinity_is_still_an_error():
    X, y = make_blobs(60, 3, 2, seed=29)
    Xm = _with_nan(X, _mask(60, 3, 0.2, 30))
    Xm[5, 1] = -np.inf
    Xm[5, 0] = 1.0
    for fit in (fastgen.fit_gda, fastgen.fit_gaussian_nb):
        with pytest.raises(ValueError, match="infinity at row 5, column 1"):
            fit(Xm, y, nan_policy="marginalize")


def test_a_singular_em_iterate_is_a_clear_error():
    # class 1 has four rows for three features, most of them missing
    X, y = make_blobs(60, 3, 2, seed=31)
    X = np.vstack([X[y == 0], [[0.0, 1.0, np.nan], [1.0, np.nan, 2.0],
                               [np.nan, 3.0, 1.0], [1.0, 1.5, np.nan]]])
    y = np.concatenate([np.zeros((X.shape[0] - 4), int), np.ones(4, int)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fastgen.ConvergenceWarning)
        with pytest.raises(fastgen.SingularCovarianceError, match="class 1"):
            fastgen.fit_gda(X, y, "per_class", nan_policy="marginalize", em_max_iter=500)


def test_data_frames_and_float32():
    pd = pytest.importorskip("pandas")
    X, y = make_blobs(120, 3, 2, seed=32)
    Xm = _with_nan(X, _mask(120, 3, 0.2, 33))
    frame = pd.DataFrame(Xm, columns=["a", "b", "c"])
    for kind in ("pooled", "diagonal"):
        p = fastgen.fit_gda(frame, y, kind, nan_policy="marginalize")
        assert p.feature_names == ("a", "b", "c")
        plain = fastgen.fit_gda(Xm, y, kind, nan_policy="marginalize")
        np.testing.assert_array_equal(p.means, plain.means)
        np.testing.assert_array_equal(fastgen.predict(p, frame, nan_policy="marginalize"),
                                      fastgen.predict(plain, Xm, nan_policy="marginalize"))
        p32 = fastgen.fit_gda(Xm.astype(np.float32), y, kind, nan_policy="marginalize")
        assert p32.dtype == np.float32
        np.testing.assert_allclose(p32.means, p.means, rtol=1e-5)
    g = fastgen.fit_gaussian_nb(frame, y, nan_policy="marginalize")
    assert g.feature_names == ("a", "b", "c")


def test_unbiased_diagonal_variances_divide_the_observed_weights():
    X, y = make_blobs(150, 3, 3, seed=34)
    Xm = _with_nan(X, _mask(150, 3, 0.3, 35))
    N, mu, var = ref_available_case(Xm, y, 3, np.ones(150))
    S = var * N
    d = fastgen.fit_gda(Xm, y, "diagonal", unbiased=True, var_smoothing=0.0,
                        nan_policy="marginalize")
    np.testing.assert_allclose(d.covariance, S / (N - 1), rtol=1e-10)
    pd = fastgen.fit_gda(Xm, y, "pooled_diagonal", unbiased=True, var_smoothing=0.0,
                         nan_policy="marginalize")
    np.testing.assert_allclose(pd.covariance, S.sum(0) / (N.sum(0) - 3), rtol=1e-10)

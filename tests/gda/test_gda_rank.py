"""Constant and collinear features: the rank-revealing pooled model, the variance floor
of the diagonal models, and the per-class error that names a working ``reg``.

References: scikit-learn 1.9's ``LinearDiscriminantAnalysis()`` (svd solver, maximum-
likelihood scaling) and ``GaussianNB``, and a plain-numpy transcription of the reduced
model (the SVD of the standardised within-class data).
"""

import json
import re
import zipfile

import numpy as np
import pytest
import sklearn
from sklearn.datasets import load_breast_cancer, load_digits, load_wine
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.naive_bayes import GaussianNB

import fastgen
from fastgen import SingularCovarianceError

SKLEARN_VERSION = tuple(int(p) for p in sklearn.__version__.split(".")[:2])
RTOL = 1e-9  # float64 agreement on real data (condition numbers up to ~1e6)


def _augmented(X):
    """X with a duplicated first column and a constant column appended."""
    return np.column_stack([X, X[:, 0], np.full(X.shape[0], 3.0)])


@pytest.fixture(scope="module")
def digits():
    return load_digits(return_X_y=True)


def _reduced_reference(X, y, tol=1e-4):
    """The rank-r pooled model as plain numpy: P (r, d) and log_det.

    Within-class centred rows Z, s_j = their standard deviation (1 where 0); the SVD of
    Z·D⁻¹/√n gives singular values S_i and right vectors v_i; keep S_i > tol; then
    P = diag(1/S_r)·V_rᵀ·D⁻¹ and log_det = Σ log S_i² + 2·Σ_{s_j>0} log s_j.
    """
    classes = np.unique(y)
    Z = X.astype(np.float64).copy()
    for c in classes:
        Z[y == c] -= Z[y == c].mean(axis=0)
    s = Z.std(axis=0)
    nz = s > 0
    s[~nz] = 1.0
    _, S, Vt = np.linalg.svd(Z / s / np.sqrt(X.shape[0]), full_matrices=False)
    r = int(np.sum(S > tol))
    P = (Vt[:r] / S[:r, None]) / s[None, :]
    log_det = np.sum(np.log(S[:r] ** 2)) + 2.0 * np.sum(np.log(s[nz]))
    return P, log_det, r


def _reference_jll(X, y, Xt):
    P, log_det, r = _reduced_reference(X, y)
    classes, counts = np.unique(y, return_counts=True)
    priors = counts / counts.sum()
    out = np.empty((Xt.shape[0], classes.shape[0]))
    for k, c in enumerate(classes):
        u = (Xt - X[y == c].mean(axis=0)) @ P.T
        out[:, k] = np.log(priors[k]) - 0.5 * np.sum(u * u, axis=1) - 0.5 * (
            log_det + r * np.log(2 * np.pi))
    return out


def _rel(a, b):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300)


# --------------------------------------------------------------------------------------
# pooled model on rank-deficient data
# --------------------------------------------------------------------------------------
def test_sklearn_version():
    # scikit-learn 1.9 scales its svd solver by 1/n (the MLE), as fastgen does
    assert SKLEARN_VERSION >= (1, 9)


def test_digits_pooled_agrees_with_sklearn_svd(digits):
    X, y = digits
    p = fastgen.fit_gda(X, y)
    assert p.rank < X.shape[1]  # constant pixels
    _, _, r = _reduced_reference(X, y)
    assert p.rank == r
    sk = LinearDiscriminantAnalysis().fit(X, y)
    rng = np.random.default_rng(0)
    Xt = np.vstack([X, X[rng.integers(0, len(X), 200)] + rng.normal(size=(200, 64))])
    agree = np.mean(fastgen.predict(p, Xt) == sk.predict(Xt))
    assert agree >= 0.995
    # the same model: posteriors agree, not only the labels
    np.testing.assert_allclose(fastgen.predict_proba(p, X), sk.predict_proba(X),
                               rtol=0, atol=1e-9)


def test_digits_held_out_agreement(digits):
    X, y = digits
    tr = np.arange(len(y)) % 3 != 0
    p = fastgen.fit_gda(X[tr], y[tr])
    sk = LinearDiscriminantAnalysis().fit(X[tr], y[tr])
    assert np.mean(fastgen.predict(p, X[~tr]) == sk.predict(X[~tr])) >= 0.995


def test_reduced_jll_matches_numpy_reference(digits):
    X, y = digits
    p = fastgen.fit_gda(X, y)
    P, log_det, r = _reduced_reference(X, y)
    assert p.log_det.shape == (10,) and np.all(p.log_det == p.log_det[0])
    assert abs(p.log_det[0] - log_det) <= RTOL * abs(log_det)
    jll = fastgen.joint_log_likelihood(p, X)
    assert _rel(jll, _reference_jll(X, y, X)) <= RTOL
    np.testing.assert_allclose(np.exp(fastgen.predict_log_proba(p, X)),
                               fastgen.predict_proba(p, X), rtol=0, atol=1e-12)


@pytest.mark.parametrize("load", [load_wine, load_breast_cancer])
def test_duplicated_and_constant_columns(load):
    X, y = load(return_X_y=True)
    X2 = _augmented(X)
    p = fastgen.fit_gda(X2, y)
    p0 = fastgen.fit_gda(X, y)
    assert p0.rank == X.shape[1]
    assert p.rank == X.shape[1]  # one duplicated, one constant column dropped
    # the same model as on the clean data
    np.testing.assert_allclose(fastgen.predict_proba(p, X2), fastgen.predict_proba(p0, X),
                               rtol=0, atol=1e-9)
    np.testing.assert_array_equal(fastgen.predict(p, X2), fastgen.predict(p0, X))
    # and as scikit-learn's svd solver
    sk = LinearDiscriminantAnalysis().fit(X2, y)
    np.testing.assert_array_equal(fastgen.predict(p, X2), sk.predict(X2))
    np.testing.assert_allclose(fastgen.predict_proba(p, X2), sk.predict_proba(X2),
                               rtol=0, atol=1e-9)
    # scores: defined up to a constant shared by all classes
    diff = fastgen.joint_log_likelihood(p, X2) - fastgen.joint_log_likelihood(p0, X)
    assert np.max(np.abs(diff - diff[:, :1])) <= 1e-7 * np.max(np.abs(diff))
    # the factor reproduces Σ on the retained subspace: LLᵀ = Σ_r, lower triangular
    L = p.cholesky
    assert np.all(np.triu(L, 1) == 0)
    d = X.shape[1]
    assert _rel((L @ L.T)[:d, :d], p0.covariance) <= RTOL


@pytest.mark.parametrize("load", [load_wine, load_breast_cancer])
def test_linear_discriminant_and_transform_on_reduced_model(load):
    X, y = load(return_X_y=True)
    X2 = _augmented(X)
    p, p0 = fastgen.fit_gda(X2, y), fastgen.fit_gda(X, y)
    W, b = fastgen.linear_discriminant(p)
    assert W.shape == (X2.shape[1], p.n_classes)
    # plain-numpy reference: w_k = PᵀPμ_k, b_k = −½‖Pμ_k‖² + log p_k
    P, _, _ = _reduced_reference(X2, y)
    A = P @ p.means.T
    assert _rel(W, P.T @ A) <= RTOL
    assert _rel(b, -0.5 * np.sum(A * A, axis=0) + np.log(p.priors)) <= RTOL
    # the constant column gets no weight; the duplicated pair shares its weight
    assert np.all(W[-1] == 0) or np.max(np.abs(W[-1])) <= 1e-9 * np.max(np.abs(W))
    W0, _ = fastgen.linear_discriminant(p0)
    assert _rel(W[0] + W[-2], W0[0]) <= 1e-7
    T = fastgen.lda_transform(p, X2)
    sk = LinearDiscriminantAnalysis().fit(X2, y)
    np.testing.assert_allclose(np.abs(T), np.abs(sk.transform(X2)), rtol=0,
                               atol=1e-8 * np.max(np.abs(T)))


def test_reduced_model_float32(digits):
    X, y = digits
    p = fastgen.fit_gda(X.astype(np.float32), y)
    assert p.dtype == np.float32 and p.rank < 64
    sk = LinearDiscriminantAnalysis().fit(X, y)
    assert np.mean(fastgen.predict(p, X.astype(np.float32)) == sk.predict(X)) >= 0.995


def test_reduced_model_from_moments_equals_fit(digits):
    X, y = digits
    p = fastgen.fit_gda(X, y)
    half = len(y) // 2
    m = fastgen.merge_moments(fastgen.class_moments(X[:half], y[:half]),
                              fastgen.class_moments(X[half:], y[half:]))
    q = fastgen.gda_from_moments(m)
    assert q.rank == p.rank
    np.testing.assert_allclose(fastgen.predict_proba(q, X), fastgen.predict_proba(p, X),
                               rtol=0, atol=1e-9)


def test_rank_tolerance():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(400, 4))
    y = np.arange(400) % 3
    X = np.column_stack([X, X[:, 0] + 1e-6 * rng.normal(size=400)])  # near-collinear
    # within tol (singular value of the standardised data ~ 1e-6 < 1e-4): the rule
    # drops the direction, as scikit-learn's svd solver does, although Cholesky would
    # factor it (issue 42: the eigenvalues decide, not the pivots)
    assert fastgen.fit_gda(X, y).rank == 4
    assert fastgen.fit_gda(X, y, tol=1e-7).rank == 5
    Xs = np.column_stack([X[:, :4], X[:, 0]])  # exactly collinear
    assert fastgen.fit_gda(Xs, y).rank == 4
    assert fastgen.fit_gda(Xs, y, tol=0.0).rank in (4, 5)
    with pytest.raises(ValueError, match=r"tol must be"):
        fastgen.fit_gda(Xs, y, tol=-1.0)


def test_everything_constant_within_classes_raises():
    X = np.repeat(np.arange(3.0)[:, None], 4, axis=0) * np.ones((1, 2))
    y = np.repeat(np.arange(3), 4)
    with pytest.raises(SingularCovarianceError, match=r"every feature is constant within"):
        fastgen.fit_gda(X, y)


def test_reduced_model_save_load(tmp_path, digits):
    X, y = digits
    p = fastgen.fit_gda(X, y)
    fastgen.save_params(tmp_path / "m.npz", p)
    q = fastgen.load_params(tmp_path / "m.npz")
    assert q.rank == p.rank
    np.testing.assert_array_equal(fastgen.predict_proba(q, X), fastgen.predict_proba(p, X))


def test_file_without_rank_loads(tmp_path):
    """Files written before ``rank`` existed load as full-rank models."""
    X, y = load_wine(return_X_y=True)
    p = fastgen.fit_gda(X, y)
    path = tmp_path / "new.npz"
    fastgen.save_params(path, p)
    with np.load(path, allow_pickle=False) as f:
        arrays = {k: f[k] for k in f.files if k != "rank"}
    header = json.loads(str(arrays["__fastgen__"][()]))
    del header["fields"]["rank"]
    arrays["__fastgen__"] = np.asarray(json.dumps(header))
    old = tmp_path / "old.npz"
    np.savez(old, **arrays)
    with zipfile.ZipFile(old) as z:
        assert "rank.npy" not in z.namelist()
    q = fastgen.load_params(old)
    assert q.rank == X.shape[1]
    np.testing.assert_array_equal(fastgen.predict_proba(q, X), fastgen.predict_proba(p, X))


def test_rank_field_is_checked(digits):
    import dataclasses

    X, y = load_wine(return_X_y=True)
    p = fastgen.fit_gda(X, y, "per_class")
    with pytest.raises(ValueError, match=r"rank must be an integer"):
        dataclasses.replace(p, rank=3)
    with pytest.raises(ValueError, match=r"rank must be an integer"):
        dataclasses.replace(p, rank=0)


def test_sklearn_adapter_fits_digits(digits):
    from fastgen.sklearn import LinearDiscriminantAnalysis as FastLDA

    X, y = digits
    est = FastLDA().fit(X, y)
    sk = LinearDiscriminantAnalysis().fit(X, y)
    assert np.mean(est.predict(X) == sk.predict(X)) >= 0.995
    np.testing.assert_allclose(est.predict_proba(X), sk.predict_proba(X), rtol=0,
                               atol=1e-9)
    assert est.transform(X).shape == (len(y), 9)


# --------------------------------------------------------------------------------------
# diagonal models: the variance floor
# --------------------------------------------------------------------------------------
def test_diagonal_floor_is_gaussian_nb(digits):
    X, y = digits
    p = fastgen.fit_gda(X, y, "diagonal")
    sk = GaussianNB().fit(X, y)  # var_smoothing=1e-9
    nb = fastgen.fit_gaussian_nb(X, y)
    assert _rel(p.covariance, sk.var_) <= RTOL
    assert _rel(p.covariance, nb.variances) <= RTOL
    np.testing.assert_allclose(fastgen.predict_proba(p, X), sk.predict_proba(X), rtol=0,
                               atol=1e-9)
    assert np.mean(fastgen.predict(p, X) == sk.predict(X)) == 1.0


def test_pooled_diagonal_floor(digits):
    X, y = digits
    p = fastgen.fit_gda(X, y, "pooled_diagonal", var_smoothing=1e-6)
    classes = np.unique(y)
    within = sum(((X[y == c] - X[y == c].mean(0)) ** 2).sum(0) for c in classes) / len(y)
    eps = 1e-6 * X.var(axis=0).max()
    assert _rel(p.covariance, within + eps) <= RTOL
    assert np.all(np.isfinite(fastgen.joint_log_likelihood(p, X)))


@pytest.mark.parametrize("covariance", ["diagonal", "pooled_diagonal"])
def test_constant_column_shifts_every_class_equally(covariance):
    X, y = load_wine(return_X_y=True)
    X2 = np.column_stack([X, np.full(len(y), 7.0)])
    p, p2 = fastgen.fit_gda(X, y, covariance), fastgen.fit_gda(X2, y, covariance)
    rng = np.random.default_rng(1)
    Xt = X + rng.normal(size=X.shape) * X.std(0)
    Xt2 = np.column_stack([Xt, 7.0 + rng.normal(size=len(y))])  # off the constant value
    diff = fastgen.joint_log_likelihood(p2, Xt2) - fastgen.joint_log_likelihood(p, Xt)
    assert np.max(np.abs(diff - diff[:, :1])) <= 1e-9 * np.max(np.abs(diff))
    # a constant column leaves ε = var_smoothing · max_j Var(x_j), hence every other
    # variance, unchanged
    assert _rel(p2.covariance[..., :-1], p.covariance) <= 1e-12
    np.testing.assert_array_equal(fastgen.predict(p2, Xt2), fastgen.predict(p, Xt))


def test_column_constant_inside_one_class():
    X, y = load_wine(return_X_y=True)
    X = X.copy()
    X[y == 1, 3] = 20.0
    p = fastgen.fit_gda(X, y, "diagonal")
    sk = GaussianNB().fit(X, y)
    Xt = X[y == 1].copy()
    Xt[:, 3] = 20.5  # off the constant value: class 1 is unlikely, not impossible
    jll = fastgen.joint_log_likelihood(p, Xt)
    assert np.all(np.isfinite(jll))
    lp = fastgen.predict_log_proba(p, Xt)
    assert np.all(np.isfinite(lp))
    np.testing.assert_allclose(lp, sk.predict_log_proba(Xt), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("covariance", ["diagonal", "pooled_diagonal"])
def test_var_smoothing_zero_is_the_mle_and_its_error(covariance):
    X, y = load_wine(return_X_y=True)
    X2 = np.column_stack([X, np.full(len(y), 7.0)])
    with pytest.raises(SingularCovarianceError,
                       match=r"zero .*variance.*var_smoothing=0 adds nothing"):
        fastgen.fit_gda(X2, y, covariance, var_smoothing=0.0)
    p = fastgen.fit_gda(X, y, covariance, var_smoothing=0.0)
    classes = np.unique(y)
    if covariance == "diagonal":
        ref = np.stack([X[y == c].var(axis=0) for c in classes])
    else:
        ref = sum(((X[y == c] - X[y == c].mean(0)) ** 2).sum(0) for c in classes) / len(y)
    assert _rel(p.covariance, ref) <= 1e-12
    with pytest.raises(ValueError, match=r"var_smoothing must be"):
        fastgen.fit_gda(X, y, covariance, var_smoothing=-1.0)


def test_floor_shared_with_gaussian_nb_from_moments(digits):
    X, y = digits
    m = fastgen.class_moments(X, y, kind="diagonal")
    q = fastgen.gda_from_moments(m, "diagonal")
    nb = fastgen.fit_gaussian_nb(X, y)
    assert _rel(q.covariance, nb.variances) <= RTOL
    assert _rel(q.covariance - m.scatter / m.counts[:, None], nb.epsilon) <= 1e-6


# --------------------------------------------------------------------------------------
# per-class (QDA): the error names the class, the rank and a reg that works
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("defect", ["constant", "collinear"])
def test_per_class_error_names_class_rank_and_reg(defect):
    X, y = load_wine(return_X_y=True)
    X = X.copy()
    if defect == "constant":
        X[y == 2, 4] = 100.0
    else:
        X[y == 2, 4] = 2.0 * X[y == 2, 0]
    d = X.shape[1]
    with pytest.raises(SingularCovarianceError) as info:
        fastgen.fit_gda(X, y, "per_class")
    msg = str(info.value)
    assert "class 2" in msg
    assert f"rank {d - 1} of {d}" in msg
    found = re.search(r"reg=([0-9.e+-]+) makes the fit succeed", msg)
    assert found, msg
    reg = float(found.group(1))
    assert 0 < reg < 1
    p = fastgen.fit_gda(X, y, "per_class", reg=reg)  # the suggested value works
    assert np.all(np.isfinite(fastgen.joint_log_likelihood(p, X)))


def test_per_class_one_sample_suggests_reg():
    X, y = load_wine(return_X_y=True)
    y = y.copy()
    y[0] = 5  # a class with one sample
    with pytest.raises(SingularCovarianceError, match=r"class 5 .*rank 0 of 13") as info:
        fastgen.fit_gda(X, y, "per_class")
    reg = float(re.search(r"reg=([0-9.e+-]+) makes", str(info.value)).group(1))
    fastgen.fit_gda(X, y, "per_class", reg=reg)


# --------------------------------------------------------------------------------------
# the rank rule, not the rounding (issue 42): eigenvalues of the correlation matrix
# above tol² decide for every kind, on the full data and on every subset of rows
# --------------------------------------------------------------------------------------
TOL = 1e-4


def _radius_difference(noise=0.0):
    """Breast cancer with a difference column stored beside its two columns (mean
    radius − worst radius), exactly dependent unless ``noise`` (relative to the
    column's spread) is added."""
    X, y = load_breast_cancer(return_X_y=True)
    diff = X[:, 0] - X[:, 20]
    if noise:
        diff = diff + noise * diff.std() * np.random.default_rng(7).normal(size=len(y))
    return np.column_stack([X, diff]), y


def _subsets(n, count=30):
    rng = np.random.default_rng(0)
    return [np.arange(n)] + [np.sort(rng.permutation(n)[: int(0.7 * n)])
                             for _ in range(count)]


def _class_lambda_min(X, y):
    """The smallest eigenvalue of each class's correlation matrix (plain numpy)."""
    return np.array([np.linalg.eigvalsh(np.corrcoef(X[y == k].T))[0]
                     for k in np.unique(y)])


def test_exactly_dependent_columns_are_refused_on_every_subset():
    # the old check (Cholesky pivot² > d·ε) accepted 13 % of these 70 % subsets, with
    # a smallest eigenvalue of 1e-15: the posteriors were then rounding
    Z, y = _radius_difference()
    d = Z.shape[1]
    for idx in _subsets(len(y)):
        lam = _class_lambda_min(Z[idx], y[idx])
        assert np.all(lam < 1e-4 * TOL**2)  # a margin of 10⁴ below the threshold
        with pytest.raises(SingularCovarianceError, match=rf"rank {d - 1} of {d}"):
            fastgen.fit_gda(Z[idx], y[idx], "per_class", tol=TOL)
        assert fastgen.fit_gda(Z[idx], y[idx], "pooled", tol=TOL).rank == d - 1


def test_nearly_dependent_columns_fit_on_every_subset():
    # the same column with noise: every eigenvalue far above tol², every subset fits
    # at full rank, per class and pooled
    Z, y = _radius_difference(noise=1e-2)
    d = Z.shape[1]
    for idx in _subsets(len(y), count=10):
        assert np.all(_class_lambda_min(Z[idx], y[idx]) > 1e2 * TOL**2)
        p = fastgen.fit_gda(Z[idx], y[idx], "per_class", tol=TOL)
        assert np.all(np.isfinite(p.log_det))
        assert fastgen.fit_gda(Z[idx], y[idx], "pooled", tol=TOL).rank == d


@pytest.mark.parametrize("lam_scale", [1e-2, 1e2])
def test_per_class_decision_follows_tol(lam_scale):
    # λ_min between d·ε and tol²: refused (it factored before); above tol²: fitted
    rng = np.random.default_rng(5)
    n = 400
    A = rng.normal(size=(n, 3))
    y = np.arange(n) % 2
    # the third column's independent part has variance ≈ λ_min·2 in correlation units
    A[:, 2] = (A[:, 0] + A[:, 1]) / np.sqrt(2) + np.sqrt(lam_scale) * TOL * A[:, 2]
    lam = _class_lambda_min(A, y)
    if lam_scale < 1:
        assert np.all((lam > 3 * np.finfo(float).eps * 1e3) & (lam < 0.1 * TOL**2))
        with pytest.raises(SingularCovarianceError, match=r"rank 2 of 3.*tol²=1e-08"):
            fastgen.fit_gda(A, y, "per_class", tol=TOL)
    else:
        assert np.all(lam > 10 * TOL**2)
        fastgen.fit_gda(A, y, "per_class", tol=TOL)


@pytest.mark.parametrize("d", [2, 5, 30])
def test_the_fast_bounds_decide_as_the_eigenvalues(d):
    # the pivot and trace bounds only shortcut the rule: on correlation matrices whose
    # smallest eigenvalue sits anywhere from far below to far above the threshold,
    # the decision is that of numpy's eigenvalues
    from fastgen.gda.covariance import _smallest_eigenvalue_above

    rng = np.random.default_rng(d)
    thr = TOL**2
    for lam_min in np.geomspace(1e-3 * thr, 1e3 * thr, 25):
        Q, _ = np.linalg.qr(rng.normal(size=(d, d)))
        lam = np.concatenate([[lam_min], rng.uniform(0.5, 2.0, d - 1)])
        A = (Q * lam) @ Q.T
        s = np.sqrt(np.diag(A))
        C = A / s[:, None] / s[None, :]
        want = np.linalg.eigvalsh(C)[0] > thr
        assert _smallest_eigenvalue_above(C, np.linalg.cholesky(C), thr) == want

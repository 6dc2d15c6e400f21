"""Properties every fit must have, checked on small random problems with hypothesis.

Each test draws a seed and small shapes; the data are built from the seed with numpy, so
a failure is reproducible from the printed example.  Tolerances come from the float
epsilon and the number of rows summed (rounding only), never from magic numbers.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import fastgen

EPS = np.finfo(np.float64).eps
EPS32 = np.finfo(np.float32).eps

SETTINGS = settings()  # the profile's (tests/conftest.py): derandomized by default

seeds = st.integers(0, 2**32 - 1)
dims = st.integers(1, 4)
n_classes = st.integers(2, 3)

GDA_TYPES = ("pooled", "per_class", "diagonal", "pooled_diagonal")


def _data(seed, d, K, *, extra=6):
    """Gaussian classes with at least d + 3 rows each (every covariance is defined)."""
    rng = np.random.default_rng(seed)
    per = d + 3 + int(rng.integers(0, extra + 1))
    y = np.repeat(np.arange(K), per)
    rng.shuffle(y)
    centres = 2.0 * rng.standard_normal((K, d))
    X = centres[y] + rng.standard_normal((y.size, d)) * rng.uniform(0.5, 2.0, size=d)
    return X, y, rng


def _counts(seed, d, K):
    """Sparse non-negative counts (about half zeros), each class non-empty."""
    rng = np.random.default_rng(seed)
    n = K * (d + 4)
    y = np.arange(n) % K
    rng.shuffle(y)
    rate = rng.uniform(0.2, 2.0, size=(K, d + 1))
    C = rng.poisson(rate[y]).astype(np.float64)
    return C, y, rng


def _fits(X, y, C, **kw):
    """Every model fitted on (X, y) (dense Gaussian models) or (C, y) (count models)."""
    out = {f"gda-{t}": fastgen.fit_gda(X, y, t, **kw) for t in GDA_TYPES}
    out["gaussian-nb"] = fastgen.fit_gaussian_nb(X, y, **kw)
    out["multinomial"] = fastgen.fit_multinomial_nb(C, y, **kw)
    out["bernoulli"] = fastgen.fit_bernoulli_nb(C, y, **kw)
    out["complement"] = fastgen.fit_complement_nb(C, y, **kw)
    out["categorical"] = fastgen.fit_categorical_nb(C, y, **kw)
    out["logistic"] = fastgen.fit_logistic(X, y, l2=1.0, **kw)
    return out


def _score_data(name, X, C):
    return X if name.startswith(("gda", "gaussian", "logistic")) else C


def _fields(obj):
    """Float arrays and scalars of a result (params, moments, counts), by name."""
    out = {}
    for name in obj.__dataclass_fields__:
        v = getattr(obj, name)
        if hasattr(v, "__dataclass_fields__"):
            out.update({f"{name}.{k}": x for k, x in _fields(v).items()})
        elif name.endswith("_history") or name in ("n_iter", "n_hessp", "converged"):
            continue  # the path of the iteration, not the fitted model
        else:
            out[name] = v
    return out


def assert_same_fit(a, b, rtol, atol_scale=None, skip=()):
    """Fields equal up to rounding: |a − b| ≤ rtol·max|b| for each float array."""
    fa, fb = _fields(a), _fields(b)
    assert fa.keys() == fb.keys()
    for k, vb in fb.items():
        if k in skip:
            continue
        va = fa[k]
        if isinstance(vb, np.ndarray) and vb.dtype.kind == "f":
            scale = np.max(np.abs(vb[np.isfinite(vb)]), initial=1.0)
            np.testing.assert_allclose(va, vb, rtol=rtol, atol=rtol * scale, err_msg=k)
        elif isinstance(vb, np.ndarray):
            np.testing.assert_array_equal(va, vb, err_msg=k)
        elif isinstance(vb, float):
            assert va == pytest.approx(vb, rel=rtol, abs=1e-300), k
        else:
            assert va == vb, k


# --------------------------------------------------------------------------- invariances


@SETTINGS
@given(seed=seeds, d=dims, K=n_classes)
def test_row_permutation_invariance(seed, d, K):
    X, y, rng = _data(seed, d, K)
    C, yc, _ = _counts(seed, d, K)
    # the count models see C with the labels of X's rows: fit both on the same rows
    C = C[: y.size] if C.shape[0] >= y.size else np.resize(C, (y.size, C.shape[1]))
    perm = rng.permutation(y.size)
    a = _fits(X, y, C)
    b = _fits(X[perm], y[perm], C[perm])
    n = y.size
    for name in a:
        # sums over n rows in another order: a few n·ε relative; Newton's iterates too
        rtol = 1e-8 if name == "logistic" else 8 * n * EPS
        assert_same_fit(b[name], a[name], rtol)


@SETTINGS
@given(seed=seeds, d=dims, K=n_classes, shuffle=st.booleans())
def test_label_renaming_invariance(seed, d, K, shuffle):
    """Renaming classes (strings, in a sort order that may differ) permutes the columns
    of the posteriors and renames the predictions; nothing else changes."""
    X, y, rng = _data(seed, d, K)
    C = np.resize(_counts(seed, d, K)[0], (y.size, d + 1))
    names = np.array(["zebra", "apple", "mango"][:K])
    if shuffle:
        names = rng.permutation(names)
    order = np.argsort(names)  # new class j is old class order[j]
    a = _fits(X, y, C)
    b = _fits(X, names[y], C)
    for name in a:
        Z = _score_data(name, X, C)
        pa, pb = fastgen.predict_proba(a[name], Z), fastgen.predict_proba(b[name], Z)
        tol = 1e-7 if name == "logistic" else 64 * y.size * EPS
        np.testing.assert_allclose(pb, pa[:, order], rtol=0, atol=tol, err_msg=name)
        assert b[name].classes.tolist() == sorted(names.tolist())
        top = np.sort(pa, axis=1)
        clear = top[:, -1] - top[:, -2] > 1e3 * tol
        np.testing.assert_array_equal(fastgen.predict(b[name], Z)[clear],
                                      names[fastgen.predict(a[name], Z)][clear])


# ------------------------------------------------------------------------------ merging


def _chunks(rng, n, parts=3):
    cuts = np.sort(rng.choice(np.arange(1, n), size=parts - 1, replace=False))
    return np.split(rng.permutation(n), cuts)


@SETTINGS
@given(seed=seeds, d=dims, K=n_classes, kind=st.sampled_from(["pooled", "per_class",
                                                              "diagonal"]))
def test_merge_moments_associative_commutative(seed, d, K, kind):
    X, y, rng = _data(seed, d, K)
    w = rng.uniform(0.5, 2.0, size=y.size)
    a, b, c = (fastgen.class_moments(X[i], y[i], kind=kind, sample_weight=w[i])
               for i in _chunks(rng, y.size))
    merge = fastgen.merge_moments
    whole = fastgen.class_moments(X, y, kind=kind, sample_weight=w)
    rtol = 16 * y.size * EPS
    left, right = merge(merge(a, b), c), merge(a, merge(b, c))
    assert_same_fit(left, right, rtol)
    assert_same_fit(merge(a, b), merge(b, a), rtol)
    assert_same_fit(merge(c, merge(a, b)), whole, rtol)


@SETTINGS
@given(seed=seeds, d=dims, K=n_classes,
       model=st.sampled_from(["multinomial", "bernoulli", "complement", "gaussian"]),
       weighted=st.booleans())
def test_merge_counts_associative_commutative(seed, d, K, model, weighted):
    if model == "gaussian":
        Z, y, rng = _data(seed, d, K)
    else:
        Z, y, rng = _counts(seed, d, K)
    w = rng.integers(1, 4, size=y.size).astype(float) if weighted else None
    parts = _chunks(rng, y.size)
    a, b, c = (fastgen.nb_counts(Z[i], y[i], model,
                                 sample_weight=None if w is None else w[i]) for i in parts)
    merge = fastgen.merge_counts
    rtol = 16 * y.size * EPS
    assert_same_fit(merge(merge(a, b), c), merge(a, merge(b, c)), rtol)
    assert_same_fit(merge(a, b), merge(b, a), rtol)
    whole = fastgen.nb_counts(Z, y, model, sample_weight=w)
    assert_same_fit(merge(c, merge(a, b)), whole, rtol)
    assert_same_fit(fastgen.nb_from_counts(merge(merge(a, b), c)),
                    fastgen.nb_from_counts(whole), rtol)


# ---------------------------------------------------------------------- weights ≡ repeats


@SETTINGS
@given(seed=seeds, d=dims, K=n_classes)
def test_integer_weights_equal_repeated_rows(seed, d, K):
    X, y, rng = _data(seed, d, K)
    C = np.resize(_counts(seed, d, K)[0], (y.size, d + 1))
    w = rng.integers(0, 4, size=y.size)
    for k in range(K):  # keep d + 2 weighted rows per class: every covariance defined
        w[np.flatnonzero(y == k)[: d + 2]] = rng.integers(1, 4, size=d + 2)
    rep = np.repeat(np.arange(y.size), w)
    wf = w.astype(np.float64)
    # Gaussian NB's ε uses the *unweighted* variance of X (as scikit-learn's): compare
    # the model without ε
    a = {f"gda-{t}": fastgen.fit_gda(X, y, t, sample_weight=wf) for t in GDA_TYPES}
    b = {f"gda-{t}": fastgen.fit_gda(X[rep], y[rep], t) for t in GDA_TYPES}
    a["moments"] = fastgen.class_moments(X, y, kind="per_class", sample_weight=wf)
    b["moments"] = fastgen.class_moments(X[rep], y[rep], kind="per_class")
    a["gaussian-nb"] = fastgen.fit_gaussian_nb(X, y, var_smoothing=0.0, sample_weight=wf)
    b["gaussian-nb"] = fastgen.fit_gaussian_nb(X[rep], y[rep], var_smoothing=0.0)
    # categorical: a weight-0 row still shows its category exists (as in scikit-learn),
    # so fix the category ranges for both fits
    m = {"min_categories": C.max(axis=0).astype(np.int64) + 1}
    for name, fit, kw in [("multinomial", fastgen.fit_multinomial_nb, {}),
                          ("bernoulli", fastgen.fit_bernoulli_nb, {}),
                          ("complement", fastgen.fit_complement_nb, {}),
                          ("categorical", fastgen.fit_categorical_nb, m)]:
        a[name] = fit(C, y, sample_weight=wf, **kw)
        b[name] = fit(C[rep], y[rep], **kw)
    for model in ("multinomial", "bernoulli"):
        a[f"counts-{model}"] = fastgen.nb_counts(C, y, model, sample_weight=wf)
        b[f"counts-{model}"] = fastgen.nb_counts(C[rep], y[rep], model)
    a["logistic"] = fastgen.fit_logistic(X, y, l2=1.0, sample_weight=wf)
    b["logistic"] = fastgen.fit_logistic(X[rep], y[rep], l2=1.0)
    n = rep.size
    for name in a:
        rtol = 1e-8 if name == "logistic" else 16 * n * EPS
        assert_same_fit(a[name], b[name], rtol)


# ------------------------------------------------------------------- affine equivariance


@SETTINGS
@given(seed=seeds, d=st.integers(1, 4), K=n_classes, covariance=st.sampled_from(GDA_TYPES))
def test_gda_affine_equivariance(seed, d, K, covariance):
    """X → XA + c: μ → μA + c, Σ → AᵀΣA, posteriors unchanged.  Diagonal models are
    equivariant only under diagonal A (scaling and shifting each feature)."""
    X, y, rng = _data(seed, d, K)
    if covariance in ("pooled", "per_class"):
        Q, _ = np.linalg.qr(rng.standard_normal((d, d)))
        A = Q * rng.uniform(0.5, 2.0, size=d)  # singular values in [0.5, 2]
    else:
        A = np.diag(rng.uniform(0.5, 2.0, size=d) * rng.choice([-1, 1], size=d))
    c = rng.uniform(-10, 10, size=d)
    # var_smoothing=0: the floor ε = 1e-9·max_j Var(x_j) is not equivariant under A
    p = fastgen.fit_gda(X, y, covariance, var_smoothing=0)
    q = fastgen.fit_gda(X @ A + c, y, covariance, var_smoothing=0)
    scale = 1 + np.abs(c).max()
    tol = 1e3 * EPS * scale  # cond(A) ≤ 4; |c| ≤ 10 shifts the magnitudes
    np.testing.assert_allclose(q.means, p.means @ A + c, rtol=0, atol=tol * np.abs(
        p.means).max())
    S = p.covariance
    if covariance == "pooled":
        want = A.T @ S @ A
    elif covariance == "per_class":
        want = np.einsum("ji,kjl,lm->kim", A, S, A)
    else:  # diagonal A: variances scale by A_jj²
        want = S * np.diag(A) ** 2
    np.testing.assert_allclose(q.covariance, want, rtol=0, atol=tol * np.abs(want).max())
    np.testing.assert_allclose(q.priors, p.priors, rtol=4 * EPS)
    np.testing.assert_allclose(q.log_det, p.log_det + 2 * np.log(abs(np.linalg.det(A))),
                               rtol=0, atol=tol * (1 + np.abs(p.log_det).max()))
    Xt = rng.standard_normal((10, d)) * 3
    np.testing.assert_allclose(fastgen.predict_proba(q, Xt @ A + c),
                               fastgen.predict_proba(p, Xt), rtol=0, atol=1e2 * tol)


# ------------------------------------------------------------------------ CSR ≡ dense


@SETTINGS
@given(seed=seeds, d=dims, K=n_classes, int64=st.booleans())
def test_csr_equals_dense(seed, d, K, int64):
    C, y, rng = _counts(seed, d, K)
    S = sp.csr_matrix(C)
    if int64:
        S.indices, S.indptr = S.indices.astype(np.int64), S.indptr.astype(np.int64)
    Ct = np.minimum(rng.poisson(1.0, size=(7, C.shape[1])), C.max(axis=0))  # known categories
    fits = {"multinomial": fastgen.fit_multinomial_nb,
            "bernoulli": fastgen.fit_bernoulli_nb,
            "complement": fastgen.fit_complement_nb,
            "categorical": fastgen.fit_categorical_nb,
            "logistic": lambda A, b: fastgen.fit_logistic(A, b, l2=1.0)}
    for name, fit in fits.items():
        pd, ps = fit(C, y), fit(S, y)
        rtol = 1e-8 if name == "logistic" else 16 * y.size * EPS
        assert_same_fit(ps, pd, rtol)
        for score in (fastgen.joint_log_likelihood, fastgen.predict_log_proba,
                      fastgen.predict_proba):
            np.testing.assert_allclose(score(pd, sp.csr_matrix(Ct)), score(pd, Ct),
                                       rtol=64 * EPS, atol=64 * EPS, err_msg=name)
        top = np.sort(fastgen.predict_proba(pd, Ct), axis=1)
        clear = top[:, -1] - top[:, -2] > 1e-9  # exact ties may break either way
        np.testing.assert_array_equal(fastgen.predict(pd, sp.csr_matrix(Ct))[clear],
                                      fastgen.predict(pd, Ct)[clear], err_msg=name)


# ------------------------------------------------------------------- float32 vs float64


@SETTINGS
@given(seed=seeds, d=dims, K=n_classes)
def test_float32_close_to_float64(seed, d, K):
    """float32 data gives float32 params within √ε(float32) (relative) of float64
    (logistic regression: float64 coefficients and scores, see test_float32_logistic)."""
    X, y, rng = _data(seed, d, K)
    C = np.resize(_counts(seed, d, K)[0], (y.size, d + 1))
    X32 = X.astype(np.float32)
    a = _fits(X32.astype(np.float64), y, C)
    b = _fits(X32, y, C.astype(np.float32))
    tol = 8 * float(np.sqrt(EPS32))
    for name in a:
        for k, v in _fields(b[name]).items():
            if isinstance(v, np.ndarray) and v.dtype.kind == "f" and v.ndim >= 1 and \
                    k in ("means", "covariance", "cholesky", "coef", "intercept",
                          "feature_log_prob", "variances"):
                want = np.float64 if name == "logistic" else np.float32
                assert v.dtype == want, (name, k)
        assert_same_fit(b[name], a[name], tol)
        Z = _score_data(name, X, C)
        p32 = fastgen.predict_proba(b[name], Z.astype(np.float32))
        assert p32.dtype == (np.float64 if name == "logistic" else np.float32)
        np.testing.assert_allclose(p32, fastgen.predict_proba(a[name], Z), rtol=0,
                                   atol=tol, err_msg=name)

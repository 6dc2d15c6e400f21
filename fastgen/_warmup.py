"""The warm-up calls of :func:`fastgen.compile`: per family, its public functions on
tiny synthetic data shaped to take every kernel path real calls take (small and wide X,
two and several classes, with and without weights, dense and CSR with int32 and int64
indices, every scoring function, missing features and unlabelled rows).  Each runs in a
worker process that sends every call to the kernels whatever its size
(:func:`fastgen._compile.run_family`)."""

from __future__ import annotations

__all__ = ["WARM", "NEEDS", "scans"]

_SCORES = ("joint_log_likelihood", "predict_log_proba", "predict_proba", "predict")


def _rng(seed):
    import numpy as np

    return np.random.default_rng(seed)


def _dense(n, d, K, dtype, seed=0):
    """Gaussian classes: X (n, d) of ``dtype``, int64 labels 0..K-1."""
    import numpy as np

    rng = _rng(seed)
    y = np.arange(n) % K
    X = rng.standard_normal((n, d)) + 0.7 * y[:, None] * (np.arange(d) % 3 == 0)
    return X.astype(dtype), y.astype(np.int64)


def _counts(n, d, K, dtype, seed=0):
    """Non-negative integer counts, dense (n, d) of ``dtype``, and int64 labels."""
    import numpy as np

    rng = _rng(seed)
    y = np.arange(n) % K
    X = rng.poisson(0.6 + 0.4 * ((np.arange(d)[None, :] + y[:, None]) % 3), size=(n, d))
    return X.astype(dtype), y.astype(np.int64)


def _csr_variants(X):
    """X as CSR with int32 and with int64 index arrays."""
    import numpy as np
    import scipy.sparse as sp

    a = sp.csr_matrix(X)
    b = a.copy()
    b.indices = b.indices.astype(np.int64)
    b.indptr = b.indptr.astype(np.int64)
    a.indices = a.indices.astype(np.int32)
    a.indptr = a.indptr.astype(np.int32)
    return a, b


def _labels(y):
    """The label encodings real data brings: int64, int32, bool (for two classes)."""
    import numpy as np

    out = [y, y.astype(np.int32)]
    if y.max() == 1:
        out.append(y.astype(bool))
    return out


def _weights(n, seed=1):
    return _rng(seed).uniform(0.5, 2.0, size=n)


def _score_all(fg, params, X):
    for name in _SCORES:
        getattr(fg, name)(params, X)


def _with_holes(X, seed=3):
    """X (dense) with a fifth of its entries NaN, the first row entirely."""
    import numpy as np

    A = np.array(X, dtype=X.dtype)
    hole = _rng(seed).random(A.shape) < 0.2
    hole[0] = True
    A[hole] = np.nan
    return A


def _score_missing(fg, params, X):
    """Every score with ``nan_policy="marginalize"`` on X with holes (dense; CSR too
    where the model takes it)."""
    import scipy.sparse as sp

    A = _with_holes(X.toarray() if sp.issparse(X) else X)
    for form in ((A, sp.csr_matrix(A)) if params.accepts_sparse else (A,)):
        for name in _SCORES:
            getattr(fg, name)(params, form, nan_policy="marginalize")


def _incomplete(fg, fit, X, y, **options):
    """The fits of incomplete data: missing features, unlabelled rows, both (the
    unlabelled rows are the second half of X)."""
    h = X.shape[0] // 2
    A = _with_holes(X)
    fit(A, y, nan_policy="marginalize", **options)
    fit(X[:h], y[:h], unlabeled=X[h:], **options)
    fit(A[:h], y[:h], unlabeled=A[h:], nan_policy="marginalize", **options)


def _gda(fg, dtype):
    for n, d, K in ((40, 3, 2), (60, 5, 3), (400, 40, 5), (900, 80, 4)):
        X, y = _dense(n, d, K, dtype)
        w = _weights(n)
        for cov in ("pooled", "per_class", "diagonal", "pooled_diagonal"):
            for yy in _labels(y):
                p = fg.fit_gda(X, yy, cov)
            _score_all(fg, p, X)
            fg.fit_gda(X, y, cov, sample_weight=w)
            fg.fit_gda(X, y, cov, reg=0.1, unbiased=True)
            shrinkages = (0.2, "ledoit-wolf", "oas") if cov in ("pooled", "per_class") else ()
            for s in shrinkages:
                fg.fit_gda(X, y, cov, shrinkage=s, sample_weight=w)
                fg.fit_gda(X, y, cov, shrinkage=s)
            _score_missing(fg, p, X)
        p = fg.fit_gda(X, y, "pooled")
        fg.linear_discriminant(p)
        fg.lda_transform(p, X)
        for kind in ("pooled", "per_class", "diagonal"):
            h = n // 2
            a = fg.class_moments(X[:h], y[:h], kind=kind)
            b = fg.class_moments(X[h:], y[h:], kind=kind, sample_weight=w[h:])
            fg.gda_from_moments(fg.merge_moments(a, b), kind)
    X, y = _dense(600, 6, 3, dtype)  # enough labelled rows per class for every kind
    for cov in ("pooled", "per_class", "diagonal", "pooled_diagonal"):
        _incomplete(fg, lambda *a, cov=cov, **k: fg.fit_gda(*a, cov, **k), X, y)


def _gaussian_nb(fg, dtype):
    for n, d, K in ((40, 3, 2), (60, 5, 3), (300, 20, 5), (600, 80, 8)):
        X, y = _dense(n, d, K, dtype)
        w = _weights(n)
        for yy in _labels(y):
            p = fg.fit_gaussian_nb(X, yy)
        _score_all(fg, p, X)
        _score_all(fg, fg.fit_gaussian_nb(X, y, sample_weight=w), X)
        _score_missing(fg, p, X)
        _incomplete(fg, fg.fit_gaussian_nb, X, y)
        h = n // 2
        a = fg.nb_counts(X[:h], y[:h], "gaussian")
        b = fg.nb_counts(X[h:], y[h:], "gaussian", sample_weight=w[h:])
        fg.nb_from_counts(fg.merge_counts(a, b))


def _discrete_nb(model):
    def warm(fg, dtype):
        fit = getattr(fg, f"fit_{model}_nb")
        for n, d, K in ((40, 6, 2), (60, 30, 3), (300, 200, 6)):
            X, y = _counts(n, d, K, dtype)
            w = _weights(n)
            for Xv in (X, *_csr_variants(X)):
                for yy in _labels(y):
                    p = fit(Xv, yy)
                _score_all(fg, p, Xv)
                _score_all(fg, fit(Xv, y, sample_weight=w), Xv)
                if model == "bernoulli":
                    fit(Xv, y, binarize=0.5)
                    B = Xv.copy()
                    B[B.nonzero()] = 1  # already binary
                    _score_all(fg, fit(B, y, binarize=None), B)
                if model == "complement":
                    _score_all(fg, fit(Xv, y, norm=True), Xv)
                if model != "complement":
                    _score_missing(fg, p, Xv)
                    h = n // 2
                    fit(Xv[:h], y[:h], unlabeled=Xv[h:])
                    if model == "bernoulli":
                        _incomplete(fg, fit, Xv.toarray() if hasattr(Xv, "toarray") else Xv,
                                    y)
                    a = fg.nb_counts(Xv[:h], y[:h], model)
                    b = fg.nb_counts(Xv[h:], y[h:], model, sample_weight=w[h:])
                    fg.nb_from_counts(fg.merge_counts(a, b))
    return warm


def _categorical_nb(fg, dtype):
    import numpy as np

    for n, d, K, m in ((40, 3, 2, 3), (300, 12, 5, 9)):
        rng = _rng(2)
        y = (np.arange(n) % K).astype(np.int64)
        X = ((rng.integers(0, m, size=(n, d)) + y[:, None]) % m).astype(dtype)
        w = _weights(n)
        for Xv in (X, *_csr_variants(X)):
            for yy in _labels(y):
                p = fg.fit_categorical_nb(Xv, yy)
            _score_all(fg, p, Xv)
            _score_all(fg, fg.fit_categorical_nb(Xv, y, sample_weight=w), Xv)
            _score_missing(fg, p, Xv)
            fg.fit_categorical_nb(Xv[: n // 2], y[: n // 2], unlabeled=Xv[n // 2:])
        _incomplete(fg, fg.fit_categorical_nb, X, y)


def _overlapping(n, d, K, dtype, seed=0):
    """Classes that a logistic model cannot separate: labels drawn from a softmax of
    weak linear scores."""
    import numpy as np

    rng = _rng(seed)
    X = rng.standard_normal((n, d))
    scores = 0.5 * X[:, :K] if d >= K else np.zeros((n, K))
    y = np.argmax(scores + rng.gumbel(size=(n, K)), axis=1)
    y[:K] = np.arange(K)  # every class present
    return X.astype(dtype), y.astype(np.int64)


def _logistic(fg, dtype):
    import numpy as np

    scored = []  # dense scoring last: its kernels are GDA's, which another worker
    # compiles at the start of its warm-up (then they load from the cache here)
    for n, d, K in ((60, 3, 2), (80, 4, 3), (400, 40, 2), (800, 70, 4)):
        X, y = _overlapping(n, d, K, dtype)
        w = _weights(n)
        for yy in _labels(y):
            p = fg.fit_logistic(X, yy)
        scored.append((p, X))
        fg.fit_logistic(X, y, l2=1.0, sample_weight=w)
        fg.fit_logistic(X, y, fit_intercept=False, l2=0.5)
        fg.irls_step(p, X, y)
        groups = np.arange(n) % 7
        for cov in ("nonrobust", "HC0", "HC1"):
            fg.logistic_inference(p, X, y, cov_type=cov)
        fg.logistic_inference(p, X, y, cov_type="cluster", groups=groups)
        fg.logistic_inference(p, X, y, sample_weight=w)
        if d <= 4 and K == 2:
            fg.logistic_inference(p, X, y, ci="profile")
        for Xs in _csr_variants(X):
            ps = fg.fit_logistic(Xs, y, l2=0.5)
            _score_all(fg, ps, Xs)
            fg.fit_logistic(Xs, y, l2=0.5, sample_weight=w)
            fg.logistic_inference(fg.fit_logistic(Xs, y), Xs, y)
            fg.logistic_inference(fg.fit_logistic(Xs, y), Xs, y, cov_type="cluster",
                                  groups=groups)
    # wide sparse problems: conjugate gradients (binary) and Newton-CG (multinomial)
    for K in (2, 3):
        Xc, y = _counts(150, 2100, K, dtype)
        for Xs in _csr_variants(Xc):
            ps = fg.fit_logistic(Xs, y, l2=1.0, max_iter=3)
            _score_all(fg, ps, Xs)
    fg.detect_separation(*_dense(40, 3, 2, dtype))
    for p, X in scored:
        _score_all(fg, p, X)


def _firth(fg, dtype):
    import numpy as np

    for n, d in ((40, 2), (120, 6)):
        X, y = _overlapping(n, d, 2, dtype)
        w = _weights(n)
        p = fg.fit_logistic(X, y, penalty="firth")
        fg.fit_logistic(X, y.astype(bool), penalty="firth", sample_weight=w)
        _score_all(fg, p, X)
        fg.logistic_inference(p, X, y)
        fg.logistic_inference(p, X, y, ci="profile")
        for Xs in _csr_variants(X):
            fg.logistic_inference(fg.fit_logistic(Xs, y, penalty="firth"), Xs, y)
        # separated classes: the Newton matrix becomes l*'s own Hessian (the curvature
        # pass and its packed products)
        ys = (X[:, 0] > 0).astype(np.int64)
        fg.logistic_inference(fg.fit_logistic(X, ys, penalty="firth"), X, ys)
        yk = (np.arange(n) % 3).astype(np.int64)
        fg.logistic_inference(fg.fit_logistic(X, yk, penalty="firth"), X, yk)


def scans(dtype):
    """The validation scans every family's large inputs take (the block-wise search for
    NaN and infinity), whose size thresholds no warm-up data reach."""
    import numpy as np

    from ._validation.arrays import first_nonfinite_flat
    from .kernels import labels

    first_nonfinite_flat(np.zeros(2 * labels.NONFINITE_SCAN_BLOCK, dtype=dtype))


WARM = {
    "gda": _gda,
    "gaussian_nb": _gaussian_nb,
    "bernoulli_nb": _discrete_nb("bernoulli"),
    "multinomial_nb": _discrete_nb("multinomial"),
    "complement_nb": _discrete_nb("complement"),
    "categorical_nb": _categorical_nb,
    "logistic": _logistic,
    "firth": _firth,
}

#: The families whose warm-up a family's calls also need: Firth's fits start from, and
#: its inference runs, the logistic passes, which its own warm-up leaves to logistic's.
NEEDS = {"firth": ("logistic",)}

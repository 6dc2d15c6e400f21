"""Every public function of every family on small data, float64 and float32, dense and
CSR: run as a script by the tests (tests/test_small_path.py: nothing compiles on small
inputs; tests/test_compile_all.py: nothing is left to compile after ``fastgen
compile``).  Prints the JSON list of the fastgen kernels numba compiled (from the dispatchers' cache
statistics)."""

import json
import sys
import warnings

import numpy as np
import scipy.sparse as sp

import fastgen as fg

SCORES = (fg.joint_log_likelihood, fg.predict_log_proba, fg.predict_proba, fg.predict)


def score(p, X):
    for f in SCORES:
        f(p, X)


def compiled():
    """The fastgen kernels numba compiled in this process: the dispatchers whose cache
    missed a signature (a cache hit, or a kernel never called, counts nothing)."""
    import importlib
    import pkgutil

    import fastgen.kernels

    out = []
    for info in pkgutil.iter_modules(fastgen.kernels.__path__):
        mod = importlib.import_module(f"fastgen.kernels.{info.name}")
        for name, obj in vars(mod).items():
            stats = getattr(obj, "stats", None)
            if getattr(stats, "cache_misses", None):
                out.append(f"{mod.__name__}.{name}")
    return sorted(set(out))


def run_all():
    """Every public function on small data."""
    warnings.simplefilter("ignore")
    rng = np.random.default_rng(0)
    n, d = 500, 5
    y3 = np.arange(n) % 3
    y2 = np.zeros(n, dtype=np.int64)
    w = np.linspace(0.5, 2.0, n)
    for dtype in (np.float64, np.float32):
        X = (rng.standard_normal((n, d)) + y3[:, None]).astype(dtype)
        y2 = (X[:, 0] + rng.standard_normal(n) > 1.0).astype(np.int64)
        C = sp.random(n, 50, density=0.1, format="csr", random_state=0, dtype=dtype)
        C.data = np.floor(C.data * 5.0) + 1.0
        C64 = C.copy()
        C64.indices, C64.indptr = C.indices.astype(np.int64), C.indptr.astype(np.int64)
        Q = rng.integers(0, 4, size=(n, 8)).astype(dtype)
        for cov in ("pooled", "per_class", "diagonal", "pooled_diagonal"):
            score(fg.fit_gda(X, y3, cov, sample_weight=w), X)
        for s in (0.2, "ledoit-wolf", "oas"):
            score(fg.fit_gda(X, y3, shrinkage=s), X)
        p = fg.fit_gda(X, y3)
        fg.linear_discriminant(p)
        fg.lda_transform(p, X)
        for kind in ("pooled", "per_class", "diagonal"):
            m = fg.merge_moments(fg.class_moments(X, y3, kind=kind),
                                 fg.class_moments(X[:9], y3[:9], kind=kind, sample_weight=w[:9]))
            fg.gda_from_moments(m, "pooled" if kind == "pooled" else kind)
        score(fg.fit_gaussian_nb(X, y3, sample_weight=w), X)
        for fit, model in ((fg.fit_bernoulli_nb, "bernoulli"), (fg.fit_multinomial_nb,
                                                              "multinomial"),
                           (fg.fit_complement_nb, "complement")):
            for data in (C, C64, C.toarray()):
                score(fit(data, y3), data)
                score(fit(data, y3, sample_weight=w), data)
                if model != "complement":
                    fg.nb_from_counts(fg.merge_counts(fg.nb_counts(data, y3, model),
                                                      fg.nb_counts(data[:9], y3[:9], model)))
        for data in (Q, sp.csr_matrix(Q)):
            score(fg.fit_categorical_nb(data, y3, sample_weight=w), data)
        for yy in (y2, y3):
            for data in (X, C, C64):
                p = fg.fit_logistic(data, yy)
                score(p, data)
                score(fg.fit_logistic(data, yy, l2=0.5, sample_weight=w), data)
                for cov in ("nonrobust", "HC0", "HC1"):
                    fg.logistic_inference(p, data, yy, cov_type=cov)
                fg.logistic_inference(p, data, yy, cov_type="cluster", groups=np.arange(n) % 7)
            fg.irls_step(fg.fit_logistic(X, yy), X, yy)
            p = fg.fit_logistic(X, yy, penalty="firth")
            fg.logistic_inference(p, X, yy, ci="profile" if yy is y2 else "wald")
            fg.logistic_inference(fg.fit_logistic(C, yy, penalty="firth"), C, yy)
        fg.detect_separation(X, y2)
        incomplete_data(X, C, Q, y3, dtype)


def holes(A, seed=5):
    A = np.array(A, dtype=A.dtype)
    hole = np.random.default_rng(seed).random(A.shape) < 0.2
    hole[0] = True
    A[hole] = np.nan
    return A


def incomplete_data(X, C, Q, y, dtype):
    """Missing features (fits and marginal scores), unlabelled rows, and both."""
    h = X.shape[0] // 2
    Cd = C.toarray()
    B = (Cd > 1).astype(dtype)
    fits = [(lambda *a, cov=cov, **k: fg.fit_gda(*a, cov, **k), X)
            for cov in ("pooled", "per_class", "diagonal", "pooled_diagonal")]
    fits += [(fg.fit_gaussian_nb, X), (fg.fit_bernoulli_nb, B), (fg.fit_categorical_nb, Q)]
    for fit, data in fits:
        A = holes(data)
        p = fit(A, y, nan_policy="marginalize")
        for form in ((A, sp.csr_matrix(A)) if p.accepts_sparse else (A,)):
            for f in SCORES:
                f(p, form, nan_policy="marginalize")
        fit(data[:h], y[:h], unlabeled=data[h:])
        fit(A[:h], y[:h], unlabeled=A[h:], nan_policy="marginalize")
    p = fg.fit_multinomial_nb(C[:h], y[:h], unlabeled=C[h:])
    for f in SCORES:
        f(p, holes(Cd), nan_policy="marginalize")
    fg.fit_complement_nb(C, y)


if sys.argv[1:] == ["--probe"]:  # that compiled() sees a compilation: one small kernel
    from fastgen.kernels.labels import first_nonfinite

    first_nonfinite(np.zeros(3))
else:
    run_all()
print(json.dumps(compiled()))

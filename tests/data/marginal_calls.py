"""Scoring with ``nan_policy="marginalize"`` on small data with NaN, every family that
takes it, float64 and float32, dense and CSR: run as a script by
tests/test_missing_paths.py in a fresh process with an empty numba cache.  Prints the
JSON list of the fastgen kernels numba compiled (numba's ``"numba:compile"`` event,
which fires only when numba compiles, never for a cache hit)."""

import json

import numpy as np
import scipy.sparse as sp
from numba.core import event

import fastgen as fg

compiled = []


class Recorder(event.Listener):
    def on_start(self, ev):
        f = ev.data["dispatcher"].py_func
        if f.__module__.startswith("fastgen"):
            compiled.append(f"{f.__module__}.{f.__qualname__}")

    def on_end(self, ev):
        pass


event.register("numba:compile", Recorder())
SCORES = (fg.joint_log_likelihood, fg.predict_log_proba, fg.predict_proba, fg.predict)
rng = np.random.default_rng(0)
n, d = 300, 5
y = np.arange(n) % 3
for dtype in (np.float64, np.float32):
    X = (rng.standard_normal((n, d)) + y[:, None]).astype(dtype)
    C = np.floor(np.exp(X.astype(np.float64))).astype(dtype)
    Q = np.minimum(C, 3)
    M = rng.random((n, d)) < 0.2
    M[0] = True
    fits = [(fg.fit_gda(X, y, cov), X) for cov in
            ("pooled", "per_class", "diagonal", "pooled_diagonal")]
    fits += [(fg.fit_gaussian_nb(X, y), X), (fg.fit_bernoulli_nb(C, y, binarize=1.5), C),
             (fg.fit_multinomial_nb(C, y), C), (fg.fit_categorical_nb(Q, y), Q)]
    for p, data in fits:
        A = np.where(M, np.nan, data).astype(dtype)
        forms = [A, sp.csr_matrix(A)] if p.accepts_sparse else [A]
        for form in forms:
            for f in SCORES:
                f(p, form, nan_policy="marginalize")
print(json.dumps(sorted(set(compiled))))

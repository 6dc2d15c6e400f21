"""asv benchmarks for logistic regression (W8 binary, W9 multinomial, CSR binary).

Data are built once in ``setup_cache``; ``setup`` runs a small fit first so JIT
compilation (or loading from the cache) is never timed.  First-call latency in a fresh
process is measured by ``track_first_fit_fresh_process``.
"""

import subprocess
import sys

import numpy as np

try:
    from .compare_logistic import binary_data, csr_data, multinomial_data
except ImportError:  # run as a plain module
    from compare_logistic import binary_data, csr_data, multinomial_data

import fastgen


def _warm():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4))
    fastgen.fit_logistic(X, (X[:, 0] > 0).astype(int), l2=1.0)
    fastgen.fit_logistic(X, np.arange(300) % 3, l2=1.0)


class BinaryDense:
    """W8: binary IRLS, n = 200 000, d = 64 and 256."""

    params = [64, 256]
    param_names = ["d"]
    timeout = 300

    def setup_cache(self):
        return {d: binary_data(200_000, d) for d in self.params}

    def setup(self, data, d):
        _warm()
        self.X, self.y = data[d]
        self.w = np.full(self.X.shape[0], 0.2)

    def time_fit(self, data, d):
        fastgen.fit_logistic(self.X, self.y, l2=1.0)

    def time_fit_unpenalised(self, data, d):
        fastgen.fit_logistic(self.X, self.y)

    def time_weighted_gram_floor(self, data, d):
        self.X.T @ (self.w[:, None] * self.X)

    def peakmem_fit(self, data, d):
        fastgen.fit_logistic(self.X, self.y, l2=1.0)

    def track_n_iter(self, data, d):
        return fastgen.fit_logistic(self.X, self.y, l2=1.0).n_iter


class _Fit:
    """Shared by the unparametrised classes: ``setup_cache`` returns (X, y); ``setup``
    warms the kernels up; ``time_fit`` fits with the class's ``fit_kw``."""

    timeout = 300
    fit_kw = {"l2": 1.0}

    def setup(self, data):
        _warm()
        self.X, self.y = data

    def time_fit(self, data):
        fastgen.fit_logistic(self.X, self.y, **self.fit_kw)


class MultinomialDense(_Fit):
    """W9: multinomial Newton-CG, n = 200 000, d = 64, K = 10."""

    def setup_cache(self):
        return multinomial_data(200_000, 64, 10)

    def track_hessian_vector_products(self, data):
        return fastgen.fit_logistic(self.X, self.y, **self.fit_kw).n_hessp


class BinaryCSR(_Fit):
    """Binary fit on a text-like CSR matrix (n = 200 000, d = 100 000, 100 values/row)."""

    fit_kw = {"l2": 1.0, "tol": 1e-6}

    def setup_cache(self):
        return csr_data(200_000, 100_000, 100)


def track_first_fit_fresh_process():
    """Seconds for import + cache load + a binary and a multinomial fit, fresh process."""
    code = ("import time;t=time.perf_counter();import numpy as np, fastgen;"
            "X=np.random.default_rng(0).normal(size=(500,4));"
            "fastgen.fit_logistic(X,(X[:,0]>0).astype(int),l2=1.0);"
            "fastgen.fit_logistic(X,np.arange(500)%3,l2=1.0);print(time.perf_counter()-t)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    return float(out.stdout.strip().splitlines()[-1])


track_first_fit_fresh_process.unit = "seconds"

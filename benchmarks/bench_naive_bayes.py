"""asv benchmarks for naive Bayes (workloads W5, W6, W7 of the design card, at a
fifth of the rows so that ``asv run --quick`` stays short).

``setup_cache`` builds the data once per class; ``setup`` fits once and scores once
so that JIT compilation (or loading from the numba cache) is never timed;
``track_speedup_*`` time fastgen and scikit-learn in the same call and return the
ratio sklearn / fastgen.
"""

import numpy as np

import fastgen

try:
    from ._common import interleaved_medians
    from .compare_nb import make_counts, make_gaussian
except ImportError:  # run from the benchmarks directory
    from _common import interleaved_medians
    from compare_nb import make_counts, make_gaussian

GAUSS = (200_000, 16, 10)           # W5 shape, n / 5
COUNTS = (40_000, 100_000, 20, 100)  # W6 / W7 shape, n / 5


def _speedup_fit(fit, sk_class, data, repeats=3):
    """sklearn seconds / fastgen seconds of one fit on ``data`` = (X, y): medians of
    ``repeats`` interleaved calls of ``fit(X, y)`` and ``sk_class().fit(X, y)``, after
    one warm-up call each."""
    X, y = data
    (tf, _), (ts, _) = interleaved_medians(
        [lambda: fit(X, y), lambda: sk_class().fit(X, y)], repeats)
    return ts / tf


# The classes below list alike methods (time_fit, peakmem_fit, track_speedup_*) on
# purpose: asv names each benchmark after its class and method, and a params table
# would rename them and cut their recorded history.
class GaussianNB:
    """W5: fit_gaussian_nb and predict_proba on dense float64 data."""

    timeout = 300

    def setup_cache(self):
        return make_gaussian(*GAUSS)

    def setup(self, data):
        X, y = data
        self.params = fastgen.fit_gaussian_nb(X, y)
        fastgen.predict_proba(self.params, X[:1000])

    def time_fit(self, data):
        fastgen.fit_gaussian_nb(*data)

    def time_predict_proba(self, data):
        fastgen.predict_proba(self.params, data[0])

    def peakmem_fit(self, data):
        fastgen.fit_gaussian_nb(*data)

    def track_speedup_fit(self, data):
        from sklearn.naive_bayes import GaussianNB as SK

        return _speedup_fit(fastgen.fit_gaussian_nb, SK, data)

    track_speedup_fit.unit = "x"


class SparseNB:
    """W6 / W7: multinomial, Bernoulli and complement NB on Zipf-like CSR counts."""

    timeout = 600

    def setup_cache(self):
        return make_counts(*COUNTS)

    def setup(self, data):
        X, y = data
        self.multinomial = fastgen.fit_multinomial_nb(X, y)
        self.bernoulli = fastgen.fit_bernoulli_nb(X, y)
        self.complement = fastgen.fit_complement_nb(X, y)
        for p in (self.multinomial, self.bernoulli, self.complement):
            fastgen.predict_proba(p, X[:100])
            fastgen.predict(p, X[:100])

    def time_multinomial_fit(self, data):
        fastgen.fit_multinomial_nb(*data)

    def time_multinomial_predict_proba(self, data):
        fastgen.predict_proba(self.multinomial, data[0])

    def time_bernoulli_fit(self, data):
        fastgen.fit_bernoulli_nb(*data)

    def time_bernoulli_predict(self, data):
        fastgen.predict(self.bernoulli, data[0])

    def time_complement_fit(self, data):
        fastgen.fit_complement_nb(*data)

    def time_complement_predict_proba(self, data):
        fastgen.predict_proba(self.complement, data[0])

    def peakmem_multinomial_fit(self, data):
        fastgen.fit_multinomial_nb(*data)

    def track_speedup_multinomial_fit(self, data):
        from sklearn.naive_bayes import MultinomialNB as SK

        return _speedup_fit(fastgen.fit_multinomial_nb, SK, data)

    track_speedup_multinomial_fit.unit = "x"


class CategoricalNB:
    """Categorical NB on dense integer codes (20 features, 8 categories)."""

    def setup_cache(self):
        rng = np.random.default_rng(1)
        X = rng.integers(0, 8, size=(50_000, 20)).astype(np.float64)
        y = (X[:, 0].astype(int) + rng.integers(0, 3, X.shape[0])) % 5
        return X, y

    def setup(self, data):
        self.params = fastgen.fit_categorical_nb(*data)
        fastgen.predict_proba(self.params, data[0][:100])

    def time_fit(self, data):
        fastgen.fit_categorical_nb(*data)

    def time_predict_proba(self, data):
        fastgen.predict_proba(self.params, data[0])

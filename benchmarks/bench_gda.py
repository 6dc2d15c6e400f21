"""asv benchmarks for Gaussian discriminant analysis (workloads W1–W4, W11 of the
design card, at smaller sizes so that ``asv run --quick`` stays short).

``setup_cache`` builds the data once per class; ``setup`` runs a warm-up call so that
JIT compilation (or loading from the numba cache) is never timed; ``track_speedup_*``
time fastgen and scikit-learn in the same call and return the ratio.
"""


import fastgen

from ._common import interleaved_medians, make_data

K = 10
POOLED = (200_000, 16)      # W1 / W4 shape, n / 5
PER_CLASS = (50_000, 128)   # W2 / W3 shape, n / 4
PER_CLASS_SMALL_D = (200_000, 16)  # W3b shape, n / 5


def _lda():
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis

    return LinearDiscriminantAnalysis(solver="lsqr")


def _qda():
    from sklearn.discriminant_analysis import QuadraticDiscriminantAnalysis

    return QuadraticDiscriminantAnalysis()


def _data():
    return {
        "pooled": make_data(*POOLED, K, seed=0),
        "per_class": make_data(*PER_CLASS, K, seed=1),
        "per_class_small_d": make_data(*PER_CLASS_SMALL_D, K, seed=2),
    }


def _speedup(fast, peer):
    """Peer time / fastgen time: medians of 3 interleaved repeats.  (asv names each
    track_* series after its method, so the series stay one method each.)"""
    (fg, _), (sk, _) = interleaved_medians([fast, peer], 3)
    return sk / fg


class GDAFit:
    """fit_gda on in-memory float64 data (W1 pooled, W2 per_class)."""

    timeout = 300

    def setup_cache(self):
        return _data()

    def setup(self, data):
        for key, cov in (("pooled", "pooled"), ("per_class", "per_class")):
            X, y = data[key]
            fastgen.fit_gda(X[:20_000], y[:20_000], cov)

    def time_fit_pooled(self, data):
        fastgen.fit_gda(*data["pooled"], "pooled")

    def time_fit_per_class(self, data):
        fastgen.fit_gda(*data["per_class"], "per_class")

    def time_fit_diagonal(self, data):
        fastgen.fit_gda(*data["pooled"], "diagonal")

    def peakmem_fit_pooled(self, data):
        fastgen.fit_gda(*data["pooled"], "pooled")

    def peakmem_fit_per_class(self, data):
        fastgen.fit_gda(*data["per_class"], "per_class")

    def _speedup(self, data, cov, model):
        X, y = data[cov]
        return _speedup(lambda: fastgen.fit_gda(X, y, cov), lambda: model().fit(X, y))



class GDAPredict:
    """predict_proba of fitted models (W4 pooled, W3 / W3b per_class)."""

    timeout = 300

    def setup_cache(self):
        return _data()

    def setup(self, data):
        self.params = {}
        for key, cov in (("pooled", "pooled"), ("per_class", "per_class"),
                         ("per_class_small_d", "per_class")):
            X, y = data[key]
            self.params[key] = p = fastgen.fit_gda(X, y, cov)
            fastgen.predict_proba(p, X[:1000])

    def time_predict_proba_pooled(self, data):
        fastgen.predict_proba(self.params["pooled"], data["pooled"][0])

    def time_predict_proba_per_class(self, data):
        fastgen.predict_proba(self.params["per_class"], data["per_class"][0])

    def time_predict_proba_per_class_small_d(self, data):
        fastgen.predict_proba(self.params["per_class_small_d"],
                              data["per_class_small_d"][0])

    def _speedup(self, data, key, model):
        X, y = data[key]
        est = model().fit(X, y)
        p = self.params[key]
        return _speedup(lambda: fastgen.predict_proba(p, X), lambda: est.predict_proba(X))



def _add_speedup_series(cls, prefix, cases):
    """Give ``cls`` one asv ``track_`` series per case, ``prefix + key``, each the
    ratio ``cls._speedup(data, key, model)`` (asv names a series after its method)."""
    for key, model in cases:
        def track(self, data, key=key, model=model):
            return self._speedup(data, key, model)

        track.unit = "ratio"
        setattr(cls, prefix + key, track)


_add_speedup_series(GDAFit, "track_speedup_vs_sklearn_fit_",
                    [("pooled", _lda), ("per_class", _qda)])
_add_speedup_series(GDAPredict, "track_speedup_vs_sklearn_predict_proba_",
                    [("pooled", _lda), ("per_class", _qda), ("per_class_small_d", _qda)])


class GDAMemory:
    """W11: peak extra RSS of fit_gda as a percentage of X, measured in a fresh
    process (X of 128 MiB here; compare.py uses 1 GiB)."""

    timeout = 300

    def track_peak_extra_memory_pct_pooled(self):
        from ._common import peak_memory_probe

        r = peak_memory_probe("fastgen", (128 << 20) // (8 * 16), 16, K, "pooled")
        return 100.0 * r["extra_bytes"] / r["x_bytes"]

    track_peak_extra_memory_pct_pooled.unit = "% of X"

    def track_peak_extra_memory_pct_per_class(self):
        from ._common import peak_memory_probe

        r = peak_memory_probe("fastgen", (128 << 20) // (8 * 128), 128, K, "per_class")
        return 100.0 * r["extra_bytes"] / r["x_bytes"]

    track_peak_extra_memory_pct_per_class.unit = "% of X"

"""asv benchmarks of first-call latency in a fresh interpreter (W10).

Each ``track_`` runs ``python -c "import fastgen; fit_gda + predict on tiny data"`` in a
subprocess and returns its wall seconds: with the numba cache as it is (warm; one
untimed run fills it first), and with an empty cache (the package copied to a
temporary directory and NUMBA_CACHE_DIR pointed at an empty one), which is the compile
time a new installation pays once.
"""

from ._common import cold_startup_probe, startup_probe


class Startup:
    timeout = 600
    number = 1
    repeat = 1

    def track_first_call_warm_cache(self):
        return startup_probe(("pooled",), repeats=3)[0]

    track_first_call_warm_cache.unit = "seconds"

    def track_first_call_warm_cache_per_class(self):
        return startup_probe(("per_class",), repeats=3)[0]

    track_first_call_warm_cache_per_class.unit = "seconds"

    def track_python_numpy_scipy_import(self):
        return startup_probe(("pooled",), repeats=3)[3]

    track_python_numpy_scipy_import.unit = "seconds"

    def track_first_call_cold_cache(self):
        r = cold_startup_probe(("pooled", "per_class"))
        if not r["really_cold"]:
            raise RuntimeError(f"the cold-cache run was not cold: {r}")
        return r["cold_wall_s"]

    track_first_call_cold_cache.unit = "seconds"

"""fastgen: Numba-compiled kernels for generative classifiers.

Gaussian discriminant analysis, naive Bayes and IRLS logistic regression behind a thin
functional API: ``fit_*`` functions return frozen parameter dataclasses, and the four
scoring functions accept every params type.
"""

# ``import fastgen`` changes nothing in the process (it does not even import numba).
# What fastgen sets for the whole process (OMP_WAIT_POLICY if unset, a NUMBA_CACHE_DIR
# fallback when numba could write its cache nowhere, wraps of numba's cache loading, a
# fork handler) is applied when the first kernel module is imported, by the first call
# that needs a kernel; it is listed in one place: the docstring of fastgen/_runtime.py
# (and docs/guide/processes.rst).
from ._runtime import RuntimeSetupWarning

# Everything else is imported on first use (PEP 562 ``__getattr__`` below): a first
# ``fit_gda`` loads the GDA modules only, not naive Bayes, logistic regression, their
# kernels or scipy.sparse; numba itself is imported by the first kernel that runs
# (fastgen._runtime.kernel_module), never for small inputs.
# The table of public names (submodule -> names) is fastgen/_public.py.
from ._public import LAZY as _LAZY

# ``fastgen.compile(...)`` fills numba's cache ahead of time (fastgen/_compile.py).  It
# resolves like the names above but stays out of ``__all__``: ``from fastgen import *``
# must not shadow the builtin ``compile``.
_UNLISTED = {"compile": "_compile"}

# Submodules that ``import fastgen`` used to import eagerly: ``fastgen.gda`` and the
# like keep working as attributes after a plain ``import fastgen``.
_SUBMODULES = frozenset({
    "io", "scoring", "stats", "gda", "naive_bayes", "logistic", "kernels", "cuda",
    "_params", "_validation",
})


def __getattr__(name):
    if name == "__version__":  # read from the package metadata on first use
        from ._version import version

        globals()["__version__"] = value = version()
        return value
    import importlib

    module = _LAZY.get(name) or _UNLISTED.get(name)
    if module is not None:
        value = getattr(importlib.import_module(f".{module}", __name__), name)
        globals()[name] = value  # later lookups skip this function
        return value
    if name in _SUBMODULES:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__) | _SUBMODULES | set(_UNLISTED))


__all__ = ["RuntimeSetupWarning", *_LAZY]

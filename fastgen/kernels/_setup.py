"""numba's process set-up for the kernels, applied before the first kernel is decorated.

Why here.  The kernels need numba configured before any of them is decorated with
``cache=True``, compiled or loaded: without a writable cache location numba raises while
*importing* a kernel module, and a user's cached ``@njit`` function that calls a
parallel kernel must find the threading layer's start-up hook when a fresh process
loads it.  That holds for every importer, also a program that imports
:mod:`fastgen.kernels` alone, so the kernel layer configures numba for itself: every
kernel module takes its decorators from :mod:`fastgen.kernels._jit`, which calls
:func:`configure_numba` when it is first imported.  The package ``__init__`` and this
module do nothing at import (``import fastgen`` stays free of side effects), and the
kernel layer imports nothing of fastgen outside itself: fastgen's own part of the
set-up (the compile notice, the logger) is added by ``fastgen._runtime``.

What is set: items 1 to 5 of the list in ``fastgen._runtime``'s docstring (the one
place it is written down, with docs/guide/processes.rst): ``OMP_WAIT_POLICY`` if unset,
a ``NUMBA_CACHE_DIR`` fallback (:func:`~fastgen.kernels._cache.ensure_writable_cache`),
damaged cache entries read as misses
(:func:`~fastgen.kernels._cache.tolerate_corrupt_cache`), parallel start-up hooks kept
on cache load (:func:`~fastgen.kernels._cache.keep_parallel_init_on_cache_load`), and a
fork handler (:func:`run_serially_after_fork`).
"""

from __future__ import annotations

import os
import sys

from ._cache import (
    ensure_writable_cache,
    keep_parallel_init_on_cache_load,
    tolerate_corrupt_cache,
)

__all__ = ["configure_numba", "run_serially_after_fork", "in_forked_openmp_child"]

_CONFIGURED = False


def configure_numba() -> None:
    """Apply items 1 to 5 of the process set-up (see the module docstring), in order;
    idempotent."""
    global _CONFIGURED
    if _CONFIGURED:
        return
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    ensure_writable_cache()
    tolerate_corrupt_cache()
    keep_parallel_init_on_cache_load()
    run_serially_after_fork()
    _CONFIGURED = True


# ------------------------------------------------------------------ fork

# True in a forked child of a process whose GNU OpenMP pool had started (set by the
# fork handler): fastgen's calls run on one thread here.
_FORKED_OPENMP_CHILD = False
_FORK_HANDLER = False


def _started_gnu_openmp():
    """numba's OpenMP layer module when it has started and is GNU's, else None."""
    parallel = sys.modules.get("numba.np.ufunc.parallel")
    if parallel is None or not getattr(parallel, "_is_initialized", False):
        return None
    if getattr(parallel, "_threading_layer", None) != "omp":
        return None
    omppool = sys.modules.get("numba.np.ufunc.omppool")
    if omppool is None or getattr(omppool, "openmp_vendor", None) != "GNU":
        return None
    return omppool


def _after_fork_in_child() -> None:
    """The fork handler (item 5 of the list in ``fastgen._runtime``); runs in the child
    only."""
    global _FORKED_OPENMP_CHILD
    omppool = _started_gnu_openmp()
    if omppool is None:
        return
    try:
        import ctypes

        one_arg = ctypes.CFUNCTYPE(None, ctypes.c_int)
        # numba's launch_threads records this process as the pool's owner (the guard
        # kills a process whose parent is the recorded owner) and sets the count that
        # threads started later get; set_num_threads sets the forking thread's count.
        one_arg(omppool.launch_threads)(1)
        one_arg(omppool.set_num_threads)(1)
    except Exception:  # noqa: BLE001 - leave numba as it is
        return
    _FORKED_OPENMP_CHILD = True


def run_serially_after_fork() -> None:
    """Register the fork handler that lets forked children run numba's parallel
    kernels on one thread (idempotent; item 5 of the list in ``fastgen._runtime``)."""
    global _FORK_HANDLER
    if _FORK_HANDLER or not hasattr(os, "register_at_fork"):
        return
    os.register_at_fork(after_in_child=_after_fork_in_child)
    _FORK_HANDLER = True


def in_forked_openmp_child() -> bool:
    """True in a forked child of a process whose GNU OpenMP pool had started: numba's
    parallel regions run on one thread there (item 5)."""
    return _FORKED_OPENMP_CHILD

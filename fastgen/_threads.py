"""Keep BLAS at one thread around kernels that call BLAS from inside ``prange``.

numba's ``np.dot`` calls the OpenBLAS bundled with scipy.  Left at its default thread
count inside a parallel numba region, each numba worker would start BLAS threads of its
own and the two pools oversubscribe the cores (see README, "Threads").
"""

from __future__ import annotations

import contextlib
import functools


@functools.lru_cache(maxsize=1)
def _controller():
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


@contextlib.contextmanager
def blas_single_thread(active: bool = True):
    """Context manager: every loaded BLAS library runs on one thread inside."""
    if not active:
        yield
        return
    with _controller().limit(limits=1, user_api="blas"):
        yield

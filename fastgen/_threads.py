"""Thread-pool policy: BLAS held at one thread inside parallel kernels, and one numba
thread for small inputs.

Keep BLAS at one thread around kernels that call BLAS from inside ``prange``.

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


# Below this many stored values (n·d dense, nnz sparse) kernels run on one numba
# thread: waking the thread pool costs more than the work, and on a busy machine a
# parallel region waits for a core (measured with the cores shared: a 30×3 fit took
# ~100 ms on two threads, 0.1 ms on one).  The work split does not depend on the thread
# count, so results are the same either way.
SMALL_WORK = 1 << 15


def _work_of(X) -> int:
    nnz = getattr(X, "nnz", None)
    if nnz is not None:
        return int(nnz) + int(X.shape[0])
    shape = getattr(X, "shape", None)
    if shape is None:
        return SMALL_WORK  # not an array yet (a list…): leave the thread count alone
    size = 1
    for s in shape:
        size *= int(s)
    return size


@contextlib.contextmanager
def threads_for(X):
    """Run numba kernels inside on one thread when X is small (see ``SMALL_WORK``)."""
    if _work_of(X) >= SMALL_WORK:
        yield
        return
    import numba

    prev = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        yield
    finally:
        numba.set_num_threads(prev)


def serial_for_small_inputs(x_index=0):
    """Decorator factory: :func:`threads_for` applied to the function's X argument
    (positional index ``x_index``, or the keyword ``X``)."""

    def decorate(func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            X = args[x_index] if len(args) > x_index else kwargs.get("X")
            with threads_for(X):
                return func(*args, **kwargs)

        return wrapper

    return decorate


def single_thread_blas_call(func):
    """Decorator: the whole call runs with BLAS on one thread.

    For fits whose client-side linear algebra is small (Cholesky solves of d×d
    systems between parallel passes over X): BLAS threads woken by those calls keep
    spinning afterwards and slow the next parallel kernel.
    """

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with blas_single_thread():
            return func(*args, **kwargs)

    return wrapper


# numpy's ufuncs run on one core; above this many values an elementwise pass over a
# finished table (the logs of naive Bayes' (K, d) counts: 2·10⁶ values at K=20,
# d=10⁵, 5 ms on one core) is split across Python threads, which numpy's inner
# loops run without the GIL.  Each value is computed by the same loop either way.
PARALLEL_UFUNC_MIN = 1 << 19


_POOL = {}


def _ufunc_pool():
    """The process's worker threads, made on first use.  Keyed by pid: a forked child
    inherits the pool object but not its threads, and would wait forever on it."""
    import concurrent.futures
    import os

    pid = os.getpid()
    pool = _POOL.get(pid)
    if pool is None:
        _POOL.clear()
        pool = _POOL[pid] = concurrent.futures.ThreadPoolExecutor(
            thread_name_prefix="fastgen-ufunc")
    return pool


def ufunc_inplace(ufunc, a):
    """``ufunc(a, out=a)`` for a C-contiguous array, split across threads when large.

    The pieces follow numba's thread count (``numba.get_num_threads()``), so
    ``numba.set_num_threads(1)`` keeps this on one core too.
    """
    import numba

    flat = a.reshape(-1)
    t = numba.get_num_threads() if flat.shape[0] >= PARALLEL_UFUNC_MIN else 1
    if t <= 1:
        ufunc(flat, out=flat)
        return a
    cuts = [flat.shape[0] * i // t for i in range(t + 1)]
    pieces = [flat[cuts[i]:cuts[i + 1]] for i in range(t)]
    pool = _ufunc_pool()
    futures = [pool.submit(ufunc, p, out=p) for p in pieces[1:]]
    ufunc(pieces[0], out=pieces[0])  # the calling thread takes the first piece
    for f in futures:
        f.result()
    return a

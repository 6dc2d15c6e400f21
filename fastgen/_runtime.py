"""Process-wide runtime setup and thread-pool policy: everything fastgen does to the
process it runs in, in one place.

``import fastgen`` changes nothing in the process: it imports fastgen's own small set of
modules, not even numba.  What fastgen sets for the whole process is applied when the
first kernel module is imported (:mod:`fastgen.kernels` or :mod:`fastgen.cuda.kernels`:
the first call that compiles or runs a kernel), before any kernel is compiled or
loaded, and stays for the life of the process.  Items 1 to 5 configure numba for the
kernels and are applied by the kernel layer itself
(:func:`fastgen.kernels._setup.configure_numba`, called by the kernels' decorator module
on its first import), so that they hold for any importer of the kernels, and the
kernels import nothing of fastgen outside themselves; item 6 is fastgen's own and is
added by :func:`configure_process`, which runs when fastgen loads its first kernel
module (:func:`kernel_module`, through which every kernel call of fastgen's own modules
goes) and when :mod:`fastgen.cuda.kernels` is imported:

1. ``OMP_WAIT_POLICY=PASSIVE``, only if unset (``os.environ.setdefault``).  numba's
   default OpenMP workers spin after every parallel region, taking the cores from the
   BLAS call or the Python code that follows; fastgen alternates both
   (benchmarks/NOTES.md).  It must be set before numba starts its pool; a
   value the user chose (or an OpenMP runtime already started by another library, or by
   the user's own parallel numba code before fastgen's first call) wins.
2. ``NUMBA_CACHE_DIR``, only when numba would find no writable cache location
   (:func:`ensure_writable_cache`).  Every kernel is ``@njit(cache=True)``; numba stores
   the compiled code in the ``__pycache__`` directory beside the source, else in
   ``NUMBA_CACHE_DIR``, else in the user-wide cache directory (``~/.cache/numba``), and
   when none is writable (a package installed read-only by another user, a container
   with a read-only root and no home) it raises ``RuntimeError: cannot cache function
   ...: no locator available`` while *importing* the module that defines the kernel.
   fastgen then points ``NUMBA_CACHE_DIR`` at a private per-user directory under the
   system temp directory.  A location numba would use anyway is never overridden.
3. Five methods of numba's ``numba.core.caching`` are wrapped
   (:func:`tolerate_corrupt_cache`): ``IndexDataCacheFile._load_index``,
   ``_save_index``, ``load``, ``save`` and ``Cache.load_overload``.  Every cache file
   of a fastgen kernel is written inside an envelope that names the entry (fastgen and
   numba versions, the kernel's index name with its qualified name, the data file and
   signature key) and carries a digest of that name and the whole content, with its
   exact length; the envelope is checked before numba unpickles or links anything, so
   a damaged entry (truncated, garbled, bytes overwritten or appended) or a misplaced
   one (another kernel's file copied over it) never reaches numba's dispatcher or
   LLVM: it is a cache miss, the kernel is recompiled and its entry rewritten where
   the cache is writable, and one message is logged per process (logger ``fastgen``,
   level WARNING; not a Python warning, which ``-W error`` would turn into the very
   failure this prevents).  Other libraries' cache files behave exactly as before.
   ``IndexDataCacheFile.save`` of a fastgen kernel runs under an exclusive lock on its
   cache directory (``flock`` on ``.fastgen-save.lock`` there): numba reads the index,
   picks a free data-file number and writes both without one, so two processes saving
   different signatures of one kernel at once could lose an index entry.  A lock held
   by another process for more than ``LOCK_WAIT_SECONDS`` (10 s; a stopped job) is
   given up: the kernel is compiled without being saved, later saves to that directory
   do not wait, and one WARNING line says so.  These are private numba names, so the
   wrap is applied only on the numba versions it was tested with
   (:data:`TESTED_NUMBA`); on any other version, or if the names are gone, fastgen
   leaves numba's own caching alone, emits one :class:`RuntimeSetupWarning` and
   compiles its kernels without the on-disk cache (``cache=False``), since numba's
   own loading would hand a damaged entry to LLVM — never an import failure.
4. numba's ``CompileResult._rebuild`` is wrapped (:func:`keep_parallel_init_on_cache_load`,
   same version gate) so that a user's
   ``@njit(cache=True)`` function that calls a parallel fastgen kernel starts numba's
   threading layer when a fresh process loads it from the cache (numba 0.68 drops that
   start-up hook for code loaded from the cache: a segfault otherwise).
5. A fork handler (``os.register_at_fork``, :func:`run_serially_after_fork`) for forked
   children of a process whose
   numba GNU OpenMP pool has started.  numba's OpenMP layer kills such a child with
   SIGTERM ("fork() called from a process already using GNU OpenMP") at its first
   parallel region, whatever its thread count, and a ``multiprocessing`` pool then
   waits forever for the task.  In the child the handler re-arms numba's layer for the
   child's own process id and sets numba's thread count to one, in the forking thread
   and for threads started later: every parallel region of the child (fastgen's or any
   other numba code) then runs on one thread, which GNU OpenMP runs without its thread
   pool (the pool's threads do not exist in the child).  fastgen's calls in such a
   child stay on one thread even if numba's count is raised.  Nothing happens in the
   parent, with numba's TBB or workqueue layers, or before a parallel region ran.
6. A listener for numba's ``"numba:compile"`` event (:func:`fastgen._log.watch_compiles`),
   which logs one INFO line per process (logger ``fastgen``, printed to stderr unless
   the program handles logging itself) when a public fastgen call starts compiling a
   kernel.  numba fires the event only on a cache miss: nothing runs on a warm cache.
   When fastgen first logs, the ``fastgen`` logger gets level INFO (unless the program
   set one, or ``FASTGEN_LOG_LEVEL`` / ``FASTGEN_QUIET`` say otherwise) and a handler
   that prints to stderr while the program has no logging handler of its own
   (:mod:`fastgen._log`).

Nothing else is changed process-wide.  Thread counts are only changed for the duration
of a call (:func:`threads_for`, :func:`blas_single_thread`), always restored.

Thread-pool policy.  Keep BLAS at one thread around kernels that call BLAS from inside
``prange``: numba's ``np.dot`` calls the OpenBLAS bundled with scipy, and left at its
default thread count inside a parallel numba region each numba worker would start BLAS
threads of its own, so the two pools oversubscribe the cores (docs/guide/processes.rst).
Small inputs (``fastgen._small``) take numpy passes and never start numba's pool.

This module imports numba lazily (inside functions): importing it must not start
numba before ``OMP_WAIT_POLICY`` is set.

Kernel modules load on first use.  Importing a kernel module imports numba and llvmlite
(0.1–0.4 s) and applies the set-up above, yet inputs of at most ``SMALL_VALUES`` stored
values never run a kernel (:mod:`fastgen._small`).  So the modules above the kernels
hold each kernel module they call as ``name_kernels = kernel_module("name")``
(:func:`kernel_module`), which imports ``fastgen.kernels.<name>`` the first time one of
its attributes is read: a process that computes only small inputs never imports numba
(docs/internals.rst, "Kernels load on first use").
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import sys
import threading

from .kernels._cache import (
    TESTED_NUMBA,
    ensure_writable_cache,
    keep_parallel_init_on_cache_load,
    tolerate_corrupt_cache,
)
from .kernels._notice import JITDisabledError, RuntimeSetupWarning, use_logger
from .kernels._setup import configure_numba, in_forked_openmp_child, run_serially_after_fork

__all__ = [
    "RuntimeSetupWarning",
    "JITDisabledError",
    "TESTED_NUMBA",
    "keep_parallel_init_on_cache_load",
    "run_serially_after_fork",
    "configure_process",
    "ensure_writable_cache",
    "tolerate_corrupt_cache",
    "blas_single_thread",
    "threads_for",
    "threads_for_work",
    "serial_for_small_inputs",
    "single_thread_blas_call",
    "kernel_module",
]


def configure_process() -> None:
    """Everything fastgen does to the process (the list in the module docstring), in
    order; idempotent.  Items 1 to 5 are the kernel layer's own set-up (a no-op when a
    kernel module was imported already); item 6 and the logger are fastgen's."""
    global _CONFIGURED
    if _CONFIGURED:
        return
    with _CONFIGURE_LOCK:  # the first kernel may be loaded by several threads at once
        if _CONFIGURED:
            return
        from ._log import get_logger, watch_compiles

        use_logger(get_logger)  # damaged cache entries are logged through fastgen's logger
        configure_numba()
        watch_compiles()
        _CONFIGURED = True


_CONFIGURED = False
_CONFIGURE_LOCK = threading.Lock()


# ------------------------------------------------------------------ kernel modules

class KernelModule:
    """Stands for the kernel module ``fastgen.kernels.<name>``: the first attribute read
    sets up the process (:func:`configure_process`) and imports the module; every read
    is then answered by the module itself.

    An attribute set on this object (a test's monkeypatch) is read from it first, as on
    a module; a monkeypatch of the module itself is seen here too.
    """

    def __init__(self, name: str):
        self._kernel_name = f"{__package__}.kernels.{name}"
        self._kernel_module = None

    def __getattr__(self, attr):  # called only for names not set on this object
        module = self.__dict__["_kernel_module"]
        if module is None:
            configure_process()
            module = importlib.import_module(self.__dict__["_kernel_name"])
            self._kernel_module = module
        return getattr(module, attr)

    def __repr__(self):
        state = "loaded" if self._kernel_module is not None else "not loaded yet"
        return f"<kernel module {self._kernel_name!r} ({state})>"


def kernel_module(name: str) -> KernelModule:
    """The kernel module ``fastgen.kernels.<name>``, imported (with numba) when one of its
    attributes is first read; see :class:`KernelModule`."""
    return KernelModule(name)


# ------------------------------------------------------------------ thread pools

def _controller():
    """threadpoolctl's view of the thread pools loaded now.  A controller knows only the
    libraries loaded when it was made, and modules that load one (scipy.linalg and its
    OpenBLAS, numba) are imported on first use here, so the controller is made again
    whenever a module was imported since the last one (3 ms; never in a steady loop)."""
    return _controller_for(len(sys.modules))


@functools.lru_cache(maxsize=1)
def _controller_for(n_modules):
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


# .blas: this thread is inside blas_single_thread
_held = threading.local()


@contextlib.contextmanager
def blas_single_thread(active: bool = True):
    """Context manager: every loaded BLAS library runs on one thread inside.

    Re-entrant at no cost: inside another ``blas_single_thread`` of the same thread
    (a pass of a fit that already holds BLAS at one thread) it does nothing, where
    asking threadpoolctl again costs a call per pass, which adds up over the thousands
    of passes of a profile-likelihood run.
    """
    if not active or getattr(_held, "blas", False):
        yield
        return
    with _controller().limit(limits=1, user_api="blas"):
        _held.blas = True
        try:
            yield
        finally:
            _held.blas = False


def threads_for(X):
    """:func:`threads_for_work` for a pass over X."""
    return threads_for_work(0)


@contextlib.contextmanager
def threads_for_work(work):
    """The scope of a pass of ``work`` stored values (kept for the callers' sake: the
    work no longer changes anything).  In a forked child whose parent had started GNU
    OpenMP, the kernels called inside run on one numba thread (the child has no OpenMP
    worker threads), even if the child raised numba's thread count.  Small inputs never
    reach the kernels: they take the numpy passes (:mod:`fastgen._small`)."""
    if not in_forked_openmp_child():
        yield
        return
    with _one_numba_thread():
        yield


def kernel_threads() -> int:
    """The threads a kernel call made here runs on: numba's thread count (which starts
    numba's pool), 1 in a forked child of an OpenMP parent."""
    if in_forked_openmp_child():
        return 1
    import numba

    return numba.get_num_threads()


@contextlib.contextmanager
def _one_numba_thread():
    import numba

    prev = numba.get_num_threads()
    if prev == 1:
        yield
        return
    numba.set_num_threads(1)
    try:
        yield
    finally:
        numba.set_num_threads(prev)


def serial_for_small_inputs(x_index=0):
    """Decorator factory: :func:`threads_for` applied to the function's X argument
    (positional index ``x_index``, or the keyword ``X``): its kernels run on one numba
    thread in a forked child of an OpenMP parent.  Small inputs take the numpy passes
    (:mod:`fastgen._small`) inside the function itself."""

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

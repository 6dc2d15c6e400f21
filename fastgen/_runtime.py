"""Process-wide runtime setup and thread-pool policy: everything fastgen does to the
process it runs in, in one place.

``import fastgen`` changes nothing in the process: it imports fastgen's own small set of
modules, not even numba.  What fastgen sets for the whole process is applied by
:func:`configure_process` when the first kernel module is imported (:mod:`fastgen.kernels`
or :mod:`fastgen.cuda.kernels`: the first call that compiles or runs a kernel), before
any kernel is compiled or loaded, and stays for the life of the process:

1. ``OMP_WAIT_POLICY=PASSIVE``, only if unset (``os.environ.setdefault``).  numba's
   default OpenMP workers spin after every parallel region, taking the cores from the
   BLAS call or the Python code that follows; fastgen alternates both.  Measured (2
   cores): 20 × (fit_gda + predict_proba + a 300×300 GEMM) took 1.1 s with spinning
   workers and 0.37 s with passive ones.  It must be set before numba starts its pool; a
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
   (:func:`tolerate_corrupt_cache`): ``IndexDataCacheFile._load_index``, ``_load_data``,
   ``_save_data``, ``save`` and ``Cache.load_overload``, so that an unreadable cache entry *of a
   fastgen kernel* (a truncated or garbled index or data file, bytes overwritten
   anywhere in it, code LLVM cannot parse) is a cache miss: the kernel is recompiled
   and its entry rewritten where the cache is writable, and one message is logged per
   process (logger ``fastgen``, level WARNING; not a Python warning, which ``-W error``
   would turn into the very failure this prevents).  Data files of fastgen kernels are
   written with a checksum after the pickle (numba ignores bytes after a pickle), which
   catches overwritten machine code that would otherwise load and run.  Other
   libraries' cache files behave exactly as before.  ``IndexDataCacheFile.save`` of a
   fastgen kernel runs under an exclusive lock on its cache directory (``flock`` on
   ``.fastgen-save.lock`` there): numba reads the index, picks a free data-file number
   and writes both without one, so two processes saving different signatures of one
   kernel at once (``fastgen compile``'s workers, ``curve --jobs``, workers sharing a
   cache) could lose an index entry or point one signature at another's code.  These
   are private numba names, so the wrap is applied only on the numba versions it was
   tested with
   (:data:`TESTED_NUMBA`); on any other version, or if the names are gone, fastgen
   leaves numba's own caching alone and emits one :class:`RuntimeSetupWarning` — never
   an import failure.
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
threads of its own, so the two pools oversubscribe the cores (see README, "Threads").
Small inputs run on one numba thread (:data:`SMALL_WORK`).

This module imports numba lazily (inside functions): importing it must not start
numba before ``OMP_WAIT_POLICY`` is set.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import threading

__all__ = [
    "RuntimeSetupWarning",
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
    "SMALL_WORK",
]


class RuntimeSetupWarning(UserWarning):
    """fastgen could not apply part of its process setup (see :mod:`fastgen._runtime`);
    it runs on without it."""


def configure_process() -> None:
    """Everything fastgen does to the process (the list in the module docstring), in
    order; idempotent.  Called when the first kernel module is imported."""
    global _CONFIGURED
    if _CONFIGURED:
        return
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    ensure_writable_cache()
    tolerate_corrupt_cache()
    keep_parallel_init_on_cache_load()
    run_serially_after_fork()
    from ._log import watch_compiles

    watch_compiles()
    _CONFIGURED = True


_CONFIGURED = False


# ------------------------------------------------------------------ cache location

_KERNELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernels")


def _writable_dir(path: str) -> bool:
    """True if ``path`` exists or can be created, and a file can be written in it
    (what numba's ``ensure_cache_path`` checks)."""
    import tempfile

    try:
        os.makedirs(path, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
        return True
    except OSError:
        return False


def _user_wide_cache_dir() -> str:
    from numba.misc.appdirs import user_cache_dir  # light: no compiler import

    return user_cache_dir(appname="numba", appauthor=False)


def _private_temp_dir() -> str | None:
    """A per-user directory under the temp dir that only this user owns and can write."""
    import tempfile

    uid = os.getuid() if hasattr(os, "getuid") else None
    base = os.path.join(tempfile.gettempdir(), f"fastgen-numba-cache-{uid}")
    try:
        os.makedirs(base, mode=0o700, exist_ok=True)
        st = os.stat(base)
        if (uid is None or st.st_uid == uid) and _writable_dir(base):
            return base
    except OSError:
        pass
    try:  # the predictable name is taken by someone else: a fresh private directory
        return tempfile.mkdtemp(prefix="fastgen-numba-cache-")
    except OSError:
        return None


def ensure_writable_cache() -> str | None:
    """Set ``NUMBA_CACHE_DIR`` to a private temp directory if numba has nowhere to write.

    Returns the directory chosen, or None when numba's own choice works (or nothing
    writable exists at all, in which case numba's error is left to speak).
    """
    if _writable_dir(os.path.join(_KERNELS, "__pycache__")):
        return None
    user_dir = os.environ.get("NUMBA_CACHE_DIR", "")
    if user_dir and _writable_dir(user_dir):
        return None
    if not user_dir:
        try:
            if _writable_dir(_user_wide_cache_dir()):
                return None
        except Exception:  # noqa: BLE001 - appdirs failing means "not usable"
            pass
    path = _private_temp_dir()
    if path is None:
        return None
    os.environ["NUMBA_CACHE_DIR"] = path
    config = sys.modules.get("numba.core.config")
    if config is not None:  # numba already imported: it read the variable at import
        config.CACHE_DIR = path
    return path


# ----------------------------------------------------------------- corrupted cache files
#
# numba unpickles the index (.nbi) and data (.nbc) files and rebuilds the compiled code
# without guarding against a damaged file (a full disk, a killed process on a filesystem
# without atomic rename, a copied tree, a bad sector): ``UnpicklingError`` or
# ``RuntimeError: LLVM bitcode parsing error`` then escapes from the first call of the
# kernel, and overwritten machine code may load and run.  For fastgen's own cache
# entries, any failure to read or rebuild an entry is a cache miss: numba recompiles the
# kernel and overwrites the entry.  Data files carry a checksum so that damage which
# still unpickles and links is caught too.  Other libraries' caches are untouched.

#: numba versions (major, minor), inclusive, on which the cache-file wrap was tested:
#: the wrapped methods and their behaviour are the same from 0.60 to 0.68.
TESTED_NUMBA = ((0, 60), (0, 68))

_PATCHED = False

# A data file of a fastgen kernel: numba's pickle, then this tag and the BLAKE2b-128
# digest of the pickle.  Files without the tag (written before it was added) are read
# as numba reads them.
_SUM_TAG = b"fastgen-cache-sum-1:"
_SUM_SIZE = 16
_TRAILER = len(_SUM_TAG) + _SUM_SIZE

_reported = False


def _numba_minor(version: str) -> tuple[int, int] | None:
    try:
        major, minor = version.split(".")[:2]
        return int(major), int(minor)
    except ValueError:
        return None


def _is_fastgen_cache(cache_file) -> bool:
    import hashlib

    path = os.path.abspath(getattr(cache_file, "_cache_path", ""))
    if path == os.path.join(_KERNELS, "__pycache__"):
        return True
    # numba names user-provided and user-wide cache subdirectories <dir>_<sha1(dir)>
    tag = "kernels_" + hashlib.sha1(_KERNELS.encode()).hexdigest()
    return os.path.basename(path) == tag


def _digest(payload: bytes) -> bytes:
    import hashlib

    return hashlib.blake2b(payload, digest_size=_SUM_SIZE).digest()


def _with_checksum(payload: bytes) -> bytes:
    return payload + _SUM_TAG + _digest(payload)


def _checked_payload(raw: bytes) -> bytes:
    """The pickle of a data file, its checksum verified (ValueError when it fails);
    a file without a checksum is returned whole."""
    if raw[-_TRAILER:-_SUM_SIZE] != _SUM_TAG:
        return raw
    payload, digest = raw[:-_TRAILER], raw[-_SUM_SIZE:]
    if _digest(payload) != digest:
        raise ValueError("checksum mismatch")
    return payload


def _report_bad_entry(where, exc) -> None:
    """Log the first unreadable cache entry of the process at WARNING, later ones at
    DEBUG."""
    import logging

    from ._log import get_logger

    global _reported
    level = logging.DEBUG if _reported else logging.WARNING
    _reported = True
    get_logger().log(
        level, "fastgen: unreadable numba cache entry %s (%s: %s); the kernel is "
        "recompiled and the entry rewritten where the cache is writable%s", where,
        type(exc).__name__, str(exc).splitlines()[0] if str(exc) else "",
        "" if level == logging.DEBUG else " (further ones are logged at DEBUG)")


@contextlib.contextmanager
def _cache_dir_lock(path):
    """Hold an exclusive lock shared with other processes on the cache directory
    ``path`` (``flock`` of ``.fastgen-save.lock`` in it); without a lock where flock or
    the lock file is unavailable (numba's own behaviour)."""
    try:
        import fcntl
    except ImportError:  # not POSIX
        yield
        return
    try:
        fd = os.open(os.path.join(path, ".fastgen-save.lock"), os.O_RDWR | os.O_CREAT,
                     0o666)
    except OSError:
        yield
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError:  # e.g. a network file system without locks
            pass
        yield
    finally:
        os.close(fd)  # releases the lock


def _unsupported_reason(numba_module, caching_module) -> str | None:
    """Why the wrap cannot be applied here, or None when it can."""
    version = getattr(numba_module, "__version__", "")
    minor = _numba_minor(version)
    lo, hi = TESTED_NUMBA
    if minor is None or not lo <= minor <= hi:
        return (f"numba {version} is outside the versions fastgen's cache-file wrap was "
                f"tested with ({lo[0]}.{lo[1]} to {hi[0]}.{hi[1]})")
    cls = getattr(caching_module, "IndexDataCacheFile", None)
    needs = ("_load_index", "_load_data", "_save_data", "_data_path", "_dump",
             "_open_for_write", "save")
    if cls is None or not all(callable(getattr(cls, name, None)) for name in needs):
        return (f"numba {version} lacks IndexDataCacheFile._load_index/_load_data/"
                "_save_data/save, which fastgen's cache-file wrap needs")
    cache = getattr(caching_module, "Cache", None)
    if cache is None or not callable(getattr(cache, "load_overload", None)):
        return (f"numba {version} lacks Cache.load_overload, which fastgen's cache-file "
                "wrap needs")
    return None


def tolerate_corrupt_cache() -> bool:
    """Make numba treat an unreadable fastgen cache entry as a miss (idempotent).

    Returns True when the wrap is in place.  On a numba version outside
    :data:`TESTED_NUMBA` (or without the private methods) nothing is changed and one
    :class:`RuntimeSetupWarning` says so: numba's own caching then applies, and a
    corrupted cache file raises at the first call of its kernel (delete the
    ``__pycache__`` or ``NUMBA_CACHE_DIR`` files to recover).
    """
    global _PATCHED
    if _PATCHED is not False:  # decided already: applied (True) or declined (None)
        return bool(_PATCHED)
    import numba
    from numba.core import caching

    reason = _unsupported_reason(numba, caching)
    if reason is not None:
        _PATCHED = None  # decided: warn once per process, not once per call
        from ._warn import warn

        warn(f"{reason}; using numba's own cache handling (a corrupted cache file is "
             "then an error, not a recompilation)", RuntimeSetupWarning)
        return False
    cls = caching.IndexDataCacheFile
    load_index, load_data, save_data = cls._load_index, cls._load_data, cls._save_data
    load_overload = caching.Cache.load_overload
    save = cls.save

    def _load_index(self):
        try:
            return load_index(self)
        except Exception as exc:  # noqa: BLE001 - any unpickling failure
            if not _is_fastgen_cache(self):
                raise
            _report_bad_entry(getattr(self, "_index_path", "?"), exc)
            return {}  # stale or corrupt: recompile, and the save rewrites the index

    def _load_data(self, name):
        if not _is_fastgen_cache(self):
            return load_data(self, name)
        import pickle

        path = self._data_path(name)
        with open(path, "rb") as f:  # OSError: numba's own miss (a file gone)
            raw = f.read()
        try:
            data = pickle.loads(_checked_payload(raw))
        except Exception as exc:  # noqa: BLE001
            _report_bad_entry(path, exc)
            raise OSError(f"corrupt numba cache file {name!r}: {exc}") from None  # a miss
        caching._cache_log("[cache] data loaded from %r", path)  # as numba's own
        return data

    def _save_data(self, name, data):
        if not _is_fastgen_cache(self):
            return save_data(self, name, data)
        payload = _with_checksum(self._dump(data))
        path = self._data_path(name)
        with self._open_for_write(path) as f:
            f.write(payload)
        caching._cache_log("[cache] data saved to %r", path)
        return None

    def _save(self, key, data):
        if not _is_fastgen_cache(self):
            return save(self, key, data)
        with _cache_dir_lock(getattr(self, "_cache_path", "")):
            return save(self, key, data)

    def _load_overload(self, sig, target_context):
        try:
            return load_overload(self, sig, target_context)
        except Exception as exc:  # noqa: BLE001 - e.g. LLVM cannot parse the code
            cache_file = getattr(self, "_cache_file", None)
            if not _is_fastgen_cache(cache_file):
                raise
            name = getattr(getattr(self, "_py_func", None), "__qualname__", "?")
            _report_bad_entry(f"of {name} in {getattr(cache_file, '_cache_path', '?')}",
                              exc)
            return None  # a miss: numba compiles, then save_overload rewrites the entry

    cls._load_index, cls._load_data, cls._save_data = _load_index, _load_data, _save_data
    cls.save = _save
    caching.Cache.load_overload = _load_overload
    _PATCHED = True
    return True


# ------------------------------------------- parallel kernels inside cached user code
#
# A fastgen kernel compiled with ``parallel=True`` carries a "reload init" hook that
# starts numba's threading layer (and registers its scheduling symbols with LLVM) when
# the kernel is loaded.  A function that calls the kernel inherits the hook when it is
# linked, so that its own cache entry starts the threading layer too.  numba (0.68)
# drops the hooks of a function *loaded from the cache*: a user's
# ``@njit(cache=True)`` function compiled in a process where the fastgen kernel came
# from fastgen's cache is saved without the hook, and the next process that loads it
# runs the parallel loop with no threading layer: a segfault (numba issues #8578,
# #9938).  Two repairs, both at cache-load time, no cost at import:
#
# * a rebuilt library keeps the hooks it was saved with, so code linked against it
#   inherits them (the user's cache entry is then complete);
# * an entry saved without the hook (by an unpatched process) whose object code calls
#   numba's parallel scheduler gets the threading layer started before it is linked.

# The parfor scheduler entry (do_scheduling_signed / _unsigned) every parallel loop calls.
_PARFOR_SYMBOL = b"do_scheduling_"
_REBUILD_PATCHED = False
_NUMBA_REBUILD = None  # numba's own CompileResult._rebuild, once patched


def _calls_parallel_scheduler(libdata) -> bool:
    """True if a serialized numba library's object code calls the parfor scheduler
    (one scan of the object code, about 0.3 ms per MB)."""
    try:
        _, kind, data = libdata
        blob = data[0] if kind == "object" else data
        return isinstance(blob, (bytes, bytearray)) and _PARFOR_SYMBOL in blob
    except (TypeError, ValueError, IndexError):
        return False


def keep_parallel_init_on_cache_load() -> None:
    """Make numba's cache load keep parallel-backend init hooks (idempotent; only on
    the numba versions in :data:`TESTED_NUMBA`)."""
    global _REBUILD_PATCHED, _NUMBA_REBUILD
    if _REBUILD_PATCHED:
        return
    import numba
    from numba.core.compiler import CompileResult

    minor = _numba_minor(getattr(numba, "__version__", ""))
    lo, hi = TESTED_NUMBA
    if (minor is None or not lo <= minor <= hi
            or not hasattr(getattr(CompileResult, "_rebuild", None), "__func__")):
        # another numba: leave its cache loading alone (tolerate_corrupt_cache warns
        # once about untested versions already)
        _REBUILD_PATCHED = None
        return

    _NUMBA_REBUILD = rebuild = CompileResult._rebuild.__func__

    def _rebuild(cls, target_context, libdata, fndesc, env, signature, objectmode,
                 lifted, typeann, reload_init, referenced_envs):
        if not reload_init and _calls_parallel_scheduler(libdata):
            from numba.np.ufunc.parallel import _launch_threads

            _launch_threads()
        cr = rebuild(cls, target_context, libdata, fndesc, env, signature, objectmode,
                     lifted, typeann, reload_init, referenced_envs)
        if reload_init:
            cr.library._reload_init.update(reload_init)
        return cr

    CompileResult._rebuild = classmethod(_rebuild)
    _REBUILD_PATCHED = True


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
    """The fork handler (see the module docstring, item 5); runs in the child only."""
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
    kernels on one thread (idempotent; see the module docstring, item 5).  Called
    when :mod:`fastgen.kernels` is imported."""
    global _FORK_HANDLER
    if _FORK_HANDLER or not hasattr(os, "register_at_fork"):
        return
    os.register_at_fork(after_in_child=_after_fork_in_child)
    _FORK_HANDLER = True


# ------------------------------------------------------------------ thread pools

@functools.lru_cache(maxsize=1)
def _controller():
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


# .blas: this thread is inside blas_single_thread; .numba_outer: numba's thread count
# before an enclosing threads_for lowered it to one
_held = threading.local()


@contextlib.contextmanager
def blas_single_thread(active: bool = True):
    """Context manager: every loaded BLAS library runs on one thread inside.

    Re-entrant at no cost: inside another ``blas_single_thread`` of the same thread
    (a pass of a fit that already holds BLAS at one thread) it does nothing, where
    asking threadpoolctl again took ~20 µs per pass (0.3 s of a profile-likelihood
    run of ~9500 passes).
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


def threads_for(X):
    """Run numba kernels inside on one thread when X is small (see ``SMALL_WORK``)."""
    return threads_for_work(_work_of(X))


@contextlib.contextmanager
def threads_for_work(work):
    """:func:`threads_for` for a pass whose work is not X's size: ``work`` in the units
    of ``SMALL_WORK`` (stored values).

    Nested scopes are cheap and go both ways: inside a scope that already runs on one
    thread, a small pass does nothing (numba's ``set_num_threads`` costs ~8 µs a call,
    twice per pass: 0.2 s of wine's 0.86 s profile run before the profile took one
    scope for all its passes), and a large one (the Firth curvature pass of a small X)
    gets back the thread count the enclosing scope lowered, for its duration.
    """
    outer = getattr(_held, "numba_outer", None)  # the count an enclosing scope lowered
    if _FORKED_OPENMP_CHILD:
        work = 0  # one thread only: the child has no OpenMP worker threads
    if work >= SMALL_WORK and outer is None:
        yield
        return
    import numba

    prev = numba.get_num_threads()
    want = outer if work >= SMALL_WORK else 1
    if want == prev:
        yield
        return
    numba.set_num_threads(want)
    if outer is None:
        _held.numba_outer = prev
    try:
        yield
    finally:
        numba.set_num_threads(prev)
        _held.numba_outer = outer


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

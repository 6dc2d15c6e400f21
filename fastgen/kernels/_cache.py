"""numba's on-disk cache for the kernels: a writable location, damaged entries read as
misses, and parallel start-up hooks kept when cached code is loaded.

Items 2 to 4 of the process set-up listed in :mod:`fastgen._runtime`, applied by
:func:`fastgen.kernels._setup.configure_numba` before the first kernel is decorated.
Each function is idempotent and may be called again (tests do).
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys

from ._notice import RuntimeSetupWarning, logger, warn_at_caller

__all__ = [
    "TESTED_NUMBA",
    "ensure_writable_cache",
    "tolerate_corrupt_cache",
    "keep_parallel_init_on_cache_load",
]


# ------------------------------------------------------------------ cache location

# this directory: numba stores the kernels' cache in its __pycache__ by default
_KERNELS = os.path.dirname(os.path.abspath(__file__))


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
    global _reported
    level = logging.DEBUG if _reported else logging.WARNING
    _reported = True
    logger().log(
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
        warn_at_caller(f"{reason}; using numba's own cache handling (a corrupted cache file is "
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
    (one scan of the object code)."""
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

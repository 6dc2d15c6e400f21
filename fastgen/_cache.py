"""Where numba writes fastgen's compiled kernels.

Every kernel is ``@njit(cache=True)``.  numba stores the compiled code in the
``__pycache__`` directory beside the source, else in ``NUMBA_CACHE_DIR``, else in the
user-wide cache directory (``~/.cache/numba``); when none of them is writable (a package
installed read-only by another user, a container with a read-only root and no home) it
raises ``RuntimeError: cannot cache function ...: no locator available`` while *importing*
the module that defines the kernel.

:func:`ensure_writable_cache` runs before any kernel module is imported: if numba would
find no writable location, it points ``NUMBA_CACHE_DIR`` at a private per-user
directory under the system temp directory, so ``import fastgen`` works and the kernels are
still cached across processes.  A location numba would use anyway is never overridden.
"""

from __future__ import annotations

import os
import sys
import tempfile

_KERNELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernels")


def _writable_dir(path: str) -> bool:
    """True if ``path`` exists or can be created, and a file can be written in it
    (what numba's ``ensure_cache_path`` checks)."""
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
# numba unpickles the index (.nbi) and data (.nbc) files without guarding against a
# truncated or garbled file (a full disk, a killed process on a filesystem without atomic
# rename, a copied tree): ``UnpicklingError`` then escapes from the first call of the
# kernel.  For fastgen's own cache files, such a file is treated as a cache miss: numba
# recompiles the kernel and overwrites the file.  Other libraries' caches are untouched.

_PATCHED = False


def _is_fastgen_cache(cache_file) -> bool:
    path = os.path.abspath(getattr(cache_file, "_cache_path", ""))
    if path == os.path.join(_KERNELS, "__pycache__"):
        return True
    import hashlib

    # numba names user-provided and user-wide cache subdirectories <dir>_<sha1(dir)>
    tag = "kernels_" + hashlib.sha1(_KERNELS.encode()).hexdigest()
    return os.path.basename(path) == tag


def tolerate_corrupt_cache() -> None:
    """Make numba treat an unreadable fastgen cache file as a miss (idempotent)."""
    global _PATCHED
    if _PATCHED:
        return
    from numba.core import caching

    cls = caching.IndexDataCacheFile
    load_index, load_data = cls._load_index, cls._load_data

    def _load_index(self):
        try:
            return load_index(self)
        except Exception:  # noqa: BLE001 - any unpickling failure
            if not _is_fastgen_cache(self):
                raise
            return {}  # stale or corrupt: recompile, and the save rewrites the index

    def _load_data(self, name):
        try:
            return load_data(self, name)
        except OSError:
            raise
        except Exception as exc:  # noqa: BLE001
            if not _is_fastgen_cache(self):
                raise
            raise OSError(f"corrupt numba cache file {name!r}: {exc}") from None  # a miss

    cls._load_index, cls._load_data = _load_index, _load_data
    _PATCHED = True


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
    """Make numba's cache load keep parallel-backend init hooks (idempotent)."""
    global _REBUILD_PATCHED, _NUMBA_REBUILD
    if _REBUILD_PATCHED:
        return
    from numba.core.compiler import CompileResult

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
